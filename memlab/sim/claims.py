"""The doc's claims about its baseline and its redesign, checked against the shipped releases.

Each claim names the release it is about (0.19.2 stands for the doc's baseline v0.19.3, which
was never published; 0.20.0 shipped steps 1-7 of the doc's sequencing), the scenario whose
measured cell tests it, and what the doc expects. The verdict compares that expectation with
the measured cell: ``confirms``, ``contradicts``, or ``not run`` (the cell is not in this
run). The evidence is the measured cell's own summary, so every verdict can be traced to the
release's behaviour under the run's seed and parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import pandas as pd

__all__ = ["Claim", "CLAIMS", "claims_table"]


@dataclass(frozen=True)
class Claim:
    release: str
    scenario: str
    claim: str
    #: Where the doc says it.
    where: str
    #: The doc's expectation, as a test over the measured cell (outcome, metrics).
    expects: Callable[[str, dict[str, Any]], bool]
    #: The expectation in words.
    doc_says: str


def _outcome(*ok: str) -> Callable[[str, dict[str, Any]], bool]:
    return lambda outcome, metrics: outcome in ok


CLAIMS: tuple[Claim, ...] = (
    Claim("0.19.2", "S1", "without an edit API, a reword lands only if its cosine falls in "
          "[0.90, 0.95) (the operator cannot steer it)", "§6 Iteration 1, S1",
          lambda o, m: (o == "pass") == (0.90 <= m.get("cosine_old_new", -1) < 0.95),
          "pass only inside the band"),
    Claim("0.20.0", "S1", "edit() rewords a block directly", "§9 step 2", _outcome("pass"),
          "pass"),
    Claim("0.19.2", "S2", "there is no delete; decay is inert, so unwanted blocks stay",
          "§6 Iteration 1, S2", _outcome("fail"), "fail"),
    Claim("0.20.0", "S2", "forget() deletes a block directly", "§9 step 2", _outcome("pass"),
          "pass"),
    Claim("0.19.2", "S3", "a block at >= 0.90 cosine supersedes a constitutional block, no "
          "tier or pin check", "§2.3, §6 Iteration 1, S3",
          lambda o, m: o == "fail" if 0.90 <= m.get("cosine", 0) < 0.95 else o == "pass",
          "fail inside [0.90, 0.95)"),
    Claim("0.20.0", "S3", "a pinned constitutional block survives a 0.91-cosine arrival",
          "§6 Iteration 2, S3; §9 step 1", _outcome("pass"), "pass"),
    Claim("0.20.0", "S3", "setup's constitutional blocks carry the pin (pinned: true)",
          "§5.2, §9 step 1", lambda o, m: m.get("target_pinned") is True, "pinned"),
    Claim("0.19.2", "S4", "10 learned blocks cost up to 110 LLM calls (pairwise contradiction)",
          "§6 Iteration 1, S4", _outcome("fail"), "fail (> 2 calls per block)"),
    Claim("0.20.0", "S4", "with pairwise contradiction retired, 10 blocks cost ~10 calls",
          "§6 Iteration 3, S4; §9 step 7b", _outcome("pass"), "pass"),
    Claim("0.19.2", "S5", "init seeds 10 blocks and a local model needs OPENAI_API_KEY",
          "§6 Iteration 1, S5", _outcome("fail"), "fail"),
    Claim("0.20.0", "S5", "init writes zero blocks and a local endpoint needs no key "
          "(api_key: none)", "§9 steps 4-5", _outcome("pass"), "pass"),
    Claim("0.19.2", "S6", "with no key the system starts and degrades silently",
          "§6 Iteration 1, S6; RC4", _outcome("fail"), "fail"),
    Claim("0.20.0", "S6", "preflight fails loudly when the key is absent", "§9 step 3",
          _outcome("pass"), "pass"),
    Claim("0.19.2", "S7", "retrieval is fine at 100x; consolidation cost is only mitigated",
          "§6 Iteration 1, S7", _outcome("partial"), "partial"),
    Claim("0.19.2", "S8", "SQLite WAL handles two concurrent writers", "§6 Iteration 1, S8",
          _outcome("pass"), "pass"),
    Claim("0.20.0", "S8", "SQLite WAL handles two concurrent writers", "§6 Iteration 2, S8",
          _outcome("pass"), "pass"),
    Claim("0.19.2", "S9", "no mutation log: what changed cannot be audited",
          "§6 Iteration 1, S9", _outcome("fail", "partial"), "fail"),
    Claim("0.20.0", "S9", "changes are auditable (mutation log / supersession audit trail)",
          "§6 Iteration 2, S9", _outcome("pass"), "pass"),
    Claim("0.19.2", "S10", "the constitution erodes over months of use", "§2.3, §6 Iteration 1, "
          "S10", _outcome("fail", "partial"), "fail"),
    Claim("0.20.0", "S10", "the constitution survives (pin guard, no supersession)",
          "§6 Iteration 2, S10", _outcome("pass"), "pass"),
    Claim("0.20.0", "S11", "a whole-corpus review at 14k blocks must chunk, and chunks hide "
          "cross-chunk duplicates", "§6 Iteration 3, S11", _outcome("fail", "partial"),
          "fail or partial"),
)


def claims_table(results: Mapping[tuple[str, str], Any], releases: list[str],
                 sizes: Mapping[str, Mapping[str, int]] | None = None) -> pd.DataFrame:
    """One row per claim about a release in ``releases``: doc, measured outcome, verdict."""
    from memlab.sim.real import release_row

    rows = []
    for c in CLAIMS:
        if c.release not in releases:
            continue
        res = results.get((release_row(c.release), c.scenario))
        if res is None:
            rows.append({"release": c.release, "scenario": c.scenario, "claim": c.claim,
                         "where": c.where, "doc_says": c.doc_says, "measured": None,
                         "verdict": "not run", "evidence": ""})
            continue
        ok = c.expects(res.outcome, res.metrics)
        rows.append({"release": c.release, "scenario": c.scenario, "claim": c.claim,
                     "where": c.where, "doc_says": c.doc_says, "measured": res.outcome,
                     "verdict": "confirms" if ok else "contradicts", "evidence": res.summary})
    sizes = sizes or {}
    if "0.19.2" in sizes:
        code = sizes["0.19.2"]["code"]
        lines = sizes["0.19.2"]["lines"]
        rows.append({"release": "0.19.2", "scenario": "Simplicity",
                     "claim": "the baseline is 23,499 source lines", "where": "§2.4",
                     "doc_says": "23,499", "measured": f"{lines:,} lines ({code:,} code)",
                     "verdict": "confirms" if abs(lines - 23_499) / 23_499 < 0.05
                     else "contradicts",
                     "evidence": f"line counter over the installed elfmem 0.19.2 package: "
                                 f"{lines:,} lines, {code:,} non-blank non-comment"})
    if "0.19.2" in sizes and "0.20.0" in sizes:
        a, b = sizes["0.19.2"]["code"], sizes["0.20.0"]["code"]
        rows.append({"release": "0.20.0", "scenario": "Simplicity",
                     "claim": "the minimal patch (CRUD + pin guard + log) makes the code "
                              "larger, not smaller", "where": "§6 Iteration 2, Simplicity",
                     "doc_says": "more lines", "measured": f"{b - a:+,} code lines",
                     "verdict": "confirms" if b > a else "contradicts",
                     "evidence": f"{a:,} -> {b:,} non-blank non-comment lines"})
    return pd.DataFrame(rows, columns=["release", "scenario", "claim", "where", "doc_says",
                                       "measured", "verdict", "evidence"])


#: Which modelled iteration each shipped release stands for: 0.19.2 is the doc's baseline
#: (Iteration 1); 0.20.0 shipped the minimal patch and retired pairwise contradiction, so it is
#: compared with Iterations 2 and 3.
COUNTERPARTS: dict[str, tuple[int, ...]] = {"0.19.2": (1,), "0.20.0": (2, 3)}


def model_vs_release(table: pd.DataFrame, iterations: list[Any], releases: list[str]
                     ) -> pd.DataFrame:
    """Per scenario, a modelled iteration's outcome next to its shipped counterpart's measured
    one: where the world model and the real release agree."""
    from memlab.sim.real import release_row

    rows = []
    by_number = {getattr(it, "number", None): it.name for it in iterations}
    for rel in releases:
        for number in COUNTERPARTS.get(rel, ()):
            name = by_number.get(number)
            if name is None or release_row(rel) not in table.index:
                continue
            for code in table.columns:
                modelled, measured = table.at[name, code], table.at[release_row(rel), code]
                if modelled is None or measured is None:
                    continue
                rows.append({"release": rel, "iteration": name, "scenario": code,
                             "modelled": modelled, "measured": measured,
                             "agree": modelled == measured})
    return pd.DataFrame(rows, columns=["release", "iteration", "scenario", "modelled",
                                       "measured", "agree"])
