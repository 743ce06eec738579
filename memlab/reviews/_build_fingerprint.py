"""What a proposal records of the store so apply can tell it is unchanged: a block's text
digest, a git store's HEAD and blobs, a one-file store's sha256 and size."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from memlab.store import Store

__all__ = ["text_sha256", "git_fingerprint", "file_fingerprint"]


def text_sha256(text: str) -> str:
    """The digest an elfmem apply script checks a block's content against before changing it."""
    return hashlib.sha256(str(text).encode("utf-8")).hexdigest()


def git_fingerprint(store: Store, repo: Any, touched: set[str]) -> dict[str, Any]:
    """A proposal's fingerprint for a store applied by a commit: HEAD and the blobs of the files
    it changes."""
    if repo is None:
        return {"head_sha": None, "note": "not a git repository: apply is unavailable"}
    files = store.files
    blobs = dict(zip(files["path"].astype(str), files["blob_sha"].astype(str)))
    return {
        "repo": str(Path(repo.working_tree_dir).resolve()),
        "head_sha": store.meta.get("head_sha"),
        "branch": store.meta.get("branch"),
        "files": {p: blobs.get(p) for p in sorted(touched)},
    }


def file_fingerprint(store: Store) -> dict[str, Any]:
    """A proposal's fingerprint for a store that is one file: its sha256 and size."""
    return {
        "sha256": _file_sha256(Path(store.path)),
        "bytes": _size(Path(store.path)),
    }


def _file_sha256(path: Path) -> str | None:
    if not path.is_file():
        return None
    h = hashlib.sha256()
    for p in (path, path.with_name(path.name + "-wal")):
        if p.is_file():
            with p.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def _size(path: Path) -> int | None:
    return path.stat().st_size if path.is_file() else None
