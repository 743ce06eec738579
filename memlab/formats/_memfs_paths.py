"""Letta Code memfs paths: the repository's fixed file names, the hook's path filters, and the
rules from a repo path to a block label and back (``safe_relative_path`` keeps both inside the
memory). Part of :mod:`memlab.formats.letta_memfs`, which re-exports the public names.
"""

from __future__ import annotations

import re

from memlab.errors import UnsafePath

__all__ = [
    "CONFIG_PATH",
    "ROOT_INDEX",
    "SKILL_FILE",
    "VALIDATED_RE",
    "FLAT_SKILL_RE",
    "V2_FLAT_SKILL_RE",
    "is_git_name",
    "safe_relative_path",
    "label_from_relative_path",
    "strip_memory_prefix",
    "label_for_path",
    "path_for_label",
    "is_validated_path",
    "is_flat_skill_path",
    "root_memory_path_from_legacy_label",
    "JS_TRIM",
    "root_memory_block_path",
    "memory_name_from_path",
]

CONFIG_PATH = ".letta/config.json"
ROOT_INDEX = "MEMORY.md"
SKILL_FILE = "SKILL.md"

# The hook's own path filters, as grep -E patterns in the bash script.
VALIDATED_RE = re.compile(r"^(memory/)?(system|reference)/.*\.md$")
FLAT_SKILL_RE = re.compile(r"^(memory/)?skills/[^/]+\.md$")
V2_FLAT_SKILL_RE = re.compile(r"^skills/[^/]+\.md$")


# --------------------------------------------------------------------------- paths and labels

# Code points HFS+ ignores in names (git's is_hfs_dotgit): ".g\u200cit" is ".git" there.
_HFS_IGNORED = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")


def is_git_name(segment: str) -> bool:
    """Whether one path segment names a git folder to git or a file system: ``.git`` in any
    case, and the spellings git's ``verify_path`` also refuses (NTFS ``git~1`` and ``.git``
    with trailing dots or spaces or an ``::$stream``, HFS+ ``.git`` with ignorable code points).
    """
    bare = _HFS_IGNORED.sub("", segment).casefold()
    return bare.rstrip(". ") == ".git" or bare.startswith(".git::") or bare == "git~1"


def safe_relative_path(path: str) -> str:
    """``path`` as a clean repo-relative POSIX path, or :class:`UnsafePath` if it could escape.

    Rejects absolute paths, ``..`` segments, backslashes (a Windows separator git would keep
    literally), NUL bytes, empty segments and ``.git`` segments in any case and at any depth
    (:func:`is_git_name`: git refuses to check such a path out, and writing it would reach into
    a git folder), so a label or a committed path can never name a file outside the memory.
    """
    if not isinstance(path, str) or not path:
        raise UnsafePath(f"empty path {path!r}")
    if "\x00" in path or "\\" in path:
        raise UnsafePath(f"path {path!r} contains a NUL or a backslash")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        raise UnsafePath(f"path {path!r} is absolute")
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise UnsafePath(f"path {path!r} has an empty, '.' or '..' segment")
    if any(is_git_name(p) for p in parts):
        raise UnsafePath(
            f"path {path!r} has a .git segment (a git folder's name, which git "
            "refuses to check out)"
        )
    return path


def label_from_relative_path(relative_path: str) -> str:
    """letta-code ``labelFromRelativePath``: backslashes to '/', then drop a trailing ``.md``."""
    return re.sub(r"\.md$", "", relative_path.replace("\\", "/"))


def strip_memory_prefix(path: str) -> str:
    """Repos from before 2026-02-09 (letta #9395) kept files under ``memory/``."""
    return path[len("memory/") :] if path.startswith("memory/") else path


def label_for_path(path: str, *, memory_prefix: bool = False) -> str | None:
    """The block label a repo file maps to, or None when the file is not a block.

    Non-``.md`` files are never blocks; under ``skills/`` only ``skills/<name>/SKILL.md`` is
    (label ``skills/<name>``); other markdown there is ignored by both client and server.
    """
    if memory_prefix:
        path = strip_memory_prefix(path)
    if not path.endswith(".md"):
        return None
    if path.startswith("skills/"):
        parts = path.split("/")
        if len(parts) == 3 and parts[2] == SKILL_FILE:
            return f"skills/{parts[1]}"
        return None
    return label_from_relative_path(path)


def path_for_label(label: str) -> str:
    """The repo path a label is written to (the inverse of :func:`label_for_path`)."""
    label = safe_relative_path(label)
    parts = label.split("/")
    if parts[0] == "skills" and len(parts) == 2:
        return f"{label}/{SKILL_FILE}"
    return f"{label}.md"


def is_validated_path(path: str) -> bool:
    """The hook checks frontmatter only for ``(memory/)?(system|reference)/**.md``."""
    return bool(VALIDATED_RE.match(path))


def is_flat_skill_path(path: str) -> bool:
    return bool(FLAT_SKILL_RE.match(path))


def root_memory_path_from_legacy_label(label: str) -> str:
    """memfs v2 ``rootMemoryPathFromLegacyLabel``: ``system/a/b`` becomes ``a-b.md``."""
    label = strip_memory_prefix(label)
    if label.startswith("system/"):
        label = label[len("system/") :]
    safe_relative_path(label)
    return label.replace("/", "-") + ".md"


# Letta Code 0.34.12 ``src/backend/local/initial-memory.ts`` (in ``letta.js``): where a block
# goes when an agent is created with memfs v2, and the ``name`` it gets.
#: What JavaScript's ``String.prototype.trim`` removes (WhiteSpace and LineTerminator): Letta
#: Code trims labels, frontmatter values, policy words and memory bodies with it.
JS_TRIM = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def root_memory_block_path(label: str) -> str:
    """``rootMemoryBlockPath(label)``: ``normalizeLabel`` (trimmed, backslashes to ``/``, a
    trailing ``.md`` dropped), a leading ``system/`` stripped, every ``/`` turned into ``_``,
    ``.md`` added: ``system/human/prefs`` becomes ``human_prefs.md``. Always a root file."""
    normalized = re.sub(r"\.md$", "", label.strip(JS_TRIM).replace("\\", "/"))
    if normalized.startswith("system/"):
        normalized = normalized[len("system/") :]
    return normalized.replace("/", "_") + ".md"


def memory_name_from_path(relative_path: str) -> str:
    """``memoryNameFromPath``: the path without ``.md``, split on runs of ``-`` and ``_``,
    each word with its first UTF-16 unit upper-cased (``human_prefs.md`` is ``Human Prefs``).
    A word starting with an astral character keeps it: JavaScript upper-cases a lone surrogate
    to itself."""
    words = [w for w in re.split(r"[-_]+", re.sub(r"\.md$", "", relative_path)) if w]
    return " ".join((w[0] if ord(w[0]) > 0xFFFF else w[0].upper()) + w[1:] for w in words)
