"""Frames for an elfmem markdown substrate (``.elfmem/memory/`` + ``.elfmem/ledger/``).

:func:`parse_substrate` works on file texts already read (``{relative path: text}``), so the
memfs loader can hand it the blobs of a git commit and a test can hand it a dict; nothing here
touches the disk. The file format itself lives in :mod:`memlab.formats.blockfile`.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from memlab.constants import INT64_MAX
from memlab.errors import UnsafePath
from memlab.formats.blockfile import (
    SECTIONS,
    Block,
    content_id,
    parse_blockfile,
    parse_ledger,
)
from memlab.formats.letta_memfs import safe_relative_path
from memlab.store import Problems, empty_frame, utc_datetimes

__all__ = ["parse_substrate", "BLOCK_COLUMNS", "LEDGER_COLUMNS", "substrate_relpath"]

BLOCK_COLUMNS: dict[str, str] = {
    "id": "string",
    "title": "string",
    "file": "string",
    "section": "category",
    "category": "category",
    "tags": "object",
    "pinned": "boolean",
    "created": "datetime64[ns, UTC]",
    "cls": "category",
    "cue": "string",
    "relations": "object",
    "extra": "object",
    "body": "string",
    "body_chars": "Int64",
    "line": "Int64",
}
LEDGER_COLUMNS: dict[str, str] = {
    "file": "string",
    "line": "Int64",
    "t": "datetime64[ns, UTC]",
    "s": "Int64",
    "ah": "float64",
    "k": "category",
    "payload": "object",
}
_LEDGER_HEAD = ("t", "s", "ah", "k", "line")


def substrate_relpath(path: str) -> str | None:
    """The part of ``path`` below ``.elfmem/`` (``memory/notes/x.md``), or None if not in one.

    Accepts ``.elfmem/memory/...``, ``project/.elfmem/memory/...`` and paths already relative to
    ``.elfmem`` (``memory/...``, ``ledger/...``).
    """
    parts = path.replace("\\", "/").split("/")
    if ".elfmem" in parts:
        last = len(parts) - 1 - parts[::-1].index(".elfmem")
        parts = parts[last + 1 :]
    elif not parts or parts[0] not in ("memory", "ledger"):
        return None
    return "/".join(parts)


def _unsafe(path: str) -> str | None:
    """Why ``path`` is not a file of the substrate (absolute, ``..``, a ``.git`` segment...:
    the memfs path rule, :func:`memlab.formats.letta_memfs.safe_relative_path`, with a
    backslash read as a separator), or None when it is one."""
    try:
        safe_relative_path(path.replace("\\", "/"))
    except UnsafePath as exc:
        return exc.message
    return None


def parse_substrate(files: Mapping[str, str]) -> tuple[pd.DataFrame, pd.DataFrame, Problems]:
    """Blocks and ledger events of one substrate, plus what was wrong with them.

    ``files`` maps repo-relative paths (``.elfmem/memory/notes/x.md``) to their text. Blocks come
    from ``memory/{notes,log,archive}/**/*.md`` (category = path below the section, without
    ``.md``, as elfmem's index uses it); ``memory/self.md`` is one raw row with section ``self``
    and no id; events come from ``ledger/*.jsonl``. Markdown or JSONL that elfmem would not read
    is reported, not dropped silently.
    """
    problems = Problems()
    rows: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for path in sorted(files):
        text = files[path]
        rel = substrate_relpath(path)
        if rel is None:
            continue
        unsafe = _unsafe(path)
        if unsafe is not None:
            problems.add(path, "unsafe_path", f"{unsafe}; not read")
            continue
        if not isinstance(text, str):
            problems.add(
                path, "not_text", f"expected decoded text, got {type(text).__name__}; not read"
            )
            continue
        parts = rel.split("/")
        if rel == "memory/self.md":
            rows.append(_self_row(path, text))
        elif (
            parts[0] == "memory"
            and len(parts) >= 3
            and parts[1] in SECTIONS
            and rel.endswith(".md")
        ):
            category = "/".join(parts[2:])[: -len(".md")]
            blocks, found = parse_blockfile(text, file=path)
            problems.extend(found)
            rows.extend(_block_row(b, path, parts[1], category) for b in blocks)
        elif parts[0] == "ledger" and len(parts) == 2 and rel.endswith(".jsonl"):
            found_events, found = parse_ledger(text, file=path)
            problems.extend(found)
            events.extend({**e, "_file": path} for e in found_events)
        elif rel.endswith((".md", ".jsonl")):
            problems.add(
                path,
                "unread_file",
                "elfmem reads only memory/self.md, memory/{notes,log,archive}/**/*.md "
                "and ledger/*.jsonl; this file is not part of the memory",
            )
    blocks_df = _blocks_frame(rows, problems)
    _check_ids(blocks_df, problems)
    return blocks_df, _ledger_frame(events, problems), problems


def _self_row(path: str, text: str) -> dict[str, Any]:
    # The constitution is never split into blocks (elfmem Invariant 2): one row, text verbatim.
    return {
        "id": None,
        "title": "self",
        "file": path,
        "section": "self",
        "category": None,
        "tags": [],
        "pinned": None,
        "created": None,
        "cls": None,
        "cue": None,
        "relations": [],
        "extra": {},
        "body": text,
        "body_chars": len(text),
        "line": 1,
    }


def _block_row(b: Block, path: str, section: str, category: str) -> dict[str, Any]:
    return {
        "id": b.id,
        "title": b.title,
        "file": path,
        "section": section,
        "category": category,
        "tags": list(b.tags),
        "pinned": b.pinned,
        "created": b.created,
        "cls": b.cls,
        "cue": b.cue,
        "relations": list(b.relations),
        "extra": dict(b.extra),
        "body": b.body,
        "body_chars": len(b.body),
        "line": b.line,
    }


def _utc_ns(raw: pd.Series) -> pd.Series:
    """ISO text to datetime64[ns, UTC]; unparseable or out of the ns range becomes NaT."""
    return utc_datetimes(raw.astype(object).where(raw.notna(), None))


def _blocks_frame(rows: list[dict[str, Any]], problems: Problems) -> pd.DataFrame:
    if not rows:
        return empty_frame(BLOCK_COLUMNS)
    df = pd.DataFrame(rows, columns=list(BLOCK_COLUMNS))
    missing = df["id"].isna() & (df["section"] != "self")
    for idx in df.index[missing]:
        # elfmem's index gives an id-less block the content-hash id; do the same so links and
        # joins resolve, and say so.
        derived = content_id(df.at[idx, "body"])
        df.at[idx, "id"] = derived
        problems.add(
            df.at[idx, "file"],
            "missing_id",
            f"'{df.at[idx, 'title']}' has no id; elfmem's index derives {derived} from "
            "its content, which changes with every edit",
            line=int(df.at[idx, "line"]),
        )
    created = _utc_ns(df["created"])
    bad = df["created"].notna() & created.isna()
    for idx in df.index[bad]:
        problems.add(
            df.at[idx, "file"],
            "bad_created",
            f"'{df.at[idx, 'title']}': created {df.at[idx, 'created']!r} is not an "
            "ISO-8601 time memlab can place; read as missing",
            line=int(df.at[idx, "line"]),
        )
    df["created"] = created
    for col, dtype in BLOCK_COLUMNS.items():
        if col == "created":
            continue
        if dtype == "boolean":
            df[col] = df[col].astype("boolean")
        elif dtype != "object":
            df[col] = df[col].astype(dtype)
    return df


def _check_ids(df: pd.DataFrame, problems: Problems) -> None:
    blocks = df[df["section"] != "self"]
    if blocks.empty:
        return
    per_file = blocks.groupby("id", observed=True)["file"].nunique()
    for block_id, n_files in per_file[per_file > 1].items():
        files = sorted(blocks.loc[blocks["id"] == block_id, "file"].unique())
        problems.add(
            files[1],
            "duplicate_id",
            f"id {block_id!r} appears in {n_files} files ({', '.join(files)}); elfmem's "
            "index holds one block per id: give one a new id",
        )
    known = set(blocks["id"].dropna())
    for row in blocks.itertuples(index=False):
        for rel, target in row.relations:
            if target not in known:
                problems.add(
                    row.file,
                    "dangling_link",
                    f"'{row.title}' {rel}:: [[{target}]] names no block in this substrate",
                    line=int(row.line),
                )


def _ledger_frame(events: list[dict[str, Any]], problems: Problems) -> pd.DataFrame:
    if not events:
        return empty_frame(LEDGER_COLUMNS)
    rows = []
    for e in events:
        s, ah = e.get("s"), e.get("ah")
        if s is not None and (isinstance(s, bool) or not isinstance(s, int)):
            problems.add(
                e["_file"], "ledger_bad_field", f"s={s!r:.40} is not an integer", line=e["line"]
            )
            s = None
        elif s is not None and abs(s) > INT64_MAX:
            problems.add(
                e["_file"],
                "ledger_bad_field",
                f"s={s!r:.40} is out of the 64-bit integer range; read as missing",
                line=e["line"],
            )
            s = None
        if ah is not None and (isinstance(ah, bool) or not isinstance(ah, (int, float))):
            problems.add(
                e["_file"], "ledger_bad_field", f"ah={ah!r} is not a number", line=e["line"]
            )
            ah = None
        rows.append(
            {
                "file": e["_file"],
                "line": e["line"],
                "t": e.get("t") if isinstance(e.get("t"), str) else None,
                "s": s,
                "ah": ah,
                "k": str(e["k"]),
                "payload": {k: v for k, v in e.items() if k not in _LEDGER_HEAD and k != "_file"},
                "_t_raw": e.get("t"),
            }
        )
    df = pd.DataFrame(rows)
    t = _utc_ns(df["t"])
    for idx in df.index[t.isna()]:
        problems.add(
            df.at[idx, "file"],
            "ledger_bad_time",
            f"t={df.at[idx, '_t_raw']!r} is not an ISO-8601 time; elfmem orders events by it",
            line=int(df.at[idx, "line"]),
        )
    df["t"] = t
    df = df.drop(columns="_t_raw")
    # From the rows, not df["s"]: a column of ints and None is float64, which rounds any s
    # above 2**53.
    df["s"] = pd.array([r["s"] for r in rows], dtype="Int64")
    df["ah"] = pd.to_numeric(df["ah"], errors="coerce").astype("float64")
    for col in ("file", "k"):
        df[col] = df[col].astype(LEDGER_COLUMNS[col])
    df["line"] = df["line"].astype("Int64")
    return df[list(LEDGER_COLUMNS)]
