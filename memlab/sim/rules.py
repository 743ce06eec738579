"""One rule per scenario, for modelled and measured cells alike.

Each scenario's verdict is one of pass / partial / fail / n/a, and the same rule, with the same
thresholds, grades the world model's cell (an iteration's design executed) and the shipped
release's cell (the operator script run against it). So "world model vs shipped release"
compares cells graded alike. :data:`RULES` holds each rule in words (shown next to every
cell); the ``grade_*`` functions are the rules as code, called by both sides with the measure
named in the rule. ``n/a`` is never a grade of a measure: a scenario whose subject the
iteration or release does not have (or that its LLM stand-in cannot exercise) says so with the
reason.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["RULES", "S7_RETRIEVAL_SHARE", "grade_levels", "grade_checks", "grade_s6",
           "grade_s7", "grade_s8", "rule"]

#: S7: the share of the oracle retriever's hit@5 a system must reach on the same corpus and
#: queries for its retrieval to "hold".
S7_RETRIEVAL_SHARE = 0.9

RULES: dict[str, str] = {
    "S1": "score each rewording 1 (new wording active, old wording not active, role kept), "
          "0.5 (new wording active but the old one too, or the role lost), 0 (new wording not "
          "active); pass: mean score = 1; partial: >= 0.5; fail: < 0.5",
    "S2": "pass: 3/3 targets out of active memory by the end of the wait (forgotten or "
          "decayed); partial: 1-2; fail: 0",
    "S3": "a block arrives close to a constitutional one; pass: the constitutional block "
          "keeps its content and the arrival was one the system's supersession acts on "
          "(cosine in its near-duplicate band, elfmem's [0.90, 0.95)), or no path can archive "
          "it; partial: kept, but the arrival's cosine missed the band, so nothing was tested; "
          "fail: archived or changed",
    "S4": "LLM calls per learned block (the doc's Iteration-3 bar is one analysis); pass: "
          "<= 1.1; partial: <= 2; fail: > 2",
    "S5": "two checks: setup with the defaults writes 0 blocks the user did not choose; a "
          "local endpoint is reachable without an API key; pass: both; partial: one; "
          "fail: neither",
    "S6": "with the LLM unreachable: pass: startup or the first LLM-needing step raises, or "
          "every learned block got its LLM analysis; partial: nothing promoted without "
          "analysis, but the failures are only logged; fail: blocks promoted without analysis "
          "and nothing raised (silent degradation)",
    "S7": f"two checks at the corpus size run: retrieval holds (hit@5 >= "
          f"{S7_RETRIEVAL_SHARE} x the oracle's hit@5 on the same corpus and queries; oracle = "
          "ideal vector search, MiniLM cosine top-5 over every block) and LLM calls per "
          "learned block <= 2; pass: both; partial: one; fail: neither",
    "S8": "two real writers, each a read-modify-write edit of one shared block and concurrent "
          "learns, under schedules serial / interleaved (both read before either writes) / "
          "free (N trials, each read after a random offset in [0, 40 ms], twice the 20 ms a "
          "writer thinks between read and write); lost_edit_rate_<schedule> = edits lost / "
          "edits made; fail: a learned block lost, a writer error, a corrupt store, or "
          "lost_edit_rate_serial > 0; partial: lost_edit_rate_free > 0 (uncoordinated "
          "writers lose edits); pass: lost_edit_rate_free = 0 (interleaved is reported: 0 "
          "there means the store detects a stale write)",
    "S9": "share of the month's changes with a timestamped row in the window AND a "
          "recoverable before-state; pass: >= 0.95; partial: >= 0.5; fail: < 0.5",
    "S10": "constitutional roles (of 10) still holding their seeded content; pass: 10/10; "
           "partial: >= 8; fail: < 8",
    "S11": "share of the duplicate pairs a corpus review can see (measured: planted "
           "cross-chunk pairs the release's review reports; modelled: pairs that share one "
           "review call); pass: >= 0.8; partial: >= 0.5; fail: < 0.5; n/a: no corpus review "
           "that compares blocks",
}

#: (pass_at, partial_at, higher_is_better) of the rules that grade one number.
_LEVELS: dict[str, tuple[float, float, bool]] = {
    "S1": (1.0, 0.5, True), "S2": (3, 1, True), "S4": (1.1, 2.0, False),
    "S9": (0.95, 0.5, True), "S10": (10, 8, True), "S11": (0.8, 0.5, True),
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


def grade_s8(*, rates: dict[str, float | None], blocks_lost: int, errors: int,
             corrupt: bool) -> str:
    """``rates``: lost_edit_rate per schedule; serial and free must have been run."""
    if rates.get("serial") is None or rates.get("free") is None:
        raise ValueError("S8 is graded on the serial and free schedules' rates")
    if blocks_lost or errors or corrupt or rates["serial"] > 0:
        return "fail"
    return "partial" if rates["free"] > 0 else "pass"
