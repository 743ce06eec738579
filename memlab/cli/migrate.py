"""``memlab migrate``: a store moved to an elfmem substrate, Letta memfs or a Souveraine dir."""

from __future__ import annotations

import argparse

from memlab import constants as C
from memlab import kinds
from memlab.cli._command import argument, command, shared
from memlab.cli._output import output_folder

__all__ = ["cmd_migrate"]


@command(
    "migrate",
    "Migrate a store to an elfmem substrate, Letta memfs or Souveraine dir.",
    "memlab migrate data/demo/elfmem-demo.db demo-substrate --to substrate --verify",
)
@argument(
    "source",
    help="an elfmem .db, an .af, a blocks JSON list, a Letta server "
    "database (a postgresql:// DSN or its SQLite file), a Letta "
    "Code memfs v1 repo (moved to v2 with its history), or any memfs repo "
    "with --to claude_memory (a Claude Code memory folder in DEST/memory)",
)
@argument("dest", help="a new folder for the migrated repo")
@argument(
    "--to",
    choices=kinds.targets,
    help="target form (default: substrate for an elfmem .db, letta for Letta blocks)",
)
@argument(
    "--plan", action="store_true", help="write a reviewable migration script instead of applying"
)
@shared("force", "an existing destination")
@shared("branch", ", in an existing repo at DEST")
@argument(
    "--verify", action="store_true", help="reload the result and fail on any parity difference"
)
@argument(
    "--no-retrieval",
    action="store_true",
    help="skip the top-k retrieval parity check (it loads the embedding model)",
)
@argument(
    "--agent",
    action="append",
    metavar="NAME|ID",
    help="a Letta server database: migrate only this agent (repeatable)",
)
@argument(
    "--layout",
    choices=list(C.MIGRATION_LAYOUTS),
    help="--to letta: memfs v2 as Letta Code 0.34.12 creates it (default) or "
    "v1, the system/ layout",
)
def cmd_migrate(args: argparse.Namespace) -> int:
    import os

    from memlab.migrations import migrate

    if not os.path.lexists(os.path.expanduser(args.dest)):  # one that exists: the library decides
        output_folder(args.dest, option="DEST")
    result = migrate(
        args.source,
        args.dest,
        to=args.to,
        plan=args.plan,
        force=args.force,
        branch=args.branch,
        verify=args.verify,
        retrieval=not args.no_retrieval,
        agent=args.agent or None,
        layout=args.layout,
    )
    from memlab._terminal import wrap_text

    print(wrap_text(str(result)))
    return 0
