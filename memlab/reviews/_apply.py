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

Only then is anything written: blobs, a tree and a commit through plumbing with a private index,
then ``update-ref`` with the old HEAD as the expected value (the commit point), then the changed
files of the working tree (written by memlab, each by rename) and their index entries. Every git
call goes through :mod:`memlab._git`, so no program the repository's config names runs (no
hooks, fsmonitor, filters); nothing is checked out. SIGINT/SIGTERM are held back from the
commit point until the working tree matches the new commit; after a SIGKILL there, a re-run
recognises HEAD as this proposal's commit and finishes the working tree and the index
("already applied"). The dirty-tree
check hashes files in Python, so files that were only touched are not dirty.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import signal
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlab.formats._yaml import read_yaml
from memlab.formats.letta_memfs import REVIEW_EMAIL, REVIEW_NAME
from memlab.formats.letta_memfs import yaml_text
from memlab import _git as _hardened
from memlab._escape import commit_line, terminal_lines
from memlab._files import read_regular
from memlab._tmp import private_tempdir
from memlab.errors import ProposalRejected, RepoError, StaleProposal
from memlab.reviews import _repo
from memlab.reviews._proposal import Item, Proposal, read_proposal
from memlab.kinds import MEMFS_KINDS
from memlab.reviews._units import CONSTITUTIONAL_TAG, ROLE_TAG_PREFIX, is_identity_path

_ZERO = "0" * 40


@dataclass
class ApplyResult:
    """What apply did (or, with ``dry_run``, would do)."""

    proposal: Path
    applied: list[str]
    files: list[str]
    diff: str
    commit: str | None = None
    branch: str | None = None
    dry_run: bool = False
    message: str = ""
    notes: list[str] = field(default_factory=list)
    #: For an elfmem database: the script written (or, with ``dry_run``, that would be).
    script: Path | None = None

    def summary(self) -> str:
        if not self.applied:
            return f"{self.proposal}: no items ticked; nothing changed"
        if self.message and not self.files and not self.notes:
            return self.message
        if self.script is not None:
            if self.dry_run:
                return f"{len(self.applied)} item(s) ticked: would write {self.script}"
            return terminal_lines(self.notes)
        what = "would change" if self.dry_run else "changed"
        head = f"{len(self.applied)} item(s) {what} {len(self.files)} file(s)"
        if self.commit:
            head += f" in commit {self.commit[:12]} on {self.branch or 'detached HEAD'}"
        return terminal_lines([head, *self.notes])

    def __str__(self) -> str:
        return self.summary() + ("\n\n" + self.diff if self.dry_run and self.diff else "")


# ---- git plumbing (all through memlab._git: no program the repo's config names can run) ------

# memfs audits read this identity as author kind "review" (formats/letta_memfs.py).
_IDENTITY = {"GIT_AUTHOR_NAME": REVIEW_NAME, "GIT_AUTHOR_EMAIL": REVIEW_EMAIL,
             "GIT_COMMITTER_NAME": REVIEW_NAME, "GIT_COMMITTER_EMAIL": REVIEW_EMAIL}


def _git(root: Path, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
         check: bool = True) -> bytes:
    return _hardened.run(root, *args, input=input, extra_env=env, check=check, ceiling=False)


def _commit(root: Path, head: str, changes: dict[str, bytes | None], modes: dict[str, str],
            message: str) -> str:
    """Blobs, a tree and a commit made with plumbing and a private index; nothing checked out."""
    with private_tempdir("apply") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(root, "read-tree", head, env=env)
        for path, data in sorted(changes.items()):
            if data is None:
                _git(root, "update-index", "--force-remove", "--", path, env=env)
                continue
            sha = _hardened.hash_object(root, data)
            _git(root, "update-index", "--add", "--cacheinfo",
                 f"{modes.get(path, '100644')},{sha},{path}", env=env)
        tree = _git(root, "write-tree", env=env).decode().strip()
    return _hardened.commit_tree(root, tree, [head], message, _IDENTITY)


def _write_file(path: Path, data: bytes, mode: str) -> None:
    """Replace one working-tree file atomically (a temp file beside it, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        path.unlink()
    tmp = path.with_name(f".{path.name}.memlab-{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, 0o755 if mode == "100755" else 0o644)
    os.replace(tmp, path)


def _sync_worktree(root: Path, commit: str, changes: dict[str, bytes | None],
                   old: dict[str, bytes | None], modes: dict[str, str], *,
                   committed: bool = False) -> list[str]:
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
        raise RepoError(f"committed {commit[:12]}, but the index could not be updated "
                        f"({exc.message}); the working tree has the new files", path=root,
                        hint="once no other git command runs, memlab apply this proposal again: "
                             "it finishes the index") from exc
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
            have[name.decode("utf-8", "surrogateescape")] = (mode, sha)
    behind = []
    for p in paths:
        expected = (want[p][0], want[p][2]) if p in want else None
        if expected != have.get(p):
            behind.append(p)
    return behind


def _refuse_locks(root: Path, branch: str | None, *, index: bool) -> None:
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
            raise ProposalRejected(f"{lock.name} exists: another git process is using the "
                                   "repository; nothing was written", path=lock,
                                   hint="if no git command is running (one that was killed "
                                        "leaves it), remove the file and apply again")


# ---- file edits ------------------------------------------------------------------------------

def _yaml_scalar(value: str) -> str:
    """``value`` as one YAML scalar that reads back as the text meant. A proposal's memfs v2
    name arrives JSON-quoted (as Letta writes names) and is kept so only when YAML reads it back
    as that string; anything else is the writer's one rule (:func:`letta_memfs.yaml_text`:
    plain when every reader agrees, JSON-quoted otherwise)."""
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        try:
            meant = json.loads(value)
        except ValueError:
            meant = None
        if isinstance(meant, str) and read_yaml(f"k: {value}").value == {"k": meant}:
            return value
    return yaml_text(value)


def _fm_bounds(lines: list[str], path: str, item: Item) -> tuple[int, int]:
    if not lines or lines[0].rstrip("\r") != "---":
        raise ProposalRejected(f"item {item.id}: {path} has no frontmatter at HEAD", path=path)
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == "---":
            return 1, i
    raise ProposalRejected(f"item {item.id}: {path} frontmatter is never closed", path=path)


def _key_span(lines: list[str], start: int, end: int, key: str) -> tuple[int, int] | None:
    for i in range(start, end):
        if re.match(rf"^{re.escape(key)}[ \t]*:", lines[i]):
            j = i + 1
            while j < end and (lines[j][:1] in (" ", "\t")):
                j += 1
            return i, j
    return None


def _set_key(text: str, key: str, value: str, path: str, item: Item, *, raw: bool = False) -> str:
    lines = text.split("\n")
    start, end = _fm_bounds(lines, path, item)
    # raw: the value is YAML already (a limit must stay a bare integer, not a quoted string).
    new = f"{key}: {value if raw else _yaml_scalar(value)}"
    span = _key_span(lines, start, end, key)
    if span:
        lines[span[0]:span[1]] = [new]
    else:
        lines[end:end] = [new]
    return "\n".join(lines)


def _remove_key(text: str, key: str, path: str, item: Item) -> str:
    lines = text.split("\n")
    start, end = _fm_bounds(lines, path, item)
    span = _key_span(lines, start, end, key)
    if span is None:
        raise StaleProposal(f"item {item.id}: {path} has no frontmatter key {key!r} any more",
                            path=path)
    del lines[span[0]:span[1]]
    return "\n".join(lines)


def _block_span(text: str, block_id: str, path: str, item: Item) -> tuple[list[str], int, int, Any]:
    from memlab.formats.blockfile import parse_blockfile

    blocks, _ = parse_blockfile(text, file=path)
    lines = text.split("\n")
    for n, b in enumerate(blocks):
        if b.id == block_id:
            start = b.line - 1
            end = blocks[n + 1].line - 1 if n + 1 < len(blocks) else len(lines)
            return lines, start, end, b
    raise StaleProposal(f"item {item.id}: block {block_id} is not in {path} at HEAD", path=path)


def _guard_block(block: Any, path: str, item: Item) -> None:
    tags = list(block.tags or [])
    why = []
    if block.pinned:
        why.append("pinned")
    if CONSTITUTIONAL_TAG in tags or any(t.startswith(ROLE_TAG_PREFIX) for t in tags):
        why.append("constitutional")
    if block.cls == "identity":
        why.append("an identity block")
    if why:
        raise ProposalRejected(
            f"item {item.id} would remove block {block.id} ({block.title[:60]!r}), which is "
            f"{' and '.join(why)}", path=path,
            hint="untick it: pinned and constitutional blocks are never removed by apply")


def _guard_file(text: str | None, path: str, item: Item, *, removes: bool) -> None:
    if text is None:
        return
    from memlab.formats.letta_memfs import read_frontmatter

    fm = read_frontmatter(text)
    if fm.read_only is True or fm.fields.get("read_only", "").strip().lower() == "true":
        raise ProposalRejected(f"item {item.id} would change {path}, which is read_only",
                               path=path, hint="untick it: read-only memory files are edited only "
                                               "by their owner, never by apply")
    if removes and is_identity_path(path):
        raise ProposalRejected(f"item {item.id} would delete the identity file {path}", path=path,
                               hint="untick it: identity files are never removed by apply")


def _blob_text(repo: Any, sha: str, path: str) -> str:
    """A blob as text, or a clear refusal: apply edits memory files as UTF-8 text only."""
    try:
        data = _repo.read_blob(repo, sha)
    except ValueError as exc:  # the blob is not in the object store
        raise StaleProposal(f"the proposal needs {path} at blob {sha[:12]}, which this repo no "
                            f"longer has ({type(exc).__name__})", path=path) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProposalRejected(f"{path} is not UTF-8 text, so apply cannot edit it", path=path,
                               hint="untick the items that touch it and edit it by hand") from exc


class _Edits:
    """File texts at HEAD, edited in memory item by item."""

    def __init__(self, repo: Any, head: str) -> None:
        self.repo, self.head = repo, head
        self.text: dict[str, str | None] = {}
        self.original: dict[str, str | None] = {}
        self.owner: dict[str, str] = {}  # path -> first item that changed it

    def get(self, path: str) -> str | None:
        if path not in self.text:
            sha = _repo.blob_at(self.repo, self.head, path)
            value = None if sha is None else _blob_text(self.repo, sha, path)
            self.text[path] = self.original[path] = value
        return self.text[path]

    def put(self, path: str, value: str | None, item: Item) -> None:
        self.get(path)
        self.text[path] = value
        self.owner.setdefault(path, item.id)

    def need(self, path: str, item: Item) -> str:
        value = self.get(path)
        if value is None:
            other = self.owner.get(path)
            if other:
                raise ProposalRejected(f"items {other} and {item.id} both change {path}, and {other} "
                                       "removes it", path=path, hint="tick only one of them")
            raise StaleProposal(f"item {item.id}: {path} is not in the commit", path=path)
        return value

    def changes(self) -> dict[str, bytes | None]:
        return {p: (None if t is None else t.encode("utf-8")) for p, t in self.text.items()
                if t != self.original[p]}

    def diff(self) -> str:
        out = []
        for path in sorted(self.text):
            old, new = self.original[path], self.text[path]
            if old == new:
                continue
            out.extend(difflib.unified_diff(
                (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                fromfile="/dev/null" if old is None else f"a/{path}",
                tofile="/dev/null" if new is None else f"b/{path}"))
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n\\ No newline at end of file\n"
        return "".join(out)


def _steps(item: Item) -> list[dict[str, Any]]:
    """The file changes of an item: its ``steps`` (none for a keep-as-is option)."""
    if "steps" in item.change:
        return list(item.change["steps"])
    return [item.change]


def _set_body(text: str, body: str, path: str, item: Item) -> str:
    lines = text.split("\n")
    if lines and lines[0].rstrip("\r") == "---":
        _, end = _fm_bounds(lines, path, item)
        return "\n".join(lines[: end + 1]) + "\n\n" + body.rstrip("\n") + "\n"
    return body.rstrip("\n") + "\n"


def _apply_item(edits: _Edits, item: Item) -> None:
    for step in _steps(item):
        _apply_step(edits, item, step)


def _apply_step(edits: _Edits, item: Item, ch: dict[str, Any]) -> None:
    op = ch.get("op")
    path = ch.get("file")
    if op == "delete_file":
        text = edits.need(path, item)
        _guard_file(text, path, item, removes=True)
        edits.put(path, None, item)
    elif op == "archive_block":
        text = edits.need(path, item)
        lines, start, end, block = _block_span(text, ch["block_id"], path, item)
        _guard_block(block, path, item)
        chunk = lines[start:end]
        while chunk and chunk[-1].strip() == "":
            chunk.pop()
        rest = lines[:start] + lines[end:]
        while len(rest) > 1 and rest[-1] == "" and rest[-2].strip() == "":
            rest.pop()  # removing the last block leaves its separator blank line at the end
        edits.put(path, "\n".join(rest), item)
        dest = ch["to"]
        archive = edits.get(dest) or ""
        if archive and not archive.endswith("\n"):
            archive += "\n"
        if archive.strip():
            archive += "\n"
        edits.put(dest, archive + "\n".join(chunk) + "\n", item)
    elif op == "restore_file":
        current = edits.get(path)
        _guard_file(current, path, item, removes=False)
        edits.put(path, _blob_text(edits.repo, ch["blob"], path), item)
    elif op == "set_body":
        text = edits.need(path, item)
        _guard_file(text, path, item, removes=False)
        edits.put(path, _set_body(text, ch["body"], path, item), item)
    elif op == "set_key":
        text = edits.need(path, item)
        _guard_file(text, path, item, removes=False)
        edits.put(path, _set_key(text, ch["key"], ch["value"], path, item,
                                 raw=bool(ch.get("raw"))), item)
    elif op == "remove_key":
        text = edits.need(path, item)
        _guard_file(text, path, item, removes=False)
        edits.put(path, _remove_key(text, ch["key"], path, item), item)
    elif op == "add_frontmatter":
        text = edits.need(path, item)
        if text.startswith("---"):
            raise StaleProposal(f"item {item.id}: {path} already starts with frontmatter", path=path)
        head = ["---"]
        if ch.get("name"):
            head.append(f"name: {_yaml_scalar(ch['name'])}")
        head.append(f"description: {_yaml_scalar(ch['description'])}")
        head.append("---")
        edits.put(path, "\n".join(head) + "\n\n" + text, item)
    elif op == "move_file":
        text = edits.need(path, item)
        _guard_file(text, path, item, removes=True)
        if edits.get(ch["to"]) is not None:
            raise StaleProposal(f"item {item.id}: {ch['to']} already exists", path=ch["to"])
        edits.put(ch["to"], text, item)
        edits.put(path, None, item)
    else:
        raise ProposalRejected(f"item {item.id} ({item.action}) has no file change memlab can make",
                               path=path)


def _message(proposal: Proposal, items: list[Item], source: Path) -> str:
    """The commit message; every store-derived value is one :func:`commit_line`."""
    lines = [f"memlab review: apply {len(items)} item(s) from {commit_line(source.name)}", ""]
    for it in items:
        lines.append(f"- {commit_line(it.id)} {commit_line(it.option)}: "
                     f"{commit_line(it.change.get('text', it.summary))}")
    lines += ["", f"Proposal-Digest: {commit_line(proposal.to_dict()['digest'][:16])}",
              f"Made-From: {commit_line(proposal.fingerprint.get('head_sha'))}"]
    return "\n".join(lines) + "\n"


def _applied_in(repo: Any, commit: str, proposal: Proposal, items: list[Item]) -> bool:
    """True when ``commit`` is this proposal's apply commit for exactly these items, made
    directly on the commit the proposal was made from."""
    info = _repo.commit_info(repo, commit)
    if info is None:
        return False
    parents, _tree, message = info
    digest = f"Proposal-Digest: {proposal.to_dict()['digest'][:16]}"
    made = proposal.fingerprint.get("head_sha")
    ids = {line.split(" ", 2)[1] for line in message.split("\n") if line.startswith("- ")
           and len(line.split(" ", 2)) > 2}
    return (parents == [made] and digest in message.split("\n")
            and ids == {it.id for it in items})


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


def _check_fresh(repo: Any, proposal: Proposal, source: Path,
                 ticked: list[Item] | None = None) -> str:
    fp = proposal.fingerprint
    head = _repo.head_sha(repo)
    if head is None:
        raise RepoError("the repository has no commits", path=repo.working_tree_dir)
    if head == fp.get("head_sha"):
        return head
    if ticked and _applied_in(repo, head, proposal, ticked):
        return head
    changed = [p for p, blob in (fp.get("files") or {}).items()
               if _repo.blob_at(repo, head, p) != blob]
    detail = (f"files it edits changed: {', '.join(changed)}" if changed
              else "none of the files it edits changed, but its evidence came from the old state")
    raise StaleProposal(f"the repository moved from {str(fp.get('head_sha'))[:12]} to {head[:12]} "
                        f"since the proposal was made; {detail}", path=source)


def check_one_per_choice(proposal: Proposal, md_path: Path) -> None:
    """Refuse a proposal with two ticked options in one choice, naming the choice."""
    for n, choice in enumerate(proposal.choices, start=1):
        both = [oid for oid in choice.options if oid in proposal.ticked]
        if len(both) > 1:
            raise ProposalRejected(
                f"choice {n} ({choice.kind}) has {len(both)} options ticked "
                f"({', '.join(both)}); its options exclude each other", path=md_path,
                hint="tick at most one option per choice")


def _elfmem_script(proposal: Proposal, ticked: list[Item], md_path: Path, *,
                   script: str | Path | None, dry_run: bool) -> ApplyResult:
    """For an elfmem database: write the script that makes the ticked changes through elfmem."""
    from memlab.errors import OutputExists
    from memlab.reviews._proposal import ELFMEM_APPLY_SCHEMA
    from memlab.reviews._elfmem_script import render_script, script_steps

    schema = proposal.store.get("schema_version")
    if schema is None or int(schema) < ELFMEM_APPLY_SCHEMA:
        raise ProposalRejected(
            f"this database has elfmem schema {schema}, written by a release before 0.20 whose "
            "API has no edit or forget", path=md_path,
            hint="make the ticked changes by hand, or upgrade the agent to elfmem 0.20+ (it "
                 "migrates the schema), review again and apply that proposal")
    steps = script_steps(ticked)
    result = ApplyResult(md_path, [it.id for it in ticked], [], "", dry_run=dry_run)
    if not any(s for _, s in steps):
        result.message = "no ticked option changes the database; no script written"
        return result
    digest = proposal.to_dict()["digest"]
    text = render_script(database=proposal.store["path"], digest=digest, items=ticked)
    out = Path(script).expanduser() if script else md_path.with_name(md_path.stem + ".apply.py")
    result.diff = text
    result.script = out
    if dry_run:
        return result
    if out.exists():
        raise OutputExists("an apply script is already here", path=out,
                           hint="read it and run it, or move it away and apply again")
    out.write_text(text, encoding="utf-8")
    n = sum(len(s) for _, s in steps)
    result.notes.append(f"wrote {out}: {n} elfmem call(s); read it, then run it with the Python "
                        "where your agent's elfmem is installed (memlab did not touch the database)")
    return result


def apply_proposal(path: str | Path, *, repo: str | Path | None = None, branch: str | None = None,
                   dry_run: bool = False, script: str | Path | None = None) -> ApplyResult:
    """Apply exactly the ticked items of a proposal file: one commit for a memory repo, a script
    for an elfmem database.

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
    kind = proposal.store.get("kind")
    check_one_per_choice(proposal, md_path)
    if kind == "elfmem_db":
        return _elfmem_script(proposal, ticked, md_path, script=script, dry_run=dry_run)
    if kind not in MEMFS_KINDS:
        raise ProposalRejected(
            f"this proposal is for a {kind} store, which memlab does not write",
            path=md_path, hint="use it as a checklist and make the ticked changes in Letta, or "
                               "migrate the store (`memlab migrate ... --to letta`) and review that")
    blocked = [it.id for it in ticked if not it.appliable]
    if blocked:
        raise ProposalRejected(f"ticked item(s) {', '.join(blocked)} are checklist items with no "
                               "file change", path=md_path, hint="untick them")
    git_repo = _repo.open_repo(repo or proposal.fingerprint.get("repo") or proposal.store["path"])
    root = Path(git_repo.working_tree_dir)
    if not ticked:
        return ApplyResult(md_path, [], [], "", dry_run=dry_run,
                           message="no items ticked; nothing changed")
    head = _check_fresh(git_repo, proposal, md_path, ticked)
    made_from = proposal.fingerprint.get("head_sha")
    if head != made_from:
        return _finish(git_repo, root, proposal, ticked, md_path, made_from, head, dry_run)
    if branch:
        tip = _hardened.rev_parse(root, f"refs/heads/{branch}") \
            if _hardened.returncode(root, "check-ref-format", "--branch", branch) == 0 else None
        if tip is not None and _applied_in(git_repo, tip, proposal, ticked):
            return ApplyResult(md_path, [it.id for it in ticked], [], "", commit=tip,
                               branch=branch, dry_run=dry_run,
                               message=f"already applied on branch {branch} in {tip[:12]}",
                               notes=[f"already applied on branch {branch} in commit {tip[:12]}; "
                                      "nothing to do"])
    pathspec = None
    if kind == "elfmem_substrate":
        first = next((it.change.get("file") for it in ticked if it.change.get("file")), "")
        pathspec = first.split("memory/", 1)[0] or None if "memory/" in first else None
    dirty = _repo.dirty_paths(git_repo, pathspec)
    if dirty:
        raise ProposalRejected(f"the working tree has uncommitted changes ({', '.join(dirty[:5])}"
                               f"{', ...' if len(dirty) > 5 else ''})", path=root,
                               hint="commit or stash them, then apply again")
    edits = _Edits(git_repo, head)
    for it in ticked:
        _apply_item(edits, it)
    changes = edits.changes()
    diff = edits.diff()
    for p, data in changes.items():
        if data is not None and edits.original[p] is None and ((root / p).exists()
                                                               or (root / p).is_symlink()):
            raise ProposalRejected(f"{p} is untracked in the working tree and would be overwritten",
                                   path=root / p, hint="move it away or commit it, then apply again")
    result = ApplyResult(md_path, [it.id for it in ticked], sorted(changes), diff, dry_run=dry_run,
                         branch=branch or _repo.current_branch(git_repo))
    if dry_run or not changes:
        return result
    if branch and _hardened.returncode(root, "check-ref-format", "--branch", branch) != 0:
        # Checked before any object is written, so a bad name leaves the object store as it was.
        raise ProposalRejected(f"{branch!r} is not a valid branch name", path=root)
    _refuse_locks(root, branch or _repo.current_branch(git_repo), index=not branch)
    message = _message(proposal, ticked, md_path)
    modes = {p: _repo.mode_at(git_repo, head, p) or "100644" for p in changes}
    commit = _commit(root, head, changes, modes, message)
    if branch:
        if not _hardened.update_ref(root, f"refs/heads/{branch}", commit, _ZERO,
                                    message="memlab review apply"):
            raise ProposalRejected(f"branch {branch!r} already exists", path=root,
                                   hint="choose a new branch name, or omit branch to commit on the "
                                        "current one")
        result.notes.append(f"created branch {branch} at {commit[:12]}; the checkout is unchanged "
                            f"(git switch {branch} to see it)")
    else:
        old = {p: (None if t is None else t.encode("utf-8")) for p, t in edits.original.items()}
        with _signals_deferred():
            # The commit point: HEAD's branch moves only if it is still the commit we read.
            if not _hardened.update_ref(root, "HEAD", commit, head, message="memlab review apply"):
                if _hardened.rev_parse(root, "HEAD") != head:
                    raise StaleProposal("HEAD moved while applying; nothing was committed",
                                        path=md_path)
                _refuse_locks(root, _repo.current_branch(git_repo), index=False)
                raise RepoError("git could not move HEAD to the new commit; nothing was "
                                "committed", path=root)
            skipped = _sync_worktree(root, commit, changes, old, modes, committed=True)
        if skipped:
            result.notes.append("changed while applying, left as they were: " + ", ".join(skipped))
    result.commit = commit
    result.message = message
    return result


def _finish(git_repo: Any, root: Path, proposal: Proposal, ticked: list[Item], md_path: Path,
            made_from: str, head: str, dry_run: bool) -> ApplyResult:
    """HEAD is already this proposal's apply commit: bring the working tree along (a run killed
    after the branch moved) and say so."""
    edits = _Edits(git_repo, made_from)
    for it in ticked:
        _apply_item(edits, it)
    changes = edits.changes()
    old = {p: (None if t is None else t.encode("utf-8")) for p, t in edits.original.items()}
    modes = {p: _repo.mode_at(git_repo, head, p) or _repo.mode_at(git_repo, made_from, p)
             or "100644" for p in changes}
    result = ApplyResult(md_path, [it.id for it in ticked], sorted(changes), edits.diff(),
                         commit=head, branch=_repo.current_branch(git_repo), dry_run=dry_run,
                         message=f"already applied in {head[:12]}")
    behind = [p for p, data in changes.items()
              if (read_regular(root / p) if (root / p).is_file() else None) != data]
    behind += [p for p in _index_behind(root, head, sorted(changes)) if p not in behind]
    if dry_run or not behind:
        result.notes.append(f"already applied in commit {head[:12]}; nothing to do")
        return result
    _refuse_locks(root, None, index=True)
    with _signals_deferred():
        skipped = _sync_worktree(root, head, changes, old, modes, committed=True)
    result.notes.append(f"already applied in commit {head[:12]}; finished bringing "
                        f"{len(behind) - len(skipped)} file(s) of the working tree and index up "
                        "to it")
    if skipped:
        result.notes.append("changed since, left as they were: " + ", ".join(skipped))
    return result
