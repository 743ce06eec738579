"""One rule per scenario, for modelled and measured cells alike.

Each scenario's verdict is one of pass / partial / fail / n/a, and the same rule, with the same
thresholds, grades the world model's cell (an iteration's design executed) and the shipped
release's cell (the operator script run against it). So "world model vs shipped release"
compares cells graded alike. Each rule in words is in its scenario's record
(:mod:`memlab.sim.catalog`; :data:`RULES` reads them from the register) and is shown next to
every cell; the ``grade_*`` functions are the rules as code, called by both sides with the measure
named in the rule. ``n/a`` is never a grade of a measure: a scenario whose subject the
iteration or release does not have (or that its LLM stand-in cannot exercise) says so with the
reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Iterable

from memlab.sim.registry import ScenarioView

__all__ = [
    "RULES",
    "S7_RETRIEVAL_SHARE",
    "grade_levels",
    "grade_checks",
    "grade_s6",
    "grade_s7",
    "grade_s8",
    "rule",
    "margin",
]

#: S7: the share of the oracle retriever's hit@5 a system must reach on the same corpus and
#: queries for its retrieval to "hold".
S7_RETRIEVAL_SHARE = 0.9

#: code -> the scenario's rule in words, from its record (:mod:`memlab.sim.registry`).
RULES: Mapping[str, str] = ScenarioView(lambda record: record.rule)

#: (pass_at, partial_at, higher_is_better) of the rules that grade one number.
_LEVELS: dict[str, tuple[float, float, bool]] = {
    "S1": (1.0, 0.5, True),
    "S2": (3, 1, True),
    "S4": (1.1, 2.0, False),
    "S9": (0.95, 0.5, True),
    "S10": (10, 8, True),
    "S11": (0.8, 0.5, True),
}


def rule(code: str) -> str:
    return RULES[code.upper()]


def grade_levels(code: str, value: float) -> str:
    """The verdict of a one-number rule (S1, S2, S4, S9, S10, S11) for ``value``."""
    pass_at, partial_at, higher = _LEVELS[code]
    v, p, q = (value, pass_at, partial_at) if higher else (-value, -pass_at, -partial_at)
    # A small tolerance: a mean of exact scores must not miss "= 1" by a rounding error.
    if v >= p - 1e-9:
        return "pass"
    if v >= q - 1e-9:
        return "partial"
    return "fail"


def margin(code: str, value: float) -> dict[str, float]:
    """How far ``value`` is from the nearest threshold of a one-number rule: ``threshold``
    (that threshold) and ``distance`` (signed, in the rule's units: positive on the side the
    verdict already has, i.e. how much it could move before the verdict changes; negative
    is how far short of the next level up)."""
    pass_at, partial_at, higher = _LEVELS[code]
    sign = 1 if higher else -1
    t = min((pass_at, partial_at), key=lambda th: abs(value - th))
    return {"value": value, "threshold": t, "distance": round(sign * (value - t), 4)}


def grade_checks(checks: Iterable[bool]) -> str:
    """S3, S5: pass when every check holds, partial when some do, fail when none."""
    checks = [bool(c) for c in checks]
    return "pass" if all(checks) else "partial" if any(checks) else "fail"


def grade_s6(*, raised: bool, promoted_unanalysed: int, failures_logged: bool) -> str:
    if raised:
        return "pass"
    if promoted_unanalysed:
        return "fail"
    return "partial" if failures_logged else "pass"


def grade_s7(*, hit_at_5: float, oracle_hit_at_5: float, calls_per_block: float) -> str:
    holds = hit_at_5 >= S7_RETRIEVAL_SHARE * oracle_hit_at_5 - 1e-9
    return grade_checks([holds, calls_per_block <= 2.0])


def grade_s8(
    *,
    rates: Mapping[str, float | None],
    blocks_lost: int,
    errors: int,
    corrupt: bool,
    unrecoverable: dict[str, int] | None = None,
    own_block_lost: int = 0,
) -> str:
    """Both writers' own writes survive: ``rates``: lost_edit_rate per schedule (edits missing
    from the shared block's final text; serial and free must have been run);
    ``unrecoverable``: per schedule, the edits missing from the block *and* kept nowhere
    readable (another table, the git history): an overwritten edit kept somewhere readable
    survives. None: where they are kept was not checked, so every missing edit is lost.
    ``own_block_lost``: edits of a writer's own block (different blocks) that did not land."""
    if rates.get("serial") is None or rates.get("free") is None:
        raise ValueError("S8 is graded on the serial and free schedules' rates")
    lost = (
        {s: float(v) for s, v in rates.items() if v is not None}
        if unrecoverable is None
        else {s: float(v) for s, v in unrecoverable.items()}
    )
    if blocks_lost or errors or corrupt or own_block_lost or lost.get("serial", 0) > 0:
        return "fail"
    return "partial" if any(v > 0 for v in lost.values()) else "pass"
