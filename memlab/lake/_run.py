"""One store (run_one) and one task's batch of stores (run_batch): fingerprint, load, audit,
stage the tables. Runs on a Dask worker (or in the client, serially).

The task returns a few scalars (status, kind, seconds, reuse key); the frames never travel
back to the client, so the client's memory does not grow with the number of stores. The staged
files become the lake's few files per partition at the end of the run
(:func:`memlab.lake._layout.compact`).
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

from memlab._escape import terminal_line
from memlab.lake import _lake, _layout

__all__ = ["run_one", "run_batch", "fingerprint", "MESSAGE_CHARS"]

#: Longest failure message kept in the lake (one terminal line, cut with an ellipsis).
MESSAGE_CHARS = 300

#: Files SQLite keeps beside a database; they are part of its state.
_SQLITE_SIDES = ("-wal", "-journal")


def fingerprint(path: Path) -> str:
    """A reuse key: size and mtime of the file (and its SQLite side files), or of every file
    under a folder (``.git`` included, so a new commit or a moved ref changes it) down to
    :data:`~memlab.constants.MAX_FOLDER_DEPTH` levels (a deeper folder counts by its name)."""
    from memlab.errors import StoreNotFound

    h = hashlib.sha256()
    if not path.exists():
        raise StoreNotFound(
            "no such file or folder (listed for this run, gone when its turn came)", path=path
        )
    if path.is_dir():
        from memlab._files import walk

        def too_deep(folder: str) -> None:  # not entered (nor read by the loader): its name counts
            h.update(
                f"{os.path.relpath(folder, path)}/\0too deep\n".encode("utf-8", "surrogateescape")
            )

        for dirpath, dirnames, filenames in walk(path, too_deep=too_deep):
            dirnames.sort()
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                try:
                    st = os.lstat(full)
                except OSError:
                    continue
                rel = os.path.relpath(full, path)
                h.update(
                    f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape")
                )
    else:
        st = path.stat()
        h.update(f"{st.st_size}\0{st.st_mtime_ns}\n".encode())
        for side in _SQLITE_SIDES:
            try:
                st = os.stat(str(path) + side)
            except OSError:
                continue
            h.update(f"{side}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _clear(staging: Path, sid: str) -> None:
    """Remove what this store's task staged so far (a store that fails while being written
    must not leave half its tables beside its failure row)."""
    for old in staging.glob(f"**/{sid}.parquet"):
        old.unlink(missing_ok=True)


def run_one(
    path: str,
    label: str | None,
    staging: str,
    run_date: str,
    as_of: str | None,
    previous_key: str | None = None,
) -> dict[str, Any]:
    """Load and audit the store at ``path`` and stage its tables under ``staging``; never raises.

    ``previous_key``: the store's reuse key in the last run's manifest (None: read it in any
    case); when the store's key is the same, nothing is read or written and the status is
    ``reused`` (the client carries its rows). Returns ``{"store_id", "path", "kind", "status"
    ('ok'|'reused'|'failed'), "seconds", "error_class", "message", "key", "digest",
    "source_version", "tables"}`` (``tables``: the partitions staged, relative).
    """
    from memlab import __version__
    from memlab.errors import MemlabError

    started = time.perf_counter()
    stage_dir = Path(staging)
    p = Path(path)
    sid = _lake.store_id(p)
    out: dict[str, Any] = {
        "store_id": sid,
        "path": str(p),
        "label": label,
        "kind": None,
        "status": "failed",
        "error_class": None,
        "message": None,
        "key": None,
        "digest": None,
        "source_version": None,
        "tables": [],
    }
    stage = "load"
    try:
        digest = fingerprint(p)
        key = f"{__version__}|{as_of}|{digest}"
        out.update(key=key, digest=digest)
        if previous_key is not None and key == previous_key:
            out.update(status="reused")
        else:
            from memlab.audits import audit
            from memlab.sources import load

            store = load(p)
            out["kind"] = store.kind
            out["source_version"] = _layout.source_version(store.meta)
            stage = "audit"
            result = audit(store, as_of=as_of)
            stage = "write"
            name = label or store.name
            files = _lake.write_store(
                stage_dir,
                run_date,
                sid=sid,
                name=name,
                path=str(p),
                kind=store.kind,
                frames=store.frames,
                problems=store.problems,
                headline=result.headline,
            )
            out.update(status="ok", tables=_layout.table_dirs(stage_dir, files))
    except Exception as exc:  # a failure is a row, never an aborted run
        # The path is the row's store_path; the message says what went wrong and what to do.
        message = (
            (exc.message + (f" ({exc.hint})" if exc.hint else ""))
            if isinstance(exc, MemlabError)
            else f"{stage} failed: {exc}"
        )
        out.update(
            status="failed",
            error_class=type(exc).__name__,
            key=None,
            message=terminal_line(message, MESSAGE_CHARS),
        )
        try:
            _clear(stage_dir, sid)
            f = _lake.write_failure(
                stage_dir,
                run_date,
                sid=sid,
                path=str(p),
                kind=out["kind"],
                error_class=out["error_class"],
                message=out["message"],
            )
            out["tables"] = _layout.table_dirs(stage_dir, [f])
        except OSError as write_exc:
            out["message"] += f" (and the failure row could not be written: {write_exc.strerror})"
    out["seconds"] = time.perf_counter() - started
    return out


def run_batch(
    stores: list[tuple[str, str | None, str | None]],
    staging: str,
    run_date: str,
    as_of: str | None,
    name: str,
) -> list[dict[str, Any]]:
    """:func:`run_one` for each ``(path, label, previous_key)``, staged in a folder of this
    batch's own, then merged into one file per table and partition in ``staging``
    (:func:`memlab.lake._layout.merge_staged`); never raises. One row per store, as
    :func:`run_one`'s."""
    import shutil

    own = Path(staging) / f".batch-{name}"
    rows = [run_one(path, label, str(own), run_date, as_of, key) for path, label, key in stores]
    try:
        _layout.merge_staged(own, Path(staging), name)
    except Exception as exc:  # a batch that cannot be merged: each of its stores a failure row
        message = terminal_line(f"write failed: {exc}", MESSAGE_CHARS)
        for row in rows:
            if row["status"] == "ok":
                row.update(
                    status="failed",
                    error_class=type(exc).__name__,
                    message=message,
                    key=None,
                    tables=[],
                )
                try:
                    f = _lake.write_failure(
                        Path(staging),
                        run_date,
                        sid=row["store_id"],
                        path=row["path"],
                        kind=row["kind"],
                        error_class=row["error_class"],
                        message=message,
                    )
                    row["tables"] = _layout.table_dirs(Path(staging), [f])
                except OSError:
                    pass
    finally:
        shutil.rmtree(own, ignore_errors=True)
    return rows
