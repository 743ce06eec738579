"""Reading the Parquet lake back: exact values and one set of dtypes across store kinds, the
lake of a run date after a second run that day, misspelled tables, entries the walk skips, and
column names that differ only in case. Real stores, real DuckDB."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import memlab
from memlab.errors import MemlabError
from memlab.lake import read_lake

sys.path.insert(0, str(Path(__file__).parent))
import memfs_repos  # noqa: E402

DAY = "2026-12-01"
BIG = 2**53 + 1  # a float64 cannot hold it


@pytest.fixture
def mixed_lake(data_dir, tmp_path):
    letta = tmp_path / "letta.db"
    shutil.copy2(data_dir / "samples" / "letta-server" / "letta-0.11.7.db", letta)
    with sqlite3.connect(letta) as conn:
        conn.execute("UPDATE block SET version = ?", (BIG,))
    elf = tmp_path / "elf.db"
    shutil.copy2(data_dir / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db", elf)
    lake = tmp_path / "lake"
    memlab.export_parquet([letta, elf], out=lake, run_date=DAY)
    return lake, letta, elf


def test_one_frame_of_two_kinds_reads_back_exact_with_the_loaders_dtypes(mixed_lake):
    lake, letta, elf = mixed_lake
    got = read_lake(lake, "frames/blocks")
    by_path = {p: got[got["store_path"] == str(p)] for p in (letta, elf)}
    for path in (letta, elf):
        loaded = memlab.load(path).frames["blocks"]
        rows = by_path[path]
        assert len(rows) == len(loaded)
        for col in loaded.columns:
            if col == "metadata":  # mappings are JSON text in the lake, by rule
                assert got[col].dtype == "string"
                continue
            if isinstance(loaded[col].dtype, pd.CategoricalDtype):  # categories: the union
                assert isinstance(got[col].dtype, pd.CategoricalDtype), col
                assert set(loaded[col].cat.categories) <= set(got[col].cat.categories), col
                assert got[col].cat.categories.dtype == loaded[col].cat.categories.dtype, col
                assert rows[col].astype("string").tolist() == \
                    loaded[col].astype("string").tolist(), col
                continue
            assert got[col].dtype == loaded[col].dtype, col
    versions = by_path[letta]["version"]
    assert versions.dtype == "Int64" and set(versions) == {BIG}
    assert by_path[elf]["version"].isna().all()  # elfmem has no version column
    for col, dtype in {"history_len": "Int64", "summary_chars": "Int64", "is_deleted": "boolean",
                       "hidden": "boolean", "label": "string", "store_kind": "string"}.items():
        assert got[col].dtype == dtype, col
    # DuckDB reads the same files to the same value
    (v,) = duckdb.sql(f"SELECT DISTINCT version FROM read_parquet('{lake}/frames/blocks/**/*.parquet',"
                      " hive_partitioning=true, union_by_name=true) WHERE version IS NOT NULL"
                      ).fetchall()[0]
    assert v == BIG


def test_a_misspelled_table_is_one_error_naming_the_tables(mixed_lake):
    lake, _, _ = mixed_lake
    with pytest.raises(MemlabError) as err:
        read_lake(lake, "files")
    text = str(err.value)
    assert "\n" not in text and "'files'" in text
    assert "frames/blocks" in text and "headline" in text
    with pytest.raises(MemlabError, match="no table 'frames/nope'"):
        read_lake(lake, "frames/nope")
    with pytest.raises(MemlabError, match="no lake folder"):
        read_lake(lake / "missing", "headline")
    # a table the lake simply has no rows of yet is an empty frame, not an error
    assert read_lake(lake, "failures").empty


def _fleet_dir(data_dir: Path, root: Path) -> Path:
    root.mkdir()
    for name in ("elfmem-0.19.2-schema5.db", "elfmem-0.20.0-schema9.db"):
        shutil.copy2(data_dir / "samples" / "elfmem" / name, root / name)
    shutil.copy2(data_dir / "samples" / "letta-server" / "letta-0.11.7.db", root / "letta.db")
    return root


def _headline_paths(lake: Path, day: str) -> list[str]:
    return sorted(read_lake(lake, "headline", run_date=day)["store_path"])


def test_a_second_run_the_same_day_is_the_days_view_of_its_stores(data_dir, tmp_path):
    root = _fleet_dir(data_dir, tmp_path / "fleet")
    lake = tmp_path / "lake"
    memlab.fleet([root], out=lake, workers=0, run_date="2026-11-30", progress=False)
    first = memlab.fleet([root], out=lake, workers=0, run_date=DAY, progress=False)
    assert len(_headline_paths(lake, DAY)) == 3 and first.superseded.empty
    (root / "elfmem-0.19.2-schema5.db").unlink()
    (root / "letta.db").rename(root / "renamed.db")
    second = memlab.fleet([root], out=lake, workers=0, run_date=DAY, progress=False)
    assert _headline_paths(lake, DAY) == sorted([str(root / "elfmem-0.20.0-schema9.db"),
                                                  str(root / "renamed.db")])
    assert sorted(second.superseded["store_path"]) == sorted(
        [str(root / "elfmem-0.19.2-schema5.db"), str(root / "letta.db")])
    summary = second.summary()
    assert "removed from run date 2026-12-01: 2 store(s)" in summary
    assert str(root / "letta.db") in summary
    # no frame or problem of a removed store is left in the day's partitions, for any reader
    blocks = read_lake(lake, "frames/blocks", run_date=DAY)
    assert set(blocks["store_path"]) == {str(root / "elfmem-0.20.0-schema9.db"),
                                         str(root / "renamed.db")}
    (n,) = duckdb.sql(f"SELECT count(DISTINCT store_id) FROM read_parquet('{lake}/**/*.parquet',"
                      f" hive_partitioning=true, union_by_name=true) WHERE run_date = '{DAY}'"
                      ).fetchall()[0]
    assert n == 2
    # the earlier run date is left as it was
    assert len(_headline_paths(lake, "2026-11-30")) == 3
    # export adds a store to the day and removes nothing
    extra = data_dir / "samples" / "elfmem" / "elfmem-0.19.2-schema5.db"
    added = memlab.export_parquet([extra], out=lake, run_date=DAY)
    assert added.superseded.empty and len(_headline_paths(lake, DAY)) == 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_symlinked_store_and_a_fifo_are_reported_as_skipped(data_dir, tmp_path):
    root = _fleet_dir(data_dir, tmp_path / "fleet")
    outside = tmp_path / "outside.db"
    shutil.copy2(root / "letta.db", outside)
    (root / "link.db").symlink_to(outside)
    os.mkfifo(root / "pipe.db")
    lake = tmp_path / "lake"
    result = memlab.fleet([root], out=lake, workers=0, run_date=DAY, progress=False)
    assert result.counts == {"ok": 3, "reused": 0, "failed": 0}
    reasons = dict(zip(result.skipped["path"], result.skipped["reason"]))
    assert set(reasons) == {str(root / "link.db"), str(root / "pipe.db")}
    assert "symbolic link" in reasons[str(root / "link.db")]
    assert "FIFO" in reasons[str(root / "pipe.db")]
    fails = read_lake(lake, "failures", run_date=DAY)
    assert sorted(fails.loc[fails["error_class"] == "Skipped", "store_path"]) == sorted(reasons)
    assert "skipped (not opened" in result.summary() and str(root / "pipe.db") in result.summary()
    # the symlink's target was not read, and the FIFO did not block the run
    assert str(outside) not in set(read_lake(lake, "headline")["store_path"])


def test_columns_differing_only_in_case_get_distinct_names_for_sql(tmp_path):
    w = memfs_repos._Writer(tmp_path / "repo")
    w.commit("init", memfs_repos.SERVER, memfs_repos._t("2026-08-20"), files={
        "MEMORY.md": "# Memory\n- persona.md\n- human.md\n",
        "persona.md": "---\ndescription: lower\n---\nI am Vee.\n",
        "human.md": "---\nDescription: Upper\n---\nKai.\n",
    })
    loaded = memlab.load(tmp_path / "repo").frames["files"]
    assert {"fm_description", "fm_Description"} <= set(loaded.columns)
    lake = tmp_path / "lake"
    memlab.export_parquet([tmp_path / "repo"], out=lake, run_date=DAY)
    rows = duckdb.sql(f"SELECT path, fm_description, fm_Description__2 FROM read_parquet("
                      f"'{lake}/frames/files/**/*.parquet', hive_partitioning=true, "
                      f"union_by_name=true) WHERE path IN ('persona.md', 'human.md') ORDER BY path"
                      ).fetchall()
    assert rows == [("human.md", None, "Upper"), ("persona.md", "lower", None)]
    problems = read_lake(lake, "problems")
    notes = problems.loc[problems["kind"] == "lake_renamed_column", "message"].tolist()
    assert len(notes) == 1 and "'fm_Description__2'" in notes[0]
    back = read_lake(lake, "frames/files").set_index("path")
    assert back.loc["persona.md", "fm_description"] == "lower"
    assert back.loc["human.md", "fm_Description__2"] == "Upper"
