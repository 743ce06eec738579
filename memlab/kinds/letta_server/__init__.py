"""The ``letta_server`` store kind: a Letta server's own database (PostgreSQL, by its DSN, or
the SQLite file of letta <= 0.11.7), written as a class implementing
:class:`~memlab.kinds.KindBase`.

Its loader (:mod:`memlab.kinds.letta_server._load`, reading through ``_db`` and, for
PostgreSQL, the untrusted-database guards of ``_pg``), its audit (``_audit``) and its migration
to one Letta Code memfs repository per agent with the blocks' history (``_migrate``, verified
per block and repository) are modules of this package, named by ``"module:attribute"`` strings
so ``import memlab`` imports none of them.
"""

from __future__ import annotations

from types import MappingProxyType

from memlab.kinds._base import KindBase, Probe

__all__ = ["LettaServer"]

_HERE = "memlab.kinds.letta_server"
_SQLITE_MAGIC = b"SQLite format 3\x00"


class LettaServer(KindBase):
    """A Letta server database: a ``postgresql://`` DSN, or an SQLite file with its tables."""

    name = "letta_server"
    display = "Letta server database"
    load_ref = f"{_HERE}._load:load_letta_server"
    audit_ref = f"{_HERE}._audit:audit_letta_server"
    find_ref = f"{_HERE}._load:find_letta_server"
    migrations = MappingProxyType({"letta": f"{_HERE}._migrate:plan_letta_server"})
    default_target = "letta"
    verify = "memlab.migrations:ServerParity"

    def detect(self, probe: Probe) -> str | None:
        """An SQLite file holding a Letta server's tables (read-only peek)."""
        if probe.is_dir or not probe.head.startswith(_SQLITE_MAGIC):
            return None
        from memlab.kinds.letta_server._load import is_letta_sqlite

        return "SQLite with a Letta server's tables" if is_letta_sqlite(probe.path) else None

    def locate(self, source: str) -> str | None:
        """A PostgreSQL connection URI."""
        from memlab.kinds.letta_server._load import is_dsn

        return "a PostgreSQL connection URI" if is_dsn(source) else None
