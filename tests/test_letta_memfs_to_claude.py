"""A Letta Code memfs repository migrated to a Claude Code memory folder (``--to
claude_memory``): one topic file per memory file, an index that links each within Claude
Code's 200-line / 25,000-byte budget (and flags, never drops, what falls past it), --verify
through the letta_memfs kind's own verifier, and the result loading as claude_memory with no
drift."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import memlab
from memlab import kinds
from memlab.errors import MigrationError
from memlab.kinds.letta_memfs._claude import SIDE_FILE, claude_type, topic_name
from memlab.migrations import migrate, verify

sys.path.insert(0, str(Path(__file__).parent))
import claude_memory_folders as cm  # noqa: E402

SAMPLE = "samples/memfs/letta-code-v2.bundle"


@pytest.fixture(scope="module")
def migrated(data_dir, tmp_path_factory):
    dest = tmp_path_factory.mktemp("claude") / "out"
    result = migrate(data_dir / SAMPLE, dest, to="claude_memory", retrieval=False, verify=True)
    return data_dir / SAMPLE, dest, result


def test_every_memory_file_becomes_a_topic_file_the_index_links(migrated):
    src, dest, result = migrated
    assert result.mode == "created" and result.ok is True
    letta = memlab.load(src)
    claude = memlab.load(dest / "memory")
    assert claude.kind == "claude_memory" and len(claude.problems) == 0
    assert len(claude.files) == len(letta.files) == 14
    got = claude.files.set_index("path")
    for row in letta.files.itertuples(index=False):
        name = topic_name(row.label)
        assert got.loc[name, "body"] == row.body, name  # the body Letta Code reads, unchanged
        assert got.loc[name, "name"] == row.label
    assert got["indexed"].all() and got["visible"].all()
    # Letta's root index is kept as a topic file; MEMORY.md is the Claude index
    assert "letta_MEMORY.md" in got.index and got.loc["letta_MEMORY.md", "type"] == "reference"
    assert got.loc["human.md", "type"] == "user" and got.loc["persona.md", "type"] == "feedback"
    assert got.loc["notes_sources.md", "type"] == "project"
    # Letta's core files (in the prompt every turn) come first in the index
    targets = list(claude.index["target"].dropna())
    assert targets[:5] == ["letta_MEMORY.md", "human.md", "persona.md",
                           "research_citations.md", "research_plan.md"]
    # the five Letta index files have no description: a fallback, flagged
    assert list(result.flags["kind"]) == ["description_fallback"] * 5
    h = memlab.audit(claude).headline
    for key in ("n_orphan_files", "n_dangling_index_lines", "n_tail_index_lines",
                "n_hidden_memories", "n_frontmatter_problems"):
        assert h[key] == 0, key
    assert (dest / SIDE_FILE).is_file() and not (dest / "memory" / ".memlab").exists()


def test_verify_holds_and_can_fail(migrated, tmp_path):
    src, dest, result = migrated
    parity = result.parity
    assert parity["ok"].all()
    assert set(parity["check"]) == {"presence", "content", "description", "type", "index",
                                    "drift", "side_file"}
    assert len(parity[parity["check"] == "content"]) == 14
    assert verify(src, dest, retrieval=False)["ok"].all()  # without the plan: the side file
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(dest), str(clone)], check=True)
    topic = clone / "memory" / "notes_sources.md"
    topic.write_text(topic.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
    index = clone / "memory" / "MEMORY.md"
    index.write_text("".join(line for line in index.read_text(encoding="utf-8")
                             .splitlines(keepends=True) if "(scratch_todo.md)" not in line),
                     encoding="utf-8")
    diff = verify(src, clone, retrieval=False)
    bad = diff[diff["ok"] == False]  # noqa: E712
    assert set(zip(bad["check"], bad["item"])) == {
        ("content", "notes/sources"),
        ("index", "scratch/todo"),
        ("drift", "orphan topic files"),
    }


def test_an_index_past_claude_codes_budget_is_written_whole_and_flagged(tmp_path):
    topics = {f"project_note_{i:03d}.md": (f"note-{i:03d}", f"note number {i}", "project",
                                           f"body of note {i}") for i in range(230)}
    letta = tmp_path / "letta"
    migrate(cm.build(tmp_path / "claude", topics), letta, to="letta", retrieval=False)
    dest = tmp_path / "back"
    result = migrate(letta, dest, to="claude_memory", retrieval=False, verify=True)
    store = memlab.load(dest / "memory")
    assert len(store.files) == 231  # 230 topics and Letta's root MEMORY.md
    assert store.meta["index_lines"] == 233  # a heading, a blank line, one line per file
    past = result.flags[result.flags["kind"] == "index_past_budget"]
    assert len(past) == 233 - 200 and set(past["severity"]) == {"warning"}
    h = kinds.get("claude_memory").audit(store, near_duplicates=False).headline
    assert h["n_tail_index_lines"] == len(past) and h["n_hidden_memories"] == len(past)
    assert h["n_orphan_files"] == 0 and h["n_dangling_index_lines"] == 0
    assert set(store.files.loc[~store.files["visible"], "path"]) == set(past["path"])
    # the file names' own prefixes give the types back (no prefix/type mismatch)
    assert set(store.files["type"]) == {"project", "reference"}
    assert h["n_frontmatter_problems"] == 0


def test_type_rules_and_names():
    assert claude_type("human") == ("user", "Letta's human file: who the user is")
    assert claude_type("system/persona")[0] == "feedback"
    assert claude_type("reference/api")[0] == "reference"
    assert claude_type("feedback_tests")[0] == "feedback"
    assert claude_type("notes/plan")[0] == "project"
    assert claude_type("snake_case_name")[0] == "project"  # not a type prefix
    assert topic_name("notes/a b") == "notes_a_b.md" and topic_name("MEMORY") == "letta_MEMORY.md"


def test_a_name_clash_is_refused_and_nothing_is_written(tmp_path):
    letta = tmp_path / "letta"
    migrate(cm.build(tmp_path / "claude"), letta, to="letta", retrieval=False)
    for rel in ("notes_a.md", "notes/a.md"):  # both would be the topic file notes_a.md
        (letta / rel).parent.mkdir(exist_ok=True)
        (letta / rel).write_text("---\ndescription: a note\n---\n\nbody\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(letta), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(letta), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--no-verify", "-m", "two notes"], check=True)
    with pytest.raises(MigrationError, match="would both be notes_a.md"):
        migrate(letta, tmp_path / "out", to="claude_memory", retrieval=False)
    assert not (tmp_path / "out").exists()


def test_descriptions_yaml_would_misread_come_through_as_written(tmp_path):
    import yaml

    descs = {"project_a.md": "note: with colon # and hash", "project_b.md": "\"quoted\" it's",
             "project_c.md": "- starts with a dash", "project_d.md": "true",
             "project_e.md": "ümlaut – dash"}
    claude = tmp_path / "claude"
    claude.mkdir()
    lines = ["# Memory index", ""]
    for name, desc in descs.items():
        head = yaml.safe_dump({"name": name[:-3], "description": desc, "type": "project"},
                              allow_unicode=True, width=10**6)
        (claude / name).write_text(f"---\n{head}---\n\nbody of {name}\n", encoding="utf-8")
        lines.append(f"- [{name[:-3]}]({name}) — x")
    (claude / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    migrate(claude, tmp_path / "letta", to="letta", retrieval=False)
    result = migrate(tmp_path / "letta", tmp_path / "back", to="claude_memory",
                     retrieval=False, verify=True)
    assert result.parity["ok"].all()
    back = memlab.load(tmp_path / "back" / "memory").files.set_index("path")
    for name, desc in descs.items():
        assert back.loc[name, "description"] == desc, name
        assert back.loc[name, "body"] == f"body of {name}\n"
