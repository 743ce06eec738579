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
* the source text of the driver, the operator scripts and every other module under
  ``memlab/sim`` (plus ``memlab/_files.py``, ``memlab/_tmp.py``, ``memlab/_git.py`` and
  ``memlab/errors.py``, which they use) -- :func:`source_digest`; more than decides a cell,
  so an edit anywhere there re-runs the cells (never the other way round);
* every :class:`~memlab.sim.real.RealParams` field, the seed, the scenario code;
* the instance's digest (every field of :class:`~memlab.sim.instance.Instance` but its
  ``provenance`` notes) -- :func:`instance_digest`;
* the embedding model and precision the cosines come from (``Embedder.cache_key``).

A replay of a store through a shipped release (``replay(store, release=...)``, measured like a
real cell) is cached the same way by :func:`cached_replay`, under :func:`replay_key`: the
release and its venv, the source digest, the store's database bytes (:func:`store_digest`) and
the embedding.

Entries are JSON files under ``$MEMLAB_CACHE_DIR/sim-results`` (default
``~/.cache/memlab/sim-results``), never beside a store. A hit comes back with ``cached=True``
and the ``measured_at`` of the run that measured it; a miss is run and stored
(``cached=False``, ``measured_at`` now). ``fresh=True`` re-runs every cell and overwrites its
entry. An entry that cannot be read back (truncated, edited, another layout) is a miss.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.constants import SIM_RESULTS_FOLDER
from memlab.formats import _json
from memlab.sim.instance import Instance
from memlab.sim.scenarios import OUTCOMES, ScenarioResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ResultCache", "cell_key", "env_digest", "source_digest", "instance_digest",
           "results_dir", "now_utc", "store_digest", "replay_key", "cached_replay"]

#: Bumped when the entry layout changes (old entries then miss).
_LAYOUT = 1
_ROOT = Path(__file__).resolve().parents[1]
#: Source files outside memlab/sim whose text the real rows run.
_SHARED = ("_files.py", "_tmp.py", "_git.py", "errors.py")


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


def source_digest() -> str:
    """SHA-256 over the path and text of every ``.py`` file under ``memlab/sim`` and the shared
    modules the real rows use (computed once per process)."""
    global _SOURCE
    if _SOURCE is None:
        h = hashlib.sha256()
        files = sorted((_ROOT / "sim").rglob("*.py")) + [_ROOT / name for name in _SHARED]
        for path in files:
            h.update(path.relative_to(_ROOT).as_posix().encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
        _SOURCE = h.hexdigest()
    return _SOURCE


def env_digest(python: str | Path) -> str:
    """SHA-256 of a venv's exact package set: each ``*.dist-info`` folder's name and its
    ``RECORD`` (every installed file and its hash), and ``pyvenv.cfg``; ``python`` is the
    venv's interpreter (``bin/python``)."""
    folder = Path(python).parent.parent
    h = hashlib.sha256()
    cfg = folder / "pyvenv.cfg"
    h.update(cfg.read_bytes() if cfg.exists() else b"-")
    records = sorted(folder.glob("lib*/python*/site-packages/*.dist-info/RECORD")) + \
        sorted(folder.glob("Lib/site-packages/*.dist-info/RECORD"))
    for record in records:
        h.update(record.parent.name.encode() + b"\0")
        h.update(record.read_bytes() + b"\0")
    h.update(str(len(records)).encode())
    return h.hexdigest()


def instance_digest(instance: Instance) -> str:
    """SHA-256 of every field of ``instance`` but ``provenance`` (words about the fields)."""
    fields = {f.name: getattr(instance, f.name) for f in dataclasses.fields(instance)
              if f.name != "provenance"}
    return _sha(fields)


def cell_key(*, release: str, env: str, scenario: str, params: Any, seed: int,
             instance: str, embedding: str) -> tuple[str, dict[str, Any]]:
    """The key of one real cell and the parts it was made of (stored with the entry)."""
    parts = {"layout": _LAYOUT, "release": release, "env": env, "source": source_digest(),
             "scenario": scenario, "params": dataclasses.asdict(params), "seed": int(seed),
             "instance": instance, "embedding": embedding}
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
        try:
            text = self._path(key).read_text(encoding="utf-8")
            doc, _issues = _json.loads(text)
            res = _result(doc, key)
        except (OSError, ValueError, TypeError, KeyError):
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
        doc = {"layout": _LAYOUT, "key": key, "parts": parts,
               "measured_at": result.measured_at or now_utc(), "result": fields}
        _write_entry(self._path(key), doc)
        self.stored += 1

    def stats(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "fresh": self.fresh, "hits": self.hits,
                "misses": self.misses, "stored": self.stored}


def _result(doc: Any, key: str) -> ScenarioResult | None:
    if not isinstance(doc, dict) or doc.get("layout") != _LAYOUT or doc.get("key") != key:
        return None
    fields = doc.get("result")
    if not isinstance(fields, dict) or fields.get("outcome") not in OUTCOMES:
        return None
    known = {f.name for f in dataclasses.fields(ScenarioResult)}
    if set(fields) - known:
        return None
    for name in ("unstable", "assumptions"):
        if name in fields:
            fields[name] = tuple(fields[name])
    res = ScenarioResult(**fields)
    res.cached = True
    res.measured_at = str(doc.get("measured_at"))
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
    parts = {"layout": _LAYOUT, "kind": "replay", "release": release, "env": env,
             "source": source_digest(), "store": store, "embedding": embedding}
    return _sha(parts), parts


def _replay_env(release: str) -> str:
    from memlab.sim.releases import release_env

    return env_digest(release_env(release))


def cached_replay(store: Any, release: str, *, cache: ResultCache | None = None,
                  fresh: bool = False) -> pd.DataFrame:
    """``replay(store, release=release)`` through the result cache: a hit is the stored frame
    (same columns, dtypes and ``attrs['summary']``), a miss runs the release and stores it.
    ``attrs['cached']`` says which, ``attrs['measured_at']`` when the release ran it."""
    import pandas as pd

    from memlab.embed import get_embedder
    from memlab.sim.releases import check_setting
    from memlab.sim.replay import replay

    release = check_setting(release)
    cache = cache or ResultCache(fresh=fresh)
    key, parts = replay_key(release=release, env=_replay_env(release),
                            store=store_digest(store), embedding=get_embedder().cache_key)
    doc = None
    if not cache.fresh:
        try:
            doc, _issues = _json.loads(cache._path(key).read_text(encoding="utf-8"))
            if not (isinstance(doc, dict) and doc.get("key") == key
                    and doc.get("layout") == _LAYOUT):
                doc = None
        except (OSError, ValueError, TypeError):
            doc = None
    if doc is not None:
        try:
            frame = pd.DataFrame(doc["columns"]).astype(doc["dtypes"])
            frame.attrs["summary"] = doc["summary"]
        except (KeyError, TypeError, ValueError):
            doc = None
    if doc is not None:
        cache.hits += 1
        frame.attrs.update(cached=True, measured_at=str(doc.get("measured_at")))
        return frame
    cache.misses += 1
    frame = replay(store, release=release)
    measured_at = now_utc()
    out = {"layout": _LAYOUT, "key": key, "parts": parts, "measured_at": measured_at,
           "columns": {c: _plain([None if pd.isna(v) else v for v in frame[c].tolist()])
                       for c in frame.columns},
           "dtypes": {c: str(t) for c, t in frame.dtypes.items()},
           "summary": _plain(frame.attrs.get("summary"))}
    _write_entry(cache._path(key), out)
    cache.stored += 1
    frame.attrs.update(cached=False, measured_at=measured_at)
    return frame


def _write_entry(path: Path, doc: dict[str, Any]) -> None:
    """Write one cache entry atomically: a reader sees the old entry or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(_json.dumps(doc, default=str))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
