"""The real rows' result cache (memlab.sim.cache): a warm run gives the cold run's cells from the
cache, and anything that decides a cell (seed, instance, parameters, the venv's packages)
makes it run again. The releases are the real ones; one cheap scenario keeps this to seconds.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from memlab.sim.cache import ResultCache, cell_key, env_digest, instance_digest, results_dir
from memlab.sim.instance import DOC_INSTANCE
from memlab.sim.real import RealParams, release_row, run_real
from memlab.sim.real.releases import release_env

pytestmark = pytest.mark.slow

NEW = "0.20.0"
CODES = ["S8"]
SMALL = RealParams(scale=120, s11_pairs=8, s7_queries=20, s4_corpus=30, s2_corpus=10,
                   s10_days=15)


def _stable(res):
    return (res.outcome, res.summary, res.rule,
            {k: v for k, v in res.metrics.items() if k not in res.unstable})


def _json(value):
    return json.loads(json.dumps(value, default=str))


def test_a_warm_run_is_the_cold_run_from_the_cache_and_inputs_miss(tmp_path):
    cache = ResultCache(tmp_path / "results")
    cold = run_real([NEW], CODES, seed=0, params=SMALL, cache=cache)
    assert cache.stats()["hits"] == 0 and cache.misses == 1 and cache.stored == 1
    assert all(r.cached is False and r.measured_at for r in cold.values())
    assert len(list((tmp_path / "results").rglob("*.json"))) == 1

    warm_cache = ResultCache(tmp_path / "results")
    warm = run_real([NEW], CODES, seed=0, params=SMALL, cache=warm_cache)
    assert (warm_cache.hits, warm_cache.misses) == (1, 0)
    assert list(warm) == list(cold)
    for key in cold:
        assert warm[key].cached is True
        assert warm[key].measured_at == cold[key].measured_at
        assert _json(_stable(warm[key])) == _json(_stable(cold[key]))

    # The seed and the instance each decide a cell: each misses (and runs).
    for kw in ({"seed": 1}, {"seed": 0, "instance": DOC_INSTANCE.with_(n_sessions=371)}):
        other = ResultCache(tmp_path / "results")
        res = run_real([NEW], CODES, params=SMALL, cache=other, **kw)
        assert (other.hits, other.misses) == (0, 1), kw
        assert res[(release_row(NEW), "S8")].cached is False
    # So does every parameter, whichever scenario reads it (the key holds them all).
    env = env_digest(release_env(NEW))
    keys = {cell_key(release=NEW, env=env, scenario="S8", params=p, seed=0, instance="i",
                     embedding="e")[0] for p in (SMALL, SMALL.with_(s8_trials=3),
                                                 SMALL.with_(scale=121))}
    assert len(keys) == 3
    # The project-mode setting is its own key: a no-project cell never answers for it.
    project = cell_key(release=NEW + "+project", env=env, scenario="S8", params=SMALL, seed=0,
                       instance="i", embedding="e")
    assert project[0] not in keys and project[1]["release"] == "0.20.0+project"
    assert ResultCache(tmp_path / "results", fresh=True).get(next(iter(keys))) is None

    # An entry that does not read back (truncated) is a miss, and is replaced.
    for path in (tmp_path / "results").rglob("*.json"):
        path.write_text(path.read_text()[:40])
    broken = ResultCache(tmp_path / "results")
    run_real([NEW], CODES, seed=0, params=SMALL, cache=broken)
    assert (broken.hits, broken.misses, broken.stored) == (0, 1, 1)
    again = ResultCache(tmp_path / "results")
    run_real([NEW], CODES, seed=0, params=SMALL, cache=again)
    assert again.hits == 1

    # A sweep over the seeds: seed 0's entry is read back, seed 1's (truncated above) runs
    # again; the frame shows what moved.
    from memlab.sim.sweep import sweep

    swept = ResultCache(tmp_path / "results")
    frame = sweep("seeds", [0, 1], iterations=[], scenarios=CODES, releases=[NEW],
                  params=SMALL, cache=swept)
    assert (swept.hits, swept.misses) == (1, 1)
    row = frame.set_index("scenario").loc["S8"]
    assert row["0"] == cold[(release_row(NEW), "S8")].outcome
    assert row["1"] in ("pass", "partial", "fail")
    assert row["moved"] == (row["0"] != row["1"]) and row["basis"] == "measured"


def test_the_cli_says_which_cells_came_from_the_cache(tmp_path, monkeypatch, capsys):
    from memlab.cli import main

    monkeypatch.setenv("MEMLAB_CACHE_DIR", str(tmp_path))
    args = ["simulate", "--real-only", "--releases", NEW, "--scenarios", "S8", "--scale", "120"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "real cells: 0 from the result cache, 1 run" in first and "[measured now]" in first
    assert (tmp_path / "sim-results").is_dir()
    assert main(args) == 0
    second = capsys.readouterr().out
    assert "real cells: 1 from the result cache, 0 run" in second
    assert "[measured, cached from 20" in second
    assert main([*args, "--fresh"]) == 0
    assert "real cells: 0 from the result cache, 1 run (--fresh)" in capsys.readouterr().out
    # --json: one object; the cell says it came from the cache and when it was measured.
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"evidence", "cells", "claims", "fitness", "journey", "run"}
    (only,) = doc["cells"]
    assert only["cached"] is True and only["measured_at"] and only["rule"] and only["llm"]
    assert doc["run"]["cache_hits"] == 1 and doc["run"]["scale"] == 120
    assert doc["run"]["instance_digest"] == instance_digest(DOC_INSTANCE)
    m = {r["metric"]: r["value"] for r in doc["evidence"] if r["scenario"] == "S8"}
    assert {"lost_edit_rate_serial", "lost_edit_rate_interleaved", "lost_edit_rate_free"} <= set(m)


def test_a_bad_sweep_is_one_line_exit_2(capsys):
    from memlab.cli import main

    assert main(["simulate", "--no-real", "--sweep", "colours=1,2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--sweep needs AXIS=" in err[0]


def test_the_key_parts_follow_what_they_name(tmp_path, monkeypatch):
    # The venv's package set: a changed RECORD (another file or hash installed) changes it.
    venv = tmp_path / "venv"
    record = venv / "lib" / "python3.12" / "site-packages" / "elfmem-0.20.0.dist-info" / "RECORD"
    record.parent.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("version = 3.12.3\n")
    record.write_text("elfmem/api.py,sha256=abc,100\n")
    before = env_digest(venv / "bin" / "python")
    record.write_text("elfmem/api.py,sha256=abd,100\n")
    assert env_digest(venv / "bin" / "python") != before
    # The real venv has its packages' RECORDs: the digest is not the empty folder's.
    real = release_env(NEW)
    assert list(real.parent.parent.glob("lib*/python*/site-packages/elfmem-*.dist-info/RECORD"))
    assert env_digest(real) != env_digest(tmp_path / "none" / "bin" / "python")
    # Every Instance field but the provenance notes is in its digest.
    assert instance_digest(DOC_INSTANCE) == instance_digest(
        dataclasses.replace(DOC_INSTANCE, provenance={"x": "words"}))
    assert instance_digest(DOC_INSTANCE) != instance_digest(DOC_INSTANCE.with_(growth=99))
    # Under $MEMLAB_CACHE_DIR, never beside a store.
    monkeypatch.setenv("MEMLAB_CACHE_DIR", str(tmp_path / "c"))
    assert results_dir() == tmp_path / "c" / "sim-results"


def test_a_cell_does_not_depend_on_the_cells_run_before_it():
    """A cached cell stands for the cell run alone: its stable metrics are the same whether
    other scenarios ran earlier in the same driver (S10's LLM count once read the driver's
    running total)."""
    params = SMALL.with_(s10_days=8, s4_corpus=20)
    alone = run_real([NEW], ["S10"], params=params)[(release_row(NEW), "S10")]
    after = run_real([NEW], ["S4", "S10"], params=params)[(release_row(NEW), "S10")]
    assert _json(_stable(alone)) == _json(_stable(after))
    assert alone.metrics["llm"] > 0
