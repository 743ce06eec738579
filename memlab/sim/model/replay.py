"""Counterfactual replay: a real store's blocks, in creation order, under another iteration.

``replay(store, iteration)`` feeds every block of an elfmem database to a fresh world running
``iteration``'s write-path rules, at the active-hour time the block was created, and says which
blocks that iteration would have archived (superseded, rejected as duplicates, decayed) or kept,
next to what actually happened to them. Cosines come from the real sentence model on the
blocks' content, so a replay under Iteration 1 is a check of the simulation against the store's
own history as much as a counterfactual.

What cannot be replayed: the reinforcement history (only the last ``last_reinforced_at`` is
stored), so decay uses max(creation, last reinforcement seen by then); operator deletions
(``forgotten``) are kept as the operator's act when the iteration can delete, else as kept.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from memlab.audits.seeds import CONSTITUTIONAL_TAG, ROLE_TAG_PREFIX, match_seed
from memlab.constants import tier_of_lambda
from memlab.errors import MemlabError, SimulationError
from memlab.sim.instance import LAMBDA, active_hours_at, elfmem_frames
from memlab.sim.model.iterations import ITERATIONS, Iteration
from memlab.sim.model.world import VectorBook

__all__ = ["replay"]


def replay(
    store: Any,
    iteration: Iteration | int = 1,
    *,
    vectors: str = "model",
    book: VectorBook | None = None,
    release: str | None = None,
) -> pd.DataFrame:
    """One row per block of ``store`` (creation order): what happened, and what ``iteration``
    would have done. ``attrs['summary']`` counts both.

    ``release="0.20.0"`` (or "0.19.2") replays through that shipped elfmem release instead of
    the world model (:func:`memlab.sim.real.replay_release.replay_release`): measured, not modelled.

    ``vectors``: ``"model"`` embeds the content with memlab's sentence model (a common yardstick
    across stores); ``"store"`` uses the vectors the store itself recorded (load it with
    ``load_elfmem(path, embeddings=True)``), i.e. the cosines its own decisions were taken on.
    """
    if release is not None:
        from memlab.sim.real.replay_release import replay_release

        return replay_release(store, release)
    if vectors not in ("model", "store"):
        raise SimulationError("vectors must be 'model' or 'store'")
    it = ITERATIONS[iteration] if isinstance(iteration, int) else iteration
    frames = elfmem_frames(store)
    if frames is None:
        raise MemlabError(
            "replay needs an elfmem database store",
            path=getattr(store, "path", None),
            hint="memlab.load_elfmem(path)",
        )
    book = book if book is not None else VectorBook()  # an empty book is falsy (__len__)
    blocks = frames["blocks"].copy()
    if blocks.empty:
        raise MemlabError("the store has no blocks to replay", path=getattr(store, "path", None))
    tags = frames.get("tags", pd.DataFrame(columns=["block_id", "tag"]))
    sessions = frames.get("sessions", pd.DataFrame())
    config = frames.get("config", pd.DataFrame())
    total = (
        float(config["total_active_hours"].iloc[0])
        if "total_active_hours" in config
        and len(config)
        and pd.notna(config["total_active_hours"].iloc[0])
        else 0.0
    )

    blocks = blocks.sort_values(["created_at", "id"], kind="stable").reset_index(drop=True)
    content = blocks["content"].astype("string").fillna("")
    if vectors == "store":
        if "embedding" not in blocks or blocks["embedding"].isna().all():
            raise MemlabError(
                "the store has no recorded embeddings",
                path=getattr(store, "path", None),
                hint="load it with load_elfmem(path, embeddings=True), or use vectors='model'",
            )
        has_vec = blocks["embedding"].notna().to_numpy()
        dim = len(blocks.loc[has_vec, "embedding"].iloc[0])
        raw = np.zeros((len(blocks), dim), dtype=np.float32)
        for k in np.flatnonzero(has_vec):
            raw[k] = np.asarray(blocks["embedding"].iloc[k], dtype=np.float32)
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        vecs = raw / np.where(norms == 0, 1.0, norms)
    else:
        has_vec = np.ones(len(blocks), dtype=bool)
        vecs = book.matrix(list(content))
    created_h = active_hours_at(blocks["created_at"], sessions, total)
    tagmap = tags.groupby("block_id")["tag"].apply(set).to_dict() if len(tags) else {}
    lam = pd.to_numeric(blocks.get("decay_lambda"), errors="coerce")
    last_rf = pd.to_numeric(blocks.get("last_reinforced_at"), errors="coerce")
    pinned_col = blocks["pinned"] if "pinned" in blocks else pd.Series(pd.NA, index=blocks.index)

    state: dict[int, dict[str, Any]] = {}
    active: list[int] = []
    last_curate: float | None = None

    def curate(now: float) -> None:
        nonlocal last_curate
        if not it.decay_active:
            return
        if last_curate is not None and now - last_curate < it.curate_interval_hours:
            return
        last_curate = now
        for k in list(active):
            row = state[k]
            if row["constitutional"]:
                continue
            seen = max(
                row["created_h"], row["last_rf"] if row["last_rf"] <= now else row["created_h"]
            )
            recency = math.exp(-row["lam"] * max(0.0, now - seen))
            if recency < it.prune_threshold:
                active.remove(k)
                row.update(
                    replay_status="archived",
                    replay_reason="decayed",
                    replay_detail=f"recency {recency:.3f} at {now:.1f} h",
                )

    for k, block in blocks.iterrows():
        now = float(created_h[k])
        curate(now)
        btags = tagmap.get(block["id"], set())
        role = next(
            (t[len(ROLE_TAG_PREFIX) :] for t in btags if t.startswith(ROLE_TAG_PREFIX)), None
        )
        seeded_role = match_seed(content=str(content[k]), block_id=str(block["id"]))
        lam_k = float(lam[k]) if pd.notna(lam[k]) else LAMBDA["STANDARD"]
        constitutional = bool(
            CONSTITUTIONAL_TAG in btags or role or seeded_role or lam_k <= LAMBDA["PERMANENT"] * 1.5
        )
        pinned = bool(pinned_col[k]) if pd.notna(pinned_col[k]) else constitutional
        row = {
            "block_id": block["id"],
            "created_at": block["created_at"],
            "created_active_h": round(now, 4),
            "role": role or seeded_role,
            "constitutional": constitutional,
            "pinned": pinned,
            "tier": tier_of_lambda(lam_k),
            "lam": lam_k,
            "last_rf": float(last_rf[k]) if pd.notna(last_rf[k]) else now,
            "created_h": now,
            "actual_status": str(block["status"]),
            "actual_reason": None
            if pd.isna(block.get("archive_reason"))
            else str(block["archive_reason"]),
            "replay_status": "active",
            "replay_reason": None,
            "replay_by": None,
            "cosine": np.nan,
            "replay_detail": None,
        }
        state[k] = row
        if not has_vec[k] and str(block["status"]) != "inbox":
            # Never embedded (consolidation did not reach it): it cannot be compared.
            row["replay_detail"] = "no recorded vector: kept without comparison"
            continue
        if active and it.supersession_active and str(block["status"]) != "inbox":
            sims = vecs[active] @ vecs[k]
            j = int(np.argmax(sims))
            best, sim = active[j], float(sims[j])
            row["cosine"] = round(sim, 4)
            if sim >= it.exact_dup_threshold:
                row.update(
                    replay_status="rejected",
                    replay_reason="duplicate",
                    replay_by=state[best]["block_id"],
                )
                continue
            if sim >= it.near_dup_threshold:
                target = state[best]
                if it.pin_guard and (target["pinned"] or target["tier"] == "PERMANENT"):
                    row["replay_detail"] = f"pin guard kept {target['block_id']}"
                else:
                    active.remove(best)
                    target.update(
                        replay_status="archived",
                        replay_reason="superseded",
                        replay_by=row["block_id"],
                        replay_detail=f"cosine {sim:.3f}",
                    )
        if row["actual_reason"] == "forgotten" and it.can_edit:
            row.update(
                replay_status="archived",
                replay_reason="forgotten",
                replay_detail="operator's forget() replayed",
            )
            continue
        if str(block["status"]) == "inbox":
            row.update(replay_status="inbox", replay_detail="never consolidated")
            continue
        active.append(k)
    curate(total)

    frame = pd.DataFrame(list(state.values()))
    frame = frame.drop(columns=["lam", "last_rf", "created_h"])
    frame["iteration"] = it.name
    actual_kept = frame["actual_status"].isin(["active", "inbox"])
    replay_kept = frame["replay_status"].isin(["active", "inbox"])
    frame["agrees"] = actual_kept == replay_kept
    frame["replay_kept"] = replay_kept
    summary = {
        "iteration": it.name,
        "vectors": vectors,
        "blocks": len(frame),
        "actual_archived": int((~actual_kept).sum()),
        "replay_archived": int((~replay_kept).sum()),
        "replay_superseded": int((frame["replay_reason"] == "superseded").sum()),
        "replay_rejected": int((frame["replay_reason"] == "duplicate").sum()),
        "replay_decayed": int((frame["replay_reason"] == "decayed").sum()),
        "constitutional_archived": int((~replay_kept & frame["constitutional"]).sum()),
        "agree": int(frame["agrees"].sum()),
    }
    frame.attrs["summary"] = summary
    return frame
