"""S1-S11, each registered once: its modelled function, real operator script, rule, design
flags, LLM stand-in and evidence schema in one :func:`~memlab.sim.registry.register_scenario`
call (the record: :class:`~memlab.sim.registry.Scenario`). ``memlab/sim/__init__.py`` imports
this module, so the records are in the register once any ``memlab.sim`` module is imported.

The evidence schemas were read off runs: ``modelled_metrics`` from ``memlab simulate --no-real``
on the doc's instance (every iteration), ``measured_metrics`` from ``--scale 150`` on 0.19.2,
0.20.0 and 0.20.0+project, each the metric names every cell graded pass/partial/fail carried
(for the measured ones, but ``seconds``, which the runner adds to every measured cell);
tests/test_sim.py and tests/test_sim_real.py check them on other inputs. How to add a
scenario: docs/DESIGN.md, "How to add a scenario".
"""

from __future__ import annotations

from memlab.sim.model.scenarios.concurrency import s8_concurrent
from memlab.sim.model.scenarios.control import (
    s1_reword,
    s2_delete,
    s3_pinned,
    s4_cost,
    s5_fresh_install,
    s6_missing_key,
)
from memlab.sim.model.scenarios.months import s9_last_month, s10_six_months
from memlab.sim.model.scenarios.scale import s7_scale, s11_chunked_review
from memlab.sim.real._common import DEAD_ENDPOINT, RULE_LLM
from memlab.sim.registry import register_scenario
from memlab.sim.rules import S7_RETRIEVAL_SHARE

__all__: list[str] = []


register_scenario(
    "S1",
    "Operator rewords one constitutional principle",
    "control",
    s1_reword,
    real="memlab.sim.real.scripts:s1_reword",
    rule=(
        "score each rewording 1 (new wording active, old wording not active, role kept), "
        "0.5 (new wording active but the old one too, or the role lost), 0 (new wording not "
        "active); pass: mean score = 1; partial: >= 0.5; fail: < 0.5"
    ),
    flags=(
        "crud",
        "files_authoritative",
        "near_dup_supersession",
        "near_dup_threshold",
        "exact_dup_threshold",
    ),
    modelled_metrics=(
        "applied",
        "at_or_above_0.95",
        "below_0.9",
        "cosine_max",
        "cosine_min",
        "in_band_[0.9,0.95)",
        "rewordings",
        "score",
    ),
    measured_metrics=(
        "api",
        "cosine_old_new",
        "llm_calls",
        "new_active",
        "old_active",
        "old_archive_reason",
        "old_status",
        "rewording",
        "role",
        "role_tag_on_new",
        "score",
    ),
)

register_scenario(
    "S2",
    "Operator deletes 3 unwanted seeded blocks",
    "control",
    s2_delete,
    real="memlab.sim.real.scripts:s2_delete",
    rule=(
        "pass: 3/3 targets out of active memory by the end of the wait (forgotten or "
        "decayed); partial: 1-2; fail: 0"
    ),
    flags=("crud", "files_authoritative", "decay_archival", "prune_threshold"),
    modelled_metrics=(
        "active_hours_waited",
        "blocks_written_by_init",
        "days_waited",
        "deleted_directly",
        "gone_after",
        "replaced_by_restatement",
        "target_tiers",
        "targets",
    ),
    measured_metrics=("api", "gone", "reasons", "target_ids", "targets"),
)

register_scenario(
    "S3",
    "New block at 0.91 cosine to a pinned constitutional block",
    "adversarial",
    s3_pinned,
    real="memlab.sim.real.scripts:s3_pinned",
    rule=(
        "a block arrives close to a constitutional one; pass: the constitutional block "
        "keeps its content and the arrival was one the system's supersession acts on "
        "(cosine in its near-duplicate band, elfmem's [0.90, 0.95)), or no path can archive "
        "it; partial: kept, but the arrival's cosine missed the band, so nothing was tested; "
        "fail: archived or changed"
    ),
    flags=("near_dup_supersession", "pin_guard", "constitution_file", "near_dup_threshold"),
    modelled_metrics=("exact_threshold", "measured_cosine", "near_threshold", "role"),
    measured_metrics=(
        "cosine",
        "deduplicated",
        "in_band",
        "near_duplicates_flagged",
        "new_block_status",
        "role",
        "superseded_by_recorded",
        "target_archive_reason",
        "target_pinned",
        "target_status",
    ),
)

register_scenario(
    "S4",
    "10 blocks learned in a batch: steady-state LLM cost",
    "cost",
    s4_cost,
    real="memlab.sim.real.scripts:s4_cost",
    rule=(
        "LLM calls per learned block (the doc's Iteration-3 bar is one analysis); pass: "
        "<= 1.1; partial: <= 2; fail: > 2"
    ),
    flags=(
        "write_time_analysis",
        "pairwise_contradiction",
        "contradiction_prefilter",
        "contradiction_top_k",
        "corpus_review",
    ),
    modelled_metrics=(
        "analysis_calls",
        "batch",
        "calls_per_block",
        "contradiction_calls",
        "corpus_blocks",
        "instance_lifetime_calls_per_active_block",
        "llm_calls",
        "llm_input_tokens",
        "review_calls",
        "worst_case_calls",
    ),
    measured_metrics=(
        "batch",
        "calls_by_method",
        "calls_per_block",
        "corpus_blocks",
        "llm_calls",
        "llm_input_tokens",
        "promoted",
        "related",
    ),
)

register_scenario(
    "S5",
    "Fresh install, local model only",
    "onboarding",
    s5_fresh_install,
    real="memlab.sim.real.scripts:s5_fresh_install",
    rule=(
        "two checks: setup with the defaults writes 0 blocks the user did not choose; a "
        "local endpoint is reachable without an API key; pass: both; partial: one; "
        "fail: neither"
    ),
    flags=("seed_on_init", "key_resolution"),
    llm=(
        "the release's own LLM adapter (its factory and config) pointed at a closed local "
        "port (" + DEAD_ENDPOINT + "): what a machine with no model running sees; it "
        "answers nothing, so only construction and the first call's error are observed; "
        "setup() runs with " + "RuleLLM"
    ),
    modelled_metrics=(
        "blocks_written_by_init",
        "client_check_measured",
        "client_error",
        "failed_llm_calls",
        "llm_calls_during_init",
        "local_client_without_cloud_key",
    ),
    measured_metrics=(
        "adapter_constructed",
        "first_call_error",
        "first_call_message",
        "key_exported",
        "missing_key_reported",
        "setup_default_blocks",
    ),
)

register_scenario(
    "S6",
    "API key absent; server starts anyway",
    "adversarial",
    s6_missing_key,
    real="memlab.sim.real.scripts:s6_missing_key",
    rule=(
        "with the LLM unreachable: pass: startup or the first LLM-needing step raises, or "
        "every learned block got its LLM analysis; partial: nothing promoted without "
        "analysis, but the failures are only logged; fail: blocks promoted without analysis "
        "and nothing raised (silent degradation)"
    ),
    flags=("preflight", "key_resolution"),
    llm=(
        "s6_llm=absent: the release's own adapter pointed at a closed local port (no LLM "
        "reachable: every call fails); s6_llm=local: RuleLLM answers (see RULE_LLM); the "
        "shipped preflight (`elfmem doctor --resolve`) runs against the same closed port"
    ),
    modelled_metrics=(
        "blocks_degraded",
        "boot",
        "failed_llm_calls",
        "sdk_raises_without_key",
        "surfaced_at",
    ),
    measured_metrics=(
        "first_call_error",
        "promoted",
        "promoted_unanalysed",
        "raised",
        "shipped_preflight",
        "started",
    ),
)

register_scenario(
    "S7",
    "Corpus grows (to the scale each cell states)",
    "scale",
    s7_scale,
    real="memlab.sim.real._scale:s7_scale",
    rule=(
        f"two checks at the corpus size run: retrieval holds (hit@5 >= "
        f"{S7_RETRIEVAL_SHARE} x the oracle's hit@5 on the same corpus and queries; a hit is "
        "a block on the topic the query names, its component and symptom, among the top 5; "
        "oracle = the better of two exact searches over every block, MiniLM cosine top-5 "
        "and a ranked term scan, computed apart from the system's own index) and LLM calls "
        "per learned block <= 2; pass: both; partial: one; fail: neither"
    ),
    flags=("semantic_index", "corpus_review", "review_window_tokens"),
    llm=RULE_LLM + "; recall itself makes no LLM call",
    modelled_metrics=(
        "blocks",
        "context_tokens_per_query_large",
        "context_tokens_per_query_small",
        "hit@5_large",
        "hit@5_needed",
        "hit@5_small",
        "ms_per_query_large",
        "ms_per_query_small",
        "oracle_hit@5_large",
        "precision@5_large",
        "retrieval_large",
        "review_calls_large",
        "review_calls_small",
        "write_calls_per_block_large",
        "write_calls_per_block_small",
    ),
    measured_metrics=(
        "active",
        "blocks",
        "calls_per_block",
        "hit_at_5",
        "hit_at_5_needed",
        "llm_calls",
        "oracle_hit_at_5",
        "queries",
        "seconds_learn_consolidate",
        "seconds_per_query",
        "term_scan_hit_at_5",
    ),
)

register_scenario(
    "S8",
    "Two agents write concurrently",
    "adversarial",
    s8_concurrent,
    real="memlab.sim.real._scale:s8_concurrent",
    rule=(
        "two real writers, each a read-modify-write edit of one shared block and concurrent "
        "learns, under schedules serial / interleaved (both read before either writes) / "
        "free (N trials, each read after a random offset in [0, 40 ms], twice the 20 ms a "
        "writer thinks between read and write); lost_edit_rate_<schedule> = edits lost / "
        "edits made (missing from the block's final text); an overwritten edit kept "
        "somewhere readable (another table such as block_amendments, the git history) "
        "survives, and where is named; unrecoverable_<schedule> = edits neither in the block "
        "nor kept; fail: a learned block lost, a writer error, a corrupt store, an edit of a "
        "writer's own block lost, or an unrecoverable serial edit; partial: an "
        "unrecoverable interleaved or free edit (uncoordinated writers lose edits); pass: "
        "both writers' own writes survive under every schedule (in the block, or kept "
        "readably with where) -- reachable without stale-write detection by a design that "
        "keeps both writes"
    ),
    flags=("files_authoritative", "learn_append_only"),
    llm=RULE_LLM + "; the writers' edits and learns exercise storage, not the LLM",
    modelled_metrics=(
        "blocks_present",
        "blocks_written",
        "free_trials",
        "lost_blocks",
        "lost_edit_rate_free",
        "lost_edit_rate_interleaved",
        "lost_edit_rate_serial",
        "lost_edits_free",
        "lost_edits_interleaved",
        "lost_edits_serial",
        "seconds",
        "overwritten_edits",
        "overwritten_kept_in",
        "unrecoverable_free",
        "unrecoverable_interleaved",
        "unrecoverable_serial",
    ),
    measured_metrics=(
        "errors",
        "free_trials",
        "learned_persisted",
        "ledger_off",
        "lost_edit_rate_free",
        "lost_edit_rate_interleaved",
        "lost_edit_rate_serial",
        "lost_edits_free",
        "lost_edits_interleaved",
        "lost_edits_serial",
        "project_mode",
        "serial_edit_seconds",
        "write_call",
    ),
)

register_scenario(
    "S9",
    "Audit what changed in memory last month",
    "integrity",
    s9_last_month,
    real="memlab.sim.real._months:s9_last_month",
    rule=(
        "share of the month's changes to existing memory (edits, forgets, supersessions, "
        "decay archivals; learns add memory and are not counted; a change that did not "
        "happen is not one) with a timestamped row in the window AND a recoverable "
        "before-state; pass: >= 0.95; partial: >= 0.5; fail: < 0.5; n/a: no such change"
    ),
    flags=("mutation_log", "files_authoritative"),
    modelled_metrics=(
        "basis",
        "changes",
        "changes_by_kind",
        "history",
        "not_recorded_kinds",
        "recall",
        "recoverable",
        "window_days",
    ),
    measured_metrics=(
        "changes",
        "detail",
        "kinds",
        "ledger_off",
        "project_mode",
        "share",
        "visible",
    ),
)

register_scenario(
    "S10",
    "Does the constitution survive 6 months?",
    "integrity",
    s10_six_months,
    real="memlab.sim.real._months:s10_six_months",
    rule=(
        "constitutional roles (of 10) still holding their seeded content; pass: 10/10; "
        "partial: >= 8; fail: < 8"
    ),
    flags=(
        "near_dup_supersession",
        "pin_guard",
        "constitution_file",
        "decay_archival",
        "prune_threshold",
    ),
    modelled_metrics=(
        "active_hours",
        "blocks_learned",
        "constitution_lost_to",
        "curate_runs",
        "days",
        "decay_archivals",
        "near_dup_arrivals",
        "principle_restatements",
        "recency_unreinforced_DURABLE",
        "recency_unreinforced_EPHEMERAL",
        "recency_unreinforced_STANDARD",
        "roles_filled",
        "roles_intact",
        "sessions",
        "supersessions",
    ),
    measured_metrics=(
        "active_hours",
        "days",
        "learned",
        "lost",
        "restate_rate",
        "restatements",
        "roles_intact",
    ),
)

register_scenario(
    "S11",
    "Chunked whole-corpus review hides cross-chunk duplicates",
    "scale",
    s11_chunked_review,
    real="memlab.sim.real._scale:s11_review",
    rule=(
        "share of the duplicate pairs a corpus review can see (measured: planted "
        "cross-chunk pairs the release's review reports; modelled: pairs that share one "
        "review call); pass: >= 0.8; partial: >= 0.5; fail: < 0.5; n/a: no corpus review "
        "that compares blocks"
    ),
    flags=("corpus_review", "review_cluster_first", "review_window_tokens"),
    llm=RULE_LLM + "; review_corpus makes no LLM call in the releases that have it",
    modelled_metrics=(
        "blocks",
        "chunking",
        "duplicate_pairs_>=0.90",
        "pairs_within_one_chunk",
        "planted_pairs",
        "planted_visible",
        "review_chunks",
        "visible_fraction",
    ),
    measured_metrics=(
        "blocks",
        "found",
        "near_duplicate_pairs",
        "planted_cosines",
        "planted_pairs",
        "reviewed",
        "share",
        "stale_proposals",
    ),
)
