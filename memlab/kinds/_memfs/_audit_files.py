"""Tables of the files at the audited commit: files over their limit now, files Letta Code and
the Letta server read differently, and folders that copy another folder."""

from __future__ import annotations

import pandas as pd

from memlab.formats import letta_memfs as fmt

__all__ = ["readers", "over_limit_table", "duplicate_trees"]


def readers(files: pd.DataFrame) -> pd.DataFrame:
    """Files Letta Code and the Letta server read differently (one row per file)."""
    cols = [
        "path",
        "description",
        "client_description",
        "server_description",
        "yaml_ok",
        "server_whole_file",
        "server_value_chars",
        "body_chars",
    ]
    if files.empty or "readers_agree" not in files:
        return pd.DataFrame(columns=cols)
    return files.loc[~files["readers_agree"].fillna(True), cols].reset_index(drop=True)


def over_limit_table(files: pd.DataFrame) -> pd.DataFrame:
    over = files[files["over_limit"].fillna(False)]
    limit = over["limit"].fillna(fmt.DEFAULT_LIMIT).astype("Int64")
    out = pd.DataFrame(
        {
            "path": over["path"],
            "label": over["label"],
            "in_prompt": over["in_prompt"],
            "limit": limit,
            "body_chars": over["body_chars"],
        }
    ).reset_index(drop=True)
    out["over_by"] = (out["body_chars"] - out["limit"]).astype("Int64")
    # ``limit: 0`` is a bad_limit problem row; nothing fits it, but a ratio to it means nothing.
    out["ratio"] = out["body_chars"].astype("float64") / out["limit"].astype("float64").where(
        out["limit"] > 0
    )
    return out.sort_values("ratio", ascending=False).reset_index(drop=True)


def duplicate_trees(files: pd.DataFrame, *, min_files: int = 2) -> pd.DataFrame:
    """Folders whose files are byte-identical copies of another folder's (same relative paths).

    Pairs every two files with the same blob; what is left of their paths after the longest
    common tail is a pair of folders (``agents/a1/`` and the root, say). A pair holding at
    least ``min_files`` identical files is one row: ``tree`` (the copy, the deeper folder),
    ``copy_of``, ``identical_files``, ``files_in_tree`` and ``share`` (identical / files in tree).
    """
    cols = ["tree", "copy_of", "identical_files", "files_in_tree", "share", "examples"]
    if files.empty or "blob_sha" not in files:
        return pd.DataFrame(columns=cols)
    paths = files["path"].astype(str).tolist()
    pairs: dict[tuple[str, str], list[str]] = {}
    for _, group in files.groupby("blob_sha", observed=True):
        same = sorted(group["path"].astype(str))
        for i, a in enumerate(same):
            for b in same[i + 1 :]:
                pa, pb = a.split("/"), b.split("/")
                n = 0
                while n < min(len(pa), len(pb)) and pa[-1 - n] == pb[-1 - n]:
                    n += 1
                if n == 0:
                    continue  # different file names: not a copied tree
                da, db = "/".join(pa[:-n]), "/".join(pb[:-n])
                da, db = (da + "/" if da else ""), (db + "/" if db else "")
                if da == db:
                    continue
                # The deeper (or later) folder is the copy.
                tree, orig = (da, db) if (da.count("/"), da) > (db.count("/"), db) else (db, da)
                pairs.setdefault((tree, orig), []).append("/".join(pa[-n:]))
    rows = []
    for (tree, orig), rels in pairs.items():
        if len(set(rels)) < min_files:
            continue
        in_tree = sum(1 for p in paths if p.startswith(tree)) if tree else len(paths)
        rows.append(
            {
                "tree": tree or "(root)",
                "copy_of": orig or "(root)",
                "identical_files": len(set(rels)),
                "files_in_tree": in_tree,
                "share": len(set(rels)) / in_tree if in_tree else 0.0,
                "examples": ", ".join(sorted(set(rels))[:3]),
            }
        )
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values("identical_files", ascending=False).reset_index(drop=True)
