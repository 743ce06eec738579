"""Terminal layouts for the CLI: a comparison as metric rows x store columns, grouped, fitted to
the terminal's width (100 columns when there is no terminal), and one-line meanings of the
migration flags.

Example::

    from memlab._terminal import comparison_text
    print(comparison_text(memlab.compare(paths), width=100))
"""

from __future__ import annotations

import math
import os
import shutil
from typing import Any

import pandas as pd

from memlab._escape import terminal_line
from memlab._metrics import group_of

__all__ = [
    "terminal_width",
    "comparison_text",
    "wrap_text",
    "table_text",
    "FLAG_MEANINGS",
    "flag_lines",
]

DEFAULT_WIDTH = 100
_LABEL_MAX = 30
_MIN_COLUMN = 12

#: Headline metrics by what they are about, in reading order: (group, name prefixes or names).
#: A metric with a record is in its record's group.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("store", ("kind", "path", "schema_version", "elfmem_release", "as_of", "layout", "schema")),
    ("cost", ("llm_", "embedding_", "calls_per_", "input_per_", "gpu_hours", "seconds_per_call")),
    ("blocks", ("blocks_", "live_", "summary_", "mind_blocks")),
    ("archival", ("archived_", "supersession_", "superseded_", "protected_")),
    (
        "decay clock",
        ("total_active_hours", "sessions", "mean_session_s", "recency_", "min_block_recency"),
    ),
    ("constitution", ("seed_releases", "role_slots_", "constitutional_")),
    ("reinforcement", ("reinforcement_",)),
    (
        "graph and tags",
        ("tags_", "edges", "contradictions", "near_duplicates", "outcomes", "amendments"),
    ),
    ("activity", ("last_", "consolidation_", "inbox_")),
    # groups only metric records name (memlab._metrics): memfs and agent-file headlines
    ("prompt", ()),
    ("limits", ()),
    ("findings", ()),
    ("reflection", ()),  # a Letta Code home's reflection health
    ("problems", ()),
    ("review", ()),
)


def terminal_width() -> int:
    """$COLUMNS, else the terminal's width, else 100 (a pipe, a log)."""
    try:
        if os.environ.get("COLUMNS"):
            return max(40, int(os.environ["COLUMNS"]))
    except ValueError:
        pass
    return max(40, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def _group(metric: str) -> str:
    """The metric record's group (:data:`memlab._metrics.METRICS`), else by name prefix."""
    recorded = group_of(metric)
    if recorded is not None:
        return recorded
    for name, keys in GROUPS:
        if any(
            metric == k
            or (k.endswith("_") and metric.startswith(k))
            or (not k.endswith("_") and metric.startswith(k + "_"))
            for k in keys
        ):
            return name
    return "other"


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    try:
        if pd.isna(value):
            return "–"
    except (TypeError, ValueError):
        pass
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or (
        isinstance(value, float) and value.is_integer() and abs(value) < 1e15
    ):
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d %H:%M")
    text = str(value)
    if len(text) >= 19 and text[4] == "-" and text[10] == "T":  # an ISO timestamp
        return text[:16].replace("T", " ")
    # line breaks and controls made visible (\x0a, \u2028), never folded into spaces: a
    # store's text must not pass for two rows or hide what it holds
    return terminal_line(text)


def _cut(text: str, width: int, *, left: bool = False) -> str:
    if len(text) <= width:
        return text
    return ("…" + text[-(width - 1) :]) if left else (text[: width - 1] + "…")


def comparison_text(frame: pd.DataFrame, *, width: int | None = None) -> str:
    """``frame`` (one row per store, metrics as columns, as :func:`memlab.compare` returns)
    as metric rows under group headings with one column per store, fitted to ``width``.
    Stores that do not fit side by side continue in further blocks below."""
    width = width or terminal_width()
    stores = [terminal_line(s) for s in frame.index]
    metrics = [c for c in frame.columns if c != "path"]
    order = [g for g, _ in GROUPS] + ["other"]
    by_group: dict[str, list[str]] = {}
    for m in metrics:
        by_group.setdefault(_group(m), []).append(m)
    label_w = min(_LABEL_MAX, max([len(m) for m in metrics] + [6]) + 2)
    cells = {m: [_fmt(v) for v in frame[m].tolist()] for m in metrics}
    per_block = max(1, (width - label_w) // (_MIN_COLUMN + 1))
    blocks = [
        list(range(i, min(i + per_block, len(stores)))) for i in range(0, len(stores), per_block)
    ]
    out: list[str] = []
    for block in blocks:
        col_w = min(28, (width - label_w) // len(block) - 1)
        col_w = max(col_w, 6)
        head = " " * label_w + " ".join(_cut(stores[j], col_w).rjust(col_w) for j in block)
        out.append(head.rstrip())
        if "path" in frame.columns:
            out.append(
                "path".ljust(label_w)
                + " ".join(
                    _cut(_fmt(frame["path"].iloc[j]), col_w, left=True).rjust(col_w) for j in block
                )
            )
        for group in order:
            names = by_group.get(group)
            if not names:
                continue
            out.append(f"{group}")
            for m in names:
                row = ("  " + _cut(m, label_w - 3)).ljust(label_w)
                row += " ".join(_cut(cells[m][j], col_w).rjust(col_w) for j in block)
                out.append(row.rstrip())
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def wrap_text(text: str, width: int | None = None) -> str:
    """Lines longer than ``width`` wrapped at spaces, continuing under their own indent plus
    four spaces; shorter lines (tables, aligned columns) are left exactly as they are. Only
    ``\\n`` ends a line, and each line is a :func:`memlab._escape.terminal_line`: whatever
    reaches the CLI's output through here cannot move the cursor or recolour the terminal."""
    import textwrap

    width = width or terminal_width()
    out = []
    body = text[:-1] if text.endswith("\n") else text
    for line in map(terminal_line, body.split("\n")):
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        out.extend(
            textwrap.wrap(
                line.strip(),
                width,
                initial_indent=indent,
                subsequent_indent=indent + "    ",
                break_long_words=False,
                break_on_hyphens=False,
            )
            or [line]
        )
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


#: What each migration flag means, in one line (the per-item detail is in ``flags.message``).
FLAG_MEANINGS = {
    "time_out_of_range": "a git time outside 1677-2262; the upgrade's commits are dated 2000-01-01",
    "unknown_status": "status not inbox/active/archived; kept in notes/, not lost",
    "dangling_edge": "an edge to a block the database lacks; kept as written",
    "whitespace_trimmed": "leading/trailing whitespace dropped (the format strips it)",
    "absorbed_heading": "a '#' line inside a body stays body text, not a new block",
    "ledger_text_split": "a field over one ledger line, split; elfmem's replay skips it",
    "read_only_by_migration": "made read-only by the migration (read_only or readOnlyFiles)",
    "label_sanitised": "label changed to be a safe file path",
    "path_collision": "path already taken; written under another name",
    "case_collision": "differs from another file only in case: one file on macOS/Windows",
    "skill_block": "becomes a SKILL.md Letta Code reads: check its frontmatter",
    "description_fallback": "no description; Letta's fallback description is used",
    "description_flattened": "multi-line description put on one line (original kept)",
    "over_limit": "longer than its own limit; kept whole, not truncated",
    "detached_block": "no agent uses it; kept out of system/ and the prompt",
    "unknown_agent": "attached to an agent the file does not define",
    "shared_block": "shared by several agents; copied into each one's repo",
    "over_default_limit": "longer than the Letta server's default block limit",
    "deleted_block": "deleted on the server (is_deleted); not migrated",
    "edited_after_checkpoint": "changed after its last checkpoint; in the final commit",
    "history_undated": "a history row without a date; dated at the block's update",
    "label_changed_in_history": "relabelled in its history; replayed at its current path",
    "undone_block": "the server is at an undone checkpoint; the final commit restores it",
    "integrity": "a checkpoint chain only a direct write makes; not replayed, final state only",
    "unknown_actor": "an edit by no known agent or user; committed as the server",
    "limit_not_carried": "over its limit already: the file's limit is its size (v2)",
    "file_limit_added": "over Letta Code's 20,000 per file: a limit of its size (v2)",
    "core_total_raised": "root files over 65,536 in all: the core limit raised (v2)",
    "core_limits_exceed_total": "the root files' limits add up past the core total (v2)",
    "depth_raised": "folders deeper than 2: maxDepth raised (v2)",
    "glob_inexact": "a '*' or '?' in the path: its glob also matches like names (v2)",
    "name_quoted": "name JSON-quoted: Letta Code would read it otherwise (v2)",
    "description_quoted": "description JSON-quoted: Letta Code would read it otherwise (v2)",
    "now_core": "a root file outside system/: core memory in v2",
    "name_fallback": "Letta's name for the file is empty (invalid): 'Memory' (v2)",
    "agent_view_differs": "Letta Code shows the agent the value changed: CR as LF, ... (v2)",
    "unknown_event": "a mem0 history row that is not ADD, UPDATE or DELETE: not replayed",
    "untimed_event": "a mem0 event without a time: committed at the event before it",
    "index_past_budget": "an index line past Claude Code's 200 lines / 25,000 bytes: unseen",
}


def flag_lines(flags: pd.DataFrame, *, indent: str = "    ") -> list[str]:
    """One line per flag kind: count, name and what it means (most frequent first)."""
    if flags is None or flags.empty:
        return []
    counts = flags["kind"].astype(str).value_counts()
    width = max(len(k) for k in counts.index)
    lines = []
    for kind, n in counts.items():
        meaning = FLAG_MEANINGS.get(kind)
        if meaning is None:  # a flag added without a meaning here: show its first message
            meaning = str(flags.loc[flags["kind"].astype(str) == kind, "message"].iloc[0])
        lines.append(f"{indent}{n:>4} {kind.ljust(width)}  {meaning}")
    return lines


def table_text(
    frame: pd.DataFrame,
    *,
    width: int | None = None,
    left_cut: tuple[str, ...] = ("path",),
    max_column: int = 40,
) -> str:
    """``frame`` as a table a person reads in a terminal: one line per row, columns aligned,
    each cell as :func:`_fmt` shows it (numbers with separators, times to the minute, missing
    as "–", text a :func:`memlab._escape.terminal_line`), a cell longer than ``max_column`` cut
    with "…" (from the left for ``left_cut`` columns: a path keeps its end). When the columns do
    not fit ``width``, each row becomes a block of ``column: value`` lines instead."""
    width = width or terminal_width()
    columns = [terminal_line(str(c)) for c in frame.columns]
    full = [[_fmt(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    cut = [c in left_cut for c in frame.columns]
    rows = [[_cut(v, max_column, left=cut[i]) for i, v in enumerate(r)] for r in full]
    widths = [max([len(columns[i])] + [len(r[i]) for r in rows]) for i in range(len(columns))]
    if sum(widths) + 2 * (len(widths) - 1) <= width:

        def line(cells: list[str]) -> str:
            return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

        return (
            "\n".join([line(columns), line(["─" * w for w in widths])] + [line(r) for r in rows])
            + "\n"
        )
    label = max(len(c) for c in columns) if columns else 0
    blocks = []
    for r in full:
        blocks.append(
            "\n".join(
                f"{c.ljust(label)}  {_cut(v, max(10, width - label - 2), left=k)}"
                for c, v, k in zip(columns, r, cut)
            )
        )
    return "\n\n".join(blocks) + "\n"
