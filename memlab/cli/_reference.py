"""The README's CLI reference, rendered from the parser :func:`memlab.cli.build_parser` builds
(the same declarations ``--help`` prints): per command its one-line help, its usage line, a
table of its arguments with their help texts, and its example.

``python -m memlab.cli._reference`` rewrites the checkout's README.md section between
:data:`BEGIN` and :data:`END`; ``--check`` only says whether it is current (exit 1 when not).
tests/test_cli_reference.py fails when the README's section is not what :func:`reference`
renders, so a changed option changes the README in the same commit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["BEGIN", "END", "reference", "readme_section", "with_reference"]

BEGIN = (
    "<!-- cli-reference: generated from the parser by `python -m memlab.cli._reference`; "
    "edit memlab/cli/, not this section -->"
)
END = "<!-- /cli-reference -->"

#: the width usage lines are wrapped at (fixed, so the README does not depend on the terminal)
WIDTH = 100


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps its subcommands on their action
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest if not action.option_strings else action.dest.upper()


def _name(action: argparse.Action) -> str:
    metavar = _metavar(action)
    if not action.option_strings:
        forms: dict[Any, str] = {"+": f"{metavar} …", "*": f"[{metavar} …]", "?": f"[{metavar}]"}
        return forms.get(action.nargs, metavar)
    flags = ", ".join(action.option_strings)
    return flags if action.nargs == 0 else f"{flags} {metavar}"


def _what(action: argparse.Action) -> str:
    what = action.help or ""
    if action.choices is not None and action.metavar is not None:
        what += f" (one of: {', '.join(map(str, action.choices))})"
    if isinstance(action, argparse._AppendAction):
        what += " (repeatable)"
    if action.required and action.option_strings:
        what += " (required)"
    return _cell(what)


def _arguments(parser: argparse.ArgumentParser, *, skip: frozenset[str] = frozenset()) -> list[str]:
    rows = [
        f"| `{_name(a)}` | {_what(a)} |"
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
        and a.dest not in skip
    ]
    return ["| argument | what it is |", "|---|---|", *rows, ""] if rows else []


def reference() -> str:
    """The reference as markdown: ``memlab`` and its own options (``-q`` goes before or after
    the command), then each command in the order ``memlab --help`` lists them: its help, usage,
    arguments and epilog (the example)."""
    from memlab.cli import build_parser

    parser = build_parser()
    out = [
        "#### `memlab`",
        "",
        _cell(parser.description or ""),
        "",
        "```text",
        _usage(parser),
        "```",
        "",
        *_arguments(parser),
        _cell(parser.epilog or ""),
        "",
    ]
    for name, sub in _subparsers(parser).items():
        out += [
            f"#### `memlab {name}`",
            "",
            _cell(sub.description or ""),
            "",
            "```text",
            _usage(sub),
            "```",
            "",
            *_arguments(sub, skip=frozenset({"quiet"})),
        ]
        if sub.epilog:
            out += ["```text", sub.epilog.strip(), "```", ""]
    return "\n".join(out)


def readme_section(readme: str) -> str | None:
    """The text between the README's markers, or None when it has none."""
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        return None
    return readme[start + len(BEGIN) : end]


def with_reference(readme: str) -> str:
    """``readme`` with the text between its markers replaced by :func:`reference`."""
    if readme_section(readme) is None:
        raise ValueError(f"the README has no {BEGIN!r} ... {END!r} section")
    start, end = readme.find(BEGIN) + len(BEGIN), readme.find(END)
    return readme[:start] + "\n" + reference() + "\n" + readme[end:]


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    path = Path(__file__).resolve().parents[2] / "README.md"
    if not path.is_file():  # an installed copy: the README is the checkout's
        print(f"{path}: no README here; run this from a memlab checkout", file=sys.stderr)
        return 2
    current = path.read_text(encoding="utf-8")
    wanted = with_reference(current)
    if "--check" in args:
        print(
            "README.md: CLI reference is current"
            if wanted == current
            else "README.md: CLI reference is out of date (python -m memlab.cli._reference)"
        )
        return 0 if wanted == current else 1
    if wanted != current:
        path.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
