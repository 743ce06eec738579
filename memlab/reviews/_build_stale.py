"""The stale detector of the review builder: a unit with no use, reinforcement or outcome
evidence for ``stale_after_days`` before ``as_of`` is a choice to remove it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab.reviews._build_base import BuilderBase, iso_date
from memlab.reviews._triage import STALE_CERTAINTY

__all__ = ["Staleness"]


class Staleness(BuilderBase):
    """The review builder's stale step."""

    def stale(self) -> None:
        cutoff = self.as_of - pd.Timedelta(days=self.stale_days)
        if not self.review.dated:
            return  # an agent file has no dates: nothing to measure staleness by
        for _, u in self.units.iterrows():
            uid = str(u["uid"])
            if uid in self.removed or bool(u["protected"]):
                continue
            if self.review.prompt_files and (
                str(u["status"]) == "in_prompt" or str(u["uid"]).startswith("skills/")
            ):
                # In the prompt every turn (used by construction), or a skill (a capability
                # loaded on demand, not a memory that fades).
                continue
            created, last = u["created"], u["last_used"]
            if pd.isna(created) or created > cutoff:
                continue
            if pd.notna(last) and last > cutoff:
                continue
            if pd.notna(u["outcomes"]) and int(u["outcomes"]) > 0:
                continue
            if pd.isna(last) and pd.notna(u["reinforcement"]) and int(u["reinforcement"]) > 0:
                continue  # reinforced, but no clock places it: not enough evidence to call it stale
            ev = self._usage(u)
            ev["days_since_evidence"] = int(
                (self.as_of - (last if pd.notna(last) else created)).days
            )
            basis = self.review.stale_basis
            option = self.option(
                (uid,),
                "stale",
                "remove",
                f"remove {self._describe(u)}",
                [self.removal_step(u, reason="decayed")],
                target={
                    "uid": uid,
                    "removes": [uid],
                    "file": None if pd.isna(u["file"]) else str(u["file"]),
                },
            )
            self.add_choice(
                (uid,),
                "stale",
                "stale",
                f"{basis} for {ev['days_since_evidence']} days: {self._describe(u)}",
                [option],
                ev,
                removes=[uid],
                certainty=STALE_CERTAINTY,
                risk="medium",
            )
            self.removed.add(uid)

    def _usage(self, u: pd.Series) -> dict[str, Any]:
        ev: dict[str, Any] = {"created": iso_date(u["created"])}
        if pd.notna(u["reinforcement"]):
            ev["reinforced"] = int(u["reinforcement"])
        if pd.notna(u["retrievals"]):
            ev["retrievals"] = int(u["retrievals"])
        ev["outcomes"] = int(u["outcomes"]) if pd.notna(u["outcomes"]) else 0
        ev["last_evidence"] = iso_date(u["last_used"])
        return ev
