"""The ``letta_memfs`` kind's review rules (its :class:`~memlab.kinds.Rules`): Letta Code's
pre-commit hook (:mod:`memlab.kinds.letta_memfs._hook`), run on every memory file at HEAD, and
the files' limits. Public as :class:`memlab.reviews.LettaHook`."""

from __future__ import annotations

from typing import Any

from memlab.kinds.letta_memfs._hook import check_precommit

__all__ = ["LettaHook", "letta_hook_violations"]


def letta_hook_violations(
    path: str, text: str, *, variant: str, all_paths: set[str]
) -> list[tuple[str, str]]:
    """What Letta Code's pre-commit hook says of ``path`` holding ``text``."""
    return [
        (v.rule, v.message)
        for v in check_precommit(
            path, text, text, variant=variant, change="M", staged_paths=all_paths
        )
    ]


class LettaHook:
    """Letta Code's pre-commit hook, run on every memory file at HEAD, and the files' limits."""

    def check(self, review: Any) -> None:
        review.file_rules(letta_hook_violations)
