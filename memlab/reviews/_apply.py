"""``apply_proposal``: make exactly the ticked items of a proposal: one git commit for a memory
repo, a reviewable script for an elfmem database (see ``_elfmem_script``).

Order of refusals (each names the file and what to do):

1. the markdown differs from its JSON twin beyond ticks, or the twin was edited → StaleProposal;
2. two options of one choice are ticked, the proposal is for a store memlab does not write, an
   item is a checklist item, or two ticked items collide on one file → ProposalRejected;
3. HEAD is not the commit the proposal was made from → StaleProposal (naming the edited files);
4. the working tree has uncommitted changes to tracked memory files → ProposalRejected;
5. a ticked item would remove a pinned or constitutional block, or touch a read-only file,
   judged on the file as it is at HEAD → ProposalRejected;
6. another git process holds the index or the branch (``index.lock``, a branch's ``.lock``;
   git would let the commit land and then fail on the index) → ProposalRejected naming it.

Only then is anything written: blobs, trees and a commit, from Python by memlab's one object and
commit writer (:mod:`memlab._gitobj`, dated now as ``git commit-tree`` would date it), on top of
HEAD's tree; no index is used for it. Then ``update-ref`` with the old HEAD as the expected value
(the commit point), then the changed
files of the working tree (written by memlab, each by rename) and their index entries. Every git
call goes through :mod:`memlab._git`, so no program the repository's config names runs (no
hooks, fsmonitor, filters); nothing is checked out. SIGINT/SIGTERM are held back from the
commit point until the working tree matches the new commit; after a SIGKILL there, a re-run
recognises HEAD as this proposal's commit and finishes the working tree and the index
("already applied"). The dirty-tree
check hashes files in Python, so files that were only touched are not dirty.

Where things are: this module holds ``apply_proposal`` and the steps that write: the git
plumbing (``_git``, ``_commit`` through the writer, ``_write_file``, ``_sync_worktree``,
``_index_behind``), the signal hold (``_signals_deferred``) and the commit point, and
``_finish`` for a re-run. The result type is in ``_apply_result``; the in-memory file edits and
their guards in ``_apply_edits``; the checks before writing (fresh against HEAD, one option per
choice, git locks) and the commit message in ``_apply_checks``; the elfmem database script path
in ``_apply_elfmem``. Tests monkeypatch ``_git``, ``_write_file`` and ``_sync_worktree`` here,
so they stay in this module with the code that reads them.
"""

from __future__ import annotations

import signal
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from memlab import _git as _hardened
from memlab import kinds
from memlab._files import read_regular
from memlab._gitobj import Signature, commit_files
from memlab.errors import ProposalRejected, RepoError, StaleProposal
from memlab.formats.letta_memfs import REVIEW_EMAIL, REVIEW_NAME
from memlab.io import tree_name, write_atomic
from memlab.reviews import _repo
from memlab.reviews._apply_checks import (
    applied_in,
    check_fresh,
    check_one_per_choice,
    commit_message,
    refuse_locks,
)
from memlab.reviews._apply_edits import Edits, apply_item
from memlab.reviews._apply_result import ApplyResult
from memlab.reviews._proposal import Item, Proposal, read_proposal

# Re-exported: memlab.reviews imports ApplyResult from here.
__all__ = [
    "ApplyResult",
    "apply_proposal",
    "check_one_per_choice",
    "checklist_refusal",
    "commit_ticked",
    "own_steps",
]

_ZERO = "0" * 40


# ---- git plumbing (all through memlab._git: no program the repo's config names can run; the
# commit's objects through memlab._gitobj, the one writer) ---------------------------------------


def _clock() -> tuple[int, int]:
    """Now, as ``git commit-tree`` dates a commit with no date given: whole seconds since the
    epoch and the local offset from UTC in minutes."""
    now = int(time.time())
    return now, time.localtime(now).tm_gmtoff // 60


def _signature() -> Signature:
    """Author and committer of an apply commit, dated now. memfs audits read this identity as
    author kind "review" (formats/letta_memfs.py)."""
    now, offset = _clock()
    return Signature(REVIEW_NAME, REVIEW_EMAIL, now, offset)


def _git(
    root: Path,
    *args: str,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> bytes:
    return _hardened.run(root, *args, input=input, extra_env=env, check=check, ceiling=False)


def _commit(
    root: Path, head: str, changes: dict[str, bytes | None], modes: dict[str, str], message: str
) -> str:
    """Blobs, trees and a commit on top of ``head``, written by the one writer
    (:mod:`memlab._gitobj`, through :func:`memlab._git.write_object`); nothing checked out, no
    index touched."""
    gdir = _hardened.git_dir(root)
    if gdir is None:  # pragma: no cover - open_repo found it
        raise RepoError("not a git repository", path=root)

    def store(kind: str, body: bytes) -> str:
        return _hardened.write_object(gdir, kind, body)

    flat = _hardened.flat_tree(root, head)
    try:
        _tree, commit = commit_files(
            store, flat, sorted(changes.items()), head, _signature(), message, modes=modes
        )
    except ValueError as exc:  # a file and a folder would share a name
        raise ProposalRejected(
            f"the change cannot be committed: {exc}",
            path=root,
            hint="the repository changed shape; review it again",
        ) from exc
    return commit


def _write_file(path: Path, data: bytes, mode: str) -> None:
    """Replace one working-tree file atomically (a temp file beside it, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        path.unlink()
    write_atomic(path, data, mode=0o755 if mode == "100755" else 0o644, fsync=True)


def _sync_worktree(
    root: Path,
    commit: str,
    changes: dict[str, bytes | None],
    old: dict[str, bytes | None],
    modes: dict[str, str],
    *,
    committed: bool = False,
) -> list[str]:
    """Bring the changed files of the working tree and the index to ``commit``.

    Files are written by memlab (no smudge filter, no checkout); the index gets exactly these
    entries (``update-index --cacheinfo``/``--force-remove``: no file is read or filtered).
    A file that is neither its old nor its new content is left alone and returned.
    """
    skipped = []
    for path, data in sorted(changes.items()):
        local = root / path
        try:
            current: bytes | None = read_regular(local) if local.exists() else None
        except OSError:
            current = b"\0unreadable"
        if current != old.get(path) and current != data:
            skipped.append(path)
            continue
        if data is None:
            if local.exists() or local.is_symlink():
                local.unlink()
        elif current != data:
            _write_file(local, data, modes.get(path, "100644"))
    entries = _hardened.tree_entries(root, commit, sorted(changes))
    try:
        for path in sorted(changes):
            if path in skipped:
                continue
            if path in entries:
                mode, _typ, sha = entries[path]
                _git(root, "update-index", "--add", "--cacheinfo", f"{mode},{sha},{path}")
            else:
                _git(root, "update-index", "--force-remove", "--", path)
    except RepoError as exc:
        if not committed:
            raise
        # After the commit point: the commit stands; say so, and how to finish (a re-run does).
        raise RepoError(
            f"committed {commit[:12]}, but the index could not be updated "
            f"({exc.message}); the working tree has the new files",
            path=root,
            hint="once no other git command runs, memlab apply this proposal again: "
            "it finishes the index",
        ) from exc
    return skipped


def _index_behind(root: Path, commit: str, paths: list[str]) -> list[str]:
    """The ``paths`` whose index entry is not the one ``commit`` has (a run that moved the
    branch but could not write the index)."""
    if not paths:
        return []
    want = _hardened.tree_entries(root, commit, paths)
    out = _git(root, "ls-files", "-s", "-z", "--", *paths)
    have = {}
    for rec in out.split(b"\0"):
        if b"\t" in rec:
            meta, name = rec.split(b"\t", 1)
            mode, sha, _stage = meta.decode().split()
            have[tree_name(name)] = (mode, sha)
    behind = []
    for p in paths:
        expected = (want[p][0], want[p][2]) if p in want else None
        if expected != have.get(p):
            behind.append(p)
    return behind


@contextmanager
def _signals_deferred():
    """SIGINT/SIGTERM held back while the branch moves and the files follow it, so a kill
    lands after the working tree matches the new commit (SIGKILL cannot be held: a re-run
    finishes the job, see :func:`apply_proposal`). A handler records the signal (a thread mask
    would not do: another thread could take the signal) and it is re-raised at the end."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    sigs = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda signum, _frame: caught.append(signum)) for s in sigs}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        for signum in dict.fromkeys(caught):
            signal.raise_signal(signum)


def apply_proposal(
    path: str | Path,
    *,
    repo: str | Path | None = None,
    branch: str | None = None,
    dry_run: bool = False,
    script: str | Path | None = None,
) -> ApplyResult:
    """Apply exactly the ticked items of a proposal file, as the store kind's
    :class:`~memlab.kinds.Apply` does it: one commit for a memory repo (``GitCommit``), a script
    for an elfmem database (``ElfmemScript``), a refusal for a checklist (``Checklist``, or a
    kind review does not cover), or a plugin kind's own.

    For an elfmem database memlab never writes the database: it writes ``script`` (default:
    ``<proposal>.apply.py`` beside the proposal), which makes the ticked changes through the
    installed elfmem's own API after a ``VACUUM INTO`` backup; databases written by elfmem
    before 0.20 (no edit/forget) are refused.

    ``repo`` defaults to the repository the proposal was made from. ``branch``: commit on a new
    branch of that name (created at HEAD; the checkout is left as it is) instead of the current
    branch. ``dry_run``: change nothing and return the diff that would be committed. The commit
    author and committer are ``memlab <memlab@localhost>``; no hooks run.
    """
    source = Path(path).expanduser()
    proposal = read_proposal(source)
    md_path = proposal.source or source
    ticked = [it for it in proposal.items if it.id in proposal.ticked]
    review = getattr(kinds.lookup(proposal.store.get("kind")), "review", None)
    check_one_per_choice(proposal, md_path)
    if review is None:
        raise checklist_refusal(proposal, md_path)
    adapter = review.resolved
    return adapter.apply.apply(
        proposal,
        ticked,
        md_path,
        review=adapter,
        repo=repo,
        branch=branch,
        dry_run=dry_run,
        script=script,
    )


def checklist_refusal(proposal: Proposal, md_path: Path) -> ProposalRejected:
    """The refusal of a proposal for a store memlab does not write (a checklist)."""
    return ProposalRejected(
        f"this proposal is for a {proposal.store.get('kind')} store, which memlab does not write",
        path=md_path,
        hint="use it as a checklist and make the ticked changes in Letta, or "
        "migrate the store (`memlab migrate ... --to letta`) and review that",
    )


def own_steps(review: Any) -> dict[str, Any]:
    """op -> the kind's removal or edit object that makes the steps of that op."""
    return {b.op: b for b in (review.removal, review.edit) if b is not None}


def commit_ticked(
    proposal: Proposal,
    ticked: list[Item],
    md_path: Path,
    *,
    review: Any,
    repo: str | Path | None = None,
    branch: str | None = None,
    dry_run: bool = False,
) -> ApplyResult:
    """The ``ticked`` items of ``proposal`` as one commit to the store's repository (see the
    module doc); ``review`` is the kind's resolved adapter, whose removal and edit make their
    own steps."""
    blocked = [it.id for it in ticked if not it.appliable]
    if blocked:
        raise ProposalRejected(
            f"ticked item(s) {', '.join(blocked)} are checklist items with no file change",
            path=md_path,
            hint="untick them",
        )
    target = repo or proposal.fingerprint.get("repo") or proposal.store["path"]
    from memlab.sources._bundle import is_bundle

    if proposal.store.get("bundle") or is_bundle(target):
        raise ProposalRejected(
            "this proposal was made from a git bundle, which is not a "
            "working repository: apply refuses it",
            path=proposal.store.get("bundle") or target,
            hint="clone it (git clone BUNDLE repo), review the clone and apply there",
        )
    git_repo = _repo.open_repo(target)
    root = Path(git_repo.working_tree_dir)
    if not ticked:
        return ApplyResult(
            md_path, [], [], "", dry_run=dry_run, message="no items ticked; nothing changed"
        )
    head = check_fresh(git_repo, proposal, md_path, ticked)
    made_from = cast(str, proposal.fingerprint.get("head_sha"))  # a commit kind's proposal has it
    if head != made_from:
        return _finish(
            git_repo, root, proposal, ticked, md_path, made_from, head, dry_run, own_steps(review)
        )
    if branch:
        tip = (
            _hardened.rev_parse(root, f"refs/heads/{branch}")
            if _hardened.returncode(root, "check-ref-format", "--branch", branch) == 0
            else None
        )
        if tip is not None and applied_in(git_repo, tip, proposal, ticked):
            return ApplyResult(
                md_path,
                [it.id for it in ticked],
                [],
                "",
                commit=tip,
                branch=branch,
                dry_run=dry_run,
                message=f"already applied on branch {branch} in {tip[:12]}",
                already_applied=True,
                notes=[f"already applied on branch {branch} in commit {tip[:12]}; nothing to do"],
            )
    pathspec = None
    if review.project_folder:
        first: str = next((it.change["file"] for it in ticked if it.change.get("file")), "")
        pathspec = first.split("memory/", 1)[0] or None if "memory/" in first else None
    dirty = _repo.dirty_paths(git_repo, pathspec)
    if dirty:
        raise ProposalRejected(
            f"the working tree has uncommitted changes ({', '.join(dirty[:5])}"
            f"{', ...' if len(dirty) > 5 else ''})",
            path=root,
            hint="commit or stash them, then apply again",
        )
    edits = Edits(git_repo, head)
    own = own_steps(review)
    for it in ticked:
        apply_item(edits, it, own)
    changes = edits.changes()
    diff = edits.diff()
    for p, data in changes.items():
        if (
            data is not None
            and edits.original[p] is None
            and ((root / p).exists() or (root / p).is_symlink())
        ):
            raise ProposalRejected(
                f"{p} is untracked in the working tree and would be overwritten",
                path=root / p,
                hint="move it away or commit it, then apply again",
            )
    result = ApplyResult(
        md_path,
        [it.id for it in ticked],
        sorted(changes),
        diff,
        dry_run=dry_run,
        branch=branch or _repo.current_branch(git_repo),
    )
    if dry_run or not changes:
        return result
    if branch and _hardened.returncode(root, "check-ref-format", "--branch", branch) != 0:
        # Checked before any object is written, so a bad name leaves the object store as it was.
        raise ProposalRejected(f"{branch!r} is not a valid branch name", path=root)
    refuse_locks(root, branch or _repo.current_branch(git_repo), index=not branch)
    message = commit_message(proposal, ticked, md_path)
    modes = {p: _repo.mode_at(git_repo, head, p) or "100644" for p in changes}
    commit = _commit(root, head, changes, modes, message)
    if branch:
        if not _hardened.update_ref(
            root, f"refs/heads/{branch}", commit, _ZERO, message="memlab review apply"
        ):
            raise ProposalRejected(
                f"branch {branch!r} already exists",
                path=root,
                hint="choose a new branch name, or omit branch to commit on the current one",
            )
        result.notes.append(
            f"created branch {branch} at {commit[:12]}; the checkout is unchanged "
            f"(git switch {branch} to see it)"
        )
    else:
        old = {p: (None if t is None else t.encode("utf-8")) for p, t in edits.original.items()}
        with _signals_deferred():
            # The commit point: HEAD's branch moves only if it is still the commit we read.
            if not _hardened.update_ref(root, "HEAD", commit, head, message="memlab review apply"):
                if _hardened.rev_parse(root, "HEAD") != head:
                    raise StaleProposal(
                        "HEAD moved while applying; nothing was committed", path=md_path
                    )
                refuse_locks(root, _repo.current_branch(git_repo), index=False)
                raise RepoError(
                    "git could not move HEAD to the new commit; nothing was committed", path=root
                )
            skipped = _sync_worktree(root, commit, changes, old, modes, committed=True)
        if skipped:
            result.notes.append("changed while applying, left as they were: " + ", ".join(skipped))
    result.commit = commit
    result.message = message
    return result


def _finish(
    git_repo: Any,
    root: Path,
    proposal: Proposal,
    ticked: list[Item],
    md_path: Path,
    made_from: str,
    head: str,
    dry_run: bool,
    own: dict[str, Any],
) -> ApplyResult:
    """HEAD is already this proposal's apply commit: bring the working tree along (a run killed
    after the branch moved) and say so."""
    edits = Edits(git_repo, made_from)
    for it in ticked:
        apply_item(edits, it, own)
    changes = edits.changes()
    old = {p: (None if t is None else t.encode("utf-8")) for p, t in edits.original.items()}
    modes = {
        p: _repo.mode_at(git_repo, head, p) or _repo.mode_at(git_repo, made_from, p) or "100644"
        for p in changes
    }
    result = ApplyResult(
        md_path,
        [it.id for it in ticked],
        sorted(changes),
        edits.diff(),
        commit=head,
        branch=_repo.current_branch(git_repo),
        dry_run=dry_run,
        message=f"already applied in {head[:12]}",
        already_applied=True,
    )
    behind = [
        p
        for p, data in changes.items()
        if (read_regular(root / p) if (root / p).is_file() else None) != data
    ]
    behind += [p for p in _index_behind(root, head, sorted(changes)) if p not in behind]
    if dry_run or not behind:
        result.notes.append(f"already applied in commit {head[:12]}; nothing to do")
        return result
    refuse_locks(root, None, index=True)
    with _signals_deferred():
        skipped = _sync_worktree(root, head, changes, old, modes, committed=True)
    result.notes.append(
        f"already applied in commit {head[:12]}; finished bringing "
        f"{len(behind) - len(skipped)} file(s) of the working tree and index up "
        "to it"
    )
    if skipped:
        result.notes.append("changed since, left as they were: " + ", ".join(skipped))
    return result
