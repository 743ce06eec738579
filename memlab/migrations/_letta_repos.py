"""Which repositories a migration makes and which files each holds (:class:`RepoSpec`): an
agent file's or blocks list's Letta blocks grouped by agent, shared blocks copied, detached
blocks set apart, paths claimed once per repository (:func:`letta_repos`); an elfmem DB's
blocks as one repository of block-format files (:func:`elfmem_repo`). Part of
:mod:`memlab.migrations._letta`, which re-exports the public names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import pandas as pd

from memlab.formats import letta_memfs as fmt
from memlab.formats.blockfile import SELF_FILE, Block
from memlab.migrations import _elfmem, _letta_v2
from memlab.migrations._letta_files import (
    MemFile,
    json_safe,
    path_for,
    sanitise_label,
    sha256,
    value_or_none,
)
from memlab.migrations._plan import safe_relpath, slug
from memlab.store import Store

__all__ = [
    "DETACHED_DIR",
    "DETACHED_REPO",
    "DERIVED_COLUMNS",
    "RepoSpec",
    "agent_rows",
    "letta_repos",
    "elfmem_repo",
]

DETACHED_DIR = "detached"
DETACHED_REPO = "_detached"
#: Frame columns memlab computes rather than reads; everything else goes to the side file.
DERIVED_COLUMNS = {"value", "chars", "over_limit", "n_agents", "shared"}


def _claim(path: str, taken: set[str], dirs: set[str]) -> str:
    """``path``, or ``path`` with ``-2``, ``-3``… before ``.md`` if a file or folder holds it."""

    def clashes(p: str) -> bool:
        parents = {"/".join(p.split("/")[:i]) for i in range(1, p.count("/") + 1)}
        return p in taken or p in dirs or bool(parents & taken)

    candidate, n = path, 1
    stem = path[:-3] if path.endswith(".md") else path
    while clashes(candidate):
        n += 1
        candidate = f"{stem}-{n}.md"
    taken.add(candidate)
    for i in range(1, candidate.count("/") + 1):
        dirs.add("/".join(candidate.split("/")[:i]))
    return candidate


# --------------------------------------------------------------------------- Letta sources


def agent_rows(store: Store) -> pd.DataFrame:
    agents = store.frames.get("agents")
    return agents if agents is not None else pd.DataFrame(columns=["agent_id", "name"])


def _block_links(store: Store) -> dict[str, list[str]]:
    links = store.frames.get("block_agents")
    out: dict[str, list[str]] = {}
    if links is None or links.empty:
        return out
    for block_id, agent_id in zip(links["block_id"], links["agent_id"]):
        out.setdefault(str(block_id), []).append(str(agent_id))
    return {k: sorted(set(v)) for k, v in out.items()}


def _letta_file(
    row: Any,
    columns: list[str],
    path_prefix: str,
    spec: "RepoSpec",
    flags: list[dict],
    shared_with: list[str],
    layout: str = "v1",
) -> MemFile:
    block_id = str(value_or_none(row["block_id"]))
    original = value_or_none(row["label"])
    label, reasons = sanitise_label(original, block_id)
    value = "" if value_or_none(row["value"]) is None else str(row["value"])
    if layout == "v2":  # Letta Code 0.34.12's file for the label; case collisions resolved
        path, wanted = _letta_v2.claim(label, original, value, path_prefix, spec)
        other = path
    else:
        base_path = path_for(label)
        wanted = f"{path_prefix}{base_path}" if path_prefix else base_path
        path = _claim(wanted, spec.taken, spec.dirs)
        other = spec.folded.setdefault(path.casefold(), path)
    if other != path:
        # Letta's labels are case-sensitive, so both are kept as named; only the filesystem
        # the repository is cloned onto can make them one file.
        flags.append(
            {
                "kind": "case_collision",
                "item": block_id,
                "path": path,
                "severity": "warning",
                "message": f"{path} and {other} differ only in letter case: on a "
                "case-insensitive filesystem (macOS, Windows) they are one "
                "file and a clone keeps only one of them",
            }
        )
    final_label = fmt.label_for_path(path) or label
    if reasons:
        flags.append(
            {
                "kind": "label_sanitised",
                "item": block_id,
                "path": path,
                "severity": "warning",
                "message": f"label {original!r} → {label!r}: {'; '.join(reasons)}",
            }
        )
    if path != wanted:
        flags.append(
            {
                "kind": "path_collision",
                "item": block_id,
                "path": path,
                "severity": "warning",
                "message": f"{wanted} was already taken in this repository; written as {path}",
            }
        )
    if path.endswith(f"/{fmt.SKILL_FILE}"):
        flags.append(
            {
                "kind": "skill_block",
                "item": block_id,
                "path": path,
                "severity": "warning",
                "message": "a skills/<name> label becomes a SKILL.md, which Letta Code reads "
                "with Agent Skills frontmatter (name, description); check it",
            }
        )
    raw_desc = value_or_none(row.get("description"))
    desc = " ".join(str(raw_desc).split()) if raw_desc is not None else ""
    if layout == "v2":
        desc = _letta_v2.description(raw_desc, label)
        if raw_desc is None or not str(raw_desc).strip():
            desc = ""  # the fallback below, flagged as in v1
    if not desc:
        desc = f"Memory block {label}"
        flags.append(
            {
                "kind": "description_fallback",
                "item": block_id,
                "path": path,
                "severity": "info",
                "message": f"no description; Letta's fallback {desc!r} is used",
            }
        )
    elif desc != raw_desc:
        flags.append(
            {
                "kind": "description_flattened",
                "item": block_id,
                "path": path,
                "severity": "info",
                "message": "multi-line description put on one line (the original is in "
                "the side file)",
            }
        )
    limit = value_or_none(row.get("limit"))
    limit = int(limit) if limit is not None and int(limit) > 0 else None
    if limit is not None and len(value) > limit:
        flags.append(
            {
                "kind": "over_limit",
                "item": block_id,
                "path": path,
                "severity": "warning",
                "message": f"{len(value)} characters against a limit of {limit}; kept "
                "whole, not truncated",
            }
        )
    side = {c: json_safe(row.get(c)) for c in columns if c not in DERIVED_COLUMNS}
    side.update(path=path, value_sha256=sha256(value), value_chars=len(value))
    if shared_with:
        side["shared_with"] = shared_with
    return MemFile(
        path=path,
        description=desc,
        body=value,
        read_only=bool(value_or_none(row.get("read_only")) or False),
        limit=limit,
        item=block_id,
        label=final_label,
        side=side,
    )


@dataclass
class RepoSpec:
    subdir: str
    title: str
    agent: dict[str, Any] | None
    files: list[MemFile]
    taken: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)
    #: casefolded path -> the first path written with it (case-only collisions are flagged)
    folded: dict[str, str] = field(default_factory=dict)


def letta_repos(store: Store, flags: list[dict], layout: str = "v1") -> list[RepoSpec]:
    """Group the blocks of an agent file into repositories (see the module docstring); file
    paths follow ``layout`` (``v2``: :mod:`memlab.migrations._letta_v2`)."""
    blocks = store.blocks
    agents = agent_rows(store)
    links = _block_links(store)
    columns = list(blocks.columns)
    names = {
        str(a): value_or_none(n) for a, n in zip(agents.get("agent_id", []), agents.get("name", []))
    }
    agent_ids = [str(a) for a in agents.get("agent_id", [])]
    many = len(agent_ids) > 1
    specs: dict[str, RepoSpec] = {}
    used: set[str] = set()

    def spec_for(agent_id: str | None) -> RepoSpec:
        key = agent_id or ""
        if key in specs:
            return specs[key]
        if not many:
            subdir = ""
        elif agent_id is None:
            subdir = DETACHED_REPO
        else:
            subdir = slug(names.get(agent_id) or agent_id, fallback="agent")
            base, n = subdir, 1
            while subdir in used:
                n += 1
                subdir = f"{base}-{n}"
        used.add(subdir)
        agent = None
        if agent_id is not None:
            row = agents[agents["agent_id"].astype(str) == agent_id].iloc[0]
            agent = {c: json_safe(row[c]) for c in agents.columns}
        specs[key] = RepoSpec(
            subdir, names.get(agent_id or "", None) or (agent_id or "detached"), agent, []
        )
        return specs[key]

    aid: str | None
    for aid in agent_ids:
        spec_for(aid)
    ordered = blocks.sort_values(["label", "block_id"], kind="stable", na_position="last")
    for _, row in ordered.iterrows():
        block_id = str(value_or_none(row["block_id"]))
        attached = links.get(block_id, [])
        targets: Sequence[str | None]
        if not agent_ids:
            targets, prefix = [None], ""
        elif attached:
            targets, prefix = attached, ""
        else:
            targets, prefix = [None] if many else [agent_ids[0]], f"{DETACHED_DIR}/"
            flags.append(
                {
                    "kind": "detached_block",
                    "item": block_id,
                    "path": None,
                    "severity": "info",
                    "message": f"label {value_or_none(row['label'])!r} "
                    "is attached to no agent in the "
                    "file; kept outside system/ so it does not enter the prompt",
                }
            )
        shared_with = [names.get(a) or a for a in attached] if len(attached) > 1 else []
        for aid in targets:
            if aid is not None and aid not in specs:
                flags.append(
                    {
                        "kind": "unknown_agent",
                        "item": block_id,
                        "path": None,
                        "severity": "warning",
                        "message": f"attached to agent {aid!r}, which the file does not define",
                    }
                )
            spec = spec_for(aid)
            f = _letta_file(row, columns, prefix, spec, flags, shared_with, layout)
            if shared_with:
                flags.append(
                    {
                        "kind": "shared_block",
                        "item": block_id,
                        "path": f.path,
                        "severity": "info",
                        "message": f"shared by {', '.join(shared_with)}: copied into each "
                        "agent's repository (memfs has no shared primitive)",
                    }
                )
            spec.files.append(f)
    return [s for s in specs.values() if s.files or s.agent is not None]


# --------------------------------------------------------------------------- elfmem source


def elfmem_repo(store: Store, flags: list[dict], moved: list[dict], layout: str = "v1") -> RepoSpec:
    """One memfs repository from an elfmem DB (block-format bodies; ledger as side records);
    in v2 the constitution and pinned blocks are root (core) files, the rest keep their folders."""
    files, moved_rows, more_flags = _elfmem.layout_blocks(store)
    status_of = dict(zip(store.blocks["id"].astype(str), store.blocks["status"].astype("string")))
    groups: dict[str, list[Block]] = {}
    where: dict[Any, str] = {}
    for sub_path, blocks in files.items():
        for b in blocks:
            status = status_of.get(b.id)
            if sub_path == SELF_FILE:
                path = "system/persona.md"
            elif b.pinned and status != "archived":
                path = "system/pinned.md"
            else:
                section, category = sub_path.split("/", 3)[2], sub_path.split("/", 3)[3][:-3]
                folder = {"notes": "reference", "log": "reference/inbox", "archive": "archive"}[
                    section
                ]
                path = safe_relpath(f"{folder}/{category}.md")
            if layout == "v2":
                path = _letta_v2.v2_path_of_elfmem(path)
            groups.setdefault(path, []).append(b)
            where[b.id] = path
    for row in moved_rows + more_flags:
        row["path"] = where.get(row["item"], row["path"])
    flags.extend(more_flags)
    moved.extend(moved_rows)
    out: list[MemFile] = []
    for path, blocks in sorted(groups.items()):
        body = _elfmem.render_blocks(path, blocks, flags)
        titles = {"Constitution": "persona.md", "Pinned blocks": "pinned.md"}
        what = next((k for k, v in titles.items() if path in (v, f"system/{v}")), None)
        desc = (
            f"{what} migrated from elfmem ({len(blocks)} blocks, elfmem block format)"
            if what
            else f"elfmem blocks from {path[:-3]} ({len(blocks)} blocks, elfmem block format)"
        )
        if len(body) > fmt.DEFAULT_LIMIT:
            flags.append(
                {
                    "kind": "over_default_limit",
                    "item": path,
                    "path": path,
                    "severity": "warning",
                    "message": f"{len(body)} characters, over the Letta server's default "
                    f"block limit of {fmt.DEFAULT_LIMIT}",
                }
            )
        out.append(
            MemFile(
                path=path,
                description=desc,
                body=body,
                item=path,
                label=fmt.label_for_path(path) or path,
                side={"block_ids": [b.id for b in blocks]},
            )
        )
    return RepoSpec("", store.path.name, None, out)
