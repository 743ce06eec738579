"""A memory repository's ``integrity`` rows, found from evidence (:mod:`memlab.audits._integrity`
frames them).

The evidence is what git recorded: each reflog entry says what it was (``commit (amend)``,
``reset: moving to …``, ``rebase (finish)``, ``pull --rebase (finish)``, ``fetch: forced-update``,
``checkout: …``), and the object store still holds the commits those entries name.

* **A rewrite** is an entry of a branch (``refs/heads/*``) or remote-tracking ref
  (``refs/remotes/*``) that moved it to a commit not containing where it was. The commits it
  stopped containing are *held* when any ref of any kind still reaches them (branches,
  remote-tracking refs, tags, notes, ``refs/letta-backup/*``, ``refs/stash`` and its reflog,
  every worktree's ``HEAD``), *re-applied* when a commit the ref reaches since has the same
  ``git patch-id --stable`` (a rebase, a pull with the same change upstream, an amend that kept
  the change), and *lost* otherwise (a merge or an empty commit has no change of its own and is
  never lost). Each lost commit belongs to the last entry that let go of it, and an entry is one
  row when it lost at least one: ``reset_away`` (``reset``, ``branch -f``), ``amended``,
  ``rebased`` or ``forced_update`` (anything else: a forced fetch, a push). ``HEAD``'s own
  reflog (checkouts, a detached HEAD) and the stash are never rewrites.
* **unrelated_upstream**: a branch and its remote namesake share no commit now, while the
  reflogs show they did (a remote history replaced under a clone that has not followed).
* **unreachable_commits**, only where the reflogs cannot tell (none, expired, not read):
  commits the object store holds that no ref and no reflog reaches, except a dropped stash's own
  commits. Read-only: the object store is listed with ``cat-file --batch-all-objects``, never
  ``fsck --lost-found``. Where the reflogs are whole, commits they do not reach were let go of
  on purpose (a deleted branch, Letta Code discarding a reflection worktree with ``branch -D``)
  and are no row.

Two root commits are not a finding (an orphan README branch on a mirror), nor is a shallow
clone's boundary (it is no root). When the reflogs are absent (a bare mirror), empty (expired)
or not read (over :data:`~memlab.kinds._memfs._integrity_reflog.MAX_REFLOG_BYTES`), rewrites cannot
be found: :func:`memfs_rows` says so (``checked`` False and the reason), and the audit's
``integrity_findings`` is None, never 0. Git processes: a constant number per repository
(:class:`~memlab.kinds._memfs._integrity_graph.Graph`), however long the reflogs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from memlab import _git
from memlab._files import open_regular
from memlab.kinds._memfs._integrity_graph import Graph
from memlab.kinds._memfs._integrity_reflog import (
    Entry,
    Reflogs,
    action,
    read_reflogs,
    worktree_heads,
)

__all__ = ["memfs_rows", "Verdict"]

_BRANCHES = ("refs/heads/", "refs/remotes/")
#: Rewrites judged at most (the newest): each costs a walk of the histories it parted.
MAX_REWRITES = 500


@dataclass
class Verdict:
    rows: list[dict]
    checked: bool
    reason: str | None


def _when(entry: Entry | None) -> pd.Timestamp | None:
    if entry is None or entry.when is None:
        return None
    try:
        return pd.Timestamp(entry.when, unit="s", tz="UTC")
    except (OverflowError, ValueError):
        return None


def _shallow(common: Path) -> list[str]:
    try:
        with open_regular(common / "shallow") as fh:
            return fh.read(1 << 20).decode("ascii", "replace").split()
    except OSError:
        return []


def _holders(graph: Graph, logs: Reflogs, common: Path) -> set[str]:
    """Every commit a ref of any kind names now, each worktree's HEAD, and each stash."""
    tips = set(graph.refs.values())
    for _, head in worktree_heads(common):
        if head.startswith("ref:"):
            sha = graph.refs.get(head[4:].strip())
            if sha:
                tips.add(sha)
        elif graph.has(head):
            tips.add(head)
    for entry in logs.entries.get("refs/stash", []):
        if entry.new:
            tips.add(entry.new)
    return {t for t in tips if graph.has(t)}


def _kind(message: str) -> str:
    act = action(message)
    if act.startswith("reset") or message.startswith("branch: Reset"):
        return "reset_away"
    if act == "commit (amend)":
        return "amended"
    if "rebase" in act:
        return "rebased"
    return "forced_update"


def _rank(e: Entry) -> int:
    if not e.ref.startswith("refs/remotes/"):
        return 1
    return 2 if e.message.startswith("update by push") else 0


def _backfill_note(graph: Graph, tip: str) -> str:
    """A Letta server "Initial commit" + "Backfill …" chain under ``tip``
    (letta-ai/letta-code#2203), as words, or ""."""
    history = graph.ancestors(tip)
    if len(history) > 2000:
        return ""
    roots = [c for c in history if not graph.parents[c]]
    backfills = sum(1 for c in history if graph.subjects.get(c, "").startswith("Backfill "))
    if backfills and any(graph.subjects.get(r, "").startswith("Initial commit") for r in roots):
        return (
            f", a history a Letta server re-created ('Initial commit' and {backfills} "
            "'Backfill …' commit(s): letta-ai/letta-code#2203)"
        )
    return ""


def _rewrites(graph: Graph, logs: Reflogs, held: set[str]) -> tuple[list[dict], int, int]:
    moves: list[Any] = []  # Entry with both old and new set (the loop below skips the rest)
    gone = 0
    for ref, entries in logs.entries.items():
        if not ref.startswith(_BRANCHES) or ref.endswith("/HEAD"):
            continue
        for e in entries:
            if e.old is None or e.new is None or e.old == e.new:
                continue
            if not (graph.has(e.old) and graph.has(e.new)):
                gone += 1  # pruned: the entry names a commit the store no longer holds
                continue
            if graph.is_ancestor(e.old, e.new):
                continue
            moves.append(e)
    if not moves:
        return [], gone, 0
    # Oldest first; within one second a remote-tracking ref's fetch comes before a branch's
    # move (the clone follows it: reset, rebase, merge) and its push after (a branch's commit,
    # amend or rebase is pushed), then the reflog's own order.
    moves.sort(key=lambda e: (e.when or 0, _rank(e), e.line))
    skipped = max(0, len(moves) - MAX_REWRITES)
    events = [(e, graph.ancestors(e.old) - graph.ancestors(e.new)) for e in moves[skipped:]]
    owner: dict[str, int] = {}
    for i, (_, dropped) in enumerate(events):
        for c in dropped:
            owner[c] = i  # the last entry that let go of it
    plans = []
    wanted: list[str] = []
    for i, (e, dropped) in enumerate(events):
        mine = {c for c in dropped if owner[c] == i}
        free = mine - held
        if not free:
            continue
        pool = graph.ancestors(e.new) - graph.ancestors(e.old)
        now = graph.refs.get(e.ref)
        if now and graph.has(now):
            pool |= graph.ancestors(now) - graph.ancestors(e.old)
        plans.append((i, e, mine, free, pool))
        wanted += sorted(free) + sorted(pool)
    if not plans:
        return [], gone, skipped
    patches = graph.patches(wanted)
    rows = []
    for i, e, mine, free, pool in plans:
        applied = {patches[c][0] for c in pool if c in patches and patches[c][0]}
        compared = [c for c in free if c in patches]
        reapplied = [c for c in compared if patches[c][0] and patches[c][0] in applied]
        no_change = [c for c in compared if not patches[c][0]]
        lost = [c for c in free if c not in reapplied and c not in no_change]
        if not lost:
            continue
        unknown = [c for c in lost if c not in patches]
        files = sum(patches[c][1] for c in lost if c in patches)
        added = sum(patches[c][2] for c in lost if c in patches)
        before = [
            f"{p.ref} {p.message[:80]!r}"
            for p, dropped in events[:i]
            if not dropped.isdisjoint(lost)
        ][-3:]
        unrelated = not graph.related(e.old, e.new)
        where = (
            (
                f"to {e.new[:12]}, an unrelated history (no commit in common)"
                + _backfill_note(graph, e.new)
            )
            if unrelated
            else f"to {e.new[:12]}"
        )
        detail = (
            f"{e.ref}: {e.message[:120]!r} moved it from {e.old[:12]} {where}. "
            f"{len(lost)} commit(s) lost (no ref holds them and their change was not "
            f"re-applied: {files} file(s), {added} line(s) added"
            + (f"; {len(unknown)} not compared, over memlab's patch cap" if unknown else "")
            + f"), {len(reapplied)} re-applied, {len(mine) - len(free)} still on other "
            f"refs"
            + (f"; they had already left {'; '.join(before)}" if before else "")
            + f". Still in the object store: git branch recovered-{e.old[:12]} {e.old}"
        )
        rows.append(
            {
                "kind": _kind(e.message),
                "ref": e.ref,
                "sha": e.old,
                "when": _when(e),
                "detail": detail,
                "produced_by": "git",
                "lost": len(lost),
                "reapplied": len(reapplied),
                "evidence": f"reflog of {e.ref}, line {e.line}: "
                f"{e.old[:12]} -> {e.new[:12]} {e.message[:160]!r}",
            }
        )
    return rows, gone, skipped


def _upstreams(graph: Graph, logs: Reflogs) -> list[dict]:
    rows = []
    heads = {
        n[len("refs/heads/") :]: s for n, s in graph.refs.items() if n.startswith("refs/heads/")
    }
    for rname, rsha in sorted(graph.refs.items()):
        if not rname.startswith("refs/remotes/") or rname.endswith("/HEAD"):
            continue
        branch = rname[len("refs/remotes/") :].partition("/")[2]
        sha = heads.get(branch)
        if sha is None or sha == rsha or graph.related(sha, rsha):
            continue
        before = None
        for ref, other in ((rname, sha), (f"refs/heads/{branch}", rsha)):
            for e in reversed(logs.entries.get(ref, [])):
                if (
                    e.old
                    and graph.has(e.old)
                    and graph.related(e.old, other)
                    and not (e.new and graph.has(e.new) and graph.related(e.new, other))
                ):
                    before = e
                    break
            if before:
                break
        if before is None:
            continue  # never shared a history, as far as the reflogs tell (a second root)
        rows.append(
            {
                "kind": "unrelated_upstream",
                "ref": f"refs/heads/{branch}",
                "sha": rsha,
                "when": _when(before),
                "detail": f"{branch} ({sha[:12]}) and {rname[len('refs/') :]} ({rsha[:12]}) "
                f"share no commit, yet did until {before.message[:120]!r} moved "
                f"{before.ref} to {before.new[:12] if before.new else 'nothing'}"
                + _backfill_note(graph, rsha)
                + ": one history replaced the other; the branch has not followed",
                "produced_by": "git",
                "lost": None,
                "reapplied": None,
                "evidence": f"reflog of {before.ref}, line {before.line}: {before.message[:160]!r}",
            }
        )
    return rows


def _stash_made(graph: Graph, sha: str) -> bool:
    subject = graph.subjects.get(sha, "")
    if subject.startswith(("index on ", "untracked files on ")):
        return True
    parents = graph.parents.get(sha, ())
    return len(parents) >= 2 and graph.subjects.get(parents[1], "").startswith("index on ")


def _unreachable(graph: Graph, logs: Reflogs, held: set[str]) -> list[dict]:
    logged = {v for entries in logs.entries.values() for e in entries for v in (e.old, e.new) if v}
    reached = held | graph.reach(logged)
    loose = [c for c in graph.parents if c not in reached and not _stash_made(graph, c)]
    if not loose:
        return []
    inner = {p for c in loose for p in graph.parents[c]}
    tips = sorted(c for c in loose if c not in inner)
    shown = ", ".join(t[:12] for t in tips[:5]) + (" …" if len(tips) > 5 else "")
    return [
        {
            "kind": "unreachable_commits",
            "ref": None,
            "sha": tips[0],
            "when": None,
            "detail": f"{len(loose)} commit(s) in the object store that no ref and no reflog "
            f"reaches, in {len(tips)} line(s) of history ending at {shown}: a branch "
            "deleted or a history rewritten, and the reflog that said how is gone. "
            f"Recover one with: git branch recovered-{tips[0][:12]} {tips[0]}",
            "produced_by": "git",
            "lost": len(loose),
            "reapplied": None,
            "evidence": "git cat-file --batch-all-objects: commits no ref or reflog reaches",
        }
    ]


def memfs_rows(repo: Path) -> Verdict:
    """The memfs ``integrity`` rows of the repository at ``repo`` (module docstring)."""
    gdir = _git.git_dir(repo)
    if gdir is None:
        return Verdict([], False, "not a git repository")
    common = _git.common_dir(gdir)
    logs = read_reflogs(common)
    graph = Graph(repo, _shallow(common))
    held = graph.reach(_holders(graph, logs, common))
    rewrites, gone, skipped = _rewrites(graph, logs, held)
    rows = rewrites + _upstreams(graph, logs)
    reasons = list(logs.unread)
    if not logs.lines:
        bare = not os.path.isdir(repo / ".git") and gdir == repo
        reasons.insert(
            0,
            "no reflog entries: "
            + (
                "the reflogs are empty (expired, e.g. git reflog expire --expire=now --all, or "
                "cleared)"
                if logs.files
                else "this repository keeps none (a bare repository or mirror does not, unless "
                "core.logAllRefUpdates is set)"
                if bare
                else "no reflog files"
            ),
        )
    if skipped:
        reasons.append(f"{skipped} older rewrite(s) not judged (over {MAX_REWRITES})")
    checked = not reasons
    if not checked:
        # the reflogs cannot say what happened: what the object store still holds can
        rows += _unreachable(graph, logs, held)
    if gone:
        reasons.append(
            f"{gone} reflog entr(ies) name commits the object store no longer holds "
            "(pruned): those moves were not judged"
        )
    return Verdict(rows, checked, "; ".join(reasons) or None)
