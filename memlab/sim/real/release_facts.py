"""What a shipped elfmem release has, read from its installed source (no import, no driver).

A claim about a release is judged only on a feature the release has: :func:`release_facts`
reads the installed package (``release_sources``) and records, with the file that shows it,
the public methods of ``MemorySystem`` (``elfmem/api.py``), whether its CLI's ``doctor`` has
the ``--resolve`` preflight (``elfmem/cli.py``), whether its corpus review calls an LLM or
chunks (``elfmem/operations/corpus_review.py``), whether its event ledger needs a project
(``elfmem/api.py``), whether blocks have a ``pinned`` column (``elfmem/db/models.py``), whether
consolidation runs pairwise contradiction checks (``elfmem/operations/consolidate.py``), and
whether its engine puts SQLite in WAL mode (``elfmem/db/engine.py``), its write paths
(:func:`memlab.sim.real._write_paths.write_paths`: the public methods that rewrite a block in place,
with their CLI commands, MCP tools and audit tables), and per fact the file and line that
shows it (``lines``, ``method_lines``: found by searching the installed source).
:func:`run_preflight` runs the shipped preflight, ``elfmem doctor --resolve``, against a
closed local port with no API key.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from memlab._tmp import private_tempdir
from memlab.formats import _json
from memlab.sim.real._write_paths import parse_source, source_line, write_paths

__all__ = ["release_facts", "run_preflight", "new_modules"]

_DEF = re.compile(r"^    (?:async )?def ([a-z][a-z0-9_]*)\(", re.MULTILINE)


def _text(root: Path, rel: str) -> str | None:
    path = root / rel
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _code_names(source: str, parts: tuple[str, ...]) -> bool:
    """Whether a name, attribute or argument in ``source``'s code (not its docstrings or
    comments) contains one of ``parts``."""
    import ast

    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        name = (
            node.id
            if isinstance(node, ast.Name)
            else node.attr
            if isinstance(node, ast.Attribute)
            else node.arg
            if isinstance(node, ast.arg)
            else None
        )
        if name and any(p in name.lower() for p in parts):
            return True
    return False


def release_facts(folder: str | Path) -> dict[str, Any]:
    """Facts about the elfmem package installed at ``folder`` (its ``elfmem`` directory)."""
    root = Path(folder)
    api = _text(root, "api.py") or ""
    cli = _text(root, "cli.py") or ""
    review = _text(root, "operations/corpus_review.py")
    models = _text(root, "db/models.py") or ""
    consolidate = _text(root, "operations/consolidate.py") or ""
    engine = _text(root, "db/engine.py") or ""
    cls = api[api.find("class MemorySystem") :] if "class MemorySystem" in api else ""
    methods = sorted(set(_DEF.findall(cls)))
    offset = api[: api.find("class MemorySystem")].count("\n") if cls else 0
    method_lines: dict[str, str] = {}
    for m in _DEF.finditer(cls):
        method_lines.setdefault(
            m.group(1), f"elfmem/api.py:{offset + cls[: m.start()].count(chr(10)) + 1}"
        )
    lines = {
        "doctor_resolve": source_line(root, "cli.py", '"--resolve"'),
        "corpus_review": source_line(root, "operations/corpus_review.py", "def review_corpus"),
        "ledger": source_line(root, "memory/ledger.py", '"""')
        if (root / "memory" / "ledger.py").exists()
        else None,
        "ledger_needs_project": source_line(root, "api.py", "no project root")
        if (root / "memory" / "ledger.py").exists()
        else None,
        "pinned_column": source_line(root, "db/models.py", '"pinned"'),
        "pairwise_contradiction": source_line(
            root, "operations/consolidate.py", "detect_contradiction"
        ),
        "wal": source_line(root, "db/engine.py", "journal_mode"),
        "engine": source_line(root, "db/engine.py", "def create_engine"),
        "near_dup_threshold": source_line(root, "config.py", "near_dup_near_threshold: float"),
        "memory_system": source_line(root, "api.py", "class MemorySystem"),
        "init_seed": source_line(root, "cli.py", '"--seed/--no-seed"'),
        "consolidate": source_line(root, "operations/consolidate.py", "async def consolidate("),
        "models": source_line(root, "db/models.py", "blocks = Table("),
    }
    return {
        "method_lines": method_lines,
        "write_paths": write_paths(root),
        "lines": lines,
        "methods": methods,
        "doctor_resolve": '"--resolve"' in cli and "_doctor_preflight" in cli,
        "corpus_review": "review_corpus" in methods,
        "corpus_review_llm": None if review is None else _code_names(review, ("llm", "chunk")),
        "ledger": (root / "memory" / "ledger.py").exists(),
        "ledger_needs_project": (root / "memory" / "ledger.py").exists()
        and "no project root" in api,
        "pinned_column": bool(re.search(r"Column\(\s*[\"']pinned[\"']", models)),
        "pairwise_contradiction": "detect_contradiction" in consolidate,
        "wal": bool(re.search(r"PRAGMA journal_mode\s*=\s*WAL", engine, re.IGNORECASE)),
    }


def new_modules(old: str | Path, new: str | Path) -> list[tuple[str, int]]:
    """``(path, lines)`` of each ``.py`` file under ``new`` with no counterpart under ``old``,
    largest first."""
    old, new = Path(old), Path(new)
    have = {p.relative_to(old).as_posix() for p in old.rglob("*.py")}
    out = []
    for p in sorted(new.rglob("*.py")):
        rel = p.relative_to(new).as_posix()
        if rel not in have:
            out.append((rel, len(p.read_text(encoding="utf-8", errors="replace").splitlines())))
    return sorted(out, key=lambda r: -r[1])


def run_preflight(python: str | Path, endpoint: str) -> dict[str, Any]:
    """Run the release's ``elfmem doctor --resolve --json`` in a private folder (HOME and
    working directory, so no project or ``.env`` is found) with no ``*_API_KEY`` in the
    environment and a config naming ``endpoint`` (a closed local port): what the shipped
    preflight says when no LLM is reachable. Returns its exit code and its "LLM preflight"
    check (None when the output has none)."""
    exe = Path(python).with_name("elfmem")
    env = {
        k: v
        for k, v in os.environ.items()
        if k in ("PATH", "TMPDIR", "LANG", "LC_ALL", "SYSTEMROOT")
    }
    env.update(ELFMEM_NO_UPDATE_CHECK="1", HF_HUB_OFFLINE="1", NO_COLOR="1")
    with private_tempdir("preflight") as tmp:
        env["HOME"] = str(tmp)
        cfg = Path(tmp) / "config.yaml"
        cfg.write_text(f"llm:\n  model: local-model\n  base_url: {json.dumps(endpoint)}\n")
        proc = subprocess.run(
            [
                str(exe),
                "doctor",
                "--resolve",
                "--json",
                "--config",
                str(cfg),
                "--db",
                str(Path(tmp) / "agent.db"),
            ],
            cwd=str(tmp),
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
    check = None
    try:
        start = proc.stdout.find("{")
        doc, _issues = _json.loads(proc.stdout[start:]) if start >= 0 else (None, [])
        for c in (doc or {}).get("checks", []):
            if isinstance(c, dict) and c.get("label") == "LLM preflight":
                check = {"ok": bool(c.get("ok")), "detail": str(c.get("detail"))[:200]}
    except (ValueError, AttributeError):
        check = None
    return {"exit_code": proc.returncode, "preflight": check}
