"""The behaviour a kind brings to review and migrate, as protocols (httpx's transports and
papermill's engines are the models): a kind's :class:`~memlab.kinds.Review` holds a
:class:`Removal`, an :class:`Edit`, an :class:`Apply`, a :class:`Drift` and a :class:`Rules`,
and its ``verify`` is a :class:`Verifier`. Engines call their methods and never ask which one
they hold.

memlab's own implementations live beside the engines that run them (:mod:`memlab.reviews`:
``Forget``, ``ArchiveBlock``, ``DeleteFile``, ``ByHand``, ``InLetta``, ``ElfmemEdit``,
``SetBody``, ``GitCommit``, ``ElfmemScript``, ``Checklist``, ``SeedDrift``, ``FileDrift``,
``AgentLimits``; a kind's own rules in its package, also exported by :mod:`memlab.reviews`:
``LettaHook``, ``letta_memfs/_rules.py``, ``SouveraineRules``, ``souveraine/_rules.py``;
:mod:`memlab.migrations`:
``ElfmemParity``, ``BlocksParity``, ``ServerParity``, ``UpgradeParity``). A plugin kind passes
its own objects; memlab's registrations name theirs as ``"module:attribute"`` strings, resolved
on first use (:func:`behaviour`), so ``import memlab.kinds`` imports no engine and no engine
module imports the registry back at import time.
"""

from __future__ import annotations

import pkgutil
from pathlib import Path
from typing import Any, Mapping, Protocol, runtime_checkable

__all__ = ["Removal", "Edit", "Apply", "Drift", "Rules", "Verifier", "behaviour"]


@runtime_checkable
class Removal(Protocol):
    """How a reviewed unit leaves memory."""

    #: The ``op`` of the steps it writes: :meth:`apply` is given those back.
    op: str

    def step(self, unit: Any, *, reason: str) -> dict[str, Any]:
        """The proposal's step that removes ``unit`` (a row of the units frame,
        :mod:`memlab.reviews._units`): a JSON object with ``op`` (:attr:`op`), ``text`` (the
        sentence a person reads) and what the change needs; ``file`` and ``to`` name the files
        it changes (the proposal's fingerprint records them). ``reason`` is why
        (``superseded``, ``forgotten``, ``decayed``)."""
        ...

    def apply(self, edits: Any, step: Mapping[str, Any], item: Any) -> None:
        """Make ``step`` in ``edits``, what the kind's :class:`Apply` gives its steps to
        (memlab's ``GitCommit`` gives :class:`memlab.reviews.Edits`, the file texts it commits;
        a plugin's apply gives its own), or raise :class:`~memlab.errors.ProposalRejected`."""
        ...


@runtime_checkable
class Edit(Protocol):
    """How a reviewed unit's text is replaced (restoring a seed, merging duplicates)."""

    #: The ``op`` of the steps it writes (see :attr:`Removal.op`).
    op: str

    def step(self, unit: Any, new_text: str) -> dict[str, Any]:
        """The step that gives ``unit`` the text ``new_text`` (see :meth:`Removal.step`)."""
        ...

    def apply(self, edits: Any, step: Mapping[str, Any], item: Any) -> None:
        """Make ``step`` in ``edits`` (see :meth:`Removal.apply`)."""
        ...


@runtime_checkable
class Apply(Protocol):
    """How ``memlab apply`` makes a proposal's ticked changes, and what review records for it."""

    def repo(self, store: Any) -> Any | None:
        """The git repository review reads ``store``'s files from and apply commits to, or
        None."""
        ...

    def appliable(self, store: Any, repo: Any | None) -> bool:
        """Whether memlab can make a change to ``store`` (else every item is a checklist item)."""
        ...

    def fingerprint(self, store: Any, repo: Any | None, touched: set[str]) -> dict[str, Any]:
        """What apply checks the store against before changing it (``touched``: the files the
        proposal's steps change)."""
        ...

    def note(self, data: Mapping[str, Any], name: str) -> list[str]:
        """The proposal's **Apply:** paragraph for the proposal ``data`` (its JSON) in the file
        ``name``: what ``memlab apply`` does for this store."""
        ...

    def apply(
        self,
        proposal: Any,
        ticked: list[Any],
        md_path: Path,
        *,
        review: Any,
        repo: str | Path | None,
        branch: str | None,
        dry_run: bool,
        script: str | Path | None,
    ) -> Any:
        """Make the ``ticked`` items of ``proposal`` (read from ``md_path``; ``review`` is the
        kind's resolved :class:`~memlab.kinds.Review`); returns a
        :class:`memlab.reviews.ApplyResult`."""
        ...


@runtime_checkable
class Drift(Protocol):
    """Where constitutional drift is looked for."""

    def check(self, review: Any) -> None:
        """Add drift choices to ``review``, the review in progress."""
        ...


@runtime_checkable
class Rules(Protocol):
    """Which memory rules review checks."""

    def check(self, review: Any) -> None:
        """Add rule and limit choices (or findings) to ``review``, the review in progress."""
        ...


@runtime_checkable
class Verifier(Protocol):
    """How ``memlab migrate --verify`` (and ``memlab.verify``) checks a migrated copy."""

    def parity(
        self,
        src: str | Path,
        dest: Path,
        *,
        store: Any,
        plan: Any,
        ref: str | None,
        retrieval: bool,
        queries: list[str] | None,
        k: int,
    ) -> Any:
        """The parity table of the copy in ``dest`` against ``store`` (loaded from ``src``;
        ``plan`` the migration's plan, or None): one row per check and item, columns
        ``check, item, repo, path, expected, actual, ok, detail``
        (:data:`memlab.migrations.PARITY_COLUMNS`); ``ok`` False is a difference, NA a check
        that could not run."""
        ...


def behaviour(value: Any, what: str) -> Any:
    """``value`` as a behaviour object: itself, or what a ``"module:attribute"`` string names
    (a class is instantiated with no arguments). ``what`` names the field for an error."""
    if not isinstance(value, str):
        return value
    if ":" not in value:
        raise TypeError(
            f"{what} takes an object (or a 'module:attribute' naming one), not {value!r}"
        )
    found = pkgutil.resolve_name(value)
    return found() if isinstance(found, type) else found
