"""The mem0 audit: each memory's life, churn over time, rewrites per surviving memory,
deletions without a time, near-duplicates among current memories, per user/agent/run.

Every figure comes from the ``history`` event log (mem0's own record of every ADD, UPDATE and
DELETE) and, where the vector store is on disk, its payloads (the only place mem0 keeps the
user/agent/run ids). A figure that cannot be checked is null, never 0: the ids of a memory
whose payload is gone (deleted, or no vector store beside the database) are unknown, and
near-duplicates are null when ``near_duplicates=False``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab._metrics import value
from memlab.audits._base import Audit
from memlab.constants import NEAR_DUP_THRESHOLD
from memlab.kinds.mem0._load import ID_FIELDS
from memlab.store import Store, parse_as_of

__all__ = ["audit_mem0", "current_texts"]


def current_texts(store: Store) -> pd.DataFrame:
    """The current (not deleted) memories: memory_id, text (the store's payload text where it
    is on disk, else the last text in ``history``), first_added, last_event_at, rewrites."""
    mem = store.memories
    cur = mem[~mem["deleted"]].copy()
    if len(store.payloads):
        text = store.payloads.set_index("memory_id")["data"]
        cur["text"] = cur["memory_id"].map(text).fillna(cur["text"]).astype("string")
    return cur.reset_index(drop=True)


def _near_duplicates(cur: pd.DataFrame, threshold: float) -> pd.DataFrame:
    cols = ["memory_a", "memory_b", "similarity", "text_a", "text_b"]
    texts = cur["text"].fillna("").astype(str).tolist()
    if len(texts) < 2:
        return pd.DataFrame(columns=cols)
    from memlab.embed import NeighborIndex, get_embedder

    pairs = NeighborIndex(get_embedder().encode(texts)).pairs_above(threshold)
    ids = cur["memory_id"].astype(str).tolist()
    rows = [
        (ids[int(p.i)], ids[int(p.j)], float(p.similarity), texts[int(p.i)], texts[int(p.j)])
        for p in pairs.itertuples(index=False)
    ]
    return pd.DataFrame(rows, columns=cols)


def _scopes(mem: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for field in ID_FIELDS:
        for name, g in mem.groupby(mem[field].astype("string").fillna("(unknown)"), sort=True):
            cur = g[~g["deleted"]]
            rows.append(
                {
                    "scope": field,
                    "id": name,
                    "memories": len(g),
                    "current": len(cur),
                    "deleted": int(g["deleted"].sum()),
                    "rewrites": int(g["rewrites"].sum()),
                }
            )
    return pd.DataFrame(rows, columns=["scope", "id", "memories", "current", "deleted", "rewrites"])


def _by_actor(hist: pd.DataFrame, recorded: bool) -> pd.DataFrame:
    """Events per actor and role; ``(none)`` where mem0 recorded none for the event, ``(not
    recorded)`` where the version's table has no such column."""
    cols = ["actor_id", "role", "ADD", "UPDATE", "DELETE"]
    if hist.empty:
        return pd.DataFrame(columns=cols)
    empty = "(none)" if recorded else "(not recorded)"
    h = hist.assign(
        actor_id=hist["actor_id"].fillna(empty),
        role=hist["role"].fillna(empty),
        event=hist["event"].astype("string"),
    )
    t = pd.crosstab([h["actor_id"], h["role"]], h["event"])
    for e in ("ADD", "UPDATE", "DELETE"):
        if e not in t.columns:
            t[e] = 0
    return t[["ADD", "UPDATE", "DELETE"]].reset_index().rename_axis(columns=None)


def _churn(hist: pd.DataFrame) -> pd.DataFrame:
    """Events per ISO week (its Monday, UTC), untimed events in a row of their own (week
    null, last)."""
    cols = ["week", "ADD", "UPDATE", "DELETE", "events"]
    rows: dict[str | None, dict[str, int]] = {}
    for at, event in zip(hist["at"], hist["event"].astype("string")):
        week = None if pd.isna(at) else (at - pd.Timedelta(days=at.weekday())).date().isoformat()
        row = rows.setdefault(week, {"ADD": 0, "UPDATE": 0, "DELETE": 0})
        if event in row:
            row[event] += 1
    order = sorted(k for k in rows if k is not None) + ([None] if None in rows else [])
    out = pd.DataFrame(
        [{"week": w, **rows[w], "events": sum(rows[w].values())} for w in order], columns=cols
    )
    out["week"] = out["week"].astype("string")
    return out


def audit_mem0(
    store: Store,
    *,
    as_of: Any = None,
    near_duplicates: bool = True,
    threshold: float = NEAR_DUP_THRESHOLD,
) -> Audit:
    """Tables: ``lives`` (one row per memory: added, rewritten how often, deleted, when, by
    whom), ``churn`` (events per week; untimed events in a row with a null week),
    ``rewritten`` (the memories rewritten, most first), ``untimed_deletions``,
    ``near_duplicates`` (pairs of current memories at cosine >= ``threshold``, memlab's
    all-MiniLM-L6-v2), ``scopes`` (per user_id / agent_id / run_id), ``actors`` (events per
    actor and role, where mem0 recorded them) and ``problems``. ``as_of`` bounds the ages."""
    hist, mem = store.history, store.memories
    now = parse_as_of(as_of) if as_of is not None else None
    deletes = hist[hist["event"] == "DELETE"]
    cur = current_texts(store)
    untimed = deletes[deletes["at"].isna()][["seq", "memory_id", "old_memory"]].reset_index(
        drop=True
    )
    dupes = _near_duplicates(cur, threshold) if near_duplicates else None
    lives = mem.drop(columns=["text"]).copy()
    if now is not None:
        age = ((now - lives["first_added"]).dt.total_seconds() / 86400).round(1)
        # a memory first added after ``as_of`` has no age then: null, never a negative age
        lives["age_days"] = age.where(age >= 0)
    rewritten = mem[mem["rewrites"] > 0].sort_values(
        ["rewrites", "memory_id"], ascending=[False, True]
    )[["memory_id", "rewrites", "deleted", "text"]]
    times = hist["at"].dropna()
    fields: dict[str, Any] = {
        "history_events": len(hist),
        "memories_ever": len(mem),
        "memories_current": len(cur),
        "memories_deleted": int(mem["deleted"].sum()),
        "rewrites": int((hist["event"] == "UPDATE").sum()),
        "unchanged_rewrites": int(
            (
                (hist["event"] == "UPDATE")
                & hist["old_memory"].notna()
                & (hist["old_memory"] == hist["new_memory"]).fillna(False)
            ).sum()
        ),
        "rewritten_memories": int((mem["rewrites"] > 0).sum()),
        "surviving_rewrites": int(cur["rewrites"].sum()),
        "deletions": len(deletes),
        "deletions_without_time": len(untimed),
        "near_duplicate_pairs": None if dupes is None else len(dupes),
        "active_days": (
            round((times.max() - times.min()).total_seconds() / 86400, 2) if len(times) else None
        ),
        "memories_unscoped": (
            int(cur[list(ID_FIELDS)].isna().all(axis=1).sum()) if len(store.payloads) else None
        ),
        "problems": len(store.problems),
    }
    for name in (
        "rewrites_per_surviving_memory",
        "events_per_surviving_memory",
        "untimed_deletion_share",
    ):
        fields[name] = value(name, fields)
    tables = {
        "lives": lives,
        "churn": _churn(hist),
        "rewritten": rewritten.reset_index(drop=True),
        "untimed_deletions": untimed,
        "scopes": _scopes(mem),
        "actors": _by_actor(hist, "actor_id" in store.meta.get("history_columns", [])),
        "problems": store.problems,
    }
    if dupes is not None:
        tables["near_duplicates"] = dupes
    return Audit(
        kind=store.kind,
        store_name=store.name,
        tables=tables,
        headline=fields,
        summary_text=_summary(store, fields, tables),
        notes=_notes(store),
    )


def _notes(store: Store) -> list[str]:
    notes = [f"history table shape {store.meta.get('history_schema')}"]
    if not store.meta.get("vector_store"):
        notes.append(
            "no vector store on disk beside the database: user/agent/run ids are not known"
        )
    return notes


def _fmt(v: Any, digits: int = 2) -> str:
    if v is None:
        return "not checked"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _summary(store: Store, f: dict[str, Any], tables: dict[str, pd.DataFrame]) -> str:
    lines = [
        f"mem0 store {store.path} (history {store.meta.get('history_schema')}, "
        f"{f['history_events']} events)",
        f"  memories: {f['memories_ever']} ever, {f['memories_current']} current, "
        f"{f['memories_deleted']} deleted",
        f"  rewrites: {f['rewrites']} UPDATE events on {f['rewritten_memories']} memories "
        f"({f['unchanged_rewrites']} left the text as it was); "
        f"{_fmt(f['rewrites_per_surviving_memory'])} per surviving memory, "
        f"{_fmt(f['events_per_surviving_memory'])} events per surviving memory",
        f"  deletions: {f['deletions']}, {f['deletions_without_time']} without a time",
        f"  near-duplicate pairs among current memories: {_fmt(f['near_duplicate_pairs'])}",
        f"  active over {_fmt(f['active_days'])} days; problems: {f['problems']}",
    ]
    churn = tables["churn"]
    if len(churn):
        lines.append("  churn per week (ADD/UPDATE/DELETE):")
        for r in churn.itertuples(index=False):
            week = "no time" if pd.isna(r.week) else r.week
            lines.append(f"    {week}: {r.ADD}/{r.UPDATE}/{r.DELETE}")
    scopes = tables["scopes"]
    known = scopes[scopes["id"] != "(unknown)"]
    if len(known):
        lines.append("  per scope (current of ever, rewrites):")
        for r in known.itertuples(index=False):
            lines.append(f"    {r.scope}={r.id}: {r.current} of {r.memories}, {r.rewrites}")
    return "\n".join(lines) + "\n"
