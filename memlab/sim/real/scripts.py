"""The operator scripts S1-S11 run against a shipped elfmem release (see :mod:`memlab.sim.real`).

Each function takes a :class:`~memlab.sim.real.RealContext` (the release's driver process, the
instance, the seed, the :class:`~memlab.sim.real.RealParams`) and returns a measured
``ScenarioResult`` whose outcome follows ``REAL_RULES[code]``. S1-S6 are here; S7, S8 and S11
(the grown corpus, concurrent writers) in :mod:`memlab.sim.real._scale`, S9 and S10 (a month,
six months) in :mod:`memlab.sim.real._months`. Each scenario's record names its script
(:mod:`memlab.sim.catalog`); :data:`REAL_SCENARIOS` maps the codes to them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any, Callable

from memlab._escape import quote
from memlab._files import sqlite_uri
from memlab.constants import EXACT_DUP_THRESHOLD, NEAR_DUP_THRESHOLD
from memlab.errors import SimulationError
from memlab.sim._texts import (
    CONSTITUTION,
    REWORDINGS,
    NoteMaker,
    constitution_variants,
    note_variants,
)
from memlab.sim.real._common import (
    DEAD_ENDPOINT,
    RealContext,
    block_rows,
    closest_many,
    llm_call_stats,
    measured_result,
    pair_cosine,
    release_write_path,
    role_block,
    roles_in_order,
    seeded_store,
)
from memlab.sim.real._write_paths import undo_paths, write_paths
from memlab.sim.real.release_facts import release_facts, run_preflight
from memlab.sim.real.releases import DriverError, ReleaseProcess, release_env, release_sources
from memlab.sim.registry import ScenarioView
from memlab.sim.rules import grade_checks, grade_levels, grade_s6
from memlab.sim.scenarios import ScenarioResult

__all__ = ["REAL_SCENARIOS"]


# ---- S1 -------------------------------------------------------------------------------------
def s1_reword(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    role = ctx.params.s1_role or roles_in_order(ctx, "S1")[0]
    if role not in REWORDINGS:
        raise SimulationError(
            f"s1_role {role!r} is not a constitutional role", hint=", ".join(sorted(REWORDINGS))
        )
    if ctx.params.s1_path not in ("operator", "learn"):
        raise SimulationError(f"s1_path must be 'operator' or 'learn', not {ctx.params.s1_path!r}")
    k = ctx.params.s1_reword
    if k is None:
        k = int(ctx.rng("S1", "reword").integers(len(REWORDINGS[role])))
    new = REWORDINGS[role][k]
    db = seeded_store(ctx, "s1")
    old = role_block(block_rows(db), role)
    cosine = pair_cosine(proc, old["content"], new)
    before = llm_call_stats(proc)["total_calls"]
    path = release_write_path(ctx) if ctx.params.s1_path == "operator" else None
    audit_before = _audit_rows(db, path)
    if path is not None:
        api = path["method"]
        proc.preload([new])
        proc.call(api, old["id"], new)
    else:
        api = (
            "learn+consolidate (the doc's fallback)"
            if ctx.params.s1_path == "learn"
            else "learn+consolidate (no write path)"
        )
        proc.preload([new])
        proc.call("learn", new, tags=old["tags"], category=old["category"])
        proc.request("consolidate")
    rows = block_rows(db)
    new_rows = [r for r in rows if r["content"] == new and r["status"] == "active"]
    old_active = any(r["content"] == old["content"] and r["status"] == "active" for r in rows)
    role_ok = any(f"self/role/{role}" in r["tags"] for r in new_rows)
    old_row = next(r for r in rows if r["id"] == old["id"])
    m = {
        "api": api,
        "role": role,
        "rewording": k,
        "cosine_old_new": cosine,
        "new_active": bool(new_rows),
        "old_active": old_active,
        "role_tag_on_new": role_ok,
        "old_status": old_row["status"],
        "old_archive_reason": old_row["archive_reason"],
        "llm_calls": llm_call_stats(proc)["total_calls"] - before,
        "write_path": None
        if path is None
        else {key: path[key] for key in ("api", "writes", "audit", "ledger", "cli", "mcp")},
    }
    m["score"] = 1.0 if (new_rows and role_ok and not old_active) else 0.5 if new_rows else 0.0
    # Through a write path the seed's rewording cannot matter (it is written as given); through
    # learn + consolidate its cosine decides (about 1 rewording in 12 lands in the band).
    m["draw_decides"] = path is None
    # What the write recorded: the rows it added to the tables its operation inserts into
    # (0.19.2's accept_amendment: one block_amendments row with pre/post content), and whether
    # the release's undo path (a write path taking no text: revert_amendment) restores the
    # old wording from it. Measured after the score, so it does not decide the cell.
    audit = _audit_rows(db, path)
    m["audit_rows"] = {t: audit[t] - audit_before.get(t, 0) for t in audit}
    m["audit_keeps_before"] = _before_in(db, path, old["content"])
    m["undo"] = _undo(ctx, db, path, old)
    outcome = grade_levels("S1", m["score"])
    recorded = (
        ", ".join(f"{n} {t} row{'s' * (n != 1)}" for t, n in m["audit_rows"].items())
        or "no audit row in the store"
    )
    if path and path["ledger"]:
        recorded += " (an event-ledger line when opened in a project)"
    summary = (
        f"{api}: reword of '{role}' at cosine {cosine:.3f} -> new active={bool(new_rows)},"
        f" old active={old_active} ({old_row['archive_reason'] or old_row['status']}),"
        f" role tag on new={role_ok}"
        + (
            f"; via {path['api']} ({', '.join(path['cli'] + path['mcp'])}), recorded "
            f"{recorded}"
            + (
                f", undone by {m['undo']['method']} "
                f"(restores the old wording: {m['undo']['restored']})"
                if m["undo"]
                else ""
            )
            if path
            else ""
        )
    )
    proc.request("close")
    return measured_result(ctx, "S1", outcome, summary, m)


def _audit_rows(db: Any, path: dict[str, Any] | None) -> dict[str, int]:
    if not path or not path["audit"]:
        return {}
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    try:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return {
            t: con.execute(f"SELECT count(*) FROM {quote(t)}").fetchone()[0]
            for t in path["audit"]
            if t in names
        }
    finally:
        con.close()


def _before_in(db: Any, path: dict[str, Any] | None, before: str) -> bool | None:
    """Whether a row the write path's audit tables hold carries the old wording."""
    if not path or not path["audit"]:
        return None
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    try:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for t in path["audit"]:
            if t in names and any(
                before in row for row in con.execute(f"SELECT * FROM {quote(t)}")
            ):
                return True
    finally:
        con.close()
    return False


def _undo(
    ctx: RealContext, db: Any, path: dict[str, Any] | None, old: dict[str, Any]
) -> dict[str, Any] | None:
    """Run the release's undo path (a content writer taking no text) on the newest audit row,
    and read back whether the old wording is the block's content again."""
    if path is None or not path["audit"]:
        return None
    undo = undo_paths(write_paths(release_sources(ctx.release)))
    if not undo:
        return None
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    try:
        newest = con.execute(f"SELECT max(rowid) FROM {quote(path['audit'][0])}").fetchone()[0]
    finally:
        con.close()
    out = ctx.proc.attempt("call", method=undo[0]["method"], args=[newest])
    content = next((r["content"] for r in block_rows(db) if r["id"] == old["id"]), None)
    return {
        "method": undo[0]["method"],
        "api": undo[0]["api"],
        "cli": undo[0]["cli"],
        "error": out.type if isinstance(out, DriverError) else None,
        "restored": content == old["content"],
    }


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
    db = seeded_store(ctx, "s2")
    if p.s2_targets == "constitution":
        roles = roles_in_order(ctx, "S2")[:3]
        rows = block_rows(db)
        targets = [role_block(rows, r)["id"] for r in roles]
    elif p.s2_targets == "observations":
        notes = NoteMaker(7_000 + ctx.seed).fresh(3)
        proc.preload([n.text for n in notes])
        targets = [proc.call("learn", n.text, category="observation")["block_id"] for n in notes]
        proc.request("consolidate")
    else:
        raise SimulationError(
            f"s2_targets must be 'constitution' or 'observations', not {p.s2_targets!r}"
        )
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
    by_id = {r["id"]: r for r in block_rows(db)}
    gone = [bid for bid in targets if by_id[bid]["status"] != "active"]
    m["gone"] = len(gone)
    m["reasons"] = sorted({by_id[b]["archive_reason"] or "" for b in gone})
    outcome = grade_levels("S2", len(gone))
    summary = f"{m['api']}: {len(gone)}/3 {p.s2_targets} targets gone {m['reasons'] or ''}"
    proc.request("close")
    return measured_result(ctx, "S2", outcome, summary, m)


# ---- S3 -------------------------------------------------------------------------------------
def s3_pinned(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    db = seeded_store(ctx, "s3")
    rows = block_rows(db)
    best: tuple[str, str, float] | None = None
    roles = roles_in_order(ctx, "S3")[:4]
    picks = closest_many(
        proc, [(CONSTITUTION[r], constitution_variants(r)) for r in roles], ctx.params.s3_cosine
    )
    for role, (text, cos) in zip(roles, picks):
        if best is None or abs(cos - ctx.params.s3_cosine) < abs(best[2] - ctx.params.s3_cosine):
            best = (role, text, cos)
    if best is None:
        raise SimulationError("S3: no constitutional role to reword")
    role, text, cos = best
    target = role_block(rows, role)
    pinned = target.get("pinned")
    proc.preload([text])
    proc.call("learn", text, category="knowledge")
    res = proc.request("consolidate")
    after = {r["id"]: r for r in block_rows(db)}
    t = after[target["id"]]
    new = [r for r in after.values() if r["content"] == text]
    m = {
        "role": role,
        "cosine": cos,
        "target_pinned": None if pinned is None else bool(pinned),
        "target_status": t["status"],
        "target_archive_reason": t["archive_reason"],
        "superseded_by_recorded": bool(t.get("superseded_by")),
        "new_block_status": new[0]["status"] if new else None,
        "near_duplicates_flagged": int(res.get("near_duplicates_flagged", 0)),
        "deduplicated": int(res.get("deduplicated", 0)),
    }
    kept = t["status"] == "active" and t["content"] == target["content"]
    m["in_band"] = NEAR_DUP_THRESHOLD <= cos < EXACT_DUP_THRESHOLD
    summary = (
        f"new block at cosine {cos:.3f} to constitutional '{role}' (pinned="
        f"{m['target_pinned']}): target {t['status']}"
        f"{' (' + t['archive_reason'] + ')' if t['archive_reason'] else ''}, new block "
        f"{m['new_block_status']}, near-dups flagged {m['near_duplicates_flagged']}"
    )
    proc.request("close")
    outcome = "fail" if not kept else "pass" if m["in_band"] else "partial"
    return measured_result(ctx, "S3", outcome, summary, m)


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
    seeded_store(ctx, "s4")
    proc.preload([n.text for n in corpus] + batch)
    for note in corpus:
        proc.call("learn", note.text)
    proc.request("consolidate")
    before = llm_call_stats(proc)
    for text in batch:
        proc.call("learn", text)
    res = proc.request("consolidate")
    after = llm_call_stats(proc)
    calls = after["total_calls"] - before["total_calls"]
    by = {
        k: v - before["calls"].get(k, 0)
        for k, v in after["calls"].items()
        if v - before["calls"].get(k, 0)
    }
    tokens_in = after["input_tokens"] - before["input_tokens"]
    per = calls / len(batch)
    m = {
        "corpus_blocks": p.s4_corpus + 10,
        "batch": len(batch),
        "related": p.s4_related,
        "llm_calls": calls,
        "calls_per_block": round(per, 2),
        "calls_by_method": by,
        "llm_input_tokens": tokens_in,
        "promoted": int(res.get("promoted", 0)),
    }
    outcome = grade_levels("S4", per)
    summary = (
        f"10 blocks on a {p.s4_corpus}-note corpus: {calls} LLM calls ({per:.1f}/block; "
        f"{by}), {tokens_in} input tokens"
    )
    proc.request("close")
    return measured_result(ctx, "S4", outcome, summary, m)


# ---- S5 / S6 --------------------------------------------------------------------------------
def _probe_llm(proc: ReleaseProcess, env: dict[str, str], model: str) -> dict[str, Any]:
    """Swap in the release's own LLM adapter (its factory, a config naming a local endpoint,
    the given environment) and make the first call any LLM-needing step makes."""
    out = proc.attempt("release_llm", base_url=DEAD_ENDPOINT, model=model, env=env)
    if isinstance(out, DriverError):
        return {"constructed": False, "error_type": out.type, "error": out.release_message}
    return {"constructed": True, "error_type": out["probe_error_type"], "error": out["probe_error"]}


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
    m = {
        "setup_default_blocks": unchosen,
        "key_exported": ctx.params.s5_key is not None,
        "adapter_constructed": probe["constructed"],
        "first_call_error": probe["error_type"],
        "first_call_message": (probe.get("error") or "")[:160],
        "missing_key_reported": key_needed,
    }
    good = [unchosen == 0, probe["constructed"] and not key_needed]
    outcome = grade_checks(good)
    summary = (
        f"setup() with defaults wrote {unchosen} blocks; local endpoint "
        f"{'needs an API key' if key_needed else 'reached without a key'}"
        f"{' (OPENAI_API_KEY exported)' if ctx.params.s5_key else ''}"
    )
    proc.request("close")
    return measured_result(ctx, "S5", outcome, summary, m)


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
    # The shipped preflight, where the release has one (`elfmem doctor --resolve`: opt-in, so
    # it does not decide the cell, which follows the path an agent takes; the claim about
    # preflight reads it). None: the release's CLI has no such check.
    m["shipped_preflight"] = None
    if (
        ctx.params.s6_llm == "absent"
        and release_facts(release_sources(ctx.release))["doctor_resolve"]
    ):
        m["shipped_preflight"] = run_preflight(release_env(ctx.release), DEAD_ENDPOINT)
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
    rows = [r for r in block_rows(db) if r["content"] in texts]
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    analysed = {
        bid
        for (bid,) in con.execute(
            "SELECT id FROM blocks WHERE summary IS NOT NULL AND summary != ''"
        )
    }
    con.close()
    promoted = [r for r in rows if r["status"] == "active"]
    unanalysed = [r for r in promoted if r["id"] not in analysed]
    m.update({"raised": raised, "promoted": len(promoted), "promoted_unanalysed": len(unanalysed)})
    # Nothing raised and nothing promoted: the blocks are held back with no error shown
    # (partial under S6's rule: not degraded, not loud).
    outcome = grade_s6(
        raised=bool(raised), promoted_unanalysed=len(unanalysed), failures_logged=not promoted
    )
    summary = (
        f"LLM {ctx.params.s6_llm}: started={m['started']}, raised={raised}, "
        f"{len(promoted)}/{len(texts)} promoted, {len(unanalysed)} without analysis"
    )
    proc.request("close")
    return measured_result(ctx, "S6", outcome, summary, m)


#: code -> real operator script, for every registered scenario whose record names one
#: (``real``, imported at lookup): S1-S11's in :mod:`memlab.sim.catalog`.
REAL_SCENARIOS: Mapping[str, Callable[[RealContext], ScenarioResult]] = ScenarioView(
    lambda record: record.real_script(), keep=lambda record: record.real is not None
)
