"""A whole Letta server (its database) → one Letta Code memfs repository per agent, with history.

Layout and frontmatter are the Agent File migration's (:mod:`memlab.migrations._letta`, whose
writers this module reuses): memfs v2 by default (:mod:`memlab.migrations._letta_v2`: root files
by Letta Code's mapping, limits and read-only blocks in ``.memfs.config.json``, commit 1 holds
``MEMORY.md`` and that config, and a commit before the side file lists ``readOnlyFiles``), or with
``layout="v1"`` ``system/{label}.md`` per block with description / limit / read_only in
frontmatter; every other column in ``.memlab/letta-blocks.json``, one repository per agent in
``<dest>/<agent-name>/`` (the destination itself when one agent is migrated). The steps below
name v1's files.

Commits, per agent repository:

1. ``chore: initialize memory`` (``.letta/config.json``), by memlab's migration identity, dated
   at the agent's ``created_at``.
2. **One commit per ``block_history`` row**, in sequence order per block (blocks interleaved by
   the rows' ``created_at``), authored and dated as the row says, in Letta's author conventions:
   an agent (``actor_type = letta_agent``) as ``{agent name} <{agent id}@letta.com>``, a user
   (``letta_user``) as ``User {user id} <{user id}@letta.ai>`` (what the Letta server writes).
   Each message carries ``Letta-Block``, ``Letta-History-Id`` and ``Letta-History-Sequence``
   trailers, so ``git log -p system/human.md`` is the block's checkpointed evolution and a
   block's history commits can be counted (``--verify`` does). A history row holds no
   ``read_only``, so these commits never set it (Letta Code's hook forbids that to agents).
3. ``migrate: final state …`` by the migration identity, dated at the latest ``updated_at``:
   every block with no history, and every block whose current state differs from its last
   replayed checkpoint: **undone** (the block points at an earlier checkpoint; the later,
   redo-able ones stay in the history), **edited after its last checkpoint**, or **read_only**
   (set by the migration, as the Letta server does when it creates a memfs repository). Left out
   when nothing differs.
4. The side file, as for an Agent File.

Real servers usually hold no history at all (no server code path checkpoints); then each
repository gets commits 1, 3 and 4 only, ``created_at`` / ``updated_at`` / ``_last_updated_by_id``
stay in the side file, and the plan's notes say that no history existed.

**Shared blocks** (one block attached to several agents): the file, with its whole history, is
written into *each* agent's repository at the same path (memfs has no shared primitive); the
side file lists ``shared_with`` and the value's sha256 so later drift between copies shows.
Soft-deleted blocks (``is_deleted``) are not migrated and are flagged.

Every migration-identity commit is dated from the source, never from the clock, so a re-run of
an unchanged server finds the same commit ids and changes nothing.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pandas as pd

from memlab._escape import commit_line
from memlab._gitobj import Signature
from memlab.audits._integrity import letta_server_integrity
from memlab.errors import MigrationError
from memlab.formats import letta_memfs as fmt
from memlab.migrations import _letta, _letta_v2
from memlab.migrations._plan import (
    FALLBACK_EPOCH,
    Plan,
    PlannedCommit,
    PlannedRepo,
    flags_frame,
    moved_frame,
)
from memlab.store import Store

__all__ = [
    "plan_letta_server",
    "select_agents",
    "server_view",
    "history_trailers",
    "TRAILER_BLOCK",
    "TRAILER_SEQUENCE",
    "check_server",
]

TRAILER_BLOCK = "Letta-Block"
TRAILER_HISTORY = "Letta-History-Id"
TRAILER_SEQUENCE = "Letta-History-Sequence"
# git strips these from both ends of an author name ("crud" in git's ident.c).
_CRUD = "".join(chr(c) for c in range(33)) + ".,:;<>\"\\'"
_IDENT_BAD = re.compile(r"[<>\x00-\x1f\x7f]")


def _ident(text: Any, fallback: str) -> str:
    """A name or email git keeps byte for byte: the commit-line rule (line breaks, controls,
    bidi made visible), then no ``<``, ``>`` and no end crud."""
    clean = "" if text is None else commit_line(text)
    clean = " ".join(_IDENT_BAD.sub(" ", clean).split()).strip(_CRUD)
    return clean or fallback


def _seconds(ts: Any) -> int | None:
    if ts is None or pd.isna(ts):
        return None
    ts = pd.Timestamp(ts)
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return int(ts.floor("s").timestamp())


def select_agents(store: Store, agents: str | list[str] | None) -> list[str] | None:
    """Agent ids for ``agents`` (names or ids); None means every agent."""
    if agents is None:
        return None
    wanted = [agents] if isinstance(agents, str) else list(agents)
    frame = store.agents
    out: list[str] = []
    for w in wanted:
        hit = frame[(frame["agent_id"].astype(str) == w) | (frame["name"].astype(str) == w)]
        if hit.empty:
            names = ", ".join(sorted(frame["name"].dropna().astype(str)))[:300]
            raise MigrationError(
                f"no agent named or with id {w!r} on this server", hint=f"agents: {names}"
            )
        if len(hit) > 1:
            raise MigrationError(f"{len(hit)} agents are named {w!r}", hint="pass the agent id")
        out.append(str(hit["agent_id"].iloc[0]))
    return sorted(set(out))


def server_view(store: Store, agent_ids: list[str] | None, flags: list[dict]) -> Store:
    """The blocks, agents and links that migrate: live blocks of the selected agents."""
    blocks = store.blocks
    deleted = blocks[blocks["is_deleted"].fillna(False).astype(bool)]
    for row in deleted.itertuples(index=False):
        flags.append(
            {
                "kind": "deleted_block",
                "item": str(row.block_id),
                "path": None,
                "severity": "info",
                "message": f"label {row.label!r} is deleted on the server (is_deleted); "
                "not migrated",
            }
        )
    live = blocks[~blocks["is_deleted"].fillna(False).astype(bool)]
    links = store.block_agents[store.block_agents["block_id"].isin(live["block_id"])]
    agents = store.agents[~store.agents["is_deleted"].fillna(False).astype(bool)]
    if agent_ids is not None:
        agents = agents[agents["agent_id"].astype(str).isin(agent_ids)]
        links = links[links["agent_id"].astype(str).isin(agent_ids)]
        live = live[live["block_id"].isin(links["block_id"])]
    frames = {
        "agents": agents.reset_index(drop=True),
        "blocks": live.reset_index(drop=True),
        "block_agents": links.reset_index(drop=True),
    }
    return Store(kind="letta_blocks", path=store.path, frames=frames, meta=dict(store.meta))


def _description(raw: Any, label: str, layout: str = "v1") -> str:
    raw = _letta.value_or_none(raw)
    if layout == "v2":
        return _letta_v2.description(raw, label)
    desc = " ".join(str(raw).split()) if raw is not None else ""
    return desc or f"Memory block {label}"


def _limit(raw: Any) -> int | None:
    raw = _letta.value_or_none(raw)
    return int(raw) if raw is not None and int(raw) > 0 else None


@dataclass
class _Event:
    seconds: int
    path: str
    seq: int
    file: _letta.MemFile
    row: dict


def history_trailers(message: str) -> dict[str, str]:
    """The ``Letta-*`` trailers of a commit message, as memlab writes them: read from the last
    paragraph only (git's trailer block), split at ``\n`` only, and only when that paragraph is
    nothing but ``Key: value`` lines naming each key once. A ``Letta-Block:`` anywhere else (a
    subject, a body line, a value), or a key given twice, is not a trailer: store text in a
    message cannot reassign a checkpoint. Values are as written, through the commit-line rule."""
    paragraphs = [p for p in message.replace("\r\n", "\n").strip("\n").split("\n\n") if p.strip()]
    if len(paragraphs) < 2:  # a subject alone has no trailers
        return {}
    out: dict[str, str] = {}
    for line in paragraphs[-1].split("\n"):
        key, sep, value = line.partition(": ")
        if not sep or not key or " " in key:
            return {}
        if key in (TRAILER_BLOCK, TRAILER_HISTORY, TRAILER_SEQUENCE):
            if key in out:
                return {}
            out[key] = value.strip()
    return out


def plan_letta_server(
    store: Store,
    source: Path,
    *,
    target: str = "letta",
    dest: str | Path | None = None,
    agents: str | list[str] | None = None,
    layout: str | None = None,
) -> Plan:
    """The whole-server migration plan (see the module docstring); ``layout`` as for an Agent
    File (v2 by default: :mod:`memlab.migrations._letta_v2`)."""
    if target != "letta":
        raise MigrationError(
            f"a Letta server database migrates to Letta Code memfs, not to {target!r}",
            hint="use --to letta (the default for this source)",
        )
    layout = _letta_v2.check_layout(layout, target)
    flags: list[dict] = []
    moved: list[dict] = []
    view = server_view(store, select_agents(store, agents), flags)
    if view.agents.empty:
        raise MigrationError("no agent to migrate on this server", hint="check --agent")
    specs = _letta.letta_repos(view, flags, layout)
    history = store.block_history
    by_block = (
        {
            str(b): g.sort_values("sequence_number", kind="stable").to_dict("records")
            for b, g in history.groupby("block_id", sort=False)
        }
        if len(history)
        else {}
    )
    # A checkpoint chain only a direct write could make is not replayed: the block moves in
    # its final state, and a flag names what was not replayed and why.
    for block_id, reasons in unreplayable_blocks(store).items():
        dropped = by_block.pop(block_id, None)
        for reason in reasons:
            flags.append(
                {
                    "kind": "integrity",
                    "item": block_id,
                    "path": None,
                    "severity": "warning",
                    "message": f"{reason}; "
                    + (
                        f"its {len(dropped)} checkpoint(s) are not replayed, the block "
                        "moves in its final state"
                        if dropped
                        else "it has no checkpoint to replay"
                    ),
                }
            )
    names = dict(zip(store.agents["agent_id"].astype(str), store.agents["name"]))
    created = dict(zip(store.agents["agent_id"].astype(str), store.agents["created_at"]))
    block_rows = {str(r["block_id"]): r for r in view.blocks.to_dict("records")}
    all_times = [
        s
        for s in map(_seconds, list(view.blocks["updated_at"]) + list(history["created_at"]))
        if s is not None
    ]
    end = max(all_times, default=FALLBACK_EPOCH)
    signature = Signature(fmt.MIGRATION_NAME, fmt.MIGRATION_EMAIL, end)
    source_name = source.name
    repos: list[PlannedRepo] = []
    replayed_blocks: set[str] = set()
    for spec in specs:
        md = {f.path: _letta.render(f, layout) for f in spec.files}
        if layout == "v1":
            flags.extend(_letta.check_hook(spec.files, md))
        agent_id = str((spec.agent or {}).get("agent_id") or "")
        events: list[_Event] = []
        for f in spec.files:
            for row in by_block.get(f.item, []):
                sec = _seconds(row.get("created_at"))
                if sec is None:
                    sec = _seconds(block_rows[f.item].get("updated_at")) or end
                    flags.append(
                        {
                            "kind": "history_undated",
                            "item": f.item,
                            "path": f.path,
                            "severity": "warning",
                            "message": f"history row {row['history_id']} has no created_at; "
                            "dated at the block's updated_at",
                        }
                    )
                events.append(_Event(sec, f.path, int(row["sequence_number"]), f, row))
        events = _interleave(events)
        starts = [
            s
            for s in [_seconds(created.get(agent_id))] + [e.seconds for e in events[:1]]
            if s is not None
        ]
        t0 = min(starts, default=end)
        commits = [
            PlannedCommit(
                "chore: initialize memory\n\nAs the Letta server creates a memory repository."
                f"\n\nMemlab-Source: {commit_line(source_name)}",
                ((fmt.CONFIG_PATH, b'{"version": 1}\n'),),
                author=Signature(fmt.MIGRATION_NAME, fmt.MIGRATION_EMAIL, t0),
            )
        ]
        head: dict[str, bytes] = {}
        n_of = {f.item: len(by_block.get(f.item, [])) for f in spec.files}
        for ev in events:
            commits.append(_history_commit(ev, n_of[ev.file.item], head, names, flags, layout))
            replayed_blocks.add(ev.file.item)
        final: dict[str, bytes] = {}
        commit_reasons: list[str] = []
        for f in sorted(spec.files, key=lambda f: f.path):
            data = md[f.path]
            if head.get(f.path) == data:
                continue
            final[f.path] = data
            commit_reasons.append(
                commit_line(
                    f"{f.path}: "
                    + _why(f, block_rows[f.item], by_block.get(f.item, []), flags, layout)
                )
            )
        if final:
            last_update = max(
                [
                    s
                    for s in (_seconds(block_rows[f.item].get("updated_at")) for f in spec.files)
                    if s is not None
                ]
                + [e.seconds for e in events[-1:]]
                + [t0]
            )
            commits.append(
                PlannedCommit(
                    f"migrate: final state of {len(final)} memory block(s)"
                    + (f" for agent {commit_line(spec.title)}" if spec.agent else "")
                    + "\n\n"
                    + "\n".join(commit_reasons)
                    + f"\n\nMemlab-Source: {commit_line(source_name)}",
                    tuple(sorted(final.items())),
                    author=Signature(fmt.MIGRATION_NAME, fmt.MIGRATION_EMAIL, max(last_update, t0)),
                )
            )
        times: dict[str, str | None] = {"migrated_at": None, "source_created_at": None}
        side = _letta.side_file(spec, source, "", "letta", times, layout)
        commits.append(
            PlannedCommit(
                "chore(memlab): keep what memory files cannot hold\n\nBlock ids, metadata, "
                "template fields, created_at/updated_at/_last_updated_by_id and original "
                "labels/descriptions."
                f"\n\nMemlab-Source: {commit_line(source_name)}",
                ((_letta.SIDE_FILE, side),),
                author=Signature(
                    fmt.MIGRATION_NAME,
                    fmt.MIGRATION_EMAIL,
                    max(cast(Signature, commits[-1].author).timestamp, t0),
                ),
            )
        )
        if layout == "v2":  # MEMORY.md, indexes and limits first; read-only list last
            commits = _letta_v2.finish_repo(
                spec.files,
                commits[1:-1],
                commits[-1],
                flags,
                init_message=commits[0].message,
                init_author=commits[0].author,
                protect_message=_letta_v2.protect_message(source_name),
            )
        repos.append(PlannedRepo(spec.subdir, tuple(commits), title=spec.title))
        for f in spec.files:
            n = n_of[f.item]
            moved.append(
                {
                    "kind": "block",
                    "item": f.item,
                    "label": f.label,
                    "repo": spec.subdir,
                    "path": f.path,
                    "section": _letta_v2.section(f.path, layout),
                    "chars": len(f.body),
                    "note": f"{n} history commit(s)" if n else "no history: final state",
                }
            )
        moved.append(
            {
                "kind": "side_file",
                "item": _letta.SIDE_FILE,
                "label": None,
                "repo": spec.subdir,
                "path": _letta.SIDE_FILE,
                "section": ".memlab",
                "chars": None,
                "note": "fields frontmatter cannot hold",
            }
        )
    plan = Plan(
        "letta",
        source,
        repos,
        signature,
        moved_frame(moved),
        flags_frame(flags),
        _notes(store, view, replayed_blocks),
        layout=layout,
    )
    plan.agent_ids = select_agents(store, agents)  # for verify
    return plan


def _interleave(events: list[_Event]) -> list[_Event]:
    """Blocks interleaved by time, each block's rows strictly in sequence order."""
    queues: dict[str, list[_Event]] = {}
    for ev in sorted(events, key=lambda e: (e.path, e.seq)):
        queues.setdefault(ev.path, []).append(ev)
    heap = [(q[0].seconds, path, 0) for path, q in queues.items()]
    heapq.heapify(heap)
    out: list[_Event] = []
    while heap:
        _, path, i = heapq.heappop(heap)
        out.append(queues[path][i])
        if i + 1 < len(queues[path]):
            nxt = queues[path][i + 1]
            # Never before the previous row of the same block, even if its clock went back.
            heapq.heappush(heap, (max(nxt.seconds, out[-1].seconds), path, i + 1))
    return out


def _history_commit(
    ev: _Event,
    n: int,
    head: dict[str, bytes],
    names: dict[str, Any],
    flags: list[dict],
    layout: str = "v1",
) -> PlannedCommit:
    row, f = ev.row, ev.file
    label = f.path[:-3] if f.path.endswith(".md") else f.path
    snapshot = _letta.MemFile(
        path=f.path,
        description=_description(row.get("description"), f.label, layout),
        body="" if _letta.value_or_none(row.get("value")) is None else str(row["value"]),
        read_only=False,
        limit=_limit(row.get("limit")),
        item=f.item,
    )
    data = _letta.render(snapshot, layout)
    # v2 commits are checked together, tree-wide, by _letta_v2.finish_repo.
    violations = (
        []
        if layout == "v2"
        else fmt.check_precommit(
            f.path,
            data.decode("utf-8"),
            head[f.path].decode("utf-8") if f.path in head else None,
            change="M" if f.path in head else "A",
        )
    )
    if violations:
        shown = "; ".join(f"{v.rule}: {v.message}" for v in violations)
        raise MigrationError(
            f"{f.path} checkpoint {ev.seq} would fail Letta Code's pre-commit hook: {shown}",
            hint="report this as a memlab bug",
        )
    hist_label = _letta.value_or_none(row.get("label"))
    if hist_label is not None and str(hist_label) != str(f.side.get("label")):
        flags.append(
            {
                "kind": "label_changed_in_history",
                "item": f.item,
                "path": f.path,
                "severity": "info",
                "message": f"checkpoint {ev.seq} has label {hist_label!r}; every "
                "checkpoint is replayed at the block's current path",
            }
        )
    kind = str(_letta.value_or_none(row.get("actor_type")) or "")
    actor = str(_letta.value_or_none(row.get("actor_id")) or "")
    if kind == "letta_agent" and actor:
        email = _ident(f"{actor}@letta.com", "agent@letta.ai")
        who = Signature(_ident(names.get(actor), _ident(actor, "Letta Agent")), email, ev.seconds)
    elif kind == "letta_user" and actor:
        who = Signature(
            _ident(f"User {actor}", "Letta User"),
            _ident(f"{actor}@letta.ai", "system@letta.ai"),
            ev.seconds,
        )
    else:
        who = Signature("Letta System", "system@letta.ai", ev.seconds)
        flags.append(
            {
                "kind": "unknown_actor",
                "item": f.item,
                "path": f.path,
                "severity": "warning",
                "message": f"checkpoint {ev.seq}: actor_type {kind or None!r} names no agent "
                "or user; committed as the server's system identity",
            }
        )
    verb = "Create" if f.path not in head else "Update"
    head[f.path] = data
    # Every store string through the commit-line rule: none can end its line or add a trailer.
    message = (
        f"{verb} {commit_line(label)} block\n\nCheckpoint {ev.seq} of {n} from the Letta "
        f"server's block_history ({commit_line(kind or 'unknown actor')} "
        f"{commit_line(actor or '?')}).\n\n"
        f"{TRAILER_BLOCK}: {commit_line(f.item)}\n"
        f"{TRAILER_HISTORY}: {commit_line(row['history_id'])}\n"
        f"{TRAILER_SEQUENCE}: {ev.seq}"
    )
    return PlannedCommit(message, ((f.path, data),), author=who)


def _why(
    f: _letta.MemFile, block: dict, rows: list[dict], flags: list[dict], layout: str = "v1"
) -> str:
    """Why a block's final state differs from its last replayed checkpoint (flags it too)."""
    n = len(rows)
    if n == 0:
        return "no history; its final state (created_at/updated_at in the side file)"
    current = _letta.value_or_none(block.get("current_sequence"))
    at = next(
        (r for r in rows if current is not None and int(r["sequence_number"]) == int(current)),
        rows[-1],
    )
    parts = []
    if current is not None and int(current) < int(rows[-1]["sequence_number"]):
        parts.append(f"undone to checkpoint {int(current)} of {n}")
        flags.append(
            {
                "kind": "undone_block",
                "item": f.item,
                "path": f.path,
                "severity": "warning",
                "message": f"the server's current state is checkpoint {int(current)} of {n} "
                "(undone); every checkpoint is replayed, then the final commit "
                "restores the current state",
            }
        )
    same = (
        str(_letta.value_or_none(at.get("value")) or "") == f.body
        and _limit(at.get("limit")) == f.limit
        and _description(at.get("description"), f.label, layout) == f.description
    )
    if not same:
        parts.append("edited after its " + ("current" if parts else "last") + " checkpoint")
        flags.append(
            {
                "kind": "edited_after_checkpoint",
                "item": f.item,
                "path": f.path,
                "severity": "info",
                "message": "the block changed after its checkpoint; that change is in the "
                "final commit, by the migration (the block's "
                "_last_updated_by_id is in the side file)",
            }
        )
    if f.read_only and layout == "v1":
        parts.append("read_only set by the migration")
    return "; ".join(parts) or "frontmatter differs from the checkpoint"


def _notes(store: Store, view: Store, replayed: set[str]) -> list[str]:
    n_blocks = len(view.blocks)
    rows = store.block_history[store.block_history["block_id"].astype(str).isin(replayed)]
    notes = [
        f"Only memory blocks move: {len(view.agents)} agent(s)' system prompts, tools and "
        "messages are not memory and are not migrated."
    ]
    if store.block_history.empty:
        notes.append(
            "No block history existed: this server never checkpointed a block "
            "(block_history is empty, as on most real servers), so each agent's "
            "repository has one commit with its blocks' final state; created_at, "
            "updated_at and _last_updated_by_id are kept in .memlab/letta-blocks.json."
        )
    else:
        notes.append(
            f"History: {len(replayed)} of {n_blocks} block(s) had block_history; its "
            f"{len(rows)} row(s) are replayed as commits by the agents and users they "
            f"name; {n_blocks - len(replayed)} block(s) had none and appear in their "
            "final state."
        )
    return notes


# --------------------------------------------------------------------------- verify


def unreplayable_blocks(store: Store) -> dict[str, list[str]]:
    """Blocks whose checkpoint chain has an ``integrity`` finding (a chain only a direct write
    to the tables makes: :func:`memlab.audits._integrity.letta_server_integrity`), with what
    was found: the migration moves them in their final state, without their history, and
    ``--verify`` expects no history commit for them."""
    out: dict[str, list[str]] = {}
    for row in letta_server_integrity(store).itertuples(index=False):
        out.setdefault(str(row.ref).split(" ", 1)[0], []).append(f"{row.kind}: {row.detail}")
    return out


def check_server(
    rows: Any,
    store: Store,
    dest: Path,
    ref: str | None,
    repo_folders: dict[str, Path],
    copies: dict[str, Store],
    target: str,
    plan: Plan | None,
    layout: str = "v1",
) -> dict[str, dict[str, str]]:
    """Parity of a migrated server: the Agent File checks (final value, description, read_only,
    limit, side record per block and repository) plus ``history``: per block and repository,
    the sequence numbers of the commits carrying its ``Letta-Block`` trailer must be exactly its
    ``block_history`` rows (none for a block :func:`unreplayable_blocks` names). Returns ``{repo:
    {block_id: body}}`` for the retrieval check."""
    from memlab.migrations._parity import repos_at
    from memlab.migrations._verify_letta import check_letta
    from memlab.sources import _git

    agent_ids = getattr(plan, "agent_ids", None) if plan is not None else None
    view = server_view(store, agent_ids, [])
    bodies = check_letta(rows, view, repo_folders, copies, target, layout)
    expected = (
        {
            str(b): [int(s) for s in g.sort_values("sequence_number")["sequence_number"]]
            for b, g in store.block_history.groupby("block_id")
        }
        if len(store.block_history)
        else {}
    )
    for block_id in unreplayable_blocks(store):  # moved in their final state only
        expected[block_id] = []
    real = dict(repos_at(dest))
    for spec in _letta.letta_repos(view, [], layout):
        folder = real.get(spec.subdir)
        if folder is None:
            continue  # the presence row from check_letta already fails
        raw = _git.run_git(folder, "log", "--format=%B%x00", ref or "HEAD", check=False)
        seen: dict[str, list[int]] = {}
        for message in raw.decode("utf-8", "replace").split("\x00"):
            t = history_trailers(message)
            if TRAILER_BLOCK in t and t.get(TRAILER_SEQUENCE, "").isdigit():
                seen.setdefault(t[TRAILER_BLOCK], []).append(int(t[TRAILER_SEQUENCE]))
        for f in spec.files:
            want = expected.get(f.item, [])
            got = sorted(seen.get(commit_line(f.item), []))  # the id as the trailer wrote it
            rows.add(
                "history",
                f.item,
                f"{len(want)} commit(s) {want}",
                f"{len(got)} commit(s) {got}",
                ok=got == want,
                repo=spec.subdir,
                path=f.path,
            )
    return bodies
