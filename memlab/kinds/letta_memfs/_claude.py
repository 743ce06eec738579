"""A Letta Code memfs repository -> a Claude Code auto-memory folder (``--to claude_memory``).

Claude Code's rules (data/samples/claude-memory/SOURCES.md) allow a faithful copy: a topic file
holds any markdown body under ``name`` / ``description`` / ``type`` frontmatter, and the
``MEMORY.md`` index names each one in a line. So:

* **one topic file per memory file**, ``<label>.md`` with the label's ``/`` as ``_`` (and any
  character outside ``A-Za-z0-9._-`` as ``_``), the body exactly as Letta Code reads it;
  frontmatter ``name`` (the Letta label), ``description`` (Letta's, else a fallback, flagged) and
  ``type``: the file name's own ``user_``/``feedback_``/``project_``/``reference_`` prefix where
  it has one (so a Claude folder that went to Letta comes back as it was), else ``user`` for the
  ``human``/``user`` file, ``feedback`` for ``persona``, ``reference``
  for files under ``reference/`` and for Letta's own folder indexes (``MEMORY.md`` files, which
  are kept, renamed ``letta_MEMORY.md`` at the root so they never stand in for the Claude index),
  ``project`` for the rest. The rule each file followed is in the side file.
* **the index** ``MEMORY.md``: a heading, a blank line, then one line per topic file,
  ``- [<name>](<file>) — <description>``, Letta's core files (in the prompt every turn) first,
  then the rest by path. Claude Code loads only the first 200 lines / 25,000 bytes: every line
  is written all the same (never a silent drop), and each file whose line falls past the budget
  is flagged ``index_past_budget`` (a warning), so the audit of the result reports that tail.

The folder is written as ``memory/`` of a new git repository (memlab's migrations are
reviewable commits): copy ``memory/`` to ``~/.claude/projects/<project>/memory/``. What a topic
file has no field for (the Letta path, ``limit``, ``read_only``, the type rule) is in
``.memlab/claude-memory.json`` beside it, outside the folder. ``--verify`` (:class:`MemfsParity`)
loads ``memory/`` as a Claude Code memory folder and checks every file, the index and the side
file; the upgrade of a v1 repository is verified as before.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from memlab.errors import MigrationError
from memlab.kinds.claude_memory._load import INDEX_MAX_BYTES, INDEX_MAX_LINES, TYPES
from memlab.migrations import (
    Plan,
    PlannedCommit,
    PlannedRepo,
    flags_frame,
    moved_frame,
    signature_at,
)
from memlab.migrations._parity import ParityRows, checkout_view
from memlab.migrations._verify import Copy, check_text_retrieval
from memlab.store import Store

__all__ = [
    "FOLDER",
    "SIDE_FILE",
    "TARGET",
    "MemfsParity",
    "plan_claude_memory",
    "topic_name",
    "claude_type",
]

#: The migration target's name (``memlab migrate --to claude_memory``).
TARGET = "claude_memory"
FOLDER = "memory"
SIDE_FILE = ".memlab/claude-memory.json"
INDEX_HEADING = "# Memory index"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def topic_name(label: str) -> str:
    """The topic file a Letta label becomes: ``/`` -> ``_``, unsafe characters -> ``_``; Letta's
    root index ``MEMORY`` -> ``letta_MEMORY`` (``MEMORY.md`` is the Claude index)."""
    stem = _UNSAFE.sub("_", label.replace("/", "_")) or "memory"
    if stem.upper() == "MEMORY":
        stem = f"letta_{stem}"
    return f"{stem}.md"


def claude_type(label: str) -> tuple[str, str]:
    """``(type, rule)`` for a Letta label (the module docstring's mapping)."""
    leaf = label.rsplit("/", 1)[-1]
    if leaf == "MEMORY":
        return "reference", "a Letta folder index"
    prefix = leaf.split("_", 1)[0].lower()
    if "_" in leaf and prefix in TYPES:
        return prefix, f"the file name's {prefix}_ prefix"
    if leaf.lower() in ("human", "user"):
        return "user", "Letta's human file: who the user is"
    if leaf.lower() == "persona":
        return "feedback", "Letta's persona file: how the agent should work"
    if label.startswith("reference/"):
        return "reference", "under Letta's reference/"
    return "project", "any other memory file"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _topic_text(name: str, description: str, kind: str, body: str) -> str:
    head = yaml.safe_dump(
        {"name": name, "description": description, "type": kind},
        sort_keys=False,
        allow_unicode=True,
        width=10**6,
    )
    return f"---\n{head}---\n\n{body}"


def _entries(store: Store, source: Path, flags: list[dict[str, Any]]) -> list[dict[str, Any]]:
    files = store.files
    entries: list[dict[str, Any]] = []
    taken: dict[str, str] = {}
    for r in files.to_dict("records"):
        label, path = str(r["label"]), str(r["path"])
        name = topic_name(label)
        if name.lower() in taken or name.lower() == "memory.md":
            raise MigrationError(
                f"{path} and {taken.get(name.lower(), 'MEMORY.md')} would both be {name}",
                path=source,
                hint="rename one of them in the Letta repository, then migrate",
            )
        taken[name.lower()] = path
        desc = r.get("client_description")
        desc = r.get("description") if desc is None or pd.isna(desc) else desc
        kind, rule = claude_type(label)
        if desc is None or pd.isna(desc) or not _one_line(desc):
            desc = f"Letta memory file {path}"
            flags.append(
                {
                    "kind": "description_fallback",
                    "item": label,
                    "path": name,
                    "severity": "info",
                    "message": f"{path} has no description in Letta; the topic file says {desc!r}",
                }
            )
        body = r.get("body")
        entries.append(
            {
                "label": label,
                "letta_path": path,
                "file": name,
                "description": _one_line(desc),
                "type": kind,
                "type_rule": rule,
                "body": "" if body is None or pd.isna(body) else str(body),
                "core": bool(r.get("in_prompt")),
                "limit": None if pd.isna(r.get("limit")) else int(r["limit"]),
                "read_only": bool(r.get("read_only")) if not pd.isna(r.get("read_only")) else None,
            }
        )
    entries.sort(key=lambda e: (not e["core"], e["letta_path"]))
    return entries


def _index(entries: list[dict[str, Any]], flags: list[dict[str, Any]]) -> str:
    lines = [INDEX_HEADING, ""]
    used = sum(len(x.encode("utf-8")) + 1 for x in lines)
    for e in entries:
        line = f"- [{e['label']}]({e['file']}) — {e['description']}"
        lines.append(line)
        used += len(line.encode("utf-8")) + 1
        if len(lines) > INDEX_MAX_LINES or used > INDEX_MAX_BYTES:
            flags.append(
                {
                    "kind": "index_past_budget",
                    "item": e["label"],
                    "path": e["file"],
                    "severity": "warning",
                    "message": f"its index line ({len(lines)}, ending at byte {used:,}) is past "
                    f"the {INDEX_MAX_LINES} lines / {INDEX_MAX_BYTES:,} bytes Claude Code "
                    "loads: written, but a session never sees it",
                }
            )
    return "\n".join(lines) + "\n"


def plan_claude_memory(
    store: Store,
    source: Path,
    *,
    target: str = TARGET,
    dest: str | Path | None = None,
    layout: str | None = None,
) -> Plan:
    """The plan (see the module docstring): one commit writing ``memory/`` and the side file."""
    if layout is not None:
        raise MigrationError(
            "--layout is a Letta target's option", path=source, hint="leave out --layout"
        )
    unread = store.problems[store.problems["kind"].astype(str).isin(("symlink", "oversized"))]
    if len(unread):
        row = unread.iloc[0]
        raise MigrationError(
            f"{row['file']}: {row['message']}; migrating would lose it",
            path=source,
            hint="fix or remove the file (memlab audit lists every problem), then migrate",
        )
    flags: list[dict[str, Any]] = []
    entries = _entries(store, source, flags)
    index = _index(entries, flags)
    files = {f"{FOLDER}/MEMORY.md": index.encode("utf-8")}
    for e in entries:
        text = _topic_text(e["label"], e["description"], e["type"], e["body"])
        files[f"{FOLDER}/{e['file']}"] = text.encode("utf-8")
    side = {
        "source": "letta_memfs",
        "layout": store.meta.get("layout"),
        "head_sha": store.meta.get("head_sha"),
        "files": [
            {
                k: e[k]
                for k in (
                    "file",
                    "letta_path",
                    "label",
                    "type",
                    "type_rule",
                    "core",
                    "limit",
                    "read_only",
                )
            }
            for e in entries
        ],
    }
    files[SIDE_FILE] = (json.dumps(side, indent=2, sort_keys=True) + "\n").encode("utf-8")
    times = store.history["committed_at"] if "committed_at" in store.history else pd.Series()
    signature = signature_at(times.max() if len(times) else None)
    commit = PlannedCommit(
        f"memory: Claude Code memory from the Letta memfs repo {source.name}\n\n"
        f"{len(entries)} topic files and their MEMORY.md index; Letta's paths, limits and "
        f"read_only in {SIDE_FILE}.",
        tuple(sorted(files.items())),
    )
    moved = [
        {
            "kind": "block",
            "item": e["label"],
            "label": e["label"],
            "repo": "",
            "path": f"{FOLDER}/{e['file']}",
            "section": e["type"],
            "chars": len(e["body"]),
            "note": e["type_rule"],
        }
        for e in entries
    ]
    past = sum(1 for f in flags if f["kind"] == "index_past_budget")
    notes = [
        f"{len(entries)} Letta memory files -> {len(entries)} topic files in {FOLDER}/; "
        f"MEMORY.md {index.count(chr(10))} lines / {len(index.encode('utf-8')):,} bytes"
        + (f"; {past} index line(s) past what a session loads (flagged)" if past else "")
    ]
    return Plan(
        target,
        source,
        [PlannedRepo("", (commit,), title=source.name)],
        signature,
        moved_frame(moved),
        flags_frame(flags),
        notes,
    )


def check_claude_copy(rows: ParityRows, store: Store, folder: Path) -> tuple[dict, dict]:
    """Per Letta file: ``presence`` (its topic file), ``content`` (the body as the Claude
    loader reads it is the body Letta Code reads), ``description``, ``type`` and ``index`` (an
    index line links it); then ``drift`` (the audit's orphan and dangling counts are 0), the
    frontmatter findings (none) and the side file. Returns the texts before and after."""
    import memlab
    from memlab.kinds.claude_memory._audit import audit_claude_memory

    memory = folder / FOLDER
    copy = memlab.load(memory)
    got = copy.files.set_index("path") if len(copy.files) else copy.files
    linked = set(copy.index["target"].dropna().astype(str)) if len(copy.index) else set()
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    for e in _entries(store, store.path if isinstance(store.path, Path) else Path("."), []):
        name, label = e["file"], e["label"]
        before[label] = e["body"]
        present = name in got.index
        rows.add("presence", label, name, name if present else "missing", path=name)
        if not present:
            continue
        r = got.loc[name]
        after[label] = "" if pd.isna(r["body"]) else str(r["body"])
        rows.add("content", label, e["body"], after[label], path=name)
        rows.add("description", label, e["description"], r["description"], path=name)
        rows.add("type", label, e["type"], r["type"], path=name)
        rows.add("index", label, "linked", "linked" if name in linked else "not linked", path=name)
    audit = audit_claude_memory(copy, near_duplicates=False)
    h = audit.headline
    rows.add("drift", "orphan topic files", 0, h["n_orphan_files"], path="MEMORY.md")
    rows.add("drift", "dangling index lines", 0, h["n_dangling_index_lines"], path="MEMORY.md")
    rows.add("drift", "frontmatter problems", 0, h["n_frontmatter_problems"], path="MEMORY.md")
    side = folder / SIDE_FILE
    rows.add("side_file", SIDE_FILE, "present", "present" if side.is_file() else "missing")
    return before, after


class MemfsParity:
    """The letta_memfs kind's verifier: a ``claude_memory`` copy (planned so, or holding this
    migration's side file) through :func:`check_claude_copy`, anything else as the v1 -> v2
    upgrade (:class:`memlab.migrations.UpgradeParity`)."""

    def parity(
        self,
        src: str | Path,
        dest: Path,
        *,
        store: Any,
        plan: Any,
        ref: str | None,
        retrieval: bool,
        queries: list[str] | None,
        k: int,
    ) -> pd.DataFrame:
        to_claude = plan.target == TARGET if plan is not None else (dest / SIDE_FILE).is_file()
        if not to_claude:
            from memlab.migrations import UpgradeParity

            return UpgradeParity().parity(
                src,
                dest,
                store=store,
                plan=plan,
                ref=ref,
                retrieval=retrieval,
                queries=queries,
                k=k,
            )
        rows = ParityRows()
        with checkout_view(dest, ref) as folder:
            before, after = check_claude_copy(rows, store, folder)
            copy = Copy(
                src, dest, ref, store, plan, {}, {"": folder}, TARGET, "", retrieval, queries, k
            )
            check_text_retrieval(rows, copy, before, after)
        return rows.frame()
