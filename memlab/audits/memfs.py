"""The memfs audit: hook breaches, limits, read-only files, churn, growth and the prompt.

For a Letta memfs repo, a Souveraine agent dir or a committed elfmem substrate:

* every commit in history is re-checked against the Letta Code pre-commit hook in force when
  it was made (:func:`memlab.formats.letta_memfs.hook_variant_at`); a violation in a commit
  the hook would have run on (agent, reflection subagent or human; not the server, not a
  merge) means the hook was bypassed with ``--no-verify``;
* ``limit`` breaches: files written over their declared limit, which the memfs write path
  never checks (letta#3241, LET-8133);
* ``read_only`` files edited, renamed, deleted or stripped of their flag;
* churn and growth per file, domain and author kind; what reaches the system prompt at every
  commit of the ref's first-parent chain (:func:`prompt_at` for one commit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from memlab._escape import terminal_lines
from memlab.audits._base import Audit
from memlab.constants import CHARS_PER_TOKEN, MAX_FILE_BYTES
from memlab.errors import UnsupportedSchema
from memlab.formats import letta_memfs as fmt
from memlab.sources.memfs import (LETTA_LAYOUTS, domain_of, file_versions, files_at, in_prompt,
                                  is_memory_path, load_memfs, resolve_ref)
from memlab.store import Store, parse_as_of

__all__ = ["audit_memfs", "prompt_at", "prompt_share", "PromptSnapshot", "hook_violations",
           "hook_basis", "duplicate_trees", "size_over_time", "commits_by_kind", "churn_matrix",
           "MEMFS_KINDS"]

MEMFS_KINDS = ("letta_memfs", "souveraine", "elfmem_substrate")
#: Commits by these authors ran Letta Code's hook once it existed: agents and reflection
#: subagents commit through Letta Code, which installs the hook on every clone, pull and init.
#: A human's commit ran it only where the checkout has it (see :func:`hook_basis`); the server
#: and memlab's migrations write with git plumbing and run none.
HOOKED_KINDS = ("agent", "reflection_subagent")


@dataclass
class PromptSnapshot:
    """What reaches the system prompt at one commit.

    ``files`` holds the files rendered in full (path, label, description, body_chars,
    description_chars, chars, tokens); ``tree`` the paths only listed by name (Letta's
    ``<external_projection>``). ``total_chars`` counts bodies, descriptions and the listed
    paths (one line each), not the tags around them.
    """

    sha: str
    layout: str
    files: pd.DataFrame
    tree: list[str] = field(default_factory=list)

    @property
    def total_chars(self) -> int:
        return int(self.files["chars"].sum()) + sum(_listed_chars(p) for p in self.tree)

    @property
    def total_tokens(self) -> float:
        return self.total_chars / CHARS_PER_TOKEN


def _as_store(store_or_path: Store | str | Path) -> Store:
    if isinstance(store_or_path, Store):
        if store_or_path.kind not in MEMFS_KINDS:
            raise UnsupportedSchema(f"the memfs audit reads memory repos, not {store_or_path.kind!r} stores",
                              path=store_or_path.path, hint="use memlab.audit() to pick the audit")
        return store_or_path
    return load_memfs(store_or_path)


def _listed(path: str, layout: str) -> bool:
    """Letta lists this file by path only (``<external_projection>``), not its text."""
    if layout not in LETTA_LAYOUTS:
        return False
    rel = fmt.strip_memory_prefix(path) if layout == "letta_v1_memory_prefix" else path
    return rel.endswith(".md") and not rel.startswith("skills/") and not in_prompt(path, layout)


def prompt_share(path: str, layout: str, body_chars: int | None, description: str | None, *,
                 agent_files: set[str] | None = None, listed: bool | None = None
                 ) -> tuple[str | None, int]:
    """How one file reaches the system prompt, and how many characters it adds there.

    ``("full", body + description chars)`` for a file rendered in full, ``("listed", len(path)
    + 1)`` for a file Letta lists by path only, ``(None, 0)`` otherwise. This is the one
    definition of prompt size: the headline, ``metrics.json``, :class:`PromptSnapshot` and the
    ``prompt_history`` chart all add these up.
    """
    if in_prompt(path, layout, agent_files):
        return "full", _rendered_chars(body_chars, description)
    if listed if listed is not None else _listed(path, layout):
        return "listed", _listed_chars(path)
    return None, 0


def _rendered_chars(body_chars: Any, description: Any) -> int:
    body = 0 if body_chars is None or pd.isna(body_chars) else int(body_chars)
    return body + (len(description) if isinstance(description, str) else 0)


def _listed_chars(path: str) -> int:
    return len(path) + 1  # one line of the path tree


def _tree_listing(paths: list[str], layout: str) -> list[str]:
    return sorted(p for p in paths if _listed(p, layout))


def prompt_at(store_or_path: Store | str | Path, sha: str) -> PromptSnapshot:
    """The files the agent had in its system prompt at commit ``sha`` (any ref works)."""
    store = _as_store(store_or_path)
    files = files_at(store, sha)
    layout = store.meta["layout"]
    shown = files[files["in_prompt"].fillna(False)]
    desc_chars = shown["description"].fillna("").str.len().astype("Int64")
    snapshot = pd.DataFrame({
        "path": shown["path"], "label": shown["label"], "description": shown["description"],
        "body_chars": shown["body_chars"], "description_chars": desc_chars,
    }).reset_index(drop=True)
    snapshot["chars"] = pd.array([_rendered_chars(b, d) for b, d in
                                  zip(shown["body_chars"], shown["description"])], dtype="Int64")
    snapshot["tokens"] = snapshot["chars"].astype("float64") / CHARS_PER_TOKEN
    tree = _tree_listing(files["path"].tolist(), layout)
    return PromptSnapshot(resolve_ref(store, sha), layout, snapshot, tree)


# --------------------------------------------------------------------------- commit table

@dataclass(frozen=True)
class _Commit:
    author_name: str
    author_email: str
    author_kind: str
    authored_at: pd.Timestamp
    committed_at: pd.Timestamp
    message: str
    branch: str


def _commits(history: pd.DataFrame) -> dict[str, _Commit]:
    """sha -> commit facts; a dict, since the checks below look commits up row by row."""
    first = history.drop_duplicates("sha")
    return {row[0]: _Commit(*row[1:]) for row in first[[
        "sha", "author_name", "author_email", "author_kind", "authored_at", "committed_at",
        "message", "branch"]].itertuples(index=False, name=None)}


def _parse_cache():
    cache: dict[str, fmt.Frontmatter] = {}

    def parse(blob: Any, text: Any) -> fmt.Frontmatter | None:
        if not isinstance(text, str):
            return None
        key = blob if isinstance(blob, str) else text
        if key not in cache:
            cache[key] = fmt.read_frontmatter(text)
        return cache[key]

    return parse


def _unread(version: Any) -> bool:
    """A version past :data:`~memlab.constants.MAX_FILE_BYTES`: its text was never read (an
    ``oversized`` problem row says so), so no rule about its text can be judged."""
    size = getattr(version, "new_bytes", None)
    return size is not None and not pd.isna(size) and int(size) > MAX_FILE_BYTES


def hook_violations(store: Store, versions: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every hook error every non-merge commit would have raised, with whether the hook ran.

    Columns: sha, authored_at, committed_at, author_name, author_email, author_kind, branch,
    message, path, change_type, variant, rule, detail, hook_applies, no_verify_suspect.
    ``variant`` is the hook in force at the commit (none before 2026-02-10: not checked).
    """
    if versions is None:
        versions = file_versions(store)
    commits = _commits(store.history)
    layout = store.meta["layout"]
    rows = []
    if layout not in LETTA_LAYOUTS or versions.empty:
        return _violations_frame(rows)  # generic_markdown, Souveraine, substrates: no Letta hook
    installed = store.meta.get("letta_hook_installed")
    # v2 validates only "projected" files (every folder above holds a MEMORY.md); the index
    # files present at each commit are approximated by replaying adds/deletes in time order.
    indexes: set[str] = set()
    ordered = versions.sort_values("committed_at", kind="stable")
    for v in ordered.itertuples(index=False):
        if str(v.path).endswith(fmt.ROOT_INDEX):
            if str(v.change_type) == "D":
                indexes.discard(str(v.path))
            else:
                indexes.add(str(v.path))
        c = commits.get(v.sha)
        if v.is_merge or c is None or _unread(v):
            continue
        when = c.committed_at.to_pydatetime()
        variant = fmt.hook_variant_at(when, layout=layout)
        if variant is None:
            continue
        new_text = v.new_text if isinstance(v.new_text, str) else None
        head_text = v.old_text if isinstance(v.old_text, str) else None
        found = fmt.check_precommit(str(v.path), new_text, head_text, variant=variant,
                                    change=str(v.change_type),
                                    staged_paths=indexes if variant == "v2" else None)
        if not found:
            continue
        applies, basis = hook_basis(c.author_kind, installed)
        reason = fmt.hook_variant_reason(when, layout=layout)
        for viol in found:
            rows.append({"sha": v.sha, "authored_at": c.authored_at, "committed_at": c.committed_at,
                         "author_name": c.author_name, "author_email": c.author_email,
                         "author_kind": c.author_kind, "branch": c.branch, "message": c.message,
                         "path": viol.path, "change_type": v.change_type, "variant": variant,
                         "rule": viol.rule, "detail": viol.message, "variant_reason": reason,
                         "hook_applies": applies, "hook_basis": basis,
                         "no_verify_suspect": applies})
    return _violations_frame(rows)


_VIOLATION_COLUMNS = {
    "sha": "string", "authored_at": "datetime64[ns, UTC]", "committed_at": "datetime64[ns, UTC]",
    "author_name": "string", "author_email": "string", "author_kind": "category", "branch": "string",
    "message": "string", "path": "string", "change_type": "category", "variant": "category",
    "rule": "category", "detail": "string", "variant_reason": "string", "hook_applies": "boolean",
    "hook_basis": "string", "no_verify_suspect": "boolean",
}


def hook_basis(author_kind: str, installed: str | None) -> tuple[bool, str]:
    """``(the hook ran on this commit, why memlab believes so)`` for a Letta repo's commit."""
    if author_kind == "agent":
        return True, ("an agent identity commits through Letta Code, which installs the hook on "
                      "every clone, pull and init of the memory repository")
    if author_kind == "reflection_subagent":
        return True, ("a reflection subagent commits in a Letta Code worktree of the memory "
                      "repository, which shares its hooks")
    if author_kind == "human":
        if installed:
            return True, (f"this checkout has Letta Code's pre-commit hook installed ({installed} "
                          "version), so a commit made here ran it")
        return False, ("a human's commit; this checkout has no Letta Code hook, so the human's "
                       "clone may not have had one either: not counted as a bypass")
    if author_kind == "migration":
        return False, ("memlab's migration writes its commits with git plumbing, as the Letta "
                       "server does: no hook runs")
    if author_kind == "review":
        return False, ("`memlab apply` writes a ticked review proposal's commit with git "
                       "plumbing: no hook runs")
    return False, "the Letta server writes through its own git service and runs no hook"


def _typed(rows: list[dict], dtypes: dict[str, str]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(dtypes))
    for col, dtype in dtypes.items():
        if dtype.startswith("datetime"):
            df[col] = pd.to_datetime(df[col], utc=True).astype(dtype)
        elif dtype in ("boolean", "Int64"):
            df[col] = pd.array(df[col].tolist(), dtype=dtype)
        else:
            df[col] = df[col].astype(dtype)
    return df


def _violations_frame(rows: list[dict]) -> pd.DataFrame:
    return _typed(rows, _VIOLATION_COLUMNS)


# --------------------------------------------------------------------------- the audit

def audit_memfs(store: Store | str | Path, *, as_of: Any = None, **_: Any) -> Audit:
    """Audit a memory repo. Tables:

    ``hook_violations`` (every hook error in history), ``no_verify_commits`` (commits that must
    have bypassed the hook), ``read_only`` (protected files changed), ``over_limit`` (files over
    their limit now), ``limit_breaches`` (commits that wrote a file over its limit),
    ``churn`` (per file), ``churn_weekly`` (file × week, for a heatmap), ``author_kinds``,
    ``size_by_domain`` and ``prompt_history`` (along the ref's first-parent chain), ``prompt``
    (what reaches the prompt at the ref, or at ``as_of``), ``problems``.

    ``as_of`` (a date or time, UTC when naive) audits the repo as it was then: later commits
    are ignored. The store's ``history.no_verify_suspect`` column is filled in place.
    """
    store = _as_store(store)
    cutoff = None if as_of is None else parse_as_of(as_of)
    layout = store.meta["layout"]
    hist = store.history
    versions = file_versions(store) if store.meta.get("ref_sha") else None
    if cutoff is not None:
        hist = hist[hist["committed_at"] <= cutoff]
        if versions is not None:
            versions = versions[versions["committed_at"] <= cutoff]
    tables: dict[str, pd.DataFrame] = {}

    viol = hook_violations(Store(store.kind, store.path, {"history": hist}, meta=store.meta),
                           versions) if versions is not None else _violations_frame([])
    tables["hook_violations"] = viol
    suspects = viol[viol["no_verify_suspect"].fillna(False)]
    _fill_suspects(store, suspects)
    tables["no_verify_commits"] = _no_verify_commits(suspects)

    parse = _parse_cache()
    # read_only is a Letta (and Souveraine) protection; a generic tree has no such rule.
    tables["read_only"] = _read_only_changes(None if layout == "generic_markdown" else versions,
                                             hist, parse)
    tables["limit_breaches"] = _limit_breaches(versions, hist, parse, layout)
    tables["churn"] = _churn(hist, layout)
    tables["churn_weekly"] = _churn_weekly(hist, layout)
    tables["author_kinds"] = _author_kinds(hist)
    tables["commits"] = _commit_table(store.frames["history"] if cutoff is None else
                                      store.frames["history"][store.frames["history"]["committed_at"] <= cutoff])
    chain = _first_parent_chain(store, hist)
    sizes, prompt_hist = _growth(versions, chain, hist, parse, layout, store.meta.get("agent"))
    tables["size_by_domain"], tables["prompt_history"] = sizes, prompt_hist

    at = store.meta.get("ref_sha")
    if cutoff is not None and chain:
        at = chain[-1]
    snapshot = prompt_at(store, at) if at else None
    files_now = store.files if (cutoff is None or at is None) else files_at(store, at)
    tables["prompt"] = snapshot.files if snapshot is not None else pd.DataFrame()
    tables["over_limit"] = _over_limit(files_now)
    tables["duplicate_trees"] = duplicate_trees(files_now)
    tables["readers"] = _readers(files_now if layout in LETTA_LAYOUTS else files_now.iloc[0:0])
    tables["problems"] = store.problems
    headline = _headline(store, hist, tables, snapshot, files_now, cutoff)
    notes = _notes(store, layout)
    return Audit("memfs", store.name, tables, headline, _summary(store, headline, tables), notes)


def _readers(files: pd.DataFrame) -> pd.DataFrame:
    """Files Letta Code and the Letta server read differently (one row per file)."""
    cols = ["path", "description", "client_description", "server_description", "yaml_ok",
            "server_whole_file", "server_value_chars", "body_chars"]
    if files.empty or "readers_agree" not in files:
        return pd.DataFrame(columns=cols)
    return files.loc[~files["readers_agree"].fillna(True), cols].reset_index(drop=True)


def _fill_suspects(store: Store, suspects: pd.DataFrame) -> None:
    hist = store.frames.get("history")
    if hist is None or hist.empty:
        return
    keys = set(zip(suspects["sha"], suspects["path"]))
    flags = [(s, p) in keys for s, p in zip(hist["sha"], hist["path"])]
    hist = hist.copy()
    hist["no_verify_suspect"] = pd.array(flags, dtype="boolean")
    store.frames["history"] = hist


def _no_verify_commits(suspects: pd.DataFrame) -> pd.DataFrame:
    if suspects.empty:
        return pd.DataFrame(columns=["sha", "authored_at", "author_name", "author_email", "author_kind",
                                     "branch", "message", "paths", "rules", "n_violations",
                                     "variant", "variant_reason", "hook_basis"])
    grouped = suspects.groupby("sha", sort=False, observed=True)
    out = grouped.agg(authored_at=("authored_at", "first"), author_name=("author_name", "first"),
                      author_email=("author_email", "first"), author_kind=("author_kind", "first"),
                      branch=("branch", "first"), message=("message", "first"),
                      paths=("path", lambda s: ", ".join(sorted(set(s)))),
                      rules=("rule", lambda s: ", ".join(sorted(set(map(str, s))))),
                      n_violations=("rule", "size"), variant=("variant", "first"),
                      variant_reason=("variant_reason", "first"),
                      hook_basis=("hook_basis", "first")).reset_index()
    return out.sort_values("authored_at").reset_index(drop=True)


def _read_only_changes(versions, hist, parse) -> pd.DataFrame:
    cols = {"sha": "string", "authored_at": "datetime64[ns, UTC]", "author_name": "string",
            "author_kind": "category", "path": "string", "change": "category",
            "hook_blocks": "boolean", "message": "string"}
    rows = []
    if versions is not None and not versions.empty:
        commits = _commits(hist)
        for v in versions.itertuples(index=False):
            c = commits.get(v.sha)
            if v.is_merge or c is None:
                continue
            old = parse(v.old_blob, v.old_text)
            if old is None or old.read_only is not True:
                continue
            new = parse(v.new_blob, v.new_text)
            ct = str(v.change_type)
            if ct == "D":
                change, blocks = "deleted", False  # the hook does not look at deletions
            elif ct == "R":
                change, blocks = "renamed", False  # renames escape the hook's ACM filter
            elif new is not None and new.read_only is not True:
                change, blocks = "flag_removed", True
            else:
                change, blocks = "edited", True
            rows.append({"sha": v.sha, "authored_at": c.authored_at, "author_name": c.author_name,
                         "author_kind": c.author_kind, "path": v.path, "change": change,
                         "hook_blocks": blocks, "message": c.message})
    return _typed(rows, cols)


def _effective_limit(fm: fmt.Frontmatter, layout: str) -> int | None:
    if fm.limit is not None:
        return fm.limit
    return fmt.DEFAULT_LIMIT if layout.startswith("letta") else None


def _limit_breaches(versions, hist, parse, layout) -> pd.DataFrame:
    cols = {"sha": "string", "authored_at": "datetime64[ns, UTC]", "author_kind": "category",
            "path": "string", "limit": "Int64", "body_chars": "Int64", "over_by": "Int64",
            "declared": "boolean", "message": "string"}
    rows = []
    if versions is not None and not versions.empty:
        commits = _commits(hist)
        for v in versions.itertuples(index=False):
            c = commits.get(v.sha)
            if v.is_merge or c is None or str(v.change_type) == "D" or _unread(v):
                continue
            new = parse(v.new_blob, v.new_text)
            if new is None:
                continue
            limit = _effective_limit(new, layout)
            chars = len(new.body)
            if limit is None or chars <= limit:
                continue
            rows.append({"sha": v.sha, "authored_at": c.authored_at, "author_kind": c.author_kind,
                         "path": v.path, "limit": limit, "body_chars": chars, "over_by": chars - limit,
                         "declared": new.limit is not None, "message": c.message})
    return _typed(rows, cols)


def _over_limit(files: pd.DataFrame) -> pd.DataFrame:
    over = files[files["over_limit"].fillna(False)]
    limit = over["limit"].fillna(fmt.DEFAULT_LIMIT).astype("Int64")
    out = pd.DataFrame({"path": over["path"], "label": over["label"], "in_prompt": over["in_prompt"],
                        "limit": limit, "body_chars": over["body_chars"]}).reset_index(drop=True)
    out["over_by"] = (out["body_chars"] - out["limit"]).astype("Int64")
    # ``limit: 0`` is a bad_limit problem row; nothing fits it, but a ratio to it means nothing.
    out["ratio"] = (out["body_chars"].astype("float64")
                    / out["limit"].astype("float64").where(out["limit"] > 0))
    return out.sort_values("ratio", ascending=False).reset_index(drop=True)


def _file_rows(hist: pd.DataFrame) -> pd.DataFrame:
    rows = hist[hist["path"].notna() & (hist["parents"].map(len) < 2)]
    return rows


def _churn(hist: pd.DataFrame, layout: str) -> pd.DataFrame:
    rows = _file_rows(hist)
    if rows.empty:
        return pd.DataFrame(columns=["path", "domain", "memory", "commits", "lines_added",
                                     "lines_deleted", "churn", "first_change", "last_change", "authors"])
    g = rows.groupby("path", observed=True)
    out = g.agg(commits=("sha", "nunique"), lines_added=("lines_added", "sum"),
                lines_deleted=("lines_deleted", "sum"), first_change=("authored_at", "min"),
                last_change=("authored_at", "max"), authors=("author_email", "nunique")).reset_index()
    out["churn"] = (out["lines_added"] + out["lines_deleted"]).astype("Int64")
    kinds = rows.pivot_table(index="path", columns="author_kind", values="sha", aggfunc="nunique",
                             observed=True, fill_value=0)
    kinds.columns = [f"commits_{c}" for c in kinds.columns]
    out = out.merge(kinds.reset_index(), on="path", how="left")
    out.insert(1, "domain", [domain_of(p, layout) for p in out["path"]])
    out["domain"] = out["domain"].astype("category")
    out.insert(2, "memory", pd.array([is_memory_path(p, layout) for p in out["path"]], dtype="boolean"))
    return out.sort_values(["churn", "commits"], ascending=False).reset_index(drop=True)


def _churn_weekly(hist: pd.DataFrame, layout: str) -> pd.DataFrame:
    rows = _file_rows(hist)
    if rows.empty:
        return pd.DataFrame(columns=["week", "path", "domain", "memory", "commits", "churn"])
    week = rows["authored_at"].dt.tz_convert(None).dt.to_period("W").dt.start_time.dt.tz_localize("UTC")
    churn = (rows["lines_added"].fillna(0) + rows["lines_deleted"].fillna(0)).astype("int64")
    frame = pd.DataFrame({"week": week, "path": rows["path"], "sha": rows["sha"], "churn": churn})
    out = frame.groupby(["week", "path"], observed=True).agg(commits=("sha", "nunique"),
                                                              churn=("churn", "sum")).reset_index()
    out.insert(2, "domain", [domain_of(p, layout) for p in out["path"]])
    out.insert(3, "memory", pd.array([is_memory_path(p, layout) for p in out["path"]], dtype="boolean"))
    return out


def _author_kinds(hist: pd.DataFrame) -> pd.DataFrame:
    if hist.empty:
        return pd.DataFrame(columns=["author_kind", "commits", "authors", "files", "lines_added",
                                     "lines_deleted", "first", "last"])
    g = hist.groupby("author_kind", observed=True)
    out = g.agg(commits=("sha", "nunique"), authors=("author_email", "nunique"),
                files=("path", "nunique"), lines_added=("lines_added", "sum"),
                lines_deleted=("lines_deleted", "sum"), first=("authored_at", "min"),
                last=("authored_at", "max")).reset_index()
    out["author_kind"] = out["author_kind"].astype("string")
    return out.sort_values("commits", ascending=False).reset_index(drop=True)


def _commit_table(hist: pd.DataFrame) -> pd.DataFrame:
    """One row per commit: who, when, where, how much, and whether it bypassed the hook."""
    cols = ["sha", "authored_at", "author_name", "author_email", "author_kind", "branch", "message",
            "merge", "files", "lines_added", "lines_deleted", "no_verify_suspect"]
    if hist.empty:
        return pd.DataFrame(columns=cols)
    g = hist.groupby("sha", sort=False, observed=True)
    out = g.agg(authored_at=("authored_at", "first"), author_name=("author_name", "first"),
                author_email=("author_email", "first"), author_kind=("author_kind", "first"),
                branch=("branch", "first"), message=("message", "first"),
                merge=("parents", lambda p: len(p.iloc[0]) > 1), files=("path", "count"),
                lines_added=("lines_added", "sum"), lines_deleted=("lines_deleted", "sum"),
                no_verify_suspect=("no_verify_suspect", lambda v: bool(v.fillna(False).any())))
    out = out.reset_index()[cols].sort_values("authored_at").reset_index(drop=True)
    out["merge"] = out["merge"].astype("boolean")
    out["no_verify_suspect"] = out["no_verify_suspect"].astype("boolean")
    return out


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
            for b in same[i + 1:]:
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
        rows.append({"tree": tree or "(root)", "copy_of": orig or "(root)",
                     "identical_files": len(set(rels)), "files_in_tree": in_tree,
                     "share": len(set(rels)) / in_tree if in_tree else 0.0,
                     "examples": ", ".join(sorted(set(rels))[:3])})
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values("identical_files", ascending=False).reset_index(drop=True)


# --------------------------------------------------------------------------- figure data

def size_over_time(audit: Audit, *, memory: bool | None = True) -> pd.DataFrame:
    """Bytes per domain (columns) at each commit of the ref's first-parent chain (index: time).

    ``memory=True`` counts memory files only (:func:`~memlab.sources.memfs.is_memory_path`),
    ``False`` the other files (images, code, JSON...), ``None`` both.
    """
    sizes = audit["size_by_domain"]
    if memory is not None and len(sizes):
        sizes = sizes[sizes["memory"] == memory]
    if sizes.empty:
        return pd.DataFrame()
    # A domain with no row at a commit had no files then: 0 bytes, not "unchanged".
    table = sizes.pivot_table(index=["committed_at", "sha"], columns="domain", values="bytes",
                              aggfunc="sum", observed=True, sort=False).fillna(0)
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
    table = weekly[weekly["path"].isin(keep)].pivot_table(index="path", columns="week",
                                                           values="churn", aggfunc="sum",
                                                           fill_value=0)
    table.columns = [c.strftime("%Y-%m-%d") for c in table.columns]
    return table.reindex(keep).fillna(0).astype("int64")


def _first_parent_chain(store: Store, hist: pd.DataFrame) -> list[str]:
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


def _growth(versions, chain, hist, parse, layout, agent) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bytes per domain (memory files apart from other files) and the prompt size at every
    commit of the chain, by replaying its diffs; the prompt size adds :func:`prompt_share`."""
    size_cols = ["sha", "committed_at", "domain", "memory", "bytes", "files"]
    prompt_cols = ["sha", "committed_at", "prompt_files", "prompt_listed", "prompt_chars",
                   "prompt_tokens"]
    if versions is None or versions.empty or not chain:
        return _empty(size_cols), _empty(prompt_cols)
    agent_files = {b.get("file") for b in (agent or {}).get("blocks") or [] if isinstance(b, dict)}
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
        for v in (by_sha[sha].itertuples(index=False) if sha in by_sha else ()):
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
                    chars = _rendered_chars(len(fm.body), fm.description)
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
        prompt_rows.append((sha, t, shown["full"], shown["listed"], prompt_chars, prompt_chars / CHARS_PER_TOKEN))
    sizes = pd.DataFrame(size_rows, columns=size_cols)
    prompts = pd.DataFrame(prompt_rows, columns=prompt_cols)
    for df in (sizes, prompts):
        df["committed_at"] = pd.to_datetime(df["committed_at"], utc=True).astype("datetime64[ns, UTC]")
    return sizes, prompts


def _empty(cols: list[str]) -> pd.DataFrame:
    return pd.DataFrame(columns=cols)


def _iso(ts: Any) -> str | None:
    return None if ts is None or pd.isna(ts) else pd.Timestamp(ts).isoformat()


def _headline(store: Store, hist: pd.DataFrame, tables: dict[str, pd.DataFrame],
              snapshot: PromptSnapshot | None, files: pd.DataFrame, cutoff) -> dict[str, Any]:
    commits = hist.drop_duplicates("sha")
    kinds = commits["author_kind"].astype("string").value_counts()
    ro = tables["read_only"]
    churn = tables["churn"]
    layout = store.meta["layout"]
    memory = churn["memory"].fillna(False).astype(bool) if len(churn) else pd.Series(dtype=bool)
    mem_churn, other_churn = churn[memory], churn[~memory]
    sizes = tables["size_by_domain"]
    last_sizes = sizes[sizes["sha"] == sizes["sha"].iloc[-1]] if len(sizes) else \
        pd.DataFrame({"memory": pd.Series(dtype=bool), "bytes": pd.Series(dtype="int64")})
    head: dict[str, Any] = {
        "kind": store.kind, "layout": store.meta["layout"],
        "as_of": _iso(cutoff),
        "files": int(len(files)),
        "prompt_files": int(len(snapshot.files)) if snapshot else 0,
        "prompt_chars": snapshot.total_chars if snapshot else 0,
        "prompt_tokens": snapshot.total_tokens if snapshot else 0.0,
        "commits": int(len(commits)),
        "branches": int(commits["branch"].nunique()),
        "authors": int(commits["author_email"].str.lower().nunique()),
        "reflection_merges": int(commits["message"].str.startswith("merge(reflection)").sum()),
        "hook_violations": int(len(tables["hook_violations"])),
        "no_verify_commits": int(len(tables["no_verify_commits"])),
        "over_limit_files": int(len(tables["over_limit"])),
        "limit_breach_commits": int(tables["limit_breaches"]["sha"].nunique()),
        "max_limit_ratio": float(tables["over_limit"]["ratio"].max()) if len(tables["over_limit"]) else 0.0,
        "read_only_edits": int((ro["change"] == "edited").sum()),
        "read_only_flag_removals": int((ro["change"] == "flag_removed").sum()),
        "read_only_deletions": int((ro["change"] == "deleted").sum()),
        "uncommitted_files": int(store.meta.get("uncommitted") or 0),
        "shallow": bool(store.meta.get("shallow")),
        "problems": int(len(store.problems)),
        "lines_changed": int(churn["churn"].sum()) if len(churn) else 0,
        "top_churn_file": str(mem_churn["path"].iloc[0]) if len(mem_churn) else None,
        "top_churn_other_file": str(other_churn["path"].iloc[0]) if len(other_churn) else None,
        "memory_files": int(files["path"].map(lambda p: is_memory_path(str(p), layout)).sum())
        if len(files) else 0,
        "memory_bytes": int(last_sizes.loc[last_sizes["memory"] == True, "bytes"].sum()),  # noqa: E712
        "other_bytes": int(last_sizes.loc[last_sizes["memory"] == False, "bytes"].sum()),  # noqa: E712
        "duplicated_trees": int(len(tables["duplicate_trees"])),
        "readers_disagree_files": int(len(tables["readers"])),
        "letta_evidence": len(store.meta.get("letta_evidence") or []),
        "first_commit": _iso(commits["authored_at"].min()) if len(commits) else None,
        "last_commit": _iso(commits["authored_at"].max()) if len(commits) else None,
    }
    for kind in fmt.AUTHOR_KINDS:
        head[f"commits_{kind}"] = int(kinds.get(kind, 0))
    head["findings"] = _findings(head, tables)
    return head


def _findings(head: dict[str, Any], tables: dict[str, pd.DataFrame]) -> int:
    """What needs a person: hook bypasses, read_only files changed by someone the hook guards,
    limit breaches written by anyone but memlab's migration (which copies a source as it is
    and flags it), files Letta's readers disagree on, copied trees and load problems. Files
    over their limit now are a state (``over_limit_files``), not a finding."""
    ro = tables["read_only"]
    guarded = ro[ro["author_kind"].astype("string").isin([*HOOKED_KINDS, "human"])]
    breaches = tables["limit_breaches"]
    breaches = breaches[breaches["author_kind"].astype("string") != "migration"]
    return int(head["no_verify_commits"] + len(guarded) + breaches["sha"].nunique()
               + head["readers_disagree_files"] + head["duplicated_trees"] + head["problems"])


def _notes(store: Store, layout: str) -> list[str]:
    notes = []
    if layout in ("souveraine", "elfmem_substrate"):
        notes.append(f"{layout}: commits run no Letta hook, so hook checks do not apply")
    if layout == "generic_markdown":
        notes.append("generic_markdown: a memfs-like tree with no sign that Letta made or uses it "
                     "(no .letta/config.json, Letta hook, agent or server commits): audited for "
                     "size and churn only, never against Letta's hook")
    elif layout in LETTA_LAYOUTS and store.meta.get("letta_evidence"):
        notes.append("Letta layout because: " + "; ".join(store.meta["letta_evidence"]))
    if store.meta.get("shallow"):
        notes.append("shallow clone: churn and growth start at the clone boundary")
    if store.meta.get("branch") is None and store.meta.get("head_sha"):
        notes.append("detached HEAD: the audited ref may not be the branch the agent uses")
    return notes


def _summary(store: Store, h: dict[str, Any], tables: dict[str, pd.DataFrame]) -> str:
    lines = [
        f"memfs audit of {store.name} ({h['layout']}{', as of ' + h['as_of'] if h['as_of'] else ''})",
        f"  files: {h['files']}; in the prompt: {h['prompt_files']} files, {h['prompt_chars']} chars "
        f"(~{h['prompt_tokens']:.0f} tokens)",
        f"  commits: {h['commits']} on {h['branches']} branch(es) by {h['authors']} author(s): "
        + ", ".join(f"{k} {h['commits_' + k]}" for k in fmt.AUTHOR_KINDS if h["commits_" + k]),
        (f"  hook: {h['hook_violations']} violation(s); {h['no_verify_commits']} commit(s) must have "
         "used --no-verify") if h["layout"] in LETTA_LAYOUTS else
        f"  hook: not checked ({h['layout']}: Letta Code's hook does not guard this repository)",
    ]
    for row in tables["no_verify_commits"].head(10).itertuples(index=False):
        lines.append(f"    {row.sha[:10]} {str(row.authored_at)[:10]} {row.author_kind}: {row.rules} "
                     f"in {row.paths} ({row.variant} hook: {row.hook_basis})")
    lines.append(f"  limit: {h['over_limit_files']} file(s) over their limit now; "
                 f"{h['limit_breach_commits']} commit(s) wrote over a limit (letta#3241)")
    for row in tables["over_limit"].head(5).itertuples(index=False):
        ratio = f"{row.ratio:.2f}x" if pd.notna(row.ratio) else "limit not positive"
        lines.append(f"    {row.path}: {row.body_chars}/{row.limit} chars ({ratio})")
    lines.append(f"  read_only: {h['read_only_edits']} edit(s), {h['read_only_flag_removals']} flag "
                 f"removal(s), {h['read_only_deletions']} deletion(s)")
    if h["top_churn_file"]:
        lines.append(f"  churn: {h['lines_changed']} lines changed; most churned: {h['top_churn_file']}")
    lines.append(f"  uncommitted: {h['uncommitted_files']} file(s); problems: {h['problems']}")
    if h["readers_disagree_files"]:
        lines.append(f"  readers: Letta Code and the Letta server read {h['readers_disagree_files']} "
                     "file(s) differently (table 'readers')")
    if h["duplicated_trees"]:
        lines.append(f"  copies: {h['duplicated_trees']} folder(s) duplicate another folder's files "
                     "(table 'duplicate_trees')")
    lines.append(f"  findings: {h['findings']}")
    return terminal_lines(lines)
