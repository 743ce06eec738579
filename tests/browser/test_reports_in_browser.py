"""Every report kind, opened in a real headless Chromium with the network blocked.

A report is one HTML file that must open offline: the browser may load the page itself and
its ``data:`` images, nothing else. For each kind this asserts that no request left the page,
none failed, the console stayed clean, every figure drew at a non-zero size and the tables
are there; a screenshot of each is kept in ``reports/browser/`` (gitignored) to look at.

Chromium is Debian's package (``.ci/run`` installs it); Playwright's Python API drives it.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
SHOTS = REPO / "reports" / "browser"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

sync_api = pytest.importorskip("playwright.sync_api", reason="the dev extra installs playwright")
if not Path(CHROMIUM).exists():
    pytest.skip("no chromium (apt-get install chromium; .ci/run does)", allow_module_level=True)


def _build(kind: str, out: Path) -> Path:
    """Render one report of ``kind`` with small, real inputs; return its HTML file."""
    from memlab.report import execute_notebook, report

    if kind == "audit":
        return report("audit", [DATA / "demo/elfmem-demo.db",
                                DATA / "samples/elfmem/elfmem-0.20.0-schema9.db"],
                      out=out, as_of="2026-08-04").html
    if kind == "memfs":
        from memfs_repos import build_letta_v1

        built = build_letta_v1(out.parent / "memfs-repo")
        return execute_notebook("memfs", {"repo": built.path, "ref": "HEAD", "as_of": None},
                                out).html
    if kind == "migration":
        return execute_notebook("migration", {
            "source": DATA / "samples/elfmem/elfmem-0.20.0-schema9.db",
            "destination": out.parent / "migrated", "target": "substrate", "retrieval": False},
            out).html
    if kind == "simulation":
        return execute_notebook("simulation", {
            "iterations": [1, 4], "scenarios": ["S1", "S3"],
            "instance": DATA / "demo/elfmem-demo.db", "long_instance": None, "growth": 2,
            "releases": [],  # the real-release rows are the sim tests' business: keep this quick
            "seed": 0}, out).html
    if kind == "review":
        return execute_notebook("review", {"store": DATA / "samples/elfmem/elfmem-0.20.0-schema9.db",
                                           "as_of": "2026-11-30"}, out).html
    if kind == "fleet":
        return report("fleet", [DATA / "demo/elfmem-demo.db", DATA / "samples/letta-af",
                                DATA / "samples/elfmem/elfmem-0.20.0-schema9.db"],
                      out=out, workers=0).html
    if kind == "index":
        from memlab.report.schedule import report_all

        shutil.copy(DATA / "samples/letta-af/customer_service.af", out.parent / "cs.af")
        config = out.parent / "reports.yaml"
        config.write_text("simulation: false\nstores:\n  cs: cs.af\n")
        return report_all(config, out=out)
    raise AssertionError(kind)


#: kind -> (the least number of figures, the least number of tables) the page must show
EXPECT = {"audit": (4, 1), "memfs": (4, 1), "migration": (0, 2), "simulation": (2, 2),
          "review": (3, 1), "index": (0, 1), "fleet": (1, 2)}


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        profile = tempfile.mkdtemp(prefix="memlab-chromium-")
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900}, offline=True)
        yield context
        context.close()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.parametrize("kind", sorted(EXPECT))
def test_report_opens_offline_with_every_figure_and_table(kind, browser, tmp_path):
    from memlab.report._offline import remote_references

    page_file = _build(kind, tmp_path / "out")
    text = page_file.read_text(encoding="utf-8")
    assert remote_references(text) == []
    assert "Loading weights" not in text and "it/s]" not in text  # no progress bars kept
    if kind == "simulation":  # the threshold explorer, drawn static at the values it ran with
        assert "near-dup: 0.900" in text and "iteration: 1: baseline" in text
    assert not re.search(r"https?://", text), re.search(r".{60}https?://.{60}", text)

    page = browser.new_page()
    requests: list[str] = []
    failed: list[str] = []
    errors: list[str] = []

    def block(route):
        url = route.request.url
        if url.startswith(("file://", "data:", "blob:", "about:")):
            route.continue_()
        else:
            requests.append(url)
            route.abort("internetdisconnected")

    page.route("**/*", block)
    page.on("requestfailed", lambda r: failed.append(f"{r.url[:100]} {r.failure}"))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_file.as_uri(), wait_until="load")
    page.wait_for_timeout(300)  # any late script would have fired by now

    seen = _what_a_person_sees(page)
    figures = page.evaluate("""() => Array.from(document.images).map(i => ({
        w: i.naturalWidth, h: i.naturalHeight, box: i.getBoundingClientRect().width * i.getBoundingClientRect().height,
        complete: i.complete}))""")
    tables = page.evaluate("() => Array.from(document.querySelectorAll('table')).filter("
                           "t => t.rows.length > 1 && t.getBoundingClientRect().height > 0).length")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{kind}.png"), full_page=False)
    page.close()

    assert requests == [], f"{kind} tried the network: {requests}"
    assert failed == [], failed
    assert errors == [], errors
    least_figures, least_tables = EXPECT[kind]
    assert len(figures) >= least_figures, f"{kind}: {len(figures)} figure(s)"
    assert all(f["complete"] and f["w"] > 0 and f["h"] > 0 and f["box"] > 0 for f in figures), figures
    assert tables >= least_tables, f"{kind}: {tables} table(s)"
    _assert_reads_as_a_report(kind, seen)


def _what_a_person_sees(page) -> dict:
    return page.evaluate("""() => ({
        text: document.body.innerText,
        code: document.querySelectorAll('.jp-CodeMirrorEditor, .jp-InputArea-editor').length,
        cut: Array.from(document.querySelectorAll('td, th')).filter(
            c => ['...', '…'].includes(c.innerText.trim())).length,
        headline: document.querySelectorAll('.memlab-headline tbody tr').length,
        overflow: Array.from(document.querySelectorAll('table')).filter(t => {
            const box = t.closest('.memlab-table');
            return t.getBoundingClientRect().right > document.documentElement.clientWidth + 1
                   && !(box && getComputedStyle(box).overflowX === 'auto');
        }).length,
    })""")


def _unrendered(text: str) -> list[str]:
    """Characters of ``text`` no installed font covers (Chromium draws an empty box): asked of
    fontconfig, which is where Chromium on Linux finds its fonts."""
    import subprocess

    missing = []
    for ch in sorted(set(text)):
        if ch.isspace() or ord(ch) < 0x7F:
            continue
        found = subprocess.run(["fc-list", f":charset={ord(ch):x}", "family"],
                               capture_output=True, text=True).stdout.strip()
        if not found:
            missing.append(f"U+{ord(ch):04X} {ch}")
    return missing


#: Report kinds that open with a headline panel (the index is memlab's own page).
HEADLINED = {"audit", "memfs", "migration", "simulation", "review", "fleet"}


def _assert_reads_as_a_report(kind: str, seen: dict) -> None:
    from memlab.report._present import machine_paths

    text = seen["text"]
    assert seen["code"] == 0, f"{kind}: {seen['code']} code cell(s) shown"
    assert seen["cut"] == 0, f"{kind}: a table cut with a '...' row"
    for raw in ("<NA>", "NaT", "NaN", "PosixPath("):
        assert raw not in text, (kind, raw, text[max(0, text.find(raw) - 80):text.find(raw) + 40])
    assert machine_paths(text) == [], (kind, machine_paths(text)[:5])
    assert str(REPO) not in text and "/tmp/" not in text
    assert _unrendered(text) == [], (kind, _unrendered(text))
    assert seen["overflow"] == 0, f"{kind}: a table runs off the page"
    if kind in HEADLINED:
        assert seen["headline"] >= 1, f"{kind}: no headline panel"


def test_show_code_keeps_the_code(browser, tmp_path):
    from memlab.report import report

    page_file = report("audit", [DATA / "samples/elfmem/elfmem-0.20.0-schema9.db"],
                       out=tmp_path / "out", as_of="2026-08-04", show_code=True).html
    page = browser.new_page()
    page.goto(page_file.as_uri(), wait_until="load")
    seen = _what_a_person_sees(page)
    page.close()
    assert seen["code"] >= 3 and "memlab.audit(" in seen["text"]
    assert seen["headline"] >= 1 and machine_paths_free(seen["text"])


def machine_paths_free(text: str) -> bool:
    from memlab.report._present import machine_paths

    return machine_paths(text) == []
