"""The one git object and commit writer: how memlab frames, hashes, stores and commits git
objects, for ``memlab migrate`` (:mod:`memlab.migrations._apply`, its plan and its Letta server
history replay), ``memlab apply`` (:mod:`memlab.reviews._apply`, through :mod:`memlab._git`),
the working-tree hashes of :mod:`memlab.sources._git_worktree`, and the standalone migration
plan script, which embeds this module's source as it is (:mod:`memlab.migrations._script`).

A migration is decided completely before anything touches the disk: every file's bytes, every
commit's message, author and date. Hashing the objects here (the framing git uses) gives the
commit ids in advance, so the direct apply, the plan script and the idempotency check are all
compared against one expected value. Objects are written as loose objects from Python: no git
process runs, so nothing a repository's config names can run either.

Standard library only, and no import from memlab but the standard-library-only
:mod:`memlab.io._atomic`, which the plan script embeds before this module.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from memlab.io._atomic import write_atomic

__all__ = [
    "BLOB_MODE",
    "TREE_MODE",
    "object_header",
    "object_bytes",
    "object_hasher",
    "object_sha",
    "blob_sha",
    "write_loose",
    "tree_body",
    "build_trees",
    "Signature",
    "normalise_message",
    "commit_body",
    "commit_files",
]

BLOB_MODE = "100644"
TREE_MODE = "40000"


def object_header(kind: str, size: int) -> bytes:
    """The header git hashes and stores before an object's body: ``<kind> <size>\\0``."""
    return f"{kind} {size}".encode("ascii") + b"\0"


def object_bytes(kind: str, body: bytes) -> bytes:
    """A whole loose object as git hashes it: header, then body."""
    return object_header(kind, len(body)) + body


def object_hasher(kind: str, size: int, *, sha256: bool = False):
    """A hashlib object fed the header of a ``size``-byte object; feed it the body (in pieces,
    for a large file) and take ``hexdigest()``. ``sha256``: a SHA-256 repository's ids."""
    h = hashlib.sha256() if sha256 else hashlib.sha1()
    h.update(object_header(kind, size))
    return h


def object_sha(kind: str, body: bytes, *, sha256: bool = False) -> str:
    """The id git gives an object (``git hash-object -t <kind>`` without ``-w`` or filters)."""
    h = object_hasher(kind, len(body), sha256=sha256)
    h.update(body)
    return h.hexdigest()


def blob_sha(data: bytes, *, sha256: bool = False) -> str:
    return object_sha("blob", data, sha256=sha256)


def write_loose(objects: str | os.PathLike, kind: str, body: bytes, *, sha256: bool = False) -> str:
    """Store one loose object under the objects folder ``objects``; its id. Atomic
    (:func:`memlab.io.write_atomic`); an object already there is left alone."""
    raw = object_bytes(kind, body)
    sha = (hashlib.sha256(raw) if sha256 else hashlib.sha1(raw)).hexdigest()
    folder = os.path.join(os.fspath(objects), sha[:2])
    target = os.path.join(folder, sha[2:])
    if os.path.exists(target):
        return sha
    os.makedirs(folder, exist_ok=True)
    # git's own temp name for an object, so git's prune removes one a crash left behind
    write_atomic(target, zlib.compress(raw, 1), mode=0o444, prefix="tmp_obj_")
    return sha


def _tree_sort_key(entry: tuple[str, str, str]) -> bytes:
    mode, name, _ = entry
    # git orders a subtree as if its name ended in "/", so "a.md" sorts before "a/".
    raw = name.encode("utf-8", "surrogateescape")
    return raw + b"/" if mode == TREE_MODE else raw


def tree_body(entries: Iterable[tuple[str, str, str]]) -> bytes:
    """Serialise ``(mode, name, hex sha)`` entries in git's canonical order."""
    out = bytearray()
    for mode, name, sha in sorted(entries, key=_tree_sort_key):
        out += f"{mode} {name}".encode("utf-8", "surrogateescape") + b"\0" + bytes.fromhex(sha)
    return bytes(out)


def build_trees(
    flat: Mapping[str, tuple[str, str]],
    store: Callable[[str, bytes], str] | None = None,
    *,
    sha256: bool = False,
) -> str:
    """Hash (and optionally store) the nested trees for ``{path: (mode, blob sha)}``.

    ``store(kind, body)`` is called for every tree object, children first, and must return the
    object's hex sha; without it the trees are only hashed. Returns the root tree's sha.
    ValueError when a file and a folder share a name.
    """
    root: dict = {}
    for path, (mode, sha) in flat.items():
        parts = path.split("/")
        node = root
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"{path}: a file and a folder share the name {part!r}")
        if isinstance(node.get(parts[-1]), dict):
            raise ValueError(f"{path}: a file and a folder share this name")
        node[parts[-1]] = (mode, sha)

    def _emit(node: dict) -> str:
        entries = []
        for name, child in node.items():
            if isinstance(child, dict):
                entries.append((TREE_MODE, name, _emit(child)))
            else:
                entries.append((child[0], name, child[1]))
        body = tree_body(entries)
        return store("tree", body) if store is not None else object_sha("tree", body, sha256=sha256)

    return _emit(root)


@dataclass(frozen=True)
class Signature:
    """A commit's author and committer: name, email, seconds since the epoch and the offset
    from UTC in minutes (``+0000`` unless given)."""

    name: str
    email: str
    timestamp: int
    offset: int = 0

    def line(self) -> str:
        sign = "-" if self.offset < 0 else "+"
        hours, minutes = divmod(abs(self.offset), 60)
        return f"{self.name} <{self.email}> {self.timestamp} {sign}{hours:02d}{minutes:02d}"


def normalise_message(message: str) -> str:
    """Exactly one trailing newline: how every commit :func:`commit_files` makes ends its
    message (``git commit-tree -F`` itself stores a message byte for byte)."""
    return message.rstrip("\n") + "\n"


def commit_body(tree: str, parents: Iterable[str], signature: Signature, message: str) -> bytes:
    """A commit object exactly as ``git commit-tree -F`` writes it for this message (kept byte
    for byte; no signature, UTF-8) with ``signature`` as author and committer."""
    lines = [f"tree {tree}"]
    lines += [f"parent {p}" for p in parents]
    lines.append(f"author {signature.line()}")
    lines.append(f"committer {signature.line()}")
    return ("\n".join(lines) + "\n\n" + message).encode("utf-8")


def commit_files(
    store: Callable[[str, bytes], str],
    flat: dict[str, tuple[str, str]],
    files: Iterable[tuple[str, bytes | None]],
    parent: str | None,
    signature: Signature,
    message: str,
    *,
    modes: Mapping[str, str] | None = None,
) -> tuple[str, str]:
    """One commit on top of ``parent`` whose tree is ``flat`` (``{path: (mode, sha)}``, the
    parent's, updated in place) with ``files`` written (``(path, bytes)``; bytes None removes
    the path); every blob, tree and the commit go through ``store``. The message is stored
    with exactly one trailing newline (:func:`normalise_message`). ``(tree, commit)``."""
    for path, data in files:
        if data is None:
            flat.pop(path, None)
        else:
            flat[path] = ((modes or {}).get(path, BLOB_MODE), store("blob", data))
    tree = build_trees(flat, store=store)
    commit = store(
        "commit",
        commit_body(tree, [parent] if parent else [], signature, normalise_message(message)),
    )
    return tree, commit
