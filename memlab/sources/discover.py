"""Agent inventory: find every memory store on this machine (or under a stand-in home folder).

Each store kind says where it lives with a ``find`` in :mod:`memlab.kinds`; the built-in ones
are below (see the Letta and elfmem format notes):

========================================  ================  ===================================
``~/.letta/agents/<id>/memory``           letta_memfs       Letta Code memfs, cloud backend
``~/.letta/lc-local-backend/memfs/<id>/memory``  letta_memfs  local backend
``~/.letta/agents/<id>/<repo>``             letta_memfs       a shared-memory repository
                                                             mounted beside memory/ (column
                                                             ``shared_repo`` names it)
``~/.souveraine/agents/<id>/memory``      souveraine        Souveraine memory repo
``~/.pi/unified/agents/<id>``             souveraine        Souveraine's unified inventory
``<folder>/.elfmem`` (memory/ or ledger/)  elfmem_substrate  elfmem markdown substrate
``~/.elfmem/databases/*.db``              elfmem_db         elfmem SQLite databases
========================================  ================  ===================================

Next to each Letta ``memory/`` folder sit ``memory-worktrees/`` (reflection worktrees) and
``memory-backup-*`` (plain copies); they are not agents and are never listed.

Everything here is read-only: folders are listed with ``os.scandir`` (symlinks not followed
below the agent folder; an agent folder or ``memory`` folder that is itself a symlink is listed
with a problem note naming its target and nothing through it is read or sized; an
``agent.yaml``, ``.letta/config.json`` or ``.db`` that is a symlink, FIFO, socket or device is a
note too, never opened), git is asked only for ``log -1`` and ``config --get user.name``, through
the hardened
:mod:`memlab._git`, and config
files are parsed, never touched.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd

from memlab import _git as _hardened
from memlab import kinds
from memlab._escape import terminal_line
from memlab._files import kind_of
from memlab._times import FIRST_SECOND, LAST_SECOND, out_of_range
from memlab.errors import MemlabError, StoreNotFound, UnrecognizedStore
from memlab.formats import _json
from memlab.formats._yaml import read_yaml
from memlab.kinds import Search
from memlab.kinds._memfs._locate import locate, shared_memory_name
from memlab.sources._git import shown_path as _shown_path
from memlab.store import categories

__all__ = [
    "discover",
    "walk_stores",
    "INVENTORY_COLUMNS",
    "find_letta_memfs",
    "find_souveraine",
    "find_elfmem_databases",
    "find_elfmem_substrates",
    "STORE_WALK_DEPTH",
]

INVENTORY_COLUMNS: dict[str, str] = {
    "agent_id": "string",
    "kind": "category",
    "layout": "category",
    "path": "string",
    "name": "string",
    "files": "Int64",
    "bytes": "Int64",
    "last_commit": "datetime64[ns, UTC]",
    "modified": "datetime64[ns, UTC]",
    "problem": "string",
    "shared_repo": "string",
}

# Folders never worth descending into while looking for .elfmem/ under a home folder.
_SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", "venv", "Library", "AppData"}
_MAX_CONFIG_BYTES = 1 << 20


def discover(root: str | Path | None = None, *, max_depth: int = 4) -> pd.DataFrame:
    """One row per agent memory store found under ``root`` (default: the user's home).

    ``root`` stands in for the home folder, so ``discover(tmp)`` looks at
    ``tmp/.letta/agents/*/memory`` and so on. ``.elfmem`` folders are searched up to
    ``max_depth`` levels below ``root`` (hidden folders and build/dependency folders skipped).

    Columns: agent_id, kind, layout (the memfs layout, as ``load_memfs`` names it), path (what
    ``memlab.load`` takes), name (agent.yaml ``name``, a ``.letta`` config ``name``, or the
    repo's git ``user.name``), files and bytes (working tree, ``.git`` excluded), last_commit
    (UTC commit time of the newest commit touching the store), modified (newest file mtime,
    UTC) and problem (why a field could not be read; NA when all is well).
    """
    home = Path(root).expanduser() if root is not None else Path.home()
    if root is not None and not home.is_dir():
        # A mistyped root would otherwise look like "no agents here".
        raise StoreNotFound(
            "no such folder to search for agent memory",
            path=home,
            hint="pass a home folder, one that holds .letta, .souveraine, .pi or .elfmem",
        )
    rows: list[dict[str, Any]] = []
    if home.is_dir():
        search = Search(home, real_home=root is None, max_depth=max_depth)
        for kind in kinds.kinds():
            for row in kind.find(search):
                rows.append({"kind": kind.name, **row})
        if root is not None:
            # A folder the user named (data/, a fleet of stores) lists every store memlab can
            # load under it; stores a kind's own search found keep their richer row. A real
            # home is not walked: any SQLite file there would look like a store.
            seen = {os.path.abspath(r["path"]) for r in rows}
            rows.extend(
                r for r in _walked_rows(home, max_depth) if os.path.abspath(r["path"]) not in seen
            )
    return _frame(rows)


#: How many folder levels below a root :func:`walk_stores` looks by default (a fleet's roots).
STORE_WALK_DEPTH = 8


def walk_stores(
    root: str | Path,
    *,
    max_depth: int = STORE_WALK_DEPTH,
    on_skip: Callable[[str, str], None] | None = None,
) -> Iterator[kinds.Evidence]:
    """Every store under ``root`` that some registered kind detects, as its evidence.

    A folder a kind claims (a git repo, an ``.elfmem`` project, an ``agent.yaml`` dir) is one
    store and is not looked into; files are offered to every kind's detector (SQLite header,
    JSON, ...). A file a detector recognised but could not read (a truncated database) comes
    back with kind ``"unreadable"`` and the error as its reason. Hidden and dependency folders
    are skipped, and folders deeper than ``max_depth`` below ``root`` are not visited. A
    symbolic link is never followed and a FIFO, socket or device file never opened (reading a
    FIFO blocks): ``on_skip(path, reason)`` is called for each such entry the walk passes over.

    Example::

        [e.kind for e in walk_stores("data")]
    """

    top = Path(root).expanduser()
    stack = [(top, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name in _SKIP_DIRS:
                continue
            path = Path(entry.path)
            is_dir = entry.is_dir(follow_symlinks=False)
            if not is_dir and not entry.is_file(follow_symlinks=False):
                # symlinks, FIFOs, sockets, devices: never opened
                if on_skip is not None:
                    reason = _skip_reason(entry)
                    if reason is not None:
                        on_skip(entry.path, reason)
                continue
            try:
                evidence = kinds.detect(path)
            except UnrecognizedStore:
                evidence = None
            except MemlabError as exc:
                # A store that a detector recognised but could not read (a truncated database)
                # is listed, not dropped: loading it gives the one-line error.
                evidence = None if is_dir else kinds.Evidence("unreadable", path, str(exc))
            if evidence is not None and (is_dir or _looks_like_store(path, evidence)):
                yield evidence
                continue
            if is_dir and depth < max_depth:
                stack.append((path, depth + 1))


def _skip_reason(entry: os.DirEntry) -> str | None:
    """Why the walk does not open ``entry`` (a link, FIFO, socket or device), or None."""
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return None  # gone since the folder was listed
    if stat.S_ISLNK(mode):
        return "a symbolic link, not followed (list its target in a manifest)"
    return _NEVER_OPENED.get(kind_of(mode))


_NEVER_OPENED = {
    "FIFO": "a FIFO (named pipe), never opened (reading one blocks)",
    "socket": "a socket, never opened",
    "device": "a device file, never opened",
}


#: A walked JSON file up to this size is parsed to check that it is an agent file or a blocks
#: list; a larger one is listed (its loader decides).
_MAX_WALK_JSON = 8 << 20


def _agent_json(doc: Any) -> bool:
    if isinstance(doc, str):  # a double-encoded agent file
        try:
            doc = json.loads(doc)
        except ValueError:
            return False
    if isinstance(doc, list):
        return bool(doc) and all(isinstance(b, dict) and "value" in b for b in doc)
    return isinstance(doc, dict) and any(isinstance(doc.get(k), list) for k in ("agents", "blocks"))


def _looks_like_store(path: Path, evidence: kinds.Evidence) -> bool:
    """While walking, a file counts as a store only if its content says so: a file claimed by
    its name alone is not listed, and a JSON file must be an ``.af`` or parse as an agent file
    (``agents``/``blocks`` lists) or a blocks list. The kind detectors accept more for a path
    given explicitly (so a damaged one gets a clear error), but a walk must not list manifests,
    summaries or text files named ``.db``."""
    if evidence.reason.startswith("named "):
        return False  # claimed by its name alone ("notes.db" holding text): not listed
    if not kinds.capable(evidence.kind, "json_file") or path.suffix == ".af":
        return True
    from memlab._files import NotRegularFile, read_regular

    try:
        if path.stat().st_size > _MAX_WALK_JSON:
            return True
        return _agent_json(json.loads(read_regular(path)))
    except (OSError, NotRegularFile, ValueError, RecursionError):
        return False


def _walked_rows(root: Path, max_depth: int) -> Iterator[dict[str, Any]]:
    for ev in walk_stores(root, max_depth=max_depth):
        path = Path(ev.source)
        if path.is_dir():
            # a memfs folder's layout as the loader names it, as the kinds' own search does
            layout, note = (
                _letta_layout(path) if kinds.capable(ev.kind, "memfs_layout") else (None, None)
            )
            yield _row(path.name, ev.kind, layout, path, repos=[path], note=note)
            continue
        st = path.stat()
        yield {
            "agent_id": path.stem,
            "kind": ev.kind,
            "layout": None,
            "path": str(path),
            "name": None,
            "files": 1,
            "bytes": st.st_size,
            "last_commit": None,
            "modified": st.st_mtime,
            "problem": ev.reason if ev.kind == "unreadable" else None,
        }


# --- locations ------------------------------------------------------------------------------


def _subdirs(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if e.is_dir())
    except OSError:
        return []


def _not_regular(path: Path) -> str | None:
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


def _unread_row(
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


def _linked_row(
    agent_id: str, kind: str, layout: str | None, path: Path, links: list[Path]
) -> dict[str, Any] | None:
    """The row of a store whose agent folder or ``memory`` folder is a symlink: listed, with
    the target in ``problem``, nothing under it read, sized or asked of git. None if neither is."""
    notes = [note for link in links if link.is_symlink() and (note := _not_regular(link))]
    return _unread_row(agent_id, kind, layout, path, "; ".join(notes)) if notes else None


def find_letta_memfs(search: Search) -> Iterator[dict[str, Any]]:
    """Letta Code memfs repos: ``~/.letta/agents/<id>/memory`` and the local backend's."""
    home = search.home
    local = home / ".letta" / "lc-local-backend"
    if search.real_home and os.environ.get("LETTA_LOCAL_BACKEND_DIR"):
        local = Path(os.environ["LETTA_LOCAL_BACKEND_DIR"]).expanduser()
    for parent in (home / ".letta" / "agents", local / "memfs"):
        for agent_dir in _subdirs(parent):
            memory = agent_dir / "memory"
            # Only <id>/memory is the repo; memory-worktrees/ and memory-backup-* beside it are
            # copies of it, never agents of their own.
            linked = _linked_row(agent_dir.name, "letta_memfs", None, memory, [agent_dir, memory])
            if linked is not None:
                if memory.is_symlink() or memory.is_dir():
                    yield linked
            elif memory.is_dir():
                layout, note = _letta_layout(memory)
                yield _row(agent_dir.name, "letta_memfs", layout, memory, repos=[memory], note=note)
            # Shared-memory repositories Letta Code mounts beside memory/ (cloud agents):
            # stores of the same agent, one row each.
            for shared in _subdirs(agent_dir):
                if shared_memory_name(shared) is None or not (shared / ".git").exists():
                    continue
                linked = _linked_row(agent_dir.name, "letta_memfs", None, shared, [shared])
                if linked is None:
                    layout, note = _letta_layout(shared)
                row = (
                    linked
                    if linked is not None
                    else _row(
                        agent_dir.name, "letta_memfs", layout, shared, repos=[shared], note=note
                    )
                )
                row["shared_repo"] = shared.name
                yield row


def _letta_layout(memory: Path) -> tuple[str | None, str | None]:
    """(the layout ``memlab.load`` gives this folder, None) from the loader's own detection
    (:func:`memlab.kinds._memfs._locate.locate`: HEAD's tree, or the files of a repository
    with no commits yet, and the evidence that Letta made it), or (None, why) when the loader
    would refuse the folder."""
    try:
        return locate(memory).layout, None
    except MemlabError as exc:
        return None, f"memlab cannot load it: {terminal_line(exc.message, 200)}"


def find_souveraine(search: Search) -> Iterator[dict[str, Any]]:
    """Souveraine memory repos (``~/.souveraine/agents/<id>/memory``) and the unified
    inventory's agent dirs (``~/.pi/unified/agents/<id>``)."""
    home = search.home
    for agent_dir in _subdirs(home / ".souveraine" / "agents"):
        memory = agent_dir / "memory"
        linked = _linked_row(
            agent_dir.name, "souveraine", "souveraine", memory, [agent_dir, memory]
        )
        if linked is not None:
            if memory.is_symlink() or memory.is_dir():
                yield linked
        elif memory.is_dir():
            yield _row(
                agent_dir.name,
                "souveraine",
                "souveraine",
                memory,
                config=agent_dir / "agent.yaml",
                repos=[memory],
            )
    for agent_dir in _subdirs(home / ".pi" / "unified" / "agents"):
        linked = _linked_row(agent_dir.name, "souveraine", "souveraine", agent_dir, [agent_dir])
        if linked is not None:
            yield linked
            continue
        # The seed layout keeps system/ and memory/ side by side; git may sit at either level.
        yield _row(
            agent_dir.name,
            "souveraine",
            "souveraine",
            agent_dir,
            config=agent_dir / "agent.yaml",
            repos=[agent_dir, agent_dir / "memory"],
        )


def find_elfmem_databases(search: Search) -> Iterator[dict[str, Any]]:
    """elfmem SQLite databases: ``~/.elfmem/databases/*.db``."""
    folder = search.home / ".elfmem" / "databases"
    try:
        with os.scandir(folder) as it:
            dbs = sorted(
                Path(e.path)
                for e in it
                if e.name.endswith(".db") and not e.is_dir(follow_symlinks=False)
            )
    except OSError:
        return
    for db in dbs:
        note = _not_regular(db)
        if note is not None:
            yield _unread_row(db.stem, "elfmem_db", None, db, note)
            continue
        files = [db] + [
            db.with_name(db.name + s)
            for s in ("-wal", "-shm")
            if db.with_name(db.name + s).is_file()
        ]
        stats = [f.stat() for f in files]
        yield {
            "agent_id": db.stem,
            "kind": "elfmem_db",
            "layout": None,
            "path": str(db),
            "name": None,
            "files": len(files),
            "bytes": sum(s.st_size for s in stats),
            "last_commit": None,
            "modified": max(s.st_mtime for s in stats),
            "problem": None,
        }


def find_elfmem_substrates(search: Search) -> Iterator[dict[str, Any]]:
    """Folders holding ``.elfmem/memory`` or ``.elfmem/ledger``, up to ``search.max_depth``
    levels below home (hidden and dependency folders skipped)."""
    home, max_depth = search.home, search.max_depth
    stack = [(home, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(
                    (e for e in it if e.is_dir(follow_symlinks=False)),
                    key=lambda e: e.name,
                    reverse=True,
                )
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name == ".elfmem":
                if (path / "memory").is_dir() or (path / "ledger").is_dir():
                    # The substrate is usually committed with its project: look for the repo
                    # from the project folder up to the home folder, no further.
                    ups = [folder, *[p for p in folder.parents if p == home or home in p.parents]]
                    yield _row(
                        folder.name or str(folder),
                        "elfmem_substrate",
                        "elfmem_substrate",
                        folder,
                        count_under=path,
                        repos=ups,
                        scope=path,
                    )
                continue
            if entry.name.startswith(".") or entry.name in _SKIP_DIRS or depth >= max_depth:
                continue
            stack.append((path, depth + 1))


# --- one row --------------------------------------------------------------------------------


def _row(
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
) -> dict[str, Any]:
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
        note = _not_regular(candidate)
        if note is not None:
            problems.append(note)
            break
        if candidate.is_file():
            name, yaml_id = _agent_yaml(candidate, problems)
            if yaml_id and yaml_id != agent_id and kinds.capable(kind, "uuid_folder"):
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
    note = _not_regular(config)
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


# --- frame ----------------------------------------------------------------------------------


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    """The row with every text a frame can hold: a folder or file name that is not UTF-8
    (surrogates from ``os.fsdecode``) is shown with U+FFFD and said so in ``problem``; a name
    read from JSON keeps its text with U+FFFD for a lone surrogate. One such store is one
    row like the others, never an inventory that fails to build."""
    out = dict(row)
    non_utf8 = False
    for col in ("agent_id", "path", "name"):
        value = out.get(col)
        if isinstance(value, str):
            if col != "name":
                value, bad = _shown_path(value)
                non_utf8 = non_utf8 or bad
            out[col] = _json.clean_text(value)
    if non_utf8:
        note = (
            "its path is not UTF-8 (shown with replacement characters); pass the real name, "
            "as the shell completes it, to load it"
        )
        out["problem"] = f"{out['problem']}; {note}" if out.get("problem") else note
    return out


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame([_shown(r) for r in rows], columns=list(INVENTORY_COLUMNS))
    for col in ("last_commit", "modified"):
        seconds = pd.to_numeric(df[col], errors="coerce").astype("float64")
        # A time pandas cannot hold (a commit dated year 3000) is NaT and said in ``problem``.
        far = seconds.notna() & ~seconds.between(FIRST_SECOND, LAST_SECOND)
        for i in far[far].index:
            note = f"{col}: {out_of_range(int(seconds[i]))}"
            df.at[i, "problem"] = (
                f"{df.at[i, 'problem']}; {note}" if isinstance(df.at[i, "problem"], str) else note
            )
        df[col] = pd.to_datetime(seconds.where(~far), unit="s", utc=True).astype(
            "datetime64[ns, UTC]"
        )
    for col, dtype in INVENTORY_COLUMNS.items():
        if dtype.startswith("datetime"):
            continue
        if dtype == "category":
            df[col] = categories(df[col])
        else:
            df[col] = df[col].astype(dtype)
    if not df.empty:
        df = df.sort_values(["kind", "agent_id", "path"], key=lambda s: s.astype(str)).reset_index(
            drop=True
        )
    return df
