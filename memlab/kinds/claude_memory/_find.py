"""Where ``memlab discover`` looks for Claude Code auto-memory folders.

Claude Code keeps one folder per project, ``~/.claude/projects/<project-slug>/memory/`` (the
slug from the project's git root); Qwen Code the same layout under ``~/.qwen/projects/`` (its
memory documentation page, docs/users/features/memory.md). Claude Code's documented overrides
are honoured where they are found: ``autoMemoryDirectory`` in the user's settings
(``~/.claude/settings.json``) and, for the user's own home only, the environment variable
``CLAUDE_COWORK_MEMORY_PATH_OVERRIDE`` (data/samples/claude-memory/SOURCES.md). Nothing is
followed through a symbolic link and nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from memlab._files import FileTooLarge, NotRegularFile, read_regular, walk
from memlab.formats import _json
from memlab.kinds._base import Search

__all__ = ["find_claude_memory", "folder_row", "OVERRIDE_ENV", "SETTINGS_KEY"]

OVERRIDE_ENV = "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"
SETTINGS_KEY = "autoMemoryDirectory"
_MAX_SETTINGS_BYTES = 1 << 20


def _row(agent_id: str, path: Path, note: str | None = None) -> dict[str, Any]:
    problems = [note] if note else []
    files = size = 0
    newest: float | None = None
    if path.is_symlink():
        problems.append("a symbolic link: not followed, not counted")
        files_out: int | None = None
        size_out: int | None = None
    else:
        unreadable: list[OSError] = []
        for dirpath, dirnames, filenames in walk(path, onerror=unreadable.append, max_depth=8):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                try:
                    st = os.lstat(os.path.join(dirpath, name))
                except OSError:
                    continue
                files += 1
                size += st.st_size
                newest = st.st_mtime if newest is None else max(newest, st.st_mtime)
        if unreadable:
            problems.append(f"{len(unreadable)} folder(s) could not be listed")
        files_out, size_out = files, size
    return {
        "agent_id": agent_id,
        "layout": None,
        "path": str(path),
        "name": agent_id,
        "files": files_out,
        "bytes": size_out,
        "last_commit": None,
        "modified": newest,
        "problem": "; ".join(problems) or None,
    }


def folder_row(path: Path, note: str | None = None) -> dict[str, Any]:
    """The row of an auto-memory folder met by a path rather than a project slug: named by
    its folder (its parent's for a folder called ``memory``)."""
    return _row(path.name if path.name != "memory" else path.parent.name, path, note)


def _settings_folder(home: Path) -> tuple[Path | None, str | None]:
    """The ``autoMemoryDirectory`` of ``~/.claude/settings.json`` (or why it was not read)."""
    path = home / ".claude" / "settings.json"
    if not os.path.lexists(path):
        return None, None
    try:
        text = read_regular(path, max_bytes=_MAX_SETTINGS_BYTES).decode("utf-8", "replace")
        doc, _ = _json.loads(text, reader="Claude Code")
    except (FileTooLarge, NotRegularFile, OSError, ValueError, RecursionError) as exc:
        return None, f"~/.claude/settings.json not read: {type(exc).__name__}"
    value = doc.get(SETTINGS_KEY) if isinstance(doc, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None, None
    folder = Path(value.strip())
    if str(folder).startswith("~"):
        folder = home / str(folder)[2:] if str(folder).startswith("~/") else folder
    return (folder if folder.is_absolute() else home / folder), None


def find_claude_memory(search: Search) -> Iterator[dict[str, Any]]:
    """One inventory row per auto-memory folder: ``<home>/.claude/projects/*/memory`` and
    ``<home>/.qwen/projects/*/memory`` (Qwen Code, its name says so), the
    settings' ``autoMemoryDirectory`` and (the real home only)
    ``$CLAUDE_COWORK_MEMORY_PATH_OVERRIDE``."""
    home = search.home
    seen: set[str] = set()
    for tool, app in ((".claude", None), (".qwen", "Qwen Code")):
        projects = home / tool / "projects"
        if not projects.is_dir() or projects.is_symlink():
            continue
        try:
            slugs = sorted(p for p in projects.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            slugs = []
        for project in slugs:
            memory = project / "memory"
            if memory.is_dir() or memory.is_symlink():
                seen.add(os.path.abspath(memory))
                row = _row(project.name, memory)
                yield row if app is None else {**row, "name": f"{project.name} ({app})"}
    folder, note = _settings_folder(home)
    extra: list[tuple[Path, str]] = []
    if folder is not None:
        extra.append((folder, f"{SETTINGS_KEY} in ~/.claude/settings.json"))
    if search.real_home and os.environ.get(OVERRIDE_ENV):
        extra.append((Path(os.environ[OVERRIDE_ENV]).expanduser(), f"${OVERRIDE_ENV}"))
    for path, why in extra:
        if os.path.abspath(path) in seen or not (path.is_dir() or path.is_symlink()):
            continue
        seen.add(os.path.abspath(path))
        yield folder_row(path, f"from {why}")
    if note is not None:
        # said, not dropped: the override it may name is not known
        settings = home / ".claude" / "settings.json"
        yield {**_row("settings", settings.parent), "path": str(settings), "problem": note}
