"""Git objects computed in Python: blob, tree and commit hashes for a planned migration.

A migration is decided completely before anything touches the disk: every file's bytes, every
commit's message, author and date. Hashing the objects here (the same SHA-1 framing git uses)
gives the commit ids in advance, so the direct apply, the standalone plan script and the
idempotency check can all be compared against one expected value instead of against each other.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

BLOB_MODE = "100644"
TREE_MODE = "40000"


def object_bytes(kind: str, body: bytes) -> bytes:
    """The loose-object framing git hashes: ``<kind> <size>\\0<body>``."""
    return f"{kind} {len(body)}".encode("ascii") + b"\0" + body


def object_sha(kind: str, body: bytes) -> str:
    return hashlib.sha1(object_bytes(kind, body)).hexdigest()


def blob_sha(data: bytes) -> str:
    return object_sha("blob", data)


def _tree_sort_key(entry: tuple[str, str, str]) -> bytes:
    mode, name, _ = entry
    # git orders a subtree as if its name ended in "/", so "a.md" sorts before "a/".
    raw = name.encode("utf-8")
    return raw + b"/" if mode == TREE_MODE else raw


def tree_body(entries: Iterable[tuple[str, str, str]]) -> bytes:
    """Serialise ``(mode, name, hex sha)`` entries in git's canonical order."""
    out = bytearray()
    for mode, name, sha in sorted(entries, key=_tree_sort_key):
        out += f"{mode} {name}".encode("utf-8") + b"\0" + bytes.fromhex(sha)
    return bytes(out)


def build_trees(flat: Mapping[str, tuple[str, str]],
                store: Callable[[str, bytes], str] | None = None) -> str:
    """Hash (and optionally store) the nested trees for ``{path: (mode, blob sha)}``.

    ``store(kind, body)`` is called for every tree object, children first, and must return the
    object's hex sha; without it the trees are only hashed. Returns the root tree's sha.
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
        return store("tree", body) if store is not None else object_sha("tree", body)

    return _emit(root)


@dataclass(frozen=True)
class Signature:
    """Author and committer of every migration commit; fixed so commits are reproducible."""

    name: str
    email: str
    timestamp: int  # seconds since the epoch, UTC

    def line(self) -> str:
        return f"{self.name} <{self.email}> {self.timestamp} +0000"


def commit_body(tree: str, parents: Iterable[str], signature: Signature, message: str) -> bytes:
    """A commit object exactly as ``git commit-tree -F`` writes it (no signature, UTF-8)."""
    lines = [f"tree {tree}"]
    lines += [f"parent {p}" for p in parents]
    lines.append(f"author {signature.line()}")
    lines.append(f"committer {signature.line()}")
    return ("\n".join(lines) + "\n\n" + normalise_message(message)).encode("utf-8")


def normalise_message(message: str) -> str:
    """One trailing newline, as ``git commit-tree -F`` stores a message read from a file."""
    return message.rstrip("\n") + "\n"
