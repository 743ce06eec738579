"""What Datasette is told about the tables: links, full-text search, facets, titles and
descriptions, and the canned queries for the headline questions.

Links are SQLite foreign keys, which Datasette draws as a link from each value to the row it
names. A link is declared only where it can hold in this database: its target column is unique
and never null (it becomes that table's primary key, which Datasette's row pages need). A value
that finds no row (a commit no longer in the history, a file deleted since) still links, to
Datasette's "not found" page: the row is truly not there. Metric names are not links (most
headline figures are not metric records); ``run_metrics`` carries each record's unit and
definition instead.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import pandas as pd

from memlab._metrics import METRICS, RETIRED
from memlab.browse._sqlite import quote

__all__ = [
    "LINKS",
    "FACETS",
    "SEARCHED",
    "LABELS",
    "QUERIES",
    "links",
    "facets",
    "searched_columns",
    "description",
    "title",
    "canned_queries",
    "column_descriptions",
    "add_search",
    "table_metadata",
]

_COMMIT, _FILE, _BLOCK = ("audit_commits", "sha"), ("files", "path"), ("blocks", "id")
_LETTA_BLOCK, _AGENT = ("blocks", "block_id"), ("agents", "agent_id")

#: (table, column) -> (target table, target column): each value links to the row it names.
LINKS: dict[tuple[str, str], tuple[str, str]] = {
    # elfmem: every reference to a block
    **{
        (t, c): _BLOCK
        for t, c in (
            ("tags", "block_id"),
            ("edges", "from_id"),
            ("edges", "to_id"),
            ("contradictions", "block_a_id"),
            ("contradictions", "block_b_id"),
            ("outcomes", "block_id"),
            ("amendments", "block_id"),
            ("blocks", "superseded_by"),
            ("co_retrieval", "from_id"),
            ("co_retrieval", "to_id"),
            ("audit_archived", "id"),
            ("audit_archived", "superseded_by"),
            ("audit_inbox", "id"),
            ("audit_recency_blocks", "id"),
            ("audit_reinforcement_top", "id"),
            ("audit_protected_superseded", "id"),
            ("audit_constitution", "live_block_id"),
            ("audit_constitution", "original_id"),
        )
    },
    # memory repositories: a finding to its commit and its file
    **{
        (t, c): _COMMIT
        for t, c in (
            ("history", "sha"),
            ("audit_hook_violations", "sha"),
            ("audit_no_verify_commits", "sha"),
            ("audit_read_only", "sha"),
            ("audit_limit_breaches", "sha"),
            ("audit_integrity", "sha"),
            ("audit_constraint_history", "first_sha"),
            ("audit_constraint_history", "fixed_sha"),
        )
    },
    **{
        (t, "path"): _FILE
        for t in (
            "history",
            "audit_hook_violations",
            "audit_read_only",
            "audit_limit_breaches",
            "audit_constraints",
            "audit_constraint_history",
            "audit_over_limit",
            "audit_readers",
            "audit_prompt",
            "audit_churn",
            "audit_letta_tokens",
        )
    },
    # Letta Agent Files and server databases
    **{
        (t, "block_id"): _LETTA_BLOCK
        for t in (
            "block_agents",
            "block_history",
            "block_tags",
            "audit_blocks_over_limit",
            "audit_orphan_blocks",
            "audit_deleted_blocks",
            "audit_edit_history",
            "audit_read_only_edited",
            "audit_shared_blocks",
            "audit_stale_blocks",
            "audit_undo_redo",
        )
    },
    ("block_agents", "agent_id"): _AGENT,
    ("audit_core_memory", "agent_id"): _AGENT,
    ("blocks", "current_history_entry_id"): ("block_history", "history_id"),
    **{
        (t, "organization_id"): ("organizations", "organization_id")
        for t in ("users", "agents", "blocks", "block_history")
    },
    # report runs: each row to its run
    **{
        (t, "run_date"): ("runs", "date")
        for t in (
            "run_stores",
            "run_reports",
            "run_metrics",
            "run_findings",
            "run_problems",
            "run_alerts",
        )
    },
}

#: Columns offered as facets wherever a table has them (kinds, authors, statuses, rules).
FACETS = (
    "store",
    "store_kind",
    "kind",
    "status",
    "author_kind",
    "author_name",
    "rule",
    "rules",
    "check",
    "category",
    "archive_reason",
    "change_type",
    "branch_role",
    "domain",
    "tier",
    "layout",
    "variant",
    "relation_type",
    "origin",
    "actor_kind",
    "role",
    "agent_type",
    "produced_by",
    "report",
    "table",
    "group",
    "unit",
    "error_class",
    "run_date",
    "label",
    "in_prompt",
    "read_only",
    "over_limit",
    "pinned",
    "resolved",
)

#: Text columns of store content that full-text search covers, wherever a table has them.
SEARCHED = (
    "content",
    "summary",
    "body",
    "value",
    "message",
    "detail",
    "description",
    "note",
    "rationale",
    "pre_content",
    "post_content",
    "seeded_text",
    "live_content",
    "cue",
    "finding",
    "problem",
    "evidence",
    "definition",
    "text",
    "title",
)

#: table -> the column Datasette shows beside a link to one of its rows.
LABELS = {"files": "label", "agents": "name", "metrics": "definition", "runs": "status"}

_TITLES = {
    "blocks": "Blocks",
    "tags": "Tags of blocks",
    "edges": "Edges between blocks",
    "contradictions": "Contradictions between blocks",
    "outcomes": "Outcome signals",
    "amendments": "Amendments",
    "sessions": "Sessions",
    "files": "Files of the memory repository",
    "history": "History: one row per commit and file",
    "problems": "Problems found while loading",
    "headline": "Headline metrics, one row per store",
    "metrics": "Metric records",
    "audit_commits": "Commits",
    "audit_integrity": "Integrity findings",
    "audit_constraints": "Letta Code constraint errors at the audited commit",
    "audit_hook_violations": "Pre-commit hook violations",
    "runs": "Report runs",
    "run_metrics": "Metrics per run and store",
    "run_findings": "Findings per run and store",
    "run_alerts": "Alerts fired",
    "failures": "Stores the fleet run could not read",
    "browse_notes": "Notes from building this database",
}


def description(table: str, stores: list[str]) -> str:
    """A table's description: where its rows come from."""
    if table == "metrics":
        return (
            "Every headline metric memlab defines (memlab/_metrics.py): what it is, its "
            "unit, its group and how it is computed."
        )
    if table == "headline":
        return "Each store's audit headline; column descriptions give each metric's definition."
    if table.startswith("audit_"):
        return f"Audit table {table[6:]} (memlab.audit)" + (
            f" of {', '.join(stores)}" if stores else ""
        )
    if table.startswith("run"):
        return "Read from the runs.json record of each `memlab report all` run."
    if table == "browse_notes":
        return "What memlab browse could not read, one row each."
    return f"Frame {table} (memlab.load)" + (f" of {', '.join(stores)}" if stores else "")


def title(table: str) -> str:
    return _TITLES.get(table, table.replace("_", " ").capitalize())


def column_descriptions(columns: list[str]) -> dict[str, str]:
    """column -> "definition (unit)" for every column named like a metric record (of a
    headline table: :func:`table_metadata` gives them to no other), and what a
    :data:`~memlab._metrics.RETIRED` name was for its column in an older lake."""
    return {
        c: f"{METRICS[c].definition} ({METRICS[c].unit})" if c in METRICS else RETIRED[c]
        for c in columns
        if c in METRICS or c in RETIRED
    }


def links(
    frames: dict[str, pd.DataFrame], bases: dict[str, tuple[str, str | None]]
) -> tuple[dict[str, str], dict[str, dict[str, tuple]]]:
    """(table -> primary key column, table -> {column: (target table, target column)}) for the
    links of :data:`LINKS` that hold in ``frames`` (SQLite names; ``bases`` gives each table's
    frame name and store kind: a link goes to the target of the same kind, or to the one
    target table of that name)."""
    keys: dict[str, str] = {}
    fks: dict[str, dict[str, tuple[str, str]]] = {}
    for table, (base, kind) in bases.items():
        for (source, column), (target_base, key) in LINKS.items():
            if source != base or column not in frames[table].columns:
                continue
            candidates = [t for t, (b, k) in bases.items() if b == target_base]
            same = [t for t in candidates if bases[t][1] == kind]
            if len(same) == 1:
                target = same[0]
            elif len(candidates) == 1:
                target = candidates[0]
            else:
                continue
            if key not in frames[target].columns or keys.get(target, key) != key:
                continue
            target_values = frames[target][key].astype(object)
            if (
                not len(target_values)
                or target_values.isna().any()
                or target_values.astype(str).duplicated().any()
            ):
                continue
            keys[target] = key
            fks.setdefault(table, {})[column] = (target, key)
    return keys, fks


def facets(df: pd.DataFrame) -> list[str]:
    """The columns of :data:`FACETS` worth a facet here: present and holding a value (``store``
    and ``store_kind`` only when they differ between rows)."""
    out = []
    for col in FACETS:
        if col not in df.columns:
            continue
        try:
            distinct = df[col].astype(str).where(df[col].notna()).dropna().nunique()
        except (TypeError, ValueError):
            continue
        if distinct >= (2 if col in ("store", "store_kind", "run_date") else 1):
            out.append(col)
    return out


def searched_columns(columns: list[tuple[str, str]]) -> list[str]:
    """The TEXT columns of :data:`SEARCHED` among ``[(column, type)]``."""
    return [c for c, kind in columns if kind == "TEXT" and c in SEARCHED]


def add_search(con: sqlite3.Connection, table: str, columns: list[str], fts: str) -> None:
    """An external-content FTS5 table ``fts`` over ``columns`` of ``table``, filled."""
    cols = ", ".join(quote(c) for c in columns)
    con.execute(
        f"CREATE VIRTUAL TABLE {quote(fts)} USING fts5({cols}, content={quote(table)}, "
        "content_rowid='rowid')"
    )
    con.execute(f"INSERT INTO {quote(fts)}({quote(fts)}) VALUES ('rebuild')")


#: The headline questions, one canned query each; a query is offered only where its tables and
#: columns exist in the database (it is prepared against it first).
QUERIES: dict[str, dict[str, str]] = {
    "archive_reasons": {
        "title": "Why were blocks archived?",
        "description": "Archived blocks by archive reason, per store.",
        "sql": "select store, archive_reason, count(*) as blocks from {blocks} where status = "
        "'archived' group by store, archive_reason order by store, blocks desc",
    },
    "blocks_by_status": {
        "title": "Blocks by status and category",
        "description": "How many blocks each store holds, by status and category.",
        "sql": "select store, status, category, count(*) as blocks from {blocks} "
        "group by store, status, category order by store, blocks desc",
    },
    "most_reinforced": {
        "title": "Most reinforced active blocks",
        "description": "The 20 active blocks reinforced most often.",
        "sql": "select store, id, reinforcement_count, category, content from {blocks} where "
        "status = 'active' order by reinforcement_count desc limit 20",
    },
    "unresolved_contradictions": {
        "title": "Unresolved contradictions, with both blocks' content",
        "description": "Recorded contradictions not resolved.",
        "sql": "select c.store, c.score, a.content as block_a, b.content as block_b from "
        "{contradictions} c left join {blocks} a on a.id = c.block_a_id left join {blocks} b "
        "on b.id = c.block_b_id where not coalesce(c.resolved, 0) order by c.score desc",
    },
    "commits_by_author_kind": {
        "title": "Who commits to memory?",
        "description": "Commits and lines changed by author kind.",
        "sql": "select store, author_kind, count(*) as commits, sum(lines_added) as lines_added, "
        "sum(lines_deleted) as lines_deleted from {audit_commits} "
        "group by store, author_kind order by store, commits desc",
    },
    "findings_by_rule": {
        "title": "Hook violations by rule",
        "description": "Commits breaking a pre-commit hook rule, by rule and author kind.",
        "sql": "select store, rule, author_kind, count(*) as violations from "
        "{audit_hook_violations} group by store, rule, author_kind order by violations desc",
    },
    "integrity_findings": {
        "title": "Integrity findings with their commit",
        "description": "History lost or rewritten, each row with the commit's message when the "
        "history still holds it.",
        "sql": 'select i.store, i.kind, i.ref, i.sha, i."when", i.lost, c.message from '
        "{audit_integrity} i left join {audit_commits} c on c.sha = i.sha",
    },
    "largest_prompt_files": {
        "title": "What fills the prompt?",
        "description": "Files that reach the system prompt, largest first.",
        "sql": 'select store, path, label, body_chars, "limit", over_limit from {files} '
        "where in_prompt order by body_chars desc",
    },
    "blocks_over_limit": {
        "title": "Blocks over their character limit",
        "description": "Letta blocks whose value is longer than their limit.",
        "sql": 'select store, label, chars, "limit", round(1.0 * chars / "limit", 2) as ratio '
        "from {blocks} where over_limit order by ratio desc",
    },
    "block_edits_by_actor": {
        "title": "Who edits the blocks?",
        "description": "Letta server block history entries by actor kind and type, per label.",
        "sql": "select store, actor_kind, actor_type, label, count(*) as entries from "
        "{block_history} group by store, actor_kind, actor_type, label "
        "order by entries desc",
    },
    "problems_by_kind": {
        "title": "Problems found while loading, by kind",
        "description": "Load problems per store and kind.",
        "sql": "select store, kind, count(*) as problems from {problems} group by store, kind "
        "order by problems desc",
    },
    "failed_reports": {
        "title": "Reports that failed",
        "description": "Every report of every run that ended in an error.",
        "sql": "select run_date, store, report, error from {run_reports} where error is not null "
        "order by run_date desc",
    },
    "fleet_stores": {
        "title": "Fleet stores by kind",
        "description": "Stores of the fleet lake per run date and kind.",
        "sql": "select run_date, store_kind, count(*) as stores from {headline} "
        "group by run_date, store_kind order by run_date desc, stores desc",
    },
}


def canned_queries(
    con: sqlite3.Connection, bases: dict[str, tuple[str, str | None]]
) -> dict[str, dict[str, str]]:
    """The queries of :data:`QUERIES` whose SQL prepares against ``con``'s tables. A query's
    ``{frame}`` is that frame's table; where a frame is one table per store kind, the query is
    offered once per kind that has its tables."""
    out = {}
    kinds = sorted({k for _, k in bases.values() if k is not None})
    for name, query in QUERIES.items():
        needed = set(re.findall(r"\{(\w+)\}", query["sql"]))
        found = {base: [t for t, (b, _) in bases.items() if b == base] for base in needed}
        split = any(len(tables) > 1 for tables in found.values())
        for kind in kinds if split else [None]:
            picked = {
                base: tables if len(tables) == 1 else [t for t in tables if bases[t][1] == kind]
                for base, tables in found.items()
            }
            if any(len(tables) != 1 for tables in picked.values()):
                continue
            sql = query["sql"].format(**{b: quote(t[0]) for b, t in picked.items()})
            try:
                con.execute(f"EXPLAIN {sql}").fetchall()
            except sqlite3.Error:
                continue
            key = f"{name}_{kind}" if kind else name
            out[key] = {
                **query,
                "sql": sql,
                "title": query["title"] + (f" ({kind})" if kind else ""),
            }
    return out


def table_metadata(
    name: str,
    base: str,
    kind: str | None,
    columns: list[str],
    df: pd.DataFrame,
    stores: list[str],
    fts: str | None,
    split: bool,
) -> dict[str, Any]:
    """Datasette's metadata of table ``name`` (frame ``base``; one of several tables of that
    frame, one per store ``kind``, when ``split``)."""
    meta: dict[str, Any] = {
        "title": title(base) + (f" ({kind})" if split else ""),
        "description": description(base, stores) + (f"; the {kind} stores' rows" if split else ""),
    }
    if f := facets(df):
        meta["facets"] = f
    if fts:
        meta["fts_table"], meta["fts_pk"] = fts, "rowid"
    if base in LABELS and LABELS[base] in columns:
        meta["label_column"] = LABELS[base]
    # a headline's columns are the metrics; elsewhere a column of the same name is another
    # count (run_stores' findings: the run's finding keys; an agent's prompt_chars), not it
    if base == "headline" and (d := column_descriptions(columns)):
        meta["columns"] = d
    return meta
