"""Precision and recall of `memlab review` per item kind on the labelled elfmem 0.20.0 set.

    python benchmarks/bench_review_quality.py [--near-duplicate 0.90] [--contradiction-min 0.60]

The set (data/review-eval, see its SOURCES.md) holds planted exact duplicates, paraphrases,
edited-after-recording pairs, true contradictions, agreeing statements phrased with a negation
and unique facts. The anchor, measured in the same process on the same database, is elfmem's own
evidence taken at face value: every recorded ``near_duplicate`` row proposed as a duplicate, as
memlab's review did before it re-measured evidence.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import memlab  # noqa: E402
from memlab.reviews import review  # noqa: E402
from memlab.reviews._quality import evaluate  # noqa: E402

EVAL = ROOT / "data" / "review-eval"
DB = EVAL / "elfmem-0.20.0-review-eval.db"


def recorded_rows_anchor(labels: dict) -> dict:
    """elfmem's recorded near_duplicate rows, each read as a duplicate proposal."""
    store = memlab.load(DB)
    c = store.contradictions
    rows = c[c["kind"].astype(str) == "near_duplicate"]
    label = {frozenset((p["a"], p["b"])): p["label"] for p in labels["pairs"]}
    right = sum(label.get(frozenset((a, b))) in ("duplicate", "agree")
                for a, b in zip(rows["block_a_id"], rows["block_b_id"]))
    unique = set(labels["unique"])
    touched = {x for a, b in zip(rows["block_a_id"], rows["block_b_id"]) for x in (a, b)} & unique
    return {"proposed": len(rows), "right": right,
            "precision": right / len(rows) if len(rows) else float("nan"),
            "unique_touched": len(touched)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--near-duplicate", type=float, default=0.90)
    ap.add_argument("--contradiction-min", type=float, default=0.60)
    args = ap.parse_args(argv)
    labels = json.loads((EVAL / "labels.json").read_text())
    t0 = time.perf_counter()
    proposal = review(memlab.load(DB), as_of="2026-12-01", near_duplicate=args.near_duplicate,
                      contradiction_min=args.contradiction_min)
    seconds = time.perf_counter() - t0
    result = evaluate(proposal, labels)
    pd.set_option("display.width", 160)
    cols = ["kind", "proposed", "right", "precision", "labelled_main", "found_main", "recall_main",
            "labelled_holdout", "found_holdout", "recall_holdout"]
    print(f"memlab review on {DB.name}: {len(proposal.units)} live blocks, "
          f"{len(proposal.choices)} choices, {seconds:.1f} s (model load included)")
    print(f"thresholds: near_duplicate {args.near_duplicate}, contradiction_min {args.contradiction_min}")
    print(result[[c for c in cols if c in result]].to_string(index=False, float_format="%.3f"))
    print(f"unique facts proposed for removal: {len(result.attrs['unique_removed'])}")
    print(f"agreeing (negation) pairs proposed as contradictions: {result.attrs['agree_as_contradiction']}")
    print(f"edited-after-recording pairs shown as stale evidence: "
          f"{result.attrs['edited_shown_stale']} of {result.attrs['edited_pairs']}")
    anchor = recorded_rows_anchor(labels)
    dup = result.set_index("kind").loc["duplicates"]
    print(f"anchor (elfmem's recorded near_duplicate rows taken at face value): "
          f"{anchor['proposed']} proposed, precision {anchor['precision']:.3f}, "
          f"{anchor['unique_touched']} unique facts touched")
    print(f"ratio: review duplicate precision / anchor precision = "
          f"{dup['precision'] / anchor['precision']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
