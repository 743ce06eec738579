"""The simulation heat map, fitness profile, review chart and memfs commit charts show what the
run, proposal and repository say."""

from __future__ import annotations

from pathlib import Path

import matplotlib.colors as mcolors
import pytest

from memlab import plots
from memlab.plots import _review, _sim

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def run():
    from memlab.sim import simulate

    return simulate([1, 4], ["S1", "S3", "S8"], instance=DATA / "demo" / "elfmem-demo.db")


def _cells(fig):
    ax = fig.axes[0]
    texts = {(round(t.get_position()[0] - 0.5), round(t.get_position()[1] - 0.5)): t.get_text()
             for t in ax.texts}
    patches = {(round(p.get_x()), round(p.get_y())): p for p in ax.patches}
    return ax, texts, patches


def test_outcome_map_colours_each_cell_by_its_verdict_and_marks_modelled_ones(run):
    table = run.table
    basis = _sim._cell_basis(run)
    fig = plots.outcome_map(run)
    ax, texts, patches = _cells(fig)
    assert len(patches) == table.size == 6
    for i, it in enumerate(table.index):
        for j, code in enumerate(table.columns):
            verdict = table.loc[it, code]
            modelled = basis.loc[it, code] == "modelled"
            colour = mcolors.to_hex(patches[(j, i)].get_facecolor())
            assert colour == plots.VERDICT_COLOURS[verdict], (it, code)
            assert bool(patches[(j, i)].get_hatch()) == modelled
            assert texts[(j, i)].lstrip("~").lower() == verdict.lower()
            # a hatched cell's word sits on a patch of the cell's colour (white hatch lines
            # through white letters were unreadable)
            text = next(t for t in ax.texts if (round(t.get_position()[0] - 0.5),
                                                round(t.get_position()[1] - 0.5)) == (j, i))
            box = text.get_bbox_patch()
            assert (box is not None) == modelled
            if modelled:
                assert mcolors.to_hex(box.get_facecolor()) == colour
    # what the demo run measured: Iteration 1 fails S1 and S3, files as truth pass them
    assert texts[(0, 0)] in ("FAIL", "~FAIL") and texts[(0, 1)] in ("pass", "~pass")
    assert [t.get_text() for t in ax.get_yticklabels()] == list(table.index)


def test_outcome_map_hatches_the_modelled_cells_and_leaves_measured_ones_solid(run):
    # Modelled iterations are modelled in every cell; make one cell measured (as a shipped
    # release's row is) and the map must draw exactly that one solid, without the '~'.
    res = run.results[("4: files as truth", "S8")]
    before = res.basis
    res.basis = "measured"
    run.__dict__.pop("basis", None)  # a cached property: recompute from the results
    try:
        assert _sim._cell_basis(run).loc["4: files as truth", "S8"] == "measured"
        _, texts, patches = _cells(plots.outcome_map(run))
        assert not patches[(2, 1)].get_hatch() and not texts[(2, 1)].startswith("~")
        assert patches[(0, 1)].get_hatch() and texts[(0, 1)].startswith("~")
    finally:
        res.basis = before
        run.__dict__.pop("basis", None)


def test_fitness_profile_draws_one_line_per_iteration_at_its_levels(run):
    fig = plots.fitness_profile(run)
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == list(run.fitness.index)
    control = [round(ln.get_ydata()[0]) for ln in lines]  # Control, offsets rounded away
    expected = [{"red": 0, "amber": 1, "green": 2}[v] for v in run.fitness["Control"]]
    assert control == expected == [0, 2]


def test_review_chart_counts_decisions_per_kind():
    from memlab.reviews import review

    proposal = review(DATA / "samples/elfmem/elfmem-0.20.0-schema9.db", as_of="2026-11-30")
    rows = _review._review_rows(proposal)
    fig = plots.review_items(proposal)
    ax = fig.axes[0]
    widths: dict[str, float] = {}
    labels = [t.get_text() for t in ax.get_yticklabels()]
    for bar in ax.patches:
        y = round(bar.get_y() + bar.get_height() / 2)
        widths[labels[y]] = widths.get(labels[y], 0) + bar.get_width()
    assert widths == rows["section"].value_counts().astype(float).to_dict()
    assert sum(widths.values()) == len(rows) > 0
    assert ax.get_title().startswith(f"Review: {len(rows)} decision(s)")


def test_memfs_commit_chart_labels_each_bar_with_its_own_week(tmp_path):
    """Each week's bar stands over that week's start date (pandas' time-series axis once put
    its own ticks there, and relabelling them named the first bar 2026-04-13)."""
    import numpy as np

    import memlab
    from memlab.kinds._memfs._audit import audit_memfs, commits_by_kind
    from memlab.sources._bundle import unpack_bundle

    repo = unpack_bundle(DATA / "samples/memfs/deep-research-memfs.bundle", tmp_path / "repo")
    audit = audit_memfs(memlab.load_memfs(repo), as_of="2026-08-04")
    weeks = commits_by_kind(audit)
    ax = plots.memfs_commits(audit).axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [d.strftime("%Y-%m-%d") for d in weeks.index]
    assert labels[:2] == ["2026-04-06", "2026-04-13"]
    totals: dict[int, float] = {}
    for bar in ax.patches:  # stacked: the heights over one tick add up to that week's commits
        totals[round(bar.get_x() + bar.get_width() / 2)] = \
            totals.get(round(bar.get_x() + bar.get_width() / 2), 0) + bar.get_height()
    assert list(ax.get_xticks()) == sorted(totals)
    assert [totals[int(x)] for x in ax.get_xticks()] == weeks.sum(axis=1).astype(float).tolist()
    line = plots.memfs_prompt_size(audit).axes[0].get_lines()[0]
    assert np.array_equal(np.asarray(line.get_ydata(), dtype=float),
                          audit["prompt_history"]["prompt_chars"].to_numpy(dtype=float))
