"""``memlab report`` and ``schedule``: notebook reports, once or every day."""

from __future__ import annotations

import argparse
import sys

from memlab.cli._command import argument, command, shared
from memlab.cli._output import output_folder, parse_params
from memlab.errors import InvalidArgument

__all__ = ["cmd_report", "cmd_schedule"]


def _report_kinds() -> list[str]:
    from memlab.report import NOTEBOOKS

    return [*NOTEBOOKS, "all"]


@command(
    "report",
    "Render a notebook report (audit, memfs, migration, simulation, review, fleet, all).",
    "memlab report audit data/demo/elfmem-demo.db --as-of 2026-08-04 --out reports/demo",
)
@argument("kind", choices=_report_kinds)
@argument("paths", nargs="*", metavar="PATH", help="the store(s) the report is about")
@shared(
    "out",
    "the report",
    default="reports/<date>/<store>-<kind>, or reports/<date> for all, under "
    "$MEMLAB_REPORTS_DIR, else the checkout's reports/ when run inside it, else "
    "./reports",
)
@shared("as_of", default="the notebook's own; for all, the day of the run, UTC")
@shared("config")
@argument(
    "-p",
    "--param",
    action="append",
    default=[],
    metavar="NAME=VALUE",
    help="extra notebook parameter (repeatable)",
)
@shared("fail_on_alert")
@argument(
    "--show-code",
    action="store_true",
    help="keep the notebook's code cells in the HTML (hidden by default; the "
    "executed .ipynb beside it always has them)",
)
def cmd_report(args: argparse.Namespace) -> int:
    from memlab.report import report

    if args.out is not None:
        output_folder(args.out)  # before the notebook runs
    if args.kind == "all":
        return _report_all(args)
    params = parse_params(args.param)
    if args.kind in _NEEDS_STORE and not args.paths and not set(params) & _STORE_PARAMS:
        raise InvalidArgument(
            f"memlab report {args.kind} needs the store it is about",
            hint=f"e.g. memlab report {args.kind} {_NEEDS_STORE[args.kind]}",
        )
    if args.as_of:
        params["as_of"] = args.as_of
    result = report(args.kind, args.paths, out=args.out, show_code=args.show_code, **params)
    print(f"report written: {result.html}")
    print(f"metrics:        {result.folder / 'metrics.json'}")
    from memlab._escape import terminal_line
    from memlab.report._runs import as_of_warnings

    for warning in as_of_warnings(result.metrics, args.as_of):  # the HTML's note, here too
        print(terminal_line(f"memlab: warning: {warning}"), file=sys.stderr)
    return 0


#: Report kinds that are about a store: without one, `memlab report` is an error (the
#: notebook's own default is the demo, which a user asking for their audit did not mean).
_NEEDS_STORE = {
    "audit": "data/demo/elfmem-demo.db",
    "memfs": "path/to/memory-repo",
    "migration": "data/demo/elfmem-demo.db /tmp/migrated",
    "review": "data/samples/elfmem/elfmem-0.20.0-schema9.db",
}
_STORE_PARAMS = {"stores", "store", "repo", "source"}


def _report_all(args: argparse.Namespace) -> int:
    from memlab._escape import terminal_line
    from memlab.report.schedule import EXIT_ALERT, EXIT_FAILED, run_all

    run = run_all(args.config, out=args.out, as_of=args.as_of)
    for alert in run.alerts:
        if alert.fired or alert.reason:
            print(terminal_line(alert.line()))
    # A failed store, report or notification: one line each, the others written, exit 4.
    for entry in run.failures:
        print(
            terminal_line(
                f"memlab: FAILED {entry['store']} · {entry.get('step') or entry['report']}"
                f": {entry['error']}"
            ),
            file=sys.stderr,
        )
    for sent in run.notify_failures:
        print(terminal_line(f"memlab: notify {sent.target} failed: {sent.error}"), file=sys.stderr)
    print(f"reports written; open {run.index}")
    if run.failures or run.notify_failures:
        print(
            f"memlab: {len(run.failures)} of {len(run.record['reports'])} report(s) failed"
            + (
                f", {len(run.notify_failures)} notification(s) failed"
                if run.notify_failures
                else ""
            )
            + f"; see the index (exit {EXIT_FAILED})",
            file=sys.stderr,
        )
        return EXIT_FAILED
    if run.fired and args.fail_on_alert:
        print(f"memlab: {len(run.fired)} alert(s) fired (exit {EXIT_ALERT})", file=sys.stderr)
        return EXIT_ALERT
    return 0


@command(
    "schedule",
    "Print (or install) a daily crontab line or systemd user timer for `report all`.",
    "memlab schedule --config data/reports-nightly.yaml --at 06:00 --fail-on-alert",
)
@shared("config")
@argument("--dir", help="the folder runs write reports/ into (default: here)")
@argument("--at", default="06:00", help="daily time, HH:MM (default 06:00)")
@shared("fail_on_alert")
@argument("--systemd", action="store_true", help="a systemd user timer instead of a crontab line")
@argument(
    "--install",
    action="store_true",
    help="install it: into your crontab, or (--systemd) into ~/.config/systemd/user",
)
@shared("force", "different units of the same name (--systemd --install)")
def cmd_schedule(args: argparse.Namespace) -> int:
    from memlab.report.schedule import install_crontab, install_systemd, make_schedule

    schedule = make_schedule(
        args.config, workdir=args.dir, at=args.at, fail_on_alert=args.fail_on_alert
    )
    if args.systemd:
        if args.install:
            files = install_systemd(schedule, force=args.force)
            print("wrote " + ", ".join(map(str, files)))
            print(
                "enable it: systemctl --user daemon-reload && "
                "systemctl --user enable --now memlab-report.timer"
            )
        else:
            print(
                f"# ~/.config/systemd/user/memlab-report.service\n{schedule.service()}\n"
                f"# ~/.config/systemd/user/memlab-report.timer\n{schedule.timer()}",
                end="",
            )
        return 0
    if args.install:
        install_crontab(schedule)
        print(f"installed in your crontab: {schedule.crontab_line()}")
    else:
        print(schedule.crontab_line())
    return 0
