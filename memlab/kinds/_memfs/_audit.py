"""The memfs audit: hook breaches, limits, read-only files, churn, growth and the prompt.

For a Letta memfs repo, a Souveraine agent dir or a committed elfmem substrate:

* every commit in history is re-checked against the Letta Code pre-commit hook in force when
  it was made (:func:`memlab.formats.letta_memfs.hook_variant_at`); a violation in a commit
  the hook would have run on (agent, reflection subagent or human; not the server, not a
  merge) means the hook was bypassed with ``--no-verify``;
* ``limit`` breaches: files written over their declared limit, which the memfs write path
  never checks (letta#3241, LET-8133);
* ``read_only`` files edited, renamed, deleted or stripped of their flag;
* churn and growth per file, domain and author kind; what reaches the system prompt at every
  commit of the ref's first-parent chain (:func:`prompt_at` for one commit).

The parts live in sibling modules: ``_prompt`` (prompt size), ``_checks`` (hook,
``read_only`` and ``limit`` checks of every commit), ``_audit_files`` (tables of the files at the
audited commit), ``_audit_constraints`` (Letta Code's memory constraints), ``_churn`` (churn,
growth and the figure data) and ``_report`` (headline and summary); this module assembles them
into :func:`audit_memfs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from memlab.audits._base import Audit
from memlab.audits._integrity import memfs_integrity
from memlab.kinds import MEMFS_KINDS
from memlab.kinds._memfs._audit_constraints import constraint_history, constraints_table
from memlab.kinds._memfs._audit_files import duplicate_trees, over_limit_table, readers
from memlab.kinds._memfs._checks import (
    fill_suspects,
    hook_basis,
    hook_violations,
    limit_breach_table,
    no_verify_table,
    parse_cache,
    read_only_changes,
    violations_frame,
)
from memlab.kinds._memfs._churn import (
    author_kind_table,
    churn_matrix,
    churn_table,
    churn_weekly_table,
    commit_table,
    commits_by_kind,
    first_parent_chain,
    growth_tables,
    size_over_time,
)
from memlab.kinds._memfs._load import LETTA_LAYOUTS, file_versions, files_at
from memlab.kinds._memfs._prompt import (
    PromptSnapshot,
    as_store,
    letta_token_estimate,
    prompt_at,
    prompt_share,
)
from memlab.kinds._memfs._report import headline_figures, layout_notes, summary_text
from memlab.store import Problems, Store, parse_as_of

__all__ = [
    "audit_memfs",
    "prompt_at",
    "prompt_share",
    "PromptSnapshot",
    "hook_violations",
    "hook_basis",
    "duplicate_trees",
    "size_over_time",
    "commits_by_kind",
    "churn_matrix",
    "MEMFS_KINDS",
]


def audit_memfs(store: Store | str | Path, *, as_of: Any = None, **_: Any) -> Audit:
    """Audit a memory repo. Tables:

    ``hook_violations`` (every hook error in history), ``no_verify_commits`` (commits that must
    have bypassed the hook), ``read_only`` (protected files changed), ``over_limit`` (files over
    their limit now), ``limit_breaches`` (commits that wrote a file over its limit),
    ``letta_tokens`` (Letta layouts: ``letta memory tokens``' own per-file estimate at the
    audited commit), ``constraints`` (each error Letta Code 0.34.12's validator and v2 hook report
    on the
    audited tree, under the checkout's layout policy), ``constraint_history`` (the validator
    over the ref's first-parent chain: which commit first broke each rule on each path),
    ``integrity`` (one row per rewrite that lost commits no ref holds and no later commit
    re-applied, a branch and its upstream that no longer share the history they shared; where
    the reflogs are gone, the headline's ``integrity_findings`` is None and the commits no ref
    or reflog reaches are listed: :mod:`memlab.audits._integrity`; the repository as it is now,
    whatever ``as_of``),
    ``churn`` (per file), ``churn_weekly`` (file × week, for a heatmap), ``author_kinds``,
    ``size_by_domain`` and ``prompt_history`` (along the ref's first-parent chain), ``prompt``
    (what reaches the prompt at the ref, or at ``as_of``), ``problems``.

    ``as_of`` (a date or time, UTC when naive) audits the repo as it was then: later commits
    are ignored. The store's ``history.no_verify_suspect`` column is filled in place.
    """
    store = as_store(store)
    cutoff = None if as_of is None else parse_as_of(as_of)
    layout = store.meta["layout"]
    hist = store.history
    versions = file_versions(store) if store.meta.get("ref_sha") else None
    if cutoff is not None:
        hist = hist[hist["committed_at"] <= cutoff]
        if versions is not None:
            versions = versions[versions["committed_at"] <= cutoff]
    tables: dict[str, pd.DataFrame] = {}

    viol = (
        hook_violations(Store(store.kind, store.path, {"history": hist}, meta=store.meta), versions)
        if versions is not None
        else violations_frame([])
    )
    tables["hook_violations"] = viol
    suspects = viol[viol["no_verify_suspect"].fillna(False)]
    fill_suspects(store, suspects)
    tables["no_verify_commits"] = no_verify_table(suspects)

    parse = parse_cache()
    # read_only is a Letta (and Souveraine) protection; a generic tree has no such rule.
    tables["read_only"] = read_only_changes(
        None if layout == "generic_markdown" else versions, hist, parse
    )
    tables["limit_breaches"] = limit_breach_table(versions, hist, parse, layout)
    tables["churn"] = churn_table(hist, layout)
    tables["churn_weekly"] = churn_weekly_table(hist, layout)
    tables["author_kinds"] = author_kind_table(hist)
    tables["commits"] = commit_table(
        store.frames["history"]
        if cutoff is None
        else store.frames["history"][store.frames["history"]["committed_at"] <= cutoff]
    )
    chain = first_parent_chain(store, hist)
    sizes, prompt_hist = growth_tables(
        versions, chain, hist, parse, layout, store.meta.get("agent")
    )
    tables["size_by_domain"], tables["prompt_history"] = sizes, prompt_hist

    at = store.meta.get("ref_sha")
    if cutoff is not None and chain:
        at = chain[-1]
    snapshot = prompt_at(store, at) if at else None
    files_now = store.files if (cutoff is None or at is None) else files_at(store, at)
    tables["prompt"] = snapshot.files if snapshot is not None else pd.DataFrame()
    tables["over_limit"] = over_limit_table(files_now)
    tables["duplicate_trees"] = duplicate_trees(files_now)
    tables["readers"] = readers(files_now if layout in LETTA_LAYOUTS else files_now.iloc[0:0])
    if at and layout in LETTA_LAYOUTS:
        tables["letta_tokens"] = letta_token_estimate(store, at)
    tables["constraints"], unjudged = constraints_table(store, at)
    tables["constraint_history"] = constraint_history(store, versions, chain)
    tables["integrity"] = memfs_integrity(store)
    problems = Problems()
    problems.extend(store.problems)
    for path in unjudged:
        problems.add(
            path,
            "not_checked",
            "over memlab's read cap: Letta Code's character "
            "limits and frontmatter rules were not judged for this file",
        )
    tables["problems"] = problems.frame()
    headline = headline_figures(store, hist, tables, snapshot, files_now, cutoff)
    notes = layout_notes(store, layout)
    return Audit(
        "memfs", store.name, tables, headline, summary_text(store, headline, tables), notes
    )
