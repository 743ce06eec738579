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
"""

from __future__ import annotations

import os
import posixpath
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from memlab.formats._yaml import read_yaml
from memlab.errors import (MemlabError, OutputExists, RepoError, SourceError, StoreNotFound,
                           UnrecognizedStore, UnsafePath)
from memlab._files import FileTooLarge, NotRegularFile, read_regular, walk
from memlab.constants import MAX_FILE_BYTES, MAX_FOLDER_DEPTH
from memlab.formats import _json
from memlab.formats import letta_memfs as fmt
from memlab.sources import _git
from memlab.store import Problems, Store, empty_frame, token_estimate

__all__ = ["load_memfs", "repos_in", "unpack_bundle", "SAMPLE_BUNDLE", "files_at", "file_versions", "resolve_ref", "in_prompt", "domain_of",
           "is_memory_path", "letta_evidence", "FILES_COLUMNS", "LAYOUTS", "LETTA_LAYOUTS"]

LAYOUTS = ("letta_v1", "letta_v1_memory_prefix", "letta_v2", "souveraine", "elfmem_substrate",
           "generic_markdown")
#: Layouts Letta Code reads and guards with its pre-commit hook.
LETTA_LAYOUTS = ("letta_v1", "letta_v1_memory_prefix", "letta_v2")
_KINDS = {"letta_v1": "letta_memfs", "letta_v1_memory_prefix": "letta_memfs",
          "letta_v2": "letta_memfs", "souveraine": "souveraine",
          "elfmem_substrate": "elfmem_substrate", "generic_markdown": "letta_memfs"}

#: The files frame without its ``fm_<key>`` columns (they go after ``frontmatter_raw``).
FILES_COLUMNS: dict[str, str] = {
    "path": "string", "label": "string", "layout": "category", "domain": "category",
    "in_prompt": "boolean", "frontmatter_raw": "string", "description": "string",
    "read_only": "boolean", "limit": "Int64", "body": "string", "body_chars": "Int64",
    "body_tokens": "float64", "over_limit": "boolean", "blob_sha": "string",
    "client_description": "string", "client_read_only": "string", "client_refusal": "string",
    "server_description": "string", "server_read_only": "string", "server_value_chars": "Int64",
    "server_whole_file": "boolean", "yaml_ok": "boolean", "readers_agree": "boolean",
}
_UNCOMMITTED_COLUMNS = {"path": "string", "change": "category"}
_MEMFS_MARKERS = ("system/", "memory/system/", "reference/", "skills/", ".letta/")


@dataclass
class _Source:
    """Where the memory is and how to read it: a commit of a repo, or plain files on disk."""

    path: Path                       # the folder asked for
    layout: str
    repo: _git.RepoInfo | None
    root: Path                       # repo root, or the folder read from disk
    prefix: str = ""                 # the part of repo paths above the memory ('.elfmem/')
    agent_yaml: Path | None = None   # souveraine agent.yaml on disk, outside the repo
    name: str | None = None
    problems: Problems = field(default_factory=Problems)
    evidence: tuple[str, ...] = ()   # why memlab believes Letta made or uses this tree
    hook_installed: str | None = None  # variant of Letta Code's hook in this checkout, if any


# --------------------------------------------------------------------------- public calls

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
    src = _locate(Path(path).expanduser())
    problems = src.problems
    meta: dict[str, Any] = {"layout": src.layout, "ref": ref, "head_sha": None, "ref_sha": None,
                            "branch": None, "shallow": False, "agent": None, "uncommitted": 0,
                            "repo": str(src.root), "name": src.name,
                            "letta_evidence": list(src.evidence),
                            "letta_hook_installed": src.hook_installed}
    frames: dict[str, pd.DataFrame] = {}
    info = src.repo
    if info is not None:
        _require_commits(info)
        commit = _git.resolve_commit(info.path, ref)
        meta.update(head_sha=info.head_sha, ref_sha=commit, branch=info.branch, shallow=info.shallow)
        if info.branch is None:
            problems.add(info.path, "detached_head",
                         f"HEAD is detached at {info.head_sha[:12]}; Letta Code pulls and pushes "
                         "branch main, so this checkout may not be what the agent uses")
        if info.shallow:
            problems.add(info.path, "shallow_clone",
                         f"shallow clone: history stops at {len(info.shallow_boundary)} boundary "
                         "commit(s), whose numstat counts their whole tree as added; "
                         "run `git fetch --unshallow` on a copy for the full history")
        tree = _git.ls_tree(info.path, commit)
        texts, other = _read_tree(src, tree, problems)
        files = _files_frame(src, texts, problems, meta)
        if history:
            hist, found = _git.log_history(info.path, classify=_classify)
            # Fixed category sets, so counts show every kind (zero included) for every store.
            hist["author_kind"] = pd.Categorical(hist["author_kind"].astype(object),
                                                 categories=fmt.AUTHOR_KINDS)
            hist["change_type"] = pd.Categorical(hist["change_type"].astype(object),
                                                 categories=("A", "M", "D", "R"))
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
        problems.add(src.root, "not_a_repo",
                     "not a git repository: read from the files on disk, no history "
                     "(a `letta memory backup` copy looks like this)")
        texts, other = _read_disk(src, problems)
        files = _files_frame(src, texts, problems, meta)
        frames["history"] = empty_frame(_git.HISTORY_DTYPES)
        changes = empty_frame(_UNCOMMITTED_COLUMNS)
    frames["files"] = files
    frames["uncommitted"] = changes
    meta["uncommitted"] = int(len(changes))
    meta["other_files"] = sorted(other)
    if src.layout == "elfmem_substrate":
        from memlab.sources.elfmem_substrate import parse_substrate

        blocks, ledger, found = parse_substrate(_substrate_inputs(texts))
        problems.extend(found)
        frames["blocks"], frames["ledger"] = blocks, ledger
    if meta["name"] is None and isinstance(meta.get("agent"), dict):
        meta["name"] = meta["agent"].get("name")
    meta["name"] = meta["name"] or src.path.name
    ordered = {k: frames[k] for k in ("files", "blocks", "history", "uncommitted", "ledger")
               if k in frames}
    store = Store(_KINDS[src.layout], src.path, ordered, problems.frame(), meta)
    vars(store)[_SOURCE_ATTR] = src  # what _located(store) reuses: the repository as loaded
    return store


#: The bundled sample repository (a git bundle; see data/samples/memfs/SOURCES.md), relative
#: to the memlab checkout. :func:`unpack_bundle` turns it into a repository to load.
SAMPLE_BUNDLE = "data/samples/memfs/deep-research-memfs.bundle"


def unpack_bundle(bundle: str | Path, into: str | Path) -> Path:
    """Unpack a git bundle (every branch) into a new repository ``<into>/<name>-<main head>``,
    checked out at ``main``, and return its path; one that already holds the bundle's heads is
    reused, so a notebook can unpack the sample on every run.

    Example::

        repo = unpack_bundle("data/samples/memfs/deep-research-memfs.bundle", "reports/memfs")
        store = memlab.load_memfs(repo)

    The repository is built in a hidden folder beside the target and renamed into place only
    once its checkout succeeded, so a failed unpack leaves nothing a later run could take for
    a finished one. Raises :class:`StoreNotFound` (no bundle), :class:`OutputExists` (the folder
    holds something else) or :class:`RepoError` (not a bundle git can read, or a tree git
    refuses to check out: the error names the path). Git runs hardened (memlab._git).
    """
    from memlab import _git as hardened

    src = Path(bundle).expanduser().resolve()
    if not src.is_file():
        raise StoreNotFound("no such git bundle", path=src)
    heads = {}
    listed = hardened.run(src.parent, "bundle", "list-heads", str(src), check=False)
    for line in listed.decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition(" ")
        if ref.startswith("refs/heads/"):
            heads[ref] = sha
    if not heads or "refs/heads/main" not in heads:
        raise RepoError("not a git bundle with a main branch (git bundle list-heads)", path=src)
    out = Path(into).expanduser() / f"{src.stem}-{heads['refs/heads/main'][:12]}"
    if _holds_bundle(out, heads):
        return out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    work = out.parent / f".{out.name}.unpacking-p{os.getpid()}-{os.urandom(4).hex()}"
    work.mkdir()
    try:
        hardened.run(work, "init", "-q", "--initial-branch=main", ceiling=False)
        # unbundle stores the objects (no transport, no remote); the branches are then set in
        # one transaction (one git process however many refs the bundle has).
        hardened.run(work, "bundle", "unbundle", str(src))
        refs = b"".join(b"update %s\0%s\0\0" % (ref.encode(), sha.encode())
                        for ref, sha in heads.items())
        hardened.run(work, "update-ref", "-z", "--stdin", input=refs)
        try:
            hardened.run(work, "reset", "-q", "--hard", "refs/heads/main")
        except RepoError as exc:  # named by the bundle, not by the folder about to go
            raise RepoError(f"its main branch cannot be checked out ({exc.message})", path=src,
                            hint="git refuses such paths in any checkout; the bundle is "
                            "not unpacked") from None
        try:
            os.rename(work, out)  # onto a missing or empty folder only
        except OSError:
            if _holds_bundle(out, heads):  # another run finished first
                return out.resolve()
            raise OutputExists("the folder exists and does not hold this bundle", path=out,
                               hint="choose an empty folder") from None
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return out.resolve()


def _holds_bundle(out: Path, heads: dict[str, str]) -> bool:
    """True when ``out`` is a repository whose branches are exactly ``heads``; False when it is
    missing or empty; OutputExists when it holds anything else."""
    from memlab import _git as hardened

    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return False
    info = _git.find_repo(out) if out.is_dir() else None
    have = {}
    if info is not None:
        refs = hardened.run(out, "for-each-ref", "--format=%(objectname) %(refname)",
                            "refs/heads/", check=False).decode().splitlines()
        have = {r: s for s, _, r in (ln.partition(" ") for ln in refs)}
    if have == heads:
        return True
    raise OutputExists("the folder exists and does not hold this bundle", path=out,
                       hint="choose an empty folder")


REPOS_COLUMNS: dict[str, str] = {
    "repo": "string", "path": "string", "kind": "category", "layout": "category", "name": "string",
    "files": "Int64", "memory_files": "Int64", "commits": "Int64",
    "first_commit": "datetime64[ns, UTC]", "last_commit": "datetime64[ns, UTC]",
    "migrated_from": "string", "letta_evidence": "Int64", "problems": "Int64",
}


def repos_in(folder: str | Path) -> pd.DataFrame:
    """One row per memory repository directly inside ``folder`` (a migration's output of
    several agents, say): repo, path, kind, layout, name, files, memory_files, commits,
    first_commit, last_commit, migrated_from (the ``Memlab-Source`` a memlab migration
    recorded), letta_evidence (how many signs of Letta) and problems. Read-only.

    Example::

        memlab.sources.memfs.repos_in("out/lettabot-builder")   # or: memlab inspect out/...

    Raises :class:`StoreNotFound` for a missing folder; a sub-folder that is not a memory
    repository is skipped, one that cannot be read is a row with its error in ``name``.
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise StoreNotFound("no such folder", path=root)
    rows = []
    for sub in sorted(p for p in root.iterdir()
                      if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")):
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
                found = [ln.split(": ", 1)[1] for ln in str(m).splitlines()
                         if ln.startswith("Memlab-Source: ")]
                if found:
                    migrated = found[0]
                    break
        rows.append({
            "repo": sub.name, "path": str(sub), "kind": store.kind, "layout": layout,
            "name": store.name, "files": len(store.files),
            "memory_files": int(sum(is_memory_path(p, layout) for p in store.files["path"])),
            "commits": len(commits),
            "first_commit": commits["committed_at"].min() if len(commits) else None,
            "last_commit": commits["committed_at"].max() if len(commits) else None,
            "migrated_from": migrated, "letta_evidence": len(store.meta.get("letta_evidence") or []),
            "problems": len(store.problems),
        })
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
    src = _located(store_or_path)
    if src.repo is None:
        raise RepoError("not a git repository, so there is no past commit to read", path=src.root)
    commit = _git.resolve_commit(src.repo.path, ref)
    problems = Problems()
    texts, _ = _read_tree(src, _git.ls_tree(src.repo.path, commit), problems)
    return _files_frame(src, texts, problems, {})


def resolve_ref(store_or_path: Store | str | Path, ref: str) -> str:
    """The full commit sha ``ref`` names in the store's repository (RepoError if unknown)."""
    src = _located(store_or_path)
    if src.repo is None:
        raise RepoError("not a git repository, so it has no commits", path=src.root)
    return _git.resolve_commit(src.repo.path, ref)


def file_versions(store_or_path: Store | str | Path, *, with_text: bool = True) -> pd.DataFrame:
    """Every change to every file: one row per commit × file, with blob ids, sizes and texts.

    Merges carry their diff against the first parent (so walking a branch's first-parent chain
    and applying each row rebuilds its tree at every commit); ``is_merge`` marks them.
    Columns: sha, parents, is_merge, authored_at, committed_at, branch, change_type, old_path,
    path, old_blob, new_blob, new_bytes (Int64) and, with ``with_text``, old_text / new_text for
    UTF-8 ``.md`` blobs (NA for deleted, binary or other files, and for a blob over
    :data:`~memlab.constants.MAX_FILE_BYTES`, whose size is in ``new_bytes`` and whose content
    is never read).
    """
    src = _located(store_or_path)
    if src.repo is None or src.repo.empty:
        cols = ["sha", "parents", "is_merge", "authored_at", "committed_at", "branch", "change_type",
                "old_path", "path", "old_blob", "new_blob", "new_bytes", "old_text", "new_text"]
        return pd.DataFrame({c: pd.Series(dtype="object") for c in cols})
    repo = src.repo.path
    df = _git.log_changes(repo)
    blobs = set(df["new_blob"].dropna()) | (set(df["old_blob"].dropna()) if with_text else set())
    sizes = _git.blob_sizes(repo, sorted(blobs))
    df["new_bytes"] = pd.array([sizes.get(b) if isinstance(b, str) else None for b in df["new_blob"]],
                               dtype="Int64")
    if with_text:
        md_old = df["old_blob"].where((df["old_path"].fillna(df["path"])).str.endswith(".md"))
        md_new = df["new_blob"].where(df["path"].str.endswith(".md"))
        wanted = {b for b in set(md_old.dropna()) | set(md_new.dropna())
                  if sizes.get(b, 0) <= MAX_FILE_BYTES}
        raw = _git.read_blobs(repo, wanted, max_bytes=MAX_FILE_BYTES)
        decoded = {sha: _decode(data) for sha, data in raw.items()}
        df["old_text"] = pd.array([decoded.get(b) if isinstance(b, str) else None for b in md_old],
                                  dtype="string")
        df["new_text"] = pd.array([decoded.get(b) if isinstance(b, str) else None for b in md_new],
                                  dtype="string")
    return df


def is_memory_path(path: str, layout: str) -> bool:
    """Whether a repo path is a memory file: a ``.md`` file where the layout keeps memory.

    Letta layouts (and ``generic_markdown``): a ``.md`` file that maps to a block label (so
    under ``skills/`` only ``SKILL.md``); Souveraine: any ``.md``; an elfmem substrate: ``.md``
    under ``memory/``. Never anything under ``.memlab/``, ``.letta/`` or ``.git*``. Images,
    code and JSON are "other files", kept apart in size and churn figures.
    """
    if not path.endswith(".md") or path.startswith((".memlab/", ".letta/", ".git")):
        return False
    if layout == "elfmem_substrate":
        rel = path.split(".elfmem/", 1)[1] if ".elfmem/" in path else path
        return rel.startswith("memory/")
    if layout == "souveraine":
        return True
    return fmt.label_for_path(path, memory_prefix=layout == "letta_v1_memory_prefix") is not None


def in_prompt(path: str, layout: str, agent_blocks: set[str] | None = None) -> bool:
    """Whether a file's full text reaches the system prompt under ``layout``.

    Letta v1 renders ``system/**`` in full (only a path tree of the rest); v2 renders root-level
    ``*.md``; Souveraine loads ``system/`` plus the files agent.yaml's ``blocks`` names.
    """
    if not path.endswith(".md"):
        return False
    if layout in ("letta_v1", "letta_v1_memory_prefix"):
        return fmt.strip_memory_prefix(path).startswith("system/")
    if layout == "letta_v2":
        return "/" not in path
    if layout == "souveraine":
        return path.startswith("system/") or path in (agent_blocks or set())
    return False


# --------------------------------------------------------------------------- locating

def _require_commits(info: _git.RepoInfo) -> None:
    if info.empty:
        raise RepoError("the repository has no commits yet, so the agent sees no memory",
                        path=info.path, hint="commit the memory files first")


#: The instance attribute where :func:`load_memfs` keeps the located source of a Store.
_SOURCE_ATTR = "_memfs_source"


def _located(store_or_path: Store | str | Path) -> _Source:
    """Where a store (or a path :func:`load_memfs` would take) reads from, without loading it.

    A store :func:`load_memfs` returned reuses the repository and layout found when it was
    loaded (locating costs a dozen git calls, and the audit asks several times); another Store
    is located again. A path gets the loader's own refusals (no such folder, unrecognised, no
    commits yet).
    """
    if isinstance(store_or_path, Store):
        src = vars(store_or_path).get(_SOURCE_ATTR)
        if src is not None and src.path == Path(store_or_path.path):
            return src
        return _locate(Path(store_or_path.path))
    src = _locate(Path(store_or_path).expanduser())
    if src.repo is not None:
        _require_commits(src.repo)
    return src


def _classify(name, email, message, branch) -> str:
    return fmt.classify_author(name, email, message=message, branch=branch)


def _is_memfs_tree(paths: list[str]) -> bool:
    return any(p == fmt.ROOT_INDEX or p.startswith(_MEMFS_MARKERS) for p in paths)


def _tree_paths(info: _git.RepoInfo) -> list[str]:
    if info.empty:
        return []
    return [e.path for e in _git.ls_tree(info.path, info.head_sha)]


def _installed_hook(info: _git.RepoInfo | None) -> str | None:
    """The variant of Letta Code's pre-commit hook installed in this checkout, or None.

    Reads ``<git dir>/hooks/pre-commit`` (never runs it); Letta Code writes the marker line
    :data:`~memlab.formats.letta_memfs.LETTA_HOOK_MARKER` into it, and the February 2026 hook
    still required ``limit``.
    """
    if info is None:
        return None
    hook = info.git_dir / "hooks" / "pre-commit"
    try:
        if hook.is_symlink() or not hook.is_file() or hook.stat().st_size > 1_000_000:
            return None
        text = hook.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if fmt.LETTA_HOOK_MARKER not in text:
        return None
    return "2026-02" if "missing required field 'limit'" in text else "current"


def _v2_evidence(texts: dict[str, str]) -> bool:
    """A root MEMORY.md without frontmatter, and root files with exactly name + description."""
    index = texts.get(fmt.ROOT_INDEX)
    if index is None or index.startswith("---"):
        return False
    others = [t for p, t in texts.items() if p != fmt.ROOT_INDEX]
    return bool(others) and all(not fmt.check_precommit(p, t, None, variant="v2", change="A")
                                for p, t in texts.items() if p != fmt.ROOT_INDEX)


_EVIDENCE_CACHE: dict[tuple[str, str | None], tuple[tuple[str, ...], str | None]] = {}


def letta_evidence(path: Path, info: _git.RepoInfo | None, paths: list[str]
                   ) -> tuple[tuple[str, ...], str | None]:
    """Why memlab believes Letta made or uses this tree, and the hook installed in it.

    ``(evidence sentences, installed hook variant or None)``; no evidence means the tree is a
    ``generic_markdown`` layout. Reads names, the hook file, the repo's ``letta.agentId``
    config, the authors and subjects of the log, and the root ``MEMORY.md`` files; writes
    nothing.
    """
    key = (str(info.git_dir if info else path), info.head_sha if info else None)
    if info is not None and key in _EVIDENCE_CACHE:
        return _EVIDENCE_CACHE[key]
    found: list[str] = []
    if fmt.CONFIG_PATH in paths:
        found.append(f"{fmt.CONFIG_PATH} is in the tree (the Letta server creates every memory "
                     "repository with it)")
    parts = path.parts
    if len(parts) >= 4 and parts[-1] == "memory" and parts[-3] == "agents" and parts[-4] == ".letta":
        found.append(f"the folder is an agent's memory under .letta/agents/{parts[-2]}/ (where "
                     "Letta Code keeps it)")
    hook = _installed_hook(info)
    if hook is not None:
        found.append(f"this checkout has Letta Code's pre-commit hook installed ({hook} "
                     f"version; .git/hooks/pre-commit says {fmt.LETTA_HOOK_MARKER!r})")
    if info is not None and not info.empty:
        agent_id = _git.run_git(info.path, "config", "--get", "letta.agentId",
                                check=False).decode("utf-8", "replace").strip()
        if agent_id:
            found.append(f"git config letta.agentId = {agent_id[:80]!r} (set by Letta Code)")
        log = _git.run_git(info.path, "log", "--all", "--format=%ae%x1f%s",
                           check=False).decode("utf-8", "replace").splitlines()
        counts: dict[str, int] = {}
        for line in log:
            email, _, subject = line.partition("\x1f")
            kind = fmt.classify_author(None, email, message=subject)
            if kind in ("agent", "reflection_subagent", "server_user", "system"):
                counts[kind] = counts.get(kind, 0) + 1
            if subject.startswith("merge(reflection):"):
                counts["reflection_merge"] = counts.get("reflection_merge", 0) + 1
        words = {"agent": "by Letta agent identities (agent-…@letta.com)",
                 "reflection_subagent": "by Letta reflection subagents",
                 "server_user": "by Letta server users (user-…@letta.ai)",
                 "system": "by the Letta server's own identities (…@letta.ai)",
                 "reflection_merge": "are Letta Code reflection merges (merge(reflection): …)"}
        for kind, n in counts.items():
            found.append(f"{n} commit(s) {words[kind]}")
    if fmt.ROOT_INDEX in paths and info is not None and not info.empty:
        roots = {e.path: e.sha for e in _git.ls_tree(info.path, info.head_sha)
                 if "/" not in e.path and e.path.endswith(".md") and e.type == "blob"
                 and (e.size or 0) <= MAX_FILE_BYTES}
        blobs = _git.read_blobs(info.path, roots.values(), max_bytes=MAX_FILE_BYTES)
        texts = {p: (_decode(blobs.get(sha, b"")) or "") for p, sha in roots.items()}
        if _v2_evidence(texts):
            found.append("a root MEMORY.md without frontmatter, and every root file has exactly "
                         "the name and description memfs v2 requires")
    out = (tuple(found), hook)
    if info is not None:
        _EVIDENCE_CACHE[key] = out
    return out


def _memfs_source(path: Path, info: _git.RepoInfo | None, root: Path, paths: list[str],
                  name: str | None) -> _Source:
    if info is None and (root / fmt.CONFIG_PATH).is_file():
        paths = [*paths, fmt.CONFIG_PATH]
    evidence, hook = letta_evidence(root, info, paths)
    layout = _letta_layout(paths) if evidence else "generic_markdown"
    return _Source(path, layout, info, root, name=name, evidence=evidence, hook_installed=hook)


def _locate(path: Path) -> _Source:
    """Find the repository (or folder) and decide the layout. Reads nothing but names."""
    if not path.exists() and not path.is_symlink():
        raise StoreNotFound("no such file or folder", path=path)
    if path.is_file() and path.name == "agent.yaml":
        path = path.parent
    if not path.is_dir():
        raise UnrecognizedStore("a file, not a memory folder or repository", path=path)
    if not os.access(path, os.R_OK | os.X_OK):
        raise SourceError("cannot read this folder (permission denied)", path=path,
                          hint="memlab needs read and execute permission on it")
    path = path.resolve()

    # An elfmem substrate: the .elfmem folder itself, or a project folder holding one.
    if path.name == ".elfmem" or (path / ".elfmem" / "memory").is_dir():
        holder = path if path.name != ".elfmem" else path.parent
        for candidate, prefix in ((holder, ".elfmem/"), (holder / ".elfmem", "")):
            info = _git.find_repo(candidate) if candidate.is_dir() else None
            if info is not None:
                return _Source(path, "elfmem_substrate", info, candidate, prefix=prefix,
                               name=holder.name)
        return _Source(path, "elfmem_substrate", None, holder, prefix=".elfmem/", name=holder.name)

    info = _git.find_repo(path)
    # A Souveraine agent dir (agent.yaml beside memory/) or a Letta agent root (~/.letta/agents/<id>/)
    if info is None and (path / "memory").is_dir():
        inner = _git.find_repo(path / "memory")
        if inner is not None:
            if (path / "agent.yaml").is_file():
                return _Source(path, "souveraine", inner, path / "memory",
                               agent_yaml=path / "agent.yaml")
            return _memfs_source(path, inner, path / "memory", _tree_paths(inner), path.name)
    if info is not None:
        paths = _tree_paths(info)
        if "agent.yaml" in paths:
            return _Source(path, "souveraine", info, path)
        if (path.parent / "agent.yaml").is_file():
            return _Source(path, "souveraine", info, path, agent_yaml=path.parent / "agent.yaml",
                           name=None)
        if info.empty or _is_memfs_tree(paths):
            name = path.parent.name if path.name == "memory" else path.name
            return _memfs_source(path, info, path, paths, name)
        raise UnrecognizedStore("a git repository, but its HEAD has no system/, MEMORY.md, "
                                "skills/ or .letta/config.json", path=path,
                                hint="point memlab at a Letta memory repo, a Souveraine agent dir "
                                "or a folder holding .elfmem/")
    # Plain folders: a Souveraine dir or a `letta memory backup` copy without .git.
    if (path / "agent.yaml").is_file():
        root = path / "memory" if (path / "memory" / "system").is_dir() else path
        return _Source(path, "souveraine", None, root, agent_yaml=path / "agent.yaml")
    disk = [p.relative_to(path).as_posix() + ("/" if p.is_dir() else "") for p in path.iterdir()]
    if _is_memfs_tree(disk):
        return _memfs_source(path, None, path, disk, path.name)
    raise UnrecognizedStore("not a git repository and no system/, MEMORY.md, agent.yaml or "
                            ".elfmem/ inside", path=path)


def _letta_layout(paths: list[str]) -> str:
    if fmt.ROOT_INDEX in paths:
        return "letta_v2"
    if any(p.startswith("memory/") for p in paths) and not any(p.startswith("system/") for p in paths):
        return "letta_v1_memory_prefix"
    return "letta_v1"


# --------------------------------------------------------------------------- reading

def _decode(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _wanted(src: _Source, rel: str) -> bool:
    """Text files the loader keeps: markdown everywhere, plus the substrate's ledger."""
    if src.layout == "elfmem_substrate":
        return rel.endswith(".md") or (rel.startswith("ledger/") and rel.endswith(".jsonl"))
    return rel.endswith(".md") or rel == "agent.yaml"


def _read_tree(src: _Source, tree: list[_git.TreeEntry], problems: Problems
               ) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """Texts of the memory files in a commit: {repo path: (text, blob sha)}, plus other paths."""
    keep: dict[str, _git.TreeEntry] = {}
    other: list[str] = []
    for e in tree:
        if src.prefix and not e.path.startswith(src.prefix):
            continue
        rel = e.path[len(src.prefix):]
        if e.raw is not None:
            problems.add(e.path, "non_utf8_path", "a committed file whose name is not UTF-8; "
                         "read, and shown with replacement characters")
        try:
            fmt.safe_relative_path(e.path)
        except UnsafePath as exc:
            problems.add(e.path, "unsafe_path", f"{exc.message}; not read")
            continue
        if e.type == "commit":
            problems.add(e.path, "submodule", "a git submodule; its content is not part of this "
                         "memory and is not read")
            continue
        if e.mode == "120000":
            keep[e.path] = e  # read below to judge the link target
            continue
        if not _wanted(src, rel):
            other.append(e.path)
        elif e.size is not None and e.size > MAX_FILE_BYTES:
            problems.add(e.path, "oversized", _oversized(e.size))
            other.append(e.path)  # listed (meta other_files), its text never read
        else:
            keep[e.path] = e
    blobs = _git.read_blobs(src.repo.path, (e.sha for e in keep.values()),
                            max_bytes=MAX_FILE_BYTES) if src.repo else {}
    texts: dict[str, tuple[str, str]] = {}
    for p, e in keep.items():
        data = blobs.get(e.sha)
        if data is None:
            problems.add(p, "missing_object", f"blob {e.sha[:12]} is missing from the object "
                         "store (a partial or damaged clone); not read")
            continue
        if e.mode == "120000":
            _report_symlink(p, os.fsdecode(data), problems)
            continue
        text = _decode(data)
        if text is None:
            problems.add(p, "binary", "not UTF-8 text (binary content); Letta would load it as "
                         "a garbled block, memlab does not read it")
            continue
        texts[p] = (text, e.sha)
    return texts, other


def _oversized(size: int) -> str:
    return (f"{size:,} bytes, over memlab's {MAX_FILE_BYTES:,}-byte cap for a memory file "
            "(a Letta block is a few thousand characters); listed, its text not read")


def _too_deep() -> str:
    return (f"a folder nested more than {MAX_FOLDER_DEPTH} levels below the store; memlab does "
            "not look inside it, so none of its files are read")


def _report_symlink(path: str, target: str, problems: Problems) -> None:
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
        problems.add(path, "symlink_outside_repo",
                     f"symlink to {target!r}, outside the repository; never followed")
    else:
        problems.add(path, "symlink", f"symlink to {target!r}; Letta reads the link text, not "
                     "the file it names, so this block holds a path")


def _read_disk(src: _Source, problems: Problems) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """The same as :func:`_read_tree` for a plain folder (no commit to read)."""
    base = src.root if not src.prefix else src.root / src.prefix.rstrip("/")
    texts: dict[str, tuple[str, str]] = {}
    other: list[str] = []
    if not base.is_dir():
        return texts, other
    def shown_dir(folder: str) -> str:
        return src.prefix + _git.shown_path(os.path.relpath(folder, base).replace(os.sep, "/"))[0]

    def unlisted(exc: OSError) -> None:
        rel = shown_dir(exc.filename) if exc.filename else src.prefix + "."
        problems.add(rel, "unreadable", f"cannot list the folder: {exc.strerror}; "
                     "its files are not read")

    def too_deep(folder: str) -> None:
        problems.add(shown_dir(folder) + "/", "too_deep", _too_deep())

    for dirpath, dirnames, filenames in walk(base, onerror=unlisted, too_deep=too_deep):
        links = [d for d in dirnames if Path(dirpath, d).is_symlink()]
        for d in dirnames:
            if d != ".git" and d not in links and fmt.is_git_name(d):
                problems.add(shown_dir(os.path.join(dirpath, d)) + "/", "unsafe_path",
                             f"a folder named {d!r}, a git folder's name (git refuses to check "
                             "such a path out); not read")
        dirnames[:] = sorted(d for d in dirnames if not fmt.is_git_name(d) and d not in links)
        for name in sorted(filenames) + sorted(links):
            full = Path(dirpath, name)
            rel, non_utf8 = _git.shown_path(full.relative_to(base).as_posix())
            shown = src.prefix + rel
            if non_utf8:
                if shown in texts or shown in other:
                    problems.add(shown, "non_utf8_path", "a file whose name is not UTF-8 and "
                                 "reads, with replacement characters, as another file's; not read")
                    continue
                problems.add(shown, "non_utf8_path", "a file whose name is not UTF-8; read, and "
                             "shown with replacement characters")
            if full.is_symlink():
                _report_symlink(shown, os.readlink(full), problems)
                continue
            if not _wanted(src, rel):
                other.append(shown)
                continue
            try:
                data = read_regular(full, max_bytes=MAX_FILE_BYTES)
            except NotRegularFile as exc:  # a FIFO would block the read forever: never opened
                problems.add(shown, "special_file", exc.reason)
                continue
            except FileTooLarge as exc:
                problems.add(shown, "oversized", _oversized(exc.size))
                other.append(shown)
                continue
            except OSError as exc:
                problems.add(shown, "unreadable", f"cannot read: {exc.strerror}")
                continue
            text = _decode(data)
            if text is None:
                problems.add(shown, "binary", "not UTF-8 text (binary content); not read")
                continue
            texts[shown] = (text, _git.git_blob_id(data))
    return texts, other


def _substrate_inputs(texts: dict[str, tuple[str, str]]) -> dict[str, str]:
    # Keys are '.elfmem/memory/...' or, when .elfmem is the repo, 'memory/...'; both are what
    # parse_substrate places.
    return {p: t for p, (t, _sha) in texts.items()}


# --------------------------------------------------------------------------- the files frame

def _agent(src: _Source, texts: dict[str, tuple[str, str]], problems: Problems) -> dict | None:
    if src.layout != "souveraine":
        return None
    if "agent.yaml" in texts:
        where, text = "agent.yaml", texts["agent.yaml"][0]
    elif src.agent_yaml is not None:
        where = str(src.agent_yaml)
        try:
            text = read_regular(src.agent_yaml, max_bytes=MAX_FILE_BYTES).decode("utf-8")
        except FileTooLarge as exc:
            problems.add(where, "oversized", _oversized(exc.size))
            return None
        except (OSError, UnicodeDecodeError) as exc:
            problems.add(where, "unreadable", f"cannot read agent.yaml: {exc}")
            return None
    else:
        return None
    read = read_yaml(text)
    if read.failure == "depth":
        problems.add(where, "malformed_yaml", "agent.yaml nests too deeply to read")
        return None
    if not read.ok:
        problems.add(where, "malformed_yaml", f"agent.yaml is not valid YAML: {read.problem}",
                     line=None if read.line is None else read.line + 1)
        return None
    agent = read.value
    if not isinstance(agent, dict):
        problems.add(where, "malformed_yaml", "agent.yaml is not a mapping")
        return None
    for kind, message in _json.clean(agent, root="agent.yaml"):  # a "\ud800" YAML escape
        problems.add(where, kind, message)
    return agent


def _agent_block_files(agent: dict | None, where: str, paths: set[str], problems: Problems) -> set[str]:
    """Files agent.yaml's ``blocks`` list loads into context; unsafe or missing ones reported."""
    out: set[str] = set()
    blocks = (agent or {}).get("blocks") or []
    if not isinstance(blocks, list):
        problems.add(where, "bad_agent_blocks", "agent.yaml 'blocks' is not a list; ignored")
        return out
    for item in blocks:
        file = item.get("file") if isinstance(item, dict) else None
        if not isinstance(file, str):
            problems.add(where, "bad_agent_blocks", f"block entry {item!r} has no 'file'; ignored")
            continue
        try:
            fmt.safe_relative_path(file)
        except UnsafePath as exc:
            problems.add(where, "unsafe_path", f"block {item.get('label')!r}: {exc.message}; "
                         "never read")
            continue
        if file not in paths:
            problems.add(where, "missing_block_file",
                         f"block {item.get('label')!r} names {file}, which is not in the commit")
        out.add(file)
    return out


def domain_of(rel: str, layout: str) -> str:
    """The domain of a file: its first folder (``memory/<domain>`` for Souveraine memories,
    the section for substrate blocks, ``(root)`` for files at the top)."""
    if layout == "elfmem_substrate" and ".elfmem/" in rel:
        rel = rel.split(".elfmem/", 1)[1]
    if layout in ("letta_v1", "letta_v1_memory_prefix"):
        rel = fmt.strip_memory_prefix(rel)
    parts = rel.split("/")
    if layout == "elfmem_substrate" and parts[0] == "memory":
        return parts[1] if len(parts) > 2 else "self"
    if len(parts) == 1:
        return "(root)"
    if layout == "souveraine" and parts[0] == "memory" and len(parts) > 2:
        return f"memory/{parts[1]}"
    return parts[0]


def _label(rel: str, layout: str) -> str | None:
    if layout == "elfmem_substrate":
        return None
    return fmt.label_for_path(rel, memory_prefix=layout == "letta_v1_memory_prefix")


def _files_frame(src: _Source, texts: dict[str, tuple[str, str]], problems: Problems,
                 meta: dict[str, Any]) -> pd.DataFrame:
    layout = src.layout
    agent = _agent(src, texts, problems)
    where = "agent.yaml" if "agent.yaml" in texts else str(src.agent_yaml or "agent.yaml")
    agent_files = _agent_block_files(agent, where, set(texts), problems) if agent else set()
    if meta is not None and agent is not None:
        meta["agent"] = agent
    rows: list[dict[str, Any]] = []
    fm_keys: set[str] = set()
    for path in sorted(texts):
        rel = path[len(src.prefix):] if src.prefix and path.startswith(src.prefix) else path
        if not rel.endswith(".md"):
            continue
        text, blob = texts[path]
        fm = fmt.read_frontmatter(text)
        validated = layout != "elfmem_substrate" and fmt.is_validated_path(rel)
        for kind, message, line in fm.problems:
            if kind == "readers_disagree" and layout not in LETTA_LAYOUTS:
                continue  # Letta's two readers matter only where Letta reads the repo
            problems.add(path, kind, message, line=line)
        if layout in ("letta_v1", "letta_v1_memory_prefix", "souveraine"):
            _check_letta_file(path, rel, fm, validated, layout, problems)
        fm_keys.update(fm.fields)
        limit = fm.limit
        chars = len(fm.body)
        effective = limit if limit is not None else (
            fmt.DEFAULT_LIMIT if layout.startswith("letta") else None)
        rows.append({
            "path": path, "label": _label(rel, layout), "layout": layout,
            "domain": domain_of(rel, layout),
            "in_prompt": in_prompt(rel, layout, agent_files),
            "frontmatter_raw": fm.raw,
            **{f"fm_{k}": v for k, v in fm.fields.items()},
            "description": fm.description, "read_only": fm.read_only, "limit": limit,
            "body": fm.body, "body_chars": chars, "body_tokens": token_estimate(chars),
            "over_limit": bool(effective is not None and chars > effective), "blob_sha": blob,
            **_readings(fm),
        })
        _storable_row(rows[-1], path, problems)
    fm_cols = [f"fm_{k}" for k in sorted(fm_keys)]
    order = list(FILES_COLUMNS)
    order = order[:order.index("frontmatter_raw") + 1] + fm_cols + order[order.index("frontmatter_raw") + 1:]
    if not rows:
        df = empty_frame({**FILES_COLUMNS, **{c: "string" for c in fm_cols}})
        return df[order]
    df = pd.DataFrame(rows, columns=order)
    for col in order:
        dtype = FILES_COLUMNS.get(col, "string")
        if dtype == "boolean":
            df[col] = pd.array(df[col].tolist(), dtype="boolean")
        elif dtype == "Int64":
            df[col] = pd.array(df[col].tolist(), dtype="Int64")
        else:
            df[col] = df[col].astype(dtype)
    return df


def _storable_row(row: dict[str, Any], path: str, problems: Problems) -> None:
    """Lone surrogates (a YAML ``"\\ud800"`` escape in the frontmatter) replaced with U+FFFD in
    place, in one ``bad_text`` row per file: a string column cannot hold them."""
    hit = [col for col, v in row.items() if isinstance(v, str) and _json.clean_text(v) != v]
    if not hit:
        return
    first = next(c for col in hit for c in row[col] if "\ud800" <= c <= "\udfff")
    for col in hit:
        row[col] = _json.clean_text(row[col])
    problems.add(path, "bad_text", f"the frontmatter holds a lone surrogate escape "
                 f"(\\u{ord(first):04x}), which is not a character; {', '.join(hit)} read with "
                 "U+FFFD in its place")


def _readings(fm: fmt.Frontmatter) -> dict[str, Any]:
    """The files frame's columns for what Letta Code and the Letta server each read."""
    client, server = fm.client, fm.server

    def text(v: Any) -> str | None:
        return None if v is None else str(v)

    return {
        "client_description": client.description if client else None,
        "client_read_only": client.read_only if client else None,
        "client_refusal": client.refusal if client else None,
        "server_description": text(server.description) if server else None,
        "server_read_only": text(server.read_only) if server else None,
        "server_value_chars": len(server.value) if server and server.raises is None else None,
        "server_whole_file": server.whole_file if server else None,
        "yaml_ok": fm.yaml_ok,
        "readers_agree": not any(k == "readers_disagree" for k, _, _ in fm.problems),
    }


def _check_letta_file(path: str, rel: str, fm: fmt.Frontmatter, validated: bool, layout: str,
                      problems: Problems) -> None:
    """What Letta itself would trip over in the committed file (the hook's view of HEAD)."""
    if fmt.is_flat_skill_path(rel):
        problems.add(path, "flat_skill", "skills must be folders (skills/<name>/SKILL.md); the "
                     "pre-commit hook refuses this file and the skills loader ignores it")
    if not validated:
        return
    if not fm.has_frontmatter:
        problems.add(path, "no_frontmatter", "no frontmatter: the server reads the whole file as "
                     "the block value, and the pre-commit hook refuses the next edit")
        return
    if layout == "souveraine":
        return  # Souveraine commits through libgit2; no hook, its own keys (tags) are fine
    unknown = [k for k in fm.fields if k not in fmt.ALLOWED_KEYS]
    if unknown:
        problems.add(path, "unknown_key", f"frontmatter key(s) {', '.join(unknown)} are not "
                     f"allowed in {rel.split('/')[0]}/ (allowed: {', '.join(fmt.ALLOWED_KEYS)}); "
                     "the hook refuses the next edit")
    if not fm.fields.get("description", "").strip():
        problems.add(path, "missing_description", "no description; the hook requires one")
