"""Peak memory of `memlab inspect` / `memlab audit` on a store holding one huge value.

    python benchmarks/bench_memory.py            # one ~1 GB block (953 MiB = 0.999e9 bytes,
                                                 # just under SQLite's 1e9-byte value limit)
    python benchmarks/bench_memory.py --mb 300   # the size issue 23 names
    python benchmarks/bench_memory.py --only letta-sqlite,agent-file

Builds each store with one block whose value is ``--mb`` MiB of text, then runs each command
in its own process and prints that process's peak RSS (``ru_maxrss`` of the child), the ratio to
the value's size, and the ratio to an anchor measured the same way: a process that only reads
that value with ``sqlite3`` (one copy of it, plus the interpreter). The stores:

- ``elfmem``: a copy of the shipped elfmem 0.20.0 sample with one extra block (read whole);
- ``letta-sqlite``: the shipped Letta 0.11.7 server database with one block's value replaced
  (past memlab's cap: measured and not read, an ``oversized`` problem row);
- ``letta-pg``: the shipped Letta 0.16.8 dump restored into a throwaway PostgreSQL cluster
  (``tests/pg_cluster.py``; needs Debian's ``postgresql``), the value made by the server;
- ``agent-file``: the shipped ``deep_research_agent.af`` (v2) with one block's value replaced;
  capped at 240 MiB, under the loader's 256 MiB file cap (a larger file is refused unread).

Target (issue 23): under 2.5x the value for `memlab inspect` and `memlab audit` of each.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db"
LETTA_SQLITE = REPO / "data" / "samples" / "letta-server" / "letta-0.11.7.db"
LETTA_DUMP = REPO / "data" / "samples" / "letta-server" / "letta-0.16.8.sql"
AGENT_FILE = REPO / "data" / "samples" / "letta-af" / "deep_research_agent.af"
CHUNK = "the agent remembers a very long note. " * 27  # ~1 KB of text
#: the largest .af value measured: the file must stay under the loader's 256 MiB cap
AF_MAX_MB = 240
CASES = ("elfmem", "letta-sqlite", "letta-pg", "agent-file")

_ANCHOR = """
import sqlite3, sys
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro&immutable=1", uri=True)
value = conn.execute("SELECT content FROM blocks WHERE id = 'huge'").fetchone()[0]
print(len(value))
"""


def build(path: Path, mb: int) -> int:
    shutil.copyfile(SAMPLE, path)
    conn = sqlite3.connect(path)
    row = conn.execute("SELECT * FROM blocks LIMIT 1").fetchone()
    cols = [d[0] for d in conn.execute("SELECT * FROM blocks LIMIT 1").description]
    size = mb * (1 << 20)
    value = _text(size)
    values = dict(zip(cols, row))
    values.update(id="huge", content=value, summary=None, embedding=None, token_count=None)
    conn.execute(f"INSERT INTO blocks ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                 [values[c] for c in cols])
    conn.commit()
    conn.close()
    del value
    return size


def _text(size: int) -> str:
    return (CHUNK * (size // len(CHUNK) + 1))[:size]


def _old(path: Path) -> None:
    # Old enough that a loader reads it in place instead of copying it first.
    old = os.stat(path).st_mtime - 60
    os.utime(path, (old, old))


def build_letta_sqlite(path: Path, mb: int) -> int:
    shutil.copyfile(LETTA_SQLITE, path)
    size = mb * (1 << 20)
    conn = sqlite3.connect(path)
    value = _text(size)
    conn.execute("UPDATE block SET value = ? WHERE id = (SELECT id FROM block ORDER BY id LIMIT 1)",
                 (value,))
    conn.commit()
    conn.close()
    del value
    _old(path)
    return size


def build_agent_file(path: Path, mb: int) -> int:
    doc = json.loads(AGENT_FILE.read_text(encoding="utf-8"))
    size = mb * (1 << 20)
    doc["blocks"][0]["value"] = _text(size)
    path.write_text(json.dumps(doc), encoding="utf-8")
    del doc
    return size


def letta_pg(folder: Path, mb: int):
    """(the cluster, started, with one block's value ``mb`` MiB long; its size) or None."""
    sys.path.insert(0, str(REPO / "tests"))
    from pg_cluster import PgCluster, pg_bindir

    if pg_bindir() is None:
        return None
    pg = PgCluster(folder).start()
    pg.restore("letta", LETTA_DUMP)
    size = mb * (1 << 20)
    reps = size // len(CHUNK) + 1
    pg.psql("letta", f"UPDATE block SET value = substr(repeat('{CHUNK}', {reps}), 1, {size}) "
                     "WHERE id = (SELECT id FROM block ORDER BY id LIMIT 1)")
    return pg, size


def peak_rss(cmd: list[str]) -> tuple[int, int]:
    """(peak RSS in bytes of a child running ``cmd``, its exit status)."""
    pid = os.fork()
    if pid == 0:  # the child: exec the command, so its rusage is the command's alone
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execvpe(cmd[0], cmd, {**os.environ, "PYTHONPATH": str(REPO)})
    _pid, status, usage = os.wait4(pid, 0)
    return usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


def _measure(case: str, source: str, size: int, anchor: int) -> None:
    for sub in ("inspect", "audit"):
        rss, code = peak_rss([sys.executable, "-m", "memlab", sub, source])
        print(f"{case:<13} memlab {sub:<8} {rss / 2**20:>9,.0f} MiB {size / 2**20:>8,.0f} MiB "
              f"{rss / size:>8.2f} {rss / anchor:>9.2f}  {code}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=953,
                        help="size of the huge value in MiB (SQLite stores at most 1e9 bytes)")
    parser.add_argument("--only", default=",".join(CASES),
                        help=f"comma-separated cases to run, of {', '.join(CASES)}")
    args = parser.parse_args()
    cases = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {unknown}; choose from {', '.join(CASES)}")
    with tempfile.TemporaryDirectory(prefix="memlab-bench-memory-") as tmp:
        db = Path(tmp) / "huge.db"
        size = build(db, args.mb)
        _old(db)
        anchor, _ = peak_rss([sys.executable, "-c", _ANCHOR, str(db)])
        print(f"value: {size / 2**20:,.0f} MiB; load average {os.getloadavg()[0]:.2f}")
        print(f"{'case':<13} {'command':<15} {'peak RSS':>12} {'value':>12} {'x value':>8} "
              f"{'x anchor':>9}  status")
        print(f"{'elfmem':<13} {'sqlite3 read':<15} {anchor / 2**20:>9,.0f} MiB "
              f"{size / 2**20:>8,.0f} MiB {anchor / size:>8.2f} {1:>9.2f}  0 (the anchor)")
        if "elfmem" in cases:
            _measure("elfmem", str(db), size, anchor)
        db.unlink()
        if "letta-sqlite" in cases:
            letta = Path(tmp) / "letta.db"
            _measure("letta-sqlite", str(letta), build_letta_sqlite(letta, args.mb), anchor)
            letta.unlink()
        if "agent-file" in cases:
            af = Path(tmp) / "huge.af"
            _measure("agent-file", str(af), build_agent_file(af, min(args.mb, AF_MAX_MB)), anchor)
            af.unlink()
        if "letta-pg" in cases:
            made = letta_pg(Path(tmp) / "pg", args.mb)
            if made is None:
                print("letta-pg: skipped (no PostgreSQL server binaries)")
            else:
                pg, pg_size = made
                try:
                    _measure("letta-pg", pg.dsn("letta"), pg_size, anchor)
                finally:
                    pg.stop()
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
