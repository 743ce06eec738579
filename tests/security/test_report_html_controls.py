"""`memlab report migration`: the flags and moved tables show store text (labels, paths, ids,
agent names). pandas escapes ``<`` but leaves ESC, NUL, U+2028 and bidi overrides raw in the page;
every cell must go through :func:`memlab._escape.html` instead, and no raw control character may
reach the HTML at all.

The page is the real report (papermill, nbconvert, memlab's offline template) of a copy of the
committed letta 0.11.7 server database with hostile labels, block ids and an agent name; it is
parsed with Python's HTML parser and opened in headless Chromium where the dev extra has it.
"""

from __future__ import annotations

import html.parser
import shutil
import sqlite3
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples" / "letta-server"
TRICKS = "\x1b[31m\x00\u2028\u202e\x85<b>x"
SHOWN = ("\\x1b", "\\x00", "\\u2028", "\\u202e", "\\x85")
SCRATCH = "block-48699c75-6d96-491f-9057-b55b4a499a36"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _raw_controls(text: str) -> list[str]:
    """Characters no page should hold raw: controls (but tab, LF, CR), separators, format."""
    return sorted({repr(ch) for ch in text if ch not in "\t\n\r"
                   and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")})


class _Tables(html.parser.HTMLParser):
    """The text of every table cell, and the tags seen inside tables."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.cells: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.depth += 1
        elif self.depth:
            self.tags.add(tag)
            if tag in ("td", "th"):
                self.cells.append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and self.cells:
            self.cells[-1] += data


def _tables(page: str) -> _Tables:
    parser = _Tables()
    parser.feed(page)
    return parser


def test_frame_html_escapes_every_cell_and_label():
    from memlab.report import frame_html

    df = pd.DataFrame({"label": [f"notes{TRICKS}", None], "n": [1, 2],
                       "tags": [[f"t{TRICKS}"], []],
                       "kind": pd.Categorical([f"k{TRICKS}", "plain"])},
                      index=pd.Index([f"row{TRICKS}", "b"], name=f"ix{TRICKS}"))
    grouped = df.groupby(["kind", "label"], observed=True, dropna=False).size().to_frame("n")
    for frame in (df, grouped, df.rename(columns={"n": f"col{TRICKS}"})):
        out = frame_html(frame)
        assert _raw_controls(out) == [], _raw_controls(out)
        parsed = _tables(out)
        assert "b" not in parsed.tags  # '<b>' is text, not a tag
        text = "".join(parsed.cells)
        assert all(s in text for s in SHOWN) and "<b>x" in text
    assert "<td>1</td>" in frame_html(df)  # numbers as pandas shows them


def _hostile_db(tmp_path: Path) -> Path:
    db = tmp_path / "sqlite.db"
    shutil.copyfile(SAMPLES / "letta-0.11.7.db", db)
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("UPDATE block SET label = 'notes' || :x WHERE label = 'scratch'",
                     {"x": TRICKS})
        for table, col in (("block", "id"), ("blocks_agents", "block_id"),
                           ("block_history", "block_id")):
            conn.execute(f"UPDATE {table} SET {col} = {col} || :x WHERE {col} = :id",
                         {"x": TRICKS, "id": SCRATCH})
        conn.execute("UPDATE agents SET name = 'vega' || :x WHERE name = 'vega'", {"x": TRICKS})
        conn.commit()
    finally:
        conn.close()
    return db


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    from memlab.report import execute_notebook

    tmp = tmp_path_factory.mktemp("report")
    return execute_notebook("migration", {"source": str(_hostile_db(tmp)),
                                          "destination": str(tmp / "migrated"),
                                          "target": "letta", "retrieval": False},
                            tmp / "out").html


def test_the_migration_report_holds_no_raw_control_character(report_page):
    page = report_page.read_text(encoding="utf-8")
    assert _raw_controls(page) == [], _raw_controls(page)
    parsed = _tables(page)
    assert "b" not in parsed.tags
    hostile = [c for c in parsed.cells if "notes" in c and "\\x1b" in c]
    assert hostile, "the hostile label is not in any table"
    assert any(all(s in c for s in SHOWN) for c in parsed.cells), hostile[:3]


def test_the_migration_report_in_a_browser_shows_the_escapes(report_page):
    sync_api = pytest.importorskip("playwright.sync_api", reason="the dev extra installs it")
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium (apt-get install chromium; .ci/run does)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.goto(report_page.as_uri(), wait_until="load")
            cells = page.evaluate("() => Array.from(document.querySelectorAll('td, th'))"
                                  ".map(c => c.innerText)")
            bold = page.evaluate("() => document.querySelectorAll('table b').length")
        finally:
            browser.close()
    assert bold == 0
    text = "\n".join(cells)
    assert _raw_controls(text.replace("\n", "")) == []
    assert all(s in text for s in SHOWN), [c for c in cells if "notes" in c][:3]


# ---- every report kind ------------------------------------------------------------------------

DATA = SAMPLES.parents[1]
REPORT_KINDS = ("audit", "memfs", "migration", "simulation", "review", "fleet")
# YAML's own escapes for the same characters: a frontmatter description holds them too
YAML_TRICKS = '"notes\\e[31m\\0\\L\\u202e\\x85<b>x"'


def test_every_report_notebook_escapes_its_tables_before_showing_one():
    """Each notebook calls escape_tables() in its set-up cell, before any cell that can show a
    table (the parameters cell and the paths cell come first)."""
    import nbformat

    from memlab.report import NOTEBOOKS, notebook_path

    assert set(NOTEBOOKS) == set(REPORT_KINDS)
    for kind in REPORT_KINDS:
        nb = nbformat.read(notebook_path(kind), as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        calls = [i for i, src in enumerate(code)
                 if any(line.strip() == "escape_tables()" for line in src.splitlines())]
        assert calls and calls[0] <= 1, (kind, calls)


def _hostile_elfmem(tmp: Path) -> Path:
    db = tmp / "elfmem.db"
    shutil.copyfile(DATA / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db", db)
    conn = sqlite3.connect(db)
    try:
        conn.execute("UPDATE blocks SET category = category || :x, content = 'notes' || :x || "
                     "content WHERE id IN (SELECT id FROM blocks ORDER BY id LIMIT 6)",
                     {"x": TRICKS})
        conn.execute("UPDATE block_tags SET tag = tag || :x WHERE block_id IN "
                     "(SELECT id FROM blocks ORDER BY id LIMIT 6)", {"x": TRICKS})
        conn.commit()
    finally:
        conn.close()
    return db


def _hostile_memfs(tmp: Path) -> Path:
    from hostile import git, memory_repo

    repo = tmp / "memfs"
    memory_repo(repo)
    name = "system/notes\x1b[31m\u2028\u202e\x85<b>x.md"  # NUL cannot be in a file name
    (repo / name).write_text(f"---\ndescription: {YAML_TRICKS}\n---\n\nnotes{TRICKS}\n",
                             encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "add notes" + TRICKS.replace("\x00", ""))
    return repo


def _hostile_af(tmp: Path) -> Path:
    from hostile import agent_file

    # a value with NUL is refused by a migration (a memory file cannot hold one); labels keep it
    return agent_file(tmp / "hostile.af", f"vega{TRICKS}", ["persona", f"notes{TRICKS}"],
                      value="text" + TRICKS.replace("\x00", ""))


@pytest.fixture(scope="module")
def hostile_stores(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("hostile-stores")
    fleet = tmp / "fleet"
    fleet.mkdir()
    stores = {"letta": _hostile_db(tmp), "elfmem": _hostile_elfmem(tmp),
              "memfs": _hostile_memfs(tmp), "af": _hostile_af(tmp)}
    for key in ("letta", "elfmem", "af"):
        shutil.copy(stores[key], fleet / stores[key].name)
    stores["fleet"] = fleet
    return stores


def _report(kind: str, stores: dict[str, Path], out: Path) -> Path:
    from memlab.report import execute_notebook, report

    if kind == "audit":
        return report("audit", [stores["letta"], stores["elfmem"], stores["af"]], out=out,
                      as_of="2026-12-01").html
    if kind == "memfs":
        return execute_notebook("memfs", {"repo": str(stores["memfs"]), "ref": "HEAD",
                                          "as_of": None}, out).html
    if kind == "migration":
        return execute_notebook("migration", {"source": str(stores["af"]),
                                              "destination": str(out.parent / "migrated"),
                                              "target": "letta", "retrieval": False}, out).html
    if kind == "simulation":
        return execute_notebook("simulation", {
            "iterations": [1, 4], "scenarios": ["S1", "S3"], "instance": str(stores["elfmem"]),
            "long_instance": None, "growth": 2, "releases": [], "seed": 0}, out).html
    if kind == "review":
        return execute_notebook("review", {"store": str(stores["elfmem"]),
                                           "as_of": "2026-11-30"}, out).html
    if kind == "fleet":
        return report("fleet", [stores["fleet"]], out=out, workers=0).html
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", REPORT_KINDS)
def test_no_report_holds_a_raw_control_character(kind, hostile_stores, tmp_path):
    page = _report(kind, hostile_stores, tmp_path / "out").read_text(encoding="utf-8")
    assert _raw_controls(page) == [], (kind, _raw_controls(page))
    parsed = _tables(page)
    assert "b" not in parsed.tags, kind  # '<b>' from a store is text, never a tag
