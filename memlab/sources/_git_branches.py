"""Which branch each commit was made on, by containment: a commit belongs to the first-parent
line it lies on, the repository's main line first, never to the ref a traversal happened to
reach it from (``git log --all --source`` credits whichever tip the date-ordered walk met
first, so one unpushed commit or a memory worker in flight relabels the agent's own commits).

:func:`attribute` takes the commit graph already read by the history pass and asks git only
for the refs (one ``for-each-ref``, one ``rev-parse``): two git processes per repository,
however many refs or commits. The order in which lines claim commits:

1. the main line: local ``main``, else ``master``, else HEAD's branch, else the branch the
   remote's HEAD names; then its upstream (configured, else ``<remote>/<same name>``,
   ``origin`` first); both have role ``main`` whatever they are called;
2. HEAD's branch, then the other local branches, by name;
3. the other remote-tracking branches, then tags, by name; then a detached HEAD;
4. commits reached only through a merge's second (or later) parent, a side line since
   deleted: Letta Code's harness merges (``merge(reflection): …``, ``merge(memory): …``) name
   it ``letta/<label>/(merged)``; git's own merge messages (``Merge branch 'x'``) ``x (merged)``;
   anything else ``(merged into <line>)``, role ``other``.

Each line claims the commits of its first-parent chain that no earlier line claimed, so the
result does not depend on ref creation order, commit dates or name sorting around ``main``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping, Sequence

from memlab.formats.letta_memfs import HARNESS_MERGES, branch_role
from memlab.sources._git_repo import run_git

__all__ = ["attribute", "Attribution", "line_order", "claim"]

#: sha -> (branch label, branch role)
Attribution = dict[str, tuple[str, str]]

_HEX = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_GIT_MERGE = re.compile(r"^Merge (?:remote-tracking )?branch '([^']+)'")
_MAIN_NAMES = ("main", "master")


def _short(ref: str) -> str:
    for prefix in ("refs/heads/", "refs/remotes/", "refs/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def _remote_branch(ref: str) -> str:
    """``refs/remotes/origin/letta/x`` -> ``letta/x`` (the branch name on the remote)."""
    return ref.removeprefix("refs/remotes/").partition("/")[2]


def _read_refs(
    repo: Path,
) -> tuple[dict[str, str], dict[str, str], dict[str, str], str | None, str | None]:
    """(tips by refname, upstream by local refname, symref targets, HEAD sha, HEAD's ref)."""
    out = run_git(
        repo,
        "for-each-ref",
        "--format=%(objectname)%00%(*objectname)%00%(refname)%00%(symref)%00%(upstream)",
        "refs/heads",
        "refs/remotes",
        "refs/tags",
    ).decode("utf-8", "replace")
    tips: dict[str, str] = {}
    upstream: dict[str, str] = {}
    symrefs: dict[str, str] = {}
    for line in out.splitlines():
        parts = line.split("\x00")
        if len(parts) != 5:
            continue
        sha, peeled, ref, target, up = parts
        if target:
            symrefs[ref] = target
            continue
        tips[ref] = peeled or sha  # a tag's peeled object when it is annotated
        if up:
            upstream[ref] = up
    head = (
        run_git(repo, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD", check=False)
        .decode("utf-8", "replace")
        .split()
    )
    head_sha = head[0] if len(head) == 2 and _HEX.match(head[0]) else None
    head_ref = head[1] if head_sha and head[1].startswith("refs/heads/") else None
    return tips, upstream, symrefs, head_sha, head_ref


def line_order(
    tips: Mapping[str, str],
    upstream: Mapping[str, str],
    symrefs: Mapping[str, str],
    head_sha: str | None,
    head_ref: str | None,
) -> list[tuple[str, str, str]]:
    """``(label, role, tip sha)`` for every line, in claiming order (see the module doc)."""
    locals_ = sorted(r for r in tips if r.startswith("refs/heads/"))
    remotes = sorted(r for r in tips if r.startswith("refs/remotes/"))
    tags = sorted(r for r in tips if r.startswith("refs/tags/"))
    remote_default = symrefs.get("refs/remotes/origin/HEAD") or next(
        (t for r, t in sorted(symrefs.items()) if r.startswith("refs/remotes/")), None
    )
    default_name = _remote_branch(remote_default) if remote_default else None
    candidates = [f"refs/heads/{n}" for n in _MAIN_NAMES] + [head_ref or ""]
    if default_name:
        candidates.append(f"refs/heads/{default_name}")
    primary = next((c for c in candidates if c in tips), None)
    name = primary.removeprefix("refs/heads/") if primary else default_name
    up = upstream.get(primary) if primary else None
    if up not in tips:
        remote_side = ([f"refs/remotes/origin/{name}"] if name else []) + [
            r for r in remotes if name and _remote_branch(r) == name
        ]
        if primary is None and remote_default:
            remote_side.insert(0, remote_default)
        if primary is None:
            remote_side += [f"refs/remotes/origin/{n}" for n in _MAIN_NAMES]
        up = next((r for r in remote_side if r in tips), None)
    order: list[tuple[str, str, str]] = []
    seen: set[str] = set()

    def add(ref: str | None, role: str | None = None) -> None:
        if ref is None or ref in seen or ref not in tips:
            return
        seen.add(ref)
        if role is None:
            role = branch_role(
                _remote_branch(ref) if ref.startswith("refs/remotes/") else _short(ref)
            )
        order.append((_short(ref), role, tips[ref]))

    add(primary, "main")
    add(up, "main")
    add(head_ref)
    for ref in locals_ + remotes + tags:
        add(ref)
    if head_sha and head_ref is None:
        order.append(("HEAD", branch_role("HEAD"), head_sha))
    return order


def _merged_line(message: str, into: str) -> tuple[str, str]:
    """(label, role) of the side line a merge with ``message`` brought into line ``into``."""
    subject = message.split(":", 1)[0]
    label = HARNESS_MERGES.get(subject)
    if label is not None:
        name = f"letta/{label}/(merged)"
        return name, branch_role(name)
    m = _GIT_MERGE.match(message)
    if m:
        name = m.group(1)
        # "Merge remote-tracking branch 'origin/x'": the branch is x on that remote.
        bare = name.partition("/")[2] if message.startswith("Merge remote-tracking") else name
        return f"{name} (merged)", branch_role(bare or name)
    return f"(merged into {into})", "other"


def claim(
    commits: Mapping[str, tuple[Sequence[str], str]], lines: Sequence[tuple[str, str, str]]
) -> Attribution:
    """Walk each line's first-parent chain in order, then every merge's side lines.
    ``commits`` maps sha -> (parents, message); commits no line reaches are left out."""
    owner: Attribution = {}
    queue: list[str] = []

    def walk(sha: str | None, label: str, role: str) -> None:
        while sha is not None and sha in commits and sha not in owner:
            owner[sha] = (label, role)
            queue.append(sha)
            parents = commits[sha][0]
            sha = parents[0] if parents else None

    for label, role, tip in lines:
        walk(tip, label, role)
    i = 0
    while i < len(queue):  # side lines of merges, in the order their merges were claimed
        sha = queue[i]
        i += 1
        parents, message = commits[sha]
        if len(parents) > 1:
            label, role = _merged_line(message, owner[sha][0])
            for p in parents[1:]:
                walk(p, label, role)
    return owner


def attribute(repo: Path, commits: Mapping[str, tuple[Sequence[str], str]]) -> Attribution:
    """sha -> (branch label, branch role) for every commit of ``commits`` (sha -> (parents,
    message)) that a branch, remote-tracking branch, tag or HEAD reaches."""
    return claim(commits, line_order(*_read_refs(repo)))
