"""The world model: a memory store that runs under one iteration's rules and counts what it costs.

A :class:`World` learns, consolidates, curates, reviews, edits, forgets and retrieves the way an
:class:`~memlab.sim.model.iterations.Iteration` says, on an active-hour session clock, and records
every decision as an event. Near-duplicate decisions use the cosine the real sentence model
gives the two texts (``memlab.embed``), never a number chosen for the test.

What is modelled rather than run: LLM calls are counted, not made (each has an assumed prompt
overhead, see ``PROMPT_TOKENS``); a failing LLM (S6) follows the failure handling the doc
describes for each iteration. Everything a count depends on (which blocks are compared, which
survive, when the clock allows curate) is executed.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from memlab.constants import CHARS_PER_TOKEN
from memlab.sim._texts import CONSTITUTION, CONSTITUTION_TAGS
from memlab.sim.instance import LAMBDA, Instance
from memlab.sim.model.iterations import Iteration

__all__ = ["World", "Block", "VectorBook", "PROMPT_TOKENS", "LLMUnavailable"]

#: Assumed tokens per call beyond the blocks it carries (prompt template, instructions), and
#: the output it returns. Only the token totals depend on these; call counts do not.
PROMPT_TOKENS = {
    "analysis": (350, 60),  # process_block: summary, alignment, tags
    "contradiction": (250, 20),  # one pair, yes/no + score
    "review": (800, 1_500),  # one window of corpus, proposal out
    "preflight": (20, 5),
}
CONSTITUTIONAL_TAG = "self/constitutional"


class LLMUnavailable(RuntimeError):
    """An LLM call with no usable key (S6)."""


class VectorBook:
    """Text -> unit vector through ``memlab.embed`` (whose disk cache makes a rerun cheap),
    memoised for the run so a text is hashed and looked up once."""

    def __init__(self, embedder: Any = None) -> None:
        self._embedder = embedder
        self._vecs: dict[str, np.ndarray] = {}

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from memlab.embed import get_embedder

            self._embedder = get_embedder()
        return self._embedder

    def __len__(self) -> int:
        return len(self._vecs)

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vecs))
        if missing:
            vecs = self.embedder.encode(missing)
            for text, vec in zip(missing, vecs):
                self._vecs[text] = np.asarray(vec, dtype=np.float32)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._vecs[t] for t in texts])

    def vec(self, text: str) -> np.ndarray:
        return self.matrix([text])[0]

    def cosine(self, a: str, b: str) -> float:
        m = self.matrix([a, b])
        return float(m[0] @ m[1])


@dataclass
class Block:
    id: str
    text: str
    vec: np.ndarray
    tier: str
    created_h: float
    created_day: float
    tokens: float
    role: str | None = None  # constitutional role slot, if any
    pinned: bool = False
    family: tuple | None = None  # ("role", name) or ("note", key): how to restate it
    status: str = "inbox"  # inbox / active / archived / rejected
    archive_reason: str | None = None
    superseded_by: str | None = None
    last_reinforced_h: float = 0.0
    reinforcements: int = 0
    tags: set[str] = field(default_factory=set)
    where: str = "db"  # db / log / notes
    summarised: bool = False

    @property
    def lam(self) -> float:
        return LAMBDA[self.tier]

    def recency(self, now_h: float) -> float:
        return math.exp(-self.lam * max(0.0, now_h - self.last_reinforced_h))


class World:
    """One memory store living under one iteration, on one instance's clock."""

    def __init__(
        self,
        iteration: Iteration,
        instance: Instance,
        book: VectorBook,
        rng: np.random.Generator,
        *,
        llm_available: bool = True,
        scenario: str = "",
    ) -> None:
        self.it = iteration
        self.inst = instance
        self.book = book
        self.rng = rng
        self.scenario = scenario
        self.llm_available = llm_available
        self.hours = 0.0
        self.day = 0.0
        self.sessions = 0
        self.blocks: dict[str, Block] = {}
        self.order: list[str] = []
        #: The constitution as self.md (constitution_file iterations): role -> text.
        self.self_md: dict[str, str] = {}
        self.calls: Counter[str] = Counter()
        self.tokens_in: Counter[str] = Counter()
        self.tokens_out: Counter[str] = Counter()
        self.llm_errors: Counter[str] = Counter()
        self.degraded: set[str] = set()
        self.events: list[dict[str, Any]] = []
        self.last_curate_h: float | None = None
        self.curate_runs = 0
        self._seq = 0
        #: role -> the text the operator means the principle to say (seed, or their edit).
        self._intended: dict[str, str] = {}

    # ---- bookkeeping ---------------------------------------------------------------------------
    def _event(
        self,
        op: str,
        block: str | None = None,
        other: str | None = None,
        cosine: float | None = None,
        *,
        recorded: bool | None = None,
        cause_recorded: bool | None = None,
        **detail: Any,
    ) -> dict[str, Any]:
        event = {
            "seq": len(self.events),
            "day": round(self.day, 4),
            "hours": round(self.hours, 5),
            "op": op,
            "block": block,
            "other": other,
            "cosine": None if cosine is None else round(float(cosine), 4),
            "recorded": recorded,
            "cause_recorded": cause_recorded,
            "detail": ", ".join(f"{k}={v}" for k, v in detail.items()) or None,
        }
        self.events.append(event)
        return event

    def _new_id(self) -> str:
        self._seq += 1
        return f"b{self._seq:05d}"

    def _call(self, purpose: str, carried_tokens: float, n: int = 1) -> None:
        if n <= 0:
            return
        prompt, out = PROMPT_TOKENS[purpose]
        self.calls[purpose] += n
        self.tokens_in[purpose] += int(round(n * prompt + carried_tokens))
        self.tokens_out[purpose] += n * out
        if not self.llm_available:
            self.llm_errors[purpose] += n
            raise LLMUnavailable(purpose)

    @property
    def llm_calls(self) -> int:
        return sum(v for k, v in self.calls.items() if k != "preflight")

    def _recorded(self, op: str) -> tuple[bool, bool]:
        """Is this change recorded with its time, and with its cause (what did it)?"""
        if self.it.history == "git":
            return True, True
        if self.it.history == "mutation_log" and op in self.it.mutation_log:
            return True, True
        return False, False

    # ---- views -------------------------------------------------------------------------------
    def active(self, *, include_inbox: bool = False) -> list[Block]:
        states = ("active", "inbox") if include_inbox else ("active",)
        return [self.blocks[i] for i in self.order if self.blocks[i].status in states]

    def _matrix(self, blocks: Sequence[Block]) -> np.ndarray:
        if not blocks:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([b.vec for b in blocks])

    def constitution(self) -> dict[str, dict[str, Any]]:
        """Per role: the text that fills the slot now, where it lives, and whether it is intact
        (same text as the start or as the operator last set it)."""
        out: dict[str, dict[str, Any]] = {}
        if self.it.constitution_file:
            for role, text in self.self_md.items():
                out[role] = {
                    "text": text,
                    "where": "self.md",
                    "filled": True,
                    "intact": text == self._intended.get(role),
                }
            return out
        for role in CONSTITUTION:
            holders = [b for b in self.active() if b.role == role]
            intended = self._intended.get(role)
            held = holders[0].text if holders else None
            out[role] = {
                "text": held,
                "where": "blocks" if holders else None,
                "filled": bool(holders),
                "intact": held is not None and held == intended,
            }
        return out

    # ---- lifecycle ---------------------------------------------------------------------------
    def init(self, *, constitution: bool = True) -> None:
        """A fresh install. ``constitution``: the user's ten principles exist from the start,
        seeded into the block table (DB iterations) or written into self.md (file iterations).
        With ``constitution=False`` init does only what the iteration's installer does."""
        self._intended = {}
        if self.it.preflight:
            self.try_call("preflight", 0)
        seed = constitution or (self.it.seed_on_init and not self.it.constitution_file)
        if not seed:
            if self.it.constitution_file:
                self._event("init", detail="self.md template, commented out; 0 blocks")
            return
        if self.it.constitution_file:
            self.self_md = dict(CONSTITUTION)
            self._intended = dict(CONSTITUTION)
            self._event("init", detail="constitution in self.md; 0 blocks in memory")
            return
        for role, text in CONSTITUTION.items():
            self.learn(
                text,
                tier="PERMANENT",
                role=role,
                pinned=True,
                family=("role", role),
                tags=set(CONSTITUTION_TAGS[role]),
                tokens=len(text) / CHARS_PER_TOKEN,
            )
            self._intended[role] = text
        self._event("init", detail=f"seeded {len(CONSTITUTION)} constitutional blocks")
        self.consolidate()

    def try_call(self, purpose: str, carried: float, n: int = 1) -> bool:
        try:
            self._call(purpose, carried, n)
            return True
        except LLMUnavailable:
            return False

    def advance(self, hours: float, days: float = 0.0) -> None:
        self.hours += hours
        self.day += days
        self.sessions += 1

    def learn(
        self,
        text: str,
        *,
        tier: str = "STANDARD",
        role: str | None = None,
        pinned: bool = False,
        family: tuple | None = None,
        tags: Iterable[str] = (),
        tokens: float | None = None,
    ) -> Block:
        block = Block(
            id=self._new_id(),
            text=text,
            vec=self.book.vec(text),
            tier=tier,
            created_h=self.hours,
            created_day=self.day,
            tokens=self.inst.mean_block_tokens if tokens is None else tokens,
            role=role,
            pinned=pinned,
            family=family,
            last_reinforced_h=self.hours,
            tags=set(tags),
        )
        if self.it.files_authoritative:
            # learn() appends to the log (or rewrites a notes file): in memory at once.
            block.status = "active"
            block.where = "log" if self.it.learn_append_only else "notes"
        self.blocks[block.id] = block
        self.order.append(block.id)
        rec, cause = self._recorded("learn")
        self._event(
            "learn", block.id, recorded=rec, cause_recorded=cause, tier=tier, role=role or "-"
        )
        return block

    def consolidate(self) -> None:
        """Process what learn() left: write-time analysis, near-dup supersession, pairwise
        contradiction checks, promotion. In file iterations only the (skippable) summary."""
        pending = [
            b
            for b in (self.blocks[i] for i in self.order)
            if b.status == "inbox"
            or (self.it.files_authoritative and not b.summarised and b.status == "active")
        ]
        for block in pending:
            analysed = True
            if self.it.write_time_analysis:
                analysed = self.try_call("analysis", block.tokens)
                block.summarised = analysed
                if not analysed:
                    self._event(
                        "llm_error",
                        block.id,
                        purpose="analysis",
                        surfaced="no" if not self.it.files_authoritative else "log",
                    )
            else:
                block.summarised = True
            if self.it.files_authoritative:
                continue  # the block is already in memory; nothing else happens at write time
            if not analysed:
                # elfmem builds its adapter with api_key=None and carries on: the block is
                # promoted with default scores and no summary (silent degradation, RC4).
                self.degraded.add(block.id)
            if block.status != "inbox":
                continue
            self._place(block)

    def _place(self, block: Block) -> None:
        active = self.active()
        best, best_sim = None, -1.0
        if active:
            sims = self._matrix(active) @ block.vec
            k = int(np.argmax(sims))
            best, best_sim = active[k], float(sims[k])
        if self.it.supersession_active and best is not None:
            if best_sim >= self.it.exact_dup_threshold:
                block.status = "rejected"
                block.archive_reason = "duplicate"
                self._event("reject_exact", block.id, best.id, best_sim)
                return
            if best_sim >= self.it.near_dup_threshold:
                guarded = self.it.pin_guard and (best.pinned or best.tier == "PERMANENT")
                if guarded:
                    rec, cause = self._recorded("supersede")
                    self._event(
                        "guard_refused",
                        block.id,
                        best.id,
                        best_sim,
                        recorded=rec,
                        cause_recorded=cause,
                        target_role=best.role or "-",
                    )
                else:
                    self._supersede(best, block, best_sim)
        self._check_contradictions(block, active)
        block.status = "active"
        block.last_reinforced_h = self.hours
        self._event("promote", block.id, cosine=best_sim if best is not None else None)

    def _supersede(self, old: Block, new: Block, sim: float) -> None:
        old.status = "archived"
        old.archive_reason = "superseded"
        # update_block_status() deletes the archived block's tags, edges and contradiction
        # rows; the newcomer "inherits nothing" (no role tag, no pin).
        lost_tags = len(old.tags)
        old.tags = set()
        logged = "supersede" in self.it.mutation_log
        old.superseded_by = new.id if logged else None
        rec, cause = self._recorded("supersede")
        self._event(
            "supersede",
            old.id,
            new.id,
            sim,
            recorded=rec,
            cause_recorded=cause,
            role=old.role or "-",
            pinned=old.pinned,
            tier=old.tier,
            tags_deleted=lost_tags,
        )

    def _check_contradictions(self, block: Block, active: list[Block]) -> None:
        if not self.it.pairwise_contradiction or not active:
            return
        others = [b for b in active if b.status == "active" and b.id != block.id]
        if not others:
            return
        sims = self._matrix(others) @ block.vec
        candidates = int((sims >= self.it.contradiction_prefilter).sum())
        cap = self.it.contradiction_top_k
        n = candidates if cap is None else min(cap, candidates)
        if n:
            top = np.argsort(-sims)[:n]
            carried = float(sum(others[i].tokens for i in top)) + n * block.tokens
            ok = self.try_call("contradiction", carried, n)
            self._event("contradiction_checks", block.id, calls=n, candidates=candidates, ok=ok)

    def review(self) -> int:
        """Scheduled corpus-level review: one call per window of corpus; proposes, never mutates."""
        if not self.it.corpus_review:
            return 0
        corpus = self.active()
        tokens = sum(b.tokens for b in corpus)
        window = self.it.review_window_tokens - PROMPT_TOKENS["review"][0]
        chunks = max(1, math.ceil(tokens / window))
        ok = self.try_call("review", tokens, chunks)
        self._event(
            "review",
            calls=chunks,
            corpus_tokens=int(tokens),
            ok=ok,
            surfaced="error raised to the operator" if not ok else "-",
        )
        return chunks

    def curate(self, *, force: bool = False) -> int:
        """Decay archival (when the iteration has it and the clock says it is due) plus
        reinforcement of the top-N and of the constitution. Returns blocks archived."""
        if not self.it.decay_active:
            return 0
        due = (
            self.last_curate_h is None
            or self.hours - self.last_curate_h >= self.it.curate_interval_hours
        )
        if not (due or force):
            return 0
        self.curate_runs += 1
        self.last_curate_h = self.hours
        archived = 0
        for block in self.active():
            if block.role is not None and CONSTITUTIONAL_TAG in block.tags:
                block.last_reinforced_h = self.hours  # constitutional: auto-reinforced
                continue
            recency = block.recency(self.hours)
            if recency < self.it.prune_threshold:
                block.status = "archived"
                block.archive_reason = "decayed"
                archived += 1
                rec, cause = self._recorded("decay")
                self._event(
                    "decay",
                    block.id,
                    recorded=rec,
                    cause_recorded=cause,
                    tier=block.tier,
                    recency=round(recency, 4),
                    idle_hours=round(self.hours - block.last_reinforced_h, 1),
                )
        ranked = sorted(
            self.active(),
            key=lambda b: -b.recency(self.hours) * (1.0 + math.log1p(b.reinforcements)),
        )
        for block in ranked[:5]:
            block.last_reinforced_h = self.hours
            block.reinforcements += 1
        self._event("curate", archived=archived, run=self.curate_runs)
        return archived

    def retrieve(self, query: np.ndarray, k: int = 5) -> list[Block]:
        """A frame: top-k active blocks by cosine, each reinforced (the rich-get-richer loop)."""
        active = self.active()
        if not active or not self.it.semantic_index:
            return []
        sims = self._matrix(active) @ query
        top = np.argsort(-sims)[:k]
        hits = [active[i] for i in top]
        for block in hits:
            block.last_reinforced_h = self.hours
            block.reinforcements += 1
        return hits

    def add_corpus(
        self, texts: Sequence[str], families: Sequence[tuple | None], tiers: Sequence[str]
    ) -> list[Block]:
        """A steady-state corpus that was curated before the scenario starts: active blocks,
        no events, no calls (the scenario measures what happens next)."""
        vecs = self.book.matrix(list(texts))
        out = []
        for text, vec, family, tier in zip(texts, vecs, families, tiers):
            block = Block(
                id=self._new_id(),
                text=text,
                vec=vec,
                tier=tier,
                created_h=self.hours,
                created_day=self.day,
                tokens=self.inst.mean_block_tokens,
                family=family,
                status="active",
                last_reinforced_h=self.hours,
                summarised=True,
                where="notes" if self.it.files_authoritative else "db",
            )
            self.blocks[block.id] = block
            self.order.append(block.id)
            out.append(block)
        return out

    # ---- operator ------------------------------------------------------------------------------
    def delete_principle(self, role: str) -> bool:
        """Remove a principle: its lines in self.md, or forget() on its block."""
        if self.it.constitution_file:
            if role not in self.self_md:
                return False
            del self.self_md[role]
            self._intended.pop(role, None)
            self._event(
                "forget",
                f"self.md#{role}",
                recorded=True,
                cause_recorded=True,
                via="delete the lines in self.md",
            )
            return True
        block = self._role_block(role)
        if block is None:
            return False
        done = self.forget(block)
        if done:
            self._intended.pop(role, None)
        return done

    def edit(self, target: Block | str, text: str) -> bool:
        """Change a block (or, for a role name, the principle) in place. False if impossible."""
        role = target if isinstance(target, str) else target.role
        if self.it.constitution_file and isinstance(target, str):
            self.self_md[target] = text
            self._intended[target] = text
            self._event(
                "edit",
                f"self.md#{role}",
                recorded=True,
                cause_recorded=True,
                via="text edit of self.md",
            )
            return True
        block = target if isinstance(target, Block) else self._role_block(role)
        if block is None or not self.it.can_edit:
            self._event(
                "edit_unsupported",
                None if block is None else block.id,
                reason="no edit API" if block is not None else "no such block",
            )
            return False
        block.text = text
        block.vec = self.book.vec(text)
        if block.role:
            self._intended[block.role] = text
        rec, cause = self._recorded("edit")
        self._event(
            "edit",
            block.id,
            recorded=rec,
            cause_recorded=cause,
            via="text edit" if self.it.files_authoritative else "edit()",
        )
        return True

    def forget(self, block: Block) -> bool:
        if not self.it.can_edit:
            self._event("forget_unsupported", block.id, reason="no delete API")
            return False
        block.status = "archived"
        block.archive_reason = "forgotten"
        rec, cause = self._recorded("forget")
        self._event(
            "forget",
            block.id,
            recorded=rec,
            cause_recorded=cause,
            via="delete the lines" if self.it.files_authoritative else "forget()",
        )
        return True

    def _role_block(self, role: str | None) -> Block | None:
        for block in self.active():
            if block.role == role:
                return block
        return None

    # ---- summary -------------------------------------------------------------------------------
    def counts(self) -> dict[str, Any]:
        status = Counter(b.status for b in self.blocks.values())
        reasons = Counter(b.archive_reason for b in self.blocks.values() if b.archive_reason)
        return {
            "active": status.get("active", 0),
            "inbox": status.get("inbox", 0),
            "archived": status.get("archived", 0),
            "rejected": status.get("rejected", 0),
            "superseded": reasons.get("superseded", 0),
            "decayed": reasons.get("decayed", 0),
            "forgotten": reasons.get("forgotten", 0),
            "llm_calls": self.llm_calls,
            "llm_input_tokens": sum(self.tokens_in.values()),
            "active_hours": round(self.hours, 3),
            "sessions": self.sessions,
            "curate_runs": self.curate_runs,
        }
