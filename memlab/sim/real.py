"""Real-system rows: the scenarios as operator scripts run against shipped elfmem releases.

Each scenario (the scripts are in :mod:`memlab.sim.real_scripts`) is what an operator would do, typed against the release's own public API
(``MemorySystem`` in the release's venv, see :mod:`memlab.sim.releases`), with the real
all-MiniLM-L6-v2 model giving every cosine and a deterministic local LLM (rules in
``memlab/sim/_driver.py``) counting every call and token. What a release cannot do is
discovered from its API (``"edit" in methods``), and the operator's fallback is executed and
measured instead. Each result is ``basis="measured"``, names the rule its outcome follows
(``ScenarioResult.rule``) and keeps the numbers the rule read (``metrics``).

The parameters in :class:`RealParams` (and the seed, which picks the role, the notes and the
rewording) change what the release is given, and the release decides.
``tests/test_sim_real.py`` holds, per scenario but S8, a pair of inputs under which a verdict
differs. S8 runs every schedule in every cell, and neither release detects a stale write, so
its verdict stays partial; what moves is its free-running lost-edit rate. ``memlab simulate
--sweep`` shows which verdicts moved across the seeds, scales or instances given.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memlab._files import sqlite_uri
from memlab._tmp import private_tempdir
from memlab.errors import SimulationError
from memlab.sim._texts import CONSTITUTION
from memlab.sim.cache import now_utc
from memlab.sim.instance import DOC_INSTANCE, Instance
from memlab.sim.releases import (
    RELEASES,
    ReleaseProcess,
    all_settings,
    check_setting,
    project_mode,
    release_sources,
    release_version,
)
from memlab.sim.rules import RULES
from memlab.sim.scenarios import ScenarioResult
from memlab.constants import NEAR_DUP_THRESHOLD

__all__ = ["RealParams", "run_real", "release_row", "count_source_lines", "simplicity",
           "REAL_RULES", "RealContext", "RULE_LLM", "LLM_STAND_INS", "llm_stand_in",
           "PROJECT_SCENARIOS", "project_config", "project_substrate", "file_block_text"]

#: The scenarios a project-mode setting (``0.20.0+project``) runs: the ones about what its
#: project-only parts change, the event ledger (S9's audit) and the file substrate (S8's
#: concurrent writers).
PROJECT_SCENARIOS: tuple[str, ...] = ("S8", "S9")

#: The closed local port the "no key / no model" scenarios point the release's own LLM
#: adapter at: what a machine with neither a key nor a running model sees, with no network.
DEAD_ENDPOINT = "http://127.0.0.1:9/v1"


@dataclass(frozen=True)
class RealParams:
    """What the operator scripts read besides the instance and the seed.

    ``scale``: corpus size for S7/S11. Default 2,000: the releases' consolidation compares
    each new block with every active one in Python, so its time grows with the square of the
    corpus (S7's ``seconds_learn_consolidate`` for 2,000 blocks, measured on 2 cores on
    2026-12-01: 0.19.2 24 s, 0.20.0 22 s), and the doc's 14,000 would take about 49 times
    as long per release by that square law (not measured). Tests use a few hundred.
    ``s1_reword``: which of a role's six rewordings the operator types (0 = a touch-up ...
    5 = a loose summary); None lets the seed pick; ``s1_role``: the principle (None: the
    seed picks). ``s2_targets``: "constitution" (3 of
    setup's seeded blocks) or "observations" (3 observation blocks learned at onboarding).
    ``s2_wait_days``: how long the operator waits for a release without delete;
    ``s2_corpus``: the other notes in memory meanwhile (curate reinforces its top 5).
    ``s3_cosine``: the cosine at which the new block lands next to the pinned one (the closest
    candidate text is used; its measured cosine is reported). ``s4_related``: the 10-block
    batch restates notes already in memory (True) or is new material. ``s5_key``: an
    ``OPENAI_API_KEY`` value the operator exports for a local model (None: none).
    ``s6_llm``: "absent" (no key, no model) or "local" (the local rule LLM answers).
    ``s8_trials``: S8's free-running trials (every S8 cell also runs the serial and the
    interleaved schedule once).
    ``s9_changes``: what the operator did in the month ("learn", or "learn+reword+forget").
    ``s10_days``: days of sessions; ``s10_restate_rate``: share of learned blocks that restate
    a constitutional principle (None: the instance's near-duplicate rate).
    ``s7_queries``: paraphrased queries asked; ``s7_named``: they keep the component's name
    (True) or paraphrase it too.
    ``s11_cosine``: cosine band of the planted cross-chunk duplicates (lower bound).
    """

    scale: int = 2_000
    s1_reword: int | None = None
    s1_role: str | None = None
    s2_targets: str = "constitution"
    s2_wait_days: int = 30
    s2_corpus: int = 40
    s3_cosine: float = 0.91
    s4_corpus: int = 140
    s4_related: bool = False
    s5_key: str | None = None
    s6_llm: str = "absent"
    s8_trials: int = 10
    s9_changes: str = "learn+reword+forget"
    s10_days: int = 182
    s10_restate_rate: float | None = None
    s11_cosine: float = NEAR_DUP_THRESHOLD
    s11_pairs: int = 20
    s7_queries: int = 50
    s7_named: bool = True

    def with_(self, **kw: Any) -> "RealParams":
        return dataclasses.replace(self, **kw)


#: The rule each scenario's outcome follows (:data:`memlab.sim.rules.RULES`: one rule per
#: scenario, for modelled and measured cells alike), shown next to every cell.
REAL_RULES: dict[str, str] = RULES


#: The deterministic local LLM every measured cell's release talks to (memlab/sim/_driver.py).
RULE_LLM = ("RuleLLM, a deterministic local adapter (memlab/sim/_driver.py): summary = the "
            "block's first sentence, tags = none, alignment 0.8/0.3 by shared words, "
            "contradiction 0.9 only for a negation word plus >= 40% shared words, amendments "
            "returned unchanged, no goal edges; it cannot return tags, judge meaning, find a "
            "contradiction without a negation word, or propose a real amendment")
#: Per scenario, what stood in for the LLM in its measured cells (the default: RULE_LLM).
LLM_STAND_INS: dict[str, str] = {
    "S5": "the release's own LLM adapter (its factory and config) pointed at a closed local "
          "port (" + DEAD_ENDPOINT + "): what a machine with no model running sees; it "
          "answers nothing, so only construction and the first call's error are observed; "
          "setup() runs with " + "RuleLLM",
    "S6": "s6_llm=absent: the release's own adapter pointed at a closed local port (no LLM "
          "reachable: every call fails); s6_llm=local: RuleLLM answers (see RULE_LLM); the "
          "shipped preflight (`elfmem doctor --resolve`) runs against the same closed port",
    "S7": RULE_LLM + "; recall itself makes no LLM call",
    "S8": RULE_LLM + "; the writers' edits and learns exercise storage, not the LLM",
    "S11": RULE_LLM + "; review_corpus makes no LLM call in the releases that have it",
}


def llm_stand_in(code: str) -> str:
    """What stood in for the LLM in a measured cell of scenario ``code``."""
    return LLM_STAND_INS.get(code, RULE_LLM)


# ---------------------------------------------------------------------------------------------
class RealContext:
    """One release setting's process, scratch folder and memoised fixtures for one run.

    ``release`` is a setting (:func:`memlab.sim.releases.check_setting`): a version, whose
    stores are opened with no project, or ``<version>+project``, whose stores are each opened
    inside their own project root (:meth:`new_db`, :meth:`open`)."""

    def __init__(self, release: str, instance: Instance, seed: int, params: RealParams,
                 workdir: Path) -> None:
        self.release = check_setting(release)
        self.version = release_version(self.release)
        self.project = project_mode(self.release)
        self.instance = instance
        self.seed = int(seed)
        self.params = params
        self.workdir = workdir
        self._proc: ReleaseProcess | None = None
        self.hello: dict[str, Any] | None = None
        self.memo: dict[str, Any] = {}
        self._n = 0

    def start(self) -> None:
        """Start the release's driver process without waiting for it (see ``proc``)."""
        if self._proc is None:
            self._proc = ReleaseProcess(self.release, workdir=self.workdir)

    @property
    def proc(self) -> ReleaseProcess:
        self.start()
        if self.hello is None:
            self.hello = self._proc.request("hello")
        return self._proc

    @property
    def methods(self) -> set[str]:
        _ = self.proc
        return set(self.hello["methods"])

    def rng(self, *keys: Any) -> np.random.Generator:
        return np.random.default_rng([self.seed, *[zlib.crc32(str(k).encode()) for k in keys]])

    def new_db(self, name: str) -> Path:
        """A new database path. In project mode it is ``<root>/agent.db`` in a new project
        root ``<root>`` holding ``.elfmem/config.yaml`` (what ``elfmem init`` leaves: the
        ``.elfmem`` marker and a config whose ``project.db`` is this database), with the file
        substrate switched on (``substrate.files_authoritative: true``)."""
        self._n += 1
        if not self.project:
            return self.workdir / f"{self._n:02d}-{name}.db"
        root = self.workdir / f"{self._n:02d}-{name}"
        (root / ".elfmem").mkdir(parents=True)
        db = root / "agent.db"
        (root / ".elfmem" / "config.yaml").write_text(project_config(db), encoding="utf-8")
        return db

    def open(self, db: Path, proc: ReleaseProcess | None = None) -> dict[str, Any]:
        """Open ``db`` in ``proc`` (default: the context's process); in project mode inside
        its project root, and the driver's answer says the release found it (its
        ``project_root``, ``ledger_dir`` and ``files_authoritative``)."""
        proc = proc or self.proc
        if not self.project:
            return proc.request("open", db=str(db))
        out = proc.request("open", db=str(db), project=str(db.parent))
        if out.get("project_root") is None or not out.get("files_authoritative"):
            raise SimulationError(f"elfmem {self.version} did not find the project at "
                                  f"{db.parent}: {out}")
        return out

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()
            self._proc = None
            self.hello = None


def _seeded(ctx: RealContext, name: str, proc: ReleaseProcess | None = None) -> Path:
    """A fresh database with setup's ten constitutional blocks consolidated (seed=True is
    passed explicitly: the doc's baseline is a seeded instance)."""
    proc = proc or ctx.proc
    db = ctx.new_db(name)
    ctx.open(db, proc)
    proc.preload(CONSTITUTION.values())
    proc.call("begin_session")
    proc.call("setup", seed=True)
    proc.request("consolidate")
    return db


def _rows(db: Path) -> list[dict[str, Any]]:
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    try:
        con.row_factory = sqlite3.Row
        cols = {r[1] for r in con.execute("PRAGMA table_info(blocks)")}
        extra = [c for c in ("pinned", "superseded_by") if c in cols]
        rows = [dict(r) for r in con.execute(
            "SELECT id, content, status, archive_reason, category, created_at"
            + "".join(f", {c}" for c in extra) + " FROM blocks")]
        tags: dict[str, list[str]] = {}
        for bid, tag in con.execute("SELECT block_id, tag FROM block_tags"):
            tags.setdefault(bid, []).append(tag)
    finally:
        con.close()
    for r in rows:
        r["tags"] = sorted(tags.get(r["id"], []))
    return rows


def _role_block(rows: list[dict[str, Any]], role: str) -> dict[str, Any] | None:
    for r in rows:
        if r["status"] == "active" and f"self/role/{role}" in r["tags"]:
            return r
    return None


def _cos(proc: ReleaseProcess, a: str, b: str) -> float:
    va, vb = proc.vectors([a.strip().lower(), b.strip().lower()])
    return round(float(va @ vb), 4)


def _llm_calls(proc: ReleaseProcess) -> dict[str, Any]:
    return proc.request("stats")["llm"]


def _result(ctx: RealContext, code: str, outcome: str, summary: str,
            metrics: dict[str, Any], **kw: Any) -> ScenarioResult:
    return ScenarioResult(scenario=code, iteration=release_row(ctx.release), outcome=outcome,
                          summary=summary, metrics=metrics, basis="measured",
                          rule=REAL_RULES[code], llm=llm_stand_in(code), **kw)


def project_config(db: Path) -> str:
    """The ``.elfmem/config.yaml`` of a project-mode store (JSON strings are YAML strings)."""
    from memlab.formats import _json

    return ("project:\n  name: memlab-sim\n  db: " + _json.dumps(str(db)) + "\n"
            "substrate:\n  files_authoritative: true\n")


def project_substrate(db: Path) -> dict[str, Any]:
    """What a project-mode store keeps beside its database, read from the files the release
    wrote: ``events`` (every line of ``.elfmem/ledger/*.jsonl``, the event ledger, parsed) and
    ``files`` (``.elfmem/memory/**/*.md``, the file substrate: path -> text). Empty for a
    store with no project."""
    from memlab.formats import _json

    root = Path(db).parent / ".elfmem"
    events: list[Any] = []
    for path in sorted((root / "ledger").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                events.append(_json.loads(line)[0])
    memory = root / "memory"
    files = {path.relative_to(memory).as_posix(): path.read_text(encoding="utf-8")
             for path in sorted(memory.rglob("*.md"))} if memory.is_dir() else {}
    return {"events": events, "files": files}


def file_block_text(files: dict[str, str], block_id: str) -> str | None:
    """The text of block ``block_id`` in the file substrate (what follows its ``<!-- id: ...
    -->`` line up to the next block's ``## `` heading), or None when no file holds it."""
    for text in files.values():
        at = text.find(f"<!-- id: {block_id} ")
        if at < 0:
            continue
        body = text[text.index("\n", at) + 1:] if "\n" in text[at:] else ""
        end = body.find("\n## ")
        return (body if end < 0 else body[:end]).strip("\n")
    return None


def release_row(release: str) -> str:
    """The table row name of a real release."""
    return f"elfmem {release} (real)"


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


def _roles(ctx: RealContext, *keys: Any) -> list[str]:
    roles = sorted(CONSTITUTION)
    order = ctx.rng(*keys).permutation(len(roles))
    return [roles[i] for i in order]


# ---- Simplicity -----------------------------------------------------------------------------
def count_source_lines(folder: str | Path) -> dict[str, int]:
    """Lines of the Python source under ``folder``: total, blank, comment-only, and code
    (the rest; docstrings count as code). The measured Simplicity figure."""
    total = blank = comment = 0
    files = 0
    for path in sorted(Path(folder).rglob("*.py")):
        files += 1
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            total += 1
            s = line.strip()
            if not s:
                blank += 1
            elif s.startswith("#"):
                comment += 1
    return {"files": files, "lines": total, "blank": blank, "comment": comment,
            "code": total - blank - comment}


# ---- the run --------------------------------------------------------------------------------
def run_real(releases: Any = None, scenarios: Any = None, *, instance: Instance | None = None,
             seed: int = 0, params: RealParams | None = None,
             workdir: str | Path | None = None, workers: int | None = None,
             cache: Any = False, fresh: bool = False
             ) -> dict[tuple[str, str], ScenarioResult]:
    """Run the scenario scripts against each release; ``{(row, code): ScenarioResult}``.

    ``releases``: None (every setting of :func:`~memlab.sim.releases.all_settings`: each
    release in :data:`RELEASES`, then ``0.20.0+project``) or settings (a version, or
    ``<version>+project``: each store opened inside its own project root; such a row runs only
    :data:`PROJECT_SCENARIOS`). ``scenarios``: None (S1-S11) or codes. Each scenario gets a fresh database under ``workdir`` (a temporary
    folder by default); nothing outside it is written, except the release venvs' creation.
    ``workers``: how many releases run side by side, each its own driver processes fed by
    one thread here (default: one per release, at most one per CPU core). Each release's
    scenarios still run one after another on its own databases; only memlab's embedding is
    shared (one at a time). Results come back in release order either way.

    ``cache``: False (run every cell), True (the result cache in ``$MEMLAB_CACHE_DIR``, see
    :mod:`memlab.sim.cache`) or a :class:`~memlab.sim.cache.ResultCache`: a cell whose key
    (release and its venv's package set, memlab's simulation sources, every parameter, seed,
    instance digest, embedding precision) is stored comes back with ``cached=True`` and the
    ``measured_at`` of the run that measured it; only the other cells run (a release whose
    cells all hit starts no driver). ``fresh=True`` re-runs every cell and overwrites its
    entry. Every measured result has ``cached`` (True/False) and ``measured_at``.
    """
    rels = all_settings() if releases is None else [check_setting(r) for r in releases]
    from memlab.sim.real_scripts import REAL_SCENARIOS

    codes = list(REAL_SCENARIOS) if scenarios is None else [str(s).upper() for s in scenarios]
    for c in codes:
        if c not in REAL_SCENARIOS:
            raise SimulationError(f"unknown scenario {c!r}", hint="S1-S11")
    # A project-mode setting runs only the scenarios its project-only parts are about.
    cells = {rel: [c for c in codes if not project_mode(rel) or c in PROJECT_SCENARIOS]
             for rel in rels}
    inst = instance or DOC_INSTANCE
    params = params or RealParams()
    results: dict[tuple[str, str], ScenarioResult] = {}
    store = _result_cache(cache, fresh)
    todo: dict[str, list[str]] = {}
    keys: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    if store is not None:
        from memlab.embed import get_embedder
        from memlab.sim.cache import cell_key, env_digest, instance_digest
        from memlab.sim.releases import release_env

        digest, embedding = instance_digest(inst), get_embedder().cache_key
        for rel in rels:
            env = env_digest(release_env(rel))
            for code in cells[rel]:
                keys[(rel, code)] = cell_key(release=rel, env=env, scenario=code,
                                             params=params, seed=seed, instance=digest,
                                             embedding=embedding)
                hit = store.get(keys[(rel, code)][0])
                if hit is None:
                    todo.setdefault(rel, []).append(code)
                else:
                    results[(release_row(rel), code)] = hit
    else:
        todo = {rel: list(cells[rel]) for rel in rels}
    todo = {rel: todo[rel] for rel in rels if todo.get(rel)}
    if todo:
        with private_tempdir("real", root=workdir) as tmp:
            contexts = []
            for rel in todo:
                folder = Path(tmp) / rel.replace("+", "-")
                folder.mkdir()
                contexts.append(RealContext(rel, inst, seed, params, folder))
            n = workers if workers is not None else min(len(contexts), os.cpu_count() or 1)
            ran: dict[tuple[str, str], ScenarioResult] = {}
            try:
                _run_contexts(contexts, todo, ran, max(1, int(n)))
            finally:
                for ctx in contexts:
                    ctx.close()
        for rel in todo:
            for code in todo[rel]:
                res = ran[(release_row(rel), code)]
                if store is not None:
                    store.put(*keys[(rel, code)], res)
                results[(release_row(rel), code)] = res
    # Release order, then scenario order, whichever cells came from the cache.
    return {(release_row(rel), code): results[(release_row(rel), code)]
            for rel in rels for code in cells[rel]}


def _result_cache(cache: Any, fresh: bool) -> Any:
    if cache is False or cache is None:
        return None
    from memlab.sim.cache import ResultCache

    if cache is True:
        return ResultCache(fresh=fresh)
    if not isinstance(cache, ResultCache):
        raise SimulationError(f"cache must be True, False or a ResultCache, not {cache!r}")
    if fresh:
        cache.fresh = True
    return cache


def _run_contexts(contexts: list[RealContext], todo: dict[str, list[str]],
                  results: dict[tuple[str, str], ScenarioResult], workers: int) -> None:
    """Each release's scenarios in turn; ``workers`` releases at a time (threads: the work is
    in the drivers' processes), else one after another with the next release's driver
    starting meanwhile."""
    from memlab.progress import bar
    from memlab.sim.real_scripts import REAL_SCENARIOS

    def one(ctx: RealContext, cells: Any) -> dict[tuple[str, str], ScenarioResult]:
        out = {}
        try:
            for code in todo[ctx.release]:
                t0 = time.perf_counter()
                measured_at = now_utc()
                res = REAL_SCENARIOS[code](ctx)
                res.cached, res.measured_at = False, measured_at
                res.metrics["seconds"] = round(time.perf_counter() - t0, 2)
                res.unstable = tuple(res.unstable) + ("seconds",)
                out[(release_row(ctx.release), code)] = res
                cells.set_postfix_str(f"elfmem {ctx.release} {code} done")
                cells.update(1)
        finally:
            ctx.close()
        return out

    with bar(total=sum(len(todo[c.release]) for c in contexts), desc="real rows",
             unit="cell") as cells:
        if workers > 1 and len(contexts) > 1:
            from concurrent.futures import ThreadPoolExecutor

            for ctx in contexts[:workers]:
                ctx.start()
            with ThreadPoolExecutor(workers, thread_name_prefix="memlab-release") as pool:
                futures = [pool.submit(one, ctx, cells) for ctx in contexts]
                parts = [f.result() for f in futures]
        else:
            parts = []
            for k, ctx in enumerate(contexts):
                if k + 1 < len(contexts):
                    contexts[k + 1].start()  # the next release's driver starts meanwhile
                parts.append(one(ctx, cells))
    for part in parts:
        results.update(part)


def simplicity(releases: Any = None) -> dict[str, dict[str, int]]:
    """Measured source size of each installed release (``count_source_lines``)."""
    rels = list(RELEASES) if releases is None else list(releases)
    versions = dict.fromkeys(release_version(r) for r in rels)
    return {rel: count_source_lines(release_sources(rel)) for rel in versions}
