"""The runs folder's index (``reports/index.html``) after two real dated `report all` runs,
opened in Debian's headless Chromium with the network blocked: what a person sees.

Checked: the page loads nothing from the network and logs no error; the alerts and "since the
last run" come before the list of runs; the list has a row per run with the latest marked;
every trend chart draws at a readable size; no "NaN", "<NA>", "NaT", "None" or "nan" reaches a
cell; no absolute path is shown; a missing figure reads "–". A screenshot of the top of the
page and a full-page one are kept in ``reports/browser/`` (gitignored) to look at.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest

# The same Chromium, flags and skip rules as every report's browser check (that module skips
# itself when playwright or chromium is missing, and so this one with it).
from test_reports_in_browser import CHROMIUM, FLAGS, sync_api

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "reports" / "browser"


@pytest.fixture(scope="module")
def runs():
    from report_runs import shared_two_runs

    return shared_two_runs()  # the same two runs test_schedule.py checks, built once


@pytest.fixture(scope="module")
def page(runs):
    with sync_api.sync_playwright() as pw:
        profile = tempfile.mkdtemp(prefix="memlab-chromium-")
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900}, offline=True)
        tab = context.new_page()
        seen = {"requests": [], "errors": []}

        def block(route):
            url = route.request.url
            if url.startswith(("file://", "data:", "blob:", "about:")):
                route.continue_()
            else:
                seen["requests"].append(url)
                route.abort("internetdisconnected")

        tab.route("**/*", block)
        tab.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
        tab.on("pageerror", lambda e: seen["errors"].append(str(e)))
        tab.goto((runs.root / "index.html").as_uri(), wait_until="load")
        tab.wait_for_timeout(300)
        SHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SHOTS / "run-index.png"))
        tab.screenshot(path=str(SHOTS / "run-index-full.png"), full_page=True)
        yield tab, seen
        context.close()
        shutil.rmtree(profile, ignore_errors=True)


def test_index_opens_offline_with_alerts_and_changes_first(page, runs):
    from report_runs import SECOND

    tab, seen = page
    assert seen["requests"] == [] and seen["errors"] == []
    assert runs.codes == (0, 3)
    # order on screen: alerts, since the last run, runs, trends
    tops = tab.evaluate("""() => ['alerts', 'since', 'runs', 'trends'].map(
        id => document.getElementById(id).getBoundingClientRect().top)""")
    assert tops == sorted(tops)
    alerts = tab.inner_text("#alerts")
    assert f"Alerts · {SECOND}" in alerts
    assert "ALERT db: blocks_active changed by more than 2: 43 -> 37 (-6)" in alerts
    # the first fired alert is on the first screen
    box = tab.locator("#alerts .alert").first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900


def test_index_lists_every_run_and_marks_the_latest(page, runs):
    from report_runs import FIRST, SECOND

    tab, _ = page
    rows = tab.evaluate("""() => Array.from(document.querySelectorAll('#runs tr')).slice(1)
        .map(r => Array.from(r.cells).map(c => c.innerText))""")
    dated = sorted(p.name for p in runs.root.iterdir() if re.fullmatch(r"\d{4}-\d{2}-\d{2}", p.name))
    assert dated == [FIRST, SECOND]
    assert [r[0].split()[0] for r in rows] == [SECOND, FIRST]  # newest first, one row each
    assert rows[0][0].endswith("latest") and "latest" not in rows[1][0]
    assert [r[2] for r in rows] == ["ok", "ok"] and [r[6] for r in rows] == ["2", "0"]
    # each run's link opens that run's own page
    for date in (FIRST, SECOND):
        assert tab.locator(f'#runs a[href="{date}/index.html"]').count() == 1


def test_trend_charts_draw_and_no_raw_values_or_paths_show(page, runs):
    tab, _ = page
    images = tab.evaluate("""() => Array.from(document.querySelectorAll('#trends img')).map(i => ({
        w: i.naturalWidth, h: i.naturalHeight, shown: i.getBoundingClientRect().width,
        alt: i.alt, complete: i.complete}))""")
    assert len(images) == 2
    for img in images:
        assert img["complete"] and img["w"] >= 800 and img["h"] >= 250, img
        assert img["shown"] >= 800  # not squeezed to a thumbnail at 1280 px
    assert "input_per_corpus_token" in images[0]["alt"] + images[1]["alt"]
    text = tab.inner_text("body")
    for raw in ("NaN", "<NA>", "NaT", "None", "nan", "PosixPath"):
        assert not re.search(rf"(?<![\w-]){re.escape(raw)}(?![\w-])", text), raw
    assert str(runs.root.parent) not in text and not re.search(r"(?<![\w.])/(tmp|home|root|work)/", text)
    assert "–" in text  # a figure not recorded is shown as a dash, not as 0
    wide = tab.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= 1280  # nothing runs off the right edge
