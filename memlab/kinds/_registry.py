"""The store kinds registry: :func:`register`, the look-ups and :func:`detect`; the public
names are :mod:`memlab.kinds`'s (its docstring says what a kind declares)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from memlab._registry import RegistryView
from memlab.errors import SourceError, StoreNotFound, UnrecognizedStore, UnsupportedSchema
from memlab.kinds._base import FIELDS, Evidence, KindBase, Probe, Ref, Review

__all__ = [
    "by_kind",
    "Kind",
    "register",
    "unregister",
    "get",
    "lookup",
    "capable",
    "kinds",
    "detect",
    "targets",
    "ENTRY_POINT_GROUP",
    "plugin_failures",
]


@dataclass(frozen=True, kw_only=True)
class Kind(KindBase):
    """One store kind as a record, made by :func:`register`: see :mod:`memlab.kinds` for what each
    field means; its methods are :class:`KindBase`'s defaults, which delegate to these fields.
    Its fields are keyword-only, as :func:`register`'s are after the name.

    The fields repeat :class:`KindBase`'s declarations on purpose: a dataclass takes inherited
    fields only from dataclass bases, and :class:`KindBase` cannot be one (a kind class sets its
    fields as class attributes and is made with no arguments, ``Souveraine()``); building the
    fields from its annotations at run time would hide them from the type checker.
    ``tests/test_kinds.py`` keeps the two the same (names, types, defaults; ``load_ref`` alone
    narrowed, since a record needs a loader)."""

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
    verify: Any = None
    capabilities: frozenset[str] = frozenset()
    reports: tuple[str, ...] = ()
    headline: tuple[str, ...] = ()
    copy_of: str | None = None


_REGISTRY: dict[str, KindBase] = {}

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
            _plugin_failed(
                f"the store kind plugin {ep.name} = {ep.value}"
                + (f" (distribution {dist})" if dist else ""),
                exc,
            )


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

    if any(
        f is not PathFinder and getattr(f, "find_distributions", None) is not None
        for f in sys.meta_path
    ):
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

    line = terminal_line(
        f"{what} failed and was skipped: {type(exc).__name__}: {exc}; fix or uninstall it", 400
    )
    plugin_failures.append(line)
    print(f"memlab: warning: {line}", file=sys.stderr, flush=True)


def register(
    name: str | KindBase,
    *,
    display: str | None = None,
    load: Ref | None = None,
    detect: Callable[[Probe], str | None] | None = None,
    locate: Callable[[str], str | None] | None = None,
    audit: Ref | None = None,
    migrations: Mapping[str, Ref] | None = None,
    default_target: str | None = None,
    find: Ref | None = None,
    priority: int = 0,
    review: Review | None = None,
    verify: Any = None,
    capabilities: Iterable[str] = (),
    reports: Iterable[str] = (),
    headline: Iterable[str] = (),
    copy_of: str | None = None,
    replace: bool = False,
) -> KindBase:
    """Add a store kind (see :mod:`memlab.kinds`); returns it. ``name`` is the kind's name with
    its fields as keywords (``display`` and ``load`` required), or a :class:`KindBase` instance
    (a kind written as a class), given alone. Re-registering a name needs ``replace=True``."""
    if isinstance(name, KindBase):
        given = [
            k
            for k, v in dict(
                display=display,
                load=load,
                detect=detect,
                locate=locate,
                audit=audit,
                migrations=migrations,
                default_target=default_target,
                find=find,
                review=review,
                verify=verify,
                copy_of=copy_of,
            ).items()
            if v is not None
        ]
        if given or priority or capabilities or reports or headline:
            raise TypeError(
                "a kind given as a KindBase instance declares its own fields; "
                "pass it alone (and replace=)"
            )
        if name.name in _REGISTRY and not replace:
            raise ValueError(f"store kind {name.name!r} is already registered; pass replace=True")
        if name.default_target is not None and name.default_target not in name.migrations:
            raise ValueError(
                f"default_target {name.default_target!r} is not one of {name.name}'s migrations"
            )
        _REGISTRY[name.name] = name
        return name
    if display is None or load is None:
        raise TypeError(f"register({name!r}) needs display= and load=")
    if name in _REGISTRY and not replace:
        raise ValueError(f"store kind {name!r} is already registered; pass replace=True")
    migrations = dict(migrations or {})
    if default_target is not None and default_target not in migrations:
        raise ValueError(f"default_target {default_target!r} is not one of {name}'s migrations")
    kind = Kind(
        name=name,
        display=display,
        load_ref=load,
        detect=detect,
        locate=locate,
        audit_ref=audit,
        migrations=migrations,
        default_target=default_target or next(iter(migrations), None),
        find_ref=find,
        priority=priority,
        review=review,
        verify=verify,
        capabilities=frozenset(capabilities),
        reports=tuple(reports),
        headline=tuple(headline),
        copy_of=copy_of,
    )
    _REGISTRY[name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind (tests add toy kinds and take them away again)."""
    _REGISTRY.pop(name, None)


def get(name: str) -> KindBase:
    """The kind named ``name`` (a ``Store.kind``)."""
    _load_plugins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnsupportedSchema(
            f"no store kind named {name!r}", hint=f"memlab knows {', '.join(_REGISTRY)}"
        ) from None


def lookup(name: str | None) -> KindBase | None:
    """The kind named ``name``, or None when no kind has that name (a proposal written for a
    kind whose plugin is not installed)."""
    _load_plugins()
    return _REGISTRY.get(name) if isinstance(name, str) else None


def by_kind(attr: str) -> Mapping[str, Any]:
    """A live read-only mapping of kind name -> the kind's ``attr`` field (``"reports"``,
    ``"headline"``, ``"copy_of"``), in registration order, leaving out kinds that declare
    none; plugins' kinds included."""
    if attr not in FIELDS:
        raise ValueError(f"a kind has no field {attr!r}")
    return RegistryView(
        _registered, lambda kind: getattr(kind, attr), lambda kind: bool(getattr(kind, attr))
    )


def _registered() -> Mapping[str, KindBase]:
    """The registry, plugins' kinds loaded."""
    _load_plugins()
    return _REGISTRY


def capable(name: str | None, capability: str) -> bool:
    """Whether the kind named ``name`` declares ``capability`` (False for a name no kind has)."""
    kind = lookup(name)
    return kind is not None and capability in kind.capabilities


def kinds() -> list[KindBase]:
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
        raise SourceError(
            "cannot read this folder (permission denied)",
            path=p,
            hint="memlab needs read and execute permission on it",
        )
    if not probe.is_dir:
        probe.head  # noqa: B018 - an unreadable file is StoreNotFound before any detector runs
    for kind in kinds():
        if kind.detect is None:
            continue
        reason = kind.detect(probe)
        if reason:
            return Evidence(kind.name, p, reason)
    what = "folder" if probe.is_dir else "file"
    raise UnrecognizedStore(
        f"not a store memlab knows; this {what} is none of: "
        + ", ".join(k.display for k in kinds() if k.detect is not None),
        path=p,
    )


KindBase.registered = staticmethod(kinds)
