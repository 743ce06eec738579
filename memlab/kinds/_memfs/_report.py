"""The memfs audit's headline numbers, its findings count, its notes and its terminal summary."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab._escape import terminal_lines
from memlab._metrics import max_limit_ratio
from memlab.formats import letta_memfs as fmt
from memlab.kinds._memfs._checks import HOOKED_KINDS
from memlab.kinds._memfs._load import LETTA_LAYOUTS, is_memory_path
from memlab.kinds._memfs._prompt import PromptSnapshot
from memlab.store import Store

__all__ = ["headline_figures", "finding_counts", "layout_notes", "summary_text"]


def _iso(ts: Any) -> str | None:
    return None if ts is None or pd.isna(ts) else pd.Timestamp(ts).isoformat()


def headline_figures(
    store: Store,
    hist: pd.DataFrame,
    tables: dict[str, pd.DataFrame],
    snapshot: PromptSnapshot | None,
    files: pd.DataFrame,
    cutoff,
) -> dict[str, Any]:
    commits = hist.drop_duplicates("sha")
    kinds = commits["author_kind"].astype("string").value_counts()
    ro = tables["read_only"]
    churn = tables["churn"]
    layout = store.meta["layout"]
    memory = churn["memory"].fillna(False).astype(bool) if len(churn) else pd.Series(dtype=bool)
    mem_churn, other_churn = churn[memory], churn[~memory]
    sizes = tables["size_by_domain"]
    last_sizes = (
        sizes[sizes["sha"] == sizes["sha"].iloc[-1]]
        if len(sizes)
        else pd.DataFrame({"memory": pd.Series(dtype=bool), "bytes": pd.Series(dtype="int64")})
    )
    # None, never 0, for what was not checked: history checks need a commit to walk from; the
    # hook guards Letta layouts only; read_only is a Letta and Souveraine rule
    history = bool(store.meta.get("ref_sha"))
    hooked = history and layout in LETTA_LAYOUTS
    read_only = history and layout != "generic_markdown"

    def checked(flag: bool, value: Any) -> Any:
        return value if flag else None

    head: dict[str, Any] = {
        "kind": store.kind,
        "layout": store.meta["layout"],
        "as_of": _iso(cutoff),
        "files": int(len(files)),
        "prompt_files": int(len(snapshot.files)) if snapshot else None,
        "prompt_chars": snapshot.total_chars if snapshot else None,
        "prompt_tokens": snapshot.total_tokens if snapshot else None,
        "commits": int(len(commits)),
        "branches": int(commits["branch"].nunique()),
        "authors": int(commits["author_email"].str.lower().nunique()),
        "reflection_merges": int(commits["message"].str.startswith("merge(reflection)").sum()),
        "hook_violations": checked(hooked, int(len(tables["hook_violations"]))),
        "no_verify_commits": checked(hooked, int(len(tables["no_verify_commits"]))),
        "over_limit_files": int(len(tables["over_limit"])),
        "limit_breach_commits": checked(history, int(tables["limit_breaches"]["sha"].nunique())),
        # the largest body/limit of any file with a limit (over 1: over it); None when no file
        # has one (v2 keeps limits in .memfs.config.json, judged in constraints)
        "max_limit_ratio": _max_limit_ratio(files, layout),
        "read_only_edits": checked(read_only, int((ro["change"] == "edited").sum())),
        "read_only_flag_removals": checked(read_only, int((ro["change"] == "flag_removed").sum())),
        "read_only_deletions": checked(read_only, int((ro["change"] == "deleted").sum())),
        "uncommitted_files": int(store.meta.get("uncommitted") or 0),
        "shallow": bool(store.meta.get("shallow")),
        "problems": int(len(store.problems)),
        "lines_changed": int(churn["churn"].sum()) if len(churn) else 0,
        "top_churn_file": str(mem_churn["path"].iloc[0]) if len(mem_churn) else None,
        "top_churn_other_file": str(other_churn["path"].iloc[0]) if len(other_churn) else None,
        "memory_files": int(files["path"].map(lambda p: is_memory_path(str(p), layout)).sum())
        if len(files)
        else 0,
        "memory_bytes": int(last_sizes.loc[last_sizes["memory"] == True, "bytes"].sum()),  # noqa: E712
        "other_bytes": int(last_sizes.loc[last_sizes["memory"] == False, "bytes"].sum()),  # noqa: E712
        "duplicated_trees": int(len(tables["duplicate_trees"])),
        "readers_disagree_files": int(len(tables["readers"])),
        "layout_policy": store.meta.get("layout_policy"),
        # `letta memory tokens`: Letta Code's own estimate (None: not a Letta layout)
        "letta_prompt_tokens": (
            int(tables["letta_tokens"]["tokens"].sum()) if "letta_tokens" in tables else None
        ),
        # rewrites and lost commits the reflogs and refs show (memlab.audits._integrity); None
        # when the evidence is gone (no reflogs, expired, not read), with integrity_reason
        "integrity_findings": (
            int(len(tables["integrity"]))
            if tables["integrity"].attrs.get("checked", True)
            else None
        ),
        "integrity_reason": tables["integrity"].attrs.get("reason"),
        "palace_files": (int(files["path"].str.startswith("palace/").sum()) if len(files) else 0)
        if layout in LETTA_LAYOUTS
        else None,
        # Letta Code 0.34.12's validator on the audited tree; None: not checked (not a Letta
        # layout, or no commit to validate)
        "constraint_errors": (
            int(len(tables["constraints"])) if tables["constraints"].attrs.get("checked") else None
        ),
        "constraint_paths": (
            int(tables["constraints"]["path"].nunique())
            if tables["constraints"].attrs.get("checked")
            else None
        ),
        "letta_evidence": len(store.meta.get("letta_evidence") or []),
        "first_commit": _iso(commits["authored_at"].min()) if len(commits) else None,
        "last_commit": _iso(commits["authored_at"].max()) if len(commits) else None,
    }
    for kind in fmt.AUTHOR_KINDS:
        head[f"commits_{kind}"] = int(kinds.get(kind, 0))
    head["findings"] = _findings(head, tables)
    return head


def _max_limit_ratio(files: pd.DataFrame, layout: str) -> float | None:
    """:func:`memlab._metrics.max_limit_ratio` of the files, each at the limit its
    ``over_limit`` is judged by (a Letta v1 file without one: the server's default)."""
    if not len(files):
        return None
    limits = files["limit"].astype("Float64")
    if layout in ("letta_v1", "letta_v1_memory_prefix"):
        limits = limits.fillna(float(fmt.DEFAULT_LIMIT))  # the server's default block limit
    return max_limit_ratio(files["body_chars"], limits)


def _findings(head: dict[str, Any], tables: dict[str, pd.DataFrame]) -> int:
    """What needs a person: hook bypasses, read_only files changed by someone the hook guards,
    limit breaches written by anyone but memlab's migration (which copies a source as it is
    and flags it), files Letta's readers disagree on, copied trees, load problems, each
    ``integrity`` row (a rewritten history, lost commits), and each
    error Letta Code 0.34.12's validator reports on the audited tree (it blocks the agent's
    next commit). Files over their limit now are a state (``over_limit_files``), not a
    finding."""
    return int(sum(finding_counts(head, tables).values()))


def finding_counts(head: dict[str, Any], tables: dict[str, pd.DataFrame]) -> dict[str, int]:
    """The memfs audit's ``findings`` by the audit table each comes from (``problems``: load
    problems). Every other key is a table of :data:`memlab._metrics.FINDINGS`, the list a
    scheduled run records findings by, so a kind the audit counts is one the run names."""
    ro = tables["read_only"]
    guarded = ro[ro["author_kind"].astype("string").isin([*HOOKED_KINDS, "human"])]
    breaches = tables["limit_breaches"]
    breaches = breaches[breaches["author_kind"].astype("string") != "migration"]
    return {
        "no_verify_commits": int(head["no_verify_commits"] or 0),
        "read_only": int(len(guarded)),
        "limit_breaches": int(breaches["sha"].nunique()),
        "readers": int(head["readers_disagree_files"]),
        "duplicate_trees": int(head["duplicated_trees"]),
        "problems": int(head["problems"]),
        "constraints": int(head["constraint_errors"] or 0),
        "integrity": int(head["integrity_findings"] or 0),
    }


def layout_notes(store: Store, layout: str) -> list[str]:
    notes = []
    if layout in ("souveraine", "elfmem_substrate"):
        notes.append(f"{layout}: commits run no Letta hook, so hook checks do not apply")
    if layout == "generic_markdown":
        notes.append(
            "generic_markdown: a memfs-like tree with no sign that Letta made or uses it "
            "(no .letta/config.json, Letta hook, agent or server commits): audited for "
            "size and churn only, never against Letta's hook"
        )
    elif layout in LETTA_LAYOUTS and store.meta.get("letta_evidence"):
        notes.append("Letta layout because: " + "; ".join(store.meta["letta_evidence"]))
    if store.meta.get("shallow"):
        notes.append("shallow clone: churn and growth start at the clone boundary")
    if store.meta.get("branch") is None and store.meta.get("head_sha"):
        notes.append("detached HEAD: the audited ref may not be the branch the agent uses")
    return notes


def summary_text(store: Store, h: dict[str, Any], tables: dict[str, pd.DataFrame]) -> str:
    prompt = (
        f"{h['prompt_files']} files, {h['prompt_chars']} chars (~{h['prompt_tokens']:.0f} tokens)"
        if h["prompt_files"] is not None
        else "– (no commit to read it at)"
    )
    lines = [
        f"memfs audit of {store.name} "
        f"({h['layout']}{', as of ' + h['as_of'] if h['as_of'] else ''})",
        f"  files: {h['files']}; in the prompt: {prompt}",
        f"  commits: {h['commits']} on {h['branches']} branch(es) by {h['authors']} author(s): "
        + ", ".join(f"{k} {h['commits_' + k]}" for k in fmt.AUTHOR_KINDS if h["commits_" + k]),
        (
            f"  hook: {h['hook_violations']} violation(s); "
            f"{h['no_verify_commits']} commit(s) must have "
            "used --no-verify"
        )
        if h["hook_violations"] is not None
        else f"  hook: not checked ({h['layout']}: Letta Code's hook does not guard "
        "this repository)"
        if h["layout"] not in LETTA_LAYOUTS
        else "  hook: not checked (no commit history)",
    ]
    for row in tables["no_verify_commits"].head(10).itertuples(index=False):
        lines.append(
            f"    {row.sha[:10]} {str(row.authored_at)[:10]} {row.author_kind}: {row.rules} "
            f"in {row.paths} ({row.variant} hook: {row.hook_basis})"
        )
    if h["constraint_errors"] is None:
        lines.append(
            "  constraints: not checked (Letta Code validates Letta memory repositories' "
            "commits only)"
        )
    else:
        lines.append(
            f"  constraints (Letta Code 0.34.12, {h['layout_policy']} policy): "
            f"{h['constraint_errors']} error(s) on {h['constraint_paths']} path(s)"
        )
        for row in tables["constraints"].head(10).itertuples(index=False):
            lines.append(f"    {row.message}")
    if h["integrity_findings"] is None:
        lines.append(
            f"  integrity: not checked ({h['integrity_reason']})"
            + (
                f"; {len(tables['integrity'])} row(s) in tables['integrity']"
                if len(tables["integrity"])
                else ""
            )
        )
    else:
        lines.append(
            f"  integrity: {h['integrity_findings']} finding(s) in the reflogs and refs"
            + ("; see tables['integrity']" if h["integrity_findings"] else "")
            + (f" ({h['integrity_reason']})" if h["integrity_reason"] else "")
        )
    for row in tables["integrity"].head(8).itertuples(index=False):
        lines.append(f"    {row.kind}: {row.detail}")
    lines.append(
        f"  limit: {h['over_limit_files']} file(s) over their limit now; "
        + (
            f"{h['limit_breach_commits']} commit(s) wrote over a limit (letta#3241)"
            if h["limit_breach_commits"] is not None
            else "commits: not checked (no commit history)"
        )
    )
    for row in tables["over_limit"].head(5).itertuples(index=False):
        ratio = f"{row.ratio:.2f}x" if pd.notna(row.ratio) else "limit not positive"
        lines.append(f"    {row.path}: {row.body_chars}/{row.limit} chars ({ratio})")
    if h["read_only_edits"] is None:
        lines.append(
            "  read_only: not checked ("
            + (
                "generic_markdown: no Letta rule protects these files)"
                if h["layout"] == "generic_markdown"
                else "no commit history)"
            )
        )
    else:
        lines.append(
            f"  read_only: {h['read_only_edits']} edit(s), {h['read_only_flag_removals']} "
            f"flag removal(s), {h['read_only_deletions']} deletion(s)"
        )
    if h["top_churn_file"]:
        lines.append(
            f"  churn: {h['lines_changed']} lines changed; most churned: {h['top_churn_file']}"
        )
    lines.append(f"  uncommitted: {h['uncommitted_files']} file(s); problems: {h['problems']}")
    if h["readers_disagree_files"]:
        lines.append(
            f"  readers: Letta Code and the Letta server read {h['readers_disagree_files']} "
            "file(s) differently (table 'readers')"
        )
    if h["duplicated_trees"]:
        lines.append(
            f"  copies: {h['duplicated_trees']} folder(s) duplicate another folder's files "
            "(table 'duplicate_trees')"
        )
    lines.append(f"  findings: {h['findings']}")
    return terminal_lines(lines)
