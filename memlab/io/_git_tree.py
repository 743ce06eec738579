"""The one parser of ``git ls-tree -z`` output, and the one rule for a name that is not UTF-8.

Git stores a path as bytes. Every listing memlab reads (:func:`memlab._git.tree_entries`, the
loaders' :func:`memlab.sources._git_repo.ls_tree`, the standalone migration plan script) is parsed
here into :class:`TreeRecord` rows that keep those bytes, and names them by one rule,
:func:`tree_name`: UTF-8 with ``surrogateescape`` (what :func:`os.fsdecode` does on Linux). It
is lossless, so a tree memlab writes back (a review's apply, a migration) has the very bytes git
listed; where a name is shown (a loader's ``path`` column), :func:`shown_name` replaces each
undecodable byte with U+FFFD, the same text ``bytes.decode("utf-8", "replace")`` gives.
Git's own C-style quoting is not used: ``-z`` turns it off, so no name needs unquoting.

Standard library only, and no import from memlab: the plan script embeds this module's source
(:func:`memlab.migrations._script.writer_source`).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["TreeRecord", "parse_ls_tree", "tree_name", "shown_name"]


class TreeRecord(NamedTuple):
    """One entry of ``git ls-tree -z`` (``--long``: ``size`` is set, None for ``-``)."""

    mode: str
    type: str  # blob / tree / commit (a submodule)
    sha: str
    size: int | None
    raw: bytes  # the name exactly as git stores it


def tree_name(raw: bytes) -> str:
    """A path git listed as text: UTF-8, each undecodable byte kept as a lone surrogate
    (``surrogateescape``), so ``tree_name(raw).encode("utf-8", "surrogateescape") == raw``."""
    return raw.decode("utf-8", "surrogateescape")


def shown_name(name: str) -> str:
    """A :func:`tree_name` as text can show it: each undecodable byte as U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def parse_ls_tree(out: bytes, *, long: bool = False) -> list[TreeRecord]:
    """The records of ``git ls-tree -z`` output (``long``: it was run with ``--long``)."""
    records = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, raw = rec.partition(b"\t")
        if long:
            mode, typ, sha, size = meta.split(None, 3)
            n = None if size.strip() == b"-" else int(size)
        else:
            mode, typ, sha = meta.split()
            n = None
        records.append(
            TreeRecord(mode.decode("ascii"), typ.decode("ascii"), sha.decode("ascii"), n, raw)
        )
    return records
