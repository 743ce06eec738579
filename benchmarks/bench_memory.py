"""Peak memory of `memlab inspect` / `memlab audit` on a database holding one huge value.

    python benchmarks/bench_memory.py            # one ~1 GB block (953 MiB = 0.999e9 bytes,
                                                 # just under SQLite's 1e9-byte value limit)
    python benchmarks/bench_memory.py --mb 200   # a quicker look

Builds a copy of the shipped elfmem 0.20.0 sample with one extra block whose content is
``--mb`` megabytes of text, then runs each command in its own process and prints that
process's peak RSS (``ru_maxrss`` of the child), the ratio to the value's size, and the ratio
to an anchor measured the same way: a process that only reads that value with ``sqlite3``
(one copy of it, plus the interpreter). Target: `memlab audit` under 2.5 GB for 1 GB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db"

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
    chunk = "the agent remembers a very long note. " * 27  # ~1 KB of text
    size = mb * (1 << 20)
    value = (chunk * (size // len(chunk) + 1))[:size]
    values = dict(zip(cols, row))
    values.update(id="huge", content=value, summary=None, embedding=None, token_count=None)
    conn.execute(f"INSERT INTO blocks ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                 [values[c] for c in cols])
    conn.commit()
    conn.close()
    del value
    return size


def peak_rss(cmd: list[str]) -> tuple[int, int]:
    """(peak RSS in bytes of a child running ``cmd``, its exit status)."""
    pid = os.fork()
    if pid == 0:  # the child: exec the command, so its rusage is the command's alone
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execvpe(cmd[0], cmd, {**os.environ, "PYTHONPATH": str(REPO)})
    _pid, status, usage = os.wait4(pid, 0)
    return usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=953,
                        help="size of the huge value in MiB (SQLite stores at most 1e9 bytes)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memlab-bench-memory-") as tmp:
        db = Path(tmp) / "huge.db"
        size = build(db, args.mb)
        # Old enough that the loader reads it in place instead of copying it first.
        old = os.stat(db).st_mtime - 60
        os.utime(db, (old, old))
        anchor, _ = peak_rss([sys.executable, "-c", _ANCHOR, str(db)])
        print(f"value: {size / 2**20:,.0f} MiB in {db.stat().st_size / 2**20:,.0f} MiB database")
        print(f"{'command':<22} {'peak RSS':>12} {'x value':>8} {'x anchor':>9}  status")
        print(f"{'sqlite3 read (anchor)':<22} {anchor / 2**20:>9,.0f} MiB {anchor / size:>8.2f} "
              f"{1:>9.2f}  0")
        for sub in ("inspect", "audit"):
            rss, code = peak_rss([sys.executable, "-m", "memlab", sub, str(db)])
            print(f"memlab {sub:<15} {rss / 2**20:>9,.0f} MiB {rss / size:>8.2f} "
                  f"{rss / anchor:>9.2f}  {code}")


if __name__ == "__main__":
    main()
