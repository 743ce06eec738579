"""Letta blocks (.af, blocks JSON) or an elfmem DB → Letta Code memfs or a Souveraine agent dir.

The paths and frontmatter below are the v1 layout (``layout="v1"``, and Souveraine's); the Letta
target's default, memfs v2, is :mod:`memlab.migrations._letta_v2`, which keeps the label
sanitising, side file, dates, agents and detached blocks described here and replaces the paths,
the frontmatter, ``read_only`` and ``limit`` (moved into ``.memfs.config.json``).

Decisions, each visible in the result's ``flags`` table when it applies:

* **Paths.** A plain label goes to ``system/{label}.md``; a label that already carries a path
  (``reference/faq``, ``system/persona``) keeps it (the label *is* the path in memfs-era agents).
  A hostile or odd label is sanitised, never refused outright, and always reported: backslashes
  become ``/``; empty, ``.`` and ``..`` segments are dropped (``../x`` → ``system/x``, an absolute
  ``/etc/x`` → ``etc/x``); leading dots are removed so no label can reach ``.git`` or hide a
  file; whitespace becomes ``-`` (the Letta hook splits file names on whitespace). Two labels
  that land on one path get ``-2``, ``-3``… suffixes.
* **Frontmatter.** ``description`` on one line, with Letta's fallback ``Memory block {label}``
  when empty; ``read_only: true`` only when set; ``limit`` kept when the block has one. Blocks
  over their limit are flagged, never truncated. Every file is checked with Letta Code's
  pre-commit rules (:func:`memlab.formats.letta_memfs.check_precommit`). The one rule a
  migration breaks on purpose is "agents may not set ``read_only``": like the Letta server's own
  initial commit when it enables memfs, the migration sets it (plumbing commits run no hooks);
  each such file is flagged.
* **Side file.** ``.memlab/letta-blocks.json`` holds, per block, every source field a memfs file
  cannot hold (block id, metadata, template fields, hidden, tags, the original label and
  description), so nothing is lost; it is JSON, so Letta never loads it as a block.
* **Dates.** Commits are dated when the migration runs (so a repository's history starts when
  it came to be, and the audit's time axes span its real life); the source's own timestamp is
  kept in every commit message's ``Memlab-Source-Created-At`` trailer and in the side file's
  ``source_created_at``. Re-running the same migration into the same destination reuses the
  earlier run's date (:func:`previous_migration_time`), so it changes nothing. Commits are
  attributed to memlab (author kind ``migration``), which runs no hook, as the Letta server's
  own plumbing commits do.
* **Agents and shared blocks.** memfs is one repository per agent (Letta has no shared-memory
  primitive, LET-8217; Souveraine's decision record rejects shared blocks). A file with one
  agent (or a blocks JSON list, which has none) becomes one repository at the destination. A file
  with several agents becomes one repository per agent in ``<dest>/<agent-name>/``; a block
  attached to several agents is *copied* into each of their repositories at the same path, and
  the side file lists ``shared_with`` and the value's sha256 so later drift between the copies
  can be detected.
* **Detached blocks** (in the file but attached to no agent; ezra.af has 35) go to
  ``detached/<path>`` in the single repository (outside ``system/``, so they do not enter the
  prompt), or to a ``<dest>/_detached/`` repository when there are several agents.

From an elfmem DB the memfs files hold elfmem block-format bodies: the constitution in
``system/persona.md``, other pinned blocks in ``system/pinned.md``, active blocks in
``reference/<category>.md``, inbox blocks in ``reference/inbox/<category>.md`` and archived blocks
in ``archive/<category>.md``; the ledger (see :mod:`memlab.migrations._elfmem`) goes to
``.memlab/ledger/``.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, cast

import pandas as pd
import yaml

from memlab import kinds
from memlab._escape import commit_line
from memlab._times import utc_second
from memlab.errors import MigrationError
from memlab.formats import _json
from memlab.formats import letta_memfs as fmt
from memlab.formats._yaml import read_yaml
from memlab.formats.blockfile import SELF_FILE, Block
from memlab.migrations import _elfmem, _letta_v2
from memlab.migrations._plan import (
    Plan,
    PlannedCommit,
    PlannedRepo,
    fit_name,
    flags_frame,
    moved_frame,
    refuse_nul,
    safe_relpath,
    signature_at,
    slug,
)
from memlab.store import Store

__all__ = [
    "SIDE_FILE",
    "LEDGER_PREFIX",
    "DETACHED_DIR",
    "DETACHED_REPO",
    "AGENT_YAML",
    "DERIVED_COLUMNS",
    "MemFile",
    "value_or_none",
    "sanitise_label",
    "path_for",
    "json_safe",
    "sha256",
    "render",
    "check_hook",
    "RepoSpec",
    "letta_repos",
    "elfmem_repo",
    "side_file",
    "file_sha",
    "source_time_letta",
    "TRAILER_SHA",
    "TRAILER_CREATED",
    "previous_migration_time",
    "plan_memfs",
]

SIDE_FILE = ".memlab/letta-blocks.json"
LEDGER_PREFIX = ".memlab/ledger/"
DETACHED_DIR = "detached"
DETACHED_REPO = "_detached"
AGENT_YAML = "agent.yaml"
#: Frame columns memlab computes rather than reads; everything else goes to the side file.
DERIVED_COLUMNS = {"value", "chars", "over_limit", "n_agents", "shared"}
_WS_RE = re.compile(r"\s+")
_CTRL_RE = re.compile(r"[\x00-\x1f\x7f]")


@dataclass
class MemFile:
    """One memory file to write, and what the side file and tables say about it."""

    path: str
    description: str
    body: str
    read_only: bool = False
    limit: int | None = None
    item: str = ""
    label: str = ""
    side: dict[str, Any] = field(default_factory=dict)


def value_or_none(value: Any) -> Any:
    return _elfmem.value_or_none(value)


def sanitise_label(label: Any, block_id: str) -> tuple[str, list[str]]:
    """``(label to use, reasons it differs from the original)``; the label never escapes."""
    reasons: list[str] = []
    text = "" if value_or_none(label) is None else str(label)
    clean = text.replace("\\", "/")
    if clean != text:
        reasons.append("backslashes turned into '/'")
    stripped = _CTRL_RE.sub("", clean)
    if stripped != clean:
        reasons.append("control characters removed")
    parts_in = stripped.split("/")
    parts = [p for p in parts_in if p.strip() not in ("", ".", "..")]
    if len(parts) != len(parts_in):
        if stripped.startswith("/"):
            reasons.append("absolute path made relative")
        if any(p.strip() == ".." for p in parts_in):
            reasons.append("'..' segments dropped")
        rest = parts_in[1:] if stripped.startswith("/") else parts_in  # "/x": said above
        if any(p.strip() in ("", ".") for p in rest):
            reasons.append("empty or '.' segments dropped")
    fixed = []
    for p in parts:
        q = _WS_RE.sub("-", p.strip()).lstrip(".")
        if q != p:
            reasons.append(f"segment {p!r} became {q or '_'!r} (no whitespace, no leading dot)")
        q = q or "_"
        short = fit_name(q, reserve=len(".md"))
        if short != q:
            reasons.append(
                f"segment of {len(q.encode('utf-8'))} bytes shortened to {short!r} "
                "(file names are limited to 255 bytes; the suffix is a hash of the "
                "whole segment, so it is stable and distinct)"
            )
        fixed.append(short)
    if not fixed:
        reasons.append("nothing usable left of the label")
        fixed = [f"block-{block_id}"]
    return "/".join(fixed), reasons


def path_for(label: str) -> str:
    """``system/{label}.md`` for a plain label; a label with a path keeps it."""
    full = label if "/" in label else f"system/{label}"
    return safe_relpath(fmt.path_for_label(full))


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


def json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return json_safe(value.tolist())
    return value_or_none(value)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def render(f: MemFile, layout: str = "v1") -> bytes:
    """The bytes of a memory file in ``layout`` (v2: :func:`memlab.migrations._letta_v2.render`)."""
    if layout == "v2":
        return _letta_v2.render(f)
    refuse_nul(f.path, f.body, f.item)
    return fmt.render_memfs_file(
        f.description, f.body, read_only=f.read_only, limit=f.limit
    ).encode("utf-8")


def check_hook(files: list[MemFile], rendered: dict[str, bytes]) -> list[dict]:
    """Flags for files Letta's hook would reject; MigrationError for anything but read_only.

    ``rendered`` is ``{path: render(file)}``, the bytes that will be committed.
    """
    flags: list[dict] = []
    for f in files:
        violations = fmt.check_precommit(f.path, rendered[f.path].decode("utf-8"), None, change="A")
        unexpected = [v for v in violations if not (f.read_only and v.rule == "protected_set")]
        if unexpected:
            shown = "; ".join(f"{v.rule}: {v.message}" for v in unexpected)
            raise MigrationError(
                f"{f.path} would fail Letta Code's pre-commit hook: {shown}",
                path=f.path,
                hint="report this as a memlab bug",
            )
        if f.read_only:
            flags.append(
                {
                    "kind": "read_only_by_migration",
                    "item": f.item,
                    "path": f.path,
                    "severity": "info",
                    "message": "read_only: true is set by the migration, as Letta's server "
                    "does when it creates a memfs repo; Letta Code's hook forbids "
                    "agents to set it, and from now on protects the file",
                }
            )
    return flags


# --------------------------------------------------------------------------- Letta sources


def _agent_rows(store: Store) -> pd.DataFrame:
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
    agents = _agent_rows(store)
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


# --------------------------------------------------------------------------- plans


def _agent_yaml(spec: RepoSpec, source_sha: str, when: str, files: list[MemFile]) -> bytes:
    agent = spec.agent or {}
    agent_id = str(agent.get("agent_id") or spec.title)
    doc = {
        # Deterministic: the same source always yields the same agent uuid.
        "uuid": f"agent-{uuid.uuid5(uuid.NAMESPACE_URL, f'memlab:{source_sha}:{agent_id}')}",
        "name": str(agent.get("name") or spec.title),
        "description": " ".join(str(agent.get("description") or "").split())
        or f"Migrated by memlab from {spec.title}",
        "model": agent.get("model"),
        "created_at": when,
        "updated_at": when,
        "memory": {
            "git_remote": None,
            "auto_commit": True,
            "auto_push": False,
            "sync_on_startup": True,
        },
        # What Souveraine loads into context: system/ files, as Letta renders only system/.
        "blocks": [
            {"label": f.label, "file": f.path} for f in files if f.path.startswith("system/")
        ],
        "tags": list(agent.get("tags") or []),
    }
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    if read_yaml(text).value != doc:
        # PyYAML writes NEL (U+0085) raw in a quoted value and then reads it as a line break:
        # escaped (non-ASCII as \u escapes), the file reads back as exactly this document.
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=False, width=100)
    return text.encode("utf-8")


def side_file(
    spec: RepoSpec,
    source: Path,
    source_sha: str,
    target: str,
    times: dict[str, str | None],
    layout: str = "v1",
) -> bytes:
    # v2 records its layout; each block's record holds the path it went to (what --verify reads).
    doc = {
        **({"layout": layout} if layout != "v1" else {}),
        **times,
        "about": "Fields of the migrated blocks that a memory file's frontmatter cannot hold; "
        "written by memlab so nothing is lost. Not a memory block.",
        "version": 1,
        "target": target,
        "source": source.name,
        "source_sha256": source_sha,
        "agent": spec.agent,
        "blocks": [f.side for f in sorted(spec.files, key=lambda f: f.path)],
    }
    return (_json.dumps(json_safe(doc), indent=2, sort_keys=True) + "\n").encode("utf-8")


def file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def source_time_letta(store: Store) -> pd.Timestamp | None:
    created = store.meta.get("created_at")
    if created:
        ts = pd.to_datetime(created, utc=True, errors="coerce")
        if not pd.isna(ts):
            return ts
    return None


TRAILER_SHA = "Memlab-Source-SHA256"
TRAILER_CREATED = "Memlab-Source-Created-At"


def previous_migration_time(dest: Path, source_sha: str) -> pd.Timestamp | None:
    """When memlab last migrated the source with sha256 ``source_sha`` into ``dest`` (any
    repository at or one level under it), read from the commits' trailer; None if never."""
    from memlab.sources import _git

    if not source_sha or not dest.is_dir() or dest.is_symlink():
        return None
    candidates = [dest] + sorted(p for p in dest.iterdir() if p.is_dir() and not p.is_symlink())
    for folder in candidates:
        if _git.find_repo(folder) is None:
            continue
        out = (
            _git.run_git(
                folder,
                "log",
                "--all",
                "-1",
                "--format=%at %H",
                "--fixed-strings",
                f"--author={fmt.MIGRATION_EMAIL}",
                f"--grep={TRAILER_SHA}: {source_sha}",
                check=False,
            )
            .decode()
            .strip()
        )
        stamp, _, sha = out.partition(" ")
        if stamp.isdigit():
            # a commit can carry any time (year 3000, 20 digits); pandas holds 1677..2262
            when = utc_second(stamp)
            if when is None:
                raise MigrationError(
                    f"memlab's earlier migration commit {sha[:12]} is dated {stamp} (Unix "
                    "seconds), outside the times memlab holds (1677-2262); a re-run is dated "
                    "at the earlier run's time",
                    path=folder,
                    hint="migrate into a new destination",
                )
            return when
    return None


def _trailers(source: Path, source_sha: str, source_created: str | None) -> str:
    return (
        f"\n\nMemlab-Source: {commit_line(source.name)}\n{TRAILER_SHA}: {source_sha or 'unknown'}\n"
        f"{TRAILER_CREATED}: {source_created or 'unknown'}"
    )


def plan_memfs(
    store: Store,
    source: Path,
    *,
    target: str,
    when: pd.Timestamp | None = None,
    layout: str | None = None,
) -> Plan:
    """Letta memfs (``target="letta"``) or Souveraine (``"souveraine"``) from any block source.

    Commits are dated ``when`` (default: now, to the second); see "Dates" above. ``layout`` is
    the Letta target's memfs layout (default ``v2``: :mod:`memlab.migrations._letta_v2`; ``v1``:
    the ``system/`` layout); a Souveraine agent dir has one layout, v1's.
    """
    layout = _letta_v2.check_layout(layout, target)
    flags: list[dict] = []
    moved: list[dict] = []
    source_sha = file_sha(source) if source.is_file() else ""
    # an elfmem database's blocks and ledger, or Letta blocks (an agent file, a blocks list)
    kind = kinds.lookup(store.kind)
    from_elfmem = kind is not None and kind.elfmem_frames(store) is not None
    if from_elfmem:
        specs = [elfmem_repo(store, flags, moved, layout)]
        source_ts = _elfmem.source_time(store)
    else:
        specs = letta_repos(store, flags, layout)
        source_ts = source_time_letta(store)
    led = None
    signature = signature_at(when if when is not None else pd.Timestamp.now(tz="UTC"))
    when = cast(str, _elfmem.iso(pd.Timestamp(signature.timestamp, unit="s", tz="UTC")))
    source_created = (
        None
        if source_ts is None or pd.isna(source_ts)
        else _elfmem.iso(pd.Timestamp(source_ts).floor("s"))
    )
    trailers = _trailers(source, source_sha, source_created)
    times = {"migrated_at": when, "source_created_at": source_created}
    if from_elfmem:
        led = _elfmem.ledger_events(store, when)
        flags.extend(led.flags)
    repos: list[PlannedRepo] = []
    for spec in specs:
        md = {f.path: render(f, layout) for f in spec.files}
        if layout == "v1":
            flags.extend(check_hook(spec.files, md))
        commits: list[PlannedCommit] = []
        n = len(spec.files)
        if layout == "v2":
            commits.append(
                PlannedCommit(
                    f"migrate: {n} memory block(s) from {commit_line(source.name)}"
                    + (f" for agent {commit_line(spec.title)}" if spec.agent else "")
                    + "\n\nOne file per block, as Letta Code 0.34.12 creates them "
                    "(renderInitialMemoryFile); limits and read-only blocks in .memfs.config.json."
                    + trailers,
                    tuple(sorted(md.items())),
                )
            )
        elif target == "letta":
            commits.append(
                PlannedCommit(
                    "chore: initialize memory\n\nAs the Letta server creates a memory repository."
                    + trailers,
                    ((fmt.CONFIG_PATH, b'{"version": 1}\n'),),
                )
            )
            commits.append(
                PlannedCommit(
                    f"migrate: {n} memory block(s) from {commit_line(source.name)}"
                    + (f" for agent {commit_line(spec.title)}" if spec.agent else "")
                    + "\n\nOne file per block; description, read_only and limit in frontmatter."
                    + trailers,
                    tuple(sorted(md.items())),
                )
            )
        else:
            files = dict(md)
            files[AGENT_YAML] = _agent_yaml(spec, source_sha, when, spec.files)
            commits.append(
                PlannedCommit(
                    "feat(init): initialize agent memory\n\n"
                    f"Migrated by memlab from {commit_line(source.name)}: "
                    f"{n} memory file(s) and agent.yaml." + trailers,
                    tuple(sorted(files.items())),
                )
            )
        side = {SIDE_FILE: side_file(spec, source, source_sha, target, times, layout)}
        if led is not None:  # from an elfmem DB: the ledger goes beside the side file
            side.update(
                {LEDGER_PREFIX + p.rsplit("/", 1)[1]: data for p, data in led.files().items()}
            )
        commits.append(
            PlannedCommit(
                "chore(memlab): keep what memory files cannot hold\n\n"
                + (
                    "Block ids, metadata, template fields and original labels/descriptions."
                    if not from_elfmem
                    else "The elfmem ledger: reinforcement, clock, edges, outcomes, amendments, "
                    "contradictions."
                )
                + trailers,
                tuple(sorted(side.items())),
            )
        )
        if layout == "v2":
            commits = _letta_v2.finish_repo(
                spec.files,
                commits[:-1],
                commits[-1],
                flags,
                init_message="chore: initialize memory\n\nA memfs v2 repository as Letta Code "
                "0.34.12 creates one: a root MEMORY.md, an index in every folder and "
                ".memfs.config.json." + trailers,
                protect_message=_letta_v2.protect_message(source.name, trailers),
            )
        repos.append(PlannedRepo(spec.subdir, tuple(commits), title=spec.title))
        if not from_elfmem:
            for f in spec.files:
                moved.append(
                    {
                        "kind": "block",
                        "item": f.item,
                        "label": f.label,
                        "repo": spec.subdir,
                        "path": f.path,
                        "section": _letta_v2.section(f.path, layout),
                        "chars": len(f.body),
                        "note": None,
                    }
                )
    for spec in specs:
        moved.append(
            {
                "kind": "side_file",
                "item": SIDE_FILE,
                "label": None,
                "repo": spec.subdir,
                "path": SIDE_FILE,
                "section": ".memlab",
                "chars": None,
                "note": "fields frontmatter cannot hold",
            }
        )
    notes = []
    if not from_elfmem:
        agents = _agent_rows(store)
        notes.append(
            f"Only memory blocks move: {len(agents)} agent(s)' system prompts, tools and "
            "messages are not memory and are not migrated."
        )
    return Plan(
        target,
        source,
        repos,
        signature,
        moved_frame(moved),
        flags_frame(flags),
        notes,
        layout=layout if target == "letta" else None,
    )
