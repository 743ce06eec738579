"""A memory repo's git config is untrusted: no program it names may run, whatever memlab does
with the repo (load, apply a proposal, dry-run, migrate onto a branch, show a migration's diff,
discover)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import memlab
from memlab.errors import RepoError
from memlab.reviews import apply_proposal

from hostile import agent_file, git, install_hooks, marker_program, memory_repo, proposal, tick

# (config key, attribute line the repo commits so the key applies, extra settings)
PROGRAM_KEYS = [
    ("core.fsmonitor", "", {}),
    ("filter.evil.clean", "* filter=evil\n", {}),
    ("filter.evil.smudge", "* filter=evil\n", {}),
    ("filter.evil.process", "* filter=evil\n", {}),
    ("diff.external", "", {}),
    ("diff.evil.textconv", "* diff=evil\n", {}),
    ("diff.evil.command", "* diff=evil\n", {}),
    ("merge.evil.driver", "* merge=evil\n", {}),
    ("core.pager", "", {"pager.show": "true", "pager.log": "true"}),
    ("core.sshCommand", "", {}),
    ("core.askPass", "", {}),
    ("credential.helper", "", {}),
    ("core.editor", "", {}),
    ("gpg.program", "", {"commit.gpgSign": "true"}),
    ("core.alternateRefsCommand", "", {}),
]


def _every_operation(repo, tmp_path) -> None:
    """Everything memlab does with a memory repo; each must leave no marker."""
    store = memlab.load(repo)
    assert len(store.files) >= 2
    memlab.discover(repo.parent)
    md, item = proposal(repo, tmp_path / "reviews")
    tick(md, item.id)
    dry = apply_proposal(md, dry_run=True)
    assert dry.files == ["system/persona.md"]
    done = apply_proposal(md)
    assert done.commit == git(repo, "rev-parse", "HEAD")
    assert "already applied" in apply_proposal(md).summary()
    src = agent_file(tmp_path / "a.af", "rex", ["persona", "notes"])
    result = memlab.migrate(src, repo, to="letta", branch="memlab/migrated", retrieval=False,
                            force=True)
    assert git(repo, "rev-parse", "memlab/migrated") == result.commits["sha"].iloc[-1]
    assert "persona" in result.diff()


@pytest.mark.parametrize("key,attributes,extra", PROGRAM_KEYS, ids=[k for k, _, _ in PROGRAM_KEYS])
def test_no_program_named_by_the_repo_config_runs(tmp_path, key, attributes, extra):
    repo = tmp_path / "memory"
    memory_repo(repo, attributes=attributes)
    program, marker = marker_program(tmp_path, key.replace(".", "_"))
    value = f"!{program}" if key == "credential.helper" else str(program)
    git(repo, "config", key, value)
    for k, v in extra.items():
        git(repo, "config", k, v)
    _every_operation(repo, tmp_path)
    assert not marker.exists(), f"{key} ran"


def test_no_hook_runs_from_hooks_dir_or_hooks_path(tmp_path):
    repo = tmp_path / "memory"
    memory_repo(repo)
    markers = install_hooks(repo / ".git" / "hooks", "githooks")
    markers += install_hooks(tmp_path / "elsewhere" / "hooks", "hookspath")
    git(repo, "config", "core.hooksPath", str(tmp_path / "elsewhere" / "hooks"))
    _every_operation(repo, tmp_path)
    ran = [m.name for m in markers if m.exists()]
    assert ran == []


@pytest.mark.parametrize("section", ["include", "includeIf \"gitdir:/\""])
def test_config_includes_are_refused_naming_the_key(tmp_path, section):
    repo = tmp_path / "memory"
    memory_repo(repo)
    program, marker = marker_program(tmp_path, "included")
    other = tmp_path / "other.cfg"
    other.write_text(f"[core]\n\tfsmonitor = {program}\n")
    with open(repo / ".git" / "config", "a") as fh:
        fh.write(f"[{section}]\n\tpath = {other}\n")
    with pytest.raises(RepoError, match="include"):
        memlab.load(repo)
    md, item = proposal(repo, tmp_path / "reviews")
    tick(md, item.id)
    cli = subprocess.run([sys.executable, "-m", "memlab", "apply", str(md), "--dry-run"],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2, cli.stderr
    lines = cli.stderr.strip().splitlines()
    assert len(lines) == 1 and "include" in lines[0] and "Traceback" not in cli.stderr
    assert not marker.exists()


def test_apply_on_a_repo_with_a_filter_writes_the_committed_bytes(tmp_path):
    """No smudge on the way out: the working file is exactly the committed blob."""
    repo = tmp_path / "memory"
    memory_repo(repo, attributes="*.md filter=evil\n")
    program, marker = marker_program(tmp_path, "smudge")
    git(repo, "config", "filter.evil.smudge", f"sh -c 'touch {marker}; sed s/Rex/PWNED/'")
    git(repo, "config", "filter.evil.required", "true")
    md, item = proposal(repo, tmp_path / "reviews")
    tick(md, item.id)
    apply_proposal(md)
    committed = git(repo, "show", "HEAD:system/persona.md")
    assert (repo / "system/persona.md").read_text() == committed + "\n"
    assert "PWNED" not in committed and not marker.exists()
