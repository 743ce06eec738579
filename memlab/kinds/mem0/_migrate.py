"""A mem0 store -> one Letta Code memfs v2 repository, its event log replayed as commits.

mem0 retrieves memories by search; they are not all in the prompt. So each memory is a file in
the folder ``mem0/`` (``mem0/<memory_id>.md``, behind the folder's ``MEMORY.md`` index: memfs
v2's projected, not core, memory), with Letta's frontmatter (``name``, ``description``: whose
memory it is, where the vector store says).

Commits (:func:`plan_mem0_letta`):

1. ``chore: initialize memory`` by memlab's migration identity at the first event's time: the
   root ``MEMORY.md``, ``mem0/MEMORY.md`` (listing the current memories) and
   ``.memfs.config.json``.
2. **One commit per ``history`` row, in mem0's order** (the rowid): ADD writes the file, UPDATE
   rewrites it, DELETE removes it. Each is dated at the event's own time and authored by the
   mem0 actor where mem0 recorded one (``actor_id``, else ``mem0 <role>``), with trailers
   ``Mem0-Memory``, ``Mem0-History-Id``, ``Mem0-Event`` and ``Mem0-Time`` (the event's
   time in UTC, ``none`` where mem0 wrote none). An event without a time (mem0 0.1.x's deletions)
   takes the time of the event before it, so history never runs backwards, and is flagged.
   ``git log -p mem0/<id>.md`` is the memory's life.
3. The side file ``.memlab/mem0.json``: per memory its ids, hash, metadata and history ids, by
   the migration identity at the last event's time.

Every commit is checked against memlab's port of Letta Code 0.34.12's validator
(:func:`memlab.migrations._letta_v2.check`) before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from memlab._escape import commit_line
from memlab._gitobj import Signature
from memlab.errors import MigrationError
from memlab.formats import _json
from memlab.formats import letta_memfs as fmt
from memlab.migrations import _letta_v2
from memlab.migrations._letta import MemFile
from memlab.migrations._plan import (
    Plan,
    PlannedCommit,
    PlannedRepo,
    flags_frame,
    moved_frame,
    signature_at,
)
from memlab.migrations._verify import Copy, CopyParity, check_text_retrieval
from memlab.store import Store

__all__ = [
    "Mem0Parity",
    "check_copy",
    "plan_mem0_letta",
    "FOLDER",
    "SIDE_FILE",
    "TRAILERS",
    "memory_path",
    "trailers_of",
]

FOLDER = "mem0"
SIDE_FILE = ".memlab/mem0.json"
TRAILERS = ("Mem0-Memory", "Mem0-History-Id", "Mem0-Event", "Mem0-Time")
_SAFE_ID = set("abcdefghijklmnopqrstuvwxyz0123456789-_")


def memory_path(memory_id: str) -> str:
    """``mem0/<memory_id>.md``; an id that is not a plain uuid-like name is slugged."""
    mid = str(memory_id).lower()
    name = (
        mid if mid and set(mid) <= _SAFE_ID else "".join(c if c in _SAFE_ID else "_" for c in mid)
    )
    return f"{FOLDER}/{name[:120] or 'memory'}.md"


def trailers_of(message: str) -> dict[str, str]:
    """The ``Mem0-*`` trailers of a commit message."""
    out = {}
    for line in message.splitlines():
        key, sep, val = line.partition(": ")
        if sep and key in TRAILERS:
            out[key] = val.strip()
    return out


def _seconds(ts: Any) -> int | None:
    if ts is None or pd.isna(ts):
        return None
    return int(pd.Timestamp(ts).floor("s").timestamp())


def _author(actor: Any, role: Any, seconds: int) -> Signature:
    if isinstance(actor, str) and actor.strip():
        name = commit_line(actor)
    else:
        name = f"mem0 {commit_line(role) if isinstance(role, str) and role.strip() else 'memory'}"
    return Signature(name, "mem0@localhost", seconds)


def _description(mid: str, ids: dict[str, Any]) -> str:
    whose = ", ".join(f"{k.removesuffix('_id')} {v}" for k, v in ids.items() if v)
    raw = f"mem0 memory {mid}" + (f" ({whose})" if whose else "")
    return _letta_v2.description(raw, mid)


def plan_mem0_letta(
    store: Store,
    source: Path,
    *,
    target: str = "letta",
    dest: str | Path | None = None,
    layout: str | None = None,
) -> Plan:
    """The plan (see the module docstring). ``layout`` must be v2 (or None)."""
    if layout not in (None, "v2"):
        raise MigrationError(
            f"a mem0 store migrates to memfs v2 only, not {layout!r}",
            path=source,
            hint="leave out --layout",
        )
    hist = store.history.sort_values("seq")
    hist = hist[hist["memory_id"].notna()]
    mem = store.memories.set_index("memory_id", drop=False)
    payload = store.payloads.set_index("memory_id", drop=False) if len(store.payloads) else None
    flags: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    files: dict[str, MemFile] = {}
    paths: dict[str, str] = {}
    for mid, row in mem.iterrows():
        ids = {
            k: row[k] if not pd.isna(row[k]) else None for k in ("user_id", "agent_id", "run_id")
        }
        path = memory_path(str(mid))
        if path in paths.values():
            raise MigrationError(f"two memory ids map to {path}", path=source)
        paths[str(mid)] = path
        files[str(mid)] = MemFile(
            path=path,
            description=_description(str(mid), ids),
            body="",
            item=str(mid),
            label=str(mid),
        )
    body: list[PlannedCommit] = []
    last = None
    current: dict[str, str] = {}
    for ev in hist.itertuples(index=False):
        mid = str(ev.memory_id)
        if pd.isna(ev.event):  # not ADD/UPDATE/DELETE: a problem row of the loader
            flags.append(
                {
                    "kind": "unknown_event",
                    "item": mid,
                    "path": paths[mid],
                    "severity": "warning",
                    "message": f"history row {ev.seq} is not an ADD, UPDATE or DELETE: not "
                    "replayed",
                }
            )
            continue
        at = _seconds(ev.at)
        if at is None:
            at = last if last is not None else _seconds(hist["at"].min())
            flags.append(
                {
                    "kind": "untimed_event",
                    "item": mid,
                    "path": paths[mid],
                    "severity": "info",
                    "message": f"history row {ev.seq} ({ev.event}) has no time in mem0; its "
                    "commit is dated at the event before it",
                }
            )
        at = at if at is not None else signature_at(None).timestamp
        last = at if last is None else max(last, at)
        raw_time = "none" if pd.isna(ev.at) else pd.Timestamp(ev.at).isoformat()
        trailer = (
            f"\n\nMem0-Memory: {commit_line(mid)}\nMem0-History-Id: {commit_line(str(ev.id))}"
            f"\nMem0-Event: {ev.event}\nMem0-Time: {raw_time}"
        )
        f = files[mid]
        if ev.event == "DELETE":
            if mid not in current:
                continue  # nothing to remove: the loader's problems say why
            del current[mid]
            body.append(
                PlannedCommit(
                    f"mem0: delete {commit_line(mid)}" + trailer,
                    (),
                    author=_author(ev.actor_id, ev.role, last),
                    removed=(f.path,),
                )
            )
            continue
        text = "" if pd.isna(ev.new_memory) else str(ev.new_memory)
        current[mid] = text
        f.body = text
        data = _letta_v2.render(f)
        verb = "add" if ev.event == "ADD" else "rewrite"
        body.append(
            PlannedCommit(
                f"mem0: {verb} {commit_line(mid)}" + trailer,
                ((f.path, data),),
                author=_author(ev.actor_id, ev.role, last),
            )
        )
    live = [files[m] for m in current]
    for m, f in files.items():
        moved.append(
            {
                "kind": "block" if m in current else "deleted_memory",
                "item": m,
                "label": m,
                "repo": "",
                "path": f.path if m in current else None,
                "section": FOLDER,
                "chars": len(current[m]) if m in current else None,
                "note": None if m in current else "deleted in mem0: in the history only",
            }
        )
    first = _seconds(hist["at"].min())
    first = first if first is not None else signature_at(None).timestamp
    migration = Signature(fmt.MIGRATION_NAME, fmt.MIGRATION_EMAIL, first)
    side = PlannedCommit(
        "chore: record mem0 ids and metadata\n\nWhat memfs frontmatter has no field for, "
        f"from {commit_line(str(source))}.",
        ((SIDE_FILE, _side(store, paths, current, payload)),),
        author=Signature(fmt.MIGRATION_NAME, fmt.MIGRATION_EMAIL, last or first),
    )
    commits = _letta_v2.finish_repo(
        live,
        body,
        side,
        flags,
        init_message="chore: initialize memory",
        protect_message=_letta_v2.protect_message(str(source.name)),
        init_author=migration,
    )
    notes = [
        f"{len(hist)} mem0 history events replayed as {len(body)} commits; "
        f"{len(live)} memories current, {len(files) - len(live)} deleted (in the history only)"
    ]
    return Plan(
        target,
        source,
        [PlannedRepo("", tuple(commits), title=source.name)],
        signature_at(pd.Timestamp(last, unit="s", tz="UTC") if last else None),
        moved_frame(moved),
        flags_frame(flags),
        notes,
        layout="v2",
    )


def _side(
    store: Store, paths: dict[str, str], current: dict[str, str], payload: pd.DataFrame | None
) -> bytes:
    hist = store.history
    out = []
    for m in sorted(paths):
        rec: dict[str, Any] = {
            "memory_id": m,
            "path": paths[m] if m in current else None,
            "history_ids": [str(i) for i in hist.loc[hist["memory_id"] == m, "id"]],
        }
        if payload is not None and m in payload.index:
            p = payload.loc[m]
            for k in ("user_id", "agent_id", "run_id", "actor_id", "role", "hash", "metadata"):
                v = p[k]
                rec[k] = None if pd.isna(v) else str(v)
        out.append(rec)
    doc = {"source": "mem0", "history_schema": store.meta.get("history_schema"), "memories": out}
    return (_json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


def check_copy(
    rows: Any,
    store: Store,
    dest: Path,
    ref: str | None,
    repo_folders: dict[str, Path],
    copies: dict[str, Store],
) -> tuple[dict[str, str], dict[str, str]]:
    """Parity of a migrated mem0 store: per memory, ``presence`` (a current memory has its file,
    a deleted one none), ``content`` (the file's body, as Letta Code reads it, is the memory's
    current text) and ``history`` (the commits carrying its ``Mem0-Memory`` trailer are its
    history rows, in order, each dated at the event's time where mem0 wrote one); and the side
    file. Returns ``({memory_id: text}, {memory_id: body})`` of the current memories."""
    from memlab.sources import _git

    folder = repo_folders.get("", next(iter(repo_folders.values())))
    real = dest if "" in repo_folders else next(iter(repo_folders.values()))
    mem = store.memories
    before = {
        str(r.memory_id): "" if pd.isna(r.text) else str(r.text)
        for r in mem[~mem["deleted"]].itertuples(index=False)
    }
    after: dict[str, str] = {}
    for r in mem.itertuples(index=False):
        mid = str(r.memory_id)
        path = memory_path(mid)
        file = folder / path
        text = file.read_text(encoding="utf-8") if file.is_file() else None
        want = "deleted" if r.deleted else path
        rows.add("presence", mid, want, path if text is not None else "deleted", path=path)
        if text is not None and not r.deleted:
            after[mid] = fmt.read_as_client(text).body
            rows.add("content", mid, before[mid], after[mid], path=path)
    raw = _git.run_git(real, "log", "--reverse", "--format=%at%x00%B%x01", ref or "HEAD")
    seen: dict[str, list[tuple[str, str, int]]] = {}
    for chunk in raw.decode("utf-8", "replace").split("\x01"):
        stamp, _, message = chunk.strip("\n").partition("\x00")
        t = trailers_of(message)
        if "Mem0-Memory" in t and stamp.isdigit():
            seen.setdefault(t["Mem0-Memory"], []).append(
                (t.get("Mem0-History-Id", ""), t.get("Mem0-Event", ""), int(stamp))
            )
    hist = store.history.sort_values("seq")
    for mid, g in hist[hist["memory_id"].notna()].groupby("memory_id", sort=False):
        got = seen.get(commit_line(str(mid)), [])
        g = g[g["event"].notna()]  # an unknown event is not replayed (flagged)
        want_ids = [(str(i), str(e)) for i, e in zip(g["id"], g["event"])]
        rows.add(
            "history",
            mid,
            f"{len(want_ids)} commit(s) {[e for _, e in want_ids]}",
            f"{len(got)} commit(s) {[e for _, e, _ in got]}",
            ok=[(i, e) for i, e, _ in got] == want_ids,
            path=memory_path(str(mid)),
        )
        times = [_seconds(a) for a in g["at"]]
        dated = [(w, s) for w, (_, _, s) in zip(times, got) if w is not None]
        rows.add(
            "history_times",
            mid,
            [w for w, _ in dated],
            [s for _, s in dated],
            path=memory_path(str(mid)),
            detail="commit times of the events mem0 dated",
        )
    side = folder / SIDE_FILE
    rows.add("side_file", SIDE_FILE, "present", "present" if side.is_file() else "missing")
    return before, after


class Mem0Parity(CopyParity):
    """What ``memlab migrate --verify`` checks on a migrated mem0 store: :func:`check_copy`
    (presence, content and history per memory, and the side file), then the same top-k
    retrieval over the current memories' texts before and after."""

    def check(self, rows: Any, copy: Copy) -> None:
        before, after = check_copy(
            rows, copy.store, copy.dest, copy.ref, copy.repo_folders, copy.copies
        )
        check_text_retrieval(rows, copy, before, after)
