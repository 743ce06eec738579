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
