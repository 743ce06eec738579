"""``ApplyResult``: what :func:`memlab.reviews._apply.apply_proposal` did (or, with ``dry_run``,
would do), and its one-screen summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memlab._escape import terminal_lines

__all__ = ["ApplyResult"]


@dataclass
class ApplyResult:
    """What apply did (or, with ``dry_run``, would do)."""

    proposal: Path
    applied: list[str]
    files: list[str]
    diff: str
    commit: str | None = None
    branch: str | None = None
    dry_run: bool = False
    message: str = ""
    notes: list[str] = field(default_factory=list)
    #: For an elfmem database: the script written (or, with ``dry_run``, that would be).
    script: Path | None = None
    #: The proposal was applied before (by an earlier run): nothing new was committed.
    already_applied: bool = False

    def summary(self) -> str:
        if not self.applied:
            return f"{self.proposal}: no items ticked; nothing changed"
        if self.already_applied:  # only that: "N item(s) changed" would claim a new change
            return terminal_lines(self.notes or [self.message])
        if self.message and not self.files and not self.notes:
            return self.message
        if self.script is not None:
            if self.dry_run:
                return f"{len(self.applied)} item(s) ticked: would write {self.script}"
            return terminal_lines(self.notes)
        what = "would change" if self.dry_run else "changed"
        head = f"{len(self.applied)} item(s) {what} {len(self.files)} file(s)"
        if self.commit:
            head += f" in commit {self.commit[:12]} on {self.branch or 'detached HEAD'}"
        return terminal_lines([head, *self.notes])

    def __str__(self) -> str:
        return self.summary() + ("\n\n" + self.diff if self.dry_run and self.diff else "")
