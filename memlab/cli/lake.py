"""``memlab fleet`` and ``export``: stores audited into a Parquet lake."""

from __future__ import annotations

import argparse

from memlab.cli._command import argument, command, shared
from memlab.cli._output import output_folder

__all__ = ["cmd_export", "cmd_fleet"]


@command(
    "fleet",
    "Audit every store under folders (or in a manifest) on Dask into a Parquet lake.",
    "memlab fleet data/samples --out reports/fleet --workers 2\n\n"
    "scripts/make_fleet.py DIR makes a larger sample fleet of every kind (not committed).",
)
@argument("roots", nargs="*", metavar="ROOT", help="folders to find stores under")
@argument("--manifest", help="CSV or Parquet with a 'path' column (and 'label')")
@shared("out", "the Parquet lake", required=True)
@argument(
    "--workers",
    type=int,
    help="local Dask worker processes (default: the machine's cores; 0: no Dask)",
)
@argument(
    "--scheduler",
    metavar="ADDRESS",
    help="use a running Dask scheduler (tcp://host:8786) instead of a local one",
)
@shared("as_of")
@argument(
    "--no-reuse",
    action="store_true",
    help="read every store again, even those unchanged since the last run",
)
def cmd_fleet(args: argparse.Namespace) -> int:
    from memlab.lake import fleet

    output_folder(args.out)
    result = fleet(
        args.roots,
        out=args.out,
        manifest=args.manifest,
        scheduler=args.scheduler,
        workers=args.workers,
        as_of=args.as_of,
        reuse=not args.no_reuse,
    )
    print(result.summary())
    return 0


@command(
    "export",
    "Write every frame, the audit headline and problems of stores as Parquet.",
    "memlab export parquet data/demo/elfmem-demo.db --out reports/lake",
)
@argument("format", choices=["parquet"], help="output format")
@argument("paths", nargs="+", metavar="STORE", help="one or more stores")
@shared("out", "the Parquet lake", required=True)
@shared("as_of")
def cmd_export(args: argparse.Namespace) -> int:
    from memlab.lake import export_parquet

    output_folder(args.out)
    result = export_parquet(args.paths, out=args.out, as_of=args.as_of)
    print(result.summary())
    return 0
