"""Reviewable units of a store: the things a proposal can keep, merge, archive or restore.

Every store kind becomes one frame with the same columns, so the analyses in ``_build`` do not
care where a unit came from:

========== =====================================================================================
uid        block id (elfmem DB, substrate, agent file) or repo path (memfs files)
unit       ``block`` or ``file``
file       repo-relative file holding the unit (None for database rows)
title      a short label: first line, heading or memfs label
text       what is embedded and compared
status     elfmem status (active/inbox), substrate section (notes/log), else ``file``
protected  never proposed for removal; ``protected_why`` says which guard applies
created    first evidence of the unit (UTC)
last_used  latest reinforcement / retrieval / outcome / edit evidence (UTC), NaT when none
========== =====================================================================================
"""

from __future__ import annotations

import re
from typing import Any, cast

import numpy as np
import pandas as pd

from memlab import kinds
from memlab.errors import UnsupportedSchema
from memlab.store import Store

__all__ = [
    "CONSTITUTIONAL_TAG",
    "ROLE_TAG_PREFIX",
    "UNIT_COLUMNS",
    "is_identity_path",
    "active_hours_to_time",
    "elfmem_db_units",
    "file_dates",
    "memfs_file_units",
    "substrate_units",
    "agent_units",
    "check_reviewable",
    "units_of",
    "units_frame",
]

CONSTITUTIONAL_TAG = "self/constitutional"
ROLE_TAG_PREFIX = "self/role/"

UNIT_COLUMNS = [
    "uid",
    "unit",
    "file",
    "title",
    "text",
    "status",
    "category",
    "tags",
    "protected",
    "protected_why",
    "created",
    "last_used",
    "reinforcement",
    "outcomes",
    "retrievals",
    "chars",
    "line",
]

# Identity files: the persona of a Letta/Souveraine agent, the constitution of a substrate.
_IDENTITY_RE = re.compile(
    r"(^|/)(system/)?persona(\.md|/.*\.md)$|(^|/)\.elfmem/memory/self\.md$"
    r"|^memory/self\.md$"
)


def is_identity_path(path: str) -> bool:
    return bool(_IDENTITY_RE.search(path))


def _title(text: Any, width: int = 80) -> str:
    if text is None or (not isinstance(text, str) and pd.isna(text)):
        return ""
    for line in str(text).splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""


def units_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The units frame of ``rows`` (dicts with the columns above, :data:`UNIT_COLUMNS`), typed
    as review reads it: what a kind's ``review.units`` returns."""
    return _frame(rows)


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=UNIT_COLUMNS)
    for col in ("uid", "unit", "file", "title", "text", "status", "category", "protected_why"):
        df[col] = df[col].astype("string")
    df["protected"] = df["protected"].astype("boolean").fillna(False)
    for col in ("created", "last_used"):
        df[col] = pd.to_datetime(df[col], utc=True).astype("datetime64[ns, UTC]")
    for col in ("reinforcement", "outcomes", "retrievals", "chars", "line"):
        df[col] = (
            pd.array(pd.to_numeric(df[col], errors="coerce"), dtype="Int64")
            if len(df)
            else pd.array([], dtype="Int64")
        )
    return df.reset_index(drop=True)


def _protection(
    *,
    pinned: Any = False,
    tags: list[str] | None = None,
    read_only: Any = False,
    identity: bool = False,
    cls: Any = None,
) -> str | None:
    reasons = []
    if pinned is True or (pinned is not None and not pd.isna(pinned) and bool(pinned)):
        reasons.append("pinned")
    tags = tags or []
    if CONSTITUTIONAL_TAG in tags:
        reasons.append(f"constitutional ({CONSTITUTIONAL_TAG})")
    roles = [t for t in tags if t.startswith(ROLE_TAG_PREFIX)]
    if roles:
        reasons.append(f"constitutional role ({roles[0]})")
    if read_only is True or (read_only is not None and not pd.isna(read_only) and bool(read_only)):
        reasons.append("read-only")
    if identity:
        reasons.append("identity file")
    if isinstance(cls, str) and cls == "identity":
        reasons.append("identity block (cls: identity)")
    return "; ".join(reasons) or None


# ---------------------------------------------------------------------------------- elfmem DB


def active_hours_to_time(store: Store, hours: pd.Series) -> pd.Series:
    """Map elfmem's active-hour clock to wall-clock UTC through the sessions table.

    A value inside a session maps to that session's start plus the offset; sessions without an
    active-hour start are skipped. Returns NaT where no session places the value, and where the
    offset would put it past the dates a timestamp holds (a stored 3e6 active hours is 342
    years, 1e308 or inf no time at all): such a value is nonsense, so the time is unknown,
    never an overflow. Review's stale check then has no time for the block: a reinforced block
    with no placed time is not called stale (unknown evidence), as for a value no session
    places.
    """
    out = pd.Series(pd.NaT, index=hours.index, dtype="datetime64[ns, UTC]")
    sessions = store.frames.get("sessions")
    if sessions is None or sessions.empty or "start_active_hours" not in sessions:
        return out
    s = sessions[["start_active_hours", "started_at"]].dropna()
    if s.empty:
        return out
    s = s.sort_values("start_active_hours")
    starts = s["start_active_hours"].to_numpy(dtype=float)
    times = s["started_at"]
    h = pd.to_numeric(hours, errors="coerce").to_numpy(dtype=float)
    pos = np.searchsorted(starts, h, side="right") - 1
    for n, (value, p) in enumerate(zip(h, pos)):
        if np.isnan(value) or p < 0:
            continue
        at = _offset(times.iloc[p], float(value - starts[p]))
        if at is not None:
            out.iloc[n] = at
    return out


def _offset(start: pd.Timestamp, hours: float) -> pd.Timestamp | None:
    """``start`` plus ``hours``, or None when that is not a date a timestamp holds."""
    if not np.isfinite(hours) or pd.isna(start):
        return None
    ns = pd.Timestamp(start).value + hours * 3.6e12
    if not pd.Timestamp.min.value < ns < pd.Timestamp.max.value:
        return None
    try:
        return start + pd.Timedelta(hours=hours)
    except (OverflowError, ValueError):  # at the edge, float rounding
        return None


def elfmem_db_units(store: Store) -> pd.DataFrame:
    blocks = store.blocks
    live = blocks[blocks["status"].astype("string").isin(["active", "inbox"])].copy()
    tags = store.frames.get("tags")
    tag_map: dict[str, list[str]] = {}
    if tags is not None and not tags.empty:
        for bid, tag in zip(tags["block_id"].astype(str), tags["tag"].astype(str)):
            tag_map.setdefault(bid, []).append(tag)
    outcomes = store.frames.get("outcomes")
    out_count: dict[str, int] = {}
    out_last: dict[str, pd.Timestamp] = {}
    if outcomes is not None and not outcomes.empty:
        g = outcomes.groupby(outcomes["block_id"].astype(str))
        out_count = g.size().to_dict()
        out_last = g["created_at"].max().to_dict()
    co = store.frames.get("co_retrieval")
    retrievals: dict[str, int] = {}
    if co is not None and not co.empty:
        for col in ("from_id", "to_id"):
            for bid, n in co.groupby(co[col].astype(str))["count"].sum().items():
                retrievals[bid] = retrievals.get(bid, 0) + int(n)
    reinforced = active_hours_to_time(store, live["last_reinforced_at"])
    session_time: dict[str, pd.Timestamp] = {}
    sessions = store.frames.get("sessions")
    if sessions is not None and not sessions.empty:
        ends = sessions["ended_at"].fillna(sessions["started_at"])
        session_time = dict(zip(sessions["id"].astype(str), ends))
    rows = []
    for idx, b in live.iterrows():
        bid = str(b["id"])
        btags = sorted(tag_map.get(bid, []))
        evidence = [
            t
            for t in (
                reinforced.loc[idx],
                out_last.get(bid),
                session_time.get(str(b["last_session_id"]))
                if pd.notna(b["last_session_id"])
                else None,
            )
            if t is not None and not pd.isna(t)
        ]
        n_out = int(out_count.get(bid, 0))
        oe = pd.to_numeric(pd.Series([b.get("outcome_evidence")]), errors="coerce").iloc[0]
        if pd.notna(oe) and oe > 0:
            n_out = max(n_out, 1)
        rows.append(
            {
                "uid": bid,
                "unit": "block",
                "file": None,
                "title": _title(b["content"]),
                "text": "" if pd.isna(b["content"]) else str(b["content"]),
                "status": str(b["status"]),
                "category": None if pd.isna(b["category"]) else str(b["category"]),
                "tags": btags,
                "protected_why": _protection(pinned=b.get("pinned"), tags=btags),
                "created": b["created_at"],
                "last_used": max(evidence) if evidence else pd.NaT,
                "reinforcement": b["reinforcement_count"],
                "outcomes": n_out,
                "retrievals": retrievals.get(bid, 0),
                "chars": len(b["content"]) if isinstance(b["content"], str) else 0,
                "line": None,
            }
        )
    for r in rows:
        r["protected"] = r["protected_why"] is not None
    return _frame(rows)


# ---------------------------------------------------------------------------------- memfs


def file_dates(store: Store) -> pd.DataFrame:
    """First and last commit time per path, from the history frame (empty when absent)."""
    hist = store.frames.get("history")
    if hist is None or hist.empty:
        return pd.DataFrame(columns=["path", "first", "last", "commits"]).set_index("path")
    g = hist.groupby(hist["path"].astype(str))["authored_at"]
    return pd.DataFrame({"first": g.min(), "last": g.max(), "commits": g.size()})


def memfs_file_units(store: Store) -> pd.DataFrame:
    files = store.files
    dates = file_dates(store)
    rows = []
    for _, f in files.iterrows():
        path = str(f["path"])
        label = f.get("label")
        if not path.endswith(".md") or label is None or pd.isna(label):
            continue  # not a memory block (non-.md, or markdown under skills/ beside SKILL.md)
        if path.rsplit("/", 1)[-1] == "MEMORY.md":
            continue  # memfs v2 folder index: structure, not memory
        first = dates["first"].get(path, pd.NaT) if len(dates) else pd.NaT
        last = dates["last"].get(path, pd.NaT) if len(dates) else pd.NaT
        body = "" if pd.isna(f["body"]) else str(f["body"])
        rows.append(
            {
                "uid": path,
                "unit": "file",
                "file": path,
                "title": str(label),
                "text": body,
                "status": "in_prompt" if bool(f.get("in_prompt") is True) else "file",
                "category": None if pd.isna(f.get("domain")) else str(f.get("domain")),
                "tags": [],
                "protected_why": _protection(
                    read_only=f.get("read_only"), identity=is_identity_path(path)
                ),
                "created": first,
                "last_used": last,
                "reinforcement": None,
                "outcomes": 0,
                "retrievals": None,
                "chars": len(body),
                "line": None,
            }
        )
    for r in rows:
        r["protected"] = r["protected_why"] is not None
    return _frame(rows)


def substrate_units(store: Store) -> pd.DataFrame:
    blocks = store.blocks
    ledger = store.frames.get("ledger")
    used: dict[str, pd.Timestamp] = {}
    n_out: dict[str, int] = {}
    n_use: dict[str, int] = {}
    seeded: dict[str, int] = {}
    if ledger is not None and not ledger.empty:
        for k, t, payload in zip(ledger["k"].astype(str), ledger["t"], ledger["payload"]):
            bid = payload.get("id") if isinstance(payload, dict) else None
            if bid is not None and k == "seed" and isinstance(payload.get("n"), (int, float)):
                # The export's seed event carries the database's reinforcement count; its time
                # is the export's, so it is not evidence of use.
                seeded[str(bid)] = int(payload["n"])
                continue
            if bid is None or k not in ("use", "out", "edit", "birth", "promote", "rescore"):
                continue
            bid = str(bid)
            if k == "out":
                n_out[bid] = n_out.get(bid, 0) + 1
            if k == "use":
                n_use[bid] = n_use.get(bid, 0) + 1
            if pd.notna(t) and (bid not in used or t > used[bid]):
                used[bid] = t
    rows = []
    for _, b in blocks.iterrows():
        section = str(b["section"])
        if section not in ("notes", "log"):
            continue  # self.md is handled as drift; archive/ is already out of the memory
        bid = str(b["id"])
        btags = list(b["tags"]) if isinstance(b["tags"], (list, tuple)) else []
        rows.append(
            {
                "uid": bid,
                "unit": "block",
                "file": str(b["file"]),
                "title": str(b["title"]),
                "text": "" if pd.isna(b["body"]) else str(b["body"]),
                "status": section,
                "category": None if pd.isna(b["category"]) else str(b["category"]),
                "tags": btags,
                "protected_why": _protection(pinned=b["pinned"], tags=btags, cls=b.get("cls")),
                "created": b["created"],
                "last_used": used.get(bid, pd.NaT),
                "reinforcement": seeded.get(bid),
                "outcomes": n_out.get(bid, 0),
                "retrievals": n_use.get(bid, 0),
                "chars": int(b["body_chars"]) if pd.notna(b["body_chars"]) else 0,
                "line": b["line"],
            }
        )
    for r in rows:
        r["protected"] = r["protected_why"] is not None
    return _frame(rows)


# ---------------------------------------------------------------------------------- agent files


def agent_units(store: Store) -> pd.DataFrame:
    rows = []
    for _, b in store.blocks.iterrows():
        value = "" if pd.isna(b["value"]) else str(b["value"])
        label = "" if pd.isna(b["label"]) else str(b["label"])
        rows.append(
            {
                "uid": str(b["block_id"]),
                "unit": "block",
                "file": None,
                "title": label or _title(value),
                "text": value,
                "status": "block",
                "category": label.split("/", 1)[0] if label else None,
                "tags": list(b["tags"]) if isinstance(b.get("tags"), (list, tuple)) else [],
                "protected_why": _protection(
                    read_only=b.get("read_only"), identity=label in ("persona", "system/persona")
                ),
                "created": pd.NaT,
                "last_used": pd.NaT,
                "reinforcement": None,
                "outcomes": 0,
                "retrievals": None,
                "chars": len(value),
                "line": None,
            }
        )
    for r in rows:
        r["protected"] = r["protected_why"] is not None
    return _frame(rows)


def check_reviewable(store: Store) -> None:
    """Refuse, naming the store, a kind review has no units for (e.g. a Letta server database):
    one whose registration in :mod:`memlab.kinds` has no ``review``."""
    kind = kinds.lookup(store.kind)
    if kind is None or kind.review is None:
        raise UnsupportedSchema(
            f"review does not cover {store.kind} stores",
            path=store.path,
            hint="review works on elfmem databases and substrates, Letta memfs "
            "and Souveraine repos and Letta agent files; migrate this store "
            "to one (`memlab migrate SRC DEST`) and review that",
        )


def units_of(store: Store) -> pd.DataFrame:
    """The reviewable units of ``store`` (see the module doc for the columns), from its kind's
    ``review.units``."""
    check_reviewable(store)
    return cast(kinds.Review, kinds.get(store.kind).review).units_of(store)  # checked above
