"""Apply's checks before anything is written: the proposal against HEAD (``check_fresh``), one
option per choice, no git lock held (``refuse_locks``); and the commit message (``commit_message``),
which ``applied_in`` reads back to recognise this proposal's commit on a re-run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memlab import _git as _hardened
from memlab._escape import commit_line
from memlab.errors import ProposalRejected, RepoError, StaleProposal
from memlab.reviews import _repo
from memlab.reviews._proposal import Item, Proposal

__all__ = ["refuse_locks", "commit_message", "applied_in", "check_fresh", "check_one_per_choice"]


def refuse_locks(root: Path, branch: str | None, *, index: bool) -> None:
    """Refuse, before anything is written, while another git process holds the index or the
    branch: git would let the commit land and then fail on the index, leaving it staging a
    revert of the change."""
    gdir = _hardened.git_dir(root)
    if gdir is None:
        return
    locks = [gdir / "index.lock"] if index else []
    if branch:
        locks.append(_hardened.common_dir(gdir) / "refs" / "heads" / f"{branch}.lock")
    for lock in locks:
        if os.path.lexists(lock):
            raise ProposalRejected(
                f"{lock.name} exists: another git process is using the "
                "repository; nothing was written",
                path=lock,
                hint="if no git command is running (one that was killed "
                "leaves it), remove the file and apply again",
            )


def commit_message(proposal: Proposal, items: list[Item], source: Path) -> str:
    """The commit message; every store-derived value is one :func:`commit_line`."""
    lines = [f"memlab review: apply {len(items)} item(s) from {commit_line(source.name)}", ""]
    for it in items:
        lines.append(
            f"- {commit_line(it.id)} {commit_line(it.option)}: "
            f"{commit_line(it.change.get('text', it.summary))}"
        )
    lines += [
        "",
        f"Proposal-Digest: {commit_line(proposal.to_dict()['digest'][:16])}",
        f"Made-From: {commit_line(proposal.fingerprint.get('head_sha'))}",
    ]
    return "\n".join(lines) + "\n"


def applied_in(repo: Any, commit: str, proposal: Proposal, items: list[Item]) -> bool:
    """True when ``commit`` is this proposal's apply commit for exactly these items, made
    directly on the commit the proposal was made from."""
    info = _repo.commit_info(repo, commit)
    if info is None:
        return False
    parents, _tree, message = info
    digest = f"Proposal-Digest: {proposal.to_dict()['digest'][:16]}"
    made = proposal.fingerprint.get("head_sha")
    ids = {
        line.split(" ", 2)[1]
        for line in message.split("\n")
        if line.startswith("- ") and len(line.split(" ", 2)) > 2
    }
    return parents == [made] and digest in message.split("\n") and ids == {it.id for it in items}


def check_fresh(
    repo: Any, proposal: Proposal, source: Path, ticked: list[Item] | None = None
) -> str:
    fp = proposal.fingerprint
    head = _repo.head_sha(repo)
    if head is None:
        raise RepoError("the repository has no commits", path=repo.working_tree_dir)
    if head == fp.get("head_sha"):
        return head
    if ticked and applied_in(repo, head, proposal, ticked):
        return head
    changed = [
        p for p, blob in (fp.get("files") or {}).items() if _repo.blob_at(repo, head, p) != blob
    ]
    detail = (
        f"files it edits changed: {', '.join(changed)}"
        if changed
        else "none of the files it edits changed, but its evidence came from the old state"
    )
    raise StaleProposal(
        f"the repository moved from {str(fp.get('head_sha'))[:12]} to {head[:12]} "
        f"since the proposal was made; {detail}",
        path=source,
    )


def check_one_per_choice(proposal: Proposal, md_path: Path) -> None:
    """Refuse a proposal with two ticked options in one choice, naming the choice."""
    for n, choice in enumerate(proposal.choices, start=1):
        both = [oid for oid in choice.options if oid in proposal.ticked]
        if len(both) > 1:
            raise ProposalRejected(
                f"choice {n} ({choice.kind}) has {len(both)} options ticked "
                f"({', '.join(both)}); its options exclude each other",
                path=md_path,
                hint="tick at most one option per choice",
            )
