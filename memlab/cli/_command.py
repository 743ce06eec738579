"""Declaring a command: its arguments beside its handler, the shared options defined once.

A command is a handler under a stack of decorators, read top to bottom as its ``--help`` lists
them (sqlite-utils' commands are the model)::

    @command("export", "Write every frame ... as Parquet.",
             example="memlab export parquet data/demo/elfmem-demo.db --out reports/lake")
    @argument("format", choices=["parquet"], help="output format")
    @shared("out", "the Parquet lake", required=True)
    @shared("as_of")
    def cmd_export(args): ...

:func:`shared` attaches an option of :data:`SHARED` by name: its flags, type and help are
written once here; a command may say what differs for it (``default=``, ``required=``, and
for ``--out`` what it writes). :func:`memlab.cli.build_parser` and the README's CLI
reference (:mod:`memlab.cli._reference`) are both built from :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["COMMANDS", "SHARED", "Argument", "Command", "argument", "command", "shared"]


@dataclass(frozen=True)
class Argument:
    """One ``add_argument`` call: its flags (or positional name) and keywords."""

    flags: tuple[str, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def positional(self) -> bool:
        return not self.flags[0].startswith("-")

    def options(self) -> dict[str, Any]:
        """The keywords, with ``choices`` given as a function (a registry read when the parser
        is built, not when the module is imported) called."""
        kwargs = dict(self.kwargs)
        if callable(kwargs.get("choices")):
            kwargs["choices"] = list(kwargs["choices"]())
        return kwargs

    def add_to(self, parser: argparse.ArgumentParser, **override: Any) -> None:
        parser.add_argument(*self.flags, **{**self.options(), **override})


@dataclass
class Command:
    """A command: its handler, the one-line help, the example(s) and its arguments in order."""

    name: str
    help: str
    example: str
    handler: Callable[[argparse.Namespace], int]
    arguments: list[Argument]


#: name -> Command, in the order the commands were declared (that of ``memlab --help``).
COMMANDS: dict[str, Command] = {}

_PENDING = "_memlab_arguments"


def _attach(fn: Callable, arg: Argument) -> Callable:
    # decorators run bottom-up: prepending keeps the arguments in the order they are written
    setattr(fn, _PENDING, [arg, *getattr(fn, _PENDING, [])])
    return fn


def argument(*flags: str, **kwargs: Any) -> Callable[[Callable], Callable]:
    """An argument of this command only (``argparse.add_argument``'s signature)."""
    return lambda fn: _attach(fn, Argument(tuple(flags), kwargs))


def command(name: str, help: str, example: str) -> Callable[[Callable], Callable]:
    """Register the handler below as ``memlab NAME``, with the arguments declared under it."""

    def register(fn: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = Command(name, help, example, fn, list(getattr(fn, _PENDING, [])))
        return fn

    return register


def _as_of(default: str = "today, UTC") -> Argument:
    return Argument(
        ("--as-of",),
        {"help": f"date staleness is measured against, YYYY-MM-DD (default: {default})"},
    )


def _out(
    what: str, default: str | None = None, *, value: str | None = None, **kwargs: Any
) -> Argument:
    """``--out``: ``default`` is what the help says it is; ``value`` is the folder argparse
    gives when it is left out (None: the library picks, as the help describes)."""
    shown = f"; default {default}" if default else ""
    return Argument(
        ("--out",),
        {
            "help": f"the folder for {what} (created if absent{shown})",
            **({"default": value} if value is not None else {}),
            **kwargs,
        },
    )


def _json() -> Argument:
    return Argument(("--json",), {"action": "store_true", "help": "print JSON"})


def _quiet() -> Argument:
    return Argument(
        ("-q", "--quiet"),
        {
            "action": "store_true",
            "help": "no progress bars or notes on stderr (they also stay off when stderr is not a "
            "terminal)",
        },
    )


def _config() -> Argument:
    return Argument(
        ("--config",),
        {
            "default": "data/reports.yaml",
            "help": "the YAML naming the stores `memlab report all` renders "
            "(default data/reports.yaml)",
        },
    )


def _fail_on_alert() -> Argument:
    return Argument(
        ("--fail-on-alert",),
        {
            "action": "store_true",
            "help": "`memlab report all` exits 3 when an alert of the config fires "
            "(for cron and CI)",
        },
    )


def _force(what: str) -> Argument:
    return Argument(("--force",), {"action": "store_true", "help": f"overwrite {what}"})


def _branch(where: str = "") -> Argument:
    return Argument(("--branch",), {"help": f"commit on a new branch of this name{where}"})


#: The options several commands take, by name: each defined once, here.
SHARED: dict[str, Callable[..., Argument]] = {
    "quiet": _quiet,
    "as_of": _as_of,
    "json": _json,
    "out": _out,
    "config": _config,
    "fail_on_alert": _fail_on_alert,
    "force": _force,
    "branch": _branch,
}


def shared(name: str, *args: Any, **what: Any) -> Callable[[Callable], Callable]:
    """Attach the shared option ``name`` (a key of :data:`SHARED`); ``args`` and ``what`` are
    what differs for this command: what ``--out`` holds and its default, ``--as-of``'s default, what
    ``--force`` overwrites, where ``--branch`` commits."""
    return lambda fn: _attach(fn, SHARED[name](*args, **what))
