"""One store as one task: fingerprint, load, audit, write to the lake. Runs on a Dask worker.

The task returns a few scalars (status, kind, seconds); the frames never travel back to the
client, so the client's memory does not grow with the number of stores.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from memlab._escape import terminal_line
from memlab.lake import _lake

__all__ = ["run_one", "fingerprint"]

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
        raise StoreNotFound("no such file or folder (listed for this run, gone when its turn came)",
                            path=path)
    if path.is_dir():
        from memlab._files import walk

        def too_deep(folder: str) -> None:  # not entered (nor read by the loader): its name counts
            h.update(f"{os.path.relpath(folder, path)}/\0too deep\n".encode("utf-8", "surrogateescape"))

        for dirpath, dirnames, filenames in walk(path, too_deep=too_deep):
            dirnames.sort()
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                try:
                    st = os.lstat(full)
                except OSError:
                    continue
                rel = os.path.relpath(full, path)
                h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
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


def _state_path(lake: Path, sid: str) -> Path:
    return lake / "_state" / f"{sid}.json"


def _reusable(lake: Path, sid: str, key: str) -> dict[str, Any] | None:
    try:
        state = json.loads(_state_path(lake, sid).read_text())
    except (OSError, ValueError):
        return None
    if state.get("key") != key or state.get("status") != "ok":
        return None
    if not all((lake / f).is_file() for f in state.get("files", [])):
        return None
    return state


def _save_state(lake: Path, sid: str, state: dict[str, Any]) -> None:
    target = _state_path(lake, sid)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(state, sort_keys=True))
    os.replace(tmp, target)


def _clear(lake: Path, sid: str, run_date: str) -> None:
    """Remove what an earlier run on the same date wrote for this store (a store that failed
    then and loads now, or the reverse, must not leave both answers in the lake)."""
    for old in lake.glob(f"**/run_date={run_date}/{sid}.parquet"):
        old.unlink(missing_ok=True)


def run_one(path: str, label: str | None, lake: str, run_date: str, as_of: str | None,
            reuse: bool = True) -> dict[str, Any]:
    """Load and audit the store at ``path`` and write it to ``lake``; never raises.

    Returns ``{"store_id", "path", "kind", "status" ('ok'|'reused'|'failed'), "seconds",
    "error_class", "message"}``.
    """
    from memlab import __version__
    from memlab.errors import MemlabError

    started = time.perf_counter()
    lake_dir = Path(lake)
    p = Path(path)
    sid = _lake.store_id(p)
    out: dict[str, Any] = {"store_id": sid, "path": str(p), "kind": None, "status": "failed",
                           "error_class": None, "message": None}
    stage = "load"
    try:
        key = f"{__version__}|{as_of}|{fingerprint(p)}"
        state = _reusable(lake_dir, sid, key) if reuse else None
        if state is not None:
            files = _lake.link_previous(lake_dir, state["files"], run_date)
            _save_state(lake_dir, sid, {**state, "files": files, "run_date": run_date})
            out.update(kind=state["kind"], status="reused")
        else:
            _clear(lake_dir, sid, run_date)
            from memlab.audits import audit
            from memlab.sources import load

            store = load(p)
            out["kind"] = store.kind
            stage = "audit"
            result = audit(store, as_of=as_of)
            stage = "write"
            name = label or store.name
            files = _lake.write_store(lake_dir, run_date, sid=sid, name=name, path=str(p),
                                      kind=store.kind, frames=store.frames,
                                      problems=store.problems, headline=result.headline)
            _save_state(lake_dir, sid, {"key": key, "kind": store.kind, "files": files,
                                        "status": "ok", "run_date": run_date, "path": str(p)})
            out["status"] = "ok"
    except Exception as exc:  # a failure is a row, never an aborted run
        known = isinstance(exc, MemlabError)
        # The path is the row's store_path; the message says what went wrong and what to do.
        message = (exc.message + (f" ({exc.hint})" if exc.hint else "")) if known \
            else f"{stage} failed: {exc}"
        out.update(status="failed", error_class=type(exc).__name__, 
                   message=terminal_line(message, MESSAGE_CHARS))
        try:
            _clear(lake_dir, sid, run_date)
            _lake.write_failure(lake_dir, run_date, sid=sid, path=str(p), kind=out["kind"],
                                error_class=out["error_class"], message=out["message"])
            _state_path(lake_dir, sid).unlink(missing_ok=True)
        except OSError as write_exc:
            out["message"] += f" (and the failure row could not be written: {write_exc.strerror})"
    out["seconds"] = time.perf_counter() - started
    return out
