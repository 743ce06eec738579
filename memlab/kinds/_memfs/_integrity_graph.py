"""A repository's commit graph and refs, asked of git in a constant number of processes, for the
``integrity`` table (:mod:`memlab.audits._integrity`).

However many reflog lines a repository has, :class:`Graph` costs at most five git processes, all
read-only and all through :mod:`memlab._git` (minimal environment, no config program runs):
``for-each-ref`` (every ref: branches, remote-tracking refs, tags, notes, ``refs/stash``,
``refs/letta-backup/*``…), ``cat-file --batch-all-objects --batch-check`` (every commit the
object store holds, reachable or not), one ``cat-file --batch`` (their parents and subjects), and,
only when some commits' changes must be compared, one ``diff-tree --stdin -p`` whose output goes
to one ``patch-id --stable``. Ancestry, reachability and "do these share a history" are then
answered in Python over the parents read once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from memlab import _git as _hardened
from memlab.constants import MAX_FILE_BYTES
from memlab.sources._git import READ_CONFIG, read_blobs, run_git

__all__ = ["Graph", "SHALLOW_ROOT", "MAX_PATCH_COMMITS", "ANCESTOR_CACHE"]

#: The root every shallow-clone boundary commit stands for (they share the history cut away).
SHALLOW_ROOT = "<shallow boundary>"
#: Commits whose change is compared by patch-id at most, per audit (the rest: "not compared").
MAX_PATCH_COMMITS = 5_000

#: Ancestor sets kept at once (each is a whole history: a few hundred KB for 10,000 commits).
ANCESTOR_CACHE = 64

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SHA_B = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


class Graph:
    """Commits and refs of the repository at ``repo`` (see the module docstring)."""

    def __init__(self, repo: Path, shallow: Iterable[str] = ()) -> None:
        self.repo = repo
        self.shallow = frozenset(shallow)
        self.refs: dict[str, str] = {}  # ref name -> commit it holds (tags peeled)
        self._read_refs()
        self.parents: dict[str, tuple[str, ...]] = {}
        self.subjects: dict[str, str] = {}
        self._read_commits()
        self._anc: dict[str, frozenset[str]] = {}
        self._gen: dict[str, int] | None = None
        self._roots: dict[str, frozenset[str]] | None = None

    # ---- git ---------------------------------------------------------------------------------

    def _read_refs(self) -> None:
        out = run_git(
            self.repo,
            "for-each-ref",
            "--format=%(objectname) %(objecttype) %(*objectname) %(*objecttype) %(refname)",
            check=False,
        ).decode("utf-8", "replace")
        for line in out.splitlines():
            parts = line.split(" ", 4)
            if len(parts) != 5:
                continue
            sha, kind, peeled, peeled_kind, name = parts
            if kind == "commit":
                self.refs[name] = sha
            elif kind == "tag" and peeled_kind == "commit":
                self.refs[name] = peeled

    def _read_commits(self) -> None:
        listing = run_git(
            self.repo,
            "cat-file",
            "--batch-all-objects",
            "--unordered",
            "--batch-check=%(objecttype) %(objectname)",
            check=False,
        )
        shas = [
            line[7:]
            for line in listing.decode("ascii", "replace").splitlines()
            if line.startswith("commit ") and _SHA.fullmatch(line[7:])
        ]
        bodies = read_blobs(self.repo, shas, max_bytes=MAX_FILE_BYTES) if shas else {}
        for sha, body in bodies.items():
            head, _, message = body.partition(b"\n\n")
            parents = tuple(
                line[7:].decode("ascii", "replace")
                for line in head.split(b"\n")
                if line.startswith(b"parent ")
            )
            self.parents[sha] = parents if sha not in self.shallow else ()
            self.subjects[sha] = message.split(b"\n", 1)[0].decode("utf-8", "replace")[:200]

    def patches(self, shas: Iterable[str]) -> dict[str, tuple[str | None, int, int]]:
        """``{sha: (patch id or None, files changed, lines added)}`` of each commit's change
        against its first parent (``git patch-id --stable``; None for a merge or an empty
        change). At most :data:`MAX_PATCH_COMMITS` commits; two git processes."""
        wanted = [s for s in dict.fromkeys(shas) if s in self.parents][:MAX_PATCH_COMMITS]
        if not wanted:
            return {}
        diff = run_git(
            self.repo,
            "diff-tree",
            "--stdin",
            "-p",
            "-r",
            "--root",
            "--no-color",
            "--full-index",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            input=("\n".join(wanted) + "\n").encode(),
            check=False,
        )
        stats: dict[str, list[int]] = {}
        files: set[bytes] = set()
        current: str | None = None
        for line in diff.split(b"\n"):
            if len(line) in (40, 64) and _SHA_B.fullmatch(line):
                current = line.decode()
                stats[current] = [0, 0]
                files = set()
            elif current is not None:
                if line.startswith(b"diff --git "):
                    files.add(line)
                    stats[current][0] = len(files)
                elif line.startswith(b"+") and not line.startswith(b"+++"):
                    stats[current][1] += 1
        ids: dict[str, str] = {}
        if stats:
            out = _hardened.run(
                self.repo, "patch-id", "--stable", input=diff, check=False, config=READ_CONFIG
            )
            for text in out.decode("ascii", "replace").splitlines():
                parts = text.split()
                if len(parts) == 2:
                    ids[parts[1]] = parts[0]
        return {s: (ids.get(s), *stats.get(s, (0, 0))) for s in wanted}

    # ---- the graph ---------------------------------------------------------------------------

    def has(self, sha: str | None) -> bool:
        return sha is not None and sha in self.parents

    def ancestors(self, sha: str) -> frozenset[str]:
        """``sha`` and every commit it reaches (the last :data:`ANCESTOR_CACHE` kept)."""
        found = self._anc.get(sha)
        if found is None:
            found = frozenset(self.reach([sha]))
            if len(self._anc) >= ANCESTOR_CACHE:
                self._anc.pop(next(iter(self._anc)))
            self._anc[sha] = found
        return found

    def reach(self, tips: Iterable[str]) -> set[str]:
        """Every commit the given commits reach (themselves included), present in the store."""
        seen: set[str] = set()
        stack = [t for t in tips if t in self.parents]
        while stack:
            c = stack.pop()
            if c in seen:
                continue
            seen.add(c)
            stack.extend(p for p in self.parents.get(c, ()) if p in self.parents and p not in seen)
        return seen

    def _generations(self) -> dict[str, int]:
        if self._gen is None:
            gen: dict[str, int] = {}
            for start in self.parents:
                if start in gen:
                    continue
                stack = [start]
                while stack:
                    c = stack[-1]
                    todo = [p for p in self.parents[c] if p in self.parents and p not in gen]
                    if todo:
                        stack.extend(todo)
                        continue
                    stack.pop()
                    if c not in gen:
                        gen[c] = 1 + max((gen[p] for p in self.parents[c] if p in gen), default=0)
            self._gen = gen
        return self._gen

    def is_ancestor(self, old: str, new: str) -> bool:
        """True when ``new`` contains ``old`` (walks only commits no older, by generation)."""
        if old == new:
            return True
        gen = self._generations()
        floor = gen[old]
        if gen[new] < floor:
            return False
        seen: set[str] = set()
        stack = [new]
        while stack:
            c = stack.pop()
            if c == old:
                return True
            if c in seen:
                continue
            seen.add(c)
            stack.extend(p for p in self.parents[c] if p in gen and gen[p] >= floor)
        return False

    def roots(self, sha: str) -> frozenset[str]:
        """The root commits ``sha`` reaches (a shallow boundary counts as :data:`SHALLOW_ROOT`,
        a commit whose parents are missing as its own root)."""
        if self._roots is None:
            gen = self._generations()
            roots: dict[str, frozenset[str]] = {}
            interned: dict[frozenset[str], frozenset[str]] = {}
            for c in sorted(self.parents, key=gen.__getitem__):
                ps = [p for p in self.parents[c] if p in roots]
                if c in self.shallow:
                    mine = frozenset({SHALLOW_ROOT})
                elif not ps:
                    mine = frozenset({c})
                else:
                    mine = frozenset().union(*(roots[p] for p in ps))
                roots[c] = interned.setdefault(mine, mine)
            self._roots = roots
        return self._roots.get(sha, frozenset({sha}))

    def related(self, a: str, b: str) -> bool:
        """True when ``a`` and ``b`` share a commit (a root, hence a history)."""
        return bool(self.roots(a) & self.roots(b))
