"""A fleet run writes and deletes only inside the lake (issue 34, hole 7). A handed-over lake
whose table folder (or partition folder, or ``_manifests``) is a symlink sent the run's new
Parquet files, and its removal of the date's old ones, to wherever the link pointed: a file
outside the lake was deleted. Now the run refuses such a lake with one line before it writes,
and each write and removal checks its own path (a link planted after the check changes nothing
outside).

Real runs (``memlab fleet``, ``export_parquet``) on a committed elfmem sample; the folder outside
the lake is a sibling whose every file is listed and hashed before and after."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memlab
from memlab.errors import FleetError

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "data" / "samples" / "elfmem" / "elfmem-0.19.2-schema5.db"
DATE = "2026-12-01"


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() else "dir" for p in sorted(folder.rglob("*"))}


def _lake(tmp_path: Path) -> Path:
    lake = tmp_path / "lake"
    memlab.export_parquet([STORE], out=lake, run_date=DATE)
    return lake


def _move_out(lake: Path, rel: str, outside: Path) -> Path:
    """Move ``lake/rel`` to ``outside`` and leave a symlink in its place; plant a valid Parquet
    file there that the run would remove (a copy of one of the date's files)."""
    src = lake / rel
    dest = outside / rel.replace("/", "__")
    shutil.move(src, dest)
    os.symlink(dest, src)
    sample = next(dest.rglob("*.parquet"), None) or next(lake.rglob("*.parquet"))
    victim_dir = next((p.parent for p in dest.rglob("*.parquet")), dest)
    shutil.copy(sample, victim_dir / "precious.parquet")
    return dest


@pytest.mark.parametrize("rel", [
    "headline",
    "headline/store_kind=elfmem_db",
    f"problems/store_kind=elfmem_db/run_date={DATE}",
    "frames/blocks",
    "_manifests",
])
def test_a_symlinked_lake_folder_refuses_the_run(tmp_path, rel):
    lake = _lake(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    _move_out(lake, rel, outside)
    before = _snapshot(outside)
    got = subprocess.run([sys.executable, "-m", "memlab", "fleet", "-q", "--workers", "0",
                          "--no-reuse", "--out", str(lake), str(STORE)],
                         capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode == 2, got.stdout + got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "symlink" in lines[0] and rel in lines[0], got.stderr
    assert _snapshot(outside) == before  # nothing written, nothing removed


def test_export_into_a_symlinked_table_changes_nothing_outside(tmp_path):
    lake = _lake(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    _move_out(lake, "headline/store_kind=elfmem_db", outside)
    before = _snapshot(outside)
    with pytest.raises(FleetError, match="symlink"):
        memlab.export_parquet([STORE], out=lake, run_date=DATE, reuse=False)
    assert _snapshot(outside) == before


def test_each_write_and_removal_checks_its_own_path(tmp_path):
    """A link planted after the up-front check (or a linked file): the folder maker refuses it,
    the remover leaves it, the atomic writer replaces it and does not follow it."""
    from memlab.io import write_atomic
    from memlab.lake._paths import real_folder, remove_inside

    lake = tmp_path / "lake"
    outside = tmp_path / "outside"
    (lake / "headline").mkdir(parents=True)
    outside.mkdir()
    target = outside / "precious.parquet"
    target.write_bytes(b"keep me")
    os.symlink(outside, lake / "headline" / "store_kind=x")
    with pytest.raises(FleetError, match="symlink"):
        real_folder(lake, lake / "headline" / "store_kind=x" / "run_date=D")
    assert not (outside / "run_date=D").exists()
    assert remove_inside(lake, lake / "headline" / "store_kind=x" / "precious.parquet") is False
    os.symlink(target, lake / "headline" / "linked.parquet")
    assert remove_inside(lake, lake / "headline" / "linked.parquet") is False
    write_atomic(lake / "headline" / "linked.parquet", b"new")
    assert target.read_bytes() == b"keep me"
    assert not (lake / "headline" / "linked.parquet").is_symlink()
    assert (lake / "headline" / "linked.parquet").read_bytes() == b"new"
    # negative control: a regular file in real folders is made and removed
    made = real_folder(lake, lake / "headline" / "store_kind=y" / "run_date=D")
    write_atomic(made / "part.parquet", b"x")
    assert remove_inside(lake, made / "part.parquet") is True
    assert not (made / "part.parquet").exists()


def test_a_plain_lake_still_runs_and_replaces_its_own_files(tmp_path):
    """Negative control: no link, the second run on the same date replaces the first's files."""
    lake = _lake(tmp_path)
    first = sorted(p.name for p in (lake / "headline").rglob("*.parquet"))
    run = memlab.export_parquet([STORE], out=lake, run_date=DATE, reuse=False)
    second = sorted(p.name for p in (lake / "headline").rglob("*.parquet"))
    assert run.counts["ok"] == 1 and len(second) == 1 and second != first


# ------------------------------------------------------------------ reads (read_lake, is_lake)
OTHER = ROOT / "data" / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db"


def _foreign(tmp_path: Path) -> Path:
    """A second lake outside the first, from another store: what a link would pull in."""
    other = tmp_path / "elsewhere"
    memlab.export_parquet([OTHER], out=other, run_date=DATE)
    return other


def test_reading_through_a_symlinked_table_folder_is_refused(tmp_path):
    """A partition folder linked to another lake's: read_lake and read_fleet refuse with one
    error naming it, is_lake says no for a linked headline; before, the other store's row was
    read into the report as this lake's."""
    lake = _lake(tmp_path)
    other = _foreign(tmp_path)
    rel = "headline/store_kind=elfmem_db"
    shutil.rmtree(lake / rel)
    os.symlink(other / rel, lake / rel)
    with pytest.raises(FleetError, match="symlink") as err:
        memlab.read_lake(lake, "headline")
    assert rel in str(err.value)
    with pytest.raises(FleetError, match="symlink"):
        memlab.read_lake(lake, "problems")  # any table: the lake is refused as a whole
    with pytest.raises(FleetError, match="symlink"):
        memlab.lake.read_fleet(lake)
    shutil.rmtree(lake / "headline")
    os.symlink(other / "headline", lake / "headline")
    assert memlab.lake.is_lake(other) is True and memlab.lake.is_lake(lake) is False


def test_a_symlinked_parquet_file_is_not_read(tmp_path):
    lake = _lake(tmp_path)
    other = _foreign(tmp_path)
    theirs = next((other / "headline").rglob("*.parquet"))
    ours = next((lake / "headline").rglob("*.parquet"))
    os.symlink(theirs, ours.parent / "linked.parquet")
    rows = memlab.read_lake(lake, "headline")
    theirs_id = memlab.read_lake(other, "headline")["store_id"].iloc[0]
    assert len(rows) == 1 and theirs_id not in set(rows["store_id"])  # only our own row
    # is_lake: a headline holding only a linked file is no lake a run wrote
    ours.unlink()
    assert memlab.lake.is_lake(lake) is False


def test_a_plain_lake_reads_back(tmp_path):
    """Negative control: the untouched lake reads (one store), is a lake, and read_fleet works."""
    lake = _lake(tmp_path)
    assert memlab.lake.is_lake(lake) is True
    assert len(memlab.read_lake(lake, "headline")) == 1
    assert memlab.lake.read_fleet(lake).counts["ok"] == 1
