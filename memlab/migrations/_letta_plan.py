"""The plan of a migration to Letta memfs or a Souveraine agent dir (:func:`plan_memfs`): its
commits (the initial one, the blocks, the side file and, from elfmem, the ledger; in v2 the
index and config commits of :mod:`memlab.migrations._letta_v2`), the side file's bytes
(:func:`side_file`), a Souveraine ``agent.yaml``, the commit trailers and the date a re-run
reuses (:func:`previous_migration_time`). Part of :mod:`memlab.migrations._letta`, which
re-exports the public names.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import cast

import pandas as pd
import yaml

from memlab import kinds
from memlab._escape import commit_line
from memlab._times import utc_second
from memlab.errors import MigrationError
from memlab.formats import _json
from memlab.formats import letta_memfs as fmt
from memlab.formats._yaml import read_yaml
from memlab.migrations import _elfmem, _letta_v2
from memlab.migrations._letta_files import MemFile, check_hook, json_safe, render
from memlab.migrations._letta_repos import RepoSpec, agent_rows, elfmem_repo, letta_repos
from memlab.migrations._plan import (
    Plan,
    PlannedCommit,
    PlannedRepo,
    flags_frame,
    moved_frame,
    signature_at,
)
from memlab.store import Store

__all__ = [
    "SIDE_FILE",
    "LEDGER_PREFIX",
    "AGENT_YAML",
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
AGENT_YAML = "agent.yaml"


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
        agents = agent_rows(store)
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
