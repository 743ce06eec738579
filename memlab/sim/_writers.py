"""One concurrent writer for S8, run as its own OS process (stdlib only, started by path).

    python _writers.py sqlite <db> <writer> <n> <rendezvous-dir>
    python _writers.py files  <repo> <writer> <n> <rendezvous-dir> <append-only 0|1>

Both writers wait at a rendezvous before their first write, then each learns ``n`` blocks and
makes one edit to a shared curated block, the way an agent does: read, think, write. The edit's
read and write are separated by a second rendezvous (both writers have read before either
writes), so the race the scenario is about happens every run rather than when the scheduler
happens to allow it; everything else runs free. The writer prints one JSON line of counts.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

_WAIT_S = 30.0


def _rendezvous(folder: Path, name: str, writer: str, others: int = 2) -> None:
    (folder / f"{name}.{writer}").touch()
    deadline = time.monotonic() + _WAIT_S
    while len(list(folder.glob(f"{name}.*"))) < others:
        if time.monotonic() > deadline:
            raise SystemExit(f"writer {writer}: rendezvous {name} timed out")
        time.sleep(0.002)


def _sqlite(db: Path, writer: str, n: int, folder: Path) -> dict:
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
        write([("INSERT INTO blocks(id, writer, content) VALUES (?, ?, ?)",
                (f"{writer}-{i:03d}", writer, f"block {i} learned by {writer}")),
               ("UPDATE counters SET learned = learned + 1", ())])
    # The shared edit, the same protocol as the file writer's: read the curated block, both have
    # read, then write the whole new content back (read-modify-write, no delta in SQL).
    (text,) = conn.execute("SELECT content FROM curated WHERE id = 1").fetchone()
    _rendezvous(folder, "edit-read", writer)
    new = text.replace("## curated", f"## curated\n+ note by {writer}", 1)
    write([("UPDATE curated SET content = ? WHERE id = 1", (new,))])
    conn.close()
    return {"writer": writer, "busy_retries": busy, "errors": errors}


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "sim", "GIT_AUTHOR_EMAIL": "sim@x",
                               "GIT_COMMITTER_NAME": "sim", "GIT_COMMITTER_EMAIL": "sim@x"})


def _commit(repo: Path, path: str, message: str) -> tuple[int, bool]:
    """git add + commit with retries on index.lock; (retries, committed)."""
    retries = 0
    for attempt in range(40):
        add = _git(repo, "add", path)
        if add.returncode == 0:
            commit = _git(repo, "commit", "-q", "-m", message, "--", path)
            if commit.returncode == 0:
                return retries, True
            if "nothing to commit" in commit.stdout + commit.stderr or \
                    "no changes added" in commit.stdout + commit.stderr:
                # The other writer's commit already carried this change (shared tree).
                return retries, True
        retries += 1
        time.sleep(0.01 * (attempt + 1))
    return retries, False


def _files(repo: Path, writer: str, n: int, folder: Path, append_only: bool) -> dict:
    log = repo / "log" / "2026-08.md"
    notes = repo / "notes" / "curated.md"
    commit_retries = failed_commits = 0
    _rendezvous(folder, "start", writer)
    for i in range(n):
        entry = f"\n## block {i} by {writer}\n<!-- id: {writer}-{i:03d} -->\n\nlearned by {writer}\n"
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
    # The shared edit of a curated block: read the file, both have read, write it back whole.
    text = notes.read_text()
    _rendezvous(folder, "edit-read", writer)
    tmp = notes.with_name(f".curated.{writer}.tmp")
    tmp.write_text(text.replace("## curated\n", f"## curated\n+ note by {writer}\n", 1))
    os.replace(tmp, notes)
    r, ok = _commit(repo, "notes/curated.md", f"edit curated by {writer}")
    commit_retries += r
    failed_commits += 0 if ok else 1
    return {"writer": writer, "commit_retries": commit_retries, "failed_commits": failed_commits}


def main(argv: list[str]) -> int:
    kind, target, writer, n, folder = argv[:5]
    if kind == "sqlite":
        out = _sqlite(Path(target), writer, int(n), Path(folder))
    elif kind == "files":
        out = _files(Path(target), writer, int(n), Path(folder), argv[5] == "1")
    else:
        raise SystemExit(f"unknown writer kind {kind!r}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
