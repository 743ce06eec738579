"""Every headline metric memlab reports, one :class:`Metric` record each (issue 33 item 3, issue
36 item 2; pydriller's one class per metric is the model).

A record says what a metric is (``definition``), in what ``unit``, under which ``group`` (the
terminal's comparison groups), the v2 doc's value where the doc gives one (``doc_value``, from
:data:`memlab.constants.DOC_VALUES`) and how it is obtained: a ``formula`` over other headline
fields (:class:`Ratio`, :class:`FirstOf`), or ``how`` in words when an audit computes it from
its tables. Every output reads the same record and the same value:

* the audits put a formula metric into their headline with :func:`value` (the elfmem audit's
  ``calls_per_surviving_block``, ``supersession_share``, ...), so ``Audit.headline``, its
  JSON, a report's ``metrics.json`` and the lake's ``headline`` table hold one number;
* the run index (:mod:`memlab.report._runs`) and the report's headline panel show
  ``definition`` and the doc's value beside it, and fill a ratio an older ``metrics.json``
  lacks with :func:`derive`, the same formula;
* the fleet lake's figures (:data:`FLEET`) are records too: :func:`column` reads a figure's
  own headline column and falls back to its formula only where the column is missing (a lake
  written before the audit recorded it).

Where two meanings of one word are both useful they have two names: ``supersession_share``
(superseded, of all archived: the doc's 41/42 for the demo) and ``superseded_of_created``
(superseded, of every block ever created).

Two records never share a label (:attr:`Metric.label`, what a reader knows a metric by): the
Agent File audit's ``max_over_limit_ratio`` (blocks over their limit only) was a second "limit
ratio" beside ``max_limit_ratio``; it is :data:`RETIRED`, and every kind reports
``max_limit_ratio`` (with ``n_blocks_over_limit`` counting the blocks over).

Adding a metric is one :class:`Metric` in :data:`METRICS`.

Example::

    from memlab._metrics import METRICS, value
    METRICS["supersession_share"].definition
    value("supersession_share", {"archived_superseded": 41, "blocks_archived": 42})  # 0.976...
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, TypeGuard, Union

import numpy as np
import pandas as pd

from memlab.constants import DOC_VALUES

__all__ = [
    "Metric",
    "Ratio",
    "FirstOf",
    "METRICS",
    "RETIRED",
    "FLEET",
    "FINDINGS",
    "value",
    "derive",
    "column",
    "definitions",
    "definition",
    "doc_value",
    "group_of",
    "is_number",
    "max_limit_ratio",
]


def is_number(v: Any) -> TypeGuard[float]:
    """A finite int or float, numpy's included (not a bool, not None, not NaN)."""
    return (
        isinstance(v, (int, float, np.integer, np.floating))
        and not isinstance(v, (bool, np.bool_))
        and math.isfinite(float(v))
    )


def _numeric(df: pd.DataFrame, name: str) -> pd.Series:
    if name in df.columns:
        return pd.to_numeric(df[name], errors="coerce").astype("float64")
    return pd.Series(np.nan, index=df.index, dtype="float64")


@dataclass(frozen=True)
class Ratio:
    """``numerator / denominator`` of two headline fields; None (not computable) when either is
    missing or not a number, or the denominator is not above 0."""

    numerator: str
    denominator: str

    @property
    def inputs(self) -> tuple[str, ...]:
        return (self.numerator, self.denominator)

    def value(self, fields: Mapping[str, Any]) -> float | None:
        a, b = fields.get(self.numerator), fields.get(self.denominator)
        if is_number(a) and is_number(b) and b > 0:
            return float(a) / float(b)
        return None

    def column(self, df: pd.DataFrame) -> pd.Series:
        den = _numeric(df, self.denominator)
        return _numeric(df, self.numerator) / den.where(den > 0)

    def __str__(self) -> str:
        return f"{self.numerator} / {self.denominator}"


@dataclass(frozen=True)
class FirstOf:
    """The first of ``names`` a store's headline has as a number (one figure across kinds that
    name it differently)."""

    names: tuple[str, ...]

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.names

    def value(self, fields: Mapping[str, Any]) -> float | None:
        for name in self.names:
            v = fields.get(name)
            if is_number(v):
                return float(v)
        return None

    def column(self, df: pd.DataFrame) -> pd.Series:
        out = _numeric(df, self.names[0])
        for name in self.names[1:]:
            out = out.fillna(_numeric(df, name))
        return out

    def __str__(self) -> str:
        return " else ".join(self.names)


Formula = Union[Ratio, FirstOf]


@dataclass(frozen=True)
class Metric:
    """One headline metric: its ``name`` (the key in every output), its ``definition`` (shown
    beside it), ``unit``, ``group``, the doc's value (``doc_value``, None where the doc gives
    none), and how it is obtained: ``formula`` over other headline fields, or ``how`` in words
    when an audit computes it from its tables. Which store kinds chart it is each kind's
    ``headline`` in :mod:`memlab.kinds`."""

    name: str
    definition: str
    unit: str
    group: str
    formula: Formula | None = None
    how: str = ""

    @property
    def doc_value(self) -> float | None:
        return DOC_VALUES.get(self.name)

    @property
    def computed(self) -> str:
        """How the metric is obtained, in words (its formula, or ``how``)."""
        return str(self.formula) if self.formula is not None else self.how

    @property
    def label(self) -> str:
        """What a reader knows the metric by: the definition's lead-in before its first ``:``
        ("limit ratio" of ``max_limit_ratio``), else the whole definition. No two records share
        one (a test holds them apart)."""
        lead, colon, _ = self.definition.partition(":")
        return lead if colon and "(" not in lead else self.definition


_RECORDS = (
    # ── elfmem databases: the v2 doc's evidence set ──────────────────────────────────────
    Metric(
        "llm_calls",
        "lifetime LLM calls",
        "calls",
        "cost",
        how="system_config lifetime_token_usage.llm_calls",
    ),
    Metric(
        "live_tokens",
        "tokens of the live corpus (active blocks)",
        "tokens",
        "blocks",
        how="elfmem's token_count of each active block, chars/4 where it is missing",
    ),
    Metric(
        "input_per_corpus_token",
        "amplification: LLM input tokens per token of live corpus",
        "×",
        "cost",
        Ratio("llm_input_tokens", "live_tokens"),
    ),
    Metric(
        "calls_per_surviving_block",
        "LLM calls per block still active",
        "calls per active block",
        "cost",
        Ratio("llm_calls", "blocks_active"),
    ),
    Metric(
        "input_per_summary_token",
        "LLM input tokens per token of live summaries",
        "×",
        "cost",
        Ratio("llm_input_tokens", "summary_tokens"),
    ),
    Metric(
        "gpu_hours",
        "GPU time the lifetime LLM calls took at seconds_per_call each",
        "hours",
        "cost",
        how="llm_calls × seconds_per_call / 3600",
    ),
    Metric(
        "blocks_active",
        "blocks with status active",
        "blocks",
        "blocks",
        how="blocks rows with status active",
    ),
    Metric(
        "supersession_share",
        "archived blocks archived as superseded, of all archived",
        "share",
        "archival",
        Ratio("archived_superseded", "blocks_archived"),
    ),
    Metric(
        "superseded_of_created",
        "blocks archived as superseded, of all blocks ever created",
        "share",
        "archival",
        Ratio("archived_superseded", "blocks_ever"),
    ),
    Metric(
        "total_active_hours",
        "decay clock: active hours summed over sessions",
        "hours",
        "decay clock",
        how="the sum of session durations (elfmem's active-hours clock)",
    ),
    Metric(
        "min_block_recency",
        "decay: lowest recency exp(-λ·h) of a live block",
        "share",
        "decay clock",
        how="min over active blocks of exp(-decay_lambda × active hours since last reinforced)",
    ),
    Metric(
        "role_slots_left",
        "constitution slots: seeded role slots still live (of role_slots_seeded)",
        "slots",
        "constitution",
        how="seeded constitutional roles with a live block",
    ),
    Metric(
        "constitutional_tagged_live",
        "constitutional blocks: live blocks tagged constitutional",
        "blocks",
        "constitution",
        how="active blocks with a self/constitutional tag",
    ),
    Metric(
        "contradictions_unresolved",
        "recorded contradictions not resolved",
        "pairs",
        "graph and tags",
        how="contradictions rows without a resolution",
    ),
    # ── Letta Agent Files and blocks lists ───────────────────────────────────────────────
    Metric(
        "max_prompt_tokens_est",
        "largest agent prompt: tokens (chars/4) of its system prompt and attached blocks",
        "tokens",
        "prompt",
        how="max over agents of (system + block chars) / 4",
    ),
    Metric(
        "max_context_share",
        "largest agent prompt as a share of its context window",
        "share",
        "prompt",
        how="max over agents of prompt tokens / context window",
    ),
    Metric(
        "n_blocks_over_limit",
        "blocks over their character limit",
        "blocks",
        "limits",
        how="blocks whose chars exceed their limit",
    ),
    Metric(
        "n_problems",
        "load problems: problems found while loading (Agent Files, blocks lists, Letta "
        "servers, Claude Code memory folders; the other kinds name the same count problems)",
        "problems",
        "problems",
        how="rows of the store's problems frame",
    ),
    # ── memfs repositories ───────────────────────────────────────────────────────────────
    Metric(
        "prompt_tokens",
        "prompt at the ref: tokens (chars/4) of what reaches the system prompt",
        "tokens",
        "prompt",
        how="the prompt files' tokens at the ref",
    ),
    Metric(
        "max_limit_ratio",
        "limit ratio: largest chars / limit of any block or file with a limit (over 1: over "
        "it; null: nothing has a limit, or it was not checked)",
        "×",
        "limits",
        how="max over blocks or files with a limit of chars / limit "
        "(memlab._metrics.max_limit_ratio)",
    ),
    Metric(
        "findings",
        "constraint findings that need a person (hook bypasses, guarded edits, "
        "limit breaches, reader disagreements, copied trees, problems)",
        "findings",
        "findings",
        how="rows of the constraints table",
    ),
    Metric(
        "hook_violations",
        "commits breaking a pre-commit hook rule (in history)",
        "rows",
        "findings",
        how="rows of the hook_violations table",
    ),
    Metric(
        "no_verify_commits",
        "commits that must have bypassed the hook",
        "commits",
        "findings",
        how="rows of the no_verify_commits table",
    ),
    Metric(
        "over_limit_files",
        "files over their limit now",
        "files",
        "limits",
        how="rows of the over_limit table",
    ),
    Metric(
        "problems",
        "problems found while loading, under the name memfs repositories, mem0 stores and "
        "Letta Code homes give it (the same count as n_problems)",
        "problems",
        "problems",
        how="rows of the store's problems frame",
    ),
    Metric(
        "prompt_chars",
        "characters in the system prompt (memfs: prompt_chars, at the ref; "
        "agent file: max_prompt_chars, its largest agent's)",
        "chars",
        "prompt",
        FirstOf(("prompt_chars", "max_prompt_chars")),
    ),
    # ── mem0 stores: the history event log ───────────────────────────────────────────────
    Metric(
        "history_events",
        "events in mem0's history log (ADD, UPDATE, DELETE)",
        "events",
        "activity",
        how="rows of the history table",
    ),
    Metric(
        "memories_ever",
        "memories ever added (distinct memory ids in the history log)",
        "memories",
        "blocks",
        how="distinct history.memory_id",
    ),
    Metric(
        "memories_current",
        "memories not deleted (the surviving memories)",
        "memories",
        "blocks",
        how="memory ids without a DELETE event",
    ),
    Metric(
        "memories_deleted",
        "memories with a DELETE event",
        "memories",
        "archival",
        how="memory ids with a DELETE event",
    ),
    Metric(
        "rewrites",
        "UPDATE events: rewrites of a memory's text",
        "events",
        "activity",
        how="history rows with event UPDATE",
    ),
    Metric(
        "rewritten_memories",
        "memories rewritten at least once",
        "memories",
        "activity",
        how="memory ids with an UPDATE event",
    ),
    Metric(
        "surviving_rewrites",
        "UPDATE events on memories not deleted",
        "events",
        "activity",
        how="UPDATE rows of memory ids without a DELETE",
    ),
    Metric(
        "unchanged_rewrites",
        "UPDATE events whose new memory text is the old text exactly (mem0 wrote, nothing "
        "changed); counted in rewrites, as mem0 counts them",
        "events",
        "activity",
        how="history rows with event UPDATE and new_memory == old_memory",
    ),
    Metric(
        "rewrites_per_surviving_memory",
        "amplification asked of mem0: rewrites per memory still current",
        "rewrites per memory",
        "cost",
        Ratio("rewrites", "memories_current"),
    ),
    Metric(
        "events_per_surviving_memory",
        "history events (adds, rewrites, deletions) per memory still current",
        "events per memory",
        "cost",
        Ratio("history_events", "memories_current"),
    ),
    Metric(
        "deletions",
        "DELETE events",
        "events",
        "archival",
        how="history rows with event DELETE",
    ),
    Metric(
        "deletions_without_time",
        "DELETE events with no time (mem0 0.1.x writes none)",
        "events",
        "archival",
        how="DELETE rows whose updated_at is empty",
    ),
    Metric(
        "untimed_deletion_share",
        "deletions without a time, of all deletions",
        "share",
        "archival",
        Ratio("deletions_without_time", "deletions"),
    ),
    Metric(
        "near_duplicate_pairs",
        "pairs of current memories at cosine >= 0.90 (memlab's all-MiniLM-L6-v2); null when "
        "not checked",
        "pairs",
        "graph and tags",
        how="NeighborIndex.pairs_above(NEAR_DUP_THRESHOLD) over the current memories' text",
    ),
    Metric(
        "active_days",
        "days from the first to the last timed event of the history log",
        "days",
        "activity",
        how="max - min of the events' times",
    ),
    Metric(
        "memories_unscoped",
        "current memories whose payload names no user, agent or run; null without a vector "
        "store on disk",
        "memories",
        "blocks",
        how="payloads with user_id, agent_id and run_id all empty",
    ),
    # ── Claude Code memory folders (memlab/kinds/claude_memory) ─────────────────────────
    Metric(
        "n_topic_files",
        "topic files in the memory folder (every .md but MEMORY.md)",
        "files",
        "blocks",
        how="rows of the files frame",
    ),
    Metric(
        "index_lines_total",
        "lines of MEMORY.md, the index a session loads the first 200 lines / 25,000 bytes of",
        "lines",
        "prompt",
        how="MEMORY.md's line count",
    ),
    Metric(
        "n_orphan_files",
        "topic files no MEMORY.md line links",
        "files",
        "findings",
        how="rows of the orphan_files table; null when MEMORY.md was not read",
    ),
    Metric(
        "n_dangling_index_lines",
        "MEMORY.md lines linking a file that is not in the folder",
        "lines",
        "findings",
        how="distinct lines of the dangling_index_lines table; null when MEMORY.md was not read",
    ),
    Metric(
        "n_tail_index_lines",
        "MEMORY.md lines a session never sees (past line 200 or byte 25,000)",
        "lines",
        "findings",
        how="rows of the invisible_tail table; null when MEMORY.md was not read",
    ),
    Metric(
        "n_hidden_memories",
        "topic files only invisible MEMORY.md lines link",
        "files",
        "findings",
        how="rows of the hidden_memories table; null when MEMORY.md was not read",
    ),
    Metric(
        "n_duplicate_pairs",
        "pairs of topic files with the same body (sha256)",
        "pairs",
        "findings",
        how="rows of the duplicates table",
    ),
    Metric(
        "n_near_duplicate_pairs",
        "pairs of topic files whose bodies' embedding cosine is at or above 0.90",
        "pairs",
        "findings",
        how="rows of the near_duplicates table; null when not checked",
    ),
    Metric(
        "memory_findings",
        "findings of a Claude Code memory folder's audit, all kinds together (orphans, dangling "
        "and invisible index lines, hidden memories, duplicate and near-duplicate pairs, "
        "frontmatter problems); null when one kind was not checked",
        "findings",
        "findings",
        how="the sum of the n_* finding counts",
    ),
    Metric(
        "n_frontmatter_problems",
        "broken frontmatter rules of topic files (missing name/description/type, unknown "
        "type, a prefix naming another type, a shared name, no or unreadable frontmatter)",
        "findings",
        "findings",
        how="rows of the frontmatter table",
    ),
    # ── both git-backed and server stores ────────────────────────────────────────────────
    Metric(
        "integrity_findings",
        "history only a rewrite or a direct write leaves (memfs: "
        "reflogs and refs; Letta server: block_history chains); null "
        "when not checked, with integrity_reason saying why",
        "findings",
        "findings",
        how="rows of the integrity table; None when the evidence "
        "is gone (integrity_reason, null when checked)",
    ),
    # ── Letta Code homes (~/.letta): reflection and write health ─────────────────────────
    Metric(
        "reflection_stalled",
        "conversations whose reflection stalled: steps since the last success at or over "
        "the step-count trigger, a pass started since, none succeeded, none running",
        "conversations",
        "reflection",
        how="rows of the letta_home audit's reflection_stalled table",
    ),
    Metric(
        "leftover_worktrees",
        "reflection or memory-worker worktrees left on disk past a pass's time (a pass that "
        "never finished)",
        "worktrees",
        "reflection",
        how="rows of the letta_home audit's leftover_worktree table",
    ),
    Metric(
        "max_steps_over_trigger",
        "the largest margin of a stalled conversation: steps since the last successful "
        "reflection minus the trigger; null when none stalled",
        "steps",
        "reflection",
        how="max of reflection_stalled.margin",
    ),
    Metric(
        "reflection_merge_share",
        "share of the memory branch's changed lines that reflection and memory-worker merges "
        "brought, averaged over the home's agents",
        "share",
        "reflection",
        how="merge_share.share, mean over agents with memory changes",
    ),
    Metric(
        "case_collisions",
        "paths of a memory repository that differ only by case (one checkout on macOS or "
        "Windows holds only one of them)",
        "paths",
        "findings",
        how="rows of the letta_home audit's case_collisions table",
    ),
    Metric(
        "unhealthy_writes",
        "memory writes matching letta-ai/letta-code#2906's patterns: a core file that only "
        "grows, a session file in core, a correction written again, near-duplicate files",
        "findings",
        "findings",
        how="rows of the letta_home audit's unhealthy_writes table",
    ),
    # ── the review report ────────────────────────────────────────────────────────────────
    Metric(
        "review.choices",
        "review choices a person would decide",
        "choices",
        "review",
        how="choices in the review report's proposal",
    ),
    # ── fleet figures: one name across store kinds ───────────────────────────────────────
    Metric(
        "amplification",
        "LLM input tokens per live corpus token (elfmem: "
        "input_per_corpus_token under its fleet name)",
        "×",
        "cost",
        FirstOf(("input_per_corpus_token",)),
    ),
    Metric(
        "limit_ratio",
        "largest chars / limit of any block or file with a limit (max_limit_ratio, one "
        "definition in every kind; null: nothing has a limit, or not checked)",
        "×",
        "limits",
        FirstOf(("max_limit_ratio",)),
    ),
    Metric(
        "churn_lines",
        "lines changed over the repo's history (memfs: lines_changed)",
        "lines",
        "activity",
        FirstOf(("lines_changed",)),
    ),
)

#: name -> :class:`Metric`, every headline metric memlab defines.
METRICS: dict[str, Metric] = {m.name: m for m in _RECORDS}

#: A name memlab no longer writes -> what it was and what to read instead. An older
#: ``metrics.json``, run record or lake that holds it still reads (its number is shown under its
#: own name, with this text as its definition); a run without the metric that replaced it shows
#: that one as not recorded (null), never 0.
RETIRED: dict[str, str] = {
    "max_over_limit_ratio": "retired: the largest chars / limit of a block over its limit, "
    "null when none was over (Agent File audits before max_limit_ratio was their headline); "
    "read max_limit_ratio (every block with a limit): over 1, it is that number",
}

#: The fleet lake's figures, in the order its summary, notebook and plots show them.
FLEET: tuple[str, ...] = (
    "amplification",
    "calls_per_surviving_block",
    "supersession_share",
    "superseded_of_created",
    "prompt_chars",
    "limit_ratio",
    "churn_lines",
)


#: Every kind of finding an audit reports, one list: audit table -> the columns that identify one
#: of its rows across runs. A scheduled run records each row of each table here
#: (:func:`memlab.report._runs.finding_keys`), and the memfs audit's ``findings`` count is made
#: of these tables (:func:`memlab.kinds._memfs._report.finding_counts`; a test holds the two
#: together). Load problems are recorded apart, with their file and message.
FINDINGS: dict[str, tuple[str, ...]] = {
    "hook_violations": ("sha", "path", "rule"),
    "no_verify_commits": ("sha",),
    "read_only": ("sha", "path", "change"),
    "limit_breaches": ("sha", "path"),
    "over_limit": ("path",),
    "readers": ("path",),
    "duplicate_trees": ("tree", "copy_of"),
    "constraints": ("path", "rule", "check"),
    "integrity": ("kind", "ref", "sha"),
    "blocks_over_limit": ("block_id", "label"),
    "orphan_blocks": ("block_id", "label"),
}


def definitions() -> dict[str, str]:
    """name -> definition, for every metric, and what each :data:`RETIRED` name was."""
    return {**RETIRED, **{m.name: m.definition for m in METRICS.values()}}


def definition(name: str) -> str:
    """The definition of ``name`` (what it was for a :data:`RETIRED` name; "" for a name
    memlab does not define)."""
    m = METRICS.get(name)
    return m.definition if m else RETIRED.get(name, "")


def doc_value(name: str) -> float | None:
    """The doc's value of ``name`` (None where the doc gives none)."""
    m = METRICS.get(name)
    return m.doc_value if m else DOC_VALUES.get(name)


def group_of(name: str) -> str | None:
    """The record's group of ``name``, or None for a name memlab does not define."""
    m = METRICS.get(name)
    return m.group if m else None


def value(name: str, fields: Mapping[str, Any]) -> Any:
    """The value of metric ``name`` from a store's headline ``fields``: its formula's (None
    when the inputs are missing), or ``fields[name]`` for a metric an audit computes."""
    m = METRICS[name]
    if m.formula is None:
        return fields.get(name)
    return m.formula.value(fields)


def max_limit_ratio(chars: pd.Series, limits: pd.Series) -> float | None:
    """The ``max_limit_ratio`` of a store's blocks or files: the largest ``chars / limit`` over
    those whose limit is above 0 (a limit of 0 or below is a problem row: nothing fits it, and a
    ratio to it means nothing), over 1 when one is over its limit. ``chars`` is the kind's own
    count, the one its limit checks compare. None when nothing has a limit above 0 (not
    checked, never 0), and None when one that has one has no known count (a value past
    memlab's cap, not read): the maximum would hold it, so any number would be a guess.

    Example::

        max_limit_ratio(store.blocks["chars"], store.blocks["limit"])
    """
    limit = pd.to_numeric(limits, errors="coerce").astype("float64")
    has = limit > 0
    if not has.any():
        return None
    counted = pd.to_numeric(chars, errors="coerce").astype("float64")[has]
    if counted.isna().any():
        return None
    return float((counted / limit[has]).max())


def derive(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` plus every :class:`Ratio` metric it lacks whose two inputs it has: how a
    ``metrics.json`` written before the audit recorded a metric gets the audit's value (the
    same formula). Cross-kind figures (:class:`FirstOf`) are not added to a store's fields."""
    out = dict(fields)
    for name, m in METRICS.items():
        if (
            isinstance(m.formula, Ratio)
            and name not in out
            and all(i in out for i in m.formula.inputs)
        ):
            out[name] = m.formula.value(out)
    return out


def column(name: str, headline: pd.DataFrame) -> pd.Series:
    """Metric ``name`` as a float column of a headline table (one row per store): the table's
    own column where a store has it, else the formula over its other columns (a lake written
    before the audit recorded ``name``)."""
    m = METRICS[name]
    own = _numeric(headline, name)
    if m.formula is None:
        return own
    if isinstance(m.formula, FirstOf) and m.formula.names[0] == name:
        return m.formula.column(headline)
    recorded = (
        headline[name].notna()
        if name in headline.columns
        else pd.Series(False, index=headline.index)
    )
    return own.where(recorded, m.formula.column(headline))
