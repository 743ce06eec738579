"""Figures memlab takes from elsewhere, each defined once here with its source.

Modules import these names; ``tests/test_constants.py`` fails when a module defines one of them
again (or writes the decay-tier table out by hand).

elfmem figures were read from elfmem 0.20.0's source (the wheel on PyPI, installed in the
project's venv); the decay and penalty figures are unchanged since 0.8.0.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "DECAY_LAMBDA",
    "DECAY_TIERS",
    "PENALTY_FACTOR",
    "LAMBDA_CEILING",
    "PROTECTED_MAX_LAMBDA",
    "PRUNE_THRESHOLD",
    "NEAR_DUP_THRESHOLD",
    "EXACT_DUP_THRESHOLD",
    "tier_of_lambda",
    "is_penalised",
    "CHARS_PER_TOKEN",
    "SECONDS_PER_CALL",
    "STALE_AFTER_DAYS",
    "CONTRADICTION_MIN",
    "INT64_MAX",
    "MAX_FILE_BYTES",
    "MAX_FOLDER_DEPTH",
    "MAX_VALUE_BYTES",
    "MAX_YAML_NODES",
    "MAX_YAML_CHARS",
    "MAX_FM_COLUMNS",
    "PG_STATEMENT_TIMEOUT_MS",
    "PG_LOCK_TIMEOUT_MS",
    "PG_CONNECT_TIMEOUT_MS",
    "PG_CLIENT_GRACE_MS",
    "LAKE_FILE_ROWS",
    "NEIGHBOR_NUMPY_BELOW",
    "NEIGHBOR_MIN_RECALL",
    "FLEET_TASK_SECONDS",
    "FLEET_MAX_BATCH",
    "SIM_RESULTS_FOLDER",
    "GIT_TIMEOUT_S",
    "DOC_VALUES",
    "MISSING_TEXT",
    "LONG_CELL_SECONDS",
    "LETTA_BYTES_PER_TOKEN",
    "MAX_POLICY_BYTES",
    "MIGRATION_LAYOUTS",
    "DEFAULT_MIGRATION_LAYOUT",
    "ROOT_MEMORY_LABEL",
    "ROOT_MEMORY_TEXT",
    "PG_FIRST_NORMAL_OID",
]

# --- storage ----------------------------------------------------------------------------------

#: The folder under ``$MEMLAB_CACHE_DIR`` (default ``~/.cache/memlab``) holding the real rows'
#: result cache (``memlab.sim.cache``): never beside a store.
SIM_RESULTS_FOLDER = "sim-results"

#: Rows per Parquet file of a lake partition before the writer starts another file (a partition
#: of a fleet run is one file up to this many rows: few files for DuckDB and Polars to open,
#: each still small enough to read in one go).
LAKE_FILE_ROWS = 1_000_000
#: Work per fleet task: stores are batched so a task takes about this long, by the per-store
#: seconds measured so far in the run (Dask's guidance: 0.1-1 s of work per task).
FLEET_TASK_SECONDS = 0.5
#: Most stores in one fleet task (and per batch of a serial run).
FLEET_MAX_BATCH = 64

#: The largest value a pandas ``Int64`` column holds; an integer a store holds past it (a limit
#: of 10**30, ``inf``) is read as missing with a problem row, never an OverflowError.
INT64_MAX = 2**63 - 1

#: The largest store file memlab reads as text: 10 MB, a hundred times the 100,000 characters
#: Letta gives a block by default (blocks are usually a few thousand). A working-tree file or a
#: committed blob over it is listed with its size and an ``oversized`` problem row; its text is
#: never loaded (a working copy is only hashed, in pieces, to compare it with the commit), so
#: memory stays bounded whatever an agent commits.
MAX_FILE_BYTES = 10_000_000

#: The largest single value memlab holds from a database or an Agent File: a Letta server's
#: ``block.value`` / ``block_history.value`` (bytes as the database stores them) or a block value
#: of a ``.af`` (bytes of its JSON string), the same figure as a memory file. A value past it is
#: not read: its text is null, an ``oversized`` problem row names it with its size, and what it
#: cannot tell is null (a server's own character count is kept; a ``.af`` value's is unknown), so
#: one huge value costs about its size in memory once, transiently, never several copies.
MAX_VALUE_BYTES = MAX_FILE_BYTES

#: The deepest folder memlab walks into below a store's top (or its git folder). Letta and
#: elfmem paths are a few levels deep; a folder nested deeper is a ``too_deep`` problem row and
#: its files are not read (Python's own ``os.walk`` recurses once per level, and fails at ~1,000).
MAX_FOLDER_DEPTH = 64

#: How long one git process memlab starts may run (300 s: a whole-history ``git log`` of a
#: 10,000-commit memory repository takes a few seconds); past it the process group is killed and
#: the read stops with one line naming the store. ``MEMLAB_GIT_TIMEOUT`` (seconds) overrides it
#: (``memlab._git.deadline``).
GIT_TIMEOUT_S = 300

#: How far YAML memlab did not write (frontmatter, agent.yaml, proposal values) may expand
#: through its aliases: 100,000 values (scalars, lists, mappings) and 1,000,000 characters of
#: scalar text, or the text's own length when that is larger (without aliases a document never
#: expands past its text). Letta frontmatter and agent.yaml are a few dozen values; past this
#: the document is an alias bomb ("billion laughs": 316 bytes expand to 10**8 strings) and is
#: not read (``memlab.formats._yaml``).
MAX_YAML_NODES = 100_000
MAX_YAML_CHARS = 1_000_000

#: The most frontmatter keys of one memory file that become ``fm_<key>`` columns of the files
#: frame, and the most distinct ones a store's files frame holds (Letta writes a handful:
#: description, limit, read_only, ...). Keys past it stay in ``frontmatter_raw`` and ``fields``;
#: a ``frontmatter_keys`` problem row names the file and how many were left out of columns.
MAX_FM_COLUMNS = 64

#: How long one statement memlab sends a Letta PostgreSQL server may run (60 s: reading every
#: block of a large server takes a few seconds) and how long it waits for a table another session
#: has locked (10 s); past either the read stops with one line. ``MEMLAB_PG_STATEMENT_TIMEOUT`` and
#: ``MEMLAB_PG_LOCK_TIMEOUT`` (milliseconds) override them (``memlab.kinds.letta_server._pg``).
PG_STATEMENT_TIMEOUT_MS = 60_000
PG_LOCK_TIMEOUT_MS = 10_000
#: How long connecting to a Letta PostgreSQL server may take, startup and login included (10 s;
#: ``MEMLAB_PG_CONNECT_TIMEOUT``, milliseconds, libpq rounds it up to whole seconds, at least 2).
#: Once connected, memlab's own clock also bounds each statement, whatever the server does (one
#: that stops answering, or sends NOTICE messages forever): the statement timeout plus
#: :data:`PG_CLIENT_GRACE_MS`, so a live server's own timeout always speaks first.
PG_CONNECT_TIMEOUT_MS = 10_000
PG_CLIENT_GRACE_MS = 2_000

#: PostgreSQL's ``FirstNormalObjectId`` (``src/include/access/transam.h``): every object with a
#: smaller OID was made by ``initdb`` (the built-in types among them); a database's own types,
#: functions and extensions get this one or larger.
PG_FIRST_NORMAL_OID = 16384

# --- Letta Code -------------------------------------------------------------------------------

#: Letta Code 0.34.12's own token estimate of a memory file: ``ceil(UTF-8 bytes / 4)``
#: (``SYSTEM_PROMPT_BYTES_PER_TOKEN`` and ``estimateSystemTokens`` in ``letta.js``; ``letta memory
#: tokens``). Bytes, not characters: a different figure from :data:`CHARS_PER_TOKEN`.
LETTA_BYTES_PER_TOKEN = 4

#: The largest layout-policy file (``.git/letta-memory-layout-policy``, one word Letta Code
#: writes) memlab reads: 4 KB. A larger one counts as absent, as an unreadable one does for Letta.
MAX_POLICY_BYTES = 4096

# --- migrations to Letta Code ------------------------------------------------------------------

#: The memfs layouts ``memlab migrate --to letta`` writes (``--layout``): ``v2``, the root-marker
#: layout Letta Code 0.34.12 gives every new memfs agent (``buildCreateAgentRequest`` defaults
#: ``memoryPromptMode`` to ``root-memfs``), and ``v1``, the ``system/`` layout of the Letta server
#: and Letta Code up to 0.30 (memlab's output before v2, byte for byte).
MIGRATION_LAYOUTS = ("v2", "v1")
DEFAULT_MIGRATION_LAYOUT = "v2"

#: Letta Code 0.34.12's root memory block (``DEFAULT_ROOT_MEMORY_BLOCK`` in ``letta.js``): a block
#: labelled ``MEMORY`` becomes the root ``MEMORY.md`` with its value as the whole file, and an
#: agent without one gets this value (``ensureRootMemoryBlock``,
#: ``initialMemoryFilesFromCreateBody``).
ROOT_MEMORY_LABEL = "MEMORY"
ROOT_MEMORY_TEXT = "# Memory\n"

# --- elfmem: decay ----------------------------------------------------------------------------

#: Decay rate per active hour of each tier; recency = exp(-lambda * hours since reinforced).
#: elfmem ``scoring.py`` ``LAMBDA`` (``types.DecayTier``).
DECAY_LAMBDA: dict[str, float] = {
    "PERMANENT": 0.00001,
    "DURABLE": 0.001,
    "STANDARD": 0.010,
    "EPHEMERAL": 0.050,
}
DECAY_TIERS: tuple[str, ...] = tuple(DECAY_LAMBDA)

#: A negative outcome multiplies a block's stored lambda by this, capped at
#: :data:`LAMBDA_CEILING`; blocks at or below :data:`PROTECTED_MAX_LAMBDA` (DURABLE, PERMANENT)
#: are never penalised. elfmem ``config.py`` (``penalty_factor``, ``lambda_ceiling``) and
#: ``db/queries.py`` ``accelerate_block_decay`` (``_DURABLE_LAMBDA_THRESHOLD``).
PENALTY_FACTOR = 2.0
LAMBDA_CEILING = 0.050
PROTECTED_MAX_LAMBDA = 0.001

#: Recency below which elfmem archives a block as decayed: the ``prune_threshold`` config row
#: elfmem seeds (``db/queries.py``), used when a database has none.
PRUNE_THRESHOLD = 0.05


def tier_of_lambda(lam: Any) -> str | None:
    """The decay tier a stored ``decay_lambda`` belongs to, by elfmem's own rules.

    elfmem stores the tier's lambda and only ever changes it by penalties (x2, capped at 0.05,
    STANDARD and EPHEMERAL only), so a lambda equal to a tier's is that tier and one strictly
    between STANDARD and the ceiling is a penalised STANDARD block (the demo's 0.02). Anything
    else (missing, non-positive, or a value elfmem never writes) is None.
    """
    try:
        value = float(lam)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    for name, tier_lambda in DECAY_LAMBDA.items():
        if math.isclose(value, tier_lambda, rel_tol=1e-9, abs_tol=1e-12):
            return name
    if is_penalised(value):
        return "STANDARD"
    return None


def is_penalised(lam: Any) -> bool:
    """True for a lambda elfmem reaches only by penalising a STANDARD block (see
    :func:`tier_of_lambda`)."""
    try:
        value = float(lam)
    except (TypeError, ValueError):
        return False
    return DECAY_LAMBDA["STANDARD"] * (1 + 1e-9) < value < LAMBDA_CEILING * (1 - 1e-9)


# --- elfmem: near-duplicates ------------------------------------------------------------------

#: Cosine at or above which elfmem treats a new block as a near-duplicate (supersedes) and as an
#: exact duplicate (rejects). elfmem ``config.py`` ``near_dup_near_threshold`` /
#: ``near_dup_exact_threshold``. memlab's review uses the first as its near-duplicate default.
NEAR_DUP_THRESHOLD = 0.90

# --- neighbour search (memlab.embed.NeighborIndex) ---------------------------------------------

#: Below this many vectors the index is numpy alone (exact; faiss is not imported).
NEIGHBOR_NUMPY_BELOW = 2_000
#: An approximate index is used only where its recall measured on the data is at least this
#: (recall@10 of a sample of the indexed vectors, and of the pairs a threshold query finds).
NEIGHBOR_MIN_RECALL = 0.999
EXACT_DUP_THRESHOLD = 0.95

# --- the elfmem v2 re-evaluation doc (docs/elfmem-v2-substrate-reevaluation.md) ---------------

#: Tokens are estimated as characters / 4 (the doc's convention, used for every store kind).
CHARS_PER_TOKEN = 4.0

#: Seconds of LLM latency per call behind the doc's GPU-hours estimate.
SECONDS_PER_CALL = 14.0

#: The doc's §2 figures for the one instance it measured (the demo database), by headline
#: metric: a report's headline panel shows each beside the value it computed.
DOC_VALUES: dict[str, float] = {
    "llm_calls": 2903,
    "live_tokens": 31633,
    "input_per_corpus_token": 52.1,
    "calls_per_surviving_block": 20.7,
    "input_per_summary_token": 188.7,
    "blocks_active": 140,
    "supersession_share": 41 / 42,
    "role_slots_left": 4,
    "total_active_hours": 3.69,
    "gpu_hours": 11.0,
}

# --- memlab's own defaults --------------------------------------------------------------------

#: What text shows for a figure that was not checked or not recorded (JSON: null, never 0).
MISSING_TEXT = "–"

#: Seconds a report notebook's cell may run before the terminal is told it is a long step.
LONG_CELL_SECONDS = 20.0

#: Days without evidence of use before a unit is stale (review) or a block is listed as stale
#: (the Letta server audit).
STALE_AFTER_DAYS = 90

#: Cosine at or above which a negated pair is a contradiction candidate in review.
CONTRADICTION_MIN = 0.60
