"""Browse the rows of any store, report run or fleet lake in Datasette, read-only.

:func:`build` writes a new SQLite database (and Datasette's metadata beside it) from what memlab
reads: one table per frame with the store's types, the load problems, every audit table
(``audit_<name>``), the audit headlines and the metric records (``metrics``); full-text search
over content columns, facets on kinds, authors, statuses and rules, links between related rows
(SQLite foreign keys: a finding to its commit and file, a tag or edge to its block) and canned
queries for the headline questions (:mod:`memlab.browse._meta`). The store is never written:
the database goes to a folder of its own, which may not lie inside any path read.

:func:`serve` runs Datasette on that database, immutable (opened read-only), bound to
127.0.0.1; Datasette provides filtering, sorting, CSV and JSON export. Store text reaches the
page only through Datasette's own HTML escaping (no custom template).

Example::

    db = memlab.browse.build(["data/demo/elfmem-demo.db"], "reports/browse")
    memlab.browse.serve(db, port=8001)          # http://127.0.0.1:8001/memlab
"""

from __future__ import annotations

import ipaddress
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterable

from memlab.browse._meta import add_search, canned_queries, links, searched_columns, table_metadata
from memlab.browse._sources import collect
from memlab.browse._sqlite import column_names, create_table, table_name
from memlab.errors import InvalidArgument, MemlabError, OutputExists, require
from memlab.io import replacing_path

__all__ = ["build", "serve", "start", "check_port", "metadata_path", "DB_NAME", "FORMAT"]

#: The database's file name in the output folder (Datasette names the database after it).
DB_NAME = "memlab.db"
#: Marks the metadata memlab wrote, so a rebuild replaces only its own files.
FORMAT = "memlab-browse/1"


def metadata_path(db: str | Path) -> Path:
    """Datasette's metadata for ``db``, written beside it by :func:`build`."""
    db = Path(db)
    return db.with_name(db.stem + ".metadata.json")


def _is_dsn(path: str | Path) -> bool:
    """A source that is not a path (``postgresql://…``, which :func:`memlab.load` reads)."""
    return isinstance(path, str) and "://" in path


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _check_out(out: Path, inputs: list[Path]) -> Path:
    """The output folder, checked: not inside a path read, not holding anything memlab did not
    write under the names it writes."""
    for src in inputs:
        if src.is_dir() and _inside(out, src):
            raise OutputExists(
                "the browse database cannot go inside a path it reads",
                path=out,
                hint=f"choose a --build-only folder outside {src}",
            )
        if src in (out / DB_NAME, metadata_path(out / DB_NAME)):
            raise OutputExists(
                "the browse database would replace a path it reads",
                path=out,
                hint="choose another --build-only folder",
            )
    if out.exists() and not out.is_dir():
        raise OutputExists("not a folder", path=out, hint="give a folder for the database")
    db, meta = out / DB_NAME, metadata_path(out / DB_NAME)
    if db.exists() or db.is_symlink():
        from memlab.formats._json import loads

        try:  # the folder may hold anyone's file: read as untrusted JSON
            doc, _ = loads(meta.read_text(encoding="utf-8", errors="replace"))
            ours = isinstance(doc, dict) and doc.get("memlab") == FORMAT
        except (OSError, ValueError, RecursionError):
            ours = False
        if not ours or db.is_symlink() or not db.is_file():
            raise OutputExists(f"{DB_NAME} there was not written by memlab browse", path=out)
    return db


def build(paths: Iterable[str | Path] | str | Path, out: str | Path) -> Path:
    """Write the browse database for ``paths`` (stores, report runs, fleet lakes) into the
    folder ``out`` (created; a database an earlier ``build`` wrote there is replaced) and
    return its path; Datasette's metadata is :func:`metadata_path` of it."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    sources = [p if _is_dsn(p) else Path(p).expanduser().resolve() for p in paths]
    if not sources:
        raise InvalidArgument("memlab browse needs at least one store, report run or lake")
    inputs = [p for p in sources if isinstance(p, Path)]
    shown = ", ".join(
        p.name if isinstance(p, Path) else "a PostgreSQL database" for p in sources
    )  # never a DSN: it may hold a password
    folder = Path(out).expanduser().resolve()
    db = _check_out(folder, inputs)
    frames, bases, notes = collect(sources)
    if notes:
        import pandas as pd

        frames["browse_notes"], bases["browse_notes"] = pd.DataFrame(notes), ("browse_notes", None)
    folder.mkdir(parents=True, exist_ok=True)
    with replacing_path(db) as tmp:
        tables_meta = _write(Path(tmp), frames, bases)
        metadata = {
            "memlab": FORMAT,
            "title": "memlab browse: " + shown,
            "description": "Read-only rows of " + shown + ", as "
            "memlab reads them. Every table exports as CSV or JSON.",
            "databases": {db.stem: tables_meta},
        }
    metadata_path(db).write_text(
        json.dumps(metadata, indent=1, ensure_ascii=False), encoding="utf-8"
    )
    return db


def _write(path: Path, frames: dict, bases: dict) -> dict:
    named: dict[str, Any] = {}  # table name -> DataFrame
    named_bases: dict[str, tuple[str, str | None]] = {}
    taken: set[str] = set()
    for name in frames:
        df = frames[name].copy()
        df.columns = column_names(list(df.columns))
        sql = table_name(name, taken)
        named[sql] = df
        base, kind = bases[name]
        named_bases[sql] = (table_name(base, set()), kind)
    fts_names = {t: table_name(f"{t}_fts", taken) for t in named}
    keys, fks = links(named, named_bases)
    meta: dict = {"tables": {}}
    con = sqlite3.connect(path)
    try:
        for name, df in named.items():
            columns = create_table(
                con, name, df, primary_key=keys.get(name), foreign_keys=fks.get(name)
            )
            searched = searched_columns(columns)
            fts = fts_names[name] if searched else None
            if fts:
                add_search(con, name, searched, fts)
                meta["tables"][fts] = {"hidden": True}
            stores = (
                sorted({str(s) for s in df["store"].dropna()})
                if "store" in df.columns and name not in ("headline", "metrics")
                else []
            )
            base, kind = named_bases[name]
            split = sum(1 for b, _ in named_bases.values() if b == base) > 1
            meta["tables"][name] = table_metadata(
                name, base, kind, [c for c, _ in columns], df, stores[:5], fts, split
            )
        con.commit()
        if queries := canned_queries(con, named_bases):
            meta["queries"] = queries
    finally:
        con.close()
    return meta


def _loopback(host: str) -> None:
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise InvalidArgument(
            f"memlab browse serves on this machine only, not on {host!r}", hint="use 127.0.0.1"
        )


def check_port(port: int, host: str = "127.0.0.1") -> int:
    """``port`` if Datasette can listen on it at ``host`` (a loopback address) now; else an
    :class:`~memlab.errors.InvalidArgument` saying why, before any work."""
    import socket

    _loopback(host)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise InvalidArgument(f"port {port!r} is not a TCP port (1-65535)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise InvalidArgument(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                hint="choose another --port",
            ) from exc
    return port


def start(
    db: str | Path, port: int, host: str = "127.0.0.1", *, timeout: float = 60.0
) -> subprocess.Popen:
    """Start Datasette on ``db`` (immutable, with its metadata) at ``http://host:port/`` and
    return its process once it answers; stop it with ``terminate()``. ``host`` must be a
    loopback address."""
    require("datasette", "browse", feature="memlab browse")
    check_port(port, host)
    db = Path(db)
    if not db.is_file():
        raise MemlabError("no browse database here", path=db, hint="run memlab browse first")
    argv = [
        sys.executable,
        "-m",
        "datasette",
        "serve",
        "--immutable",
        str(db),
        "--host",
        host,
        "--port",
        str(int(port)),
        "--setting",
        "truncate_cells_html",
        "400",
    ]
    if metadata_path(db).is_file():
        argv += ["--metadata", str(metadata_path(db))]
    # its log goes to a file, never a pipe nobody reads (a full pipe would stall the server)
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    url = f"http://{host}:{int(port)}/-/versions.json"
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                log.seek(0)
                lines = log.read().strip().splitlines()
                raise MemlabError(
                    "Datasette did not start: "
                    + (lines[-1] if lines else f"exit status {proc.returncode}"),
                    path=db,
                )
            try:
                with urllib.request.urlopen(url, timeout=2):
                    return proc
            except (urllib.error.URLError, OSError):
                time.sleep(0.1)
        raise MemlabError(
            f"Datasette did not answer on {host}:{port} within {timeout:.0f} s", path=db
        )
    except BaseException:
        # A failed start, Ctrl-C or SIGTERM while waiting for it: the server never outlives
        # this call (it was left running, re-parented to init, when a signal came here).
        _stop(proc)
        raise


def _stop(proc: subprocess.Popen) -> None:
    """Terminate the server, and kill it if it has not gone within 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serve(db: str | Path, port: int = 8001, host: str = "127.0.0.1") -> int:
    """Run Datasette on ``db`` at ``http://host:port/`` until interrupted (Ctrl-C); its exit
    status. Blocks."""
    proc = None
    try:
        proc = start(db, port, host)  # Ctrl-C while it starts: start() stops the server
        print(f"memlab browse: http://{host}:{port}/{Path(db).stem} (Ctrl-C stops it)", flush=True)
        return proc.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if proc is not None:
            _stop(proc)
