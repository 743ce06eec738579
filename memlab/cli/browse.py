"""``memlab browse``: the rows of stores, report runs or fleet lakes in Datasette."""

from __future__ import annotations

import argparse

from memlab.cli._command import argument, command
from memlab.cli._output import output_folder

__all__ = ["cmd_browse"]


@command(
    "browse",
    "Browse the rows of stores, report runs or fleet lakes in Datasette "
    "(read-only, on 127.0.0.1): facets, search, links, CSV/JSON export.",
    "memlab browse data/demo/elfmem-demo.db --port 8001   # then open "
    "http://127.0.0.1:8001/memlab\n"
    "  memlab browse data/demo/elfmem-demo.db --build-only reports/browse",
)
@argument(
    "paths",
    nargs="+",
    metavar="PATH",
    help="stores memlab loads, report run folders or fleet lakes",
)
@argument(
    "--port",
    type=int,
    default=8001,
    help="the port Datasette listens on at 127.0.0.1 (default 8001)",
)
@argument(
    "--build-only",
    metavar="OUT",
    help="write the SQLite database and Datasette's metadata into the folder OUT and "
    "exit, serving nothing",
)
def cmd_browse(args: argparse.Namespace) -> int:
    from memlab.browse import build, check_port, serve

    if args.build_only:
        output_folder(args.build_only, option="--build-only")
        db = build(args.paths, args.build_only)
        print(
            f"wrote {db}; serve it with: datasette serve --immutable {db} "
            f"--metadata {db.with_name(db.stem + '.metadata.json')}"
        )
        return 0
    check_port(args.port)
    from memlab._tmp import private_tempdir

    with private_tempdir("browse") as folder:  # removed when Datasette stops
        db = build(args.paths, folder)
        serve(db, args.port)
    return 0
