"""The operator scripts S1-S11 run against a shipped elfmem release (see :mod:`memlab.sim.real`).

Each function takes a :class:`~memlab.sim.real.RealContext` (the release's driver process, the
instance, the seed, the :class:`~memlab.sim.real.RealParams`) and returns a measured
``ScenarioResult`` whose outcome follows ``REAL_RULES[code]``.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np

from memlab._files import sqlite_uri
from memlab.errors import SimulationError
from memlab.sim._texts import CONSTITUTION, REWORDINGS, NoteMaker, constitution_variants, note_variants
from memlab.sim.real import (
    DEAD_ENDPOINT,
    RealContext,
    _cos,
    _llm_calls,
    _result,
    _role_block,
    _roles,
    _rows,
    _seeded,
)
from memlab.sim.releases import DriverError, ReleaseProcess
from memlab.sim.scenarios import ScenarioResult

__all__ = ["REAL_SCENARIOS"]


# ---- S1 -------------------------------------------------------------------------------------
def s1_reword(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    role = ctx.params.s1_role or _roles(ctx, "S1")[0]
    if role not in REWORDINGS:
        raise SimulationError(f"s1_role {role!r} is not a constitutional role",
                              hint=", ".join(sorted(REWORDINGS)))
    k = ctx.params.s1_reword
    if k is None:
        k = int(ctx.rng("S1", "reword").integers(len(REWORDINGS[role])))
    new = REWORDINGS[role][k]
    db = _seeded(ctx, "s1")
    old = _role_block(_rows(db), role)
    cosine = _cos(proc, old["content"], new)
    before = _llm_calls(proc)["total_calls"]
    if "edit" in ctx.methods:
        api = "edit"
        proc.preload([new])
        proc.call("edit", old["id"], new)
    else:
        api = "learn+consolidate (no edit API)"
        proc.preload([new])
        proc.call("learn", new, tags=old["tags"], category=old["category"])
        proc.request("consolidate")
    rows = _rows(db)
    new_rows = [r for r in rows if r["content"] == new and r["status"] == "active"]
    old_active = any(r["content"] == old["content"] and r["status"] == "active" for r in rows)
    role_ok = any(f"self/role/{role}" in r["tags"] for r in new_rows)
    old_row = next(r for r in rows if r["id"] == old["id"])
    m = {"api": api, "role": role, "rewording": k, "cosine_old_new": cosine,
         "new_active": bool(new_rows), "old_active": old_active, "role_tag_on_new": role_ok,
         "old_status": old_row["status"], "old_archive_reason": old_row["archive_reason"],
         "llm_calls": _llm_calls(proc)["total_calls"] - before}
    if new_rows and role_ok and not old_active:
        outcome = "pass"
    elif new_rows:
        outcome = "partial"
    else:
        outcome = "fail"
    summary = (f"{api}: reword of '{role}' at cosine {cosine:.3f} -> new active={bool(new_rows)},"
               f" old active={old_active} ({old_row['archive_reason'] or old_row['status']}),"
               f" role tag on new={role_ok}")
    proc.request("close")
    return _result(ctx, "S1", outcome, summary, m)


# ---- S2 -------------------------------------------------------------------------------------
def _days_of_use(ctx: RealContext, days: int, proc: ReleaseProcess) -> dict[str, float]:
    """``days`` days of the instance's use: one session per day of the instance's active hours
    per day, ending with ``curate()`` (the release's maintenance) inside the session."""
    inst = ctx.instance
    per_day = inst.total_active_hours / inst.span_days
    curated = 0
    for _ in range(days):
        proc.request("session", hours=per_day, curate=True)
        curated += 1
    return {"active_hours_waited": round(per_day * days, 2), "curate_runs": curated}


def s2_delete(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    p = ctx.params
    db = _seeded(ctx, "s2")
    if p.s2_targets == "constitution":
        roles = _roles(ctx, "S2")[:3]
        rows = _rows(db)
        targets = [_role_block(rows, r)["id"] for r in roles]
    elif p.s2_targets == "observations":
        notes = NoteMaker(7_000 + ctx.seed).fresh(3)
        proc.preload([n.text for n in notes])
        targets = [proc.call("learn", n.text, category="observation")["block_id"]
                   for n in notes]
        proc.request("consolidate")
    else:
        raise SimulationError(f"s2_targets must be 'constitution' or 'observations', "
                              f"not {p.s2_targets!r}")
    m: dict[str, Any] = {"targets": p.s2_targets, "target_ids": sorted(targets)}
    filler = [n.text for n in NoteMaker(7_500 + ctx.seed).fresh(p.s2_corpus)]
    proc.preload(filler)
    if filler:
        proc.request("learn", items=[{"content": t} for t in filler])
        proc.request("consolidate")
    if "forget" in ctx.methods:
        m["api"] = "forget"
        for bid in targets:
            proc.call("forget", bid)
    else:
        m["api"] = f"none (no delete API): waited {p.s2_wait_days} days of sessions + curate"
        m.update(_days_of_use(ctx, p.s2_wait_days, proc))
    rows = {r["id"]: r for r in _rows(db)}
    gone = [bid for bid in targets if rows[bid]["status"] != "active"]
    m["gone"] = len(gone)
    m["reasons"] = sorted({rows[b]["archive_reason"] or "" for b in gone})
    outcome = "pass" if len(gone) == 3 else "partial" if gone else "fail"
    summary = f"{m['api']}: {len(gone)}/3 {p.s2_targets} targets gone {m['reasons'] or ''}"
    proc.request("close")
    return _result(ctx, "S2", outcome, summary, m)


# ---- S3 -------------------------------------------------------------------------------------
def _closest_many(proc: ReleaseProcess, groups: list[tuple[str, list[str]]], target: float
                  ) -> list[tuple[str, float]]:
    """For each (anchor, candidates): the candidate whose cosine to the anchor (lowercased,
    as consolidation compares them) is closest to ``target``, and that cosine. Every text of
    every group is embedded in one call."""
    forms = list(dict.fromkeys(t.strip().lower() for anchor, cands in groups
                               for t in (anchor, *cands)))
    row = {f: i for i, f in enumerate(forms)}
    vecs = proc.vectors(forms) if forms else np.zeros((0, 0), dtype=np.float32)
    out = []
    for anchor, candidates in groups:
        cand = vecs[[row[c.strip().lower()] for c in candidates]]
        cos = cand @ vecs[row[anchor.strip().lower()]]
        i = int(np.argmin(np.abs(cos - target)))
        out.append((candidates[i], round(float(cos[i]), 4)))
    return out


def s3_pinned(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    db = _seeded(ctx, "s3")
    rows = _rows(db)
    best = None
    roles = _roles(ctx, "S3")[:4]
    picks = _closest_many(proc, [(CONSTITUTION[r], constitution_variants(r)) for r in roles],
                          ctx.params.s3_cosine)
    for role, (text, cos) in zip(roles, picks):
        if best is None or abs(cos - ctx.params.s3_cosine) < abs(best[2] - ctx.params.s3_cosine):
            best = (role, text, cos)
    role, text, cos = best
    target = _role_block(rows, role)
    pinned = target.get("pinned")
    proc.preload([text])
    proc.call("learn", text, category="knowledge")
    res = proc.request("consolidate")
    after = {r["id"]: r for r in _rows(db)}
    t = after[target["id"]]
    new = [r for r in after.values() if r["content"] == text]
    m = {"role": role, "cosine": cos, "target_pinned": None if pinned is None else bool(pinned),
         "target_status": t["status"], "target_archive_reason": t["archive_reason"],
         "superseded_by_recorded": bool(t.get("superseded_by")),
         "new_block_status": new[0]["status"] if new else None,
         "near_duplicates_flagged": int(res.get("near_duplicates_flagged", 0)),
         "deduplicated": int(res.get("deduplicated", 0))}
    kept = t["status"] == "active" and t["content"] == target["content"]
    summary = (f"new block at cosine {cos:.3f} to constitutional '{role}' (pinned="
               f"{m['target_pinned']}): target {t['status']}"
               f"{' (' + t['archive_reason'] + ')' if t['archive_reason'] else ''}, new block "
               f"{m['new_block_status']}, near-dups flagged {m['near_duplicates_flagged']}")
    proc.request("close")
    return _result(ctx, "S3", "pass" if kept else "fail", summary, m)


# ---- S4 -------------------------------------------------------------------------------------
def s4_cost(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    p = ctx.params
    maker = NoteMaker(4_000 + ctx.seed)
    corpus = maker.fresh(p.s4_corpus)
    if p.s4_related:
        batch = [note_variants(n.key)[1] for n in corpus[:10]]
    else:
        batch = [n.text for n in maker.fresh(10)]
    _seeded(ctx, "s4")
    proc.preload([n.text for n in corpus] + batch)
    for note in corpus:
        proc.call("learn", note.text)
    proc.request("consolidate")
    before = _llm_calls(proc)
    for text in batch:
        proc.call("learn", text)
    res = proc.request("consolidate")
    after = _llm_calls(proc)
    calls = after["total_calls"] - before["total_calls"]
    by = {k: v - before["calls"].get(k, 0) for k, v in after["calls"].items()
          if v - before["calls"].get(k, 0)}
    tokens_in = after["input_tokens"] - before["input_tokens"]
    per = calls / len(batch)
    m = {"corpus_blocks": p.s4_corpus + 10, "batch": len(batch), "related": p.s4_related,
         "llm_calls": calls, "calls_per_block": round(per, 2), "calls_by_method": by,
         "llm_input_tokens": tokens_in, "promoted": int(res.get("promoted", 0))}
    outcome = "pass" if per <= 1.1 else "partial" if per <= 2 else "fail"
    summary = (f"10 blocks on a {p.s4_corpus}-note corpus: {calls} LLM calls ({per:.1f}/block; "
               f"{by}), {tokens_in} input tokens")
    proc.request("close")
    return _result(ctx, "S4", outcome, summary, m)


# ---- S5 / S6 --------------------------------------------------------------------------------
def _probe_llm(proc: ReleaseProcess, env: dict[str, str], model: str) -> dict[str, Any]:
    """Swap in the release's own LLM adapter (its factory, a config naming a local endpoint,
    the given environment) and make the first call any LLM-needing step makes."""
    out = proc.attempt("release_llm", base_url=DEAD_ENDPOINT, model=model, env=env)
    if isinstance(out, DriverError):
        return {"constructed": False, "error_type": out.type, "error": out.release_message}
    return {"constructed": True, "error_type": out["probe_error_type"],
            "error": out["probe_error"]}


def _needs_key(text: str | None) -> bool:
    t = (text or "").lower()
    return "api_key" in t or "api key" in t or "openai_api_key" in t


def s5_fresh_install(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    db = ctx.new_db("s5")
    proc.request("open", db=str(db))
    proc.preload(CONSTITUTION.values())
    proc.call("begin_session")
    setup = proc.call("setup")  # the release's defaults, as `elfmem init` would
    unchosen = int(setup.get("blocks_created", 0))
    env = {} if ctx.params.s5_key is None else {"OPENAI_API_KEY": ctx.params.s5_key}
    proc.request("close")
    proc.request("open", db=str(ctx.new_db("s5-llm")))
    probe = _probe_llm(proc, env, "local-model")
    # What the release's adapter said when its first call went to a closed local port: a
    # connection error means it tried without a key; a missing-key error means it would not.
    key_needed = _needs_key(probe.get("error"))
    m = {"setup_default_blocks": unchosen, "key_exported": ctx.params.s5_key is not None,
         "adapter_constructed": probe["constructed"], "first_call_error": probe["error_type"],
         "first_call_message": (probe.get("error") or "")[:160],
         "missing_key_reported": key_needed}
    good = [unchosen == 0, probe["constructed"] and not key_needed]
    outcome = "pass" if all(good) else "partial" if any(good) else "fail"
    summary = (f"setup() with defaults wrote {unchosen} blocks; local endpoint "
               f"{'needs an API key' if key_needed else 'reached without a key'}"
               f"{' (OPENAI_API_KEY exported)' if ctx.params.s5_key else ''}")
    proc.request("close")
    return _result(ctx, "S5", outcome, summary, m)


def s6_missing_key(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    db = ctx.new_db("s6")
    proc.request("open", db=str(db))
    m: dict[str, Any] = {"llm": ctx.params.s6_llm}
    raised = None
    if ctx.params.s6_llm == "absent":
        probe = _probe_llm(proc, {}, "gpt-4o-mini")
        m["first_call_error"] = probe["error_type"]
        if not probe["constructed"]:
            raised = f"startup: {probe['error_type']}"
    elif ctx.params.s6_llm != "local":
        raise SimulationError(f"s6_llm must be 'absent' or 'local', not {ctx.params.s6_llm!r}")
    m["started"] = raised is None
    texts = [n.text for n in NoteMaker(6_000 + ctx.seed).fresh(3)]
    proc.preload(texts)
    if raised is None:
        for text in texts:
            proc.call("learn", text)
        res = proc.attempt("consolidate")
        if isinstance(res, DriverError):
            raised = f"consolidate: {res.type}"
        else:
            m["consolidate"] = res
    rows = [r for r in _rows(db) if r["content"] in texts]
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    analysed = {bid for (bid,) in con.execute(
        "SELECT id FROM blocks WHERE summary IS NOT NULL AND summary != ''")}
    con.close()
    promoted = [r for r in rows if r["status"] == "active"]
    unanalysed = [r for r in promoted if r["id"] not in analysed]
    m.update({"raised": raised, "promoted": len(promoted), "promoted_unanalysed": len(unanalysed)})
    if raised or (promoted and not unanalysed):
        outcome = "pass"
    else:
        outcome = "fail"
    summary = (f"LLM {ctx.params.s6_llm}: started={m['started']}, raised={raised}, "
               f"{len(promoted)}/{len(texts)} promoted, {len(unanalysed)} without analysis")
    proc.request("close")
    return _result(ctx, "S6", outcome, summary, m)


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


# ---- S9 -------------------------------------------------------------------------------------
def _store_text(db: Path) -> list[tuple[str, str, str]]:
    """Every text cell of every table: (table, column, value)."""
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    out = []
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for t in tables:
            cols = [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')]
            for row in con.execute(f'SELECT * FROM "{t}"'):
                for c, v in zip(cols, row):
                    if isinstance(v, str):
                        out.append((t, c, v))
    finally:
        con.close()
    return out


def s9_last_month(ctx: RealContext) -> ScenarioResult:
    """The operator's month, then the audit: for each change, is there a row stamped inside
    the month that names it, and can its before-state be read back from the store?"""
    proc = ctx.proc
    db = _seeded(ctx, "s9")
    time.sleep(1.1)  # everything stamped from here on is "this month"; the seed is older
    start = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    changes: list[dict[str, Any]] = []
    notes = NoteMaker(9_000 + ctx.seed).fresh(3)
    proc.preload([n.text for n in notes])
    for n in notes:
        bid = proc.call("learn", n.text)["block_id"]
        changes.append({"kind": "learn", "id": bid, "before": None})
    proc.request("consolidate")
    rows = _rows(db)
    if "reword" in ctx.params.s9_changes:
        role = _roles(ctx, "S9")[0]
        old = _role_block(rows, role)
        new = REWORDINGS[role][1]
        proc.preload([new])
        if "edit" in ctx.methods:
            proc.call("edit", old["id"], new)
        else:
            proc.call("learn", new, tags=old["tags"], category=old["category"])
            proc.request("consolidate")
        changes.append({"kind": "reword", "id": old["id"], "before": old["content"]})
    if "forget" in ctx.params.s9_changes and "forget" in ctx.methods:
        victim = _role_block(rows, _roles(ctx, "S9")[1])
        proc.call("forget", victim["id"])
        changes.append({"kind": "forget", "id": victim["id"], "before": victim["content"]})
    proc.request("close")
    visible = 0
    detail = []
    for ch in changes:
        stamped = _stamped(db, ch["id"], start)
        recoverable = ch["before"] is None or _before_kept(db, ch["before"])
        visible += stamped and recoverable
        detail.append(f"{ch['kind']}: stamped={stamped} before-state={recoverable}")
    share = visible / len(changes)
    m = {"changes": len(changes), "visible": visible, "detail": detail,
         "kinds": [c["kind"] for c in changes]}
    outcome = "pass" if share == 1 else "partial" if share >= 0.5 else "fail"
    summary = f"{visible}/{len(changes)} changes of the month visible: " + "; ".join(detail)
    return _result(ctx, "S9", outcome, summary, m)


def _stamped(db: Path, block_id: str, start: str) -> bool:
    """A row naming ``block_id`` with a timestamp at or after ``start`` in some table."""
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for t in tables:
            for row in con.execute(f'SELECT * FROM "{t}"'):
                values = [v for v in row if isinstance(v, str)]
                if block_id in values and any(_is_time(v) and v >= start for v in values):
                    return True
    finally:
        con.close()
    return False


def _is_time(value: str) -> bool:
    return len(value) >= 19 and value[:2] == "20" and value[4] == "-" and value[10] == "T"


def _before_kept(db: Path, before: str) -> bool:
    """The reworded block's prior content is readable somewhere other than as a live,
    unchanged row (an archived row, an amendment's pre_content, a history table)."""
    for t, c, v in _store_text(db):
        if v == before:
            return True
    return False


# ---- S10 ------------------------------------------------------------------------------------
def s10_six_months(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    inst = ctx.instance
    p = ctx.params
    db = _seeded(ctx, "s10")
    seeded = {role: _role_block(_rows(db), role)["id"] for role in CONSTITUTION}
    rate = inst.near_dup_rate if p.s10_restate_rate is None else p.s10_restate_rate
    rng = ctx.rng("S10")
    per_day = inst.blocks_ever / inst.span_days
    maker = NoteMaker(10_000 + ctx.seed)
    variants = {role: constitution_variants(role) for role in CONSTITUTION}
    learned = restated = 0
    hours = inst.total_active_hours / inst.span_days
    texts_by_day = []
    for _ in range(p.s10_days):
        k = int(rng.poisson(per_day))
        day = []
        for _ in range(k):
            if rng.random() < rate:
                role = sorted(CONSTITUTION)[int(rng.integers(len(CONSTITUTION)))]
                day.append(variants[role][int(rng.integers(len(variants[role])))])
                restated += 1
            else:
                day.append(maker.fresh(1)[0].text)
        texts_by_day.append(day)
        learned += k
    proc.preload([t for d in texts_by_day for t in d])
    for day in texts_by_day:
        for text in day:
            proc.call("learn", text)
        proc.request("session", hours=hours, consolidate=True, curate=True)
    rows = {r["id"]: r for r in _rows(db)}
    intact = [role for role, bid in seeded.items()
              if rows[bid]["status"] == "active" and rows[bid]["content"] == CONSTITUTION[role]]
    lost = {role: rows[bid]["archive_reason"] for role, bid in seeded.items()
            if rows[bid]["status"] != "active"}
    m = {"days": p.s10_days, "learned": learned, "restatements": restated,
         "restate_rate": round(rate, 3), "active_hours": round(hours * p.s10_days, 2),
         "roles_intact": len(intact), "lost": lost, "llm": _llm_calls(proc)["total_calls"]}
    outcome = "pass" if len(intact) == 10 else "partial" if len(intact) >= 5 else "fail"
    summary = (f"{p.s10_days} days, {learned} blocks learned ({restated} restating a "
               f"principle): {len(intact)}/10 roles hold their seeded text; lost {lost or 'none'}")
    proc.request("close")
    return _result(ctx, "S10", outcome, summary, m)


REAL_SCENARIOS: dict[str, Callable[[RealContext], ScenarioResult]] = {
    "S1": s1_reword, "S2": s2_delete, "S3": s3_pinned, "S4": s4_cost, "S5": s5_fresh_install,
    "S6": s6_missing_key, "S7": s7_scale, "S8": s8_concurrent, "S9": s9_last_month,
    "S10": s10_six_months, "S11": s11_review,
}
