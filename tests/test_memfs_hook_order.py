"""The memfs audit's hook check walks commits parents first, and reads files as Letta's hook
reads them (issue 33, item 3).

* memlab's own elfmem -> Letta migration makes its commits in one second: auditing it must
  find no hook violation (it found 8: the checks visited the commits by clock, so the v2
  files were judged before the commit that made the repository v2).
* A hand-built repository whose commits share one second and whose true order decides the
  verdict, committed through the hook Letta Code 0.34.12 installs (the oracle).
* A memory file with NUL bytes that the installed hook accepts is no ``--no-verify`` suspect;
  one the hook refuses still is.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import memlab
from memlab.kinds._memfs._audit import audit_memfs
from memlab.formats.letta_memfs import render_memfs_file, render_memfs_v2_file
from memlab.migrations import migrate
from memfs_repos import AGENT, _Writer, _t

SECOND = _t("2026-04-10")  # after the hook's limit rule was relaxed: the "current" hook


def _hooked(path: Path, letta_code, policy: str) -> _Writer:
    """A repository with Letta Code's own pre-commit hook installed and enabled."""
    w = _Writer(path)
    letta_code.install_hooks(path, policy)
    w.repo.git.config("--unset", "core.hooksPath")
    return w


def _refused(w: _Writer, files: dict[str, str | bytes], when) -> str:
    """Stage ``files``, show that the installed hook refuses them, then commit with
    --no-verify (an agent bypassing the hook); the hook's output is returned."""
    for rel, content in files.items():
        w.write(rel, content)
    w.repo.git.add("--", *files)
    env = {**os.environ, **w._env(AGENT, when)}
    run = subprocess.run(["git", "-C", str(w.path), "commit", "-q", "-m", "refused"], env=env,
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    return run.stdout + run.stderr


# --------------------------------------------------------------------------- same second

def test_migrated_demo_audits_clean(tmp_path, data_dir):
    migrate(data_dir / "demo" / "elfmem-demo.db", tmp_path / "out", to="letta", retrieval=False)
    store = memlab.load_memfs(tmp_path / "out")
    commits = store.history.drop_duplicates("sha")
    assert len(commits) == 3 and commits["committed_at"].nunique() == 1  # one second
    audit = audit_memfs(store)
    assert audit.headline["hook_violations"] == 0
    assert audit.tables["hook_violations"].empty
    assert audit.tables["constraints"].empty and audit.tables["integrity"].empty


def test_same_second_commits_are_judged_in_parent_order(tmp_path, letta_code):
    w = _hooked(tmp_path / "memory", letta_code, "root-marker")
    topic = render_memfs_v2_file("topic", "What I know about the topic", "Facts.\n")
    shas = {
        "index": w.commit("init", AGENT, SECOND, files={"MEMORY.md": "# Memory\n"}),
        "folders": w.commit("folder indexes", AGENT, SECOND,
                            files={"notes/MEMORY.md": "# Notes\n", "reference/MEMORY.md": "# Ref\n"}),
        "v2": w.commit("v2 files", AGENT, SECOND,
                       files={"reference/topic.md": topic, "notes/a.md": topic}),
    }
    said = _refused(w, {"notes/b.md": "---\nname: b\n---\nno description\n"}, SECOND)
    assert "notes/b.md: missing required field 'description'" in said
    shas["bad"] = w.commit("bypass", AGENT, SECOND, no_verify=True)
    store = memlab.load_memfs(w.path)
    assert store.meta["layout"] == "letta_v2"
    assert store.history["committed_at"].nunique() == 1
    rows = audit_memfs(store).tables["hook_violations"]
    # The hook refused exactly one commit; its file is projected (notes/MEMORY.md came first).
    assert rows[["sha", "path", "rule", "variant"]].astype(str).values.tolist() == [
        [shas["bad"], "notes/b.md", "missing_description", "v2"]]
    assert rows["no_verify_suspect"].tolist() == [True]


def test_same_second_order_on_a_branch(tmp_path, letta_code):
    """Branches interleave: each commit's state is its own first parent's, not whatever
    commit a replay visited last. Main stays a legacy repository (its hook never sees a
    MEMORY.md) while, the same second, a branch makes itself v2."""
    w = _hooked(tmp_path / "memory", letta_code, "root-marker")
    w.commit("init", AGENT, SECOND, files={
        "persona.md": render_memfs_v2_file("persona", "Who I am", "EmmaBot\n")})
    w.checkout("-b", "v2")
    to_v2 = w.commit("root index", AGENT, SECOND, files={"MEMORY.md": "# Memory\n"})
    w.checkout("main")
    # Legacy frontmatter at the root: the legacy hook does not look there, the v2 hook would.
    legacy = w.commit("legacy file", AGENT, SECOND, files={
        "extra.md": "---\ndescription: extra\nlimit: 2000\n---\nbody\n"})
    w.checkout("v2")
    store = memlab.load_memfs(w.path)
    assert store.meta["layout"] == "letta_v2" and store.history["committed_at"].nunique() == 1
    rows = audit_memfs(store).tables["hook_violations"]
    assert rows.empty, rows[["sha", "path", "rule"]]
    # Negative control: the same file committed where MEMORY.md is, the hook refuses it.
    said = _refused(w, {"extra.md": "---\ndescription: extra\nlimit: 2000\n---\nbody\n"}, SECOND)
    assert "extra.md: unknown frontmatter key 'limit'" in said
    bad = w.commit("bypass", AGENT, SECOND, no_verify=True)
    rows = audit_memfs(memlab.load_memfs(w.path)).tables["hook_violations"]
    assert set(rows["sha"]) == {bad} and legacy != bad != to_v2
    assert {"unknown_key", "missing_name"} <= set(rows["rule"].astype(str))


# --------------------------------------------------------------------------- NUL bytes

NUL_BODY = b"---\ndescription: Notes with a NUL\n---\nbefore\x00after\n"


def test_nul_bytes_are_text_as_the_installed_hook_reads_them(tmp_path, letta_code):
    w = _hooked(tmp_path / "memory", letta_code, "legacy-only")
    w.commit("init", AGENT, SECOND, files={
        ".letta/config.json": "{}\n",
        "system/persona.md": render_memfs_file("Who I am", "EmmaBot\n")})
    # Through the real hook: it accepts the file (the commit would fail otherwise).
    accepted = w.commit("nul", AGENT, SECOND, files={"system/nul.md": NUL_BODY})
    # A latin-1 file: not UTF-8, read by the hook with replacement characters.
    latin = w.commit("latin", AGENT, SECOND, files={
        "reference/latin.md": "---\ndescription: caf\xe9\n---\nna\xefve\n".encode("latin-1")})
    # Negative control: a NUL file the hook refuses is still flagged.
    bad = b"---\nlabel: x\n---\nbefore\x00after\n"
    said = _refused(w, {"system/bad.md": bad}, SECOND)
    assert "system/bad.md: unknown frontmatter key 'label'" in said
    refused = w.commit("bypass", AGENT, SECOND, no_verify=True)
    store = memlab.load_memfs(w.path)
    assert store.meta["layout"] == "letta_v1"
    audit = audit_memfs(store)
    rows = audit.tables["hook_violations"]
    assert accepted not in set(rows["sha"]) and latin not in set(rows["sha"])
    assert sorted(rows["rule"].astype(str)) == ["missing_description", "unknown_key"]
    assert set(rows["sha"]) == {refused} and rows["no_verify_suspect"].all()
    assert audit.headline["no_verify_commits"] == 1
