"""What reaches the system prompt: :func:`prompt_share` (the one definition of prompt size),
:func:`prompt_at` and its :class:`PromptSnapshot`, and ``as_store`` (a path loaded, a store
checked to be a memory repo), which the audit shares."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.constants import CHARS_PER_TOKEN, LETTA_BYTES_PER_TOKEN
from memlab.errors import UnsupportedSchema
from memlab.formats import letta_memfs as fmt
from memlab.kinds import MEMFS_KINDS
from memlab.kinds._memfs._load import LETTA_LAYOUTS, files_at, in_prompt, load_memfs, resolve_ref
from memlab.store import Store

__all__ = [
    "PromptSnapshot",
    "as_store",
    "prompt_share",
    "rendered_chars",
    "prompt_at",
    "letta_token_estimate",
]


@dataclass
class PromptSnapshot:
    """What reaches the system prompt at one commit.

    ``files`` holds the files rendered in full (path, label, description, body_chars,
    description_chars, chars, tokens); ``tree`` the paths only listed by name (v1: Letta's
    ``<external_projection>`` path tree; v2: the top-level folder indexes ``d/MEMORY.md``
    that ``renderRootMemoryProjection`` lists as ``<directory path="d/" index="d/MEMORY.md" />``
    in ``<deferred-memory>``; deeper v2 files are not in the prompt at all). ``total_chars``
    counts bodies, descriptions and the listed lines, not the tags around them.
    """

    sha: str
    layout: str
    files: pd.DataFrame
    tree: list[str] = field(default_factory=list)

    @property
    def total_chars(self) -> int:
        return int(self.files["chars"].sum()) + sum(
            _listed_chars(p, self.layout) for p in self.tree
        )

    @property
    def total_tokens(self) -> float:
        return self.total_chars / CHARS_PER_TOKEN


def as_store(store_or_path: Store | str | Path) -> Store:
    if isinstance(store_or_path, Store):
        if store_or_path.kind not in MEMFS_KINDS:
            raise UnsupportedSchema(
                f"the memfs audit reads memory repos, not {store_or_path.kind!r} stores",
                path=store_or_path.path,
                hint="use memlab.audit() to pick the audit",
            )
        return store_or_path
    return load_memfs(store_or_path)


_V2_CHILD_INDEX = re.compile(r"[^/]+/MEMORY\.md")


def _listed(path: str, layout: str) -> bool:
    """Letta lists this file by path only (v1 ``<external_projection>``; v2 a top-level folder
    index in ``<deferred-memory>``), not its text."""
    if layout not in LETTA_LAYOUTS:
        return False
    if layout == "letta_v2":
        return bool(_V2_CHILD_INDEX.fullmatch(path)) and not path.startswith("skills/")
    rel = fmt.strip_memory_prefix(path) if layout == "letta_v1_memory_prefix" else path
    return rel.endswith(".md") and not rel.startswith("skills/") and not in_prompt(path, layout)


def prompt_share(
    path: str,
    layout: str,
    body_chars: int | None,
    description: str | None,
    *,
    agent_files: set[str] | None = None,
    listed: bool | None = None,
) -> tuple[str | None, int]:
    """How one file reaches the system prompt, and how many characters it adds there.

    ``("full", body + description chars)`` for a file rendered in full, ``("listed", len(path)
    + 1)`` for a file Letta lists by path only, ``(None, 0)`` otherwise. This is the one
    definition of prompt size: the headline, ``metrics.json``, :class:`PromptSnapshot` and the
    ``prompt_history`` chart all add these up.
    """
    if in_prompt(path, layout, agent_files):
        return "full", rendered_chars(body_chars, description)
    if listed if listed is not None else _listed(path, layout):
        return "listed", _listed_chars(path, layout)
    return None, 0


def rendered_chars(body_chars: Any, description: Any) -> int:
    body = 0 if body_chars is None or pd.isna(body_chars) else int(body_chars)
    return body + (len(description) if isinstance(description, str) else 0)


def _letta_attribute(value: str) -> str:
    """Letta Code's ``escapeXmlAttribute`` (the prompt's own escaping, measured, not output)."""
    for raw, entity in (
        ("&", "&amp;"),
        ('"', "&quot;"),
        ("'", "&#x27;"),
        ("<", "&lt;"),
        (">", "&gt;"),
    ):
        value = value.replace(raw, entity)
    return value


def _listed_chars(path: str, layout: str | None = None) -> int:
    if layout == "letta_v2":  # one <directory .../> line, the folder name escaped as Letta does
        folder = _letta_attribute(path[: -len("/MEMORY.md")])
        return len(f'<directory path="{folder}/" index="{folder}/MEMORY.md" />') + 1
    return len(path) + 1  # one line of the path tree


def _tree_listing(paths: list[str], layout: str) -> list[str]:
    return sorted(p for p in paths if _listed(p, layout))


def prompt_at(store_or_path: Store | str | Path, sha: str) -> PromptSnapshot:
    """The files the agent had in its system prompt at commit ``sha`` (any ref works)."""
    store = as_store(store_or_path)
    files = files_at(store, sha)
    layout = store.meta["layout"]
    shown = files[files["in_prompt"].fillna(False)]
    desc_chars = shown["description"].fillna("").str.len().astype("Int64")
    snapshot = pd.DataFrame(
        {
            "path": shown["path"],
            "label": shown["label"],
            "description": shown["description"],
            "body_chars": shown["body_chars"],
            "description_chars": desc_chars,
        }
    ).reset_index(drop=True)
    snapshot["chars"] = pd.array(
        [rendered_chars(b, d) for b, d in zip(shown["body_chars"], shown["description"])],
        dtype="Int64",
    )
    snapshot["tokens"] = snapshot["chars"].astype("float64") / CHARS_PER_TOKEN
    tree = _tree_listing(files["path"].tolist(), layout)
    return PromptSnapshot(resolve_ref(store, sha), layout, snapshot, tree)


def letta_token_estimate(store: Store, sha: str) -> pd.DataFrame:
    """Letta Code 0.34.12's own estimate of the prompt (``letta memory tokens``,
    ``estimateSystemPromptSize``): one row per file it counts at commit ``sha`` (path,
    tokens), tokens being ``ceil(UTF-8 bytes / 4)`` of the whole file, frontmatter included
    (bad UTF-8 re-encoded as U+FFFD, as Node reads it). v2 (a root ``MEMORY.md``): the root
    ``*.md`` files; otherwise ``system/**.md``; names starting with ``.`` and non-regular files
    are skipped, as Letta's directory walk skips them. Letta reads the working tree; memlab
    reads the commit (the same on a clean checkout)."""
    from memlab.sources import _git

    entries = _git.ls_tree(Path(store.meta["repo"]), sha)
    v2 = any(e.path == fmt.ROOT_INDEX for e in entries)

    def counted(path: str) -> bool:
        parts = path.split("/")
        if not path.endswith(".md") or any(p.startswith(".") for p in parts):
            return False
        return len(parts) == 1 if v2 else (parts[0] == "system" and len(parts) > 1)

    wanted = {
        e.path: e.sha
        for e in entries
        if e.type == "blob" and e.mode in ("100644", "100755") and counted(e.path)
    }
    data = _git.read_blobs(Path(store.meta["repo"]), wanted.values())
    rows = [
        (
            path,
            -(
                -len(data.get(blob, b"").decode("utf-8", "replace").encode("utf-8"))
                // LETTA_BYTES_PER_TOKEN
            ),
        )
        for path, blob in sorted(wanted.items())
    ]
    return pd.DataFrame(rows, columns=["path", "tokens"]).astype(
        {"path": "string", "tokens": "int64"}
    )
