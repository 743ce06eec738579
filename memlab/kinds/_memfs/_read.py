"""Reading a memory's files: the texts of a commit's memory files (:func:`read_tree`) or of a
plain folder's (:func:`read_disk`), each as ``{path: (text, blob sha)}`` plus the other paths,
with every file that is not read (unsafe, oversized, binary, a symlink, a special file) a
``problems`` row. :mod:`memlab.kinds._memfs._load` loads what this reads."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from memlab._files import FileTooLarge, NotRegularFile, over_cap, read_regular, walk
from memlab.constants import MAX_FILE_BYTES, MAX_FOLDER_DEPTH
from memlab.errors import UnsafePath
from memlab.formats import letta_memfs as fmt
from memlab.kinds._memfs._locate import LETTA_LAYOUTS, Source, decode, letta_text_note
from memlab.sources import _git
from memlab.store import Problems

__all__ = ["read_tree", "oversized_message", "read_disk", "substrate_inputs"]


def _wanted(src: Source, rel: str) -> bool:
    """Text files the loader keeps: markdown everywhere, plus the substrate's ledger."""
    if src.layout == "elfmem_substrate":
        return rel.endswith(".md") or (rel.startswith("ledger/") and rel.endswith(".jsonl"))
    return rel.endswith(".md") or rel == "agent.yaml"


def read_tree(
    src: Source, tree: list[_git.TreeEntry], problems: Problems
) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """Texts of the memory files in a commit: {repo path: (text, blob sha)}, plus other paths."""
    keep: dict[str, _git.TreeEntry] = {}
    other: list[str] = []
    for e in tree:
        if src.prefix and not e.path.startswith(src.prefix):
            continue
        rel = e.path[len(src.prefix) :]
        if e.raw is not None:
            problems.add(
                e.path,
                "non_utf8_path",
                "a committed file whose name is not UTF-8; "
                "read, and shown with replacement characters",
            )
        try:
            fmt.safe_relative_path(e.path)
        except UnsafePath as exc:
            problems.add(e.path, "unsafe_path", f"{exc.message}; not read")
            continue
        if e.type == "commit":
            problems.add(
                e.path,
                "submodule",
                "a git submodule; its content is not part of this memory and is not read",
            )
            continue
        if e.mode == "120000":
            keep[e.path] = e  # read below to judge the link target
            continue
        if not _wanted(src, rel):
            other.append(e.path)
        elif e.size is not None and e.size > MAX_FILE_BYTES:
            problems.add(e.path, "oversized", oversized_message(e.size))
            other.append(e.path)  # listed (meta other_files), its text never read
        else:
            keep[e.path] = e
    blobs = (
        _git.read_blobs(src.repo.path, (e.sha for e in keep.values()), max_bytes=MAX_FILE_BYTES)
        if src.repo
        else {}
    )
    texts: dict[str, tuple[str, str]] = {}
    for p, e in keep.items():
        data = blobs.get(e.sha)
        if data is None:
            problems.add(
                p,
                "missing_object",
                f"blob {e.sha[:12]} is missing from the object "
                "store (a partial or damaged clone); not read",
            )
            continue
        if e.mode == "120000":
            _report_symlink(p, os.fsdecode(data), problems)
            continue
        letta = src.layout in LETTA_LAYOUTS and rel.endswith(".md")
        text = decode(data, as_letta=letta)
        if text is None:
            problems.add(p, "binary", "not UTF-8 text (binary content); not read")
            continue
        note = letta_text_note(data) if letta else None
        if note is not None:
            problems.add(p, *note)
        texts[p] = (text, e.sha)
    return texts, other


def oversized_message(size: int) -> str:
    return (
        f"{over_cap(MAX_FILE_BYTES, size)}: memlab's cap for a memory file (a Letta block "
        "is a few thousand characters); listed, its text not read"
    )


def _too_deep() -> str:
    return (
        f"a folder nested more than {MAX_FOLDER_DEPTH} levels below the store; memlab does "
        "not look inside it, so none of its files are read"
    )


def _report_symlink(path: str, target: str, problems: Problems) -> None:
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
        problems.add(
            path,
            "symlink_outside_repo",
            f"symlink to {target!r}, outside the repository; never followed",
        )
    else:
        problems.add(
            path,
            "symlink",
            f"symlink to {target!r}; Letta reads the link text, not "
            "the file it names, so this block holds a path",
        )


def read_disk(src: Source, problems: Problems) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """The same as :func:`read_tree` for a plain folder (no commit to read)."""
    base = src.root if not src.prefix else src.root / src.prefix.rstrip("/")
    texts: dict[str, tuple[str, str]] = {}
    other: list[str] = []
    if not base.is_dir():
        return texts, other

    def shown_dir(folder: str) -> str:
        return src.prefix + _git.shown_path(os.path.relpath(folder, base).replace(os.sep, "/"))[0]

    def unlisted(exc: OSError) -> None:
        rel = shown_dir(exc.filename) if exc.filename else src.prefix + "."
        problems.add(
            rel, "unreadable", f"cannot list the folder: {exc.strerror}; its files are not read"
        )

    def too_deep(folder: str) -> None:
        problems.add(shown_dir(folder) + "/", "too_deep", _too_deep())

    for dirpath, dirnames, filenames in walk(base, onerror=unlisted, too_deep=too_deep):
        links = [d for d in dirnames if Path(dirpath, d).is_symlink()]
        for d in dirnames:
            if d != ".git" and d not in links and fmt.is_git_name(d):
                problems.add(
                    shown_dir(os.path.join(dirpath, d)) + "/",
                    "unsafe_path",
                    f"a folder named {d!r}, a git folder's name (git refuses to check "
                    "such a path out); not read",
                )
        dirnames[:] = sorted(d for d in dirnames if not fmt.is_git_name(d) and d not in links)
        for name in sorted(filenames) + sorted(links):
            full = Path(dirpath, name)
            rel, non_utf8 = _git.shown_path(full.relative_to(base).as_posix())
            shown = src.prefix + rel
            if non_utf8:
                if shown in texts or shown in other:
                    problems.add(
                        shown,
                        "non_utf8_path",
                        "a file whose name is not UTF-8 and "
                        "reads, with replacement characters, as another file's; not read",
                    )
                    continue
                problems.add(
                    shown,
                    "non_utf8_path",
                    "a file whose name is not UTF-8; read, and shown with replacement characters",
                )
            if full.is_symlink():
                _report_symlink(shown, os.readlink(full), problems)
                continue
            if not _wanted(src, rel):
                other.append(shown)
                continue
            try:
                data = read_regular(full, max_bytes=MAX_FILE_BYTES)
            except NotRegularFile as exc:  # a FIFO would block the read forever: never opened
                problems.add(shown, "special_file", exc.reason)
                continue
            except FileTooLarge as exc:
                problems.add(shown, "oversized", oversized_message(exc.size))
                other.append(shown)
                continue
            except OSError as exc:
                problems.add(shown, "unreadable", f"cannot read: {exc.strerror}")
                continue
            letta = src.layout in LETTA_LAYOUTS and rel.endswith(".md")
            text = decode(data, as_letta=letta)
            if text is None:
                problems.add(shown, "binary", "not UTF-8 text (binary content); not read")
                continue
            note = letta_text_note(data) if letta else None
            if note is not None:
                problems.add(shown, *note)
            texts[shown] = (text, _git.git_blob_id(data))
    return texts, other


def substrate_inputs(texts: dict[str, tuple[str, str]]) -> dict[str, str]:
    # Keys are '.elfmem/memory/...' or, when .elfmem is the repo, 'memory/...'; both are what
    # parse_substrate places.
    return {p: t for p, (t, _sha) in texts.items()}
