"""Letta Code memfs pre-commit hook: the keys it knows, its variants and when each was installed,
and :func:`check_precommit`, a rule-by-rule port of the bash hook in ``memory-git-hooks.ts``.
Part of :mod:`memlab.formats.letta_memfs`, which re-exports the public names.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Iterable

from memlab.formats._memfs_frontmatter import DIGITS_RE
from memlab.formats._memfs_paths import FLAT_SKILL_RE, ROOT_INDEX, V2_FLAT_SKILL_RE, VALIDATED_RE
from memlab.kinds.letta_memfs._constraints import frontmatter_errors, frontmatter_rule

__all__ = [
    "ALLOWED_KEYS",
    "AGENT_EDITABLE_KEYS",
    "PROTECTED_KEYS",
    "V2_KEYS",
    "LETTA_HOOK_MARKER",
    "HOOK_VARIANTS",
    "HOOK_INSTALLED",
    "HOOK_LIMIT_TOLERATED",
    "Violation",
    "hook_variant_at",
    "hook_variant_reason",
    "hook_text",
    "check_precommit",
]

#: Keys the current hook knows in system/ and reference/ files (``ALL_KNOWN_KEYS``).
ALLOWED_KEYS = ("description", "read_only", "limit")
AGENT_EDITABLE_KEYS = ("description",)
#: The agent may not add, change or remove these (the hook compares against HEAD).
PROTECTED_KEYS = ("read_only",)
#: memfs v2 frontmatter must be exactly these keys.
V2_KEYS = ("name", "description")
#: The comment line Letta Code writes into the pre-commit hook it installs (memory-git-hooks.ts).
LETTA_HOOK_MARKER = "Installed by Letta Code CLI"
#: ``current``: since letta-code d557d47e (2026-03-22), limit tolerated; ``2026-02``: the hook as
#: first installed (#905, 2026-02-10), limit required; ``v2``: root MEMORY.md repositories.
HOOK_VARIANTS = ("current", "2026-02", "v2")
HOOK_INSTALLED = dt.datetime(2026, 2, 10, tzinfo=dt.timezone.utc)
HOOK_LIMIT_TOLERATED = dt.datetime(2026, 3, 22, tzinfo=dt.timezone.utc)


# --------------------------------------------------------------------------- the pre-commit hook


@dataclass(frozen=True)
class Violation:
    """One error the Letta Code pre-commit hook would print for a staged file."""

    path: str
    rule: str
    message: str  # the hook's own wording, after "  <path>: "


def hook_variant_at(when: dt.datetime | None, *, layout: str | None = None) -> str | None:
    """Which hook guarded a commit made at ``when`` (None: no hook was installed yet)."""
    if layout == "letta_v2":
        return "v2"
    if when is None:
        return "current"
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    if when < HOOK_INSTALLED:
        return None
    return "2026-02" if when < HOOK_LIMIT_TOLERATED else "current"


def hook_variant_reason(when: dt.datetime | None, *, layout: str | None = None) -> str:
    """Why :func:`hook_variant_at` picks the hook it does for a commit made at ``when``."""
    if layout == "letta_v2":
        return "a root-MEMORY.md (memfs v2) repository: the v2 hook of memory-format.ts applies"
    if when is None:
        return "no commit date: the current hook is assumed"
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    day = when.date().isoformat()
    variant = hook_variant_at(when, layout=layout)
    if variant is None:
        return (
            f"committed {day}, before Letta Code first installed the pre-commit hook "
            f"(letta-code #905, {HOOK_INSTALLED.date()}): no hook ran"
        )
    if variant == "2026-02":
        return (
            f"committed {day}: the hook as first installed (letta-code #905, "
            f"{HOOK_INSTALLED.date()}), which required limit until d557d47e "
            f"({HOOK_LIMIT_TOLERATED.date()})"
        )
    return (
        f"committed {day}, after letta-code d557d47e ({HOOK_LIMIT_TOLERATED.date()}) made "
        "limit a tolerated legacy key: the current hook"
    )


def hook_text(data: bytes) -> str:
    """A staged memory file as Letta Code's hook reads it: every blob is text to it, never
    "binary". Letta Code 0.34.12's hook reads ``git show :path`` into Node with
    ``encoding: "utf8"`` (an invalid byte sequence becomes U+FFFD, a NUL byte stays a
    character); the bash hook of the same rules reads it by command substitution, which
    :func:`check_precommit` mimics on this text (NUL bytes and trailing newlines dropped)."""
    return data.decode("utf-8", errors="replace")


def _shell_text(text: str | None) -> str:
    # ``staged=$(git show ":$file")``: command substitution drops NULs and trailing newlines.
    if text is None:
        return ""
    return text.replace("\x00", "").rstrip("\n")


def _closing_line(lines: list[str]) -> int | None:
    """``tail -n +2 | grep -n '^---$' | head -1``: 1-based index among lines after the first."""
    for i, line in enumerate(lines[1:], start=1):
        if line == "---":
            return i
    return None


def _flat_skill(path: str) -> Violation:
    return Violation(
        path,
        "flat_skill",
        "invalid skill path (skills must be folders). Use skills/<name>/SKILL.md",
    )


def _frontmatter_close(path: str, lines: list[str]) -> tuple[int | None, Violation | None]:
    """The hook's opening checks: the first line is ``---`` and a closing ``---`` follows."""
    if lines[0] != "---":
        return None, Violation(
            path, "missing_frontmatter", "missing frontmatter (must start with ---)"
        )
    close = _closing_line(lines)
    if close is None:
        return None, Violation(
            path,
            "unclosed_frontmatter",
            "frontmatter opened but never closed (missing closing ---)",
        )
    return close, None


def _fm_lines(content: str) -> list[str] | None:
    lines = content.split("\n")
    close = _closing_line(lines)
    if close is None:
        return None
    return lines[1:close]


def _get_fm_value(content: str, key: str) -> str:
    """The hook's ``get_fm_value``: every ``^key:`` line, text after the first colon, trimmed of
    spaces (not tabs); several matches come back newline-joined, as grep prints them."""
    lines = _fm_lines(content)
    if lines is None:
        return ""
    found = [_trim_spaces(line.split(":", 1)[1]) for line in lines if line.startswith(f"{key}:")]
    return "\n".join(found).strip("\n") if found else ""


def _trim_spaces(value: str) -> str:
    # sed 's/^ *//;s/ *$//' trims spaces only.
    return value.lstrip(" ").rstrip(" ")


def _cut_key(line: str) -> str:
    return line.split(":", 1)[0]


def _cut_value(line: str) -> str:
    # `cut -d: -f2-` prints a line without the delimiter unchanged (no -s flag).
    return line.split(":", 1)[1] if ":" in line else line


def check_precommit(
    path: str,
    new_text: str | None,
    head_text: str | None = None,
    *,
    variant: str = "current",
    change: str = "M",
    staged_paths: Iterable[str] | None = None,
) -> list[Violation]:
    """The errors Letta Code's pre-commit hook prints for one staged file (empty: accepted).

    A rule-by-rule port of the bash hook in ``memory-git-hooks.ts``:

    * ``variant="current"``: limit tolerated, indented continuation lines skipped;
    * ``variant="2026-02"``: the hook as first installed: ``limit`` required and a positive
      integer, no skipping of continuation lines (so a wrapped description is an unknown key),
      no skills rule (skills reached memfs on 2026-02-26) [I: reconstructed from the change
      log, PR #1484 "remove frontmatter limit requirement"];
    * ``variant="v2"``: root-MEMORY.md repositories: every projected ``.md`` outside ``skills/``
      needs exactly ``name`` and ``description``; ``MEMORY.md`` has no frontmatter.

    ``change`` is the staged status letter: the frontmatter rules look at A/C/M only, so renames
    and deletions pass (the skills rule also sees renames). ``head_text`` is the file at HEAD
    (None or empty: a new file, as ``git show HEAD:file`` printing nothing means to the hook).
    ``staged_paths`` (v2 only) is the staged tree, to decide which files are projected.
    """
    if variant not in HOOK_VARIANTS:
        raise ValueError(f"unknown hook variant {variant!r}; one of {HOOK_VARIANTS}")
    change = (change or "M")[:1].upper()
    if change == "D":
        return []
    # `for file in $(git diff ...)` splits names on whitespace: each word is a "file".
    words = path.split()
    if len(words) != 1:
        out: list[Violation] = []
        for word in words:
            if variant == "v2":
                continue
            if (variant != "2026-02" and change in "ACMR" and FLAT_SKILL_RE.match(word)) or (
                change in "ACM" and VALIDATED_RE.match(word)
            ):
                out.append(
                    Violation(
                        word, "missing_frontmatter", "missing frontmatter (must start with ---)"
                    )
                )
        return out
    if variant == "v2":
        return _check_v2(path, new_text, change, staged_paths)

    out = []
    if variant != "2026-02" and change in "ACMR" and FLAT_SKILL_RE.match(path):
        out.append(_flat_skill(path))
    if change not in "ACM" or not VALIDATED_RE.match(path):
        return out

    staged = _shell_text(new_text)
    lines = staged.split("\n")
    close, broken = _frontmatter_close(path, lines)
    if broken is not None:
        return out + [broken]
    head = _shell_text(head_text)
    if head:
        if _get_fm_value(head, "read_only") == "true":
            return out + [
                Violation(path, "read_only_modified", "file is read_only and cannot be modified")
            ]

    require_limit = variant == "2026-02"
    has_description = has_limit = False
    allowed = " ".join(ALLOWED_KEYS)
    for line in lines[1:close]:
        if line == "":
            continue
        if not require_limit and line[:1] in (" ", "\t"):
            continue
        key = _cut_key(line).replace(" ", "")
        value = _trim_spaces(_cut_value(line))
        if key not in ALLOWED_KEYS:
            out.append(
                Violation(
                    path, "unknown_key", f"unknown frontmatter key '{key}' (allowed: {allowed})"
                )
            )
            continue
        if key in PROTECTED_KEYS:
            if head:
                if value != _get_fm_value(head, key):
                    out.append(
                        Violation(
                            path,
                            "protected_changed",
                            f"'{key}' is a protected field and cannot be changed by the agent",
                        )
                    )
            else:
                out.append(
                    Violation(
                        path,
                        "protected_set",
                        f"'{key}' is a protected field and cannot be set by the agent",
                    )
                )
        if key == "limit":
            has_limit = True
            if require_limit and not (DIGITS_RE.match(value) and int(value) > 0):
                out.append(Violation(path, "bad_limit", "'limit' must be a positive integer"))
        elif key == "description":
            has_description = True
            if value == "":
                out.append(Violation(path, "empty_description", "'description' must not be empty"))
    if not has_description:
        out.append(Violation(path, "missing_description", "missing required field 'description'"))
    if require_limit and not has_limit:
        out.append(Violation(path, "missing_limit", "missing required field 'limit'"))
    if head:
        for key in PROTECTED_KEYS:
            if _get_fm_value(head, key) and not _get_fm_value(staged, key):
                out.append(
                    Violation(
                        path,
                        "protected_removed",
                        f"'{key}' is a protected field and cannot be removed by the agent",
                    )
                )
    return out


def _v2_projected(path: str, staged_paths: Iterable[str] | None) -> bool:
    """memory-format.ts ``isProjectedMemoryPath``: every ancestor folder holds a MEMORY.md."""
    if staged_paths is None or "/" not in path:
        return True
    present = set(staged_paths)
    parts = path.split("/")[:-1]
    current = ""
    for part in parts:
        current = f"{current}/{part}" if current else part
        if f"{current}/{ROOT_INDEX}" not in present:
            return False
    return True


def _check_v2(
    path: str, new_text: str | None, change: str, staged_paths: Iterable[str] | None
) -> list[Violation]:
    out: list[Violation] = []
    if change in "ACMR" and V2_FLAT_SKILL_RE.match(path):
        out.append(_flat_skill(path))
    # v2 validates every tracked .md, not only the staged ones; a deleted file is not tracked.
    if (
        not path.endswith(".md")
        or path.startswith("skills/")
        or not _v2_projected(path, staged_paths)
    ):
        return out
    # Letta Code 0.34.12's v2 hook reads each file whole (no shell stripping) and checks it
    # with validateMemoryFileFrontmatter, ported once in _constraints.
    for line in frontmatter_errors(path, new_text or "", None, fmt="memfs-v2"):
        out.append(Violation(path, frontmatter_rule(line, path), line[len(path) + 2 :]))
    return out
