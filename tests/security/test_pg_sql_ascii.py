"""An ``SQL_ASCII`` PostgreSQL database (issue 34, hole 13). Such a database checks no encoding,
and psycopg handed its text back as bytes: even an untouched copy of the Letta 0.16.8 fixture
was refused with a false reason (``public.b'agents' is relkind b'r'``). memlab now pins the
client encoding and decodes text itself: UTF-8 text reads as text, and bytes that are not UTF-8
read with U+FFFD and a ``bad_text`` problem row naming the table, column and row.

The database is real: ``CREATE DATABASE … ENCODING 'SQL_ASCII' TEMPLATE template0`` in the
tests/pg_cluster.py cluster, the committed 0.16.8 dump restored into it, read over the
SELECT-only role through the real loader and CLI."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlab.kinds.letta_server._load import load_letta_server

from letta_server_fixtures import MANIFEST, PG_DUMP, letta_pg  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
COUNTS = MANIFEST["letta-0.16.8.sql"]["counts"]
_n = itertools.count()


@pytest.fixture
def sql_ascii(letta_pg):
    name = f"sqlascii_{os.getpid()}_{next(_n)}"
    letta_pg.psql("postgres", f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' TEMPLATE template0 "
                              "LC_COLLATE 'C' LC_CTYPE 'C'")
    letta_pg.psql(name, PG_DUMP.read_text(encoding="utf-8"))
    letta_pg.grant_reader(name)
    assert "SQL_ASCII" in letta_pg.psql(name, "SHOW server_encoding")
    try:
        yield name
    finally:
        letta_pg.psql("postgres", f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                  f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        letta_pg.psql("postgres", f"DROP DATABASE {name}")


def _frames(store):
    return {n: store.frames[n].sort_values(list(store.frames[n].columns[:1])).reset_index(drop=True)
            for n in ("blocks", "block_history", "agents")}


def test_an_untouched_sql_ascii_copy_reads_as_the_utf8_original(letta_pg, sql_ascii):
    got = load_letta_server(letta_pg.dsn(sql_ascii))
    want = load_letta_server(letta_pg.dsn("letta"))  # the same dump in a UTF8 database
    assert len(got.blocks) == COUNTS["blocks"] and got.problems.empty, got.problems
    for name, frame in _frames(want).items():
        assert _frames(got)[name].equals(frame), name
    run = subprocess.run([sys.executable, "-m", "memlab", "inspect", letta_pg.dsn(sql_ascii)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL)
    assert run.returncode == 0 and "relkind" not in run.stderr, run.stderr[-1500:]


def test_utf8_and_other_bytes_in_an_sql_ascii_database(letta_pg, sql_ascii):
    first = "SELECT ctid FROM block WHERE label = '{}' ORDER BY id LIMIT 1"
    letta_pg.psql(sql_ascii, "SET client_encoding = 'UTF8'; "
                             f"UPDATE block SET value = 'café ☕ naïve' WHERE ctid = ({first.format('human')})")
    letta_pg.psql(sql_ascii, "SET client_encoding = 'SQL_ASCII'; "
                             f"UPDATE block SET value = E'caf\\351 au lait' "
                             f"WHERE ctid = ({first.format('persona')})")
    store = load_letta_server(letta_pg.dsn(sql_ascii))
    values = set(store.blocks["value"].dropna())
    assert "café ☕ naïve" in values  # UTF-8 bytes read as the text they are
    assert "caf\ufffd au lait" in values  # a Latin-1 byte: U+FFFD, and a problem row
    bad = store.problems[store.problems["kind"] == "bad_text"]
    assert len(bad) == 1 and "block.value" in bad["message"].iloc[0], store.problems
