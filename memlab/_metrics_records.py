"""Every headline metric's :class:`~memlab._metrics_types.Metric` record, by the store kind
that reports it (:data:`METRICS`), the names memlab no longer writes (:data:`RETIRED`), the fleet
lake's figures (:data:`FLEET`), the finding kinds (:data:`FINDINGS`), and what a name is
(:func:`definitions`, :func:`definition`, :func:`doc_value`, :func:`group_of`).

Adding a metric is one :class:`~memlab._metrics_types.Metric` in ``_RECORDS`` here.

Example::

    from memlab._metrics import METRICS, definition
    METRICS["supersession_share"].definition == definition("supersession_share")
"""

from __future__ import annotations

from memlab._metrics_types import FirstOf, Metric, Ratio
from memlab.constants import DOC_VALUES

__all__ = [
    "METRICS",
    "RETIRED",
    "FLEET",
    "FINDINGS",
    "definitions",
    "definition",
    "doc_value",
    "group_of",
]


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
        "load problems: problems found while loading the store (every kind that counts them: "
        "Agent Files, blocks lists, Letta servers, memory repositories, mem0 stores, Claude "
        "Code memory folders, Letta Code homes, elfmem databases)",
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
    "n_problems": "retired: problems found while loading, the name Agent File, blocks list, "
    "Letta server and Claude Code memory audits gave the count before every kind named it "
    "problems; read problems, the same count (rows of the store's problems frame)",
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
