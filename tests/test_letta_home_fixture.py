"""The reflection state of data/letta-home (see its SOURCES.md) as memlab reads it, against what
Letta Code 0.34.12's own ``getReflectionTranscriptState`` makes of it (readState: normalise a v3
state, migrate a v2 one, rebuild a missing or unknown one from the transcript)."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

import memlab

from letta_home_build import HomeOracle


@pytest.fixture(scope="module")
def oracle():
    o = HomeOracle()
    yield o
    o.close()


def _copy(data_dir, tmp_path, name):
    dest = tmp_path / name / ".letta"
    shutil.copytree(data_dir / "letta-home", dest)
    return dest


def test_state_as_letta_code_reads_it(data_dir, tmp_path, oracle):
    home = _copy(data_dir, tmp_path, "memlab")
    store = memlab.load(home)
    assert store.kind == "letta_home"
    conv = store.conversations.set_index("conversation_id")
    assert sorted(conv.index) == ["conv-none", "conv-v2", "conv-v3"]
    theirs = _copy(data_dir, tmp_path, "letta")
    for cid in conv.index:
        want = oracle.ask({"op": "state", "home": str(theirs.parent), "agentId": "agent-legacy",
                           "conversationId": cid})
        got = conv.loc[cid]
        assert got["total_completed_steps"] == want["total_completed_steps"], cid
        assert got["reflected_completed_steps"] == want["reflected_completed_steps"], cid
        assert (got["steps_since_last_successful_reflection"]
                == want["steps_since_last_successful_reflection"]), cid
        for key in ("reflected_through_message_id", "last_reflection_started_at",
                    "last_reflection_succeeded_at"):
            mine = got[key]
            if key.endswith("_at") and not pd.isna(mine):
                mine = mine.strftime("%Y-%m-%dT%H:%M:%S.000Z")
            assert (None if pd.isna(mine) else mine) == want.get(key), (cid, key)
    assert conv.loc["conv-v2", "reflected_completed_steps"] == 7
    assert conv.loc["conv-v3", "steps_recorded"] == 99  # what the file said, kept beside
    # the folder memlab read is unchanged; Letta Code rewrote its copy's states as v3
    assert (home / "transcripts/agent-legacy/conv-v2/state.json").read_bytes() == (
        data_dir / "letta-home/transcripts/agent-legacy/conv-v2/state.json").read_bytes()
    assert not (home / "transcripts/agent-legacy/conv-none/state.json").exists()
    assert "v3_assistant_steps" in (
        theirs / "transcripts/agent-legacy/conv-v2/state.json").read_text()


def test_settings_and_problems(data_dir, tmp_path):
    store = memlab.load(_copy(data_dir, tmp_path, "m"))
    agent = store.agents.set_index("agent_id").loc["agent-legacy"]
    # memoryReminderInterval 10 (legacy): the step-count trigger at 10 (DEFAULT_SETTINGS'
    # reflectionStepCount 25 then applies over it, as applyExplicitReflectionOverrides does)
    assert (agent["trigger"], agent["step_count"], agent["memory"]) == ("step-count", 25, False)
    kinds = sorted(store.problems["kind"].astype(str))
    assert kinds == ["bad_transcript_row", "transcripts_without_agent"]
    audit = memlab.audit(store, as_of="2026-11-30")
    assert audit["reflection_stalled"].empty and audit.headline["problems"] == 2
