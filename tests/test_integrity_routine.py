"""The integrity audit's false-positive corpus (issue 33, items 1 and 5): routine work on a memory
repository, replayed with real git, gives no ``integrity`` row and a checked headline of 0;
each true rewrite gives exactly one row saying what happened and what was lost or re-applied.

Where Letta Code 0.34.12 runs git itself, the commands are the ones its bundle runs
(``letta_code/_payload/app/letta.js`` of the pinned wheel, tests/letta_code.py):

* ``pullMemory``: ``git pull --ff-only``; when that fails and ``git merge-base HEAD @{u}``
  succeeds, ``git pull --rebase``; the post-turn sync then ``git push -u origin main``.
* ``recoverMemoryPullByResettingToRemote`` (when HEAD and its upstream share no commit):
  ``git status --porcelain``, ``git fetch origin main``, ``git rev-parse --verify
  refs/remotes/origin/main``, ``git rev-parse --verify HEAD``, ``git update-ref
  refs/letta-backup/pre-sync-<Date.now()> <HEAD>``, ``git reset --hard refs/remotes/origin/main``,
  ``git branch --set-upstream-to origin/main main``.
* ``createReflectionMemoryWorktree``: ``git worktree add <memory-worktrees/reflection-<id>> -b
  letta/reflection/<id> <HEAD>``; ``finalizeReflectionMemoryWorktree``: ``git worktree remove
  --force <dir>``, ``git merge --no-edit -m "merge(memory): <branch>" <branch>``, ``git branch -d
  <branch>``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import memlab

from integrity_repos import ENV, agent_clone, block, commit, git, rows, seeded_server

LETTA_CODE = {**ENV, "GIT_AUTHOR_NAME": "Letta Code", "GIT_AUTHOR_EMAIL": "noreply@letta.com",
              "GIT_COMMITTER_NAME": "Letta Code", "GIT_COMMITTER_EMAIL": "noreply@letta.com"}


def fails(repo: Path, *args: str) -> bool:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                          env=ENV).returncode != 0


def assert_clean(path: Path) -> None:
    audit = memlab.audit(path)
    found = audit.tables["integrity"]
    assert found.empty, found[["kind", "detail"]].to_dict("records")
    assert audit.headline["integrity_findings"] == 0, audit.headline["integrity_reason"]


def _recreate(server: Path, root: Path) -> None:
    """The server re-creates the repository (letta-ai/letta-code#2203): a new 'Initial commit'
    and 'Backfill … block' history, force-pushed onto main."""
    fresh = root / "fresh"
    git(root, "init", "-q", "-b", "main", str(fresh))
    commit(fresh, "Initial commit", {".letta/config.json": "{}\n"})
    commit(fresh, "Backfill system/human block", {"system/human.md": block("Maya again")})
    git(fresh, "push", "-q", "--force", str(server), "main")


# --------------------------------------------------------------------------- routine: 0 rows

def test_letta_code_sync_with_a_second_writer(tmp_path):
    """pullMemory against a second writer: ``pull --ff-only`` fails, ``pull --rebase`` drops the
    agent's commit whose change already landed upstream (same patch-id) and re-applies the
    other, then the post-turn push."""
    server = seeded_server(tmp_path)
    agent = agent_clone(server, tmp_path)
    other = agent_clone(server, tmp_path, "agent-2")
    same = {"system/human.md": block("Maya likes tea")}
    commit(agent, "Update system/human block", same)
    commit(agent, "Update system/persona block", {"system/persona.md": block("terse")})
    commit(other, "Update system/human block", same)          # the same change, written twice
    commit(other, "Update system/project block", {"system/project.md": block("memlab")})
    git(other, "push", "-q", "origin", "main")
    assert fails(agent, "pull", "--ff-only")                  # diverged: not a fast-forward
    assert git(agent, "merge-base", "HEAD", "@{u}")           # they share history: rebase
    git(agent, "pull", "--rebase")
    git(agent, "push", "-q", "-u", "origin", "main")
    assert "pull --rebase" in git(agent, "reflog", "show", "main")
    # git dropped the agent's copy of the change (already upstream) and re-applied the other
    subjects = git(agent, "log", "--format=%s", "main").splitlines()
    assert subjects.count("Update system/human block") == 1 and len(subjects) == 7
    assert_clean(agent)
    git(other, "pull", "--ff-only")
    assert_clean(other)


def test_checkout_of_an_old_version_and_back(tmp_path):
    server = seeded_server(tmp_path, n=4)
    clone = agent_clone(server, tmp_path)
    git(clone, "checkout", "-q", "HEAD~3")
    git(clone, "checkout", "-q", "main")
    assert_clean(clone)


def test_the_stash_stack(tmp_path):
    """Two stashes that ``git stash list`` shows, and a third dropped: its commits are no
    finding either."""
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    for text in ("one", "two", "three"):
        (clone / "system" / "human.md").write_text(block(text))
        git(clone, "stash", "-q")
    git(clone, "stash", "drop", "-q")
    assert len(git(clone, "stash", "list").splitlines()) == 2
    assert_clean(clone)


def test_letta_code_recovery_reset_keeps_a_backup_ref(tmp_path):
    """recoverMemoryPullByResettingToRemote after the server re-created the history: the old head
    stays under refs/letta-backup/pre-sync-<ms>, so nothing is lost."""
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    commit(clone, "Update system/human block", {"system/human.md": block("unpushed")})
    _recreate(server, tmp_path)
    git(clone, "pull", "--ff-only", check=False)
    assert git(clone, "merge-base", "HEAD", "@{u}", check=False) == ""  # no merge base: recover
    assert git(clone, "status", "--porcelain") == ""
    git(clone, "fetch", "-q", "origin", "main")
    remote = git(clone, "rev-parse", "--verify", "refs/remotes/origin/main")
    local = git(clone, "rev-parse", "--verify", "HEAD")
    git(clone, "update-ref", "refs/letta-backup/pre-sync-1765000000000", local)
    git(clone, "reset", "-q", "--hard", "refs/remotes/origin/main")
    git(clone, "branch", "--set-upstream-to", "origin/main", "main")
    assert git(clone, "rev-parse", "HEAD") == remote
    assert_clean(clone)


def test_a_reflection_worktree_merged_back(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    base = git(clone, "rev-parse", "--verify", "HEAD")
    wt = clone.parent / "memory-worktrees" / "reflection-20261206"
    branch = "letta/reflection/20261206"
    git(clone, "worktree", "add", "-q", str(wt), "-b", branch, base)
    commit(wt, "reflection: note what the user prefers", {"system/prefs.md": block("tea")},
           env=LETTA_CODE)
    commit(clone, "Update system/human block", {"system/human.md": block("Maya, meanwhile")})
    git(clone, "worktree", "remove", "--force", str(wt))
    git(clone, "merge", "--no-edit", "-m", f"merge(memory): {branch}", branch, env=LETTA_CODE)
    git(clone, "branch", "-d", branch)
    assert_clean(clone)


def test_a_discarded_reflection_worktree(tmp_path):
    """finalizeReflectionMemoryWorktree with ``discard``: ``git worktree remove --force <dir>``
    then ``git branch -D <branch>``; its commits are let go of on purpose."""
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    wt = clone.parent / "memory-worktrees" / "reflection-20261207"
    branch = "letta/reflection/20261207"
    git(clone, "worktree", "add", "-q", str(wt), "-b", branch, git(clone, "rev-parse", "HEAD"))
    commit(wt, "reflection: a thought not kept", {"system/maybe.md": block("no")}, env=LETTA_CODE)
    git(clone, "worktree", "remove", "--force", str(wt))
    git(clone, "branch", "-q", "-D", branch)
    assert_clean(clone)


def test_a_memory_worker_branch_in_flight(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    wt = clone.parent / "memory-worktrees" / "memory-20261206"
    git(clone, "worktree", "add", "-q", str(wt), "-b", "letta/memory/20261206",
        git(clone, "rev-parse", "HEAD"))
    commit(wt, "memory: file what was learned", {"system/learned.md": block("a")}, env=LETTA_CODE)
    commit(wt, "memory: and more", {"system/learned.md": block("a\nb")}, env=LETTA_CODE)
    commit(clone, "Update system/human block", {"system/human.md": block("Maya, now")})
    assert_clean(clone)
    assert_clean(wt)


def test_gc_after_routine_work(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    git(clone, "checkout", "-q", "HEAD~2")
    git(clone, "checkout", "-q", "main")
    commit(clone, "Update system/human block", {"system/human.md": block("more")})
    git(clone, "push", "-q", "origin", "main")
    git(clone, "gc", "-q", "--prune=now")
    assert_clean(clone)


def test_a_shallow_clone(tmp_path):
    server = seeded_server(tmp_path, n=6)
    shallow = tmp_path / "shallow" / "memory"
    git(tmp_path, "-c", "protocol.file.allow=always", "clone", "-q", "--depth", "3",
        f"file://{server}", str(shallow))
    assert (shallow / ".git" / "shallow").is_file()
    assert_clean(shallow)


def _mirror_with_orphan_readme(tmp_path: Path) -> Path:
    """A GitHub mirror made with a README on ``main`` while the memory lives on ``master``: two
    unrelated branches, never merged."""
    src = tmp_path / "src"
    git(tmp_path, "init", "-q", "-b", "master", str(src))
    commit(src, "Initial commit", {"system/human.md": block("Maya")})
    commit(src, "Update system/human block", {"system/human.md": block("Maya, tea")})
    git(src, "checkout", "-q", "--orphan", "main")
    git(src, "rm", "-q", "-r", "--cached", ".")
    shutil.rmtree(src / "system")
    commit(src, "Initial commit", {"README.md": "# memory\n"})
    git(src, "checkout", "-q", "master")
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", str(src), str(mirror))
    return mirror


def test_an_orphan_readme_branch_on_a_mirror(tmp_path):
    mirror = _mirror_with_orphan_readme(tmp_path)
    clone = tmp_path / "clone" / "memory"
    git(tmp_path, "clone", "-q", "-b", "master", str(mirror), str(clone))
    git(clone, "branch", "-q", "main", "origin/main")
    assert_clean(clone)


def test_a_local_memory_attached_to_a_server_with_its_own_history(tmp_path):
    """A branch and a remote namesake that never shared a history (a local-only memory repo
    given a remote later) are no finding: only a history that was shared and replaced is."""
    server = seeded_server(tmp_path)
    local = tmp_path / ".letta" / "agents" / "agent-3" / "memory"
    local.parent.mkdir(parents=True)
    git(tmp_path, "init", "-q", "-b", "main", str(local))
    commit(local, "Initial commit", {"system/human.md": block("local only")})
    git(local, "remote", "add", "origin", str(server))
    git(local, "fetch", "-q", "origin")
    assert git(local, "merge-base", "main", "origin/main", check=False) == ""
    assert_clean(local)


def test_bare_mirror_loads_and_says_it_keeps_no_reflog(tmp_path):
    mirror = _mirror_with_orphan_readme(tmp_path)
    store = memlab.load(mirror)
    assert len(store.history) >= 2
    audit = memlab.audit(store)
    assert audit.tables["integrity"].empty
    assert audit.headline["integrity_findings"] is None
    assert "bare" in audit.headline["integrity_reason"]


def test_a_bare_clone_loads_as_its_checkout_does(tmp_path):
    """A server-side copy (``git clone --bare``) of the bundled v2 sample: the same files and
    history as a checkout of it, and integrity not judged (no reflog), never 0."""
    from memlab.sources._bundle import unpack_bundle

    bundle = (Path(__file__).resolve().parents[1] / "data" / "samples" / "memfs"
              / "letta-code-v2.bundle")
    bare = tmp_path / "memory.git"
    git(tmp_path, "clone", "-q", "--bare", str(bundle), str(bare))
    checkout = memlab.load(unpack_bundle(bundle, tmp_path / "unpacked"))
    store = memlab.load(bare)
    assert store.kind == checkout.kind == "letta_memfs"
    assert store.meta["layout"] == checkout.meta["layout"]
    assert sorted(store.files["path"]) == sorted(checkout.files["path"])
    assert set(store.history["sha"]) == set(checkout.history["sha"])
    audit = memlab.audit(store)
    assert audit.tables["integrity"].empty and audit.headline["integrity_findings"] is None
    # An unpacked bundle has no reflogs either: a bundle carries none, and the entries git
    # wrote while memlab unpacked it are not the repository's history (they are removed).
    unpacked = memlab.audit(checkout).headline
    assert unpacked["integrity_findings"] is None and "no reflog" in unpacked["integrity_reason"]


# --------------------------------------------------------------------------- true rewrites: 1 row

def one_row(path: Path) -> dict:
    found = rows(path)
    assert len(found) == 1, [(r["kind"], r["detail"]) for r in found]
    return found[0]


def test_server_force_push_then_the_clone_fetches_and_resets(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    old = git(clone, "rev-parse", "HEAD")
    _recreate(server, tmp_path)
    git(clone, "fetch", "-q", "origin")
    only = one_row(clone)  # before the clone follows: its main and origin/main parted
    assert only["kind"] == "unrelated_upstream" and "Backfill" in only["detail"]
    git(clone, "reset", "-q", "--hard", "origin/main")
    row = one_row(clone)
    assert (row["kind"], row["ref"], row["sha"]) == ("reset_away", "refs/heads/main", old)
    assert row["lost"] == 4 and row["reapplied"] == 0
    assert "unrelated history" in row["detail"] and "letta-ai/letta-code#2203" in row["detail"]
    assert f"git branch recovered-{old[:12]} {old}" in row["detail"]
    assert "reset: moving to origin/main" in row["evidence"]
    # the server's own copy (bare: no reflog) cannot say what happened, but still holds the
    # history it replaced until its next gc: listed, and the headline is None, not 0
    server_audit = memlab.audit(server)
    assert server_audit.headline["integrity_findings"] is None
    listed = server_audit.tables["integrity"]
    assert listed["kind"].astype(str).tolist() == ["unreachable_commits"]
    assert (listed["sha"].iloc[0], listed["lost"].iloc[0]) == (old, 4)


def test_a_reset_away_from_unpushed_work(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    commit(clone, "Update system/human block", {"system/human.md": block("unpushed 1")})
    tip = commit(clone, "Update system/persona block", {"system/persona.md": block("unpushed 2")})
    git(clone, "reset", "-q", "--hard", "origin/main")
    row = one_row(clone)
    assert (row["kind"], row["sha"], row["lost"], row["reapplied"]) == ("reset_away", tip, 2, 0)
    assert "2 file(s)" in row["detail"]


def test_an_amend_is_one_row(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    old = commit(clone, "Update system/human block", {"system/human.md": block("B")})
    (clone / "system" / "human.md").write_text(block("C"))
    git(clone, "commit", "-q", "-a", "--amend", "-m", "Update system/human block")
    row = one_row(clone)
    assert (row["kind"], row["sha"], row["lost"]) == ("amended", old, 1)


def test_an_amend_then_a_forced_push_is_one_row_naming_both(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    old = commit(clone, "Update system/human block", {"system/human.md": block("B")})
    git(clone, "push", "-q", "origin", "main")
    (clone / "system" / "human.md").write_text(block("C"))
    git(clone, "commit", "-q", "-a", "--amend", "-m", "Update system/human block")
    git(clone, "push", "-q", "--force", "origin", "main")
    row = one_row(clone)  # the push let go of it last: the server no longer has it either
    assert (row["ref"], row["sha"], row["lost"]) == ("refs/remotes/origin/main", old, 1)
    assert "commit (amend)" in row["detail"] and "update by push" in row["evidence"]


def test_a_message_only_amend_loses_nothing(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    commit(clone, "Update system/human block", {"system/human.md": block("B")})
    git(clone, "commit", "-q", "--amend", "-m", "Update system/human block (typo)")
    assert_clean(clone)


def test_a_rebase_that_drops_a_commit(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    commit(clone, "Update system/a block", {"system/a.md": block("a")})
    dropped = commit(clone, "Update system/b block", {"system/b.md": block("b")})
    commit(clone, "Update system/c block", {"system/c.md": block("c")})
    git(clone, "rebase", "-q", "--onto", "HEAD~2", "HEAD~1", "main")  # drops b, replays c
    row = one_row(clone)
    assert (row["kind"], row["lost"], row["reapplied"]) == ("rebased", 1, 1)
    assert "1 re-applied" in row["detail"]
    assert dropped not in git(clone, "log", "--format=%H", "main")


# --------------------------------------------------------------------------- evidence gone

def test_expired_reflogs_are_no_evidence_not_zero(tmp_path):
    server = seeded_server(tmp_path)
    clone = agent_clone(server, tmp_path)
    old = commit(clone, "Update system/human block", {"system/human.md": block("B")})
    (clone / "system" / "human.md").write_text(block("C"))
    git(clone, "commit", "-q", "-a", "--amend", "-m", "Update system/human block")
    git(clone, "reflog", "expire", "--expire=now", "--all")
    audit = memlab.audit(clone)
    assert audit.headline["integrity_findings"] is None
    assert "expired" in audit.headline["integrity_reason"]
    found = audit.tables["integrity"]
    assert found["kind"].astype(str).tolist() == ["unreachable_commits"]
    assert found["sha"].iloc[0] == old and found["lost"].iloc[0] == 1
    # what git itself says, read-only
    fsck = git(clone, "fsck", "--unreachable", "--no-reflogs", "--no-progress")
    assert f"unreachable commit {old}" in fsck
    assert "integrity: not checked" in audit.summary()


@pytest.mark.parametrize("n", [1])
def test_a_clean_clone_is_checked_and_zero(tmp_path, n):
    server = seeded_server(tmp_path, n=n)
    assert_clean(agent_clone(server, tmp_path))
