"""Fitness and journey: the five dimensions from scenario outcomes, by rules written down here.

Fitness (per iteration) is derived from its row of the Iteration x Scenario table:

=============  =================================================================================
Control        worst of S1, S2 (can the operator deterministically change / remove memory?)
Integrity      worst of S3, S9, S10 (can memory be silently destroyed?)
Cost           S4 (LLM calls to maintain steady state)
Simplicity     estimated LOC vs the baseline's 23,499: green <= 80 %, amber < 100 %, red >= 100 %
Scale          S7, lowered to amber when S11 fails or is partial
=============  =================================================================================

pass -> green, partial -> amber, fail -> red; ``n/a`` does not count. S11 can cost Scale one
level but not make it red: a chunked review that misses cross-chunk duplicates curates worse
but loses nothing and breaks no operation, while a failing S7 means retrieval itself broke.
The doc scores S5, S6 and S8 but maps none of them to a dimension; neither does this rule (they
still count in the journey).

Journey: the first iteration is the baseline and the first incumbent. Each later iteration is
compared with the incumbent scenario by scenario; it is **rejected** if any scenario falls to
fail from pass/partial or any fitness dimension falls to red from non-red, otherwise **kept**
(and becomes the incumbent) if it fixes or improves at least one scenario or dimension, or
changes no outcome with fewer estimated lines. The last kept iteration is the incumbent.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import pandas as pd

from memlab.sim.model.iterations import BASELINE_LOC, ITERATIONS, Iteration

__all__ = [
    "DIMENSIONS",
    "RANK",
    "fitness_row",
    "fitness_table",
    "journey_table",
    "DOC_TABLE",
    "DOC_FITNESS",
    "DOC_VERDICT",
    "findings_table",
    "SYMBOL",
]

DIMENSIONS = ("Control", "Integrity", "Cost", "Simplicity", "Scale")
RANK = {"fail": 0, "partial": 1, "pass": 2}
LEVEL = {0: "red", 1: "amber", 2: "green"}
SYMBOL = {
    "pass": "🟢",
    "partial": "🟡",
    "fail": "🔴",
    "n/a": "–",
    "green": "🟢",
    "amber": "🟡",
    "red": "🔴",
    None: "·",
}
_DIMENSION_SCENARIOS = {
    "Control": ("S1", "S2"),
    "Integrity": ("S3", "S9", "S10"),
    "Cost": ("S4",),
    "Scale": ("S7",),
}
#: Simplicity thresholds as fractions of the baseline's estimated LOC.
SIMPLICITY_GREEN = 0.80
SIMPLICITY_AMBER = 1.00

# ---- what the doc says (§6), for findings --------------------------------------------------
P, A, F = "pass", "partial", "fail"
#: The doc's cell grades; None where the doc gives no grade (S11 before it existed, or
#: "found" at Iteration 3); "n/a" where it says so.
DOC_TABLE: dict[int, dict[str, str | None]] = {
    1: dict(S1=F, S2=F, S3=F, S4=F, S5=F, S6=F, S7=A, S8=P, S9=F, S10=F, S11=None),
    2: dict(S1=P, S2=P, S3=P, S4=F, S5=F, S6=F, S7=A, S8=P, S9=P, S10=P, S11=None),
    3: dict(S1=P, S2=P, S3=P, S4=P, S5=F, S6=F, S7=P, S8=P, S9=P, S10=P, S11=None),
    4: dict(S1=P, S2=P, S3=P, S4=P, S5=P, S6=A, S7=P, S8=A, S9=P, S10=P, S11=P),
    5: dict(S1=P, S2=P, S3=P, S4=P, S5=P, S6=P, S7=P, S8=A, S9=P, S10=P, S11=P),
    6: dict(S1=P, S2=P, S3=P, S4=P, S5=P, S6=P, S7=F, S8=P, S9=P, S10=P, S11="n/a"),
}
_g, _a, _r = "green", "amber", "red"
DOC_FITNESS: dict[int, tuple[str, ...]] = {
    1: (_r, _r, _r, _r, _a),
    2: (_g, _g, _r, _r, _a),
    3: (_g, _g, _g, _a, _g),
    4: (_g, _g, _g, _g, _g),
    5: (_g, _g, _g, _g, _g),
    6: (_g, _g, _g, _g, _r),
}
DOC_VERDICT = {1: "baseline", 2: "kept", 3: "kept", 4: "kept", 5: "incumbent", 6: "rejected"}


def _worst(outcomes: Iterable[str | None]) -> str | None:
    graded = [o for o in outcomes if o in RANK]
    if not graded:
        return None
    return LEVEL[min(RANK[o] for o in graded)]


def simplicity(iteration: Iteration) -> str:
    ratio = iteration.estimated_loc / BASELINE_LOC
    if ratio <= SIMPLICITY_GREEN:
        return "green"
    return "amber" if ratio < SIMPLICITY_AMBER else "red"


def fitness_row(iteration: Iteration, outcomes: Mapping[str, str]) -> dict[str, Any]:
    row: dict[str, Any] = {"iteration": iteration.name}
    for dim in DIMENSIONS:
        if dim == "Simplicity":
            row[dim] = simplicity(iteration)
        else:
            row[dim] = _worst(outcomes.get(s) for s in _DIMENSION_SCENARIOS[dim])
        if dim == "Scale" and row[dim] == "green" and outcomes.get("S11") in ("fail", "partial"):
            row[dim] = "amber"
    row["estimated_loc"] = iteration.estimated_loc
    row["estimated_concepts"] = iteration.estimated_concepts
    return row


def fitness_table(iterations: list[Iteration], table: pd.DataFrame) -> pd.DataFrame:
    rows = [fitness_row(it, table.loc[it.name].to_dict()) for it in iterations]
    return pd.DataFrame(rows).set_index("iteration")


def _counts(outcomes: Mapping[str, str], codes: Iterable[str]) -> str:
    vals = [outcomes.get(c) for c in codes if outcomes.get(c) in RANK]
    return (
        f"{vals.count('fail')} fail / {vals.count('partial')} partial / {vals.count('pass')} pass"
    )


def journey_table(
    iterations: list[Iteration], table: pd.DataFrame, fitness: pd.DataFrame
) -> pd.DataFrame:
    frozen = [c for c in table.columns if c != "S11"]
    rows = []
    incumbent: Iteration | None = None
    for it in iterations:
        outcomes = table.loc[it.name].to_dict()
        row: dict[str, Any] = {
            "iteration": it.name,
            "change": it.change or "(user-defined)",
            "S1-S10": _counts(outcomes, frozen),
            "S1-S11": _counts(outcomes, table.columns),
        }
        if incumbent is None:
            row.update(vs=incumbent, fixed="", improved="", regressed="", verdict="baseline")
            incumbent = it
            rows.append(row)
            continue
        ref = table.loc[incumbent.name].to_dict()
        fixed: list[str] = []
        improved: list[str] = []
        regressed: list[str] = []
        to_fail: list[str] = []
        for code in table.columns:
            new, old = outcomes.get(code), ref.get(code)
            if new not in RANK or old not in RANK:
                continue
            if RANK[new] > RANK[old]:
                (fixed if new == "pass" else improved).append(code)
            elif RANK[new] < RANK[old]:
                regressed.append(f"{code} {old}->{new}")
                if new == "fail":
                    to_fail.append(code)
        dims_better, dims_red = [], []
        order = {"red": 0, "amber": 1, "green": 2}
        for dim in DIMENSIONS:
            new, old = fitness.loc[it.name, dim], fitness.loc[incumbent.name, dim]
            if new is None or old is None:
                continue
            if order[new] > order[old]:
                dims_better.append(dim)
            elif order[new] < order[old]:
                regressed.append(f"{dim} {old}->{new}")
                if new == "red":
                    dims_red.append(dim)
        loc_delta = it.estimated_loc - incumbent.estimated_loc
        if (
            loc_delta > 0
            and fitness.loc[it.name, "Simplicity"] == fitness.loc[incumbent.name, "Simplicity"]
        ):
            regressed.append(
                f"simplicity (+{loc_delta:,} LOC, still {fitness.loc[it.name, 'Simplicity']})"
            )
        if to_fail or dims_red:
            verdict = "rejected"
            why = ", ".join(to_fail + [f"{d} red" for d in dims_red])
        elif fixed or improved or dims_better:
            verdict = "kept"
            why = ""
        elif not regressed and loc_delta < 0:
            verdict = "kept"
            why = f"same outcomes with {-loc_delta:,} fewer lines"
            improved.append(f"simplicity (-{-loc_delta:,} LOC)")
        else:
            verdict = "rejected"
            why = "no scenario or dimension improved"
        row.update(
            vs=incumbent.name,
            fixed=",".join(fixed),
            improved=",".join(improved),
            regressed="; ".join(regressed),
            verdict=verdict,
            why=why,
        )
        if verdict == "kept":
            incumbent = it
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("iteration")
    if incumbent is not None and len(frame) > 1 and frame.loc[incumbent.name, "verdict"] == "kept":
        frame.loc[incumbent.name, "verdict"] = "incumbent"
    return frame.fillna("")


def _doc_number(it: Iteration) -> int | None:
    """The doc's number for an iteration that is exactly one of the doc's six."""
    if it.number in ITERATIONS and ITERATIONS[it.number] == it:
        return it.number
    return None


def findings_table(
    iterations: list[Iteration],
    table: pd.DataFrame,
    fitness: pd.DataFrame,
    journey: pd.DataFrame,
    results: Mapping[tuple[str, str], Any],
    notes: list[dict[str, Any]] | None = None,
) -> pd.DataFrame:
    """Every place the executed run disagrees with the doc, with the evidence that says why."""
    rows: list[dict[str, Any]] = []
    # Verdicts depend on what came before: compare them only on the doc's own sequence.
    doc_sequence = [_doc_number(it) for it in iterations[:6]] == list(range(1, 7))
    for it in iterations:
        n = _doc_number(it)
        if n is None:
            continue
        for code, doc in DOC_TABLE[n].items():
            if code not in table.columns or doc is None:
                continue
            run = table.loc[it.name, code]
            if run != doc:
                res = results.get((it.name, code))
                rows.append(
                    {
                        "iteration": it.name,
                        "where": code,
                        "doc": doc,
                        "run": run,
                        "why": res.summary if res is not None else "",
                    }
                )
        for dim, doc in zip(DIMENSIONS, DOC_FITNESS[n]):
            run = fitness.loc[it.name, dim]
            if run is not None and run != doc:
                why = _fitness_why(it, dim, table.loc[it.name].to_dict(), fitness)
                rows.append(
                    {"iteration": it.name, "where": dim, "doc": doc, "run": run, "why": why}
                )
        doc_v = DOC_VERDICT[n]
        run_v = journey.loc[it.name, "verdict"] if it.name in journey.index else None
        if doc_sequence and run_v is not None and run_v != doc_v:
            rows.append(
                {
                    "iteration": it.name,
                    "where": "verdict",
                    "doc": doc_v,
                    "run": run_v,
                    "why": journey.loc[it.name, "why"] or journey.loc[it.name, "regressed"],
                }
            )
    rows.extend(notes or [])
    return pd.DataFrame(rows, columns=["iteration", "where", "doc", "run", "why"])


def _fitness_why(
    it: Iteration, dim: str, outcomes: Mapping[str, str], fitness: pd.DataFrame
) -> str:
    if dim == "Simplicity":
        return (
            f"estimated {it.estimated_loc:,} LOC = {it.estimated_loc / BASELINE_LOC:.0%} of "
            f"the baseline (green <= {SIMPLICITY_GREEN:.0%}, amber < 100%)"
        )
    codes = _DIMENSION_SCENARIOS[dim] + (("S11",) if dim == "Scale" else ())
    why = "from " + ", ".join(f"{c}={outcomes.get(c)}" for c in codes)
    if dim == "Scale" and outcomes.get("S11") in ("fail", "partial"):
        why += " (a failing chunked review costs Scale one level; the doc defers its mitigation)"
    return why
