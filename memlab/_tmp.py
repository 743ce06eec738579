"""Private temporary folders that never outlive the process.

:func:`private_tempdir` makes ``$TMPDIR/memlab-<purpose>-p<pid>-<random>`` and removes it when the
block ends, including when the process is stopped by SIGTERM (turned into ``SystemExit`` while
such a folder exists, so ``finally`` blocks run) or SIGINT (``KeyboardInterrupt``). A SIGKILL
cannot be caught: every new folder first removes the ``memlab-*-p<pid>-*`` folders of processes
that no longer exist (:func:`sweep_stale`), so a killed run's copy is gone on the next run.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

__all__ = ["private_tempdir", "sweep_stale", "sigterm_as_exit", "pid_alive", "PREFIX"]

PREFIX = "memlab-"
_STALE = re.compile(r"^memlab-[a-z0-9]+-p(\d+)-")
_lock = threading.Lock()
_depth = 0
_previous: Any = None


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def sweep_stale(root: str | Path | None = None) -> list[Path]:
    """Remove memlab temp folders left by processes that are gone; the folders removed."""
    base = Path(root or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    for name in names:
        m = _STALE.match(name)
        if not m or pid_alive(int(m.group(1))):
            continue
        path = base / name
        try:
            if path.is_dir() and not path.is_symlink() and path.stat().st_uid == os.getuid():
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        except OSError:
            continue
    return removed


def _on_sigterm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise SystemExit(128 + signum)


@contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """While inside, SIGTERM raises SystemExit (so cleanup runs) unless the program installed
    its own handler; restored on exit. A no-op outside the main thread."""
    global _depth, _previous
    main = threading.current_thread() is threading.main_thread()
    if main:
        with _lock:
            if _depth == 0:
                current = signal.getsignal(signal.SIGTERM)
                if current in (signal.SIG_DFL, None):
                    _previous = current
                    signal.signal(signal.SIGTERM, _on_sigterm)
                else:
                    _previous = "keep"
            _depth += 1
    try:
        yield
    finally:
        if main:
            with _lock:
                _depth -= 1
                if _depth == 0 and _previous != "keep":
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    _previous = None


@contextmanager
def private_tempdir(purpose: str, root: str | Path | None = None) -> Iterator[Path]:
    """A private folder ``memlab-<purpose>-p<pid>-*`` removed on exit, SIGTERM and SIGINT."""
    sweep_stale(root)
    with sigterm_as_exit():
        path = Path(
            tempfile.mkdtemp(
                prefix=f"{PREFIX}{purpose}-p{os.getpid()}-", dir=None if root is None else str(root)
            )
        )
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)
