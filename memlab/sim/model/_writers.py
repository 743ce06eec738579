"""One concurrent writer for S8, run as its own OS process (stdlib only, started by path).

    python _writers.py sqlite <db> <writer> <n> <rendezvous-dir> <trials> <seed> <think-s>
    python _writers.py files  <repo> <writer> <n> <rendezvous-dir> <trials> <seed> <think-s> \
        <append-only 0|1>

Both writers wait at a rendezvous before their first write, then each learns ``n`` blocks, then
edits a shared curated block the way an agent does (read, think ``think-s`` seconds, write the
whole content back)
under three schedules, each edit leaving a marker ``+ note by <writer> <schedule><trial>``:

* ``serial``: A reads and writes, then B reads and writes (one trial);
* ``interleaved``: both have read before either writes (a rendezvous between read and write:
  the race happens every time; one trial);
* ``free``: ``trials`` trials; in each, both start together (a rendezvous) and each waits a
  random offset, uniform in [0, 2 x think-s] (drawn from ``seed`` and the writer), before its
  read: whether the edits overlap is up to the scheduler.

Trials are separated by rendezvous, so a marker missing from the final text was lost in its own
trial. The writer prints one JSON line of counts.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["main"]

_WAIT_S = 30.0
#: The agent's thinking between reading the block and writing it back (seconds; set from argv:
#: memlab.sim.model.scenarios.concurrency.S8_THINK_S).
_THINK_S = 0.02


def _rendezvous(folder: Path, name: str, writer: str, others: int = 2) -> None:
    (folder / f"{name}.{writer}").touch()
    deadline = time.monotonic() + _WAIT_S
    while len(list(folder.glob(f"{name}.*"))) < others:
        if time.monotonic() > deadline:
            raise SystemExit(f"writer {writer}: rendezvous {name} timed out")
        time.sleep(0.002)


def _edits(
    folder: Path, writer: str, trials: int, seed: int, read, write, after=lambda: None
) -> dict:
    think = _THINK_S
    """The shared edit under each schedule (module docstring); ``read()`` returns the text,
    ``write(text)`` stores it, ``after()`` finishes it (the files writer's commit). Returns the
    seconds the serial edit's read-to-write took (the window in which a lost update happens)."""
    other = "B" if writer == "A" else "A"

    def edit(marker: str) -> float:
        t0 = time.perf_counter()
        text = read()
        time.sleep(think)
        write(text.replace("## curated", f"## curated\n+ note by {writer} {marker}", 1))
        took = time.perf_counter() - t0
        after()
        return took

    _rendezvous(folder, "serial-start", writer)
    if writer == "B":
        _wait_for(folder / "serial-done.A")
    took = edit("serial0")
    (folder / f"serial-done.{writer}").touch()
    _rendezvous(folder, "serial-end", writer)
    text = read()
    time.sleep(think)
    _rendezvous(folder, "inter-read", writer)
    write(text.replace("## curated", f"## curated\n+ note by {writer} interleaved0", 1))
    after()
    _rendezvous(folder, "inter-end", writer)
    rng = random.Random(seed * 7919 + ord(writer))
    for t in range(trials):
        _rendezvous(folder, f"free-start-{t}", writer)
        time.sleep(rng.uniform(0.0, 2.0 * think))
        edit(f"free{t}")
        _rendezvous(folder, f"free-end-{t}", writer)
    return {"serial_edit_s": took, "other": other}


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + _WAIT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"waiting for {path.name} timed out")
        time.sleep(0.002)


def _sqlite(db: Path, writer: str, n: int, folder: Path, trials: int, seed: int) -> dict:
    conn = sqlite3.connect(db, timeout=10.0, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 10000")
    busy = errors = 0
    _rendezvous(folder, "start", writer)

    def write(statements: list[tuple[str, tuple]]) -> None:
        nonlocal busy, errors
        for attempt in range(50):
            try:
                conn.execute("BEGIN IMMEDIATE")
                for sql, args in statements:
                    conn.execute(sql, args)
                conn.execute("COMMIT")
                return
            except sqlite3.OperationalError:
                busy += 1
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.OperationalError:
                    pass
                time.sleep(0.005 * (attempt + 1))
        errors += 1

    for i in range(n):
        # elfmem's split: read (and compute, the LLM step) outside the write transaction.
        conn.execute("SELECT count(*) FROM blocks").fetchone()
        write(
            [
                (
                    "INSERT INTO blocks(id, writer, content) VALUES (?, ?, ?)",
                    (f"{writer}-{i:03d}", writer, f"block {i} learned by {writer}"),
                ),
                ("UPDATE counters SET learned = learned + 1", ()),
            ]
        )
    # The shared edit, the same protocol as the file writer's: read the curated block, then
    # write the whole new content back (read-modify-write, no delta in SQL).
    timing = _edits(
        folder,
        writer,
        trials,
        seed,
        lambda: conn.execute("SELECT content FROM curated WHERE id = 1").fetchone()[0],
        lambda new: write([("UPDATE curated SET content = ? WHERE id = 1", (new,))]),
    )
    conn.close()
    return {"writer": writer, "busy_retries": busy, "errors": errors, **timing}


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    # The environment is memlab._git's (the parent started this process with it: no system or
    # global config, no inherited GIT_* variable, a fixed identity).
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
    )


def _commit(repo: Path, path: str, message: str) -> tuple[int, bool]:
    """git add + commit with retries on index.lock; (retries, committed)."""
    retries = 0
    for attempt in range(40):
        add = _git(repo, "add", path)
        if add.returncode == 0:
            commit = _git(repo, "commit", "-q", "-m", message, "--", path)
            if commit.returncode == 0:
                return retries, True
            if (
                "nothing to commit" in commit.stdout + commit.stderr
                or "no changes added" in commit.stdout + commit.stderr
            ):
                # The other writer's commit already carried this change (shared tree).
                return retries, True
        retries += 1
        time.sleep(0.01 * (attempt + 1))
    return retries, False


def _files(
    repo: Path, writer: str, n: int, folder: Path, trials: int, seed: int, append_only: bool
) -> dict:
    log = repo / "log" / "2026-08.md"
    notes = repo / "notes" / "curated.md"
    commit_retries = failed_commits = 0
    _rendezvous(folder, "start", writer)
    for i in range(n):
        entry = (
            f"\n## block {i} by {writer}\n<!-- id: {writer}-{i:03d} -->\n\nlearned by {writer}\n"
        )
        if append_only:
            # One write() on an O_APPEND descriptor: the kernel places it at the end atomically.
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, entry.encode())
            finally:
                os.close(fd)
            target = "log/2026-08.md"
        else:
            text = notes.read_text()
            tmp = notes.with_name(f".curated.{writer}.tmp")
            tmp.write_text(text + entry)
            os.replace(tmp, notes)
            target = "notes/curated.md"
        r, ok = _commit(repo, target, f"learn {writer}-{i:03d}")
        commit_retries += r
        failed_commits += 0 if ok else 1

    # The shared edit of a curated block: read the file, write it back whole, commit.
    def put(text: str) -> None:
        tmp = notes.with_name(f".curated.{writer}.tmp")
        tmp.write_text(text)
        os.replace(tmp, notes)

    def commit() -> None:
        nonlocal commit_retries, failed_commits
        r, ok = _commit(repo, "notes/curated.md", f"edit curated by {writer}")
        commit_retries += r
        failed_commits += 0 if ok else 1

    timing = _edits(folder, writer, trials, seed, notes.read_text, put, commit)
    return {
        "writer": writer,
        "commit_retries": commit_retries,
        "failed_commits": failed_commits,
        **timing,
    }


def main(argv: list[str]) -> int:
    global _THINK_S
    kind, target, writer, n, folder, trials, seed, think = argv[:8]
    _THINK_S = float(think)
    if kind == "sqlite":
        out = _sqlite(Path(target), writer, int(n), Path(folder), int(trials), int(seed))
    elif kind == "files":
        out = _files(
            Path(target), writer, int(n), Path(folder), int(trials), int(seed), argv[8] == "1"
        )
    else:
        raise SystemExit(f"unknown writer kind {kind!r}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
