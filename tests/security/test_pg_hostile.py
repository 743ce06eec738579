"""A hostile Letta PostgreSQL database: its owner controls its views, functions, rules, row
policies, per-database settings and locks. Reading it must neither hang past memlab's timeouts
nor call any function of the owner's, and a database memlab will not read is one line naming why.

Each case is a copy (``CREATE DATABASE … TEMPLATE letta``) of the real letta 0.16.8 dump in a
real PostgreSQL cluster (tests/pg_cluster.py), changed by its superuser, then read through the
real loader and the real CLI over the cluster's SELECT-only role (or, where the case is the
connection's role, over a stronger one).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from memlab.errors import UnsafeDatabase
from memlab.kinds.letta_server._load import load_letta_server

from letta_server_fixtures import MANIFEST, letta_pg  # noqa: F401
from pg_cluster import READER, SUPERUSER

ROOT = Path(__file__).resolve().parents[2]
COUNTS = MANIFEST["letta-0.16.8.sql"]["counts"]
_n = itertools.count()


@pytest.fixture
def hostile(letta_pg):
    """A fresh copy of the Letta database; yields (name, run-SQL-as-its-superuser)."""
    name = f"hostile_{os.getpid()}_{next(_n)}"
    letta_pg.psql("postgres", f"CREATE DATABASE {name} TEMPLATE letta")
    try:
        yield name, (lambda sql: letta_pg.psql(name, sql))
    finally:
        letta_pg.psql("postgres", f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                  f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        letta_pg.psql("postgres", f"DROP DATABASE {name}")


def _memlab(*args: str, timeout: float, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(ROOT), **env}
    # run from the checkout on PYTHONPATH (``-m`` puts the working folder first on sys.path)
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True, text=True,
                          timeout=timeout, env=environ,
                          cwd=environ["PYTHONPATH"].split(os.pathsep)[0])


def _one_line_refusal(run: subprocess.CompletedProcess, *words: str) -> str:
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    lines = run.stderr.strip().split("\n")
    assert len(lines) == 1 and lines[0].isprintable(), run.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# ---- views, matviews, foreign tables, rules, policies, children -----------------------------

SLEEPY_VIEW = """
ALTER TABLE block RENAME TO block_data;
CREATE VIEW block AS SELECT b.* FROM block_data b, LATERAL (SELECT pg_sleep(30)) s;
GRANT SELECT ON block, block_data TO {reader};
"""


def test_a_view_that_sleeps_is_refused_at_once_not_read(letta_pg, hostile):
    db, sql = hostile
    sql(SLEEPY_VIEW.format(reader=READER))
    start = time.monotonic()
    run = _memlab("inspect", letta_pg.dsn(db), timeout=25)
    assert time.monotonic() - start < 20
    _one_line_refusal(run, "public.block is a view", "refusing to read")


@pytest.mark.parametrize("command", ["audit", "migrate"])
def test_every_command_refuses_the_view_and_writes_nothing(letta_pg, hostile, tmp_path, command):
    db, sql = hostile
    sql(SLEEPY_VIEW.format(reader=READER))
    args = [command, letta_pg.dsn(db)] + ([str(tmp_path / "dest"), "--no-retrieval"]
                                          if command == "migrate" else [])
    _one_line_refusal(_memlab(*args, timeout=25), "public.block is a view")
    assert not (tmp_path / "dest").exists()


def test_a_statement_past_the_timeout_stops_whatever_the_database_sets(letta_pg, hostile,
                                                                       monkeypatch):
    db, sql = hostile
    # The owner turns timeouts off for its database and for the role: the startup packet wins.
    sql(f"ALTER DATABASE {db} SET statement_timeout = 0; ALTER DATABASE {db} SET lock_timeout = 0;"
        f"ALTER ROLE {READER} IN DATABASE {db} SET statement_timeout = 0;")
    monkeypatch.setenv("MEMLAB_PG_STATEMENT_TIMEOUT", "300")
    from memlab.kinds.letta_server._pg import connect as _connect_postgres

    conn = _connect_postgres(letta_pg.dsn(db))
    try:
        start = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("SELECT pg_catalog.pg_sleep(5)")
        assert time.monotonic() - start < 3
        conn.rollback()
        shown = conn.execute("SELECT pg_catalog.current_setting('statement_timeout'), "
                             "pg_catalog.current_setting('lock_timeout'), "
                             "pg_catalog.current_setting('search_path')").fetchone()
        assert shown == ("300ms", "10s", "pg_catalog, pg_temp")
    finally:
        conn.rollback()
        conn.close()


def test_a_bad_timeout_setting_is_one_line(letta_pg):
    run = _memlab("inspect", letta_pg.dsn("letta"), timeout=60, MEMLAB_PG_LOCK_TIMEOUT="soon")
    _one_line_refusal(run, "MEMLAB_PG_LOCK_TIMEOUT")


@pytest.mark.parametrize("setup, words", [
    ("ALTER TABLE users RENAME TO users_data; CREATE MATERIALIZED VIEW users AS SELECT * FROM "
     "users_data; GRANT SELECT ON users TO {reader};", "public.users is a materialized view"),
    ("CREATE EXTENSION file_fdw; CREATE SERVER files FOREIGN DATA WRAPPER file_fdw; "
     "ALTER TABLE organizations RENAME TO organizations_data; CREATE FOREIGN TABLE organizations "
     "(id varchar, name varchar) SERVER files OPTIONS (filename '/etc/passwd', format 'csv', "
     "delimiter ':'); GRANT SELECT ON organizations TO {reader};",
     "public.organizations is a foreign table"),
    ("CREATE RULE keep AS ON UPDATE TO block DO INSTEAD NOTHING;", "public.block has a rule"),
    ("CREATE FUNCTION public.boom() RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION "
     "'OWNER CODE RAN'; END $$; ALTER TABLE block ENABLE ROW LEVEL SECURITY; CREATE POLICY p ON "
     "block USING (public.boom());", "public.block has row-level security"),
], ids=["matview", "foreign-table", "rule", "row-policy"])
def test_what_is_not_a_plain_table_is_refused_by_name(letta_pg, hostile, setup, words):
    db, sql = hostile
    sql(setup.format(reader=READER))
    with pytest.raises(UnsafeDatabase) as err:
        load_letta_server(letta_pg.dsn(db))
    assert words in str(err.value) and "OWNER CODE RAN" not in str(err.value)
    assert "\n" not in str(err.value)


def test_an_inherited_child_table_is_not_read(letta_pg, hostile):
    db, sql = hostile
    sql("CREATE TABLE public.extra () INHERITS (public.block);"
        "INSERT INTO public.extra SELECT * FROM public.block;"
        f"GRANT SELECT ON public.extra TO {READER};")
    store = load_letta_server(letta_pg.dsn(db))
    assert len(store.blocks) == COUNTS["blocks"]
    assert store.blocks["block_id"].is_unique


OWN_TYPE = ("CREATE SCHEMA own; CREATE TYPE own.t;"
            "CREATE FUNCTION own.t_in(cstring) RETURNS own.t LANGUAGE internal IMMUTABLE STRICT "
            "AS 'textin'; CREATE FUNCTION own.t_out(own.t) RETURNS cstring LANGUAGE internal "
            "IMMUTABLE STRICT AS 'textout'; CREATE TYPE own.t (INPUT = own.t_in, "
            "OUTPUT = own.t_out, LIKE = text); CREATE CAST (text AS own.t) WITHOUT FUNCTION;"
            f"GRANT USAGE ON SCHEMA own TO {READER};")


@pytest.mark.parametrize("column_type, using", [
    ("own.t", "description::text::own.t"),
    ("own.t[]", "ARRAY[description::text::own.t]"),
    ("own.pair", "ROW(description::text::own.t)::own.pair"),
    ("own.note", "description::text::own.t::own.note"),
], ids=["base", "array", "composite", "domain"])
def test_a_column_of_the_owners_type_is_refused(letta_pg, hostile, column_type, using):
    db, sql = hostile
    # A base type whose output function is the owner's (here a copy of textout; it could be any
    # C function a superuser owner installed), and types whose output calls it.
    sql(OWN_TYPE + "CREATE TYPE own.pair AS (v own.t); CREATE DOMAIN own.note AS own.t;"
        f"ALTER TABLE block ALTER COLUMN description TYPE {column_type} USING {using};")
    with pytest.raises(UnsafeDatabase, match=r"public\.block\.description has type own\."):
        load_letta_server(letta_pg.dsn(db))


def test_an_enum_or_a_domain_over_a_builtin_is_read(letta_pg, hostile):
    db, sql = hostile
    sql("CREATE SCHEMA own; CREATE DOMAIN own.label AS varchar CHECK (VALUE <> '');"
        "CREATE DOMAIN own.label2 AS own.label; CREATE TYPE own.kind AS ENUM "
        "('letta_agent', 'letta_user'); ALTER TABLE block ALTER COLUMN label TYPE own.label2;"
        "ALTER TABLE block_history ALTER COLUMN actor_type TYPE own.kind "
        "USING actor_type::own.kind;"
        f"GRANT USAGE ON SCHEMA own TO {READER};")
    store = load_letta_server(letta_pg.dsn(db))
    assert len(store.blocks) == COUNTS["blocks"] and store.problems.empty


# ---- per-database settings: search_path and shadowing ---------------------------------------

SHADOWS = {
    # the loader's old catalog query called current_schemas() unqualified
    "function": "CREATE FUNCTION evil.current_schemas(boolean) RETURNS name[] LANGUAGE plpgsql "
                "AS $$ BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END $$;",
    # and read "block" by its bare name: a table of the owner's earlier in the path wins
    "table": "CREATE TABLE evil.block AS SELECT * FROM public.block LIMIT 1;"
             "CREATE TABLE evil.agents AS SELECT * FROM public.agents LIMIT 1;",
    "operator": "CREATE FUNCTION evil.eq(name, name) RETURNS boolean LANGUAGE plpgsql AS $$ "
                "BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END $$; CREATE OPERATOR evil.= "
                "(LEFTARG = name, RIGHTARG = name, FUNCTION = evil.eq);"
                "CREATE FUNCTION evil.current_schemas(boolean) RETURNS name[] LANGUAGE sql "
                "AS $$ SELECT ARRAY['public']::name[] $$;",
}


@pytest.mark.parametrize("what", sorted(SHADOWS))
def test_a_database_search_path_cannot_shadow_a_builtin_or_a_table(letta_pg, hostile, what):
    db, sql = hostile
    sql(f"CREATE SCHEMA evil; {SHADOWS[what]} GRANT USAGE ON SCHEMA evil TO PUBLIC;"
        f"GRANT SELECT ON ALL TABLES IN SCHEMA evil TO {READER};"
        f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA evil TO PUBLIC;"
        f"ALTER DATABASE {db} SET search_path = evil, pg_catalog, public;"
        f"ALTER ROLE {READER} IN DATABASE {db} SET search_path = evil, pg_catalog, public;")
    store = load_letta_server(letta_pg.dsn(db))
    assert len(store.blocks) == COUNTS["blocks"] and len(store.agents) == COUNTS["agents"]
    assert store.problems.empty, store.problems.to_string()


# ---- the connection's role -----------------------------------------------------------------

LEAKY_VIEW = """
CREATE FUNCTION public.leak() RETURNS varchar LANGUAGE plpgsql AS $$
BEGIN COPY (SELECT 1) TO PROGRAM 'touch {marker}'; RETURN 'x'; END $$;
ALTER TABLE users RENAME TO users_data;
CREATE VIEW users AS SELECT u.id, public.leak() AS name, u.organization_id, u.created_at,
       u.is_deleted FROM users_data u;
"""


def test_a_superuser_connection_is_refused_before_any_read(letta_pg, hostile):
    db, sql = hostile
    marker = letta_pg.folder / f"ran-{db}"
    sql(LEAKY_VIEW.format(marker=marker))
    run = _memlab("inspect", letta_pg.dsn(db, user=SUPERUSER), timeout=60)
    line = _one_line_refusal(run, f"role '{SUPERUSER}' is a superuser", "SELECT")
    assert "GRANT SELECT" in line
    assert not marker.exists()


@pytest.mark.parametrize("grant", ["pg_execute_server_program", "pg_read_server_files",
                                   "pg_write_server_files", SUPERUSER])
def test_a_role_that_can_run_or_read_on_the_host_is_refused(letta_pg, hostile, grant):
    db, sql = hostile
    role = f"strong_{next(_n)}"
    letta_pg.psql("postgres", f"CREATE ROLE {role} LOGIN; GRANT {grant} TO {role};")
    try:
        sql(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        with pytest.raises(UnsafeDatabase) as err:
            load_letta_server(letta_pg.dsn(db, user=role))
        assert grant in str(err.value) and "\n" not in str(err.value)
    finally:
        sql(f"DROP OWNED BY {role}")  # its grants in the copy
        letta_pg.psql("postgres", f"DROP ROLE {role}")


# ---- locks ----------------------------------------------------------------------------------

def test_a_table_locked_by_another_session_stops_at_the_lock_timeout(letta_pg, hostile):
    db, _ = hostile
    holder = psycopg.connect(letta_pg.dsn(db, user=SUPERUSER))
    try:
        holder.execute("LOCK TABLE public.block IN ACCESS EXCLUSIVE MODE")  # held: no commit
        start = time.monotonic()
        run = _memlab("inspect", letta_pg.dsn(db), timeout=30, MEMLAB_PG_LOCK_TIMEOUT="500")
        assert time.monotonic() - start < 25
        _one_line_refusal(run, "lock_timeout (500 ms)", "MEMLAB_PG_LOCK_TIMEOUT")
    finally:
        holder.rollback()
        holder.close()


def test_the_databases_date_and_zone_settings_do_not_change_what_is_read(letta_pg, hostile):
    db, sql = hostile
    plain = load_letta_server(letta_pg.dsn("letta"))
    sql(f"ALTER DATABASE {db} SET DateStyle = 'SQL, DMY'; "
        f"ALTER DATABASE {db} SET TimeZone = 'Pacific/Kiritimati'; "
        f"ALTER DATABASE {db} SET IntervalStyle = 'sql_standard';")
    store = load_letta_server(letta_pg.dsn(db))
    for frame in ("blocks", "block_history", "agents"):
        a = getattr(plain, frame).sort_values(getattr(plain, frame).columns[0], ignore_index=True)
        b = getattr(store, frame).sort_values(getattr(store, frame).columns[0], ignore_index=True)
        assert a["created_at"].equals(b["created_at"]), frame


# ---- JSON columns: memlab's one JSON reader, not psycopg's json.loads ------------------------

def test_json_columns_are_read_by_memlabs_reader(letta_pg, hostile):
    db, sql = hostile
    deep = "[" * 5000 + "]" * 5000  # PostgreSQL's json accepts it; Python's json.loads recurses
    sql("UPDATE block SET metadata_ = '{\"a\": 1, \"a\": 2}'::json WHERE label = 'human';"
        f"UPDATE block SET metadata_ = '{deep}'::json WHERE label = 'persona';")
    store = load_letta_server(letta_pg.dsn(db))
    kinds = store.problems["kind"].astype(str).tolist()
    assert "duplicate_key" in kinds and "bad_json" in kinds, store.problems.to_string()
    human = store.blocks[store.blocks["label"] == "human"]["metadata"].tolist()
    assert {"a": 2} in human


def test_settings_a_pooler_dropped_are_set_again(letta_pg, hostile):
    """A pooler that drops the startup options (PgBouncer does, with ``options`` in its
    ignore_startup_parameters) leaves the database's settings: pin_session sets memlab's again
    before the first read."""
    from memlab.kinds.letta_server._pg import SEARCH_PATH, pin_session

    db, sql = hostile
    sql(f"ALTER DATABASE {db} SET search_path = evil, pg_catalog, public;"
        f"ALTER DATABASE {db} SET statement_timeout = 0;")
    conn = psycopg.connect(letta_pg.dsn(db))  # no options: as through such a pooler
    try:
        conn.read_only = True
        pin_session(conn)
        got = conn.execute("SELECT pg_catalog.current_setting('search_path'), "
                           "pg_catalog.current_setting('statement_timeout'), "
                           "pg_catalog.current_setting('row_security')").fetchone()
        assert got == (SEARCH_PATH, "1min", "off")
    finally:
        conn.rollback()
        conn.close()
