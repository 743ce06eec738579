"""The `memlab` command: thin commands over the library.

Each command parses its arguments, calls one library function and prints the result. Any
:class:`memlab.MemlabError` becomes one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, NoReturn, Sequence

from memlab import constants as C
from memlab import kinds
from memlab.errors import InvalidArgument, MemlabError

__all__ = ["main", "build_parser", "COMMANDS"]

#: name -> (handler, help line, example). The README documents every one (a test checks).
COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str, str]] = {}


def command(name: str, help: str, example: str):
    def register(fn: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = (fn, help, example)
        return fn

    return register


def _print_frame(df, as_json: bool) -> None:
    import pandas as pd

    if as_json:
        if df.index.name is not None:  # a named index (compare's store) is part of each row
            df = df.reset_index()
        print(df.to_json(orient="records", date_format="iso", indent=2))
    else:
        from memlab._terminal import terminal_width

        # For reading: timestamps to the minute, columns with nothing in them left out (--json
        # keeps everything). Wrapped to the terminal (100 columns without one).
        df = df.copy()
        for col in df.columns:
            if isinstance(df[col].dtype, pd.DatetimeTZDtype) or df[col].dtype.kind == "M":
                df[col] = df[col].dt.strftime("%Y-%m-%d %H:%M").astype("string")
        if len(df):
            df = df.loc[:, [c for c in df.columns if df[c].notna().any()]]
        df = _visible_cells(df)
        with pd.option_context("display.max_rows", 200, "display.max_columns", 50,
                               "display.max_colwidth", 48):
            print(df.to_string(line_width=terminal_width(), max_colwidth=48))


def _visible_cells(df):
    """Every text cell, column name and index label a :func:`memlab._escape.terminal_line`:
    a name an agent wrote (an agent.yaml ``name``, a file name) cannot recolour the terminal,
    move its cursor or start a line of its own (pandas escapes ``\\n`` but not ESC or U+2028)."""
    from memlab._escape import terminal_line

    def cell(value):
        return terminal_line(value) if isinstance(value, str) else value

    import pandas as pd

    df = df.rename(columns=cell, index=cell)
    for col in df.columns:
        series = df[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(object)
        if series.dtype == object or str(series.dtype) == "string":
            df[col] = series.map(cell, na_action="ignore")
    return df


# --------------------------------------------------------------------------- commands


@command("inspect", "Load a store read-only and list its frames, row counts and problems.",
         "memlab inspect data/samples/elfmem/elfmem-0.20.0-schema9.db")
def cmd_inspect(args: argparse.Namespace) -> int:
    from memlab._escape import terminal_line
    from memlab.errors import UnrecognizedStore
    from memlab.sources import load

    if str(args.path).endswith(".bundle") and Path(args.path).is_file():
        # a git bundle of a memory repo (the bundled samples): unpacked into a private folder
        # removed afterwards, as the notebooks unpack it
        from memlab._tmp import private_tempdir
        from memlab.sources.memfs import unpack_bundle

        with private_tempdir("inspect") as tmp:
            store = load(unpack_bundle(args.path, tmp))
            return _inspect(store, args, f"{args.path} (git bundle, at its main branch)")
    try:
        store = load(args.path)
    except UnrecognizedStore:
        # A folder holding several memory repositories (a migration of several agents): one row
        # per repository. Anything else stays the loader's refusal.
        from memlab.sources.memfs import repos_in

        repos = repos_in(args.path) if Path(args.path).is_dir() else None
        if repos is None or repos.empty:
            raise
        if not args.json:
            print(terminal_line(f"{len(repos)} memory repositories in {args.path}"))
        _print_frame(repos, args.json)
        return 0
    return _inspect(store, args, str(store.meta.get("dsn") or store.path))


def _inspect(store, args: argparse.Namespace, shown: str) -> int:
    from memlab._escape import terminal_line

    if args.json:
        print(json.dumps({"kind": store.kind, "path": shown,
                          "counts": store.counts().to_dict(),
                          "meta": {k: v for k, v in store.meta.items() if _jsonable(v)}},
                         indent=2, default=str))
        return 0
    print(terminal_line(f"{store.kind}  {shown}"))
    for key in ("schema_version", "layout", "schema", "ref", "head_sha"):
        if key in store.meta:
            print(terminal_line(f"  {key}: {store.meta[key]}"))
    print(store.counts().to_string())
    if len(store.problems):
        import pandas as pd

        from memlab._terminal import wrap_text

        shown = store.problems.head(args.max_problems)
        print(f"\n{len(store.problems)} problem(s)"
              + (f", the first {len(shown)}:" if len(shown) < len(store.problems) else ":"))
        for row in shown.itertuples(index=False):
            where = str(row.file) + ("" if pd.isna(row.line) else f":{int(row.line)}")
            # each problem whole, in one wrapped paragraph: kind, where, what
            print(wrap_text(f"  {row.kind}  {where}: {row.message}"))
    return 0


@command("audit", "Audit one store (summary) or several (one comparison table).",
         "memlab audit data/demo/elfmem-demo.db --as-of 2026-08-04")
def cmd_audit(args: argparse.Namespace) -> int:
    from memlab.audits import audit, compare

    if len(args.paths) == 1:
        result = audit(args.paths[0], as_of=args.as_of, seconds_per_call=args.seconds_per_call)
        if args.json:
            print(result.to_json())
        else:
            from memlab._terminal import wrap_text

            print(wrap_text(result.summary()))
        return 0
    table = compare(args.paths, as_of=args.as_of)
    if args.json:
        _print_frame(table, True)
    else:
        from memlab._terminal import comparison_text

        print(comparison_text(table), end="")
    return 0


@command("discover", "List the agents' memory stores found under a home folder.",
         "memlab discover ~")
def cmd_discover(args: argparse.Namespace) -> int:
    from memlab.sources.discover import discover

    inventory = discover(args.root)
    root = Path(args.root or Path.home()).expanduser()
    if inventory.empty and not args.json:
        print(f"no agent memory found under {root}")
        return 0
    if args.json:
        _print_frame(inventory, True)
        return 0
    from memlab._terminal import table_text

    shown = inventory.copy()
    shown["path"] = [_under(p, root) for p in shown["path"]]
    # the columns a person scans, in reading order (--json has every column)
    order = ["name", "kind", "layout", "path", "files", "last_commit", "problem", "shared_repo"]
    shown = shown[[c for c in order if c in shown.columns
                   and (c in ("name", "kind", "path") or shown[c].notna().any())]]
    print(f"{len(shown)} store(s) under {root}  (– : not known for that store)")
    print(table_text(shown), end="")
    return 0


def _under(path, root: Path) -> str:
    """``path`` relative to ``root`` when under it (``./...``), else as it is."""
    import os

    try:
        rel = os.path.relpath(str(path), str(root.resolve()))
    except (TypeError, ValueError):
        return str(path)
    return str(path) if rel.startswith("..") else os.path.join(".", rel)


@command("simulate", "Run S1-S11 on the modelled Iterations and on the shipped elfmem releases.",
         "memlab simulate --real-only --scenarios S1,S3 --scale 2000\n"
         "  memlab simulate --no-real --instance data/demo/elfmem-demo.db --seed 0\n\n"
         "Real rows run elfmem 0.19.2 and 0.20.0 in their own venvs under $MEMLAB_ENVS_DIR\n"
         "(default ~/.cache/memlab/envs); a missing venv is created on first use with pip\n"
         "(under a minute each). Limit the run with --real-only (no modelled iterations),\n"
         "--no-real (modelled only), --releases 0.20.0, --scenarios S1,S3; --scale sets the\n"
         "S7/S11 corpus size (default 2,000; the releases' consolidation grows with its square, "
         "so the doc's 14,000 takes about 49 times as long). Real cells come from the\n"
         "result cache ($MEMLAB_CACHE_DIR/sim-results) when nothing that decides them\n"
         "changed; --fresh re-runs them.")
def cmd_simulate(args: argparse.Namespace) -> int:
    from memlab.sim import simulate
    from memlab.sim.real import RealParams

    iterations = [] if args.real_only else _split(args.iterations)
    releases = () if args.no_real else (args.releases or "all")
    if args.sweep:
        from memlab.sim.sweep import parse_sweep, sweep

        axis, values = parse_sweep(args.sweep)
        frame = sweep(axis, values, iterations=iterations, scenarios=_split(args.scenarios),
                      instance=args.instance, seed=args.seed, releases=releases,
                      params=RealParams(scale=args.scale), fresh=args.fresh)
        if args.json:
            print(frame.to_json(orient="records", indent=2))
            return 0
        measured = frame[frame["basis"] == "measured"]
        print(f"sweep {axis}={','.join(map(str, values))}: verdict moved in "
              f"{int(measured['moved'].sum())}/{len(measured)} measured cells and "
              f"{int(frame['moved'].sum())}/{len(frame)} cells in all; stable metrics moved in "
              f"{int(measured['metrics_moved'].sum())}/{len(measured)} measured cells")
        print(frame.to_string(index=False))
        return 0
    run = simulate(iterations, _split(args.scenarios), instance=args.instance,
                   seed=args.seed, releases=releases, params=RealParams(scale=args.scale),
                   fresh=args.fresh)
    if args.json:
        from memlab.formats import _json

        print(_json.dumps(run.as_dict(), indent=2, default=str))
    else:
        print(run.render())
    return 0


@command("review", "Write a review proposal (markdown checklist + JSON twin) for a store.",
         "memlab review data/samples/elfmem/elfmem-0.20.0-schema9.db --out reviews/")
def cmd_review(args: argparse.Namespace) -> int:
    from memlab.reviews import review

    proposal = review(args.path, near_duplicate=args.near_duplicate,
                      stale_after_days=args.stale_after_days, as_of=args.as_of,
                      contradiction_min=args.contradiction_min, all=args.all)
    path = proposal.write(args.out, overwrite=args.force)
    shown = len(proposal.choices) if proposal.top is None else min(proposal.top, len(proposal.choices))
    print(f"{len(proposal.choices)} choice(s), the top {shown} listed in full; wrote {path}")
    return 0


@command("apply", "Apply a proposal's ticks: one commit to a memory repo, a script for an elfmem DB.",
         "memlab apply reviews/review-$(date +%F).md --dry-run   # the proposal memlab review wrote today")
def cmd_apply(args: argparse.Namespace) -> int:
    from memlab.reviews import apply_proposal

    result = apply_proposal(args.proposal, repo=args.repo, branch=args.branch,
                            dry_run=args.dry_run, script=args.script)
    print(result)
    return 0


@command("migrate", "Migrate a store to an elfmem substrate, Letta memfs or Souveraine dir.",
         "memlab migrate data/demo/elfmem-demo.db /tmp/demo-memfs --to substrate --verify")
def cmd_migrate(args: argparse.Namespace) -> int:
    from memlab.migrations import migrate

    result = migrate(args.source, args.dest, to=args.to, plan=args.plan, force=args.force,
                     branch=args.branch, verify=args.verify, retrieval=not args.no_retrieval,
                     agent=args.agent or None, layout=args.layout)
    from memlab._terminal import wrap_text

    print(wrap_text(str(result)))
    return 0


@command("report", "Render a notebook report (audit, memfs, migration, simulation, review, fleet, all).",
         "memlab report audit data/demo/elfmem-demo.db --as-of 2026-08-04 --out reports/demo")
def cmd_report(args: argparse.Namespace) -> int:
    from memlab.report import report

    if args.kind == "all":
        return _report_all(args)
    params = _parse_params(args.param)
    if args.kind in _NEEDS_STORE and not args.paths and not set(params) & _STORE_PARAMS:
        raise InvalidArgument(f"memlab report {args.kind} needs the store it is about",
                              hint=f"e.g. memlab report {args.kind} {_NEEDS_STORE[args.kind]}")
    if args.as_of:
        params["as_of"] = args.as_of
    result = report(args.kind, args.paths, out=args.out, show_code=args.show_code, **params)
    print(f"report written: {result.html}")
    print(f"metrics:        {result.folder / 'metrics.json'}")
    return 0


#: Report kinds that are about a store: without one, `memlab report` is an error (the
#: notebook's own default is the demo, which a user asking for their audit did not mean).
_NEEDS_STORE = {"audit": "data/demo/elfmem-demo.db", "memfs": "path/to/memory-repo",
                "migration": "data/demo/elfmem-demo.db /tmp/migrated",
                "review": "data/samples/elfmem/elfmem-0.20.0-schema9.db"}
_STORE_PARAMS = {"stores", "store", "repo", "source"}


def _report_all(args: argparse.Namespace) -> int:
    from memlab._escape import terminal_line
    from memlab.errors import ReportError
    from memlab.report.schedule import run_all

    run = run_all(args.config, out=args.out, as_of=args.as_of)
    for alert in run.alerts:
        if alert.fired or alert.reason:
            print(terminal_line(alert.line()))
    if run.failures:
        raise ReportError(f"{len(run.failures)} of {len(run.record['reports'])} report(s) "
                          "failed; see the index", path=run.index)
    print(f"reports written; open {run.index}")
    if run.fired and args.fail_on_alert:
        print(f"memlab: {len(run.fired)} alert(s) fired (exit 3)", file=sys.stderr)
        return 3
    return 0


@command("schedule", "Print (or install) a daily crontab line or systemd user timer for `report all`.",
         "memlab schedule --config data/reports-nightly.yaml --at 06:00 --fail-on-alert")
def cmd_schedule(args: argparse.Namespace) -> int:
    from memlab.report.schedule import install_crontab, install_systemd, make_schedule

    schedule = make_schedule(args.config, workdir=args.dir, at=args.at,
                             fail_on_alert=args.fail_on_alert)
    if args.systemd:
        if args.install:
            files = install_systemd(schedule, force=args.force)
            print("wrote " + ", ".join(map(str, files)))
            print("enable it: systemctl --user daemon-reload && "
                  "systemctl --user enable --now memlab-report.timer")
        else:
            print(f"# ~/.config/systemd/user/memlab-report.service\n{schedule.service()}\n"
                  f"# ~/.config/systemd/user/memlab-report.timer\n{schedule.timer()}", end="")
        return 0
    if args.install:
        install_crontab(schedule)
        print(f"installed in your crontab: {schedule.crontab_line()}")
    else:
        print(schedule.crontab_line())
    return 0


@command("fleet", "Audit every store under folders (or in a manifest) on Dask into a Parquet lake.",
         "python scripts/make_fleet.py data/fleet   # a sample fleet of every kind (not committed)\n"
         "  memlab fleet data/fleet --out reports/fleet --workers 2")
def cmd_fleet(args: argparse.Namespace) -> int:
    from memlab.lake import fleet

    result = fleet(args.roots, out=args.out, manifest=args.manifest, scheduler=args.scheduler,
                   workers=args.workers, as_of=args.as_of, reuse=not args.no_reuse,
                   )
    print(result.summary())
    return 0


@command("export", "Write every frame, the audit headline and problems of stores as Parquet.",
         "memlab export parquet data/demo/elfmem-demo.db --out reports/lake")
def cmd_export(args: argparse.Namespace) -> int:
    from memlab.lake import export_parquet

    result = export_parquet(args.paths, out=args.out, as_of=args.as_of)
    print(result.summary())
    return 0


# --------------------------------------------------------------------------- parser


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _parse_params(pairs: list[str]) -> dict:
    """NAME=VALUE pairs, each VALUE read as YAML so numbers and booleans keep their type (a
    date stays the ISO text it was written as: notebooks take dates as strings)."""
    import datetime as dt

    from memlab.formats._yaml import read_yaml

    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise InvalidArgument(f"parameter {pair!r} is not NAME=VALUE")
        read = read_yaml(value)
        if not read.ok:
            raise InvalidArgument(f"parameter {name!r}: {value!r} is not a YAML value "
                                  f"({read.problem})", hint="quote text: -p 'name=\"text\"'")
        parsed = read.value
        params[name] = value.strip() if isinstance(parsed, (dt.date, dt.datetime)) else parsed
    return params


def _jsonable(value) -> bool:
    try:
        json.dumps(value, default=str)
        return True
    except (TypeError, ValueError):
        return False


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2) like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memlab", description="A research workbench for agent memory.",
        epilog="Every command reads stores read-only. Errors exit with status 2.")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars or notes on stderr (they also stay off when "
                             "stderr is not a terminal)")
    from memlab import __version__

    parser.add_argument("--version", action="version", version=f"memlab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    def add(name: str) -> argparse.ArgumentParser:
        fn, help_, example = COMMANDS[name]
        p = sub.add_parser(name, help=help_, description=help_,
                           epilog=f"Example:\n  {example}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(handler=fn)
        p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="no progress bars or notes on stderr")
        return p

    p = add("inspect")
    p.add_argument("path", help="an elfmem .db, a memory repo, an .af or blocks JSON")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--max-problems", type=int, default=20, help="problems to list (default 20)")

    p = add("audit")
    p.add_argument("paths", nargs="+", metavar="PATH", help="one or more stores")
    p.add_argument("--as-of", help="date staleness is measured against (default: today, UTC)")
    p.add_argument("--seconds-per-call", type=float, default=C.SECONDS_PER_CALL,
                   help=f"LLM latency for the GPU-hours estimate (default {C.SECONDS_PER_CALL:g}, "
                        "the doc's figure)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = add("discover")
    p.add_argument("root", nargs="?", help="folder to treat as home (default: your home)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = add("simulate")
    p.add_argument("--iterations", help="comma-separated iteration numbers or names (default: all)")
    p.add_argument("--scenarios", help="comma-separated scenario ids, e.g. S1,S3 (default: all)")
    p.add_argument("--instance", help="an elfmem store whose audit parameterises the run")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--releases", help="comma-separated elfmem releases to run for real "
                   "(default: 0.19.2,0.20.0)")
    p.add_argument("--real-only", action="store_true",
                   help="only the real rows (no modelled iterations)")
    p.add_argument("--no-real", action="store_true",
                   help="only the modelled iterations (no release venvs)")
    p.add_argument("--scale", type=int, default=2_000,
                   help="S7/S11 corpus size for the real rows (default 2000; the doc's 14000 "
                        "takes about 49 times as long as 2,000)")
    p.add_argument("--sweep", help="AXIS=V1,V2,...: run once per value (seeds, scales or "
                   "instances) and show which verdicts moved, e.g. seeds=0,1,2")
    p.add_argument("--fresh", action="store_true",
                   help="re-run every real cell instead of reading the result cache "
                        "($MEMLAB_CACHE_DIR/sim-results)")
    p.add_argument("--json", action="store_true",
                   help="print the run as one JSON object (evidence, cells, claims, fitness, "
                        "journey, run)")

    p = add("review")
    p.add_argument("path", help="the store to review")
    p.add_argument("--out", default=".", help="folder for review-YYYY-MM-DD.md and .json")
    p.add_argument("--near-duplicate", type=float, default=C.NEAR_DUP_THRESHOLD,
                   help="cosine at or above which two items are near-duplicates "
                        f"(default {C.NEAR_DUP_THRESHOLD:.2f}, elfmem's)")
    p.add_argument("--stale-after-days", type=int, default=C.STALE_AFTER_DAYS,
                   help="days without evidence of use before an item is stale "
                        f"(default {C.STALE_AFTER_DAYS})")
    p.add_argument("--contradiction-min", type=float, default=C.CONTRADICTION_MIN,
                   help="cosine at or above which a negated pair is a contradiction candidate "
                        f"(default {C.CONTRADICTION_MIN:.2f})")
    p.add_argument("--as-of", help="date staleness is measured against (default: today)")
    p.add_argument("--force", action="store_true", help="overwrite today's proposal file")
    p.add_argument("--all", action="store_true",
                   help="list every choice in full, not only the top ones (review-DATE-all.md)")

    p = add("apply")
    p.add_argument("proposal", help="a review-*.md file with items ticked")
    p.add_argument("--repo", help="the memfs repo (default: the one the proposal names)")
    p.add_argument("--branch", help="commit on a new branch of this name")
    p.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
    p.add_argument("--script", help="elfmem databases: where to write the apply script "
                                    "(default: <proposal>.apply.py beside it)")

    p = add("migrate")
    p.add_argument("source", help="an elfmem .db, an .af, a blocks JSON list, a Letta server "
                                  "database (a postgresql:// DSN or its SQLite file), or a Letta "
                                  "Code memfs v1 repo (moved to v2 with its history)")
    p.add_argument("dest", help="a new folder for the migrated repo")
    p.add_argument("--to", choices=list(kinds.targets()),
                   help="target form (default: substrate for an elfmem .db, letta for Letta blocks)")
    p.add_argument("--plan", action="store_true",
                   help="write a reviewable migration script instead of applying")
    p.add_argument("--force", action="store_true", help="overwrite an existing destination")
    p.add_argument("--branch", help="commit onto a new branch of an existing repo at DEST")
    p.add_argument("--verify", action="store_true",
                   help="reload the result and fail on any parity difference")
    p.add_argument("--no-retrieval", action="store_true",
                   help="skip the top-k retrieval parity check (it loads the embedding model)")
    p.add_argument("--agent", action="append", metavar="NAME|ID",
                   help="a Letta server database: migrate only this agent (repeatable)")
    p.add_argument("--layout", choices=list(C.MIGRATION_LAYOUTS),
                   help="--to letta: memfs v2 as Letta Code 0.34.12 creates it (default) or "
                        "v1, the system/ layout")

    from memlab.report import NOTEBOOKS

    p = add("report")
    p.add_argument("kind", choices=[*NOTEBOOKS, "all"])
    p.add_argument("paths", nargs="*", metavar="PATH", help="the store(s) the report is about")
    p.add_argument("--out", help="output folder (default reports/<kind>, or reports/<date> for "
                                 "all, under $MEMLAB_REPORTS_DIR, else the checkout's reports/, "
                                 "else ./reports)")
    p.add_argument("--as-of", help="date staleness is measured against")
    p.add_argument("--config", default="data/reports.yaml",
                   help="for `all`: YAML naming the stores (default data/reports.yaml)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="extra notebook parameter (repeatable)")
    p.add_argument("--fail-on-alert", action="store_true",
                   help="for `all`: exit 3 when an alert of the config fires (for cron and CI)")
    p.add_argument("--show-code", action="store_true",
                   help="keep the notebook's code cells in the HTML (hidden by default; the "
                        "executed .ipynb beside it always has them)")

    p = add("schedule")
    p.add_argument("--config", default="data/reports.yaml",
                   help="the YAML `report all` reads (default data/reports.yaml)")
    p.add_argument("--dir", help="the folder runs write reports/ into (default: here)")
    p.add_argument("--at", default="06:00", help="daily time, HH:MM (default 06:00)")
    p.add_argument("--fail-on-alert", action="store_true",
                   help="the scheduled run exits 3 when an alert fires (cron mails its output)")
    p.add_argument("--systemd", action="store_true",
                   help="a systemd user timer instead of a crontab line")
    p.add_argument("--install", action="store_true",
                   help="install it: into your crontab, or (--systemd) into "
                        "~/.config/systemd/user")
    p.add_argument("--force", action="store_true",
                   help="--systemd --install: replace different units of the same name")

    p = add("fleet")
    p.add_argument("roots", nargs="*", metavar="ROOT", help="folders to find stores under")
    p.add_argument("--manifest", help="CSV or Parquet with a 'path' column (and 'label')")
    p.add_argument("--out", required=True, help="the Parquet lake folder (created if absent)")
    p.add_argument("--workers", type=int,
                   help="local Dask worker processes (default: the machine's cores; 0: no Dask)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="use a running Dask scheduler (tcp://host:8786) instead of a local one")
    p.add_argument("--as-of", help="date staleness is measured against (default: today, UTC)")
    p.add_argument("--no-reuse", action="store_true",
                   help="read every store again, even those unchanged since the last run")

    p = add("export")
    p.add_argument("format", choices=["parquet"], help="output format")
    p.add_argument("paths", nargs="+", metavar="STORE", help="one or more stores")
    p.add_argument("--out", required=True, help="the lake folder (created if absent)")
    p.add_argument("--as-of", help="date staleness is measured against (default: today, UTC)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from memlab.progress import quiet

    try:
        if getattr(args, "as_of", None):  # refused before any work (08/04/2026: ambiguous)
            from memlab.store import parse_as_of

            parse_as_of(args.as_of)
        if args.quiet:  # for this call only: main() run in-process leaves the setting as it was
            with quiet():
                return args.handler(args)
        return args.handler(args)
    except MemlabError as exc:
        print(f"memlab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("memlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `memlab audit ... | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
