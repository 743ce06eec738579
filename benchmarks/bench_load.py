"""How fast is load_elfmem next to the obvious ways of reading the same rows?

Builds elfmem 0.20.0 (schema 9) databases of 100k and 1M blocks in a temp folder, with the
real DDL (tests/elfmem_schemas.py) and realistic columns: content ~900 characters and summary
~250 (the maintainer's instance averages 904 and 249), a 384-dimension float32 embedding per
block, 4.4 tags per block, edges, contradictions, outcomes, sessions, co-retrieval counts.

For each size it times, in the same run and on the same (page-cached) file:

- ``memlab``: ``load_elfmem(path)``: every frame, typed (UTC times, categories, Int64,
  booleans, char counts, config unpacked), read-only through the snapshot layer;
- ``adbc -> arrow -> pandas`` (the anchor): the ADBC SQLite driver's DB-API, one
  ``fetch_arrow_table().to_pandas()`` per table, same columns, untyped, on one connection;
- ``read_sql_query``: ``pandas.read_sql_query`` of the same columns of the same tables, untyped;
- ``fetchall``: a plain ``sqlite3`` ``cursor.fetchall()`` of the same columns, Python tuples;

and then ``memlab`` again with ``embeddings=True``, and on a live database: a writer in another
process (as elfmem is) holds rows only in the ``-wal``; the ratio of that load to the quiet one
is printed with the snapshot route taken. Figures are printed; nothing about time is asserted.

    .venv/bin/python benchmarks/bench_load.py                 # 100k and 1M
    .venv/bin/python benchmarks/bench_load.py --sizes 100000  # quick
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from elfmem_schemas import build_db  # noqa: E402  (the real 0.20.0 DDL)

from memlab.kinds.elfmem_db._load import FRAME_TABLES, load_elfmem  # noqa: E402

CATEGORIES = ["knowledge"] * 6 + ["observation"] * 2 + ["decision", "mind"]
STATUSES = ["active"] * 76 + ["archived"] * 22 + ["inbox"] * 2
RELATIONS = [("similar", "similarity")] * 5 + [("co_occurs", "co_retrieval")] * 2 + [
    ("replies_to", "agent"), ("predicts", "agent"), ("supports", "agent")]


def _texts(rng: random.Random, n: int, mean_chars: int) -> list[str]:
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10)))
             for _ in range(4000)]
    out = []
    for _ in range(n):
        k = max(3, int(rng.lognormvariate(np.log(mean_chars / 6.5), 0.5)))
        out.append(" ".join(rng.choices(words, k=k)))
    return out


def _iso(rng: random.Random) -> str:
    return (f"2026-{rng.randint(1, 9):02d}-{rng.randint(10, 28)}T{rng.randint(10, 23)}:"
            f"{rng.randint(10, 59)}:{rng.randint(10, 59)}.{rng.randint(0, 999999):06d}+00:00")


def generate(path: Path, n: int, seed: int = 0) -> None:
    """A schema-9 elfmem database of ``n`` blocks with realistic sizes, fully checkpointed."""
    build_db(path, 9, rows=False)
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    # Pools of texts and times, each text made unique by its block's id prefix: reading cost
    # depends on lengths and types, not on how many distinct values there are, and pools keep
    # generating a million rows quick.
    contents = _texts(rng, 20_000, 900)
    summaries = _texts(rng, 20_000, 250)
    times = [_iso(rng) for _ in range(50_000)]
    blobs = [v.tobytes() for v in nrng.standard_normal((1000, 384)).astype(np.float32)]
    # Sorted, so the primary-key index is appended to rather than split at random.
    ids = sorted(f"{x:016x}" for x in nrng.integers(0, 2**63, n, dtype=np.int64))
    status = nrng.choice(STATUSES, n).tolist()
    floats = nrng.random((n, 6)).tolist()
    ints = nrng.integers(0, 50_000, (n, 4)).tolist()
    lambdas = [1e-5, 0.001, 0.01, 0.05]
    reasons = ["superseded", "decayed", "forgotten"]
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("PRAGMA synchronous = OFF")
    # Bulk load without the secondary indexes, then build them once: same schema, far quicker.
    indexes = con.execute("SELECT name, sql FROM sqlite_master "
                          "WHERE type = 'index' AND sql IS NOT NULL").fetchall()
    for name, _ in indexes:
        con.execute(f'DROP INDEX "{name}"')

    def blocks():
        for i, bid in enumerate(ids):
            st, f, k = status[i], floats[i], ints[i]
            content = f"[{bid}] " + contents[k[0] % 20_000]
            yield (bid, content, CATEGORIES[k[1] % 10], "api", times[k[2]], st,
                   reasons[k[3] % 3] if st == "archived" else None, int(i % 500 == 0), None,
                   f[0], k[1] % 90, lambdas[k[3] % 4], f[1] * 4000, f[2],
                   blobs[i % 1000], "text-embedding-3-small", len(content) // 4,
                   summaries[k[3] % 20_000] if st != "inbox" else None,
                   None, f[3] * 3, 0.5 + f[4], 0.5 + f[5], None, "private", None,
                   times[k[0]] if i % 7 else None,
                   "when asked about x" if i % 3 == 0 else None,
                   ("durable", "standard", None)[k[2] % 3])

    cols = ("id, content, category, source, created_at, status, archive_reason, pinned, "
            "superseded_by, confidence, reinforcement_count, decay_lambda, last_reinforced_at, "
            "self_alignment, embedding, embedding_model, token_count, summary, "
            "last_session_id, outcome_evidence, success_count, failure_count, source_peer, "
            "share, envelope_json, last_scored_at, cue, volatility_class")
    con.execute("BEGIN")
    con.executemany(f"INSERT INTO blocks ({cols}) VALUES ({', '.join('?' * 28)})", blocks())
    tags = ["self/role/x", "git", "tools", "safety", "backups", "ops", "python", "user/pref"]
    per_block = nrng.choice([3, 4, 5, 6], n).tolist()  # 4.5 on average (elfmem's 4.4)
    con.executemany("INSERT OR IGNORE INTO block_tags VALUES (?, ?)",
                    ((bid, tags[(i + j) % 8]) for i, bid in enumerate(ids)
                     for j in range(per_block[i])))
    con.executemany(
        "INSERT OR IGNORE INTO edges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ((ids[i], ids[(i * 7 + 1) % n], floats[i][0], ints[i][0] % 50, times[ints[i][1]],
          *RELATIONS[i % len(RELATIONS)], floats[i][1] * 4000, None, None)
         for i in range(0, n, 3)))
    con.executemany(
        "INSERT OR IGNORE INTO contradictions VALUES (?, ?, ?, ?, ?, ?, ?)",
        ((ids[i], ids[(i + 1) % n], 0.9 + floats[i][2] / 10, i % 2, times[ints[i][2]],
          ("contradiction", "near_duplicate")[i % 2], None) for i in range(0, n, 10)))
    con.executemany(
        "INSERT INTO block_outcomes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ((f"{i:032x}", ids[i], floats[i][3], 1.0, "user", 0.5, 0.6, times[ints[i][3]])
         for i in range(0, n, 20)))
    con.executemany(
        "INSERT INTO sessions VALUES (?, ?, ?, ?, ?)",
        ((f"s{i:015x}", "general", times[ints[i][0]], times[ints[i][1]], i / 100.0)
         for i in range(n // 2)))
    con.executemany(
        "INSERT OR IGNORE INTO co_retrieval_staging VALUES (?, ?, ?)",
        ((ids[i], ids[(i + 3) % n], 1 + ints[i][2] % 9) for i in range(0, n, 8)))
    con.executemany("INSERT INTO system_config VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                    "value = excluded.value",
                    [("total_active_hours", "4012.5"), ("top_k", "5"),
                     ("lifetime_token_usage", '{"llm_calls": 2903, "llm_input_tokens": 1646801,'
                      ' "llm_output_tokens": 60186, "embedding_calls": 49,'
                      ' "embedding_tokens": 0}')])
    con.execute("COMMIT")
    for _, sql in indexes:
        con.execute(sql)
    con.execute("PRAGMA journal_mode = WAL")  # as live elfmem instances are
    con.close()
    # Quiet (not written in the last seconds), so memlab may read it in place.
    then = time.time() - 600
    os.utime(path, (then, then))


def _queries(path: Path) -> list[str]:
    """The same SELECTs memlab issues: every column it reads, from every table it reads."""
    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    out = []
    for table, spec in FRAME_TABLES.values():
        present = [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]
        cols = [c for c, _ in spec if c in present]
        if cols:
            out.append(f"SELECT {', '.join(cols)} FROM {table}")
    con.close()
    return out


def _fetchall(path: Path, queries: list[str]) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    n = sum(len(con.execute(q).fetchall()) for q in queries)
    con.close()
    return n


def _read_sql(path: Path, queries: list[str]) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    n = sum(len(pd.read_sql_query(q, con)) for q in queries)
    con.close()
    return n


def _adbc_pandas(path: Path, queries: list[str]) -> int:
    import adbc_driver_sqlite.dbapi as adbc

    from memlab._files import sqlite_uri

    n = 0
    with adbc.connect(sqlite_uri(path, mode="ro", immutable="1")) as con:
        for q in queries:
            with con.cursor() as cur:
                cur.execute(q)
                n += len(cur.fetch_arrow_table().to_pandas())
    return n


_WRITER = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA wal_autocheckpoint = 0")
con.execute("BEGIN")
con.executemany("INSERT INTO block_tags VALUES (?, 'live')",
                ((f"live{i:012d}",) for i in range(1000)))
con.execute("COMMIT")
print("ok", flush=True)
sys.stdin.readline()
"""


def _memlab(path: Path, **kw) -> int:
    store = load_elfmem(path, **kw)
    return int(sum(len(df) for name, df in store.frames.items() if name != "config"))


def _best(fn, repeat: int) -> tuple[float, float, int]:
    """Best wall time and best CPU time (all threads of this process) of ``repeat`` runs."""
    walls, cpus, n = [], [], 0
    for _ in range(repeat):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        n = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), n


def _warm(path: Path) -> None:
    with open(path, "rb") as fh:
        while fh.read(1 << 24):
            pass


def run(n: int, tmp: Path, repeat: int) -> None:
    db = tmp / f"elfmem-{n}.db"
    t = time.perf_counter()
    generate(db, n)
    print(f"\n== {n:,} blocks: generated in {time.perf_counter() - t:.1f} s, "
          f"{db.stat().st_size / 1e9:.2f} GB; {len(os.sched_getaffinity(0))} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    queries = _queries(db)
    _warm(db)
    readers = [("memlab load_elfmem (typed)", lambda: _memlab(db)),
               ("adbc -> arrow -> pandas (anchor)", lambda: _adbc_pandas(db, queries)),
               ("pandas.read_sql_query", lambda: _read_sql(db, queries)),
               ("sqlite3 fetchall", lambda: _fetchall(db, queries))]
    results: dict[str, tuple[float, float, int]] = {}
    # Round-robin, best of N: on a shared machine, load swings hit every reader alike.
    for _ in range(repeat):
        for name, fn in readers:
            wall, cpu, rows = _best(fn, 1)
            old = results.get(name, (wall, cpu, rows))
            results[name] = (min(wall, old[0]), min(cpu, old[1]), rows)
    for side in (Path(f"{db}-wal"), Path(f"{db}-shm")):  # left by the mode=ro baselines
        side.unlink(missing_ok=True)
    base_wall, base_cpu, _ = results["adbc -> arrow -> pandas (anchor)"]
    print(f"{'reader':34s} {'rows':>10s} {'wall s':>7s} {'ratio':>6s} {'cpu s':>7s} {'ratio':>6s}"
          f"   (ratio = vs the adbc -> arrow -> pandas anchor)")

    def line(name: str, wall: float, cpu: float, rows: int | None = None, note: str = "") -> None:
        shown = f"{rows:10,d}" if rows is not None else " " * 10
        print(f"{name:34s} {shown} {wall:7.2f} {wall / base_wall:5.2f}x {cpu:7.2f} "
              f"{cpu / base_cpu:5.2f}x {note}")

    for name, (wall, cpu, rows) in results.items():
        line(name, wall, cpu, rows)
    print(f"same rows in all four: {len({r for _, _, r in results.values()}) == 1}")

    wall, cpu, _ = _best(lambda: _memlab(db, embeddings=True), 1)
    line("memlab, embeddings=True", wall, cpu)

    # A live instance: a writer in another process holds rows only in the -wal.
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "ok"
        then = time.time() - 600
        os.utime(db, (then, then))  # the main file is quiet; only the -wal is new
        wal_bytes = Path(f"{db}-wal").stat().st_size
        live_wall, live_cpu, _ = _best(lambda: _memlab(db), repeat)
        store = load_elfmem(db)
        quiet_wall = results["memlab load_elfmem (typed)"][0]
        line("memlab, live -wal", live_wall, live_cpu,
             note=f"(wal {wal_bytes / 1e6:.1f} MB, route={store.meta['snapshot']['method']}, "
                  f"wal rows seen={int((store.tags.tag == 'live').sum())}; "
                  f"{live_wall / quiet_wall:.2f}x the quiet load)")
    finally:
        writer.stdin.close()
        writer.wait()
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    db.unlink()
    for side in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        side.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeat", type=int, default=2, help="best of N per reader")
    parser.add_argument("--tmp", default=None, help="where to build the databases")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memlab-bench-", dir=args.tmp) as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            run(n, Path(tmp), args.repeat)


if __name__ == "__main__":
    main()
