"""Shipped elfmem releases, each in its own cached venv, driven over a JSON-lines protocol.

    >>> from memlab.sim.real.releases import release_env, ReleaseProcess
    >>> python = release_env("0.20.0")          # created on first use (~1 min, pip from PyPI)
    >>> with ReleaseProcess("0.20.0") as rel:
    ...     rel.request("open", db="/tmp/x.db")
    ...     rel.request("call", method="setup", kwargs={"seed": True})

Why a venv per release: 0.19.2 and 0.20.0 cannot share one, and neither belongs in memlab's.
The environments live under ``$MEMLAB_ENVS_DIR`` (default ``~/.cache/memlab/envs``), one
folder per release (``elfmem-0.20.0``). Creating one runs ``python -m venv`` and
``pip install elfmem==X`` (plus the CLI extras the release imports) from the package index
pip is configured with: **this is the only place memlab reaches a package index**, and only
when an environment is missing. CI builds both once (``make envs``); afterwards everything is
offline. A finished environment holds a ``.memlab-ready`` stamp; a half-built one is rebuilt.

The driver (``memlab/sim/real/_driver.py``) runs inside the release's venv and never imports
memlab. When elfmem asks it for embeddings it asks memlab back (``{"embed": [...]}``); memlab
answers with its own all-MiniLM-L6-v2 (:func:`memlab.embed.get_embedder`, on-disk cache), so
the real model gives the release real cosines and the venv needs no torch.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from memlab.errors import ReleaseEnvError, SimulationError

__all__ = [
    "RELEASES",
    "check_release",
    "ENVS_VAR",
    "envs_dir",
    "release_env",
    "release_sources",
    "ReleaseProcess",
    "DriverError",
    "PROJECT_SUFFIX",
    "PROJECT_RELEASES",
    "release_version",
    "project_mode",
    "check_setting",
    "all_settings",
    "release_row",
]

#: The shipped releases memlab runs for real, and the extra packages each one's CLI imports.
RELEASES: dict[str, tuple[str, ...]] = {
    "0.19.2": ("typer", "jinja2", "rank-bm25"),
    "0.20.0": ("typer", "jinja2"),
}
#: A release *setting* is a version ("0.20.0": the store opened with no project) or a version
#: with this suffix ("0.20.0+project": the store opened inside a project root, as the release
#: expects one, so what needs a project is on). Its venv is the version's.
PROJECT_SUFFIX = "+project"
#: The releases with a project mode: 0.20.0's event ledger (elfmem/memory/ledger.py) and file
#: substrate (``.elfmem/memory``) live under a project root, and MemorySystem._log is a no-op
#: without one; 0.19.2 has neither.
PROJECT_RELEASES: tuple[str, ...] = ("0.20.0",)
ENVS_VAR = "MEMLAB_ENVS_DIR"
_STAMP = ".memlab-ready"
_DRIVER = Path(__file__).with_name("_driver.py")
#: memlab's embedder answers one driver at a time (its tokenizer is not safe across threads).
_EMBED_LOCK = threading.Lock()
_TIMINGS_LOCK = threading.Lock()
#: Process-wide timings of the real rows' phases (seconds, counts), read by the benchmark:
#: ``env`` building missing venvs, ``start`` waiting for driver processes to be ready
#: (python + elfmem import; time they started while other work ran is not counted),
#: ``embed`` memlab's model and cache answering the drivers' embedding requests (and the
#: operator scripts' own cosines), ``release`` the time a request waited for the driver's
#: reply, less the embedding done for that driver meanwhile: the release's own work plus the
#: JSON-lines exchange, summed over drivers (releases that run side by side both count; per
#: release under ``release_s <version>``).
TIMINGS: dict[str, float] = {
    "env_s": 0.0,
    "envs_built": 0,
    "start_s": 0.0,
    "starts": 0,
    "embed_s": 0.0,
    "embed_calls": 0,
    "embed_texts": 0,
    "release_s": 0.0,
    "requests": 0,
}


def envs_dir() -> Path:
    return Path(os.environ.get(ENVS_VAR) or Path.home() / ".cache" / "memlab" / "envs").expanduser()


def check_setting(setting: str) -> str:
    """``setting`` normalised ("elfmem 0.20.0+project" -> "0.20.0+project"), or a
    SimulationError naming the ones memlab can run."""
    setting = str(setting).strip().removeprefix("elfmem").strip(" =-")
    version = setting.removesuffix(PROJECT_SUFFIX)
    if version not in RELEASES or (setting != version and version not in PROJECT_RELEASES):
        choices = all_settings()
        raise SimulationError(
            f"elfmem release {setting!r} is not one memlab can run",
            hint=f"choose from {', '.join(choices)}",
        )
    return setting


def all_settings() -> list[str]:
    """Every release setting memlab runs by default: each version, then each project-mode
    one (``["0.19.2", "0.20.0", "0.20.0+project"]``)."""
    return [*RELEASES, *(r + PROJECT_SUFFIX for r in PROJECT_RELEASES)]


def release_version(setting: str) -> str:
    """The version of a release setting ("0.20.0+project" -> "0.20.0")."""
    return check_setting(setting).removesuffix(PROJECT_SUFFIX)


def release_row(release: str) -> str:
    """The table row name of a real release (a setting: ``0.20.0+project`` too)."""
    return f"elfmem {release} (real)"


def project_mode(setting: str) -> bool:
    """Whether a release setting opens its stores inside a project root."""
    return check_setting(setting).endswith(PROJECT_SUFFIX)


def check_release(release: str) -> str:
    """The release version ``release`` names ("elfmem 0.20.0", "0.20.0+project" -> "0.20.0"),
    or a :class:`SimulationError` naming the releases memlab can run."""
    release = str(release).removeprefix("elfmem").strip(" =-").removesuffix(PROJECT_SUFFIX)
    if release not in RELEASES:
        raise SimulationError(
            f"elfmem release {release!r} is not one memlab can run",
            hint=f"choose one of {', '.join(RELEASES)}",
        )
    return release


def _env_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def release_env(release: str, *, create: bool = True, quiet: bool = False) -> Path:
    """The python of ``release``'s venv, creating it (printing what it does) when missing."""
    release = check_release(release)
    folder = envs_dir() / f"elfmem-{release}"
    python = _env_python(folder)
    if (folder / _STAMP).exists() and python.exists():
        return python
    t_env = time.perf_counter()
    if not create:
        raise ReleaseEnvError(
            f"no environment for elfmem {release}",
            path=folder,
            hint="run `make envs`, or any `memlab simulate` with real rows "
            "(needs the package index)",
        )
    say = (
        (lambda *_: None)
        if quiet
        else (lambda msg: print(f"memlab: {msg}", file=sys.stderr, flush=True))
    )
    t0 = time.perf_counter()
    if folder.exists():
        say(f"removing half-built environment {folder}")
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    say(
        f"creating the elfmem {release} environment in {folder} "
        f"(python -m venv + pip install from the package index, under a minute)"
    )
    base = getattr(sys, "_base_executable", None) or sys.executable
    _run([base, "-m", "venv", str(folder)], folder, release)
    packages = [f"elfmem=={release}", *RELEASES[release]]
    say(f"pip install {' '.join(packages)}")
    _run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *packages],
        folder,
        release,
    )
    freeze = subprocess.run(
        [str(python), "-m", "pip", "freeze"], capture_output=True, text=True
    ).stdout
    (folder / _STAMP).write_text(freeze)
    say(f"elfmem {release} environment ready in {time.perf_counter() - t0:.0f} s")
    TIMINGS["env_s"] += time.perf_counter() - t_env
    TIMINGS["envs_built"] += 1
    return python


def _run(cmd: list[str], folder: Path, release: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise ReleaseEnvError(
            f"building the elfmem {release} environment failed: {tail[0]}",
            path=folder,
            hint="check that pip can reach the package index",
        )


def release_sources(release: str) -> Path:
    """The installed ``elfmem`` package folder of ``release`` (its shipped source), found by
    the venv's import system without importing the package (a second's elfmem import saved)."""
    python = release_env(release)
    out = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util as u; "
            "print(u.find_spec('elfmem').submodule_search_locations[0])",
        ],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0 or not out.stdout.strip():
        raise ReleaseEnvError(
            f"elfmem {release} is not installed in its environment",
            path=python.parent.parent,
            hint="delete the folder to rebuild it",
        )
    return Path(out.stdout.strip())


class DriverError(SimulationError):
    """The release raised while executing a step (``type`` and ``message`` are the release's)."""

    def __init__(self, op: str, error: dict[str, Any]) -> None:
        super().__init__(f"elfmem {op}: {error.get('type')}: {error.get('message')}")
        self.type = error.get("type")
        #: The release's message, as text (the driver sends ``str(exception)``).
        self.release_message = str(error.get("message"))
        self.trace = error.get("trace")


def _b64(vectors: np.ndarray) -> list[str]:
    return [
        base64.b64encode(np.ascontiguousarray(v, dtype=np.float32).tobytes()).decode()
        for v in vectors
    ]


class ReleaseProcess:
    """One driver process of one release. ``request`` blocks; ``send``/``wait`` let two
    processes run at the same time (S8). Embedding requests from the driver are answered here.

    The process is started at construction and its "ready" line is read on the first
    request (or :meth:`ready`), so several drivers start (python + elfmem import) at the same
    time, and a driver can start while another one works.
    """

    def __init__(self, release: str, *, embedder: Any = None, workdir: str | Path | None = None):
        self.release = check_release(release)
        self.python = release_env(self.release)
        if embedder is None:
            from memlab.embed import get_embedder

            embedder = get_embedder()
        self.embedder = embedder
        self.embedded = 0  # texts sent to the driver
        self.embed_calls = 0  # encode() calls made for it
        self._next = 0
        self._pending: int | None = None
        self._sent = (0.0, 0.0)
        self._embed_s = 0.0  # seconds spent embedding for this driver
        self._log = tempfile.TemporaryFile(mode="w+")
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
        }
        env.update(
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            PYTHONUNBUFFERED="1",
            ELFMEM_NO_UPDATE_CHECK="1",
        )
        self.workdir = Path(workdir) if workdir else None
        self.proc = subprocess.Popen(
            [str(self.python), str(_DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env=env,
            cwd=str(self.workdir or tempfile.gettempdir()),
            bufsize=1,
        )
        stdin, stdout = self.proc.stdin, self.proc.stdout
        if stdin is None or stdout is None:  # both are PIPE, so both are there
            raise SimulationError(f"elfmem {self.release} driver started without its pipes")
        self._stdin, self._stdout = stdin, stdout
        self.version: str | None = None
        with _TIMINGS_LOCK:
            TIMINGS["starts"] += 1

    def ready(self) -> "ReleaseProcess":
        """Wait for the driver's "ready" line (once); the time waited is ``start_s``."""
        if self.version is None:
            t0 = time.perf_counter()
            hello = self._read()
            if "ready" not in hello:
                raise ReleaseEnvError(f"elfmem {self.release} driver did not start: {hello}")
            self.version = hello["ready"]
            with _TIMINGS_LOCK:
                TIMINGS["start_s"] += time.perf_counter() - t0
        return self

    # ---- protocol -----------------------------------------------------------------------------
    def _read(self) -> dict[str, Any]:
        line = self._stdout.readline()
        if not line:
            self._log.seek(0)
            tail = self._log.read()[-1500:]
            raise SimulationError(f"elfmem {self.release} driver exited: {tail.strip()[-300:]}")
        return json.loads(line)

    def _write(self, obj: dict[str, Any]) -> None:
        self._stdin.write(json.dumps(obj) + "\n")
        self._stdin.flush()

    def vectors(self, texts: list[str]) -> np.ndarray:
        """memlab's vectors of ``texts`` (unit rows); one embedding at a time in this process,
        whichever thread asks (releases run side by side in ``run_real``)."""
        self.embed_calls += 1
        self.embedded += len(texts)
        asked = time.perf_counter()
        with _EMBED_LOCK:
            t0 = time.perf_counter()
            out = self.embedder.encode(texts, progress=False)
            TIMINGS["embed_s"] += time.perf_counter() - t0
            TIMINGS["embed_calls"] += 1
            TIMINGS["embed_texts"] += len(texts)
        self._embed_s += time.perf_counter() - asked  # waiting for the lock included
        return out

    def preload(self, texts: Iterable[str]) -> int:
        """Have the driver hold the vectors of ``texts`` in every form the release embeds
        (the text, ``strip().lower()``, the lowercased summary: ``_driver.embedded_forms``)
        before the next step: the driver asks once for the forms it does not hold yet and
        they are embedded in one encode call, so the release never waits for one text at a
        time. Returns how many vectors were sent."""
        texts = list(dict.fromkeys(texts))
        if not texts:
            return 0
        return self.request("preload", texts=texts)

    def send(self, op: str, **args: Any) -> None:
        self.ready()
        if self._pending is not None:
            raise SimulationError("a request is already pending on this driver")
        self._next += 1
        self._pending = self._next
        self._sent = (time.perf_counter(), self._embed_s)
        self._write({"id": self._next, "op": op, "args": args})

    def wait(self, *, raise_errors: bool = True) -> Any:
        op_id, self._pending = self._pending, None
        while True:
            msg = self._read()
            if "embed" in msg:
                self._write({"vectors": _b64(self.vectors(msg["embed"]))})
                continue
            if msg.get("id") != op_id:
                continue
            sent, embed_before = self._sent
            spent = time.perf_counter() - sent - (self._embed_s - embed_before)
            with _TIMINGS_LOCK:
                TIMINGS["release_s"] += spent
                key = f"release_s {self.release}"
                TIMINGS[key] = TIMINGS.get(key, 0.0) + spent
                TIMINGS["requests"] += 1
            if "error" in msg:
                err = DriverError(msg.get("op", "call"), msg["error"])
                if raise_errors:
                    raise err
                return err
            return msg["ok"]

    def request(self, op: str, **args: Any) -> Any:
        self.send(op, **args)
        return self.wait()

    def attempt(self, op: str, **args: Any) -> Any:
        """Like ``request`` but returns the release's error (a DriverError) instead of raising."""
        self.send(op, **args)
        return self.wait(raise_errors=False)

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self.request("call", method=method, args=list(args), kwargs=kwargs)

    def stderr(self) -> str:
        self._log.seek(0)
        return self._log.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self._write({"id": -1, "op": "close", "args": {"exit": True}})
                self.proc.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def __enter__(self) -> "ReleaseProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
