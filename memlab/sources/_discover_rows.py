"""The pieces of an inventory row that :func:`memlab.sources.discover.discover` and the kinds'
finders (``find`` in :mod:`memlab.kinds`, ``memlab/kinds/<kind>/_find.py``) share: one store's
row (:func:`row`: files and bytes of its tree, its name from ``agent.yaml``, a ``.letta``
config or git's ``user.name``, its last commit), the row of a store listed but not read
(:func:`unread_row`, :func:`linked_row`), and the folder listing they walk with.

Everything here is read-only: folders are listed with ``os.scandir`` (symlinks not followed),
git is asked only for ``log -1`` and ``config --get user.name`` through the hardened
:mod:`memlab._git`, and config files are parsed, never touched.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from memlab import _git as _hardened
from memlab._escape import terminal_line
from memlab._files import kind_of
from memlab.errors import MemlabError
from memlab.formats import _json
from memlab.formats._yaml import read_yaml

__all__ = ["row", "unread_row", "linked_row", "not_regular", "subdirs", "SKIP_DIRS"]

#: Folders never worth descending into while looking for stores under a home folder.
SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", "site-packages", "venv", "Library", "AppData"}
)
_MAX_CONFIG_BYTES = 1 << 20


def subdirs(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if e.is_dir())
    except OSError:
        return []


def not_regular(path: Path) -> str | None:
    """Why ``path`` is not read although it is there: a symlink (to what), FIFO, socket or
    device; None for a regular file, a folder or nothing."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"{path.name} is a symlink to {target!r}; not followed, not read"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    what = {"FIFO": "a FIFO", "socket": "a socket", "device": "a device"}.get(
        kind_of(mode), "not a regular file"
    )
    return f"{path.name} is {what}; not read"


def unread_row(
    agent_id: str, kind: str, layout: str | None, path: Path, problem: str
) -> dict[str, Any]:
    """The row of a store that is listed but not read: nothing sized, named or asked of git."""
    return {
        "agent_id": agent_id,
        "kind": kind,
        "layout": layout,
        "path": str(path),
        "name": None,
        "files": None,
        "bytes": None,
        "last_commit": None,
        "modified": None,
        "problem": problem,
    }


def linked_row(
    agent_id: str, kind: str, layout: str | None, path: Path, links: list[Path]
) -> dict[str, Any] | None:
    """The row of a store whose agent folder or ``memory`` folder is a symlink: listed, with
    the target in ``problem``, nothing under it read, sized or asked of git. None if neither is."""
    notes = [note for link in links if link.is_symlink() and (note := not_regular(link))]
    return unread_row(agent_id, kind, layout, path, "; ".join(notes)) if notes else None


# --- one row --------------------------------------------------------------------------------


def row(
    agent_id: str,
    kind: str,
    layout: str | None,
    path: Path,
    *,
    repos: list[Path],
    config: Path | None = None,
    count_under: Path | None = None,
    scope: Path | None = None,
    note: str | None = None,
    named_by_id: bool = False,
) -> dict[str, Any]:
    """The inventory row of the store of kind ``kind`` at ``path`` (agent ``agent_id``, memfs
    ``layout`` or None): files, bytes and newest mtime of its tree (of ``count_under`` when
    given; none for a bare repository), its name (``config``, else ``agent.yaml`` in ``path``,
    else ``.letta/config.json``, else the first git repository of ``repos``' ``user.name``),
    the time of the newest commit touching ``scope`` (the whole repository when None) and
    ``problem``, every reason a field could not be read (``note`` first). ``named_by_id``: the
    folder is named by the agent's id, which its ``agent.yaml`` repeats (a Souveraine agent
    dir), so a different id there is a problem."""
    problems: list[str] = [note] if note else []
    if _hardened.git_dir(path) == path:  # bare (a server's copy, a mirror): no working tree
        problems.append(
            "a bare repository: no working tree, so files, bytes and modified are not counted"
        )
        files, size, newest = None, None, None
    else:
        files, size, newest = _tree_size(count_under or path, problems)
    name = None
    for candidate in ([config] if config else []) + [path / "agent.yaml"]:
        note = not_regular(candidate)
        if note is not None:
            problems.append(note)
            break
        if candidate.is_file():
            name, yaml_id = _agent_yaml(candidate, problems)
            if yaml_id and yaml_id != agent_id and named_by_id:
                problems.append(f"agent.yaml uuid {yaml_id!r} differs from the folder name")
            break
    if name is None:
        name = _letta_config_name(path, problems)
    repo = next((r for r in repos if _hardened.git_dir(r) is not None), None)  # bare too
    last_commit = None
    if repo is not None:
        if name is None:
            name = _git_user_name(repo)
        last_commit = _last_commit(repo, scope, problems)
    else:
        problems.append("not in a git repository")
    return {
        "agent_id": agent_id,
        "kind": kind,
        "layout": layout,
        "path": str(path),
        "name": name,
        "files": files,
        "bytes": size,
        "last_commit": last_commit,
        "modified": newest,
        "problem": "; ".join(problems) or None,
    }


def _tree_size(top: Path, problems: list[str]) -> tuple[int, int, float | None]:
    files = size = unlisted = 0
    newest: float | None = None
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        if e.name != ".git":
                            stack.append(Path(e.path))
                    elif e.is_file(follow_symlinks=False):
                        st = e.stat(follow_symlinks=False)
                        files += 1
                        size += st.st_size
                        newest = st.st_mtime if newest is None else max(newest, st.st_mtime)
        except OSError:
            unlisted += 1
    if unlisted:
        problems.append(
            f"{unlisted} folder(s) could not be listed; files, bytes and modified leave them out"
        )
    return files, size, newest


def _read_small(path: Path, problems: list[str]) -> str | None:
    try:
        if path.stat().st_size > _MAX_CONFIG_BYTES:
            problems.append(f"{path.name} is over {_MAX_CONFIG_BYTES} bytes; not read")
            return None
        from memlab._files import read_regular

        return read_regular(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path.name} unreadable: {exc}")
        return None


def _agent_yaml(path: Path, problems: list[str]) -> tuple[str | None, str | None]:
    text = _read_small(path, problems)
    if text is None:
        return None, None
    read = read_yaml(text)
    if read.failure == "size":
        problems.append(f"agent.yaml is not read: {read.problem}")
        return None, None
    if not read.ok:
        problems.append(f"agent.yaml is not valid YAML ({read.problem})")
        return None, None
    doc = read.value
    if not isinstance(doc, dict):
        problems.append("agent.yaml is not a mapping")
        return None, None
    problems.extend(f"agent.yaml: {message}" for _kind, message in _json.clean(doc))
    name, uuid = doc.get("name"), doc.get("uuid") or doc.get("id")
    return (str(name) if name is not None else None), (str(uuid) if uuid is not None else None)


def _letta_config_name(path: Path, problems: list[str]) -> str | None:
    config = path / ".letta" / "config.json"
    note = not_regular(config)
    if note is not None:
        problems.append(f".letta/{note}")
        return None
    if not config.is_file():
        return None
    text = _read_small(config, problems)
    if text is None:
        return None
    try:
        doc, issues = _json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        problems.append(".letta/config.json is not valid JSON")
        return None
    problems.extend(f".letta/config.json: {message}" for _kind, message in issues)
    if isinstance(doc, dict):
        for key in ("name", "agent_name", "agentName"):
            if isinstance(doc.get(key), str) and doc[key]:
                return doc[key]
    return None


# --- git, read-only -------------------------------------------------------------------------


def _git_user_name(root: Path) -> str | None:
    # Letta writes the agent's display name as the repo's user.name (fallback "Letta Agent").
    # Read through memlab._git: the repo's config is untrusted and only this key is asked for.
    try:
        out = _hardened.run(
            root, "config", "--no-includes", "--local", "--get", "user.name", check=False
        )
    except MemlabError:  # a config we cannot read just leaves the name empty
        return None
    name = out.decode("utf-8", "replace").strip()
    if not name or name == "Letta Agent":
        return None
    return name


def _last_commit(root: Path, scope: Path | None, problems: list[str]) -> float | None:
    """Commit time of HEAD's newest commit touching ``scope`` (the whole repo when None)."""
    rel = scope.relative_to(root).as_posix() if scope is not None else ""
    try:
        if _hardened.rev_parse(root, "HEAD") is None:
            problems.append("no commits yet")
            return None
        out = _hardened.run(
            root, "log", "-1", "--format=%ct", "HEAD", "--", *([rel] if rel else [])
        )
    except MemlabError as exc:
        problems.append(f"unreadable git repository: {terminal_line(exc.message, 120)}")
        return None
    text = out.decode().strip()
    if not text:
        problems.append("no commit touches this store")
        return None
    try:
        return float(text)
    except ValueError:
        problems.append(f"git printed {terminal_line(text, 40)!r} as the last commit's time")
        return None
