"""The on-disk embedding cache: one SQLite file keyed by (model, SHA-256 of the text).

SQLite rather than .npy shards because two processes (a notebook and a CLI run, or two pytest
workers) may fill the same cache at once: WAL mode gives concurrent readers, ``busy_timeout``
serialises writers (the switch to WAL, which SQLite does not pass to the busy handler, is retried
by :func:`_set_wal`), and ``INSERT OR IGNORE`` makes two writers that embedded the same text agree
without a read-modify-write race. Vectors are stored as raw little-endian float32 bytes, in a
rowid table: a 1.5 kB vector overflows the small cells of a WITHOUT ROWID b-tree, which more than
doubled the file size.

The ``model`` column is the model name for fp32 vectors and ``"<model>|bf16"`` for bf16 ones
(:func:`memlab.embed._precision.cache_model_key`); the ``meta`` table also records, per model
and machine, which precision the bf16 gate chose and the fidelity it measured.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from memlab.errors import MemlabError

__all__ = ["CACHE_FILE", "FORMAT_VERSION", "text_sha256", "default_cache_dir", "EmbeddingCache"]

CACHE_FILE = "embeddings.sqlite3"
FORMAT_VERSION = "1"
# SQLite's default limit on host parameters is 999 on older builds; stay under it.
_CHUNK = 900

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model   TEXT    NOT NULL,
    sha256  TEXT    NOT NULL,
    dim     INTEGER NOT NULL,
    vector  BLOB    NOT NULL,
    PRIMARY KEY (model, sha256)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_cache_dir() -> Path:
    """``$MEMLAB_CACHE_DIR`` or ``~/.cache/memlab/embeddings``."""
    env = os.environ.get("MEMLAB_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "memlab" / "embeddings"


def _set_wal(conn: sqlite3.Connection, wait: float = 60.0) -> str:
    """Switch ``conn``'s file to WAL and return the journal mode it ended in.

    SQLite does not call the busy handler for a journal-mode change: when a second process is
    creating or switching the same new file, ``PRAGMA journal_mode = WAL`` fails at once with
    "database is locked". Retry it for up to ``wait`` seconds, the same bound as ``busy_timeout``,
    rather than disabling the cache (which silently dropped that process's vectors)."""
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.25)


class EmbeddingCache:
    """Vectors by (model, sha256), persistent across processes; ``get`` / ``put`` in bulk."""

    def __init__(self, cache_dir: str | Path) -> None:
        self.dir = Path(cache_dir).expanduser()
        self.path = self.dir / CACHE_FILE
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._disabled_reason: str | None = None

    # A connection must not cross fork(): reopen when the pid changes.
    def _connection(self) -> sqlite3.Connection | None:
        if self._disabled_reason is not None:
            return None
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        conn = None
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=60.0, check_same_thread=False, isolation_level=None
            )
            conn.execute("PRAGMA busy_timeout = 60000")
            mode = _set_wal(conn)
            if str(mode).lower() != "wal":  # pragma: no cover - filesystems without shm
                warnings.warn(
                    f"{self.path}: embedding cache runs in {mode} journal mode; "
                    "concurrent writers will wait on each other",
                    stacklevel=3,
                )
            conn.executescript(_SCHEMA)
            conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('format', ?)", (FORMAT_VERSION,)
            )
            found = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()[0]
            if found != FORMAT_VERSION:
                conn.close()
                raise MemlabError(
                    f"embedding cache format {found!r}, this memlab writes {FORMAT_VERSION!r}",
                    path=self.path,
                    hint="delete the cache file or point MEMLAB_CACHE_DIR elsewhere",
                )
        except (OSError, sqlite3.Error) as exc:
            if conn is not None:
                conn.close()
            # An unwritable cache must not stop an audit; it only costs re-embedding.
            self._disabled_reason = f"{type(exc).__name__}: {exc}"
            warnings.warn(
                f"{self.path}: embedding cache disabled ({self._disabled_reason}); "
                "set MEMLAB_CACHE_DIR to a writable folder",
                stacklevel=3,
            )
            return None
        self._conn, self._pid = conn, os.getpid()
        return conn

    @property
    def enabled(self) -> bool:
        return self._connection() is not None

    def get(self, model: str, keys: Sequence[str], dim: int | None = None) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys`` (hex SHA-256), as a dict key -> float32 vector."""
        conn = self._connection()
        found: dict[str, np.ndarray] = {}
        if conn is None or not keys:
            return found
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), _CHUNK):
                chunk = unique[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    "SELECT sha256, dim, vector FROM vectors "
                    f"WHERE model = ? AND sha256 IN ({marks})",
                    (model, *chunk),
                ).fetchall()
                for sha, row_dim, blob in rows:
                    if dim is not None and row_dim != dim:
                        continue  # a model of the same name with another width: re-embed
                    vec = np.frombuffer(blob, dtype="<f4")
                    if vec.shape[0] != row_dim:
                        continue  # truncated row (disk full mid-write): re-embed it
                    found[sha] = vec.astype(np.float32, copy=True)
        return found

    def put(self, model: str, items: Iterable[tuple[str, np.ndarray]]) -> int:
        """Store vectors in one transaction; returns how many rows were new. Existing rows are
        left as they are."""
        conn = self._connection()
        if conn is None:
            return 0
        rows = [
            (model, key, int(vec.shape[0]), np.asarray(vec, dtype="<f4").tobytes())
            for key, vec in items
        ]
        if not rows:
            return 0
        with self._lock:
            before = conn.total_changes
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR IGNORE INTO vectors(model, sha256, dim, vector) VALUES (?, ?, ?, ?)",
                    rows,
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return conn.total_changes - before

    def get_meta(self, key: str) -> str | None:
        """A value from the cache's ``meta`` table (None if absent or the cache is disabled)."""
        conn = self._connection()
        if conn is None:
            return None
        with self._lock:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Record ``value`` under ``key`` in the ``meta`` table (replacing an older value)."""
        conn = self._connection()
        if conn is None:
            return
        with self._lock:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                "SET value = excluded.value",
                (key, value),
            )

    def count(self, model: str | None = None) -> int:
        conn = self._connection()
        if conn is None:
            return 0
        with self._lock:
            if model is None:
                return conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
            return conn.execute(
                "SELECT count(*) FROM vectors WHERE model = ?", (model,)
            ).fetchone()[0]

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None
