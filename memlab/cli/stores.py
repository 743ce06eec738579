"""``memlab inspect``, ``audit`` and ``discover``: reading stores."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memlab import constants as C
from memlab.cli._command import argument, command, shared
from memlab.cli._output import jsonable, print_frame

__all__ = ["cmd_audit", "cmd_discover", "cmd_inspect"]


@command(
    "inspect",
    "Load a store read-only and list its frames, row counts and problems.",
    "memlab inspect data/samples/elfmem/elfmem-0.20.0-schema9.db",
)
@argument("path", help="an elfmem .db, a memory repo, an .af or blocks JSON")
@shared("json")
@argument("--max-problems", type=int, default=20, help="problems to list (default 20)")
def cmd_inspect(args: argparse.Namespace) -> int:
    from memlab._escape import terminal_line
    from memlab.errors import UnrecognizedStore
    from memlab.sources import load

    try:
        store = load(args.path)
    except UnrecognizedStore:
        # A folder holding several memory repositories (a migration of several agents): one row
        # per repository. Anything else stays the loader's refusal.
        from memlab.kinds._memfs._load import repos_in

        repos = repos_in(args.path) if Path(args.path).is_dir() else None
        if repos is None or repos.empty:
            raise
        if not args.json:
            print(terminal_line(f"{len(repos)} memory repositories in {args.path}"))
        print_frame(repos, args.json)
        return 0
    shown = (
        f"{args.path} (git bundle, at its main branch)"
        if store.meta.get("bundle")
        else str(store.meta.get("dsn") or store.path)
    )
    return _inspect(store, args, shown)


def _inspect(store, args: argparse.Namespace, shown: str) -> int:
    from memlab._escape import terminal_line

    if args.json:
        from memlab.audits import frame_records

        # every row the text lists: the problems whole (the text shows --max-problems of them)
        print(
            json.dumps(
                {
                    "kind": store.kind,
                    "path": shown,
                    "counts": store.counts().to_dict(),
                    "meta": {k: v for k, v in store.meta.items() if jsonable(v)},
                    "problems": frame_records(store.problems),
                },
                indent=2,
                default=str,
            )
        )
        return 0
    print(terminal_line(f"{store.kind}  {shown}"))
    for key in ("schema_version", "layout", "schema", "ref", "head_sha"):
        if key in store.meta:
            print(terminal_line(f"  {key}: {store.meta[key]}"))
    print(store.counts().to_string())
    if len(store.problems):
        import pandas as pd

        from memlab._terminal import wrap_text

        head = store.problems.head(args.max_problems)
        print(
            f"\n{len(store.problems)} problem(s)"
            + (f", the first {len(head)}:" if len(head) < len(store.problems) else ":")
        )
        for row in head.itertuples(index=False):
            where = str(row.file) + ("" if pd.isna(row.line) else f":{int(row.line)}")
            # each problem whole, in one wrapped paragraph: kind, where, what
            print(wrap_text(f"  {row.kind}  {where}: {row.message}"))
    return 0


@command(
    "audit",
    "Audit one store (summary) or several (one comparison table).",
    "memlab audit data/demo/elfmem-demo.db --as-of 2026-08-04",
)
@argument("paths", nargs="+", metavar="PATH", help="one or more stores")
@shared("as_of")
@argument(
    "--seconds-per-call",
    type=float,
    default=None,
    help=f"LLM latency for the GPU-hours estimate (default {C.SECONDS_PER_CALL:g}, "
    "the doc's figure)",
)
@shared("json")
def cmd_audit(args: argparse.Namespace) -> int:
    from memlab.audits import audit, compare

    if len(args.paths) == 1:
        result = audit(args.paths[0], as_of=args.as_of, seconds_per_call=args.seconds_per_call)
        if args.json:
            print(result.to_json(tables=True))
        else:
            from memlab._terminal import wrap_text

            print(wrap_text(result.summary()))
        return 0
    table = compare(args.paths, as_of=args.as_of)
    if args.json:
        print_frame(table, True)
    else:
        from memlab._terminal import comparison_text

        print(comparison_text(table), end="")
    return 0


@command(
    "discover",
    "List the agents' memory stores found under a home folder.",
    "memlab discover data/samples   # or ~: the agents of your own home",
)
@argument("root", nargs="?", help="folder to treat as home (default: your home)")
@shared("json")
def cmd_discover(args: argparse.Namespace) -> int:
    from memlab.sources.discover import discover

    inventory = discover(args.root)
    root = Path(args.root or Path.home()).expanduser()
    if inventory.empty and not args.json:
        print(f"no agent memory found under {root}")
        return 0
    if args.json:
        print_frame(inventory, True)
        return 0
    from memlab._escape import terminal_line
    from memlab._terminal import terminal_width

    shown = inventory.copy()
    shown["path"] = [_under(p, root) for p in shown["path"]]
    if "agent_id" in shown.columns:  # an agent with no name is named by its id (its folder)
        shown["name"] = shown["name"].where(shown["name"].notna(), shown["agent_id"])
    # the columns a person scans, in reading order (--json has every column)
    order = ["name", "kind", "layout", "path", "files", "last_commit", "problem", "shared_repo"]
    shown = shown[
        [
            c
            for c in order
            if c in shown.columns and (c in ("name", "kind", "path") or shown[c].notna().any())
        ]
    ]
    width = terminal_width()
    text, dropped = _fitted(shown, width)
    print(
        terminal_line(f"{len(shown)} store(s) under {root}  (– : not known for that store)", width)
    )
    print(text, end="")
    if dropped:  # memlab's own column names: wrapped, never cut
        import textwrap

        print(
            textwrap.fill(
                f"not shown at this width: {', '.join(dropped)} (--json has every column)", width
            )
        )
    return 0


#: Columns discover leaves out, in this order, when the table does not fit the terminal.
_DROP_FIRST = ("shared_repo", "layout", "files", "last_commit", "problem")


def _fitted(shown, width: int) -> tuple[str, list[str]]:
    """``shown`` as one table no wider than ``width``: long cells cut (a path keeps its end),
    then, while it still does not fit, the columns of :data:`_DROP_FIRST` left out. Returns
    the table and the columns left out."""
    from memlab._terminal import table_text

    dropped: list[str] = []
    frame = shown
    while True:
        last = [c for c in _DROP_FIRST if c in frame.columns] == []
        for cut in range(40, (8 if last else 20) - 1, -2):
            text = table_text(frame, width=width, max_column=cut)
            lines = text.splitlines()
            if len(lines) > 1 and set(lines[1]) <= {"─", " "} and max(map(len, lines)) <= width:
                return text, dropped
        if last:
            return text, dropped  # a block per store: each line within the width
        column = next(c for c in _DROP_FIRST if c in frame.columns)
        frame = frame.drop(columns=[column])
        dropped.append(column)


def _under(path, root: Path) -> str:
    """``path`` relative to ``root`` when under it (``./...``), else as it is."""
    import os

    try:
        rel = os.path.relpath(str(path), str(root.resolve()))
    except (TypeError, ValueError):
        return str(path)
    return str(path) if rel.startswith("..") else os.path.join(".", rel)
