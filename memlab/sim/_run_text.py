"""A simulation run as text (``render()``, what ``memlab simulate`` prints).

Part of :mod:`memlab.sim.run`, whose ``SimulationRun`` is a :class:`RunText`.
"""

from __future__ import annotations

from memlab.sim._run_frames import RunFrames

__all__ = ["RunText"]

_WORD = {
    "pass": "pass",
    "partial": "PART",
    "fail": "FAIL",
    "n/a": "n/a",
    "green": "green",
    "amber": "amber",
    "red": "RED",
    None: "-",
}


class RunText(RunFrames):
    """A run's ``render()``."""

    def render(self, *, width: int = 110) -> str:
        """The table (modelled cells marked ``~``), evidence with each scenario's rule (one for
        modelled and measured cells) and its measured cells' LLM stand-in, whether each measured
        cell came from the result cache, fitness, journey, measured simplicity, checked claims
        (testable or not, and why) and findings."""
        inst = self.instance.summary()
        out = [
            f"memlab simulate  seed={self.seed}",
            "instance: " + ", ".join(f"{k}={v}" for k, v in inst.items()),
        ]
        if self.releases:
            out.append(
                f"real rows: elfmem {', '.join(self.releases)} run in their own venvs; "
                f"params: {self.meta.get('params')}"
            )
        out.append("")
        basis = self.basis
        table = self.table.copy()
        for col in table.columns:
            table[col] = [
                _cell(o, b) + self.stability_mark(r, col)
                for r, o, b in zip(table.index, table[col], basis[col])
            ]
        seeds = self.meta.get("stability_seeds") or [self.seed]
        out += [
            "Iteration x Scenario   (~x = modelled: the doc's estimate, executed from the "
            "iteration's design flags; plain = measured on a shipped release)"
            + (
                f"\n  * = the verdict moves across seeds {','.join(map(str, seeds))}; "
                f"? = decided at seed {self.seed} only (see Stability)"
                if len(seeds) > 1
                else ""
            ),
            table.to_string(),
            "",
        ]
        out.append("Evidence")
        for scenario in self.scenarios:
            out.append(f"  {scenario.code}  {scenario.title} ({scenario.nature})")
            for row in self.rows:
                res = self.results.get((row, scenario.code))
                if res is None:
                    continue
                tag = (
                    "modelled, cached"
                    if res.cached
                    else "modelled, computed now"
                    if res.cached is False
                    else "modelled"
                )
                if res.basis == "measured":
                    tag = (
                        f"measured, cached from {res.measured_at}"
                        if res.cached
                        else "measured now"
                        if res.cached is False
                        else "measured"
                    )
                st = self.stability.get((row, scenario.code)) or {}
                if st.get("moved"):
                    tag += "; MOVES: " + ", ".join(
                        f"seed {k} {_WORD[v]}" for k, v in st["seeds"].items()
                    )
                line = f"    {row[:26]:<26} {_WORD[res.outcome]:<5} [{tag}] {res.summary}"
                out.append(line if len(line) <= width * 2 else line[: width * 2 - 1] + "…")
            rule = next(
                (
                    self.results[(r, scenario.code)].rule
                    for r in self.rows
                    if (r, scenario.code) in self.results and self.results[(r, scenario.code)].rule
                ),
                "",
            )
            if rule:
                out.append(f"      rule (modelled and measured alike): {rule}")
            llm = next(
                (
                    self.results[(r, scenario.code)].llm
                    for r in self.rows
                    if (r, scenario.code) in self.results
                    and self.results[(r, scenario.code)].basis == "measured"
                ),
                None,
            )
            if llm:
                out.append(f"      LLM in the measured cells: {llm}")
        out.append("")
        if len(seeds) > 1 and self.stability:
            moved = [k for k, v in self.stability.items() if v["moved"]]
            single = [k for k, v in self.stability.items() if v["moved"] is None]
            out.append(
                f"Stability across seeds {','.join(map(str, seeds))}: "
                f"{len(moved)} of {len(self.stability)} cells move"
                + (f"; {len(single)} decided at seed {self.seed} only" if single else "")
            )
            for key in moved:
                st = self.stability[key]
                out.append(
                    f"  moves  {key[0][:26]:<26} {key[1]:<4} "
                    + ", ".join(f"seed {k}: {_WORD[v]}" for k, v in st["seeds"].items())
                )
            if single:
                out.append(f"  seed {self.seed} only: " + ", ".join(f"{r} {c}" for r, c in single))
                out.append(f"    why: {self.stability[single[0]]['note']}")
            out.append("")
        if self.iterations:
            fit = self.fitness.copy()
            for col in ("Control", "Integrity", "Cost", "Simplicity", "Scale"):
                fit[col] = fit[col].map(lambda v: _WORD[v])
            out += [
                "Fitness of the modelled iterations (rule: memlab/sim/fitness.py; "
                "Simplicity there is the doc's estimate)",
                fit.to_string(),
                "",
            ]
            journey = self.journey[
                ["change", "S1-S10", "fixed", "improved", "regressed", "verdict"]
            ]
            out += ["Journey (modelled)", journey.to_string(), ""]
        if self.simplicity:
            out.append(
                "Simplicity, measured (non-blank, non-comment lines of the installed "
                "elfmem package)"
            )
            for rel, c in self.simplicity.items():
                out.append(
                    f"  elfmem {rel}: {c['code']:,} code lines in {c['files']} files "
                    f"({c['lines']:,} lines in all)"
                )
            out.append("")
        if self.releases:
            out.append("Claims checked against the shipped releases")
            for row in self.claims.itertuples(index=False):
                if row.verdict == "not run":
                    continue
                out.append(
                    f"  [{row.verdict}] {row.claim}"
                    + (
                        f"  (decided by {row.source})"
                        if isinstance(row.source, str)
                        else f"  (no one line: {row.source_note})"
                        if isinstance(row.source_note, str)
                        else ""
                    )
                )
                out.append(f"      {row.release}: {row.evidence}")
                if row.why:
                    out.append(f"      {'testable' if row.testable else 'untestable'}: {row.why}")
            out.append("")
        check = self.model_check
        if len(check):
            out.append("World model vs the shipped release it stands for")
            for (rel, it), part in check.groupby(["release", "iteration"], sort=False):
                off = part[~part["agree"]]
                out.append(
                    f"  {it} vs elfmem {rel}: {int(part['agree'].sum())}/{len(part)} "
                    "scenarios agree"
                    + (
                        "; differ: "
                        + ", ".join(
                            f"{r.scenario} ~{_WORD[r.modelled]}/{_WORD[r.measured]}"
                            for r in off.itertuples()
                        )
                        if len(off)
                        else ""
                    )
                )
            out.append("")
        if self.iterations:
            out.append("Findings: where the modelled run disagrees with the doc")
            if self.findings.empty:
                out.append("  none")
            for row in self.findings.itertuples(index=False):
                out.append(
                    f"  {row.iteration} / {row.where}: doc {row.doc}, run {row.run} -- {row.why}"
                )
        stats = self.meta.get("embedder")
        out += ["", f"run took {self.meta.get('seconds', 0):.1f} s; embeddings: {stats}"]
        model = self.meta.get("model_cache")
        if model:
            cached = [
                f"{r} {c}"
                for (r, c), res in self.results.items()
                if res.basis == "modelled" and res.cached
            ]
            n_seeds = len(self.meta.get("stability_seeds") or [self.seed])
            mine = sum(res.basis == "modelled" for res in self.results.values())
            out.append(
                f"modelled cells: {model['hits']} from the result cache, "
                f"{model['misses']} computed{' (--fresh)' if model['fresh'] else ''}"
                + (f" over {n_seeds} seeds" if n_seeds > 1 else "")
                + (
                    f"; at seed {self.seed}: all {mine} cached"
                    if len(cached) == mine
                    else f"; at seed {self.seed}, cached: {', '.join(cached)}"
                    if cached
                    else f"; at seed {self.seed}: none cached"
                )
            )
        cache = self.meta.get("cache")
        if cache:
            out.append(
                f"real cells: {cache['hits']} from the result cache, {cache['misses']} "
                f"run{' (--fresh)' if cache['fresh'] else ''}; cache {cache['folder']}"
            )
        if self.meta.get("embedding"):
            out.append(f"embedding precision: {self.meta['embedding']}")
        return "\n".join(out)


def _cell(outcome: str | None, basis: str | None) -> str:
    word = _WORD[outcome]
    return word if basis == "measured" or outcome is None else "~" + word
