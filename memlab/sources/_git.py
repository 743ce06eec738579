"""Read-only git plumbing for the memfs loaders.

Every call goes through :mod:`memlab._git` (minimal environment, no system or global config,
every program-naming key overridden, include-using or FIFO-holding repositories refused), and
only commands that never write: ``rev-parse``, ``ls-tree``,
``cat-file``, ``log``, ``check-ignore --no-index``. Never ``git status`` (it may refresh the
index); the working tree is compared with a commit by hashing files in Python, exactly as
``git hash-object`` without ``-w`` would, so nothing is stored.

History is one ``git log --raw --numstat -z`` pass over every branch, parsed here; asking
GitPython for ``Commit.stats`` commit by commit is about 30 times slower.

Rooms: running git, what a repository is, its trees and blobs are
:mod:`memlab.sources._git_repo`; the working tree (names on disk, blob ids, drift from a
commit) is :mod:`memlab.sources._git_worktree`; history (:func:`log_history`,
:func:`log_changes`) is here, and every name in ``__all__`` is importable from here; which
branch each commit was made on (by first-parent containment, not ``--source``, which is kept
only as the fallback for a commit no ref reaches) is :mod:`memlab.sources._git_branches`.
"""

from __future__ import annotations

import gc
import itertools
import re
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from memlab import _git as _hardened
from memlab._times import out_of_range, seconds, utc_seconds
from memlab.constants import MAX_FILE_BYTES
from memlab.formats.letta_memfs import branch_role
from memlab.sources._git_branches import attribute
from memlab.sources._git_repo import (
    READ_CONFIG,
    RepoInfo,
    TreeEntry,
    blob_sizes,
    find_repo,
    ls_tree,
    read_blobs,
    resolve_commit,
    run_git,
)
from memlab.sources._git_worktree import git_blob_id, shown_path, working_tree_changes
from memlab.store import categories

__all__ = [
    "CHANGES_COLUMNS",
    "RepoInfo",
    "TreeEntry",
    "HISTORY_DTYPES",
    "find_repo",
    "resolve_commit",
    "ls_tree",
    "read_blobs",
    "blob_sizes",
    "log_history",
    "log_changes",
    "working_tree_changes",
    "git_blob_id",
    "shown_path",
    "run_git",
    "READ_CONFIG",
]

_RECORD_START = re.compile(rb"^(?:[0-9a-f]{64}|[0-9a-f]{40})\x1f")

HISTORY_DTYPES = {
    "sha": "string",
    "parents": "object",
    "author_name": "string",
    "author_email": "string",
    "author_kind": "category",
    "authored_at": "datetime64[ns, UTC]",
    "committed_at": "datetime64[ns, UTC]",
    "message": "string",
    "branch": "string",
    "path": "string",
    "change_type": "category",
    "lines_added": "Int64",
    "lines_deleted": "Int64",
    "no_verify_suspect": "boolean",
    "branch_role": "category",
}


# --------------------------------------------------------------------------- history

_FORMAT = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%at%x1f%ct%x1f%S%x1f%B%x1f"
_LOG_FLAGS = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-notes",
    "-M",
    "--no-abbrev",
    "-z",
    "--source",
    f"--format={_FORMAT}",
)
_REVS = ("--branches", "--remotes", "--tags", "HEAD")
_ZERO = re.compile(r"^0+$")


def _short_ref(source: str) -> str:
    for prefix in ("refs/heads/", "refs/remotes/", "refs/"):
        if source.startswith(prefix):
            return source[len(prefix) :]
    return source


def _records(chunks: Iterable[bytes]):
    """Commit records of a ``_FORMAT`` log as its output arrives, re-joining any message that
    contained \\x1e (a record ends only where the next one visibly starts)."""
    pending: bytes | None = None
    tail = b""
    for chunk in itertools.chain(chunks, [None]):
        if chunk is None:  # end of output: what is left holds whole records
            parts, tail = (tail.split(b"\x1e") if tail else []), b""
        else:
            parts = (tail + chunk).split(b"\x1e")
            tail = parts.pop()
        for part in parts:
            if _RECORD_START.match(part):
                if pending is not None:
                    yield pending
                pending = part
            elif pending is not None:
                pending += b"\x1e" + part
    if pending is not None:
        yield pending


def _stream_git(repo: Path, *args: str):
    """Yield a git command's stdout as it is produced, so parsing overlaps git's own work."""
    return _hardened.stream(repo, *args, config=READ_CONFIG)


_RAW_ENTRY = re.compile(
    rb"\n?:[0-7]+ ([0-7]+) ([0-9a-f]+) ([0-9a-f]+) "
    rb"(?:([RC])[0-9]*\0([^\0]*)\0([^\0]*)|([A-Z])[0-9]*\0([^\0]*))\0"
)
_NUMSTAT_ENTRY = re.compile(rb"(-|[0-9]+)\t(-|[0-9]+)\t(?:\0([^\0]*)\0([^\0]*)|([^\0]*))\0")


def _parse_diff(diff: bytes) -> list[tuple]:
    """(status, old_path, path, old_sha, new_sha, added, deleted, new_mode) per file of one
    commit (``new_mode`` as git prints it: ``100644``, ``120000``; ``000000`` when deleted).

    ``--raw`` entries come first, then ``--numstat`` ones for the same files in the same order;
    both are matched by compiled patterns, the cost that decides history speed.
    """
    raw = []
    pos = 0
    match = _RAW_ENTRY.match
    m = match(diff, pos)
    while m is not None:
        raw.append(m.groups())
        pos = m.end()
        m = match(diff, pos)
    stats = _NUMSTAT_ENTRY.findall(diff, pos)
    paired = len(stats) == len(raw)
    by_path = {} if paired else {(s[4] or s[3]): s for s in stats}
    out = []
    for i, (new_mode, old_sha, new_sha, rc, src, dst, letter, path) in enumerate(raw):
        st = stats[i] if paired else by_path.get(dst if rc else path)
        if st is None:
            added = deleted = None
        else:
            added = None if st[0] == b"-" else int(st[0])
            deleted = None if st[1] == b"-" else int(st[1])
        if rc:
            out.append(
                (
                    rc.decode(),
                    src.decode("utf-8", "replace"),
                    dst.decode("utf-8", "replace"),
                    old_sha.decode(),
                    new_sha.decode(),
                    added,
                    deleted,
                    new_mode.decode(),
                )
            )
        else:
            out.append(
                (
                    letter.decode(),
                    None,
                    path.decode("utf-8", "replace"),
                    old_sha.decode(),
                    new_sha.decode(),
                    added,
                    deleted,
                    new_mode.decode(),
                )
            )
    return out


def _run_log(repo: Path, extra: Sequence[str]):
    return _stream_git(repo, "log", *_LOG_FLAGS, *extra, *_REVS, "--")


def _commits(out: Iterable[bytes]):
    """``(sha, parents, author name, author email, authored s, committed s, branch, message,
    diff)`` per commit of a ``_FORMAT`` log; names and message still bytes, the rest decoded."""
    for rec in _records(out):
        header, _, diff = rec.partition(b"\x1f\x00")
        parts = header.split(b"\x1f", 7)
        if len(parts) < 8:
            continue
        sha, parents, an, ae, at, ct, source, message = parts
        yield (
            sha.decode(),
            parents.decode().split(),
            an,
            ae,
            seconds(at or b"0"),
            seconds(ct or b"0"),
            _short_ref(source.decode("utf-8", "replace")),
            message,
            diff,
        )


def log_history(
    repo: Path, *, classify=None
) -> tuple[pd.DataFrame, list[tuple[str | None, str, str]]]:
    """One row per commit × changed file over every branch, remote and tag, from a single
    ``git log --raw --numstat -z`` pass. Merges (whose changes arrived with their second
    parent's commits) and empty commits get one row with ``path`` NA.

    ``classify(name, email, message, branch)`` fills ``author_kind``. Returns the frame and
    ``(file, kind, message)`` problems (non-UTF-8 paths; binary files and files over
    :data:`~memlab.constants.MAX_FILE_BYTES`, which git does not diff, one row per path).
    """
    out = _run_log(repo, ("--raw", "--numstat"))
    cols: dict[str, list] = {k: [] for k in HISTORY_DTYPES}
    problems: list[tuple[str | None, str, str]] = []
    binary: dict[str, list[tuple[str, str, str]]] = {}  # path -> (commit, old blob, new blob)
    kinds: list[tuple[str, str, str]] = []  # (name, email, message) per commit, in log order
    rows_per_commit: list[int] = []
    commits: dict[str, tuple[list[str], str, str]] = {}  # sha -> (parents, branch, message)
    # A large history takes a while: count commits as they stream in (shown after 2 s only).
    # The loop makes only acyclic lists and tuples: the cyclic collector, left on, rescans
    # them as they pile up (~10% of the parse at 100k commits); it is back on right after.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _read_commits(out, cols, problems, binary, kinds, rows_per_commit, commits)
    finally:
        if collecting:
            gc.enable()
    total = len(cols["sha"])
    cols["author_kind"] = [None] * total
    cols["no_verify_suspect"] = [None] * total
    cols["branch_role"] = [None] * total
    sizes = (
        blob_sizes(
            repo,
            [
                b
                for seen in binary.values()
                for _c, *blobs in seen
                for b in blobs
                if b and not _ZERO.match(b)
            ],
        )
        if binary
        else {}
    )
    for path, seen in binary.items():
        big = [
            (c, max(sizes.get(o, 0), sizes.get(n, 0)))
            for c, o, n in seen
            if max(sizes.get(o, 0), sizes.get(n, 0)) > MAX_FILE_BYTES
        ]
        if big:
            problems.append(
                (
                    path,
                    "oversized",
                    f"not read: over {MAX_FILE_BYTES:,} bytes in "
                    f"{len(big)} commit(s) (first {big[-1][0][:12]}, "
                    f"{big[-1][1]:,} bytes); not diffed or read, lines added/deleted "
                    "are NA there",
                )
            )
        if len(big) < len(seen):
            rest = [
                c for c, o, n in seen if max(sizes.get(o, 0), sizes.get(n, 0)) <= MAX_FILE_BYTES
            ]
            problems.append(
                (
                    path,
                    "binary_file",
                    f"binary in {len(rest)} commit(s) (first "
                    f"{rest[-1][:12]}); lines added/deleted are NA there",
                )
            )
    # Who worked where, by containment (first-parent lines, the main line first), not by
    # the ref --source met first; the author kinds follow from the branch.
    owner = attribute(repo, {sha: (p, m) for sha, (p, _b, m) in commits.items()})
    by_sha = {sha: owner.get(sha) or (b, branch_role(b)) for sha, (_p, b, _m) in commits.items()}
    cols["branch"] = [by_sha[s][0] for s in cols["sha"]]
    cols["branch_role"] = [by_sha[s][1] for s in cols["sha"]]
    if classify is not None:
        # Once per commit, not per file row, with the branch attributed above; a line of
        # role "other" is no harness branch, whatever its label mentions ("(merged into
        # letta/memory-worker/x)").
        branches = iter(
            None if cols["branch_role"][i] == "other" else cols["branch"][i]
            for i in _first_rows(rows_per_commit)
        )
        per_commit = [classify(n, e, m, next(branches)) for n, e, m in kinds]
        cols["author_kind"] = [k for k, n in zip(per_commit, rows_per_commit) for _ in range(n)]
    frame = _history_frame(cols, problems)
    return frame, problems


def _read_commits(out, cols, problems, binary, kinds, rows_per_commit, commits) -> None:
    """The streaming part of :func:`log_history`: one pass over git's output into ``cols``."""
    c_sha, c_par, c_an, c_ae = (
        cols["sha"],
        cols["parents"],
        cols["author_name"],
        cols["author_email"],
    )
    c_at, c_ct, c_msg, c_br = (
        cols["authored_at"],
        cols["committed_at"],
        cols["message"],
        cols["branch"],
    )
    c_path, c_ct_type = cols["path"], cols["change_type"]
    c_add, c_del = cols["lines_added"], cols["lines_deleted"]
    from memlab.progress import bar

    for sha_s, parent_list, an, ae, at, ct, branch, message, diff in bar(
        _commits(out), desc="reading git history", unit=" commits", delay=2.0
    ):
        msg = message.decode("utf-8", "replace").rstrip("\n")
        name, email = an.decode("utf-8", "replace"), ae.decode("utf-8", "replace")
        commits[sha_s] = (parent_list, branch, msg)
        kinds.append((name, email, msg))
        rows = _parse_diff(diff) if len(diff) > 2 else []
        if not rows:
            rows = [(None, None, None, None, None, None, None, None)]
        n = len(rows)
        rows_per_commit.append(n)
        c_sha.extend([sha_s] * n)
        c_par.extend([parent_list] * n)
        c_an.extend([name] * n)
        c_ae.extend([email] * n)
        c_at.extend([at] * n)
        c_ct.extend([ct] * n)
        c_msg.extend([msg] * n)
        c_br.extend([branch] * n)
        for letter, _old, path, old_blob, new_blob, added, deleted, _mode in rows:
            if path is not None and "\ufffd" in path:
                problems.append(
                    (
                        path,
                        "non_utf8_path",
                        f"commit {sha_s[:12]} touches a path that "
                        "is not UTF-8; shown with replacement characters",
                    )
                )
            if letter is not None and added is None:
                binary.setdefault(path, []).append((sha_s, old_blob, new_blob))
            c_path.append(path)
            c_ct_type.append("M" if letter == "T" else letter)
            c_add.append(added)
            c_del.append(deleted)


def _first_rows(rows_per_commit: list[int]):
    start = 0
    for n in rows_per_commit:
        yield start
        start += n


def _history_frame(
    cols: dict[str, list], problems: list[tuple[str | None, str, str]] | None = None
) -> pd.DataFrame:
    df = pd.DataFrame({k: pd.Series(v, dtype="object") for k, v in cols.items()})
    for name, dtype in HISTORY_DTYPES.items():
        if name in ("authored_at", "committed_at"):
            df[name], bad = utc_seconds(cols[name])
            if problems is not None:
                problems.extend(_time_problems(cols["sha"], cols[name], bad, name))
        elif dtype == "Int64":
            df[name] = pd.array(cols[name], dtype="Int64")
        elif dtype == "boolean":
            df[name] = pd.array(cols[name], dtype="boolean")
        elif dtype == "category":
            df[name] = categories(df[name])
        elif dtype == "string":
            df[name] = df[name].astype("string")
    return df


def _time_problems(
    shas: list[str], values: list, bad: list[int], column: str
) -> list[tuple[str | None, str, str]]:
    """One problem row per commit whose ``column`` time pandas cannot hold (NaT in the frame)."""
    out: list[tuple[str | None, str, str]] = []
    seen: set[str] = set()
    for i in bad:
        if shas[i] not in seen:
            seen.add(shas[i])
            out.append(
                (
                    None,
                    "time_out_of_range",
                    f"commit {shas[i][:12]} {column}: {out_of_range(values[i])}",
                )
            )
    return out


#: The columns of :func:`log_changes`, in order.
CHANGES_COLUMNS = (
    "sha",
    "parents",
    "is_merge",
    "authored_at",
    "committed_at",
    "branch",
    "change_type",
    "old_path",
    "path",
    "old_blob",
    "new_blob",
    "new_mode",
)


def log_changes(repo: Path) -> pd.DataFrame:
    """Per commit × file: the blob before and after, for reading file versions.

    Unlike :func:`log_history`, merges show their diff against the first parent, so walking a
    branch's first-parent chain and applying each row reproduces its tree at every commit.
    Columns: sha, parents, first_parent_of_merge (bool), authored_at, committed_at, branch,
    change_type, old_path, path, old_blob, new_blob, new_mode (None when deleted).
    """
    out = _run_log(repo, ("--raw", "--diff-merges=first-parent"))
    rows = []
    graph: dict[str, tuple[list[str], str]] = {}
    for sha, parent_list, _an, _ae, at, ct, branch, msg, diff in _commits(out):
        graph[sha] = (parent_list, msg.decode("utf-8", "replace").rstrip("\n"))
        for letter, old_path, path, old_sha, new_sha, _a, _d, mode in _parse_diff(diff):
            rows.append(
                (
                    sha,
                    parent_list,
                    len(parent_list) > 1,
                    at,
                    ct,
                    branch,
                    "M" if letter == "T" else letter,
                    old_path,
                    path,
                    None if _ZERO.match(old_sha) else old_sha,
                    None if _ZERO.match(new_sha) else new_sha,
                    None if mode == "000000" else mode,
                )
            )
    df = pd.DataFrame(rows, columns=list(CHANGES_COLUMNS))
    owner = attribute(repo, graph)  # the branch as log_history attributes it
    df["branch"] = [owner[s][0] if s in owner else b for s, b in zip(df["sha"], df["branch"])]
    for col in ("authored_at", "committed_at"):
        df[col] = utc_seconds(list(df[col]))[0]  # NaT out of range (log_history names them)
    for col in ("sha", "branch", "old_path", "path", "old_blob", "new_blob", "new_mode"):
        df[col] = df[col].astype("string")
    df["change_type"] = df["change_type"].astype("category")
    df["is_merge"] = df["is_merge"].astype("boolean")
    return df
