"""A deadline on every PostgreSQL wait (issue 34, hole 10). ``statement_timeout`` is the server's
own clock: a server that stops answering, or keeps sending NOTICE messages and never a result,
kept ``inspect`` waiting forever. Now connecting is bounded (``MEMLAB_PG_CONNECT_TIMEOUT``) and
each statement by memlab's own clock (the statement timeout plus a grace), and the error line
names the variable to raise.

The servers: a real local TCP listener that accepts and never answers; and the real Letta
0.16.8 database (tests/pg_cluster.py) behind a byte-level proxy on 127.0.0.1 that relays the
startup and the first statements, then, from memlab's role check on, either relays nothing more
(a server that stopped answering) or sends NoticeResponse messages without end (a flood). The
same proxy relaying everything is the negative control."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from letta_server_fixtures import MANIFEST, letta_pg  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
COUNTS = MANIFEST["letta-0.16.8.sql"]["counts"]
LIMIT = 30  # seconds: the subprocess is killed (and the test fails) past this
FAST = {"MEMLAB_PG_STATEMENT_TIMEOUT": "1000", "MEMLAB_PG_CONNECT_TIMEOUT": "2000"}


def _memlab(*args: str, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    start = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                             text=True, timeout=LIMIT, env=environ, cwd=ROOT,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"memlab {' '.join(args)} still waiting after {LIMIT} s")
    return run, time.monotonic() - start


def _one_line(run: subprocess.CompletedProcess, *words: str) -> str:
    assert run.returncode == 2, (run.returncode, run.stdout[-500:], run.stderr[-2000:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _notice(text: bytes) -> bytes:
    body = b"SNOTICE\0VNOTICE\0C00000\0M" + text + b"\0\0"
    return b"N" + struct.pack("!i", len(body) + 4) + body


class Proxy:
    """127.0.0.1 proxy to ``upstream``; ``mode``: ``relay`` (everything), ``silent`` or
    ``flood`` (from the first client message holding ``trigger`` on)."""

    def __init__(self, upstream: int, mode: str, trigger: bytes = b"pg_roles") -> None:
        self.upstream, self.mode, self.trigger = upstream, mode, trigger
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.tripped = threading.Event()
        self.stop = threading.Event()
        self.socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.upstream))
            self.socks += [client, up]
            threading.Thread(target=self._client_to_server, args=(client, up), daemon=True).start()
            threading.Thread(target=self._server_to_client, args=(up, client), daemon=True).start()

    def _client_to_server(self, client, up) -> None:
        try:
            while data := client.recv(65536):
                if self.mode != "relay" and self.trigger in data and not self.tripped.is_set():
                    self.tripped.set()
                    if self.mode == "flood":
                        threading.Thread(target=self._flood, args=(client,), daemon=True).start()
                if not self.tripped.is_set():
                    up.sendall(data)
        except OSError:
            pass

    def _server_to_client(self, up, client) -> None:
        try:
            while data := up.recv(65536):
                if not self.tripped.is_set():
                    client.sendall(data)
        except OSError:
            pass

    def _flood(self, client) -> None:
        burst = _notice(b"still working") * 200
        try:
            while not self.stop.is_set():
                client.sendall(burst)
                time.sleep(0.005)
        except OSError:
            pass

    def close(self) -> None:
        self.stop.set()
        for s in [self.server, *self.socks]:
            try:
                s.close()
            except OSError:
                pass


def _dsn(letta_pg, port: int) -> str:
    return letta_pg.dsn("letta").replace(f":{letta_pg.port}/", f":{port}/") + "?sslmode=disable"


def test_a_listener_that_never_answers_is_one_line_within_the_connect_timeout():
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(server.accept()[0]), daemon=True).start()
    try:
        port = server.getsockname()[1]
        run, took = _memlab("inspect", f"postgresql://memlab@127.0.0.1:{port}/letta"
                                       "?sslmode=disable", **FAST)
        _one_line(run, "connect timeout (2 s)", "MEMLAB_PG_CONNECT_TIMEOUT")
        assert took < 15, took
    finally:
        server.close()
        for s in held:
            s.close()


@pytest.mark.parametrize("mode", ["silent", "flood"])
def test_a_server_that_stops_answering_or_floods_notices_hits_the_client_deadline(letta_pg, mode):
    proxy = Proxy(letta_pg.port, mode)
    try:
        run, took = _memlab("inspect", _dsn(letta_pg, proxy.port), **FAST)
        assert proxy.tripped.is_set()  # memlab was past the startup, inside its reads
        _one_line(run, "client deadline (3 s", "MEMLAB_PG_STATEMENT_TIMEOUT")
        assert took < 20, took
    finally:
        proxy.close()


def test_the_proxy_relaying_everything_reads_the_database(letta_pg):
    """Negative control: the same proxy and the same short limits, relaying all: a full read."""
    proxy = Proxy(letta_pg.port, "relay")
    try:
        run, _ = _memlab("inspect", _dsn(letta_pg, proxy.port), **FAST)
        assert run.returncode == 0, run.stderr[-2000:]
        shown = {ln.split()[0]: ln.split()[1] for ln in run.stdout.splitlines()
                 if len(ln.split()) == 2}
        assert shown.get("blocks") == str(COUNTS["blocks"]), run.stdout[:1500]
        assert shown.get("block_history") == str(COUNTS["block_history"]), run.stdout[:1500]
    finally:
        proxy.close()
