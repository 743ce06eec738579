"""memlab's exceptions: one tree, each naming the file and what to do.

::

    MemlabError                      anything memlab raises on purpose
    ├── SourceError                  a store on disk cannot be read as asked
    │   ├── StoreNotFound            the path does not exist
    │   ├── UnrecognizedStore        no loader recognises what is there
    │   ├── CorruptStore             the file exists but is damaged or is not that format
    │   ├── UnsupportedSchema        a schema version or shape memlab does not know
    │   ├── RepoError                a git repository memlab cannot read as asked
    │   └── UnsafeDatabase           a database whose reading could run its owner's code
    ├── UnsafePath                   a label or path that would escape its folder
    ├── OutputExists                 a destination exists and --force was not given
    ├── MigrationError               a migration could not be planned or applied
    │   └── ParityError              the migrated copy differs from its source
    ├── ProposalError                a review proposal cannot be applied
    │   ├── StaleProposal            the store changed since the proposal was written
    │   └── ProposalRejected         a ticked item is not allowed (pinned, read-only, dirty tree)
    ├── ReportError                  a notebook failed while rendering a report
    ├── InvalidArgument              an argument or setting has a value memlab cannot use
    │   └── UnknownOption            an option a store kind's load or audit does not take
    ├── SimulationError              a simulation asked for something it cannot run
    │   └── ReleaseEnvError          a shipped elfmem release's venv cannot be built or started
    └── MissingExtra                 an optional dependency is not installed

Every error carries ``path`` (the file or folder concerned, if any) and ``hint`` (what to do).
The CLI prints ``str(error)`` on one line and exits with status 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "MemlabError",
    "SourceError",
    "StoreNotFound",
    "UnrecognizedStore",
    "CorruptStore",
    "UnsupportedSchema",
    "RepoError",
    "UnsafeDatabase",
    "UnsafePath",
    "OutputExists",
    "MigrationError",
    "ParityError",
    "ProposalError",
    "StaleProposal",
    "ProposalRejected",
    "ReportError",
    "InvalidArgument",
    "UnknownOption",
    "SimulationError",
    "ReleaseEnvError",
    "FleetError",
    "MissingExtra",
    "require",
]


class MemlabError(Exception):
    """Base class. ``path`` names the file concerned; ``hint`` says what to do about it."""

    hint: str | None = None

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        hint: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = Path(path) if path is not None else None
        if hint is not None:
            self.hint = hint
        # Structured context (papermill style): cell index, table name, item id...
        self.context = context

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path is not None else self.message
        if self.hint:
            text += f" ({self.hint})"
        # Paths and messages carry store text (file names, labels): one terminal line, always.
        from memlab._escape import terminal_line

        return terminal_line(text)


class SourceError(MemlabError):
    """A store on disk cannot be read as asked."""


class StoreNotFound(SourceError):
    hint = "check the path; memlab reads elfmem .db files, memory git repos, .af and blocks JSON"


class UnrecognizedStore(SourceError):
    hint = (
        "expected an elfmem SQLite database, a Letta/Souveraine memory repo, "
        "an .elfmem folder, a Letta Agent File (.af) or a blocks JSON list"
    )


class CorruptStore(SourceError):
    """The file exists but is damaged, truncated, or not the format it claims to be."""


class UnsupportedSchema(SourceError):
    """A schema version or table layout memlab does not know how to read."""


class RepoError(SourceError):
    """A git repository memlab cannot read as asked (no commits, unknown ref, ...)."""


class UnsafeDatabase(SourceError):
    """A PostgreSQL database memlab will not read: a view, foreign table, rule, row policy or
    owner-defined type where Letta has a plain table, or a login role that could run programs or
    read files on the database host (see :mod:`memlab.kinds.letta_server._pg`)."""


class UnsafePath(MemlabError):
    """A label or path that would escape the folder it is meant to stay in."""

    hint = "labels must be relative paths without '..' segments"


class OutputExists(MemlabError):
    hint = "choose a new destination, or pass --force to overwrite"


class MigrationError(MemlabError):
    """A migration could not be planned or applied."""


class ParityError(MigrationError):
    """The migrated copy, loaded back, differs from its source."""


class ProposalError(MemlabError):
    """A review proposal cannot be applied."""


class StaleProposal(ProposalError):
    hint = "the store changed since the proposal was written; run `memlab review` again"


class ProposalRejected(ProposalError):
    """A ticked item is not allowed, or the repository is not in a state to apply it."""


class ReportError(MemlabError):
    """A notebook failed while rendering a report; ``context`` holds the cell and traceback."""


class InvalidArgument(MemlabError, ValueError):
    """An argument or setting has a value memlab cannot use: a date that is not a date, a
    threshold out of range, a parameter that is not NAME=VALUE, an environment variable memlab
    reads. Also a ValueError, which is what it is to Python code."""


class UnknownOption(InvalidArgument):
    """An option given to a store kind's load or audit that the kind does not take (a misspelt
    one, or one that belongs to another kind); the message names the kind and the option."""


class SimulationError(MemlabError):
    """A simulation was asked for something it cannot run (unknown iteration, scenario or
    release, a bad parameter)."""


class ReleaseEnvError(SimulationError):
    """A shipped elfmem release's environment cannot be built, found or started."""


class FleetError(MemlabError):
    """A fleet run cannot start: no stores, an unreadable manifest, an unreachable scheduler."""


class MissingExtra(MemlabError):
    """An optional dependency is missing; the hint names the ``pip install`` that fixes it."""

    def __init__(self, package: str, extra: str, *, feature: str) -> None:
        super().__init__(
            f"{feature} needs the '{package}' package",
            hint=f"pip install 'memlab[{extra}]'",
        )
        self.package = package
        self.extra = extra


def require(module: str, extra: str, *, feature: str, package: str | None = None):
    """Import an optional dependency, or raise MissingExtra naming the install that fixes it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtra(package or module, extra, feature=feature) from exc
