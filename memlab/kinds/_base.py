"""The protocol every store kind implements, and the records a kind is made of.

:class:`KindBase` is one store kind (httpx's transport, papermill's engine and pandas'
``BaseImpl`` are the models): engines (``audit``, ``review``, ``migrate``, ``report``, ``lake``,
``discover``) call its methods and read its attributes, and never compare a kind's name. Its
default methods delegate to the record fields a :func:`memlab.kinds.register` call fills in
(``load_ref``, ``audit_ref``, ``migrations``, ``find_ref``), so a kind registered as a record
(:class:`memlab.kinds.Kind`) and a kind written as a class (``memlab/kinds/letta_blocks/``)
answer the same calls. A class overrides what it does itself, typically :meth:`detect`.
"""

from __future__ import annotations

import pkgutil
from dataclasses import dataclass, replace
from functools import cached_property, wraps
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Iterable, Mapping

from memlab.errors import (
    MigrationError,
    StoreNotFound,
    UnknownOption,
    UnrecognizedStore,
    UnsupportedSchema,
)
from memlab.kinds._behaviour import behaviour

__all__ = ["KindBase", "Review", "Evidence", "Probe", "Search", "Ref", "HEAD_BYTES", "FIELDS"]

#: How many leading bytes of a file a detector sees (:attr:`Probe.head`).
HEAD_BYTES = 64

Ref = Callable[..., Any] | str


def _resolve(ref: Ref | None) -> Callable[..., Any] | None:
    if ref is None or callable(ref):
        return ref
    return pkgutil.resolve_name(ref)  # "module:attr", imported on first use


def _required(ref: Ref | None, what: str) -> Callable[..., Any]:
    """``ref`` resolved; a kind without it is a TypeError naming ``what``."""
    fn = _resolve(ref)
    if fn is None:
        raise TypeError(f"a store kind without {what}")
    return fn


@dataclass(frozen=True)
class Evidence:
    """Why :func:`detect` named ``kind`` for ``source``: ``reason`` says what it saw.

    ``source`` is what the kind's loader is given: the path (``~`` expanded), or the text a
    ``locate`` claimed (a DSN)."""

    kind: str
    source: Path | str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "evidence": self.reason}


class Probe:
    """What a detector may look at, read once and shared: the path, whether it is a folder,
    a file's first :data:`HEAD_BYTES` bytes, a folder's entry names. Nothing is written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.is_dir = path.is_dir()

    @cached_property
    def head(self) -> bytes:
        """A file's first bytes (``b""`` for a folder)."""
        if self.is_dir:
            return b""
        from memlab._files import NotRegularFile, open_regular

        try:
            with open_regular(self.path) as fh:
                return fh.read(HEAD_BYTES)
        except NotRegularFile as exc:
            raise UnrecognizedStore(exc.reason, path=self.path) from exc
        except OSError as exc:
            raise StoreNotFound(f"cannot open: {exc.strerror}", path=self.path) from exc

    def has(self, *names: str) -> str | None:
        """The first of ``names`` present inside this folder, or None."""
        if not self.is_dir:
            return None
        return next((n for n in names if (self.path / n).exists()), None)


@dataclass(frozen=True)
class Search:
    """What :func:`memlab.sources.discover.discover` asks each kind's ``find`` to search.

    ``home`` stands in for the user's home folder; ``real_home`` is True when it is the user's
    own (then environment variables such as ``LETTA_LOCAL_BACKEND_DIR`` apply);
    ``max_depth`` bounds walks for stores that may sit anywhere (``.elfmem`` folders).
    """

    home: Path
    real_home: bool = False
    max_depth: int = 4


@dataclass(frozen=True)
class Review:
    """How ``memlab.review`` and ``memlab apply`` treat a kind's stores: its review adapter,
    given to :func:`register` as ``review=``. A kind without one is refused by review.

    Its behaviour is objects (the protocols of :mod:`memlab.kinds._behaviour`, public in
    :mod:`memlab.kinds`), or ``"module:attribute"`` strings naming them, resolved by
    :attr:`resolved` on first use (memlab's own registrations name theirs so, which keeps
    ``import memlab.kinds`` free of the review engine):

    * ``units``: ``units(store) -> DataFrame``, the reviewable units (columns in
      :mod:`memlab.reviews._units`);
    * ``share_of``: what a unit's token share is a share of ("all blocks");
    * ``removal``: a :class:`~memlab.kinds.Removal`, how a unit leaves memory (memlab's:
      ``Forget`` through elfmem's API, ``ArchiveBlock`` to the end of its archive file,
      ``DeleteFile``, ``InLetta`` and ``ByHand``, the default: a checklist line);
    * ``edit``: an :class:`~memlab.kinds.Edit`, how a unit's text is replaced (``ElfmemEdit``,
      ``SetBody``: the file's body, frontmatter kept), or None (memlab cannot);
    * ``apply``: an :class:`~memlab.kinds.Apply`, how ``memlab apply`` makes the ticked changes
      (``ElfmemScript``: a script that calls elfmem's API; ``GitCommit``: one commit to the
      store's git repository; ``Checklist``, the default: the proposal is a checklist);
    * ``dated``: units carry dates, so staleness can be measured; ``stale_basis`` says what
      evidence of use was missing; ``prompt_files``: files in the prompt, and skills, are never
      stale;
    * ``drift``: a :class:`~memlab.kinds.Drift`, where constitutional drift is looked for
      (``SeedDrift``: elfmem's seed blocks; ``FileDrift``: the repository's history), or None;
    * ``rules``: a :class:`~memlab.kinds.Rules`, which memory rules are checked (``LettaHook``:
      Letta Code's pre-commit hook; ``SouveraineRules``; ``AgentLimits``: block limits of an
      agent file), or None;
    * ``describe_file``: a unit is named with the file holding it;
    * ``recorded_contradictions``: the store records contradictions review should offer;
    * ``remember``: a seed text can be learnt again (elfmem's ``remember``);
    * ``project_folder``: the memory is a folder of a project's repository, so apply checks
      only that folder for uncommitted changes.
    """

    units: Ref
    share_of: str = "all blocks"
    removal: Any = "memlab.reviews:ByHand"
    edit: Any = None
    apply: Any = "memlab.reviews:Checklist"
    dated: bool = True
    stale_basis: str = "no commit touching it (memfs records no retrieval)"
    prompt_files: bool = False
    drift: Any = None
    rules: Any = None
    describe_file: bool = False
    recorded_contradictions: bool = False
    remember: bool = False
    project_folder: bool = False

    def __post_init__(self) -> None:
        for what in BEHAVIOURS:
            value = getattr(self, what)
            if isinstance(value, str) and ":" not in value:
                raise TypeError(
                    f"Review {what}= takes an object (or a 'module:attribute' naming one), "
                    f"not {value!r}"
                )

    def units_of(self, store: Any) -> Any:
        """The reviewable units of ``store``."""
        return _required(self.units, "review units")(store)

    @cached_property
    def resolved(self) -> Review:
        """This adapter with its behaviour as objects (``"module:attribute"`` strings
        resolved, once)."""
        return replace(
            self,
            **{w: behaviour(getattr(self, w), f"Review {w}=") for w in BEHAVIOURS},
        )


#: The fields of :class:`Review` that are behaviour objects.
BEHAVIOURS = ("removal", "edit", "apply", "drift", "rules")


#: What a store kind declares, by name (the fields of :class:`memlab.kinds.Kind`, the attributes
#: of a :class:`KindBase`): :func:`memlab.kinds.by_kind` reads one of them across the kinds.
FIELDS = (
    "name",
    "display",
    "load_ref",
    "detect",
    "locate",
    "audit_ref",
    "migrations",
    "default_target",
    "find_ref",
    "priority",
    "review",
    "verify",
    "capabilities",
    "reports",
    "headline",
    "copy_of",
)


class KindBase:
    """One store kind: what it declares (see :mod:`memlab.kinds` for each attribute) and what
    it does: :meth:`detect`, :meth:`locate`, :meth:`load`, :meth:`audit`, :meth:`plan` (its
    migrations, checked by its :meth:`verifier`), :meth:`find` and :meth:`findings` (the
    identities of its findings) and :meth:`state` (the contents a scheduled run records for a
    store with no history of its own). Its metrics are ``headline``; its review adapter is
    ``review``.

    A subclass sets the attributes as class attributes and overrides the methods it implements
    itself; the defaults delegate to ``load_ref``, ``audit_ref``, ``migrations`` and
    ``find_ref`` (functions, or ``"module:attribute"`` strings resolved on first use)."""

    name: str
    display: str
    load_ref: Ref | None = None
    audit_ref: Ref | None = None
    migrations: Mapping[str, Ref] = MappingProxyType({})
    default_target: str | None = None
    find_ref: Ref | None = None
    priority: int = 0
    review: Review | None = None
    verify: Any = None
    capabilities: frozenset[str] = frozenset()
    reports: tuple[str, ...] = ()
    headline: tuple[str, ...] = ()
    copy_of: str | None = None
    #: What this kind saw in a :class:`Probe` (a short phrase), or None when it is not this
    #: kind; a kind class defines it as a method, ``None`` is a kind that detects nothing.
    detect: Callable[[Probe], str | None] | None = None
    #: What this kind saw in a text that is not a path (a DSN), or None; ``None`` for a kind
    #: that claims no such text.
    locate: Callable[[str], str | None] | None = None

    #: Every registered kind, in detection order, for the hints of a refusal (set by the
    #: registry, which imports this module, so the protocol does not import it back).
    registered: ClassVar[Callable[[], list[KindBase]]] = staticmethod(lambda: [])

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass's own ``load`` and ``audit`` keep the protocol's option rule: an option
        the method does not name is an UnknownOption naming the kind, never a TypeError."""
        super().__init_subclass__(**kwargs)
        for method, what, given in (("load", "loading", ()), ("audit", "auditing", ("as_of",))):
            own = cls.__dict__.get(method)
            if callable(own) and not getattr(own, "options_checked", False):
                setattr(cls, method, _options_checked(own, what, given))

    def verifier(self) -> Any:
        """The :class:`~memlab.kinds.Verifier` ``migrate --verify`` runs on a migrated copy of
        this kind's stores (``verify``, a ``"module:attribute"`` string resolved), or None."""
        return behaviour(self.verify, f"{self.name} verify=")

    def findings(self) -> Mapping[str, tuple[str, ...]]:
        """The identities of this kind's findings: audit table -> the columns that identify one
        of its rows across runs (what a scheduled run records and compares). By default every
        finding table memlab knows (:data:`memlab._metrics.FINDINGS`), of which an audit holds
        those it makes."""
        from memlab._metrics import FINDINGS

        return MappingProxyType(FINDINGS)

    def state(self, store: Any) -> Mapping[str, str] | None:
        """The store's contents as ``{path: digest}``, for a kind whose stores keep no history
        of their own (a Claude Code memory folder): a scheduled run records it and the run
        index shows the files added, changed and removed since the last run. None (the
        default): the store has its own history, or nothing to record."""
        return None

    def load(self, source: str | Path, **kwargs: Any) -> Any:
        """Load ``source`` (a path, or what this kind's ``locate`` claims) with its loader; an
        option the loader does not name is an :class:`~memlab.errors.UnknownOption`."""
        fn = _required(self.load_ref, "a loader")
        self._check_options(fn, kwargs, "loading", source)
        return fn(source, **kwargs)

    def _check_options(
        self,
        fn: Callable[..., Any],
        options: Mapping[str, Any],
        what: str,
        where: Any,
        *,
        given: tuple[str, ...] = (),
    ) -> None:
        """Raise UnknownOption for any of ``options`` that ``fn`` does not name as a parameter
        (after its first, the source or store). A ``**kwargs`` catch-all names nothing, so a
        misspelt option is an error rather than silently dropped. ``given`` are the options
        memlab itself always passes (an audit's ``as_of``), not listed in the hint."""
        import inspect

        named = [
            n
            for i, (n, p) in enumerate(inspect.signature(fn).parameters.items())
            if i > 0 and n not in given and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        unknown = sorted(k for k in options if k not in named)
        if unknown:
            raise UnknownOption(
                f"{what} a store of kind {self.name!r} ({self.display}) takes no "
                + ", ".join(unknown)
                + " option",
                path=where if isinstance(where, Path) else None,
                hint="its options: " + ", ".join(named) if named else "it takes none",
            )

    def audit(self, store: Any, *, as_of: Any = None, **options: Any) -> Any:
        """Audit ``store`` with this kind's audit; an option the audit does not name is an
        :class:`~memlab.errors.UnknownOption` naming the kind and the option."""
        fn = _resolve(self.audit_ref)
        if fn is None:
            raise UnsupportedSchema(
                f"no audit for a store of kind {self.name!r}",
                path=getattr(store, "path", None),
                hint="memlab audits "
                + ", ".join(k.display for k in KindBase.registered() if k.audit_ref is not None),
            )
        self._check_options(fn, options, "auditing", getattr(store, "path", None), given=("as_of",))
        return fn(store, as_of=as_of, **options)

    def plan(
        self,
        store: Any,
        source: Path,
        target: str | None = None,
        *,
        dest: str | Path | None = None,
        **options: Any,
    ) -> Any:
        """The migration plan of ``store`` (read from ``source``) to ``target`` (default:
        :attr:`default_target`) into ``dest``. ``options`` (a Letta server's ``agents``) go to
        a planner that takes them; one it does not take is a MigrationError."""
        target = target or self.default_target
        if target is None or target not in self.migrations:
            if not self.migrations:
                raise MigrationError(
                    f"memlab does not migrate from this {self.display}",
                    path=source,
                    hint="memlab migrates from: "
                    + ", ".join(k.display for k in KindBase.registered() if k.migrations),
                )
            raise MigrationError(
                f"a {self.display} does not migrate to {target!r}",
                path=source,
                hint=f"use one of {', '.join(self.migrations)}",
            )
        fn = _required(self.migrations[target], f"a planner for {target!r}")
        import inspect

        accepted = inspect.signature(fn).parameters
        unknown = sorted(k for k in options if k not in accepted)
        if unknown:
            raise MigrationError(
                f"a {self.display} takes no {', '.join(unknown)} option",
                path=source,
                hint="--agent selects agents of a Letta server "
                "database; leave it out for this source",
            )
        return fn(store, source, target=target, dest=dest, **options)

    def find(self, search: Search) -> Iterable[dict[str, Any]]:
        """Inventory rows for every store of this kind under ``search.home`` (none if the kind
        has no ``find``)."""
        fn = _resolve(self.find_ref)
        return () if fn is None else fn(search)

    def walked_folder(self, folder: Path) -> Mapping[str, Any] | None:
        """The inventory row ``memlab discover`` lists for ``folder``, a store of this kind it
        met walking a folder the user named (a row as :meth:`find` gives one), or None (the
        default) for discover's own row, which names no layout. Raises
        :class:`~memlab.errors.UnrecognizedStore` when the kind's loader takes the folder for
        none of its stores (a code repository the detector's markers matched): not listed."""
        return None

    def lists_file(self, path: Path) -> bool:
        """Whether ``path``, a file this kind's detector claimed from its content, is listed
        when a walk of a folder meets it. True by default; a kind that claims any text of a
        common format (JSON) looks inside, so a walk lists no manifests or summaries."""
        return True

    def elfmem_frames(self, store: Any) -> Mapping[str, Any] | None:
        """``store``'s frames as an elfmem database's tables (``blocks``, ``tags``,
        ``sessions``, ``config``, the ledger's), which the simulations replay and measure and
        the elfmem block and ledger migrations read; None (the default) when this kind's
        stores hold none."""
        return None

    def simulates(self) -> bool:
        """Whether the simulations measure this kind's stores: it gives :meth:`elfmem_frames`
        (a scheduled run's simulation is measured on the first such store)."""
        return type(self).elfmem_frames is not KindBase.elfmem_frames

    def doc_value(self, metric: str) -> Any:
        """The reference value a design document gives for ``metric`` on this kind's stores
        (a report's headline shows it beside the measured one), or None (the default)."""
        return None


def _options_checked(
    method: Callable[..., Any], what: str, given: tuple[str, ...]
) -> Callable[..., Any]:
    """``method`` (a kind class's own load or audit), refusing an option it does not name."""

    @wraps(method)
    def checked(self: KindBase, first: Any, **options: Any) -> Any:
        where = first if what == "loading" else getattr(first, "path", None)
        self._check_options(
            method.__get__(self),
            {k: v for k, v in options.items() if k not in given},
            what,
            where,
            given=given,
        )
        return method(self, first, **options)

    checked.options_checked = True  # type: ignore[attr-defined]
    return checked
