"""The claude_memory kind: loading Claude Code auto-memory folders, read-only and permissive,
on the real public sample and on folders built to the documented layout."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import memlab
from memlab import kinds
from memlab.constants import MAX_FILE_BYTES
from memlab.errors import StoreNotFound, UnknownOption, UnrecognizedStore

sys.path.insert(0, str(Path(__file__).parent))
import claude_memory_folders as cm  # noqa: E402


@pytest.fixture(scope="module")
def sample(data_dir):
    return memlab.load(data_dir / "samples" / "claude-memory" / "recommendarr")


def test_the_real_sample_loads_every_file_and_index_line(sample):
    assert sample.kind == "claude_memory"
    assert sample.meta["detected"]["kind"] == "claude_memory"
    assert len(sample.files) == 13 and sample.files["read"].all()
    assert sample.meta["index_lines"] == 33 and sample.meta["index_bytes"] == 2187
    assert len(sample.index.drop_duplicates("line")) == 33
    # 13 lines link a topic file; three name docs outside the folder in backticks, not links
    assert sample.index["target"].notna().sum() == 13
    assert sample.index["target_exists"].dropna().all()
    assert sample.files["indexed"].all() and sample.files["visible"].all()
    assert set(sample.files["type_at"]) == {"top"}
    assert sample.files["type"].value_counts().to_dict() == {
        "feedback": 7,
        "project": 5,
        "reference": 1,
    }
    assert len(sample.problems) == 0
    # one block per topic file plus the index (the migration's view)
    assert len(sample.blocks) == 14 and "MEMORY" in set(sample.blocks["label"])


def test_the_real_sample_whose_index_links_nothing(data_dir):
    """openai-anthropic-bridge: MEMORY.md is prose notes, no line links a file, so all five
    topic files are orphans a session only finds by listing the folder."""
    s = memlab.load(data_dir / "samples" / "claude-memory" / "openai-anthropic-bridge")
    assert len(s.files) == 5 and s.files["read"].all() and len(s.problems) == 0
    assert s.meta["index_lines"] == 40 and s.index["target"].notna().sum() == 0
    assert not s.files["indexed"].any()
    assert s.files["type"].value_counts().to_dict() == {
        "feedback": 2,
        "project": 1,
        "reference": 1,
        "user": 1,
    }


def test_a_built_folder_reads_name_description_type_and_body(tmp_path):
    s = memlab.load(cm.build(tmp_path / "memory"))
    row = s.files.set_index("path").loc["feedback_testing.md"]
    assert row["name"] == "feedback-testing"
    assert row["description"] == "run the real database in tests"
    assert row["type"] == "feedback"
    assert row["body"].startswith("Integration tests must hit a real PostgreSQL")
    assert row["lines"] == 6 + row["body"].count("\n")  # 5 frontmatter lines, a blank
    assert s.meta["other_files"] == []
    (tmp_path / "memory" / ".obsidian").mkdir()
    (tmp_path / "memory" / ".obsidian" / "x.md").write_text("editor state")
    (tmp_path / "memory" / "notes.txt").write_text("not markdown")
    again = memlab.load(tmp_path / "memory")
    assert again.meta["other_files"] == [".obsidian/", "notes.txt"]  # listed, not read
    assert len(again.files) == 4
    first = s.index[s.index["target"].notna()].iloc[0]
    assert first["line"] == 3 and first["offset"] == len("# Memory index\n\n".encode())


def test_detection_claims_a_memory_folder_and_not_a_letta_one(tmp_path):
    kind = kinds.get("claude_memory")
    mem = cm.build(tmp_path / "memory")
    assert memlab.load(mem).kind == "claude_memory"
    assert kind.detect(kinds.Probe(mem)) == "holds MEMORY.md and no git (Claude Code auto memory)"
    for marker in (".git", "system", ".letta", ".memfs.config.json"):
        other = cm.build(tmp_path / marker.strip(".") / "memory")
        (other / marker).mkdir()
        assert kind.detect(kinds.Probe(other)) is None, marker
    # a memfs v2 repository (a root MEMORY.md in git) stays Letta's
    assert kinds.detect(tmp_path / "git" / "memory").kind == "letta_memfs"
    # a folder without MEMORY.md, and a file, are not one
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "user_role.md").write_text(cm.topic("a", "b", "user", "c"))
    assert kind.detect(kinds.Probe(bare)) is None
    assert kind.detect(kinds.Probe(mem / "MEMORY.md")) is None


def test_bad_input_is_a_problem_row_each_and_nothing_is_written(tmp_path):
    mem = cm.build(tmp_path / "memory", index_extra=["- [secret](../secret.md) — outside",
                                                      "- [abs](/etc/passwd.md) — absolute"])
    (tmp_path / "secret.md").write_text(cm.topic("secret", "never read", "user", "TOPSECRET"))
    (mem / "latin1.md").write_bytes(cm.topic("latin", "d", "user", "caf\xe9").encode("latin-1"))
    os.symlink(tmp_path / "secret.md", mem / "linked.md")
    with open(mem / "huge.md", "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    (mem / "open.md").write_text("---\nname: x\nno closing fence\n")
    (mem / "badyaml.md").write_text("---\nname: [unclosed\n---\nbody\n")
    before = cm.snapshot(tmp_path)
    s = memlab.load(mem)
    assert cm.snapshot(tmp_path) == before
    kinds = {(p.file, p.kind) for p in s.problems.itertuples()}
    assert ("latin1.md", "bad_text") in kinds
    assert ("linked.md", "symlink") in kinds
    assert ("huge.md", "oversized") in kinds
    assert ("open.md", "frontmatter") in kinds and ("badyaml.md", "frontmatter") in kinds
    outside = s.problems[s.problems["kind"] == "outside_folder"]
    assert list(outside["line"]) == [7, 8]
    # every file is a row, read or not; the link's target was never read
    files = s.files.set_index("path")
    assert {"latin1.md", "linked.md", "huge.md", "open.md", "badyaml.md"} <= set(files.index)
    assert not files.loc["linked.md", "read"] and not files.loc["huge.md", "read"]
    assert "caf\ufffd" in files.loc["latin1.md", "body"]
    assert not s.blocks["value"].str.contains("TOPSECRET").any()
    assert s.index["outside"].fillna(False).sum() == 2


def test_missing_and_wrong_sources_are_one_line_errors(tmp_path):
    with pytest.raises(StoreNotFound):
        kinds.get("claude_memory").load(tmp_path / "nope")
    f = tmp_path / "MEMORY.md"
    f.write_text("- x\n")
    with pytest.raises(UnrecognizedStore):
        kinds.get("claude_memory").load(f)
    with pytest.raises(UnknownOption, match="claude_memory"):
        kinds.get("claude_memory").load(cm.build(tmp_path / "m"), history=True)


def test_a_folder_without_an_index_loads_with_a_problem(tmp_path):
    mem = cm.build(tmp_path / "memory")
    (mem / "MEMORY.md").unlink()
    s = kinds.get("claude_memory").load(mem)
    assert list(s.problems["kind"]) == ["no_index"]
    assert len(s.files) == 4 and s.index.empty


def test_the_claude_md_hierarchy_beside_a_project_memory_folder(tmp_path):
    project = tmp_path / "proj"
    mem = cm.build(project / ".claude" / "memory")
    (project / "CLAUDE.md").write_text("# Project\nSee @docs/style.md and @~/.claude/me.md\n")
    (project / ".claude" / "rules").mkdir()
    (project / ".claude" / "rules" / "tests.md").write_text("Run pytest -q.\n")
    s = memlab.load(mem)
    ins = s.instructions.set_index("path")
    assert set(ins["scope"]) == {"project", "rules"}
    assert ins.loc["../../CLAUDE.md", "imports"] == ["docs/style.md", "~/.claude/me.md"]
    assert ins.loc["../../CLAUDE.md", "lines"] == 2
