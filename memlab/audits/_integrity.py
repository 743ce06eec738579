"""History you can trust: the ``integrity`` table of the memfs and Letta server audits.

* :func:`memfs_integrity`: a memory repository whose history is not what it seems. Its reflogs
  are read as files (``logs/HEAD`` and ``logs/refs/**`` in the git folder); git is asked only
  read-only questions (is one commit an ancestor of another, which commits no ref reaches, what
  they changed). Rows: ``forced_update`` / ``reset_away`` / ``amended`` / ``rebased`` (a ref
  moved to a commit that does not contain where it was), ``lost_commits`` (commits a rewrite
  left reachable from no ref, still in the object store: files and lines, and the command that
  recovers them, as text), ``unrelated_upstream`` (a branch and its remote namesake share no
  commit), ``multiple_roots`` (the branches reach more than one root commit) and
  ``server_backfill`` (a Letta server "Initial commit" + "Backfill …" chain that replaced an
  earlier history: letta-ai/letta-code#2203).
* :func:`letta_server_integrity`: checkpoint chains of a Letta server (``block`` /
  ``block_history``): ``sequence_gap`` / ``sequence_duplicate``, ``dangling_current`` (the
  block's ``current_history_entry_id`` names no entry), ``foreign_current`` (it names another
  block's entry), ``label_mismatch`` / ``organization_mismatch`` (an entry's label or
  organisation is not its block's), ``time_backwards`` (a later checkpoint created earlier)
  and ``value_tampered`` (the value matches no checkpoint and ``updated_at`` is not after the
  current one). A real server makes none of these on its own: each needs a direct write to
  its tables (letta-ai/letta-code#4433). What a real server does make, an edit without a
  checkpoint (the value matches none and was written after the current one), is not a row: the
  audit's ``edit_history`` shows it.

``produced_by`` says who makes a row's kind: ``direct_write`` (a write to the database's
tables), ``git`` (a forced push, fetch, reset, amend or rebase) or ``server`` (the Letta
server re-creating a repository).

Columns: kind, ref, sha, when, detail, produced_by.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from memlab import _git
from memlab.store import Store, empty_frame

__all__ = ["INTEGRITY_COLUMNS", "memfs_integrity", "letta_server_integrity"]

INTEGRITY_COLUMNS = {"kind": "category", "ref": "string", "sha": "string",
                     "when": "datetime64[ns, UTC]", "detail": "string", "produced_by": "category"}

_ZERO = re.compile(r"^0+$")
_ENTRY = re.compile(r"^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (.*?) <[^>]*> (\d+) [+-]\d{4}\t?(.*)$")
#: Reflog lines memlab reads per file (a reflog is a few hundred lines; a hostile one is cut).
_MAX_REFLOG_LINES = 20_000


def _frame(rows: list[dict]) -> pd.DataFrame:
    if not rows:
        return empty_frame(INTEGRITY_COLUMNS)
    df = pd.DataFrame(rows, columns=list(INTEGRITY_COLUMNS))
    df["when"] = pd.to_datetime(df["when"], utc=True)
    return df.astype({k: v for k, v in INTEGRITY_COLUMNS.items() if k != "when"})


# --------------------------------------------------------------------------- memfs

def _reflogs(gdir: Path, common: Path) -> dict[str, list[tuple[str, str, int, str]]]:
    """ref name -> [(old, new, unix time, message)], oldest first, read as files."""
    out: dict[str, list[tuple[str, str, int, str]]] = {}
    files = [("HEAD", gdir / "logs" / "HEAD")]
    base = common / "logs" / "refs"
    if base.is_dir():
        for path in sorted(base.rglob("*")):
            if path.is_file() and not path.is_symlink():
                files.append(("refs/" + path.relative_to(base).as_posix(), path))
    for ref, path in files:
        try:
            if path.is_symlink() or not path.is_file():
                continue
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        entries = []
        for line in text.splitlines()[-_MAX_REFLOG_LINES:]:
            m = _ENTRY.match(line)
            if m:
                entries.append((m.group(1), m.group(2), int(m.group(4)), m.group(5)))
        if entries:
            out[ref] = entries
    return out


def _exists(repo: Path, sha: str) -> bool:
    return _git.returncode(repo, "cat-file", "-e", f"{sha}^{{commit}}") == 0


def _ancestor(repo: Path, old: str, new: str) -> bool:
    return _git.returncode(repo, "merge-base", "--is-ancestor", old, new) == 0


def _rewrite_kind(message: str) -> str:
    if message.startswith("reset:"):
        return "reset_away"
    if message.startswith("commit (amend)"):
        return "amended"
    if message.startswith("rebase"):
        return "rebased"
    return "forced_update"


def _lost(repo: Path, sha: str) -> tuple[list[str], int, int]:
    """Commits reachable from ``sha`` and from no ref, and the files and lines they added."""
    out = _git.run(repo, "rev-list", sha, "--not", "--branches", "--tags", "--remotes", "HEAD",
                   check=False).decode("ascii", "replace").split()
    if not out:
        return [], 0, 0
    stat = _git.run(repo, "log", "--numstat", "--format=", "--no-renames", sha, "--not",
                    "--branches", "--tags", "--remotes", "HEAD", check=False).decode(
        "utf-8", "replace")
    files, lines = set(), 0
    for line in stat.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3:
            files.add(parts[2])
            lines += int(parts[0]) if parts[0].isdigit() else 0
    return out, len(files), lines


def memfs_integrity(store: Store) -> pd.DataFrame:
    """The ``integrity`` rows of a memory repository (see the module docstring); empty for a
    folder that is not a repository."""
    root = store.meta.get("repo")
    if not root or not store.meta.get("head_sha"):
        return _frame([])
    repo = Path(root)
    gdir = _git.git_dir(repo)
    if gdir is None:
        return _frame([])
    common = _git.common_dir(gdir)
    rows: list[dict] = []
    lost_seen: set[str] = set()
    for ref, entries in _reflogs(gdir, common).items():
        for old, new, when, message in entries:
            if _ZERO.match(old) or _ZERO.match(new) or old == new:
                continue
            if not _exists(repo, new):
                continue
            if not _exists(repo, old):
                continue  # pruned: nothing left to compare or recover
            if _ancestor(repo, old, new):
                continue
            kind = _rewrite_kind(message)
            rows.append({"kind": kind, "ref": ref, "sha": new, "when": pd.Timestamp(when, unit="s"),
                         "detail": f"{ref} moved from {old[:12]} to {new[:12]}, which does not "
                                   f"contain it ({message[:120]!r})", "produced_by": "git"})
            if old in lost_seen:
                continue
            lost, files, lines = _lost(repo, old)
            if lost:
                lost_seen.add(old)
                rows.append({"kind": "lost_commits", "ref": ref, "sha": old,
                             "when": pd.Timestamp(when, unit="s"),
                             "detail": f"{len(lost)} commit(s) up to {old[:12]} are reachable "
                                       f"from no ref since then ({files} file(s), {lines} line(s) "
                                       "added); still in the object store. Recover them with: "
                                       f"git branch recovered-{old[:12]} {old}",
                             "produced_by": "git"})
    heads = _refs(repo, "refs/heads/")
    for name, sha in heads.items():
        for remote, rsha in _refs(repo, "refs/remotes/").items():
            if remote.split("/", 1)[-1] != name or rsha == sha:
                continue
            if _git.returncode(repo, "merge-base", sha, rsha) != 0:
                rows.append({"kind": "unrelated_upstream", "ref": f"refs/heads/{name}", "sha": sha,
                             "when": None, "detail": f"{name} ({sha[:12]}) and {remote} "
                             f"({rsha[:12]}) have no commit in common: one of them was rewritten",
                             "produced_by": "git"})
    roots = _git.run(repo, "rev-list", "--max-parents=0", "--branches", "--remotes", "--tags",
                     check=False).decode("ascii", "replace").split()
    if len(roots) > 1:
        rows.append({"kind": "multiple_roots", "ref": None, "sha": roots[0], "when": None,
                     "detail": f"the branches reach {len(roots)} root commits "
                               f"({', '.join(r[:12] for r in roots[:5])}): histories that do not "
                               "share a start were joined or replaced", "produced_by": "git"})
    rows += _backfills(store, roots, rows)
    return _frame(rows)


def _refs(repo: Path, prefix: str) -> dict[str, str]:
    out = _git.run(repo, "for-each-ref", "--format=%(objectname) %(refname)", prefix,
                   check=False).decode("utf-8", "replace")
    refs = {}
    for line in out.splitlines():
        sha, _, name = line.partition(" ")
        if name.startswith(prefix) and not name.endswith("/HEAD"):
            refs[name[len(prefix):]] = sha
    return refs


def _backfills(store: Store, roots: list[str], found: list[dict]) -> list[dict]:
    """A server ``Initial commit`` root followed by ``Backfill …`` commits that replaced an
    earlier history: another root exists, or a rewrite landed on the chain."""
    hist = store.history.drop_duplicates("sha")
    if hist.empty:
        return []
    subjects = dict(zip(hist["sha"], hist["message"].astype(str).str.split("\n").str[0]))
    children: dict[str, list[str]] = {}
    for sha, parents in zip(hist["sha"], hist["parents"]):
        for p in parents or []:
            children.setdefault(p, []).append(sha)
    rewritten_to = {r["sha"] for r in found if r["kind"] in ("forced_update", "reset_away")}
    rows = []
    for root in roots:
        if not subjects.get(root, "").startswith("Initial commit"):
            continue
        chain, cur = [root], root
        while True:
            nxt = [c for c in children.get(cur, []) if subjects.get(c, "").startswith("Backfill ")]
            if not nxt:
                break
            cur = nxt[0]
            chain.append(cur)
        if len(chain) < 2:
            continue
        reachable_rewrite = bool(rewritten_to & set(chain)) or any(
            _ancestor(Path(store.meta["repo"]), chain[-1], r) for r in rewritten_to)
        if len(roots) > 1 or reachable_rewrite:
            when = hist.set_index("sha").loc[root, "committed_at"]
            rows.append({"kind": "server_backfill", "ref": None, "sha": chain[-1], "when": when,
                         "detail": f"a server 'Initial commit' ({root[:12]}) and {len(chain) - 1} "
                                   "'Backfill …' commit(s) replaced an earlier history (the "
                                   "server re-created the repository: letta-ai/letta-code#2203)",
                         "produced_by": "server"})
    return rows


# --------------------------------------------------------------------------- Letta server

def _same(a: Any, b: Any) -> bool:
    na, nb = a is None or (not isinstance(a, str) and pd.isna(a)), \
        b is None or (not isinstance(b, str) and pd.isna(b))
    return (na and nb) or (not na and not nb and str(a) == str(b))


def letta_server_integrity(store: Store) -> pd.DataFrame:
    """The ``integrity`` rows of a Letta server database's checkpoint chains (module
    docstring); soft-deleted blocks and entries are left out."""
    blocks = store.blocks[~store.blocks["is_deleted"].fillna(False).astype(bool)]
    history = store.block_history
    if "is_deleted" in history:
        history = history[~history["is_deleted"].fillna(False).astype(bool)]
    rows: list[dict] = []
    owner = dict(zip(history["history_id"].astype(str), history["block_id"].astype(str)))
    by_block = {b: g.sort_values("sequence_number", kind="stable")
                for b, g in history.groupby("block_id", sort=True)}
    for block in blocks.itertuples(index=False):
        bid = str(block.block_id)
        ref = f"{bid} ({block.label})"
        chain = by_block.get(bid)
        seqs = [] if chain is None else [int(s) for s in chain["sequence_number"].dropna()]
        dupes = sorted({s for s in seqs if seqs.count(s) > 1})
        if dupes:
            rows.append(_row("sequence_duplicate", ref, None, None,
                             f"sequence numbers {dupes[:10]} appear more than once",
                             "direct_write"))
        missing = sorted(set(range(1, max(seqs, default=0) + 1)) - set(seqs))
        if missing:
            rows.append(_row("sequence_gap", ref, None, None,
                             f"sequence numbers {missing[:10]} are missing from 1..{max(seqs)}",
                             "direct_write"))
        current = block.current_history_entry_id
        has_current = isinstance(current, str) and current != ""
        if has_current and str(current) not in owner:
            rows.append(_row("dangling_current", ref, str(current), None,
                             f"current_history_entry_id {current} is no entry of block_history",
                             "direct_write"))
        elif has_current and owner[str(current)] != bid:
            rows.append(_row("foreign_current", ref, str(current), None,
                             f"current_history_entry_id {current} is an entry of block "
                             f"{owner[str(current)]}, not of this block", "direct_write"))
        if chain is None or chain.empty:
            continue
        for entry in chain.itertuples(index=False):
            if not _same(entry.label, block.label):
                rows.append(_row("label_mismatch", ref, str(entry.history_id), entry.created_at,
                                 f"checkpoint {entry.sequence_number} has label {entry.label!r}, "
                                 f"the block {block.label!r}", "direct_write"))
            if "organization_id" in chain and not _same(entry.organization_id,
                                                        block.organization_id):
                rows.append(_row("organization_mismatch", ref, str(entry.history_id),
                                 entry.created_at, f"checkpoint {entry.sequence_number} belongs to "
                                 f"organisation {entry.organization_id}, the block to "
                                 f"{block.organization_id}", "direct_write"))
        times = list(zip(chain["sequence_number"], chain["created_at"], chain["history_id"]))
        for (s0, t0, _), (s1, t1, h1) in zip(times, times[1:]):
            if pd.notna(t0) and pd.notna(t1) and t1 < t0:
                rows.append(_row("time_backwards", ref, str(h1), t1,
                                 f"checkpoint {s1} was created at {t1}, before checkpoint {s0} "
                                 f"({t0})", "direct_write"))
        values = set(chain["value"].dropna().astype(str))
        if isinstance(block.value, str) and block.value not in values and has_current \
                and str(current) in owner and owner[str(current)] == bid:
            cur = chain[chain["history_id"].astype(str) == str(current)].iloc[0]
            after = pd.notna(block.updated_at) and pd.notna(cur["created_at"]) and \
                block.updated_at > cur["created_at"]
            # Written after the current checkpoint: an edit without a checkpoint, which the
            # server makes itself (the edit_history table's edited_after_checkpoint), not a row.
            if not after:
                rows.append(_row("value_tampered", ref, str(current), block.updated_at,
                                 "the value matches no checkpoint, yet updated_at is not after "
                                 "the current checkpoint: only a direct write to the table does "
                                 "this", "direct_write"))
    return _frame(rows)


def _row(kind: str, ref: str, sha: str | None, when: Any, detail: str, produced_by: str) -> dict:
    return {"kind": kind, "ref": ref, "sha": sha, "when": when, "detail": detail,
            "produced_by": produced_by}
