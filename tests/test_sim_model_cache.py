"""The modelled cells' result cache (memlab.sim.cache.model_cell_key): a warm run reads every
modelled cell from the cache and gives the cold run's verdicts and numbers; an edited entry is
a miss; what a cell reads (its iteration's choices, the seed, the instance, memlab's sources)
is in its key, and what it does not read is not."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from memlab.sim import ITERATIONS, simulate
from memlab.sim.cache import ResultCache, model_cell_key, source_digest, source_files
from memlab.sim.instance import DOC_INSTANCE

ITS, CODES = [1, 5], ["S1", "S3"]


def _frames(run):
    ev = run.stable_evidence()
    return ev, run.events.drop(columns=[]).astype(str)


def test_a_warm_run_reads_every_modelled_cell_from_the_cache(tmp_path):
    t0 = time.perf_counter()
    cold = simulate(ITS, CODES, cache=ResultCache(tmp_path))
    cold_s = time.perf_counter() - t0
    assert cold.meta["model_cache"]["misses"] == 4 and cold.meta["model_cache"]["hits"] == 0
    assert all(r.cached is False for r in cold.results.values())
    t0 = time.perf_counter()
    warm = simulate(ITS, CODES, cache=ResultCache(tmp_path))
    warm_s = time.perf_counter() - t0
    assert (warm.meta["model_cache"]["hits"], warm.meta["model_cache"]["misses"]) == (4, 0)
    assert all(r.cached is True for r in warm.results.values())
    assert warm.table.equals(cold.table)
    for a, b in zip(_frames(cold), _frames(warm)):
        assert a.equals(b)
    assert warm_s < cold_s
    text = warm.render()
    assert "modelled cells: 4 from the result cache, 0 computed; at seed 0: all 4 cached" \
        in text
    assert text.count("[modelled, cached]") == 4
    doc = warm.as_dict()
    assert doc["run"]["model_cache_hits"] == 4
    assert {c["cached"] for c in doc["cells"]} == {True}
    # No cache: every cell computed, none says it was cached.
    off = simulate(ITS, ["S1"], cache=False)
    assert off.meta["model_cache"] is None
    assert {r.cached for r in off.results.values()} == {None}


def test_an_edited_entry_is_a_miss_and_a_cell_is_the_same_alone(tmp_path):
    alone = simulate([5], ["S3"], cache=ResultCache(tmp_path))
    [entry] = list(tmp_path.rglob("*.json"))
    doc = json.loads(entry.read_text())
    doc["result"]["outcome"] = "pass" if doc["result"]["outcome"] != "pass" else "fail"
    entry.write_text(json.dumps(doc))
    again = simulate([5], ["S3"], cache=ResultCache(tmp_path))
    assert again.meta["model_cache"]["misses"] == 1
    assert again.table.equals(alone.table)
    # A garbled entry is a miss too (then rewritten, then a hit).
    entry.write_text("{not json")
    assert simulate([5], ["S3"], cache=ResultCache(tmp_path)).meta["model_cache"]["misses"] == 1
    assert simulate([5], ["S3"], cache=ResultCache(tmp_path)).meta["model_cache"]["hits"] == 1
    # S3 computed alone is the S3 of a run where S1 ran first (no cache): a cached cell does
    # not depend on what ran before it.
    both = simulate([5], ["S1", "S3"], cache=False)
    hit = simulate([5], ["S1", "S3"], cache=ResultCache(tmp_path))
    assert hit.cell(5, "S3").cached is True
    assert hit.table.equals(both.table)
    assert hit.stable_evidence().equals(both.stable_evidence())


def test_the_key_covers_what_a_modelled_cell_reads(tmp_path):
    base = dict(iteration=ITERATIONS[5], scenario="S3", seed=0, instance="i", embedding="e")
    key = model_cell_key(**base)[0]
    assert model_cell_key(**base)[0] == key
    for change in ({"seed": 1}, {"instance": "j"}, {"embedding": "f"}, {"scenario": "S1"},
                   {"iteration": ITERATIONS[5].with_(near_dup_threshold=0.91)},
                   {"iteration": ITERATIONS[5].with_(name="7: mine")}):
        assert model_cell_key(**{**base, **change})[0] != key, change
    # A copy of the package with constants.py edited has another source digest, so another
    # key; editing a file no cell reads (the CLI's entry point) leaves it.
    root = Path(source_files()[0]).parents[0]
    while root.name != "memlab":
        root = root.parent
    copy = tmp_path / "memlab"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    same = source_digest(copy)
    assert copy / "constants.py" in source_files(copy)
    assert copy / "__main__.py" not in source_files(copy)
    (copy / "__main__.py").write_text((copy / "__main__.py").read_text() + "\n# edited\n")
    assert source_digest(copy) == same
    (copy / "constants.py").write_text((copy / "constants.py").read_text()
                                       + "\nNEAR_DUP_THRESHOLD = 0.5\n")
    edited = source_digest(copy)
    assert edited != same
    assert model_cell_key(**base, source=edited)[0] != model_cell_key(**base, source=same)[0]
    # Seeds and instances decide a cell: another one misses.
    cache = ResultCache(tmp_path / "c")
    simulate([5], ["S1"], cache=cache)
    other = simulate([5], ["S1"], seed=1, cache=ResultCache(tmp_path / "c"))
    assert other.meta["model_cache"]["misses"] == 1
    grown = simulate([5], ["S1"], instance=DOC_INSTANCE.with_(growth=2.0),
                     cache=ResultCache(tmp_path / "c"))
    assert grown.meta["model_cache"]["misses"] == 1


def test_one_helper_opens_the_cache_for_the_modelled_and_the_real_cells(tmp_path):
    """sim.cache.open_cache, used by simulate (modelled cells, own_counts) and run_real (real
    cells): False/None is no cache, True a default one, a ResultCache is the real cells' own
    (made fresh by --fresh) or a new one on its folder for the modelled cells (their counts
    apart, fresh when either is); anything else is a SimulationError naming it."""
    from memlab.errors import SimulationError
    from memlab.sim.cache import open_cache, results_dir

    assert open_cache(False, True) is None and open_cache(None, False) is None
    default = open_cache(True, True)
    assert isinstance(default, ResultCache) and default.fresh
    assert default.folder == results_dir()
    given = ResultCache(tmp_path)
    assert open_cache(given, False) is given and not given.fresh
    own = open_cache(given, False, own_counts=True)
    assert own is not given and own.folder == given.folder and not own.fresh
    assert open_cache(given, True, own_counts=True).fresh and not given.fresh  # not touched
    assert open_cache(given, True) is given and given.fresh  # the real cells' --fresh
    assert open_cache(given, False, own_counts=True).fresh  # fresh when either is
    with pytest.raises(SimulationError, match="'results'"):
        open_cache("results", False)  # a folder name is not a cache
