"""The store kinds memlab knows, in one registry: how each is detected, loaded, audited,
migrated and found.

A kind is one value of ``Store.kind``. Each declares, in one :func:`register` call:

* ``display``: the name shown to people ("elfmem database");
* ``detect``: a function of a :class:`Probe` (the path, its first bytes, its entries) that
  returns what it saw ("starts with the SQLite header") or ``None``. Detectors run from the
  highest ``priority`` down (registration order breaks ties); the first to answer wins, and
  ``memlab.load`` records its :class:`Evidence` in ``store.meta["detected"]``. A detector that
  claims broadly (any SQLite file, any JSON) registers with a low priority, so a more specific
  kind sharing the format (a Letta server database) is asked first. ``locate`` claims a source
  that is not a path (a ``postgresql://`` DSN) from its text, before any path is looked at;
* ``load``: the loader, ``load(path, **kwargs) -> Store``. Kinds may share one: the loader
  decides the final ``Store.kind`` from what it reads (a git repository whose HEAD holds
  ``agent.yaml`` is ``souveraine`` even when only ``.git`` was probed);
* ``audit``: ``audit(store, *, as_of, **options) -> Audit``, or ``None`` when memlab has no
  audit for the kind. An option that ``load`` or ``audit`` does not name as a parameter (a
  ``**kwargs`` catch-all names none) is an :class:`~memlab.errors.UnknownOption` naming the
  kind and the option, never silently dropped;
* ``migrations``: target name -> planner ``plan(store, source_path, *, target, dest) -> Plan``
  (``dest`` is the destination folder, or None when planning without one), and
  ``default_target``, where ``memlab.migrate`` sends the store when no target is named;
* ``find``: where the kind lives on a machine, ``find(search) -> rows`` for
  :func:`memlab.sources.discover.discover` (a row needs ``agent_id`` and ``path``; the other
  inventory columns default to missing and ``kind`` to this kind);
* ``review``: a :class:`Review`, how ``memlab.review`` and ``memlab apply`` treat the kind's
  stores (its units, how a unit is removed or edited, how ticks are applied), or ``None``
  when review does not cover the kind. Code outside this module asks these fields rather
  than compare a store's kind with a kind's name (``tests/test_kind_literals.py`` counts
  such comparisons outside this module: none);
* ``verify``: which parity check ``memlab migrate --verify`` runs on a migrated copy of the
  kind's stores: ``"elfmem"`` (blocks and ledger), ``"blocks"`` (Letta blocks, one file per
  block), ``"server"`` (a Letta server's blocks with their history, per agent), ``"upgrade"``
  (a memfs v1 repository moved to v2, history kept), or ``None`` (memlab cannot verify it);
* ``capabilities``: what other code may rely on, by name: ``"elfmem_tables"`` (the store holds
  an elfmem database's tables: the elfmem block and ledger migrations, the simulations and the
  v2 doc's values apply), ``"json_file"`` (detected from JSON text, so a folder walk parses a
  file before listing it), ``"agents"`` (the store's ``agents`` frame lists the agents its
  blocks belong to: a Letta Agent File, not a bare blocks list), ``"uuid_folder"`` (the
  agent's folder is named by its id, which its ``agent.yaml`` repeats: discover flags a
  mismatch), ``"memfs_v1_upgrade"`` (a Letta Code memfs repository whose v1 files the
  ``"letta"`` migration moves to v2), ``"memfs_layout"`` (a folder the memfs loader reads,
  with a layout it names: discover lists that layout for a folder it walks to);
* ``reports``: the report kinds ``memlab report all`` renders for each of the kind's stores
  (``("audit", "review")``); none, and a scheduled run only loads it;
* ``headline``: the metrics a scheduled run's index charts and compares for the kind's stores
  by default (the config's ``metrics:`` overrides them);
* ``copy_of``: the migration target whose output is a store of this kind (a migrated copy
  that loads as ``letta_memfs`` is a ``"letta"`` copy), which ``migrate --verify`` re-plans.

:func:`by_kind` is a read-only mapping over one of these fields (kind name -> value, kinds
that declare none left out), so a table keyed by kind is a view of the registry, not a copy.

Functions may be given as ``"module:attribute"`` strings, resolved on first use, so
``import memlab`` imports no loader. Adding a kind is one module (its loader) plus one
``register`` line here, like papermill's engines::

    register("toy", display="toy store", detect=lambda p: "ends in .toy" if
             p.path.suffix == ".toy" else None, load=load_toy, audit=audit_toy)

Another distribution adds kinds through the ``memlab.kinds`` entry point group
(:data:`ENTRY_POINT_GROUP`): each entry point names a function of no arguments that calls
:func:`register`; memlab calls each once, on the first look-up. ``docs/examples/memlab-toy-kind``
is a complete one::

    [project.entry-points."memlab.kinds"]
    toy = "memlab_toy:register"
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from memlab._registry import RegistryView
from memlab.errors import MigrationError, SourceError, StoreNotFound, UnknownOption, \
    UnrecognizedStore, UnsupportedSchema

__all__ = ["by_kind", "Kind", "Review", "Evidence", "Probe", "Search", "register", "unregister", "get",
           "lookup", "capable", "kinds",
           "detect", "targets", "MEMFS_KINDS", "ENTRY_POINT_GROUP", "plugin_failures"]

#: How many leading bytes of a file a detector sees (:attr:`Probe.head`).
HEAD_BYTES = 64

_SQLITE_MAGIC = b"SQLite format 3\x00"

Ref = Callable[..., Any] | str


def _resolve(ref: Ref | None) -> Callable[..., Any] | None:
    if ref is None or callable(ref):
        return ref
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


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

    * ``units``: ``units(store) -> DataFrame``, the reviewable units (columns in
      :mod:`memlab.reviews._units`);
    * ``share_of``: what a unit's token share is a share of ("all blocks");
    * ``removal``: how a unit leaves memory: ``"forget"`` (elfmem's API), ``"archive_block"``
      (moved to the end of its archive file), ``"delete_file"``, or ``"none"`` (by hand);
    * ``edit``: how a unit's text is replaced: ``"edit"`` (elfmem's API), ``"set_body"`` (the
      file's body, frontmatter kept), or None (memlab cannot);
    * ``apply``: how ``memlab apply`` makes the ticked changes: ``"script"`` (a script that
      calls elfmem's API), ``"commit"`` (one commit to the store's git repository), or None
      (the proposal is a checklist);
    * ``dated``: units carry dates, so staleness can be measured; ``stale_basis`` says what
      evidence of use was missing; ``prompt_files``: files in the prompt, and skills, are never
      stale;
    * ``drift``: where constitutional drift is looked for: ``"seeds"`` (elfmem's seed blocks),
      ``"files"`` (the repository's history), or None;
    * ``rules``: which memory rules are checked: ``"letta"`` (Letta Code's pre-commit hook),
      ``"souveraine"``, ``"agent_limits"`` (block limits of an agent file), or None;
    * ``describe_file``: a unit is named with the file holding it;
    * ``recorded_contradictions``: the store records contradictions review should offer;
    * ``remember``: a seed text can be learnt again (elfmem's ``remember``);
    * ``project_folder``: the memory is a folder of a project's repository, so apply checks
      only that folder for uncommitted changes.
    """

    units: Ref
    share_of: str = "all blocks"
    removal: str = "none"
    edit: str | None = None
    apply: str | None = None
    dated: bool = True
    stale_basis: str = "no commit touching it (memfs records no retrieval)"
    prompt_files: bool = False
    drift: str | None = None
    rules: str | None = None
    describe_file: bool = False
    recorded_contradictions: bool = False
    remember: bool = False
    project_folder: bool = False

    def units_of(self, store: Any) -> Any:
        """The reviewable units of ``store``."""
        return _resolve(self.units)(store)


@dataclass(frozen=True)
class Kind:
    """One store kind; see the module docstring for what each field means."""

    name: str
    display: str
    load_ref: Ref
    detect: Callable[[Probe], str | None] | None = None
    locate: Callable[[str], str | None] | None = None
    audit_ref: Ref | None = None
    migrations: Mapping[str, Ref] = field(default_factory=dict)
    default_target: str | None = None
    find_ref: Ref | None = None
    priority: int = 0
    review: Review | None = None
    verify: str | None = None
    capabilities: frozenset[str] = frozenset()
    reports: tuple[str, ...] = ()
    headline: tuple[str, ...] = ()
    copy_of: str | None = None

    def load(self, source: str | Path, **kwargs: Any) -> Any:
        """Load ``source`` (a path, or what this kind's ``locate`` claims) with its loader; an
        option the loader does not name is an :class:`~memlab.errors.UnknownOption`."""
        fn = _resolve(self.load_ref)
        self._check_options(fn, kwargs, "loading", source)
        return fn(source, **kwargs)

    def _check_options(self, fn: Callable[..., Any], options: Mapping[str, Any], what: str,
                       where: Any, *, given: tuple[str, ...] = ()) -> None:
        """Raise UnknownOption for any of ``options`` that ``fn`` does not name as a parameter
        (after its first, the source or store). A ``**kwargs`` catch-all names nothing, so a
        misspelt option is an error rather than silently dropped. ``given`` are the options
        memlab itself always passes (an audit's ``as_of``), not listed in the hint."""
        import inspect

        named = [n for i, (n, p) in enumerate(inspect.signature(fn).parameters.items())
                 if i > 0 and n not in given
                 and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        unknown = sorted(k for k in options if k not in named)
        if unknown:
            raise UnknownOption(f"{what} a store of kind {self.name!r} ({self.display}) takes no "
                                + ", ".join(unknown) + " option",
                                path=where if isinstance(where, Path) else None,
                                hint="its options: " + ", ".join(named) if named
                                else "it takes none")

    def audit(self, store: Any, *, as_of: Any = None, **options: Any) -> Any:
        """Audit ``store`` with this kind's audit; an option the audit does not name is an
        :class:`~memlab.errors.UnknownOption` naming the kind and the option."""
        fn = _resolve(self.audit_ref)
        if fn is None:
            raise UnsupportedSchema(f"no audit for a store of kind {self.name!r}",
                                    path=getattr(store, "path", None),
                                    hint="memlab audits " + ", ".join(
                                        k.display for k in kinds() if k.audit_ref is not None))
        self._check_options(fn, options, "auditing", getattr(store, "path", None),
                            given=("as_of",))
        return fn(store, as_of=as_of, **options)

    def plan(self, store: Any, source: Path, target: str | None = None, *,
             dest: str | Path | None = None, **options: Any) -> Any:
        """The migration plan of ``store`` (read from ``source``) to ``target`` (default:
        :attr:`default_target`) into ``dest``. ``options`` (a Letta server's ``agents``) go to
        a planner that takes them; one it does not take is a MigrationError."""
        target = target or self.default_target
        if target not in self.migrations:
            if not self.migrations:
                raise MigrationError(f"memlab does not migrate from this {self.display}",
                                     path=source, hint="memlab migrates from: " + ", ".join(
                                         k.display for k in kinds() if k.migrations))
            raise MigrationError(f"a {self.display} does not migrate to {target!r}", path=source,
                                 hint=f"use one of {', '.join(self.migrations)}")
        fn = _resolve(self.migrations[target])
        import inspect

        accepted = inspect.signature(fn).parameters
        unknown = sorted(k for k in options if k not in accepted)
        if unknown:
            raise MigrationError(f"a {self.display} takes no {', '.join(unknown)} option",
                                 path=source, hint="--agent selects agents of a Letta server "
                                                   "database; leave it out for this source")
        return fn(store, source, target=target, dest=dest, **options)

    def find(self, search: Search) -> Iterable[dict[str, Any]]:
        """Inventory rows for every store of this kind under ``search.home`` (none if the kind
        has no ``find``)."""
        fn = _resolve(self.find_ref)
        return () if fn is None else fn(search)


_REGISTRY: dict[str, Kind] = {}

#: The entry point group through which another distribution adds store kinds.
ENTRY_POINT_GROUP = "memlab.kinds"
_plugins_loaded = False


def _load_plugins() -> None:
    """Call, once, every ``memlab.kinds`` entry point installed (in name order); each names a
    function of no arguments that calls :func:`register`. Runs on the first look-up, so
    ``import memlab`` imports no plugin.

    A plugin that fails (its import, its function, a clash with a kind registered before it)
    is one warning line on stderr naming it and the distribution that declares it, kept in
    :data:`plugin_failures`; the other plugins still load, and every command still runs."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    if not _plugins_may_exist():
        return
    from importlib.metadata import entry_points

    try:
        found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value))
    except Exception as exc:  # a malformed dist-info on the path: no plugin, and say so
        _plugin_failed(f"the {ENTRY_POINT_GROUP!r} entry points could not be read", exc)
        return
    for ep in found:
        try:
            ep.load()()
        except (Exception, SystemExit) as exc:  # the plugin's code: anything it raises
            dist = getattr(getattr(ep, "dist", None), "name", None)
            _plugin_failed(f"the store kind plugin {ep.name} = {ep.value}"
                           + (f" (distribution {dist})" if dist else ""), exc)


def _plugins_may_exist() -> bool:
    """False only when no distribution in a folder on ``sys.path`` names the entry point group
    in its ``entry_points.txt``: then importlib.metadata (its import and its parse of every
    installed distribution, ~50 ms of a ~0.5 s `memlab audit`) would find nothing. True, so
    the full look-up runs, on anything else: a mention of the group, a zip or egg on the
    path, a finder other than the standard one that can list distributions, an unreadable
    folder."""
    import os
    import sys
    from importlib.machinery import PathFinder

    if any(f is not PathFinder and getattr(f, "find_distributions", None) is not None
           for f in sys.meta_path):
        return True
    needle = ENTRY_POINT_GROUP.encode()
    for entry in sys.path:
        folder = entry or "."
        try:
            if not os.path.isdir(folder) or folder.lower().endswith(".egg"):
                if os.path.exists(folder):
                    return True  # a zip or an egg: importlib.metadata reads those itself
                continue
            with os.scandir(folder) as found:
                names = [e.name for e in found]
        except OSError:
            return True
        for name in names:
            low = name.lower()
            if low.endswith(".egg"):
                return True
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), "rb") as fh:
                    if needle in fh.read():
                        return True
            except FileNotFoundError:
                continue
            except OSError:
                return True
    return False


#: One line per plugin that failed to load (also written to stderr when it failed).
plugin_failures: list[str] = []


def _plugin_failed(what: str, exc: BaseException) -> None:
    import sys

    from memlab._escape import terminal_line

    line = terminal_line(f"{what} failed and was skipped: {type(exc).__name__}: {exc}; fix or "
                         f"uninstall it", 400)
    plugin_failures.append(line)
    print(f"memlab: warning: {line}", file=sys.stderr, flush=True)


def register(name: str, *, display: str, load: Ref, detect: Callable[[Probe], str | None] | None
             = None, locate: Callable[[str], str | None] | None = None, audit: Ref | None = None, migrations: Mapping[str, Ref] | None = None,
             default_target: str | None = None, find: Ref | None = None, priority: int = 0,
             review: Review | None = None, verify: str | None = None,
             capabilities: Iterable[str] = (), reports: Iterable[str] = (),
             headline: Iterable[str] = (), copy_of: str | None = None,
             replace: bool = False) -> Kind:
    """Add a store kind (see the module docstring); returns it. Re-registering a name needs
    ``replace=True``."""
    if name in _REGISTRY and not replace:
        raise ValueError(f"store kind {name!r} is already registered; pass replace=True")
    migrations = dict(migrations or {})
    if default_target is not None and default_target not in migrations:
        raise ValueError(f"default_target {default_target!r} is not one of {name}'s migrations")
    kind = Kind(name, display, load, detect, locate, audit, migrations,
                default_target or next(iter(migrations), None), find, priority, review, verify,
                frozenset(capabilities), tuple(reports), tuple(headline), copy_of)
    _REGISTRY[name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind (tests add toy kinds and take them away again)."""
    _REGISTRY.pop(name, None)


def get(name: str) -> Kind:
    """The kind named ``name`` (a ``Store.kind``)."""
    _load_plugins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnsupportedSchema(f"no store kind named {name!r}",
                                hint=f"memlab knows {', '.join(_REGISTRY)}") from None


def lookup(name: str | None) -> Kind | None:
    """The kind named ``name``, or None when no kind has that name (a proposal written for a
    kind whose plugin is not installed)."""
    _load_plugins()
    return _REGISTRY.get(name) if isinstance(name, str) else None


def by_kind(attr: str) -> Mapping[str, Any]:
    """A live read-only mapping of kind name -> the kind's ``attr`` field (``"reports"``,
    ``"headline"``, ``"copy_of"``), in registration order, leaving out kinds that declare
    none; plugins' kinds included."""
    if attr not in Kind.__dataclass_fields__:
        raise ValueError(f"a kind has no field {attr!r}")
    return RegistryView(_registered, lambda kind: getattr(kind, attr),
                        lambda kind: bool(getattr(kind, attr)))


def _registered() -> Mapping[str, Kind]:
    """The registry, plugins' kinds loaded."""
    _load_plugins()
    return _REGISTRY


def capable(name: str | None, capability: str) -> bool:
    """Whether the kind named ``name`` declares ``capability`` (False for a name no kind has)."""
    kind = lookup(name)
    return kind is not None and capability in kind.capabilities


def kinds() -> list[Kind]:
    """Every registered kind, in the order detectors are tried (highest priority first)."""
    _load_plugins()
    order = {name: i for i, name in enumerate(_REGISTRY)}
    return sorted(_REGISTRY.values(), key=lambda k: (-k.priority, order[k.name]))


def targets() -> tuple[str, ...]:
    """Every migration target some kind supports, in first-registered order."""
    _load_plugins()
    out: dict[str, None] = {}
    for kind in _REGISTRY.values():
        out.update(dict.fromkeys(kind.migrations))
    return tuple(out)


def detect(path: str | Path) -> Evidence:
    """Which kind ``path`` holds, and why. Decided from content and markers, not from the file
    name alone, so a renamed database still loads. A string some kind's ``locate`` claims (a
    ``postgresql://`` DSN) is that kind without touching the file system.

    Example::

        memlab.kinds.detect("data/demo/elfmem-demo.db")
        # Evidence(kind='elfmem_db', source=..., reason='starts with the SQLite header')
    """
    if isinstance(path, str):
        for kind in kinds():
            reason = kind.locate(path) if kind.locate is not None else None
            if reason:
                return Evidence(kind.name, path.strip(), reason)
    p = Path(path).expanduser()
    if not p.exists() and not p.is_symlink():
        raise StoreNotFound("no such file or folder", path=p)
    probe = Probe(p)
    if probe.is_dir and not os.access(p, os.R_OK | os.X_OK):
        raise SourceError("cannot read this folder (permission denied)", path=p,
                          hint="memlab needs read and execute permission on it")
    if not probe.is_dir:
        probe.head  # noqa: B018 - an unreadable file is StoreNotFound before any detector runs
    for kind in kinds():
        if kind.detect is None:
            continue
        reason = kind.detect(probe)
        if reason:
            return Evidence(kind.name, p, reason)
    what = "folder" if probe.is_dir else "file"
    raise UnrecognizedStore(f"not a store memlab knows; this {what} is none of: "
                            + ", ".join(k.display for k in kinds() if k.detect is not None),
                            path=p)


# --------------------------------------------------------------------------- detectors


def _sqlite(probe: Probe) -> str | None:
    if probe.is_dir:
        return None
    if probe.head.startswith(_SQLITE_MAGIC):
        return "starts with the SQLite header"
    if probe.path.suffix in {".db", ".sqlite", ".sqlite3"}:
        # A .db that is not SQLite is reported by the SQLite loader as corrupt, which says more
        # than "unrecognised".
        return f"named {probe.path.suffix}"
    return None


def _json_text(probe: Probe) -> bytes:
    return probe.head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]


def _agent_file(probe: Probe) -> str | None:
    if probe.is_dir:
        return None
    first = _json_text(probe)
    if first in (b"{", b'"'):
        return "JSON object" if first == b"{" else "JSON string (a double-encoded agent file)"
    if probe.path.suffix == ".af" and first != b"[":
        return "named .af"
    return None


def _blocks_list(probe: Probe) -> str | None:
    if probe.is_dir:
        return None
    if _json_text(probe) == b"[":
        return "JSON list"
    if probe.path.suffix == ".json":
        return "named .json"
    return None


def _letta_dsn(source: str) -> str | None:
    from memlab.sources.letta_server import is_dsn

    return "a PostgreSQL connection URI" if is_dsn(source) else None


def _letta_sqlite(probe: Probe) -> str | None:
    if probe.is_dir or not probe.head.startswith(_SQLITE_MAGIC):
        return None
    from memlab.sources.letta_server import is_letta_sqlite

    return "SQLite with a Letta server's tables" if is_letta_sqlite(probe.path) else None


def _substrate(probe: Probe) -> str | None:
    # elfmem's substrate keeps its blocks in .elfmem/memory and its ledger in .elfmem/ledger;
    # an .elfmem folder with neither (a config only) holds no memory (discover's rule too).
    if not probe.is_dir:
        return None
    folder = probe.path if probe.path.name == ".elfmem" else probe.path / ".elfmem"
    found = next((s for s in ("memory", "ledger") if (folder / s).is_dir()), None)
    if found is None:
        return None
    return f"an .elfmem folder with {found}/" if folder == probe.path else f"holds .elfmem/{found}/"


def _souveraine(probe: Probe) -> str | None:
    return "holds agent.yaml" if probe.has("agent.yaml") else None


def _letta_memfs(probe: Probe) -> str | None:
    found = probe.has(".git", "system", ".letta", "MEMORY.md")
    if not found and (probe.path / "memory" / "system").is_dir():
        found = "memory/system"  # v1's memory/ prefix layout, no git (a local-backend copy)
    if found:
        return f"holds {found}"
    # a bare repository (a server-side copy, a mirror): its tree is checked when it is located
    if probe.is_dir and (probe.path / "HEAD").is_file() and (probe.path / "objects").is_dir() \
            and (probe.path / "refs").is_dir():
        return "a bare git repository"
    return None


# --------------------------------------------------------------------------- the kinds

_SRC, _AUD, _MIG, _DISC = "memlab.sources", "memlab.audits", "memlab.migrations", \
    "memlab.sources.discover"
_TO_MEMFS = {"letta": f"{_MIG}:_plan_memfs", "souveraine": f"{_MIG}:_plan_memfs"}
_UNITS = "memlab.reviews._units"
_MEMFS_FILES = dict(units=f"{_UNITS}:memfs_file_units", share_of="all memory files",
                    removal="delete_file", edit="set_body", apply="commit", prompt_files=True,
                    drift="files")
_AGENT_BLOCKS = Review(units=f"{_UNITS}:agent_units", dated=False, rules="agent_limits")

#: The headline metrics a scheduled run's index charts and compares by default (names of the
#: audit report's ``metrics.json``; ``review.<name>`` from the review report's).
_AGENT_FILE_HEADLINE = ("max_prompt_tokens_est", "max_context_share", "max_over_limit_ratio",
                        "n_blocks_over_limit", "n_problems", "review.choices")
_MEMFS_HEADLINE = ("prompt_tokens", "max_limit_ratio", "findings", "hook_violations",
                   "no_verify_commits", "over_limit_files", "problems", "review.choices")

register("elfmem_db", display="elfmem database", detect=_sqlite, priority=-10,
         load=f"{_SRC}.elfmem_db:load_elfmem", audit=f"{_AUD}.elfmem:audit_elfmem",
         migrations={"substrate": f"{_MIG}._elfmem:plan_substrate", **_TO_MEMFS},
         find=f"{_DISC}:find_elfmem_databases", verify="elfmem", capabilities={"elfmem_tables"},
         reports=("audit", "review"),
         headline=("input_per_corpus_token", "calls_per_surviving_block", "supersession_share",
                   "min_block_recency", "role_slots_left", "constitutional_tagged_live",
                   "blocks_active", "contradictions_unresolved", "review.choices"),
         review=Review(units=f"{_UNITS}:elfmem_db_units", share_of="all live blocks",
                       removal="forget", edit="edit", apply="script",
                       stale_basis="no reinforcement, session or outcome", drift="seeds",
                       recorded_contradictions=True, remember=True))
register("letta_server", display="Letta server database", detect=_letta_sqlite,
         locate=_letta_dsn, load=f"{_SRC}.letta_server:load_letta_server",
         audit=f"{_AUD}.letta_server:audit_letta_server",
         find=f"{_SRC}.letta_server:find_letta_server",
         migrations={"letta": f"{_MIG}._letta_server:plan_letta_server"}, verify="server")
#: The kinds stored as markdown files in a git repo, loaded by :mod:`memlab.sources.memfs` and
#: audited by :mod:`memlab.audits.memfs`; review edits them with a commit.
MEMFS_KINDS = ("letta_memfs", "souveraine", "elfmem_substrate")
register("elfmem_substrate", display="elfmem markdown substrate", detect=_substrate,
         priority=20, load=f"{_SRC}.memfs:load_memfs", audit=f"{_AUD}.memfs:audit_memfs",
         find=f"{_DISC}:find_elfmem_substrates",
         review=Review(units=f"{_UNITS}:substrate_units", share_of="all notes and log blocks",
                       removal="archive_block", apply="commit",
                       stale_basis="no use/out/edit ledger event", drift="files",
                       describe_file=True, project_folder=True),
         capabilities={"memfs_layout"},
         reports=("memfs", "review"), headline=_MEMFS_HEADLINE, copy_of="substrate")
register("souveraine", display="Souveraine agent dir", detect=_souveraine, priority=10,
         load=f"{_SRC}.memfs:load_memfs", audit=f"{_AUD}.memfs:audit_memfs",
         find=f"{_DISC}:find_souveraine", review=Review(**_MEMFS_FILES, rules="souveraine"),
         capabilities={"uuid_folder", "memfs_layout"},
         reports=("memfs", "review"), headline=_MEMFS_HEADLINE, copy_of="souveraine")
register("letta_memfs", display="Letta Code memfs repo", detect=_letta_memfs,
         load=f"{_SRC}.memfs:load_memfs", audit=f"{_AUD}.memfs:audit_memfs",
         find=f"{_DISC}:find_letta_memfs", review=Review(**_MEMFS_FILES, rules="letta"),
         verify="upgrade", reports=("memfs", "review"), headline=_MEMFS_HEADLINE, copy_of="letta",
         capabilities={"memfs_v1_upgrade", "memfs_layout"},
         migrations={"letta": f"{_MIG}._letta_upgrade:plan_upgrade"})  # memfs v1 -> v2
register("agent_file", display="Letta Agent File", detect=_agent_file, priority=-10,
         load=f"{_SRC}.agent_file:load_agent_file", audit=f"{_AUD}.agent_file:audit_agent_file",
         migrations=_TO_MEMFS, review=_AGENT_BLOCKS, verify="blocks",
         capabilities={"json_file", "agents"}, reports=("audit", "review"),
         headline=_AGENT_FILE_HEADLINE)
register("letta_blocks", display="Letta blocks JSON list", detect=_blocks_list, priority=-10,
         load=f"{_SRC}.agent_file:load_agent_file", audit=f"{_AUD}.agent_file:audit_agent_file",
         migrations=_TO_MEMFS, review=_AGENT_BLOCKS, verify="blocks",
         capabilities={"json_file"}, reports=("audit", "review"), headline=_AGENT_FILE_HEADLINE)
