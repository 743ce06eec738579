"""Running one git command in a checked repository: :func:`run` (its stdout),
:func:`returncode`, :func:`stream` (stdout as it comes) and :func:`pipe` (stdin fed from a
thread, stdout read incrementally). Each checks the repository first
(:func:`memlab._git_check.check_repo`) and adds its overrides. Part of :mod:`memlab._git`,
which re-exports the public names.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator, Mapping, Sequence

from memlab._git_check import check_repo
from memlab._git_process import command, failure, run_unvetted, spawn_unvetted

__all__ = ["run", "returncode", "stream", "STREAM_GATHER_S", "pipe"]


def _config_args(config: Sequence[str]) -> tuple[str, ...]:
    return tuple(a for pair in config for a in ("-c", pair))


def run(
    repo: str | Path,
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    extra_env: Mapping[str, str] | None = None,
    ceiling: bool = True,
    config: Sequence[str] = (),
) -> bytes:
    """Run one hardened git command in ``repo``; its stdout. RepoError on failure (``check``).

    ``config``: extra harmless ``key=value`` settings (e.g. ``diff.renameLimit=2000``), applied
    before the overrides so they can never re-enable a program."""
    repo = Path(repo)
    overrides = _config_args(config) + (check_repo(repo) if repo.is_dir() else ())
    return run_unvetted(
        repo,
        args,
        input=input,
        check=check,
        extra_env=extra_env,
        ceiling=ceiling,
        overrides=overrides,
    ).stdout


def returncode(
    repo: str | Path,
    *args: str,
    input: bytes | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> int:
    """Run one hardened git command for its exit status only."""
    repo = Path(repo)
    overrides = check_repo(repo) if repo.is_dir() else ()
    return run_unvetted(
        repo, args, input=input, check=False, extra_env=extra_env, overrides=overrides
    ).returncode


#: How long :func:`stream` waits after a short read so git's output gathers in the pipe. git log
#: flushes once per commit: read as it arrives, a 10k-commit history came in ~3,300 reads of
#: ~1.3 KB, each a wake-up of the reader (and, with no idle core, a context switch away from
#: git); waiting 4 ms after a read under 64 KB makes it ~90 reads, and git never waits on a full
#: pipe (the pipe is enlarged to 1 MiB where Linux allows; git writes ~10 MB/s).
STREAM_GATHER_S = 0.004
_SHORT_READ = 1 << 16


def stream(repo: str | Path, *args: str, config: Sequence[str] = ()) -> Iterator[bytes]:
    """Yield a hardened git command's stdout as it is produced, in chunks gathered for up to
    :data:`STREAM_GATHER_S` (fewer, larger reads: parsing still overlaps git's own work)."""
    repo = Path(repo)
    overrides = _config_args(config) + (check_repo(repo) if repo.is_dir() else ())
    cmd = command(*args, overrides=overrides)
    with tempfile.TemporaryFile() as err:
        proc = spawn_unvetted(repo, args, cmd, stderr=err)
        _enlarge_pipe(proc.stdout.fileno())
        try:
            while True:
                chunk = proc.stdout.read1(1 << 20)
                if not chunk:
                    break
                yield chunk
                if len(chunk) < _SHORT_READ:
                    time.sleep(STREAM_GATHER_S)
            code = proc.wait()
        finally:
            proc.close()
        if code != 0:
            err.seek(0)
            raise failure(repo, args, code, err.read())


def _enlarge_pipe(fd: int) -> None:
    """Ask Linux for a 1 MiB pipe (``F_SETPIPE_SZ``); elsewhere, or over the system's
    ``pipe-max-size``, the default pipe stays."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass


@contextmanager
def pipe(
    repo: str | Path, *args: str, input: bytes, config: Sequence[str] = ()
) -> Iterator[BinaryIO]:
    """A hardened git command fed ``input`` (from a thread, so neither side can block the
    other) whose stdout is read incrementally: a batch of large blobs is never held twice."""
    repo = Path(repo)
    overrides = _config_args(config) + (check_repo(repo) if repo.is_dir() else ())
    cmd = command(*args, overrides=overrides)
    with tempfile.TemporaryFile() as err:
        proc = spawn_unvetted(repo, args, cmd, stdin=subprocess.PIPE, stderr=err)
        stdin = proc.stdin
        if stdin is None:  # stdin=PIPE above
            raise TypeError("git's stdin is not a pipe")

        def feed() -> None:
            try:
                stdin.write(input)
            except (BrokenPipeError, OSError, ValueError):
                pass
            finally:
                try:
                    stdin.close()
                except OSError:
                    pass

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        try:
            yield proc.stdout
        except BaseException:
            proc.close()
            feeder.join()
            raise
        proc.stdout.close()  # what the caller left unread: git stops (SIGPIPE) as before
        try:
            code = proc.wait()
        finally:
            proc.close()
            feeder.join()
        if code != 0:
            err.seek(0)
            raise failure(repo, args, code, err.read())
