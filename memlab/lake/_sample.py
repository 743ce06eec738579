"""A small fleet of stores of every kind, for the fleet notebook, the tests and the benchmark.

Every store is made from the real stores bundled in ``data/`` (databases the real elfmem
wrote, the demo, real Letta Agent Files) by the same writers memlab uses elsewhere:

* elfmem databases: a copy of a bundled database (SQLite's backup API) with a random share of
  its blocks removed and its lifetime token counters scaled, so amplification, calls per
  surviving block and supersession share spread out across the fleet;
* Agent Files: a bundled ``.af`` whose block values (``blocks``, or a legacy file's
  ``core_memory``) are cut or repeated, so prompt size and limit ratios spread out;
* Letta memfs repos: such an Agent File migrated with :func:`memlab.migrate` (``to="letta"``),
  then a few edit commits so the repos have churn;
* elfmem substrates: a fleet database migrated with ``to="substrate"``;
* one truncated database, which a fleet run must report as a failure row.

The same ``seed`` gives the same stores (git commit dates are fixed, so the same commits).
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from pathlib import Path

from memlab._files import sqlite_uri, walk
from memlab.errors import OutputExists

__all__ = ["make_sample_fleet", "bundled_data"]


def bundled_data() -> Path:
    """The repository's ``data/`` folder (the sample fleet is made from its stores)."""
    return Path(__file__).resolve().parents[2] / "data"


def _elfmem_db(src: Path, dest: Path, rng: random.Random) -> None:
    with sqlite3.connect(sqlite_uri(src, immutable="1"), uri=True) as s, sqlite3.connect(dest) as d:
        s.backup(d)
    conn = sqlite3.connect(dest)
    try:
        ids = [r[0] for r in conn.execute("SELECT id FROM blocks ORDER BY id")]
        drop = rng.sample(ids, int(len(ids) * rng.uniform(0.0, 0.6)))
        conn.executemany("DELETE FROM blocks WHERE id = ?", [(i,) for i in drop])
        row = conn.execute(
            "SELECT value FROM system_config WHERE key = 'lifetime_token_usage'"
        ).fetchone()
        if row:
            usage = json.loads(row[0])
            factor = rng.uniform(0.3, 3.0)
            for key in ("llm_input_tokens", "llm_output_tokens", "llm_calls"):
                if key in usage:
                    usage[key] = int(usage[key] * factor)
            conn.execute(
                "UPDATE system_config SET value = ? WHERE key = 'lifetime_token_usage'",
                (json.dumps(usage),),
            )
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()


def _agent_file(src: Path, dest: Path, rng: random.Random) -> None:
    doc = json.loads(src.read_text(encoding="utf-8"))
    double = isinstance(doc, str)
    if double:
        doc = json.loads(doc)
    legacy = doc.get("core_memory") if isinstance(doc.get("core_memory"), list) else []
    for block in [*doc.get("blocks", []), *legacy]:
        value = block.get("value") or ""
        factor = rng.choice([0.3, 0.6, 1.0, 1.0, 1.5, 3.0])
        if factor < 1:
            block["value"] = value[: int(len(value) * factor)]
        elif factor > 1 and value:
            block["value"] = (value + "\n") * int(factor)
    text = json.dumps(doc, ensure_ascii=False)
    dest.write_text(json.dumps(text) if double else text, encoding="utf-8")


def _git(repo: Path, *args: str, date: str) -> None:
    from memlab import _git as git

    ident = {
        "GIT_AUTHOR_NAME": "Fleet Sample",
        "GIT_AUTHOR_EMAIL": "sample@memlab.invalid",
        "GIT_COMMITTER_NAME": "Fleet Sample",
        "GIT_COMMITTER_EMAIL": "sample@memlab.invalid",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    git.run(repo, *args, extra_env=ident)


def _edit_commits(repo: Path, rng: random.Random, n: int) -> None:
    files = []
    for folder, dirs, names in walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        files += [Path(folder, n) for n in names if n.endswith(".md")]
    files.sort()
    for i in range(n):
        target = rng.choice(files)
        with target.open("a", encoding="utf-8") as fh:
            fh.write(
                f"\n- note {i}: {rng.choice(['prefers', 'asked about', 'corrected'])} "
                f"item {rng.randrange(1000)}\n"
            )
        rel = str(target.relative_to(repo))
        _git(repo, "add", "--", rel, date=f"2026-0{1 + i % 9}-1{i % 10}T10:00:00+00:00")
        _git(
            repo,
            "commit",
            "-q",
            "--no-verify",
            "-m",
            f"update {rel}",
            date=f"2026-0{1 + i % 9}-1{i % 10}T10:00:00+00:00",
        )


def make_sample_fleet(
    dest: str | Path,
    *,
    n_db: int = 8,
    n_af: int = 6,
    n_memfs: int = 4,
    n_substrate: int = 2,
    corrupt: bool = True,
    seed: int = 0,
    force: bool = False,
) -> Path:
    """Write a fleet of small stores under ``dest`` (see the module docstring); return ``dest``.

    Example::

        memlab.lake.make_sample_fleet("reports/fleet-sample")
    """
    from memlab.migrations import migrate

    out = Path(dest).expanduser()
    if out.exists() and any(out.iterdir()):
        if not force:
            raise OutputExists("the sample fleet folder exists and is not empty", path=out)
        shutil.rmtree(out)
    rng = random.Random(seed)
    data = bundled_data()
    dbs = [data / "demo" / "elfmem-demo.db", *sorted((data / "samples" / "elfmem").glob("*.db"))]
    afs = sorted((data / "samples" / "letta-af").glob("*.af"))
    for sub in ("elfmem", "letta-af", "memfs", "substrate"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    made_dbs = []
    for i in range(n_db):
        target = out / "elfmem" / f"agent-{i:03d}.db"
        _elfmem_db(dbs[i % len(dbs)], target, rng)
        made_dbs.append(target)
    made_afs = []
    for i in range(n_af):
        target = out / "letta-af" / f"agent-{i:03d}.af"
        _agent_file(afs[i % len(afs)], target, rng)
        made_afs.append(target)
    for i in range(n_memfs):
        repo = out / "memfs" / f"agent-{i:03d}"
        migrate(made_afs[i % len(made_afs)], repo, to="letta", retrieval=False)
        _edit_commits(repo, rng, rng.randint(2, 12))
    for i in range(n_substrate):
        migrate(
            made_dbs[i % len(made_dbs)],
            out / "substrate" / f"agent-{i:03d}",
            to="substrate",
            retrieval=False,
        )
    if corrupt:
        bad = out / "elfmem" / "corrupt.db"
        bad.write_bytes(made_dbs[0].read_bytes()[:3000])
    return out
