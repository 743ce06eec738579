"""Read an SQLite database without changing anything in its folder, as a consistent snapshot.

Why not ``sqlite3.connect("file:...?mode=ro")``: on a WAL database that open creates ``-wal``
and ``-shm`` files next to the database and writes read marks into ``-shm``, so even a
"read-only" look changes the folder of a live elfmem instance. This module never opens the
source through SQLite's locking layer at all. It takes one of two routes:

``direct``
    No ``-wal`` with frames and no ``-journal`` beside the file, and the file has not been
    written for a couple of seconds: it is opened in place with ``immutable=1``, which tells
    SQLite to take no locks and create no side files. Because SQLite then trusts the file not
    to change, the file's identity (size, mtime, header) is checked again after the read; if a
    writer touched it meanwhile the read is thrown away and retried.

``copy``
    There is a ``-wal`` (rows a live process committed but not yet checkpointed), a hot
    ``-journal``, or the file was written moments ago: the database and its ``-wal`` /
    ``-journal`` are copied into a private temp folder and the copy is opened there, so SQLite
    replays the WAL (or rolls back the journal) on the copy. ``-shm`` is never read or copied;
    SQLite rebuilds the WAL index from the copied WAL. The copy is consistent when the WAL
    header (salts, checkpoint sequence) is the same before the copy, after it and in the copy:
    the WAL is append-only between resets and a reset always changes the salts, so every page a
    concurrent checkpoint wrote into the main file while we copied it is also in our copy of the
    WAL, where SQLite reads it from (frames of a transaction still being written fail their
    checksums and are ignored). Without a WAL, the main file's header (whose change counter a
    rollback-journal commit bumps), size and mtime must be unchanged across the copy.

``wal-link``
    The common live case, a quiet main file with committed frames in its ``-wal``, without
    copying the main file: the main file is hard-linked into the private temp folder (same
    inode, no bytes copied; only possible when the temp folder is on the same filesystem) and
    only the ``-wal`` is copied beside the link, so SQLite, opening the link read-only (file
    descriptor ``O_RDONLY``), replays our copy of the WAL over the live main file. The read is
    consistent when the main file is unchanged (size, mtime, header) from before the WAL copy
    until after the read, and the WAL header is unchanged: in WAL mode only a checkpoint writes
    the main file, so an unchanged main file means every page not in our WAL copy is the page
    our snapshot needs. If the main file changed, the read is thrown away and retried. The
    route is skipped (the ``copy`` route is used) when the link fails (another filesystem, no
    permission), when the file was written in the last seconds, and when this process already
    has the file open (SQLite shares locks and the WAL index per inode within a process, so
    our connection could otherwise use the live ``-shm``). While the read runs the source file
    has one more link and our reader holds SQLite's shared lock on it, as any reader does; its
    bytes and its folder are not changed.

Either way the caller gets a :class:`Snapshot` with a URI any SQLite client (``sqlite3``,
``adbc_driver_sqlite``) can open, and the temp folder is removed when the read finishes, when the
process gets SIGTERM or SIGINT, or
(after a SIGKILL) by the next memlab run (:mod:`memlab._tmp`).

One race is not detected: a WAL-mode database with no ``-wal`` at all, hot, where a process
opens it, commits, checkpoints and closes (removing its ``-wal``) entirely within one mtime tick
of our first look. WAL mode does not bump the change counter, so only the mtime would show it.
The operating system may update the file's access time; no byte and no file name changes.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar, cast

from memlab._files import NotRegularFile, open_regular, sqlite_uri
from memlab._tmp import private_tempdir
from memlab.errors import CorruptStore, SourceError, StoreNotFound, UnrecognizedStore

__all__ = [
    "Snapshot",
    "read_snapshot",
    "check_sqlite_header",
    "SQLITE_MAGIC",
    "BadText",
    "decode_text",
]

T = TypeVar("T")

SQLITE_MAGIC = b"SQLite format 3\x00"
_WAL_MAGICS = (0x377F0682, 0x377F0683)
_WAL_HEADER = 32
_WAL_FRAME_HEADER = 24

# A file written this recently may still be mid-write within one mtime tick, so "mtime
# unchanged" would prove nothing; such files go through the copy route instead.
_QUIET_SECONDS = 2.0

_CORRUPT_HINT = (
    "the file is damaged or not an SQLite database; if it is a real store, "
    "try `sqlite3 <file> .recover` on a copy of it"
)


class BadText(str):
    """A TEXT value whose bytes are not valid UTF-8, decoded with U+FFFD for the bad bytes.

    :func:`decode_text` returns one, so a loader can tell the value was repaired (``type(v) is
    BadText``) and report it; it is a ``str`` everywhere else.
    """

    __slots__ = ()


def decode_text(raw: bytes) -> str:
    """An ``sqlite3`` ``text_factory``: TEXT as ``str``, invalid UTF-8 as a :class:`BadText`.

    SQLite does not check that TEXT is UTF-8, so a store's text can hold any bytes; Python's
    default factory then raises OperationalError for the whole query ("Could not decode to
    UTF-8 column ..."), far from the row. With this factory the row is read and the loader
    reports it.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return BadText(raw.decode("utf-8", "replace"))


@dataclass(frozen=True)
class _FileState:
    size: int
    mtime_ns: int
    ino: int
    head: bytes


@dataclass(frozen=True)
class _Signature:
    main: _FileState
    wal: _FileState | None
    journal: _FileState | None


@dataclass
class Snapshot:
    """One consistent, private view of an SQLite database.

    ``uri`` opens it read-only from any SQLite client; ``method`` says which route was taken
    (``direct``, ``wal-link`` or ``copy``); ``problems`` holds (kind, message) pairs worth
    reporting, such as
    a WAL file whose header is invalid.
    """

    source: Path
    uri: str
    method: str
    wal_bytes: int
    page_size: int
    journal_mode: str
    attempt: int = 1
    problems: list[tuple[str, str]] = field(default_factory=list)

    def connect(self) -> sqlite3.Connection:
        """A read-only ``sqlite3`` connection to the snapshot."""
        conn = sqlite3.connect(self.uri, uri=True, check_same_thread=False)
        conn.execute("PRAGMA query_only = 1")
        return conn

    def info(self) -> dict[str, object]:
        return {
            "method": self.method,
            "wal_bytes": self.wal_bytes,
            "attempt": self.attempt,
            "page_size": self.page_size,
        }


class _SourceChanged(Exception):
    """The source was written while we read it; the read must be repeated."""


def _state(path: Path, head_bytes: int) -> _FileState | None:
    try:
        with open_regular(path) as fh:  # a FIFO -wal/-journal would block the copy: refused
            st = os.fstat(fh.fileno())
            head = fh.read(head_bytes)
    except FileNotFoundError:
        return None
    except NotRegularFile as exc:
        raise SourceError(exc.reason, path=path) from exc
    return _FileState(st.st_size, st.st_mtime_ns, st.st_ino, head)


def _signature(path: Path) -> _Signature:
    main = _state(path, 100)
    if main is None:
        raise _SourceChanged(f"{path} disappeared while being read")
    return _Signature(
        main=main,
        wal=_state(Path(f"{path}-wal"), _WAL_HEADER),
        journal=_state(Path(f"{path}-journal"), 28),
    )


def check_sqlite_header(path: Path) -> tuple[int, str]:
    """Check that ``path`` is a whole SQLite database; return (page_size, journal_mode).

    Raises StoreNotFound, UnrecognizedStore (a folder) or CorruptStore (empty, not SQLite,
    truncated), each naming the file.
    """
    if not path.exists():
        raise StoreNotFound("no such file", path=path)
    if path.is_dir():
        raise UnrecognizedStore("is a folder, not an elfmem SQLite database file", path=path)
    try:
        with open_regular(path) as fh:  # a FIFO passed as the .db: refused, never waited on
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(100)
    except NotRegularFile as exc:
        raise UnrecognizedStore(
            f"{exc.reason}, not an elfmem SQLite database file", path=path
        ) from exc
    except PermissionError as exc:
        raise SourceError(
            f"cannot read: {exc.strerror}",
            path=path,
            hint="memlab needs read permission on the file",
        ) from exc
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror}", path=path) from exc
    if size == 0:
        raise CorruptStore(
            "empty file (0 bytes), not an SQLite database",
            path=path,
            hint="point memlab at the elfmem .db file itself",
        )
    if not head.startswith(SQLITE_MAGIC):
        raise CorruptStore(
            f"not an SQLite database (starts with {head[:16]!r})",
            path=path,
            hint="point memlab at an elfmem .db file; this one is another format",
        )
    if len(head) < 100:
        raise CorruptStore(
            f"truncated: {size} bytes is shorter than the 100-byte SQLite header",
            path=path,
            hint=_CORRUPT_HINT,
        )
    raw_page = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if raw_page == 1 else raw_page
    if page_size < 512 or page_size & (page_size - 1):
        raise CorruptStore(
            f"damaged header: page size {raw_page} is not valid", path=path, hint=_CORRUPT_HINT
        )
    journal_mode = "wal" if head[18] == 2 or head[19] == 2 else "rollback"
    return page_size, journal_mode


def _check_whole(path: Path, state: _FileState, page_size: int) -> None:
    """A main file read without a WAL must hold every page its header promises."""
    if state.size % page_size:
        raise CorruptStore(
            f"truncated or damaged: {state.size} bytes is not a whole number of "
            f"{page_size}-byte pages",
            path=path,
            hint=_CORRUPT_HINT,
        )
    change_counter, header_pages = struct.unpack(">II", state.head[24:32])
    version_valid_for = struct.unpack(">I", state.head[92:96])[0]
    # The in-header page count is only trustworthy when written by SQLite >= 3.7.0, which
    # marks it by copying the change counter into "version-valid-for".
    if header_pages and change_counter == version_valid_for:
        if header_pages * page_size > state.size:
            raise CorruptStore(
                f"truncated: the header promises {header_pages} pages "
                f"({header_pages * page_size} bytes) but the file has {state.size} bytes",
                path=path,
                hint=_CORRUPT_HINT,
            )


def _wal_has_frames(wal: _FileState | None, page_size: int) -> bool:
    return wal is not None and wal.size >= _WAL_HEADER + _WAL_FRAME_HEADER + page_size


def _wal_problem(wal: _FileState) -> str | None:
    magic = struct.unpack(">I", wal.head[:4])[0] if len(wal.head) >= 4 else None
    if magic not in _WAL_MAGICS:
        return (
            "the -wal file beside the database has no valid WAL header; SQLite ignores it, "
            "so any rows only in it cannot be read"
        )
    return None


def _copy_snapshot(
    path: Path, before: _Signature, tmp: Path, page_size: int
) -> tuple[Path, list[tuple[str, str]], bool]:
    """Copy the database and its -wal / hot -journal into ``tmp``; raise _SourceChanged if the
    copy cannot be proven consistent."""
    problems: list[tuple[str, str]] = []
    dest = tmp / path.name
    shutil.copyfile(path, dest)
    copied_journal = False
    if before.wal is not None:
        try:
            shutil.copyfile(f"{path}-wal", f"{dest}-wal")
        except FileNotFoundError as exc:
            raise _SourceChanged("the -wal file vanished during the copy") from exc
        with open(f"{dest}-wal", "rb") as fh:
            copied_head = fh.read(_WAL_HEADER)
        if copied_head != before.wal.head:
            raise _SourceChanged("the WAL was reset during the copy")
        problem = _wal_problem(before.wal)
        if problem:
            problems.append(("wal", problem))
    if before.journal is not None and before.journal.size > 0:
        try:
            shutil.copyfile(f"{path}-journal", f"{dest}-journal")
            copied_journal = True
        except FileNotFoundError as exc:
            raise _SourceChanged("the -journal file vanished during the copy") from exc
    after = _signature(path)
    if before.wal is not None:
        # WAL mode: only a WAL reset (new salts) or the WAL disappearing breaks the copy; the
        # WAL growing or a checkpoint writing the main file does not (see the module doc).
        if (
            after.wal is None
            or after.wal.head != before.wal.head
            or after.wal.ino != before.wal.ino
        ):
            raise _SourceChanged("the WAL was reset or removed during the copy")
    else:
        if after.main != before.main or (after.journal is None) != (before.journal is None):
            raise _SourceChanged("the database was written during the copy")
        if after.wal is not None and _wal_has_frames(after.wal, page_size):
            raise _SourceChanged("a WAL appeared during the copy")
    return dest, problems, copied_journal


# One wal-link read at a time per process: two would share SQLite's per-inode state.
_LINK_LOCK = threading.Lock()


def _open_in_this_process(st_dev: int, st_ino: int) -> bool:
    """Whether this process holds a file descriptor on the inode (Linux; elsewhere: assume
    it does, so the wal-link route is not taken)."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return True
    for fd in fds:
        try:
            st = os.stat(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if st.st_ino == st_ino and st.st_dev == st_dev:
            return True
    return False


def _link_snapshot(
    path: Path,
    real: Path,
    before: _Signature,
    tmp: Path,
    page_size: int,
    journal_mode: str,
    attempt: int,
    reader: Callable[[Snapshot], T],
) -> tuple[bool, T | None]:
    """The wal-link route: (True, result) from a read proven consistent, (False, None) when the
    route is not possible here (the caller copies instead). Raises _SourceChanged to retry."""
    wal = cast(_FileState, before.wal)  # the caller takes this route only when the WAL has frames
    if not _LINK_LOCK.acquire(blocking=False):
        return False, None
    try:
        st = real.stat()
        if st.st_ino != before.main.ino or _open_in_this_process(st.st_dev, st.st_ino):
            return False, None
        dest = tmp / real.name
        try:
            os.link(real, dest, follow_symlinks=False)
        except OSError:
            return False, None  # another filesystem, or links not allowed here
        if dest.stat().st_ino != before.main.ino:
            raise _SourceChanged("the database file was replaced")
        try:
            shutil.copyfile(f"{real}-wal", f"{dest}-wal")
        except FileNotFoundError as exc:
            raise _SourceChanged("the -wal file vanished during the copy") from exc
        with open(f"{dest}-wal", "rb") as fh:
            if fh.read(_WAL_HEADER) != wal.head:
                raise _SourceChanged("the WAL was reset during the copy")
        problems = []
        problem = _wal_problem(wal)
        if problem:
            problems.append(("wal", problem))
        snap = Snapshot(
            path,
            sqlite_uri(dest, mode="ro"),
            "wal-link",
            wal.size,
            page_size,
            journal_mode,
            attempt,
            problems,
        )
        try:
            result = reader(snap)
        except sqlite3.DatabaseError:
            # Whatever the cause (a checkpoint under us, or the file's own damage), the copy
            # route decides: it reads a private copy and reports real damage.
            return False, None
        after = _signature(real)
        if after.main != before.main:
            raise _SourceChanged("a checkpoint wrote the database while it was read")
        if after.wal is None or after.wal.head != wal.head or after.wal.ino != wal.ino:
            raise _SourceChanged("the WAL was reset or removed while it was read")
        return True, result
    finally:
        _LINK_LOCK.release()


def read_snapshot(
    path: str | Path,
    reader: Callable[[Snapshot], T],
    *,
    attempts: int = 5,
    tmp_root: str | Path | None = None,
) -> T:
    """Run ``reader`` on a consistent snapshot of the SQLite database at ``path``.

    Nothing in the database's folder is created, removed or changed. ``reader`` may be called
    more than once if a live writer changes the database during a read; its result is
    returned only from a read proven consistent. SQLite errors raised by ``reader`` become
    :class:`CorruptStore` naming the file. ``tmp_root`` is where the private copy goes
    (default: the system temp folder) when a copy is needed.
    """
    path = Path(path).expanduser()
    page_size, journal_mode = check_sqlite_header(path)
    # SQLite keeps -wal / -journal beside the real file, not beside a symlink to it.
    real = path.resolve()
    last_reason = ""
    for attempt in range(1, attempts + 1):
        if attempt > 1:
            time.sleep(min(0.05 * 2 ** (attempt - 2), 1.0))
        try:
            before = _signature(real)
            hot = time.time() - before.main.mtime_ns / 1e9 < _QUIET_SECONDS
            needs_copy = (
                hot
                or _wal_has_frames(before.wal, page_size)
                or (before.journal is not None and before.journal.size > 0)
            )
            if not needs_copy:
                _check_whole(path, before.main, page_size)
                snap = Snapshot(
                    path,
                    sqlite_uri(real, mode="ro", immutable="1"),
                    "direct",
                    before.wal.size if before.wal else 0,
                    page_size,
                    journal_mode,
                    attempt,
                )
                result = _run(reader, snap, path, real, before)
                if _signature(real).main != before.main:
                    raise _SourceChanged("the database was written while being read")
                return result
            if (
                not hot
                and _wal_has_frames(before.wal, page_size)
                and (before.journal is None or before.journal.size == 0)
            ):
                with private_tempdir("sqlite", tmp_root) as tmp:
                    done, linked = _link_snapshot(
                        path, real, before, Path(tmp), page_size, journal_mode, attempt, reader
                    )
                if done:
                    return cast(T, linked)  # done: the read's own result
            # Removed on return, on SIGTERM/SIGINT, and (after a SIGKILL) by the next run.
            with private_tempdir("sqlite", tmp_root) as tmp:
                try:
                    dest, problems, copied_journal = _copy_snapshot(
                        real, before, Path(tmp), page_size
                    )
                except OSError as exc:
                    if isinstance(exc, FileNotFoundError) and not real.exists():
                        raise StoreNotFound(
                            "the file disappeared while being read", path=path
                        ) from exc
                    raise SourceError(
                        f"cannot make a private snapshot copy in {tmp}: {exc.strerror or exc}",
                        path=path,
                        hint="set TMPDIR to a folder with room for a copy of the database",
                    ) from exc
                if before.wal is None:
                    _check_whole(path, _state(dest, 100), page_size)  # type: ignore[arg-type]
                # A hot journal is rolled back only by a writable connection; the copy is ours.
                params = {"mode": "rw"} if copied_journal else {"mode": "ro"}
                snap = Snapshot(
                    path,
                    sqlite_uri(dest, **params),
                    "copy",
                    before.wal.size if before.wal else 0,
                    page_size,
                    journal_mode,
                    attempt,
                    problems,
                )
                return _run(reader, snap, path, real, before)
        except _SourceChanged as exc:
            last_reason = str(exc)
            continue
    raise SourceError(
        f"the database kept changing while being read ({attempts} attempts; last: {last_reason})",
        path=path,
        hint="retry when the process writing it is idle, or load a backup copy",
    )


def _run(
    reader: Callable[[Snapshot], T], snap: Snapshot, path: Path, real: Path, before: _Signature
) -> T:
    try:
        return reader(snap)
    except sqlite3.DatabaseError as exc:
        # In place, a read can fail because a writer changed the file under it: retry that.
        # A private copy cannot change, so an error there is the file's own.
        if snap.method == "direct" and _signature(real).main != before.main:
            raise _SourceChanged(str(exc)) from exc
        raise CorruptStore(f"SQLite cannot read it: {exc}", path=path, hint=_CORRUPT_HINT) from exc
