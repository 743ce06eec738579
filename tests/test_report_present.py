"""What a report page shows a person (issue 26 item 1), at the level of the renderer: complete
tables with numbers for people, the headline panel, no machine paths, glyphs a stock font draws.
The browser checks (tests/browser/) open every real report kind; these pin the rules."""

from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd

from memlab.report import frame_html
from memlab.report._present import headline_panel, machine_paths, present


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.tags: list[str] = []
        self._in = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("td", "th"):
            self._in = True
            self.cells.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._in = False

    def handle_data(self, data):
        if self._in:
            self.cells[-1] += data


def _cells(html: str) -> _Cells:
    parser = _Cells()
    parser.feed(html)
    return parser


def test_a_long_wide_table_is_complete_and_formatted_for_people():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"c{i}": rng.random(500) * 100_000 for i in range(30)})
    frame["when"] = pd.Timestamp("2026-08-04 12:34:56", tz="UTC")
    frame.loc[3, "c0"] = np.nan
    frame.loc[4, "when"] = pd.NaT
    frame["n"] = pd.array([None] + list(range(499)), dtype="Int64")
    with pd.option_context("display.max_rows", 10, "display.max_columns", 5):
        html = frame_html(frame)
    cells = _cells(html).cells
    assert "..." not in cells and "…" not in cells
    assert html.count("</tr>") == 500 + 1  # every row, and the header
    assert f"{frame.loc[0, 'c1']:,.0f}" in cells  # 69314.718056 -> 69,315
    assert "2026-08-04 12:34" in cells
    for raw in ("NaN", "NaT", "<NA>", "nan"):
        assert raw not in cells
    assert cells.count("–") == 3
    assert '<div class="memlab-table">' in html and "500 rows × 32 columns" in html


def test_the_headline_panel_escapes_store_names_and_shows_the_doc():
    metrics = {"<b>x</b>.db": {"kind": "elfmem_db", "input_per_corpus_token": 52.14,
                               "blocks_active": 140, "role_slots_left": None,
                               "archived_superseded": 41, "blocks_archived": 42}}
    html = headline_panel("audit", metrics)
    parsed = _cells(html)
    assert "b" not in parsed.tags  # the store's name is text, not markup
    cells = parsed.cells
    assert "<b>x</b>.db" in cells
    row = cells[cells.index("input_per_corpus_token"):][:4]
    assert row[1:3] == ["52.1", "52.1"] and "amplification" in row[3]
    share = cells[cells.index("supersession_share"):][:3]
    assert share[1] == share[2] == f"{41 / 42:.3g}"  # derived from the audit's own counts
    assert cells[cells.index("role_slots_left") + 1] == "–"
    assert headline_panel("audit", {}) == "" and headline_panel(None, {"a": 1}) == ""


def test_present_hides_code_rewrites_paths_and_replaces_emoji(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"),
                nbformat.v4.new_code_cell(f"stores = ['{tmp_path}/data/demo.db']")]
    nb.cells[1].outputs = [
        nbformat.v4.new_output("stream", name="stdout",
                               text=f"wrote {folder}/review.md from {tmp_path}/data/demo.db 🟢 🔮\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": f"PosixPath('{folder}')"},
                               execution_count=1),
        nbformat.v4.new_output("display_data", data={"text/html": "<td>🔴 fail</td>"}),
    ]
    present(nb, kind="review", metrics={"choices": 5, "units": 46}, folder=folder)
    title, panel, code = nb.cells
    assert title.cell_type == "markdown" and "Headline" in panel.outputs[0]["data"]["text/html"]
    assert code.metadata["transient"]["remove_source"] is True
    assert panel.metadata["transient"]["remove_source"] is True
    stream, html = code.outputs  # the bare PosixPath(...) result is gone
    assert stream["text"] == "wrote review.md from demo.db ● [U+1F52E]\n"
    assert html["data"]["text/html"] == '<td><span style="color:#c62828">●</span> fail</td>'
    assert code.source == "stores = ['demo.db']"  # shown only with --show-code, still clean
    kept = nbformat.v4.new_notebook()
    kept.cells = [nbformat.v4.new_code_cell("x = 1")]
    present(kept, kind=None, metrics=None, folder=folder, show_code=True)
    assert "transient" not in kept.cells[0].metadata and len(kept.cells) == 1


def test_machine_paths_finds_paths_not_fractions_or_urls():
    text = ("chars/4, 1/2, and/or, </td>, https://example.org/a/b, "
            "'/home/u/x.db', &#x27;/tmp/a/b&#x27;, see /work/wt/r/data")
    assert machine_paths(text) == ["/home/u/x.db", "/tmp/a/b", "/work/wt/r/data"]


def test_the_glyphs_used_render_with_the_installed_fonts():
    """Every replacement glyph is covered by a font fontconfig knows (what Chromium uses)."""
    from memlab.report._present import GLYPHS

    for shape in {s for s, _ in GLYPHS.values()} | {"–", "×", "…"}:
        found = subprocess.run(["fc-list", f":charset={ord(shape):x}", "family"],
                               capture_output=True, text=True).stdout.strip()
        assert found, f"no font draws {shape!r}"
