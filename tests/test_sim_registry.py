"""The scenario register (memlab.sim.registry): one record per scenario, every name the rest of
memlab reads derived from it, and docs/DESIGN.md's "How to add a scenario" followed step by step
with a toy S12."""

from __future__ import annotations

import json

import pytest

import memlab
from memlab.cli import main
from memlab.errors import SimulationError
from memlab.sim.claims import CLAIMS
from memlab.sim.model.iterations import Iteration
from memlab.sim.real import LLM_STAND_INS, REAL_RULES, RULE_LLM, llm_stand_in, run_real
from memlab.sim.real.scripts import REAL_SCENARIOS
from memlab.sim.registry import (
    Scenario,
    get_scenario,
    register_scenario,
    registered_scenarios,
    unregister_scenario,
)
from memlab.sim.rules import RULES
from memlab.sim.model.cells import SCENARIO_FLAGS
from memlab.sim.model.scenarios import Context
from memlab.sim.scenarios import SCENARIOS, ScenarioResult, resolve_scenarios

BUILT_IN = [f"S{n}" for n in range(1, 12)]
S12_RULE = "pass: the iteration guards pinned blocks; fail: it does not"


def test_every_record_has_a_rule_a_modelled_function_and_the_views_follow_it():
    records = registered_scenarios()
    assert [r.code for r in records][:11] == BUILT_IN
    for r in records:
        assert isinstance(r, Scenario) and r.rule and callable(r.run), r.code
        assert r.modelled_metrics, r.code
        assert SCENARIOS[r.code] is r and RULES[r.code] == r.rule == REAL_RULES[r.code]
        assert SCENARIO_FLAGS[r.code] == r.flags
        assert llm_stand_in(r.code) == (r.llm if r.llm is not None else RULE_LLM)
        assert r.claims == tuple(c for c in CLAIMS if c.scenario == r.code)
    # REAL_SCENARIOS holds exactly the records that name a real script, each resolved to it.
    assert list(REAL_SCENARIOS) == [r.code for r in records if r.real is not None]
    assert list(REAL_SCENARIOS) == BUILT_IN
    for code, script in REAL_SCENARIOS.items():
        module, name = get_scenario(code).real.split(":")
        assert (script.__module__, script.__name__) == (module, name)
    assert REAL_SCENARIOS["S11"].__name__ == "s11_review"
    assert list(LLM_STAND_INS) == ["S5", "S6", "S7", "S8", "S11"]
    assert LLM_STAND_INS["S7"].startswith(RULE_LLM)
    # Claims come from claims.py by code: S3 has three (one on 0.19.2, two on 0.20.0).
    assert [c.release for c in get_scenario("S3").claims] == ["0.19.2", "0.20.0", "0.20.0"]


def test_register_refuses_what_it_cannot_use():
    def run(ctx, it):
        raise AssertionError("never run")

    with pytest.raises(SimulationError, match="already registered"):
        register_scenario("S3", "again", "control", run, rule="r")
    with pytest.raises(SimulationError, match="needs its rule"):
        register_scenario("S13", "no rule", "control", run, rule="")
    with pytest.raises(SimulationError, match="module:function"):
        register_scenario("S13", "bad script", "control", run, rule="r", real="memlab.sim.x")
    with pytest.raises(SimulationError, match="upper case"):
        register_scenario("s13", "lower", "control", run, rule="r")
    with pytest.raises(SimulationError, match="not registered"):
        unregister_scenario("S13")
    assert "S13" not in SCENARIOS and get_scenario("S3").title.startswith("New block")


# ---- docs/DESIGN.md "How to add a scenario", step by step -------------------------------------
# Step 1: the modelled function reads the iteration's design flag, measures and grades it.
def s12_pin_guard(ctx: Context, it: Iteration) -> ScenarioResult:
    guarded = bool(it.pin_guard)
    outcome = "pass" if guarded else "fail"
    return ScenarioResult("S12", it.name, outcome, f"pin guard {'on' if guarded else 'off'}",
                          metrics={"pin_guard": guarded})


@pytest.fixture
def s12():
    # Step 2 (a real script) is skipped: S12 has none. Step 3: one register_scenario call.
    record = register_scenario("S12", "Toy: pinned blocks are guarded", "control", s12_pin_guard,
                               rule=S12_RULE, real=None, flags=("pin_guard",), llm=None,
                               modelled_metrics=("pin_guard",), measured_metrics=())
    try:
        yield record
    finally:
        if "S12" in SCENARIOS:
            unregister_scenario("S12")


def test_the_recipe_adds_a_scenario(s12, capsys):
    assert SCENARIOS["S12"] is s12 and RULES["S12"] == S12_RULE
    assert "S12" not in REAL_SCENARIOS and s12.claims == () and s12.real_script() is None
    # Step 5: simulate runs it on the modelled iterations (Iteration 1 has no pin guard, 2 has).
    run = memlab.simulate(scenarios=["S12"], iterations=[1, 2])
    assert list(run.table.columns) == ["S12"]
    assert run.table["S12"].tolist() == ["fail", "pass"]
    cell = run.cell(1, "S12")
    assert cell.rule == S12_RULE and cell.basis == "modelled" and cell.metrics == {
        "pin_guard": False}
    assert "pin_guard=False" in cell.assumptions
    text = run.render()
    assert "  S12  Toy: pinned blocks are guarded (control)" in text
    assert f"      rule (modelled and measured alike): {S12_RULE}" in text
    # ... and so does the CLI, whose --json cells carry its rule.
    assert main(["simulate", "--no-real", "--iterations", "1,2", "--scenarios", "S12",
                 "--json"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert [(c["scenario"], c["outcome"], c["rule"]) for c in cells] == [
        ("S12", "fail", S12_RULE), ("S12", "pass", S12_RULE)]
    # No real script: the real rows do not run it (no cell, no release driver started).
    assert run_real(["0.19.2", "0.20.0"], ["S12"]) == {}
    # Step 6: unregistered, it is an unknown scenario everywhere.
    unregister_scenario("S12")
    assert "S12" not in SCENARIOS and "S12" not in RULES and "S12" not in SCENARIO_FLAGS
    with pytest.raises(SimulationError, match="unknown scenario 'S12'"):
        resolve_scenarios(["S12"])
    with pytest.raises(SimulationError, match="unknown scenario 'S12'"):
        run_real(["0.20.0"], ["S12"])
    capsys.readouterr()
    assert main(["simulate", "--no-real", "--scenarios", "S12"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown scenario 'S12'" in err[0]


@pytest.mark.slow
def test_a_scenario_without_a_real_script_is_not_run_on_the_real_rows(s12):
    # The release's venv is found (or built) for its source facts; no driver starts.
    run = memlab.simulate(scenarios=["S12"], iterations=[2], releases=["0.20.0"], cache=False)
    assert run.rows == ["2: CRUD + pin guard + log", "elfmem 0.20.0 (real)"]
    assert run.table["S12"].tolist() == ["pass", None]
    assert ("elfmem 0.20.0 (real)", "S12") not in run.results
    table = run.render().split("Iteration x Scenario", 1)[1].split("Evidence", 1)[0]
    assert [line.split()[-1] for line in table.splitlines()[3:5]] == ["~pass", "-"]
