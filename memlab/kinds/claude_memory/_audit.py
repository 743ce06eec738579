"""Audit of a Claude Code auto-memory folder: what users asked for (issue 37).

Every finding row says its ``basis`` (the rule it broke, with the figure it was held to):

* ``orphan_files``: a topic file no index line links (a session never learns it exists);
* ``dangling_index_lines``: an index line linking a file that is not in the folder;
* ``invisible_tail``: index lines a session never sees: past line 200, or not wholly inside
  the first 25,000 bytes, with how far past;
* ``hidden_memories``: topic files that only invisible index lines link;
* ``duplicates``: topic files with the same body (sha256 of the stripped body; no model);
* ``near_duplicates``: pairs of topic files whose bodies' cosine is at or above
  :data:`~memlab.constants.NEAR_DUP_THRESHOLD` with memlab's embedder
  (:func:`memlab.embed.get_embedder`, :class:`memlab.embed.NeighborIndex` as review uses them);
  exact duplicates are not repeated here;
* ``frontmatter``: one row per broken rule: no frontmatter, frontmatter that does not read,
  ``name`` / ``description`` / ``type`` missing, a type outside user/feedback/project/reference,
  a file-name prefix (``feedback_``...) that names another type, a name two files share;
* ``types``: files, bytes, lines and body characters per type (``(none)`` without one).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab._escape import terminal_lines
from memlab.audits._base import Audit, json_safe
from memlab.constants import NEAR_DUP_THRESHOLD
from memlab.kinds.claude_memory._load import INDEX_MAX_BYTES, INDEX_MAX_LINES, TYPES
from memlab.store import Store

__all__ = ["audit_claude_memory", "near_duplicate_pairs"]


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def near_duplicate_pairs(paths: list[str], bodies: list[str], threshold: float) -> pd.DataFrame:
    """Pairs (path_a, path_b, cosine) at or above ``threshold`` among ``bodies`` embedded with
    memlab's embedder (vectors cached on disk as every memlab embedding is)."""
    from memlab.embed import NeighborIndex, get_embedder

    columns = ["path_a", "path_b", "cosine"]
    if len(bodies) < 2:
        return _frame([], columns)
    vectors = get_embedder().encode(bodies)
    pairs = NeighborIndex(vectors).pairs_above(threshold)
    rows = []
    for r in pairs.itertuples(index=False):
        a, b = sorted((paths[int(r[0])], paths[int(r[1])]))
        rows.append({"path_a": a, "path_b": b, "cosine": float(r[2])})
    return _frame(sorted(rows, key=lambda r: (-r["cosine"], r["path_a"], r["path_b"])), columns)


def _frontmatter_rows(files: pd.DataFrame) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def add(path: str, rule: str, detail: str) -> None:
        rows.append({"path": path, "rule": rule, "detail": detail, "basis": _RULES[rule]})

    read = files[files["read"].fillna(False).astype(bool)]
    for r in read.to_dict("records"):
        path = r["path"]
        if r["frontmatter_ok"] is pd.NA or r["frontmatter_ok"] is None:
            add(path, "no_frontmatter", "the file opens with no --- fence")
            continue
        if not bool(r["frontmatter_ok"]):
            add(path, "unreadable_frontmatter", "see the problems table")
            continue
        for key in ("name", "description", "type"):
            value = r[key]
            if value is pd.NA or value is None or not str(value).strip():
                add(path, f"no_{key}", f"frontmatter has no {key}")
        kind = r["type"]
        if isinstance(kind, str) and kind not in TYPES:
            add(path, "unknown_type", f"type {kind!r}")
        prefix = str(path).rsplit("/", 1)[-1].split("_", 1)[0]
        if prefix in TYPES and isinstance(kind, str) and kind in TYPES and kind != prefix:
            add(path, "prefix_type_mismatch", f"file name says {prefix}, type says {kind}")
    names = read.dropna(subset=["name"])
    for name, group in names.groupby(names["name"].astype(str).str.strip().str.casefold()):
        if len(group) > 1:
            for path in sorted(group["path"].astype(str)):
                others = sorted(p for p in group["path"].astype(str) if p != path)
                add(path, "shared_name", f"name {name!r} also in {', '.join(others)}")
    return rows


_RULES = {
    "no_frontmatter": "a topic file starts with a --- frontmatter fence (name, description, type)",
    "unreadable_frontmatter": "the frontmatter reads as a YAML mapping",
    "no_name": "frontmatter names the memory (name)",
    "no_description": "frontmatter has the one-line description used to judge relevance",
    "no_type": "frontmatter has a type (top level or metadata.type)",
    "unknown_type": f"type is one of {', '.join(TYPES)}",
    "prefix_type_mismatch": "a <type>_ file-name prefix agrees with the frontmatter type",
    "shared_name": "no two topic files share a name (anthropics/claude-code#68546)",
}


def audit_claude_memory(store: Store, *, as_of: Any = None, near_duplicates: bool = True) -> Audit:
    """Evidence tables and headline numbers for a ``claude_memory`` store (see the module
    docstring). ``as_of`` is taken and not used (nothing here ages); ``near_duplicates=False``
    skips the embedding check: its table is empty and its count null (not checked)."""
    files, index = store.files, store.index
    read = files[files["read"].fillna(False).astype(bool)]

    orphans = files[~files["indexed"].fillna(False).astype(bool)][
        ["path", "type", "bytes"]
    ].reset_index(drop=True)
    orphans["basis"] = "no MEMORY.md line links this file"

    linked = index[index["target"].notna() & ~index["outside"].fillna(False).astype(bool)]
    dangling = linked[~linked["target_exists"].fillna(False).astype(bool)][
        ["line", "target", "text", "visible"]
    ].reset_index(drop=True)
    dangling["basis"] = "the line links a file that is not in the folder"

    lines = index.drop_duplicates("line")
    tail = lines[~lines["visible"].fillna(True).astype(bool)]
    tail_rows = []
    for r in tail.to_dict("records"):
        reasons = []
        if r["beyond_200_lines"]:
            reasons.append(
                f"line {r['line']} > {INDEX_MAX_LINES} (by {r['line'] - INDEX_MAX_LINES})"
            )
        if r["beyond_25kb"]:
            end = int(r["offset"]) + len(str(r["text"]).encode("utf-8"))
            reasons.append(
                f"ends at byte {end:,} > {INDEX_MAX_BYTES:,} (by {end - INDEX_MAX_BYTES:,})"
            )
        tail_rows.append(
            {
                "line": r["line"],
                "offset": r["offset"],
                "bytes": r["bytes"],
                "text": r["text"],
                "basis": "a session loads MEMORY.md's first "
                f"{INDEX_MAX_LINES} lines and {INDEX_MAX_BYTES:,} bytes: " + "; ".join(reasons),
            }
        )
    invisible = _frame(tail_rows, ["line", "offset", "bytes", "text", "basis"])

    hidden = files[
        files["indexed"].fillna(False).astype(bool) & ~files["visible"].fillna(False).astype(bool)
    ][["path", "type", "bytes"]].reset_index(drop=True)
    hidden_lines = {
        p: sorted(int(x) for x in g["line"]) for p, g in linked.groupby("target", observed=True)
    }
    hidden["lines"] = [hidden_lines.get(p, []) for p in hidden["path"]]
    hidden["basis"] = "every index line linking it is past what a session loads"

    dup_rows = []
    for sha, group in read.groupby("body_sha256"):
        paths = sorted(group["path"].astype(str))
        for i, a in enumerate(paths):
            for b in paths[i + 1 :]:
                dup_rows.append(
                    {"path_a": a, "path_b": b, "body_sha256": sha, "basis": "same body sha256"}
                )
    duplicates = _frame(dup_rows, ["path_a", "path_b", "body_sha256", "basis"])

    near_columns = ["path_a", "path_b", "cosine", "threshold", "margin", "basis"]
    near_checked = bool(near_duplicates)
    if near_checked:
        # one text per body: an exact duplicate is reported above, not again here
        unique = read.drop_duplicates("body_sha256")
        unique = unique[unique["body"].fillna("").str.strip() != ""]
        pairs = near_duplicate_pairs(
            list(unique["path"].astype(str)),
            [str(b) for b in unique["body"]],
            NEAR_DUP_THRESHOLD,
        )
        pairs["threshold"] = NEAR_DUP_THRESHOLD
        pairs["margin"] = pairs["cosine"] - NEAR_DUP_THRESHOLD
        pairs["basis"] = (
            f"cosine of the bodies' embeddings >= {NEAR_DUP_THRESHOLD:.2f} "
            "(memlab's near-duplicate threshold, elfmem's)"
        )
        near = pairs[near_columns]
    else:
        near = _frame([], near_columns)

    fm = _frame(_frontmatter_rows(files), ["path", "rule", "detail", "basis"])

    typed = files.assign(type=files["type"].fillna("(none)").astype(str))
    types = (
        typed.groupby("type")
        .agg(
            files=("path", "size"),
            bytes=("bytes", "sum"),
            lines=("lines", "sum"),
            body_chars=("body_chars", "sum"),
        )
        .reset_index()
        .sort_values(["bytes", "type"], ascending=[False, True])
        .reset_index(drop=True)
    )
    total = types["bytes"].sum() if len(types) else 0
    types["share_of_bytes"] = (types["bytes"] / total).astype("float64") if total else None

    index_bytes = store.meta.get("index_bytes")
    index_lines = store.meta.get("index_lines")
    counts = {
        "n_orphan_files": len(orphans),
        "n_dangling_index_lines": int(dangling["line"].nunique()),
        "n_tail_index_lines": len(invisible),
        "n_hidden_memories": len(hidden),
        "n_duplicate_pairs": len(duplicates),
        "n_near_duplicate_pairs": len(near) if near_checked else None,
        "n_frontmatter_problems": len(fm),
    }
    index_read = index_bytes is not None
    if not index_read:  # no index read: drift and the tail are not known
        for key in ("n_orphan_files", "n_dangling_index_lines", "n_tail_index_lines"):
            counts[key] = None
        counts["n_hidden_memories"] = None
    headline: dict[str, Any] = {
        "n_topic_files": len(files),
        "n_topic_files_read": len(read),
        "topic_bytes": int(files["bytes"].sum()) if files["bytes"].notna().all() else None,
        "index_bytes": index_bytes,
        "index_lines_total": index_lines,
        "index_visible_lines": int(lines["visible"].fillna(False).sum()) if index_read else None,
        **counts,
        "memory_findings": None
        if any(v is None for v in counts.values())
        else int(sum(v for v in counts.values() if v is not None)),
        "n_instruction_files": len(store.instructions),
        "problems": len(store.problems),
    }
    headline = json_safe(headline)
    notes = [
        f"a session loads MEMORY.md's first {INDEX_MAX_LINES} lines and "
        f"{INDEX_MAX_BYTES:,} bytes; topic files are read on demand",
        "near-duplicates: cosine of the bodies' embeddings at or above "
        f"{NEAR_DUP_THRESHOLD:.2f}"
        + ("" if near_checked else " (not checked: near_duplicates=False)"),
    ]
    if not index_read:
        notes.append("MEMORY.md was not read (see problems): index drift and tail not known")
    tables = {
        "orphan_files": orphans,
        "dangling_index_lines": dangling,
        "invisible_tail": invisible,
        "hidden_memories": hidden,
        "duplicates": duplicates,
        "near_duplicates": near.reset_index(drop=True),
        "frontmatter": fm,
        "types": types,
        "problems": store.problems,
    }
    return Audit(
        kind=store.kind,
        store_name=store.name,
        tables=tables,
        headline=headline,
        summary_text=_summary(store, headline, tables),
        notes=notes,
    )


def _summary(store: Store, h: dict[str, Any], t: dict[str, pd.DataFrame]) -> str:
    def n(v: Any) -> str:
        return "not checked" if v is None else str(v)

    lines = [
        f"{store.name}: Claude Code memory folder, {h['n_topic_files']} topic file(s), "
        f"MEMORY.md {n(h['index_lines_total'])} line(s) / {n(h['index_bytes'])} bytes"
    ]
    lines.append(f"  {n(h['n_orphan_files'])} topic file(s) no index line links")
    for r in t["orphan_files"].head(5).itertuples(index=False):
        lines.append(f"    {r.path}")
    lines.append(f"  {n(h['n_dangling_index_lines'])} index line(s) linking no file")
    for r in t["dangling_index_lines"].head(5).itertuples(index=False):
        lines.append(f"    line {r.line}: {r.target}")
    lines.append(
        f"  {n(h['n_tail_index_lines'])} index line(s) past what a session loads "
        f"({INDEX_MAX_LINES} lines / {INDEX_MAX_BYTES:,} bytes); "
        f"{n(h['n_hidden_memories'])} memory file(s) only they link"
    )
    lines.append(
        f"  {n(h['n_duplicate_pairs'])} exact duplicate pair(s), "
        f"{n(h['n_near_duplicate_pairs'])} near-duplicate pair(s)"
    )
    for r in t["near_duplicates"].head(5).itertuples(index=False):
        lines.append(f"    {r.path_a} ~ {r.path_b}: cosine {r.cosine:.3f}")
    lines.append(f"  {n(h['n_frontmatter_problems'])} frontmatter problem(s)")
    for r in t["frontmatter"].head(5).itertuples(index=False):
        lines.append(f"    {r.path}: {r.rule} ({r.detail})")
    for r in t["types"].itertuples(index=False):
        lines.append(f"  type {r.type}: {r.files} file(s), {int(r.bytes or 0):,} bytes")
    if h["problems"]:
        lines.append(f"  {h['problems']} problem(s) while reading; see tables['problems']")
    return terminal_lines(lines)
