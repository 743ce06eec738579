"""Precision and recall of a proposal against labelled ground truth (data/review-eval).

``labels`` is the ``labels.json`` that ``scripts/make_review_eval.py`` writes: ``unique`` (ids
of blocks whose fact nothing else holds) and ``pairs`` (``a``, ``b``, ``label``: duplicate /
contradiction / agree / unrelated, ``case`` and ``set``: main or holdout).

A choice is right when what it asserts is labelled so:

- a duplicate choice: every member is labelled ``duplicate`` or ``agree`` with its survivor
  (an agreeing pair phrased with a negation says the same thing twice);
- a contradiction choice: its two sides are labelled ``contradiction``;
- a stale or constitutional choice: the labelled set has none (every block was just learned,
  and the store never had a constitution), so each one is wrong.

Recall is per labelled pair: a duplicate pair is found when both blocks sit in one duplicate
choice, a contradiction when the pair is a contradiction choice. ``destructive`` pools every
choice whose options remove something (archive, delete, merge).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab.reviews._proposal import Proposal

__all__ = ["evaluate"]

_RIGHT = {"duplicates": {"duplicate", "agree"}, "contradictions": {"contradiction"}}


def _members(proposal: Proposal, choice: Any) -> list[str]:
    ids: set[str] = set()
    for oid in choice.options:
        it = proposal.item(oid)
        ids.update(it.target.get("removes") or [])
        if it.target.get("keeps"):
            ids.add(it.target["keeps"])
    return sorted(ids)


def evaluate(proposal: Proposal, labels: dict[str, Any]) -> pd.DataFrame:
    """One row per item kind: proposed, right, precision, labelled, found, recall (main and
    holdout pairs), plus rows ``destructive`` and ``unique facts proposed for removal``."""
    label_of = {frozenset((p["a"], p["b"])): p for p in labels["pairs"]}
    rows: dict[str, dict[str, Any]] = {}
    found: set[frozenset] = set()
    destructive = [0, 0]
    for c in proposal.choices:
        members = _members(proposal, c)
        if c.section == "duplicates":
            survivor = next(
                proposal.item(o).target["keeps"]
                for o in c.options
                if proposal.item(o).option == "keep"
            )
            pairs = [frozenset((survivor, m)) for m in members if m != survivor]
            ok = all(label_of.get(p, {}).get("label") in _RIGHT["duplicates"] for p in pairs)
            found.update(frozenset((x, y)) for x in members for y in members if x < y)
        elif c.section == "contradictions":
            pair = frozenset(members)
            ok = label_of.get(pair, {}).get("label") in _RIGHT["contradictions"]
            found.add(pair)
        else:
            ok = False
        r = rows.setdefault(c.section, {"kind": c.section, "proposed": 0, "right": 0})
        r["proposed"] += 1
        r["right"] += int(ok)
        removes = any(proposal.item(o).target.get("removes") for o in c.options)
        if removes:
            destructive[0] += 1
            destructive[1] += int(ok)
    for section, wanted in (("duplicates", "duplicate"), ("contradictions", "contradiction")):
        r = rows.setdefault(section, {"kind": section, "proposed": 0, "right": 0})
        for group in ("main", "holdout"):
            labelled = [
                p for p in labels["pairs"] if p["label"] == wanted and p.get("set", "main") == group
            ]
            hit = [
                p
                for p in labelled
                if frozenset((p["a"], p["b"])) in found
                and (section == "duplicates" or _is_contradiction(proposal, p))
            ]
            r[f"labelled_{group}"] = len(labelled)
            r[f"found_{group}"] = len(hit)
    unique = set(labels["unique"])
    removed = {
        u
        for c in proposal.choices
        for o in c.options
        for u in (proposal.item(o).target.get("removes") or [])
    }
    agree_as_contra = sum(
        1 for p in labels["pairs"] if p["label"] == "agree" and _is_contradiction(proposal, p)
    )
    out = pd.DataFrame(list(rows.values()))
    out.loc[len(out)] = {"kind": "destructive", "proposed": destructive[0], "right": destructive[1]}
    out["precision"] = (out["right"] / out["proposed"]).where(out["proposed"] > 0)
    for group in ("main", "holdout"):
        if f"labelled_{group}" in out:
            out[f"recall_{group}"] = out[f"found_{group}"] / out[f"labelled_{group}"]
    out.attrs["unique_removed"] = sorted(removed & unique)
    out.attrs["agree_as_contradiction"] = agree_as_contra
    stale_keys = {f.summary for f in proposal.findings if f.section == "stale_evidence"}
    edited = [p for p in labels["pairs"] if p["case"] == "edited-after-recording"]
    out.attrs["edited_shown_stale"] = sum(
        1 for p in edited if any(p["a"] in s and p["b"] in s for s in stale_keys)
    )
    out.attrs["edited_pairs"] = len(edited)
    return out


def _is_contradiction(proposal: Proposal, pair: dict[str, Any]) -> bool:
    want = {pair["a"], pair["b"]}
    return any(
        c.section == "contradictions" and set(_members(proposal, c)) == want
        for c in proposal.choices
    )
