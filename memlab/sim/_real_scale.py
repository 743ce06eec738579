"""Operator scripts S7, S8 and S11 against a shipped elfmem release: the grown corpus (retrieval
at scale, review of consolidation's flagged pairs) and two processes writing one database.
Registered in :data:`memlab.sim.real_scripts.REAL_SCENARIOS`."""

from __future__ import annotations

import time
from typing import Any

from memlab.errors import SimulationError
from memlab.sim._texts import NoteMaker, note_variants
from memlab.sim.real import (
    RealContext,
    _closest_many,
    _llm_calls,
    _result,
    _role_block,
    _roles,
    _rows,
    _seeded,
)
from memlab.sim.releases import DriverError, ReleaseProcess
from memlab.sim.scenarios import ScenarioResult


# ---- S7 / S11: the grown corpus -------------------------------------------------------------
def _scale_world(ctx: RealContext) -> dict[str, Any]:
    if "scale" in ctx.memo:
        return ctx.memo["scale"]
    proc = ctx.proc
    p = ctx.params
    n = int(p.scale)
    if n < 50:
        raise SimulationError(f"scale must be at least 50 blocks, not {n}")
    maker = NoteMaker(70_000 + ctx.seed)
    notes = maker.fresh(n - p.s11_pairs)
    rng = ctx.rng("S11")
    # Planted duplicates: an early note restated at the end of the corpus, with the restatement
    # chosen by measured cosine in [s11_cosine, s11_cosine + 0.05).
    early = rng.choice(max(1, len(notes) // 4), size=min(p.s11_pairs, len(notes) // 4),
                       replace=False)
    planted = []
    lo = p.s11_cosine
    picks = _closest_many(proc, [(notes[i].text, note_variants(notes[i].key)) for i in early],
                          lo + 0.025)
    for i, (text, cos) in zip(early, picks):
        if lo <= cos < lo + 0.05:
            planted.append((int(i), text, cos))
    texts = [nt.text for nt in notes] + [t for _, t, _ in planted]
    db = _seeded(ctx, "scale")
    t0 = time.perf_counter()
    proc.preload(texts)
    t_embed = time.perf_counter() - t0
    before = _llm_calls(proc)["total_calls"]
    t0 = time.perf_counter()
    for start in range(0, len(texts), 500):
        proc.request("learn", items=[{"content": t} for t in texts[start:start + 500]])
        proc.request("consolidate", batch=500)
    t_cons = time.perf_counter() - t0
    calls = _llm_calls(proc)["total_calls"] - before
    rows = _rows(db)
    ids = {r["content"]: r["id"] for r in rows}
    world = {"db": db, "notes": notes, "planted": planted, "ids": ids, "blocks": len(texts),
             "llm_calls": calls, "seconds_embed": t_embed, "seconds_learn_consolidate": t_cons,
             "active": sum(r["status"] == "active" for r in rows)}
    ctx.memo["scale"] = world
    return world


def s7_scale(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    w = _scale_world(ctx)
    rng = ctx.rng("S7")
    idx = rng.choice(len(w["notes"]), size=min(ctx.params.s7_queries, len(w["notes"])),
                     replace=False)
    queries = [NoteMaker.query(w["notes"][i], named=ctx.params.s7_named) for i in idx]
    proc.preload(queries)
    hits = 0
    t0 = time.perf_counter()
    for i, q in zip(idx, queries):
        found = proc.call("recall", q, top_k=5)
        got = {b.get("id") or b.get("block_id") for b in found if isinstance(b, dict)}
        hits += w["ids"].get(w["notes"][i].text) in got
    t_q = time.perf_counter() - t0
    hit5 = hits / len(queries)
    per = w["llm_calls"] / w["blocks"]
    m = {"blocks": w["blocks"], "active": w["active"], "hit_at_5": round(hit5, 3),
         "queries": len(queries), "llm_calls": w["llm_calls"], "calls_per_block": round(per, 2),
         "seconds_learn_consolidate": round(w["seconds_learn_consolidate"], 1),
         "seconds_per_query": round(t_q / len(queries), 3)}
    good = [hit5 >= 0.8, per <= 2]
    outcome = "pass" if all(good) else "partial" if any(good) else "fail"
    summary = (f"{w['blocks']} blocks: hit@5 {hit5:.2f} on paraphrased queries, "
               f"{w['llm_calls']} LLM calls ({per:.2f}/block), learn+consolidate "
               f"{w['seconds_learn_consolidate']:.0f} s")
    return _result(ctx, "S7", outcome, summary, m,
                   unstable=("seconds_learn_consolidate", "seconds_per_query"))


def s11_review(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    if "review_corpus" not in ctx.methods:
        return _result(ctx, "S11", "n/a", "no corpus review in this release (no review_corpus)",
                       {"review_corpus": False})
    w = _scale_world(ctx)
    proc.request("open", db=str(w["db"]))
    res = proc.call("review_corpus")
    proc.request("close")
    pairs = {frozenset((p["block_a_id"], p["block_b_id"]))
             for p in res.get("near_duplicate_pairs", [])}
    found = 0
    for i, text, _ in w["planted"]:
        a, b = w["ids"].get(w["notes"][i].text), w["ids"].get(text)
        found += frozenset((a, b)) in pairs
    n = len(w["planted"])
    share = found / n if n else 0.0
    m = {"blocks": w["blocks"], "reviewed": res.get("reviewed_count"), "planted_pairs": n,
         "planted_cosines": [round(c, 3) for _, _, c in w["planted"]], "found": found,
         "near_duplicate_pairs": len(pairs), "stale_proposals": len(res.get("proposals", []))}
    outcome = "n/a" if n == 0 else "pass" if share >= 0.8 else "partial" if share >= 0.3 else "fail"
    summary = (f"review_corpus over {m['reviewed']} blocks: {found}/{n} planted cross-chunk "
               f"duplicates (cosine >= {ctx.params.s11_cosine:.2f}) reported, "
               f"{len(pairs)} near-duplicate pairs, {m['stale_proposals']} stale proposals")
    return _result(ctx, "S11", outcome, summary, m)


# ---- S8 -------------------------------------------------------------------------------------
def s8_concurrent(ctx: RealContext) -> ScenarioResult:
    """Two writers on one database, each its own process of the release, with the same
    read-modify-write protocol: read the block's content, append a sentence, write the whole
    content back through the release's content-replacing call (``edit``, else
    ``accept_amendment``), then each learns 10 blocks at the same time."""
    proc = ctx.proc
    db = _seeded(ctx, "s8")
    role = _roles(ctx, "S8")[0]
    target = _role_block(_rows(db), role)
    proc.request("close")
    write = "edit" if "edit" in ctx.methods else "accept_amendment"
    writers = [ReleaseProcess(ctx.release, workdir=ctx.workdir) for _ in range(2)]
    adds = [" Writer A adds this.", " Writer B adds this."]
    errors: list[str] = []
    try:
        for w in writers:
            w.request("open", db=str(db))
        notes = NoteMaker(8_000 + ctx.seed).fresh(20)
        finals = [target["content"] + a for a in adds]
        for w in writers:
            w.preload(finals + [n.text for n in notes] + [target["content"] + adds[0] + adds[1]])

        def rmw(w: ReleaseProcess, add: str) -> None:
            w.send("read_block", block_id=target["id"])

        def put(w: ReleaseProcess, content: str) -> None:
            if write == "edit":
                w.send("call", method="edit", args=[target["id"], content])
            else:
                w.send("call", method="accept_amendment", args=[target["id"], content],
                       kwargs={"rationale": "operator edit", "acceptor": "user"})

        def done(w: ReleaseProcess) -> Any:
            out = w.wait(raise_errors=False)
            if isinstance(out, DriverError):
                errors.append(f"{out.type}: {out.release_message[:80]}")
                return None
            return out

        if ctx.params.s8_schedule == "interleaved":
            for w, add in zip(writers, adds):
                rmw(w, add)
            reads = [done(w) for w in writers]
            for w, add, r in zip(writers, adds, reads):
                put(w, (r or {}).get("content", "") + add)
            for w in writers:
                done(w)
        elif ctx.params.s8_schedule == "serial":
            for w, add in zip(writers, adds):
                rmw(w, add)
                r = done(w)
                put(w, (r or {}).get("content", "") + add)
                done(w)
        else:
            raise SimulationError(f"s8_schedule must be 'interleaved' or 'serial', "
                                  f"not {ctx.params.s8_schedule!r}")
        for k, w in enumerate(writers):
            w.send("learn", items=[{"content": n.text} for n in notes[k * 10:(k + 1) * 10]])
        for w in writers:
            done(w)
        for w in writers:
            w.request("close")
    finally:
        for w in writers:
            w.close()
    rows = _rows(db)
    final = next(r for r in rows if r["id"] == target["id"])["content"]
    kept = [a.strip() for a in adds if a.strip() in final]
    texts = {n.text for n in notes}
    persisted = sum(r["content"] in texts for r in rows)
    m = {"schedule": ctx.params.s8_schedule, "write_call": write, "edits_kept": len(kept),
         "learned_persisted": persisted, "errors": errors}
    if len(kept) == 2 and persisted == 20 and not errors:
        outcome = "pass"
    elif persisted == 20 and not errors:
        outcome = "partial"
    else:
        outcome = "fail"
    summary = (f"{ctx.params.s8_schedule} read-modify-write via {write}: {len(kept)}/2 edits "
               f"kept; {persisted}/20 concurrent learns persisted; errors {errors or 'none'}")
    return _result(ctx, "S8", outcome, summary, m)
