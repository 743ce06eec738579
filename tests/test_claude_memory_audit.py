"""The claude_memory audit: index drift both ways, the invisible tail (200 lines / 25,000
bytes), duplicates and near-duplicates, frontmatter rules and size per type; each finding with
its basis, and negative controls at every boundary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import memlab
from memlab import kinds
from memlab.constants import MAX_FILE_BYTES

sys.path.insert(0, str(Path(__file__).parent))
import claude_memory_folders as cm  # noqa: E402

COUNTS = (
    "n_orphan_files",
    "n_dangling_index_lines",
    "n_tail_index_lines",
    "n_hidden_memories",
    "n_duplicate_pairs",
    "n_frontmatter_problems",
)


def _audit(folder: Path, **kw):
    kind = kinds.get("claude_memory")
    return kind.audit(memlab.load(folder), near_duplicates=kw.pop("near", False), **kw)


def test_a_clean_folder_has_no_finding_of_any_kind(tmp_path):
    a = _audit(cm.build(tmp_path / "memory"), near=True)
    for key in (*COUNTS, "n_near_duplicate_pairs", "memory_findings"):
        assert a.headline[key] == 0, key
    assert a.headline["n_topic_files"] == 4 and a.headline["index_lines_total"] == 6
    for table in ("orphan_files", "dangling_index_lines", "invisible_tail", "hidden_memories",
                  "duplicates", "near_duplicates", "frontmatter"):
        assert a.tables[table].empty, table
    types = a.tables["types"].set_index("type")
    assert set(types.index) == {"user", "feedback", "project", "reference"}
    assert types["files"].sum() == 4 and types["share_of_bytes"].sum() == pytest.approx(1.0)


def test_orphans_and_dangling_lines_both_ways(tmp_path):
    mem = cm.build(tmp_path / "memory", index_extra=["- [gone](feedback_gone.md) — deleted"])
    (mem / "project_orphan.md").write_text(cm.topic("orphan", "d", "project", "no line"))
    a = _audit(mem)
    assert list(a.tables["orphan_files"]["path"]) == ["project_orphan.md"]
    assert a.tables["orphan_files"]["basis"][0] == "no MEMORY.md line links this file"
    dangling = a.tables["dangling_index_lines"]
    assert list(dangling["target"]) == ["feedback_gone.md"] and list(dangling["line"]) == [7]
    assert a.headline["n_orphan_files"] == 1 and a.headline["n_dangling_index_lines"] == 1
    # a line linking outside the folder is a problem (never opened), not a dangling line
    mem2 = cm.build(tmp_path / "m2", index_extra=["- [x](../x.md) — outside"])
    a2 = _audit(mem2)
    assert a2.headline["n_dangling_index_lines"] == 0
    assert list(a2.tables["problems"]["kind"]) == ["outside_folder"]


def _index_folder(folder: Path, filler_lines: int, last: str = "- [late](user_late.md) — x") -> Path:
    """A folder whose MEMORY.md has ``filler_lines`` lines, then ``last``; user_late.md exists."""
    folder.mkdir(parents=True)
    (folder / "user_late.md").write_text(cm.topic("late", "d", "user", "late memory"))
    lines = [f"- note {i}" for i in range(filler_lines)] + [last]
    (folder / "MEMORY.md").write_text("\n".join(lines) + "\n")
    return folder


def test_the_200_line_boundary(tmp_path):
    at = _audit(_index_folder(tmp_path / "a", 199))  # the link is line 200: seen
    assert at.headline["n_tail_index_lines"] == 0 and at.headline["n_hidden_memories"] == 0
    past = _audit(_index_folder(tmp_path / "b", 200))  # line 201: not seen
    assert past.headline["n_tail_index_lines"] == 1 and past.headline["n_hidden_memories"] == 1
    tail = past.tables["invisible_tail"]
    assert list(tail["line"]) == [201] and "line 201 > 200 (by 1)" in tail["basis"][0]
    hidden = past.tables["hidden_memories"]
    assert list(hidden["path"]) == ["user_late.md"] and hidden["lines"][0] == [201]
    # a memory linked again by a visible line is not hidden
    mem = _index_folder(tmp_path / "c", 200)
    with open(mem / "MEMORY.md", "r+") as fh:
        text = fh.read()
        fh.seek(0)
        fh.write("- [late](user_late.md) — early\n" + text)
    again = _audit(mem)
    assert again.headline["n_tail_index_lines"] == 2 and again.headline["n_hidden_memories"] == 0


def test_the_25000_byte_boundary(tmp_path):
    last = "- [late](user_late.md) — x"
    tail_bytes = len(last.encode())
    for name, end, expected in (("exact", 25_000, 0), ("over", 25_001, 1)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "user_late.md").write_text(cm.topic("late", "d", "user", "late memory"))
        # 10 long lines then the link, whose last byte is byte number `end`
        before = end - tail_bytes
        long = (before - 10) // 10
        lines = ["x" * long for _ in range(9)]
        lines.append("y" * (before - 10 - 9 * long))
        (folder / "MEMORY.md").write_text("\n".join(lines + [last]) + "\n")
        assert len((folder / "MEMORY.md").read_bytes()) == end + 1
        a = _audit(folder)
        assert a.headline["n_tail_index_lines"] == expected, name
        assert a.headline["n_hidden_memories"] == expected, name
        if expected:
            assert "ends at byte 25,001 > 25,000 (by 1)" in a.tables["invisible_tail"]["basis"][0]


def test_exact_and_near_duplicates_and_their_controls(tmp_path):
    topics = dict(cm.TOPICS)
    body = topics["feedback_testing.md"][3]
    topics["feedback_testing_copy.md"] = ("copy", "same", "feedback", body)
    topics["project_freeze.md"] = (
        "freeze", "merge freeze", "project",
        "The merge freeze for the mobile release branch begins on the first Thursday of every "
        "month.",
    )
    a = _audit(cm.build(tmp_path / "memory", topics), near=True)
    dup = a.tables["duplicates"]
    assert list(zip(dup["path_a"], dup["path_b"])) == [
        ("feedback_testing.md", "feedback_testing_copy.md")
    ]
    near = a.tables["near_duplicates"]
    assert list(zip(near["path_a"], near["path_b"])) == [("project_freeze.md", "project_release.md")]
    assert near["cosine"][0] >= 0.90 and near["margin"][0] == pytest.approx(near["cosine"][0] - 0.90)
    assert "0.90" in near["basis"][0]
    # the exact copy is not counted again as a near-duplicate; the unrelated files are no pair
    assert a.headline["n_duplicate_pairs"] == 1 and a.headline["n_near_duplicate_pairs"] == 1


def test_near_duplicates_not_checked_is_null_not_zero(tmp_path):
    a = _audit(cm.build(tmp_path / "memory"), near=False)
    assert a.headline["n_near_duplicate_pairs"] is None and a.headline["memory_findings"] is None
    assert any("not checked" in n for n in a.notes)


def test_frontmatter_rules_and_their_negative_controls(tmp_path):
    mem = cm.build(tmp_path / "memory", index_extra=[
        f"- [{n}]({n}.md)" for n in ("user_bare", "feedback_noname", "project_odd",
                                     "reference_wrong", "user_twin", "project_yaml")])
    (mem / "user_bare.md").write_text("no frontmatter at all\n")
    (mem / "feedback_noname.md").write_text("---\ndescription: d\ntype: feedback\n---\nb\n")
    (mem / "project_odd.md").write_text(cm.topic("odd", "d", "plan", "b"))
    (mem / "reference_wrong.md").write_text(cm.topic("wrong", "d", "feedback", "c"))
    (mem / "user_twin.md").write_text(cm.topic("User-Role", "d", "user", "twin body"))
    (mem / "project_yaml.md").write_text("---\nname: [x\n---\nb\n")
    fm = _audit(mem).tables["frontmatter"]
    got = set(zip(fm["path"], fm["rule"]))
    assert got == {
        ("user_bare.md", "no_frontmatter"),
        ("feedback_noname.md", "no_name"),
        ("project_odd.md", "unknown_type"),
        ("reference_wrong.md", "prefix_type_mismatch"),
        ("user_twin.md", "shared_name"),
        ("user_role.md", "shared_name"),
        ("project_yaml.md", "unreadable_frontmatter"),
    }
    assert fm["basis"].notna().all()
    # controls: a file without a type prefix and a metadata: type are fine (the clean folder
    # above has both spellings and no finding)


def test_the_real_samples(data_dir):
    a = _audit(data_dir / "samples" / "claude-memory" / "recommendarr")
    h = a.headline
    assert h["n_topic_files"] == 13 and h["index_lines_total"] == 33
    assert h["n_orphan_files"] == 0 and h["n_dangling_index_lines"] == 0
    assert h["n_tail_index_lines"] == 0 and h["n_duplicate_pairs"] == 0
    fm = a.tables["frontmatter"]
    assert list(zip(fm["path"], fm["rule"])) == [
        ("project_conversation_url_loading.md", "prefix_type_mismatch")
    ]
    types = a.tables["types"].set_index("type")["files"].to_dict()
    assert types == {"feedback": 7, "project": 5, "reference": 1}
    # the drift users report (anthropics/claude-code#78569): an index of prose notes that
    # links none of the five topic files beside it
    b = _audit(data_dir / "samples" / "claude-memory" / "openai-anthropic-bridge")
    h = b.headline
    assert h["n_orphan_files"] == 5 and h["n_dangling_index_lines"] == 0
    assert sorted(b.tables["orphan_files"]["path"]) == [
        "development_workflow.md",
        "feedback.md",
        "project_context.md",
        "technical_stack.md",
        "user_role.md",
    ]
    assert h["n_tail_index_lines"] == 0 and h["n_frontmatter_problems"] == 0


def test_memlab_audit_json_on_the_command_line(tmp_path):
    mem = cm.build(tmp_path / "memory", index_extra=["- [gone](feedback_gone.md)"])
    out = subprocess.run(
        [sys.executable, "-m", "memlab", "audit", "--json", "-q", str(mem)],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["kind"] == "claude_memory"
    assert doc["headline"]["n_dangling_index_lines"] == 1
    assert doc["tables"]["dangling_index_lines"][0]["target"] == "feedback_gone.md"


def test_an_index_not_read_leaves_drift_and_tail_unknown_not_zero(tmp_path):
    mem = cm.build(tmp_path / "memory")
    with open(mem / "MEMORY.md", "r+b") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    a = _audit(mem)
    assert list(a.tables["problems"]["kind"]) == ["oversized"]
    for key in ("n_orphan_files", "n_dangling_index_lines", "n_tail_index_lines",
                "n_hidden_memories", "index_bytes", "memory_findings"):
        assert a.headline[key] is None, key
    assert a.headline["n_frontmatter_problems"] == 0  # the topic files were still read
    assert any("MEMORY.md was not read" in n for n in a.notes)
