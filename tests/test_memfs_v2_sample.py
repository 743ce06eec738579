"""The bundled memfs v2 sample (data/samples/memfs/letta-code-v2.bundle, made by
scripts/make_memfs_v2_sample.py with Letta Code 0.34.12's own initial files and hook), read
by memlab and judged by Letta Code itself: the validator, the installed hook, `letta memory
tokens`, and the release's conventions for who made each commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import memlab
from memlab.sources._bundle import unpack_bundle

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "samples" / "memfs" / "letta-code-v2.bundle"
AGENT_ID = "agent-4b9e2c71-0d3a-4f58-9e6b-7a1c2d3e4f50"


@pytest.fixture(scope="module")
def v2(tmp_path_factory):
    repo = unpack_bundle(BUNDLE, tmp_path_factory.mktemp("v2"))
    store = memlab.load_memfs(repo)
    return repo, store, memlab.audit(store)


def _chain(repo):
    out = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "--reverse", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.split()
    return out


def test_layout_and_policy(v2):
    _, store, audit = v2
    assert store.meta["layout"] == "letta_v2"
    assert store.meta["layout_policy"] == "root-marker"
    assert audit.headline["layout_policy"] == "root-marker"


def test_constraints_at_head_equal_letta_codes_audit(letta_code, v2):
    repo, _, audit = v2
    rows = audit.tables["constraints"]
    assert rows["message"].tolist() == letta_code.audit_errors(repo) == [
        "scratch/todo.md: missing required index scratch/MEMORY.md"]
    assert audit.headline["constraint_errors"] == 1


def test_constraint_history_equals_the_validator_commit_by_commit(letta_code, v2, tmp_path):
    repo, _, audit = v2
    chain = _chain(repo)
    said = letta_code.validate_commits(repo, tmp_path, chain, "root-marker")
    hist = audit.tables["constraint_history"]
    # every row's message is a line the validator prints at the commit memlab dates it to
    for row in hist.itertuples():
        assert row.message in said[row.first_sha], row
    # and the first commit the validator complains about each path is memlab's first_sha
    first: dict[str, str] = {}
    for sha in chain[1:]:
        for line in said[sha]:
            first.setdefault(line.split(": ")[0], sha)
    order = {sha: i for i, sha in enumerate(chain)}
    mine: dict[str, str] = {}
    for row in hist.itertuples():
        if row.path not in mine or order[row.first_sha] < order[mine[row.path]]:
            mine[row.path] = row.first_sha
    assert mine == first
    assert set(hist.loc[hist["at_ref"], "path"]) == {"scratch/todo.md"}
    assert set(hist["path"]) == {"research_plan.md", "persona.md", "archive/2026/old-plan.md",
                                 "scratch/todo.md"}


def test_prompt_estimate_equals_letta_memory_tokens(letta_code, v2):
    repo, _, audit = v2
    said = letta_code.memory_tokens(repo)
    mine = audit.tables["letta_tokens"]
    assert dict(zip(mine["path"], mine["tokens"])) == {f["path"]: f["tokens"] for f in said["files"]}
    assert audit.headline["letta_prompt_tokens"] == said["total_tokens"]


def test_v2_prompt_lists_top_level_indexes_only(v2):
    repo, store, _ = v2
    snap = memlab.kinds._memfs._audit.prompt_at(store, store.meta["ref_sha"])
    assert snap.tree == ["archive/MEMORY.md", "notes/MEMORY.md", "palace/MEMORY.md"]
    assert set(snap.files["path"]) == {"MEMORY.md", "human.md", "persona.md",
                                       "research_citations.md", "research_plan.md"}


def test_harness_branches_and_identities_are_attributed(v2):
    _, store, audit = v2
    commits = store.history.drop_duplicates("sha").set_index("sha")
    by_message = {m.split("\n")[0]: row for m, row in zip(commits["message"], commits.itertuples())}
    worker = by_message["Update memory file notes/topics.md"]
    assert (worker.author_kind, worker.branch, worker.branch_role) == (
        "memory_worker", "letta/memory-worker/(merged)", "memory_worker")
    merge = next(r for m, r in by_message.items() if m.startswith("merge(memory):"))
    assert (merge.author_kind, merge.branch_role) == ("harness", "main")
    palace = by_message["Update memory file palace/MEMORY.md"]
    assert palace.author_kind == "harness"
    open_reflection = by_message["Update memory file notes/sources.md"]
    assert (open_reflection.author_kind, open_reflection.branch_role) == (
        "reflection_subagent", "reflection")
    assert audit.headline["commits_memory_worker"] == 1 and audit.headline["commits_harness"] == 2


def test_palace_is_reported_apart_from_memory(v2):
    _, store, audit = v2
    assert audit.headline["palace_files"] == 2
    churn = audit.tables["churn"].set_index("path")
    assert not churn.loc["palace/focus.md", "memory"]
    assert churn.loc["notes/topics.md", "memory"]


def test_v2_tiers_agree_with_letta_codes_index_rule(letta_code, v2):
    repo, store, _ = v2
    files = store.files.set_index("path")
    tiers = files["tier"].astype(str).to_dict()
    assert {p for p, t in tiers.items() if t == "core"} == {
        "MEMORY.md", "human.md", "persona.md", "research_citations.md", "research_plan.md"}
    assert tiers["notes/sources.md"] == "projected" and tiers["palace/focus.md"] == "palace"
    flagged = {line.split(": ")[0] for line in letta_code.audit_errors(repo)
               if "missing required index" in line}
    assert {p for p, t in tiers.items() if t == "not_memory"} == flagged == {"scratch/todo.md"}
    assert files["over_limit"].isna().all()  # v2 has no block limit: not checked, never False


def test_limit_ratio_is_the_largest_share_or_null_where_no_file_has_a_limit(v2, tmp_path):
    import json

    _, _, audit = v2
    assert audit.headline["max_limit_ratio"] is None  # v2: limits live in .memfs.config.json
    af = Path(__file__).resolve().parents[1] / "data" / "samples" / "letta-af" / "deep_research_agent.af"
    memlab.migrate(af, tmp_path / "v1", to="letta", layout="v1", retrieval=False)
    blocks = json.loads(af.read_text())["blocks"]
    expected = max(len(b["value"]) / b["limit"] for b in blocks)  # from the Agent File itself
    got = memlab.audit(tmp_path / "v1").headline["max_limit_ratio"]
    assert expected < 1 and got == pytest.approx(expected)
