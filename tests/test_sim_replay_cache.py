"""cached_replay: a replay through a shipped release comes back from the result cache with the
same columns, dtypes and summary; anything in its key (release, venv, store bytes, embedding)
makes it run again. The release is stood in for by a counting replay, so no venv runs here."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

import memlab.embed
import memlab.sim.cache as cache_module
import memlab.sim.model.replay  # noqa: F401  (the module, in sys.modules)
from memlab.sim.cache import ResultCache, cached_replay, store_digest

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "elfmem-demo.db"


@pytest.fixture
def calls(monkeypatch):
    made: list[tuple[str, str]] = []

    def replay(store, release=None):
        made.append((str(store.path), release))
        frame = pd.DataFrame({
            "id": pd.Series(["a", "b", None], dtype="string"),
            "created_at": pd.to_datetime(["2026-01-01T00:00:00Z", "2026-01-02T10:00:00Z",
                                          "2026-01-03T00:00:00Z"]),
            "release_status": pd.Series(["active", "archived", "rejected"], dtype="string"),
            "release_reason": pd.Series([None, "superseded", None], dtype="string"),
            "agree": pd.Series([True, False, pd.NA], dtype="boolean")})
        frame.attrs["summary"] = {"release": release, "blocks": 3, "agree": 1}
        return frame

    monkeypatch.setattr(sys.modules["memlab.sim.model.replay"], "replay", replay)
    monkeypatch.setattr(cache_module, "_replay_env", lambda release: f"env-{release}")
    monkeypatch.setattr(memlab.embed, "get_embedder",
                        lambda: SimpleNamespace(cache_key="model-x"))
    return made


def test_a_replay_is_run_once_and_then_read_back_as_it_was(tmp_path, calls):
    store = SimpleNamespace(path=tmp_path / "a.db")
    shutil.copy(DEMO, store.path)
    cache = ResultCache(tmp_path / "results")
    first = cached_replay(store, "0.20.0", cache=cache)
    again = cached_replay(store, "0.20.0", cache=cache)
    assert calls == [(str(store.path), "0.20.0")]
    assert (cache.misses, cache.hits, cache.stored) == (1, 1, 1)
    assert first.attrs["cached"] is False and again.attrs["cached"] is True
    assert again.attrs["measured_at"] == first.attrs["measured_at"]
    pd.testing.assert_frame_equal(again, first)  # values, NA and dtypes
    assert again.attrs["summary"] == {"release": "0.20.0", "blocks": 3, "agree": 1}
    # Another release, or other store bytes, is another replay; fresh re-runs.
    cached_replay(store, "0.19.2", cache=cache)
    with store.path.open("ab") as fh:
        fh.write(b"\0")
    changed = store_digest(store)
    cached_replay(store, "0.20.0", cache=cache)
    cached_replay(store, "0.20.0", cache=ResultCache(tmp_path / "results", fresh=True))
    assert [r for _, r in calls] == ["0.20.0", "0.19.2", "0.20.0", "0.20.0"]
    assert changed != store_digest(SimpleNamespace(path=DEMO))
    assert len(list((tmp_path / "results").rglob("*.json"))) == 3
