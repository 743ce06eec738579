"""The duplicate detector of the review builder: clusters of units at or above the
near-duplicate threshold (stars around the best-ranked unit, not chains), each a choice of which
member to keep, a merge where another member holds a sentence the survivor lacks, or keep all.
Recorded ``near_duplicate`` pairs that no longer hold are stale evidence.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from memlab.reviews._build_base import BuilderBase, iso_date
from memlab.reviews._markdown import excerpt
from memlab.reviews._polarity import opposite, sentences
from memlab.reviews._proposal import Finding, Item, item_id

__all__ = ["SENTENCE_COVERED", "Duplicates"]

#: A sentence at or above this cosine to the survivor (or one of its sentences) adds nothing
#: to a merge: sentence-level paraphrases score lower than whole-text ones.
SENTENCE_COVERED = 0.75
_STATUS_RANK = {
    "active": 2,
    "notes": 2,
    "in_prompt": 2,
    "file": 1,
    "block": 1,
    "inbox": 0,
    "log": 0,
}


class Duplicates(BuilderBase):
    """The review builder's duplicates step."""

    def duplicates(self) -> None:
        recorded = {k: v for k, v in self.recorded_pairs().items() if v["kind"] == "near_duplicate"}
        sims: dict[frozenset, float] = {}
        for a, b, s in self.similar_pairs(self.near).itertuples(index=False):
            if not self._polarity_differs(a, b):  # opposite claims: a contradiction, not a copy
                sims[frozenset((a, b))] = float(s)
        for key, row in sorted(recorded.items(), key=lambda kv: sorted(kv[0])):
            a, b = sorted(key)
            ev = {"recorded": row["score"], "recorded_at": iso_date(row["created"])}
            if not row["live"]:
                self.stale_evidence(
                    ("near_duplicate", a, b),
                    f"recorded near-duplicate pair `{a}` ~ `{b}` names a block that "
                    "is no longer live; nothing to merge",
                    ev,
                )
                continue
            now = self._sim(a, b)
            if now < self.near:
                self.stale_evidence(
                    ("near_duplicate", a, b),
                    f"recorded near-duplicate pair `{a}` ~ `{b}` no longer holds: cosine now "
                    f"{now:.3f} < {self.near:.2f} (a block was edited since it was recorded)",
                    {**ev, "similarity_now": now},
                )
            elif self._polarity_differs(a, b):
                self.stale_evidence(
                    ("near_duplicate", a, b),
                    f"recorded near-duplicate pair `{a}` ~ `{b}` says opposite things (see the "
                    "contradictions); not proposed as a duplicate",
                    {**ev, "similarity_now": now},
                )
        adjacency: dict[str, set[str]] = {}
        for key in sims:
            a, b = tuple(key)
            adjacency.setdefault(a, set()).add(b)
            adjacency.setdefault(b, set()).add(a)
        # Stars, not chains: the best-ranked unit left takes its direct neighbours.
        remaining = set(adjacency)
        while remaining:
            survivor = max(remaining, key=lambda u: (self._rank(u), [-ord(c) for c in u]))
            members = sorted({survivor} | (adjacency[survivor] & remaining))
            remaining.discard(survivor)
            if len(members) == 1:
                continue
            remaining -= set(members)
            self._cluster(survivor, members, sims, recorded)

    def _rank(self, uid: str) -> tuple:
        u = self.unit(uid)
        created = u["created"]
        age = -pd.Timestamp(created).value if pd.notna(created) else -np.iinfo(np.int64).max
        return (
            bool(u["protected"]),
            _STATUS_RANK.get(str(u["status"]), 1),
            int(u["reinforcement"]) if pd.notna(u["reinforcement"]) else 0,
            int(u["outcomes"]) if pd.notna(u["outcomes"]) else 0,
            int(u["retrievals"]) if pd.notna(u["retrievals"]) else 0,
            age,
            int(u["chars"]) if pd.notna(u["chars"]) else 0,
        )

    def _why(self, survivor: str, runner: str) -> str:
        s, r = self.unit(survivor), self.unit(runner)
        ks, kr = self._rank(survivor), self._rank(runner)
        reasons = [
            lambda: f"it is {s['protected_why']}",
            lambda: f"it is {s['status']} while `{runner}` is {r['status']}",
            lambda: f"reinforced {ks[2]} times vs {kr[2]}",
            lambda: f"{ks[3]} outcome records vs {kr[3]}",
            lambda: f"retrieved {ks[4]} times vs {kr[4]}",
            lambda: f"it is older (created {iso_date(s['created'])} vs {iso_date(r['created'])})",
            lambda: f"it is longer ({ks[6]} vs {kr[6]} chars)",
        ]
        for i, reason in enumerate(reasons):
            if ks[i] != kr[i]:
                return reason()
        return "all else equal, it has the smaller id"

    def _new_sentences(self, survivor: str, others: list[str]) -> list[str]:
        """Sentences of ``others`` that no sentence of the survivor already says."""
        have = sentences(str(self.unit(survivor)["text"]))
        extra = [s for o in others for s in sentences(str(self.unit(o)["text"]))]
        if not have or not extra:
            return []
        whole = str(self.unit(survivor)["text"])
        v = self.embedder.encode([whole] + have + extra)
        hv, ev = v[: len(have) + 1], v[len(have) + 1 :]
        out: list[str] = []
        for s, vec in zip(extra, ev):
            if float((hv @ vec).max()) < SENTENCE_COVERED and s not in out:
                out.append(s)
        return out

    def _cluster(
        self,
        survivor: str,
        members: list[str],
        sims: dict[frozenset, float],
        recorded: dict[frozenset, dict[str, Any]],
    ) -> None:
        others = sorted((m for m in members if m != survivor), key=self._rank, reverse=True)
        key = tuple(members)
        pairs: list[dict[str, Any]] = []
        for m in others:
            k = frozenset((m, survivor))
            rec = recorded.get(k)
            pairs.append(
                {
                    "a": survivor,
                    "b": m,
                    "similarity": sims.get(k, self._sim(m, survivor)),
                    "recorded": None if rec is None else rec["score"],
                }
            )
        norm = {" ".join(str(self.unit(m)["text"]).split()).lower() for m in members}
        best = min(p["similarity"] for p in pairs)
        exact = len(norm) == 1  # the same words; a paraphrase at any cosine is "near"
        cid = item_id("choice", self.kind, "duplicates", *key)
        self.clusters.append(
            {
                "id": cid,
                "members": members,
                "survivor": survivor,
                "survivor_title": str(self.unit(survivor)["title"]),
                "why": self._why(survivor, others[0]),
                "pairs": pairs,
            }
        )
        options: list[Item] = []
        # Keep one member, remove the rest: only a member at or above the threshold to every
        # other member may stand for them all.
        for keep in [survivor, *others]:
            drop = [m for m in members if m != keep]
            if any(bool(self.unit(d)["protected"]) for d in drop):
                continue
            if any(self._sim(keep, d) < self.near for d in drop):
                continue
            reason = f" (recommended: {self._why(survivor, others[0])})" if keep == survivor else ""
            steps = [self.removal_step(self.unit(d), reason="superseded") for d in drop]
            options.append(
                self.option(
                    key + (keep,),
                    "duplicates",
                    "keep",
                    f"keep {self._describe(self.unit(keep))}{reason}; remove "
                    + ", ".join(f"`{d}`" for d in drop),
                    steps,
                    target={
                        "uid": keep,
                        "keeps": keep,
                        "removes": drop,
                        "file": None
                        if pd.isna(self.unit(keep)["file"])
                        else str(self.unit(keep)["file"]),
                    },
                )
            )
        if not options:
            self.findings.append(
                Finding(
                    id=item_id("note", "duplicates", *key),
                    section="duplicates",
                    summary=f"{len(members)} units say the same as "
                    f"{self._describe(self.unit(survivor))}, "
                    "but each is protected or no member stands for all; resolve by hand",
                    evidence={"similarity": best},
                )
            )
            return
        drop = [m for m in members if m != survivor]
        mergeable = not exact and not any(bool(self.unit(m)["protected"]) for m in members)
        extra = self._new_sentences(survivor, others) if mergeable else []
        if extra:
            merged = str(self.unit(survivor)["text"]).rstrip() + "\n" + " ".join(extra)
            edit = self.edit_step(self.unit(survivor), merged)
            if edit is not None:
                options.append(
                    self.option(
                        key + ("merge",),
                        "duplicates",
                        "merge",
                        f"merge into `{survivor}`: add {len(extra)} sentence(s) "
                        "only the others hold "
                        f'("{excerpt(" ".join(extra), 90)}"), then remove '
                        + ", ".join(f"`{d}`" for d in drop),
                        [edit]
                        + [self.removal_step(self.unit(d), reason="superseded") for d in drop],
                        target={
                            "uid": survivor,
                            "keeps": survivor,
                            "removes": drop,
                            "edits": [survivor],
                        },
                    )
                )
        options.append(self.keep_all(key, "duplicates", "keep all: they are not duplicates"))
        self.removed.update(drop)
        kind = "exact duplicate" if exact else "near duplicate"
        self.add_choice(
            key,
            "duplicates",
            kind,
            f"{len(members)} units: {self._describe(self.unit(survivor))}",
            options,
            {
                "similarity_to_survivor": [round(p["similarity"], 3) for p in pairs],
                "recorded": [p["recorded"] for p in pairs if p["recorded"] is not None],
            },
            removes=drop,
            certainty=1.0 if exact else best,
            risk="low" if exact else "medium",
        )

    def _polarity_differs(self, a: str, b: str) -> bool:
        return opposite(str(self.unit(a)["text"]), str(self.unit(b)["text"]))[0]
