"""The payloads of a local Qdrant folder (``QdrantClient(path=...)``, mem0's default vector
store), read without running any pickle code.

Qdrant's local mode keeps each collection in ``collection/<name>/storage.sqlite``, table
``points(id TEXT, point BLOB)``: ``point`` is a pickled ``PointStruct`` (its ``__dict__``
holds ``id``, ``vector`` and ``payload``). Unpickling untrusted bytes can run any code, so
:class:`_Inert` resolves every class the pickle names to an inert stand-in that only records
its arguments and state: the plain values (dicts, lists, strings, numbers) come out as they
are, and nothing outside this module is ever called.
"""

from __future__ import annotations

import io
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlab._files import read_regular
from memlab.formats._json import loads as json_loads
from memlab.sources._sqlite_snapshot import read_snapshot
from memlab.store import Problems

__all__ = ["Point", "read_qdrant", "inert_loads", "MAX_POINT_BYTES"]

#: A point larger than this is not read (a 384-float vector and its payload take ~4 KB).
MAX_POINT_BYTES = 4 << 20


class _Stub:
    """What any class named in the pickle becomes: it keeps its constructor arguments and
    its state, and does nothing else."""

    qualname = ""
    args: tuple[Any, ...] = ()
    state: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.state: Any = None

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def __setitem__(self, key: Any, value: Any) -> None:  # SETITEM on a stub dict subclass
        if not isinstance(self.state, dict):
            self.state = {}
        self.state[key] = value

    def append(self, value: Any) -> None:  # APPEND on a stub list subclass
        self.args = (*self.args, value)

    def extend(self, values: Any) -> None:
        self.args = (*self.args, *values)


class _Inert(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return type(name, (_Stub,), {"qualname": f"{module}.{name}"})

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("persistent ids are not read")


def inert_loads(data: bytes) -> Any:
    """``pickle.loads`` that builds only plain values and :class:`_Stub` records."""
    return _Inert(io.BytesIO(data)).load()


def _plain(value: Any) -> Any:
    """A stub's recorded state as plain values (``PointStruct`` -> its ``__dict__``)."""
    if isinstance(value, _Stub):
        state = value.state
        if isinstance(state, tuple) and state and isinstance(state[0], dict):
            state = state[0]  # (__dict__, slots) form
        if isinstance(state, dict) and isinstance(state.get("__dict__"), dict):
            state = state["__dict__"]  # pydantic v2's __getstate__
        return _plain(state) if state is not None else None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@dataclass
class Point:
    collection: str
    point_id: str
    payload: dict[str, Any]
    file: Path


def read_qdrant(folder: Path, problems: Problems) -> list[Point]:
    """Every point's payload in every collection of the local Qdrant ``folder``; what cannot
    be read is a problem row naming the file."""
    out: list[Point] = []
    meta = folder / "meta.json"
    names: list[str] = []
    if meta.is_file():
        try:
            doc, issues = json_loads(read_regular(meta, max_bytes=1 << 20).decode("utf-8"))
            for kind, message in issues:
                problems.add(meta, kind, message)
            names = sorted(doc.get("collections") or {})
        except (OSError, ValueError, AttributeError) as exc:
            problems.add(meta, "bad_vector_store", f"Qdrant meta.json unreadable: {exc}")
    coll_root = folder / "collection"
    if coll_root.is_dir():
        names = sorted(set(names) | {p.name for p in coll_root.iterdir() if p.is_dir()})
    for name in names:
        db = coll_root / name / "storage.sqlite"
        if not db.is_file():
            problems.add(db, "bad_vector_store", f"collection {name!r} has no storage.sqlite")
            continue
        try:
            rows = read_snapshot(db, _points_reader)
        except Exception as exc:  # noqa: BLE001 - any failure is this file's problem row
            problems.add(db, "bad_vector_store", f"not a Qdrant points table: {exc}")
            continue
        for rowid, blob in rows:
            where = f"{db} points row {rowid}"
            if not isinstance(blob, bytes) or len(blob) > MAX_POINT_BYTES:
                problems.add(db, "bad_point", f"{where}: not a point blob of a readable size")
                continue
            try:
                point = _plain(inert_loads(blob))
            except Exception as exc:  # noqa: BLE001 - a damaged pickle is a problem row
                problems.add(db, "bad_point", f"{where}: unreadable pickle ({type(exc).__name__})")
                continue
            if not isinstance(point, dict) or not isinstance(point.get("payload"), dict):
                problems.add(db, "bad_point", f"{where}: no payload in the point")
                continue
            out.append(Point(name, str(point.get("id")), point["payload"], db))
    return out


def _points_reader(snap: Any) -> list[tuple[int, Any]]:
    conn = snap.connect()
    try:
        return list(conn.execute("SELECT rowid, point FROM points ORDER BY rowid"))
    finally:
        conn.close()
