"""No notebook leftovers in any report (issue 39, item 3), asserted on the DOM of each report
kind opened in headless Chromium: the same small, real inputs as test_reports_in_browser.py
(its ``_build``), rendered once for the module, plus the memfs report of the v2 sample bundle.

Each test is one leftover the issue lists; each failed on the code before the fix (the
figures in the docstrings are what that code showed on these inputs).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest

from test_reports_in_browser import CHROMIUM, DATA, FLAGS, _build

pytestmark = pytest.mark.slow

sync_api = pytest.importorskip("playwright.sync_api", reason="the dev extra installs playwright")
if not Path(CHROMIUM).exists():
    pytest.skip("no chromium (apt-get install chromium; .ci/run does)", allow_module_level=True)

KINDS = ("audit", "memfs", "migration", "review", "simulation", "fleet")

#: Everything the tests ask of one page, read in one pass.
_DOM = """() => {
  const text = e => (e.innerText || '').trim();
  const cells = Array.from(document.querySelectorAll('td, th'));
  const scrollBox = t => { for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
      const s = getComputedStyle(e); if (['auto', 'scroll'].includes(s.overflowX)) return e; } return null; };
  const area = t => t.closest('.jp-OutputArea-output, .jp-Cell-outputArea, .jp-RenderedHTMLCommon');
  return {
    text: document.body.innerText,
    blocks: Array.from(document.querySelectorAll('pre, .jp-RenderedText, p, li')).map(text),
    prose: Array.from(document.querySelectorAll('.jp-MarkdownOutput p, .jp-MarkdownOutput li, h1, h2, h3, h4')).map(text),
    headerOnly: Array.from(document.querySelectorAll('table')).filter(
      t => t.tBodies.length === 0 || Array.from(t.tBodies).every(b => b.rows.length === 0)).map(t => text(t).slice(0, 120)),
    empty: Array.from(document.querySelectorAll('.memlab-empty')).map(text),
    none: cells.filter(c => text(c) === 'None').map(c => text(c.closest('tr')).slice(0, 120)),
    backticks: cells.filter(c => text(c).includes('`')).map(text),
    shares: Array.from(document.querySelectorAll('table')).flatMap(t => {
      const head = Array.from(t.querySelectorAll('thead tr:last-child th, thead tr:first-child th')).map(text);
      const at = head.indexOf('share');
      if (at < 0) return [];
      return Array.from(t.querySelectorAll('tbody tr')).map(r => text(r.children[at] || r));
    }),
    tables: Array.from(document.querySelectorAll('table')).filter(t => t.getBoundingClientRect().width > 0).map(t => {
      const box = scrollBox(t), out = area(t);
      return {head: text(t).slice(0, 60), width: t.scrollWidth,
              box: box ? box.clientWidth : null,
              boxRight: box ? box.getBoundingClientRect().right : t.getBoundingClientRect().right,
              areaRight: out ? out.getBoundingClientRect().right : document.documentElement.clientWidth,
              parentWidth: t.parentElement.clientWidth};
    }),
    pres: Array.from(document.querySelectorAll('pre')).filter(p => text(p)).map(p => {
      const s = getComputedStyle(p); return [s.wordBreak, s.overflowWrap, s.whiteSpace]; }),
  };
}"""


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict[str, dict]:
    """kind -> what the page shows (``_DOM``), each kind rendered once."""
    from memlab.report import execute_notebook

    pages = {kind: _build(kind, tmp_path_factory.mktemp(kind) / "out") for kind in KINDS}
    v2 = tmp_path_factory.mktemp("memfs-v2") / "out"
    pages["memfs-v2"] = execute_notebook("memfs", {
        "repo": DATA / "samples/memfs/letta-code-v2.bundle", "ref": "HEAD", "as_of": None}, v2).html
    out = {}
    with sync_api.sync_playwright() as pw:
        profile = tempfile.mkdtemp(prefix="memlab-chromium-")
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900}, offline=True)
        try:
            page = context.new_page()
            for kind, html in pages.items():
                page.goto(html.as_uri(), wait_until="load")
                out[kind] = page.evaluate(_DOM)
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)
    return out


ALL = (*KINDS, "memfs-v2")


@pytest.mark.parametrize("kind", ALL)
def test_an_empty_table_is_one_line_naming_what_was_not_found(seen, kind):
    """Before: header-only tables in the memfs (5), migration (2), review (1) and simulation
    (3) reports, with no name and no "none found"."""
    page = seen[kind]
    assert page["headerOnly"] == [], (kind, page["headerOnly"])
    for line in page["empty"]:
        assert re.fullmatch(r"no \S.* found", line), (kind, line)
        assert line not in ("no rows found", "none found"), (kind, line)  # named


@pytest.mark.parametrize("kind", ALL)
def test_no_python_dict_repr(seen, kind):
    """Before: the memfs, migration and simulation reports ended with ``{'kind': ...}``."""
    reprs = [b[:100] for b in seen[kind]["blocks"] if re.search(r"\{'[^']+': ", b)]
    assert reprs == [], (kind, reprs)


@pytest.mark.parametrize("kind", ALL)
def test_no_entity_cut_in_half(seen, kind):
    """Before: ``green.&quot...`` in the review's tables (pandas cut the cell after memlab
    had escaped it)."""
    text = seen[kind]["text"]
    found = re.findall(r".{0,40}&(?:quot|amp|lt|gt|#\d+)\b.{0,10}", text)
    assert found == [], (kind, found)


@pytest.mark.parametrize("kind", ALL)
def test_not_applicable_is_one_word_never_python_none(seen, kind):
    """Before: ``None`` in the parameters panel (memfs, simulation) and in the simulation's
    fitness grid, beside the "–" of every other table."""
    assert seen[kind]["none"] == [], (kind, seen[kind]["none"])


@pytest.mark.parametrize("kind", ALL)
def test_table_cells_show_no_markdown_backticks(seen, kind):
    """Before: 24 review cells with `id` code spans as raw backticks."""
    assert seen[kind]["backticks"] == [], (kind, seen[kind]["backticks"][:3])


def test_review_shares_are_percentages(seen):
    """Before: 0.0081 in the review's share column."""
    shares = [s for s in seen["review"]["shares"] if s != "–"]
    assert shares, "the review shows no share"
    assert all(re.fullmatch(r"[\d.,]+%", s) for s in shares), shares[:5]


@pytest.mark.parametrize("kind", ALL)
def test_no_empty_evidence_line(seen, kind):
    """Before: 12 review items with an ``evidence:`` line and nothing after it."""
    empty = re.findall(r"(?m)^.{0,60}evidence:\s*$", seen[kind]["text"])
    assert empty == [], (kind, len(empty), empty[:3])


@pytest.mark.parametrize("kind", ALL)
def test_every_table_fits_or_scrolls_inside_its_box(seen, kind):
    """A table wider than its output area scrolls in a box that itself fits the area (the
    audit's 2,066 px table in a 1,214 px box)."""
    for t in seen[kind]["tables"]:
        fits = t["width"] <= t["parentWidth"] + 1 and t["boxRight"] <= t["areaRight"] + 1
        scrolls = t["box"] is not None and t["boxRight"] <= t["areaRight"] + 1
        assert fits or scrolls, (kind, t)


@pytest.mark.parametrize("kind", ALL)
def test_text_output_breaks_at_spaces(seen, kind):
    """Before: every ``<pre>`` had ``word-break: break-all`` (``1,646,`` / ``801``)."""
    bad = [p for p in seen[kind]["pres"]
           if p[0] == "break-all" or p[1] in ("anywhere", "break-word")]
    assert bad == [], (kind, bad[:2])


@pytest.mark.parametrize("kind", ALL)
def test_prose_shows_no_escaped_emoji(seen, kind):
    """Before: ``[U+1F52E]`` in the memfs report's prose about reflection subagents."""
    found = [p for p in seen[kind]["prose"] if re.search(r"\[U\+[0-9A-F]{4,6}\]", p)]
    assert found == [], (kind, found)


def test_the_v2_note_shows_only_for_a_legacy_repository(seen):
    """Before: the memfs report told the reader to run it on a v2 repository even when it
    had just run on one."""
    advice = "To see them on a v2 repository"
    assert advice not in seen["memfs-v2"]["text"]
    assert advice in seen["memfs"]["text"]  # the fixture repo is in the legacy layout


# --------------------------------------------------------------------------- the figures

def _audits():
    import memlab

    return [memlab.audit(DATA / "demo/elfmem-demo.db", as_of="2026-08-04"),
            memlab.audit(DATA / "samples/elfmem/elfmem-0.20.0-schema9.db", as_of="2026-08-04")]


def test_several_stores_share_one_scale_with_whole_counts():
    """Before: one archival figure per store, each on its own scale, with ticks at 2.5 blocks."""
    from memlab import plots

    fig = plots.stores(plots.archival_causes, _audits())
    axes = [ax for ax in fig.axes if ax.axison]
    assert len(axes) == 2
    assert len({ax.get_xlim() for ax in axes}) == 1  # one scale
    fig.canvas.draw() if hasattr(fig.canvas, "draw") else None
    for ax in axes:
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks


def test_the_commit_legend_lists_only_kinds_with_commits(tmp_path):
    """Before: the memfs figure's legend listed all five author kinds, drawn or not."""
    from memfs_repos import build_letta_v1

    import memlab
    from memlab import plots
    from memlab.kinds._memfs._audit import audit_memfs, commits_by_kind

    audit = audit_memfs(memlab.load_memfs(build_letta_v1(tmp_path / "repo").path))
    counts = commits_by_kind(audit).sum(axis=0)
    assert (counts == 0).any(), "the fixture has every author kind: the test would prove nothing"
    fig = plots.memfs_commits(audit)
    [ax] = fig.axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sorted(labels) == sorted(counts[counts > 0].index), labels
    ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
    assert all(float(t).is_integer() for t in ticks), ticks
