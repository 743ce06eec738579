"""The reviewable script ``apply`` writes for an elfmem database (memlab never writes the DB).

The script makes exactly the ticked changes through the installed elfmem's own public API
(``forget``, ``edit``, ``remember``; elfmem 0.20 or later), after three checks: the release has
those calls, every block it changes still holds the text the review saw (by sha256) and is
active, and a ``VACUUM INTO`` backup was written. Store-controlled text (block ids, contents,
tags, paths) enters the script only as Python literals, through
:func:`memlab._escape.py_literal`, never in its docstring or comments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlab._escape import py_literal

__all__ = ["MIN_ELFMEM", "CALLS", "script_steps", "render_script", "backup_path"]

#: The first elfmem release whose MemorySystem has edit() and forget().
MIN_ELFMEM = (0, 20)
#: The elfmem call each step op is made with.
CALLS = {"forget": "forget", "edit": "edit", "remember": "remember"}


def script_steps(items: list[Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(item id, its elfmem steps) for the ticked items, in proposal order."""
    return [
        (it.id, [s for s in it.change.get("steps", []) if s.get("op") in CALLS]) for it in items
    ]


_TEMPLATE = '''#!/usr/bin/env python3
"""memlab review: {n} change(s) to an elfmem database, made through elfmem's own API.

Written by `memlab apply` (proposal digest {digest}) for the database named DATABASE below.
Read it before you run it. It changes nothing until all of these pass:
  1. the installed elfmem is {min_version} or later (MemorySystem has forget, edit, remember);
  2. every block it forgets or edits is still active and holds the text the review saw (sha256);
  3. a backup of the database is written with VACUUM INTO to BACKUP below (refused if that
     file already exists).
Then it opens the database with MemorySystem.from_config (your ELFMEM_CONFIG, if set: edit()
re-embeds the new text with your embedding settings) and makes the changes below, in order.
A restored seed is learned into elfmem's inbox and joins memory at your next dream/consolidate.

Run it with the Python where your agent's elfmem is installed: python THIS_FILE
"""

import asyncio
import hashlib
import os
import sqlite3
import sys
import urllib.parse
from pathlib import Path

DATABASE = {database_lit}
BACKUP = {backup_lit}
MIN_ELFMEM = {min_lit}

# (proposal item, operation, block id, sha256 of the block's content at review time, argument)
CHANGES = [
{changes}
]


def _fail(message):
    print(f"{{Path(__file__).name}}: {{message}}; nothing was changed", file=sys.stderr)
    raise SystemExit(2)


def check_release():
    try:
        import elfmem
        from elfmem import MemorySystem
    except ImportError:
        _fail("elfmem is not installed in this Python")
    version = tuple(int(p) for p in elfmem.__version__.split(".")[:2] if p.isdigit())
    if version < MIN_ELFMEM:
        _fail(f"elfmem {{elfmem.__version__}} cannot make these changes (needs "
              f"{{'.'.join(map(str, MIN_ELFMEM))}} or later for edit and forget)")
    for _, op, _, _, _ in CHANGES:
        if not hasattr(MemorySystem, op):
            _fail(f"this elfmem release has no MemorySystem.{{op}}()")


def check_blocks():
    if not Path(DATABASE).is_file():
        _fail(f"{{DATABASE}} does not exist")
    # A '#', '?' or '%' in the path is part of the file name, not of the URI (and the path's
    # own bytes are quoted, so a name that is not UTF-8 is the same file).
    uri = "file:" + urllib.parse.quote(os.fsencode(Path(DATABASE).resolve()), safe="/") + "?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    try:
        for item, op, block_id, sha, _ in CHANGES:
            if block_id is None:
                continue
            row = con.execute("SELECT content, status FROM blocks WHERE id = ?", (block_id,)).fetchone()
            if row is None:
                _fail(f"item {{item}}: block {{block_id}} is gone")
            if row[1] != "active":
                _fail(f"item {{item}}: block {{block_id}} is {{row[1]}}, not active")
            if hashlib.sha256(row[0].encode("utf-8")).hexdigest() != sha:
                _fail(f"item {{item}}: block {{block_id}} was edited since the review; review again")
    finally:
        con.close()


def elfmem_path():
    """DATABASE as elfmem will open it. elfmem opens the URL sqlite+aiosqlite:///<path>, in
    which a '?' starts the query and '%41' is unquoted, so such a path would make it open (and
    create) another file: the path relative to this folder is used, and one holding either is
    refused before anything is written."""
    name = os.path.relpath(DATABASE)
    if "?" in name or "%" in name:
        _fail(f"elfmem would open another file than {{DATABASE}} by this path ('?' and '%' are "
              f"URL syntax to it); run this script from a folder whose path to the database has "
              f"neither, e.g. cd {{os.path.dirname(DATABASE)!r}}")
    return name


def backup():
    if Path(BACKUP).exists():
        _fail(f"the backup {{BACKUP}} already exists (a previous run?); move it away first")
    con = sqlite3.connect(DATABASE)
    try:
        con.execute("VACUUM INTO ?", (BACKUP,))
    finally:
        con.close()
    print(f"backup written: {{BACKUP}}")


async def apply(system):
    """Make the changes through elfmem's API; ``system`` is an open MemorySystem."""
    from elfmem.types import ArchiveReason

    for item, op, block_id, _, arg in CHANGES:
        if op == "forget":
            result = await system.forget(block_id, reason=ArchiveReason(arg))
        elif op == "edit":
            result = await system.edit(block_id, arg)
        else:
            content, tags = arg
            result = await system.remember(content, tags=tags)
        print(f"{{item}}: {{op}} {{block_id or ''}} -> {{result}}")


async def main():
    check_release()
    check_blocks()
    database = elfmem_path()
    backup()
    from elfmem import MemorySystem

    system = await MemorySystem.from_config(database)
    try:
        await apply(system)
    finally:
        await system.close()
    print(f"{{len(CHANGES)}} change(s) made to {{DATABASE}}")


if __name__ == "__main__":
    asyncio.run(main())
'''  # noqa: E501 (the script's own text, emitted verbatim)


def render_script(*, database: str, digest: str, items: list[Any]) -> str:
    """The script text for the ticked ``items`` of an elfmem proposal."""
    rows = []
    for item_id, steps in script_steps(items):
        for s in steps:
            op = s["op"]
            if op == "forget":
                arg: Any = s.get("reason", "forgotten")
            elif op == "edit":
                arg = s["content"]
            else:
                arg = (s["content"], list(s.get("tags") or []))
            block = s.get("block_id") if op != "remember" else None
            sha = s.get("content_sha256") if op != "remember" else None
            rows.append(
                f"    ({py_literal(item_id)}, {py_literal(op)}, {py_literal(block)}, "
                f"{py_literal(sha)}, {py_literal(arg)}),"
            )
    backup = str(backup_path(database, digest))
    return _TEMPLATE.format(
        n=len(rows),
        digest=digest[:16],
        min_version=".".join(map(str, MIN_ELFMEM)),
        database_lit=py_literal(database),
        backup_lit=py_literal(backup),
        min_lit=py_literal(MIN_ELFMEM),
        changes="\n".join(rows),
    )


def backup_path(database: str | Path, digest: str) -> Path:
    return Path(f"{database}.before-{digest[:12]}.db")
