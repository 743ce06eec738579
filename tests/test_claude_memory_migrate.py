"""A Claude Code memory folder migrated to Letta Code memfs v2, judged by Letta Code 0.34.12
itself (its --audit validator, its initial-memory mapping and its installed pre-commit hook),
with --verify parity block by block, and refused in one line when a file was not read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import memlab
from memlab.errors import MigrationError
from memlab.migrations import migrate, verify

sys.path.insert(0, str(Path(__file__).parent))
import claude_memory_folders as cm  # noqa: E402
from migrate_v2_helpers import _head_files, _hook_accepts_noop_and_refuses_limit  # noqa: E402


@pytest.fixture(scope="module")
def migrated(data_dir, tmp_path_factory):
    src = data_dir / "samples" / "claude-memory" / "recommendarr"
    dest = tmp_path_factory.mktemp("cm") / "letta"
    return src, dest, migrate(src, dest, to="letta", retrieval=False, verify=True)


def test_the_real_sample_becomes_what_letta_code_creates(migrated, letta_code, tmp_path):
    src, dest, result = migrated
    assert result.mode == "created" and result.ok is True
    assert result.flags.empty
    assert letta_code.audit(dest)["policy"] == "root-marker"
    assert letta_code.audit_errors(dest) == []  # Letta Code's own --audit of the whole tree
    store = memlab.load(src)
    blocks = [
        {"label": r["label"], "value": r["value"], "description": r["description"]}
        for r in store.blocks.to_dict("records")
    ]
    expected = {f["relativePath"]: f["content"] for f in letta_code.initial(blocks)}
    ours = _head_files(dest)
    assert set(expected) <= set(ours) and len(expected) == 14
    for path, content in expected.items():
        assert ours[path] == content, path
    # the index is the root MEMORY.md as written, so its links still name the topic files
    assert ours["MEMORY.md"] == (src / "MEMORY.md").read_text(encoding="utf-8")
    _hook_accepts_noop_and_refuses_limit(dest, letta_code, tmp_path)


def test_verify_holds_and_can_fail(migrated, tmp_path):
    src, dest, result = migrated
    parity = result.parity
    assert len(parity) and parity["ok"].all()
    assert set(parity["check"]) >= {"presence", "content", "description", "side_record"}
    # the Claude name and type survive in the side file
    side = (dest / ".memlab" / "letta-blocks.json").read_text(encoding="utf-8")
    assert '"claude_type": "reference"' in side
    assert '"claude_name": "useChat URL conversation loading"' in side
    # a copy whose file was edited afterwards differs from its source
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(dest), str(clone)], check=True)
    target = clone / "project_conversation_url_loading.md"
    target.write_text(target.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qam", "edit"], check=True)
    diff = verify(src, clone, retrieval=False)
    bad = diff[diff["ok"] == False]  # noqa: E712
    assert list(bad["item"]) == ["project_conversation_url_loading.md"]
    assert list(bad["check"]) == ["content"]


def test_a_folder_with_a_file_not_read_is_refused_and_nothing_is_written(tmp_path):
    mem = cm.build(tmp_path / "memory")
    (tmp_path / "outside.md").write_text("x")
    os.symlink(tmp_path / "outside.md", mem / "user_link.md")
    with pytest.raises(MigrationError, match="user_link.md: a symbolic link"):
        migrate(mem, tmp_path / "out", to="letta", retrieval=False)
    assert not (tmp_path / "out").exists()
    out = subprocess.run(
        [sys.executable, "-m", "memlab", "migrate", str(mem), str(tmp_path / "out"), "--to",
         "letta", "-q"],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "user_link.md" in out.stderr and not (tmp_path / "out").exists()


def test_a_built_folder_with_drift_still_migrates_every_file(tmp_path, letta_code):
    mem = cm.build(tmp_path / "memory", index_extra=["- [gone](feedback_gone.md)"])
    (mem / "project_orphan.md").write_text(cm.topic("orphan", "no line", "project", "kept"))
    (mem / "notes").mkdir()
    (mem / "notes" / "deep.md").write_text("no frontmatter here\n")
    result = migrate(mem, tmp_path / "out", to="letta", retrieval=False, verify=True)
    files = _head_files(tmp_path / "out")
    assert {"project_orphan.md", "notes_deep.md", "user_role.md", "MEMORY.md"} <= set(files)
    assert "kept" in files["project_orphan.md"]
    assert set(result.flags["kind"]) == {"description_fallback"}  # deep.md has no description
    assert letta_code.audit_errors(tmp_path / "out") == []
