"""Fleet audit on a real Dask LocalCluster (2 worker processes) into a Parquet lake.

The fleet is the bundled sample (copies of the real elfmem databases and Agent Files, memfs
repos and substrates migrated from them, one truncated database), built once per session.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import duckdb
import pandas as pd
import polars as pl
import pytest

import memlab
from memlab.lake import make_sample_fleet, read_lake, scan

RUN_DATE = "2026-12-01"


@pytest.fixture(scope="session")
def sample_fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet") / "stores"
    make_sample_fleet(root, n_db=3, n_af=2, n_memfs=2, n_substrate=1)
    return root


@pytest.fixture(scope="session")
def first_run(sample_fleet, tmp_path_factory):
    lake = tmp_path_factory.mktemp("lake") / "lake"
    result = memlab.fleet([sample_fleet], out=lake, workers=2, as_of="2026-08-04",
                          run_date=RUN_DATE)
    return result, lake


def test_every_store_is_a_row_and_the_corrupt_one_a_failure(first_run, sample_fleet):
    result, lake = first_run
    assert result.workers == 2
    assert len(result.stores) == 3 + 1 + 2 + 2 + 1  # dbs, corrupt db, .af, memfs, substrate
    assert result.counts == {"ok": 8, "reused": 0, "failed": 1}
    failed = result.failures
    assert failed["path"].tolist() == [str(sample_fleet / "elfmem" / "corrupt.db")]
    assert failed["error_class"].tolist() == ["CorruptStore"]
    assert "\n" not in failed["message"][0] and "truncated or damaged" in failed["message"][0]
    kinds = result.stores.dropna(subset=["kind"]).groupby("kind", observed=True).size().to_dict()
    assert kinds == {"elfmem_db": 3, "agent_file": 2, "letta_memfs": 2, "elfmem_substrate": 1}
    # the failure is in the lake too, with the store's path
    fails = read_lake(lake, "failures")
    assert fails["store_path"].tolist() == failed["path"].tolist()


def test_the_lake_holds_the_audit_each_store_would_get_alone(first_run, sample_fleet):
    _, lake = first_run
    headline = read_lake(lake, "headline").set_index("store_path")
    db = sample_fleet / "elfmem" / "agent-001.db"
    alone = memlab.audit(db, as_of="2026-08-04").headline
    row = headline.loc[str(db)]
    for key in ("llm_calls", "blocks_ever", "archived_superseded", "llm_input_tokens"):
        assert row[key] == alone[key], key
    assert row["input_per_corpus_token"] == pytest.approx(alone["input_per_corpus_token"])
    assert row["store_kind"] == "elfmem_db" and row["run_date"] == RUN_DATE


def test_frames_keep_their_dtypes(first_run, sample_fleet):
    _, lake = first_run
    db = sample_fleet / "elfmem" / "agent-000.db"
    blocks = read_lake(lake, "frames/blocks", run_date=RUN_DATE)
    blocks = blocks[blocks["store_id"] == memlab.lake.store_id(db)].reset_index(drop=True)
    direct = memlab.load(db).blocks
    assert len(blocks) == len(direct)
    for col in ("created_at", "reinforcement_count"):
        if col in direct.columns:
            assert blocks[col].dtype == direct[col].dtype, col
    # categories stay categories, with the same categories in the same order (Arrow gives
    # them back as pandas' default string type)
    assert isinstance(blocks["status"].dtype, pd.CategoricalDtype)
    assert list(blocks["status"].cat.categories) == list(direct["status"].cat.categories)
    assert blocks["status"].astype(str).tolist() == direct["status"].astype(str).tolist()
    assert str(blocks["created_at"].dtype) == "datetime64[ns, UTC]"


def test_duckdb_and_polars_read_the_lake(first_run):
    _, lake = first_run
    counts = duckdb.sql(
        f"SELECT store_kind, count(*) AS n FROM read_parquet('{lake}/headline/**/*.parquet', "
        f"hive_partitioning=true, union_by_name=true) GROUP BY 1 ORDER BY 1").fetchall()
    assert counts == [("agent_file", 2), ("elfmem_db", 3), ("elfmem_substrate", 1),
                      ("letta_memfs", 2)]
    blocks = pl.scan_parquet(f"{lake}/frames/blocks/store_kind=elfmem_db/**/*.parquet",
                             hive_partitioning=True, missing_columns="insert",
                             extra_columns="ignore").collect()
    assert blocks["store_id"].n_unique() == 3


def test_a_rerun_reuses_unchanged_stores_and_picks_up_new_and_vanished_ones(
        first_run, sample_fleet, tmp_path):
    _, first_lake = first_run
    lake = tmp_path / "lake"
    shutil.copytree(first_lake, lake)
    # a store added between the runs, and one listed at discovery that is gone when its task runs
    added = sample_fleet.parent / "added.af"
    shutil.copy2(sample_fleet / "letta-af" / "agent-000.af", added)
    gone = sample_fleet.parent / "gone.db"
    shutil.copy2(sample_fleet / "elfmem" / "agent-000.db", gone)
    listed = scan([sample_fleet, added, gone])
    manifest = tmp_path / "fleet.csv"
    listed[["path"]].to_csv(manifest, index=False)
    gone.unlink()
    try:
        result = memlab.fleet(manifest=manifest, out=lake, workers=2, as_of="2026-08-04",
                              run_date="2026-12-02")
    finally:
        added.unlink()
    assert result.counts == {"ok": 1, "reused": 8, "failed": 2}
    by_path = result.stores.set_index("path")
    assert by_path.loc[str(added), "status"] == "ok"
    assert by_path.loc[str(gone), "error_class"] == "StoreNotFound"
    # reused stores are in the new run's partition, with the same values
    h1 = read_lake(lake, "headline", run_date=RUN_DATE).set_index("store_id").sort_index()
    h2 = read_lake(lake, "headline", run_date="2026-12-02").set_index("store_id").sort_index()
    assert len(h2) == 9
    common = h1.index
    assert h2.loc[common, "llm_calls"].equals(h1.loc[common, "llm_calls"])


def test_a_changed_store_is_read_again(first_run, sample_fleet, tmp_path):
    _, first_lake = first_run
    lake = tmp_path / "lake"
    shutil.copytree(first_lake, lake)
    af = sample_fleet / "letta-af" / "agent-000.af"
    original = af.read_bytes()
    try:
        doc = json.loads(original)
        doc = json.loads(doc) if isinstance(doc, str) else doc
        doc["blocks"][0]["value"] = "x" * 9000
        af.write_text(json.dumps(doc))
        result = memlab.export_parquet([af], out=lake, as_of="2026-08-04", run_date=RUN_DATE)
        assert result.counts == {"ok": 1, "reused": 0, "failed": 0}
        row = read_lake(lake, "headline", run_date=RUN_DATE).set_index("store_path").loc[str(af)]
        assert row["block_chars_total"] == memlab.audit(af).headline["block_chars_total"]
    finally:
        af.write_bytes(original)


def test_cli_fleet_prints_a_one_screen_summary_and_bad_input_is_one_line(sample_fleet, tmp_path):
    run = subprocess.run([sys.executable, "-m", "memlab", "fleet", str(sample_fleet),
                          "--out", str(tmp_path / "lake"), "--workers", "0",
                          "--as-of", "2026-08-04"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) <= 40
    assert max(len(ln) for ln in lines if str(tmp_path) not in ln) <= 100
    assert "8 audited, 0 reused" in run.stdout and "CorruptStore" in run.stdout
    bad = tmp_path / "manifest.csv"
    bad.write_text("where\nx\n")
    run = subprocess.run([sys.executable, "-m", "memlab", "fleet", "--manifest", str(bad),
                          "--out", str(tmp_path / "lake2")], capture_output=True, text=True)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert "no 'path' column" in run.stderr


def test_cli_export_parquet(data_dir, tmp_path):
    run = subprocess.run([sys.executable, "-m", "memlab", "export", "parquet",
                          str(data_dir / "demo" / "elfmem-demo.db"), "--out", str(tmp_path),
                          "--as-of", "2026-08-04"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    headline = read_lake(tmp_path, "headline")
    # the doc's published figures survive the lake
    assert headline["llm_calls"].tolist() == [2903]
    assert headline["blocks_ever"].tolist() == [185]


def test_discover_lists_every_bundled_store_under_data(data_dir):
    inventory = memlab.discover(data_dir)
    paths = {p.replace(str(data_dir) + "/", "") for p in inventory["path"]}
    assert {"demo/elfmem-demo.db", "samples/elfmem/elfmem-0.20.0-schema9.db",
            "samples/letta-af/ezra.af", "samples/elfmem-substrate"} <= paths
    # JSON that is not an agent file (summaries, manifests) is not listed as a store
    assert not any(p.endswith("summary.json") for p in paths)


def test_a_script_without_a_main_guard_gets_a_named_error(data_dir, tmp_path):
    # Worker processes start by importing the calling script; one that calls memlab.fleet at
    # its top level makes every worker try to start a cluster of its own.
    script = tmp_path / "unguarded.py"
    script.write_text("import memlab\n"
                      f"memlab.fleet([{str(data_dir / 'samples' / 'letta-af')!r}], "
                      f"out={str(tmp_path / 'lake')!r}, workers=1, progress=False)\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("memlab.errors.FleetError: the local Dask cluster's worker processes")
    assert "if __name__ == '__main__':" in last
