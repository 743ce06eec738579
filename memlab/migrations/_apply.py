"""Apply a :class:`~memlab.migrations._plan.Plan` with GitPython.

Two modes:

* **new repository** (the default): every repository is built in a temporary sibling folder of
  the destination and renamed into place only once it is complete, so an interrupted run leaves
  either no destination or a whole one. An existing destination is refused unless it already
  holds exactly this migration (then nothing is done) or ``force`` is given (then it is replaced,
  again by rename).
* **new branch** (``branch=`` naming a branch that does not exist yet, in an existing repository):
  objects go into that repository's object database and the branch ref is created last with a
  compare-and-swap, so a crash leaves only unreferenced objects and the working tree is never
  touched.

Objects are written with the framing in :mod:`memlab.migrations._gitobj`, and each commit id is
checked against the one the plan predicted.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from memlab.errors import MigrationError, OutputExists
from memlab.migrations._gitobj import BLOB_MODE, blob_sha, build_trees, commit_body
from memlab.migrations._plan import Plan, PlannedRepo

_ZERO = "0" * 40
TMP_MARKER = ".memlab-tmp-"


@dataclass(frozen=True)
class Applied:
    #: "created", "replaced", "unchanged" or "branch".
    mode: str
    #: per repo subdir: [(tree sha, commit sha)] for each planned commit.
    heads: dict[str, list[tuple[str, str]]]


def _git():
    import git  # GitPython: imported here so planning alone never needs it

    return git


def is_git_repo(path: Path) -> bool:
    return (path / ".git").exists()


def branch_sha(path: Path, branch: str) -> str | None:
    """The commit ``refs/heads/<branch>`` points to in the repository at ``path``, or None."""
    git = _git()
    try:
        repo = git.Repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    try:
        return repo.git.rev_parse("--verify", "-q", f"refs/heads/{branch}^{{commit}}")
    except git.GitCommandError:
        return None
    finally:
        repo.close()


def _store(repo, kind: str, body: bytes) -> str:
    from gitdb.base import IStream

    sha = repo.odb.store(IStream(kind, len(body), BytesIO(body))).hexsha
    return sha.decode("ascii") if isinstance(sha, bytes) else sha


def _write_commits(repo, planned: PlannedRepo, plan: Plan, parent: str | None,
                   flat: dict[str, tuple[str, str]], expected: list[tuple[str, str]]) -> str | None:
    for commit, (want_tree, want_sha) in zip(planned.commits, expected):
        for path, data in commit.files:
            flat[path] = (BLOB_MODE, _store(repo, "blob", data))
        tree = build_trees(flat, store=lambda kind, body: _store(repo, kind, body))
        body = commit_body(tree, [parent] if parent else [], commit.author or plan.signature,
                           commit.message)
        sha = _store(repo, "commit", body)
        if (tree, sha) != (want_tree, want_sha):  # pragma: no cover - would be a framing bug
            raise MigrationError(
                f"commit {commit.message.splitlines()[0]!r} came out as {sha}, planned {want_sha}",
                path=repo.working_tree_dir, hint="report this as a memlab bug")
        parent = sha
    return parent


def _build_new_repo(path: Path, planned: PlannedRepo, plan: Plan, branch: str,
                    expected: list[tuple[str, str]]) -> None:
    git = _git()
    repo = git.Repo.init(path, mkdir=True, initial_branch=branch)
    try:
        head = _write_commits(repo, planned, plan, None, {}, expected)
        if head is None:
            return
        repo.git.update_ref(f"refs/heads/{branch}", head, _ZERO)
        repo.head.reset(index=True, working_tree=True)
    finally:
        repo.close()


def tmp_sibling(dest: Path) -> Path:
    return dest.parent / f".{dest.name}{TMP_MARKER}{uuid.uuid4().hex[:12]}"


def _matches(dest: Path, plan: Plan, branch: str, expected: dict[str, list[tuple[str, str]]]) -> bool:
    for planned in plan.repos:
        chain = expected[planned.subdir]
        if not chain:
            continue
        if branch_sha(dest / planned.subdir, branch) != chain[-1][1]:
            return False
    return True


def _is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and not any(path.iterdir())


def apply_new(plan: Plan, dest: Path, *, branch: str, force: bool) -> Applied:
    """Build every planned repository beside ``dest`` and rename the result into place."""
    expected = plan.expected_heads()
    # An empty destination folder counts as absent: nothing in it can be overwritten.
    existed = (dest.exists() or dest.is_symlink()) and not _is_empty_dir(dest)
    if existed:
        if dest.is_dir() and _matches(dest, plan, branch, expected):
            return Applied("unchanged", expected)
        if not force:
            raise OutputExists("the destination already exists and holds something else", path=dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_sibling(dest)
    old: Path | None = None
    try:
        tmp.mkdir()
        for planned in plan.repos:
            _build_new_repo(tmp / planned.subdir if planned.subdir else tmp, planned, plan, branch,
                            expected[planned.subdir])
        if existed or dest.exists():
            # Two renames, never a copy: at every instant the destination is the old tree, absent,
            # or the new tree.
            old = tmp_sibling(dest)
            os.rename(dest, old)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and old.exists() and not dest.exists():
            os.rename(old, dest)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return Applied("replaced" if existed else "created", expected)


def _flat_tree(commit) -> dict[str, tuple[str, str]]:
    """A commit's tree flattened to ``{path: (mode, blob sha)}``."""
    return {item.path: (f"{item.mode:o}", item.hexsha)
            for item in commit.tree.traverse() if item.type != "tree"}


def branch_base(dest: Path) -> tuple[str | None, dict[str, tuple[str, str]]]:
    """HEAD's commit and its flattened tree ``{path: (mode, sha)}`` (None, {} when unborn)."""
    git = _git()
    repo = git.Repo(dest)
    try:
        try:
            commit = repo.head.commit
        except ValueError:  # unborn HEAD: nothing committed yet
            return None, {}
        return commit.hexsha, _flat_tree(commit)
    finally:
        repo.close()


def check_branch(plan: Plan, dest: Path, branch: str, *, force: bool
                 ) -> tuple[str, str | None, dict[str, tuple[str, str]], str | None]:
    """Decide a branch-mode apply: ("unchanged"|"create", parent, base tree, current branch sha)."""
    if len(plan.repos) != 1 or plan.repos[0].subdir:
        raise MigrationError("this migration makes several repositories; it cannot go on one branch",
                             path=dest, hint="migrate into a new folder instead (omit branch=)")
    parent, flat = branch_base(dest)
    current = branch_sha(dest, branch)
    if current is not None:
        # The branch may have been made by an earlier identical run, from the commit it forked.
        forked = _branch_fork_point(dest, branch, current, len(plan.repos[0].commits))
        if forked is not None:
            base_parent, base_flat = forked
            expected = plan.expected_heads({"": (base_parent, base_flat)})
            if expected[""] and expected[""][-1][1] == current:
                return "unchanged", base_parent, base_flat, current
        if not force:
            raise OutputExists(f"branch {branch!r} already exists", path=dest,
                               hint="choose another branch name, or pass force=True to move it")
        checked_out = _checked_out_branch(dest)
        if checked_out == branch:
            raise MigrationError(f"branch {branch!r} is checked out; moving it would change the "
                                 "working tree under you", path=dest,
                                 hint="check out another branch first, or use another branch name")
    clashes = [path for commit in plan.repos[0].commits for path, data in commit.files
               if path in flat and flat[path][1] != blob_sha(data)]
    if clashes and not force:
        shown = ", ".join(sorted(set(clashes))[:5])
        raise OutputExists(f"{len(set(clashes))} file(s) already exist with other content on HEAD "
                           f"({shown})", path=dest, hint="pass force=True to replace them on the new branch")
    return "create", parent, flat, current


def _checked_out_branch(dest: Path) -> str | None:
    git = _git()
    repo = git.Repo(dest)
    try:
        return None if repo.head.is_detached else repo.head.reference.name
    except TypeError:
        return None
    finally:
        repo.close()


def _branch_fork_point(dest: Path, branch: str, sha: str, n: int
                       ) -> tuple[str | None, dict[str, tuple[str, str]]] | None:
    """The commit ``n`` commits below the branch tip and its tree (where a run would have forked)."""
    git = _git()
    repo = git.Repo(dest)
    try:
        commit = repo.commit(sha)
        for i in range(n):
            if not commit.parents:
                return (None, {}) if i == n - 1 else None
            commit = commit.parents[0]
        return commit.hexsha, _flat_tree(commit)
    finally:
        repo.close()


def apply_branch(plan: Plan, dest: Path, *, branch: str, force: bool) -> Applied:
    """Commit the plan onto a new branch of the existing repository at ``dest``."""
    decision, parent, flat, current = check_branch(plan, dest, branch, force=force)
    expected = plan.expected_heads({"": (parent, flat)})
    if decision == "unchanged":
        return Applied("unchanged", expected)
    git = _git()
    repo = git.Repo(dest)
    try:
        head = _write_commits(repo, plan.repos[0], plan, parent, dict(flat), expected[""])
        if head is not None:
            # Compare-and-swap: fails instead of clobbering a branch someone made meanwhile.
            repo.git.update_ref(f"refs/heads/{branch}", head, current or _ZERO)
    finally:
        repo.close()
    return Applied("branch", expected)
