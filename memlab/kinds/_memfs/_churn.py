"""Churn, authorship and growth: the memfs audit's tables of lines changed per file and week,
commits per author kind and per commit, bytes and prompt size along the ref's first-parent
chain, and the figure data pivoted from them."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab.audits._base import Audit
from memlab.constants import CHARS_PER_TOKEN
from memlab.formats import letta_memfs as fmt
from memlab.kinds._memfs._load import domain_of, is_memory_path
from memlab.kinds._memfs._prompt import prompt_share, rendered_chars
from memlab.store import Store

__all__ = [
    "churn_table",
    "churn_weekly_table",
    "author_kind_table",
    "commit_table",
    "first_parent_chain",
    "growth_tables",
    "size_over_time",
    "commits_by_kind",
    "churn_matrix",
]


def _file_rows(hist: pd.DataFrame) -> pd.DataFrame:
    rows = hist[hist["path"].notna() & (hist["parents"].map(len) < 2)]
    return rows


def churn_table(hist: pd.DataFrame, layout: str) -> pd.DataFrame:
    rows = _file_rows(hist)
    if rows.empty:
        return pd.DataFrame(
            columns=[
                "path",
                "domain",
                "memory",
                "commits",
                "lines_added",
                "lines_deleted",
                "churn",
                "first_change",
                "last_change",
                "authors",
            ]
        )
    g = rows.groupby("path", observed=True)
    out = g.agg(
        commits=("sha", "nunique"),
        lines_added=("lines_added", "sum"),
        lines_deleted=("lines_deleted", "sum"),
        first_change=("authored_at", "min"),
        last_change=("authored_at", "max"),
        authors=("author_email", "nunique"),
    ).reset_index()
    out["churn"] = (out["lines_added"] + out["lines_deleted"]).astype("Int64")
    kinds = rows.pivot_table(
        index="path",
        columns="author_kind",
        values="sha",
        aggfunc="nunique",
        observed=True,
        fill_value=0,
    )
    kinds.columns = [f"commits_{c}" for c in kinds.columns]
    out = out.merge(kinds.reset_index(), on="path", how="left")
    out.insert(1, "domain", [domain_of(p, layout) for p in out["path"]])
    out["domain"] = out["domain"].astype("category")
    out.insert(
        2, "memory", pd.array([is_memory_path(p, layout) for p in out["path"]], dtype="boolean")
    )
    return out.sort_values(["churn", "commits"], ascending=False).reset_index(drop=True)


def churn_weekly_table(hist: pd.DataFrame, layout: str) -> pd.DataFrame:
    rows = _file_rows(hist)
    if rows.empty:
        return pd.DataFrame(columns=["week", "path", "domain", "memory", "commits", "churn"])
    week = (
        rows["authored_at"]
        .dt.tz_convert(None)
        .dt.to_period("W")
        .dt.start_time.dt.tz_localize("UTC")
    )
    churn = (rows["lines_added"].fillna(0) + rows["lines_deleted"].fillna(0)).astype("int64")
    frame = pd.DataFrame({"week": week, "path": rows["path"], "sha": rows["sha"], "churn": churn})
    out = (
        frame.groupby(["week", "path"], observed=True)
        .agg(commits=("sha", "nunique"), churn=("churn", "sum"))
        .reset_index()
    )
    out.insert(2, "domain", [domain_of(p, layout) for p in out["path"]])
    out.insert(
        3, "memory", pd.array([is_memory_path(p, layout) for p in out["path"]], dtype="boolean")
    )
    return out


def author_kind_table(hist: pd.DataFrame) -> pd.DataFrame:
    if hist.empty:
        return pd.DataFrame(
            columns=[
                "author_kind",
                "commits",
                "authors",
                "files",
                "lines_added",
                "lines_deleted",
                "first",
                "last",
            ]
        )
    g = hist.groupby("author_kind", observed=True)
    out = g.agg(
        commits=("sha", "nunique"),
        authors=("author_email", "nunique"),
        files=("path", "nunique"),
        lines_added=("lines_added", "sum"),
        lines_deleted=("lines_deleted", "sum"),
        first=("authored_at", "min"),
        last=("authored_at", "max"),
    ).reset_index()
    out["author_kind"] = out["author_kind"].astype("string")
    return out.sort_values("commits", ascending=False).reset_index(drop=True)


def commit_table(hist: pd.DataFrame) -> pd.DataFrame:
    """One row per commit: who, when, where, how much, and whether it bypassed the hook."""
    cols = [
        "sha",
        "authored_at",
        "author_name",
        "author_email",
        "author_kind",
        "branch",
        "message",
        "merge",
        "files",
        "lines_added",
        "lines_deleted",
        "no_verify_suspect",
    ]
    if hist.empty:
        return pd.DataFrame(columns=cols)
    g = hist.groupby("sha", sort=False, observed=True)
    out = g.agg(
        authored_at=("authored_at", "first"),
        author_name=("author_name", "first"),
        author_email=("author_email", "first"),
        author_kind=("author_kind", "first"),
        branch=("branch", "first"),
        message=("message", "first"),
        merge=("parents", lambda p: len(p.iloc[0]) > 1),
        files=("path", "count"),
        lines_added=("lines_added", "sum"),
        lines_deleted=("lines_deleted", "sum"),
        no_verify_suspect=("no_verify_suspect", lambda v: bool(v.fillna(False).any())),
    )
    out = out.reset_index()[cols].sort_values("authored_at").reset_index(drop=True)
    out["merge"] = out["merge"].astype("boolean")
    out["no_verify_suspect"] = out["no_verify_suspect"].astype("boolean")
    return out


def first_parent_chain(store: Store, hist: pd.DataFrame) -> list[str]:
    """The ref's first-parent chain, oldest first (only commits in ``hist``)."""
    start = store.meta.get("ref_sha")
    if not start or hist.empty:
        return []
    parents = dict(zip(hist["sha"], hist["parents"]))
    chain = []
    cur = start
    # With as_of, the ref's newest commits are not in hist: start at the newest one that is.
    if cur not in parents:
        full = dict(zip(store.history["sha"], store.history["parents"]))
        while cur is not None and cur not in parents:
            ps = full.get(cur)
            cur = ps[0] if ps else None
    seen = set()
    while cur is not None and cur in parents and cur not in seen:
        seen.add(cur)
        chain.append(cur)
        ps = parents[cur]
        cur = ps[0] if ps else None
    return chain[::-1]


def growth_tables(versions, chain, hist, parse, layout, agent) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bytes per domain (memory files apart from other files) and the prompt size at every
    commit of the chain, by replaying its diffs; the prompt size adds :func:`prompt_share`."""
    size_cols = ["sha", "committed_at", "domain", "memory", "bytes", "files"]
    prompt_cols = [
        "sha",
        "committed_at",
        "prompt_files",
        "prompt_listed",
        "prompt_chars",
        "prompt_tokens",
    ]
    if versions is None or versions.empty or not chain:
        return _empty(size_cols), _empty(prompt_cols)
    agent_files: set[Any] = {
        b.get("file") for b in (agent or {}).get("blocks") or [] if isinstance(b, dict)
    }
    when = dict(zip(hist["sha"], hist["committed_at"]))
    by_sha = {sha: g for sha, g in versions.groupby("sha", sort=False)}
    # path -> ((domain, memory), bytes, prompt kind, prompt chars)
    state: dict[str, tuple[tuple[str, bool], int, str | None, int]] = {}
    group_bytes: dict[tuple[str, bool], int] = {}
    group_files: dict[tuple[str, bool], int] = {}
    shown = {"full": 0, "listed": 0}
    prompt_chars = 0
    size_rows, prompt_rows = [], []

    def drop(path: str) -> None:
        nonlocal prompt_chars
        old = state.pop(path, None)
        if old is None:
            return
        group_bytes[old[0]] -= old[1]
        group_files[old[0]] -= 1
        if old[2] is not None:
            shown[old[2]] -= 1
            prompt_chars -= old[3]

    for sha in chain:
        for v in by_sha[sha].itertuples(index=False) if sha in by_sha else ():
            if isinstance(v.old_path, str):
                drop(v.old_path)
            drop(v.path)
            if str(v.change_type) == "D":
                continue
            group = (domain_of(v.path, layout), is_memory_path(v.path, layout))
            nbytes = int(v.new_bytes) if pd.notna(v.new_bytes) else 0
            kind, chars = prompt_share(v.path, layout, None, None, agent_files=agent_files)
            if kind == "full":
                fm = parse(v.new_blob, v.new_text)
                if fm is None:
                    kind, chars = None, 0
                else:
                    chars = rendered_chars(len(fm.body), fm.description)
            state[v.path] = (group, nbytes, kind, chars)
            group_bytes[group] = group_bytes.get(group, 0) + nbytes
            group_files[group] = group_files.get(group, 0) + 1
            if kind is not None:
                shown[kind] += 1
                prompt_chars += chars
        t = when.get(sha)
        for (domain, memory), nbytes in group_bytes.items():
            if group_files[(domain, memory)] > 0:
                size_rows.append((sha, t, domain, memory, nbytes, group_files[(domain, memory)]))
        prompt_rows.append(
            (sha, t, shown["full"], shown["listed"], prompt_chars, prompt_chars / CHARS_PER_TOKEN)
        )
    sizes = pd.DataFrame(size_rows, columns=size_cols)
    prompts = pd.DataFrame(prompt_rows, columns=prompt_cols)
    for df in (sizes, prompts):
        df["committed_at"] = pd.to_datetime(df["committed_at"], utc=True).astype(
            "datetime64[ns, UTC]"
        )
    return sizes, prompts


def _empty(cols: list[str]) -> pd.DataFrame:
    return pd.DataFrame(columns=cols)


# --------------------------------------------------------------------------- figure data


def size_over_time(audit: Audit, *, memory: bool | None = True) -> pd.DataFrame:
    """Bytes per domain (columns) at each commit of the ref's first-parent chain (index: time).

    ``memory=True`` counts memory files only (:func:`~memlab.kinds._memfs._load.is_memory_path`),
    ``False`` the other files (images, code, JSON...), ``None`` both.
    """
    sizes = audit["size_by_domain"]
    if memory is not None and len(sizes):
        sizes = sizes[sizes["memory"] == memory]
    if sizes.empty:
        return pd.DataFrame()
    # A domain with no row at a commit had no files then: 0 bytes, not "unchanged".
    table = sizes.pivot_table(
        index=["committed_at", "sha"],
        columns="domain",
        values="bytes",
        aggfunc="sum",
        observed=True,
        sort=False,
    ).fillna(0)
    table = table.droplevel("sha")
    return table.groupby(level=0, sort=True).last()


def commits_by_kind(audit: Audit, freq: str = "W") -> pd.DataFrame:
    """Commits per period (index) and author kind (columns, all five kinds)."""
    commits = audit["commits"]
    if commits.empty:
        return pd.DataFrame(columns=list(fmt.AUTHOR_KINDS))
    period = commits["authored_at"].dt.tz_convert(None).dt.to_period(freq).dt.start_time
    table = pd.crosstab(period, commits["author_kind"].astype("string"))
    return table.reindex(columns=list(fmt.AUTHOR_KINDS), fill_value=0).rename_axis(index="period")


def churn_matrix(audit: Audit, top: int = 25, *, memory: bool | None = True) -> pd.DataFrame:
    """Lines changed per file (rows, the ``top`` most churned) and week (columns); memory files
    only by default (``memory=False``: other files, ``None``: all)."""
    weekly = audit["churn_weekly"]
    churn = audit["churn"]
    if memory is not None and len(churn):
        churn = churn[churn["memory"] == memory]
    if weekly.empty or churn.empty:
        return pd.DataFrame()
    keep = churn["path"].head(top).tolist()
    table = weekly[weekly["path"].isin(keep)].pivot_table(
        index="path", columns="week", values="churn", aggfunc="sum", fill_value=0
    )
    table.columns = [c.strftime("%Y-%m-%d") for c in table.columns]
    return table.reindex(keep).fillna(0).astype("int64")
