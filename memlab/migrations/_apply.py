"""Apply a :class:`~memlab.migrations._plan.Plan`: objects written by memlab, git run only
through :mod:`memlab._git` (so an existing repository's config can name no program that runs).

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

Objects and commits are written by :mod:`memlab._gitobj` (the one writer, also embedded in the
plan script), and each commit id is checked against the one the plan predicted.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from memlab import _git
from memlab._gitobj import blob_sha, commit_files
from memlab._tmp import sigterm_as_exit
from memlab.errors import MigrationError, OutputExists
from memlab.migrations._plan import Plan, PlannedRepo

__all__ = [
    "BASE_REF",
    "TMP_MARKER",
    "Applied",
    "is_git_repo",
    "branch_sha",
    "tmp_sibling",
    "sweep_stale_siblings",
    "apply_new",
    "branch_base",
    "check_branch",
    "apply_branch",
]

_ZERO = "0" * 40
#: Where the source's history is fetched to while a repository is built on top of it.
BASE_REF = "refs/memlab/base"
TMP_MARKER = ".memlab-tmp-"


@dataclass(frozen=True)
class Applied:
    #: "created", "replaced", "unchanged" or "branch".
    mode: str
    #: per repo subdir: [(tree sha, commit sha)] for each planned commit.
    heads: dict[str, list[tuple[str, str]]]


def is_git_repo(path: Path) -> bool:
    return (path / ".git").exists()


def branch_sha(path: Path, branch: str) -> str | None:
    """The commit ``refs/heads/<branch>`` points to in the repository at ``path``, or None."""
    if _git.git_dir(path) is None:
        return None
    return _git.rev_parse(path, f"refs/heads/{branch}")


def _store(gdir: Path, kind: str, body: bytes) -> str:
    """Write one object (from Python: no git process, nothing the repo names can run)."""
    return _git.write_object(gdir, kind, body)


def _write_commits(
    root: Path,
    planned: PlannedRepo,
    plan: Plan,
    parent: str | None,
    flat: dict[str, tuple[str, str]],
    expected: list[tuple[str, str]],
) -> str | None:
    gdir = _git.git_dir(root)
    if gdir is None:  # pragma: no cover - checked by the callers
        raise MigrationError("not a git repository", path=root)

    def store(kind: str, body: bytes) -> str:
        return _store(gdir, kind, body)

    for commit, (want_tree, want_sha) in zip(planned.commits, expected):
        files = [*((path, None) for path in commit.removed), *commit.files]
        tree, sha = commit_files(
            store, flat, files, parent, commit.author or plan.signature, commit.message
        )
        if (tree, sha) != (want_tree, want_sha):  # pragma: no cover - would be a framing bug
            raise MigrationError(
                f"commit {commit.message.splitlines()[0]!r} came out as {sha}, planned {want_sha}",
                path=root,
                hint="report this as a memlab bug",
            )
        parent = sha
    return parent


def _build_new_repo(
    path: Path, planned: PlannedRepo, plan: Plan, branch: str, expected: list[tuple[str, str]]
) -> None:
    path.mkdir(parents=True, exist_ok=True)
    _git.run(path, "init", "-q", f"--initial-branch={branch}", ".")
    parent, flat = None, {}
    if planned.base is not None:
        parent, flat = _fetch_base(path, planned), dict(planned.base_flat or {})
    head = _write_commits(path, planned, plan, parent, flat, expected)
    if head is None:
        return
    _git.run(path, "update-ref", f"refs/heads/{branch}", head, _ZERO)
    # A repository memlab just made: its config names no filter driver and no system or global
    # config is read (memlab._git), so this checkout runs no program.
    _git.run(path, "reset", "-q", "--hard")


def _fetch_base(path: Path, planned: PlannedRepo) -> str:
    """Copy the history the plan builds on (the source repository's HEAD and its ancestors)
    into the new repository at ``path``; MigrationError if the source moved since planning."""
    assert planned.base_repo is not None and planned.base is not None
    _git.check_repo(planned.base_repo)  # refused if its config includes files or its .git is odd
    # A local path is git's "file" transport, which memlab._git otherwise turns off
    # (protocol.allow=never); only for this one fetch from the folder the plan names.
    _git.run(
        path,
        "fetch",
        "-q",
        "--no-tags",
        "--no-write-fetch-head",
        str(planned.base_repo),
        f"+HEAD:{BASE_REF}",
        config=["protocol.file.allow=always"],
    )
    got = _git.rev_parse(path, BASE_REF)
    _git.run(path, "update-ref", "-d", BASE_REF)
    if got != planned.base:
        raise MigrationError(
            f"the source's HEAD is {got}, not {planned.base} as planned",
            path=planned.base_repo,
            hint="run the migration again",
        )
    return planned.base


def tmp_sibling(dest: Path) -> Path:
    """A hidden sibling of ``dest`` named for this process (so a later run can tell whether the
    process that made it is gone)."""
    return dest.parent / f".{_short(dest.name)}{TMP_MARKER}p{os.getpid()}-{uuid.uuid4().hex[:12]}"


def _short(name: str) -> str:
    """``name`` cut so the temp sibling's name stays within the 255-byte file name limit."""
    raw = name.encode("utf-8")
    return name if len(raw) <= 180 else raw[:180].decode("utf-8", "ignore")


_STALE_SIBLING = re.compile(re.escape(TMP_MARKER) + r"p(\d+)-[0-9a-f]{12}$")


def sweep_stale_siblings(dest: Path) -> None:
    """Remove temp siblings of ``dest`` left by killed runs (their process is gone)."""
    from memlab._tmp import pid_alive

    try:
        names = os.listdir(dest.parent)
    except OSError:
        return
    prefix = f".{_short(dest.name)}{TMP_MARKER}"
    for name in names:
        m = _STALE_SIBLING.search(name)
        if not name.startswith(prefix) or not m or pid_alive(int(m.group(1))):
            continue
        _remove(dest.parent / name)


def _remove(path: Path) -> None:
    """Remove a folder, or a symlink itself (never what it points to)."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _matches(
    dest: Path, plan: Plan, branch: str, expected: dict[str, list[tuple[str, str]]]
) -> bool:
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
    sweep_stale_siblings(dest)
    with sigterm_as_exit():  # SIGTERM unwinds through the cleanup below
        return _apply_new(plan, dest, branch=branch, existed=existed, expected=expected)


def _apply_new(
    plan: Plan,
    dest: Path,
    *,
    branch: str,
    existed: bool,
    expected: dict[str, list[tuple[str, str]]],
) -> Applied:
    tmp = tmp_sibling(dest)
    old: Path | None = None
    try:
        tmp.mkdir()
        for planned in plan.repos:
            _build_new_repo(
                tmp / planned.subdir if planned.subdir else tmp,
                planned,
                plan,
                branch,
                expected[planned.subdir],
            )
        if existed or dest.exists() or dest.is_symlink():
            # Two renames, never a copy: at every instant the destination is the old tree, absent,
            # or the new tree.
            old = tmp_sibling(dest)
            os.rename(dest, old)
        os.rename(tmp, dest)
    except BaseException:
        _remove(tmp)
        if (
            old is not None
            and (old.exists() or old.is_symlink())
            and not (dest.exists() or dest.is_symlink())
        ):
            os.rename(old, dest)
        raise
    if old is not None:
        _remove(old)  # the replaced destination; a symlink is removed, not followed
    return Applied("replaced" if existed else "created", expected)


def branch_base(dest: Path) -> tuple[str | None, dict[str, tuple[str, str]]]:
    """HEAD's commit and its flattened tree ``{path: (mode, sha)}`` (None, {} when unborn)."""
    head = _git.rev_parse(dest, "HEAD")
    if head is None:  # unborn HEAD: nothing committed yet
        return None, {}
    return head, _git.flat_tree(dest, head)


def check_branch(
    plan: Plan, dest: Path, branch: str, *, force: bool
) -> tuple[str, str | None, dict[str, tuple[str, str]], str | None]:
    """Decide a branch-mode apply: ("unchanged"|"create", parent, base tree, current branch sha)."""
    if len(plan.repos) != 1 or plan.repos[0].subdir:
        raise MigrationError(
            "this migration makes several repositories; it cannot go on one branch",
            path=dest,
            hint="migrate into a new folder instead (omit branch=)",
        )
    gdir = _git.git_dir(dest)
    if gdir is not None and _git.object_format(gdir) != "sha1":
        raise MigrationError(
            "the repository uses SHA-256 object ids; a migration's planned commits are SHA-1",
            path=dest,
            hint="migrate into a new folder instead (omit branch=)",
        )
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
            raise OutputExists(
                f"branch {branch!r} already exists",
                path=dest,
                hint="choose another branch name, or pass force=True to move it",
            )
        checked_out = _checked_out_branch(dest)
        if checked_out == branch:
            raise MigrationError(
                f"branch {branch!r} is checked out; moving it would change the "
                "working tree under you",
                path=dest,
                hint="check out another branch first, or use another branch name",
            )
    clashes = [
        path
        for commit in plan.repos[0].commits
        for path, data in commit.files
        if path in flat and flat[path][1] != blob_sha(data)
    ]
    if clashes and not force:
        shown = ", ".join(sorted(set(clashes))[:5])
        raise OutputExists(
            f"{len(set(clashes))} file(s) already exist with other content on HEAD ({shown})",
            path=dest,
            hint="pass force=True to replace them on the new branch",
        )
    return "create", parent, flat, current


def _checked_out_branch(dest: Path) -> str | None:
    return _git.symbolic_branch(dest)


def _branch_fork_point(
    dest: Path, branch: str, sha: str, n: int
) -> tuple[str | None, dict[str, tuple[str, str]]] | None:
    """The commit ``n`` commits below the branch tip and its tree (where a run would have
    forked)."""
    out = _git.run(
        dest,
        "rev-list",
        "--first-parent",
        f"--max-count={n + 1}",
        sha,
        "--",
        check=False,
        ceiling=False,
    )
    chain = out.decode().split()
    if len(chain) == n:
        return None, {}  # the branch starts at its root: the run forked from an unborn HEAD
    if len(chain) < n + 1:
        return None
    return chain[n], _git.flat_tree(dest, chain[n])


def apply_branch(plan: Plan, dest: Path, *, branch: str, force: bool) -> Applied:
    """Commit the plan onto a new branch of the existing repository at ``dest``."""
    decision, parent, flat, current = check_branch(plan, dest, branch, force=force)
    expected = plan.expected_heads({"": (parent, flat)})
    if decision == "unchanged":
        return Applied("unchanged", expected)
    head = _write_commits(dest, plan.repos[0], plan, parent, dict(flat), expected[""])
    if head is not None:
        # Compare-and-swap: fails instead of clobbering a branch someone made meanwhile.
        if not _git.update_ref(
            dest, f"refs/heads/{branch}", head, current or _ZERO, message="memlab migrate"
        ):
            raise OutputExists(
                f"branch {branch!r} moved while migrating; nothing was changed", path=dest
            )
    return Applied("branch", expected)
