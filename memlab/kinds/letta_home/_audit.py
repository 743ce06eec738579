"""Audit of a Letta Code home: is reflection working, and how is memory written?

Reflection (letta-ai/letta-code#4266): a conversation whose steps since the last successful
reflection reached the configured trigger, with a pass started since and none succeeded, is
``reflection_stalled`` (Letta Code prints one status line per failed pass and moves on); a
worktree under ``memory-worktrees/`` older than a pass can run is a ``leftover_worktree``
(``finalizeReflectionMemoryWorktree`` removes its worktree on every outcome, so one on disk is
a pass that never finished). Writes (#4267, #2906): who wrote to each shared-memory repository,
paths that differ only by case, and unhealthy memory writes read from history without an LLM.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from memlab.audits._base import Audit
from memlab.store import Store, parse_as_of

__all__ = ["audit_letta_home", "IN_FLIGHT", "GROWTH_COMMITS", "NEAR_DUPLICATE", "SESSION_NAME"]

#: How long a reflection pass may run before memlab calls it not in flight: Letta Code's
#: subagent timeout is 10 minutes (``DEFAULT_SUBAGENT_TIMEOUT_MS``) and its git calls 30 s
#: (``GIT_TIMEOUT_MS``); memlab allows an hour, so a pass running now is never a finding.
IN_FLIGHT = pd.Timedelta(hours=1)
#: A core file changed this many times, each only adding lines, "only grows" (#2906's
#: dumping-ground file). An agent learning a few facts about its user appends to human.md a few
#: times: that is memory working, not a dumping ground, so the bar is ten changes, never one
#: line trimmed.
GROWTH_COMMITS = 10
#: Word 3-shingle Jaccard similarity from which two memory files are near duplicates.
NEAR_DUPLICATE = 0.8
#: A core file named like a session record (#2906: session summaries kept in core memory): a
#: session, a recap or stand-up, or a date. Not "summary" or "journal" alone: a core
#: ``project-summary.md`` is a fine place for what a project is.
SESSION_NAME = re.compile(r"(session|recap|standup|\d{4}-\d{2}-\d{2})", re.IGNORECASE)
_MIN_CORRECTION = 24  # characters: shorter added lines (headings, frontmatter) are not a fact


def _last_pass(store: Store, agent_id: str, conversation_id: str) -> str | None:
    """What the last reflection pass on the conversation left, in words (the local backend keeps
    each pass's subagent conversation; a cloud home has none: None, not checked)."""
    p = store.passes
    p = p[(p["agent_id"] == agent_id) & (p["conversation_id"] == conversation_id)]
    if p.empty:
        return None
    last = p.iloc[-1]  # the loader sorts passes by start
    when = "" if pd.isna(last.started_at) else f" started {last.started_at:%Y-%m-%d %H:%M}"
    head = f"last pass (reflection subagent {last.subagent_name or last.subagent_id}){when}: "
    if not pd.isna(last.last_tool_result):
        said = " ".join(str(last.last_tool_result).split())
        return head + f"its last tool call ({last.last_tool}) returned: {said}"
    if last.tool_calls:
        return head + f"{last.tool_calls} tool call(s), no tool result recorded"
    return head + "no tool call recorded"


def _stalled(store: Store, as_of: pd.Timestamp) -> pd.DataFrame:
    conv = store.conversations.merge(
        store.agents[["agent_id", "trigger", "step_count"]], on="agent_id", how="left"
    )
    rows = []
    for c in conv.itertuples(index=False):
        steps = c.steps_since_last_successful_reflection
        started, succeeded = c.last_reflection_started_at, c.last_reflection_succeeded_at
        if c.trigger != "step-count" or pd.isna(steps) or pd.isna(c.step_count):
            continue
        if steps < c.step_count or pd.isna(started):
            continue  # the trigger has not fired, or no pass has started: nothing to judge
        if not pd.isna(succeeded) and succeeded >= started:
            continue  # the last pass succeeded
        if as_of - started <= IN_FLIGHT:
            continue  # a pass is running now
        rows.append(
            {
                "agent_id": c.agent_id,
                "conversation_id": c.conversation_id,
                "steps_since_success": int(steps),
                "trigger": int(c.step_count),
                "margin": int(steps - c.step_count),
                "last_started_at": started,
                "last_succeeded_at": succeeded,
                "hours_since_success": (
                    None if pd.isna(succeeded) else (as_of - succeeded).total_seconds() / 3600
                ),
                "passes_since_success": c.payloads_since_success,
                "last_pass": _last_pass(store, c.agent_id, c.conversation_id),
                "rule": (
                    f"steps since the last successful reflection {int(steps)} >= trigger "
                    f"{int(c.step_count)} (step-count), last pass started {started:%Y-%m-%d %H:%M} "
                    "with no success since, more than "
                    f"{int(IN_FLIGHT.total_seconds() // 60)} min before as_of"
                ),
            }
        )
    cols = [
        "agent_id",
        "conversation_id",
        "steps_since_success",
        "trigger",
        "margin",
        "last_started_at",
        "last_succeeded_at",
        "hours_since_success",
        "passes_since_success",
        "last_pass",
        "rule",
    ]
    return pd.DataFrame(rows, columns=cols)


def _leftover(store: Store, as_of: pd.Timestamp) -> pd.DataFrame:
    wt = store.worktrees
    keep = wt["created_at"].isna() | (as_of - wt["created_at"] > IN_FLIGHT)
    out = wt[keep].copy()
    out["age_hours"] = [
        None if pd.isna(t) else (as_of - t).total_seconds() / 3600 for t in out["created_at"]
    ]
    return out[
        [
            "agent_id",
            "name",
            "label",
            "created_at",
            "age_hours",
            "branch",
            "commits_ahead",
            "n_uncommitted",
            "n_untracked",
            "uncommitted",
            "untracked",
        ]
    ].reset_index(drop=True)


def _merge_share(store: Store) -> pd.DataFrame:
    a = store.agents.rename(columns={"reflection_merge_share": "share"})
    cols = ["agent_id", "lines_changed", "by_reflection", "by_memory_worker", "share"]
    return a[a["memory"].fillna(False)][cols].reset_index(drop=True)


def _shared_writers(store: Store) -> pd.DataFrame:
    w = store.writes[store.writes["role"] == "shared"].drop_duplicates(["agent_id", "repo", "sha"])
    cols = ["agent_id", "repo", "writer", "writer_agent", "author_email", "commits", "last_at"]
    if w.empty:
        return pd.DataFrame(columns=cols)
    g = (
        w.groupby(
            ["agent_id", "repo", "writer", "writer_agent", "author_email"],
            dropna=False,
            observed=True,
        )
        .agg(commits=("sha", "nunique"), last_at=("committed_at", "max"))
        .reset_index()
    )
    return g[cols].sort_values(["agent_id", "repo", "commits"], ascending=[True, True, False])


def _case_collisions(store: Store) -> pd.DataFrame:
    rows = []
    for (agent_id, repo), g in store.tree.groupby(["agent_id", "repo"], observed=True):
        spellings: dict[str, set[str]] = {}
        for path in g["path"].astype(str):
            parts = path.split("/")
            for i in range(1, len(parts) + 1):
                prefix = "/".join(parts[:i]) + ("" if i == len(parts) else "/")
                spellings.setdefault(prefix.casefold(), set()).add(prefix)
        for key, names in sorted(spellings.items()):
            if len(names) > 1:
                rows.append(
                    {"agent_id": agent_id, "repo": repo, "key": key, "paths": sorted(names)}
                )
    return pd.DataFrame(rows, columns=["agent_id", "repo", "key", "paths"])


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + 3]) for i in range(max(0, len(words) - 2))}


def _unhealthy(store: Store) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    files = store.files
    core = files[files["in_prompt"].fillna(False)]
    # a core file that only grows: every change to it on the memory branch added lines and
    # removed none for good (a last line re-added whole is not removed), GROWTH_COMMITS or
    # more times
    w = store.writes[
        store.writes["on_main"].fillna(False) & ~store.writes["is_merge"].fillna(False)
    ]
    for c in core.itertuples(index=False):
        g = w[(w["agent_id"] == c.agent_id) & (w["repo"] == c.repo) & (w["path"] == c.path)]
        g = g[g["change_type"].astype("string") == "M"]
        if len(g) >= GROWTH_COMMITS and (g["lines_removed"].fillna(1) == 0).all():
            rows.append(
                {
                    "agent_id": c.agent_id,
                    "repo": c.repo,
                    "pattern": "core_only_grows",
                    "path": c.path,
                    "evidence": f"{len(g)} changes, {int(g['lines_added'].sum())} lines added, "
                    "none removed",
                }
            )
        name = str(c.path).rsplit("/", 1)[-1]
        m = SESSION_NAME.search(name)
        if m:
            rows.append(
                {
                    "agent_id": c.agent_id,
                    "repo": c.repo,
                    "pattern": "session_file_in_core",
                    "path": c.path,
                    "evidence": f"a core (in-prompt) file named {m.group(0)!r}",
                }
            )
    # the same correction written again: one added line (normalised) in two or more commits
    added = store.added_lines.copy()
    added["key"] = pd.Series(
        [" ".join(str(x).lower().split()) for x in added["line"]], index=added.index, dtype="string"
    )
    added = added[added["key"].str.len() >= _MIN_CORRECTION]
    for (agent_id, repo, key), g in added.groupby(["agent_id", "repo", "key"], observed=True):
        if g["sha"].nunique() >= 2:
            rows.append(
                {
                    "agent_id": agent_id,
                    "repo": repo,
                    "pattern": "repeated_correction",
                    "path": ", ".join(sorted(set(g["path"].astype(str)))),
                    "evidence": f"added in {g['sha'].nunique()} commits: {key[:80]!r}",
                }
            )
    # near-duplicate files: word 3-shingles of the bodies
    for (agent_id, repo), g in files.groupby(["agent_id", "repo"], observed=True):
        items = [(str(p), _shingles(str(b))) for p, b in zip(g["path"], g["body"].fillna(""))]
        items = [(p, s) for p, s in items if len(s) >= 5]
        for i, (pa, sa) in enumerate(items):
            for pb, sb in items[i + 1 :]:
                sim = len(sa & sb) / len(sa | sb)
                if sim >= NEAR_DUPLICATE:
                    rows.append(
                        {
                            "agent_id": agent_id,
                            "repo": repo,
                            "pattern": "near_duplicate_files",
                            "path": f"{pa}, {pb}",
                            "evidence": f"word 3-shingle Jaccard {sim:.2f}",
                        }
                    )
    return pd.DataFrame(rows, columns=["agent_id", "repo", "pattern", "path", "evidence"])


def audit_letta_home(store: Store, *, as_of: Any = None) -> Audit:
    """Tables: ``reflection_stalled`` (one row per conversation, with the rule and its
    margin), ``leftover_worktree``, ``merges`` (reflection and memory-worker merges over time),
    ``merge_share`` (per agent, the share of memory lines their merges changed),
    ``shared_writers`` (who wrote to each shared-memory repository: agent ids, the harness,
    humans), ``case_collisions``, ``unhealthy_writes`` (#2906: ``core_only_grows``,
    ``session_file_in_core``, ``repeated_correction``, ``near_duplicate_files``), ``agents``
    and ``problems``."""
    when = parse_as_of(as_of)
    stalled = _stalled(store, when)
    leftover = _leftover(store, when)
    share = _merge_share(store)
    collisions = _case_collisions(store)
    unhealthy = _unhealthy(store)
    margins = stalled["margin"]
    headline = {
        "agents": len(store.agents),
        "conversations": len(store.conversations),
        "reflection_stalled": len(stalled),
        "leftover_worktrees": len(leftover),
        "max_steps_over_trigger": int(margins.max()) if len(margins) else None,
        "reflection_merge_share": (
            float(share["share"].dropna().mean()) if share["share"].notna().any() else None
        ),
        "case_collisions": len(collisions),
        "unhealthy_writes": len(unhealthy),
        "problems": len(store.problems),
    }
    lines = [
        f"Letta Code home {store.path}: {headline['agents']} agent(s), "
        f"{headline['conversations']} conversation(s), {len(store.memory_repos)} memory repo(s)",
    ]
    if len(stalled):
        lines.append(f"REFLECTION STALLED in {len(stalled)} conversation(s):")
        for r in stalled.itertuples():
            lines.append(f"  {r.agent_id}/{r.conversation_id}: {r.rule}")
            if isinstance(r.last_pass, str):
                lines.append(f"    {r.last_pass}")
    else:
        lines.append("reflection: no stalled conversation")
    lines.append(f"leftover worktrees: {len(leftover)}")
    for r in leftover.itertuples():
        lines.append(
            f"  {r.agent_id}/{r.name}: {r.n_uncommitted} uncommitted, {r.n_untracked} untracked"
        )
    if len(share):
        lines.append(f"merges: {len(store.merges)} reflection/memory-worker merge(s)")
    for r in share.itertuples():
        pct = "–" if r.share is None or pd.isna(r.share) else f"{r.share:.0%}"
        lines.append(
            f"  {r.agent_id}: reflection/memory-worker merges made {pct} of "
            f"{r.lines_changed} changed memory lines"
        )
    writers = _shared_writers(store)
    if len(writers):
        lines.append("shared-memory writers:")
        for r in writers.itertuples():
            who = r.writer_agent if isinstance(r.writer_agent, str) else r.author_email
            lines.append(f"  {r.agent_id}/{r.repo}: {r.writer} {who}, {r.commits} commit(s)")
    lines.append(f"case-colliding paths: {len(collisions)}")
    for r in collisions.itertuples():
        lines.append(f"  {r.agent_id}/{r.repo}: {', '.join(r.paths)}")
    lines.append(f"unhealthy writes (#2906): {len(unhealthy)}")
    for r in unhealthy.itertuples():
        lines.append(f"  {r.agent_id}/{r.repo} {r.pattern}: {r.path} ({r.evidence})")
    if len(store.problems):
        lines.append(f"problems: {len(store.problems)} (see the problems table)")
    from memlab._escape import terminal_lines

    return Audit(
        kind=store.kind,
        store_name=store.name,
        tables={
            "reflection_stalled": stalled,
            "leftover_worktree": leftover,
            "merges": store.merges,
            "merge_share": share,
            "shared_writers": writers,
            "case_collisions": collisions,
            "unhealthy_writes": unhealthy,
            "agents": store.agents,
            "problems": store.problems,
        },
        headline=headline,
        summary_text=terminal_lines(lines),
    )
