"""A toy memlab store kind: a ``.toy`` file whose first line is ``TOY``, one block per line.

memlab calls :func:`register` once, the first time it looks a kind up, because this
distribution's ``pyproject.toml`` names it in the ``memlab.kinds`` entry point group.

The kind brings its own behaviour, none of it memlab's:

* review: its units are the block lines; a unit is removed by :class:`TrashLine`, which moves
  the line below the file's ``TRASH`` line (the toy format's trash section; memlab ships no such
  removal), and ticks are applied by :class:`ToyApply`, which rewrites the ``.toy`` file itself;
* migrate: ``toy_git`` puts the file into a new git repository (one commit), and
  :class:`ToyParity` checks the copy line by line (``memlab migrate --verify``).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import subprocess
from pathlib import Path

import pandas as pd

#: The line that opens the trash section: the lines below it are removed blocks.
TRASH = "TRASH"


def _read(path) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def _split(lines: list[str]) -> tuple[list[str], list[str]]:
    """(block lines, trashed lines)."""
    if TRASH in lines:
        at = lines.index(TRASH)
        return lines[:at], lines[at + 1 :]
    return lines, []


def load_toy(path: Path):
    from memlab.store import Store

    blocks, trash = _split(_read(path))
    return Store(
        "toy",
        Path(path),
        {
            "blocks": pd.DataFrame({"content": blocks}, dtype="string"),
            "trash": pd.DataFrame({"content": trash}, dtype="string"),
        },
    )


def audit_toy(store, *, as_of=None):
    from memlab.audits import Audit

    n = len(store.blocks)
    return Audit("toy", store.name, {}, {"blocks": n}, f"{n} blocks")


def find_toy(search):
    """Every ``~/.toy/*.toy`` file, for ``memlab discover``."""
    for f in sorted((search.home / ".toy").glob("*.toy")):
        yield {"agent_id": f.stem, "path": str(f), "files": 1}


def detect_toy(probe):
    return "starts with TOY" if not probe.is_dir and probe.head.startswith(b"TOY") else None


# ---- review ----------------------------------------------------------------------------------


def toy_units(store):
    """One unit per block line (the ``TOY`` header is none), dated by the file's mtime."""
    from memlab.reviews import units_frame

    made = pd.Timestamp(os.stat(store.path).st_mtime, unit="s", tz="UTC")
    rows = []
    for n, text in enumerate(store.blocks["content"].tolist()[1:], start=2):
        rows.append({
            "uid": f"L{n}", "unit": "block", "file": None, "title": text, "text": text,
            "status": "block", "category": None, "tags": [], "protected": False,
            "protected_why": None, "created": made, "last_used": None, "reinforcement": None,
            "outcomes": None, "retrievals": None, "chars": len(text), "line": n,
        })
    return units_frame(rows)


def _sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class ToyLines:
    """The ``.toy`` file's lines while apply edits them: blocks by their line number."""

    def __init__(self, path: Path) -> None:
        self.path = path
        lines = _read(path)
        blocks, self.trash = _split(lines)
        self.header, self.blocks = blocks[:1], dict(enumerate(blocks[1:], start=2))
        self.original = "\n".join(lines) + "\n"

    def text(self) -> str:
        lines = [*self.header, *self.blocks.values()]
        return "\n".join(lines + ([TRASH, *self.trash] if self.trash else [])) + "\n"


class TrashLine:
    """The toy's removal: the line moves below the file's ``TRASH`` line (kept, not deleted)."""

    op = "toy_trash"

    def step(self, unit, *, reason):
        n, text = int(unit["line"]), str(unit["text"])
        return {"op": self.op, "line": n, "content": text,
                "text": f'move line {n} "{text}" to the TRASH section ({reason})'}

    def apply(self, edits: ToyLines, step, item):
        from memlab.errors import StaleProposal

        n = int(step["line"])
        if edits.blocks.get(n) != step["content"]:
            raise StaleProposal(f"item {item.id}: line {n} is no longer {step['content']!r}",
                                path=edits.path)
        edits.trash.append(edits.blocks.pop(n))


class ToyApply:
    """The toy's apply: the ticked lines are moved to the trash section, the file rewritten."""

    def repo(self, store):
        return None

    def appliable(self, store, repo):
        return True

    def fingerprint(self, store, repo, touched):
        return {"sha256": _sha256(store.path)}

    def note(self, data, name):
        return [f"**Apply:** tick the lines to remove, then run `memlab apply {name}`: the toy "
                "kind moves each ticked line below the file's TRASH line."]

    def apply(self, proposal, ticked, md_path, *, review, repo, branch, dry_run, script):
        from memlab.errors import StaleProposal
        from memlab.reviews import ApplyResult

        path = Path(proposal.store["path"])
        if _sha256(path) != proposal.fingerprint.get("sha256"):
            raise StaleProposal("the toy file changed since it was reviewed", path=path)
        edits = ToyLines(path)
        for item in ticked:
            for step in item.change.get("steps", []):
                review.removal.apply(edits, step, item)
        new = edits.text()
        diff = "".join(difflib.unified_diff(edits.original.splitlines(True),
                                            new.splitlines(True), f"a/{path.name}",
                                            f"b/{path.name}"))
        moved = len(edits.trash) - len(_split(_read(path))[1])
        result = ApplyResult(md_path, [it.id for it in ticked], [str(path)], diff,
                             dry_run=dry_run,
                             notes=[f"moved {moved} line(s) to the TRASH section of {path}"])
        if not dry_run and new != edits.original:
            path.write_text(new, encoding="utf-8")
        return result


# ---- migrate ---------------------------------------------------------------------------------


def plan_toy_git(store, source, *, target, dest=None):
    """The ``.toy`` file, as it is, in a new git repository: one commit."""
    from memlab.migrations import (Plan, PlannedCommit, PlannedRepo, flags_frame, moved_frame,
                                   signature_at)

    data = Path(source).read_bytes()
    lines = store.blocks["content"].tolist()[1:]
    moved = moved_frame({"kind": "block", "item": f"L{n}", "label": text, "repo": "",
                         "path": Path(source).name, "section": None, "chars": len(text),
                         "note": None} for n, text in enumerate(lines, start=2))
    commit = PlannedCommit(f"toy: {Path(source).name}", ((Path(source).name, data),))
    return Plan(target, Path(source), [PlannedRepo("", (commit,), title=store.name)],
                signature_at(None), moved, flags_frame([]))


class ToyParity:
    """The toy's verify: every block line and every trashed line of the source, at HEAD of the
    copy, in the same section."""

    def parity(self, src, dest, *, store, plan, ref, retrieval, queries, k):
        from memlab.migrations import ParityRows

        name = Path(src).name
        shown = subprocess.run(["git", "-C", str(dest), "show", f"{ref or 'HEAD'}:{name}"],
                               capture_output=True, text=True)
        copy = _split(shown.stdout.splitlines()) if shown.returncode == 0 else ([], [])
        rows = ParityRows()
        source = (store.blocks["content"].tolist(), store.trash["content"].tolist())
        for section, want, have in zip(("toy_line", "toy_trash"), source, copy):
            for n, text in enumerate(want):
                rows.add(section, f"{section}:{n}", text, have[n] if n < len(have) else None,
                         path=name)
            for n in range(len(want), len(have)):
                rows.add("unexpected", f"{section}:{n}", None, have[n], path=name)
        return rows.frame()


def register() -> None:
    from memlab import kinds

    kinds.register(
        "toy", display="toy store", detect=detect_toy, priority=50,
        load=load_toy, audit=audit_toy, find=find_toy,
        review=kinds.Review(units=toy_units, share_of="all toy lines", removal=TrashLine(),
                            apply=ToyApply(), stale_basis="no use recorded (a toy file)"),
        migrations={"toy_git": plan_toy_git},
        verify=ToyParity(),
    )
