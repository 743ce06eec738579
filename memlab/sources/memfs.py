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

Rooms: finding the repository, its layout and that evidence is :mod:`memlab.sources._memfs_locate`;
git bundles (the bundled sample) are :mod:`memlab.sources._bundle`; reading the tree, the disk and
the files frame is here.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.formats._yaml import read_yaml
from memlab.errors import MemlabError, RepoError, StoreNotFound, UnrecognizedStore, UnsafePath
from memlab._files import FileTooLarge, NotRegularFile, read_regular, walk
from memlab.constants import MAX_FILE_BYTES, MAX_FM_COLUMNS, MAX_FOLDER_DEPTH
from memlab.formats import _json
from memlab.formats import letta_memfs as fmt
from memlab.sources import _git
from memlab.sources._bundle import SAMPLE_BUNDLE, unpack_bundle
from memlab.sources._memfs_locate import (_KINDS, _SOURCE_ATTR, LAYOUTS, LETTA_LAYOUTS, _Source,
                                          _classify, _decode, _located, _locate,
                                          _require_commits, letta_evidence)
from memlab.store import Problems, Store, empty_frame, token_estimate

__all__ = ["load_memfs", "repos_in", "unpack_bundle", "SAMPLE_BUNDLE", "files_at", "file_versions",
           "resolve_ref", "in_prompt", "domain_of", "is_memory_path", "letta_evidence",
           "FILES_COLUMNS", "LAYOUTS", "LETTA_LAYOUTS"]


#: The files frame without its ``fm_<key>`` columns (they go after ``frontmatter_raw``; at most
#: ``MAX_FM_COLUMNS`` of them, see :func:`_fm_columns`).
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



# --------------------------------------------------------------------------- reading


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
    if read.failure == "size":
        problems.add(where, "malformed_yaml", f"agent.yaml is not read: {read.problem}")
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
    fm_keys: dict[str, None] = {}  # the store's fm_ columns, in first-seen order (capped)
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
        fm_cells = _fm_columns(path, fm.fields, fm_keys, problems)
        limit = fm.limit
        chars = len(fm.body)
        effective = limit if limit is not None else (
            fmt.DEFAULT_LIMIT if layout.startswith("letta") else None)
        rows.append({
            "path": path, "label": _label(rel, layout), "layout": layout,
            "domain": domain_of(rel, layout),
            "in_prompt": in_prompt(rel, layout, agent_files),
            "frontmatter_raw": fm.raw,
            **{f"fm_{k}": v for k, v in fm_cells.items()},
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
    # Every column built once, then one frame: never one insert per column.
    columns: dict[str, Any] = {}
    for col, dtype in FILES_COLUMNS.items():
        values = [row.get(col) for row in rows]
        if dtype in ("boolean", "Int64"):
            columns[col] = pd.array(values, dtype=dtype)
        else:
            columns[col] = pd.Series(values, dtype=object).astype(dtype)
    for col in fm_cols:
        columns[col] = pd.array([row.get(col) for row in rows], dtype="string")
    df = pd.DataFrame({col: columns[col] for col in order})
    return df


def _fm_columns(path: str, fields: dict[str, str], fm_keys: dict[str, None],
                problems: Problems) -> dict[str, str]:
    """The frontmatter keys of one file that become its ``fm_<key>`` cells: at most
    :data:`~memlab.constants.MAX_FM_COLUMNS` of the file's, and only while the store has fewer
    than that many distinct ones (``fm_keys``, updated). Keys left out stay in
    ``frontmatter_raw``; a ``frontmatter_keys`` row names the file and how many."""
    kept: dict[str, str] = {}
    for key, value in fields.items():
        if len(kept) >= MAX_FM_COLUMNS:
            break
        if key not in fm_keys:
            if len(fm_keys) >= MAX_FM_COLUMNS:
                continue
            fm_keys[key] = None
        kept[key] = value
    left = len(fields) - len(kept)
    if left:
        problems.add(path, "frontmatter_keys", f"{len(fields):,} frontmatter keys: {left:,} of "
                     f"them are left out of the fm_ columns (at most {MAX_FM_COLUMNS} per file "
                     "and per store); they stay in frontmatter_raw")
    return kept


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
        "server_value_chars": (len(server.value) if server and server.raises is None
                               and server.unread is None else None),
        "server_whole_file": server.whole_file if server else None,
        "yaml_ok": fm.yaml_ok,
        # Not known when the frontmatter is not read (an alias bomb): NA, not True.
        "readers_agree": (None if server and server.unread is not None else
                          not any(k == "readers_disagree" for k, _, _ in fm.problems)),
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
        shown = ", ".join(unknown[:20]) + (f" and {len(unknown) - 20:,} more" if len(unknown) > 20
                                           else "")
        problems.add(path, "unknown_key", f"frontmatter key(s) {shown} are not "
                     f"allowed in {rel.split('/')[0]}/ (allowed: {', '.join(fmt.ALLOWED_KEYS)}); "
                     "the hook refuses the next edit")
    if not fm.fields.get("description", "").strip():
        problems.add(path, "missing_description", "no description; the hook requires one")
