"""The contradiction detector of the review builder: unresolved contradictions elfmem
recorded that still share a topic, and candidates (statement-sized units on one topic with
opposite polarity), each a choice of keep A / keep B / keep both.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from memlab.reviews._build_base import BuilderBase, iso_date
from memlab.reviews._polarity import opposite, topic_share
from memlab.reviews._proposal import Finding, item_id
from memlab.reviews._triage import RECORDED_CONTRADICTION_CERTAINTY

__all__ = ["TOPIC_OVERLAP", "RECORDED_TOPIC_MIN", "Contradictions"]

#: Candidate contradictions are looked for only between statement-sized units.
_CLAIM_CHARS = 400
#: Of the content words the shorter claim holds, the share both must hold to be one topic.
TOPIC_OVERLAP = 0.5
#: A contradiction elfmem recorded (an LLM judged it) still holds while the pair shares a topic.
RECORDED_TOPIC_MIN = 0.40


class Contradictions(BuilderBase):
    """The review builder's contradictions step."""

    def contradictions(self) -> None:
        seen: set[frozenset] = set()
        for key, row in sorted(self.recorded_pairs().items(), key=lambda kv: sorted(kv[0])):
            if row["kind"] == "near_duplicate":
                continue
            seen.add(key)
            a, b = sorted(key)
            ev = {"recorded": row["score"], "recorded_at": iso_date(row["created"])}
            if not row["live"]:
                self.stale_evidence(
                    ("contradiction", a, b),
                    f"unresolved contradiction row `{a}` vs `{b}` names a block "
                    "that is no longer live; mark it resolved",
                    ev,
                )
                continue
            now = self._sim(a, b)
            if now < RECORDED_TOPIC_MIN:
                self.stale_evidence(
                    ("contradiction", a, b),
                    f"recorded contradiction `{a}` vs `{b}` no longer shares a topic: cosine now "
                    f"{now:.3f} < {RECORDED_TOPIC_MIN:.2f} (a block changed since, or the row "
                    "was wrong)",
                    {**ev, "similarity_now": now},
                )
                continue
            self._contradiction(
                a,
                b,
                {"source": "recorded by elfmem", **ev, "similarity": now},
                certainty=RECORDED_CONTRADICTION_CERTAINTY,
            )
        if len(self.units) < 2:
            return
        # Only statement-sized units: word polarity says nothing about a document, and the
        # pair count at a low threshold grows with the square of the corpus.
        claims = np.flatnonzero(self.units["text"].fillna("").str.len().to_numpy() <= _CLAIM_CHARS)
        pairs = self.similar_pairs(self.contra_min, claims)
        for a, b, s in pairs.sort_values("similarity", ascending=False).itertuples(index=False):
            key = frozenset((a, b))
            if key in seen:
                continue
            ta, tb = str(self.unit(a)["text"]), str(self.unit(b)["text"])
            differs, shared = opposite(ta, tb)
            if not differs or len(shared) < 2 or topic_share(ta, tb) < TOPIC_OVERLAP:
                continue
            seen.add(key)
            self._contradiction(
                a,
                b,
                {
                    "source": "candidate (same topic, opposite polarity)",
                    "similarity": float(s),
                    "shared_words": sorted(shared)[:6],
                },
                certainty=float(s),
            )

    def _contradiction(self, a: str, b: str, evidence: dict[str, Any], *, certainty: float) -> None:
        a, b = sorted((a, b))
        key = (a, b)
        options = []
        for keep, drop in ((a, b), (b, a)):
            u = self.unit(drop)
            if bool(u["protected"]) or drop in self.removed:
                continue
            options.append(
                self.option(
                    key + (keep,),
                    "contradictions",
                    "keep",
                    f"keep {self._describe(self.unit(keep))}; remove `{drop}`",
                    [self.removal_step(u, reason="forgotten")],
                    target={
                        "uid": keep,
                        "keeps": keep,
                        "removes": [drop],
                        "file": None
                        if pd.isna(self.unit(keep)["file"])
                        else str(self.unit(keep)["file"]),
                    },
                )
            )
        if not options:
            self.findings.append(
                Finding(
                    id=item_id("note", "contradiction", a, b),
                    section="contradictions",
                    summary=f"`{a}` and `{b}` may contradict each other, "
                    "but neither can be proposed "
                    "for removal (protected, or already in a duplicate choice); resolve by hand",
                    evidence=evidence,
                )
            )
            return
        options.append(self.keep_all(key, "contradictions", "keep both: they do not contradict"))
        removes = options[0].target["removes"]
        self.add_choice(
            key,
            "contradictions",
            "contradiction",
            f"{self._describe(self.unit(a))} vs {self._describe(self.unit(b))}",
            options,
            evidence,
            removes=removes,
            certainty=certainty,
            risk="high",
        )
