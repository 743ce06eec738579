"""Letta Code memfs: the on-disk format, shared by the reader (sources/memfs) and the writer
(migrate/), so a round trip cannot drift.

Everything here is pure: text in, values out. No git, no filesystem.

Sources (see shared/reference/formats-letta.md §1): letta-code ``memory-filesystem.ts``
(``labelFromRelativePath``), ``memory-format.ts`` (v2 root layout), ``memory-git-hooks.ts``
(the pre-commit hook, ported rule by rule in :func:`check_precommit`), and letta
``block_markdown.py`` (server frontmatter).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import Iterable

from memlab.constants import INT64_MAX
from memlab.errors import UnsafePath
from memlab.formats._yaml import YamlRead, read_yaml

__all__ = [
    "ALLOWED_KEYS",
    "AGENT_EDITABLE_KEYS",
    "PROTECTED_KEYS",
    "V2_KEYS",
    "AUTHOR_KINDS",
    "HOOK_VARIANTS",
    "HOOK_INSTALLED",
    "HOOK_LIMIT_TOLERATED",
    "DEFAULT_LIMIT",
    "CONFIG_PATH",
    "ROOT_INDEX",
    "SKILL_FILE",
    "Frontmatter",
    "ClientReading",
    "ServerReading",
    "Violation",
    "MIGRATION_NAME",
    "MIGRATION_EMAIL",
    "REVIEW_NAME",
    "REVIEW_EMAIL",
    "LETTA_HOOK_MARKER",
    "read_frontmatter",
    "read_as_client",
    "read_as_server",
    "strict_yaml",
    "split_frontmatter",
    "label_from_relative_path",
    "label_for_path",
    "path_for_label",
    "safe_relative_path",
    "is_git_name",
    "strip_memory_prefix",
    "is_validated_path",
    "is_flat_skill_path",
    "root_memory_path_from_legacy_label",
    "classify_author",
    "hook_variant_at",
    "hook_variant_reason",
    "check_precommit",
    "render_memfs_file",
    "render_memfs_v2_file",
    "quoted_line",
    "yaml_text",
]

#: Keys the current hook knows in system/ and reference/ files (``ALL_KNOWN_KEYS``).
ALLOWED_KEYS = ("description", "read_only", "limit")
AGENT_EDITABLE_KEYS = ("description",)
#: The agent may not add, change or remove these (the hook compares against HEAD).
PROTECTED_KEYS = ("read_only",)
#: memfs v2 frontmatter must be exactly these keys.
V2_KEYS = ("name", "description")
AUTHOR_KINDS = ("agent", "server_user", "human", "reflection_subagent", "system", "migration",
                "review")
#: Who memlab's own migration commits are attributed to (author kind ``migration``): not an
#: agent and not a human, so an audit can tell a migration apart from the memory's own history.
MIGRATION_NAME = "memlab migrate"
MIGRATION_EMAIL = "migrate@memlab.invalid"
#: Who ``memlab apply`` commits a ticked review proposal as (author kind ``review``): a change a
#: human chose, written by memlab with git plumbing (no hook runs), so not a human's commit.
REVIEW_NAME = "memlab"
REVIEW_EMAIL = "memlab@localhost"
#: The comment line Letta Code writes into the pre-commit hook it installs (memory-git-hooks.ts).
LETTA_HOOK_MARKER = "Installed by Letta Code CLI"
#: ``current``: since letta-code d557d47e (2026-03-22), limit tolerated; ``2026-02``: the hook as
#: first installed (#905, 2026-02-10), limit required; ``v2``: root MEMORY.md repositories.
HOOK_VARIANTS = ("current", "2026-02", "v2")
HOOK_INSTALLED = dt.datetime(2026, 2, 10, tzinfo=dt.timezone.utc)
HOOK_LIMIT_TOLERATED = dt.datetime(2026, 3, 22, tzinfo=dt.timezone.utc)
#: The server default once ``limit`` left frontmatter (letta #9537).
DEFAULT_LIMIT = 100_000
CONFIG_PATH = ".letta/config.json"
ROOT_INDEX = "MEMORY.md"
SKILL_FILE = "SKILL.md"

# The hook's own path filters, as grep -E patterns in the bash script.
_VALIDATED_RE = re.compile(r"^(memory/)?(system|reference)/.*\.md$")
_FLAT_SKILL_RE = re.compile(r"^(memory/)?skills/[^/]+\.md$")
_V2_FLAT_SKILL_RE = re.compile(r"^skills/[^/]+\.md$")
_KEY_LINE_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(.*)$")
_DIGITS_RE = re.compile(r"^[0-9]+$")


# --------------------------------------------------------------------------- paths and labels

# Code points HFS+ ignores in names (git's is_hfs_dotgit): ".g\u200cit" is ".git" there.
_HFS_IGNORED = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")


def is_git_name(segment: str) -> bool:
    """Whether one path segment names a git folder to git or a file system: ``.git`` in any
    case, and the spellings git's ``verify_path`` also refuses (NTFS ``git~1`` and ``.git``
    with trailing dots or spaces or an ``::$stream``, HFS+ ``.git`` with ignorable code points).
    """
    bare = _HFS_IGNORED.sub("", segment).casefold()
    return (bare.rstrip(". ") == ".git" or bare.startswith(".git::") or bare == "git~1")


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
        raise UnsafePath(f"path {path!r} has a .git segment (a git folder's name, which git "
                         "refuses to check out)")
    return path


def label_from_relative_path(relative_path: str) -> str:
    """letta-code ``labelFromRelativePath``: backslashes to '/', then drop a trailing ``.md``."""
    return re.sub(r"\.md$", "", relative_path.replace("\\", "/"))


def strip_memory_prefix(path: str) -> str:
    """Repos from before 2026-02-09 (letta #9395) kept files under ``memory/``."""
    return path[len("memory/"):] if path.startswith("memory/") else path


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
    return bool(_VALIDATED_RE.match(path))


def is_flat_skill_path(path: str) -> bool:
    return bool(_FLAT_SKILL_RE.match(path))


def root_memory_path_from_legacy_label(label: str) -> str:
    """memfs v2 ``rootMemoryPathFromLegacyLabel``: ``system/a/b`` becomes ``a-b.md``."""
    label = strip_memory_prefix(label)
    if label.startswith("system/"):
        label = label[len("system/"):]
    safe_relative_path(label)
    return label.replace("/", "-") + ".md"


# --------------------------------------------------------------------------- authors

def classify_author(name: str | None, email: str | None, *, message: str | None = None,
                    branch: str | None = None) -> str:
    """One of :data:`AUTHOR_KINDS` for a commit author (formats-letta.md §1.5).

    ``agent-…@letta.com`` is an agent (also the hand-typed truncated ids); reflection subagents
    use their own agent ids, so they are told apart by name, the 🔮 suffix or a
    ``letta/reflection/*`` branch; ``user-…@letta.ai`` is a server/API user; the server's
    fallback identities (``system@letta.ai``, ``agent@letta.ai``) are ``system``; Souveraine
    agents commit as ``{agent_id}@souveraine.local``; memlab's own migrations
    (:data:`MIGRATION_EMAIL`) are ``migration`` and its review applies (:data:`REVIEW_EMAIL`)
    ``review``; anyone else is a human.
    """
    email = (email or "").strip().lower()
    name = (name or "").strip()
    if email == MIGRATION_EMAIL:
        return "migration"
    if email == REVIEW_EMAIL:
        return "review"
    local, _, domain = email.partition("@")
    if domain == "letta.ai" and local in ("system", "agent"):
        return "system"
    if domain == "letta.ai" and local.startswith("user-"):
        return "server_user"
    is_agent = (domain == "letta.com" and local.startswith("agent-")) or domain == "souveraine.local"
    if is_agent:
        reflective = ("reflection" in name.lower()
                      or (message is not None and "\U0001f52e" in message)
                      or (branch is not None and "letta/reflection/" in branch))
        return "reflection_subagent" if reflective else "agent"
    return "human"


# --------------------------------------------------------------------------- frontmatter

@dataclass
class Frontmatter:
    """A memory file split into frontmatter and body, with each key kept exactly as written.

    ``fields`` maps each top-level key to its value text as written (quotes, ``0123``, ``no``
    and continuation lines included, never YAML-coerced). ``description`` and ``read_only`` are
    Letta Code's reading and ``limit`` a decimal reading (see :func:`read_frontmatter`);
    ``client`` and ``server`` are each consumer's whole reading, ``yaml_ok`` whether strict YAML
    accepts the frontmatter; ``problems`` says what could not be read and why.
    """

    has_frontmatter: bool
    raw: str | None
    fields: dict[str, str]
    body: str
    description: str | None = None
    read_only: bool | None = False
    limit: int | None = None
    name: str | None = None
    problems: list[tuple[str, str, int | None]] = field(default_factory=list)  # kind, message, line
    body_line: int = 1  # 1-based line of the body's first line in the file
    client: "ClientReading | None" = None
    server: "ServerReading | None" = None
    yaml_ok: bool | None = None  # None: no frontmatter


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """``(frontmatter_text, body, body_line)``; frontmatter None when the file has none.

    Fences follow the hook: the first line is exactly ``---`` and the next line that is exactly
    ``---`` closes it (a trailing CR is tolerated when reading). One blank line after the
    closing fence is a separator, not body.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return None, text, 1
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == "---":
            fm = "\n".join(lines[1:i])
            fm = fm + "\n" if i > 1 else ""
            rest = lines[i + 1:]
            body_line = i + 2
            if rest and rest[0].strip() == "" and len(rest) > 1:
                rest = rest[1:]
                body_line += 1
            return fm, "\n".join(rest), body_line
    return None, text, 1


def _raw_fields(fm_text: str) -> tuple[dict[str, str], list[tuple[str, str, int | None]]]:
    """Top-level ``key: value`` pairs with values as written; indented lines continue a value."""
    fields: dict[str, str] = {}
    problems: list[tuple[str, str, int | None]] = []
    current: str | None = None
    for n, line in enumerate(fm_text.split("\n"), start=2):
        if line.strip() == "" and current is None:
            continue
        if line[:1] in (" ", "\t") or (line.strip() == "" and current is not None):
            if current is not None:
                # A value that starts on the next line ("key:" then indented lines) is those lines.
                fields[current] = f"{fields[current]}\n{line}" if fields[current] else line
            continue
        if line.lstrip().startswith("#"):
            continue
        m = _KEY_LINE_RE.match(line)
        if not m:
            problems.append(("frontmatter_line", f"frontmatter line {line!r} is not 'key: value'", n))
            current = None
            continue
        key, value = m.group(1), m.group(2).strip()
        if key in fields:
            problems.append(("duplicate_key", f"frontmatter key {key!r} appears twice; the last wins", n))
        fields[key] = value
        current = key
    return {k: v.rstrip("\n ") for k, v in fields.items()}, problems


# --------------------------------------------------------------------------- each consumer's reading

_CLIENT_RE = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)\Z")


@dataclass(frozen=True)
class ClientReading:
    """What Letta Code's ``memory`` tool reads (``parseMemoryFile`` in ``tools/impl/memory.ts``).

    The tool matches ``^---\n(...)\n---\n?(body)`` and then reads the frontmatter line by line:
    text before the first ``:`` is the key, the rest (trimmed) the value, the last line of a key
    wins, lines without a colon are skipped, values are never unquoted. ``refusal`` is the error
    the tool raises instead of editing the file (None: it edits it and rewrites the frontmatter
    as ``description`` and ``read_only`` only).
    """

    has_frontmatter: bool
    description: str | None
    read_only: str | None
    body: str
    refusal: str | None


def read_as_client(text: str) -> ClientReading:
    m = _CLIENT_RE.match(text)
    if m is None:
        return ClientReading(False, None, None, text,
                             "memory: target file is missing required frontmatter")
    description = read_only = None
    for line in re.split(r"\r?\n", m.group(1)):
        idx = line.find(":")
        if idx <= 0:
            continue
        key, value = line[:idx].strip(), line[idx + 1:].strip()
        if key == "description":
            description = value
        elif key == "read_only":
            read_only = value
    refusal = None
    if not description:
        refusal = "memory: target file frontmatter is missing 'description'"
    elif read_only == "true":
        refusal = "memory: file is read_only and cannot be modified"
    return ClientReading(True, description, read_only, m.group(2), refusal)


@dataclass(frozen=True)
class ServerReading:
    """What the Letta server's ``parse_block_markdown`` (``block_markdown.py``) syncs.

    The file must start with ``---\n`` and hold ``\n---\n`` after it; the text between is read
    with ``yaml.safe_load``. No frontmatter, no closing fence, bad YAML or YAML that is not a
    mapping: the **whole file**, frontmatter included, is the block's value and nothing else is
    read (``whole_file_reason`` says which). Values are YAML-typed (``read_only: yes`` is True).
    A value YAML cannot build (``created: 2026-13-45``) makes ``yaml.safe_load`` raise
    ValueError, which the server does not catch: ``raises`` says why, and ``value`` is empty.
    Frontmatter whose aliases expand past memlab's bound (an alias bomb, see
    :mod:`memlab.formats._yaml`) is not read for the server either: ``unread`` says why, and
    nothing else is set (what the server would sync is not worked out).
    """

    value: str
    description: object = None
    read_only: object = None
    limit: object = None
    keys: tuple[str, ...] = ()
    whole_file_reason: str | None = None
    raises: str | None = None  # the server's parser raises (ValueError) instead: nothing synced
    unread: str | None = None  # memlab did not read the frontmatter (an alias bomb)

    @property
    def whole_file(self) -> bool:
        return self.whole_file_reason is not None


def read_as_server(text: str) -> ServerReading:
    if not text.startswith("---\n"):
        return ServerReading(text, whole_file_reason="no frontmatter")
    end = text.find("\n---\n", 4)
    if end == -1:
        return ServerReading(text, whole_file_reason="no closing '---' line followed by a newline")
    read = _frontmatter_yaml(text[4:end])
    if read.failure == "size":
        return ServerReading("", unread=read.problem)
    if read.failure == "value":  # parse_block_markdown catches only yaml.YAMLError
        return ServerReading("", raises=read.problem)
    if not read.ok:
        return ServerReading(text, whole_file_reason="the frontmatter is not valid YAML "
                                                     f"({_yaml_error(read)})")
    front = read.value
    if not isinstance(front, dict):
        return ServerReading(text, whole_file_reason="the frontmatter is not a YAML mapping")
    return ServerReading(text[end + 5:], front.get("description"), front.get("read_only"),
                         front.get("limit"), tuple(str(k) for k in front))


def strict_yaml(fm_text: str) -> tuple[bool, object, str | None]:
    """``(accepted, value, error)`` of ``yaml.safe_load`` (the server's reader) on ``fm_text``."""
    read = _frontmatter_yaml(fm_text)
    return (True, read.value, None) if read.ok else (False, None, _yaml_error(read))


def _frontmatter_yaml(fm_text: str) -> YamlRead:
    return read_yaml(fm_text) if fm_text.strip() else YamlRead(True, None)


def _yaml_error(read: YamlRead) -> str:
    where = f" at frontmatter line {read.line + 1}" if read.line is not None else ""
    return f"{read.problem}{where}"


def _unquoted(value: str | None) -> str | None:
    """A value written as one YAML quoted string, without its quotes (others unchanged)."""
    if value is None or len(value) < 2 or value[0] not in "\"'" or value[-1] != value[0]:
        return value
    read = read_yaml(f"k: {value}")
    if not read.ok:
        return value
    loaded = read.value
    inner = loaded.get("k") if isinstance(loaded, dict) else None
    return inner if isinstance(inner, str) else value


def _short(value: object, n: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= n else text[:n - 1] + "…"


def _disagreements(client: ClientReading, server: ServerReading, *,
                   has_frontmatter: bool) -> list[str]:
    """Where Letta Code and the Letta server read a file differently, each with its consequence."""
    if (not has_frontmatter and not client.has_frontmatter) or server.unread is not None:
        return []
    out: list[str] = []
    if server.raises is not None:
        out.append(f"the Letta server's parser raises on this frontmatter ({server.raises}), "
                   "so the server cannot sync the file, while Letta Code reads description "
                   f"{_short(client.description)}")
        return out
    if server.whole_file and client.has_frontmatter:
        out.append(f"the Letta server does not read this frontmatter ({server.whole_file_reason}): "
                   f"it syncs the whole file, frontmatter included, as the block's value "
                   f"({len(server.value)} chars, not {len(client.body)}) with no description, "
                   f"while Letta Code reads description {_short(client.description)}")
        return out
    if not client.has_frontmatter:
        out.append("Letta Code's memory tool finds no frontmatter (it refuses to edit the file), "
                   "while the Letta server reads description "
                   f"{_short(server.description)}")
        return out
    server_desc = server.description if isinstance(server.description, str) else (
        None if server.description is None else str(server.description))
    if _unquoted(client.description) != server_desc:
        first_line_only = (server_desc is not None and client.description is not None
                           and server_desc.startswith(client.description or "")
                           and server_desc != client.description)
        consequence = ("the next memory tool edit rewrites the frontmatter with Letta Code's "
                       "reading, so the rest is lost" if first_line_only else
                       "the agent and the server see different descriptions")
        out.append(f"description: Letta Code reads {_short(client.description)}, the Letta server "
                   f"reads {_short(server.description)}; {consequence}")
    # read_only disagreements are the ambiguous_read_only problem (read_frontmatter).
    if client.body != server.value:
        out.append(f"value: Letta Code's body ({len(client.body)} chars) differs from the value the "
                   f"server syncs ({len(server.value)} chars)")
    return out


def read_frontmatter(text: str) -> Frontmatter:
    """Split and read a memory file the way each consumer does. Never raises.

    ``fields`` keeps every top-level key as written. ``description`` and ``read_only`` are Letta
    Code's reading (:func:`read_as_client`; a value written as one YAML quoted string is shown
    without the quotes, which Letta Code keeps literally); ``client`` and ``server``
    (:func:`read_as_server`) hold both readings whole, ``yaml_ok`` whether strict YAML accepts
    the frontmatter. ``limit`` is read as a decimal integer. Where the readers disagree, a
    ``readers_disagree`` problem says how and what follows; bad YAML is ``malformed_yaml``.
    """
    fm_text, body, body_line = split_frontmatter(text)
    client = read_as_client(text)
    server = read_as_server(text)
    if fm_text is None:
        fm = Frontmatter(False, None, {}, body, read_only=False, body_line=body_line,
                         client=client, server=server)
        if text.startswith("---"):
            fm.problems.append(("unclosed_frontmatter",
                                "frontmatter opened with --- but never closed; read as plain text", 1))
        return fm
    fields, problems = _raw_fields(fm_text)
    fm = Frontmatter(True, fm_text, fields, body, problems=problems, body_line=body_line,
                     client=client, server=server)
    read = _frontmatter_yaml(fm_text)
    loaded = read.value
    fm.yaml_ok = read.ok
    if not read.ok:
        if read.failure == "depth":
            fm.problems.append(("malformed_yaml", "frontmatter nests too deeply to read", 2))
        elif read.failure == "size":
            fm.problems.append(("malformed_yaml", f"frontmatter is not read: {read.problem}", 2))
        elif read.failure == "value":
            fm.problems.append(("malformed_yaml", f"frontmatter has {read.problem}: the Letta "
                                "server's parser raises on it instead of reading the file", 2))
        else:
            # Where the broken construct starts says more than where YAML gave up (often the
            # end); the frontmatter starts on line 2.
            line = read.line + 2 if read.line is not None else None
            fm.problems.append(("malformed_yaml",
                                f"frontmatter is not valid YAML: {read.problem}", line))
    elif loaded is not None and not isinstance(loaded, dict):
        fm.problems.append(("malformed_yaml", "frontmatter is not a mapping of keys to values", 2))
    for message in _disagreements(client, server, has_frontmatter=True):
        fm.problems.append(("readers_disagree", message, 2))
    if client.has_frontmatter:
        fm.description = _unquoted(client.description)
        ro = _unquoted(client.read_only)
    else:
        fm.description = server.description if isinstance(server.description, str) else None
        ro = fields.get("read_only")
    if ro is None or ro == "false":
        fm.read_only = False
    elif ro == "true":
        fm.read_only = True
    else:
        fm.read_only = None
        fm.problems.append(("ambiguous_read_only",
                            f"read_only value {ro!r} is not 'true' or 'false': Letta Code and its "
                            "hook treat it as not read-only (they compare the text with 'true'), "
                            f"the Letta server reads {_short(server.read_only)}", None))
    base = read_yaml(fm_text, base=True).value if fm_text.strip() else {}
    if isinstance(base, dict):
        name = base.get("name")
        fm.name = name if isinstance(name, str) else None
        lim = base.get("limit")
    else:
        lim = fields.get("limit")
    if lim is not None:
        if isinstance(lim, str) and _DIGITS_RE.match(lim.strip()):
            fm.limit = int(lim.strip(), 10)
            if fm.limit > INT64_MAX:
                fm.limit = None
                fm.problems.append(("bad_limit", f"limit {lim.strip()[:40]!r} is too large to "
                                    "be a number of characters; read as missing", None))
            elif fm.limit == 0:
                fm.problems.append(("bad_limit", "limit 0: no body can fit it (Letta Code's hook "
                                    "requires a positive integer)", None))
        else:
            fm.problems.append(("bad_limit", f"limit {fields.get('limit', lim)!r} is not a "
                                "whole number of characters", None))
    return fm


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
        return (f"committed {day}, before Letta Code first installed the pre-commit hook "
                f"(letta-code #905, {HOOK_INSTALLED.date()}): no hook ran")
    if variant == "2026-02":
        return (f"committed {day}: the hook as first installed (letta-code #905, "
                f"{HOOK_INSTALLED.date()}), which required limit until d557d47e "
                f"({HOOK_LIMIT_TOLERATED.date()})")
    return (f"committed {day}, after letta-code d557d47e ({HOOK_LIMIT_TOLERATED.date()}) made "
            "limit a tolerated legacy key: the current hook")


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
    return Violation(path, "flat_skill",
                     "invalid skill path (skills must be folders). Use skills/<name>/SKILL.md")


def _frontmatter_close(path: str, lines: list[str]) -> tuple[int | None, Violation | None]:
    """The hook's opening checks: the first line is ``---`` and a closing ``---`` follows."""
    if lines[0] != "---":
        return None, Violation(path, "missing_frontmatter", "missing frontmatter (must start with ---)")
    close = _closing_line(lines)
    if close is None:
        return None, Violation(path, "unclosed_frontmatter",
                               "frontmatter opened but never closed (missing closing ---)")
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


def check_precommit(path: str, new_text: str | None, head_text: str | None = None, *,
                    variant: str = "current", change: str = "M",
                    staged_paths: Iterable[str] | None = None) -> list[Violation]:
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
            if (variant != "2026-02" and change in "ACMR" and _FLAT_SKILL_RE.match(word)) \
                    or (change in "ACM" and _VALIDATED_RE.match(word)):
                out.append(Violation(word, "missing_frontmatter",
                                     "missing frontmatter (must start with ---)"))
        return out
    if variant == "v2":
        return _check_v2(path, new_text, change, staged_paths)

    out = []
    if variant != "2026-02" and change in "ACMR" and _FLAT_SKILL_RE.match(path):
        out.append(_flat_skill(path))
    if change not in "ACM" or not _VALIDATED_RE.match(path):
        return out

    staged = _shell_text(new_text)
    lines = staged.split("\n")
    close, broken = _frontmatter_close(path, lines)
    if broken is not None:
        return out + [broken]
    head = _shell_text(head_text)
    if head:
        if _get_fm_value(head, "read_only") == "true":
            return out + [Violation(path, "read_only_modified", "file is read_only and cannot be modified")]

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
            out.append(Violation(path, "unknown_key",
                                 f"unknown frontmatter key '{key}' (allowed: {allowed})"))
            continue
        if key in PROTECTED_KEYS:
            if head:
                if value != _get_fm_value(head, key):
                    out.append(Violation(path, "protected_changed",
                                         f"'{key}' is a protected field and cannot be changed by the agent"))
            else:
                out.append(Violation(path, "protected_set",
                                     f"'{key}' is a protected field and cannot be set by the agent"))
        if key == "limit":
            has_limit = True
            if require_limit and not (_DIGITS_RE.match(value) and int(value) > 0):
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
                out.append(Violation(path, "protected_removed",
                                     f"'{key}' is a protected field and cannot be removed by the agent"))
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


def _check_v2(path: str, new_text: str | None, change: str,
              staged_paths: Iterable[str] | None) -> list[Violation]:
    out: list[Violation] = []
    if change in "ACMR" and _V2_FLAT_SKILL_RE.match(path):
        out.append(_flat_skill(path))
    # v2 validates every tracked .md, not only the staged ones; a deleted file is not tracked.
    if not path.endswith(".md") or path.startswith("skills/") or not _v2_projected(path, staged_paths):
        return out
    staged = _shell_text(new_text)
    lines = staged.split("\n")
    if path.rsplit("/", 1)[-1] == ROOT_INDEX:
        if lines[0] == "---":
            out.append(Violation(path, "index_frontmatter", "MEMORY.md must not have frontmatter"))
        return out
    close, broken = _frontmatter_close(path, lines)
    if broken is not None:
        return out + [broken]
    seen: set[str] = set()
    for line in lines[1:close]:
        if line == "":
            continue
        key = _trim_spaces(_cut_key(line))
        value = _trim_spaces(_cut_value(line))
        if key not in V2_KEYS:
            out.append(Violation(path, "unknown_key",
                                 f"unknown frontmatter key '{key}' (allowed: name description)"))
            continue
        if key in seen:
            out.append(Violation(path, "duplicate_key", f"duplicate frontmatter key '{key}'"))
        seen.add(key)
        if value in ("", '""', "''"):
            out.append(Violation(path, "empty_value", f"'{key}' must not be empty"))
    for key in V2_KEYS:
        if key not in seen:
            out.append(Violation(path, f"missing_{key}", f"missing required field '{key}'"))
    return out


# --------------------------------------------------------------------------- writers

def _one_line(description: str) -> str:
    # The client memory tool reads frontmatter line by line and keeps only the first line of a
    # wrapped value, so a description must stay on one line to survive the next tool edit.
    return " ".join(str(description).split())


def _json_quoted(value: str) -> str:
    """``value`` JSON-quoted, with each character YAML refuses raw even inside double quotes
    (DEL, C1 controls; JSON leaves them raw) and every other non-printable one escaped."""
    return "".join(c if c.isprintable() else
                   (f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
                   for c in json.dumps(value, ensure_ascii=False))


def yaml_text(value: str) -> str:
    """``value`` as one YAML scalar: plain when every YAML reader gets the same text back,
    JSON-quoted (:func:`_json_quoted`) otherwise."""
    plain_ok = (read_yaml(f"k: {value}").value == {"k": value}
                and read_yaml(f"k: {value}", base=True).value == {"k": value})
    return value if plain_ok else _json_quoted(value)


def render_memfs_file(description: str, body: str, *, read_only: bool = False,
                      limit: int | None = None) -> str:
    """A v1 memory file (``system/…`` or ``reference/…``) the current hook accepts.

    The description is flattened to one non-empty line, written plain when YAML reads it back
    unchanged and JSON-quoted otherwise (:func:`yaml_text`), so ``no``, ``0123``, a leading
    ``#`` or a DEL character survive. ``read_only`` is
    written only when true (as the server does); ``limit`` only when given (a positive integer,
    which also satisfies the February 2026 hook).
    """
    desc = _one_line(description)
    if not desc:
        raise ValueError("a memfs file needs a non-empty description (the hook requires one)")
    lines = ["---", f"description: {yaml_text(desc)}"]
    if limit is not None:
        if isinstance(limit, bool) or int(limit) != limit or int(limit) <= 0:
            raise ValueError(f"limit must be a positive integer, not {limit!r}")
        lines.append(f"limit: {int(limit)}")
    if read_only:
        lines.append("read_only: true")
    lines.append("---")
    return "\n".join(lines) + "\n\n" + body


def quoted_line(text: str) -> str:
    """``text`` on one line, JSON-quoted as Letta's v2 writer quotes values
    (:func:`_json_quoted`: DEL and C1 controls escaped, which YAML refuses raw)."""
    return _json_quoted(_one_line(text))


def render_memfs_v2_file(name: str, description: str, body: str) -> str:
    """A memfs v2 file: exactly ``name`` and ``description``, values :func:`quoted_line`."""
    name_line, desc = _one_line(name), _one_line(description)
    if not name_line or not desc:
        raise ValueError("memfs v2 files need a non-empty name and description")
    return f"---\nname: {quoted_line(name_line)}\ndescription: {quoted_line(desc)}\n---\n\n{body}"

