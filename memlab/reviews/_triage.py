"""Impact scores: which choices a person should read first.

``score = certainty * (tokens_saved + PRIORITY[section])``:

- ``tokens_saved``: about chars/4 of what the choice's first (recommended) option removes;
- ``PRIORITY``: a fixed bonus, in tokens, for choices whose value is not the tokens they free:
  a drifted constitution or a contradiction misleads the agent on every turn that reads it;
- ``certainty``: how sure the evidence is: 1 for an exact duplicate, a rule breach or a
  constitutional drift, the measured cosine for a near-duplicate or a candidate contradiction,
  0.9 for a contradiction elfmem itself recorded, 0.3 for a stale unit (absence of evidence).

``risk`` is what a wrong tick costs: low (an exact copy, a frontmatter fix), medium (a
paraphrase, a stale unit, a restore) or high (a contradiction: one side of a claim goes).
"""

from __future__ import annotations

import math
from typing import Any

from memlab.constants import CHARS_PER_TOKEN

__all__ = [
    "PRIORITY",
    "STALE_CERTAINTY",
    "RECORDED_CONTRADICTION_CERTAINTY",
    "tokens",
    "impact",
    "rank",
]

PRIORITY = {
    "drift": 200,
    "contradictions": 100,
    "limits": 80,
    "rules": 40,
    "duplicates": 0,
    "stale": 0,
}
STALE_CERTAINTY = 0.3
RECORDED_CONTRADICTION_CERTAINTY = 0.9


def tokens(chars: Any) -> int:
    """Tokens of a text of ``chars`` characters, by the chars/4 rule of thumb memlab uses
    (:data:`memlab.constants.CHARS_PER_TOKEN`)."""
    try:
        return int(math.ceil(int(chars) / CHARS_PER_TOKEN))
    except (TypeError, ValueError):
        return 0


def impact(
    section: str,
    tokens_saved: int,
    total_tokens: int,
    *,
    certainty: float,
    risk: str,
    share_of: str,
) -> dict[str, Any]:
    share = tokens_saved / total_tokens if total_tokens else 0.0
    score = max(0.0, min(1.0, float(certainty))) * (tokens_saved + PRIORITY.get(section, 0))
    return {
        "tokens_saved": int(tokens_saved),
        "share": round(share, 4),
        "share_of": share_of,
        "risk": risk,
        "certainty": round(float(certainty), 3),
        "score": round(score, 2),
    }


def rank(choices: list[Any]) -> list[Any]:
    """Highest score first; ties broken by section order, then id (stable across runs)."""
    order = list(PRIORITY)
    return sorted(
        choices,
        key=lambda c: (
            -c.impact["score"],
            order.index(c.section) if c.section in order else 99,
            c.id,
        ),
    )
