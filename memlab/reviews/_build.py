"""``review(store)``: duplicates, contradictions, stale units, constitutional drift and memfs rule
breaches, as a :class:`Proposal` of choices to tick. Nothing is written here.

Evidence is measured now. Every pair a choice rests on (a duplicate member and its survivor, the
two sides of a contradiction) is re-measured on the current text with the embedding model at
review time; a relation elfmem recorded earlier (a ``near_duplicate`` or contradiction row) that
no longer holds on today's text (a block was edited since) is listed as *stale evidence* and never
proposes a change. Duplicate clusters are stars, not chains: every member is at or above the
threshold to its survivor itself.

A duplicate choice offers: keep one member and remove the rest (only members at or above the
threshold to every other member), merge (elfmem databases and memfs files only, when another
member holds a sentence the survivor lacks: the survivor gets it, the others go), or keep all. A
contradiction offers keep A / keep B / keep both.

Guard, before anything else: a unit that is pinned, constitutional (``self/constitutional`` or a
``self/role/*`` tag), read-only or an identity file is never proposed for removal, whatever the
evidence (the elfmem v2 re-evaluation, §2.3: supersession without this guard is how the
constitution eroded).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from memlab.constants import CONTRADICTION_MIN, NEAR_DUP_THRESHOLD, STALE_AFTER_DAYS
from memlab.errors import InvalidArgument
from memlab.reviews._build_contradictions import RECORDED_TOPIC_MIN, TOPIC_OVERLAP, Contradictions
from memlab.reviews._build_duplicates import SENTENCE_COVERED, Duplicates
from memlab.reviews._build_fingerprint import file_fingerprint, git_fingerprint, text_sha256
from memlab.reviews._build_stale import Staleness
from memlab.reviews._checks import Checks
from memlab.reviews._proposal import Proposal
from memlab.reviews._triage import rank
from memlab.reviews._units import check_reviewable
from memlab.store import Store, parse_as_of

__all__ = [
    "SENTENCE_COVERED",
    "TOPIC_OVERLAP",
    "RECORDED_TOPIC_MIN",
    "text_sha256",
    "review",
    "file_fingerprint",
    "git_fingerprint",
]


def _now() -> pd.Timestamp:
    return pd.Timestamp(dt.datetime.now(dt.timezone.utc)).floor("s")


class _Builder(Duplicates, Contradictions, Staleness, Checks):
    """One review in progress: the core (``_build_base``) with every detector."""


def _histogram_sample(
    vectors: np.ndarray, *, limit: int = 2000, pairs: int = 200_000, seed: int = 0
) -> np.ndarray:
    """Pairwise cosines for the similarity histogram: all pairs when small, a sample otherwise."""
    n = len(vectors)
    if n < 2:
        return np.zeros(0, np.float32)
    if n <= limit:
        iu = np.triu_indices(n, 1)
        return (vectors @ vectors.T)[iu].astype(np.float32)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n, pairs)
    b = rng.integers(0, n, pairs)
    keep = a != b
    return np.einsum("ij,ij->i", vectors[a[keep]], vectors[b[keep]]).astype(np.float32)


def review(
    store: Store | str | Path,
    *,
    near_duplicate: float = NEAR_DUP_THRESHOLD,
    stale_after_days: float = STALE_AFTER_DAYS,
    as_of: Any = None,
    contradiction_min: float = CONTRADICTION_MIN,
    embedder: Any = None,
    cache_dir: str | Path | None = None,
    progress: bool | None = None,
    top: int | None = None,
    all: bool = False,
) -> Proposal:
    """Review any store memlab loads and return a :class:`Proposal` (nothing is written).

    ``near_duplicate``: cosine at or above which two units are duplicates (elfmem's own
    supersession threshold is 0.90). ``stale_after_days``: a unit with no reinforcement,
    retrieval, use or edit evidence and no outcome for this many days before ``as_of`` (default:
    now) is a stale candidate. ``contradiction_min``: the lowest cosine at which a pair of
    opposite polarity on a shared topic is flagged as a candidate contradiction. ``top``: how
    many choices the markdown lists in full (default :data:`TOP_N`, about ten minutes of
    reading); ``all=True`` lists every one. The JSON twin always holds every choice.
    """
    from memlab.reviews._proposal import TOP_N

    if not 0 < near_duplicate <= 1 or not 0 < contradiction_min <= near_duplicate:
        raise InvalidArgument(
            f"thresholds must satisfy 0 < contradiction_min <= near_duplicate <= 1 "
            f"(got contradiction_min={contradiction_min}, "
            f"near_duplicate={near_duplicate})",
            hint=f"near_duplicate defaults to {NEAR_DUP_THRESHOLD:.2f}, contradiction_min to "
            f"{CONTRADICTION_MIN:.2f}",
        )
    if not isinstance(store, Store):
        import memlab

        store = cast(Store, memlab.load(store))
    check_reviewable(store)
    if embedder is None:
        from memlab.embed import get_embedder

        embedder = get_embedder(cache_dir=cache_dir)
    when = parse_as_of(as_of)
    b = _Builder(
        store,
        near_duplicate=near_duplicate,
        stale_after_days=stale_after_days,
        contradiction_min=contradiction_min,
        as_of=when,
        embedder=embedder,
    )
    from memlab.progress import bar

    stages = [
        ("embedding", lambda: b.embed(progress)),
        ("duplicates", b.duplicates),
        ("contradictions", b.contradictions),
        ("stale", b.stale),
        ("drift", b.drift),
        ("memfs rules", b.memfs_rules),
    ]
    # Steps differ by orders of magnitude (a cold embedding is minutes, the rest seconds): the
    # step bar shows done/total, elapsed and the step running, no per-step-average ETA; the
    # embedding bar under it has the real rate and ETA.
    with bar(
        total=len(stages),
        desc="reviewing",
        unit="step",
        disable=progress is False,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]",
    ) as steps:
        for label, stage in stages:
            steps.set_postfix_str(label)
            stage()
            steps.update(1)
    info = {
        "path": str(Path(store.path).expanduser().resolve()),
        "kind": store.kind,
        "layout": store.meta.get("layout"),
        "name": store.name,
        "schema_version": store.meta.get("schema_version"),
        # a git bundle (unpacked into a temporary folder for the review): apply refuses it
        **({"bundle": store.meta["bundle"]} if store.meta.get("bundle") else {}),
    }
    choices = rank(b.choices)
    order = {oid: n for n, c in enumerate(choices) for oid in c.options}
    items = sorted(b.items, key=lambda it: order[it.id])
    return Proposal(
        store=info,
        fingerprint=b.fingerprint(),
        made_at=_now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        as_of=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        thresholds={
            "near_duplicate": near_duplicate,
            "stale_after_days": stale_after_days,
            "contradiction_min": contradiction_min,
            "model": getattr(embedder, "model_name", type(embedder).__name__),
            **(
                {"precision": embedder.provenance()["summary"]}
                if hasattr(embedder, "provenance")
                else {}
            ),
        },
        items=items,
        findings=b.findings,
        clusters=b.clusters,
        choices=choices,
        top=None if all else (TOP_N if top is None else int(top)),
        units=b.units,
        vectors=b.vectors,
        similarities=_histogram_sample(b.vectors),
    )
