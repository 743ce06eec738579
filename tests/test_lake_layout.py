"""The lake of few files: a handful of Parquet files per (table, store kind, run date), a
manifest per run date, unchanged stores carried from the last run's files, and the same
tables read back as the one-file-per-store lake gave (data/lake-readback, recorded with main's
code on the same fleet; see its SOURCES.md). Real stores, real DuckDB and Polars."""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pytest

import memlab
from memlab.lake import lake_tables, make_sample_fleet, read_lake

sys.path.insert(0, str(Path(__file__).parent))
import lake_fleet  # noqa: E402

REF = Path(__file__).resolve().parents[1] / "data" / "lake-readback"
DAY = lake_fleet.RUN_DATE


@pytest.fixture(scope="module")
def bundled_fleet(data_dir, tmp_path_factory):
    return lake_fleet.build(data_dir, tmp_path_factory.mktemp("readback") / "fleet")


@pytest.fixture(scope="module")
def bundled_lake(bundled_fleet, tmp_path_factory):
    lake = tmp_path_factory.mktemp("readback-lake") / "lake"
    result = memlab.fleet([bundled_fleet], out=lake, workers=0, as_of=lake_fleet.AS_OF,
                          run_date=DAY, progress=False)
    return result, lake


def _sorted_categories(df: pd.DataFrame) -> pd.DataFrame:
    """Categories in sorted order: a union of categories follows the order rows were written."""
    for col in df.columns:
        if isinstance(df[col].dtype, pd.CategoricalDtype):
            df[col] = df[col].cat.reorder_categories(sorted(df[col].cat.categories))
    return df


def _parquet_files(lake: Path) -> list[Path]:
    return sorted(lake.rglob("*.parquet"))


def test_every_table_reads_back_as_the_per_store_lake_did(bundled_lake, bundled_fleet):
    result, lake = bundled_lake
    assert result.counts == {"ok": 11, "reused": 0, "failed": 1}
    dtypes = json.loads((REF / "dtypes.json").read_text())
    errors = json.loads((REF / "errors.json").read_text())
    assert set(lake_tables(lake)) == set(dtypes) | set(errors)
    for table, want_dtypes in dtypes.items():
        got = read_lake(lake, table)
        assert {str(c): str(t) for c, t in got.dtypes.items()} == want_dtypes, table
        want = pd.read_parquet(REF / (table.replace("/", "__") + ".parquet"))
        pd.testing.assert_frame_equal(lake_fleet.normalise(got, str(bundled_fleet)), want,
                                      obj=table)
    # the one table the per-store lake could not read: a column all null (float) in one Letta
    # server database and JSON text in the other now shares the text type
    assert list(errors) == ["frames/block_history"]
    history = read_lake(lake, "frames/block_history")
    servers = sorted((bundled_fleet / "letta-server").glob("*.db"))
    assert len(history) == sum(len(memlab.load(p).frames["block_history"]) for p in servers)
    assert history["metadata"].dtype == "string"


def test_one_file_per_partition_and_store_id_is_a_column(bundled_lake):
    result, lake = bundled_lake
    files = _parquet_files(lake)
    per_partition = Counter(f.parent for f in files)
    assert set(per_partition.values()) == {1}
    assert sorted(str(f.relative_to(lake)) for f in files) == sorted(result.files)
    assert all(f.name.startswith(f"part-{result.run_id}-") for f in files)
    assert not any(p.name.startswith(".staging") for p in lake.iterdir())
    (n,) = duckdb.sql(f"SELECT count(DISTINCT store_id) FROM read_parquet("
                      f"['{lake}/headline/**/*.parquet', '{lake}/failures/**/*.parquet'], "
                      "union_by_name=true)").fetchall()[0]
    assert n == 12  # 11 stores' headlines and the truncated database's failure row


def test_the_manifest_names_the_run_its_versions_and_every_store(bundled_lake, bundled_fleet):
    result, lake = bundled_lake
    doc = json.loads((lake / "_manifests" / f"run_date={DAY}.json").read_text())
    assert doc["run_id"] == result.run_id and doc["run_date"] == DAY
    assert doc["versions"]["memlab"] == memlab.__version__
    assert doc["as_of"].startswith(lake_fleet.AS_OF)
    assert sorted(doc["files"]) == sorted(result.files)
    stores = doc["stores"]
    assert sorted(e["path"] for e in stores.values()) == sorted(result.stores["path"])
    demo = stores[memlab.lake.store_id(bundled_fleet / "elfmem" / "demo.db")]
    assert demo["status"] == "ok" and demo["kind"] == "elfmem_db" and len(demo["digest"]) == 64
    assert demo["source_version"]["schema_version"] == memlab.load(
        bundled_fleet / "elfmem" / "demo.db").meta["schema_version"]
    bad = stores[memlab.lake.store_id(bundled_fleet / "elfmem" / "truncated.db")]
    assert bad["status"] == "failed" and bad["error_class"] == "CorruptStore"
    # a store names its partitions by their place in the manifest's list of them
    assert [doc["partitions"][i] for i in bad["tables"]] == [f"failures/run_date={DAY}"]
    from memlab.lake._layout import read_manifest

    demo_tables = read_manifest(lake, DAY)["stores"][
        memlab.lake.store_id(bundled_fleet / "elfmem" / "demo.db")]["tables"]
    assert f"headline/store_kind=elfmem_db/run_date={DAY}" in demo_tables
    assert f"frames/blocks/store_kind=elfmem_db/run_date={DAY}" in demo_tables


def test_the_21_store_sample_fleet_is_a_few_dozen_files_not_189(tmp_path):
    root = make_sample_fleet(tmp_path / "fleet")  # 8 + 6 + 4 + 2 stores and a truncated db
    lake = tmp_path / "lake"
    result = memlab.fleet([root], out=lake, workers=0, as_of="2026-08-04", run_date=DAY,
                          progress=False)
    assert len(result.stores) == 21
    files = _parquet_files(lake)
    assert len(files) <= 48  # the per-store lake wrote 189 (9 per store)
    assert max(Counter(f.parent for f in files).values()) == 1
    (n,) = duckdb.sql(f"SELECT count(*) FROM read_parquet('{lake}/headline/**/*.parquet', "
                      "hive_partitioning=true, union_by_name=true)").fetchall()[0]
    assert n == 20
    # a second run of the same stores the next day: all reused, carried, still one file each
    again = memlab.fleet([root], out=lake, workers=0, as_of="2026-08-04",
                         run_date="2026-12-02", progress=False)
    assert again.counts == {"ok": 0, "reused": 20, "failed": 1}
    day2 = [f for f in _parquet_files(lake) if "run_date=2026-12-02" in f.parts]
    assert len(day2) == len(files)
    for table in ("headline", "frames/blocks", "problems"):
        a = read_lake(lake, table, run_date=DAY).drop(columns="run_date")
        b = read_lake(lake, table, run_date="2026-12-02").drop(columns="run_date")
        key = ["store_id", *[c for c in ("id", "label", "file", "message") if c in a.columns]]
        a, b = (_sorted_categories(x.sort_values(key, kind="stable").reset_index(drop=True))
                for x in (a, b))
        pd.testing.assert_frame_equal(a, b, obj=table)


def test_duckdb_aggregates_and_polars_scans_the_lake(bundled_lake):
    _, lake = bundled_lake
    rows = duckdb.sql(
        f"SELECT store_kind, count(*), sum(n_blocks) FROM read_parquet("
        f"'{lake}/headline/**/*.parquet', hive_partitioning=true, union_by_name=true) "
        f"GROUP BY 1 ORDER BY 1").fetchall()
    headline = read_lake(lake, "headline")
    want = headline.groupby("store_kind")["n_blocks"].agg(["count", "sum"])
    assert [(k, n) for k, n, _ in rows] == [(k, int(c)) for k, c in
                                            headline.groupby("store_kind").size().items()]
    for kind, _, total in rows:
        s = want.loc[kind, "sum"] if headline.loc[headline["store_kind"] == kind,
                                                  "n_blocks"].notna().any() else None
        assert (None if total is None else int(total)) == (None if s is None else int(s))
    blocks = pl.scan_parquet(f"{lake}/frames/blocks/**/*.parquet", hive_partitioning=True,
                             missing_columns="insert", extra_columns="ignore").collect()
    assert blocks.height == len(read_lake(lake, "frames/blocks"))


def test_export_carries_the_days_other_stores_and_an_old_layout_day_is_replaced(
        bundled_lake, bundled_fleet, tmp_path):
    _, first = bundled_lake
    lake = tmp_path / "lake"
    shutil.copytree(first, lake)
    before = read_lake(lake, "headline", run_date=DAY)
    ezra = bundled_fleet / "letta-af" / "ezra.af"
    out = memlab.export_parquet([ezra], out=lake, run_date=DAY, as_of=lake_fleet.AS_OF)
    assert out.counts == {"ok": 0, "reused": 1, "failed": 0} and out.superseded.empty
    after = read_lake(lake, "headline", run_date=DAY)
    assert sorted(after["store_path"]) == sorted(before["store_path"])
    assert len(_parquet_files(lake)) == len(_parquet_files(first))
    # a date written in the one-file-per-store layout (memlab before): the next fleet run on
    # that date replaces its files; a store it does not list is named as removed
    old_day = lake / "headline" / "store_kind=elfmem_db" / "run_date=2026-11-30"
    old_day.mkdir(parents=True)
    gone = "0123456789abcdef"
    pd.DataFrame({"store_id": pd.array([gone], dtype="string"),
                  "store_path": pd.array(["/gone.db"], dtype="string")}).to_parquet(
        old_day / f"{gone}.parquet")
    run = memlab.fleet([bundled_fleet / "elfmem" / "demo.db"], out=lake, workers=0,
                       run_date="2026-11-30", progress=False)
    assert run.superseded["store_path"].tolist() == ["/gone.db"]
    assert not (old_day / f"{gone}.parquet").exists()
    assert read_lake(lake, "headline", run_date="2026-11-30")["store_path"].tolist() == [
        str(bundled_fleet / "elfmem" / "demo.db")]


def test_tasks_are_batches_sized_by_the_measured_seconds_per_store():
    from memlab.constants import FLEET_MAX_BATCH, FLEET_TASK_SECONDS
    from memlab.lake import batch_size

    assert batch_size(None) == 1  # nothing measured yet: one store per task
    assert batch_size(FLEET_TASK_SECONDS) == 1
    assert batch_size(FLEET_TASK_SECONDS / 5) == 5
    assert batch_size(1e-6) == FLEET_MAX_BATCH


def test_a_dask_run_hands_out_batches_and_stages_a_few_files_per_batch(bundled_fleet, tmp_path):
    lake = tmp_path / "lake"
    result = memlab.fleet([bundled_fleet], out=lake, workers=2, as_of=lake_fleet.AS_OF,
                          run_date=DAY, progress=False)
    assert sum(result.batches) == len(result.stores) == 12
    assert result.batches[:4] == [1, 1, 1, 1]  # two per worker before anything is measured
    doc = json.loads((lake / "_manifests" / f"run_date={DAY}.json").read_text())
    assert doc["batches"] == result.batches
    assert max(Counter(f.parent for f in _parquet_files(lake)).values()) == 1
    assert result.counts == {"ok": 11, "reused": 0, "failed": 1}
