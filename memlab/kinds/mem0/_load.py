"""Load a mem0 ``history.db`` (and the local Qdrant payloads beside it) into typed frames.

Frames: ``history`` (every event, in the order mem0 wrote them: ``seq`` is the SQLite rowid),
``memories`` (one row per memory_id: its life rebuilt from ``history``, with the ids and text
of its vector-store payload where that is on disk), ``messages`` (mem0's short message table,
empty where the version has none) and ``payloads`` (every point of the vector store).

The ``history`` table has had three shapes; all are read (``meta["history_schema"]``):

* ``v0``: ``prev_value, new_value, timestamp`` (the oldest; mem0 0.1.x migrates it away),
* ``v1``: ``old_memory, new_memory, new_value, created_at, updated_at, is_deleted`` (0.1.x),
* ``v2``: ``v1`` without ``new_value``, plus ``actor_id, role`` (1.x, 2.x).

The database is read through :func:`~memlab.sources._sqlite_snapshot.read_snapshot`: nothing in
its folder is created or changed, and a damaged or truncated file is a CorruptStore naming it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd

from memlab._escape import quote
from memlab.errors import StoreNotFound, UnsupportedSchema
from memlab.kinds.mem0._qdrant import read_qdrant
from memlab.sources._sqlite_snapshot import BadText, decode_text, read_snapshot
from memlab.store import Problems, Store

__all__ = ["load_mem0", "history_schema", "EVENTS", "ID_FIELDS"]

EVENTS = ("ADD", "UPDATE", "DELETE")
#: The payload fields naming whose memory it is.
ID_FIELDS = ("user_id", "agent_id", "run_id")
_PAYLOAD_KEYS = ("data", "hash", "created_at", "updated_at", "actor_id", "role", *ID_FIELDS)
#: history column -> the SQL that reads it, per schema.
_SHAPES: dict[str, dict[str, str]] = {
    "v0": {
        "old_memory": "prev_value",
        "new_memory": "new_value",
        "created_at": "timestamp",
        "updated_at": "timestamp",
    },
    "v1": {},
    "v2": {},
}
_COLUMNS = (
    "id",
    "memory_id",
    "old_memory",
    "new_memory",
    "event",
    "created_at",
    "updated_at",
    "is_deleted",
    "actor_id",
    "role",
)


def history_schema(columns: set[str]) -> str | None:
    """Which shape of mem0's ``history`` table ``columns`` are, or None (not mem0's)."""
    if not {"memory_id", "event"} <= columns:
        return None
    if "prev_value" in columns and "old_memory" not in columns:
        return "v0"
    if "old_memory" in columns and "new_memory" in columns:
        return "v2" if "actor_id" in columns or "new_value" not in columns else "v1"
    return None


def _read(snap: Any) -> tuple[dict[str, list[str]], list[tuple], list[str], list[tuple]]:
    conn = snap.connect()
    conn.text_factory = decode_text
    try:
        tables = {
            r[0]: [c[1] for c in conn.execute(f"PRAGMA table_info({quote(r[0])})")]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if r[0] in ("history", "messages")
        }
        cols = set(tables.get("history", []))
        shape = history_schema(cols)
        if shape is None:
            return tables, [], [], []
        select = []
        for name in _COLUMNS:
            src = _SHAPES[shape].get(name, name)
            select.append(quote(src) if src in cols else "NULL")
        extra = ["new_value"] if "new_value" in cols and shape != "v0" else []
        select += [quote(c) for c in extra]
        sql = "SELECT rowid, " + ", ".join(select) + " FROM history"
        rows = list(conn.execute(sql + " ORDER BY rowid"))
        mcols = tables.get("messages", [])
        want = ["id", "session_scope", "role", "content", "name", "created_at"]
        msgs: list[tuple] = []
        if mcols:
            msel = ", ".join(quote(c) if c in mcols else "NULL" for c in want)
            msgs = list(conn.execute(f"SELECT {msel} FROM messages ORDER BY rowid"))
        return tables, rows, extra, msgs
    finally:
        conn.close()


def _times(values: pd.Series, what: str, problems: Problems, path: Path) -> pd.Series:
    text = values.astype("string")
    out = pd.to_datetime(text, errors="coerce", utc=True, format="ISO8601")
    bad = text.notna() & (text.str.strip() != "") & out.isna()
    for v in text[bad].unique():
        problems.add(path, "bad_time", f"history.{what}: {v!r} is not an ISO time")
    return out


def _clean(rows: list[tuple], path: Path, problems: Problems, table: str) -> list[tuple]:
    """``rows`` with a BLOB where text belongs decoded like TEXT; each row holding text that
    is not valid UTF-8 (shown with U+FFFD) is a ``bad_text`` problem row."""
    out = []
    for n, row in enumerate(rows, 1):
        row = tuple(decode_text(bytes(v)) if isinstance(v, (bytes, memoryview)) else v for v in row)
        if any(type(v) is BadText for v in row):
            problems.add(path, "bad_text", f"{table} row {n}: text is not valid UTF-8")
        out.append(row)
    return out


def load_mem0(path: str | Path, *, vectors: str | Path | None = None) -> Store:
    """Load a mem0 ``history.db`` (or the folder holding it) read-only.

    ``vectors`` is the local Qdrant folder (``QdrantClient(path=...)``) holding the current
    memories' payloads; by default a ``qdrant`` folder beside the database, where there is one.
    Without one the ``payloads`` frame is empty and the ids a payload holds are null (not
    known), never guessed.

    Raises StoreNotFound, CorruptStore (truncated, damaged, not SQLite) and UnsupportedSchema
    (no mem0 ``history`` table), each naming the file.
    """
    p = Path(path).expanduser()
    if p.is_dir():  # a folder holding history.db (and qdrant/): the database in it
        p = p / "history.db"
    if not p.exists():
        raise StoreNotFound("no such file", path=p)
    tables, rows, extra, msgs = read_snapshot(p, _read)
    shape = history_schema(set(tables.get("history", [])))
    if shape is None:
        raise UnsupportedSchema(
            "no mem0 history table (memory_id, event, old/new memory)",
            path=p,
            hint="memlab reads the history.db mem0 writes (~/.mem0/history.db)",
        )
    problems = Problems()
    rows = _clean(rows, p, problems, "history")
    msgs = _clean(msgs, p, problems, "messages")
    names = ["seq", *_COLUMNS, *extra]
    hist = pd.DataFrame(rows, columns=names)
    for col in ("id", "memory_id", "old_memory", "new_memory", "actor_id", "role", *extra):
        hist[col] = hist[col].astype("string")
    hist["seq"] = hist["seq"].astype("int64")
    unknown = hist[~hist["event"].isin(EVENTS)]
    for _, r in unknown.iterrows():
        problems.add(p, "unknown_event", f"history row {r.seq}: event {r.event!r}")
    known = hist["event"].astype("string").where(hist["event"].isin(EVENTS))
    hist["event"] = pd.Categorical(known, categories=list(EVENTS))
    hist["created_at"] = _times(hist["created_at"], "created_at", problems, p)
    hist["updated_at"] = _times(hist["updated_at"], "updated_at", problems, p)
    hist["is_deleted"] = pd.to_numeric(hist["is_deleted"], errors="coerce").astype("Int64") > 0
    # when the event happened: an ADD when the memory was created, a rewrite or deletion
    # when it was last updated; null where mem0 wrote no time (0.1.x deletions)
    hist["at"] = hist["updated_at"].where(hist["event"] != "ADD", hist["created_at"])
    hist.loc[(hist["event"] == "ADD") & hist["at"].isna(), "at"] = hist["updated_at"]
    hist.loc[hist["memory_id"].isna(), "memory_id"] = pd.NA
    for _, r in hist[hist["memory_id"].isna()].iterrows():
        problems.add(p, "no_memory_id", f"history row {r.seq}: no memory_id")

    folder = Path(vectors).expanduser() if vectors is not None else p.parent / "qdrant"
    points = []
    if vectors is not None and not folder.is_dir():
        raise StoreNotFound("no Qdrant folder here", path=folder)
    if folder.is_dir():
        points = read_qdrant(folder, problems)
    payloads = _payloads(points, problems)
    memories = _memories(hist, payloads, problems, p, have_store=folder.is_dir())
    messages = pd.DataFrame(
        msgs, columns=["id", "session_scope", "role", "content", "name", "created_at"]
    ).astype("string")
    messages["created_at"] = pd.to_datetime(
        messages["created_at"], errors="coerce", utc=True, format="ISO8601"
    )
    return Store(
        kind="mem0",
        path=p,
        frames={"history": hist, "memories": memories, "messages": messages, "payloads": payloads},
        problems=problems.frame(),
        meta={
            "history_schema": shape,
            "history_columns": tables.get("history", []),
            "has_messages": "messages" in tables,
            "vector_store": str(folder) if folder.is_dir() else None,
        },
    )


def _payloads(points: list[Any], problems: Problems) -> pd.DataFrame:
    rows = []
    for pt in points:
        pl = pt.payload
        if not isinstance(pl.get("data"), str):
            problems.add(pt.file, "not_a_memory", f"point {pt.point_id}: payload has no text data")
            continue
        row: dict[str, Any] = {"memory_id": pt.point_id, "collection": pt.collection}
        for k in _PAYLOAD_KEYS:
            v = pl.get(k)
            row[k] = None if v is None else str(v)
        rest = {k: v for k, v in pl.items() if k not in _PAYLOAD_KEYS and k != "text_lemmatized"}
        row["metadata"] = json.dumps(rest, sort_keys=True, default=str) if rest else None
        want = hashlib.md5(pl["data"].encode("utf-8", "replace")).hexdigest()
        row["hash_ok"] = None if row["hash"] is None else row["hash"] == want
        if row["hash_ok"] is False:
            problems.add(pt.file, "hash_mismatch", f"point {pt.point_id}: hash is not md5(data)")
        rows.append(row)
    cols = ["memory_id", "collection", *_PAYLOAD_KEYS, "metadata", "hash_ok"]
    df = pd.DataFrame(rows, columns=cols)
    for c in cols:
        if c != "hash_ok":
            df[c] = df[c].astype("string")
    df["hash_ok"] = df["hash_ok"].astype("boolean")
    for c in ("created_at", "updated_at"):
        df[c] = pd.to_datetime(df[c], errors="coerce", utc=True, format="ISO8601")
    return df


def _memories(
    hist: pd.DataFrame, payloads: pd.DataFrame, problems: Problems, path: Path, *, have_store: bool
) -> pd.DataFrame:
    by_id = {r.memory_id: r for r in payloads.itertuples(index=False)}
    rows = []
    for mid, ev in hist[hist["memory_id"].notna()].groupby("memory_id", sort=False):
        ev = ev.sort_values("seq")
        kinds = ev["event"].astype("string").tolist()
        adds = ev[ev["event"] == "ADD"]
        dels = ev[ev["event"] == "DELETE"]
        last = ev.iloc[-1]
        if adds.empty:
            problems.add(path, "no_add", f"memory {mid}: events without an ADD")
        if not dels.empty and last["event"] != "DELETE":
            problems.add(path, "event_after_delete", f"memory {mid}: events after its DELETE")
        texts = ev["new_memory"].dropna()
        pl = by_id.get(mid)
        deleted = bool(not dels.empty)
        rows.append(
            {
                "memory_id": mid,
                "text": texts.iloc[-1] if len(texts) else None,
                "first_added": adds["at"].min() if not adds.empty else pd.NaT,
                "last_event": kinds[-1],
                "last_event_at": last["at"],
                "events": len(ev),
                "rewrites": int((ev["event"] == "UPDATE").sum()),
                "deleted": deleted,
                "deleted_at": dels["at"].iloc[-1] if deleted else pd.NaT,
                "actor_id": _last(ev["actor_id"]),
                "role": _last(ev["role"]),
                "user_id": None if pl is None else pl.user_id,
                "agent_id": None if pl is None else pl.agent_id,
                "run_id": None if pl is None else pl.run_id,
                "in_vector_store": (mid in by_id) if have_store else None,
            }
        )
        if pl is not None and deleted:
            problems.add(
                path, "deleted_but_stored", f"memory {mid}: deleted in history, in the store"
            )
        if pl is not None and not deleted and texts.size and pl.data != texts.iloc[-1]:
            problems.add(path, "text_differs", f"memory {mid}: store text differs from history")
    cols = {
        "memory_id": "string",
        "text": "string",
        "first_added": "datetime64[ns, UTC]",
        "last_event": "category",
        "last_event_at": "datetime64[ns, UTC]",
        "events": "int64",
        "rewrites": "int64",
        "deleted": "bool",
        "deleted_at": "datetime64[ns, UTC]",
        "actor_id": "string",
        "role": "string",
        "user_id": "string",
        "agent_id": "string",
        "run_id": "string",
        "in_vector_store": "boolean",
    }
    df = pd.DataFrame(rows, columns=list(cols))
    for c, t in cols.items():
        df[c] = df[c].astype(t) if not t.startswith("datetime") else pd.to_datetime(df[c], utc=True)
    in_hist = set(df["memory_id"].dropna())
    for pl in payloads.itertuples(index=False):
        if pl.memory_id not in in_hist:
            problems.add(path, "no_history", f"memory {pl.memory_id}: in the store, not in history")
    return df


def _last(values: pd.Series) -> Any:
    v = values.dropna()
    return v.iloc[-1] if len(v) else None
