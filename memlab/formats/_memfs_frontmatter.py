"""Letta Code memfs frontmatter: splitting a memory file, and reading it as each consumer does
(Letta Code's ``memory`` tool, :func:`read_as_client`; the Letta server, :func:`read_as_server`;
both together with their disagreements, :func:`read_frontmatter`). Part of
:mod:`memlab.formats.letta_memfs`, which re-exports the public names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memlab.constants import INT64_MAX
from memlab.formats._memfs_paths import JS_TRIM
from memlab.formats._yaml import YamlRead, read_yaml

__all__ = [
    "DEFAULT_LIMIT",
    "DIGITS_RE",
    "Frontmatter",
    "split_frontmatter",
    "ClientReading",
    "read_as_client",
    "ServerReading",
    "body_as_letta_code",
    "agent_view",
    "read_as_server",
    "strict_yaml",
    "read_frontmatter",
]

#: The server default once ``limit`` left frontmatter (letta #9537).
DEFAULT_LIMIT = 100_000
_KEY_LINE_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(.*)$")
DIGITS_RE = re.compile(r"^[0-9]+$")


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
            rest = lines[i + 1 :]
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
            problems.append(
                ("frontmatter_line", f"frontmatter line {line!r} is not 'key: value'", n)
            )
            current = None
            continue
        key, value = m.group(1), m.group(2).strip()
        if key in fields:
            problems.append(
                ("duplicate_key", f"frontmatter key {key!r} appears twice; the last wins", n)
            )
        fields[key] = value
        current = key
    return {k: v.rstrip("\n ") for k, v in fields.items()}, problems


# ------------------------------------------------------------------------ each consumer's reading

_CLIENT_RE = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*+)\Z")


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
        return ClientReading(
            False, None, None, text, "memory: target file is missing required frontmatter"
        )
    description = read_only = None
    for line in re.split(r"\r?\n", m.group(1)):
        idx = line.find(":")
        if idx <= 0:
            continue
        key, value = line[:idx].strip(), line[idx + 1 :].strip()
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


_LETTA_CODE_FM = re.compile(r"---\n([\s\S]*?)\n---(?:\n([\s\S]*))?\Z")


def body_as_letta_code(text: str) -> str:
    """The body of a memory file where Letta Code 0.34.12 splits it (the regex of
    ``parseFrontmatter`` in ``letta.js``): everything after the first ``\n---`` line that closes
    a frontmatter opened on the first line (a value that starts with a newline keeps it); the
    whole text when there is no frontmatter. This is the value as stored: CRs, a BOM and
    surrounding whitespace are kept as committed. What Letta Code then shows the agent is
    :func:`agent_view` of it."""
    match = _LETTA_CODE_FM.match(text)
    if match is None:
        return text
    return match.group(2) or ""


def agent_view(text: str) -> str:
    """What Letta Code 0.34.12 puts in the agent's prompt for a committed memory file
    (``collectCommittedMemoryFiles`` -> ``parseFrontmatter``): a leading BOM dropped, CR LF and
    a lone CR read as LF; then, where a frontmatter is found, the body after it trimmed as
    JavaScript's ``trim`` trims; else the whole (normalised) text, untrimmed."""
    normalized = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    match = _LETTA_CODE_FM.match(normalized)
    if match is None:
        return normalized
    return (match.group(2) or "").strip(JS_TRIM)


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
        return ServerReading(
            text, whole_file_reason=f"the frontmatter is not valid YAML ({_yaml_error(read)})"
        )
    front = read.value
    if not isinstance(front, dict):
        return ServerReading(text, whole_file_reason="the frontmatter is not a YAML mapping")
    return ServerReading(
        text[end + 5 :],
        front.get("description"),
        front.get("read_only"),
        front.get("limit"),
        tuple(str(k) for k in front),
    )


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
    return text if len(text) <= n else text[: n - 1] + "…"


def _disagreements(
    client: ClientReading, server: ServerReading, *, has_frontmatter: bool
) -> list[str]:
    """Where Letta Code and the Letta server read a file differently, each with its consequence."""
    if (not has_frontmatter and not client.has_frontmatter) or server.unread is not None:
        return []
    out: list[str] = []
    if server.raises is not None:
        out.append(
            f"the Letta server's parser raises on this frontmatter ({server.raises}), "
            "so the server cannot sync the file, while Letta Code reads description "
            f"{_short(client.description)}"
        )
        return out
    if server.whole_file and client.has_frontmatter:
        out.append(
            f"the Letta server does not read this frontmatter ({server.whole_file_reason}): "
            f"it syncs the whole file, frontmatter included, as the block's value "
            f"({len(server.value)} chars, not {len(client.body)}) with no description, "
            f"while Letta Code reads description {_short(client.description)}"
        )
        return out
    if not client.has_frontmatter:
        out.append(
            "Letta Code's memory tool finds no frontmatter (it refuses to edit the file), "
            "while the Letta server reads description "
            f"{_short(server.description)}"
        )
        return out
    server_desc = (
        server.description
        if isinstance(server.description, str)
        else (None if server.description is None else str(server.description))
    )
    if _unquoted(client.description) != server_desc:
        first_line_only = (
            server_desc is not None
            and client.description is not None
            and server_desc.startswith(client.description or "")
            and server_desc != client.description
        )
        consequence = (
            "the next memory tool edit rewrites the frontmatter with Letta Code's "
            "reading, so the rest is lost"
            if first_line_only
            else "the agent and the server see different descriptions"
        )
        out.append(
            f"description: Letta Code reads {_short(client.description)}, the Letta server "
            f"reads {_short(server.description)}; {consequence}"
        )
    # read_only disagreements are the ambiguous_read_only problem (read_frontmatter).
    if client.body != server.value:
        out.append(
            f"value: Letta Code's body ({len(client.body)} chars) differs from the value the "
            f"server syncs ({len(server.value)} chars)"
        )
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
        fm = Frontmatter(
            False,
            None,
            {},
            body,
            read_only=False,
            body_line=body_line,
            client=client,
            server=server,
        )
        if text.startswith("---"):
            fm.problems.append(
                (
                    "unclosed_frontmatter",
                    "frontmatter opened with --- but never closed; read as plain text",
                    1,
                )
            )
        return fm
    fields, problems = _raw_fields(fm_text)
    fm = Frontmatter(
        True,
        fm_text,
        fields,
        body,
        problems=problems,
        body_line=body_line,
        client=client,
        server=server,
    )
    read = _frontmatter_yaml(fm_text)
    loaded = read.value
    fm.yaml_ok = read.ok
    if not read.ok:
        if read.failure == "depth":
            fm.problems.append(("malformed_yaml", "frontmatter nests too deeply to read", 2))
        elif read.failure == "size":
            fm.problems.append(("malformed_yaml", f"frontmatter is not read: {read.problem}", 2))
        elif read.failure == "value":
            fm.problems.append(
                (
                    "malformed_yaml",
                    f"frontmatter has {read.problem}: the Letta "
                    "server's parser raises on it instead of reading the file",
                    2,
                )
            )
        else:
            # Where the broken construct starts says more than where YAML gave up (often the
            # end); the frontmatter starts on line 2.
            line = read.line + 2 if read.line is not None else None
            fm.problems.append(
                ("malformed_yaml", f"frontmatter is not valid YAML: {read.problem}", line)
            )
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
        fm.problems.append(
            (
                "ambiguous_read_only",
                f"read_only value {ro!r} is not 'true' or 'false': Letta Code and its "
                "hook treat it as not read-only (they compare the text with 'true'), "
                f"the Letta server reads {_short(server.read_only)}",
                None,
            )
        )
    base = read_yaml(fm_text, base=True).value if fm_text.strip() else {}
    if isinstance(base, dict):
        name = base.get("name")
        fm.name = name if isinstance(name, str) else None
        lim = base.get("limit")
    else:
        lim = fields.get("limit")
    if lim is not None:
        if isinstance(lim, str) and DIGITS_RE.match(lim.strip()):
            fm.limit = int(lim.strip(), 10)
            if fm.limit > INT64_MAX:
                fm.limit = None
                fm.problems.append(
                    (
                        "bad_limit",
                        f"limit {lim.strip()[:40]!r} is too large to "
                        "be a number of characters; read as missing",
                        None,
                    )
                )
            elif fm.limit == 0:
                fm.problems.append(
                    (
                        "bad_limit",
                        "limit 0: no body can fit it (Letta Code's hook "
                        "requires a positive integer)",
                        None,
                    )
                )
        else:
            fm.problems.append(
                (
                    "bad_limit",
                    f"limit {fields.get('limit', lim)!r} is not a whole number of characters",
                    None,
                )
            )
    return fm
