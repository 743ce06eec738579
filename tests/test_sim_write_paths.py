"""A release's write paths found from what its code does (memlab.sim.real._write_paths), S1 through
the one an operator would use, and the claims naming the file and line that decides them.

The discovery tests read the installed release sources (no driver: fast) and synthetic
packages (negative controls: a method *named* edit that writes nothing is not a write path; a
method with another name that reaches ``update(blocks).values(content=...)`` is one). The S1
tests run the real releases on one cell each.
"""

from __future__ import annotations

import re
import sqlite3
import textwrap

import pytest

from memlab.sim.real._write_paths import operator_path, source_line, undo_paths, write_paths
from memlab.sim.real.releases import release_sources

OLD, NEW = "0.19.2", "0.20.0"


def _line_of(folder, where: str) -> str:
    """The text of ``elfmem/<file>:<line>`` in the installed package."""
    rel, line = where.split()[0].rsplit(":", 1)
    return (folder / rel.removeprefix("elfmem/")).read_text().splitlines()[int(line) - 1]


@pytest.fixture(scope="module")
def sources():
    return {rel: release_sources(rel) for rel in (OLD, NEW)}


def test_0192s_operator_write_path_is_accept_amendment_with_its_cli_mcp_and_audit(sources):
    folder = sources[OLD]
    paths = write_paths(folder)
    path = operator_path(paths)
    assert path["method"] == "accept_amendment" and path["takes_text"]
    # Every file:line is read back from the installed source, not trusted.
    assert "def accept_amendment(" in _line_of(folder, path["api"])
    assert "update_block_content(" in _line_of(folder, path["writes"])
    assert path["audit"] == ["block_amendments"]
    assert [s.split(" (")[0] for s in path["cli"]] == ["elfmem review accept"]
    assert [s.split(" (")[0] for s in path["mcp"]] == ["elfmem_accept_amendment"]
    cli_line = re.search(r"\((elfmem/cli\.py:\d+)\)", path["cli"][0]).group(1)
    assert "def review_accept(" in _line_of(folder, cli_line)
    # The undo: revert_amendment takes an id, not text, and `elfmem review revert` reaches it.
    undo = undo_paths(paths)
    assert [u["method"] for u in undo] == ["revert_amendment"]
    assert undo[0]["cli"][0].startswith("elfmem review revert")


def test_0200s_operator_write_path_is_edit_before_the_review_command(sources):
    path = operator_path(write_paths(sources[NEW]))
    assert path["method"] == "edit" and path["cli"][0].startswith("elfmem edit (")
    assert "def edit(" in _line_of(sources[NEW], path["api"])
    assert path["ledger"] is True and path["audit"] == []
    assert {p["method"] for p in write_paths(sources[NEW])} >= {"edit", "accept_amendment"}


def _package(tmp_path, api_body: str):
    root = tmp_path / "elfmem"
    (root / "db").mkdir(parents=True)
    (root / "db" / "queries.py").write_text(textwrap.dedent('''
        async def update_block_content(conn, block_id, content):
            await conn.execute(update(blocks).where(blocks.c.id == block_id).values(content=content))

        async def update_block_status(conn, block_id, status):
            await conn.execute(update(blocks).values(status=status))

        async def insert_note(conn, text):
            await conn.execute(text_("INSERT INTO notes_log (t) VALUES (:t)"))
    '''))
    (root / "api.py").write_text("class MemorySystem:\n" + textwrap.indent(
        textwrap.dedent(api_body), "    "))
    (root / "cli.py").write_text(textwrap.dedent('''
        @app.command()
        def rephrase(block_id: str, text: str):
            _run(_rephrase(block_id, text))

        async def _rephrase(block_id, text):
            return await mem.rephrase(block_id, text)
    '''))
    return root


def test_discovery_follows_the_code_not_the_names(tmp_path):
    root = _package(tmp_path, '''
        async def edit(self, block_id: str, content: str):
            """Named edit, but only sets the status."""
            await update_block_status(self._conn, block_id, "active")

        async def rephrase(self, block_id: str, text: str):
            await update_block_content(self._conn, block_id, text)
            await insert_note(self._conn, text)

        async def _private(self, block_id: str, text: str):
            await update_block_content(self._conn, block_id, text)
    ''')
    paths = write_paths(root)
    assert [p["method"] for p in paths] == ["rephrase"]
    path = operator_path(paths)
    assert path["cli"] == ["elfmem rephrase (elfmem/cli.py:3)"] and path["mcp"] == []
    assert path["writes"].startswith("elfmem/api.py:")
    assert "await update_block_content(" in _line_of(root, path["writes"])
    # A write path no operator surface reaches is not the operator's.
    (root / "cli.py").write_text("")
    assert write_paths(root)[0]["cli"] == [] and operator_path(write_paths(root)) is None
    # No API file, no class: nothing found, no traceback.
    (root / "api.py").write_text("def broken(:\n")
    assert write_paths(root) == []


def test_source_line_searches_the_installed_file(sources, tmp_path):
    where = source_line(sources[OLD], "db/engine.py", "journal_mode")
    assert where.startswith("elfmem/db/engine.py:") and "journal_mode" in _line_of(sources[OLD], where)
    assert source_line(tmp_path, "absent.py", "x") is None


@pytest.mark.slow
def test_s1_on_0192_rewords_through_accept_amendment_and_revert_restores(tmp_path):
    from memlab.sim.real import RealParams, release_row, run_real

    params = RealParams(scale=120, s1_role="connection", s1_reword=0)  # cosine ~0.999
    res = run_real([OLD], ["S1"], params=params)[(release_row(OLD), "S1")]
    m = res.metrics
    assert m["api"] == "accept_amendment" and res.outcome == "pass" and m["score"] == 1.0
    assert m["cosine_old_new"] >= 0.95  # the band the doc's fallback would reject
    assert m["audit_rows"] == {"block_amendments": 1} and m["audit_keeps_before"] is True
    assert m["undo"]["method"] == "revert_amendment" and m["undo"]["restored"] is True
    assert "elfmem review accept" in res.summary
    # The doc's fallback, asked for: learn + consolidate, rejected at this cosine.
    learn = run_real([OLD], ["S1"], params=params.with_(s1_path="learn"))[(release_row(OLD), "S1")]
    assert learn.metrics["api"].startswith("learn+consolidate") and learn.outcome == "fail"
    assert learn.metrics["write_path"] is None and learn.metrics["audit_rows"] == {}


def test_claims_1_and_18_name_the_line_and_follow_the_write_path(sources):
    from memlab.sim.claims import claims_table
    from memlab.sim.real.release_facts import release_facts
    from memlab.sim.scenarios import ScenarioResult
    from memlab.sim.real import release_row

    facts = {r: release_facts(f) for r, f in sources.items()}
    via = operator_path(facts[OLD]["write_paths"])
    cells = {
        (release_row(OLD), "S1"): ScenarioResult(
            "S1", release_row(OLD), "pass", "s", basis="measured",
            metrics={"cosine_old_new": 0.97, "write_path": {"api": via["api"]}}),
        (release_row(OLD), "S9"): ScenarioResult("S9", release_row(OLD), "pass", "s",
                                                 basis="measured", metrics={}),
    }
    table = claims_table(cells, [OLD], facts=facts, run={"scale": 120})
    rows = table[table["verdict"] != "not run"].set_index("scenario")
    assert rows.at["S1", "verdict"] == "contradicts" and rows.at["S9", "verdict"] == "contradicts"
    for code in ("S1", "S9"):
        assert "def accept_amendment(" in _line_of(sources[OLD], rows.at[code, "source"])
    # Negative control: the learn+consolidate cell (no write path used) outside the band
    # failing is what the claim expects.
    cells[(release_row(OLD), "S1")] = ScenarioResult(
        "S1", release_row(OLD), "fail", "s", basis="measured", metrics={"cosine_old_new": 0.97})
    no_path = {OLD: {**facts[OLD], "write_paths": []}}
    row = claims_table(cells, [OLD], facts=no_path, run={}).set_index("scenario").loc["S1"]
    assert row["verdict"] == "confirms" and "no public MemorySystem method" in row["why"]
    assert "blocks = Table(" in _line_of(sources[OLD], row["source"])


def test_s9_reads_every_timestamp_form_sqlite_and_iso_write():
    """SQLite's CURRENT_TIMESTAMP (``YYYY-MM-DD HH:MM:SS``, UTC), SQLAlchemy's naive
    microseconds, ISO with T, Z or an offset: all read as the same instant; text that is not a
    timestamp (a block id, a date alone, prose) is not one."""
    from datetime import datetime, timezone

    from memlab.sim.real._months import parse_time

    at = datetime(2026, 12, 6, 7, 30, 5, tzinfo=timezone.utc)
    for text in ("2026-12-06 07:30:05", "2026-12-06T07:30:05", "2026-12-06T07:30:05Z",
                 "2026-12-06T07:30:05+00:00", "2026-12-06T08:30:05+01:00",
                 "2026-12-06 07:30:05.000000", "2026-12-06T07:30:05.000000001Z"):
        assert parse_time(text) == at, text
    for text in ("1e9c6d1a2b", "2026-12-06", "yesterday at 07:30", "2026-13-06 07:30:05",
                 "2026-12-06 07:30:05 and more", None, 17, "9" * 1000):
        assert parse_time(text) is None, text
    # Real SQLite: its CURRENT_TIMESTAMP is read, and compared with a start in UTC.
    con = sqlite3.connect(":memory:")
    (stamp,) = con.execute("SELECT CURRENT_TIMESTAMP").fetchone()
    assert abs((parse_time(stamp) - datetime.now(timezone.utc)).total_seconds()) < 5


def test_discovery_is_safe_from_threads_side_by_side(sources):
    """The releases' scripts run side by side in threads; CPython 3.11's ast.parse raised
    "AST constructor recursion depth mismatch" when two parsed at once (the full real run hit
    it). Discovery parses one file at a time."""
    import threading

    from memlab.sim.real._write_paths import find_write_paths

    errors, found = [], []

    def go(rel):
        try:
            found.append(len(find_write_paths(sources[rel])))
        except Exception as exc:  # noqa: BLE001 - any failure is the test's answer
            errors.append(repr(exc))

    threads = [threading.Thread(target=go, args=(rel,)) for rel in (OLD, NEW, OLD, NEW)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert errors == [] and sorted(found) == [2, 2, 3, 3]


def test_every_claim_row_names_its_deciding_line_or_why_none(sources):
    """Every claim row judged on a cell carries the release file:line that decides it, found
    in the installed source, or a source_note saying why no one line does."""
    from memlab.sim.claims import CLAIMS, claims_table
    from memlab.sim.real import release_row
    from memlab.sim.real.release_facts import release_facts
    from memlab.sim.scenarios import ScenarioResult

    facts = {r: release_facts(f) for r, f in sources.items()}
    cells = {(release_row(c.release), c.scenario): ScenarioResult(
        c.scenario, release_row(c.release), "partial", "s", basis="measured", metrics={})
        for c in CLAIMS}
    sizes = {r: {"code": 20_000, "lines": 23_000, "files": 90} for r in (OLD, NEW)}
    table = claims_table(cells, [OLD, NEW], sizes, facts, {"scale": 120, "new_modules": []})
    judged = table[table["scenario"] != "Simplicity"]
    assert len(judged) == len(CLAIMS)
    for row in judged.itertuples():
        assert isinstance(row.source, str), (row.release, row.scenario, row.why)
        assert _line_of(sources[row.release], row.source).strip(), row.source
        assert not isinstance(row.source_note, str)  # a line decides it
    # The claims that were judged on the cell alone now name the line that decides them.
    lines = dict(zip(zip(judged["release"], judged["scenario"], judged["claim"]),
                     judged["source"]))
    s3 = next(v for (r, c, _), v in lines.items() if (r, c) == (OLD, "S3"))
    assert "near_dup_near_threshold" in _line_of(sources[OLD], s3)
    s5 = next(v for (r, c, _), v in lines.items() if (r, c) == (NEW, "S5"))
    assert "--seed/--no-seed" in _line_of(sources[NEW], s5)
    # Rows no one line decides say why.
    sizes_rows = table[table["scenario"] == "Simplicity"]
    assert sizes_rows["source"].isna().all() and sizes_rows["source_note"].str.len().gt(0).all()
