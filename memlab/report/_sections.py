"""A report section that only some stores have evidence for.

One audit notebook serves every store kind, and each kind's audit holds its own tables (an
elfmem database ``archive_reasons``, a mem0 store ``lives``, a Claude Code memory folder
``orphan_files``...). :func:`section` shows a section's heading and explanation only when at
least one store's audit holds the table the section draws, so a report never explains
evidence it does not show: a mem0 report says nothing of elfmem's decay clock.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlab.audits import Audit

__all__ = ["section"]


def section(audits: Iterable[Audit], table: str, text: str) -> list[Audit]:
    """The audits that hold ``table``; when there is one, ``text`` (markdown: the section's
    heading and what it shows) is displayed first. With none, nothing is displayed and the
    list is empty, so the cell that draws the section draws nothing either."""
    having = [audit for audit in audits if table in audit.tables]
    if having:
        from IPython.display import Markdown, display

        display(Markdown(textwrap.dedent(text).strip()))
    return having
