"""Replay a real instance through a shipped elfmem release: ``replay(store, release="0.20.0")``.

The instance's blocks are fed, in creation order and with their tags and category, into a
fresh database of the release (in its own venv, :mod:`memlab.sim.real.releases`), on the
instance's own active-hour clock: the blocks created in one session of the instance are
learned, then a session of the length that separates them from the next ones runs on the
release's clock and ends with ``consolidate()`` and ``curate()``. What the release then holds
for each block (kept, merged as a duplicate, archived and why) is set next to what actually
happened to it in the instance.

What is not replayed: retrievals, outcomes and operator edits (the store keeps no history of
them), so reinforcement comes only from the release's own ``curate()``; ``curate()`` runs once
per replayed session, which may be more often than the instance ran it. The LLM is memlab's
deterministic local one (``memlab/sim/real/_driver.py``), so decisions that hinge on its answers
(0.19.2's contradiction scores) follow that rule, not the instance's model.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memlab._files import sqlite_uri
from memlab._tmp import private_tempdir
from memlab.errors import MemlabError
from memlab.sim.instance import active_hours_at, elfmem_frames
from memlab.sim.real.releases import ReleaseProcess, check_release

__all__ = ["replay_release"]


def replay_release(store: Any, release: str) -> pd.DataFrame:
    """One row per block of ``store`` (creation order): its actual status and the release's.

    Columns: id, created_at, category, content, actual_status, actual_reason,
    release_status (active / archived / rejected: not stored as a block), release_reason,
    agree (same status). ``attrs['summary']`` counts both sides.
    """
    release = check_release(release)
    frames = elfmem_frames(store)
    if frames is None:
        raise MemlabError(
            "replay needs an elfmem database store",
            path=getattr(store, "path", None),
            hint="memlab.load_elfmem(path)",
        )
    blocks = frames["blocks"].copy()
    if blocks.empty:
        raise MemlabError("the store has no blocks to replay", path=getattr(store, "path", None))
    blocks = blocks.sort_values(["created_at", "id"], kind="stable").reset_index(drop=True)
    tags = frames.get("tags", pd.DataFrame(columns=["block_id", "tag"]))
    by_block = tags.groupby("block_id")["tag"].apply(list).to_dict() if len(tags) else {}
    config = frames.get("config", pd.DataFrame())
    total = (
        float(config["total_active_hours"].iloc[0])
        if "total_active_hours" in config
        and len(config)
        and pd.notna(config["total_active_hours"].iloc[0])
        else 0.0
    )
    hours = active_hours_at(blocks["created_at"], frames.get("sessions", pd.DataFrame()), total)
    content = blocks["content"].astype("string").fillna("").tolist()
    category = blocks["category"].astype("string").fillna("knowledge").tolist()
    stamps = np.append(np.unique(hours), max(total, float(np.max(hours))))
    learned: dict[int, str | None] = {}
    with private_tempdir("replay") as tmp:
        db = Path(tmp) / "replay.db"
        with ReleaseProcess(release, workdir=tmp) as proc:
            proc.request("open", db=str(db))
            proc.preload(content)
            for k, stamp in enumerate(stamps[:-1]):
                group = np.flatnonzero(hours == stamp)
                items = [
                    {
                        "content": content[i],
                        "category": category[i],
                        "tags": [t for t in by_block.get(blocks.at[i, "id"], [])],
                    }
                    for i in group
                ]
                for i, bid in zip(group, proc.request("learn", items=items)):
                    learned[int(i)] = bid
                proc.request(
                    "session",
                    hours=float(stamps[k + 1] - stamp) or 1e-6,
                    consolidate=True,
                    curate=True,
                )
            proc.request("close")
        con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
        rows = {
            r[0]: (r[1], r[2]) for r in con.execute("SELECT id, status, archive_reason FROM blocks")
        }
        con.close()
    out = pd.DataFrame(
        {
            "id": blocks["id"],
            "created_at": blocks["created_at"],
            "category": category,
            "content": [c[:80] for c in content],
            "actual_status": blocks["status"].astype("string"),
            "actual_reason": blocks["archive_reason"].astype("string"),
        }
    )
    status, reason = [], []
    for n in range(len(blocks)):
        got = rows.get(learned.get(n))
        status.append(got[0] if got else "rejected")
        reason.append(got[1] if got else "not stored (exact duplicate or refused)")
    out["release_status"] = pd.Series(status, dtype="string")
    out["release_reason"] = pd.Series(reason, dtype="string")
    out["agree"] = (out["actual_status"] == out["release_status"]).astype("boolean")
    out.attrs["summary"] = {
        "release": release,
        "blocks": len(out),
        "actual": out["actual_status"].value_counts().to_dict(),
        "release_outcome": out["release_status"].value_counts().to_dict(),
        "release_reasons": out["release_reason"].dropna().value_counts().to_dict(),
        "agree": int(out["agree"].sum()),
    }
    return out
