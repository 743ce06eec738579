"""Issue 34, hole 11: the simulation result cache (memlab.sim.cache).

Its key covers every memlab file a cell reads (memlab/constants.py and memlab/audits/seeds.py
were left out: an edited threshold was served the old verdict), and an entry is validated
before it is a verdict: an edited entry, or one of the wrong shape, is a miss (run again and
overwritten), never the verdict and never a crash. No release runs here: entries are written
and read through ResultCache and cached_replay's reader directly.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from memlab.sim.cache import ResultCache, source_digest, source_files
from memlab.sim.scenarios import ScenarioResult

ROOT = Path(__file__).resolve().parents[2] / "memlab"
KEY = "ab" + "0" * 62
PARTS = {"layout": 1, "release": "0.19.2", "scenario": "S1", "seed": 0}


def _cell(outcome="fail", **kw):
    return ScenarioResult("S1", "elfmem 0.19.2 (real)", outcome, "a summary",
                          metrics={"score": 0.0, "seconds": 1.0}, basis="measured",
                          rule="a rule", llm="RuleLLM", unstable=("seconds",),
                          measured_at="2026-12-06T07:00:00Z", **kw)


def _entry(folder: Path) -> Path:
    (path,) = [p for p in folder.rglob("*.json")]
    return path


def test_the_key_covers_constants_seeds_and_every_module_a_cell_imports():
    files = {p.relative_to(ROOT).as_posix() for p in source_files()}
    assert {"constants.py", "audits/seeds.py", "errors.py", "_files.py"} <= files
    # Independent of the static reading: every memlab module a real row imports at run time.
    import memlab.sim  # noqa: F401
    import memlab.sim.real._months  # noqa: F401
    import memlab.sim.real._scale  # noqa: F401
    import memlab.sim.real  # noqa: F401
    import memlab.sim.real.scripts  # noqa: F401
    import memlab.sim.real.replay_release  # noqa: F401
    loaded = {Path(m.__file__).resolve().relative_to(ROOT).as_posix()
              for name, m in list(sys.modules.items())
              if name.startswith("memlab") and getattr(m, "__file__", None)
              and Path(m.__file__).resolve().is_relative_to(ROOT)
              and name.startswith(("memlab.sim", "memlab.constants", "memlab.audits.seeds"))}
    assert loaded <= files


def test_editing_constants_or_seeds_changes_the_key(tmp_path):
    copy = tmp_path / "memlab"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = source_digest(copy)
    assert before == source_digest(copy)
    for rel, edit in (("constants.py", "\nNEAR_DUP_THRESHOLD = 0.5\n"),
                      ("audits/seeds.py", "\n# one more seed\n")):
        (copy / rel).write_text((copy / rel).read_text() + edit)
        after = source_digest(copy)
        assert after != before, rel
        before = after
    # A module nothing in the simulation imports does not churn the key (negative control).
    (copy / "unrelated_new_module.py").write_text("X = 1\n")
    assert source_digest(copy) == before


def test_an_edited_entry_is_a_miss_not_the_verdict(tmp_path):
    cache = ResultCache(tmp_path)
    cache.put(KEY, PARTS, _cell("fail"))
    assert cache.get(KEY).outcome == "fail"  # control: the untouched entry is a hit
    path = _entry(tmp_path)
    doc = json.loads(path.read_text())
    doc["result"]["outcome"] = "pass"
    doc["result"]["summary"] = "edited"
    path.write_text(json.dumps(doc))
    again = ResultCache(tmp_path)
    assert again.get(KEY) is None and (again.hits, again.misses) == (0, 1)
    # A re-put overwrites it, and it is a hit again.
    again.put(KEY, PARTS, _cell("fail"))
    assert ResultCache(tmp_path).get(KEY).outcome == "fail"


def test_an_entry_signed_with_another_folders_key_is_a_miss(tmp_path):
    a, b = ResultCache(tmp_path / "a"), ResultCache(tmp_path / "b")
    a.put(KEY, PARTS, _cell("pass"))
    b.put(KEY, PARTS, _cell("fail"))
    shutil.copy(_entry(tmp_path / "a"), _entry(tmp_path / "b"))  # a's entry into b's folder
    assert ResultCache(tmp_path / "b").get(KEY) is None
    (tmp_path / "b" / ".key").unlink()  # no key: nothing is trusted
    assert ResultCache(tmp_path / "b").get(KEY) is None
    assert oct((tmp_path / "a" / ".key").stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("change", [
    lambda r: r.update(metrics="not a mapping"),
    lambda r: r.update(unstable=5),
    lambda r: r.update(events=["not an event"]),
    lambda r: r.update(scenario="S2"),               # not the cell its key is for
    lambda r: r.update(iteration="elfmem 0.20.0 (real)"),
    lambda r: r.update(basis="modelled"),
    lambda r: r.update(outcome="great"),
    lambda r: r.update(surprise=1),
    lambda r: r.pop("summary"),
    lambda r: r.update(impossible="yes"),
    lambda r: r.update(assumptions=[1, 2]),
])
def test_a_wrong_shaped_entry_is_a_miss_not_a_crash(tmp_path, change):
    """Each entry is re-signed with the folder's own key after the change, so only the shape
    check stands between it and a verdict."""
    from memlab.sim import cache as cache_module

    cache = ResultCache(tmp_path)
    cache.put(KEY, PARTS, _cell())
    path = _entry(tmp_path)
    doc = json.loads(path.read_text())
    change(doc["result"])
    doc.pop("signature")
    cache_module._write_entry(tmp_path, path, doc)  # noqa: SLF001 - a signed wrong shape
    assert ResultCache(tmp_path).get(KEY) is None


@pytest.mark.parametrize("content", ["", "[]", "null", '{"layout": 1}', "\x00" * 10,
                                     '{"layout": 1, "key": "' + KEY + '", "result": []}'])
def test_garbage_entries_are_misses(tmp_path, content):
    cache = ResultCache(tmp_path)
    cache.put(KEY, PARTS, _cell())
    _entry(tmp_path).write_text(content)
    assert ResultCache(tmp_path).get(KEY) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_special_and_symlinked_entries_are_misses_without_a_hang(tmp_path):
    cache = ResultCache(tmp_path)
    cache.put(KEY, PARTS, _cell())
    path = _entry(tmp_path)
    good = path.read_text()
    path.unlink()
    os.mkfifo(path)  # opening a FIFO for reading would block forever
    assert ResultCache(tmp_path).get(KEY) is None
    path.unlink()
    outside = tmp_path.parent / (tmp_path.name + "-outside.json")
    outside.write_text(good)
    path.symlink_to(outside)
    assert ResultCache(tmp_path).get(KEY) is None


def test_a_wrong_shaped_replay_entry_is_a_miss(tmp_path):
    from memlab.sim import cache as cache_module

    good = {"columns": {"id": ["a", "b"]}, "dtypes": {"id": "string"}, "summary": {}}
    assert list(cache_module._replay_frame(good)["id"]) == ["a", "b"]  # noqa: SLF001
    for bad in ({**good, "dtypes": {"id": "no-such-dtype"}},
                {**good, "dtypes": {"other": "string"}},
                {**good, "columns": {"id": ["a"], "x": ["a", "b"]},
                 "dtypes": {"id": "string", "x": "string"}},
                {**good, "columns": {"id": "ab"}},
                {**good, "summary": "text"},
                {**good, "columns": []}):
        assert cache_module._replay_frame(bad) is None, bad  # noqa: SLF001
