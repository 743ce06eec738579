"""The parity rows every migration check writes (:class:`ParityRows`), and reading a migrated
copy's repositories, checked-out views and side files: what :mod:`memlab.migrations._verify` and
the per-target checks (:mod:`._verify_letta`, :mod:`._verify_v2`,
:mod:`memlab.kinds.letta_memfs._upgrade`, and a Letta server's,
:mod:`memlab.kinds.letta_server._migrate`) share.
"""

from __future__ import annotations

import json
import math
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from memlab._files import walk
from memlab.errors import MigrationError
from memlab.migrations import _elfmem, _letta
from memlab.migrations._apply import is_git_repo
from memlab.sources._git import read_blobs
from memlab.store import Store

__all__ = [
    "PARITY_COLUMNS",
    "ParityRows",
    "short_text",
    "repos_at",
    "checkout_view",
    "side_record_row",
    "side_texts",
    "normal_value",
]

PARITY_COLUMNS = {
    "check": "category",
    "item": "string",
    "repo": "string",
    "path": "string",
    "expected": "string",
    "actual": "string",
    "ok": "boolean",
    "detail": "string",
}


def short_text(value: Any, n: int = 120) -> str | None:
    if value is None:
        return None
    text = (
        value
        if isinstance(value, str)
        else json.dumps(
            _elfmem.value_or_none(value) if not isinstance(value, (list, dict, tuple)) else value,
            sort_keys=True,
            default=str,
            ensure_ascii=False,
        )
    )
    return text if len(text) <= n else text[: n - 1] + "…"


class ParityRows:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(
        self,
        check: str,
        item: Any,
        expected: Any,
        actual: Any,
        *,
        ok: bool | None = None,
        repo: str = "",
        path: str | None = None,
        detail: str | None = None,
    ) -> None:
        if ok is None:
            ok = _same(expected, actual)
        self.rows.append(
            {
                "check": check,
                "item": None if item is None else str(item),
                "repo": repo,
                "path": path,
                "expected": short_text(expected),
                "actual": short_text(actual),
                "ok": ok,
                "detail": detail,
            }
        )

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(self.rows, columns=list(PARITY_COLUMNS))
        for col, dtype in PARITY_COLUMNS.items():
            df[col] = (
                df[col].astype("string").astype("category")
                if dtype == "category"
                else df[col].astype(dtype)
            )
        return df


def _same(a: Any, b: Any) -> bool:
    a, b = normal_value(a), normal_value(b)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)
    return a == b


def normal_value(v: Any) -> Any:
    if isinstance(v, tuple):
        return [normal_value(x) for x in v]
    if isinstance(v, list):
        return [normal_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): normal_value(x) for k, x in v.items()}
    v = _elfmem.value_or_none(v)
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    return v


def repos_at(dest: Path) -> list[tuple[str, Path]]:
    """``[(subdir, folder)]``: the destination itself, or one repository per sub-folder."""
    if is_git_repo(dest) or not dest.is_dir():
        return [("", dest)]
    subs = sorted(p for p in dest.iterdir() if p.is_dir() and is_git_repo(p))
    return [(p.name, p) for p in subs] or [("", dest)]


@contextmanager
def checkout_view(repo: Path, ref: str | None) -> Iterator[Path]:
    """A folder holding ``ref``'s tree: the repository itself for HEAD, else a private copy.

    The memfs loader decides a layout from the checked-out tree, so a branch that is not
    checked out is exported (``git archive``, read-only) to a temporary folder and read there.
    """
    if ref is None:
        yield repo
        return
    from memlab import _git
    from memlab._tmp import private_tempdir

    with private_tempdir("verify") as tmp:
        # Blobs as stored (ls-tree + cat-file): unlike `git archive`, no smudge filter, no
        # export-subst, nothing the repository's attributes or config name can run.
        commit = _git.rev_parse(repo, ref)
        if commit is None:
            raise MigrationError(f"unknown ref {ref!r}", path=repo)
        files = {
            p: sha
            for p, (mode, sha) in _git.flat_tree(repo, commit).items()
            if mode in ("100644", "100755")
        }  # symlinks, submodules: not memory files
        blobs = read_blobs(repo, files.values())
        for path, sha in files.items():
            target = tmp / path
            if not target.resolve().is_relative_to(tmp.resolve()):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blobs.get(sha, b""))
        yield tmp


def side_record_row(
    rows: ParityRows, src: Store, src_row: dict, rec: dict | None, item: str, repo: str, path: str
) -> None:
    """The ``side_record`` row of one block: every source column a file cannot hold, as the
    side file keeps it."""
    want_side = {
        c: _letta.json_safe(src_row.get(c))
        for c in src.blocks.columns
        if c not in _letta.DERIVED_COLUMNS
    }
    have_side = {c: rec.get(c) for c in want_side} if rec else "missing"
    rows.add("side_record", item, want_side, have_side, repo=repo, path=path)


def side_texts(folder: Path, prefix: str) -> dict[str, str]:
    """Text of the committed (or exported) files under ``prefix``, read from the tree."""
    out: dict[str, str] = {}
    if is_git_repo(folder):
        from memlab import _git

        head = _git.rev_parse(folder, "HEAD")
        if head is None:
            return out
        files = {
            p: sha
            for p, (mode, sha) in _git.flat_tree(folder, head).items()
            if mode in ("100644", "100755") and p.startswith(prefix)
        }
        blobs = read_blobs(folder, files.values())
        for path, sha in files.items():
            # A damaged (non-UTF-8) side file must show as a difference, not crash verify.
            out[path] = blobs.get(sha, b"").decode("utf-8", "replace")
        return out
    base = folder / prefix
    if base.is_file():
        return {prefix: base.read_text(encoding="utf-8", errors="replace")}
    if base.is_dir():
        found = [Path(d, n) for d, _dirs, names in walk(base) for n in names]
        for p in sorted(found):
            if p.is_file():
                out[p.relative_to(folder).as_posix()] = p.read_text(
                    encoding="utf-8", errors="replace"
                )
    return out
