"""S8: two real writer processes at once, against SQLite, plain files and git clones.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memlab._tmp import private_tempdir
from memlab.errors import MemlabError, SimulationError
from memlab.sim.iterations import Iteration
from memlab.sim.scenarios._base import Context, ScenarioResult


_S8_BLOCKS_PER_WRITER = 10


# ---- S8: two real writers --------------------------------------------------------------------
def _git_env(home: Path) -> dict[str, str]:
    return {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(home), "GIT_AUTHOR_NAME": "sim", "GIT_AUTHOR_EMAIL": "sim@x",
            "GIT_COMMITTER_NAME": "sim", "GIT_COMMITTER_EMAIL": "sim@x", "GIT_TERMINAL_PROMPT": "0"}


def _git(repo: Path, *args: str, env: dict[str, str],
         check: bool = False) -> subprocess.CompletedProcess:
    """Run git in ``repo``. ``check``: a setup step the measurement rests on; its failure
    raises rather than being counted as a lost block or a push conflict."""
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env)
    if check and proc.returncode != 0:
        raise SimulationError(f"S8 setup: git {' '.join(args[:2])} failed ({proc.returncode}): "
                           f"{proc.stderr.strip()[-500:]}")
    return proc


def _spawn_writers(kind: str, target: Path, n: int, folder: Path, *extra: str,
                   env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    script = Path(__file__).parent.parent / "_writers.py"
    procs = [subprocess.Popen([sys.executable, str(script), kind, str(target), w, str(n),
                               str(folder), *extra], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
             for w in ("A", "B")]
    outs = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            if proc.returncode != 0:
                raise SimulationError(f"S8 writer failed ({proc.returncode}): {err.strip()[-500:]}")
            outs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        # A failed or timed-out writer must not leave its partner (or itself) running.
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return outs


def _s8_sqlite(n: int) -> dict[str, Any]:
    import sqlite3

    with private_tempdir("s8") as root:
        db = root / "memory.db"
        conn = sqlite3.connect(db, isolation_level=None)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        conn.executescript("CREATE TABLE blocks(id TEXT PRIMARY KEY, writer TEXT, content TEXT);"
                           "CREATE TABLE counters(learned INTEGER);"
                           "INSERT INTO counters VALUES (0);"
                           "CREATE TABLE curated(id INTEGER PRIMARY KEY, content TEXT);"
                           "INSERT INTO curated VALUES (1, '## curated');")
        conn.close()
        (root / "rv").mkdir()
        t0 = time.perf_counter()
        outs = _spawn_writers("sqlite", db, n, root / "rv")
        elapsed = time.perf_counter() - t0
        conn = sqlite3.connect(db)
        rows = conn.execute("SELECT count(*) FROM blocks").fetchone()[0]
        counter = conn.execute("SELECT learned FROM counters").fetchone()[0]
        curated = conn.execute("SELECT content FROM curated").fetchone()[0]
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        conn.close()
        edits = curated.count("+ note by")
        return {"journal_mode": mode, "blocks_written": 2 * n, "blocks_present": rows,
                "lost_blocks": 2 * n - rows, "lost_counter_updates": 2 * n - counter,
                "edits_made": 2, "edits_present": edits, "lost_edits": 2 - edits,
                "integrity": integrity, "failed_writes": sum(o["errors"] for o in outs),
                "busy_retries": sum(o["busy_retries"] for o in outs), "seconds": elapsed}


def _s8_files(n: int, append_only: bool) -> dict[str, Any]:
    with private_tempdir("s8") as root:
        env = _git_env(root)
        repo = root / "memory"
        (repo / "log").mkdir(parents=True)
        (repo / "notes").mkdir()
        (repo / "log" / "2026-08.md").write_text("# log 2026-08\n")
        (repo / "notes" / "curated.md").write_text("## curated\nthe shared curated block\n")
        _git(repo, "init", "-q", "-b", "main", env=env, check=True)
        _git(repo, "add", ".", env=env, check=True)
        _git(repo, "commit", "-q", "-m", "base", env=env, check=True)
        (root / "rv").mkdir()
        t0 = time.perf_counter()
        outs = _spawn_writers("files", repo, n, root / "rv", "1" if append_only else "0", env=env)
        elapsed = time.perf_counter() - t0
        text = (repo / "log" / "2026-08.md").read_text() + (repo / "notes" / "curated.md").read_text()
        present = len(set(re.findall(r"<!-- id: ([AB]-\d{3}) -->", text)))
        edits = (repo / "notes" / "curated.md").read_text().count("+ note by")
        commits = int(_git(repo, "rev-list", "--count", "HEAD", env=env,
                           check=True).stdout.strip()) - 1
        dirty = _git(repo, "status", "--porcelain", "--no-optional-locks", env=env).stdout.strip()
        fsck = _git(repo, "fsck", "--no-progress", env=env).returncode == 0
        clone = _s8_clones(root, n, env)
        return {"substrate": "files in git, one working tree",
                "learn_path": "append to log (O_APPEND)" if append_only else
                "rewrite notes file (read, write whole)",
                "blocks_written": 2 * n, "blocks_present": present, "lost_blocks": 2 * n - present,
                "edits_made": 2, "edits_present": edits, "lost_edits": 2 - edits,
                "commits": commits, "uncommitted_after": len(dirty.splitlines()) if dirty else 0,
                "fsck_ok": fsck, "failed_commits": sum(o["failed_commits"] for o in outs),
                "commit_retries": sum(o["commit_retries"] for o in outs), "seconds": elapsed,
                **clone}


def _s8_clones(root: Path, n: int, env: dict[str, str]) -> dict[str, Any]:
    """Two agents on two clones: both append to this month's log, then push. Measured with and
    without ``merge=union`` for log/ in .gitattributes."""
    out: dict[str, Any] = {}
    for union in (False, True):
        base = root / f"clones-{int(union)}"
        origin = base / "origin.git"
        seed = base / "seed"
        seed.mkdir(parents=True)
        (seed / "log").mkdir()
        (seed / "log" / "2026-08.md").write_text("# log 2026-08\n")
        if union:
            (seed / ".gitattributes").write_text("log/*.md merge=union\n")
        _git(seed, "init", "-q", "-b", "main", env=env, check=True)
        _git(seed, "add", ".", env=env, check=True)
        _git(seed, "commit", "-q", "-m", "base", env=env, check=True)
        _git(base, "clone", "-q", "--bare", str(seed), str(origin), env=env, check=True)
        clones = []
        for w in ("A", "B"):
            path = base / w
            _git(base, "clone", "-q", str(origin), str(path), env=env, check=True)
            with open(path / "log" / "2026-08.md", "a") as fh:
                for i in range(n):
                    fh.write(f"\n## block {i} by {w}\n<!-- id: {w}-{i:03d} -->\n")
            _git(path, "commit", "-q", "-am", f"learn by {w}", env=env, check=True)
            clones.append(path)
        conflicts = 0
        for path in clones:
            if _git(path, "push", "-q", "origin", "main", env=env).returncode != 0:
                rebase = _git(path, "pull", "-q", "--rebase", "origin", "main", env=env)
                if rebase.returncode != 0:
                    conflicts += 1
                    _git(path, "rebase", "--abort", env=env)
                else:
                    _git(path, "push", "-q", "origin", "main", env=env)
        check = base / "check"
        _git(base, "clone", "-q", str(origin), str(check), env=env, check=True)
        present = len(set(re.findall(r"<!-- id: ([AB]-\d{3}) -->",
                                     (check / "log" / "2026-08.md").read_text())))
        key = "clones_union" if union else "clones"
        out[f"{key}_conflicts"] = conflicts
        out[f"{key}_blocks_upstream"] = f"{present}/{2 * n}"
    return out


def s8_concurrent(ctx: Context, it: Iteration) -> ScenarioResult:
    n = _S8_BLOCKS_PER_WRITER
    if it.files_authoritative and shutil.which("git") is None:
        raise MemlabError("S8 runs its file writers against a real git repository and needs "
                          "the git command", hint="install git, or leave S8 out of scenarios")
    if not it.files_authoritative:
        m = ctx.memoised(("s8", "sqlite"), lambda: _s8_sqlite(n))
        lost = m["lost_blocks"] + m["lost_counter_updates"] + m["failed_writes"]
        # Same rule as the files arm: lost blocks fail; a lost read-modify-write edit (the
        # protocol's race, identical on both substrates) is partial.
        outcome = ("fail" if lost or m["integrity"] != "ok" else
                   "partial" if m["lost_edits"] else "pass")
        summary = (f"2 processes x {n} blocks + 1 shared edit on SQLite ({m['journal_mode']}): "
                   f"{m['lost_blocks']} blocks lost, {m['lost_edits']} edits lost, "
                   f"integrity {m['integrity']}")
        return ScenarioResult("S8", it.name, outcome, summary, m, [
            {"op": "writers", "detail": summary}], unstable=("busy_retries", "seconds"))
    m = ctx.memoised(("s8", "files", it.learn_append_only),
                     lambda: _s8_files(n, it.learn_append_only))
    if m["lost_blocks"] or m["failed_commits"] or not m["fsck_ok"]:
        outcome = "fail"
    elif m["lost_edits"] or m["clones_conflicts"]:
        outcome = "partial"
    else:
        outcome = "pass"
    summary = (f"2 processes x {n} blocks ({m['learn_path']}) + 1 shared edit: "
               f"{m['lost_blocks']} blocks lost, {m['lost_edits']}/2 edits lost; two clones: "
               f"{m['clones_conflicts']} push conflict(s) ({m['clones_union_conflicts']} with "
               f"merge=union)")
    return ScenarioResult("S8", it.name, outcome, summary, m, [{"op": "writers", "detail": summary}],
                          unstable=("commit_retries", "seconds"))

