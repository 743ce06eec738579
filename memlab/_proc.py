"""The one way memlab starts a process: always with a deadline, always killed as a group.

A store is untrusted input, and a process reading one can wait forever: git blocks opening a
FIFO that a repository's ``objects/info/alternates`` or a symlinked ``refs/heads`` leads to,
and a helper program can simply stop answering. Every process memlab starts goes through
:func:`run` (output collected) or :func:`spawn` (output read as it comes), which

* start the process in a session of its own (``start_new_session``), so that at the deadline
  the whole process group is killed (``SIGKILL``), children included, and reaped;
* take the limit from a :class:`Deadline`: seconds plus the name of the environment variable
  that sets them, so the error (a :class:`~memlab.errors.MemlabError` of the caller's class,
  naming the store) tells the analyst which variable to raise when a large store simply needs
  more time.

:func:`run` counts wall-clock time from the start. A :func:`spawn`'d process's budget is spent
only while memlab waits on it (reading its output, waiting for it to exit): a caller that parses
each chunk slowly does not use up the process's time, and a process that stops producing output
(a hang) still ends at the deadline. ``tests/test_usage_rules.py`` fails when a module starts a
process any other way.
"""

from __future__ import annotations

import io
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Sequence

from memlab.errors import InvalidArgument, MemlabError

__all__ = ["Deadline", "run", "spawn", "Spawned", "deadline_from_env"]


@dataclass(frozen=True)
class Deadline:
    """A process's time limit: ``seconds``, set by the environment variable ``variable``."""

    seconds: float
    variable: str

    def error(
        self, what: str, *, path: str | Path | None, error: type[MemlabError] = MemlabError
    ) -> MemlabError:
        return error(
            f"{what} did not finish within {self.seconds:g} s and was stopped "
            f"(the limit is {self.variable})",
            path=path,
            hint=f"if the store is only large, set {self.variable} to more seconds; "
            "otherwise look for a FIFO or device it leads to",
        )


def deadline_from_env(variable: str, default: float) -> Deadline:
    """The :class:`Deadline` the environment variable ``variable`` sets (seconds, > 0; unset or
    blank: ``default``). InvalidArgument naming the variable for any other value."""
    raw = os.environ.get(variable)
    if raw is None or not raw.strip():
        return Deadline(float(default), variable)
    try:
        value = float(raw.strip())
    except ValueError:
        value = float("nan")
    if not (0 < value <= 86_400 * 7):  # nan fails too
        raise InvalidArgument(
            f"{variable}={raw!r} is not a number of seconds between 0 and 604800",
            hint=f"unset {variable} for the default ({default:g} s)",
        )
    return Deadline(value, variable)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass


def run(
    cmd: Sequence[str],
    *,
    deadline: Deadline,
    what: str,
    path: str | Path | None,
    error: type[MemlabError] = MemlabError,
    input: bytes | str | None = None,
    **popen: Any,
) -> subprocess.CompletedProcess:
    """Run ``cmd`` to the end with its output collected (``capture_output``); at the deadline
    its process group is killed and ``error`` raised, naming ``path`` and the deadline's
    variable. ``what`` says what ran ("git log"). Other keywords go to :class:`subprocess.Popen`
    (``cwd``, ``env``, ``text``...); stdin is closed unless ``input`` is given."""
    popen.setdefault("stdin", subprocess.PIPE if input is not None else subprocess.DEVNULL)
    proc = subprocess.Popen(
        list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **popen
    )
    try:
        out, err = proc.communicate(input, timeout=deadline.seconds)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise deadline.error(what, path=path, error=error) from None
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


class _DeadlineReader(io.RawIOBase):
    """A pipe read only while the owner's budget lasts: each read first waits (``select``) for
    data for at most the time left; when none comes, the process group is killed and the
    owner's error raised."""

    def __init__(self, owner: "Spawned", raw: IO[bytes]) -> None:
        self._owner, self._raw, self._fd = owner, raw, raw.fileno()

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def readinto(self, buffer) -> int:  # type: ignore[override]
        self._owner.wait_readable(self._fd)
        data = os.read(self._fd, len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            try:
                self._raw.close()
            finally:
                super().close()


class Spawned:
    """A process started by :func:`spawn`: ``stdout`` reads (and :meth:`wait` waits) within
    its budget; :meth:`stop` kills its group."""

    def __init__(
        self,
        proc: subprocess.Popen,
        deadline: Deadline,
        what: str,
        path: str | Path | None,
        error: type[MemlabError],
    ) -> None:
        self.proc, self.deadline, self.what = proc, deadline, what
        self.path, self._error = path, error
        self._left = deadline.seconds
        if proc.stdout is None:  # spawn() always pipes it
            raise TypeError("Spawned reads a process started with stdout=subprocess.PIPE")
        self.stdout = io.BufferedReader(_DeadlineReader(self, proc.stdout), 1 << 20)
        self.stdin = proc.stdin

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _spend(self, t0: float) -> None:
        self._left -= time.monotonic() - t0

    def _expired(self) -> MemlabError:
        self.stop()
        return self.deadline.error(self.what, path=self.path, error=self._error)

    def wait_readable(self, fd: int) -> None:
        """Wait until ``fd`` has data (or is at its end) within the budget left."""
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            t0 = time.monotonic()
            ready = sel.select(max(self._left, 0.0))
            self._spend(t0)
        if not ready:
            raise self._expired()

    def wait(self) -> int:
        """The exit status, waited for within the budget left."""
        t0 = time.monotonic()
        try:
            return self.proc.wait(timeout=max(self._left, 0.0))
        except subprocess.TimeoutExpired:
            raise self._expired() from None
        finally:
            self._spend(t0)

    def stop(self) -> None:
        """Kill the process group (if it still runs) and reap it."""
        if self.proc.poll() is None:
            _kill_group(self.proc)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignored
            pass

    def close(self) -> None:
        """Close the pipes; kill the group if it still runs (the caller stopped reading)."""
        for f in (self.stdout, self.stdin):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        if self.proc.poll() is None:
            self.stop()


def spawn(
    cmd: Sequence[str],
    *,
    deadline: Deadline,
    what: str,
    path: str | Path | None,
    error: type[MemlabError] = MemlabError,
    stdin: Any = subprocess.DEVNULL,
    **popen: Any,
) -> Spawned:
    """Start ``cmd`` with stdout a pipe read through its deadline (:class:`Spawned`). The
    caller closes it (``close()``) when done: a process still running then is killed."""
    proc = subprocess.Popen(
        list(cmd), stdout=subprocess.PIPE, stdin=stdin, bufsize=0, start_new_session=True, **popen
    )
    return Spawned(proc, deadline, what, path, error)
