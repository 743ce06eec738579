"""memlab's own verifiers (:class:`memlab.kinds.Verifier`): what ``memlab migrate --verify``
runs on a migrated copy of a built-in kind's stores, named by the kinds' registrations.

:class:`ElfmemParity` (an elfmem database: blocks and ledger, side records, retrieval),
:class:`BlocksParity` (Letta blocks, one file per block), :class:`ServerParity` (a Letta
server's blocks with their history, per agent) and :class:`UpgradeParity` (a memfs v1
repository moved to v2, history kept) each read the copy as memfs repositories
(:class:`memlab.migrations._verify.CopyParity`); a plugin kind's verifier reads its own.
"""

from __future__ import annotations

from memlab.migrations._parity import ParityRows
from memlab.migrations._verify import Copy, CopyParity, check_block_retrieval, check_elfmem
from memlab.migrations._verify_letta import check_letta

__all__ = ["ElfmemParity", "BlocksParity", "ServerParity", "UpgradeParity"]


class ElfmemParity(CopyParity):
    """An elfmem database's copy: every block (content, tags, pinned, relations, cue, created,
    archive) where the plan put it, every ledger side record, and top-k retrieval."""

    def check(self, rows: ParityRows, copy: Copy) -> None:
        check_elfmem(rows, copy)


class BlocksParity(CopyParity):
    """Letta blocks (an agent file, a blocks list) in a memfs copy, one file per block."""

    def check(self, rows: ParityRows, copy: Copy) -> None:
        bodies = check_letta(
            rows, copy.store, copy.repo_folders, copy.copies, copy.target, copy.layout
        )
        check_block_retrieval(rows, copy, copy.store, bodies)


class ServerParity(CopyParity):
    """A Letta server's blocks with their history, per agent and repository."""

    def check(self, rows: ParityRows, copy: Copy) -> None:
        from memlab.kinds.letta_server._migrate import check_server, server_view

        bodies = check_server(
            rows,
            copy.store,
            copy.dest,
            copy.ref,
            copy.repo_folders,
            copy.copies,
            copy.target,
            copy.plan,
            copy.layout,
        )
        store = server_view(copy.store, getattr(copy.plan, "agent_ids", None), [])
        check_block_retrieval(rows, copy, store, bodies)


class UpgradeParity(CopyParity):
    """A memfs v1 repository moved to v2: every file where v2 puts it, history kept."""

    def check(self, rows: ParityRows, copy: Copy) -> None:
        from memlab.kinds.letta_memfs._upgrade import check_upgrade, upgrade_files, upgrade_view

        bodies = check_upgrade(
            rows, copy.store, copy.dest, copy.ref, copy.repo_folders, copy.copies
        )
        store = upgrade_view(copy.store, upgrade_files(copy.store, []))
        check_block_retrieval(rows, copy, store, bodies)
