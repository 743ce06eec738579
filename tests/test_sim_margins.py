"""Margins and marks: each measured cell says how far it is from its threshold and how many
draws decided it; every modelled figure (fitness, journey) says it is modelled in the JSON
and the HTML. No release runs here."""

from __future__ import annotations

import pytest

from memlab.sim.real._common import RealParams, measured_result
from memlab.sim.rules import grade_levels, margin


@pytest.mark.parametrize("code,value,threshold,distance", [
    ("S10", 7, 8, -1.0),       # one role short of partial
    ("S10", 10, 10, 0.0),      # pass, at the bar
    ("S9", 0.5, 0.5, 0.0),     # partial by nothing
    ("S9", 0.96, 0.95, 0.01),
    ("S4", 10.6, 2.0, -8.6),   # lower is better: 8.6 calls per block over the partial bar
    ("S4", 1.0, 1.1, 0.1),
    ("S11", 0.2, 0.5, -0.3),
])
def test_margin_is_the_signed_distance_to_the_nearest_threshold(code, value, threshold,
                                                                 distance):
    m = margin(code, value)
    assert m["threshold"] == threshold and m["distance"] == pytest.approx(distance)
    # Its sign agrees with the verdict: on a bar or past it in the verdict's favour.
    verdict = grade_levels(code, value)
    nudged = grade_levels(code, value + (0.001 if m["distance"] < 0 else -0.001)
                          * (1 if code != "S4" else -1))
    assert (verdict != nudged) == (abs(m["distance"]) < 0.002), (verdict, nudged)


class _Ctx:
    release = "0.19.2"
    params = RealParams()


def test_every_measured_cell_states_its_margin_and_draws():
    one = measured_result(_Ctx(), "S1", "pass", "s", {"score": 1.0})
    assert one.metrics["draws"] == 1 and one.metrics["margin"]["distance"] == 0.0
    assert "1 draw decided it (one draw: the seed alone can move it)" in one.summary
    via = measured_result(_Ctx(), "S1", "pass", "s", {"score": 1.0, "draw_decides": False})
    assert "(the outcome does not depend on what was drawn)" in via.summary
    # S10 rests on the restatements that reached the constitution, not on its 10 roles.
    ten = measured_result(_Ctx(), "S10", "fail", "s", {"roles_intact": 7, "restatements": 21})
    assert "-1 from the 8 threshold; 21 draws decided it" in ten.summary
    s7 = measured_result(_Ctx(), "S7", "partial", "s", {"margin_queries": 3.9, "queries": 50})
    assert "+3.9 queries from the retrieval bar; 50 draws" in s7.summary
    # n/a has no threshold to be near.
    na = measured_result(_Ctx(), "S9", "n/a", "s", {"share": None, "changes": 0})
    assert "margin" not in na.metrics


def test_fitness_and_journey_are_marked_modelled_in_json_and_html():
    from memlab.sim import ITERATIONS, simulate
    from memlab.sim.views import fitness_table

    run = simulate([ITERATIONS[1], ITERATIONS[2]], ["S2"])
    doc = run.as_dict()
    assert doc["fitness"] and all(r["basis"] == "modelled" for r in doc["fitness"])
    assert doc["journey"] and all(r["basis"] == "modelled" for r in doc["journey"])
    assert "Modelled (the doc's estimate)" in fitness_table(run).to_html()
