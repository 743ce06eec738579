"""A throwaway PostgreSQL cluster from Debian's ``postgresql`` package, for tests and fixtures.

``initdb`` refuses to run as root, so when the caller is root (as CI is) the cluster runs as the
``postgres`` user that Debian's package creates (or ``nobody``), in a temporary folder that user
owns. It listens on 127.0.0.1 on a free port and on a private Unix socket folder; trust
authentication for the ``letta`` superuser and for ``memlab_reader``, a plain login role that
:meth:`PgCluster.restore` grants SELECT on the restored tables (memlab refuses to read over a
superuser connection, so :meth:`PgCluster.dsn` names the reader unless told otherwise);
``fsync=off`` (nothing here needs durability).

    with PgCluster(tmp_path / "pg") as pg:
        pg.psql("postgres", "CREATE DATABASE letta")
        dsn = pg.dsn("letta")
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
from pathlib import Path

SUPERUSER = "letta"
READER = "memlab_reader"


def pg_bindir() -> Path | None:
    """Debian's newest PostgreSQL server binaries, or None when the package is not installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgCluster:
    def __init__(self, folder: Path) -> None:
        bindir = pg_bindir()
        if bindir is None:
            raise RuntimeError("PostgreSQL server binaries not found (apt-get install postgresql)")
        self.bindir = bindir
        self.folder = Path(folder)
        self.port = _free_port()
        self.user = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                try:
                    self.user = pwd.getpwnam(name)
                    break
                except KeyError:
                    continue

    def _as_user(self, cmd: list[str]) -> list[str]:
        cmd = [str(c) for c in cmd]
        if self.user is None:
            return cmd
        return ["runuser", "-u", self.user.pw_name, "--", *cmd]

    def run(self, cmd: list[str], *, stdin: str | None = None) -> str:
        """Run a PostgreSQL client binary (by name) against this cluster; its stdout."""
        exe = self.bindir / cmd[0]
        env = dict(os.environ, PGHOST="127.0.0.1", PGPORT=str(self.port), PGUSER=SUPERUSER)
        proc = subprocess.run(self._as_user([str(exe), *cmd[1:]]), input=stdin, text=True,
                              capture_output=True, env=env, cwd=self.folder)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {proc.stderr.strip()[:2000]}")
        return proc.stdout

    def psql(self, db: str, sql: str) -> str:
        return self.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db], stdin=sql)

    def restore(self, db: str, dump: Path) -> None:
        """Create ``db``, load a plain-SQL dump into it, and let :data:`READER` read it."""
        self.psql("postgres", f'CREATE DATABASE "{db}"')
        self.psql(db, Path(dump).read_text(encoding="utf-8"))
        self.grant_reader(db)

    def grant_reader(self, db: str, schema: str = "public") -> None:
        """SELECT on every table of ``schema`` in ``db`` for :data:`READER`."""
        self.psql(db, f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO {READER}')

    def dsn(self, db: str, user: str = READER, password: str | None = None) -> str:
        auth = user if password is None else f"{user}:{password}"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{db}"

    def start(self) -> "PgCluster":
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.user is not None:
            os.chown(self.folder, self.user.pw_uid, self.user.pw_gid)
            # Every parent must be traversable by the cluster's user.
            for parent in self.folder.parents:
                if parent == Path("/"):
                    break
                mode = parent.stat().st_mode
                if not mode & 0o001:
                    os.chmod(parent, mode | 0o001)
        data, sock = self.folder / "data", self.folder / "sock"
        for sub in (sock,):
            sub.mkdir(exist_ok=True)
            if self.user is not None:
                os.chown(sub, self.user.pw_uid, self.user.pw_gid)
        subprocess.run(self._as_user([self.bindir / "initdb", "-D", data, "-A", "trust", "-U",
                                      SUPERUSER, "-E", "UTF8", "--locale=C", "-N"]),
                       check=True, capture_output=True, cwd=self.folder)
        opts = (f"-p {self.port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c full_page_writes=off -c synchronous_commit=off")
        proc = subprocess.run(self._as_user([self.bindir / "pg_ctl", "-D", data, "-o", opts, "-w",
                                             "-t", "60", "-l", self.folder / "log", "start"]),
                              capture_output=True, text=True, cwd=self.folder)
        if proc.returncode != 0:
            log = (self.folder / "log").read_text(errors="replace") if (self.folder / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {proc.stderr.strip()} {log[-2000:]}")
        self.psql("postgres", f"CREATE ROLE {READER} LOGIN")
        return self

    def stop(self) -> None:
        data = self.folder / "data"
        if data.exists():
            subprocess.run(self._as_user([self.bindir / "pg_ctl", "-D", data, "-m", "immediate",
                                          "-w", "stop"]), capture_output=True, cwd=self.folder)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "PgCluster":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
