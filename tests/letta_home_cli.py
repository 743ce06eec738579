"""Letta Code homes written by the Letta Code 0.34.12 CLI itself, for the tests.

Nothing here writes into the home: the pinned wheel's ``letta`` CLI does, run headless on the
wheel's own Node (``letta --backend local -p --input-format stream-json``) with ``HOME`` set to
a temporary folder. Letta Code's local backend keeps agents, conversations and each agent's
memory repository under ``~/.letta/lc-local-backend/`` and the reflection state under
``~/.letta/transcripts/``, all offline; the model is the bundle's own deterministic executor
(``LETTA_LOCAL_BACKEND_EXECUTOR=deterministic-reflection``, ``src/backend/dev``): every turn
answers "pong", and a reflection pass runs Letta Code's real reflection machinery (payload,
worktree, subagent, finalize, state) with a subagent whose one tool call reads the transcript
with ``bun -e``. Bun comes from the npm registry (``bun@1.4.5``), installed once beside the
Letta Code venv like it.

What a person does around Letta Code is done as a person would: start it from a shell whose
``PATH`` lacks ``bun`` (every reflection pass then fails, as in letta-ai/letta-code#4266), kill
it while a pass runs (the pass never finishes), or commit to the memory repository with git.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from letta_code import _payload, envs_dir, letta_code_env
from letta_home_build import GIT_ENV

BUN_VERSION = "1.4.5"


def bun_bin(create: bool = True) -> Path:
    """The folder holding ``bun`` (npm's ``bun@1.4.5``), installed once under the envs dir."""
    prefix = envs_dir() / f"bun-{BUN_VERSION}"
    folder = prefix / "node_modules" / ".bin"
    if (folder / "bun").exists() or not create:
        return folder
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                    "--silent", f"bun@{BUN_VERSION}"], check=True)
    return folder


def _path_without_bun() -> str:
    """The caller's PATH less every folder that holds a ``bun``."""
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and not (Path(p) / "bun").exists())


class LettaCLI:
    """The pinned Letta Code CLI with ``HOME=<root>``, local backend, deterministic executor,
    run in the working folder ``project``."""

    def __init__(self, root: Path, project: Path) -> None:
        payload = _payload(letta_code_env())
        assert payload is not None
        self.node = payload / "bin" / "node"
        self.app = payload / "app" / "letta.js"
        self.root = root
        self.letta = root / ".letta"
        self.cwd = project  # the working folder: Letta Code keeps .letta/settings.local.json there
        self.cwd.mkdir(parents=True, exist_ok=True)

    def env(self, *, bun: bool) -> dict[str, str]:
        path = _path_without_bun()
        if bun:
            path = os.pathsep.join([str(bun_bin()), path])
        return {**os.environ, **GIT_ENV, "HOME": str(self.root), "PATH": path,
                "LETTA_LOCAL_BACKEND_EXPERIMENTAL": "1",
                "LETTA_LOCAL_BACKEND_EXECUTOR": "deterministic-reflection"}

    def agent_dir(self, agent_id: str) -> Path:
        return self.letta / "lc-local-backend" / "memfs" / agent_id

    def worktrees(self, agent_id: str) -> list[Path]:
        folder = self.agent_dir(agent_id) / "memory-worktrees"
        return sorted(folder.iterdir()) if folder.is_dir() else []

    def session(self, turns: int, *, agent: str | None = None, bun: bool = True,
                kill_in_pass: bool = False, settle: float = 60.0) -> str:
        """One headless session of ``turns`` user messages, each sent once the previous turn's
        result is out; returns the agent id. A new agent when ``agent`` is None. After the last
        turn the session stays open until no reflection pass is running (its worktree gone), or,
        with ``kill_in_pass``, is killed (SIGKILL) as soon as a pass has its worktree."""
        args = [str(self.node), str(self.app), "--backend", "local", "-p",
                "--input-format", "stream-json", "--output-format", "stream-json"]
        args += ["--agent", agent] if agent else ["--new-agent"]
        proc = subprocess.Popen(args, cwd=self.cwd, env=self.env(bun=bun), text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        assert proc.stdin is not None and proc.stdout is not None
        agent_id = agent
        try:
            for i in range(turns):
                message = {"type": "user", "message": {"role": "user",
                                                       "content": f"note {i}: the build uses make"}}
                proc.stdin.write(json.dumps(message) + "\n")
                proc.stdin.flush()
                while True:
                    line = proc.stdout.readline()
                    if not line:
                        raise RuntimeError(f"letta exited ({proc.poll()}) during turn {i}")
                    event = json.loads(line) if line.startswith("{") else {}
                    agent_id = agent_id or event.get("agent_id")
                    if event.get("type") == "result":
                        if event.get("subtype") != "success":
                            raise RuntimeError(f"turn {i}: {line[:300]}")
                        break
            assert agent_id
            deadline = time.monotonic() + settle
            if kill_in_pass:
                while not self.worktrees(agent_id):
                    if time.monotonic() > deadline:
                        raise RuntimeError("no reflection pass started")
                    time.sleep(0.02)
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
                return agent_id
            quiet = None  # a pass may queue another when it ends: wait for 2 s without one
            while time.monotonic() < deadline:
                if self.worktrees(agent_id):
                    quiet = None
                elif quiet is None:
                    quiet = time.monotonic()
                elif time.monotonic() - quiet > 2.0:
                    break
                time.sleep(0.05)
            else:
                raise RuntimeError("a reflection pass was still running")
            proc.stdin.close()
            proc.wait(timeout=60)
            return agent_id
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)

    def run(self, *args: str) -> str:
        """One ``letta`` command (``memory backup --agent <id>``...), its standard output."""
        done = subprocess.run([str(self.node), str(self.app), *args], cwd=self.cwd,
                              env=self.env(bun=True), capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"letta {' '.join(args)}: {done.stderr[-500:]}")
        return done.stdout

    def state(self, agent_id: str) -> list[dict]:
        """Every conversation's ``state.json`` of the agent, as Letta Code wrote it."""
        folder = self.letta / "transcripts" / agent_id
        return [json.loads(p.read_text()) for p in sorted(folder.glob("*/state.json"))]

    def git(self, repo: Path, *args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                              text=True, env={**os.environ, **GIT_ENV}).stdout


if __name__ == "__main__":  # .ci/run installs bun once before the tests
    print(bun_bin())
