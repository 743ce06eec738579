"""The `memlab` command: thin commands over the library.

Each command parses its arguments, calls one library function and prints the result. Any
:class:`memlab.MemlabError` becomes one line on stderr and exit status 2.

One module per command group (``stores``: inspect, audit, discover; ``simulate``; ``review``:
review, apply; ``migrate``; ``reports``: report, schedule; ``lake``: fleet, export), each
command's arguments declared beside its handler and the shared options (``--as-of``,
``--json``, ``--out``, ``--quiet``, ...) defined once in :mod:`memlab.cli._command`.
:func:`build_parser` builds ``--help`` and :func:`memlab.cli._reference.reference` the
README's CLI reference from the same declarations.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn, Sequence

# the command groups, imported for their registrations, in the order `memlab --help` lists them
from memlab.cli import browse, lake, migrate, reports, review, simulate, stores  # noqa: F401
from memlab.cli._command import COMMANDS, SHARED
from memlab.cli._output import parse_params
from memlab.errors import MemlabError

__all__ = ["main", "build_parser", "COMMANDS", "parse_params"]

#: the name tests and scripts used before the split (one function, not a copy)
_parse_params = parse_params

_ORDER = (
    "inspect",
    "audit",
    "discover",
    "simulate",
    "review",
    "apply",
    "migrate",
    "report",
    "schedule",
    "fleet",
    "export",
    "browse",
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2) like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _CommandParser(_Parser):
    """A command's parser: options and positionals in any order (argparse's intermixed
    parsing). Plain argparse fills a ``PATH ...`` list at the first option after the
    positional before it, so ``memlab report audit -q A B`` or ``memlab audit A --json B``
    left ``A B`` "unrecognized". ``--`` still ends the options (``memlab inspect -- -x.db``)."""

    _passes: int | None = None  # inside parse_known_intermixed_args: the inner calls so far

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        # argparse's subcommand action calls parse_known_args. Python 3.11's intermixed parse
        # calls it again, twice: first for the options (positionals switched off), then for
        # the positionals; both must be the plain parse.
        if self._passes is None:
            self._passes = 0
            try:
                return self.parse_known_intermixed_args(args, namespace)
            finally:
                self._passes = None
        self._passes += 1
        args = list(sys.argv[1:] if args is None else args)
        cut = args.index("--") if "--" in args else len(args)
        head, tail = args[:cut], args[cut:]  # after `--`, every argument is a positional
        if self._passes == 1:
            namespace, rest = super().parse_known_args(head, namespace)
            return namespace, [*rest, *tail]
        # the positionals: an option left over is unknown, and must not end a PATH ... list
        unknown = [a for a in head if self._parse_optional(a)]
        namespace, extras = super().parse_known_args(
            [a for a in head if not self._parse_optional(a)] + tail, namespace
        )
        return namespace, [*unknown, *extras]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memlab",
        description="A research workbench for agent memory.",
        epilog="Every command reads stores read-only. Errors exit with status 2.",
    )
    quiet = SHARED["quiet"]()
    quiet.add_to(parser)
    from memlab import __version__

    parser.add_argument("--version", action="version", version=f"memlab {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_CommandParser
    )
    for name in _ORDER:
        cmd = COMMANDS[name]
        p = sub.add_parser(
            name,
            help=cmd.help,
            description=cmd.help,
            epilog=f"Example:\n  {cmd.example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(handler=cmd.handler)
        quiet.add_to(p, default=argparse.SUPPRESS)  # `memlab audit -q` as `memlab -q audit`
        for arg in cmd.arguments:
            arg.add_to(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from memlab._tmp import sigterm_as_exit
    from memlab.progress import quiet

    try:
        if getattr(args, "as_of", None):  # refused before any work (08/04/2026: ambiguous)
            from memlab.store import parse_as_of

            parse_as_of(args.as_of)
        # SIGTERM exits through Python, so temporary folders (a git bundle unpacked for the
        # command) are removed as on Ctrl-C; a handler the program set stays.
        with sigterm_as_exit():
            if args.quiet:  # for this call only: main() in-process leaves the setting as it was
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
