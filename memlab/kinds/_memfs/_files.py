"""The files frame of a memory repo: one row per markdown file, with what its path is under the
layout (label, domain, :func:`in_prompt`; :func:`is_memory_path`), its frontmatter as Letta
Code and the Letta server each read it, Souveraine's agent.yaml blocks, and what Letta's
pre-commit hook would refuse. :mod:`memlab.kinds._memfs._load` builds it with
:func:`files_frame`."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab._files import FileTooLarge, read_regular
from memlab.constants import MAX_FILE_BYTES, MAX_FM_COLUMNS
from memlab.errors import UnsafePath
from memlab.formats import _json
from memlab.formats import letta_memfs as fmt
from memlab.formats._yaml import read_yaml
from memlab.kinds._memfs._locate import LETTA_LAYOUTS, Source
from memlab.kinds._memfs._read import oversized_message
from memlab.store import Problems, empty_frame, token_estimate

__all__ = [
    "FILES_COLUMNS",
    "PALACE_PREFIX",
    "is_memory_path",
    "v2_tier",
    "in_prompt",
    "domain_of",
    "files_frame",
]

#: The files frame without its ``fm_<key>`` columns (they go after ``frontmatter_raw``; at most
#: ``MAX_FM_COLUMNS`` of them, see :func:`_fm_columns`).
FILES_COLUMNS: dict[str, str] = {
    "path": "string",
    "label": "string",
    "layout": "category",
    "domain": "category",
    "in_prompt": "boolean",
    "tier": "category",
    "frontmatter_raw": "string",
    "description": "string",
    "read_only": "boolean",
    "limit": "Int64",
    "body": "string",
    "body_chars": "Int64",
    "body_tokens": "float64",
    "over_limit": "boolean",
    "blob_sha": "string",
    "client_description": "string",
    "client_read_only": "string",
    "client_refusal": "string",
    "server_description": "string",
    "server_read_only": "string",
    "server_value_chars": "Int64",
    "server_whole_file": "boolean",
    "yaml_ok": "boolean",
    "readers_agree": "boolean",
}


# --------------------------------------------------------------------------- paths

#: The Letta dashboard's Memory Palace (skill ``curating-memory-palace``): ``palace/MEMORY.md``
#: and its section files, in Letta Code 0.34 repositories.
PALACE_PREFIX = "palace/"


def is_memory_path(path: str, layout: str) -> bool:
    """Whether a repo path is a memory file: a ``.md`` file where the layout keeps memory.

    Letta layouts (and ``generic_markdown``): a ``.md`` file that maps to a block label (so
    under ``skills/`` only ``SKILL.md``; never under ``palace/``, the Letta dashboard's Memory
    Palace, which is the dashboard's page about the memory, not memory the agent keeps);
    Souveraine: any ``.md``; an elfmem substrate: ``.md`` under ``memory/``. Never anything under
    ``.memlab/``, ``.letta/`` or ``.git*``. Images,
    code and JSON are "other files", kept apart in size and churn figures.
    """
    if not path.endswith(".md") or path.startswith((".memlab/", ".letta/", ".git")):
        return False
    if layout == "elfmem_substrate":
        rel = path.split(".elfmem/", 1)[1] if ".elfmem/" in path else path
        return rel.startswith("memory/")
    if layout == "souveraine":
        return True
    if layout in LETTA_LAYOUTS and path.startswith(PALACE_PREFIX):
        return False  # the dashboard's Memory Palace: reported apart (headline palace_files)
    return fmt.label_for_path(path, memory_prefix=layout == "letta_v1_memory_prefix") is not None


def v2_tier(path: str, paths: set[str]) -> str:
    """memfs v2's tier of a ``.md`` file (``memory-format.ts``): ``core`` (a root file, in the
    prompt in full), ``projected`` (nested, with a ``MEMORY.md`` in every folder above it:
    reachable through the indexes), ``not_memory`` (under ``skills/``, or nested without its
    indexes, which Letta Code's validator also reports). ``palace/`` (the dashboard's Memory
    Palace) is ``palace`` whatever its indexes."""
    if path.startswith("skills/"):
        return "not_memory"
    if path.startswith(PALACE_PREFIX):
        return "palace"
    if "/" not in path:
        return "core"
    parts = path.split("/")[:-1]
    for i in range(len(parts)):
        if "/".join(parts[: i + 1]) + "/" + fmt.ROOT_INDEX not in paths:
            return "not_memory"
    return "projected"


def in_prompt(path: str, layout: str, agent_blocks: set[str] | None = None) -> bool:
    """Whether a file's full text reaches the system prompt under ``layout``.

    Letta v1 renders ``system/**`` in full (only a path tree of the rest); v2 renders root-level
    ``*.md``; Souveraine loads ``system/`` plus the files agent.yaml's ``blocks`` names.
    """
    if not path.endswith(".md"):
        return False
    if layout in ("letta_v1", "letta_v1_memory_prefix"):
        return fmt.strip_memory_prefix(path).startswith("system/")
    if layout == "letta_v2":
        return "/" not in path
    if layout == "souveraine":
        return path.startswith("system/") or path in (agent_blocks or set())
    return False


# --------------------------------------------------------------------------- the files frame


def _agent(src: Source, texts: dict[str, tuple[str, str]], problems: Problems) -> dict | None:
    if src.layout != "souveraine":
        return None
    if "agent.yaml" in texts:
        where, text = "agent.yaml", texts["agent.yaml"][0]
    elif src.agent_yaml is not None:
        where = str(src.agent_yaml)
        try:
            text = read_regular(src.agent_yaml, max_bytes=MAX_FILE_BYTES).decode("utf-8")
        except FileTooLarge as exc:
            problems.add(where, "oversized", oversized_message(exc.size))
            return None
        except (OSError, UnicodeDecodeError) as exc:
            problems.add(where, "unreadable", f"cannot read agent.yaml: {exc}")
            return None
    else:
        return None
    read = read_yaml(text)
    if read.failure == "depth":
        problems.add(where, "malformed_yaml", "agent.yaml nests too deeply to read")
        return None
    if read.failure == "size":
        problems.add(where, "malformed_yaml", f"agent.yaml is not read: {read.problem}")
        return None
    if not read.ok:
        problems.add(
            where,
            "malformed_yaml",
            f"agent.yaml is not valid YAML: {read.problem}",
            line=None if read.line is None else read.line + 1,
        )
        return None
    agent = read.value
    if not isinstance(agent, dict):
        problems.add(where, "malformed_yaml", "agent.yaml is not a mapping")
        return None
    for kind, message in _json.clean(agent, root="agent.yaml"):  # a "\ud800" YAML escape
        problems.add(where, kind, message)
    return agent


def _agent_block_files(
    agent: dict | None, where: str, paths: set[str], problems: Problems
) -> set[str]:
    """Files agent.yaml's ``blocks`` list loads into context; unsafe or missing ones reported."""
    out: set[str] = set()
    blocks = (agent or {}).get("blocks") or []
    if not isinstance(blocks, list):
        problems.add(where, "bad_agent_blocks", "agent.yaml 'blocks' is not a list; ignored")
        return out
    for item in blocks:
        file = item.get("file") if isinstance(item, dict) else None
        if not isinstance(file, str):
            problems.add(where, "bad_agent_blocks", f"block entry {item!r} has no 'file'; ignored")
            continue
        try:
            fmt.safe_relative_path(file)
        except UnsafePath as exc:
            problems.add(
                where, "unsafe_path", f"block {item.get('label')!r}: {exc.message}; never read"
            )
            continue
        if file not in paths:
            problems.add(
                where,
                "missing_block_file",
                f"block {item.get('label')!r} names {file}, which is not in the commit",
            )
        out.add(file)
    return out


def domain_of(rel: str, layout: str) -> str:
    """The domain of a file: its first folder (``memory/<domain>`` for Souveraine memories,
    the section for substrate blocks, ``(root)`` for files at the top)."""
    if layout == "elfmem_substrate" and ".elfmem/" in rel:
        rel = rel.split(".elfmem/", 1)[1]
    if layout in ("letta_v1", "letta_v1_memory_prefix"):
        rel = fmt.strip_memory_prefix(rel)
    parts = rel.split("/")
    if layout == "elfmem_substrate" and parts[0] == "memory":
        return parts[1] if len(parts) > 2 else "self"
    if len(parts) == 1:
        return "(root)"
    if layout == "souveraine" and parts[0] == "memory" and len(parts) > 2:
        return f"memory/{parts[1]}"
    return parts[0]


def _label(rel: str, layout: str) -> str | None:
    if layout == "elfmem_substrate":
        return None
    return fmt.label_for_path(rel, memory_prefix=layout == "letta_v1_memory_prefix")


#: Problems of a file that come from the Letta server's YAML reading, which does not apply to a
#: memfs v2 tree: v2 (Letta Code 0.34) came after the server's last release (0.16.8, archived),
#: and Letta Code reads frontmatter line by line (``parseFrontmatter``,
#: ``validateMemoryFileFrontmatter``), so ``description: The human block: Stores...``, which
#: Letta Code itself writes (``renderInitialMemoryFile``), is read as written.
_NOT_V2 = ("readers_disagree", "malformed_yaml")


def files_frame(
    src: Source, texts: dict[str, tuple[str, str]], problems: Problems, meta: dict[str, Any]
) -> pd.DataFrame:
    layout = src.layout
    agent = _agent(src, texts, problems)
    where = "agent.yaml" if "agent.yaml" in texts else str(src.agent_yaml or "agent.yaml")
    agent_files = _agent_block_files(agent, where, set(texts), problems) if agent else set()
    if meta is not None and agent is not None:
        meta["agent"] = agent
    rows: list[dict[str, Any]] = []
    fm_keys: dict[str, None] = {}  # the store's fm_ columns, in first-seen order (capped)
    md_paths = {p for p in texts if p.endswith(".md")}
    for path in sorted(texts):
        rel = path[len(src.prefix) :] if src.prefix and path.startswith(src.prefix) else path
        if not rel.endswith(".md"):
            continue
        text, blob = texts[path]
        fm = fmt.read_frontmatter(text)
        validated = layout != "elfmem_substrate" and fmt.is_validated_path(rel)
        for kind, message, line in fm.problems:
            if kind == "readers_disagree" and layout not in LETTA_LAYOUTS:
                continue  # Letta's two readers matter only where Letta reads the repo
            if kind in _NOT_V2 and layout == "letta_v2":
                continue  # v2's one reader, Letta Code, reads frontmatter line by line
            problems.add(path, kind, message, line=line)
        if layout in ("letta_v1", "letta_v1_memory_prefix", "souveraine"):
            _check_letta_file(path, rel, fm, validated, layout, problems)
        fm_cells = _fm_columns(path, fm.fields, fm_keys, problems)
        limit = fm.limit
        # v2 has one reader, Letta Code: its body (a value that starts with a newline keeps it)
        body = fmt.body_as_letta_code(text) if layout == "letta_v2" else fm.body
        chars = len(body)
        # v2 has no block limit (limits are .memfs.config.json's, per file, judged in the
        # audit's constraints table): over_limit is not checked there unless a file declares one.
        effective = (
            limit
            if limit is not None
            else (fmt.DEFAULT_LIMIT if layout in ("letta_v1", "letta_v1_memory_prefix") else None)
        )
        rows.append(
            {
                "path": path,
                "label": _label(rel, layout),
                "layout": layout,
                "domain": domain_of(rel, layout),
                "in_prompt": in_prompt(rel, layout, agent_files),
                "tier": v2_tier(rel, md_paths) if layout == "letta_v2" else None,
                "frontmatter_raw": fm.raw,
                **{f"fm_{k}": v for k, v in fm_cells.items()},
                "description": fm.description,
                "read_only": fm.read_only,
                "limit": limit,
                "body": body,
                "body_chars": chars,
                "body_tokens": token_estimate(chars),
                "over_limit": (
                    None
                    if effective is None and layout == "letta_v2"
                    else bool(effective is not None and chars > effective)
                ),
                "blob_sha": blob,
                **_readings(fm),
            }
        )
        if layout == "letta_v2":  # no Letta server reads v2: the comparison does not apply
            rows[-1]["readers_agree"] = None
        _storable_row(rows[-1], path, problems)
    fm_cols = [f"fm_{k}" for k in sorted(fm_keys)]
    order = list(FILES_COLUMNS)
    order = (
        order[: order.index("frontmatter_raw") + 1]
        + fm_cols
        + order[order.index("frontmatter_raw") + 1 :]
    )
    if not rows:
        df = empty_frame({**FILES_COLUMNS, **{c: "string" for c in fm_cols}})
        return df[order]
    # Every column built once, then one frame: never one insert per column.
    columns: dict[str, Any] = {}
    for col, dtype in FILES_COLUMNS.items():
        values = [row.get(col) for row in rows]
        if dtype in ("boolean", "Int64"):
            columns[col] = pd.array(values, dtype=dtype)
        else:
            columns[col] = pd.Series(values, dtype=object).astype(dtype)
    for col in fm_cols:
        columns[col] = pd.array([row.get(col) for row in rows], dtype="string")
    df = pd.DataFrame({col: columns[col] for col in order})
    return df


def _fm_columns(
    path: str, fields: dict[str, str], fm_keys: dict[str, None], problems: Problems
) -> dict[str, str]:
    """The frontmatter keys of one file that become its ``fm_<key>`` cells: at most
    :data:`~memlab.constants.MAX_FM_COLUMNS` of the file's, and only while the store has fewer
    than that many distinct ones (``fm_keys``, updated). Keys left out stay in
    ``frontmatter_raw``; a ``frontmatter_keys`` row names the file and how many."""
    kept: dict[str, str] = {}
    for key, value in fields.items():
        if len(kept) >= MAX_FM_COLUMNS:
            break
        if key not in fm_keys:
            if len(fm_keys) >= MAX_FM_COLUMNS:
                continue
            fm_keys[key] = None
        kept[key] = value
    left = len(fields) - len(kept)
    if left:
        problems.add(
            path,
            "frontmatter_keys",
            f"{len(fields):,} frontmatter keys: {left:,} of "
            f"them are left out of the fm_ columns (at most {MAX_FM_COLUMNS} per file "
            "and per store); they stay in frontmatter_raw",
        )
    return kept


def _storable_row(row: dict[str, Any], path: str, problems: Problems) -> None:
    """Lone surrogates (a YAML ``"\\ud800"`` escape in the frontmatter) replaced with U+FFFD in
    place, in one ``bad_text`` row per file: a string column cannot hold them."""
    hit = [col for col, v in row.items() if isinstance(v, str) and _json.clean_text(v) != v]
    if not hit:
        return
    first = next(c for col in hit for c in row[col] if "\ud800" <= c <= "\udfff")
    for col in hit:
        row[col] = _json.clean_text(row[col])
    problems.add(
        path,
        "bad_text",
        f"the frontmatter holds a lone surrogate escape "
        f"(\\u{ord(first):04x}), which is not a character; {', '.join(hit)} read with "
        "U+FFFD in its place",
    )


def _readings(fm: fmt.Frontmatter) -> dict[str, Any]:
    """The files frame's columns for what Letta Code and the Letta server each read."""
    client, server = fm.client, fm.server

    def text(v: Any) -> str | None:
        return None if v is None else str(v)

    return {
        "client_description": client.description if client else None,
        "client_read_only": client.read_only if client else None,
        "client_refusal": client.refusal if client else None,
        "server_description": text(server.description) if server else None,
        "server_read_only": text(server.read_only) if server else None,
        "server_value_chars": (
            len(server.value)
            if server and server.raises is None and server.unread is None
            else None
        ),
        "server_whole_file": server.whole_file if server else None,
        "yaml_ok": fm.yaml_ok,
        # Not known when the frontmatter is not read (an alias bomb): NA, not True.
        "readers_agree": (
            None
            if server and server.unread is not None
            else not any(k == "readers_disagree" for k, _, _ in fm.problems)
        ),
    }


def _check_letta_file(
    path: str, rel: str, fm: fmt.Frontmatter, validated: bool, layout: str, problems: Problems
) -> None:
    """What Letta itself would trip over in the committed file (the hook's view of HEAD)."""
    if fmt.is_flat_skill_path(rel):
        problems.add(
            path,
            "flat_skill",
            "skills must be folders (skills/<name>/SKILL.md); the "
            "pre-commit hook refuses this file and the skills loader ignores it",
        )
    if not validated:
        return
    if not fm.has_frontmatter:
        problems.add(
            path,
            "no_frontmatter",
            "no frontmatter: the server reads the whole file as "
            "the block value, and the pre-commit hook refuses the next edit",
        )
        return
    if layout == "souveraine":
        return  # Souveraine commits through libgit2; no hook, its own keys (tags) are fine
    unknown = [k for k in fm.fields if k not in fmt.ALLOWED_KEYS]
    if unknown:
        shown = ", ".join(unknown[:20]) + (
            f" and {len(unknown) - 20:,} more" if len(unknown) > 20 else ""
        )
        problems.add(
            path,
            "unknown_key",
            f"frontmatter key(s) {shown} are not "
            f"allowed in {rel.split('/')[0]}/ (allowed: {', '.join(fmt.ALLOWED_KEYS)}); "
            "the hook refuses the next edit",
        )
    if not fm.fields.get("description", "").strip():
        problems.add(path, "missing_description", "no description; the hook requires one")
