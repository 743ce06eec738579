"""Agent inventory: find every memory store on this machine (or under a stand-in home folder).

Each store kind says where it lives with a ``find`` in :mod:`memlab.kinds`, in its own package
(``memlab/kinds/<kind>/_find.py``); the built-in ones look at:

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

A folder the user names is also walked (:func:`walk_stores`): each store a kind detects there is
listed with the kind's own row (:meth:`memlab.kinds.KindBase.walked_folder`) and a file only if
its kind lists it (:meth:`memlab.kinds.KindBase.lists_file`). The rows' pieces are
:mod:`memlab.sources._discover_rows`.

Everything here is read-only: folders are listed with ``os.scandir`` (symlinks not followed
below the agent folder; an agent folder or ``memory`` folder that is itself a symlink is listed
with a problem note naming its target and nothing through it is read or sized; an
``agent.yaml``, ``.letta/config.json`` or ``.db`` that is a symlink, FIFO, socket or device is a
note too, never opened), git is asked only for ``log -1`` and ``config --get user.name``, through
the hardened :mod:`memlab._git`, and config files are parsed, never touched.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd

from memlab import kinds
from memlab._files import kind_of
from memlab._times import FIRST_SECOND, LAST_SECOND, out_of_range
from memlab.errors import MemlabError, StoreNotFound, UnrecognizedStore
from memlab.formats import _json
from memlab.kinds import Search
from memlab.sources._discover_rows import SKIP_DIRS, row
from memlab.sources._git import shown_path as _shown_path
from memlab.store import categories

__all__ = [
    "discover",
    "walk_stores",
    "INVENTORY_COLUMNS",
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
            if entry.name.startswith(".") or entry.name in SKIP_DIRS:
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


def _looks_like_store(path: Path, evidence: kinds.Evidence) -> bool:
    """While walking, a file counts as a store only if its content says so: a file claimed by
    its name alone is not listed, and a JSON file must be an ``.af`` or parse as an agent file
    (``agents``/``blocks`` lists) or a blocks list. The kind detectors accept more for a path
    given explicitly (so a damaged one gets a clear error), but a walk must not list manifests,
    summaries or text files named ``.db``."""
    if evidence.reason.startswith("named "):
        return False  # claimed by its name alone ("notes.db" holding text): not listed
    kind = kinds.lookup(evidence.kind)
    return kind is None or kind.lists_file(path)


def _walked_rows(root: Path, max_depth: int) -> Iterator[dict[str, Any]]:
    for ev in walk_stores(root, max_depth=max_depth):
        path = Path(ev.source)
        if path.is_dir():
            # the kind's own row (a memfs folder's layout, as its find gives it), else one
            # with no layout
            kind = kinds.lookup(ev.kind)
            try:
                walked = kind.walked_folder(path) if kind is not None else None
            except UnrecognizedStore:
                continue  # the kind's loader takes it for no store (a code repository)
            yield (
                dict(walked)
                if walked is not None
                else row(path.name, ev.kind, None, path, repos=[path])
            )
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
