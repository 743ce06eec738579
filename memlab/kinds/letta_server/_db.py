"""The two databases a Letta server keeps, behind one interface for
:mod:`memlab.kinds.letta_server._load`: tables, columns and rows of one consistent read.

:class:`SQLiteSource` reads a snapshot's connection; :class:`PostgresSource` reads a PostgreSQL
database as untrusted (:mod:`memlab.kinds.letta_server._pg`: the login role checked, Letta's tables
checked to be plain tables and locked, before any row). A ``value`` column is read only up to
:data:`~memlab.constants.MAX_VALUE_BYTES`: a longer value is measured by the database and
selected as NULL (:attr:`Source.oversized` keeps its size and character count).
"""

from __future__ import annotations

import pandas as pd

from memlab._escape import quote
from memlab.constants import MAX_VALUE_BYTES
from memlab.kinds.letta_server._pg import check_role, guarded_tables, pin_session, qualified

__all__ = ["quote", "Source", "SQLiteSource", "PostgresSource"]


class Source:
    """Tables, columns and rows of one consistent read; SQLite and PostgreSQL alike."""

    flavour = ""
    #: the ``>`` of a query
    greater = ">"

    def __init__(self) -> None:
        self.columns: dict[str, list[str]] = {}
        #: table -> {row key: (bytes, characters)} of the values past MAX_VALUE_BYTES, not read
        self.oversized: dict[str, dict[str, tuple[int, int | None]]] = {}

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        raise NotImplementedError

    def table_sql(self, table: str) -> str:
        """How a query names ``table``."""
        return quote(table)

    def bytes_sql(self, column: str) -> str:
        """An expression for the stored size in bytes of ``column``'s value."""
        raise NotImplementedError

    def chars_sql(self, column: str) -> str:
        """An expression for the length in characters of ``column``'s value, by the database."""
        raise NotImplementedError

    def key_is(self, key: str) -> str:
        """A condition: ``key`` equals the query's one parameter."""
        raise NotImplementedError

    def _capped(self, table: str, key: str, column: str) -> str:
        """The select expression of a ``value`` column: its text, or NULL past the cap. The
        values past it are found first, one size per row (SQLite loads a value to measure it,
        once, and lets it go), and their character counts asked of the database row by row."""
        found = {}
        for k, size in self.rows(
            f"SELECT {quote(key)}, {self.bytes_sql(column)} FROM {self.table_sql(table)}"
        ):
            if size is not None and int(size) > MAX_VALUE_BYTES:
                found[k] = int(size)
        for k, size in found.items():
            got = self.rows(
                f"SELECT {self.chars_sql(column)} FROM {self.table_sql(table)} "
                f"WHERE {self.key_is(key)}",
                (k,),
            )
            chars = int(got[0][0]) if got and got[0][0] is not None else None
            self.oversized.setdefault(table, {})[str(k)] = (size, chars)
        if not found:
            return quote(column)
        return (
            f"CASE WHEN {self.bytes_sql(column)} {self.greater} {MAX_VALUE_BYTES} "
            f"THEN NULL ELSE {quote(column)} END"
        )

    def select(
        self, table: str, spec: list[tuple[str, str, str]]
    ) -> tuple[pd.DataFrame, list[str]]:
        """The spec's columns of ``table`` that exist; the frame column names that do not."""
        have = set(self.columns.get(table, []))
        present = [(db, col, kind) for db, col, kind in spec if db in have]
        missing = [col for db, col, _ in spec if db not in have]
        if table not in self.columns or not present:
            return pd.DataFrame({col: pd.Series(dtype=object) for _, col, _ in spec}), missing
        key = spec[0][0]
        shown = [
            self._capped(table, key, db) if kind == "value" and key in have else quote(db)
            for db, _, kind in present
        ]
        sql = f"SELECT {', '.join(shown)} FROM {self.table_sql(table)}"
        data = self.rows(sql)
        # Object columns of the values as read: from_records would turn a BadText into a plain
        # str (losing the mark that it was repaired) and guess dtypes _typed decides anyway.
        names = [col for _, col, _ in present]
        columns = list(zip(*data)) if data else [() for _ in names]
        df = pd.DataFrame(
            {col: pd.Series(list(values), dtype="object") for col, values in zip(names, columns)},
            index=pd.RangeIndex(len(data)),
        )
        for col in missing:
            df[col] = None
        return df[[col for _, col, _ in spec]], missing


class SQLiteSource(Source):
    flavour = "sqlite"

    def __init__(self, conn) -> None:
        super().__init__()
        self.conn = conn
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        self.columns = {
            n: [r[1] for r in conn.execute(f"PRAGMA table_info({quote(n)})")] for n in names
        }

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self.conn.execute(sql, params).fetchall()

    def bytes_sql(self, column: str) -> str:
        # SQLite 3.40 has no octet_length; a cast to BLOB keeps the bytes and only relabels them
        return f"length(CAST({quote(column)} AS BLOB))"

    def chars_sql(self, column: str) -> str:
        return f"length({quote(column)})"

    def key_is(self, key: str) -> str:
        return f"{quote(key)} = ?"


class PostgresSource(Source):
    """A Letta PostgreSQL database read as untrusted (:mod:`memlab.kinds.letta_server._pg`): the
    login role checked, Letta's tables checked to be plain tables and locked, before any row."""

    flavour = "postgres"
    greater = "OPERATOR(pg_catalog.>)"

    def __init__(self, conn, where: str, tables: list[str]) -> None:
        super().__init__()
        self.conn = conn
        pin_session(conn)
        check_role(conn)
        self.columns = guarded_tables(conn, tables, where=where)

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self.conn.execute(sql, params).fetchall()

    def table_sql(self, table: str) -> str:
        return qualified(table)

    def bytes_sql(self, column: str) -> str:
        # the size of a TOASTed value is in its header: nothing is decompressed to measure it
        return f"pg_catalog.octet_length({quote(column)})"

    def chars_sql(self, column: str) -> str:
        return f"pg_catalog.length({quote(column)})"

    def key_is(self, key: str) -> str:
        return f"{quote(key)}::pg_catalog.text OPERATOR(pg_catalog.=) %s::pg_catalog.text"
