"""Parity of Letta blocks migrated to memfs (:func:`check_letta`): each block's file, its
value, description, read-only flag, limit and side record, in the v1 layout here and in v2
through :func:`memlab.migrations._verify_v2.check_letta_v2`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from memlab.migrations import _elfmem, _letta
from memlab.migrations._parity import ParityRows, side_record_row, side_texts
from memlab.migrations._verify_v2 import check_letta_v2
from memlab.store import Store

__all__ = ["check_letta"]


def check_letta(
    rows: ParityRows,
    src: Store,
    repo_folders: dict[str, Path],
    copies: dict[str, Store],
    target: str,
    layout: str = "v1",
) -> dict[str, dict[str, str]]:
    """Compare every block of an agent file with its file(s); returns {repo: {block_id: body}}.

    In v2 each block is found at the path its side record names (what the migration recorded),
    which must be the path the plan gives it; its value is Letta Code's reading of the file, and
    read-only and limit are read from ``.memfs.config.json``
    (:func:`memlab.migrations._verify_v2.check_letta_v2`)."""
    flags: list[dict] = []
    specs = _letta.letta_repos(src, flags, layout)
    bodies: dict[str, dict[str, str]] = {}
    value_of = {
        str(r.block_id): ("" if pd.isna(r.value) else str(r.value))
        for r in src.blocks.itertuples(index=False)
    }
    src_rows = {str(r["block_id"]): r for r in src.blocks.to_dict("records")}
    for spec in specs:
        copy = copies.get(spec.subdir)
        if copy is None:
            rows.add(
                "presence",
                spec.subdir or "(destination)",
                "a repository",
                "missing",
                ok=False,
                repo=spec.subdir,
            )
            continue
        files = copy.files.set_index("path", drop=False)
        side_text = side_texts(repo_folders[spec.subdir], _letta.SIDE_FILE).get(_letta.SIDE_FILE)
        side = {}
        side_state = "present" if side_text else "missing"
        if side_text:
            try:
                side = {b.get("block_id"): b for b in json.loads(side_text).get("blocks", [])}
            except (json.JSONDecodeError, AttributeError) as exc:
                # Say so in the side_file row, rather than only as "missing" side records.
                side, side_state = {}, f"unreadable ({type(exc).__name__})"
        rows.add(
            "side_file",
            _letta.SIDE_FILE,
            "present",
            side_state,
            repo=spec.subdir,
            path=_letta.SIDE_FILE,
        )
        bodies[spec.subdir] = {}
        expected_paths = set()
        if layout == "v2":
            check_letta_v2(
                rows,
                spec,
                src,
                side_texts(repo_folders[spec.subdir], ""),
                side,
                bodies[spec.subdir],
            )
            continue
        for f in spec.files:
            expected_paths.add(f.path)
            src_row = src_rows[f.item]
            present = f.path in files.index
            rows.add(
                "presence",
                f.item,
                f.path,
                f.path if present else "missing",
                repo=spec.subdir,
                path=f.path,
            )
            if not present:
                continue
            got = files.loc[f.path]
            body = "" if pd.isna(got["body"]) else str(got["body"])
            bodies[spec.subdir][f.item] = body
            rows.add(
                "content",
                f.item,
                _letta.sha256(value_of[f.item]),
                _letta.sha256(body),
                repo=spec.subdir,
                path=f.path,
            )
            raw_desc = _elfmem.value_or_none(src_row.get("description"))
            want_desc = " ".join(str(raw_desc).split()) if raw_desc else ""
            if not want_desc:  # Letta's own fallback for a block without a description
                want_desc = f"Memory block {_letta.sanitise_label(src_row.get('label'), f.item)[0]}"
            rows.add(
                "description",
                f.item,
                want_desc,
                _elfmem.value_or_none(got["description"]),
                repo=spec.subdir,
                path=f.path,
            )
            rows.add(
                "read_only",
                f.item,
                bool(_elfmem.value_or_none(src_row.get("read_only")) or False),
                bool(_elfmem.value_or_none(got["read_only"]) or False),
                repo=spec.subdir,
                path=f.path,
            )
            lim = _elfmem.value_or_none(src_row.get("limit"))
            rows.add(
                "limit",
                f.item,
                int(lim) if lim is not None and int(lim) > 0 else None,
                _elfmem.value_or_none(got["limit"]),
                repo=spec.subdir,
                path=f.path,
            )
            side_record_row(rows, src, src_row, side.get(f.item), f.item, spec.subdir, f.path)
        for path in copy.files["path"].astype(str):
            if path.endswith(".md") and path not in expected_paths:
                rows.add(
                    "unexpected",
                    path,
                    "not from the source",
                    "present",
                    ok=False,
                    repo=spec.subdir,
                    path=path,
                )
        if target == "souveraine":
            agent = copy.meta.get("agent") or {}
            listed = {b.get("file") for b in agent.get("blocks") or [] if isinstance(b, dict)}
            want = {f.path for f in spec.files if f.path.startswith("system/")}
            rows.add(
                "agent_yaml",
                "blocks",
                sorted(want),
                sorted(x for x in listed if x),
                repo=spec.subdir,
                path=_letta.AGENT_YAML,
            )
    return bodies
