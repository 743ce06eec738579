"""Real-system rows: the scenarios as operator scripts run against shipped elfmem releases.

Each scenario (the scripts are in :mod:`memlab.sim.real.scripts`) is what an operator would do,
typed against the release's own public API
(``MemorySystem`` in the release's venv, see :mod:`memlab.sim.real.releases`), with the real
all-MiniLM-L6-v2 model giving every cosine and a deterministic local LLM (rules in
``memlab/sim/real/_driver.py``) counting every call and token. What a release cannot do is
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

import os
import time
from pathlib import Path
from typing import Any

from memlab._tmp import private_tempdir
from memlab.errors import SimulationError
from memlab.sim.cache import cell_key, env_digest, instance_digest, now_utc, open_cache
from memlab.sim.instance import DOC_INSTANCE, Instance
from memlab.sim.real._common import (
    LLM_STAND_INS,
    PROJECT_SCENARIOS,
    REAL_RULES,
    RULE_LLM,
    RealContext,
    RealParams,
    file_block_text,
    llm_stand_in,
    project_config,
    project_substrate,
    release_row,
)
from memlab.sim.real.releases import (
    RELEASES,
    all_settings,
    check_setting,
    project_mode,
    release_sources,
    release_version,
)
from memlab.sim.scenarios import SCENARIOS, ScenarioResult

__all__ = [
    "RealParams",
    "run_real",
    "release_row",
    "count_source_lines",
    "simplicity",
    "REAL_RULES",
    "RealContext",
    "RULE_LLM",
    "LLM_STAND_INS",
    "llm_stand_in",
    "PROJECT_SCENARIOS",
    "project_config",
    "project_substrate",
    "file_block_text",
]


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
    return {
        "files": files,
        "lines": total,
        "blank": blank,
        "comment": comment,
        "code": total - blank - comment,
    }


# ---- the run --------------------------------------------------------------------------------
def run_real(
    releases: Any = None,
    scenarios: Any = None,
    *,
    instance: Instance | None = None,
    seed: int = 0,
    params: RealParams | None = None,
    workdir: str | Path | None = None,
    workers: int | None = None,
    cache: Any = False,
    fresh: bool = False,
    cached_only: bool = False,
) -> dict[tuple[str, str], ScenarioResult]:
    """Run the scenario scripts against each release; ``{(row, code): ScenarioResult}``.

    ``releases``: None (every setting of :func:`~memlab.sim.real.releases.all_settings`: each
    release in :data:`RELEASES`, then ``0.20.0+project``) or settings (a version, or
    ``<version>+project``: each store opened inside its own project root; such a row runs only
    :data:`PROJECT_SCENARIOS`). ``scenarios``: None (every registered scenario with a real
    script: S1-S11) or registered codes; one whose record names no real script gets no real
    cell (it is not run). Each scenario gets a fresh database under ``workdir`` (a temporary
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
    ``cached_only=True`` runs nothing: only the cells found in the cache come back (none
    without a cache; what the default run's other seeds use).
    """
    rels = all_settings() if releases is None else [check_setting(r) for r in releases]
    from memlab.sim.real.scripts import REAL_SCENARIOS

    codes = list(REAL_SCENARIOS) if scenarios is None else [str(s).upper() for s in scenarios]
    for c in codes:
        if c not in SCENARIOS:
            raise SimulationError(f"unknown scenario {c!r}", hint=", ".join(SCENARIOS))
    # A scenario whose record names no real script has no real cell (not run), and a
    # project-mode setting runs only the scenarios its project-only parts are about.
    cells = {
        rel: [
            c
            for c in codes
            if c in REAL_SCENARIOS and (not project_mode(rel) or c in PROJECT_SCENARIOS)
        ]
        for rel in rels
    }
    inst = instance or DOC_INSTANCE
    params = params or RealParams()
    results: dict[tuple[str, str], ScenarioResult] = {}
    store = open_cache(cache, fresh)
    todo: dict[str, list[str]] = {}
    keys: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    if store is not None:
        from memlab.embed import get_embedder
        from memlab.sim.real.releases import release_env

        digest, embedding = instance_digest(inst), get_embedder().cache_key
        for rel in rels:
            env = env_digest(release_env(rel))
            for code in cells[rel]:
                keys[(rel, code)] = cell_key(
                    release=rel,
                    env=env,
                    scenario=code,
                    params=params,
                    seed=seed,
                    instance=digest,
                    embedding=embedding,
                )
                hit = store.get(keys[(rel, code)][0])
                if hit is None:
                    todo.setdefault(rel, []).append(code)
                else:
                    results[(release_row(rel), code)] = hit
    else:
        todo = {rel: list(cells[rel]) for rel in rels}
    todo = {rel: todo[rel] for rel in rels if todo.get(rel)}
    if cached_only:
        return {
            (release_row(rel), code): results[(release_row(rel), code)]
            for rel in rels
            for code in cells[rel]
            if (release_row(rel), code) in results
        }
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
    return {
        (release_row(rel), code): results[(release_row(rel), code)]
        for rel in rels
        for code in cells[rel]
    }


def _run_contexts(
    contexts: list[RealContext],
    todo: dict[str, list[str]],
    results: dict[tuple[str, str], ScenarioResult],
    workers: int,
) -> None:
    """Each release's scenarios in turn; ``workers`` releases at a time (threads: the work is
    in the drivers' processes), else one after another with the next release's driver
    starting meanwhile."""
    from memlab.progress import bar
    from memlab.sim.real.scripts import REAL_SCENARIOS

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

    with bar(
        total=sum(len(todo[c.release]) for c in contexts), desc="real rows", unit="cell"
    ) as cells:
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
