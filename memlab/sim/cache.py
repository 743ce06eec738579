"""The result cache of the real rows: a measured cell is re-run only when something that decides
it changed.

A real cell (one scenario run against one shipped release, :mod:`memlab.sim.real`) is a
deterministic function of what it is given; two identical default ``memlab simulate`` runs give
identical verdicts and counts, only the timings differ. So each measured
:class:`~memlab.sim.scenarios.ScenarioResult` is stored under a key made of everything that
decides it (:func:`cell_key`):

* the release, and the exact package set of its venv: the name and the ``RECORD`` file (every
  installed file with its hash) of each ``*.dist-info`` in the venv's ``site-packages``, and
  the venv's ``pyvenv.cfg`` (its Python) -- :func:`env_digest`;
* the bytes of every memlab source file a cell can read -- :func:`source_files`: everything
  under ``memlab/sim`` and every memlab module it imports, transitively (``memlab/constants.py``,
  ``memlab/audits/seeds.py``, ``memlab/errors.py``, ``memlab/embed`` ...), found by reading
  the imports -- :func:`source_digest`; more than decides a cell, so an edit anywhere there
  re-runs the cells (never the other way round);
* every :class:`~memlab.sim.real.RealParams` field, the seed, the scenario code;
* the instance's digest (every field of :class:`~memlab.sim.instance.Instance` but its
  ``provenance`` notes) -- :func:`instance_digest`;
* the embedding model and precision the cosines come from (``Embedder.cache_key``).

A modelled cell (one scenario under one :class:`~memlab.sim.model.iterations.Iteration`, executed by
the world model) is cached the same way under :func:`model_cell_key`: every field of the
iteration, the scenario, the seed, the instance digest, the embedding and the source digest
(the same files as above); its entry carries ``kind="modelled"`` and is read back only as a
modelled cell of that iteration.

A replay of a store through a shipped release (``replay(store, release=...)``, measured like a
real cell) is cached the same way by :func:`cached_replay`, under :func:`replay_key`: the
release and its venv, the source digest, the store's database bytes (:func:`store_digest`) and
the embedding.

Entries are JSON files under ``$MEMLAB_CACHE_DIR/sim-results`` (default
``~/.cache/memlab/sim-results``), never beside a store. A hit comes back with ``cached=True``
and the ``measured_at`` of the run that measured it; a miss is run and stored
(``cached=False``, ``measured_at`` now). ``fresh=True`` re-runs every cell and overwrites its
entry. Every entry is signed (HMAC-SHA256) with the cache folder's own random key
(``.key``, mode 0600), and read back only when it is a regular file under
:data:`MAX_ENTRY_BYTES`, parses, carries a valid signature, and every field has its type and
names the cell its key is for; anything else (truncated, edited, another layout, the wrong
shape, a symlink, no key) is a miss, run again and overwritten, never a verdict or a crash.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import hmac
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.constants import SIM_RESULTS_FOLDER
from memlab.errors import MemlabError, SimulationError
from memlab.formats import _json
from memlab.io import write_atomic
from memlab.sim.instance import Instance
from memlab.sim.real._write_paths import parse_source
from memlab.sim.scenarios import OUTCOMES, ScenarioResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ResultCache",
    "open_cache",
    "cell_key",
    "model_cell_key",
    "env_digest",
    "source_digest",
    "instance_digest",
    "results_dir",
    "now_utc",
    "store_digest",
    "replay_key",
    "cached_replay",
]

#: Bumped when the entry layout changes (old entries then miss).
_LAYOUT = 1
_ROOT = Path(__file__).resolve().parents[1]


def results_dir() -> Path:
    """``$MEMLAB_CACHE_DIR/sim-results``, or ``~/.cache/memlab/sim-results``."""
    env = os.environ.get("MEMLAB_CACHE_DIR")
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "memlab"
    return base / SIM_RESULTS_FOLDER


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _sha(parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


_SOURCE: str | None = None


def _module_file(root: Path, module: str) -> Path | None:
    """The file of memlab module ``module`` under ``root`` (the ``memlab`` folder), or None."""
    parts = module.split(".")[1:]
    base = root.joinpath(*parts) if parts else root
    for candidate in (base.with_suffix(".py") if parts else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def _imported(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """The memlab modules ``tree`` (module ``module``) imports anywhere (module level, inside
    functions, under TYPE_CHECKING): ``from a import b`` names ``a`` and, when it is one,
    the submodule ``a.b``."""
    out: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "memlab"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "memlab":
                continue
            out.add(target)
            out |= {f"{target}.{a.name}" for a in node.names if a.name != "*"}
    return out


def source_files(root: str | Path | None = None) -> list[Path]:
    """Every memlab source file a cell can read: each ``.py`` file under ``memlab/sim`` and
    every memlab module they import, directly or through each other, with the packages above
    each (whose ``__init__`` runs on import): ``memlab/constants.py``,
    ``memlab/audits/seeds.py``, ``memlab/errors.py``, ``memlab/embed`` ... found by reading the
    imports, so a new import is covered without a list to keep. ``root``: the ``memlab``
    folder (default: this package's)."""
    root = Path(root) if root is not None else _ROOT
    seen: dict[Path, None] = {}
    todo = sorted((root / "sim").rglob("*.py"))
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = None
        rel = path.relative_to(root).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        module = ".".join(["memlab", *parts])
        for i in range(1, len(parts)):  # the packages above run first
            init = root.joinpath(*parts[:i], "__init__.py")
            if init.is_file() and init not in seen:
                todo.append(init)
        if (root / "__init__.py").is_file() and root / "__init__.py" not in seen:
            todo.append(root / "__init__.py")
        try:
            tree = parse_source(path.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue  # still hashed: its bytes are in the digest
        for name in _imported(tree, module, path.name == "__init__.py"):
            found = _module_file(root, name)
            if found is not None and found not in seen:
                todo.append(found)
    return sorted(seen)


def source_digest(root: str | Path | None = None) -> str:
    """SHA-256 over the path and bytes of every file of :func:`source_files` (computed once
    per process for this package's own sources)."""
    global _SOURCE
    if root is None and _SOURCE is not None:
        return _SOURCE
    base = Path(root) if root is not None else _ROOT
    h = hashlib.sha256()
    for path in source_files(base):
        h.update(path.relative_to(base).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    if root is None:
        _SOURCE = h.hexdigest()
    return h.hexdigest()


def env_digest(python: str | Path) -> str:
    """SHA-256 of a venv's exact package set: each ``*.dist-info`` folder's name and its
    ``RECORD`` (every installed file and its hash), ``pyvenv.cfg``, and the bytes of every
    ``.py`` file of the installed ``elfmem`` package; ``python`` is the venv's interpreter
    (``bin/python``)."""
    folder = Path(python).parent.parent
    h = hashlib.sha256()
    cfg = folder / "pyvenv.cfg"
    h.update(cfg.read_bytes() if cfg.exists() else b"-")
    records = sorted(folder.glob("lib*/python*/site-packages/*.dist-info/RECORD")) + sorted(
        folder.glob("Lib/site-packages/*.dist-info/RECORD")
    )
    for record in records:
        h.update(record.parent.name.encode() + b"\0")
        h.update(record.read_bytes() + b"\0")
    h.update(str(len(records)).encode())
    # The release's own sources, as installed: the cells run them and read them (its write
    # paths, its facts), and an edited file leaves its RECORD line unchanged.
    for package in sorted(folder.glob("lib*/python*/site-packages/elfmem")) + sorted(
        folder.glob("Lib/site-packages/elfmem")
    ):
        for path in sorted(package.rglob("*.py")):
            h.update(path.relative_to(package).as_posix().encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def instance_digest(instance: Instance) -> str:
    """SHA-256 of every field of ``instance`` but ``provenance`` (words about the fields)."""
    fields = {
        f.name: getattr(instance, f.name)
        for f in dataclasses.fields(instance)
        if f.name != "provenance"
    }
    return _sha(fields)


def cell_key(
    *, release: str, env: str, scenario: str, params: Any, seed: int, instance: str, embedding: str
) -> tuple[str, dict[str, Any]]:
    """The key of one real cell and the parts it was made of (stored with the entry)."""
    parts = {
        "layout": _LAYOUT,
        "release": release,
        "env": env,
        "source": source_digest(),
        "scenario": scenario,
        "params": dataclasses.asdict(params),
        "seed": int(seed),
        "instance": instance,
        "embedding": embedding,
    }
    return _sha(parts), parts


def model_cell_key(
    *,
    iteration: Any,
    scenario: str,
    seed: int,
    instance: str,
    embedding: str,
    source: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The key of one modelled cell and the parts it was made of: every field of the
    :class:`~memlab.sim.model.iterations.Iteration` (its name and every design choice), the
    scenario, the seed, the instance digest, the embedding (model and precision) and the
    digest of every memlab file a cell reads (``source``: :func:`source_digest` of this
    package by default; pass another's to key a modified source set). A modelled cell reads no
    :class:`~memlab.sim.real.RealParams` field (its corpus sizes come from the instance), so
    ``--scale`` is not part of its key."""
    parts = {
        "layout": _LAYOUT,
        "kind": "modelled",
        "iteration": _jsonable(_plain(dataclasses.asdict(iteration))),
        "scenario": str(scenario),
        "seed": int(seed),
        "instance": instance,
        "embedding": embedding,
        "source": source or source_digest(),
    }
    return _sha(parts), parts


def _plain(value: Any) -> Any:
    """JSON-safe copy: numpy scalars become Python numbers, tuples lists."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value


class ResultCache:
    """Real cells on disk, one JSON file per key (see the module docstring).

    ``hits`` and ``misses`` count :meth:`get` answers; ``stored`` counts :meth:`put`."""

    def __init__(self, folder: str | Path | None = None, *, fresh: bool = False) -> None:
        self.folder = Path(folder).expanduser() if folder else results_dir()
        self.fresh = bool(fresh)
        self.hits = 0
        self.misses = 0
        self.stored = 0

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> ScenarioResult | None:
        """The stored result (``cached=True``, its ``measured_at``), or None (a miss; always
        under ``fresh``)."""
        if self.fresh:
            self.misses += 1
            return None
        doc = _read_entry(self.folder, self._path(key), key)
        try:
            res = None if doc is None else _result(doc, key)
        except (ValueError, TypeError, KeyError):
            res = None
        if res is None:
            self.misses += 1
            return None
        self.hits += 1
        return res

    def put(self, key: str, parts: dict[str, Any], result: ScenarioResult) -> None:
        """Store ``result`` under ``key`` (atomically: a reader sees the old entry or the new)."""
        fields = _plain(dataclasses.asdict(result))
        fields.pop("cached", None)
        doc = {
            "layout": _LAYOUT,
            "key": key,
            "parts": parts,
            "measured_at": result.measured_at or now_utc(),
            "result": fields,
        }
        _write_entry(self.folder, self._path(key), doc)
        self.stored += 1

    def stats(self) -> dict[str, Any]:
        return {
            "folder": str(self.folder),
            "fresh": self.fresh,
            "hits": self.hits,
            "misses": self.misses,
            "stored": self.stored,
        }


#: Entries larger than this are not read (a miss): a real cell's entry is a few KB, a
#: replay's a few MB.
MAX_ENTRY_BYTES = 64 << 20
_KEY_FILE = ".key"
_STR_LISTS = ("modelled", "unstable", "assumptions")


def open_cache(
    cache: ResultCache | bool | None, fresh: bool, *, own_counts: bool = False
) -> ResultCache | None:
    """The cache a run uses, from a ``cache=`` argument: None when it is False or None; True:
    a new :class:`ResultCache` on the default folder; a ResultCache: that one, made fresh when
    ``fresh`` (``own_counts``: a new one on its folder, fresh when either is, so its hit and
    miss counts are its own: the modelled cells', beside the measured cells' in the caller's).
    Anything else is a SimulationError."""
    if cache is False or cache is None:
        return None
    if cache is True:
        return ResultCache(fresh=fresh)
    if not isinstance(cache, ResultCache):
        raise SimulationError(f"cache must be True, False or a ResultCache, not {cache!r}")
    if own_counts:
        return ResultCache(cache.folder, fresh=fresh or cache.fresh)
    if fresh:
        cache.fresh = True
    return cache


def _secret(folder: Path, *, create: bool) -> bytes | None:
    """The cache folder's private key (32 random bytes in ``<folder>/.key``, mode 0600), which
    signs every entry: an entry edited by anyone who cannot read it no longer matches its
    signature and is a miss. Created on the first write; None when absent or unreadable."""
    from memlab._files import read_regular

    path = folder / _KEY_FILE
    if create and not path.exists():
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(
                path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
            )
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(os.urandom(32))
    try:
        if path.is_symlink():
            return None
        data = read_regular(path, max_bytes=64)
    except (OSError, ValueError, MemlabError):
        return None
    return data if len(data) == 32 else None


def _canonical(doc: Any) -> bytes:
    return json.dumps(
        doc, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str, allow_nan=True
    ).encode()


def _jsonable(value: Any) -> Any:
    """``value`` as it reads back from the entry's JSON (tuples are lists, keys strings,
    anything else JSON has no type for its ``str``, as the writer's ``default=str``)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _signature(secret: bytes, doc: dict[str, Any]) -> str:
    body = {k: v for k, v in doc.items() if k != "signature"}
    return hmac.new(secret, _canonical(_jsonable(body)), hashlib.sha256).hexdigest()


def _read_entry(folder: Path, path: Path, key: str) -> dict[str, Any] | None:
    """The entry at ``path`` when it is a regular file (no symlink) under the size cap, parses
    as JSON, is of this layout, names ``key`` and carries the folder key's signature over its
    content; else None (a miss)."""
    from memlab._files import read_regular

    secret = _secret(folder, create=False)
    if secret is None:
        return None
    try:
        if path.is_symlink():
            return None
        text = read_regular(path, max_bytes=MAX_ENTRY_BYTES).decode("utf-8")
        doc, _issues = _json.loads(text)
    except (OSError, ValueError, TypeError, MemlabError):
        return None
    if not isinstance(doc, dict) or doc.get("layout") != _LAYOUT or doc.get("key") != key:
        return None
    sig = doc.get("signature")
    try:
        if not isinstance(sig, str) or not hmac.compare_digest(sig, _signature(secret, doc)):
            return None
    except (TypeError, ValueError, RecursionError):
        return None
    if not isinstance(doc.get("measured_at"), str) or not isinstance(doc.get("parts"), dict):
        return None
    return doc


def _result(doc: dict[str, Any], key: str) -> ScenarioResult | None:
    """The stored cell when every field has its type and names the cell its key is for (the
    scenario and release of ``parts`` with a measured basis, or the scenario and iteration of
    a modelled key with a modelled basis; a known outcome); else None."""
    from memlab.sim.real.releases import release_row

    fields = doc.get("result")
    parts = doc["parts"]
    if not isinstance(fields, dict) or fields.get("outcome") not in OUTCOMES:
        return None
    known = {f.name for f in dataclasses.fields(ScenarioResult)}
    if set(fields) - known or not {"scenario", "iteration", "outcome", "summary"} <= set(fields):
        return None
    modelled = parts.get("kind") == "modelled"
    if modelled:
        iteration = parts.get("iteration")
        row = iteration.get("name") if isinstance(iteration, dict) else None
        if not isinstance(row, str):
            return None
    else:
        try:
            row = release_row(str(parts.get("release")))
        except MemlabError:
            return None
    checks = [
        fields["scenario"] == parts.get("scenario"),
        fields["iteration"] == row,
        isinstance(fields["summary"], str),
        fields.get("basis") == ("modelled" if modelled else "measured"),
        isinstance(fields.get("metrics", {}), dict)
        and all(isinstance(k, str) for k in fields.get("metrics", {})),
        isinstance(fields.get("events", []), list)
        and all(isinstance(e, dict) for e in fields.get("events", [])),
        isinstance(fields.get("rule", ""), str),
        fields.get("llm") is None or isinstance(fields.get("llm"), str),
        isinstance(fields.get("impossible", False), bool),
        fields.get("measured_at") is None or isinstance(fields.get("measured_at"), str),
    ] + [
        isinstance(fields.get(n, []), list) and all(isinstance(v, str) for v in fields.get(n, []))
        for n in _STR_LISTS
    ]
    if not all(checks):
        return None
    for name in ("unstable", "assumptions"):
        if name in fields:
            fields[name] = tuple(fields[name])
    try:
        res = ScenarioResult(**fields)
    except (TypeError, ValueError):
        return None
    res.cached = True
    res.measured_at = doc["measured_at"]
    return res


# ---- replays through a shipped release ----------------------------------------------------------
def store_digest(store: Any) -> str:
    """SHA-256 of the store's database file (and its ``-wal`` file when there is one)."""
    path = Path(getattr(store, "path"))
    h = hashlib.sha256()
    for part in (path, path.with_name(path.name + "-wal")):
        if part.exists():
            h.update(part.name.encode() + b"\0")
            with part.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def replay_key(*, release: str, env: str, store: str, embedding: str) -> tuple[str, dict[str, Any]]:
    """The key of one replay through a shipped release and the parts it was made of."""
    parts = {
        "layout": _LAYOUT,
        "kind": "replay",
        "release": release,
        "env": env,
        "source": source_digest(),
        "store": store,
        "embedding": embedding,
    }
    return _sha(parts), parts


def _replay_env(release: str) -> str:
    from memlab.sim.real.releases import release_env

    return env_digest(release_env(release))


def cached_replay(
    store: Any, release: str, *, cache: ResultCache | None = None, fresh: bool = False
) -> pd.DataFrame:
    """``replay(store, release=release)`` through the result cache: a hit is the stored frame
    (same columns, dtypes and ``attrs['summary']``), a miss runs the release and stores it.
    ``attrs['cached']`` says which, ``attrs['measured_at']`` when the release ran it."""
    import pandas as pd

    from memlab.embed import get_embedder
    from memlab.sim.model.replay import replay
    from memlab.sim.real.releases import check_setting

    release = check_setting(release)
    cache = cache or ResultCache(fresh=fresh)
    key, parts = replay_key(
        release=release,
        env=_replay_env(release),
        store=store_digest(store),
        embedding=get_embedder().cache_key,
    )
    doc = None if cache.fresh else _read_entry(cache.folder, cache._path(key), key)
    frame = None if doc is None else _replay_frame(doc)
    if doc is not None and frame is not None:
        cache.hits += 1
        frame.attrs.update(cached=True, measured_at=str(doc.get("measured_at")))
        return frame
    cache.misses += 1
    frame = replay(store, release=release)
    measured_at = now_utc()
    out = {
        "layout": _LAYOUT,
        "key": key,
        "parts": parts,
        "measured_at": measured_at,
        "columns": {
            c: _plain([None if pd.isna(v) else v for v in frame[c].tolist()]) for c in frame.columns
        },
        "dtypes": {c: str(t) for c, t in frame.dtypes.items()},
        "summary": _plain(frame.attrs.get("summary")),
    }
    _write_entry(cache.folder, cache._path(key), out)
    cache.stored += 1
    frame.attrs.update(cached=False, measured_at=measured_at)
    return frame


def _replay_frame(doc: dict[str, Any]) -> "pd.DataFrame | None":
    """A stored replay's frame when its shape holds (columns: lists of one length, dtypes for
    exactly those columns, a summary mapping or None); else None (a miss)."""
    import pandas as pd

    columns, dtypes, summary = doc.get("columns"), doc.get("dtypes"), doc.get("summary")
    if not (
        isinstance(columns, dict)
        and isinstance(dtypes, dict)
        and set(columns) == set(dtypes)
        and all(isinstance(t, str) for t in dtypes.values())
        and all(isinstance(v, list) for v in columns.values())
        and len({len(v) for v in columns.values()}) <= 1
        and (summary is None or isinstance(summary, dict))
    ):
        return None
    try:
        frame = pd.DataFrame(columns).astype(dtypes)
    except Exception:  # noqa: BLE001 - any dtype pandas refuses makes the entry a miss
        return None
    frame.attrs["summary"] = summary
    return frame


def _write_entry(folder: Path, path: Path, doc: dict[str, Any]) -> None:
    """Write one cache entry atomically, signed with the folder's key: a reader sees the old
    entry or the new, never half."""
    secret = _secret(folder, create=True)
    if secret is None:
        raise SimulationError(
            f"the result cache's key {folder / _KEY_FILE} cannot be read",
            hint="delete the cache folder to start a new one",
        )
    doc = {**doc, "signature": _signature(secret, doc)}
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, _json.dumps(doc, default=str).encode("utf-8"), mode=0o600)
