"""Letta Agent Files and blocks JSON: the four real samples, a shared-block file, bad input."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from memlab.kinds.agent_file._audit import audit_agent_file
from memlab.errors import CorruptStore, StoreNotFound, UnrecognizedStore
from memlab.kinds.agent_file._load import FRAME_DTYPES, load_agent_file

AF = "samples/letta-af"


@pytest.fixture(scope="module")
def ezra(data_dir):
    return load_agent_file(data_dir / AF / "ezra.af")


def _kinds(store) -> list[str]:
    return sorted(store.problems["kind"].astype(str))


def test_ezra_limits_and_attachment(ezra):
    assert ezra.kind == "agent_file"
    assert ezra.meta["schema"] == "v2" and ezra.meta["double_encoded"] is False
    blocks = ezra.blocks.set_index("label")
    assert len(ezra.blocks) == 56
    assert blocks.loc["system/active-issues", "chars"] == 22427
    assert blocks.loc["system/active-issues", "limit"] == 5000
    over = ezra.blocks[ezra.blocks["over_limit"]]
    assert sorted(over["label"]) == ["corrections/ezra-mistakes", "system/active-issues",
                                     "system/lettabot"]
    assert blocks.loc["corrections/ezra-mistakes", ["chars", "limit"]].tolist() == [28927, 10000]
    # Only 21 blocks are in the agent's block_ids; the other 35 ride along unattached.
    assert ezra.agents.loc[0, "n_blocks"] == 21 and len(ezra.block_agents) == 21
    assert (ezra.blocks["n_agents"] == 0).sum() == 35
    assert not ezra.blocks["shared"].any()
    assert ezra.meta["skills"] == ["verify-claims", "ai-news", "eating-sushiritos", "linear"]
    odd = ezra.problems[ezra.problems["kind"] == "odd_label"]
    assert len(odd) == 1 and "system//references/lettabot" in odd.iloc[0]["message"]
    assert str(ezra.path) in odd.iloc[0]["file"]


def test_frames_follow_the_design_contract(ezra):
    for name, dtypes in FRAME_DTYPES.items():
        frame = ezra.frames[name]
        assert list(frame.columns) == list(dtypes), name
        for col, dtype in dtypes.items():
            if dtype == "category":
                assert isinstance(frame[col].dtype, pd.CategoricalDtype), (name, col)
            elif dtype != "object":
                assert str(frame[col].dtype) == dtype, (name, col, frame[col].dtype)


def test_deep_research_agent_read_only_and_empty_values(data_dir):
    store = load_agent_file(data_dir / AF / "deep_research_agent.af")
    blocks = store.blocks.set_index("label")
    assert blocks["read_only"].to_dict() == {"human": False, "persona": True,
                                             "research_citations": False, "research_plan": False}
    assert sorted(store.blocks.loc[store.blocks["chars"] == 0, "label"]) == [
        "research_citations", "research_plan"]
    assert set(store.blocks["limit"]) == {5000, 20000}
    agent = store.agents.iloc[0]
    assert (agent["agent_type"], agent["model"], agent["context_window"]) == (
        "letta_v1_agent", "claude-sonnet-4-5-20250929", 100000)
    assert (agent["n_tools"], agent["n_messages"], agent["n_in_context"]) == (5, 1, 1)
    assert store.messages[["role", "n"]].astype(str).values.tolist() == [["system", "1"]]
    assert len(store.problems) == 0


def test_double_encoded_file_reads_like_its_plain_form(data_dir, tmp_path):
    source = data_dir / AF / "customer_service.af"
    store = load_agent_file(source)
    assert store.meta["double_encoded"] is True and store.meta["schema"] == "v2"
    assert len(store.blocks) == 2 and len(store.tools) == 7
    plain = tmp_path / "plain.af"
    plain.write_text(json.loads(source.read_text(encoding="utf-8")), encoding="utf-8")
    again = load_agent_file(plain)
    assert again.meta["double_encoded"] is False
    for name in FRAME_DTYPES:
        pd.testing.assert_frame_equal(store.frames[name], again.frames[name])


def test_legacy_v1_detected(data_dir):
    store = load_agent_file(data_dir / AF / "deep-thought.af")
    assert store.meta["schema"] == "legacy_v1"
    assert store.meta["letta_version"] == "0.10.0"
    assert list(store.blocks["block_id"]) == [f"block-{i}" for i in range(5)]
    assert store.blocks["read_only"].isna().all()  # legacy exports have no read_only field
    assert store.blocks.set_index("label")["chars"].to_dict() == {
        "research_report": 0, "knowledge": 798, "persona": 3174, "research_plan": 0, "human": 361}
    agent = store.agents.iloc[0]
    assert (agent["name"], agent["n_blocks"], agent["n_tools"], agent["n_in_context"]) == (
        "Deep Thought", 5, 9, 2)
    assert store.tools["tool_id"].tolist()[:2] == ["tool-0", "tool-1"]
    assert len(store.problems) == 0


def test_loading_never_writes(data_dir):
    path = data_dir / AF / "ezra.af"
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    load_agent_file(path)
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before


# --- shared blocks and groups ---------------------------------------------------------------


def _block(i, label, value, limit=100, **kw):
    return {"id": f"block-{i}", "label": label, "value": value, "limit": limit,
            "description": f"{label} block", "read_only": False, "metadata": {}, **kw}


def _agent(i, block_ids, **kw):
    return {"id": f"agent-{i}", "name": f"agent {i}", "agent_type": "letta_v1_agent",
            "system": "s" * 40, "block_ids": block_ids, "tool_ids": ["tool-0"],
            "llm_config": {"model": "m", "context_window": 1000}, "memory_blocks": [],
            "messages": [{"id": "message-0", "role": "system"},
                         {"id": "message-1", "role": "user"},
                         {"id": "message-2", "role": "user"}],
            "in_context_message_ids": ["message-0"], "tags": ["t"], **kw}


def _v2(tmp_path, name="shared.af", **doc):
    base = {
        "agents": [_agent(0, ["block-0", "block-1"]), _agent(1, ["block-0"]), _agent(2, [])],
        "groups": [{"id": "group-0", "agent_ids": ["agent-1", "agent-2"], "description": "g",
                    "shared_block_ids": ["block-2"],
                    "manager_config": {"manager_type": "sleeptime",
                                       "manager_agent_id": "agent-0"}}],
        "blocks": [_block(0, "human", "h" * 150), _block(1, "persona", "p" * 20, read_only=True),
                   _block(2, "team", "x" * 60)],
        "tools": [{"id": "tool-0", "name": "send_message", "tool_type": "letta_core",
                   "source_type": "python", "source_code": "def f(): pass"}],
        "files": [], "sources": [], "mcp_servers": [], "metadata": {"revision_id": "r"},
    }
    base.update(doc)
    path = tmp_path / name
    path.write_text(json.dumps(base), encoding="utf-8")
    return path


def test_blocks_shared_by_agents_and_groups(tmp_path):
    store = load_agent_file(_v2(tmp_path))
    blocks = store.blocks.set_index("block_id")
    assert blocks["n_agents"].to_dict() == {"block-0": 2, "block-1": 1, "block-2": 3}
    assert blocks["shared"].to_dict() == {"block-0": True, "block-1": False, "block-2": True}
    assert blocks.loc["block-0", "over_limit"] and not blocks.loc["block-2", "over_limit"]
    pairs = set(map(tuple, store.block_agents[["block_id", "agent_id"]].astype(str).values))
    assert pairs == {("block-0", "agent-0"), ("block-1", "agent-0"), ("block-0", "agent-1"),
                     ("block-2", "agent-0"), ("block-2", "agent-1"), ("block-2", "agent-2")}
    assert store.agents.set_index("agent_id")["n_blocks"].to_dict() == {
        "agent-0": 3, "agent-1": 2, "agent-2": 1}
    assert store.tools.loc[0, "n_agents"] == 3
    counts = store.messages.assign(role=store.messages["role"].astype(str))
    assert counts.groupby("role")["n"].sum().to_dict() == {"system": 3, "user": 6}

    audit = audit_agent_file(store)
    shared = audit["shared_blocks"].set_index("block_id")
    assert shared.loc["block-2", "agents"] == ["agent-0", "agent-1", "agent-2"]
    prompt = audit["prompt_chars"].set_index("agent_id")
    # system (40) + human (150) + persona (20) + team (60)
    assert prompt.loc["agent-0", "prompt_chars"] == 270
    assert prompt.loc["agent-0", "context_share"] == pytest.approx(270 / 4 / 1000)
    assert prompt.loc["agent-2", "prompt_chars"] == 100
    assert audit["blocks_over_limit"]["block_id"].tolist() == ["block-0"]
    assert audit.headline["n_shared_blocks"] == 2
    assert audit.headline["n_read_only_blocks"] == 1
    assert audit.headline["over_limit_excess_chars"] == 50


def test_odd_records_become_problem_rows(tmp_path):
    path = _v2(tmp_path, blocks=[
        _block(0, "human", "ok"),
        "not a block",
        {"label": "no-id", "value": "v", "limit": 10},
        _block(3, "../../etc/passwd", "x"),
        _block(4, "/abs/label", None),
        _block(5, "big", "y" * 1_000_000, limit="lots"),
        _block(0, "again", "dup id"),
    ], agents=[_agent(0, ["block-0", "block-9", {"odd": 1}])], groups=[])
    store = load_agent_file(path)
    kinds = _kinds(store)
    assert kinds.count("unsafe_label") == 2
    assert {"not_an_object", "missing_id", "null_value", "bad_field", "dangling_block_id",
            "duplicate_id"} <= set(kinds)
    blocks = store.blocks.set_index("label")
    assert blocks.loc["big", "chars"] == 1_000_000 and pd.isna(blocks.loc["big", "limit"])
    assert pd.isna(blocks.loc["big", "over_limit"])
    assert blocks.loc["/abs/label", "value"] == ""
    assert blocks.loc["no-id", "block_id"] == "blocks[2]"
    assert len(store.blocks) == 6  # the non-object is reported, not counted


def test_a_limit_of_zero_or_below_is_a_problem_and_has_no_ratio(tmp_path):
    path = tmp_path / "blocks.json"
    path.write_text(json.dumps([
        {"id": "block-neg", "label": "human", "value": "x" * 10, "limit": -50},
        {"id": "block-zero", "label": "persona", "value": "y" * 4, "limit": 0},
        {"id": "block-ok", "label": "notes", "value": "z" * 30, "limit": 10},
    ]), encoding="utf-8")
    store = load_agent_file(path)
    assert _kinds(store).count("bad_field") == 2
    # Letta refuses any value longer than the limit, so both are over it ...
    assert store.blocks["over_limit"].tolist() == [True, True, True]
    audit = audit_agent_file(store)
    over = audit.tables["blocks_over_limit"].set_index("label")
    # ... but only a positive limit gives a ratio (it was -0.2x and inf).
    assert over.loc["notes", "ratio"] == 3.0
    assert over[["ratio"]].loc[["human", "persona"]].isna().all().all()
    # the largest chars / limit of a block with a limit above 0: notes, 30 / 10
    assert audit.headline["max_limit_ratio"] == 3.0
    text = audit.summary()
    assert "human: 10 / -50 chars (limit not positive)" in text and "-0.2x" not in text


# --- blocks API JSON ------------------------------------------------------------------------


def test_blocks_api_list(tmp_path):
    path = tmp_path / "blocks.json"
    path.write_text(json.dumps([
        {"id": "block-aa", "label": "system/persona", "value": "p" * 30, "limit": 20,
         "read_only": True, "metadata": {}, "tags": ["core"], "is_template": False},
        {"id": "block-bb", "label": "human", "value": "hi", "limit": 100000},
    ]), encoding="utf-8")
    store = load_agent_file(path)
    assert store.kind == "letta_blocks" and store.meta["schema"] == "blocks_json"
    assert store.blocks["over_limit"].tolist() == [True, False]
    assert store.blocks["n_agents"].isna().all() and store.blocks["shared"].isna().all()
    assert store.agents.empty and store.block_agents.empty
    audit = audit_agent_file(store)
    assert audit.headline["n_blocks_over_limit"] == 1
    assert audit.headline["n_shared_blocks"] is None
    json.loads(audit.to_json())


# --- bad input ------------------------------------------------------------------------------


def test_truncated_file_is_corrupt_and_named(tmp_path, data_dir):
    cut = tmp_path / "cut.af"
    cut.write_bytes((data_dir / AF / "ezra.af").read_bytes()[:5000])
    with pytest.raises(CorruptStore) as info:
        load_agent_file(cut)
    assert "cut.af" in str(info.value) and "not valid JSON" in str(info.value)


@pytest.mark.parametrize("content, error, words", [
    (b"\xff\xfe\x00binary", CorruptStore, "not UTF-8"),
    (b"   ", CorruptStore, "empty"),
    (json.dumps({"name": "x", "value": 3}).encode(), UnrecognizedStore, "not a Letta"),
    (b"[1, 2, 3]", UnrecognizedStore, "none of its items"),
    (b"42", UnrecognizedStore, "not a Letta"),
    (json.dumps(json.dumps(json.dumps({"agents": []}))).encode(), CorruptStore, "more than twice"),
    (json.dumps("hello").encode(), UnrecognizedStore, "does not hold"),
    (b"[" * 100_000 + b"]" * 100_000, CorruptStore, "nests too deeply"),
])
def test_bad_inputs_raise_specific_errors(tmp_path, content, error, words):
    path = tmp_path / "bad.af"
    path.write_bytes(content)
    with pytest.raises(error) as info:
        load_agent_file(path)
    assert words in str(info.value) and "bad.af" in str(info.value)


def test_size_cap_and_missing_paths(tmp_path, data_dir):
    with pytest.raises(CorruptStore, match="max_bytes"):
        load_agent_file(data_dir / AF / "ezra.af", max_bytes=100_000)
    with pytest.raises(StoreNotFound):
        load_agent_file(tmp_path / "absent.af")
    with pytest.raises(UnrecognizedStore):
        load_agent_file(tmp_path)


def test_audit_headline_for_ezra(ezra):
    audit = audit_agent_file(ezra)
    h = audit.headline
    assert (h["n_blocks"], h["n_blocks_over_limit"], h["n_orphan_blocks"]) == (56, 3, 35)
    assert h["over_limit_excess_chars"] == (28927 - 10000) + (22427 - 5000) + (6706 - 5000)
    assert h["max_limit_ratio"] == pytest.approx(22427 / 5000)
    assert audit["blocks_over_limit"]["label"].tolist()[0] == "corrections/ezra-mistakes"
    prompt = audit["prompt_chars"].iloc[0]
    attached = ezra.blocks.loc[ezra.blocks["n_agents"] > 0, "chars"].sum()
    assert prompt["prompt_chars"] == ezra.agents.loc[0, "system_chars"] + attached
    assert audit["domains"].set_index("domain").loc["system", "over_limit"] == 2
    assert "3 block(s) over their limit" in audit.summary()
    assert json.loads(audit.to_json())["headline"]["n_agents"] == 1


def test_letta_0_6_marks_in_context_per_message(data_dir, tmp_path):
    """letta 0.6.x exports carry no in-context list: each message says "in_context": true."""
    import json

    doc = json.loads((data_dir / AF / "deep-thought.af").read_text())
    base = doc["messages"][0]
    doc["version"] = "0.6.43"
    doc.pop("in_context_message_indices")
    doc["messages"] = [dict(base, in_context=i >= 7) for i in range(83)]  # 7 summarised away
    path = tmp_path / "old.af"
    path.write_text(json.dumps(doc))
    store = load_agent_file(path)
    agent = store.agents.iloc[0]
    assert store.meta["letta_version"] == "0.6.43"
    assert (agent["n_messages"], agent["n_in_context"]) == (83, 76)
    # An empty list, as some 0.6 exports write, does not hide the per-message flags.
    doc["in_context_message_indices"] = []
    path.write_text(json.dumps(doc))
    assert load_agent_file(path).agents.iloc[0]["n_in_context"] == 76
