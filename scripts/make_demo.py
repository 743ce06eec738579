"""Build data/demo/elfmem-demo.db: a synthetic elfmem instance calibrated to the v2 doc.

The elfmem v2 re-evaluation (``docs/plans/plan_v2_substrate_reevaluation.md`` in the elfmem
0.20.0 sdist) publishes its evidence from the maintainer's live database but not the
database itself. This script writes a database in elfmem 0.19.2's real schema (schema 5,
the doc's era) whose raw rows reproduce every published figure, so memlab's audit can be
checked against the doc end to end. Texts are invented (scripts/_demo_corpus.py); the
constitutional seed comes from elfmem's own seed module (memlab.audits.seeds).

Deterministic: the same script writes the same bytes. It verifies its output against the
published figures with plain SQL before replacing the target, and refuses otherwise.

    python scripts/make_demo.py [--out data/demo/elfmem-demo.db]
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import math
import os
import random
import sqlite3
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _demo_corpus as corpus  # noqa: E402

from memlab.audits.seeds import content_hash, seed_release  # noqa: E402
from memlab.formats.elfmem_schema import create_fresh  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "data" / "demo" / "elfmem-demo.db"
UTC = timezone.utc

# The doc's published evidence (§1-2). Every value is checked against the written rows.
CALIBRATION = {
    "llm_calls": 2903,
    "llm_input_tokens": 1_646_801,
    "llm_output_tokens": 60_186,
    "embedding_calls": 49,
    "blocks_ever": 185,
    "active": 140,
    "inbox": 3,
    "archived": 42,
    "superseded": 41,
    "decayed": 1,
    "live_chars": 126_532,
    "summary_chars": 34_908,
    "sessions": 370,
    "role_slots_left": 4,
    "active_tags": 616,
    "archived_tags": 7,
    "contradictions": 14,
    "unresolved": 12,
    "outcomes": 6,
    "amendments": 0,
    "edges": {"similar": 27, "co_occurs": 9, "replies_to": 9, "predicts": 8},
    "mind_blocks": 3,
    "top_reinforcement": [92, 74, 67, 64, 36, 25, 20, 20, 19, 19],
    "last_consolidated": "2026-06-21",
    "first_created": "2026-04-07",
    "last_created": "2026-06-21",
    "as_of": "2026-08-04",
}
# Session clock: the doc prints 3.69 h and recency 0.8317 at lambda 0.05, which pins the
# lifetime to 3.6845-3.6869 active hours; 13,268.5 s sits in the middle.
TOTAL_ACTIVE_SECONDS = 13_268.5
SEED = 20260804

LAMBDA = {"permanent": 1e-05, "durable": 0.001, "standard": 0.01, "ephemeral": 0.05}
SELF_DID = "elf:elf"
PEERS = {"alv": "elf:alv", "mira": "elf:mira"}

# elfmem 0.19.2's built-in frames (db/queries.py _BUILTIN_FRAMES), as seed_builtin_data writes them.
BUILTIN_FRAMES = [
    ("self", '{"similarity": 0.1, "confidence": 0.3, "recency": 0.05, "centrality": 0.25, '
     '"reinforcement": 0.3}', '{"tag_patterns": ["self/%"], "categories": [], '
     '"search_window": null}', "[]", "# SELF\n{blocks}", 500),
    ("attention", '{"similarity": 0.35, "confidence": 0.15, "recency": 0.25, "centrality": 0.15, '
     '"reinforcement": 0.1}', '{"tag_patterns": [], "categories": [], "search_window": null}',
     "[]", "# ATTENTION\n{blocks}", 1000),
    ("task", '{"similarity": 0.2, "confidence": 0.2, "recency": 0.2, "centrality": 0.2, '
     '"reinforcement": 0.2}', '{"tag_patterns": [], "categories": [], "search_window": null}',
     "[]", "# TASK\n{blocks}", 800),
]

TOPIC_TITLES = {
    "consolidate": "Consolidation", "retrieval": "Retrieval", "sqlite": "SQLite",
    "local-llm": "Local model", "mcp": "MCP and config", "testing": "Testing",
    "release": "Release", "python": "Python", "decay": "Decay", "graph": "Graph",
    "peer": "Peers", "adr": "ADRs", "cost": "Cost",
}
# Tags the analysis call tends to add on top of the learn() tags; trimmed to hit the total.
TOPIC_EXTRA_TAGS = {
    "consolidate": ["llm", "supersession"], "retrieval": ["search", "ranking"],
    "sqlite": ["database", "storage"], "local-llm": ["inference", "latency"],
    "mcp": ["integration", "environment"], "testing": ["quality", "pytest"],
    "release": ["pypi", "process"], "python": ["code", "async"],
    "decay": ["lifecycle", "scoring"], "graph": ["relations", "evidence"],
    "peer": ["messaging", "multi-agent"], "adr": ["architecture", "docs"],
    "cost": ["tokens", "budget"],
}
# The four slots that survive (doc §2.3) and their reinforcement (doc §2.5 top four).
SURVIVING_ROLES = {"feedback-loop": 92, "uncertainty": 74, "minimum-force": 67, "stewardship": 64}
# The next six of the published top ten go to blocks the SELF and attention frames return often.
TOP_REST = [("restated", "identity", 36), ("topic", ("retrieval", 0), 25),
            ("topic", ("cost", 2), 20), ("restated", "connection", 20),
            ("topic", ("sqlite", 0), 19), ("topic", ("mcp", 1), 19)]


# ── helpers ───────────────────────────────────────────────────────────────────────────────

def _iso(ts: datetime) -> str:
    # elfmem writes datetime.now(UTC).isoformat(): microseconds always present in practice.
    if ts.microsecond == 0:
        ts = ts.replace(microsecond=1)
    return ts.isoformat()


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _short(text: str, width: int = 60) -> str:
    """A note's title as elfmem's exporter makes it: first line, cut on a word."""
    first = text.splitlines()[0]
    if len(first) <= width:
        return first.rstrip(".")
    cut = first[:width].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "..."


def _reword(text: str) -> str:
    """An earlier draft of a sentence: one small wording change, as near-duplicates are."""
    swaps = [("Decision: ", "Proposal: "), (" must ", " should "), (" about ", " roughly "),
             (" instead of ", " rather than "), (" only ", " just "), (" never ", " not "),
             (" which ", " that "), (" every ", " each "), (" so that ", " so "),
             (" is the right ", " is a good "), (" a single ", " one "), (" often ", " usually "),
             (" lets ", " allows "), (" before ", " ahead of ")]
    for old, new in swaps:
        if old in text:
            return text.replace(old, new, 1)
    return "Draft: " + text


@dataclass
class Session:
    index: int
    id: str
    task_type: str
    started: datetime
    seconds: float
    start_ah: float
    consolidates: bool = False

    @property
    def ended(self) -> datetime:
        return self.started + timedelta(seconds=self.seconds)

    @property
    def end_ah(self) -> float:
        return self.start_ah + self.seconds / 3600.0


@dataclass
class Block:
    key: str
    kind: str
    category: str
    source: str
    status: str = "active"
    archive_reason: str | None = None
    created_session: int = 0
    render: Callable[[int], str] | None = None
    options: list[int] = field(default_factory=lambda: [0])
    preferred: int = 0
    summary_render: Callable[[int], str] | None = None
    summary_options: list[int] = field(default_factory=lambda: [0])
    summary_preferred: int = 0
    tags_required: list[str] = field(default_factory=list)
    tags_optional: list[str] = field(default_factory=list)
    tier: str = "standard"
    confidence: float = 0.55
    reinforcement: int = 1
    successor: str | None = None      # key of the block whose promotion archived this one
    source_peer: str | None = None
    envelope: dict | None = None
    # filled in later
    content: str = ""
    summary: str | None = None
    tags: list[str] = field(default_factory=list)
    id: str = ""
    created_at: datetime | None = None
    created_ah: float = 0.0
    promoted: Session | None = None
    archived_in: Session | None = None
    last_reinforced_at: float = 0.0
    decay_lambda: float = 0.01
    self_alignment: float | None = None
    outcome_evidence: float = 0.0
    success_count: float = 0.5
    failure_count: float = 0.5


# ── the session clock ─────────────────────────────────────────────────────────────────────

def _build_sessions(rng: random.Random) -> list[Session]:
    first, cutoff, last = date(2026, 4, 7), date(2026, 6, 21), date(2026, 8, 4)
    # 330 sessions while the instance was being fed, 39 recall-only ones after the last
    # consolidation, and the doc author's own `elfmem status` on 2026-08-04 (it opens a session).
    pre_days = [first + timedelta(days=i) for i in range((cutoff - first).days + 1)]
    post_days = [cutoff + timedelta(days=i) for i in range(1, (last - cutoff).days)]
    per_day: dict[date, int] = {d: 0 for d in pre_days + post_days}
    for _ in range(330 - 2 * len(pre_days) + 8):
        per_day[rng.choice(pre_days)] += 1
    for d in pre_days:
        per_day[d] += 2
    per_day[first] = max(per_day[first], 4)
    per_day[cutoff] = max(per_day[cutoff], 6)
    excess = sum(per_day[d] for d in pre_days) - 330
    busy = sorted(pre_days[1:-1], key=lambda d: (-per_day[d], d))
    i = 0
    while excess > 0:
        if per_day[busy[i % len(busy)]] > 2:
            per_day[busy[i % len(busy)]] -= 1
            excess -= 1
        i += 1
    for _ in range(39):
        per_day[rng.choice(post_days)] += 1

    starts: list[datetime] = []
    for d in sorted(per_day):
        n = per_day[d]
        minutes = sorted(rng.sample(range(8 * 60, 23 * 60), n))
        if d == cutoff:
            # the last consolidation at ~17:40, then three short sessions that only learn
            minutes = sorted(rng.sample(range(8 * 60, 17 * 60), n - 4)) + [17 * 60 + 38,
                                                                         18 * 60 + 52,
                                                                         20 * 60 + 17,
                                                                         21 * 60 + 45]
        for m in minutes:
            starts.append(datetime(d.year, d.month, d.day, m // 60, m % 60, rng.randrange(60),
                                   rng.randrange(1, 1_000_000), tzinfo=UTC))
    starts.append(datetime(2026, 8, 4, 9, 31, 12, 48_211, tzinfo=UTC))
    assert len(starts) == CALIBRATION["sessions"], len(starts)

    # Session lengths: heavy-tailed, mostly well under a minute (the doc's mean is 36 s),
    # scaled to the lifetime and rounded to the microsecond timestamps elfmem stores.
    raw = [rng.lognormvariate(0.0, 1.0) for _ in starts]
    scale = TOTAL_ACTIVE_SECONDS / sum(raw)
    seconds = [round(max(1.5, r * scale), 6) for r in raw]
    longest = max(range(len(seconds)), key=seconds.__getitem__)
    seconds[longest] = round(seconds[longest] + TOTAL_ACTIVE_SECONDS - sum(seconds), 6)
    sessions, ah = [], 0.0
    for i, (start, secs) in enumerate(zip(starts, seconds)):
        task = rng.choices(["general", "coding", "review"], weights=[80, 15, 5])[0]
        sessions.append(Session(i, _hex(rng, 16), task, start, secs, ah))
        ah += secs / 3600.0
    return sessions


# ── blocks ────────────────────────────────────────────────────────────────────────────────

def _knowledge_blocks(rng: random.Random) -> list[Block]:
    blocks = []
    for topic, spec in corpus.TOPICS.items():
        entries = spec["entries"]
        for i, (category, lead, specifics, extra, _conflict) in enumerate(entries):
            others = [e[1] for j, e in enumerate(entries) if j != i]
            rng.shuffle(others)
            related = "; ".join(_short(o, 56) for o in others[:3])
            items = [lead, *specifics,
                     "Related observation: " + spec["evidence"][i % len(spec["evidence"])],
                     "Context: " + spec["general"][i % len(spec["general"])],
                     "Why it matters: " + corpus.WHY_IT_MATTERS[topic][i % 2],
                     "Related notes: " + related + ".",
                     "Applies to: " + spec["files"] + "."]
            n_lead = 1 + len(specifics)
            holder: dict = {}

            def render(n: int, items=items, n_lead=n_lead, topic=topic, holder=holder) -> str:
                head = f"{TOPIC_TITLES[topic]} note, {holder['date']}"
                body = " ".join(items[:min(n, n_lead)])
                rest = items[n_lead:n]
                return "\n\n".join([head, body, *rest])

            def summary(m: int, lead=lead, specifics=specifics,
                        ev=spec["evidence"][i % len(spec["evidence"])],
                        why=corpus.WHY_IT_MATTERS[topic][i % 2]) -> str:
                return " ".join([lead, *specifics, ev, why][:m + 1])

            b = Block(key=f"{topic}:{i}", kind="knowledge", category=category, source="api",
                      render=render, options=list(range(2, len(items) + 1)),
                      preferred=len(items) - rng.choice([0, 0, 1, 2]),
                      summary_render=summary,
                      summary_options=list(range(0, len(specifics) + 3)),
                      summary_preferred=1,
                      tags_required=[*spec["tags"], *extra],
                      tags_optional=[*TOPIC_EXTRA_TAGS[topic], f"kind/{category}"],
                      tier="standard", confidence=round(rng.uniform(0.55, 0.8), 3))
            b.render_holder = holder  # type: ignore[attr-defined]
            blocks.append(b)
    return blocks


def _session_blocks(rng: random.Random, n: int) -> list[Block]:
    """Daily worklogs. Their bullets are written once the schedule is known (_worklogs)."""
    goals = list(corpus.SESSION_GOALS)
    rng.shuffle(goals)
    blocks = []
    for k in range(n):
        holder: dict = {"goal": goals[k % len(goals)],
                        "outcome": rng.choice(corpus.SESSION_OUTCOMES),
                        "open": rng.choice(corpus.SESSION_OPEN)}

        def render(m: int, holder=holder) -> str:
            lines = "\n".join("- " + e for e in holder["bullets"][:m])
            return (f"Worklog {holder['date']} ({holder['task']})\n\n"
                    f"Focus: {holder['goal']}.\n\n{lines}\n\n"
                    f"Outcome: {holder['outcome']}. Open thread: {holder['open']}.")

        def summary(m: int, holder=holder) -> str:
            parts = [f"Worklog {holder['date']}: {holder['goal']}.",
                     f"Outcome: {holder['outcome']}.", f"Still open: {holder['open']}.",
                     holder.get("headline", "")]
            return " ".join(p for p in parts[:m + 1] if p)

        b = Block(key=f"session:{k}", kind="session", category="knowledge", source="api",
                  render=render, options=[4], preferred=4,
                  summary_render=summary, summary_options=[0, 1, 2, 3], summary_preferred=2,
                  tags_required=["worklog", "project/elfmem"],
                  tags_optional=["session-summary", "log", "review"],
                  confidence=round(rng.uniform(0.5, 0.7), 3))
        b.render_holder = holder  # type: ignore[attr-defined]
        blocks.append(b)
    return blocks


class _Cycle:
    """Draw from a shuffled pool, reshuffling when empty, so items repeat as little as possible."""

    def __init__(self, items, rng: random.Random) -> None:
        self.items, self.rng, self.pool = list(items), rng, []

    def take(self):
        if not self.pool:
            self.pool = self.items[:]
            self.rng.shuffle(self.pool)
        return self.pool.pop()


def _worklogs(blocks: list[Block], sessions: list[Session], rng: random.Random) -> None:
    """Fill each worklog with bullets, many computed from the instance's state that day."""
    events = list(corpus.SESSION_EVENTS)
    for spec in corpus.TOPICS.values():
        events += spec["evidence"]
    pools = {name: _Cycle(items, rng) for name, items in {
        "event": events, "commit": corpus.COMMITS, "error": corpus.ERRORS,
        "request": corpus.REQUESTS, "read": corpus.READS, "query": corpus.RECALL_QUERIES,
        "test": corpus.TEST_FILES, "failure": corpus.TEST_FAILURES}.items()}
    titles = {b.key: _short(b.render(b.preferred).split("\n\n")[1] if b.kind == "knowledge"
                            else b.render(b.preferred), 64)
              for b in blocks if b.kind == "knowledge"}
    knowledge = [b for b in blocks if b.kind == "knowledge"]

    for log in (b for b in blocks if b.kind == "session"):
        h = log.render_holder  # type: ignore[attr-defined]
        t, day = log.created_at, log.created_at.date()

        def alive(b: Block) -> bool:
            return (b.promoted is not None and b.promoted.ended <= t and
                    (b.archived_in is None or b.archived_in.ended > t))

        active = sum(alive(b) for b in blocks)
        inbox = sum(1 for b in blocks if b.created_at <= t and
                    (b.promoted is None or b.promoted.ended > t))
        archived = sum(1 for b in blocks if b.archived_in is not None and b.archived_in.ended <= t)
        bullets = [f"status at start: inbox {inbox}, active {active}, archived {archived}; "
                   f"session clock at {log.created_ah:.2f} active hours."]
        for s in sessions:
            if s.consolidates and s.started.date() == day and s.ended <= t:
                promoted = sum(1 for b in blocks if b.promoted is s)
                superseded = sum(1 for b in blocks if b.archived_in is s
                                 and b.archive_reason == "superseded")
                calls = promoted * rng.randint(12, 19)
                bullets.append(f"dream() promoted {promoted} inbox blocks and superseded "
                               f"{superseded}, in about {calls} LLM calls "
                               f"({calls * 14 / 60:.0f} min on the local model).")
        learned = [k for k in knowledge if k.created_at.date() == day and k.created_at <= t]
        for k in learned[:3]:
            bullets.append(f"Learned: \"{titles[k.key]}\".")
        mixed: list[str] = []
        for _ in range(8):
            mixed.append(pools["event"].take())
        c = pools["commit"].take()
        mixed.append(f"Committed {_hex(rng, 7)}: {c}.")
        for _ in range(5):
            passed, failed = rng.randint(8, 64), rng.choice([0, 0, 0, 1, 1, 2, 3])
            note = f" ({pools['failure'].take()})" if failed else ""
            mixed.append(f"Ran `pytest {pools['test'].take()} -q`: {passed} passed, "
                         f"{failed} failed{note}.")
        for _ in range(4):
            query, topic = pools["query"].take()
            hit = titles[f"{topic}:{rng.randrange(len(corpus.TOPICS[topic]['entries']))}"]
            mixed.append(f"recall(\"{query}\") returned {rng.randint(3, 5)} "
                         f"blocks; top hit \"{hit}\".")
        for _ in range(3):
            f, q, a = pools["read"].take()
            mixed.append(f"Read {f} to check {q}: {a}.")
        err, doing, fix = pools["error"].take()
        mixed.append(f"Hit `{err}` while {doing}; {fix}.")
        for _ in range(2):
            req, resp = pools["request"].take()
            mixed.append(f"The maintainer asked {req}; {resp}.")
        rng.shuffle(mixed)
        bullets += mixed
        h["bullets"] = bullets
        h["headline"] = f"{len(learned)} notes learned; {inbox} in the inbox at the start."
        log.options = list(range(4, len(bullets) + 1))
        log.preferred = rng.randint(max(4, len(bullets) - 8), len(bullets))


def _fixed(key: str, kind: str, category: str, source: str, parts: list[str], *, sep: str = " ",
           minimum: int = 1, summary_parts: list[str] | None = None, **kw) -> Block:
    def render(n: int, parts=parts, sep=sep) -> str:
        return sep.join(parts[:n])

    sparts = summary_parts or parts

    def summary(m: int, sparts=sparts) -> str:
        return " ".join(sparts[:m + 1])

    return Block(key=key, kind=kind, category=category, source=source, render=render,
                 options=list(range(minimum, len(parts) + 1)), preferred=len(parts),
                 summary_render=summary, summary_options=list(range(len(sparts))),
                 summary_preferred=min(1, len(sparts) - 1), **kw)


def _all_blocks(rng: random.Random) -> list[Block]:
    seeds = seed_release("0.19.2")
    blocks: list[Block] = []

    # The ten seeded constitutional blocks, all superseded since (doc §2.3).
    for slot in seeds.slots:
        successor = f"role:{slot.role}" if slot.role in SURVIVING_ROLES else f"restated:{slot.role}"
        blocks.append(_fixed(f"seed:{slot.role}", "seed", "knowledge", "api", [slot.content],
                             status="archived", archive_reason="superseded",
                             successor=successor, tags_required=list(slot.tags),
                             tier="permanent", confidence=0.8,
                             reinforcement=rng.randint(6, 17)))
    # The four surviving slots, rewritten and re-tagged with their role.
    for role, parts in corpus.ROLE_BLOCKS.items():
        kind_tag = seeds.slot(role).tags[1]
        blocks.append(_fixed(f"role:{role}", "role", "knowledge", "api", parts, minimum=2,
                             tags_required=["self/constitutional", kind_tag, f"self/role/{role}"],
                             tags_optional=["principle", "identity"], tier="permanent",
                             confidence=0.9, reinforcement=SURVIVING_ROLES[role]))
    # Restatements that superseded the other six seeds without taking over the role tag.
    for role, parts in corpus.RESTATED_SEEDS.items():
        kind_tag = seeds.slot(role).tags[1]
        blocks.append(_fixed(f"restated:{role}", "restated", "knowledge", "api", parts,
                             tags_required=[kind_tag], tags_optional=["principle", "self"],
                             tier="durable", confidence=0.8,
                             reinforcement=rng.randint(8, 17)))
    # Two non-seed identity blocks the doc names as superseded, and what replaced them.
    for name, text in corpus.ARCHIVED_SPECIAL.items():
        blocks.append(_fixed(f"special:{name}", "special", "knowledge", "api", [text],
                             status="archived", archive_reason="superseded",
                             successor=f"successor:{name}", tier="permanent",
                             confidence=1.0 if name == "four-rhythms" else 0.9,
                             tags_required=["self/constitutional", "self/context"],
                             reinforcement=12 if name == "four-rhythms" else 9))
    for name, text in corpus.ARCHIVED_SPECIAL_SUCCESSORS.items():
        blocks.append(_fixed(f"successor:{name}", "successor", "knowledge", "api",
                             text.split("; "), sep="; ", minimum=1,
                             tags_required=["self/context"],
                             tags_optional=["identity", "history"], tier="durable",
                             confidence=0.8, reinforcement=rng.randint(3, 9)))
    # Theory of mind: three models, the only blocks with mind/* tags.
    for name, parts in corpus.MIND_BLOCKS.items():
        role_line = parts[1].split("\n", 1)[1]
        blocks.append(_fixed(f"mind:{name}", "mind", "mind", "mind_create", parts, sep="\n\n",
                             minimum=3, summary_parts=[f"Mind model of {name.title()}.",
                                                       role_line],
                             tags_required=[f"mind/{name}"], tags_optional=["theory-of-mind"],
                             tier="durable", confidence=0.6, reinforcement=rng.randint(2, 6)))
    for k, (name, lead, detail) in enumerate(corpus.PREDICTIONS):
        blocks.append(_fixed(f"prediction:{k}", "prediction", "decision", "api", [lead, detail],
                             tags_required=["prediction"], tags_optional=["decision", "forecast"],
                             tier="standard", confidence=0.7, reinforcement=rng.randint(1, 3)))
        blocks[-1].mind = name  # type: ignore[attr-defined]
    for t, thread in enumerate(corpus.MESSAGE_THREADS):
        for m, (direction, peer, text) in enumerate(thread):
            did = PEERS[peer]
            tags = (["peer/outbound", f"peer/to:{did}"] if direction == "out"
                    else ["peer/inbound", f"peer/from:{did}"])
            b = _fixed(f"message:{t}:{m}", "message", "message",
                       "peer_send" if direction == "out" else "peer_inbox", [text],
                       tags_required=tags, tags_optional=[f"peer/{peer}"], tier="standard",
                       confidence=0.5, reinforcement=rng.randint(1, 2),
                       source_peer=None if direction == "out" else did)
            b.thread = (t, m, direction, peer)  # type: ignore[attr-defined]
            blocks.append(b)
    for k, text in enumerate(corpus.OBSERVATIONS[:10]):
        blocks.append(_fixed(f"observation:{k}", "observation", "observation", "api", [text],
                             tags_required=["observation"], tags_optional=["ops", "incident"],
                             tier="ephemeral", confidence=0.55, reinforcement=rng.randint(1, 3)))
    blocks.append(_fixed("decayed", "decayed", "observation", "api",
                         [corpus.DECAYED_OBSERVATION], status="archived",
                         archive_reason="decayed", tier="ephemeral", confidence=0.5,
                         tags_required=["observation", "embedding"], reinforcement=1))
    knowledge = _knowledge_blocks(rng)
    blocks += knowledge
    blocks += _session_blocks(rng, 28)
    # 29 earlier drafts of knowledge notes, superseded when the later wording arrived.
    for b in rng.sample(knowledge, 29):
        topic, i = b.key.split(":")
        spec = corpus.TOPICS[topic]
        category, lead, specifics, extra, _ = spec["entries"][int(i)]
        draft = [_reword(lead), specifics[0]]
        blocks.append(_fixed(f"draft:{b.key}", "draft", category, "api", draft,
                             status="archived", archive_reason="superseded", successor=b.key,
                             tags_required=[*spec["tags"], *extra], tier="standard",
                             confidence=round(rng.uniform(0.5, 0.7), 3),
                             reinforcement=rng.randint(1, 6)))
    for k, (category, text, tags) in enumerate(corpus.INBOX):
        blocks.append(_fixed(f"inbox:{k}", "inbox", category, "api", [text], status="inbox",
                             tags_required=list(tags),
                             tier="ephemeral" if category == "observation" else "standard",
                             confidence=0.5, reinforcement=0))
    return blocks


# ── scheduling: when each block was learned, promoted and archived ────────────────────────

def _schedule(blocks: list[Block], sessions: list[Session], rng: random.Random) -> Session:
    cutoff = date(2026, 6, 21)
    day_sessions = [s for s in sessions if s.started.date() == cutoff]
    last_consolidation = day_sessions[-4]
    feeding = [s for s in sessions if s.index <= last_consolidation.index]
    # dream() ran every few days; the first run right after setup, the last on 2026-06-21.
    for s in feeding[::14]:
        s.consolidates = True
    sessions[0].consolidates = True
    last_consolidation.consolidates = True
    consolidations = [s.index for s in sessions if s.consolidates]
    n = last_consolidation.index
    by_key = {b.key: b for b in blocks}

    def next_consolidation(after: int) -> Session:
        return sessions[consolidations[bisect.bisect_left(consolidations, after)]]

    may8 = [s.index for s in sessions if s.started.date() == date(2026, 5, 8)]
    fixed_session = {"role:uncertainty": may8[0]}
    for b in blocks:
        if b.kind == "seed":
            b.created_session = 0
        elif b.kind == "special":
            b.created_session = 1 if b.key.endswith("naming") else 2
        elif b.kind == "inbox":
            b.created_session = day_sessions[-3 + int(b.key.split(":")[1])].index
    # Drafts first, then what superseded them, so every successor comes after its predecessor.
    for b in blocks:
        if b.kind == "draft":
            b.created_session = rng.randint(3, int(n * 0.55))
    used_for_sessions: set[date] = set()
    for b in blocks:
        if b.kind in ("seed", "special", "inbox", "draft"):
            continue
        if b.key in fixed_session:
            b.created_session = fixed_session[b.key]
        elif b.kind == "session":
            # one worklog per day, written in that day's last session
            choices = [i for i in range(5, n) if sessions[i].started.date() not in used_for_sessions
                       and (i + 1 >= len(sessions) or
                            sessions[i + 1].started.date() != sessions[i].started.date())]
            b.created_session = rng.choice(choices)
            used_for_sessions.add(sessions[b.created_session].started.date())
        else:
            b.created_session = rng.randint(3, n - 1)
    # predecessors must be promoted before their successor is learned
    for b in blocks:
        if b.successor:
            succ = by_key[b.successor]
            prom = next_consolidation(b.created_session).index
            if succ.created_session <= prom:
                succ.created_session = rng.randint(prom + 1, n - 1) if prom + 1 < n else n
    # a prediction follows its mind model; a reply follows the message it answers
    minds = {b.key.split(":")[1]: b for b in blocks if b.kind == "mind"}
    for b in blocks:
        if b.kind == "prediction":
            m = minds[b.mind]  # type: ignore[attr-defined]
            if b.created_session <= m.created_session:
                b.created_session = min(n - 1, m.created_session + rng.randint(1, 40))
    threads: dict[int, list[Block]] = {}
    for b in blocks:
        if b.kind == "message":
            threads.setdefault(b.thread[0], []).append(b)  # type: ignore[attr-defined]
    for msgs in threads.values():
        start = rng.randint(10, n - 30)
        for m, b in enumerate(msgs):
            b.created_session = start + 3 * m + rng.randint(0, 2)

    # timestamps inside each session, in list order
    per_session: dict[int, int] = {}
    for b in sorted(blocks, key=lambda b: b.created_session):
        s = sessions[b.created_session]
        k = per_session.get(s.index, 0)
        per_session[s.index] = k + 1
        frac = min(0.9, 0.05 + 0.08 * k)
        b.created_at = s.started + timedelta(seconds=s.seconds * frac)
        b.created_ah = s.start_ah + s.seconds * frac / 3600.0
        if b.status != "inbox":
            b.promoted = next_consolidation(b.created_session)
    for b in blocks:
        if b.successor:
            b.archived_in = by_key[b.successor].promoted
        if b.kind == "decayed":
            b.created_session = 4
            s = sessions[4]
            b.created_at = s.started + timedelta(seconds=s.seconds * 0.5)
            b.created_ah = s.start_ah + s.seconds * 0.5 / 3600.0
            b.promoted = next_consolidation(4)
            b.archived_in = sessions[consolidations[len(consolidations) // 2]]
    return last_consolidation


# ── fitting texts, summaries and tags to the published totals ─────────────────────────────

def _fit(choices: list[tuple[list[int], list[int], int]], target: int) -> list[int]:
    """Pick one option per item so the lengths sum to ``target`` exactly.

    ``choices`` holds (option ids, their lengths, preferred option id). Reachable sums are kept
    as Python-int bitsets per item; backtracking prefers each item's preferred option, so the
    result stays close to what the text would naturally be.
    """
    reach = [1]
    for _, lengths, _ in choices:
        cur = 0
        for length in lengths:
            cur |= reach[-1] << length
        reach.append(cur)
    if not (reach[-1] >> target) & 1:
        lo = min(sum(min(c[1]) for c in choices), target)
        hi = sum(max(c[1]) for c in choices)
        raise SystemExit(f"cannot reach {target} (range {lo}..{hi}); adjust the corpus")
    picked = []
    remaining = target
    for i in range(len(choices) - 1, -1, -1):
        options, lengths, preferred = choices[i]
        order = sorted(range(len(options)), key=lambda k: abs(options[k] - preferred))
        for k in order:
            if lengths[k] <= remaining and (reach[i] >> (remaining - lengths[k])) & 1:
                picked.append(options[k])
                remaining -= lengths[k]
                break
    picked.reverse()
    return picked


def _assign_texts(blocks: list[Block], sessions: list[Session], rng: random.Random) -> None:
    for b in blocks:
        holder = getattr(b, "render_holder", None)
        if holder is not None:
            holder["date"] = b.created_at.date().isoformat()
            holder["task"] = sessions[b.created_session].task_type
    _worklogs(blocks, sessions, rng)

    active = [b for b in blocks if b.status == "active"]
    picks = _fit([(b.options, [len(b.render(o)) for o in b.options], b.preferred)
                  for b in active], CALIBRATION["live_chars"])
    for b, o in zip(active, picks):
        b.content = b.render(o)
    for b in blocks:
        if b.status != "active":
            b.content = b.render(b.preferred)
    picks = _fit([(b.summary_options, [len(b.summary_render(o)) for o in b.summary_options],
                   b.summary_preferred) for b in active], CALIBRATION["summary_chars"])
    for b, o in zip(active, picks):
        b.summary = b.summary_render(o)
    for b in blocks:
        if b.status == "archived":
            b.summary = b.summary_render(b.summary_preferred)
    for b in blocks:
        b.id = content_hash(b.content)
    ids = [b.id for b in blocks]
    assert len(set(ids)) == len(ids), "two blocks share a text"


def _assign_tags(blocks: list[Block], rng: random.Random) -> None:
    active = [b for b in blocks if b.status == "active"]
    for b in blocks:
        b.tags_required = list(dict.fromkeys(b.tags_required))
        b.tags_optional = [t for t in dict.fromkeys(b.tags_optional) if t not in b.tags_required]
    opts = [(list(range(len(b.tags_optional) + 1)), list(range(len(b.tags_optional) + 1)),
             len(b.tags_optional)) for b in active]
    base = sum(len(dict.fromkeys(b.tags_required)) for b in active)
    picks = _fit(opts, CALIBRATION["active_tags"] - base)
    for b, k in zip(active, picks):
        b.tags = list(dict.fromkeys([*b.tags_required, *b.tags_optional[:k]]))
    for b in blocks:
        if b.status == "inbox":
            b.tags = list(b.tags_required)
    # elfmem deletes an archived block's tags; the doc's instance still had 7 on 42
    # archived blocks. Three drafts keep theirs here, to match.
    drafts = sorted((b for b in blocks if b.kind == "draft"), key=lambda b: b.key)
    kept = 0
    for b in drafts:
        n = min(len(b.tags_required), CALIBRATION["archived_tags"] - kept)
        if n <= 0:
            break
        b.tags = b.tags_required[:n]
        kept += n
    assert kept == CALIBRATION["archived_tags"]


# ── numbers: reinforcement, clock, confidence ─────────────────────────────────────────────

def _assign_scores(blocks: list[Block], sessions: list[Session], last: Session,
                   rng: random.Random) -> float:
    H = sessions[-1].end_ah
    by_key = {b.key: b for b in blocks}
    for kind, ref, count in TOP_REST:
        key = f"restated:{ref}" if kind == "restated" else f"{ref[0]}:{ref[1]}"
        by_key[key].reinforcement = count
    pinned_counts = {f"restated:{r}" if k == "restated" else f"{r[0]}:{r[1]}"
                     for k, r, _ in TOP_REST}
    for b in blocks:
        if b.status == "active" and b.kind != "role" and b.key not in pinned_counts:
            # a long tail: most notes were reinforced a handful of times at most
            b.reinforcement = min(17, 1 + int(rng.expovariate(0.45)))
        b.decay_lambda = LAMBDA[b.tier]
        if b.status == "inbox":
            b.last_reinforced_at = 0.0
            continue
        prom_ah = b.promoted.end_ah
        end_ah = b.archived_in.end_ah if b.archived_in else H
        if b.reinforcement <= 1:
            b.last_reinforced_at = prom_ah
        elif b.kind == "role":
            b.last_reinforced_at = rng.uniform(max(prom_ah, 0.95 * end_ah), end_ah)
        else:
            b.last_reinforced_at = prom_ah + (end_ah - prom_ah) * rng.betavariate(2.0, 1.2)
        b.self_alignment = round(rng.uniform(0.82, 0.97) if b.kind in (
            "seed", "role", "restated", "special", "successor") else rng.uniform(0.15, 0.7), 4)
        b.success_count = b.confidence
        b.failure_count = 1.0 - b.confidence
    return H


def _edges(blocks: list[Block], rng: random.Random) -> list[tuple]:
    active = [b for b in blocks if b.status == "active"]
    by_key = {b.key: b for b in blocks}
    rows: dict[tuple[str, str], tuple] = {}

    def later(a: Block, b: Block) -> Block:
        return a if a.promoted.end_ah >= b.promoted.end_ah else b

    def add(a: Block, b: Block, weight: float, rc: int, rel: str, origin: str,
            note: str | None, canonical: bool = True) -> None:
        frm, to = (min(a.id, b.id), max(a.id, b.id)) if canonical else (a.id, b.id)
        if (frm, to) in rows or (to, frm) in rows:
            raise ValueError("duplicate edge")
        when = later(a, b).promoted
        rows[(frm, to)] = (frm, to, weight, rc, _iso(when.ended), rel, origin,
                           when.end_ah, note)

    # similarity edges: pairs of notes on the same topic, made at consolidation
    knowledge = [b for b in active if b.kind == "knowledge"]
    pairs = [(a, b) for i, a in enumerate(knowledge) for b in knowledge[i + 1:]
             if a.key.split(":")[0] == b.key.split(":")[0]]
    for a, b in rng.sample(pairs, CALIBRATION["edges"]["similar"]):
        add(a, b, round(rng.uniform(0.61, 0.89), 6), rng.randint(0, 6), "similar",
            "similarity", None)
    # co-retrieval: the blocks the frames return together most often
    hot = sorted(active, key=lambda b: -b.reinforcement)[:8]
    hot_pairs = [(a, b) for i, a in enumerate(hot) for b in hot[i + 1:]]
    added = 0
    for a, b in rng.sample(hot_pairs, len(hot_pairs)):
        try:
            add(a, b, round(rng.uniform(0.5, 0.7), 6), rng.randint(3, 40), "co_occurs",
                "co_retrieval", None)
            added += 1
        except ValueError:
            continue
        if added == CALIBRATION["edges"]["co_occurs"]:
            break
    # replies: from each reply to the message it answers
    for b in active:
        if b.kind == "message":
            t, m, _, _ = b.thread  # type: ignore[attr-defined]
            if m > 0:
                parent = by_key[f"message:{t}:{m - 1}"]
                add(b, parent, 0.8, 0, "replies_to", "agent", None, canonical=False)
    # predictions, linked from the mind model they are about
    for b in active:
        if b.kind == "prediction":
            mind = by_key[f"mind:{b.mind}"]  # type: ignore[attr-defined]
            add(mind, b, 0.7, 0, "predicts", "agent", "Prediction: " + b.content[:80].rstrip())
    return list(rows.values())


def _contradictions(blocks: list[Block], rng: random.Random) -> list[tuple]:
    by_key = {b.key: b for b in blocks}
    pairs: list[tuple[Block, Block, bool]] = []
    for topic, spec in corpus.TOPICS.items():
        keyed: dict[str, list[int]] = {}
        for i, entry in enumerate(spec["entries"]):
            if entry[4]:
                keyed.setdefault(entry[4], []).append(i)
        for conflict, (i, j) in keyed.items():
            pairs.append((by_key[f"{topic}:{i}"], by_key[f"{topic}:{j}"],
                          conflict in ("hotfix", "local-speed")))
    for t1, i, t2, j in corpus.EXTRA_CONFLICTS:
        pairs.append((by_key[f"{t1}:{i}"], by_key[f"{t2}:{j}"], False))
    # the rest are the pairwise check's false positives: same topic, merely related
    for topic in ("consolidate", "sqlite", "mcp", "python", "decay", "graph", "adr", "cost"):
        pairs.append((by_key[f"{topic}:0"], by_key[f"{topic}:4"], False))
    assert len(pairs) == CALIBRATION["contradictions"], len(pairs)
    rows = []
    for a, b, resolved in pairs:
        when = max(a.promoted, b.promoted, key=lambda s: s.index)
        lo, hi = sorted((a.id, b.id))
        rows.append((lo, hi, round(rng.uniform(0.55, 0.93), 6), int(resolved), _iso(when.ended)))
    assert sum(1 for r in rows if not r[3]) == CALIBRATION["unresolved"]
    return rows


def _outcomes(blocks: list[Block], sessions: list[Session], rng: random.Random) -> list[tuple]:
    by_key = {b.key: b for b in blocks}
    plan = [("prediction:5", 1.0), ("prediction:1", 0.9), ("prediction:3", 0.8),
            ("local-llm:2", 0.1), ("retrieval:0", 0.9), ("sqlite:1", 0.8)]
    rows = []
    for key, signal in plan:
        b = by_key[key]
        when = sessions[min(len(sessions) - 2, b.promoted.index + rng.randint(3, 60))]
        weight = 1.0
        alpha = b.confidence * (1 + b.outcome_evidence)
        beta = (1 - b.confidence) * (1 + b.outcome_evidence)
        alpha, beta = alpha + weight * signal, beta + weight * (1 - signal)
        before, after = b.confidence, round(alpha / (alpha + beta), 6)
        b.confidence, b.success_count, b.failure_count = after, alpha, beta
        b.outcome_evidence += weight
        if signal < 0.2:
            # elfmem's penalty: a low signal doubles the block's decay lambda
            b.decay_lambda *= 2.0
        rows.append((_hex(rng, 32), b.id, signal, weight, "agent", before, after,
                     _iso(when.started + timedelta(seconds=when.seconds / 2))))
    return rows


# ── writing and checking ──────────────────────────────────────────────────────────────────

def _write(path: Path, sessions, blocks, edges, contradictions, outcomes, last: Session,
           H: float, rng: random.Random) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    # What elfmem 0.19.2 writes into an empty database on first open (schema 5).
    create_fresh(conn, "0.19.2")
    setup = sessions[0].started
    for name, weights, filters, guarantees, template, budget in BUILTIN_FRAMES:
        conn.execute("INSERT INTO frames VALUES (?,?,?,?,?,?,?,?,?)",
                     (name, weights, filters, guarantees, template, budget, None, "builtin",
                      _iso(setup)))
    usage = {"llm_input_tokens": CALIBRATION["llm_input_tokens"],
             "llm_output_tokens": CALIBRATION["llm_output_tokens"],
             # the local embedding server reports no token counts; calls are still counted
             "embedding_tokens": 0,
             "llm_calls": CALIBRATION["llm_calls"],
             "embedding_calls": CALIBRATION["embedding_calls"]}
    backup_at = datetime(2026, 6, 1, 10, 15, 3, 512_004, tzinfo=UTC)
    config = [("total_active_hours", repr(H)), ("prune_threshold", "0.05"), ("top_k", "5"),
              ("peer_identity", SELF_DID),
              ("peer_inbox_dir", "/home/elf/projects/elfmem/.elfmem/inbox"),
              ("last_backup_path",
               "/home/elf/.elfmem/backups/elfmem-" + backup_at.strftime("%Y%m%dT%H%M%SZ") + ".db"),
              ("last_backup_at", _iso(backup_at)),
              ("last_curate_at", repr(last.end_ah)),
              ("last_consolidated_at", _iso(last.ended)),
              ("lifetime_token_usage", json.dumps(usage))]
    conn.executemany("INSERT INTO system_config VALUES (?,?)", config)
    conn.executemany("INSERT INTO sessions VALUES (?,?,?,?,?)",
                     [(s.id, s.task_type, _iso(s.started), _iso(s.ended), s.start_ah)
                      for s in sessions])
    for b in sorted(blocks, key=lambda b: b.created_at):
        promoted = b.promoted is not None
        conn.execute(
            "INSERT INTO blocks (id, content, category, source, created_at, status, "
            "archive_reason, confidence, reinforcement_count, decay_lambda, last_reinforced_at, "
            "self_alignment, embedding, embedding_model, token_count, summary, last_session_id, "
            "outcome_evidence, success_count, failure_count, source_peer, share, envelope_json, "
            "last_scored_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (b.id, b.content, b.category, b.source, _iso(b.created_at), b.status,
             b.archive_reason, b.confidence, b.reinforcement, b.decay_lambda,
             b.last_reinforced_at, b.self_alignment if promoted else None, None, None,
             max(1, len(b.content) // 4) if promoted else None, b.summary if promoted else None,
             None, b.outcome_evidence, b.success_count, b.failure_count, b.source_peer,
             "private", json.dumps(b.envelope) if b.envelope else None,
             _iso(b.promoted.ended) if promoted else None))
        conn.executemany("INSERT INTO block_tags VALUES (?,?)", [(b.id, t) for t in b.tags])
    conn.executemany("INSERT INTO edges VALUES (?,?,?,?,?,?,?,?,?)", edges)
    conn.executemany("INSERT INTO contradictions VALUES (?,?,?,?,?)", contradictions)
    conn.executemany("INSERT INTO block_outcomes VALUES (?,?,?,?,?,?,?,?)", outcomes)
    # Hebbian staging: pairs retrieved together once or twice, below the promotion threshold
    active = sorted((b for b in blocks if b.status == "active"), key=lambda b: b.id)
    edge_pairs = {(e[0], e[1]) for e in edges} | {(e[1], e[0]) for e in edges}
    staging = []
    while len(staging) < 12:
        a, b = rng.sample(active, 2)
        lo, hi = sorted((a.id, b.id))
        if (lo, hi) not in edge_pairs and all((lo, hi) != s[:2] for s in staging):
            staging.append((lo, hi, rng.randint(1, 2)))
    conn.executemany("INSERT INTO co_retrieval_staging VALUES (?,?,?)", staging)
    for name, did in PEERS.items():
        msgs = [b for b in blocks if b.kind == "message" and b.thread[3] == name]  # type: ignore
        first = min(m.created_at for m in msgs)
        latest = max(m.created_at for m in msgs)
        conn.execute("INSERT INTO peer_roster VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     (did, name, None, 1.0, 1, _iso(first - timedelta(hours=2)), _iso(latest),
                      0, 0, sum(m.thread[2] == "in" for m in msgs),  # type: ignore
                      sum(m.thread[2] == "out" for m in msgs), None,  # type: ignore
                      f"/home/elf/projects/{name}/.elfmem/inbox"))
    conn.commit()
    # a live instance is in WAL mode; fold the log back so the single file is complete
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _envelopes(blocks: list[Block]) -> None:
    by_key = {b.key: b for b in blocks}
    for b in blocks:
        if b.kind != "message":
            continue
        t, m, direction, peer = b.thread  # type: ignore[attr-defined]
        parent = by_key.get(f"message:{t}:{m - 1}") if m > 0 else None
        b.envelope = {"msg_id": "m_" + b.id[:8],
                      "direction": "outbound" if direction == "out" else "inbound",
                      "from_did": SELF_DID if direction == "out" else PEERS[peer],
                      "to_did": PEERS[peer] if direction == "out" else SELF_DID,
                      "in_reply_to": "m_" + parent.id[:8] if parent else None,
                      "sent_at": _iso(b.created_at - timedelta(seconds=1))}


def verify(path: Path) -> dict:
    """Recompute the published figures from raw rows; raise SystemExit on any mismatch."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    q = lambda sql: conn.execute(sql).fetchall()  # noqa: E731
    cfg = dict(q("SELECT key, value FROM system_config"))
    usage = json.loads(cfg["lifetime_token_usage"])
    H = float(cfg["total_active_hours"])
    status = dict(q("SELECT status, count(*) FROM blocks GROUP BY status"))
    reasons = dict(q("SELECT archive_reason, count(*) FROM blocks WHERE status='archived' "
                     "GROUP BY archive_reason"))
    tag_counts = dict(q("SELECT b.status, count(*) FROM block_tags t JOIN blocks b "
                        "ON b.id = t.block_id GROUP BY b.status"))
    found = {
        "llm_calls": usage["llm_calls"], "llm_input_tokens": usage["llm_input_tokens"],
        "llm_output_tokens": usage["llm_output_tokens"],
        "embedding_calls": usage["embedding_calls"],
        "blocks_ever": q("SELECT count(*) FROM blocks")[0][0],
        "active": status.get("active"), "inbox": status.get("inbox"),
        "archived": status.get("archived"), "superseded": reasons.get("superseded"),
        "decayed": reasons.get("decayed"),
        "live_chars": q("SELECT sum(length(content)) FROM blocks WHERE status='active'")[0][0],
        "summary_chars": q("SELECT sum(length(summary)) FROM blocks WHERE status='active'")[0][0],
        "sessions": q("SELECT count(*) FROM sessions")[0][0],
        "role_slots_left": q("SELECT count(DISTINCT t.tag) FROM block_tags t JOIN blocks b ON "
                             "b.id=t.block_id WHERE b.status='active' AND "
                             "t.tag LIKE 'self/role/%'")[0][0],
        "active_tags": tag_counts.get("active"), "archived_tags": tag_counts.get("archived"),
        "contradictions": q("SELECT count(*) FROM contradictions")[0][0],
        "unresolved": q("SELECT count(*) FROM contradictions WHERE resolved=0")[0][0],
        "outcomes": q("SELECT count(*) FROM block_outcomes")[0][0],
        "amendments": q("SELECT count(*) FROM block_amendments")[0][0],
        "edges": dict(q("SELECT relation_type, count(*) FROM edges GROUP BY relation_type")),
        "mind_blocks": q("SELECT count(DISTINCT block_id) FROM block_tags "
                         "WHERE tag LIKE 'mind/%'")[0][0],
        "top_reinforcement": [r[0] for r in q("SELECT reinforcement_count FROM blocks "
                                              "ORDER BY reinforcement_count DESC LIMIT 10")],
        "last_consolidated": cfg["last_consolidated_at"][:10],
        "first_created": q("SELECT min(created_at) FROM blocks")[0][0][:10],
        "last_created": q("SELECT max(created_at) FROM blocks")[0][0][:10],
        "as_of": q("SELECT max(started_at) FROM sessions")[0][0][:10],
    }
    bad = {k: (found[k], v) for k, v in CALIBRATION.items() if found[k] != v}
    # derived figures exactly as the doc prints them
    derived = {
        "calls_per_surviving_block": f"{usage['llm_calls'] / found['active']:.1f}",
        "input_per_corpus_token": f"{usage['llm_input_tokens'] / (found['live_chars'] / 4):.1f}",
        "input_per_summary_token":
            f"{usage['llm_input_tokens'] / (found['summary_chars'] / 4):.1f}",
        "active_hours": f"{H:.2f}",
        "mean_session_s": f"{H * 3600 / found['sessions']:.0f}",
        "recency": " / ".join(f"{math.exp(-lam * H):.4f}" for lam in LAMBDA.values()),
        "tags_per_block": f"{found['active_tags'] / found['active']:.1f} vs "
                          f"{found['archived_tags'] / found['archived']:.2f}",
    }
    expected = {"calls_per_surviving_block": "20.7", "input_per_corpus_token": "52.1",
                "input_per_summary_token": "188.7", "active_hours": "3.69",
                "mean_session_s": "36", "recency": "1.0000 / 0.9963 / 0.9638 / 0.8317",
                "tags_per_block": "4.4 vs 0.17"}
    bad.update({k: (derived[k], v) for k, v in expected.items() if derived[k] != v})
    lost_journal = q("PRAGMA journal_mode")[0][0]
    if lost_journal != "wal":
        bad["journal_mode"] = (lost_journal, "wal")
    conn.close()
    if bad:
        raise SystemExit("demo database does not match the published figures: " +
                         "; ".join(f"{k}: got {g!r}, want {w!r}" for k, (g, w) in bad.items()))
    return {**found, **derived}


def build(out: Path) -> dict:
    rng = random.Random(SEED)
    sessions = _build_sessions(rng)
    blocks = _all_blocks(rng)
    last = _schedule(blocks, sessions, rng)
    _assign_texts(blocks, sessions, rng)
    _assign_tags(blocks, rng)
    H = _assign_scores(blocks, sessions, last, rng)
    _envelopes(blocks)
    edges = _edges(blocks, rng)
    contradictions = _contradictions(blocks, rng)
    outcomes = _outcomes(blocks, sessions, rng)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    for p in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        p.unlink(missing_ok=True)
    _write(tmp, sessions, blocks, edges, contradictions, outcomes, last, H, rng)
    figures = verify(tmp)
    # Reading a WAL database leaves empty -wal/-shm files behind; a stale -wal next to the
    # target would be replayed into the new file, so both sides are cleared.
    for base in (tmp, out):
        for suffix in ("-wal", "-shm"):
            Path(str(base) + suffix).unlink(missing_ok=True)
    os.replace(tmp, out)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the .db")
    args = parser.parse_args(argv)
    figures = build(args.out)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()[:16]
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes, sha256 {digest})")
    for key in ("calls_per_surviving_block", "input_per_corpus_token", "input_per_summary_token",
                "active_hours", "mean_session_s", "recency", "tags_per_block"):
        print(f"  {key}: {figures[key]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
