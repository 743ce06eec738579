"""memlab's own review behaviour: the objects a built-in kind's :class:`memlab.kinds.Review`
names (the protocols are :mod:`memlab.kinds`'s: :class:`~memlab.kinds.Removal`,
:class:`~memlab.kinds.Edit`, :class:`~memlab.kinds.Apply`, :class:`~memlab.kinds.Drift`,
:class:`~memlab.kinds.Rules`). The review builder and ``memlab apply`` call their methods; a
plugin kind passes its own objects, or subclasses of these.

Removals: :class:`Forget` (elfmem's ``forget``), :class:`ArchiveBlock` (a substrate block moved
to the end of its archive file), :class:`DeleteFile` (a memfs file), :class:`InLetta` and
:class:`ByHand` (a checklist line). Edits: :class:`ElfmemEdit`, :class:`SetBody`. Apply:
:class:`GitCommit`, :class:`ElfmemScript`, :class:`Checklist`. Drift: :class:`SeedDrift`,
:class:`FileDrift`. Rules: :class:`AgentLimits`; a kind's own rules live in its package
(``LettaHook`` in ``memlab/kinds/letta_memfs/_rules.py``, ``SouveraineRules`` in
``memlab/kinds/souveraine/_rules.py``), public in :mod:`memlab.reviews` too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from memlab.errors import ProposalRejected
from memlab.reviews import _apply, _apply_edits, _build, _checks, _markdown
from memlab.reviews._apply_elfmem import elfmem_script
from memlab.reviews._apply_result import ApplyResult
from memlab.reviews._markdown import excerpt

__all__ = [
    "Forget",
    "ArchiveBlock",
    "DeleteFile",
    "ByHand",
    "InLetta",
    "ElfmemEdit",
    "SetBody",
    "GitCommit",
    "ElfmemScript",
    "Checklist",
    "SeedDrift",
    "FileDrift",
    "AgentLimits",
]


def _no_file_change(step: Mapping[str, Any], item: Any) -> None:
    raise ProposalRejected(
        f"item {item.id} ({item.action}) has no file change memlab can make",
        path=step.get("file"),
    )


# ---- removals ----------------------------------------------------------------------------------


class Forget:
    """elfmem's ``forget``: the block is archived with a reason, by the apply script."""

    op = "forget"

    def step(self, unit: pd.Series, *, reason: str) -> dict[str, Any]:
        uid = str(unit["uid"])
        return {
            "op": "forget",
            "block_id": uid,
            "reason": reason,
            "content_sha256": _build.text_sha256(unit["text"]),
            "text": f"forget block {uid} (elfmem archives it with reason {reason})",
        }

    def apply(self, edits: Any, step: Mapping[str, Any], item: Any) -> None:
        _no_file_change(step, item)


class ByHand:
    """No removal memlab makes: the proposal says what to delete, and where."""

    op = "none"

    #: Where the person deletes the unit.
    where = "by hand"

    def step(self, unit: pd.Series, *, reason: str) -> dict[str, Any]:
        uid = str(unit["uid"])
        return {
            "op": "none",
            "block_id": uid,
            "text": f"delete block {uid} ({excerpt(unit['title'], 40)}) {self.where}",
        }

    def apply(self, edits: Any, step: Mapping[str, Any], item: Any) -> None:
        _no_file_change(step, item)


class InLetta(ByHand):
    """A Letta block is deleted in Letta (the ADE or the blocks API)."""

    where = "in Letta"


class ArchiveBlock:
    """A substrate block moved from its notes or log file to the end of its archive file."""

    op = "archive_block"

    def step(self, unit: pd.Series, *, reason: str) -> dict[str, Any]:
        uid = str(unit["uid"])
        archive = _checks.archive_path(str(unit["file"]))
        return {
            "op": "archive_block",
            "file": str(unit["file"]),
            "block_id": uid,
            "to": archive,
            "line": int(unit["line"]) if pd.notna(unit["line"]) else None,
            "text": f'move block {uid} "{excerpt(unit["title"], 50)}" (line {unit["line"]}) '
            f"from {unit['file']} to the end of {archive}",
        }

    def apply(self, edits: Any, step: Mapping[str, Any], item: Any) -> None:
        _apply_edits.archive_block(edits, step, item)


class DeleteFile:
    """A memory file deleted (identity and read-only files are refused)."""

    op = "delete_file"

    def step(self, unit: pd.Series, *, reason: str) -> dict[str, Any]:
        uid = str(unit["uid"])
        return {
            "op": "delete_file",
            "file": uid,
            "text": f"delete {uid} ({int(unit['chars'])} chars of body)",
        }

    def apply(self, edits: Any, step: Mapping[str, Any], item: Any) -> None:
        _apply_edits.delete_file(edits, step, item)


# ---- edits -------------------------------------------------------------------------------------


class ElfmemEdit:
    """elfmem's ``edit``, by the apply script (it re-embeds the new text)."""

    op = "edit"

    def step(self, unit: pd.Series, new_text: str) -> dict[str, Any]:
        uid = str(unit["uid"])
        return {
            "op": "edit",
            "block_id": uid,
            "content": new_text,
            "content_sha256": _build.text_sha256(unit["text"]),
            "text": f'edit block {uid} to "{excerpt(new_text, 200)}"',
        }

    def apply(self, edits: Any, step: Mapping[str, Any], item: Any) -> None:
        _no_file_change(step, item)


class SetBody:
    """A memory file's body replaced, its frontmatter kept."""

    op = "set_body"

    def step(self, unit: pd.Series, new_text: str) -> dict[str, Any]:
        uid = str(unit["uid"])
        return {
            "op": "set_body",
            "file": uid,
            "body": new_text,
            "text": f'replace the body of {uid} (frontmatter kept) with "{excerpt(new_text, 200)}"',
        }

    def apply(self, edits: Any, step: Mapping[str, Any], item: Any) -> None:
        _apply_edits.set_body(edits, step, item)


# ---- apply -------------------------------------------------------------------------------------


class GitCommit:
    """One commit to the store's git repository (see :mod:`memlab.reviews._apply`)."""

    def repo(self, store: Any) -> Any | None:
        from memlab.reviews import _repo

        return _repo.store_repo(store)

    def appliable(self, store: Any, repo: Any | None) -> bool:
        return repo is not None

    def fingerprint(self, store: Any, repo: Any | None, touched: set[str]) -> dict[str, Any]:
        return _build.git_fingerprint(store, repo, touched)

    def note(self, data: Mapping[str, Any], name: str) -> list[str]:
        return _markdown.commit_note(data, name)

    def apply(
        self,
        proposal: Any,
        ticked: list[Any],
        md_path: Path,
        *,
        review: Any,
        repo: str | Path | None,
        branch: str | None,
        dry_run: bool,
        script: str | Path | None,
    ) -> ApplyResult:
        return _apply.commit_ticked(
            proposal, ticked, md_path, review=review, repo=repo, branch=branch, dry_run=dry_run
        )


class ElfmemScript:
    """A script that makes the ticked changes through elfmem's own API; memlab never writes the
    database (see :mod:`memlab.reviews._elfmem_script`)."""

    def repo(self, store: Any) -> Any | None:
        return None

    def appliable(self, store: Any, repo: Any | None) -> bool:
        schema = store.meta.get("schema_version")
        return schema is not None and int(schema) >= _markdown.ELFMEM_APPLY_SCHEMA

    def fingerprint(self, store: Any, repo: Any | None, touched: set[str]) -> dict[str, Any]:
        return _build.file_fingerprint(store)

    def note(self, data: Mapping[str, Any], name: str) -> list[str]:
        return _markdown.script_note(data, name)

    def apply(
        self,
        proposal: Any,
        ticked: list[Any],
        md_path: Path,
        *,
        review: Any,
        repo: str | Path | None,
        branch: str | None,
        dry_run: bool,
        script: str | Path | None,
    ) -> ApplyResult:
        return elfmem_script(proposal, ticked, md_path, script=script, dry_run=dry_run)


class Checklist:
    """memlab does not write the store: the proposal is a checklist (a Letta agent file)."""

    def repo(self, store: Any) -> Any | None:
        return None

    def appliable(self, store: Any, repo: Any | None) -> bool:
        return False

    def fingerprint(self, store: Any, repo: Any | None, touched: set[str]) -> dict[str, Any]:
        return _build.file_fingerprint(store)

    def note(self, data: Mapping[str, Any], name: str) -> list[str]:
        return _markdown.checklist_note()

    def apply(
        self,
        proposal: Any,
        ticked: list[Any],
        md_path: Path,
        *,
        review: Any,
        repo: str | Path | None,
        branch: str | None,
        dry_run: bool,
        script: str | Path | None,
    ) -> ApplyResult:
        raise _apply.checklist_refusal(proposal, md_path)


# ---- drift and rules ---------------------------------------------------------------------------


class SeedDrift:
    """elfmem's seed blocks: a role whose block changed or is gone."""

    def check(self, review: Any) -> None:
        review.seed_drift()


class FileDrift:
    """Identity files that changed since their first commit (needs the store's repository)."""

    def check(self, review: Any) -> None:
        if review.repo is not None:
            review.file_drift()


class AgentLimits:
    """The block limits of an agent file (Letta's write path does not enforce them)."""

    def check(self, review: Any) -> None:
        review.agent_limits()
