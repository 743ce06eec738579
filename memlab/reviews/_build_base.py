"""The review builder's core: the store's units and their vectors, the choices and findings
it collects, and the helpers every detector uses to make them (a removal or edit step in the
kind's own way, an option, a choice with its impact, a stale-evidence finding, the similar and
recorded pairs). The detectors (``_build_duplicates``, ``_build_contradictions``,
``_build_stale``, ``_checks``) add to it; ``_build`` composes them and runs ``review()``.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

from memlab import kinds
from memlab.reviews._markdown import excerpt
from memlab.reviews._proposal import Choice, Finding, Item, item_id
from memlab.reviews._triage import impact, tokens
from memlab.reviews._units import check_reviewable, units_of
from memlab.store import Store

__all__ = ["iso_date", "BuilderBase"]


def iso_date(ts: Any) -> str | None:
    if ts is None or pd.isna(ts):
        return None
    return pd.Timestamp(ts).strftime("%Y-%m-%d")


class BuilderBase:
    """The state of one review in progress and the helpers its detectors share."""

    def __init__(
        self,
        store: Store,
        *,
        near_duplicate: float,
        stale_after_days: float,
        contradiction_min: float,
        as_of: pd.Timestamp,
        embedder: Any,
    ) -> None:
        check_reviewable(store)
        self.store = store
        self.kind = store.kind
        #: The kind's review adapter (memlab.kinds.Review, its behaviour objects resolved):
        #: every kind-specific choice below is a call to one of them.
        # check_reviewable above refused a kind without one
        self.review = cast(kinds.Review, kinds.get(store.kind).review).resolved
        self.near = float(near_duplicate)
        self.stale_days = float(stale_after_days)
        self.contra_min = float(contradiction_min)
        self.as_of = as_of
        self.embedder = embedder
        self.items: list[Item] = []
        self.choices: list[Choice] = []
        self.findings: list[Finding] = []
        self.clusters: list[dict[str, Any]] = []
        self.touched: set[str] = set()
        self.repo = self.review.apply.repo(store)
        self.appliable = bool(self.review.apply.appliable(store, self.repo))
        self.units = units_of(store)
        self.by_uid = {u: i for i, u in enumerate(self.units["uid"].tolist())}
        self.vectors = np.zeros((0, 384), np.float32)
        self.removed: set[str] = set()  # uids a choice already removes: one proposal each
        self.total_tokens = int(sum(tokens(c) for c in self.units["chars"].fillna(0)))
        self.share_of = self.review.share_of

    # ---- helpers ----------------------------------------------------------------------------
    def unit(self, uid: str) -> pd.Series:
        return self.units.iloc[self.by_uid[uid]]

    def _sim(self, a: str, b: str) -> float:
        return float(self.vectors[self.by_uid[a]] @ self.vectors[self.by_uid[b]])

    def _describe(self, u: pd.Series) -> str:
        where = f" in `{u['file']}`" if self.review.describe_file else ""
        return f'`{u["uid"]}`{where} "{excerpt(u["text"] or u["title"])}"'

    def _tokens(self, uids: list[str]) -> int:
        return sum(tokens(self.unit(u)["chars"]) for u in uids)

    def removal_step(self, u: pd.Series, *, reason: str) -> dict[str, Any]:
        """The change that takes ``u`` out of the memory, in the way this store kind does it
        (its :class:`~memlab.kinds.Removal`). ``reason`` is elfmem's archive reason
        (superseded / forgotten / decayed)."""
        return self._touching(self.review.removal.step(u, reason=reason))

    def edit_step(self, u: pd.Series, new_text: str) -> dict[str, Any] | None:
        """The change that replaces ``u``'s text (the kind's :class:`~memlab.kinds.Edit`), or
        None where memlab cannot make it."""
        if self.review.edit is None:
            return None
        return self._touching(self.review.edit.step(u, new_text))

    def _touching(self, step: dict[str, Any]) -> dict[str, Any]:
        """``step``, its files (``file``, ``to``) recorded for the fingerprint."""
        self.touched.update(str(step[k]) for k in ("file", "to") if step.get(k) is not None)
        return step

    def option(
        self,
        key: tuple,
        section: str,
        option: str,
        summary: str,
        steps: list[dict[str, Any]],
        *,
        target: dict[str, Any],
        appliable: bool | None = None,
    ) -> Item:
        text = "; ".join(s["text"] for s in steps) or "change nothing (dismiss this choice)"
        return Item(
            id=item_id(option[:4].replace("_", "") or "opt", self.kind, section, *key, option),
            section=section,
            action=option,
            option=option,
            summary=summary,
            target=target,
            evidence={},
            change={"steps": steps, "text": text},
            appliable=self.appliable if appliable is None else appliable,
        )

    def keep_all(self, key: tuple, section: str, what: str) -> Item:
        return self.option(
            key,
            section,
            "keep_both" if "both" in what else "keep_all",
            what,
            [],
            target={"uid": None, "removes": []},
            appliable=True,
        )

    def add_choice(
        self,
        key: tuple,
        section: str,
        kind: str,
        title: str,
        options: list[Item],
        evidence: dict[str, Any],
        *,
        removes: list[str],
        certainty: float,
        risk: str,
    ) -> Choice:
        cid = item_id("choice", self.kind, section, *key)
        for it in options:
            it.group = cid
            it.exclusive = len(options) > 1
        choice = Choice(
            id=cid,
            section=section,
            kind=kind,
            title=title,
            options=[it.id for it in options],
            evidence=evidence,
            impact=impact(
                section,
                self._tokens(removes),
                self.total_tokens,
                certainty=certainty,
                risk=risk,
                share_of=self.share_of,
            ),
        )
        self.items.extend(options)
        self.choices.append(choice)
        return choice

    def stale_evidence(self, key: tuple, summary: str, evidence: dict[str, Any]) -> None:
        self.findings.append(
            Finding(
                id=item_id("stale", *key),
                section="stale_evidence",
                summary=summary,
                evidence=evidence,
            )
        )

    # ---- embeddings -------------------------------------------------------------------------
    def embed(self, progress: bool | None) -> None:
        if len(self.units) == 0:
            return
        # The texts not in the cache get their own bar (texts done/total, rate, ETA after the
        # first batch) under the step bar, however few: a cold embedding is the step that takes
        # minutes. progress=False (or --quiet, or no terminal) draws nothing.
        self.vectors = self.embedder.encode(
            self.units["text"].fillna("").tolist(), progress=progress is not False
        )

    def similar_pairs(self, threshold: float, rows: np.ndarray | None = None) -> pd.DataFrame:
        """Unit pairs at or above ``threshold`` among ``rows`` (default: every unit)."""
        from memlab.embed import NeighborIndex

        rows = np.arange(len(self.units)) if rows is None else rows
        if len(rows) < 2:
            return pd.DataFrame({"a": [], "b": [], "similarity": []})
        pairs = NeighborIndex(self.vectors[rows]).pairs_above(threshold)
        uids = self.units["uid"].to_numpy()[rows]
        return pd.DataFrame(
            {
                "a": uids[pairs["i"].to_numpy()],
                "b": uids[pairs["j"].to_numpy()],
                "similarity": pairs["similarity"].to_numpy(dtype=float),
            }
        )

    def recorded_pairs(self) -> dict[frozenset, dict[str, Any]]:
        """Unresolved rows of the elfmem ``contradictions`` table."""
        if not self.review.recorded_contradictions or "contradictions" not in self.store.frames:
            return {}
        out: dict[frozenset, dict[str, Any]] = {}
        for _, r in self.store.contradictions.iterrows():
            a, b = str(r["block_a_id"]), str(r["block_b_id"])
            if bool(r["resolved"] is True):
                continue
            kind = None if pd.isna(r.get("kind")) else str(r.get("kind"))
            out[frozenset((a, b))] = {
                "a": a,
                "b": b,
                "score": None if pd.isna(r["score"]) else float(r["score"]),
                "kind": kind or "contradiction",
                "created": r["created_at"],
                "live": a in self.by_uid and b in self.by_uid,
            }
        return out

    # ---- fingerprint ------------------------------------------------------------------------
    def fingerprint(self) -> dict[str, Any]:
        return self.review.apply.fingerprint(self.store, self.repo, self.touched)
