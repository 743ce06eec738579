"""Load memory repos: Letta Code memfs, Souveraine agent dirs and elfmem markdown substrates.

:func:`load_memfs` reads the committed tree of ``ref`` (what the agent actually sees: Letta
renders only committed HEAD content), the full history over every branch, and the working-tree
drift, without writing a byte to the repository. Frames follow docs/DESIGN.md ("memfs kinds").

Layouts (``meta["layout"]``):

* ``letta_v1``: ``system/`` in the prompt, ``reference/`` and other folders as a path tree,
  ``skills/<name>/SKILL.md``, ``.letta/config.json``;
* ``letta_v1_memory_prefix``: repos from before 2026-02-09 with files under ``memory/``;
* ``letta_v2``: a root ``MEMORY.md``; root-level ``*.md`` is core memory;
* ``souveraine``: ``agent.yaml`` (in the repo, or one level up from ``memory/``) + ``system/``,
  ``memory/<domain>/``, ``skills/``;
* ``elfmem_substrate``: ``.elfmem/memory/**.md`` blocks and ``.elfmem/ledger/*.jsonl``;
* ``generic_markdown``: a memfs-like tree (``system/``, ``reference/``, ``skills/``, a root
  ``MEMORY.md``...) with no evidence that Letta made or uses it: loaded the same way (kind
  ``letta_memfs``), audited for size and churn, never against Letta's hook, nothing in a prompt.

A tree is a Letta layout only on evidence Letta itself leaves (:func:`letta_evidence`, kept in
``meta["letta_evidence"]``): the server's ``.letta/config.json``, the pre-commit hook Letta Code
installs, the ``letta.agentId`` git config, Letta author identities or harness messages, a
root ``MEMORY.md`` whose files follow memfs v2's frontmatter rule, or the folder being an
agent's ``~/.letta/agents/<id>/memory``.

Rooms: finding the repository, its layout and that evidence is :mod:`memlab.kinds._memfs._locate`;
git bundles (the bundled sample) are :mod:`memlab.sources._bundle`; reading the files of a commit
or a folder is :mod:`memlab.kinds._memfs._read`; the files frame, and what a path is under each
layout (:func:`in_prompt`, :func:`domain_of`, :func:`is_memory_path`), is
:mod:`memlab.kinds._memfs._files`; the public calls are here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from memlab.constants import MAX_FILE_BYTES
from memlab.errors import MemlabError, RepoError, StoreNotFound, UnrecognizedStore
from memlab.formats import letta_memfs as fmt
from memlab.kinds._memfs._files import (
    FILES_COLUMNS,
    domain_of,
    files_frame,
    in_prompt,
    is_memory_path,
)
from memlab.kinds._memfs._locate import (
    KINDS,
    LAYOUTS,
    LETTA_LAYOUTS,
    SOURCE_ATTR,
    agent_memory_folder,
    classify_author,
    decode,
    layout_policy_of,
    letta_evidence,
    locate,
    located_source,
    require_commits,
    shared_memory_name,
)
from memlab.kinds._memfs._read import read_disk, read_tree, substrate_inputs
from memlab.sources import _git
from memlab.sources._bundle import SAMPLE_BUNDLE, is_bundle, unpack_bundle
from memlab.store import Problems, Store, empty_frame

__all__ = [
    "load_memfs",
    "repos_in",
    "unpack_bundle",
    "is_bundle",
    "SAMPLE_BUNDLE",
    "files_at",
    "file_versions",
    "resolve_ref",
    "blob_contents",
    "in_prompt",
    "domain_of",
    "is_memory_path",
    "letta_evidence",
    "FILES_COLUMNS",
    "LAYOUTS",
    "LETTA_LAYOUTS",
]

_UNCOMMITTED_COLUMNS = {"path": "string", "change": "category"}


# --------------------------------------------------------------------------- public calls


def _shared_siblings(root: Path) -> list[str]:
    """The shared-memory repositories mounted beside an agent's ``memory/`` (their folder
    names), for ``~/.letta/agents/<id>/memory``; empty elsewhere. Names only: each is a store
    of its own (``load_memfs`` it; ``discover`` lists it with the agent)."""
    if not agent_memory_folder(root):
        return []
    out = []
    try:
        for entry in sorted(root.parent.iterdir()):
            if (
                shared_memory_name(entry)
                and not entry.is_symlink()
                and entry.is_dir()
                and (entry / ".git").exists()
            ):
                out.append(entry.name)
    except OSError:
        return []
    return out


def load_memfs(path: str | Path, ref: str = "HEAD", *, history: bool = True) -> Store:
    """Load a Letta memfs repo, a Souveraine agent dir or an elfmem substrate, read-only.

    Example::

        store = memlab.load_memfs("~/.letta/agents/agent-123/memory")
        store.files.loc[store.files.in_prompt, ["path", "body_chars"]]
        store.history.groupby("author_kind", observed=True).sha.nunique()

    ``ref`` names the commit read (branch, tag or sha); ``history=False`` skips the log pass.
    Raises :class:`StoreNotFound`, :class:`UnrecognizedStore` or :class:`RepoError` (empty
    repository, unknown ref); anything wrong inside the memory becomes a ``problems`` row.
    """
    src = locate(Path(path).expanduser())
    problems = src.problems
    meta: dict[str, Any] = {
        "layout": src.layout,
        "ref": ref,
        "head_sha": None,
        "ref_sha": None,
        "branch": None,
        "shallow": False,
        "agent": None,
        "uncommitted": 0,
        "repo": str(src.root),
        "name": src.name,
        "letta_evidence": list(src.evidence),
        "letta_hook_installed": src.hook_installed,
        "layout_policy": None,
        "layout_policy_basis": None,
        "shared_memory": None,
        "shared_memory_repos": [],
    }
    frames: dict[str, pd.DataFrame] = {}
    info = src.repo
    if info is not None:
        require_commits(info)
        commit = _git.resolve_commit(info.path, ref)
        meta.update(
            head_sha=info.head_sha, ref_sha=commit, branch=info.branch, shallow=info.shallow
        )
        if src.layout in LETTA_LAYOUTS:
            shared = shared_memory_name(src.root)
            meta["layout_policy"], meta["layout_policy_basis"] = layout_policy_of(
                info, commit, shared=shared is not None
            )
            meta["shared_memory"] = shared
            meta["shared_memory_repos"] = _shared_siblings(src.root) if shared is None else []
        if info.branch is None:
            problems.add(
                info.path,
                "detached_head",
                f"HEAD is detached at {(info.head_sha or '')[:12]}; "
                "Letta Code pulls and pushes "
                "branch main, so this checkout may not be what the agent uses",
            )
        if info.shallow:
            problems.add(
                info.path,
                "shallow_clone",
                f"shallow clone: history stops at {len(info.shallow_boundary)} boundary "
                "commit(s), whose numstat counts their whole tree as added; "
                "run `git fetch --unshallow` on a copy for the full history",
            )
        tree = _git.ls_tree(info.path, commit)
        texts, other = read_tree(src, tree, problems)
        files = files_frame(src, texts, problems, meta)
        if history:
            hist, found = _git.log_history(info.path, classify=classify_author)
            # Fixed category sets, so counts show every kind (zero included) for every store.
            hist["author_kind"] = pd.Categorical(
                hist["author_kind"].astype(object), categories=fmt.AUTHOR_KINDS
            )
            hist["change_type"] = pd.Categorical(
                hist["change_type"].astype(object), categories=("A", "M", "D", "R")
            )
            hist["branch_role"] = pd.Categorical(
                hist["branch_role"].astype(object), categories=fmt.BRANCH_ROLES
            )
            for file, kind, message in found:
                problems.add(file, kind, message)
            frames["history"] = hist
        else:
            frames["history"] = empty_frame(_git.HISTORY_DTYPES)
        drift: list[tuple[str, str, str]] = []
        changes = _git.working_tree_changes(info, commit, tree, drift)
        for file, kind, message in drift:
            problems.add(file, kind, message)
    else:
        problems.add(
            src.root,
            "not_a_repo",
            "not a git repository: read from the files on disk, no history "
            "(a `letta memory backup` copy looks like this)",
        )
        texts, other = read_disk(src, problems)
        files = files_frame(src, texts, problems, meta)
        frames["history"] = empty_frame(_git.HISTORY_DTYPES)
        changes = empty_frame(_UNCOMMITTED_COLUMNS)
    frames["files"] = files
    frames["uncommitted"] = changes
    meta["uncommitted"] = int(len(changes))
    meta["other_files"] = sorted(other)
    if src.layout == "elfmem_substrate":
        from memlab.kinds.elfmem_substrate._parse import parse_substrate

        blocks, ledger, substrate_problems = parse_substrate(substrate_inputs(texts))
        problems.extend(substrate_problems)
        frames["blocks"], frames["ledger"] = blocks, ledger
    if meta["name"] is None and isinstance(meta.get("agent"), dict):
        meta["name"] = meta["agent"].get("name")
    meta["name"] = meta["name"] or src.path.name
    ordered: dict[str, Any] = {
        k: frames[k] for k in ("files", "blocks", "history", "uncommitted", "ledger") if k in frames
    }
    store = Store(KINDS[src.layout], src.path, ordered, problems.frame(), meta)
    vars(store)[SOURCE_ATTR] = src  # what located_source(store) reuses: the repository as loaded
    return store


REPOS_COLUMNS: dict[str, str] = {
    "repo": "string",
    "path": "string",
    "kind": "category",
    "layout": "category",
    "name": "string",
    "files": "Int64",
    "memory_files": "Int64",
    "commits": "Int64",
    "first_commit": "datetime64[ns, UTC]",
    "last_commit": "datetime64[ns, UTC]",
    "migrated_from": "string",
    "letta_evidence": "Int64",
    "problems": "Int64",
}


def repos_in(folder: str | Path) -> pd.DataFrame:
    """One row per memory repository directly inside ``folder`` (a migration's output of
    several agents, say): repo, path, kind, layout, name, files, memory_files, commits,
    first_commit, last_commit, migrated_from (the ``Memlab-Source`` a memlab migration
    recorded), letta_evidence (how many signs of Letta) and problems. Read-only.

    Example::

        memlab.kinds._memfs._load.repos_in("out/lettabot-builder")   # or: memlab inspect out/...

    Raises :class:`StoreNotFound` for a missing folder; a sub-folder that is not a memory
    repository is skipped, one that cannot be read is a row with its error in ``name``.
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise StoreNotFound("no such folder", path=root)
    rows: list[dict[str, Any]] = []
    for sub in sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
    ):
        try:
            store = load_memfs(sub)
        except UnrecognizedStore:
            continue
        except MemlabError as exc:
            rows.append({"repo": sub.name, "path": str(sub), "name": f"unreadable: {exc.message}"})
            continue
        hist = store.history
        commits = hist.drop_duplicates("sha")
        layout = store.meta["layout"]
        migrated = None
        if len(commits):
            msgs = commits.loc[commits["author_kind"].astype("string") == "migration", "message"]
            for m in msgs:
                found = [
                    ln.split(": ", 1)[1]
                    for ln in str(m).splitlines()
                    if ln.startswith("Memlab-Source: ")
                ]
                if found:
                    migrated = found[0]
                    break
        rows.append(
            {
                "repo": sub.name,
                "path": str(sub),
                "kind": store.kind,
                "layout": layout,
                "name": store.name,
                "files": len(store.files),
                "memory_files": int(sum(is_memory_path(p, layout) for p in store.files["path"])),
                "commits": len(commits),
                "first_commit": commits["committed_at"].min() if len(commits) else None,
                "last_commit": commits["committed_at"].max() if len(commits) else None,
                "migrated_from": migrated,
                "letta_evidence": len(store.meta.get("letta_evidence") or []),
                "problems": len(store.problems),
            }
        )
    df = pd.DataFrame(rows, columns=list(REPOS_COLUMNS))
    for col, dtype in REPOS_COLUMNS.items():
        if dtype.startswith("datetime"):
            df[col] = pd.to_datetime(df[col], utc=True)
        elif dtype in ("Int64",):
            df[col] = pd.array(df[col].tolist(), dtype="Int64")
        else:
            df[col] = df[col].astype(dtype)
    return df


def files_at(store_or_path: Store | str | Path, ref: str) -> pd.DataFrame:
    """The ``files`` frame as it was at ``ref`` (any commit), read the same way as the loader."""
    src = located_source(store_or_path)
    if src.repo is None:
        raise RepoError("not a git repository, so there is no past commit to read", path=src.root)
    commit = _git.resolve_commit(src.repo.path, ref)
    problems = Problems()
    texts, _ = read_tree(src, _git.ls_tree(src.repo.path, commit), problems)
    return files_frame(src, texts, problems, {})


def resolve_ref(store_or_path: Store | str | Path, ref: str) -> str:
    """The full commit sha ``ref`` names in the store's repository (RepoError if unknown)."""
    src = located_source(store_or_path)
    if src.repo is None:
        raise RepoError("not a git repository, so it has no commits", path=src.root)
    return _git.resolve_commit(src.repo.path, ref)


def blob_contents(store_or_path: Store | str | Path, shas: Iterable[str]) -> dict[str, bytes]:
    """The bytes of blobs (by id) in the store's repository, one ``git cat-file --batch``;
    a blob that is missing or over :data:`~memlab.constants.MAX_FILE_BYTES` is absent."""
    src = located_source(store_or_path)
    if src.repo is None:
        return {}
    return _git.read_blobs(src.repo.path, shas, max_bytes=MAX_FILE_BYTES)


def file_versions(store_or_path: Store | str | Path, *, with_text: bool = True) -> pd.DataFrame:
    """Every change to every file: one row per commit × file, with blob ids, sizes and texts.

    Merges carry their diff against the first parent (so walking a branch's first-parent chain
    and applying each row rebuilds its tree at every commit); ``is_merge`` marks them.
    Columns: sha, parents, is_merge, authored_at, committed_at, branch, change_type, old_path,
    path, old_blob, new_blob, new_mode (``100644``, ``120000``...; NA when deleted), new_bytes
    (Int64) and, with ``with_text``, old_text / new_text for
    UTF-8 ``.md`` blobs (NA for deleted, binary or other files, and for a blob over
    :data:`~memlab.constants.MAX_FILE_BYTES`, whose size is in ``new_bytes`` and whose content
    is never read).
    """
    src = located_source(store_or_path)
    if src.repo is None or src.repo.empty:
        cols = [*_git.CHANGES_COLUMNS, "new_bytes", "old_text", "new_text"]
        return pd.DataFrame({c: pd.Series(dtype="object") for c in cols})
    repo = src.repo.path
    df = _git.log_changes(repo)
    blobs = set(df["new_blob"].dropna()) | (set(df["old_blob"].dropna()) if with_text else set())
    sizes = _git.blob_sizes(repo, sorted(blobs))
    df["new_bytes"] = pd.array(
        [sizes.get(b) if isinstance(b, str) else None for b in df["new_blob"]], dtype="Int64"
    )
    if with_text:
        md_old = df["old_blob"].where((df["old_path"].fillna(df["path"])).str.endswith(".md"))
        md_new = df["new_blob"].where(df["path"].str.endswith(".md"))
        wanted = {
            b
            for b in set(md_old.dropna()) | set(md_new.dropna())
            if sizes.get(b, 0) <= MAX_FILE_BYTES
        }
        raw = _git.read_blobs(repo, wanted, max_bytes=MAX_FILE_BYTES)
        # a Letta layout's memory files are text as Letta Code reads them (NUL kept, U+FFFD)
        letta = src.layout in LETTA_LAYOUTS
        decoded = {sha: decode(data, as_letta=letta) for sha, data in raw.items()}
        df["old_text"] = pd.array(
            [decoded.get(b) if isinstance(b, str) else None for b in md_old], dtype="string"
        )
        df["new_text"] = pd.array(
            [decoded.get(b) if isinstance(b, str) else None for b in md_new], dtype="string"
        )
    return df
