"""Read a Claude Code (or Qwen Code) auto-memory folder into frames, read-only and permissive.

The layout is the product's internal state, documented on its memory page but not as a
specification (data/samples/claude-memory/SOURCES.md says what is known): a ``MEMORY.md``
index, one line per memory (typically a markdown bullet linking a topic file), of which a
session loads only the first :data:`INDEX_MAX_LINES` lines and :data:`INDEX_MAX_BYTES` bytes,
and topic files ``<stem>.md`` with frontmatter ``name``, ``description`` and a ``type`` (user,
feedback, project, reference), written at the top level or under ``metadata:``. Nothing that
does not fit is dropped: it is a row with a problem beside it.

Frames:

* ``files``: one row per ``.md`` file other than the index (path, stem, name, description,
  type, type_at, frontmatter_raw, frontmatter_ok, bytes, lines, body, body_chars,
  body_sha256 (of the stripped body), sha256 (of the file's bytes), read, modified, indexed,
  index_lines, visible);
* ``index``: one row per link target of each index line (a line with no ``.md`` link is one
  row with no target): line, text, offset (its first byte), bytes (with its newline), target
  (relative to the folder), target_exists, outside (the target leaves the folder: never
  opened), beyond_200_lines, beyond_25kb, visible;
* ``instructions``: the ``CLAUDE.md`` hierarchy found beside the folder (``CLAUDE.md``,
  ``CLAUDE.local.md``, ``.claude/CLAUDE.md``, ``.claude/rules/*.md`` of the folder itself or,
  for ``<project>/.claude/memory``, of the project): path, scope, bytes, lines, imports (the
  ``@path`` imports named, not followed), body;
* ``blocks``: the memory as Letta blocks (the index as the block ``MEMORY``, each topic file as
  a block labelled with its path without ``.md``), what the migration to Letta Code writes and
  its ``--verify`` compares.

Problems (``file, line, kind, message``): ``symlink`` (a link is never followed), ``oversized``
(past :data:`~memlab.constants.MAX_FILE_BYTES`: not read), ``bad_text`` (not UTF-8: read with
U+FFFD), ``no_index``, ``outside_folder`` (an index link leaving the folder), ``frontmatter``
(unclosed fence, YAML that does not read, a frontmatter that is not a mapping), ``unreadable``.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import stat
import urllib.parse
from pathlib import Path
from typing import Any

import pandas as pd

from memlab._files import FileTooLarge, NotRegularFile, read_regular, walk
from memlab.constants import MAX_FILE_BYTES
from memlab.errors import StoreNotFound, UnrecognizedStore
from memlab.formats._yaml import read_yaml
from memlab.formats.letta_memfs import split_frontmatter
from memlab.store import Problems, Store, empty_frame

__all__ = [
    "load_claude_memory",
    "INDEX",
    "INDEX_MAX_LINES",
    "INDEX_MAX_BYTES",
    "TYPES",
    "FRAME_DTYPES",
    "is_memory_folder",
]

#: The index file of an auto-memory folder.
INDEX = "MEMORY.md"
#: A session loads the index's first 200 lines ...
INDEX_MAX_LINES = 200
#: ... and at most its first 25,000 bytes (the memory page's "25 KB"; third-party readers that
#: match Claude Code use 25,000 bytes); a line not wholly inside is not seen.
INDEX_MAX_BYTES = 25_000
#: The memory types Claude Code writes.
TYPES = ("user", "feedback", "project", "reference")
#: How deep below the folder topic files are looked for (Claude Code writes them flat).
_MAX_DEPTH = 8

FRAME_DTYPES: dict[str, dict[str, str]] = {
    "files": {
        "path": "string",
        "stem": "string",
        "name": "string",
        "description": "string",
        "type": "string",
        "type_at": "string",
        "frontmatter_raw": "string",
        "frontmatter_ok": "boolean",
        "bytes": "Int64",
        "lines": "Int64",
        "body": "string",
        "body_chars": "Int64",
        "body_sha256": "string",
        "sha256": "string",
        "read": "boolean",
        "modified": "datetime64[ns, UTC]",
        "indexed": "boolean",
        "index_lines": "Int64",
        "visible": "boolean",
    },
    "index": {
        "line": "Int64",
        "text": "string",
        "offset": "Int64",
        "bytes": "Int64",
        "target": "string",
        "target_exists": "boolean",
        "outside": "boolean",
        "beyond_200_lines": "boolean",
        "beyond_25kb": "boolean",
        "visible": "boolean",
    },
    "instructions": {
        "path": "string",
        "scope": "string",
        "bytes": "Int64",
        "lines": "Int64",
        "imports": "object",
        "body": "string",
    },
    "blocks": {
        "block_id": "string",
        "label": "string",
        "value": "string",
        "chars": "Int64",
        "limit": "Int64",
        "description": "string",
        "read_only": "boolean",
        "metadata": "object",
    },
}

# [text](target) links; the target up to the first space or closing parenthesis.
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_WIKI = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")
_IMPORT = re.compile(r"(?:^|\s)@([^\s`]+)")


def is_memory_folder(path: Path) -> str | None:
    """What makes ``path`` look like an auto-memory folder (a phrase), or None: a ``MEMORY.md``
    and none of what a Letta, Souveraine or elfmem store holds (git, ``.letta``, ``system/``,
    ``.memfs.config.json``, ``agent.yaml``, ``.elfmem``), at no place where Letta Code keeps an
    agent's memory (``~/.letta/agents/<id>/memory``, its local backend's
    ``memfs/<id>/memory``, a shared-memory repository beside them)."""
    if not path.is_dir() or not (path / INDEX).exists():
        return None
    for other in (".git", ".letta", "system", ".memfs.config.json", "agent.yaml", ".elfmem"):
        if os.path.lexists(path / other):
            return None
    if (path / "memory" / "system").is_dir():
        return None
    from memlab.kinds._memfs._locate import agent_memory_folder, shared_memory_name

    where = path.absolute()
    if agent_memory_folder(where) or shared_memory_name(where):
        return None  # where Letta Code keeps memory: a v2 tree (MEMORY.md) without its .git
    return "holds MEMORY.md and no git (Claude Code auto memory)"


def _read(path: Path, rel: str, problems: Problems) -> tuple[bytes | None, str | None]:
    """``(bytes, text)`` of a store file, or ``(None, None)`` with a problem row."""
    try:
        data = read_regular(path, max_bytes=MAX_FILE_BYTES)
    except FileTooLarge as exc:
        problems.add(rel, "oversized", f"not read: {exc}")
        return None, None
    except NotRegularFile as exc:
        problems.add(rel, "unreadable", f"not read: {exc.reason}")
        return None, None
    except OSError as exc:
        problems.add(rel, "unreadable", f"not read: {exc.strerror or exc}")
        return None, None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.add(
            rel,
            "bad_text",
            f"not UTF-8 (byte {exc.start}: 0x{data[exc.start]:02x}); read with U+FFFD",
        )
        text = data.decode("utf-8", "replace")
    return data, text.removeprefix("\ufeff")


def _frontmatter(text: str, rel: str, problems: Problems) -> dict[str, Any]:
    """name, description, type (and where it was), the raw text and whether it read."""
    out: dict[str, Any] = {
        "name": None,
        "description": None,
        "type": None,
        "type_at": None,
        "frontmatter_raw": None,
        "frontmatter_ok": None,
    }
    fm, body, _ = split_frontmatter(text)
    out["body"] = body
    first = text.split("\n", 1)[0].rstrip("\r")
    if fm is None:
        if first == "---":
            problems.add(rel, "frontmatter", "opens a frontmatter fence (---) that never closes", 1)
            out["frontmatter_ok"] = False
        return out
    out["frontmatter_raw"] = fm
    read = read_yaml(fm)
    if not read.ok:
        problems.add(
            rel,
            "frontmatter",
            f"frontmatter is not YAML that reads: {read.problem}",
            None if read.line is None else read.line + 2,
        )
        out["frontmatter_ok"] = False
        return out
    doc = read.value
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        problems.add(rel, "frontmatter", f"frontmatter is a {type(doc).__name__}, not a mapping", 2)
        out["frontmatter_ok"] = False
        return out
    out["frontmatter_ok"] = True
    for key in ("name", "description"):
        value = doc.get(key)
        out[key] = None if value is None else str(value)
    meta = doc.get("metadata")
    if doc.get("type") is not None:
        out["type"], out["type_at"] = str(doc["type"]), "top"
    elif isinstance(meta, dict) and meta.get("type") is not None:
        out["type"], out["type_at"] = str(meta["type"]), "metadata"
    return out


def _targets(line: str) -> list[str]:
    """The ``.md`` files a line links to, as written (links first, then ``[[wiki]]`` links)."""
    found: list[str] = []
    for raw in _LINK.findall(line):
        target = urllib.parse.unquote(raw.split("#", 1)[0])
        if urllib.parse.urlsplit(target).scheme or not target.lower().endswith(".md"):
            continue
        found.append(target)
    for raw in _WIKI.findall(line):
        target = raw.strip()
        found.append(target if target.lower().endswith(".md") else f"{target}.md")
    return list(dict.fromkeys(found))


def _normal(target: str) -> tuple[str | None, bool]:
    """``(path relative to the folder, outside)``: a target that is absolute or climbs out of
    the folder is outside (and never opened)."""
    t = target.replace("\\", "/")
    if t.startswith("/") or re.match(r"^[A-Za-z]:/", t) or t.startswith("~"):
        return None, True
    norm = posixpath.normpath(t)
    if norm == ".." or norm.startswith("../"):
        return None, True
    return norm, False


def _index_rows(text: str, data: bytes, problems: Problems) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    offset = 0
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    lines = text.split("\n")
    for n, raw in enumerate(raw_lines, start=1):
        size = len(raw) + (1 if offset + len(raw) < len(data) else 0)
        line_text = lines[n - 1].rstrip("\r") if n - 1 < len(lines) else ""
        beyond_lines = n > INDEX_MAX_LINES
        # the line's own bytes (its newline aside) must lie wholly in the first 25,000
        beyond_bytes = offset + len(raw.rstrip(b"\r")) > INDEX_MAX_BYTES
        base = {
            "line": n,
            "text": line_text,
            "offset": offset,
            "bytes": size,
            "beyond_200_lines": beyond_lines,
            "beyond_25kb": beyond_bytes,
            "visible": not (beyond_lines or beyond_bytes),
        }
        targets = _targets(line_text)
        if not targets:
            rows.append({**base, "target": None, "target_exists": None, "outside": None})
        for target in targets:
            rel, outside = _normal(target)
            if outside:
                problems.add(
                    INDEX,
                    "outside_folder",
                    f"links {target!r}, outside the memory folder: not opened",
                    n,
                )
            rows.append({**base, "target": rel if rel is not None else target, "outside": outside})
        offset += size
    return rows


def _instructions(folder: Path, problems: Problems) -> list[dict[str, Any]]:
    roots = [folder]
    if folder.name == "memory" and folder.parent.name == ".claude":
        roots.append(folder.parent.parent)  # <project>/.claude/memory: the project's CLAUDE.md
    rows: list[dict[str, Any]] = []
    for root in roots:
        candidates = [
            (root / "CLAUDE.md", "project"),
            (root / "CLAUDE.local.md", "local"),
            (root / ".claude" / "CLAUDE.md", "project"),
        ]
        rules = root / ".claude" / "rules"
        if rules.is_dir() and not rules.is_symlink():
            candidates += [(p, "rules") for p in sorted(rules.glob("*.md"))]
        for path, scope in candidates:
            if not os.path.lexists(path):
                continue
            rel = os.path.relpath(path, folder)
            if path.is_symlink():
                problems.add(rel, "symlink", "a symbolic link: not followed, not read")
                continue
            data, text = _read(path, rel, problems)
            if data is None or text is None:
                continue
            rows.append(
                {
                    "path": rel,
                    "scope": scope,
                    "bytes": len(data),
                    "lines": text.count("\n") + (0 if text.endswith("\n") or not text else 1),
                    "imports": list(dict.fromkeys(_IMPORT.findall(text))),
                    "body": text,
                }
            )
    return rows


def _frame(rows: list[dict[str, Any]], name: str) -> pd.DataFrame:
    dtypes = FRAME_DTYPES[name]
    if not rows:
        return empty_frame(dtypes)
    df = pd.DataFrame(rows, columns=list(dtypes))
    for col, dtype in dtypes.items():
        if dtype == "datetime64[ns, UTC]":
            df[col] = pd.to_datetime(df[col], unit="s", utc=True)
        elif dtype != "object":
            df[col] = df[col].astype(dtype)
    return df


def load_claude_memory(path: str | Path) -> Store:
    """A Store of kind ``claude_memory`` from an auto-memory folder (see the module docstring).
    Nothing is written; a folder that does not exist is a StoreNotFound, a file an
    UnrecognizedStore."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise StoreNotFound("no such folder", path=folder)
    if not folder.is_dir():
        raise UnrecognizedStore(
            "a Claude Code memory store is a folder holding MEMORY.md", path=folder
        )
    problems = Problems()
    other: list[str] = []
    topic: list[dict[str, Any]] = []
    walk_errors: list[OSError] = []

    def too_deep(sub: str) -> None:
        problems.add(os.path.relpath(sub, folder), "too_deep", "a folder too deep: not looked into")

    for dirpath, dirnames, filenames in walk(
        folder, onerror=walk_errors.append, too_deep=too_deep, max_depth=_MAX_DEPTH
    ):
        # hidden folders (an editor's, a .git the detector refused) are listed, not read
        other += [
            Path(dirpath, d).relative_to(folder).as_posix() + "/"
            for d in dirnames
            if d.startswith(".")
        ]
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for d in dirnames:
            if os.path.islink(os.path.join(dirpath, d)):
                problems.add(
                    os.path.relpath(os.path.join(dirpath, d), folder),
                    "symlink",
                    "a symbolic link to a folder: not followed",
                )
        for fname in sorted(filenames):
            full = Path(dirpath) / fname
            rel = full.relative_to(folder).as_posix()
            if rel == INDEX:
                continue
            if not fname.lower().endswith(".md"):
                other.append(rel)
                continue
            try:
                st = os.lstat(full)
            except OSError as exc:
                problems.add(rel, "unreadable", f"not read: {exc.strerror or exc}")
                continue
            row: dict[str, Any] = {
                "path": rel,
                "stem": rel[:-3],
                "bytes": st.st_size,
                "modified": st.st_mtime,
                "read": False,
            }
            if stat.S_ISLNK(st.st_mode):
                problems.add(rel, "symlink", "a symbolic link: not followed, not read")
                row["bytes"] = None
                topic.append(row)
                continue
            data, text = _read(full, rel, problems)
            if data is not None and text is not None:
                fm = _frontmatter(text, rel, problems)
                body = fm.pop("body")
                row.update(fm)
                row.update(
                    bytes=len(data),
                    lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1),
                    body=body,
                    body_chars=len(body),
                    body_sha256=hashlib.sha256(body.strip().encode("utf-8")).hexdigest(),
                    sha256=hashlib.sha256(data).hexdigest(),
                    read=True,
                )
            topic.append(row)
    for err in walk_errors:
        problems.add(
            os.path.relpath(str(err.filename), folder),
            "unreadable",
            f"folder not listed: {err.strerror or err}",
        )

    index_rows: list[dict[str, Any]] = []
    index_text: str | None = None
    index_path = folder / INDEX
    index_meta: dict[str, Any] = {"index_bytes": None, "index_lines": None, "index_sha256": None}
    if not os.path.lexists(index_path):
        problems.add(INDEX, "no_index", "the folder has no MEMORY.md: no memory is loaded at start")
    elif index_path.is_symlink():
        problems.add(INDEX, "symlink", "a symbolic link: not followed, not read")
    else:
        data, index_text = _read(index_path, INDEX, problems)
        if data is not None and index_text is not None:
            index_rows = _index_rows(index_text, data, problems)
            index_meta = {
                "index_bytes": len(data),
                "index_lines": index_text.count("\n")
                + (0 if index_text.endswith("\n") or not index_text else 1),
                "index_sha256": hashlib.sha256(data).hexdigest(),
            }

    paths = {r["path"] for r in topic}
    for r in index_rows:
        if r["target"] is not None and not r["outside"]:
            r["target_exists"] = r["target"] in paths or os.path.lexists(folder / r["target"])
    by_target: dict[str, list[dict[str, Any]]] = {}
    for r in index_rows:
        if r["target"] is not None and not r["outside"]:
            by_target.setdefault(r["target"], []).append(r)
    for row in topic:
        named = by_target.get(row["path"], [])
        row["indexed"] = bool(named)
        row["index_lines"] = len({r["line"] for r in named})
        row["visible"] = any(r["visible"] for r in named)

    blocks: list[dict[str, Any]] = []
    if index_text is not None:
        blocks.append(
            {
                "block_id": INDEX,
                "label": "MEMORY",
                "value": index_text,
                "chars": len(index_text),
                "description": "The MEMORY.md index of a Claude Code memory folder",
                "read_only": False,
                "metadata": {"claude_path": INDEX},
            }
        )
    for row in sorted(topic, key=lambda r: r["path"]):
        if not row.get("read"):
            continue
        blocks.append(
            {
                "block_id": row["path"],
                "label": row["stem"],
                "value": row["body"],
                "chars": len(row["body"]),
                "description": row.get("description"),
                "read_only": False,
                "metadata": {
                    "claude_path": row["path"],
                    "claude_name": row.get("name"),
                    "claude_type": row.get("type"),
                    "claude_frontmatter": row.get("frontmatter_raw"),
                },
            }
        )

    frames = {
        "files": _frame(topic, "files"),
        "index": _frame(index_rows, "index"),
        "instructions": _frame(_instructions(folder, problems), "instructions"),
        "blocks": _frame(blocks, "blocks"),
    }
    meta = {
        "name": folder.parent.name if folder.name == "memory" else folder.name,
        "other_files": other,
        **index_meta,
        "index_max_lines": INDEX_MAX_LINES,
        "index_max_bytes": INDEX_MAX_BYTES,
    }
    return Store("claude_memory", folder, frames, problems.frame(), meta)
