"""Letta Code 0.34.12 itself, as the oracle for Letta's memory rules in the tests.

The `letta` wheel on PyPI is Letta Code (the CLI, with its own Node). It is installed, pinned,
into a side venv under ``$MEMLAB_ENVS_DIR`` (default ``~/.cache/memlab/envs``) like the elfmem
releases: ``.ci/run`` builds it, and the first test that needs it builds it otherwise (pip, once).
:class:`LettaCode` runs ``tests/letta_code_oracle.mjs`` with the wheel's Node: the bundle's own
functions (``validateMemoryTreeConstraints``, ``validateMemoryFileFrontmatter``,
``parseMemoryConstraintsConfig``, ``validateMemoryConstraintsHead``,
``installPreCommitHookWithPolicy``, ``initialMemoryFilesFromCreateBody``), taken from
``letta.js`` as source text and evaluated unchanged. memlab's code is never consulted.

    lc = letta_code()                       # session-wide, started once
    lc.tree(files, config={...}, layout="root-marker")      # validator errors, in-memory tree
    lc.audit(repo)                          # what `Committed memory fails validation` would say
    lc.initial([{"label": "human", "value": "...", "description": "..."}])
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

VERSION = "0.34.12"
ORACLE = Path(__file__).with_name("letta_code_oracle.mjs")
ENV_NAME = f"letta-code-{VERSION}"


def envs_dir() -> Path:
    return Path(os.environ.get("MEMLAB_ENVS_DIR") or Path.home() / ".cache" / "memlab" / "envs")


def letta_code_env(create: bool = True) -> Path:
    """The side venv holding ``letta==0.34.12``; built with pip on first use."""
    folder = envs_dir() / ENV_NAME
    payload = _payload(folder)
    if payload is not None or not create:
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
    subprocess.run([str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", f"letta=={VERSION}"], check=True)
    if _payload(folder) is None:
        raise RuntimeError(f"letta=={VERSION} installed in {folder} but has no Letta Code payload")
    return folder


def _payload(folder: Path) -> Path | None:
    found = sorted(folder.glob("lib/python3*/site-packages/letta_code/_payload"))
    if found and (found[0] / "bin" / "node").exists() and (found[0] / "app" / "letta.js").exists():
        return found[0]
    return None


class NodeOracle:
    """One long-lived Node process of the wheel running an oracle script (``script``), one
    JSON request per line in, one JSON answer per line out; ``name`` says which in errors."""

    name = "Letta Code oracle"

    def __init__(self, script: Path, payload: Path, env: dict | None = None) -> None:
        self.payload = payload
        self.node = payload / "bin" / "node"
        self.app = payload / "app"
        self._lock = threading.Lock()
        self._proc = subprocess.Popen([str(self.node), str(script), str(self.app)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, encoding="utf-8", bufsize=1, env=env)

    def ask(self, request: dict):
        with self._lock:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} exited ({self._proc.poll()})")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"{self.name}: {reply['error']}")
        return reply["ok"]

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()


class LettaCode(NodeOracle):
    """One long-lived Node process answering oracle requests (see letta_code_oracle.mjs)."""

    def __init__(self, env: Path | None = None) -> None:
        payload = _payload(env or letta_code_env())
        assert payload is not None
        super().__init__(ORACLE, payload)

    # -- the bundle's functions -------------------------------------------------------------
    def tree(self, files: list[dict], *, config: dict, layout: str,
             require_root_marker: bool = False, accepted: list[dict] | None = None) -> list[str]:
        """validateMemoryTreeConstraints over files ``{"path", "mode", "text"}``."""
        return self.ask({"op": "tree", "files": files, "config": config, "layout": layout,
                         "requireRootMarker": require_root_marker, "accepted": accepted})

    def frontmatter(self, path: str, content: str, *, fmt: str,
                    previous: str | None = None) -> list[str]:
        """validateMemoryFileFrontmatter; ``fmt`` is ``"memfs-v2"`` or ``"legacy"``."""
        return self.ask({"op": "frontmatter", "path": path, "content": content,
                         "previousContent": previous, "format": fmt})

    def config(self, content: str) -> dict:
        """parseMemoryConstraintsConfig: ``{"config": ...}`` or ``{"errors": [...]}``."""
        return self.ask({"op": "config", "content": content})

    def audit(self, repo: Path) -> dict:
        """validateMemoryConstraintsHead(repo): ``{"valid", "output", "policy"}``; the
        errors are ``output``'s lines that start with two spaces (see :meth:`audit_errors`)."""
        return self.ask({"op": "audit", "repo": str(repo)})

    def audit_errors(self, repo: Path) -> list[str]:
        out = self.audit(repo)["output"]
        return [line[2:] for line in out.splitlines() if line.startswith("  ")]

    def install_hooks(self, repo: Path, policy: str) -> Path:
        """The pre-commit hook, validator and layout policy file, as Letta Code installs them
        (for throwaway clones in tests: it writes into ``repo/.git``)."""
        return Path(self.ask({"op": "install", "repo": str(repo), "policy": policy})["hook"])

    def parse(self, content: str) -> dict:
        """``parseFrontmatter`` (how Letta Code reads a memory file): frontmatter and body."""
        return self.ask({"op": "parse", "content": content})

    def trim(self, text: str) -> str:
        """JavaScript's ``String.prototype.trim`` (Node's own)."""
        return self.ask({"op": "trim", "content": text})

    def initial(self, blocks: list[dict]) -> list[dict]:
        """initialMemoryFilesFromCreateBody: ``[{"relativePath", "content"}]``."""
        return self.ask({"op": "initial", "blocks": blocks})

    def validate_commits(self, repo: Path, workdir: Path, shas: list[str], policy: str
                         ) -> dict[str, list[str]]:
        """The validator Letta Code installs (``letta-memory-constraints.cjs``), run on each
        commit of ``shas`` (a first-parent chain, oldest first) with the commit's tree staged
        over its parent, as the pre-commit hook runs it, human approval of config changes
        given (``LETTA_MEMORY_CONSTRAINTS_UPDATE=1``). A clone in ``workdir`` is used; the
        root commit is skipped (it has no parent to stand on)."""
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        clone = workdir / "validate-clone"
        subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, env=env)
        self.install_hooks(clone, policy)
        validator = clone / ".git" / "hooks" / "letta-memory-constraints.cjs"
        out: dict[str, list[str]] = {}
        for parent, sha in zip(shas, shas[1:]):
            subprocess.run(["git", "-C", str(clone), "checkout", "-q", "--detach", parent],
                           check=True, env=env)
            subprocess.run(["git", "-C", str(clone), "read-tree", sha], check=True, env=env)
            run = subprocess.run([str(self.node), str(validator)], cwd=clone, capture_output=True,
                                 text=True, env={**env, "LETTA_MEMORY_CONSTRAINTS_UPDATE": "1"})
            out[sha] = [line[2:] for line in run.stderr.splitlines() if line.startswith("  ")]
        return out

    def memory_tokens(self, memory_dir: Path) -> dict:
        """``letta memory tokens --memory-dir DIR --format json``, the CLI itself (offline)."""
        letta = self.payload.parents[4] / "bin" / "letta"
        home = memory_dir.parent / "letta-home"
        home.mkdir(exist_ok=True)
        run = subprocess.run([str(letta), "memory", "tokens", "--memory-dir", str(memory_dir),
                              "--format", "json"], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "HOME": str(home)})
        if run.returncode != 0:
            raise RuntimeError(f"letta memory tokens failed: {run.stderr[-500:]}")
        return json.loads(run.stdout)


_SHARED: LettaCode | None = None


def letta_code() -> LettaCode:
    """The session's oracle process (started on first use)."""
    global _SHARED
    if _SHARED is None or _SHARED._proc.poll() is not None:
        _SHARED = LettaCode()
    return _SHARED


if __name__ == "__main__":  # .ci/run builds the side venv before the tests: `python tests/letta_code.py`
    print(letta_code_env())
