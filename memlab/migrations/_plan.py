"""What a migration will do, decided in full before anything is written.

A :class:`Plan` holds, per destination repository, the commits to make (message and the exact
bytes of every file) plus two tables for people: ``moved`` (one row per source item and where it
went) and ``flags`` (what needs a human look: over-limit blocks, renamed labels, fields kept in a
side file...). The direct apply (:mod:`memlab.migrations._apply`) and the plan script
(:mod:`memlab.migrations._script`) both consume a Plan, so they cannot disagree about content.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Mapping

import pandas as pd

from memlab._gitobj import Signature, commit_files, object_sha
from memlab.errors import MigrationError, UnsafePath
from memlab.formats import letta_memfs as _fmt

__all__ = [
    "AUTHOR_NAME",
    "AUTHOR_EMAIL",
    "FALLBACK_EPOCH",
    "MOVED_COLUMNS",
    "FLAG_COLUMNS",
    "PlannedCommit",
    "PlannedRepo",
    "Plan",
    "moved_frame",
    "flags_frame",
    "safe_relpath",
    "refuse_nul",
    "slug",
    "MAX_NAME_BYTES",
    "fit_name",
    "signature_at",
]

#: Who every migration commit is attributed to. Not an agent and not a human: a memfs audit
#: tells a migration apart from the memory's own history (author kind ``migration``).
AUTHOR_NAME = _fmt.MIGRATION_NAME
AUTHOR_EMAIL = _fmt.MIGRATION_EMAIL

#: Used only when a source carries no timestamp at all, so the commit date still never depends
#: on when the migration ran.
FALLBACK_EPOCH = 946684800  # 2000-01-01T00:00:00Z

MOVED_COLUMNS = ["kind", "item", "label", "repo", "path", "section", "chars", "note"]
FLAG_COLUMNS = ["kind", "item", "path", "severity", "message"]

_SLUG_RE = re.compile(r"[^a-z0-9._-]+")


@dataclass(frozen=True)
class PlannedCommit:
    message: str
    #: (repo-relative posix path, bytes), sorted by path: added or replaced in this commit.
    files: tuple[tuple[str, bytes], ...]
    #: Author and committer of this commit when it is not the plan's signature (a Letta server's
    #: block history replayed as commits by the agents and users that made it).
    author: Signature | None = None
    #: Paths this commit removes (a v1 repository's files renamed by the move to v2).
    removed: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlannedRepo:
    #: Folder under the destination holding this repository ("" = the destination itself).
    subdir: str
    commits: tuple[PlannedCommit, ...]
    #: The agent or store this repository is for, for messages and the result table.
    title: str = ""
    #: A repository whose history the commits go on top of (a v1 memfs repo moved to v2): the
    #: folder, the commit, and that commit's tree ``{path: (mode, sha)}``.
    base_repo: Path | None = None
    base: str | None = None
    base_flat: Mapping[str, tuple[str, str]] | None = None


@dataclass
class Plan:
    target: str
    source: Path
    repos: list[PlannedRepo]
    signature: Signature
    moved: pd.DataFrame
    flags: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    #: A Letta target's memfs layout ("v2" or "v1"); None for other targets.
    layout: str | None = None
    #: A Letta server plan's selected agent ids (None: every agent), read by its verify.
    agent_ids: list[str] | None = None

    def expected_heads(
        self, base: Mapping[str, tuple[str | None, dict[str, tuple[str, str]]]] | None = None
    ) -> dict[str, list[tuple[str, str]]]:
        """Per repo subdir, the ``(tree, commit)`` shas each planned commit will have.

        ``base`` maps a subdir to ``(parent commit sha, {path: (mode, sha)})`` when committing on
        top of an existing branch; otherwise each repository starts empty.
        """
        out: dict[str, list[tuple[str, str]]] = {}
        for repo in self.repos:
            own = (repo.base, dict(repo.base_flat or {})) if repo.base else (None, {})
            parent, flat = (base or {}).get(repo.subdir, own)
            flat = dict(flat)
            chain: list[tuple[str, str]] = []
            for commit in repo.commits:
                # The writer's own loop, hashing only (object_sha stores nothing).
                files = [*((path, None) for path in commit.removed), *commit.files]
                tree, parent = commit_files(
                    object_sha, flat, files, parent, commit.author or self.signature, commit.message
                )
                chain.append((tree, parent))
            out[repo.subdir] = chain
        return out

    def file_count(self) -> int:
        return sum(len(c.files) for r in self.repos for c in r.commits)


def moved_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(list(rows), columns=MOVED_COLUMNS)
    for col in ("kind", "section"):
        df[col] = df[col].astype("string").astype("category")
    for col in ("item", "label", "repo", "path", "note"):
        df[col] = df[col].astype("string")
    df["chars"] = df["chars"].astype("Int64")
    return df


def flags_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(list(rows), columns=FLAG_COLUMNS)
    for col in ("kind", "severity"):
        df[col] = df[col].astype("string").astype("category")
    for col in ("item", "path", "message"):
        df[col] = df[col].astype("string")
    return df


def safe_relpath(path: str, *, source: Path | str | None = None) -> str:
    """``path`` as a clean repo-relative posix path, or UnsafePath if it would escape the repo."""
    if "\\" in path or "\x00" in path:
        raise UnsafePath(f"path {path!r} contains a backslash or NUL", path=source)
    p = PurePosixPath(path)
    if (
        p.is_absolute()
        or any(part in ("..", "") for part in path.split("/"))
        or path.startswith("~")
    ):
        raise UnsafePath(f"path {path!r} is absolute or has an empty or '..' segment", path=source)
    if p.parts and p.parts[0] == ".git":
        raise UnsafePath(f"path {path!r} would write inside .git", path=source)
    return p.as_posix()


def refuse_nul(path: str, text: str, item: str | None) -> None:
    """MigrationError naming ``path`` and ``item`` when ``text``, a memory file to commit, holds
    a NUL character: git and memlab's loaders read such a file as binary, so none of its blocks
    would load back (the Letta server's PostgreSQL refuses NUL in text, too)."""
    if "\x00" in text:
        raise MigrationError(
            f"block {item!r} holds a NUL character, which a memory file cannot "
            "hold: git and memlab read the file as binary, so it would not load "
            "back",
            path=path,
            hint="remove the NUL characters from the block, then migrate again",
        )


def slug(text: str, *, fallback: str) -> str:
    """A folder name from an agent name: lower case, no separators, never starting with '.' or
    '_', and short enough to be a file name (:func:`fit_name`)."""
    s = _SLUG_RE.sub("-", str(text or "").strip().lower()).strip("-._")
    return fit_name(s) if s else fallback


#: Longest file or folder name memlab writes, in UTF-8 bytes: under the usual 255-byte limit
#: with room for the ``.md`` suffix and the ``.<name>.memlab-tmp-…`` names used while writing.
MAX_NAME_BYTES = 200


def fit_name(name: str, *, reserve: int = 0) -> str:
    """``name`` if it fits in :data:`MAX_NAME_BYTES` (minus ``reserve``) bytes; otherwise its
    longest prefix that fits with ``-`` and 12 hex digits of the SHA-256 of the whole name
    (the same name always gives the same result; two names differ in the hash)."""
    limit = MAX_NAME_BYTES - reserve
    raw = name.encode("utf-8")
    if len(raw) <= limit:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:12]
    head = raw[: limit - 13].decode("utf-8", "ignore").rstrip("-. ")
    return f"{head}-{digest}"


def signature_at(timestamp: pd.Timestamp | None) -> Signature:
    """The fixed signature for a migration whose source's latest timestamp is ``timestamp``."""
    if timestamp is None or pd.isna(timestamp):
        seconds = FALLBACK_EPOCH
    else:
        ts = pd.Timestamp(timestamp)
        ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
        seconds = int(ts.floor("s").timestamp())
    return Signature(AUTHOR_NAME, AUTHOR_EMAIL, seconds)
