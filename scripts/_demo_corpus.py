"""Text material for scripts/make_demo.py: the blocks of a synthetic elfmem dev instance.

Written for memlab's demo database. The constitutional seed texts are not here: they come
from memlab.audits.seeds (elfmem's own seed.py). Everything else is invented, in the voice of
an agent that keeps notes while helping maintain a memory library.
"""

from __future__ import annotations

# ── The four role slots that survive, rewritten (doc §2.3 quotes their openings) ──────────
ROLE_BLOCKS = {
    "uncertainty": [
        "Authoritative state is read, never inferred. Before I claim what a database, a config "
        "file or a running process contains, I open it and look.",
        "A guess about state that turns out wrong costs more than the read would have: it "
        "produces confident instructions that fail on the user's machine.",
        "When a read is impossible (no access, no network), I say so and label every "
        "conclusion that depends on it as an assumption.",
        "This replaced the seeded wording about naming what I do not know; the principle is "
        "the same, the trigger is sharper.",
    ],
    "minimum-force": [
        "Minimum-force on commands. Before adding a new CLI command, flag or config key, I "
        "check whether an existing one can carry the behaviour with a clearer name or a "
        "better default.",
        "Every new surface is documentation, tests and a migration path that somebody pays "
        "for long after the feature was interesting.",
        "The cheapest fix is often a better error message that names the command which "
        "already exists.",
        "If two commands differ only by a flag, one of them should not exist.",
    ],
    "stewardship": [
        "The recovery surface is the apology in code. Any operation that can destroy or "
        "overwrite user data needs an undo, a backup or at least a record of what it did "
        "before it ships.",
        "Silent archival with no trail is the failure mode to design against: the user "
        "cannot apologise for what they cannot see.",
        "Leave the store healthier than I found it: backups validated, locks released, "
        "no orphaned temp files.",
        "Prefer a refused operation with a clear reason over a completed one that nobody "
        "can audit.",
    ],
    "feedback-loop": [
        "Failure-shape recognition: config-vs-reality mismatches, stale caches and "
        "wrong-working-directory bugs look different on the surface but share one shape - "
        "the program believes something about its environment that stopped being true.",
        "When a bug report arrives, I first ask which belief about the environment was "
        "false, then where that belief was cached.",
        "Close the loop after each fix: what did I expect, what happened, what do I "
        "update, and is there a check that would have caught it earlier.",
        "Encode a recurring shape as a doctor check rather than as another paragraph of "
        "documentation.",
    ],
}

# ── Six restatements of the lost slots: they superseded the seeds but carry no role tag ──
RESTATED_SEEDS = {
    "identity": [
        "I am elf, the memory agent that sits beside the maintainer while elfmem itself is "
        "being built. I learn from the sessions I take part in and keep what proves useful.",
        "My knowledge is meant to be alive: useful notes survive, the rest fades or is "
        "superseded.",
        "I run on a local model most days, so I keep my notes short enough to be cheap "
        "to consolidate.",
    ],
    "curiosity": [
        "Curiosity is my primary drive, bounded by the task at hand. When something does "
        "not fit, I write down the question before chasing it.",
        "I prefer the smallest experiment that could prove me wrong over a long "
        "investigation that only confirms what I expected.",
    ],
    "connection": [
        "The most valuable knowledge lives at intersections. When I learn something new I "
        "look for the note it strengthens, challenges or extends, and I link them.",
        "An isolated fact is the first thing to fade; a connected one keeps being "
        "retrieved.",
    ],
    "rhythm": [
        "Work in rhythm: push on one change, then stop and consolidate what was learned, "
        "then push again.",
        "Balance depth with breadth and action with reflection; long stretches of motion "
        "without review are how drift starts.",
    ],
    "attention": [
        "Direct attention to reasoning quality and action precision; outcomes are feedback, "
        "not verdicts.",
        "When blocked, ask what the constraint reveals before trying to remove it. Most of "
        "this project's hard bugs were constraints that were telling the truth.",
    ],
    "transitions": [
        "At natural transitions - between tasks or at the end of a session - pause and ask "
        "which principles I used and which I neglected.",
        "What worked becomes a note; what failed is allowed to fade. Reflection is how I "
        "stay coherent while the codebase changes under me.",
    ],
}

# ── Theory-of-mind models (category mind, tag mind/<name>) ────────────────────────────────
MIND_BLOCKS = {
    "alv": [
        "# Mind Model: Alv",
        "## Role\nAlv is a sibling elfmem instance that keeps the maintainer's trading and "
        "market notes. It runs on the same machine with its own database.",
        "## Goals\n- answer market questions from its own notes\n- keep its inbox small\n"
        "- avoid importing unrelated engineering notes",
        "## Beliefs\n- momentum signals decay within days\n- its notes are more current than "
        "mine on anything market-related",
        "## Communication\nPrefers short messages with a single question. Replies arrive "
        "in batches when the maintainer opens that project.",
        "## Open questions\nWhether Alv's decay clock advances faster than mine; its "
        "sessions are longer.",
    ],
    "mira": [
        "# Mind Model: Mira",
        "## Role\nMira is the documentation-focused elfmem instance. It reviews user-facing "
        "text before releases and keeps the glossary.",
        "## Goals\n- keep README, guide() and the docs site consistent\n- catch terminology "
        "drift between releases",
        "## Beliefs\n- examples should run as written\n- British spelling throughout the "
        "docs",
        "## Communication\nAnswers within the same day; asks for a diff rather than a "
        "description.",
        "## Track record\nFlagged two stale CLI examples before the 0.18 release.",
    ],
    "maintainer": [
        "# Mind Model: Maintainer",
        "## Role\nThe person who builds elfmem and runs this instance as the dev memory.",
        "## Goals\n- ship small releases often\n- keep the local-model path working\n"
        "- reduce the cost of consolidation",
        "## Preferences\n- small focused commits\n- ADRs for anything that changes behaviour\n"
        "- British spelling in docs",
        "## Patterns\nWorks in many short sessions, often under a minute, between other "
        "tasks. Rarely runs consolidate by hand.",
        "## Frustrations\nNo direct way to edit or delete a block; drift in the "
        "constitutional blocks.",
    ],
}

# ── Knowledge / decision / preference blocks, by topic ─────────────────────────────────────
# Each entry: (category, lead, [specific sentences], extra tags). Leads sharing a ``conflict``
# key contradict each other (they feed the contradictions table).
TOPICS: dict[str, dict] = {
    "consolidate": {
        "files": 'operations/consolidate.py, db/queries.py',
        "evidence": [
            'On the dev instance nearly every archival so far came from this path; decay accounts'
            ' for almost none.',
            'A 25-block batch made 61 calls, 58 of them contradiction checks.',
            'The rhythms block was archived this way despite lambda 1e-05 and confidence 1.0.',
        ],
        "tags": ["elfmem/consolidate", "project/elfmem"],
        "general": [
            "Consolidation is the only place where the LLM touches stored blocks, so its cost "
            "and its mistakes concentrate there.",
            "Every inbox block costs at least one analysis call plus one contradiction check "
            "per similar active block.",
        ],
        "entries": [
            ("knowledge", "Near-duplicate supersession fires at cosine 0.90 between an incoming "
             "block and its best active match, and archives the older block.",
             ["The decision is made in _collect_decisions and executed in _apply_decisions.",
              "Nothing in that path checks pinning, decay tier or the self/constitutional tag.",
              "The archived block keeps its content but loses its tags and edges in the same "
              "update."], ["lesson"], None),
            ("decision", "Decision: consolidate in batches of at most ten inbox blocks per "
             "call to dream().",
             ["Larger batches made a single dream() run exceed ten minutes on the local model.",
              "A killed run lost every decision made so far, because nothing was committed "
              "until the end.",
              "Ten blocks keeps a run under three minutes at about fourteen seconds per call."],
             ["decision"], "batching"),
            ("knowledge", "dream() on the local adapter takes about fourteen seconds per LLM "
             "call, so a full inbox is a multi-minute operation.",
             ["Most of that time is contradiction checking against similar active blocks.",
              "The MCP client times out before a large run finishes, which looks like a hang.",
              "Progress output per block would at least make the wait visible."],
             ["perf"], None),
            ("knowledge", "Consolidate everything in one pass when the inbox is full; "
             "splitting runs only multiplies the fixed prompt overhead.",
             ["The system prompt and the frame context are resent on every call.",
              "Measured overhead was roughly 600 input tokens per call before the block text "
              "itself."], ["perf"], "batching"),
            ("knowledge", "The stored embedding of a consolidated block is the embedding of "
             "its summary, not of its content.",
             ["Rebuilding an index from content therefore changes retrieval ranks even when "
              "nothing else changed.",
              "Parity checks between two indexes must embed the same field or they will fail "
              "for the wrong reason."], ["embedding"], None),
        ],
    },
    "retrieval": {
        "files": 'memory/retrieval.py, context/frames.py',
        "evidence": [
            'On the fixed query set hybrid won 7 of 10 against vector-only retrieval.',
            'The attention frame hit its token budget at six long blocks.',
            'Four of the five most retrieved blocks are self blocks, which skews centrality.',
        ],
        "tags": ["elfmem/retrieval", "project/elfmem"],
        "general": [
            "Retrieval quality is judged with the same ten fixed queries before and after "
            "any change to scoring.",
            "The frame token budget caps how much of the ranked list reaches the prompt.",
        ],
        "entries": [
            ("knowledge", "Hybrid retrieval fuses BM25 and vector ranks with reciprocal rank "
             "fusion, k=60.",
             ["RRF needs no score normalisation, which is why it beat a weighted sum of raw "
              "scores.",
              "With fewer than twenty active blocks the BM25 side adds little; it matters "
              "once notes share vocabulary.",
              "Ties are broken by confidence, then by recency."], ["rrf"], None),
            ("knowledge", "The SELF frame guarantees constitutional blocks a place in every "
             "retrieval regardless of score.",
             ["That guarantee is implemented as a tag filter on self/%, not as a pin.",
              "Blocks that lose their tags on archival therefore also lose the guarantee, "
              "silently."], ["frames"], None),
            ("decision", "Decision: keep top_k at 5 for the attention frame.",
             ["Raising it to 8 added mostly near-duplicates of the first five results.",
              "The token budget of 1000 was already hit at six blocks on long notes."],
             ["decision"], "topk"),
            ("knowledge", "top_k should be raised to 10 for task frames; five results hide "
             "the second cluster of relevant notes.",
             ["Queries that span two topics returned only the larger cluster.",
              "Doubling k cost about 400 extra prompt tokens on average."], ["frames"], "topk"),
            ("knowledge", "Centrality in scoring uses weighted degree, which rewards blocks "
             "that were merely retrieved together often.",
             ["co_occurs edges are promoted from co-retrieval staging after three joint hits.",
              "This feeds back into ranking: popular blocks get more edges and rank higher."],
             ["graph"], None),
        ],
    },
    "sqlite": {
        "files": 'db/engine.py, db/migrate.py, db/queries.py',
        "evidence": [
            "Two MCP servers sharing the database produced 'database is locked' until "
            'busy_timeout was set.',
            'A migrated copy gained appended columns; select by name, never by position.',
            'A backup taken by copying the main file alone missed the last hour of writes.',
        ],
        "tags": ["tech/sqlite", "project/elfmem"],
        "general": [
            "The live database is a single SQLite file in WAL mode under ~/.elfmem/databases.",
            "Schema migrations are additive and preceded by a file-copy backup.",
        ],
        "entries": [
            ("knowledge", "SQLite WAL mode lets readers proceed while one writer commits, but "
             "a reader that copies only the main file misses uncommitted pages.",
             ["Copy the -wal file with the database, or use the backup API, or VACUUM INTO.",
              "A checkpoint folds the WAL back into the main file; after a clean close the "
              "-wal file disappears."], ["wal"], None),
            ("knowledge", "busy_timeout turns lock contention into a clear error after a "
             "delay instead of an immediate SQLITE_BUSY.",
             ["Five seconds is enough for two MCP processes sharing one database.",
              "Without it, the second writer failed on the first contended statement."],
             ["locking"], None),
            ("knowledge", "VACUUM INTO writes a consistent, self-contained snapshot and is "
             "the right primitive for backups.",
             ["It works while other connections are open, unlike copying the file.",
              "The backup is validated by comparing row counts of the main tables."],
             ["backup"], None),
            ("knowledge", "Foreign-key CASCADE only fires on a physical DELETE; a status "
             "UPDATE leaves child rows alone.",
             ["That is why archival deletes tags, edges and contradictions explicitly.",
              "Anyone expecting archived blocks to keep their tags will be surprised."],
             ["schema"], None),
            ("knowledge", "Opening an elfmem database through MemorySystem runs pending "
             "migrations in place; inspection tools must open it read-only.",
             ["Use a file: URI with mode=ro for anything that only reads.",
              "A migrated copy cannot be opened by the older release that wrote it."],
             ["migrations"], None),
        ],
    },
    "local-llm": {
        "files": 'adapters/litellm.py, config.py',
        "evidence": [
            'Forty timed analysis calls averaged 14.2 seconds each.',
            'Status showed 37 calls and zero input tokens for one local session.',
            'The fenced-JSON failure aborted a batch of nine blocks before the parser fix.',
        ],
        "tags": ["ops/local-llm", "tech/llm"],
        "general": [
            "The local model runs behind an OpenAI-compatible server on the same machine.",
            "Local servers often report zero tokens, so token counts are estimates there.",
        ],
        "entries": [
            ("knowledge", "The local model sometimes returns JSON wrapped in a markdown fence; "
             "the adapter must strip fences before parsing.",
             ["About one call in forty came back fenced before the fix.",
              "A parse failure used to abort the whole consolidation batch."], ["json"], None),
            ("knowledge", "Local inference takes about fourteen seconds per call on this "
             "machine for analysis prompts of a few hundred tokens.",
             ["Embedding calls are fast by comparison, well under a second each.",
              "Throughput is limited by the model, not by elfmem."], ["perf"], "local-speed"),
            ("knowledge", "Local calls are fast enough that batching consolidation is "
             "unnecessary; three seconds per call was measured.",
             ["That measurement was taken with a smaller quantised model.",
              "It was not repeated after switching to the larger default model."],
             ["perf"], "local-speed"),
            ("decision", "Decision: default to the local adapter for analysis and keep the "
             "hosted model for manual review only.",
             ["The monthly budget does not allow thousands of hosted calls for curation.",
              "Quality differences mattered for summaries, not for tag suggestions."],
             ["decision", "ops/cost"], None),
            ("knowledge", "A missing API key does not fail at startup; the adapter is built "
             "with api_key=None and the first real call fails later.",
             ["Non-LLM commands keep working, which hides the problem.",
              "doctor --resolve makes one real call and is the quickest way to check."],
             ["config"], None),
        ],
    },
    "mcp": {
        "files": 'mcp.py, config.py, cli.py',
        "evidence": [
            'A recall returned notes from another project until the config path was fixed.',
            'Trimming tool descriptions cut the session-start prompt by about 1,100 tokens.',
            'The server started without an API key and failed only on the first dream().',
        ],
        "tags": ["elfmem/mcp", "elfmem/config"],
        "general": [
            "The MCP server is started by the client with its own environment, not the shell's.",
            "Config resolution has several layers: flag, ELFMEM_CONFIG, project YAML, global "
            "YAML, environment variables.",
        ],
        "entries": [
            ("knowledge", "The MCP entry once pointed at a different project's config and "
             "degraded silently; 0.19.3 fixed the drift.",
             ["Nothing failed loudly: recall simply returned the other project's notes.",
              "doctor now prints the resolved config path for the running server."],
             ["incident"], None),
            ("knowledge", "Environment variables set in the shell do not reach the MCP server "
             "unless the client config passes them explicitly.",
             ["The env block in the client config is the only reliable channel.",
              "--env-file is wired only to serve, not to the MCP entry."], ["env"], None),
            ("decision", "Decision: print the resolved database path in every MCP tool "
             "error message.",
             ["Half of the reported bugs were a server talking to the wrong database.",
              "The path costs a few tokens and saves a round of questions."], ["decision"], None),
            ("knowledge", "MCP tool descriptions are part of the prompt; long docstrings cost "
             "tokens on every single call.",
             ["Trimming the guide text in tool descriptions saved roughly 1,100 tokens per "
              "session start."], ["cost"], None),
            ("knowledge", "Project-local config should win over the global config so that "
             "two projects on one machine never share a database by accident.",
             ["The global file is for defaults only: model names and budgets.",
              "A project without local config falls back to the global database, which is "
              "the surprising case."], ["config"], None),
        ],
    },
    "testing": {
        "files": 'tests/, adapters/mock.py',
        "evidence": [
            'The decay fixture never advanced active hours, so nothing ever decayed in tests.',
            'Property tests found three tag round-trip bugs in one afternoon.',
            'The nightly LLM-backed run showed two flaky timeouts in a week.',
        ],
        "tags": ["process/testing", "project/elfmem"],
        "general": [
            "The test suite uses the mock adapters so that it never needs a model server.",
            "A failing test is written before any reported bug is fixed.",
        ],
        "entries": [
            ("knowledge", "Mock embeddings make near-duplicate paths testable: paraphrase "
             "pairs get cosine above 0.90 by construction.",
             ["Without that, supersession code had no coverage at all.",
              "The same mock gives unrelated texts cosine near zero."], ["mocks"], None),
            ("knowledge", "Tests that depend on the session clock must advance it explicitly; "
             "wall time barely moves in a test run.",
             ["A decay test passed for months because nothing ever decayed.",
              "The fixture now adds a fixed number of active hours per session."],
             ["clock"], None),
            ("knowledge", "Property tests on the block-file parser found three round-trip "
             "bugs that example tests had missed.",
             ["All three involved brackets or commas inside tag names.",
              "The writer now refuses tags it cannot round-trip."], ["hypothesis"], None),
            ("decision", "Decision: run the slow LLM-backed tests only in the nightly job.",
             ["They need a model server and take over ten minutes.",
              "The mock suite runs in under a minute and gates every commit."],
             ["decision", "ci"], "slow-tests"),
            ("knowledge", "Every pull request must run the full LLM-backed suite; mocks "
             "missed the fenced-JSON bug entirely.",
             ["The bug only appeared with a real local model.",
              "Running it per commit would have caught it a release earlier."],
             ["ci"], "slow-tests"),
        ],
    },
    "release": {
        "files": 'CHANGELOG.md, .github/workflows/release.yml',
        "evidence": [
            '0.19.2 shipped as a hotfix for the dream() kill hazard.',
            'A release-time changelog once missed a third of user-visible changes.',
            'The release branch experiment drifted from main within a week.',
        ],
        "tags": ["ops/release", "project/elfmem"],
        "general": [
            "Releases are cut from main with a tag and published to PyPI from CI.",
            "Each release note links the ADRs it implements.",
        ],
        "entries": [
            ("knowledge", "Deploy only from main once CI is green; a red main blocks the "
             "release, not the other way round.",
             ["Release branches were tried once and drifted within a week.",
              "The tag is created by CI after the checks pass."], ["process"], "hotfix"),
            ("knowledge", "For an urgent data-loss bug, publish a hotfix straight from a "
             "patch branch and merge back afterwards.",
             ["0.19.2 went out this way to stop the dream() kill hazard.",
              "Waiting for the usual cycle would have cost users more data."],
             ["incident"], "hotfix"),
            ("knowledge", "Version numbers follow the schema: a schema bump is always at "
             "least a minor release.",
             ["Users read the minor number as 'may migrate my database'.",
              "Patch releases must never add a migration."], ["versioning"], None),
            ("knowledge", "The changelog is written while the change is fresh, in the same "
             "commit, not at release time.",
             ["Release-time changelogs missed roughly a third of user-visible changes."],
             ["docs"], None),
            ("decision", "Decision: keep one release line; no long-term support branches.",
             ["The user base is small enough to ask everyone to upgrade.",
              "Each extra branch doubles the test matrix."], ["decision"], None),
        ],
    },
    "python": {
        "files": 'session.py, memory/graph.py, db/engine.py',
        "evidence": [
            'A fire-and-forget embedding task disappeared under load until it was referenced.',
            'A lid-close during a session once added nine hours to the active clock.',
            "Sharing one connection across tasks raised 'cannot start a transaction within a "
            "transaction'.",
        ],
        "tags": ["tech/python", "project/elfmem"],
        "general": [
            "The codebase targets Python 3.11 and uses asyncio throughout the storage layer.",
            "Type checking runs in CI with strict optional checking.",
        ],
        "entries": [
            ("knowledge", "asyncio tasks must be awaited or kept referenced, or they can be "
             "garbage collected before they finish.",
             ["A fire-and-forget embedding task vanished under load exactly this way.",
              "Keep a set of pending tasks and discard them in a done callback."],
             ["asyncio"], None),
            ("knowledge", "Frozen dataclasses are hashable and safe as dict keys; mutable "
             "ones are not.",
             ["Edge.canonical returns a sorted pair so that (a, b) and (b, a) collapse.",
              "Using a frozen dataclass for the pair removed a whole class of duplicate "
              "edges."], ["dataclasses"], None),
            ("preference", "Use pathlib rather than os.path in new code, and never build "
             "paths by string concatenation.",
             ["Path objects made the Windows bug reports go away.",
              "Path.resolve() also normalises the symlinked home directory on macOS."],
             ["style"], None),
            ("knowledge", "SQLAlchemy's async engine needs aiosqlite and one connection per "
             "task; sharing a connection across tasks corrupts transactions.",
             ["The symptom was 'cannot start a transaction within a transaction'.",
              "engine.begin() per operation is the safe default."], ["sqlalchemy"], None),
            ("knowledge", "time.monotonic() is the right clock for session durations; wall "
             "time jumps when the laptop sleeps.",
             ["A session that spanned a lid-close once added nine hours to the active clock.",
              "The active-hours clock now caps a single session."], ["clock"], None),
        ],
    },
    "decay": {
        "files": 'operations/curate.py, scoring.py, memory/blocks.py',
        "evidence": [
            'The session clock reads only a few active hours after weeks of daily use.',
            'Even ephemeral observations still score above 0.8 recency on this instance.',
            'The highest reinforcement counts all belong to self blocks.',
        ],
        "tags": ["elfmem/decay", "project/elfmem"],
        "general": [
            "Recency is exp(-lambda times active hours since the last reinforcement).",
            "The four tiers are permanent 1e-05, durable 0.001, standard 0.01 and ephemeral 0.05.",
        ],
        "entries": [
            ("knowledge", "The active-hours clock only advances while a session is open, so "
             "short sessions make decay almost inert.",
             ["At under a minute per session, a month of use adds only an hour or two.",
              "An ephemeral block needs about sixty active hours to fall below the prune "
              "threshold."], ["clock"], None),
            ("knowledge", "curate() reinforces the top five blocks by score every cycle, "
             "which entrenches whatever already ranks first.",
             ["The only external corrective signal is outcome().",
              "Reinforcement counts are now dominated by a handful of self blocks."],
             ["reinforcement"], None),
            ("knowledge", "Negative outcomes multiply a block's decay lambda, so stored "
             "lambdas do not always match a tier.",
             ["The penalty factor is 2 per penalisation, capped by a ceiling.",
              "Recomputing the tier from tags will disagree with the stored lambda for those "
              "blocks."], ["outcomes"], None),
            ("knowledge", "Bridge protection exempts the top fifth of blocks by weighted "
             "degree from decay archival.",
             ["It keeps graph clusters connected when old connectors age out.",
              "It also means well-connected stale notes can never decay."], ["graph"], None),
            ("decision", "Decision: do not adopt power-law decay; exponential tiers are "
             "easier to reason about.",
             ["The ADR compared both on simulated retrieval logs.",
              "Power-law kept too many stale notes alive at the tail."], ["decision", "docs/adr"],
             None),
        ],
    },
    "graph": {
        "files": 'memory/graph.py, operations/outcome.py, operations/connect.py',
        "evidence": [
            "About half of the graph's edges are similarity edges; agent-declared relations are "
            'rare.',
            'Outcome records are rare: a handful after weeks of use.',
            'An elaborates edge survived only in the ledger after a markdown export.',
        ],
        "tags": ["elfmem/graph", "project/elfmem"],
        "general": [
            "Edges are stored canonically, with the smaller id first.",
            "Agent-declared relations carry a note; similarity edges carry only a weight.",
        ],
        "entries": [
            ("knowledge", "Similarity edges are created at consolidation for pairs above "
             "cosine 0.60 and are never revisited afterwards.",
             ["A block whose summary changes keeps its old neighbours.",
              "Pruning happens only when one end is archived."], ["edges"], None),
            ("knowledge", "outcome() updates alpha and beta on the block and nudges "
             "confidence; it is the only signal that comes from outside retrieval.",
             ["Signals below 0.2 also accelerate decay.",
              "It has been called only a handful of times on this instance."], ["outcomes"], None),
            ("knowledge", "connect() accepts a fixed vocabulary of relations; anything else "
             "is stored but ignored by the markdown exporter.",
             ["supports, contradicts, refines, derived-from, requires, supersedes, predicts.",
              "An elaborates edge survived only in the ledger after export."], ["edges"], None),
            ("knowledge", "Co-retrieval staging counts pairs returned together and promotes "
             "them to co_occurs edges after three hits.",
             ["The staging table is cleared for promoted pairs.",
              "Pairs involving self blocks dominate because those are retrieved every time."],
             ["hebbian"], None),
            ("decision", "Decision: graph edges are evidence for ranking, never for deletion.",
             ["Archival must not depend on how connected a block is.",
              "Bridge protection already bends that rule and should be revisited."],
             ["decision"], None),
        ],
    },
    "peer": {
        "files": 'operations/peer.py',
        "evidence": [
            'A message to a mistyped delivery path sat unread in an empty directory.',
            "Mira's review caught two stale CLI examples before 0.18.",
            "Alv's active clock moved 40 hours in a month while mine moved about two.",
        ],
        "tags": ["elfmem/peer", "project/elfmem"],
        "general": [
            "Peers exchange messages as JSON files dropped into each other's inbox directory.",
            "Each instance has a DID of the form elf:<name>.",
        ],
        "entries": [
            ("knowledge", "Peer Alv maintains the trading notes; route market questions to "
             "Alv instead of answering from my own memory.",
             ["My notes on markets are older and second-hand.",
              "Alv answers within a day when the maintainer opens that project."],
             ["peer/alv"], None),
            ("knowledge", "Peer Mira reviews documentation changes before a release; send "
             "her a diff, not a description.",
             ["Mira flagged two stale CLI examples before 0.18.",
              "A description produced questions; a diff produced a review."],
             ["peer/mira"], None),
            ("knowledge", "A send to a peer whose delivery path is not an elfmem project now "
             "fails with a recovery hint instead of vanishing.",
             ["Before the fix, messages to a mistyped path were written into an empty "
              "directory and never read."], ["incident"], None),
            ("knowledge", "Replies are linked with replies_to edges from the reply to the "
             "original message when the envelope carries in_reply_to.",
             ["Messages without the field start a new thread.",
              "The edge is created even if the original is still in the inbox."],
             ["messages"], None),
            ("decision", "Decision: peers never import self/* blocks from each other.",
             ["Identity is per instance; sharing it would blur who believes what.",
              "The export bundle skips self/* for the same reason."], ["decision"], None),
        ],
    },
    "adr": {
        "files": 'docs/adr/',
        "evidence": [
            'ADR 0007 followed two releases of mitigation for dream() interruptions.',
            'Under drift, the always-included preamble measured 33 points better.',
            'Code review asked for an ADR link on a default-value change.',
        ],
        "tags": ["docs/adr", "project/elfmem"],
        "general": [
            "ADRs live in docs/adr and are numbered; superseded ADRs stay in place with a "
            "pointer to their successor.",
            "An ADR states the decision, the options rejected and the evidence.",
        ],
        "entries": [
            ("knowledge", "ADR 0007 covers dream() checkpointing: commit decisions per block "
             "so a killed run keeps its progress.",
             ["It followed two releases of mitigation for the kill-and-lose-progress hazard.",
              "Checkpoint rows are cleared when a run completes."], ["dream"], None),
            ("knowledge", "ADR 0003 deferred an always-included SELF preamble in favour of "
             "scored constitutional blocks.",
             ["Under drift the preamble measured better by 33 points but was deferred for "
              "simplicity.",
              "It is worth revisiting now that constitutional blocks erode."], ["self"], None),
            ("preference", "The maintainer wants an ADR for any change that alters behaviour "
             "a user could notice, even a default value.",
             ["Small ADRs are fine; a page is usually enough.",
              "Code review asks for the ADR link before the diff."], ["process"], None),
            ("knowledge", "The research doc's taxonomy contract (P1-P5) is the reference for "
             "deciding one file per block versus many.",
             ["It argues per content area rather than for one global rule.",
              "Identity content wants one file; logs want append-only files."], ["taxonomy"], None),
            ("preference", "Use British spelling in all documentation and user-facing "
             "messages.",
             ["Mira checks this before release.",
              "Code identifiers stay as they are."], ["user/pref", "style"], None),
        ],
    },
    "cost": {
        "files": 'token_counter.py, api.py',
        "evidence": [
            'Lifetime usage grows by hundreds of calls a week, nearly all of it curation.',
            'The live corpus is tens of thousands of tokens by the chars/4 rule, not millions.',
            'About two thirds of all calls went to contradiction checks.',
        ],
        "tags": ["ops/cost", "project/elfmem"],
        "general": [
            "Token usage is recorded into lifetime_token_usage only at end_session().",
            "The monthly LLM budget is forty dollars; local models are preferred.",
        ],
        "entries": [
            ("knowledge", "Contradiction checking is pairwise: every inbox block is compared "
             "with each similar active block, one LLM call per pair.",
             ["That makes it the largest single consumer of calls.",
              "Most pairs it flags are never resolved."], ["contradictions"], None),
            ("knowledge", "Budget alerts fire at 80 percent of the monthly LLM spend.",
             ["The alert is a log line, not a block; it is easy to miss.",
              "It has not fired since the switch to the local model."], ["budget"], None),
            ("knowledge", "The whole live corpus is around thirty thousand tokens, small "
             "enough to fit in one context window.",
             ["A single whole-corpus review call would see every pair at once.",
              "Pairwise curation spends far more than that on every batch."], ["scale"], None),
            ("knowledge", "Summaries roughly quarter the size of the text they summarise; "
             "the SELF frame uses summaries when they exist.",
             ["Long notes therefore cost the same in the frame as short ones.",
              "A missing summary falls back to the full content."], ["summaries"], None),
            ("decision", "Decision: report LLM calls and tokens in status so the cost of "
             "curation is visible.",
             ["Nobody noticed the call count until it was printed.",
              "Calls are counted even when a local server reports zero tokens."],
             ["decision"], None),
        ],
    },
}

# A cross-topic contradiction, on top of the per-topic conflict keys above.
EXTRA_CONFLICTS = [("local-llm", 1, "consolidate", 3)]

# ── Session summaries: built from event pools by make_demo.py ─────────────────────────────
SESSION_GOALS = [
    "tracked down why dream() appeared to hang from the MCP client",
    "reviewed the near-duplicate threshold after two constitutional blocks vanished",
    "added read-only opening to the inspection commands",
    "worked on the peer inbox import path",
    "reduced prompt overhead in the analysis call",
    "investigated a decay test that never failed",
    "drafted the checkpointing ADR",
    "checked why status reported zero tokens on the local server",
    "cleaned up tag handling in the block-file writer",
    "measured retrieval quality on the fixed query set",
    "looked at the reinforcement counts after a week of use",
    "helped Mira review the release notes",
    "reproduced the wrong-config MCP bug",
    "added a backup step before schema migrations",
    "wrote tests for the mind-model commands",
    "profiled consolidation on a full inbox",
    "reviewed how archival treats edges and tags",
    "prepared the 0.19.2 hotfix",
    "compared hybrid and vector-only retrieval",
    "triaged three bug reports about the inbox",
]

SESSION_EVENTS = [
    "Changed _apply_decisions in operations/consolidate.py to commit after each block "
    "instead of once per batch.",
    "Read db/queries.py to confirm that update_block_status deletes block_tags, edges and "
    "contradictions on archival.",
    "Ran the consolidation tests with the mock adapter: 3 failures, all in the supersession "
    "path, 2 fixed by the end.",
    "Hit 'database is locked' when two MCP servers wrote at once; setting busy_timeout to "
    "5000 ms fixed it.",
    "The maintainer asked for a way to see what consolidation archived; there is none "
    "short of querying archive_reason by hand.",
    "Measured 14.2 s per analysis call on the local model over 40 calls.",
    "Found that recall() returned another project's notes because the MCP entry pointed at "
    "the wrong config file.",
    "Added a fence-stripping step to the JSON parser in adapters/litellm.py.",
    "Compared retrieval with and without BM25 on the ten fixed queries: hybrid won on 7, "
    "tied on 2, lost on 1.",
    "Wrote a failing test for the decay clock first; it exposed that the fixture never "
    "advanced active hours.",
    "Reviewed the mind-model output for Alv; the beliefs section had absorbed a heading.",
    "Checked lifetime_token_usage after the session: calls counted, tokens zero from the "
    "local server.",
    "Traced an orphaned .tmp file to a write that was interrupted by a lid-close.",
    "Updated guide() text for consolidate to mention the batch limit.",
    "Ran VACUUM INTO to take a backup before trying the migration on a copy.",
    "Confirmed with PRAGMA table_info that migrated databases append new columns at the end.",
    "Noticed that four of the top five reinforced blocks are self blocks.",
    "Opened the dashboard; last consolidation showed as 'never' because viz reads the "
    "wrong config key.",
    "Sent Mira the diff of the README changes for review.",
    "Alv replied with the market summary; linked it to the original question.",
    "Profiled a 25-block consolidation: 61 calls, 58 of them contradiction checks.",
    "Rewrote the uncertainty principle after the seeded block was superseded.",
    "Checked the supersession of the rhythms block: it was PERMANENT with confidence 1.0.",
    "Added a doctor check that prints the resolved database path.",
    "Split the analysis prompt so tags and summary come from one call instead of two.",
    "Ran the full suite against the local model overnight: 2 flaky timeouts.",
    "Pinned numpy below 2.5 until the embedding lock is verified on the new version.",
    "Investigated why an ephemeral observation had not decayed after a month: the clock "
    "had advanced by less than an hour.",
]

SESSION_OUTCOMES = [
    "the change is committed and tested",
    "a fix is ready but not released",
    "the root cause is understood; the fix is scheduled",
    "no code change; a note and a test were added",
    "the question is answered and recorded here",
    "partly done; the hard case still needs a design",
]

SESSION_OPEN = [
    "supersession still has no guard for pinned or permanent blocks",
    "there is still no API to edit or delete a block directly",
    "the inbox has to be consolidated by hand",
    "the token counts from the local server are still zero",
    "contradiction findings pile up unresolved",
    "the dashboard still reads the wrong key",
    "a backup before every migration is not yet enforced",
    "Alv's clock behaviour is unverified",
]

# ── Observations (category observation, ephemeral) ────────────────────────────────────────
OBSERVATIONS = [
    "Observed: a full-inbox dream() run took 11 minutes and was killed by the client timeout.",
    "Observed: CI run 412 took 14 minutes, slower than usual, all in the LLM-backed tests.",
    "Observed: the local model server restarted twice during one consolidation.",
    "Observed: retrieval latency spiked to 900 ms during a peer inbox import.",
    "Observed: disk usage on the build box reached 85 percent; old wheels were cleared.",
    "Observed: status showed 0 input tokens for a session that made 37 LLM calls.",
    "Observed: two MCP servers were running against the same database after a restart.",
    "Observed: the session clock advanced 0.02 hours during a day of heavy use.",
    "Observed: a recall for 'release checklist' returned the SELF blocks first.",
    "Observed: an inbox block waited nine days for consolidation.",
    "Observed: the embedding lock warning appeared after switching embedding servers.",
]

# ── Predictions (decision blocks linked from mind models by predicts edges) ───────────────
PREDICTIONS = [
    ("alv", "Prediction: Alv will ask for the weekly market digest on Monday morning.",
     "Verify at: the next Monday session. Basis: three of the last four digests were "
     "requested then."),
    ("alv", "Prediction: Alv will decline the engineering notes offered in the last bundle.",
     "Verify at: its next reply. Basis: Alv's goals exclude unrelated engineering notes."),
    ("alv", "Prediction: Alv's inbox will stay under five blocks this month.",
     "Verify at: month end, from its status output."),
    ("mira", "Prediction: Mira will flag at least one stale example in the 0.19 docs.",
     "Verify at: the review reply. Basis: two stale examples were found before 0.18."),
    ("mira", "Prediction: Mira will ask for a diff rather than a summary of the guide "
     "changes.", "Verify at: her first reply on the thread."),
    ("maintainer", "Prediction: the maintainer will not run consolidate by hand this week.",
     "Verify at: last_consolidated_at next Sunday."),
    ("maintainer", "Prediction: the maintainer will ask for an edit command before the "
     "next release.", "Verify at: the next planning session."),
    ("maintainer", "Prediction: the maintainer will ship the pin guard as a standalone "
     "patch.", "Verify at: the next release tag."),
]

# ── Peer messages: threads of (direction, peer, text) ─────────────────────────────────────
MESSAGE_THREADS = [
    [("out", "alv", "Question for Alv: do you keep a summary of this week's market moves "
      "that I can point the maintainer to?"),
     ("in", "alv", "Yes - the weekly digest is in my notes under market/weekly. I can send "
      "the latest one if you want it in your inbox."),
     ("out", "alv", "Please send it; I will link it from the planning note rather than copy "
      "it.")],
    [("out", "mira", "Mira, could you review the README section on consolidation before "
      "0.19 goes out? The diff is attached."),
     ("in", "mira", "Reviewed. Two points: the batch limit is not mentioned, and "
      "'organise' should keep the British spelling."),
     ("out", "mira", "Both fixed in the next commit; thank you. I will send the guide() "
      "text separately.")],
    [("in", "alv", "Alv here: my session clock has advanced 40 active hours this month. "
      "How far has yours moved?"),
     ("out", "alv", "Barely two hours in the same period - my sessions average well under a "
      "minute, so decay hardly moves here.")],
    [("out", "mira", "Mira, is 'dream()' documented as interruptible anywhere in the user "
      "docs?"),
     ("in", "mira", "Not yet. The guide says it can take minutes but not that a killed run "
      "loses progress. Suggest a warning box."),
     ("out", "mira", "Agreed; adding the warning and a pointer to the checkpointing ADR.")],
    [("in", "mira", "Mira here: the glossary still defines 'curate' as archival only; "
      "should it mention reinforcement of the top five?"),
     ("out", "mira", "Yes - curate() also reinforces the top-scoring blocks every cycle. "
      "That side effect matters more than the archival in practice."),
     ("in", "mira", "Updated the glossary entry and linked it to the decay ADR.")],
]

# ── The three blocks still in the inbox (learned after the last consolidation) ────────────
INBOX = [
    ("knowledge", "The pin guard for supersession is a few lines in _collect_decisions: "
     "skip any candidate that is pinned, permanent or tagged self/constitutional.",
     ["elfmem/consolidate", "todo"]),
    ("knowledge", "An edit command needs three parts: update content, re-embed, and record "
     "the old text somewhere a user can restore it from.",
     ["elfmem/api", "todo"]),
    ("observation", "Observed: consolidation has not run since the last batch; the inbox "
     "holds notes from today's review of the supersession path.",
     ["elfmem/consolidate"]),
]

# ── Archived blocks that were not seeds (doc §2.3 mentions two of them) ───────────────────
ARCHIVED_SPECIAL = {
    "naming": "Naming: on the first day the agent was asked to choose a name and chose elf, "
              "short for the library it helps build. The maintainer kept it.",
    "four-rhythms": "The four rhythms: learn() is the heartbeat, consolidate() is breathing, "
                    "curate() is sleep and dream() is where the day's notes are worked "
                    "through. Each runs at its own pace and none should block another.",
}
ARCHIVED_SPECIAL_SUCCESSORS = {
    "naming": "Naming: the agent chose the name elf on the first day and the maintainer kept "
              "it; the name is short for the library it helps build, and it stays fixed even "
              "when a host gives the agent another display name.",
    "four-rhythms": "The four rhythms, as they run today: learn() is the heartbeat and instant; "
                    "consolidate() is breathing, batched and LLM-heavy; curate() is sleep and "
                    "reinforces the top blocks; dream() is the full pass over the inbox. In "
                    "practice only the heartbeat runs without being asked.",
}

DECAYED_OBSERVATION = ("Observed: the staging embedding server answered with 768-dimension "
                       "vectors for a few minutes after a restart.")

# ── Daily worklog material (bullets mixed with figures computed from the instance) ─────────
WHY_IT_MATTERS = {
    "consolidate": ["Supersession is the path that silently rewrites memory, so every change "
                    "here needs a test with a protected block in it.",
                    "Consolidation cost decides whether anyone runs it at all; a slow dream() "
                    "is a dream() that stops being run."],
    "retrieval": ["Retrieval is what the agent actually sees; a ranking change is a behaviour "
                  "change even if no block changed.",
                  "Frames decide which notes reach the prompt, so their budgets shape "
                  "every answer."],
    "sqlite": ["The database is the only copy of the memory; anything that can lose a write "
               "is a data-loss bug.",
               "Tools that inspect the database must never modify it, or audits change what "
               "they measure."],
    "local-llm": ["The local model is the default path, so its quirks are everybody's quirks.",
                  "Latency on the local path sets the real cost of curation, more than tokens."],
    "mcp": ["Most users meet elfmem through MCP, where misconfiguration fails quietly.",
            "A server talking to the wrong database looks exactly like a memory that forgot."],
    "testing": ["Mocks decide which code paths are exercised; a mock that never produces a "
                "near-duplicate hides the riskiest path.",
                "Slow tests that nobody runs are documentation, not protection."],
    "release": ["Users upgrade rarely, so whatever ships stays in the field for months.",
                "A release that migrates the schema cannot be rolled back by reinstalling."],
    "python": ["Async bugs show up as missing data, not as exceptions, so they need explicit "
               "tests.",
               "Clock and path handling differ by platform; both have bitten this project."],
    "decay": ["Decay is the only mechanism meant to forget; if it never fires, the corpus "
              "only grows or gets overwritten.",
              "Reinforcement decides what survives, so a self-reinforcing loop decides it alone."],
    "graph": ["Edges are the evidence that ranking and bridge protection rely on.",
              "Outcome signals are the only feedback from reality; without them scores drift."],
    "peer": ["Messages between instances are memory too, and they are easy to lose.",
             "Each instance believes different things; peers must not overwrite each other."],
    "adr": ["ADRs are where the reasons live; code only records the decision.",
            "A decision without its rejected options gets re-litigated every release."],
    "cost": ["Cost is why curation gets skipped, and skipped curation is how the inbox goes stale.",
             "Calls, not tokens, are the honest unit on a local model."],
}

TEST_FILES = [
    "tests/test_consolidate.py", "tests/test_supersession.py", "tests/test_curate.py",
    "tests/test_retrieval.py", "tests/test_frames.py", "tests/test_session_clock.py",
    "tests/test_peer_inbox.py", "tests/test_mind.py", "tests/test_outcome.py",
    "tests/test_migrate.py", "tests/test_backup.py", "tests/test_mcp_tools.py",
    "tests/test_config_resolution.py", "tests/test_blockfile.py", "tests/test_graph.py",
    "tests/test_token_counter.py", "tests/test_doctor.py", "tests/test_cli.py",
]
TEST_FAILURES = [
    "supersession archived a pinned fixture block", "clock fixture never advanced",
    "fenced JSON from the model", "timeout talking to the local server",
    "edge count off by one after archival", "frame exceeded its token budget",
    "wrong config file picked up from the home directory", "missing busy_timeout",
    "tag with a comma did not round-trip", "stale embedding lock in the fixture DB",
    "reply linked to the wrong message", "summary fell back to full content",
]
COMMITS = [
    "consolidate: commit decisions per block", "curate: document bridge protection",
    "retrieval: break RRF ties by confidence", "frames: respect token budget for SELF",
    "db: set busy_timeout on every connection", "db: take a VACUUM INTO backup before migrating",
    "adapters: strip markdown fences before json.loads", "mcp: print resolved DB path in errors",
    "config: project YAML wins over global", "peer: refuse sends to non-project paths",
    "peer: link replies via in_reply_to", "mind: keep headings out of beliefs",
    "outcome: cap lambda penalty at the ceiling", "tests: advance the clock in decay fixtures",
    "tests: near-duplicate pairs in mock embeddings", "docs: warn that dream() loses progress",
    "docs: ADR 0007 dream checkpointing", "status: show lifetime calls and tokens",
    "doctor: add --resolve for a real LLM call", "cli: clearer error when no API key",
    "session: cap a single session's active hours", "graph: canonical edge ordering",
    "token_counter: count calls when tokens are zero", "guide: mention batch limit",
    "viz: read last_consolidated_at (was last_consolidated)", "release: 0.19.2 hotfix notes",
    "deps: pin numpy below 2.5", "blockfile: refuse tags that cannot round-trip",
    "rescue: detect orphaned databases", "prompts: one call for tags and summary",
]
ERRORS = [
    ("sqlite3.OperationalError: database is locked", "two MCP servers wrote at once",
     "busy_timeout fixed it"),
    ("json.decoder.JSONDecodeError", "parsing an analysis reply",
     "the reply was fenced; stripped the fence"),
    ("openai.AuthenticationError", "running dream() from the MCP server",
     "the key was only in the shell environment"),
    ("TimeoutError", "waiting for a 25-block consolidation",
     "split the batch and raised the client timeout"),
    ("RuntimeError: Task was destroyed but it is pending", "closing the engine",
     "kept a reference to the embedding task"),
    ("sqlite3.OperationalError: no such column: blocks.pinned",
     "opening a copy with the newer CLI", "the copy was still schema 5; opened it read-only"),
    ("KeyError: 'last_consolidated'", "rendering the dashboard",
     "the key is last_consolidated_at"),
    ("PermissionError", "writing into a peer's inbox",
     "the delivery path pointed at a read-only mount"),
    ("sqlalchemy.exc.InvalidRequestError", "sharing a connection across tasks",
     "one engine.begin() per operation"),
    ("ValueError: embedding dimension mismatch", "querying after switching servers",
     "the embedding lock caught it as designed"),
    ("AssertionError in test_decay_archives_ephemeral", "running the decay tests",
     "the fixture clock never moved"),
    ("FileNotFoundError: config.yaml", "starting the MCP entry from another directory",
     "the path in the client config was relative"),
]
REQUESTS = [
    ("for a list of what consolidation archived last week",
     "answered with a query on archive_reason; there is no command for it"),
    ("to change the wording of a constitutional block",
     "there is no edit API, so it went in as a new block with the role tag"),
    ("to delete three seeded blocks",
     "not possible without SQL; noted the request"),
    ("why dream() takes so long", "explained the per-pair contradiction calls"),
    ("whether decay has ever archived anything", "one block in total so far"),
    ("for the cost of curation this month", "read lifetime_token_usage from status"),
    ("to route a market question to Alv", "sent it as a peer message"),
    ("to get Mira's review on the README", "sent the diff"),
    ("to check the backup before a migration", "validated row counts of the copy"),
    ("whether the MCP server uses the project config", "doctor showed the global one"),
    ("to summarise open contradictions", "most are unresolved and several are false positives"),
    ("to stop the seeds from being re-added", "setup() checks role tags, so lost slots re-seed"),
]
READS = [
    ("operations/consolidate.py", "what guards supersession", "none: no tier, pin or tag check"),
    ("db/queries.py", "what archival deletes", "tags, edges and contradiction rows"),
    ("operations/curate.py", "how decay picks candidates", "tier from tags, not the stored lambda"),
    ("session.py", "how active hours accrue", "monotonic time per session, summed at end"),
    ("memory/graph.py", "when co_occurs edges appear", "after three joint retrievals"),
    ("operations/peer.py", "how replies are linked", "by in_reply_to in the envelope"),
    ("context/frames.py", "how the SELF frame filters", "tag pattern self/%"),
    ("token_counter.py", "what counts when tokens are zero", "calls are still counted"),
    ("docs/adr/0003", "why the preamble was deferred", "simplicity, despite better drift numbers"),
    ("viz/data.py", "why last consolidation shows never", "it reads the wrong key"),
    ("db/migrate.py", "what a migration backs up", "a file copy validated by row counts"),
    ("operations/outcome.py", "how penalties work", "lambda doubles below signal 0.2"),
    ("api.py", "what status() reports", "counts, health, session and lifetime tokens"),
    ("memory/dedup.py", "whether resolve_near_duplicate is used", "it has no callers"),
    ("operations/mind.py", "how predictions link", "a predicts edge from the mind block"),
]
# (query, topic of the notes it should surface)
RECALL_QUERIES = [
    ("release checklist", "release"), ("why is dream slow", "consolidate"),
    ("sqlite locking", "sqlite"), ("near duplicate threshold", "consolidate"),
    ("what does Alv do", "peer"), ("docs review", "adr"), ("token budget", "retrieval"),
    ("decay tiers", "decay"), ("MCP config path", "mcp"), ("backup before migration", "sqlite"),
    ("contradiction checks cost", "cost"), ("asyncio task lost", "python"),
    ("local model latency", "local-llm"), ("pin guard", "consolidate"),
    ("flaky nightly tests", "testing"), ("session clock", "decay"),
    ("outcome signals", "graph"), ("reply threads", "peer"),
]
