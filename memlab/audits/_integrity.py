"""History you can trust: the ``integrity`` table of the memfs and Letta server audits.

* :func:`memfs_integrity`: a memory repository whose history is not what it seems, judged from
  evidence (:mod:`memlab.kinds._memfs._integrity`): what each reflog entry says it was, and
  which commits the object store still holds and which refs reach them. Rows: one per rewrite
  that lost commits (``reset_away`` / ``amended`` / ``rebased`` / ``forced_update``: a branch or
  remote-tracking ref stopped containing commits that no ref of any kind holds now and whose
  change was not re-applied, with ``lost`` and ``reapplied`` counts, the reflog line as
  ``evidence`` and the command that recovers them), ``unrelated_upstream`` (a branch and its
  remote namesake share no commit now but did before) and ``unreachable_commits`` (where the
  reflogs are gone: commits no ref or reflog reaches). Routine work is no row: checkouts, the
  stash, a rebase or pull that re-applied every change, a reset whose old head a ref keeps
  (Letta Code's ``refs/letta-backup/pre-sync-*``), worktrees, ``gc``, shallow clones,
  unrelated branches.
  Where the reflogs are gone, ``attrs["checked"]`` is False with ``attrs["reason"]``.
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
tables) or ``git`` (a forced push, fetch, reset, amend or rebase; a history a Letta server
re-created is named in the row's detail).

Columns: kind, ref, sha, when, detail, produced_by, lost, reapplied, evidence (the last three
are null for server rows).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from memlab._numbers import missing_numbers, repeated_numbers
from memlab.kinds._memfs._integrity import memfs_rows
from memlab.store import Store, empty_frame

__all__ = ["INTEGRITY_COLUMNS", "memfs_integrity", "letta_server_integrity"]

INTEGRITY_COLUMNS = {
    "kind": "category",
    "ref": "string",
    "sha": "string",
    "when": "datetime64[ns, UTC]",
    "detail": "string",
    "produced_by": "category",
    "lost": "Int64",
    "reapplied": "Int64",
    "evidence": "string",
}


def _frame(rows: list[dict], *, checked: bool = True, reason: str | None = None) -> pd.DataFrame:
    if not rows:
        df = empty_frame(INTEGRITY_COLUMNS)
    else:
        df = pd.DataFrame(rows, columns=list(INTEGRITY_COLUMNS))
        df["when"] = pd.to_datetime(df["when"], utc=True)
        df = df.astype({k: v for k, v in INTEGRITY_COLUMNS.items() if k != "when"})
    df.attrs["checked"], df.attrs["reason"] = checked, reason
    return df


# --------------------------------------------------------------------------- memfs


def memfs_integrity(store: Store) -> pd.DataFrame:
    """The ``integrity`` rows of a memory repository, found from its reflogs and object store
    (:mod:`memlab.kinds._memfs._integrity`). ``attrs["checked"]`` is False, with
    ``attrs["reason"]``, when the evidence is gone (no reflog, expired, not read); an empty
    frame for a folder that is not a repository or has no commit."""
    root = store.meta.get("repo")
    if not root or not store.meta.get("head_sha"):
        return _frame([], checked=False, reason="no commit history")
    verdict = memfs_rows(Path(root))
    return _frame(verdict.rows, checked=verdict.checked, reason=verdict.reason)


# --------------------------------------------------------------------------- Letta server


def _same(a: Any, b: Any) -> bool:
    na, nb = (
        a is None or (not isinstance(a, str) and pd.isna(a)),
        b is None or (not isinstance(b, str) and pd.isna(b)),
    )
    return (na and nb) or (not na and not nb and str(a) == str(b))


def letta_server_integrity(store: Store) -> pd.DataFrame:
    """The ``integrity`` rows of a Letta server database's checkpoint chains (module
    docstring); soft-deleted blocks and entries are left out. A database without a
    ``block_history`` table has no chains to judge: ``attrs["checked"]`` is False, with
    ``attrs["reason"]``, as a repository without reflogs."""
    if (store.meta.get("absent") or {}).get("block_history") == ["(table)"]:
        return _frame([], checked=False, reason="no block_history table: no checkpoint chains")
    blocks = store.blocks[~store.blocks["is_deleted"].fillna(False).astype(bool)]
    history = store.block_history
    if "is_deleted" in history:
        history = history[~history["is_deleted"].fillna(False).astype(bool)]
    rows: list[dict] = []
    owner = dict(zip(history["history_id"].astype(str), history["block_id"].astype(str)))
    by_block = {
        b: g.sort_values("sequence_number", kind="stable")
        for b, g in history.groupby("block_id", sort=True)
    }
    for block in blocks.itertuples(index=False):
        bid = str(block.block_id)
        ref = f"{bid} ({block.label})"
        chain = by_block.get(bid)
        seqs = [] if chain is None else [int(s) for s in chain["sequence_number"].dropna()]
        # counted from the numbers held, never a set of 1..max nor a quadratic count: one
        # sequence number of 9e18 is one row, not 9e18 integers (issue 34)
        dupes, n_dupes = repeated_numbers(seqs)
        if n_dupes:
            more = f" ({n_dupes:,} in all)" if n_dupes > len(dupes) else ""
            rows.append(
                _row(
                    "sequence_duplicate",
                    ref,
                    None,
                    None,
                    f"sequence numbers {dupes} appear more than once{more}",
                    "direct_write",
                )
            )
        missing, n_missing = missing_numbers(seqs)
        if n_missing:
            more = f" ({n_missing:,} in all)" if n_missing > len(missing) else ""
            rows.append(
                _row(
                    "sequence_gap",
                    ref,
                    None,
                    None,
                    f"sequence numbers {missing} are missing from 1..{max(seqs)}{more}",
                    "direct_write",
                )
            )
        current = block.current_history_entry_id
        has_current = isinstance(current, str) and current != ""
        if has_current and str(current) not in owner:
            rows.append(
                _row(
                    "dangling_current",
                    ref,
                    str(current),
                    None,
                    f"current_history_entry_id {current} is no entry of block_history",
                    "direct_write",
                )
            )
        elif has_current and owner[str(current)] != bid:
            rows.append(
                _row(
                    "foreign_current",
                    ref,
                    str(current),
                    None,
                    f"current_history_entry_id {current} is an entry of block "
                    f"{owner[str(current)]}, not of this block",
                    "direct_write",
                )
            )
        if chain is None or chain.empty:
            continue
        for entry in chain.itertuples(index=False):
            if not _same(entry.label, block.label):
                rows.append(
                    _row(
                        "label_mismatch",
                        ref,
                        str(entry.history_id),
                        entry.created_at,
                        f"checkpoint {entry.sequence_number} has label {entry.label!r}, "
                        f"the block {block.label!r}",
                        "direct_write",
                    )
                )
            if "organization_id" in chain and not _same(
                entry.organization_id, block.organization_id
            ):
                rows.append(
                    _row(
                        "organization_mismatch",
                        ref,
                        str(entry.history_id),
                        entry.created_at,
                        f"checkpoint {entry.sequence_number} belongs to "
                        f"organisation {entry.organization_id}, the block to "
                        f"{block.organization_id}",
                        "direct_write",
                    )
                )
        times = list(zip(chain["sequence_number"], chain["created_at"], chain["history_id"]))
        for (s0, t0, _), (s1, t1, h1) in zip(times, times[1:]):
            if pd.notna(t0) and pd.notna(t1) and t1 < t0:
                rows.append(
                    _row(
                        "time_backwards",
                        ref,
                        str(h1),
                        t1,
                        f"checkpoint {s1} was created at {t1}, before checkpoint {s0} ({t0})",
                        "direct_write",
                    )
                )
        values = set(chain["value"].dropna().astype(str))
        if (
            isinstance(block.value, str)
            and block.value not in values
            and has_current
            and str(current) in owner
            and owner[str(current)] == bid
        ):
            cur = chain[chain["history_id"].astype(str) == str(current)].iloc[0]
            after = (
                pd.notna(block.updated_at)
                and pd.notna(cur["created_at"])
                and block.updated_at > cur["created_at"]
            )
            # Written after the current checkpoint: an edit without a checkpoint, which the
            # server makes itself (the edit_history table's edited_after_checkpoint), not a row.
            if not after:
                rows.append(
                    _row(
                        "value_tampered",
                        ref,
                        str(current),
                        block.updated_at,
                        "the value matches no checkpoint, yet updated_at is not after "
                        "the current checkpoint: only a direct write to the table does "
                        "this",
                        "direct_write",
                    )
                )
    return _frame(rows)


def _row(kind: str, ref: str, sha: str | None, when: Any, detail: str, produced_by: str) -> dict:
    return {
        "kind": kind,
        "ref": ref,
        "sha": sha,
        "when": when,
        "detail": detail,
        "produced_by": produced_by,
        "lost": None,
        "reapplied": None,
        "evidence": None,
    }
