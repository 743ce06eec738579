"""Iterations as data: each is a frozen set of architecture choices the world model executes.

The six iterations are the ones ``elfmem-v2-substrate-reevaluation.md`` §6 argues in prose.
Every field is a choice the world model (:mod:`memlab.sim.model.world`) or a scenario reads; nothing
here says how a scenario comes out. A new iteration is an old one with some choices changed::

    ITERATIONS[5].with_(name="7: cluster-first review", review_cluster_first=True)

``ITERATIONS`` is keyed by the doc's iteration number, so ``ITERATIONS[5]`` is Iteration 5 (the
doc's incumbent), the natural base for an Iteration 7.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from memlab.constants import EXACT_DUP_THRESHOLD, NEAR_DUP_THRESHOLD, PRUNE_THRESHOLD
from memlab.errors import SimulationError

__all__ = ["Iteration", "ITERATIONS", "COMPONENTS", "BASELINE_LOC", "resolve_iterations"]

#: elfmem's source size when the doc was written (§2.4: "the 23,499 source lines").
BASELINE_LOC = 23_499

#: Rough size of each subsystem a choice switches on: (lines, concepts a maintainer holds).
#: Only the total (23,499), ``migrate.py`` MCP-drift scanning (836) and ``rescue.py`` (307)
#: are figures from the doc; the split of the rest is an estimate chosen so that Iteration 5
#: deletes ~8k lines, the low end of the doc's §7 "roughly 8-11k of 23.5k".
COMPONENTS: dict[str, tuple[int, int]] = {
    "state_machine": (2_000, 3),  # inbox/active/archived, consolidate() pipeline
    "write_time_analysis": (900, 2),  # process_block LLM call: summary, alignment, tags
    "supersession": (700, 2),  # near-dup thresholds 0.90/0.95, supersede/reject
    "pairwise_contradiction": (3_500, 4),  # detection loop, prefilter, top_k, ADR 0007 checkpoints
    "decay_archival": (2_300, 4),  # four tiers, active-hour clock, curate() archival, prune
    "rescue_lock": (900, 2),  # rescue.py (307) + embedding-model lock
    "layered_config": (1_436, 5),  # migrate.py drift scan (836) + scattered env/config readers
    "seed_templates": (400, 1),  # init --seed
    "semantic_index": (2_000, 3),  # embeddings, vector search, RRF
    "crud": (500, 3),  # edit/forget/ls + MCP tools + guide entries
    "mutation_log": (250, 1),  # block_mutations table
    "pin_guard": (60, 1),  # pinned column + refusal
    "corpus_review": (700, 2),  # one-call review, proposal file, --apply
    "cluster_first_review": (250, 1),  # chunk by embedding cluster
    "files_substrate": (1_000, 3),  # block-file parser/writer, git as history
    "index_rebuild": (400, 1),  # derived index, `elfmem index`
    "gateway": (500, 3),  # profiles, api_key_env, one resolution chain, preflight
}
#: What is neither switched on nor off by any choice: retrieval scoring, graph, peers, minds,
#: MCP surface, guide(). Sized so Iteration 1 totals the doc's 23,499.
_CORE_LOC = BASELINE_LOC - sum(
    COMPONENTS[name][0]
    for name in (
        "state_machine",
        "write_time_analysis",
        "supersession",
        "pairwise_contradiction",
        "decay_archival",
        "rescue_lock",
        "layered_config",
        "seed_templates",
        "semantic_index",
    )
)
_CORE_CONCEPTS = 12

_KEY_RESOLUTIONS = ("sdk_default", "explicit_chain")


@dataclass(frozen=True)
class Iteration:
    """One architecture: the choices a world model runs under. Frozen; derive with ``with_``."""

    name: str
    number: int | None = None
    #: One line for the journey table: what this iteration tries on top of its parent.
    change: str = ""

    # --- write path -------------------------------------------------------------------------
    #: One LLM call per learned block at write time (summary, alignment, tags). Skippable when
    #: curation moved to review: then it is only a summary and the block is usable without it.
    write_time_analysis: bool = True
    #: A learned block within [near, exact) cosine of an active block archives that block.
    near_dup_supersession: bool = True
    near_dup_threshold: float = NEAR_DUP_THRESHOLD
    #: At or above this cosine the incoming block is rejected as an exact duplicate.
    exact_dup_threshold: float = EXACT_DUP_THRESHOLD
    #: Refuse supersession of pinned or PERMANENT blocks (the incoming block is kept instead).
    pin_guard: bool = False
    #: Pairwise LLM contradiction check of each learned block against similar active blocks.
    pairwise_contradiction: bool = True
    contradiction_prefilter: float = 0.40
    #: Cap on contradiction calls per learned block (ADR 0007); None means uncapped.
    contradiction_top_k: int | None = 10

    # --- control and history ----------------------------------------------------------------
    #: edit(), forget(), ls(): direct mutation without an LLM.
    crud: bool = False
    #: Operations recorded with time and cause in a mutation table (empty: none).
    mutation_log: tuple[str, ...] = ()

    # --- curation ---------------------------------------------------------------------------
    #: Whole-corpus review: one call per window of corpus, proposal-only.
    corpus_review: bool = False
    #: Chunk the corpus by embedding cluster before review (the S11 mitigation the doc defers).
    review_cluster_first: bool = False
    review_window_tokens: int = 128_000
    #: curate() archives blocks whose recency exp(-lambda * hours) drops below prune_threshold.
    decay_archival: bool = True
    prune_threshold: float = PRUNE_THRESHOLD
    curate_interval_hours: float = 40.0

    # --- substrate --------------------------------------------------------------------------
    #: Markdown files in git are the truth; any database is a derived index.
    files_authoritative: bool = False
    #: learn() appends to log/YYYY-MM.md instead of rewriting a curated file.
    learn_append_only: bool = False
    #: The constitution is self.md, read straight into the self frame, never a block.
    constitution_file: bool = False
    #: Embeddings and vector search exist at all (in files mode: the derived index).
    semantic_index: bool = True

    # --- onboarding and keys ----------------------------------------------------------------
    #: init writes the ten constitutional blocks into memory.
    seed_on_init: bool = True
    #: "sdk_default": keys come from the provider SDK's own env var (OPENAI_API_KEY), the
    #: adapter is built with api_key=None; "explicit_chain": profiles name api_key_env or
    #: api_key: none, one printed resolution chain.
    key_resolution: str = "sdk_default"
    #: One real call per profile at startup; a missing key fails the boot.
    preflight: bool = False

    # --- simplicity -------------------------------------------------------------------------
    #: Override the component-derived estimates (None: derive from the choices above).
    loc: int | None = None
    concepts: int | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.near_dup_threshold <= self.exact_dup_threshold <= 1.0:
            raise SimulationError(
                f"{self.name}: need 0 < near_dup_threshold <= exact_dup_threshold "
                f"<= 1, got {self.near_dup_threshold} / {self.exact_dup_threshold}"
            )
        if self.key_resolution not in _KEY_RESOLUTIONS:
            raise SimulationError(f"{self.name}: key_resolution must be one of {_KEY_RESOLUTIONS}")
        if self.contradiction_top_k is not None and self.contradiction_top_k < 0:
            raise SimulationError(f"{self.name}: contradiction_top_k must be >= 0 or None")
        if self.review_cluster_first and not self.semantic_index:
            raise SimulationError(
                f"{self.name}: cluster-first review needs embeddings (semantic_index=True)"
            )

    def with_(self, **changes: Any) -> "Iteration":
        """A copy with some choices changed; unknown names raise (a typo is not a choice)."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(f"Iteration has no choice(s) {unknown}; choices: {sorted(known)}")
        if "number" not in changes and "name" in changes:
            changes["number"] = None
        return dataclasses.replace(self, **changes)

    # ---- derived views -----------------------------------------------------------------------
    @property
    def label(self) -> str:
        return self.name

    @property
    def can_edit(self) -> bool:
        """Can an operator change or remove a block directly (API or a text edit)?"""
        return self.crud or self.files_authoritative

    @property
    def history(self) -> str:
        """Where changes are recorded: 'git' (every file change), 'mutation_log', or 'none'."""
        if self.files_authoritative:
            return "git"
        return "mutation_log" if self.mutation_log else "none"

    @property
    def supersession_active(self) -> bool:
        # Files as truth removes the inbox/active state machine supersession lives in.
        return self.near_dup_supersession and not self.files_authoritative

    @property
    def decay_active(self) -> bool:
        return self.decay_archival and not self.files_authoritative

    def components(self) -> list[str]:
        """The subsystems these choices switch on (keys of ``COMPONENTS``)."""
        on: list[str] = []
        db_truth = not self.files_authoritative
        if db_truth:
            on += ["state_machine", "rescue_lock"]
        if self.write_time_analysis:
            on.append("write_time_analysis")
        if self.supersession_active:
            on.append("supersession")
        if self.pairwise_contradiction:
            on.append("pairwise_contradiction")
        if self.decay_active:
            on.append("decay_archival")
        on.append("layered_config" if self.key_resolution == "sdk_default" else "gateway")
        if self.seed_on_init:
            on.append("seed_templates")
        if self.semantic_index:
            on.append("semantic_index")
            if self.files_authoritative:
                on.append("index_rebuild")
        if self.crud:
            on.append("crud")
        if self.mutation_log and db_truth:
            on.append("mutation_log")
        if self.pin_guard and self.supersession_active:
            on.append("pin_guard")
        if self.corpus_review:
            on.append("corpus_review")
            if self.review_cluster_first:
                on.append("cluster_first_review")
        if self.files_authoritative:
            on.append("files_substrate")
        return on

    def _estimate(self, override: int | None, core: int, column: int) -> int:
        """An override when given, else the core plus the switched-on components' share."""
        if override is not None:
            return int(override)
        return core + sum(COMPONENTS[name][column] for name in self.components())

    @property
    def estimated_loc(self) -> int:
        return self._estimate(self.loc, _CORE_LOC, 0)

    @property
    def estimated_concepts(self) -> int:
        return self._estimate(self.concepts, _CORE_CONCEPTS, 1)

    def choices(self) -> dict[str, Any]:
        """The choices as a flat dict (for tables)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["mutation_log"] = ",".join(self.mutation_log) or "-"
        out["estimated_loc"] = self.estimated_loc
        out["estimated_concepts"] = self.estimated_concepts
        return out


_BASELINE = Iteration(
    name="1: baseline v0.19.3",
    number=1,
    change="Baseline v0.19.3 as shipped",
)
_CRUD = _BASELINE.with_(
    name="2: CRUD + pin guard + log",
    number=2,
    change="CRUD + pin guard + mutation log",
    crud=True,
    pin_guard=True,
    mutation_log=("supersede", "edit", "forget"),
)
_REVIEW = _CRUD.with_(
    name="3: corpus review",
    number=3,
    change="Corpus-level review replaces pairwise",
    pairwise_contradiction=False,
    corpus_review=True,
)
_FILES = _REVIEW.with_(
    name="4: files as truth",
    number=4,
    change="Files authoritative, index derived",
    files_authoritative=True,
    learn_append_only=True,
    constitution_file=True,
    near_dup_supersession=False,
    decay_archival=False,
    seed_on_init=False,
    pin_guard=False,
    mutation_log=(),
)
_GATEWAY = _FILES.with_(
    name="5: gateway + preflight",
    number=5,
    change="Gateway + resolution chain + preflight",
    key_resolution="explicit_chain",
    preflight=True,
)
_NO_INDEX = _GATEWAY.with_(
    name="6: drop SQLite",
    number=6,
    change="Drop SQLite entirely (ripgrep + whole files)",
    semantic_index=False,
)

#: The doc's six iterations keyed by their number: ``ITERATIONS[5]`` is Iteration 5.
ITERATIONS: dict[int, Iteration] = {
    it.number: it
    for it in (_BASELINE, _CRUD, _REVIEW, _FILES, _GATEWAY, _NO_INDEX)
    if it.number is not None
}


def resolve_iterations(
    iterations: Iterable[Iteration | int] | Mapping[Any, Iteration] | Iteration | None,
) -> list[Iteration]:
    """Iterations from None (all six), numbers, Iteration objects or a mapping of them."""
    if iterations is None:
        return list(ITERATIONS.values())
    if isinstance(iterations, Iteration):
        return [iterations]
    if isinstance(iterations, Mapping):
        iterations = list(iterations.values())
    out: list[Iteration] = []
    for item in iterations:
        if isinstance(item, str) and item.strip().isdigit():
            item = int(item)
        if isinstance(item, Iteration):
            out.append(item)
        elif isinstance(item, int) and item in ITERATIONS:
            out.append(ITERATIONS[item])
        elif isinstance(item, str):
            # The CLI passes names: exact, or the start of one ("5:", "gateway").
            hits = [it for it in ITERATIONS.values() if it.name == item] or [
                it for it in ITERATIONS.values() if item.lower() in it.name.lower()
            ]
            if len(hits) != 1:
                raise SimulationError(
                    f"{item!r} names {len(hits)} iterations; use 1-6 or a full name"
                )
            out.append(hits[0])
        else:
            raise SimulationError(f"not an iteration: {item!r} (use 1-6 or an Iteration)")
    names = [it.name for it in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SimulationError(f"iteration names must be unique; repeated: {dupes}")
    return out
