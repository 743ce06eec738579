"""Parity of a memfs v2 copy (:func:`check_letta_v2`), for :mod:`memlab.migrations._verify`:
each block at the path its side record names, its value as Letta Code reads the file
(:func:`memlab.formats.letta_memfs.read_as_client`), read-only and limit from
``.memfs.config.json``, the root and folder indexes."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab.constants import ROOT_MEMORY_TEXT
from memlab.formats import letta_memfs as fmt
from memlab.migrations import _elfmem, _letta, _letta_v2
from memlab.migrations._parity import side_record_row
from memlab.store import Store

__all__ = ["check_letta_v2"]


def check_letta_v2(
    rows: Any, spec: Any, src: Store, texts: dict[str, str], side: dict, bodies: dict[str, str]
) -> None:
    """The v2 checks of one repository (``texts``: its committed files): presence at the
    recorded path, content, description, name, read_only, limit, side_record; the root and
    folder indexes; ``unexpected`` for any other memory file."""
    config = _letta_v2.read_config(texts.get(fmt.CONSTRAINTS_CONFIG))
    limits = {
        e.get("pattern"): e.get("maxCharacters")
        for e in config.get("fileCharacterLimits") or []
        if isinstance(e, dict)
    }
    protected = set(config.get("readOnlyFiles") or [])
    src_rows = {str(r["block_id"]): r for r in src.blocks.to_dict("records")}
    repo = spec.subdir
    expected = set()
    for f in spec.files:
        src_row = src_rows[f.item]
        rec = side.get(f.item)
        recorded = rec.get("path") if isinstance(rec, dict) else None
        path = recorded if isinstance(recorded, str) else f.path
        expected.add(path)
        text = texts.get(path)
        rows.add(
            "presence",
            f.item,
            f.path,
            path if text is not None else "missing",
            repo=repo,
            path=f.path,
        )
        if text is None:
            continue
        is_index = path == fmt.ROOT_INDEX
        body = text if is_index else fmt.read_as_client(text).body
        bodies[f.item] = body
        value = "" if pd.isna(src_row.get("value")) else str(src_row.get("value"))
        rows.add("content", f.item, _letta.sha256(value), _letta.sha256(body), repo=repo, path=path)
        if not is_index:
            fm = fmt.read_frontmatter(text)
            raw = _elfmem.value_or_none(src_row.get("description"))
            label = _letta.sanitise_label(src_row.get("label"), f.item)[0]
            want = (
                _letta_v2.description(raw, label)
                if raw is not None and str(raw).strip()
                else f"Memory block {label}"
            )
            # As Letta Code reads it: the line's text, literally (unquoted only where memlab
            # quoted).
            have = fm.client.description if fm.client else None
            if fmt.frontmatter_value(want) != want:
                have = _letta_v2.unquoted(have)
            rows.add("description", f.item, want, have, repo=repo, path=path)
            rows.add(
                "name",
                f.item,
                _letta_v2.file_name(path),
                _letta_v2.unquoted(fm.fields.get("name")),
                repo=repo,
                path=path,
            )
        pattern = _letta_v2.glob_for(path)[0]
        rows.add(
            "read_only",
            f.item,
            bool(_elfmem.value_or_none(src_row.get("read_only")) or False),
            pattern in protected,
            repo=repo,
            path=path,
            detail=".memfs.config.json readOnlyFiles",
        )
        lim = _elfmem.value_or_none(src_row.get("limit"))
        lim = int(lim) if lim is not None and int(lim) > 0 else None
        entry = limits.get(pattern)
        size = len(text)
        overhead = size - len(body)
        if lim is not None and len(value) <= lim:
            rows.add(
                "limit",
                f.item,
                lim,
                None if entry is None else entry - overhead,
                repo=repo,
                path=path,
                detail="value budget: the file's limit less its frontmatter",
            )
        else:  # no limit, or a value over it: the entry, if any, only has to fit the file
            rows.add(
                "limit",
                f.item,
                f"none, or at least {size}",
                entry,
                ok=entry is None
                and size <= fmt.CONSTRAINTS_DEFAULTS["maxFileCharacters"]
                or (entry is not None and entry >= size),
                repo=repo,
                path=path,
                detail="no limit, or a value over its limit: the file's size",
            )
        side_record_row(rows, src, src_row, rec, f.item, repo, path)
    folders = {"/".join(p.split("/")[:i]) for p in expected for i in range(1, p.count("/") + 1)}
    indexes = {f"{d}/{fmt.ROOT_INDEX}" for d in folders}
    if fmt.ROOT_INDEX not in expected:
        indexes.add(fmt.ROOT_INDEX)
        rows.add(
            "index",
            fmt.ROOT_INDEX,
            ROOT_MEMORY_TEXT,
            texts.get(fmt.ROOT_INDEX, "missing"),
            repo=repo,
            path=fmt.ROOT_INDEX,
        )
    for index in sorted(indexes - {fmt.ROOT_INDEX}):
        rows.add(
            "index",
            index,
            "present",
            "present" if index in texts else "missing",
            repo=repo,
            path=index,
        )
    for path in sorted(texts):
        if (
            path.endswith(".md")
            and path not in expected | indexes
            and not path.startswith((".memlab/", "skills/"))
        ):
            rows.add(
                "unexpected", path, "not from the source", "present", ok=False, repo=repo, path=path
            )
