"""`memlab browse` as a person uses it (issue 39 item 1): the real Datasette server on
127.0.0.1 over the demo database, the memfs sample bundle and a hostile blocks list, driven in
Debian's headless Chromium with every request off that server blocked.

Checked: a table page opens with its title and facets; a facet narrows the rows to what
SQLite counts on the demo file itself; a search finds what the FTS index finds; a finding's
sha links to its commit's row; CSV downloads with every row; hostile store text
(``<script>``, ``"><img onerror>``) is shown as text and never runs. The server is stopped
when the module ends.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import socket
import sqlite3
import tempfile
from pathlib import Path

import pytest

# The same Chromium, flags and skip rules as every report's browser check.
from test_reports_in_browser import CHROMIUM, FLAGS, sync_api

pytestmark = pytest.mark.slow
pytest.importorskip("datasette", reason="the browse extra installs datasette")

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo" / "elfmem-demo.db"
BUNDLE = REPO / "data" / "samples" / "memfs" / "deep-research-memfs.bundle"
HOSTILE_LABEL = 'persona"><img src=x onerror="document.title=\'pwned\'">'
HOSTILE_VALUE = "<script>document.title='pwned'</script> hostile needle"
HOSTILE_FILE = "hostile<img src=x onerror=\"document.title='pwned'\">.json"  # the store's name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import memlab.browse

    folder = tmp_path_factory.mktemp("browse")
    hostile = folder / HOSTILE_FILE
    hostile.write_text(json.dumps([
        {"id": "block-1", "label": HOSTILE_LABEL, "value": HOSTILE_VALUE, "limit": 20},
        {"id": "block-2", "label": "human", "value": "plain text", "limit": 2000}]))
    db = memlab.browse.build([DEMO, BUNDLE, hostile], folder / "out")
    port = _free_port()
    proc = memlab.browse.start(db, port)
    try:
        yield f"http://127.0.0.1:{port}/memlab", db
    finally:
        proc.terminate()
        proc.wait(15)
    assert proc.poll() is not None


@pytest.fixture(scope="module")
def browser(server):
    base, _ = server
    origin = base.rsplit("/", 1)[0]
    with sync_api.sync_playwright() as pw:
        profile = tempfile.mkdtemp(prefix="memlab-chromium-")
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900}, accept_downloads=True)
        seen = {"requests": [], "errors": [], "dialogs": []}

        def block(route):
            url = route.request.url
            if url.startswith(origin + "/") or url.startswith(("data:", "blob:", "about:")):
                route.continue_()
            else:
                seen["requests"].append(url)
                route.abort("internetdisconnected")

        context.route("**/*", block)
        tab = context.new_page()
        tab.on("pageerror", lambda e: seen["errors"].append(str(e)))
        tab.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
        yield tab, seen
        context.close()
        shutil.rmtree(profile, ignore_errors=True)


def _rows(tab) -> int:
    return tab.locator("table.rows-and-columns tbody tr").count()


def test_a_table_opens_and_a_facet_narrows_it(server, browser):
    base, _ = server
    tab, seen = browser
    tab.goto(f"{base}/elfmem_db_blocks", wait_until="load")
    assert tab.locator("h1").inner_text().strip() == "Blocks (elfmem_db)"
    src = sqlite3.connect(f"file:{DEMO}?mode=ro&immutable=1", uri=True)
    archived = src.execute("select count(*) from blocks where status = 'archived'").fetchone()[0]
    src.close()
    facet = tab.locator("#facet-status")
    assert facet.count() == 1 and "archived" in facet.inner_text()
    facet.locator("a", has_text="archived").first.click()
    tab.wait_for_load_state("load")
    assert "status=archived" in tab.url
    assert f"{archived} rows" in tab.locator("h3").first.inner_text()
    statuses = {t.strip() for t in tab.locator("td.col-status").all_inner_texts()}
    assert statuses == {"archived"}
    assert seen["requests"] == [] and seen["errors"] == []


def test_search_finds_what_the_index_finds(server, browser):
    base, db = server
    tab, _ = browser
    tab.goto(f"{base}/elfmem_db_blocks", wait_until="load")
    tab.fill("#_search", "consolidation")
    tab.press("#_search", "Enter")
    tab.wait_for_load_state("load")
    assert "_search=consolidation" in tab.url
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    expected = con.execute("select count(*) from elfmem_db_blocks_fts where elfmem_db_blocks_fts "
                           "match 'consolidation'").fetchone()[0]
    con.close()
    assert expected > 0
    assert f"{expected} row" in tab.locator("h3").first.inner_text()


def test_a_finding_links_to_its_commit(server, browser):
    base, db = server
    tab, _ = browser
    tab.goto(f"{base}/audit_hook_violations", wait_until="load")
    link = tab.locator("td.col-sha a").first
    sha = link.get_attribute("href").rsplit("/", 1)[1]
    link.click()
    tab.wait_for_load_state("load")
    assert tab.url.endswith(f"/memlab/audit_commits/{sha}")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    author = con.execute("select author_name from audit_commits where sha = ?", (sha,)).fetchone()
    con.close()
    assert author is not None and author[0] in tab.inner_text("body")
    # and a tag links to its block
    tab.goto(f"{base}/tags", wait_until="load")
    tab.locator("td.col-block_id a").first.click()
    tab.wait_for_load_state("load")
    assert "/memlab/elfmem_db_blocks/" in tab.url and tab.locator("td.col-content").count() == 1


def test_csv_downloads_every_row(server, browser):
    base, db = server
    tab, _ = browser
    tab.goto(f"{base}/audit_commits", wait_until="load")
    tab.check("#export input[name=_dl]")
    with tab.expect_download() as info:
        tab.click("#export input[type=submit]")
    path = info.value.path()
    rows = list(csv.reader(io.StringIO(Path(path).read_text(encoding="utf-8"))))
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    shas = {r[0] for r in con.execute("select sha from audit_commits")}
    con.close()
    header = rows[0]
    assert "sha" in header and "author_kind" in header
    assert {r[header.index("sha")] for r in rows[1:]} == shas


def test_headline_columns_carry_the_metric_records(server, browser):
    from memlab._metrics import METRICS

    base, _ = server
    tab, _ = browser
    tab.goto(f"{base}/headline", wait_until="load")
    m = METRICS["supersession_share"]
    text = tab.locator("dl.column-descriptions").inner_text()
    assert f"{m.definition} ({m.unit})" in text
    described = tab.locator('th[data-column="prompt_tokens"]').get_attribute(
        "data-column-description")
    assert described == f"{METRICS['prompt_tokens'].definition} ({METRICS['prompt_tokens'].unit})"


def test_hostile_store_text_is_shown_not_run(server, browser):
    base, _ = server
    tab, seen = browser
    tab.goto(f"{base}/letta_blocks_blocks", wait_until="load")
    tab.wait_for_timeout(200)
    cells = tab.locator("td.col-value").all_inner_texts() + \
        tab.locator("td.col-label").all_inner_texts()
    assert HOSTILE_VALUE in cells and HOSTILE_LABEL in cells
    assert tab.title() != "pwned" and seen["dialogs"] == []
    assert tab.locator("table.rows-and-columns img").count() == 0
    assert tab.locator("table.rows-and-columns script").count() == 0
    # the store's name (a file name) reaches the description, the store column and the title
    assert HOSTILE_FILE in tab.locator(".metadata-description").inner_text()
    assert HOSTILE_FILE in {t.strip() for t in tab.locator("td.col-store").all_inner_texts()}
    assert tab.locator("img").count() == 0
    # a search for the hostile text finds it as text too
    tab.fill("#_search", "needle")
    tab.press("#_search", "Enter")
    tab.wait_for_load_state("load")
    assert HOSTILE_VALUE in tab.locator("td.col-value").all_inner_texts()
    assert tab.title() != "pwned" and seen["errors"] == [] and seen["requests"] == []
