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
import hashlib
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from memlab import kinds
from memlab.constants import CONTRADICTION_MIN, NEAR_DUP_THRESHOLD, STALE_AFTER_DAYS
from memlab.errors import InvalidArgument
from memlab.reviews._checks import ChecksMixin
from memlab.reviews._markdown import excerpt
from memlab.reviews._polarity import opposite, sentences, topic_share
from memlab.reviews._proposal import Choice, Finding, Item, Proposal, item_id
from memlab.reviews._triage import (
    RECORDED_CONTRADICTION_CERTAINTY,
    STALE_CERTAINTY,
    impact,
    rank,
    tokens,
)
from memlab.reviews._units import check_reviewable, units_of
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

#: Candidate contradictions are looked for only between statement-sized units.
_CLAIM_CHARS = 400
#: A sentence at or above this cosine to the survivor (or one of its sentences) adds nothing
#: to a merge: sentence-level paraphrases score lower than whole-text ones.
SENTENCE_COVERED = 0.75
#: Of the content words the shorter claim holds, the share both must hold to be one topic.
TOPIC_OVERLAP = 0.5
#: A contradiction elfmem recorded (an LLM judged it) still holds while the pair shares a topic.
RECORDED_TOPIC_MIN = 0.40
_STATUS_RANK = {
    "active": 2,
    "notes": 2,
    "in_prompt": 2,
    "file": 1,
    "block": 1,
    "inbox": 0,
    "log": 0,
}


def _now() -> pd.Timestamp:
    return pd.Timestamp(dt.datetime.now(dt.timezone.utc)).floor("s")


def _date(ts: Any) -> str | None:
    if ts is None or pd.isna(ts):
        return None
    return pd.Timestamp(ts).strftime("%Y-%m-%d")


def text_sha256(text: str) -> str:
    """The digest an elfmem apply script checks a block's content against before changing it."""
    return hashlib.sha256(str(text).encode("utf-8")).hexdigest()


class _Builder(ChecksMixin):
    def __init__(
        self,
        store: Store,
        *,
        near_duplicate: float,
        stale_after_days: float,
        contradiction_min: float,
        as_of: pd.Timestamp,
        embedder: Any,
    ) -> None:
        check_reviewable(store)
        self.store = store
        self.kind = store.kind
        #: The kind's review adapter (memlab.kinds.Review, its behaviour objects resolved):
        #: every kind-specific choice below is a call to one of them.
        # check_reviewable above refused a kind without one
        self.review = cast(kinds.Review, kinds.get(store.kind).review).resolved
        self.near = float(near_duplicate)
        self.stale_days = float(stale_after_days)
        self.contra_min = float(contradiction_min)
        self.as_of = as_of
        self.embedder = embedder
        self.items: list[Item] = []
        self.choices: list[Choice] = []
        self.findings: list[Finding] = []
        self.clusters: list[dict[str, Any]] = []
        self.touched: set[str] = set()
        self.repo = self.review.apply.repo(store)
        self.appliable = bool(self.review.apply.appliable(store, self.repo))
        self.units = units_of(store)
        self.by_uid = {u: i for i, u in enumerate(self.units["uid"].tolist())}
        self.vectors = np.zeros((0, 384), np.float32)
        self.removed: set[str] = set()  # uids a choice already removes: one proposal each
        self.total_tokens = int(sum(tokens(c) for c in self.units["chars"].fillna(0)))
        self.share_of = self.review.share_of

    # ---- helpers ----------------------------------------------------------------------------
    def unit(self, uid: str) -> pd.Series:
        return self.units.iloc[self.by_uid[uid]]

    def _sim(self, a: str, b: str) -> float:
        return float(self.vectors[self.by_uid[a]] @ self.vectors[self.by_uid[b]])

    def _describe(self, u: pd.Series) -> str:
        where = f" in `{u['file']}`" if self.review.describe_file else ""
        return f'`{u["uid"]}`{where} "{excerpt(u["text"] or u["title"])}"'

    def _tokens(self, uids: list[str]) -> int:
        return sum(tokens(self.unit(u)["chars"]) for u in uids)

    def removal_step(self, u: pd.Series, *, reason: str) -> dict[str, Any]:
        """The change that takes ``u`` out of the memory, in the way this store kind does it
        (its :class:`~memlab.kinds.Removal`). ``reason`` is elfmem's archive reason
        (superseded / forgotten / decayed)."""
        return self._touching(self.review.removal.step(u, reason=reason))

    def edit_step(self, u: pd.Series, new_text: str) -> dict[str, Any] | None:
        """The change that replaces ``u``'s text (the kind's :class:`~memlab.kinds.Edit`), or
        None where memlab cannot make it."""
        if self.review.edit is None:
            return None
        return self._touching(self.review.edit.step(u, new_text))

    def _touching(self, step: dict[str, Any]) -> dict[str, Any]:
        """``step``, its files (``file``, ``to``) recorded for the fingerprint."""
        self.touched.update(str(step[k]) for k in ("file", "to") if step.get(k) is not None)
        return step

    def option(
        self,
        key: tuple,
        section: str,
        option: str,
        summary: str,
        steps: list[dict[str, Any]],
        *,
        target: dict[str, Any],
        appliable: bool | None = None,
    ) -> Item:
        text = "; ".join(s["text"] for s in steps) or "change nothing (dismiss this choice)"
        return Item(
            id=item_id(option[:4].replace("_", "") or "opt", self.kind, section, *key, option),
            section=section,
            action=option,
            option=option,
            summary=summary,
            target=target,
            evidence={},
            change={"steps": steps, "text": text},
            appliable=self.appliable if appliable is None else appliable,
        )

    def keep_all(self, key: tuple, section: str, what: str) -> Item:
        return self.option(
            key,
            section,
            "keep_both" if "both" in what else "keep_all",
            what,
            [],
            target={"uid": None, "removes": []},
            appliable=True,
        )

    def add_choice(
        self,
        key: tuple,
        section: str,
        kind: str,
        title: str,
        options: list[Item],
        evidence: dict[str, Any],
        *,
        removes: list[str],
        certainty: float,
        risk: str,
    ) -> Choice:
        cid = item_id("choice", self.kind, section, *key)
        for it in options:
            it.group = cid
            it.exclusive = len(options) > 1
        choice = Choice(
            id=cid,
            section=section,
            kind=kind,
            title=title,
            options=[it.id for it in options],
            evidence=evidence,
            impact=impact(
                section,
                self._tokens(removes),
                self.total_tokens,
                certainty=certainty,
                risk=risk,
                share_of=self.share_of,
            ),
        )
        self.items.extend(options)
        self.choices.append(choice)
        return choice

    def stale_evidence(self, key: tuple, summary: str, evidence: dict[str, Any]) -> None:
        self.findings.append(
            Finding(
                id=item_id("stale", *key),
                section="stale_evidence",
                summary=summary,
                evidence=evidence,
            )
        )

    # ---- embeddings -------------------------------------------------------------------------
    def embed(self, progress: bool | None) -> None:
        if len(self.units) == 0:
            return
        # The texts not in the cache get their own bar (texts done/total, rate, ETA after the
        # first batch) under the step bar, however few: a cold embedding is the step that takes
        # minutes. progress=False (or --quiet, or no terminal) draws nothing.
        self.vectors = self.embedder.encode(
            self.units["text"].fillna("").tolist(), progress=progress is not False
        )

    def similar_pairs(self, threshold: float, rows: np.ndarray | None = None) -> pd.DataFrame:
        """Unit pairs at or above ``threshold`` among ``rows`` (default: every unit)."""
        from memlab.embed import NeighborIndex

        rows = np.arange(len(self.units)) if rows is None else rows
        if len(rows) < 2:
            return pd.DataFrame({"a": [], "b": [], "similarity": []})
        pairs = NeighborIndex(self.vectors[rows]).pairs_above(threshold)
        uids = self.units["uid"].to_numpy()[rows]
        return pd.DataFrame(
            {
                "a": uids[pairs["i"].to_numpy()],
                "b": uids[pairs["j"].to_numpy()],
                "similarity": pairs["similarity"].to_numpy(dtype=float),
            }
        )

    def recorded_pairs(self) -> dict[frozenset, dict[str, Any]]:
        """Unresolved rows of the elfmem ``contradictions`` table."""
        if not self.review.recorded_contradictions or "contradictions" not in self.store.frames:
            return {}
        out: dict[frozenset, dict[str, Any]] = {}
        for _, r in self.store.contradictions.iterrows():
            a, b = str(r["block_a_id"]), str(r["block_b_id"])
            if bool(r["resolved"] is True):
                continue
            kind = None if pd.isna(r.get("kind")) else str(r.get("kind"))
            out[frozenset((a, b))] = {
                "a": a,
                "b": b,
                "score": None if pd.isna(r["score"]) else float(r["score"]),
                "kind": kind or "contradiction",
                "created": r["created_at"],
                "live": a in self.by_uid and b in self.by_uid,
            }
        return out

    # ---- duplicates -------------------------------------------------------------------------
    def duplicates(self) -> None:
        recorded = {k: v for k, v in self.recorded_pairs().items() if v["kind"] == "near_duplicate"}
        sims: dict[frozenset, float] = {}
        for a, b, s in self.similar_pairs(self.near).itertuples(index=False):
            if not self._polarity_differs(a, b):  # opposite claims: a contradiction, not a copy
                sims[frozenset((a, b))] = float(s)
        for key, row in sorted(recorded.items(), key=lambda kv: sorted(kv[0])):
            a, b = sorted(key)
            ev = {"recorded": row["score"], "recorded_at": _date(row["created"])}
            if not row["live"]:
                self.stale_evidence(
                    ("near_duplicate", a, b),
                    f"recorded near-duplicate pair `{a}` ~ `{b}` names a block that "
                    "is no longer live; nothing to merge",
                    ev,
                )
                continue
            now = self._sim(a, b)
            if now < self.near:
                self.stale_evidence(
                    ("near_duplicate", a, b),
                    f"recorded near-duplicate pair `{a}` ~ `{b}` no longer holds: cosine now "
                    f"{now:.3f} < {self.near:.2f} (a block was edited since it was recorded)",
                    {**ev, "similarity_now": now},
                )
            elif self._polarity_differs(a, b):
                self.stale_evidence(
                    ("near_duplicate", a, b),
                    f"recorded near-duplicate pair `{a}` ~ `{b}` says opposite things (see the "
                    "contradictions); not proposed as a duplicate",
                    {**ev, "similarity_now": now},
                )
        adjacency: dict[str, set[str]] = {}
        for key in sims:
            a, b = tuple(key)
            adjacency.setdefault(a, set()).add(b)
            adjacency.setdefault(b, set()).add(a)
        # Stars, not chains: the best-ranked unit left takes its direct neighbours.
        remaining = set(adjacency)
        while remaining:
            survivor = max(remaining, key=lambda u: (self._rank(u), [-ord(c) for c in u]))
            members = sorted({survivor} | (adjacency[survivor] & remaining))
            remaining.discard(survivor)
            if len(members) == 1:
                continue
            remaining -= set(members)
            self._cluster(survivor, members, sims, recorded)

    def _rank(self, uid: str) -> tuple:
        u = self.unit(uid)
        created = u["created"]
        age = -pd.Timestamp(created).value if pd.notna(created) else -np.iinfo(np.int64).max
        return (
            bool(u["protected"]),
            _STATUS_RANK.get(str(u["status"]), 1),
            int(u["reinforcement"]) if pd.notna(u["reinforcement"]) else 0,
            int(u["outcomes"]) if pd.notna(u["outcomes"]) else 0,
            int(u["retrievals"]) if pd.notna(u["retrievals"]) else 0,
            age,
            int(u["chars"]) if pd.notna(u["chars"]) else 0,
        )

    def _why(self, survivor: str, runner: str) -> str:
        s, r = self.unit(survivor), self.unit(runner)
        ks, kr = self._rank(survivor), self._rank(runner)
        reasons = [
            lambda: f"it is {s['protected_why']}",
            lambda: f"it is {s['status']} while `{runner}` is {r['status']}",
            lambda: f"reinforced {ks[2]} times vs {kr[2]}",
            lambda: f"{ks[3]} outcome records vs {kr[3]}",
            lambda: f"retrieved {ks[4]} times vs {kr[4]}",
            lambda: f"it is older (created {_date(s['created'])} vs {_date(r['created'])})",
            lambda: f"it is longer ({ks[6]} vs {kr[6]} chars)",
        ]
        for i, reason in enumerate(reasons):
            if ks[i] != kr[i]:
                return reason()
        return "all else equal, it has the smaller id"

    def _new_sentences(self, survivor: str, others: list[str]) -> list[str]:
        """Sentences of ``others`` that no sentence of the survivor already says."""
        have = sentences(str(self.unit(survivor)["text"]))
        extra = [s for o in others for s in sentences(str(self.unit(o)["text"]))]
        if not have or not extra:
            return []
        whole = str(self.unit(survivor)["text"])
        v = self.embedder.encode([whole] + have + extra)
        hv, ev = v[: len(have) + 1], v[len(have) + 1 :]
        out: list[str] = []
        for s, vec in zip(extra, ev):
            if float((hv @ vec).max()) < SENTENCE_COVERED and s not in out:
                out.append(s)
        return out

    def _cluster(
        self,
        survivor: str,
        members: list[str],
        sims: dict[frozenset, float],
        recorded: dict[frozenset, dict[str, Any]],
    ) -> None:
        others = sorted((m for m in members if m != survivor), key=self._rank, reverse=True)
        key = tuple(members)
        pairs: list[dict[str, Any]] = []
        for m in others:
            k = frozenset((m, survivor))
            rec = recorded.get(k)
            pairs.append(
                {
                    "a": survivor,
                    "b": m,
                    "similarity": sims.get(k, self._sim(m, survivor)),
                    "recorded": None if rec is None else rec["score"],
                }
            )
        norm = {" ".join(str(self.unit(m)["text"]).split()).lower() for m in members}
        best = min(p["similarity"] for p in pairs)
        exact = len(norm) == 1  # the same words; a paraphrase at any cosine is "near"
        cid = item_id("choice", self.kind, "duplicates", *key)
        self.clusters.append(
            {
                "id": cid,
                "members": members,
                "survivor": survivor,
                "survivor_title": str(self.unit(survivor)["title"]),
                "why": self._why(survivor, others[0]),
                "pairs": pairs,
            }
        )
        options: list[Item] = []
        # Keep one member, remove the rest: only a member at or above the threshold to every
        # other member may stand for them all.
        for keep in [survivor, *others]:
            drop = [m for m in members if m != keep]
            if any(bool(self.unit(d)["protected"]) for d in drop):
                continue
            if any(self._sim(keep, d) < self.near for d in drop):
                continue
            reason = f" (recommended: {self._why(survivor, others[0])})" if keep == survivor else ""
            steps = [self.removal_step(self.unit(d), reason="superseded") for d in drop]
            options.append(
                self.option(
                    key + (keep,),
                    "duplicates",
                    "keep",
                    f"keep {self._describe(self.unit(keep))}{reason}; remove "
                    + ", ".join(f"`{d}`" for d in drop),
                    steps,
                    target={
                        "uid": keep,
                        "keeps": keep,
                        "removes": drop,
                        "file": None
                        if pd.isna(self.unit(keep)["file"])
                        else str(self.unit(keep)["file"]),
                    },
                )
            )
        if not options:
            self.findings.append(
                Finding(
                    id=item_id("note", "duplicates", *key),
                    section="duplicates",
                    summary=f"{len(members)} units say the same as "
                    f"{self._describe(self.unit(survivor))}, "
                    "but each is protected or no member stands for all; resolve by hand",
                    evidence={"similarity": best},
                )
            )
            return
        drop = [m for m in members if m != survivor]
        mergeable = not exact and not any(bool(self.unit(m)["protected"]) for m in members)
        extra = self._new_sentences(survivor, others) if mergeable else []
        if extra:
            merged = str(self.unit(survivor)["text"]).rstrip() + "\n" + " ".join(extra)
            edit = self.edit_step(self.unit(survivor), merged)
            if edit is not None:
                options.append(
                    self.option(
                        key + ("merge",),
                        "duplicates",
                        "merge",
                        f"merge into `{survivor}`: add {len(extra)} sentence(s) "
                        "only the others hold "
                        f'("{excerpt(" ".join(extra), 90)}"), then remove '
                        + ", ".join(f"`{d}`" for d in drop),
                        [edit]
                        + [self.removal_step(self.unit(d), reason="superseded") for d in drop],
                        target={
                            "uid": survivor,
                            "keeps": survivor,
                            "removes": drop,
                            "edits": [survivor],
                        },
                    )
                )
        options.append(self.keep_all(key, "duplicates", "keep all: they are not duplicates"))
        self.removed.update(drop)
        kind = "exact duplicate" if exact else "near duplicate"
        self.add_choice(
            key,
            "duplicates",
            kind,
            f"{len(members)} units: {self._describe(self.unit(survivor))}",
            options,
            {
                "similarity_to_survivor": [round(p["similarity"], 3) for p in pairs],
                "recorded": [p["recorded"] for p in pairs if p["recorded"] is not None],
            },
            removes=drop,
            certainty=1.0 if exact else best,
            risk="low" if exact else "medium",
        )

    def _polarity_differs(self, a: str, b: str) -> bool:
        return opposite(str(self.unit(a)["text"]), str(self.unit(b)["text"]))[0]

    # ---- contradictions ---------------------------------------------------------------------
    def contradictions(self) -> None:
        seen: set[frozenset] = set()
        for key, row in sorted(self.recorded_pairs().items(), key=lambda kv: sorted(kv[0])):
            if row["kind"] == "near_duplicate":
                continue
            seen.add(key)
            a, b = sorted(key)
            ev = {"recorded": row["score"], "recorded_at": _date(row["created"])}
            if not row["live"]:
                self.stale_evidence(
                    ("contradiction", a, b),
                    f"unresolved contradiction row `{a}` vs `{b}` names a block "
                    "that is no longer live; mark it resolved",
                    ev,
                )
                continue
            now = self._sim(a, b)
            if now < RECORDED_TOPIC_MIN:
                self.stale_evidence(
                    ("contradiction", a, b),
                    f"recorded contradiction `{a}` vs `{b}` no longer shares a topic: cosine now "
                    f"{now:.3f} < {RECORDED_TOPIC_MIN:.2f} (a block changed since, or the row "
                    "was wrong)",
                    {**ev, "similarity_now": now},
                )
                continue
            self._contradiction(
                a,
                b,
                {"source": "recorded by elfmem", **ev, "similarity": now},
                certainty=RECORDED_CONTRADICTION_CERTAINTY,
            )
        if len(self.units) < 2:
            return
        # Only statement-sized units: word polarity says nothing about a document, and the
        # pair count at a low threshold grows with the square of the corpus.
        claims = np.flatnonzero(self.units["text"].fillna("").str.len().to_numpy() <= _CLAIM_CHARS)
        pairs = self.similar_pairs(self.contra_min, claims)
        for a, b, s in pairs.sort_values("similarity", ascending=False).itertuples(index=False):
            key = frozenset((a, b))
            if key in seen:
                continue
            ta, tb = str(self.unit(a)["text"]), str(self.unit(b)["text"])
            differs, shared = opposite(ta, tb)
            if not differs or len(shared) < 2 or topic_share(ta, tb) < TOPIC_OVERLAP:
                continue
            seen.add(key)
            self._contradiction(
                a,
                b,
                {
                    "source": "candidate (same topic, opposite polarity)",
                    "similarity": float(s),
                    "shared_words": sorted(shared)[:6],
                },
                certainty=float(s),
            )

    def _contradiction(self, a: str, b: str, evidence: dict[str, Any], *, certainty: float) -> None:
        a, b = sorted((a, b))
        key = (a, b)
        options = []
        for keep, drop in ((a, b), (b, a)):
            u = self.unit(drop)
            if bool(u["protected"]) or drop in self.removed:
                continue
            options.append(
                self.option(
                    key + (keep,),
                    "contradictions",
                    "keep",
                    f"keep {self._describe(self.unit(keep))}; remove `{drop}`",
                    [self.removal_step(u, reason="forgotten")],
                    target={
                        "uid": keep,
                        "keeps": keep,
                        "removes": [drop],
                        "file": None
                        if pd.isna(self.unit(keep)["file"])
                        else str(self.unit(keep)["file"]),
                    },
                )
            )
        if not options:
            self.findings.append(
                Finding(
                    id=item_id("note", "contradiction", a, b),
                    section="contradictions",
                    summary=f"`{a}` and `{b}` may contradict each other, "
                    "but neither can be proposed "
                    "for removal (protected, or already in a duplicate choice); resolve by hand",
                    evidence=evidence,
                )
            )
            return
        options.append(self.keep_all(key, "contradictions", "keep both: they do not contradict"))
        removes = options[0].target["removes"]
        self.add_choice(
            key,
            "contradictions",
            "contradiction",
            f"{self._describe(self.unit(a))} vs {self._describe(self.unit(b))}",
            options,
            evidence,
            removes=removes,
            certainty=certainty,
            risk="high",
        )

    # ---- stale ------------------------------------------------------------------------------
    def stale(self) -> None:
        cutoff = self.as_of - pd.Timedelta(days=self.stale_days)
        if not self.review.dated:
            return  # an agent file has no dates: nothing to measure staleness by
        for _, u in self.units.iterrows():
            uid = str(u["uid"])
            if uid in self.removed or bool(u["protected"]):
                continue
            if self.review.prompt_files and (
                str(u["status"]) == "in_prompt" or str(u["uid"]).startswith("skills/")
            ):
                # In the prompt every turn (used by construction), or a skill (a capability
                # loaded on demand, not a memory that fades).
                continue
            created, last = u["created"], u["last_used"]
            if pd.isna(created) or created > cutoff:
                continue
            if pd.notna(last) and last > cutoff:
                continue
            if pd.notna(u["outcomes"]) and int(u["outcomes"]) > 0:
                continue
            if pd.isna(last) and pd.notna(u["reinforcement"]) and int(u["reinforcement"]) > 0:
                continue  # reinforced, but no clock places it: not enough evidence to call it stale
            ev = self._usage(u)
            ev["days_since_evidence"] = int(
                (self.as_of - (last if pd.notna(last) else created)).days
            )
            basis = self.review.stale_basis
            option = self.option(
                (uid,),
                "stale",
                "remove",
                f"remove {self._describe(u)}",
                [self.removal_step(u, reason="decayed")],
                target={
                    "uid": uid,
                    "removes": [uid],
                    "file": None if pd.isna(u["file"]) else str(u["file"]),
                },
            )
            self.add_choice(
                (uid,),
                "stale",
                "stale",
                f"{basis} for {ev['days_since_evidence']} days: {self._describe(u)}",
                [option],
                ev,
                removes=[uid],
                certainty=STALE_CERTAINTY,
                risk="medium",
            )
            self.removed.add(uid)

    def _usage(self, u: pd.Series) -> dict[str, Any]:
        ev: dict[str, Any] = {"created": _date(u["created"])}
        if pd.notna(u["reinforcement"]):
            ev["reinforced"] = int(u["reinforcement"])
        if pd.notna(u["retrievals"]):
            ev["retrievals"] = int(u["retrievals"])
        ev["outcomes"] = int(u["outcomes"]) if pd.notna(u["outcomes"]) else 0
        ev["last_evidence"] = _date(u["last_used"])
        return ev

    # ---- fingerprint ------------------------------------------------------------------------
    def fingerprint(self) -> dict[str, Any]:
        return self.review.apply.fingerprint(self.store, self.repo, self.touched)


def git_fingerprint(store: Store, repo: Any, touched: set[str]) -> dict[str, Any]:
    """A proposal's fingerprint for a store applied by a commit: HEAD and the blobs of the files
    it changes."""
    if repo is None:
        return {"head_sha": None, "note": "not a git repository: apply is unavailable"}
    files = store.files
    blobs = dict(zip(files["path"].astype(str), files["blob_sha"].astype(str)))
    return {
        "repo": str(Path(repo.working_tree_dir).resolve()),
        "head_sha": store.meta.get("head_sha"),
        "branch": store.meta.get("branch"),
        "files": {p: blobs.get(p) for p in sorted(touched)},
    }


def file_fingerprint(store: Store) -> dict[str, Any]:
    """A proposal's fingerprint for a store that is one file: its sha256 and size."""
    return {
        "sha256": _file_sha256(Path(store.path)),
        "bytes": _size(Path(store.path)),
    }


def _file_sha256(path: Path) -> str | None:
    if not path.is_file():
        return None
    h = hashlib.sha256()
    for p in (path, path.with_name(path.name + "-wal")):
        if p.is_file():
            with p.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def _size(path: Path) -> int | None:
    return path.stat().st_size if path.is_file() else None


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
