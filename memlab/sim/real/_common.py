"""What the real rows' operator scripts share: the parameters (:class:`RealParams`), one
release setting's process and fixtures (:class:`RealContext`), the LLM stand-ins, and the
helpers every script uses (a seeded store, its block rows, cosines, the measured result).

:mod:`memlab.sim.real` runs the scripts (:mod:`memlab.sim.real.scripts`,
:mod:`memlab.sim.real._scale`, :mod:`memlab.sim.real._months`); they take these names from
here, so no script imports the runner and the runner imports the scripts only to run them.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memlab._files import sqlite_uri, walk
from memlab.constants import NEAR_DUP_THRESHOLD
from memlab.errors import SimulationError
from memlab.sim._texts import CONSTITUTION
from memlab.sim.instance import Instance
from memlab.sim.real._write_paths import operator_path, write_paths
from memlab.sim.real.releases import (
    ReleaseProcess,
    check_setting,
    project_mode,
    release_row,
    release_sources,
    release_version,
)
from memlab.sim.registry import ScenarioView
from memlab.sim.rules import RULES
from memlab.sim.scenarios import ScenarioResult

__all__ = [
    "PROJECT_SCENARIOS",
    "DEAD_ENDPOINT",
    "RealParams",
    "REAL_RULES",
    "RULE_LLM",
    "LLM_STAND_INS",
    "llm_stand_in",
    "RealContext",
    "seeded_store",
    "block_rows",
    "role_block",
    "pair_cosine",
    "llm_call_stats",
    "measured_result",
    "project_config",
    "project_substrate",
    "file_block_text",
    "release_row",
    "closest_many",
    "roles_in_order",
    "release_write_path",
]


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
    seed picks); ``s1_path``: "operator" (the release's own write path, discovered from its
    source: :func:`memlab.sim.real._write_paths.operator_path`) or "learn" (learn the new wording
    with the role's tags and consolidate: the doc's fallback for a release with no edit).
    ``s2_targets``: "constitution" (3 of
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
    s1_path: str = "operator"
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
REAL_RULES: Mapping[str, str] = RULES


#: The deterministic local LLM every measured cell's release talks to (memlab/sim/real/_driver.py).
RULE_LLM = (
    "RuleLLM, a deterministic local adapter (memlab/sim/real/_driver.py): summary = the "
    "block's first sentence, tags = none, alignment 0.8/0.3 by shared words, "
    "contradiction 0.9 only for a negation word plus >= 40% shared words, amendments "
    "returned unchanged, no goal edges; it cannot return tags, judge meaning, find a "
    "contradiction without a negation word, or propose a real amendment"
)
#: Per scenario, what stood in for the LLM in its measured cells, where its record
#: (:mod:`memlab.sim.catalog`) names one; the others: RULE_LLM.
LLM_STAND_INS: Mapping[str, str] = ScenarioView(
    lambda record: record.llm, keep=lambda record: record.llm is not None
)


def llm_stand_in(code: str) -> str:
    """What stood in for the LLM in a measured cell of scenario ``code``."""
    return LLM_STAND_INS.get(code, RULE_LLM)


# ---------------------------------------------------------------------------------------------
class RealContext:
    """One release setting's process, scratch folder and memoised fixtures for one run.

    ``release`` is a setting (:func:`memlab.sim.real.releases.check_setting`): a version, whose
    stores are opened with no project, or ``<version>+project``, whose stores are each opened
    inside their own project root (:meth:`new_db`, :meth:`open`)."""

    def __init__(
        self, release: str, instance: Instance, seed: int, params: RealParams, workdir: Path
    ) -> None:
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

    def start(self) -> ReleaseProcess:
        """Start the release's driver process without waiting for it (see ``proc``); the
        process."""
        if self._proc is None:
            self._proc = ReleaseProcess(self.release, workdir=self.workdir)
        return self._proc

    @property
    def proc(self) -> ReleaseProcess:
        proc = self.start()
        self._greeted(proc)
        return proc

    @property
    def methods(self) -> set[str]:
        return set(self._greeted(self.start())["methods"])

    def _greeted(self, proc: ReleaseProcess) -> dict[str, Any]:
        """The driver's hello, asked once."""
        if self.hello is None:
            self.hello = proc.request("hello")
        return self.hello

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
            raise SimulationError(
                f"elfmem {self.version} did not find the project at {db.parent}: {out}"
            )
        return out

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()
            self._proc = None
            self.hello = None


def release_write_path(ctx: RealContext) -> dict[str, Any] | None:
    """The write path an operator rewording a block uses on this release, discovered from its
    source (:func:`memlab.sim.real._write_paths.operator_path`: a public method reaching the
    content-writing query, with the new text as a parameter, reached from the CLI or MCP)."""
    if "write_path" not in ctx.memo:
        ctx.memo["write_path"] = operator_path(write_paths(release_sources(ctx.release)))
    return ctx.memo["write_path"]


def seeded_store(ctx: RealContext, name: str, proc: ReleaseProcess | None = None) -> Path:
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


def block_rows(db: Path) -> list[dict[str, Any]]:
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    try:
        con.row_factory = sqlite3.Row
        cols = {r[1] for r in con.execute("PRAGMA table_info(blocks)")}
        extra = [c for c in ("pinned", "superseded_by") if c in cols]
        rows = [
            dict(r)
            for r in con.execute(
                "SELECT id, content, status, archive_reason, category, created_at"
                + "".join(f", {c}" for c in extra)
                + " FROM blocks"
            )
        ]
        tags: dict[str, list[str]] = {}
        for bid, tag in con.execute("SELECT block_id, tag FROM block_tags"):
            tags.setdefault(bid, []).append(tag)
    finally:
        con.close()
    for r in rows:
        r["tags"] = sorted(tags.get(r["id"], []))
    return rows


def role_block(rows: list[dict[str, Any]], role: str) -> dict[str, Any]:
    """The first active row tagged ``self/role/<role>``; a SimulationError when none is (the
    seeded store holds every role, so the script cannot go on)."""
    for r in rows:
        if r["status"] == "active" and f"self/role/{role}" in r["tags"]:
            return r
    raise SimulationError(f"no active block holds the role {role!r}")


def pair_cosine(proc: ReleaseProcess, a: str, b: str) -> float:
    va, vb = proc.vectors([a.strip().lower(), b.strip().lower()])
    return round(float(va @ vb), 4)


def llm_call_stats(proc: ReleaseProcess) -> dict[str, Any]:
    return proc.request("stats")["llm"]


#: Per scenario: the metric its one-number rule reads (None: a rule of checks) and how many
#: independent draws (trials, targets, queries, changes) the verdict rests on.
_DECIDED_BY: dict[str, tuple[str | None, Any]] = {
    "S1": ("score", 1),
    "S2": ("gone", 3),
    "S3": (None, 1),
    "S4": ("calls_per_block", "batch"),
    "S5": (None, 2),
    "S6": (None, 3),
    "S7": (None, "queries"),
    "S8": (None, "free_trials"),
    "S9": ("share", "changes"),
    "S10": ("roles_intact", "restatements"),
    "S11": ("share", "planted_pairs"),
}


def _stability(code: str, outcome: str, metrics: dict[str, Any]) -> str:
    """Adds ``margin`` (how far the measure is from its nearest threshold) and ``draws`` (how
    many independent draws decided the verdict) to ``metrics``; returns them in words."""
    from memlab.sim.rules import margin

    key, draws = _DECIDED_BY.get(code, (None, None))
    n = metrics.get(draws) if isinstance(draws, str) else draws
    metrics["draws"] = n if isinstance(n, int) else None
    words = []
    value = metrics.get(key) if key else None
    if outcome != "n/a" and isinstance(value, (int, float)) and not isinstance(value, bool):
        metrics["margin"] = margin(code, float(value))
        mg = metrics["margin"]
        words.append(f"{mg['distance']:+g} from the {mg['threshold']:g} threshold")
    elif code == "S7" and "margin_queries" in metrics:
        words.append(f"{metrics['margin_queries']:+g} queries from the retrieval bar")
    if metrics["draws"] is not None:
        one = metrics["draws"] == 1
        words.append(
            f"{metrics['draws']} draw{'s' * (not one)} decided it"
            + (
                ""
                if not one
                else " (one draw: the seed alone can move it)"
                if metrics.get("draw_decides", True)
                else " (the outcome does not depend on what was drawn)"
            )
        )
    return "; ".join(words)


def measured_result(
    ctx: RealContext, code: str, outcome: str, summary: str, metrics: dict[str, Any], **kw: Any
) -> ScenarioResult:
    stability = _stability(code, outcome, metrics)
    if stability:
        summary = f"{summary} [{stability}]"
    return ScenarioResult(
        scenario=code,
        iteration=release_row(ctx.release),
        outcome=outcome,
        summary=summary,
        metrics=metrics,
        basis="measured",
        rule=REAL_RULES[code],
        llm=llm_stand_in(code),
        **kw,
    )


def project_config(db: Path) -> str:
    """The ``.elfmem/config.yaml`` of a project-mode store (JSON strings are YAML strings)."""
    from memlab.formats import _json

    return (
        "project:\n  name: memlab-sim\n  db: " + _json.dumps(str(db)) + "\n"
        "substrate:\n  files_authoritative: true\n"
    )


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
    files = (
        {
            path.relative_to(memory).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(
                Path(d, n) for d, _dirs, names in walk(memory) for n in names if n.endswith(".md")
            )
        }
        if memory.is_dir()
        else {}
    )
    return {"events": events, "files": files}


def file_block_text(files: dict[str, str], block_id: str) -> str | None:
    """The text of block ``block_id`` in the file substrate (what follows its ``<!-- id: ...
    -->`` line up to the next block's ``## `` heading), or None when no file holds it."""
    for text in files.values():
        at = text.find(f"<!-- id: {block_id} ")
        if at < 0:
            continue
        body = text[text.index("\n", at) + 1 :] if "\n" in text[at:] else ""
        end = body.find("\n## ")
        return (body if end < 0 else body[:end]).strip("\n")
    return None


def closest_many(
    proc: ReleaseProcess, groups: list[tuple[str, list[str]]], target: float
) -> list[tuple[str, float]]:
    """For each (anchor, candidates): the candidate whose cosine to the anchor (lowercased,
    as consolidation compares them) is closest to ``target``, and that cosine. Every text of
    every group is embedded in one call."""
    forms = list(
        dict.fromkeys(t.strip().lower() for anchor, cands in groups for t in (anchor, *cands))
    )
    row = {f: i for i, f in enumerate(forms)}
    vecs = proc.vectors(forms) if forms else np.zeros((0, 0), dtype=np.float32)
    out = []
    for anchor, candidates in groups:
        cand = vecs[[row[c.strip().lower()] for c in candidates]]
        cos = cand @ vecs[row[anchor.strip().lower()]]
        i = int(np.argmin(np.abs(cos - target)))
        out.append((candidates[i], round(float(cos[i]), 4)))
    return out


def roles_in_order(ctx: RealContext, *keys: Any) -> list[str]:
    roles = sorted(CONSTITUTION)
    order = ctx.rng(*keys).permutation(len(roles))
    return [roles[i] for i in order]
