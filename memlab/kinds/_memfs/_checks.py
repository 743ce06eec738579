"""The memfs audit's checks of every commit in history: Letta Code's pre-commit hook (and the
commits that must have bypassed it), ``read_only`` files changed and files written over their
``limit``."""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

import pandas as pd

from memlab.constants import MAX_FILE_BYTES
from memlab.formats import letta_memfs as fmt
from memlab.kinds._memfs._load import LETTA_LAYOUTS, blob_contents, file_versions
from memlab.store import Store

__all__ = [
    "HOOKED_KINDS",
    "parse_cache",
    "hook_violations",
    "commit_parents",
    "topo_order",
    "hook_basis",
    "violations_frame",
    "fill_suspects",
    "no_verify_table",
    "read_only_changes",
    "limit_breach_table",
]

#: Commits by these authors ran Letta Code's hook once it existed: agents, reflection subagents,
#: memory workers and Letta Code's own harness identity commit through Letta Code, which
#: installs the hook on every clone, pull and init.
#: A human's commit ran it only where the checkout has it (see :func:`hook_basis`); the server
#: and memlab's migrations write with git plumbing and run none.
HOOKED_KINDS = ("agent", "reflection_subagent", "memory_worker", "harness")


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
    return {
        row[0]: _Commit(*row[1:])
        for row in first[
            [
                "sha",
                "author_name",
                "author_email",
                "author_kind",
                "authored_at",
                "committed_at",
                "message",
                "branch",
            ]
        ].itertuples(index=False, name=None)
    }


def parse_cache():
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
    rows: list[dict[str, Any]] = []
    if layout not in LETTA_LAYOUTS or versions.empty:
        return violations_frame(rows)  # generic_markdown, Souveraine, substrates: no Letta hook
    installed = store.meta.get("letta_hook_installed")
    # Commits are visited parents first (same-second commits, as a migration makes, have no
    # clock order), and each one's state is its first parent's plus its own changes:
    # file_versions' rows are diffs against the first parent, so the replay is exact on
    # every branch. The state: whether a root MEMORY.md is present (the v2 hook guards a
    # commit when the tree it starts from or the one it makes has one: buildPreCommitHookScript's
    # `:MEMORY.md` or `HEAD:MEMORY.md`; a repository that became v2 keeps the legacy hook's
    # verdicts on the commits from before) and the MEMORY.md files present (v2 validates only
    # "projected" files, every folder above holding a MEMORY.md).
    parents = commit_parents(store.history, versions)
    order = topo_order(parents, _commit_times(store.history, versions))
    rank = {sha: i for i, sha in enumerate(order)}
    ordered = versions.assign(_rank=versions["sha"].map(rank)).sort_values("_rank", kind="stable")
    states = _index_states(ordered, parents, order)
    as_read = _hook_texts(store, versions)
    empty: tuple[bool, frozenset[str]] = (False, frozenset())
    for v in ordered.itertuples(index=False):
        c = commits.get(v.sha)
        if v.is_merge or c is None or _unread(v):
            continue
        when = c.committed_at.to_pydatetime()
        firsts = parents.get(v.sha) or []
        before = states.get(firsts[0], empty) if firsts else empty
        root, indexes = states.get(v.sha, before)
        at_layout = layout if layout != "letta_v2" or before[0] or root else "letta_v1"
        variant = fmt.hook_variant_at(when, layout=at_layout)
        if variant is None:
            continue
        new_text = v.new_text if isinstance(v.new_text, str) else as_read.get(v.new_blob)
        head_text = v.old_text if isinstance(v.old_text, str) else as_read.get(v.old_blob)
        found = fmt.check_precommit(
            str(v.path),
            new_text,
            head_text,
            variant=variant,
            change=str(v.change_type),
            staged_paths=indexes if variant == "v2" else None,
        )
        if not found:
            continue
        applies, basis = hook_basis(c.author_kind, installed)
        reason = fmt.hook_variant_reason(when, layout=at_layout)
        for viol in found:
            rows.append(
                {
                    "sha": v.sha,
                    "authored_at": c.authored_at,
                    "committed_at": c.committed_at,
                    "author_name": c.author_name,
                    "author_email": c.author_email,
                    "author_kind": c.author_kind,
                    "branch": c.branch,
                    "message": c.message,
                    "path": viol.path,
                    "change_type": v.change_type,
                    "variant": variant,
                    "rule": viol.rule,
                    "detail": viol.message,
                    "variant_reason": reason,
                    "hook_applies": applies,
                    "hook_basis": basis,
                    "no_verify_suspect": applies,
                }
            )
    return violations_frame(rows)


def _hook_texts(store: Store, versions: pd.DataFrame) -> dict[str, str]:
    """blob -> text, as Letta Code's hook reads it, for the ``.md`` versions file_versions
    left without text (NUL bytes, not UTF-8): the hook reads every staged file as text
    (:func:`~memlab.formats.letta_memfs.hook_text`), so judging such a file as if it were
    empty would call an accepted commit a ``--no-verify`` bypass. Over-cap blobs stay unread."""
    wanted: set[str] = set()
    for v in versions.itertuples(index=False):
        if (
            str(v.path).endswith(".md")
            and not isinstance(v.new_text, str)
            and isinstance(v.new_blob, str)
            and not _unread(v)
        ):
            wanted.add(v.new_blob)
        old = v.old_path if isinstance(v.old_path, str) else v.path
        if (
            str(old).endswith(".md")
            and not isinstance(v.old_text, str)
            and isinstance(v.old_blob, str)
        ):
            wanted.add(v.old_blob)
    if not wanted:
        return {}
    return {sha: fmt.hook_text(data) for sha, data in blob_contents(store, wanted).items()}


def commit_parents(history: pd.DataFrame, versions: pd.DataFrame) -> dict[str, list[str]]:
    """sha -> parent shas, from the history frame (every commit, empty ones included) and
    file_versions (its commits, when the store was loaded without history)."""
    out: dict[str, list[str]] = {}
    for frame in (versions, history):
        if frame is None or frame.empty:
            continue
        for sha, ps in zip(frame["sha"], frame["parents"]):
            out.setdefault(sha, list(ps) if isinstance(ps, (list, tuple)) else [])
    return out


def _commit_times(history: pd.DataFrame, versions: pd.DataFrame) -> dict[str, int]:
    out: dict[str, int] = {}
    for frame in (versions, history):
        if frame is None or frame.empty:
            continue
        for sha, when in zip(frame["sha"], frame["committed_at"]):
            out.setdefault(sha, int(when.value))
    return out


def topo_order(parents: dict[str, list[str]], times: dict[str, int]) -> list[str]:
    """Every commit of ``parents`` after all of its parents (those present); among commits
    whose parents are all placed, the earliest committed first, then git log's order
    reversed (oldest printed last). Same-second commits are ordered by their parents, never
    by their clocks alone."""
    shas = list(parents)
    seq = {sha: len(shas) - i for i, sha in enumerate(shas)}  # log order is newest first
    children: dict[str, list[str]] = {}
    waiting: dict[str, int] = {}
    for sha, ps in parents.items():
        present = [p for p in dict.fromkeys(ps) if p in parents]
        waiting[sha] = len(present)
        for p in present:
            children.setdefault(p, []).append(sha)
    ready = [(times.get(s, 0), seq[s], s) for s, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        _t, _q, sha = heapq.heappop(ready)
        out.append(sha)
        for child in children.get(sha, ()):
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, (times.get(child, 0), seq[child], child))
    return out


def _index_states(
    ordered: pd.DataFrame, parents: dict[str, list[str]], order: list[str]
) -> dict[str, tuple[bool, frozenset[str]]]:
    """sha -> (root MEMORY.md present, MEMORY.md paths present) after the commit, each from
    its first parent's state and its own rows (in ``ordered``, parents first)."""
    changes: dict[str, list[tuple[str, str | None, str]]] = {}
    for sha, path, old, ct in zip(
        ordered["sha"], ordered["path"], ordered["old_path"], ordered["change_type"]
    ):
        if str(path).endswith(fmt.ROOT_INDEX) or str(old).endswith(fmt.ROOT_INDEX):
            changes.setdefault(sha, []).append(
                (str(path), None if pd.isna(old) else str(old), str(ct))
            )
    states: dict[str, tuple[bool, frozenset[str]]] = {}
    empty: tuple[bool, frozenset[str]] = (False, frozenset())
    for sha in order:
        ps = parents.get(sha) or []
        state = states.get(ps[0], empty) if ps else empty
        if sha in changes:
            present = set(state[1])
            for path, old, ct in changes[sha]:
                if ct == "D":
                    present.discard(path)
                else:
                    if ct == "R" and old is not None:
                        present.discard(old)
                    if path.endswith(fmt.ROOT_INDEX):
                        present.add(path)
            state = (fmt.ROOT_INDEX in present, frozenset(present))
        states[sha] = state
    return states


_VIOLATION_COLUMNS = {
    "sha": "string",
    "authored_at": "datetime64[ns, UTC]",
    "committed_at": "datetime64[ns, UTC]",
    "author_name": "string",
    "author_email": "string",
    "author_kind": "category",
    "branch": "string",
    "message": "string",
    "path": "string",
    "change_type": "category",
    "variant": "category",
    "rule": "category",
    "detail": "string",
    "variant_reason": "string",
    "hook_applies": "boolean",
    "hook_basis": "string",
    "no_verify_suspect": "boolean",
}


def hook_basis(author_kind: str, installed: str | None) -> tuple[bool, str]:
    """``(the hook ran on this commit, why memlab believes so)`` for a Letta repo's commit."""
    if author_kind == "agent":
        return True, (
            "an agent identity commits through Letta Code, which installs the hook on "
            "every clone, pull and init of the memory repository"
        )
    if author_kind in ("reflection_subagent", "memory_worker"):
        return True, (
            f"a {author_kind.replace('_', ' ')} commits in a Letta Code worktree of "
            "the memory repository, which shares its hooks"
        )
    if author_kind == "harness":
        return True, (
            "Letta Code's own identity commits in the memory repository, where Letta "
            "Code installs the hook"
        )
    if author_kind == "human":
        if installed:
            return True, (
                f"this checkout has Letta Code's pre-commit hook installed ({installed} "
                "version), so a commit made here ran it"
            )
        return False, (
            "a human's commit; this checkout has no Letta Code hook, so the human's "
            "clone may not have had one either: not counted as a bypass"
        )
    if author_kind == "migration":
        return False, (
            "memlab's migration writes its commits with git plumbing, as the Letta "
            "server does: no hook runs"
        )
    if author_kind == "review":
        return False, (
            "`memlab apply` writes a ticked review proposal's commit with git "
            "plumbing: no hook runs"
        )
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


def violations_frame(rows: list[dict]) -> pd.DataFrame:
    return _typed(rows, _VIOLATION_COLUMNS)


def fill_suspects(store: Store, suspects: pd.DataFrame) -> None:
    hist = store.frames.get("history")
    if hist is None or hist.empty:
        return
    keys = set(zip(suspects["sha"], suspects["path"]))
    flags = [(s, p) in keys for s, p in zip(hist["sha"], hist["path"])]
    hist = hist.copy()
    hist["no_verify_suspect"] = pd.array(flags, dtype="boolean")
    store.frames["history"] = hist


def no_verify_table(suspects: pd.DataFrame) -> pd.DataFrame:
    if suspects.empty:
        return pd.DataFrame(
            columns=[
                "sha",
                "authored_at",
                "author_name",
                "author_email",
                "author_kind",
                "branch",
                "message",
                "paths",
                "rules",
                "n_violations",
                "variant",
                "variant_reason",
                "hook_basis",
            ]
        )
    grouped = suspects.groupby("sha", sort=False, observed=True)
    out = grouped.agg(
        authored_at=("authored_at", "first"),
        author_name=("author_name", "first"),
        author_email=("author_email", "first"),
        author_kind=("author_kind", "first"),
        branch=("branch", "first"),
        message=("message", "first"),
        paths=("path", lambda s: ", ".join(sorted(set(s)))),
        rules=("rule", lambda s: ", ".join(sorted(set(map(str, s))))),
        n_violations=("rule", "size"),
        variant=("variant", "first"),
        variant_reason=("variant_reason", "first"),
        hook_basis=("hook_basis", "first"),
    ).reset_index()
    return out.sort_values("authored_at").reset_index(drop=True)


# --------------------------------------------------------------------------- read_only and limit


def read_only_changes(versions, hist, parse) -> pd.DataFrame:
    cols = {
        "sha": "string",
        "authored_at": "datetime64[ns, UTC]",
        "author_name": "string",
        "author_kind": "category",
        "path": "string",
        "change": "category",
        "hook_blocks": "boolean",
        "message": "string",
    }
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
            rows.append(
                {
                    "sha": v.sha,
                    "authored_at": c.authored_at,
                    "author_name": c.author_name,
                    "author_kind": c.author_kind,
                    "path": v.path,
                    "change": change,
                    "hook_blocks": blocks,
                    "message": c.message,
                }
            )
    return _typed(rows, cols)


def _effective_limit(fm: fmt.Frontmatter, layout: str) -> int | None:
    if fm.limit is not None:
        return fm.limit
    return fmt.DEFAULT_LIMIT if layout.startswith("letta") else None


def limit_breach_table(versions, hist, parse, layout) -> pd.DataFrame:
    cols = {
        "sha": "string",
        "authored_at": "datetime64[ns, UTC]",
        "author_kind": "category",
        "path": "string",
        "limit": "Int64",
        "body_chars": "Int64",
        "over_by": "Int64",
        "declared": "boolean",
        "message": "string",
    }
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
            rows.append(
                {
                    "sha": v.sha,
                    "authored_at": c.authored_at,
                    "author_kind": c.author_kind,
                    "path": v.path,
                    "limit": limit,
                    "body_chars": chars,
                    "over_by": chars - limit,
                    "declared": new.limit is not None,
                    "message": c.message,
                }
            )
    return _typed(rows, cols)
