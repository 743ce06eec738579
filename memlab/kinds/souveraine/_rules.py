"""The ``souveraine`` kind's review rules (its :class:`~memlab.kinds.Rules`): Souveraine's
frontmatter rule, a description on every memory file, and the files' limits. Public as
:class:`memlab.reviews.SouveraineRules`."""

from __future__ import annotations

from typing import Any

from memlab.formats.letta_memfs import read_frontmatter

__all__ = ["SouveraineRules", "souveraine_violations"]


def souveraine_violations(
    path: str, text: str, *, variant: str, all_paths: set[str]
) -> list[tuple[str, str]]:
    """Souveraine's rule: a memory file has frontmatter with a description."""
    fm = read_frontmatter(text)
    if not fm.has_frontmatter:
        return [("missing_frontmatter", "missing frontmatter (Souveraine requires description)")]
    if not (fm.description or "").strip():
        return [("missing_description", "missing required field 'description'")]
    return []


class SouveraineRules:
    """Souveraine's frontmatter rule (a description on every memory file), and the limits."""

    def check(self, review: Any) -> None:
        review.file_rules(souveraine_violations)
