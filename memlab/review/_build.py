"""``review(store)``: duplicates, contradictions, stale units, constitutional drift and memfs rule
breaches, as a :class:`Proposal` of tickable items. Nothing is written here.

Guard, before anything else: a unit that is pinned, constitutional (``self/constitutional`` or a
``self/role/*`` tag), read-only or an identity file is never proposed for removal, whatever the
evidence (the elfmem v2 re-evaluation, §2.3: supersession without this guard is how the
constitution eroded).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memlab.errors import MemlabError
from memlab.review import _repo
from memlab.review._proposal import Finding, Item, Proposal, item_id
from memlab.review._units import MEMFS_KINDS, is_identity_path, units_of
from memlab.store import Store

_NEGATIONS = frozenset({"never", "not", "no", "don't", "dont", "doesn't", "isn't", "avoid",
                        "cannot", "can't", "shouldn't", "won't", "mustn't", "without", "nor"})
_STOP = frozenset("the a an and or of to in on for with from by is are be as at it its this that "
                  "these those when then than into over under only once after before use uses "
                  "used using must should can will may".split())
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9'_-]*")
#: Candidate contradictions are looked for only between statement-sized units.
_CLAIM_CHARS = 400
_STATUS_RANK = {"active": 2, "notes": 2, "in_prompt": 2, "file": 1, "block": 1, "inbox": 0, "log": 0}


def _now() -> pd.Timestamp:
    return pd.Timestamp(dt.datetime.now(dt.timezone.utc)).floor("s")


def _as_of(value: Any) -> pd.Timestamp:
    if value is None:
        return _now()
    ts = pd.Timestamp(value)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower())


def _topic_overlap(a: str, b: str) -> set[str]:
    wa = {w for w in _words(a) if len(w) >= 3 and w not in _STOP and w not in _NEGATIONS}
    wb = {w for w in _words(b) if len(w) >= 3 and w not in _STOP and w not in _NEGATIONS}
    return wa & wb


def _negates(text: str, topic: set[str], window: int = 4) -> bool:
    """Whether a negation word stands shortly before one of the shared topic words.

    A negation anywhere in a long text ("what doesn't work, fades") says nothing about the
    claim two texts share; "never a hotfix on prod" does.
    """
    words = _words(text)
    for i, w in enumerate(words):
        if w in _NEGATIONS and any(x in topic for x in words[i + 1:i + 1 + window]):
            return True
    return False


def _opposite(a: str, b: str) -> tuple[bool, set[str]]:
    """(opposite polarity on a shared topic, the shared topic words)."""
    shared = _topic_overlap(a, b)
    if not shared:
        return False, shared
    return _negates(a, shared) != _negates(b, shared), shared


def _date(ts: Any) -> str | None:
    if ts is None or pd.isna(ts):
        return None
    return pd.Timestamp(ts).strftime("%Y-%m-%d")


def _short(text: str, width: int = 70) -> str:
    # Excerpts of memory text must not open a markdown code span of their own.
    s = " ".join(str(text).split()).replace("`", "'")
    return s if len(s) <= width else s[: width - 1] + "…"


class _Builder:
    def __init__(self, store: Store, *, near_duplicate: float, stale_after_days: float,
                 contradiction_min: float, as_of: pd.Timestamp, embedder: Any) -> None:
        self.store = store
        self.kind = store.kind
        self.near = float(near_duplicate)
        self.stale_days = float(stale_after_days)
        self.contra_min = float(contradiction_min)
        self.as_of = as_of
        self.embedder = embedder
        self.items: list[Item] = []
        self.findings: list[Finding] = []
        self.clusters: list[dict[str, Any]] = []
        self.touched: set[str] = set()
        self.repo = _repo.store_repo(store) if self.kind in MEMFS_KINDS else None
        self.appliable = self.kind in MEMFS_KINDS and self.repo is not None
        self.units = units_of(store)
        self.by_uid = {u: i for i, u in enumerate(self.units["uid"].tolist())}
        self.vectors = np.zeros((0, 384), np.float32)
        self.removed: set[str] = set()  # uids some item already removes: one proposal each

    # ---- helpers ----------------------------------------------------------------------------
    def unit(self, uid: str) -> pd.Series:
        return self.units.iloc[self.by_uid[uid]]

    def _sim(self, a: str, b: str) -> float:
        return float(self.vectors[self.by_uid[a]] @ self.vectors[self.by_uid[b]])

    def _describe(self, u: pd.Series) -> str:
        where = f" in `{u['file']}`" if self.kind == "elfmem_substrate" else ""
        return f"`{u['uid']}`{where} \"{_short(u['text'] or u['title'])}\""

    def _removal(self, u: pd.Series, *, reason: str, section: str, prefix: str,
                 evidence: dict[str, Any], group: str | None = None, exclusive: bool = False,
                 keep: str | None = None, id_parts: tuple = ()) -> Item | None:
        """An item that takes ``u`` out of the memory, in the way this store kind does it."""
        if bool(u["protected"]):
            return None  # the guard; callers record a finding instead
        uid = str(u["uid"])
        kind = self.kind
        if kind == "elfmem_db":
            action = "archive"
            change = {"op": "db", "block_id": uid,
                      "text": f"archive block {uid} (status archived, archive_reason "
                              f"{'superseded' if keep else 'decayed'}"
                              + (f", superseded_by {keep}" if keep else "") + ") with elfmem"}
        elif kind in ("agent_file", "letta_blocks"):
            action = "detach"
            change = {"op": "none", "block_id": uid,
                      "text": f"delete block {uid} ({u['title']}) in Letta (ADE or blocks API)"}
        elif kind == "elfmem_substrate":
            action = "archive_block"
            archive = _archive_path(str(u["file"]))
            change = {"op": "archive_block", "file": str(u["file"]), "block_id": uid,
                      "to": archive, "line": int(u["line"]) if pd.notna(u["line"]) else None,
                      "text": f"move block {uid} \"{_short(u['title'], 50)}\" (line {u['line']}) "
                              f"from {u['file']} to the end of {archive}"}
            self.touched.update({str(u["file"]), archive})
        else:
            action = "delete_file"
            change = {"op": "delete_file", "file": uid,
                      "text": f"delete {uid} ({int(u['chars'])} chars of body)"}
            self.touched.add(uid)
        item = Item(id=item_id(prefix, self.kind, section, uid, *id_parts), section=section,
                    action=action, summary=f"{reason}: {self._describe(u)}",
                    target={"uid": uid, "file": None if pd.isna(u["file"]) else str(u["file"])},
                    evidence=evidence, change=change, group=group, exclusive=exclusive,
                    appliable=self.appliable)
        return item

    def _protected_finding(self, u: pd.Series, section: str, what: str, evidence: dict) -> None:
        self.findings.append(Finding(
            id=item_id("keep", section, u["uid"], what), section=section,
            summary=f"{what} {self._describe(u)} is {u['protected_why']}: never proposed for removal",
            evidence=evidence))

    # ---- embeddings -------------------------------------------------------------------------
    def embed(self, progress: bool | None) -> None:
        if len(self.units) == 0:
            return
        self.vectors = self.embedder.encode(self.units["text"].fillna("").tolist(), progress=progress)

    def similar_pairs(self, threshold: float, rows: np.ndarray | None = None) -> pd.DataFrame:
        """Unit pairs at or above ``threshold`` among ``rows`` (default: every unit)."""
        from memlab.embed import NeighborIndex

        rows = np.arange(len(self.units)) if rows is None else rows
        if len(rows) < 2:
            return pd.DataFrame({"a": [], "b": [], "similarity": []})
        pairs = NeighborIndex(self.vectors[rows]).pairs_above(threshold)
        uids = self.units["uid"].to_numpy()[rows]
        return pd.DataFrame({"a": uids[pairs["i"].to_numpy()], "b": uids[pairs["j"].to_numpy()],
                             "similarity": pairs["similarity"].to_numpy(dtype=float)})

    def recorded_pairs(self) -> dict[frozenset, dict[str, Any]]:
        """Unresolved rows of the elfmem ``contradictions`` table between live blocks."""
        if self.kind != "elfmem_db" or "contradictions" not in self.store.frames:
            return {}
        c = self.store.contradictions
        out: dict[frozenset, dict[str, Any]] = {}
        for _, r in c.iterrows():
            a, b = str(r["block_a_id"]), str(r["block_b_id"])
            if bool(r["resolved"] is True):
                continue
            kind = None if pd.isna(r.get("kind")) else str(r.get("kind"))
            row = {"a": a, "b": b, "score": None if pd.isna(r["score"]) else float(r["score"]),
                   "kind": kind or "contradiction", "created": r["created_at"],
                   "live": a in self.by_uid and b in self.by_uid}
            out[frozenset((a, b))] = row
        return out

    # ---- duplicates -------------------------------------------------------------------------
    def duplicates(self) -> None:
        recorded = {k: v for k, v in self.recorded_pairs().items() if v["kind"] == "near_duplicate"}
        pairs = self.similar_pairs(self.near)
        edges: dict[frozenset, dict[str, Any]] = {}
        for a, b, s in pairs.itertuples(index=False):
            if self._polarity_differs(a, b):
                continue  # opposite claims on one topic: a contradiction, not a duplicate
            edges[frozenset((a, b))] = {"a": a, "b": b, "similarity": float(s), "recorded": None}
        for key, row in recorded.items():
            if not row["live"]:
                self.findings.append(Finding(
                    id=item_id("note", "near_duplicate", *sorted(key)), section="duplicates",
                    summary=f"recorded near-duplicate pair {row['a']} ~ {row['b']} involves a "
                            "block that is no longer live; nothing to merge",
                    evidence={"recorded": row["score"]}))
                continue
            e = edges.setdefault(key, {"a": row["a"], "b": row["b"],
                                       "similarity": self._sim(row["a"], row["b"]), "recorded": None})
            e["recorded"] = row["score"]
        # Connected components: a chain A~B~C is one cluster with one survivor.
        parent = {u: u for e in edges.values() for u in (e["a"], e["b"])}

        def find(u: str) -> str:
            while parent[u] != u:
                parent[u] = parent[parent[u]]
                u = parent[u]
            return u

        for e in edges.values():
            ra, rb = find(e["a"]), find(e["b"])
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        groups: dict[str, list[str]] = {}
        for u in parent:
            groups.setdefault(find(u), []).append(u)
        for members in sorted(groups.values(), key=lambda m: sorted(m)):
            self._cluster(sorted(members), [e for e in edges.values() if e["a"] in members])

    def _rank(self, uid: str) -> tuple:
        u = self.unit(uid)
        created = u["created"]
        age = -pd.Timestamp(created).value if pd.notna(created) else -np.iinfo(np.int64).max
        return (bool(u["protected"]), _STATUS_RANK.get(str(u["status"]), 1),
                int(u["reinforcement"]) if pd.notna(u["reinforcement"]) else 0,
                int(u["outcomes"]) if pd.notna(u["outcomes"]) else 0,
                int(u["retrievals"]) if pd.notna(u["retrievals"]) else 0,
                age, int(u["chars"]) if pd.notna(u["chars"]) else 0)

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

    def _cluster(self, members: list[str], pairs: list[dict[str, Any]]) -> None:
        survivor = max(members, key=lambda u: (self._rank(u), [-ord(c) for c in u]))
        others = sorted((m for m in members if m != survivor), key=self._rank, reverse=True)
        cid = item_id("dupc", self.kind, *members)
        self.clusters.append({
            "id": cid, "members": members, "survivor": survivor,
            "survivor_title": str(self.unit(survivor)["title"]),
            "why": self._why(survivor, others[0]),
            "pairs": [{"a": p["a"], "b": p["b"], "similarity": p["similarity"],
                       "recorded": p["recorded"]}
                      for p in sorted(pairs, key=lambda p: (-p["similarity"], p["a"], p["b"]))],
        })
        for uid in others:
            u = self.unit(uid)
            sim = self._sim(uid, survivor)
            rec = next((p["recorded"] for p in pairs
                        if {p["a"], p["b"]} == {uid, survivor} and p["recorded"] is not None), None)
            evidence = {"similarity": sim, "survivor": survivor}
            if rec is not None:
                evidence["recorded_near_duplicate"] = rec
            evidence.update(self._usage(u))
            if bool(u["protected"]):
                self._protected_finding(u, "duplicates", "duplicate", evidence)
                continue
            item = self._removal(u, reason=f"near-duplicate of `{survivor}`", section="duplicates",
                                 prefix="dup", evidence=evidence, group=cid, keep=survivor)
            if item is not None:
                self.items.append(item)
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

    def _polarity_differs(self, a: str, b: str) -> bool:
        return _opposite(str(self.unit(a)["text"]), str(self.unit(b)["text"]))[0]

    # ---- contradictions ---------------------------------------------------------------------
    def contradictions(self) -> None:
        seen: set[frozenset] = set()
        for key, row in sorted(self.recorded_pairs().items(), key=lambda kv: sorted(kv[0])):
            if row["kind"] == "near_duplicate":
                continue
            seen.add(key)
            if not row["live"]:
                self.findings.append(Finding(
                    id=item_id("note", "contradiction", *sorted(key)), section="contradictions",
                    summary=f"unresolved contradiction row {row['a']} vs {row['b']} names a block "
                            "that is no longer live; mark it resolved",
                    evidence={"score": row["score"]}))
                continue
            self._contradiction(row["a"], row["b"], {
                "source": "recorded (elfmem contradictions table)", "score": row["score"],
                "similarity": self._sim(row["a"], row["b"]), "recorded_at": _date(row["created"])})
        if len(self.units) < 2:
            return
        # Only statement-sized units: word polarity says nothing about a document, and the
        # pair count at a low threshold grows with the square of the corpus.
        claims = np.flatnonzero(self.units["text"].fillna("").str.len().to_numpy() <= _CLAIM_CHARS)
        pairs = self.similar_pairs(self.contra_min, claims)
        for a, b, s in pairs.itertuples(index=False):
            key = frozenset((a, b))
            if key in seen:
                continue
            opposite, shared = _opposite(str(self.unit(a)["text"]), str(self.unit(b)["text"]))
            if not opposite or len(shared) < 2:
                continue
            seen.add(key)
            self._contradiction(a, b, {
                "source": "candidate (same topic, opposite polarity)", "similarity": float(s),
                "shared_words": sorted(shared)[:6]})

    def _contradiction(self, a: str, b: str, evidence: dict[str, Any]) -> None:
        a, b = sorted((a, b))
        group = item_id("conp", self.kind, a, b)
        ua, ub = self.unit(a), self.unit(b)
        options = [(a, ub), (b, ua)]  # (kept, removed)
        made = 0
        exclusive = not bool(ua["protected"]) and not bool(ub["protected"])
        for keep, drop in options:
            if str(drop["uid"]) in self.removed:
                continue
            if bool(drop["protected"]):
                continue
            item = self._removal(drop, reason=f"contradicts `{keep}`; keep `{keep}`, remove",
                                 section="contradictions", prefix="con",
                                 evidence={**evidence, "kept": keep}, group=group,
                                 exclusive=exclusive, keep=keep, id_parts=(keep,))
            if item is not None:
                self.items.append(item)
                made += 1
        if made == 0:
            self.findings.append(Finding(
                id=item_id("note", "contradiction", a, b), section="contradictions",
                summary=f"`{a}` and `{b}` may contradict each other, but neither can be proposed "
                        "for removal (protected, or already proposed as a duplicate); resolve by hand",
                evidence=evidence))

    # ---- stale ------------------------------------------------------------------------------
    def stale(self) -> None:
        cutoff = self.as_of - pd.Timedelta(days=self.stale_days)
        if self.kind in ("agent_file", "letta_blocks"):
            return  # an agent file has no dates: nothing to measure staleness by
        for _, u in self.units.iterrows():
            uid = str(u["uid"])
            if uid in self.removed or bool(u["protected"]):
                continue
            if self.kind in ("letta_memfs", "souveraine") and (
                    str(u["status"]) == "in_prompt" or str(u["uid"]).startswith("skills/")):
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
            ev["days_since_evidence"] = int((self.as_of - (last if pd.notna(last) else created)).days)
            basis = {"elfmem_db": "no reinforcement, session or outcome",
                     "elfmem_substrate": "no use/out/edit ledger event",
                     }.get(self.kind, "no commit touching it (memfs records no retrieval)")
            item = self._removal(u, reason=f"stale: {basis} for {ev['days_since_evidence']} days",
                                 section="stale", prefix="stale", evidence=ev)
            if item is not None:
                self.items.append(item)
                self.removed.add(uid)

    # ---- constitutional drift ---------------------------------------------------------------
    def drift(self) -> None:
        if self.kind == "elfmem_db":
            self._seed_drift()
        elif self.kind in MEMFS_KINDS and self.repo is not None:
            self._file_drift()

    def _seed_drift(self) -> None:
        from memlab.audit import seeds

        tags = self.store.frames.get("tags")
        all_tags = set(tags["tag"].astype(str)) if tags is not None and not tags.empty else set()
        release = seeds.seed_release(role_tags=any(t.startswith(seeds.ROLE_TAG_PREFIX) for t in all_tags))
        blocks = self.store.blocks
        live = self.units
        seed_vecs = self.embedder.encode([s.content for s in release.slots])
        for slot, svec in zip(release.slots, seed_vecs):
            if slot.role_tag is not None:
                holders = live[live["tags"].map(lambda ts, t=slot.role_tag: t in ts)]
            else:
                holders = live[live["text"].map(lambda x, r=slot.role: seeds.match_seed(x) == r)]
            base = {"role": slot.role, "seed_chars": len(slot.content)}
            if holders.empty:
                gone = blocks[(blocks["id"].astype(str) == slot.block_id)
                              | blocks["content"].map(lambda x, r=slot.role: seeds.match_seed(x) == r)]
                ev = dict(base)
                if not gone.empty:
                    g = gone.iloc[0]
                    ev.update({"seed_block": str(g["id"]), "status": str(g["status"]),
                               "archive_reason": None if pd.isna(g["archive_reason"]) else str(g["archive_reason"]),
                               "superseded_by": None if pd.isna(g.get("superseded_by")) else str(g.get("superseded_by"))})
                self.items.append(Item(
                    id=item_id("drift", self.kind, "missing", slot.role), section="drift",
                    action="restore_seed", summary=f"constitutional role `{slot.role}` has no live "
                    f"block: \"{_short(slot.content)}\"", target={"uid": slot.role_tag or slot.role, "file": None},
                    evidence=ev, change={"op": "db", "role": slot.role, "text":
                        f"learn the seed text again as a pinned block tagged {', '.join(slot.tags)}: "
                        f"\"{_short(slot.content, 200)}\""}, appliable=False))
                continue
            for _, h in holders.iterrows():
                if seeds.normalise(h["text"]) == seeds.normalise(slot.content):
                    continue
                sim = float(self.vectors[self.by_uid[str(h["uid"])]] @ svec)
                self.items.append(Item(
                    id=item_id("drift", self.kind, "changed", slot.role, h["uid"]), section="drift",
                    action="restore_seed", summary=f"constitutional role `{slot.role}` holds text "
                    f"that differs from its seed: `{h['uid']}` \"{_short(h['text'])}\"",
                    target={"uid": str(h["uid"]), "file": None},
                    evidence={**base, "similarity": sim, "current_chars": int(h["chars"]),
                              "created": _date(h["created"])},
                    change={"op": "db", "role": slot.role, "block_id": str(h["uid"]), "text":
                            f"amend block {h['uid']} back to the seed text \"{_short(slot.content, 200)}\""},
                    appliable=False))

    def _file_drift(self) -> None:
        files = self.store.files
        head_paths = {str(p): str(s) for p, s in zip(files["path"], files["blob_sha"])}
        hist = self.store.frames.get("history")
        paths = set(head_paths)
        if hist is not None and not hist.empty:
            paths |= set(hist["path"].dropna().astype(str))
        for path in sorted(p for p in paths if is_identity_path(p)):
            commits = _repo.path_commits(self.repo, path)
            if not commits:
                continue
            first_sha, first_date = commits[0]
            first_blob = _repo.blob_at(self.repo, first_sha, path)
            if first_blob is None:
                continue
            first_text = _repo.read_blob(self.repo, first_blob).decode("utf-8", "replace")
            now_blob = head_paths.get(path)
            row = files[files["path"] == path]
            if now_blob is not None and not row.empty and bool(row["read_only"].iloc[0] is True):
                if now_blob != first_blob:
                    self.findings.append(Finding(
                        id=item_id("note", "drift", path), section="drift",
                        summary=f"{path} changed since its first commit but is read-only; "
                                "memlab will not edit it", evidence={"first_commit": first_sha[:12]}))
                continue
            if now_blob == first_blob:
                continue
            ev = {"first_commit": first_sha[:12], "first_date": first_date[:10],
                  "commits_since": len(commits) - 1}
            if now_blob is None:
                summary = f"identity file `{path}` is gone from HEAD"
                ev["first_chars"] = len(first_text)
            else:
                now_text = _repo.read_blob(self.repo, now_blob).decode("utf-8", "replace")
                if " ".join(now_text.split()) == " ".join(first_text.split()):
                    continue  # whitespace-only rewrap is not drift
                v = self.embedder.encode([first_text, now_text])
                ev.update({"similarity": float(v[0] @ v[1]), "first_chars": len(first_text),
                           "current_chars": len(now_text)})
                summary = f"identity file `{path}` drifted from its first committed version"
            self.touched.add(path)
            self.items.append(Item(
                id=item_id("drift", self.kind, path, first_blob), section="drift",
                action="restore_file", summary=summary, target={"uid": path, "file": path},
                evidence=ev, change={"op": "restore_file", "file": path, "blob": first_blob,
                                     "commit": first_sha,
                                     "text": f"write {path} back to its first committed version "
                                             f"(commit {first_sha[:12]}, {first_date[:10]}, "
                                             f"{len(first_text)} chars)"},
                appliable=self.appliable))

    # ---- memfs limits and rules -------------------------------------------------------------
    def memfs_rules(self) -> None:
        if self.kind in ("agent_file", "letta_blocks"):
            self._agent_limits()
            return
        if self.kind not in ("letta_memfs", "souveraine"):
            return
        from memlab.formats import letta_memfs as fmt

        files = self.store.files
        layout = self.store.meta.get("layout")
        variant = "v2" if layout == "letta_v2" else "current"
        all_paths = set(files["path"].astype(str))
        for _, f in files.iterrows():
            path = str(f["path"])
            if not path.endswith(".md"):
                continue
            read_only = bool(f["read_only"] is True)
            chars = int(f["body_chars"]) if pd.notna(f["body_chars"]) else 0
            if bool(f["over_limit"] is True):
                limit = f["limit"]
                ev = {"chars": chars, "limit": None if pd.isna(limit) else int(limit),
                      "over_by": chars - (int(limit) if pd.notna(limit) else fmt.DEFAULT_LIMIT)}
                if read_only or pd.isna(limit):
                    why = "read-only" if read_only else f"over the server default of {fmt.DEFAULT_LIMIT} chars"
                    self.findings.append(Finding(
                        id=item_id("note", "limit", path), section="limits",
                        summary=f"{path} is over its limit ({why}); trim it by hand", evidence=ev))
                else:
                    new = int(-(-chars // 100) * 100)
                    self.touched.add(path)
                    self.items.append(Item(
                        id=item_id("limit", self.kind, path, chars, int(limit)), section="limits",
                        action="raise_limit",
                        summary=f"`{path}` body is {chars} chars, over its limit {int(limit)}",
                        target={"uid": path, "file": path}, evidence=ev,
                        change={"op": "set_key", "file": path, "key": "limit", "value": str(new),
                                "raw": True,
                                "text": f"set frontmatter limit: {int(limit)} -> {new} in {path} "
                                        "(or trim the body by hand instead of ticking this)"},
                        appliable=self.appliable))
            if read_only:
                continue
            text = self._text(f)
            if text is None:
                continue
            if self.kind == "souveraine":
                violations = self._souveraine_rules(path, text, fmt)
            else:
                violations = [(v.rule, v.message) for v in
                              fmt.check_precommit(path, text, text, variant=variant, change="M",
                                                  staged_paths=all_paths)]
            for rule, message in violations:
                self._rule_item(f, path, rule, message, variant, fmt)

    def _agent_limits(self) -> None:
        blocks = self.store.blocks
        for _, b in blocks[blocks["over_limit"].fillna(False).astype(bool)].iterrows():
            label = str(b["label"])
            self.findings.append(Finding(
                id=item_id("note", "limit", b["block_id"]), section="limits",
                summary=f"block {label} is over its limit ({int(b['chars'])} > {int(b['limit'])} "
                        "chars); Letta's git-backed write path does not enforce it (letta#3241): "
                        "trim it or raise the limit in Letta",
                evidence={"chars": int(b["chars"]), "limit": int(b["limit"])}))

    def _text(self, f: pd.Series) -> str | None:
        sha = f.get("blob_sha")
        if self.repo is None or sha is None or pd.isna(sha):
            return None
        return _repo.read_blob(self.repo, str(sha)).decode("utf-8", "replace")

    @staticmethod
    def _souveraine_rules(path: str, text: str, fmt: Any) -> list[tuple[str, str]]:
        fm = fmt.read_frontmatter(text)
        if not fm.has_frontmatter:
            return [("missing_frontmatter", "missing frontmatter (Souveraine requires description)")]
        if not (fm.description or "").strip():
            return [("missing_description", "missing required field 'description'")]
        return []

    def _rule_item(self, f: pd.Series, path: str, rule: str, message: str, variant: str,
                   fmt: Any) -> None:
        label = str(f["label"]) if pd.notna(f.get("label")) else path[:-3]
        ev = {"rule": rule, "hook_says": message}
        change: dict[str, Any] | None = None
        action = rule
        if rule == "unknown_key":
            key = re.search(r"'([^']+)'", message)
            if key:
                k = key.group(1)
                action = "remove_key"
                change = {"op": "remove_key", "file": path, "key": k,
                          "text": f"delete the frontmatter key {k} (and its continuation lines) "
                                  f"from {path}; value was {_short(str(f.get('fm_' + k, '')), 60)!r}"}
        elif rule in ("missing_description", "empty_description"):
            desc = f"Memory block {label}"
            action = "set_description"
            change = {"op": "set_key", "file": path, "key": "description", "value": desc,
                      "text": f"set description: {desc} in {path} (Letta's own fallback wording; "
                              "edit it afterwards)"}
        elif rule == "missing_name":
            name = label.rsplit("/", 1)[-1]
            action = "set_name"
            change = {"op": "set_key", "file": path, "key": "name", "value": f'"{name}"',
                      "text": f'set name: "{name}" in {path}'}
        elif rule == "missing_frontmatter":
            desc = f"Memory block {label}"
            action = "add_frontmatter"
            value = f'"{label.rsplit("/", 1)[-1]}"' if variant == "v2" else None
            change = {"op": "add_frontmatter", "file": path, "description": desc, "name": value,
                      "text": f"add frontmatter with description: {desc}"
                              + (f" and name: {value}" if value else "") + f" to {path}"}
        elif rule == "flat_skill":
            name = path.rsplit("/", 1)[-1][:-3]
            prefix = "memory/" if path.startswith("memory/") else ""
            to = f"{prefix}skills/{name}/SKILL.md"
            if to not in set(self.store.files["path"].astype(str)):
                action = "move_file"
                change = {"op": "move_file", "file": path, "to": to,
                          "text": f"move {path} to {to} (skills must be folders)"}
        if change is None:
            self.findings.append(Finding(id=item_id("note", "rule", path, rule), section="rules",
                                         summary=f"{path}: {message}; fix by hand", evidence=ev))
            return
        self.touched.add(path)
        self.items.append(Item(id=item_id("rule", self.kind, path, rule, message), section="rules",
                               action=action, summary=f"`{path}` breaks the pre-commit rule: {message}",
                               target={"uid": path, "file": path}, evidence=ev, change=change,
                               appliable=self.appliable))

    # ---- fingerprint ------------------------------------------------------------------------
    def fingerprint(self) -> dict[str, Any]:
        if self.kind in MEMFS_KINDS:
            if self.repo is None:
                return {"head_sha": None, "note": "not a git repository: apply is unavailable"}
            files = self.store.files
            blobs = dict(zip(files["path"].astype(str), files["blob_sha"].astype(str)))
            return {"repo": str(Path(self.repo.working_tree_dir).resolve()),
                    "head_sha": self.store.meta.get("head_sha"),
                    "branch": self.store.meta.get("branch"),
                    "files": {p: blobs.get(p) for p in sorted(self.touched)}}
        return {"sha256": _file_sha256(Path(self.store.path)), "bytes": _size(Path(self.store.path))}


def _archive_path(path: str) -> str:
    parts = path.split("/")
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] in ("notes", "log") and i > 0 and parts[i - 1] == "memory":
            return "/".join(parts[:i] + ["archive"] + parts[i + 1:])
    raise ValueError(f"{path} is not under memory/notes or memory/log")


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


def _histogram_sample(vectors: np.ndarray, *, limit: int = 2000, pairs: int = 200_000,
                      seed: int = 0) -> np.ndarray:
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


def review(store: Store | str | Path, *, near_duplicate: float = 0.90, stale_after_days: float = 90,
           as_of: Any = None, contradiction_min: float = 0.50, embedder: Any = None,
           cache_dir: str | Path | None = None, progress: bool | None = None) -> Proposal:
    """Review any store memlab loads and return a :class:`Proposal` (nothing is written).

    ``near_duplicate``: cosine at or above which two units are duplicates (elfmem's own
    supersession threshold is 0.90). ``stale_after_days``: a unit with no reinforcement,
    retrieval, use or edit evidence and no outcome for this many days before ``as_of`` (default:
    now) is a stale candidate. ``contradiction_min``: the lowest cosine at which a pair of
    opposite polarity on a shared topic is flagged as a candidate contradiction.
    """
    if not 0 < near_duplicate <= 1 or not 0 < contradiction_min <= near_duplicate:
        raise MemlabError(f"thresholds must satisfy 0 < contradiction_min <= near_duplicate <= 1 "
                          f"(got contradiction_min={contradiction_min}, "
                          f"near_duplicate={near_duplicate})",
                          hint="near_duplicate defaults to 0.90, contradiction_min to 0.50")
    if not isinstance(store, Store):
        import memlab

        store = memlab.load(store)
    if embedder is None:
        from memlab.embed import get_embedder

        embedder = get_embedder(cache_dir=cache_dir)
    when = _as_of(as_of)
    b = _Builder(store, near_duplicate=near_duplicate, stale_after_days=stale_after_days,
                 contradiction_min=contradiction_min, as_of=when, embedder=embedder)
    from memlab.progress import bar

    stages = [("embedding", lambda: b.embed(progress)), ("duplicates", b.duplicates),
              ("contradictions", b.contradictions), ("stale", b.stale), ("drift", b.drift),
              ("memfs rules", b.memfs_rules)]
    with bar(total=len(stages), desc="reviewing", unit="step", disable=progress is False) as steps:
        for label, stage in stages:
            steps.set_postfix_str(label)
            stage()
            steps.update(1)
    info = {"path": str(Path(store.path).expanduser().resolve()), "kind": store.kind,
            "layout": store.meta.get("layout"), "name": store.name,
            "schema_version": store.meta.get("schema_version")}
    proposal = Proposal(
        store=info, fingerprint=b.fingerprint(), made_at=_now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        as_of=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        thresholds={"near_duplicate": near_duplicate, "stale_after_days": stale_after_days,
                    "contradiction_min": contradiction_min,
                    "model": getattr(embedder, "model_name", type(embedder).__name__)},
        items=b.items, findings=b.findings, clusters=b.clusters, units=b.units,
        vectors=b.vectors, similarities=_histogram_sample(b.vectors))
    return proposal
