"""Shared fixtures for the Letta server tests: the committed databases and a live PostgreSQL."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from pg_cluster import PgCluster, pg_bindir

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "letta-server"
SQLITE_DB = SAMPLES / "letta-0.11.7.db"
SQLITE_PLAIN = SAMPLES / "letta-0.11.7-nohistory.db"
PG_DUMP = SAMPLES / "letta-0.16.8.sql"
MANIFEST = json.loads((SAMPLES / "manifest.json").read_text())


@pytest.fixture(scope="session")
def letta_pg():
    """A throwaway PostgreSQL cluster with the 0.16.8 dump restored as database ``letta``."""
    if pg_bindir() is None:  # pragma: no cover - CI installs postgresql in .ci/run
        pytest.fail("PostgreSQL server binaries are missing: apt-get install -y postgresql")
    folder = Path(tempfile.mkdtemp(prefix="memlab-pg-"))
    try:
        with PgCluster(folder / "pg") as pg:
            pg.restore("letta", PG_DUMP)
            yield pg
    finally:
        shutil.rmtree(folder, ignore_errors=True)
