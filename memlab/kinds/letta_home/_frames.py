"""The frames of a Letta Code home: their columns and dtypes (:data:`DTYPES`), how rows become
a typed frame (:func:`frame`), and each agent's figures (:func:`agent_figures`), so the
fleet lake's ``frames/agents`` is one row per agent with its reflection health."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab.store import categories, utc_datetimes

__all__ = ["DTYPES", "frame", "agent_figures"]

DTYPES = {
    "files": {
        "agent_id": "string",
        "repo": "string",
        "path": "string",
        "in_prompt": "boolean",
        "body": "string",
    },
    "tree": {"agent_id": "string", "repo": "string", "path": "string"},
    "added_lines": {
        "agent_id": "string",
        "repo": "string",
        "sha": "string",
        "path": "string",
        "line": "string",
    },
    "agents": {
        "agent_id": "string",
        "backend": "category",
        "name": "string",
        "path": "string",
        "memory": "boolean",
        "shared_repos": "Int64",
        "conversations": "Int64",
        "worktrees": "Int64",
        "reflection_subagents": "Int64",
        "trigger": "category",
        "step_count": "Int64",
        "settings_source": "category",
        "max_steps_since_success": "Int64",
        "conversations_over_trigger": "Int64",
        "last_reflection_succeeded_at": "datetime64[ns, UTC]",
        "merges": "Int64",
        "lines_changed": "Int64",
        "by_reflection": "Int64",
        "by_memory_worker": "Int64",
        "reflection_merge_share": "float64",
    },
    "memory_repos": {
        "agent_id": "string",
        "repo": "string",
        "role": "category",
        "path": "string",
        "kind": "category",
        "layout": "category",
        "layout_policy": "category",
        "branch": "string",
        "head": "string",
        "commits": "Int64",
        "files": "Int64",
        "backup_refs": "Int64",
        "uncommitted": "Int64",
        "problems": "Int64",
    },
    "conversations": {
        "agent_id": "string",
        "conversation_id": "string",
        "schema_version": "category",
        "state_file": "boolean",
        "total_completed_steps": "Int64",
        "reflected_completed_steps": "Int64",
        "steps_since_last_successful_reflection": "Int64",
        "steps_recorded": "Int64",
        "reflected_through_message_id": "string",
        "last_reflection_started_at": "datetime64[ns, UTC]",
        "last_reflection_succeeded_at": "datetime64[ns, UTC]",
        "transcript_rows": "Int64",
        "transcript_assistant_rows": "Int64",
        "transcript_complete": "boolean",
        "last_captured_at": "datetime64[ns, UTC]",
        "payload_files": "Int64",
        "payloads_since_success": "Int64",
        "last_payload_at": "datetime64[ns, UTC]",
        "started_since_success": "boolean",
    },
    "worktrees": {
        "agent_id": "string",
        "name": "string",
        "path": "string",
        "label": "category",
        "created_at": "datetime64[ns, UTC]",
        "expected_branch": "string",
        "registered": "boolean",
        "branch": "string",
        "head": "string",
        "commits_ahead": "Int64",
        "uncommitted": "object",
        "untracked": "object",
        "n_uncommitted": "Int64",
        "n_untracked": "Int64",
    },
    "passes": {
        "agent_id": "string",
        "subagent_id": "string",
        "subagent_name": "string",
        "conversation_found": "boolean",
        "conversation_id": "string",
        "started_at": "datetime64[ns, UTC]",
        "last_message_at": "datetime64[ns, UTC]",
        "tool_calls": "Int64",
        "last_tool": "string",
        "last_tool_result": "string",
        "last_text": "string",
    },
    "merges": {
        "agent_id": "string",
        "repo": "string",
        "merge": "string",
        "label": "category",
        "how": "category",
        "at": "datetime64[ns, UTC]",
        "subject": "string",
        "commits": "Int64",
        "lines_changed": "Int64",
    },
    "writes": {
        "agent_id": "string",
        "repo": "string",
        "role": "category",
        "sha": "string",
        "committed_at": "datetime64[ns, UTC]",
        "author_name": "string",
        "author_email": "string",
        "writer": "category",
        "writer_agent": "string",
        "on_main": "boolean",
        "is_merge": "boolean",
        "via": "category",
        "subject": "string",
        "path": "string",
        "change_type": "category",
        "lines_added": "Int64",
        "lines_deleted": "Int64",
        "lines_removed": "Int64",
    },
}


def frame(name: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    dtypes = DTYPES[name]
    df = pd.DataFrame([{c: r.get(c) for c in dtypes} for r in rows], columns=list(dtypes))
    for col, dtype in dtypes.items():
        if dtype == "datetime64[ns, UTC]":
            df[col] = utc_datetimes(df[col].astype("object").where(df[col].notna(), None))
        elif dtype == "category":
            df[col] = categories(df[col])
        elif dtype != "object":
            df[col] = df[col].astype(dtype)
    return df


_FIGURES = (
    "max_steps_since_success",
    "conversations_over_trigger",
    "last_reflection_succeeded_at",
    "merges",
    "lines_changed",
    "by_reflection",
    "by_memory_worker",
    "reflection_merge_share",
)


def agent_figures(
    agents: pd.DataFrame, conv: pd.DataFrame, merges: pd.DataFrame, writes: pd.DataFrame
) -> pd.DataFrame:
    """``agents`` with each agent's figures, none of which depends on the audit's date: the
    most steps since a successful reflection in any of its conversations, how many are at or
    over its step-count trigger (null when the trigger is not step-count), its last success,
    its merges, and the lines its memory branch changed (non-merge commits of ``memory/``),
    by reflection and by memory-worker merges, and their share."""
    out = agents.copy()
    w = writes[writes["on_main"].fillna(False) & ~writes["is_merge"].fillna(False)]
    w = w[w["role"] == "memory"]
    w = w.assign(lines=w["lines_added"].fillna(0) + w["lines_deleted"].fillna(0))
    rows: dict[str, list[Any]] = {c: [] for c in _FIGURES}
    for a in agents.itertuples(index=False):
        c = conv[conv["agent_id"] == a.agent_id]
        steps = c["steps_since_last_successful_reflection"]
        rows["max_steps_since_success"].append(steps.max() if len(c) else None)
        rows["conversations_over_trigger"].append(
            int((steps >= a.step_count).sum()) if a.trigger == "step-count" else None
        )
        rows["last_reflection_succeeded_at"].append(c["last_reflection_succeeded_at"].max())
        rows["merges"].append(int((merges["agent_id"] == a.agent_id).sum()))
        g = w[w["agent_id"] == a.agent_id]
        by = g.groupby(g["via"].astype("string").fillna("direct"))["lines"].sum()
        total = int(g["lines"].sum())
        refl, worker = int(by.get("reflection", 0)), int(by.get("memory-worker", 0))
        rows["lines_changed"].append(total)
        rows["by_reflection"].append(refl)
        rows["by_memory_worker"].append(worker)
        rows["reflection_merge_share"].append((refl + worker) / total if total else None)
    for col, values in rows.items():
        dtype = DTYPES["agents"][col]
        if dtype == "datetime64[ns, UTC]":
            out[col] = pd.Series(values, index=out.index, dtype=dtype)
        else:
            out[col] = pd.array(values, dtype=dtype)
    return out
