"""A Letta Code memfs v1 repository → memfs v2, with its history kept.

``memlab migrate REPO DEST --to letta --layout v2`` (v2 is the default). Decision: **a new
repository at DEST holding the source's whole history (HEAD and its ancestors, fetched) with the
move to v2 as commits on top**, never a rewrite and never a fresh repository without history:

* memlab's migrations only ever read their source, and a memory repository is an agent's live
  state: Letta Code may be running on it, so DEST is a new folder, built beside itself and
  renamed into place like every migration (crash-safe, idempotent, plan script);
* the history is the evidence the audit reads (who wrote what, when; churn; read-only edits;
  what Letta Code's validator says about each commit): a new repository without it would make
  the moved agent look born today. Letta Code decides the layout from the tree (the root
  ``MEMORY.md``; ``memoryLayoutPolicy``'s ``v2Started`` is the first commit holding one), so the
  v1 commits stay under the legacy rules and only the commits from the move on are v2.
* One commit moves the files (``migrate: memfs v1 to v2 …``): ``system/`` files become root
  (core) files by Letta Code 0.34.12's mapping (``rootMemoryBlockPath``: ``system/human/prefs.md``
  → ``human_prefs.md``), every other memory file keeps its path behind a ``MEMORY.md`` in each
  folder (v1 kept them out of the prompt; v2 projects them), frontmatter becomes ``name`` and
  ``description``, ``limit`` goes to ``fileCharacterLimits`` and the root ``MEMORY.md`` and
  ``.memfs.config.json`` are added; ``skills/`` and every non-Markdown file stay as they are. A
  second commit lists the read-only files in ``readOnlyFiles`` (so no commit creates a file the
  config already protects). ``.memlab/memfs-upgrade.json`` records, per file, where it came from
  and its v1 frontmatter; ``--verify`` finds each file by that record. A repository memlab itself
  migrated keeps its ``.memlab/letta-blocks.json`` with each block's ``path`` moved to its v2
  file, so the original source verifies against the v2 repository too.

Only the checked-out branch's history is kept (other branches, such as reflection worktrees,
stay in the source). Limits, collisions and read-only files follow
:mod:`memlab.migrations._letta_v2`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from memlab import _git
from memlab._escape import commit_line
from memlab._times import utc_second
from memlab.errors import MigrationError
from memlab.formats import _json
from memlab.formats import letta_memfs as fmt
from memlab.migrations import _letta, _letta_v2
from memlab.migrations._plan import (
    Plan,
    PlannedCommit,
    PlannedRepo,
    flags_frame,
    moved_frame,
    signature_at,
)
from memlab.sources._git import read_blobs
from memlab.store import Store

__all__ = ["plan_upgrade", "upgrade_files", "UPGRADE_FILE", "upgrade_view", "check_upgrade"]

UPGRADE_FILE = ".memlab/memfs-upgrade.json"
_V1_LAYOUTS = ("letta_v1", "letta_v1_memory_prefix")


class _Spec:
    """The paths claimed so far (what :func:`memlab.migrations._letta_v2.claim` needs)."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.dirs: set[str] = set()


def _repo(store: Store) -> Path:
    repo = store.meta.get("repo")
    if store.kind != "letta_memfs" or not repo:
        raise MigrationError("not a Letta Code memfs repository", path=store.path)
    return Path(repo)


def upgrade_files(store: Store, flags: list[dict]) -> list[_letta.MemFile]:
    """The v2 memory files of a v1 repository's HEAD, one per v1 memory file (``item`` is the
    v1 path; ``side`` its v1 frontmatter and the v2 path)."""
    layout = store.meta.get("layout")
    if layout == "letta_v2":
        raise MigrationError(
            "this repository is memfs v2 already",
            path=store.path,
            hint="nothing to migrate; use --layout v1 for the other way",
        )
    if layout not in _V1_LAYOUTS:
        raise MigrationError(
            f"a {layout} tree has no Letta evidence; memlab moves only Letta "
            "Code memfs v1 repositories to v2",
            path=store.path,
        )
    prefix = layout == "letta_v1_memory_prefix"
    spec = _Spec()
    out: list[_letta.MemFile] = []
    files = store.files.sort_values("path", kind="stable")
    for row in files.to_dict("records"):
        path = str(row["path"])
        rel = fmt.strip_memory_prefix(path) if prefix else path
        label = fmt.label_for_path(rel)
        if label is None or rel.startswith("skills/"):
            continue  # skills and non-memory Markdown stay where they are
        body = "" if pd.isna(row["body"]) else str(row["body"])
        raw_desc = None if pd.isna(row["description"]) else str(row["description"])
        if rel.startswith("system/") or "/" not in rel:
            new, wanted = _letta_v2.claim(label, None, body, "", spec)
        else:
            new, wanted = _claim_nested(rel, spec)
        if "/" not in rel:
            flags.append(
                {
                    "kind": "now_core",
                    "item": path,
                    "path": new,
                    "severity": "info",
                    "message": "a root file outside system/ was not in v1's prompt; "
                    "every root file is core memory in v2",
                }
            )
        if new != wanted:
            flags.append(
                {
                    "kind": "path_collision",
                    "item": path,
                    "path": new,
                    "severity": "warning",
                    "message": f"{wanted} is taken (Letta Code's paths are one file in any "
                    f"letter case); written as {new}",
                }
            )
        # the fallback names the label as the Agent File migration does (sanitised)
        desc = _letta_v2.description(raw_desc, _letta.sanitise_label(label, path)[0])
        if raw_desc is None or not raw_desc.strip():
            flags.append(
                {
                    "kind": "description_fallback",
                    "item": path,
                    "path": new,
                    "severity": "info",
                    "message": f"no description; Letta's fallback {desc!r} is used",
                }
            )
        limit = None if pd.isna(row["limit"]) else int(row["limit"])
        limit = limit if limit is not None and limit > 0 else None
        read_only = bool(row["read_only"]) if not pd.isna(row["read_only"]) else False
        side = {
            "block_id": path,
            "label": label,
            "description": raw_desc,
            "read_only": read_only,
            "limit": limit,
            "path": new,
        }
        out.append(
            _letta.MemFile(
                path=new,
                description=desc,
                body=body,
                read_only=read_only,
                limit=limit,
                item=path,
                label=fmt.label_for_path(new) or new,
                side=side,
            )
        )
    return out


def _claim_nested(rel: str, spec: _Spec) -> tuple[str, str]:
    """A nested v1 file keeps its path (with ``-2``… on a case-insensitive clash)."""
    folded = {p.casefold() for p in spec.taken}
    return _letta_v2.take_path(
        rel, spec, folded, lambda c: c.rsplit("/", 1)[-1] == fmt.ROOT_INDEX
    ), rel


def upgrade_view(store: Store, files: list[_letta.MemFile]) -> Store:
    """The v1 files as a blocks frame (block_id = v1 path), as :mod:`memlab.migrations._verify`
    compares Letta blocks with their files."""
    rows = [
        {
            "block_id": f.item,
            "label": f.side["label"],
            "value": f.body,
            "description": f.side["description"],
            "read_only": f.side["read_only"],
            "limit": f.side["limit"],
        }
        for f in files
    ]
    blocks = pd.DataFrame(
        rows, columns=["block_id", "label", "value", "description", "read_only", "limit"]
    )
    return Store(kind="letta_blocks", path=store.path, frames={"blocks": blocks}, meta={})


def plan_upgrade(
    store: Store,
    source: Path,
    *,
    target: str = "letta",
    dest: str | Path | None = None,
    layout: str | None = None,
) -> Plan:
    """The v1 → v2 plan of the memfs repository ``store`` (see the module docstring)."""
    layout = _letta_v2.check_layout(layout, target)
    if target != "letta" or layout != "v2":
        raise MigrationError(
            "a Letta Code memfs repository migrates to memfs v2 only",
            path=source,
            hint="use --to letta --layout v2 (the default)",
        )
    repo = _repo(store)
    head = store.meta.get("head_sha")
    if not head:
        raise MigrationError("the repository has no commit to build on", path=repo)
    flags: list[dict] = []
    files = upgrade_files(store, flags)
    base_flat = _git.flat_tree(repo, head)
    md = {f.path: _letta_v2.render(f) for f in files}
    indexes = _letta_v2.index_files(files)
    clash = sorted(p for p in indexes if p in base_flat and p not in {f.item for f in files})
    if clash:
        raise MigrationError(
            f"{clash[0]} exists and is not a v1 memory file",
            path=repo,
            hint="move it aside, then migrate again",
        )
    body = PlannedCommit("", tuple(sorted(md.items())))
    config = _letta_v2.constraints(files, [body], indexes, flags)
    # the upgrade is dated at the head's commit time; a time pandas cannot hold (year 3000,
    # 20 digits: git keeps any) is flagged and the upgrade dated at the no-time fallback
    head_time = _git.run(repo, "log", "-1", "--format=%ct", head).decode().strip() or "0"
    stamp = utc_second(head_time)
    if stamp is None:
        flags.append(
            {
                "kind": "time_out_of_range",
                "item": head,
                "path": None,
                "severity": "warning",
                "message": f"the head commit {head[:12]} is dated {head_time[:40]} (Unix "
                "seconds), outside 1677-2262; the upgrade commits are dated "
                "2000-01-01, memlab's date for a source with no time",
            }
        )
    when = signature_at(stamp)
    record = {
        "about": "Where each memory file of the memfs v1 repository went in v2, and its "
        "v1 frontmatter; written by memlab. Not a memory file.",
        "version": 1,
        "layout": "v2",
        "source": Path(repo).name,
        "source_head": head,
        "blocks": [f.side for f in sorted(files, key=lambda f: f.path)],
    }
    moved = {f.item for f in files if f.item != f.path}
    added = {
        **indexes,
        **md,
        fmt.CONSTRAINTS_CONFIG: _letta_v2.config_bytes(config),
        UPGRADE_FILE: (_json.dumps(record, indent=2, sort_keys=True) + "\n").encode("utf-8"),
    }
    side = _moved_side_file(repo, base_flat, {f.item: f.path for f in files})
    if side is not None:  # memlab's own v1 output: its block records follow their files
        added[_letta.SIDE_FILE] = side
    trailer = f"\n\nMemlab-Source: {commit_line(Path(repo).name)}\nMemlab-Source-Head: {head}"
    commits = [
        PlannedCommit(
            f"migrate: memfs v1 to v2 ({len(files)} memory file(s), {len(moved)} moved)\n\n"
            "system/ files become root (core) files by Letta Code 0.34.12's mapping "
            "(rootMemoryBlockPath); other memory files keep their paths behind a MEMORY.md in each "
            "folder; frontmatter is name and description; limits go to .memfs.config.json."
            + trailer,
            tuple(sorted(added.items())),
            removed=tuple(sorted(moved)),
        )
    ]
    protect = _letta_v2.protect_commit(
        files,
        config,
        flags,
        f"chore: protect {sum(f.read_only for f in files)} read-only "
        "memory file(s)\n\nread_only: true in v1 frontmatter, listed in .memfs.config.json "
        "readOnlyFiles (memfs v2 has no read_only frontmatter)." + trailer,
        None,
    )
    commits += [protect] if protect is not None else []
    flags.extend(_letta_v2.quoted_flags(files))
    base_bytes = _base_bytes(repo, base_flat)
    _letta_v2.check(commits, base_bytes)
    planned = PlannedRepo(
        "", tuple(commits), title=Path(repo).name, base_repo=repo, base=head, base_flat=base_flat
    )
    rows = [
        {
            "kind": "block",
            "item": f.item,
            "label": f.label,
            "repo": "",
            "path": f.path,
            "section": _letta_v2.section(f.path, "v2"),
            "chars": len(f.body),
            "note": None if f.item == f.path else f"from {f.item}",
        }
        for f in files
    ]
    rows.append(
        {
            "kind": "side_file",
            "item": UPGRADE_FILE,
            "label": None,
            "repo": "",
            "path": UPGRADE_FILE,
            "section": ".memlab",
            "chars": None,
            "note": "where each v1 file went",
        }
    )
    notes = [
        f"History kept: the new repository holds {Path(repo).name}'s HEAD ({head[:12]}) and "
        "its ancestors, with the move to v2 on top; other branches stay in the source."
    ]
    return Plan(
        "letta",
        Path(repo),
        [planned],
        when,
        moved_frame(rows),
        flags_frame(flags),
        notes,
        layout="v2",
    )


def _moved_side_file(
    repo: Path, flat: dict[str, tuple[str, str]], where: dict[str, str]
) -> bytes | None:
    """``.memlab/letta-blocks.json`` of a repository memlab migrated, with each block's
    ``path`` moved to its v2 file and ``layout: v2`` (None when there is none to update)."""
    entry = flat.get(_letta.SIDE_FILE)
    if entry is None:
        return None
    data = read_blobs(repo, [entry[1]]).get(entry[1], b"")
    try:
        doc, _ = _json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("blocks"), list):
        return None
    for block in doc["blocks"]:
        if isinstance(block, dict) and block.get("path") in where:
            block["path"] = where[block["path"]]
    doc["layout"] = "v2"
    return (_json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _base_bytes(repo: Path, flat: dict[str, tuple[str, str]]) -> dict[str, bytes]:
    """The base tree for the validator: Markdown read, other files empty (never counted)."""
    shas = {p: s for p, (m, s) in flat.items() if p.endswith(".md") and m.startswith("100")}
    blobs = read_blobs(repo, shas.values())
    return {p: (blobs.get(shas[p], b"") if p in shas else b"") for p in flat}


def check_upgrade(
    rows: Any,
    store: Store,
    dest: Path,
    ref: str | None,
    repo_folders: dict[str, Path],
    copies: dict[str, Store],
) -> dict[str, dict[str, str]]:
    """Parity of a v1 → v2 move: every v1 memory file at its recorded v2 path with the same
    value, description, read-only and limit (the Letta block checks), and ``history``: the
    source's HEAD is an ancestor of the copy's."""
    from memlab.migrations._parity import side_texts
    from memlab.migrations._verify_v2 import check_letta_v2

    files = upgrade_files(store, [])
    view = upgrade_view(store, files)
    folder = repo_folders.get("")
    if folder is None or "" not in copies:
        rows.add("presence", "(destination)", "a repository", "missing", ok=False)
        return {}
    text = side_texts(folder, UPGRADE_FILE).get(UPGRADE_FILE)
    side: dict = {}
    try:
        doc, _ = _json.loads(text) if text else ({}, [])
        side = {b.get("block_id"): b for b in doc.get("blocks", []) if isinstance(b, dict)}
    except (ValueError, RecursionError, AttributeError):
        side = {}
    rows.add(
        "side_file",
        UPGRADE_FILE,
        "present",
        "present" if side else "missing or unreadable",
        path=UPGRADE_FILE,
    )
    spec = _Spec()
    spec.subdir, spec.files = "", files  # type: ignore[attr-defined]
    bodies: dict[str, str] = {}
    check_letta_v2(rows, spec, view, side_texts(folder, ""), side, bodies)
    head = store.meta.get("head_sha")
    top = _git.rev_parse(dest, ref or "HEAD") if (dest / ".git").exists() else None
    kept = bool(
        head and top and _git.returncode(dest, "merge-base", "--is-ancestor", head, top) == 0
    )
    rows.add(
        "history",
        "HEAD",
        f"{head} and its ancestors",
        "kept" if kept else "missing",
        ok=kept,
        detail="the source's HEAD is an ancestor of the copy's",
    )
    return {"": bodies}
