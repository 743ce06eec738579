"""The instance a simulation is parameterised by: clock, arrival, near-duplicate rate, size, tiers.

The doc's argument rests on one deployment (370 sessions of 36 s: 3.69 active hours in 75
days). Its own §10 names that as the main risk: "a deployment with hour-long sessions would see
decay actually function". So every rate the world model uses comes from an :class:`Instance`,
either the doc's figures (``DOC_INSTANCE``) or one measured from an elfmem store::

    inst = instance_from_store(memlab.load_elfmem("data/demo/elfmem-demo.db"))

``provenance`` says, per field, whether it was measured from the store, taken from the doc, or
assumed (and why), so a run's evidence can say which of its inputs are facts.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from memlab import kinds
from memlab.constants import CHARS_PER_TOKEN, DECAY_LAMBDA, DECAY_TIERS, tier_of_lambda
from memlab.errors import MemlabError, SimulationError

__all__ = [
    "Instance",
    "elfmem_frames",
    "DOC_INSTANCE",
    "instance_from_store",
    "load_instance",
    "active_hours_at",
    "LAMBDA",
]

# elfmem's decay tiers, their lambda and the lambda -> tier rule live in memlab.constants.
LAMBDA, TIERS = DECAY_LAMBDA, DECAY_TIERS


@dataclass(frozen=True)
class Instance:
    """Rates and sizes of one memory deployment, as the world model consumes them."""

    name: str
    total_active_hours: float
    n_sessions: int
    span_days: float
    blocks_ever: int
    active_blocks: int
    #: Archival events observed: near-duplicate supersessions (plus near-dups only flagged,
    #: schema 9+) and decay archivals.
    near_dup_events: int
    decayed: int
    #: Fraction of blocks per tier as they arrive (PERMANENT..EPHEMERAL).
    tier_mix: tuple[tuple[str, float], ...]
    mean_block_tokens: float
    llm_calls: int | None = None
    llm_input_tokens: int | None = None
    #: Role slots still filled (``self/role/*`` on active blocks); None when unknown.
    constitution_roles: int | None = None
    #: Supersessions that replaced a constitutional block (one tagged ``self/role/*`` or
    #: ``self/constitutional``): the restated principles among ``near_dup_events``; None when
    #: unknown (then the real S10 falls back to the instance-wide near-duplicate rate, and says
    #: so).
    principle_restatements: int | None = None
    #: Observed active hours per session; empty means "exponential with the mean".
    session_hours: tuple[float, ...] = ()
    #: Corpus growth factor for the scale scenarios (the doc's 140 -> 14,000 is 100x).
    growth: int = 100
    source: str | None = None
    provenance: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.n_sessions <= 0 or self.span_days <= 0:
            raise SimulationError(f"{self.name}: an instance needs sessions and a time span")
        if self.blocks_ever <= 0 or self.active_blocks <= 0:
            raise SimulationError(f"{self.name}: an instance needs blocks")

    def with_(self, **changes: Any) -> "Instance":
        return dataclasses.replace(self, **changes)

    # ---- derived rates -----------------------------------------------------------------------
    @property
    def mean_session_hours(self) -> float:
        return self.total_active_hours / self.n_sessions

    @property
    def sessions_per_day(self) -> float:
        return self.n_sessions / self.span_days

    @property
    def blocks_per_day(self) -> float:
        return self.blocks_ever / self.span_days

    @property
    def near_dup_rate(self) -> float:
        """Near-duplicate arrivals per learned block."""
        return min(1.0, self.near_dup_events / self.blocks_ever)

    @property
    def principle_restate_rate(self) -> float | None:
        """Restated principles per learned block (constitutional supersessions only)."""
        if self.principle_restatements is None:
            return None
        return min(1.0, self.principle_restatements / self.blocks_ever)

    @property
    def llm_calls_per_active_block(self) -> float | None:
        if self.llm_calls is None:
            return None
        return self.llm_calls / self.active_blocks

    def tier_probabilities(self, *, learned: bool = True) -> tuple[list[str], np.ndarray]:
        """Tier names and probabilities; ``learned`` drops PERMANENT (only the seed is)."""
        names = [t for t, _ in self.tier_mix if not (learned and t == "PERMANENT")]
        p = np.array([w for t, w in self.tier_mix if t in names], dtype=float)
        if p.sum() <= 0:
            return ["STANDARD"], np.array([1.0])
        return names, p / p.sum()

    def recency_after(self, hours: float | None = None) -> dict[str, float]:
        """exp(-lambda * hours) per tier (the doc's §2.2 table); hours defaults to the lifetime."""
        h = self.total_active_hours if hours is None else hours
        return {t: math.exp(-LAMBDA[t] * h) for t in TIERS}

    def session_sampler(self, rng: np.random.Generator):
        """A function returning the active hours of the next session."""
        observed = np.array([h for h in self.session_hours if h >= 0], dtype=float)
        if len(observed):
            return lambda: float(observed[rng.integers(len(observed))])
        mean = self.mean_session_hours
        return lambda: float(rng.exponential(mean))

    def summary(self) -> dict[str, Any]:
        return {
            "instance": self.name,
            "sessions": self.n_sessions,
            "active_hours": round(self.total_active_hours, 3),
            "mean_session_s": round(self.mean_session_hours * 3600, 1),
            "span_days": round(self.span_days, 1),
            "blocks_ever": self.blocks_ever,
            "active_blocks": self.active_blocks,
            "near_dup_rate": round(self.near_dup_rate, 4),
            "decayed": self.decayed,
            "mean_block_tokens": round(self.mean_block_tokens, 1),
            "tier_mix": ", ".join(f"{t} {w:.2f}" for t, w in self.tier_mix),
        }


#: The doc's instance (§2): the maintainer's live DB, 2026-04-07 to 2026-06-21.
DOC_INSTANCE = Instance(
    name="doc (elfmem dev instance, §2)",
    total_active_hours=3.69,
    n_sessions=370,
    span_days=75.0,
    blocks_ever=185,
    active_blocks=140,
    near_dup_events=41,
    decayed=1,
    # The doc gives no tier mix; 4 surviving role blocks of 140 are PERMANENT, the rest split
    # by elfmem's tier rule (self/value -> DURABLE, observation -> EPHEMERAL, else STANDARD)
    # in proportions assumed, not measured.
    tier_mix=(("PERMANENT", 0.03), ("DURABLE", 0.20), ("STANDARD", 0.62), ("EPHEMERAL", 0.15)),
    mean_block_tokens=31_633 / 140,
    llm_calls=2_903,
    llm_input_tokens=1_646_801,
    constitution_roles=4,
    # §6 S10: 6 of the 10 seeded roles were lost, all to supersession (41 supersessions in
    # all, 1 decay): at least 6 of the 41 replaced a constitutional block.
    principle_restatements=6,
    source=None,
    provenance={
        "total_active_hours": "doc §2.2",
        "n_sessions": "doc §2.2",
        "span_days": "doc header",
        "blocks_ever": "doc §2.1",
        "active_blocks": "doc §2.1",
        "near_dup_events": "doc §2.2 (41 superseded)",
        "decayed": "doc §2.2",
        "tier_mix": "assumed (the doc gives none)",
        "mean_block_tokens": "doc §2.1 (31,633 tokens / 140 blocks)",
        "llm_calls": "doc §2.1",
        "session_hours": "assumed exponential, mean 36 s (doc §2.2)",
        "principle_restatements": "doc §6 S10 (6 of 10 roles lost, each to supersession; a "
        "lower bound of the 41)",
    },
)


def elfmem_frames(store: Any) -> Mapping[str, pd.DataFrame] | None:
    """``store``'s elfmem tables, what the simulations read, as its kind gives them
    (:meth:`memlab.kinds.KindBase.elfmem_frames`), or None when its kind holds none (or is
    no kind memlab knows)."""
    kind = kinds.lookup(getattr(store, "kind", None))
    return None if kind is None else kind.elfmem_frames(store)


def _frame(frames: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    return frames.get(name, pd.DataFrame())


def _config_value(config: pd.DataFrame, key: str) -> Any:
    if config is None or config.empty or key not in config.columns:
        return None
    value = config[key].iloc[0]
    return None if pd.isna(value) else value


def instance_from_store(store: Any, *, audit: Any = None, growth: int = 100) -> Instance:
    """Measure an :class:`Instance` from an ``elfmem_db`` Store (``memlab.load_elfmem``).

    ``audit`` (a :class:`memlab.audits.Audit` of the same store) is optional: its headline is
    kept in ``provenance`` for the record; every rate is computed from the frames themselves so
    the simulation does not depend on how the audit names its metrics.
    """
    frames = elfmem_frames(store)
    if frames is None:
        raise MemlabError(
            f"a simulation instance needs an elfmem database, not "
            f"{getattr(store, 'kind', type(store).__name__)!r}",
            path=getattr(store, "path", None),
            hint="load it with memlab.load_elfmem(path)",
        )
    blocks = _frame(frames, "blocks")
    if blocks.empty:
        raise MemlabError(
            "the store has no blocks to measure rates from", path=getattr(store, "path", None)
        )
    sessions = _frame(frames, "sessions")
    config = _frame(frames, "config")
    contradictions = _frame(frames, "contradictions")
    tags = _frame(frames, "tags")
    prov: dict[str, str] = {}

    status = blocks["status"].astype("string")
    reason = (
        blocks["archive_reason"].astype("string")
        if "archive_reason" in blocks
        else pd.Series(pd.NA, index=blocks.index, dtype="string")
    )
    active = blocks[status == "active"]
    n_active = int(len(active)) or int((status != "archived").sum()) or len(blocks)

    total_h = _config_value(config, "total_active_hours")
    prov["total_active_hours"] = "store: config.total_active_hours"
    if total_h is None and "start_active_hours" in sessions:
        total_h = float(pd.to_numeric(sessions["start_active_hours"], errors="coerce").max())
        prov["total_active_hours"] = "store: the last sessions.start_active_hours (no config value)"
    if total_h is None or not math.isfinite(total_h):
        total_h = 0.0
        prov["total_active_hours"] = "store has none: 0"

    n_sessions = int(len(sessions)) if len(sessions) else 1
    prov["n_sessions"] = "store: sessions rows" if len(sessions) else "no sessions: assumed 1"

    created = (
        blocks["created_at"].dropna() if "created_at" in blocks else pd.Series([], dtype=object)
    )
    times = list(created)
    if len(sessions) and "started_at" in sessions:
        times += list(sessions["started_at"].dropna())
    if len(times) >= 2:
        span = (max(times) - min(times)).total_seconds() / 86400.0
    else:
        span = 0.0
    span_days = max(span, 1.0)
    prov["span_days"] = "store: first to last created_at / session start"

    superseded = int((reason == "superseded").sum())
    principle = None
    if "id" in blocks:
        from memlab.audits.seeds import match_seed

        constitutional: set = set()
        if len(tags) and {"tag", "block_id"} <= set(tags.columns):
            tag = tags["tag"].astype("string")
            constitutional = set(
                tags.loc[
                    tag.str.startswith("self/role/", na=False) | (tag == "self/constitutional"),
                    "block_id",
                ]
            )
        # A seeded principle is known by its text or id too (archived blocks can lose tags).
        content = blocks["content"] if "content" in blocks else pd.Series(None, index=blocks.index)
        seeded = [
            match_seed(content=c, block_id=b) is not None for c, b in zip(content, blocks["id"])
        ]
        is_principle = blocks["id"].isin(constitutional) | pd.Series(seeded, index=blocks.index)
        principle = int(((reason == "superseded") & is_principle).sum())
        prov["principle_restatements"] = (
            "store: superseded blocks tagged self/role/* or "
            "self/constitutional, or holding a seeded principle's "
            "text or id"
        )
    flagged = 0
    if len(contradictions) and "kind" in contradictions:
        flagged = int((contradictions["kind"].astype("string") == "near_duplicate").sum())
    decayed = int((reason == "decayed").sum())
    prov["near_dup_events"] = (
        f"store: {superseded} superseded + {flagged} near_duplicate contradiction rows"
    )

    # Every block ever, not only the active ones: decay removes the short-lived tiers, and the
    # world model needs the mix blocks arrive with.
    lam = pd.to_numeric(blocks.get("decay_lambda", pd.Series(dtype=float)), errors="coerce")
    tiers = lam.dropna().map(tier_of_lambda).dropna()  # elfmem's rule: a penalised λ is STANDARD
    if len(tiers):
        counts = tiers.value_counts()
        mix = tuple((t, float(counts.get(t, 0)) / len(tiers)) for t in TIERS)
        prov["tier_mix"] = "store: decay_lambda of all blocks, elfmem's tier rule"
    else:
        mix = DOC_INSTANCE.tier_mix
        prov["tier_mix"] = "no decay_lambda: the doc instance's assumed mix"

    if "token_count" in active and active["token_count"].notna().any():
        mean_tokens = float(pd.to_numeric(active["token_count"], errors="coerce").mean())
        prov["mean_block_tokens"] = "store: token_count of active blocks"
    else:
        chars = active["content"].astype("string").str.len() if "content" in active else None
        mean_tokens = (
            float(chars.mean() / CHARS_PER_TOKEN) if chars is not None and len(chars) else 50.0
        )
        prov["mean_block_tokens"] = "store: content chars / 4 of active blocks"

    llm_calls = _config_value(config, "llm_calls")
    llm_in = _config_value(config, "llm_input_tokens")

    roles = None
    if len(tags) and "tag" in tags:
        role_tags = tags[tags["tag"].astype("string").str.startswith("self/role/", na=False)]
        active_ids = set(active["id"])
        roles = int(role_tags[role_tags["block_id"].isin(active_ids)]["tag"].nunique())

    session_hours: tuple[float, ...] = ()
    if len(sessions) and "start_active_hours" in sessions:
        start = (
            pd.to_numeric(sessions.sort_values("started_at")["start_active_hours"], errors="coerce")
            .dropna()
            .to_numpy()
        )
        if len(start) >= 2:
            ends = np.append(start[1:], total_h)
            hours = ends - start
            session_hours = tuple(float(h) for h in hours if h >= 0)
            prov["session_hours"] = "store: gaps between sessions.start_active_hours"
    if not session_hours and len(sessions) and "duration_s" in sessions:
        dur = pd.to_numeric(sessions["duration_s"], errors="coerce").dropna()
        if len(dur):
            session_hours = tuple(float(s) / 3600.0 for s in dur)
            prov["session_hours"] = "store: sessions.duration_s (wall time, an upper bound)"
    if not session_hours:
        prov["session_hours"] = "assumed exponential with the store's mean"

    if audit is not None:
        prov["audit"] = ", ".join(
            f"{k}={v}" for k, v in sorted(audit.headline.items()) if isinstance(v, (int, float))
        )[:2000]

    path = getattr(store, "path", None)
    return Instance(
        name=getattr(store, "name", None) or (Path(path).name if path else "store"),
        total_active_hours=total_h,
        n_sessions=n_sessions,
        span_days=span_days,
        blocks_ever=len(blocks),
        active_blocks=n_active,
        near_dup_events=superseded + flagged,
        decayed=decayed,
        tier_mix=mix,
        mean_block_tokens=mean_tokens,
        llm_calls=None if llm_calls is None else int(llm_calls),
        llm_input_tokens=None if llm_in is None else int(llm_in),
        constitution_roles=roles,
        principle_restatements=principle,
        session_hours=session_hours,
        growth=growth,
        source=None if path is None else str(path),
        provenance=prov,
    )


def _locate(path: str | Path) -> Path:
    """The path as given, or, when it is relative and missing, relative to the repository
    (a notebook opened from notebooks/ names data/... as the README does)."""
    p = Path(path).expanduser()
    if p.exists() or p.is_absolute():
        return p
    repo = Path(__file__).resolve().parents[2]
    return repo / p if (repo / p).exists() else p


def load_instance(instance: Any) -> tuple[Instance, Any]:
    """(Instance, Store or None) from None (the doc's figures), an Instance, a Store, or a
    path to an elfmem database (loaded with ``memlab.load_elfmem`` and audited)."""
    if instance is None:
        return DOC_INSTANCE, None
    if isinstance(instance, Instance):
        return instance, None
    if isinstance(instance, (str, Path)):
        from memlab import load_elfmem

        store = load_elfmem(_locate(instance))
    else:
        store = instance
    from memlab.audits import audit as run_audit

    return instance_from_store(store, audit=run_audit(store)), store


def active_hours_at(created: pd.Series, sessions: pd.DataFrame, total: float) -> np.ndarray:
    """Active hours on the instance clock when each block was created: the clock at the start
    of the last session that began before it (linear in wall time when there are no sessions)."""
    ts = pd.to_datetime(created, utc=True)
    if len(sessions) and {"started_at", "start_active_hours"} <= set(sessions.columns):
        s = sessions[["started_at", "start_active_hours"]].dropna().sort_values("started_at")
        if len(s):
            starts = s["started_at"].astype("int64").to_numpy()
            hours = pd.to_numeric(s["start_active_hours"], errors="coerce").to_numpy()
            k = np.searchsorted(starts, ts.astype("int64").to_numpy(), side="right") - 1
            return np.where(k >= 0, hours[np.clip(k, 0, None)], 0.0)
    lo, hi = ts.min(), ts.max()
    span = (hi - lo).total_seconds() or 1.0
    return ((ts - lo).dt.total_seconds() / span * total).to_numpy()
