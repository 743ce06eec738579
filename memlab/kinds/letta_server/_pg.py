"""A Letta PostgreSQL database read as untrusted: whoever owns it owns its views, functions and
per-database settings, so a read must not run any of them, nor wait on them forever.

What :func:`connect`, :func:`pin_session`, :func:`check_role` and :func:`guarded_tables` do
before memlab reads a row (:func:`connect` also hands ``json``/``jsonb`` values over as text,
for :mod:`memlab.formats._json`; :func:`refusal` turns a psycopg error into one line naming the
timeout it hit; :func:`redact_dsn` keeps passwords out of every message):

* the session is pinned in the connection's startup packet (libpq ``options``), which outranks
  ``ALTER DATABASE … SET`` and ``ALTER ROLE … SET``: ``search_path=pg_catalog, pg_temp`` (no
  owner's schema is searched, so no owner's function or operator can shadow a built-in),
  ``statement_timeout`` and ``lock_timeout`` (:data:`~memlab.constants.PG_STATEMENT_TIMEOUT_MS`,
  :data:`~memlab.constants.PG_LOCK_TIMEOUT_MS`; ``MEMLAB_PG_STATEMENT_TIMEOUT`` and
  ``MEMLAB_PG_LOCK_TIMEOUT``, in milliseconds, change them), ``row_security=off`` (a row policy
  that would apply is an error, never a call of its expression),
  ``default_transaction_read_only=on``, and ``DateStyle`` / ``TimeZone`` / ``IntervalStyle``
  (values are read as psycopg expects them, whatever the database sets); the settings are read
  back and set again if a pooler dropped them;
* the role memlab logged in as must not be a superuser, nor a member of a superuser role or of
  ``pg_execute_server_program`` / ``pg_read_server_files`` / ``pg_write_server_files``
  (:class:`~memlab.errors.UnsafeDatabase`, with the fix: a SELECT-only role);
* each of Letta's tables in schema ``public`` must be a plain table (``pg_class.relkind = 'r'``)
  without rules or row-level security, and each column memlab reads must have one of
  PostgreSQL's built-in types (or an enum, or a domain over either): a view, materialized view,
  foreign table, partitioned table, a table with a rule or a policy, or a column of an owner's
  type (or an array, composite or range of one) is refused
  by name, before any of it is read; the tables are then locked ``ACCESS SHARE`` (so none can be
  swapped for a view mid-read) and checked again.

Every query memlab sends names its relations schema-qualified, reads tables with ``FROM ONLY``
(no inherited child table is read), and calls built-ins as ``pg_catalog.*`` and operators as
``OPERATOR(pg_catalog.=)``, so the pinned ``search_path`` is a second wall, not the only one.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Any

from memlab.constants import (
    PG_CLIENT_GRACE_MS,
    PG_CONNECT_TIMEOUT_MS,
    PG_FIRST_NORMAL_OID,
    PG_LOCK_TIMEOUT_MS,
    PG_STATEMENT_TIMEOUT_MS,
)
from memlab.errors import InvalidArgument, MissingExtra, SourceError, UnsafeDatabase

__all__ = [
    "SCHEMA",
    "SEARCH_PATH",
    "DANGEROUS_ROLES",
    "STATEMENT_TIMEOUT_ENV",
    "LOCK_TIMEOUT_ENV",
    "CONNECT_TIMEOUT_ENV",
    "timeouts",
    "connect_timeout",
    "client_deadline",
    "startup_options",
    "pin_session",
    "check_role",
    "guarded_tables",
    "qualified",
    "redact_dsn",
    "connect",
    "refusal",
]

#: The schema Letta's alembic migrations create its tables in.
SCHEMA = "public"
SEARCH_PATH = "pg_catalog, pg_temp"
#: Predefined roles that can run programs on, or read and write files of, the database host.
DANGEROUS_ROLES = ("pg_execute_server_program", "pg_read_server_files", "pg_write_server_files")
STATEMENT_TIMEOUT_ENV = "MEMLAB_PG_STATEMENT_TIMEOUT"
LOCK_TIMEOUT_ENV = "MEMLAB_PG_LOCK_TIMEOUT"
CONNECT_TIMEOUT_ENV = "MEMLAB_PG_CONNECT_TIMEOUT"

_KINDS = {
    "v": "a view",
    "m": "a materialized view",
    "f": "a foreign table",
    "p": "a partitioned table",
    "S": "a sequence",
    "i": "an index",
    "I": "an index",
    "c": "a composite type",
    "t": "a TOAST table",
}
_FIX_ROLE = (
    "connect as a role with SELECT on Letta's tables only, e.g. CREATE ROLE memlab_ro "
    "LOGIN PASSWORD '…'; GRANT SELECT ON ALL TABLES IN SCHEMA public TO memlab_ro"
)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def qualified(table: str) -> str:
    """``ONLY "public"."table"``: the table itself, never a child that inherits from it."""
    return f"ONLY {_ident(SCHEMA)}.{_ident(table)}"


def _env_ms(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = 0
    if value < 1 or value > 2**31 - 1:
        raise InvalidArgument(
            f"{name}={raw!r} is not a whole number of milliseconds >= 1",
            hint=f"unset it for the default ({default} ms)",
        )
    return value


def timeouts() -> tuple[int, int]:
    """(statement_timeout, lock_timeout) in milliseconds: the environment's, else the defaults."""
    return (
        _env_ms(STATEMENT_TIMEOUT_ENV, PG_STATEMENT_TIMEOUT_MS),
        _env_ms(LOCK_TIMEOUT_ENV, PG_LOCK_TIMEOUT_MS),
    )


def connect_timeout() -> int:
    """How long connecting may take, in whole seconds as libpq counts them (at least 2)."""
    ms = _env_ms(CONNECT_TIMEOUT_ENV, PG_CONNECT_TIMEOUT_MS)
    return max(2, -(-ms // 1000))


def client_deadline() -> float:
    """memlab's own wall-clock limit on one statement, in seconds: the statement timeout the
    server enforces, plus :data:`~memlab.constants.PG_CLIENT_GRACE_MS` (a silent server, or one
    that sends NOTICE messages forever, never enforces it)."""
    return (timeouts()[0] + PG_CLIENT_GRACE_MS) / 1000


def _settings() -> dict[str, str]:
    statement, lock = timeouts()
    return {
        "search_path": SEARCH_PATH,
        "statement_timeout": f"{statement}ms",
        "lock_timeout": f"{lock}ms",
        "row_security": "off",
        "default_transaction_read_only": "on",
        "DateStyle": "ISO, MDY",
        "TimeZone": "UTC",
        "IntervalStyle": "postgres",
    }


def startup_options() -> str:
    """The libpq ``options`` string pinning the session (spaces escaped as libpq wants)."""
    return " ".join(f"-c {k}={v.replace(' ', chr(92) + ' ')}" for k, v in _settings().items())


def _shown(setting: str, value: str) -> str:
    """A setting as ``current_setting`` shows it (timeouts in their largest whole unit)."""
    if setting.endswith("_timeout"):
        ms = int(value[:-2])
        for unit, size in (("h", 3_600_000), ("min", 60_000), ("s", 1000)):
            if ms % size == 0:
                return f"{ms // size}{unit}"
        return f"{ms}ms"
    return value


def pin_session(conn) -> None:
    """Check the pinned settings took; set any a connection pooler dropped (first statement)."""
    wanted = _settings()
    names = list(wanted)
    got = conn.execute(
        "SELECT " + ", ".join("pg_catalog.current_setting(%s)" for _ in names), names
    ).fetchone()
    for name, value in zip(names, got):
        if value != _shown(name, wanted[name]):
            conn.execute("SELECT pg_catalog.set_config(%s, %s, false)", [name, wanted[name]])


def check_role(conn) -> None:
    """Refuse a login role that is, or can become, a superuser or a server-program role."""
    rows = conn.execute(
        "SELECT r.rolname::pg_catalog.text, r.rolsuper FROM pg_catalog.pg_roles r "
        "WHERE pg_catalog.pg_has_role(session_user, r.oid, 'MEMBER') "
        "AND (r.rolsuper OR r.rolname::pg_catalog.text OPERATOR(pg_catalog.=) "
        "ANY (%s::pg_catalog.text[])) ORDER BY 2 DESC, 1",
        [list(DANGEROUS_ROLES)],
    ).fetchall()
    who = conn.execute("SELECT session_user::pg_catalog.text").fetchone()[0]
    if not rows:
        return
    name, is_super = rows[0]
    if is_super and name == who:
        why = f"role {who!r} is a superuser"
    elif is_super:
        why = f"role {who!r} is a member of superuser role {name!r}"
    else:
        why = f"role {who!r} is a member of {name} (it can run programs or read files on the host)"
    raise UnsafeDatabase(
        f"{why}: memlab does not read a database over a connection that could "
        "run the owner's code with those rights",
        hint=_FIX_ROLE,
    )


def _relations(conn, tables: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Columns memlab may read of each of ``tables`` that exists; the refusals, one per table."""
    rel = conn.execute(
        "SELECT c.relname::pg_catalog.text, c.relkind::pg_catalog.text, c.relhasrules, "
        "c.relrowsecurity FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
        "ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
        "WHERE n.nspname OPERATOR(pg_catalog.=) %s::pg_catalog.name "
        "AND c.relname::pg_catalog.text OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.text[]) "
        "ORDER BY 1",
        [SCHEMA, tables],
    ).fetchall()
    refusals = []
    plain = []
    for name, kind, rules, rls in rel:
        if kind != "r":
            refusals.append(
                f"{SCHEMA}.{name} is {_KINDS.get(kind, f'relkind {kind!r}')}, "
                "where Letta has a table"
            )
        elif rules:
            refusals.append(f"{SCHEMA}.{name} has a rule (CREATE RULE), which Letta never makes")
        elif rls:
            refusals.append(f"{SCHEMA}.{name} has row-level security, which Letta never enables")
        else:
            plain.append(name)
    columns: dict[str, list[str]] = {}
    if not plain:
        return columns, refusals
    found = conn.execute(
        "SELECT c.relname::pg_catalog.text, a.attname::pg_catalog.text, "
        "pg_catalog.format_type(a.atttypid, a.atttypmod), a.atttypid::pg_catalog.int8 "
        "FROM pg_catalog.pg_attribute a "
        "JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid "
        "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
        "WHERE n.nspname OPERATOR(pg_catalog.=) %s::pg_catalog.name "
        "AND c.relname::pg_catalog.text OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.text[]) "
        "AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped "
        "AND pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT') "
        "ORDER BY c.relname, a.attnum",
        [SCHEMA, plain],
    ).fetchall()
    builtin = _builtin_types(conn, {oid for *_, oid in found})
    for table, column, typ, oid in found:
        if not builtin[oid]:
            refusals.append(
                f"{SCHEMA}.{table}.{column} has type {typ}, which is not one of "
                "PostgreSQL's built-in types (its output function, or its elements' "
                "or fields', could be the owner's)"
            )
        columns.setdefault(table, []).append(column)
    return columns, refusals


def _builtin_types(conn, oids: set[int]) -> dict[int, bool]:
    """For each type, whether reading it runs only PostgreSQL's own code: a type ``initdb`` made
    (OID below :data:`~memlab.constants.PG_FIRST_NORMAL_OID`; its elements and fields are
    built-in too) or an enum, after a domain is followed to its base type (a domain's values are
    output by its base type's function). An array, composite or range of the owner's types, and
    any base type of theirs, is not."""
    base = {oid: oid for oid in oids}
    for _ in range(32):  # domains over domains: a chain, followed a few links at most
        pending = sorted({b for b in base.values() if b >= PG_FIRST_NORMAL_OID})
        if not pending:
            break
        rows = conn.execute(
            "SELECT t.oid::pg_catalog.int8, t.typtype::pg_catalog.text, "
            "t.typbasetype::pg_catalog.int8 FROM pg_catalog.pg_type t "
            "WHERE t.oid OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.oid[])",
            [pending],
        ).fetchall()
        info = {oid: (kind, parent) for oid, kind, parent in rows}
        moved = False
        for oid, b in base.items():
            kind, parent = info.get(b, ("?", 0))
            if kind == "e":
                base[oid] = 0  # an enum: enum_out, PostgreSQL's own
                moved = True
            elif kind == "d" and parent:
                base[oid] = parent
                moved = True
        if not moved:
            break
    return {oid: b < PG_FIRST_NORMAL_OID for oid, b in base.items()}


def guarded_tables(conn, tables: list[str], *, where: str) -> dict[str, list[str]]:
    """The readable columns of each of ``tables`` in schema ``public``, once every one of them is
    a plain table of built-in types, locked against being swapped; else UnsafeDatabase."""
    columns, refusals = _relations(conn, tables)
    if not refusals and columns:
        conn.execute(
            "LOCK TABLE "
            + ", ".join(qualified(t) for t in sorted(columns))
            + " IN ACCESS SHARE MODE"
        )
        columns, refusals = _relations(conn, tables)  # what the lock now holds still
    if refusals:
        more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
        raise UnsafeDatabase(
            f"refusing to read {where}: {refusals[0]}{more}; memlab reads only "
            "plain tables of built-in types (a view, rule or policy runs the "
            "owner's code, a foreign table reads elsewhere)",
            hint="point memlab at the Letta server's own database, or restore "
            "Letta's tables as plain tables",
        )
    return columns


def redact_dsn(dsn: str) -> str:
    """The DSN without its password (safe for messages, ``meta`` and reports)."""
    parts = urllib.parse.urlsplit(dsn.strip())
    if parts.password is None:
        return dsn.strip()
    netloc = parts.netloc.rsplit("@", 1)
    user = urllib.parse.unquote(netloc[0].split(":", 1)[0])
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


def connect(dsn: str):
    """A psycopg connection to ``dsn`` with the session pinned (:func:`startup_options`), in a
    read-only repeatable-read transaction once it runs its first statement."""
    try:
        import psycopg
    except ImportError as exc:
        raise MissingExtra(
            "psycopg", "letta-server", feature="reading a Letta PostgreSQL database"
        ) from exc
    shown = redact_dsn(dsn)
    options = startup_options()  # before connecting: a bad MEMLAB_PG_* is an InvalidArgument
    seconds = connect_timeout()
    try:
        conn = _deadline_class(psycopg).connect(
            dsn, connect_timeout=seconds, autocommit=False, options=options, client_encoding="UTF8"
        )  # an SQL_ASCII database's bytes come back as text
    except psycopg.errors.ConnectionTimeout as exc:
        raise SourceError(
            f"cannot connect to PostgreSQL at {shown}: no answer within "
            f"memlab's connect timeout ({seconds} s)",
            hint=f"check the server is up and answering, or raise "
            f"{CONNECT_TIMEOUT_ENV} (milliseconds)",
        ) from exc
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SourceError(
            f"cannot connect to PostgreSQL at {shown}: {first}",
            hint="check host, port, database name and credentials; memlab needs "
            "only SELECT on Letta's tables",
        ) from exc
    conn.memlab_shown = shown
    conn.memlab_deadline = client_deadline()
    conn.read_only = True
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    # Text of every kind as str, decoded here: invalid UTF-8 is a BadText (U+FFFD for the bad
    # bytes), which the loader reports by row. json/jsonb too, for memlab's one JSON reader
    # (psycopg's own json.loads would let repeated keys pass unreported and raise
    # RecursionError on deep nesting).
    for name in ("text", "varchar", "bpchar", "name", '"char"', "json", "jsonb"):
        conn.adapters.register_loader(name, _text_loader(psycopg))
    try:
        if conn.info.parameter_status("server_encoding") == "SQL_ASCII":
            # A database that checks no encoding: its bytes as they are (a UTF-8 client would
            # have the server refuse the first byte that is not UTF-8), decoded above.
            conn.execute("SELECT pg_catalog.set_config('client_encoding', 'SQL_ASCII', false)")
    except psycopg.Error as exc:
        conn.close()
        raise refusal(exc, shown) from exc
    return conn


def _text_loader(psycopg) -> type:
    from psycopg.adapt import Loader

    from memlab.sources._sqlite_snapshot import decode_text

    class Text(Loader):
        def load(self, data) -> str:
            return decode_text(bytes(data))

    return Text


_CLASSES: dict[int, type] = {}


def _deadline_class(psycopg) -> Any:
    """A ``psycopg.Connection`` whose every wait on the server (each statement, its results,
    commit and rollback) ends after :func:`client_deadline` seconds by memlab's clock: the
    connection is closed and the read stops with one line naming the limit's variable."""
    if id(psycopg) in _CLASSES:
        return _CLASSES[id(psycopg)]

    class DeadlineConnection(psycopg.Connection):
        memlab_deadline: float | None = None
        memlab_shown = ""

        def wait(self, gen, interval=0.1, timeout=None):
            limit = self.memlab_deadline
            if limit is not None:
                timeout = limit if timeout is None else min(timeout, limit)
            try:
                return super().wait(gen, interval=interval, timeout=timeout)
            except psycopg.errors._WaitTimeout as exc:
                if limit is None or (timeout is not None and timeout < limit):
                    raise  # psycopg's own shorter wait (a cancel): its business
                self.close()  # the server is not answering: nothing more is sent or awaited
                raise SourceError(
                    f"PostgreSQL at {self.memlab_shown}: no answer to a read within memlab's "
                    f"client deadline ({limit:g} s: the statement timeout plus "
                    f"{PG_CLIENT_GRACE_MS} ms); the server stopped answering or kept sending "
                    "messages without a result",
                    hint=f"check the server; raise {STATEMENT_TIMEOUT_ENV} (milliseconds) for "
                    "a very large one",
                ) from exc

    _CLASSES[id(psycopg)] = DeadlineConnection
    return DeadlineConnection


def refusal(exc, shown: str) -> SourceError:
    """A psycopg error during the read as one line: timeouts say which and how to change it."""
    import psycopg

    statement, lock = timeouts()
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return SourceError(
            f"PostgreSQL at {shown}: a Letta table stayed locked by another session "
            f"past memlab's lock_timeout ({lock} ms): {first}",
            hint=f"retry when the lock is released, or raise {LOCK_TIMEOUT_ENV}",
        )
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return SourceError(
            f"PostgreSQL at {shown}: a read ran past memlab's statement_timeout "
            f"({statement} ms): {first}",
            hint=f"raise {STATEMENT_TIMEOUT_ENV} (milliseconds) for a very large server",
        )
    if isinstance(exc, psycopg.DataError):
        return SourceError(
            f"PostgreSQL at {shown}: a value memlab cannot read: {first}",
            hint="a value Python cannot hold, such as an 'infinity' timestamp, is in a Letta table",
        )
    return SourceError(
        f"PostgreSQL refused a read at {shown}: {first}",
        hint="memlab needs SELECT on Letta's tables",
    )
