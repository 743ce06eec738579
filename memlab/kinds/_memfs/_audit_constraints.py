"""The memfs audit's Letta Code 0.34.12 constraints: what ``.memfs.config.json``, the v2 layout
and the validator Letta Code installs would refuse, at the audited commit and over history.

* :func:`constraints_table`: one row per line Letta Code prints for the commit. ``check`` is
  ``validator`` (``letta-memory-constraints.cjs --audit``, what ``validateMemoryConstraintsHead``
  reports: indexes, depth, per-file and core-total characters, the config's own errors) or
  ``frontmatter`` (the v2 pre-commit hook's whole-tree check of ``name`` and ``description``,
  which blocks the next commit of any file). A tree-wide error has path ``core memory``.
* :func:`constraint_history`: the validator over every commit of the ref's first-parent chain,
  each commit against its parent (as the hook ran it): which commit first broke each rule on
  each path, and which fixed it.

Both follow the checkout's layout policy (``meta["layout_policy"]``, read by the loader as
``memoryLayoutPolicy`` reads it). The rules are :mod:`memlab.formats.letta_memfs`'s port.
"""

from __future__ import annotations

import pandas as pd

from memlab.constants import MAX_FILE_BYTES
from memlab.formats import letta_memfs as fmt
from memlab.kinds._memfs._load import LETTA_LAYOUTS
from memlab.sources import _git
from memlab.store import Store, empty_frame

__all__ = [
    "constraints_table",
    "constraint_history",
    "CONSTRAINT_COLUMNS",
    "CONSTRAINT_HISTORY_COLUMNS",
    "constraints_apply",
]

CONSTRAINT_COLUMNS = {
    "path": "string",
    "rule": "category",
    "check": "category",
    "message": "string",
    "policy": "category",
}
CONSTRAINT_HISTORY_COLUMNS = {
    "path": "string",
    "rule": "category",
    "first_sha": "string",
    "first_at": "datetime64[ns, UTC]",
    "author_name": "string",
    "author_kind": "category",
    "message": "string",
    "commits": "Int64",
    "fixed_sha": "string",
    "fixed_at": "datetime64[ns, UTC]",
    "at_ref": "boolean",
}


def constraints_apply(store: Store) -> bool:
    """Letta Code validates Letta layouts only; a generic tree, Souveraine dir or elfmem
    substrate has no such rules (its constraints are not checked: the tables are empty and the
    headline null)."""
    return store.meta.get("layout") in LETTA_LAYOUTS and bool(store.meta.get("ref_sha"))


def _tree(repo, commit: str, uncounted: list[str]) -> list[fmt.TreeFile]:
    """The commit's tree as the validator reads it: every entry with its mode and blob id, the
    bytes of ``.md`` files and of the config (up to memlab's read cap)."""
    entries = _git.ls_tree(repo, commit)
    wanted = {
        e.sha
        for e in entries
        if e.type == "blob"
        and (e.size or 0) <= MAX_FILE_BYTES
        and (e.path.endswith(".md") or e.path == fmt.CONSTRAINTS_CONFIG)
    }
    data = _git.read_blobs(repo, wanted, max_bytes=MAX_FILE_BYTES)
    out = []
    for e in entries:
        out.append(fmt.TreeFile(e.path, e.mode, data.get(e.sha), sha=e.sha))
    return out


def _frame(rows: list[dict], columns: dict[str, str]) -> pd.DataFrame:
    if not rows:
        return empty_frame(columns)
    df = pd.DataFrame(rows, columns=list(columns))
    return df.astype(columns)


def constraints_table(store: Store, commit: str | None) -> tuple[pd.DataFrame, list[str]]:
    """Letta Code's verdict on the tree of ``commit``: rows, and the paths whose size could not
    be judged (over memlab's read cap). The frame's ``attrs["checked"]`` is False when nothing
    was checked (not a Letta layout, or no commit at the audited time)."""
    if not constraints_apply(store) or not commit:
        out = empty_frame(CONSTRAINT_COLUMNS)
        out.attrs["checked"] = False
        return out, []
    repo = store.meta["repo"]
    policy = store.meta.get("layout_policy") or "legacy-only"
    uncounted: list[str] = []
    files = _tree(repo, commit, uncounted)
    rows = []
    for line in fmt.validator_errors(
        files, policy=policy, accepted=None, audit=True, uncounted=uncounted
    ):
        rows.append(
            {
                "path": line.path,
                "rule": line.rule,
                "check": "validator",
                "message": str(line),
                "policy": policy,
            }
        )
    v2 = policy == "shared-memory" or (
        policy == "root-marker" and any(f.path == fmt.ROOT_INDEX for f in files)
    )
    if v2:
        texts = {f.path: f.data for f in files if f.path.endswith(".md")}
        for path in fmt.frontmatter_paths(texts, policy):
            data = texts[path]
            if data is None:
                uncounted.append(path)
                continue
            for text in fmt.frontmatter_errors(
                path, data.decode("utf-8", "replace"), None, fmt="memfs-v2"
            ):
                rows.append(
                    {
                        "path": path,
                        "rule": fmt.frontmatter_rule(text, path),
                        "check": "frontmatter",
                        "message": text,
                        "policy": policy,
                    }
                )
    out = _frame(rows, CONSTRAINT_COLUMNS)
    out.attrs["checked"] = True
    return out, sorted(set(uncounted))


def constraint_history(
    store: Store, versions: pd.DataFrame | None, chain: list[str]
) -> pd.DataFrame:
    """The validator over each commit of ``chain`` (the ref's first-parent chain, oldest
    first), each against its parent, under the checkout's policy: one row per (path, rule)
    with the commit that first broke it and the one that fixed it.

    Config changes are not flagged: a human approves one with
    ``LETTA_MEMORY_CONSTRAINTS_UPDATE=1``, which leaves no trace in git.
    """
    if not constraints_apply(store) or versions is None or not chain:
        return empty_frame(CONSTRAINT_HISTORY_COLUMNS)
    policy = store.meta.get("layout_policy") or "legacy-only"
    repo = store.meta["repo"]
    on_chain = set(chain)
    rows = versions[versions["sha"].isin(on_chain)]
    by_commit: dict[str, list] = {}
    for r in rows[["sha", "change_type", "old_path", "path", "new_blob", "new_mode"]].itertuples(
        index=False, name=None
    ):
        by_commit.setdefault(r[0], []).append(r[1:])
    wanted = set()
    for changes in by_commit.values():
        for _, _, path, blob, _ in changes:
            if isinstance(blob, str) and (path.endswith(".md") or path == fmt.CONSTRAINTS_CONFIG):
                wanted.add(blob)
    sizes = _git.blob_sizes(repo, sorted(wanted))
    data = _git.read_blobs(
        repo, [b for b in wanted if sizes.get(b, 0) <= MAX_FILE_BYTES], max_bytes=MAX_FILE_BYTES
    )
    chars = {sha: fmt.code_points(raw) for sha, raw in data.items()}
    commits = store.history.drop_duplicates("sha").set_index("sha")
    tree: dict[str, fmt.TreeFile] = {}
    open_: dict[tuple[str, str], dict] = {}
    out: list[dict] = []
    for sha in chain:
        parent = list(tree.values())
        had_root = fmt.ROOT_INDEX in tree
        for change, old_path, path, blob, mode in by_commit.get(sha, []):
            if change in ("D",):
                tree.pop(path, None)
                continue
            if change == "R" and isinstance(old_path, str):
                tree.pop(old_path, None)
            if not isinstance(blob, str):
                continue
            raw = data.get(blob) if path == fmt.CONSTRAINTS_CONFIG else None
            tree[path] = fmt.TreeFile(
                path,
                str(mode) if isinstance(mode, str) else "100644",
                raw,
                chars.get(blob),
                sha=blob,
            )
        lines = fmt.validator_errors(
            list(tree.values()),
            policy=policy,
            accepted=parent,
            audit=False,
            head_has_root=had_root,
            config_approved=True,
        )
        seen = set()
        for line in lines:
            key = (line.path, line.rule)
            seen.add(key)
            if key in open_:
                open_[key]["commits"] += 1
                continue
            who = commits.loc[sha] if sha in commits.index else None
            open_[key] = {
                "path": key[0],
                "rule": key[1],
                "first_sha": sha,
                "first_at": None if who is None else who["committed_at"],
                "author_name": None if who is None else who["author_name"],
                "author_kind": None if who is None else who["author_kind"],
                "message": line,
                "commits": 1,
                "fixed_sha": None,
                "fixed_at": None,
                "at_ref": True,
            }
        for key in [k for k in open_ if k not in seen]:
            row = open_.pop(key)
            who = commits.loc[sha] if sha in commits.index else None
            row.update(
                fixed_sha=sha, fixed_at=None if who is None else who["committed_at"], at_ref=False
            )
            out.append(row)
    out.extend(open_.values())
    df = _frame(
        out,
        {k: ("object" if "datetime" in v else v) for k, v in CONSTRAINT_HISTORY_COLUMNS.items()},
    )
    for col in ("first_at", "fixed_at"):
        df[col] = pd.to_datetime(df[col], utc=True)
    return df.sort_values(["first_at", "path"], kind="stable").reset_index(drop=True)
