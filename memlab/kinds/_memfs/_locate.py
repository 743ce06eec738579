"""Where a memory repository is and what layout it has: the located source, the layout
rules and the evidence that Letta made or uses a tree (:func:`letta_evidence`).
:mod:`memlab.kinds._memfs._load` loads what this finds."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from memlab import _git as _hardened
from memlab._files import read_text
from memlab.constants import MAX_FILE_BYTES, MAX_POLICY_BYTES
from memlab.errors import RepoError, SourceError, StoreNotFound, UnrecognizedStore
from memlab.formats import letta_memfs as fmt
from memlab.sources import _git
from memlab.store import Problems, Store

__all__ = [
    "LAYOUTS",
    "LETTA_LAYOUTS",
    "KINDS",
    "Source",
    "require_commits",
    "SOURCE_ATTR",
    "located_source",
    "classify_author",
    "shared_memory_name",
    "agent_memory_folder",
    "reads_a_prompt",
    "LOCAL_BACKEND",
    "local_backend_dir",
    "layout_policy_of",
    "letta_evidence",
    "locate",
    "decode",
    "letta_text_note",
]

LAYOUTS = (
    "letta_v1",
    "letta_v1_memory_prefix",
    "letta_v2",
    "souveraine",
    "elfmem_substrate",
    "generic_markdown",
)
#: Layouts Letta Code reads and guards with its pre-commit hook.
LETTA_LAYOUTS = ("letta_v1", "letta_v1_memory_prefix", "letta_v2")
KINDS = {
    "letta_v1": "letta_memfs",
    "letta_v1_memory_prefix": "letta_memfs",
    "letta_v2": "letta_memfs",
    "souveraine": "souveraine",
    "elfmem_substrate": "elfmem_substrate",
    "generic_markdown": "letta_memfs",
}
_MEMFS_MARKERS = ("system/", "memory/system/", "reference/", "skills/", ".letta/")


@dataclass
class Source:
    """Where the memory is and how to read it: a commit of a repo, or plain files on disk."""

    path: Path  # the folder asked for
    layout: str
    repo: _git.RepoInfo | None
    root: Path  # repo root, or the folder read from disk
    prefix: str = ""  # the part of repo paths above the memory ('.elfmem/')
    agent_yaml: Path | None = None  # souveraine agent.yaml on disk, outside the repo
    name: str | None = None
    problems: Problems = field(default_factory=Problems)
    evidence: tuple[str, ...] = ()  # why memlab believes Letta made or uses this tree
    hook_installed: str | None = None  # variant of Letta Code's hook in this checkout, if any


def require_commits(info: _git.RepoInfo) -> None:
    if info.empty:
        raise RepoError(
            "the repository has no commits yet, so the agent sees no memory",
            path=info.path,
            hint="commit the memory files first",
        )


#: The instance attribute where :func:`load_memfs` keeps the located source of a Store.
SOURCE_ATTR = "_memfs_source"


def located_source(store_or_path: Store | str | Path) -> Source:
    """Where a store (or a path :func:`load_memfs` would take) reads from, without loading it.

    A store :func:`load_memfs` returned reuses the repository and layout found when it was
    loaded (locating costs a dozen git calls, and the audit asks several times); another Store
    is located again. A path gets the loader's own refusals (no such folder, unrecognised, no
    commits yet).
    """
    if isinstance(store_or_path, Store):
        src = vars(store_or_path).get(SOURCE_ATTR)
        if src is not None and src.path == Path(store_or_path.path):
            return src
        return locate(Path(store_or_path.path))
    src = locate(Path(store_or_path).expanduser())
    if src.repo is not None:
        require_commits(src.repo)
    return src


def classify_author(name, email, message, branch) -> str:
    return fmt.classify_author(name, email, message=message, branch=branch)


def _is_memfs_tree(paths: list[str]) -> bool:
    return any(
        p in (fmt.ROOT_INDEX, fmt.CONSTRAINTS_CONFIG) or p.startswith(_MEMFS_MARKERS) for p in paths
    )


def reads_a_prompt(source: Source) -> bool:
    """Whether the tree ``source`` reads holds what a Letta agent's prompt is made of: a root
    ``MEMORY.md`` (v2) or a ``system/`` folder (v1, also under the ``memory/`` prefix). The
    loader's other markers (``reference/``, ``skills/``, ``.letta/``) name memory beside these;
    alone they are the folders of a docs or skills repository."""
    paths = _tree_paths(source.repo) if source.repo is not None else _disk_paths(source.root)
    return any(p == fmt.ROOT_INDEX or p.startswith(("system/", "memory/system/")) for p in paths)


_SHARED_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def shared_memory_name(path: Path) -> str | None:
    """The repository name when ``path`` is a shared-memory repository mounted beside an
    agent's ``memory/`` (``~/.letta/agents/<id>/<name>/``, Letta Code 0.34, cloud only: names
    ``[A-Za-z0-9._-]{1,64}``, ``memory`` reserved); None otherwise. ``memory-worktrees`` and
    ``memory-backup-*`` beside it are Letta Code's own copies of ``memory/``, not repositories of
    their own."""
    parts = path.parts
    if len(parts) < 4 or parts[-3] != "agents" or parts[-4] != ".letta":
        return None
    name = parts[-1]
    if (
        not _SHARED_NAME.fullmatch(name)
        or name == "memory"
        or name == "memory-worktrees"
        or name.startswith("memory-backup")
    ):
        return None
    return name


#: Letta Code's local backend (``letta --backend local``) keeps its agents' records, their
#: conversations and their memory repositories (``memfs/<id>/memory``) in this folder of a
#: Letta home (``getLocalBackendStorageDir``).
LOCAL_BACKEND = "lc-local-backend"


def local_backend_dir(letta: Path, *, own: bool) -> Path:
    """The local backend's storage folder of the Letta home ``letta``:
    ``LETTA_LOCAL_BACKEND_DIR`` when ``own`` (the user's own home, where Letta Code's
    environment applies) and it is set, else ``<letta>/lc-local-backend``."""
    env = os.environ.get("LETTA_LOCAL_BACKEND_DIR") or ""
    return Path(env).expanduser() if own and env else letta / LOCAL_BACKEND


def agent_memory_folder(path: Path) -> bool:
    """``~/.letta/agents/<id>/memory`` (where Letta Code keeps an agent's memory repository) or
    ``~/.letta/lc-local-backend/memfs/<id>/memory`` (its local backend's, where
    :func:`memlab.kinds.letta_memfs._find.find_letta_memfs` looks too)."""
    parts = path.parts
    return (
        len(parts) >= 4
        and parts[-1] == "memory"
        and (
            (parts[-3] == "agents" and parts[-4] == ".letta")
            or (
                len(parts) >= 5
                and parts[-3] == "memfs"
                and parts[-4] == LOCAL_BACKEND
                and parts[-5] == ".letta"
            )
        )
    )


def _tree_paths(info: _git.RepoInfo) -> list[str]:
    """The paths of HEAD's tree; for a repository with no commits yet, the names in its
    folder (all there is of the memory: a new v2 repository's ``MEMORY.md`` is a v2 layout)."""
    if info.head_sha is None:  # info.empty
        return _disk_paths(info.path)
    return [e.path for e in _git.ls_tree(info.path, info.head_sha)]


def _disk_paths(path: Path) -> list[str]:
    """The names directly in ``path`` (folders with a trailing ``/``), ``.git`` left out, and
    the folders in its ``memory/`` (``memory/system/``: the v1 prefix layout's marker)."""
    out: list[str] = []
    try:
        for p in path.iterdir():
            if p.name == ".git":
                continue
            out.append(p.name + ("/" if p.is_dir() else ""))
            if p.name == "memory" and p.is_dir() and not p.is_symlink():
                out += [f"memory/{q.name}/" for q in p.iterdir() if q.is_dir()]
    except OSError:
        pass
    return sorted(out)


def _installed_hook(info: _git.RepoInfo | None) -> str | None:
    """The variant of Letta Code's pre-commit hook installed in this checkout, or None.

    Reads ``<git dir>/hooks/pre-commit`` (never runs it; not past
    :data:`~memlab.constants.MAX_FILE_BYTES`, like any file memlab reads); Letta Code writes the
    marker line
    :data:`~memlab.formats.letta_memfs.LETTA_HOOK_MARKER` into it, and the February 2026 hook
    still required ``limit``.
    """
    if info is None:
        return None
    hook = info.git_dir / "hooks" / "pre-commit"
    try:
        if hook.is_symlink() or not hook.is_file():
            return None
        text = read_text(hook, max_bytes=MAX_FILE_BYTES)
    except OSError:  # over the cap, not a regular file (swapped in since), unreadable
        return None
    if fmt.LETTA_HOOK_MARKER not in text:
        return None
    return "2026-02" if "missing required field 'limit'" in text else "current"


def layout_policy_of(
    info: _git.RepoInfo | None, commit: str | None, *, shared: bool = False
) -> tuple[str | None, str]:
    """The layout policy Letta Code validates this checkout under, and why (its
    ``memoryLayoutPolicy``): ``.git/letta-memory-layout-policy`` in the repository's common git
    folder when it holds a policy word, else the commit's tree. None (with the reason) for a
    folder that is not a repository. Reads the policy file (a regular file of at most
    :data:`~memlab.constants.MAX_POLICY_BYTES`, 4 KB;
    anything else counts as absent, as an unreadable file does for Letta) and asks git
    whether any commit before ``commit`` touched ``MEMORY.md``; writes nothing. A
    shared-memory repository (``shared``) without a policy file is ``shared-memory``: Letta
    Code installs that policy in every one it mounts (``installSharedMemoryPreCommitHook``)."""
    if info is None or info.empty or commit is None:
        return None, "not a git repository with commits: Letta Code validates commits only"
    policy_file = _hardened.common_dir(info.git_dir) / fmt.LAYOUT_POLICY_FILE
    text = None
    try:
        if not policy_file.is_symlink() and policy_file.is_file():
            text = read_text(policy_file, max_bytes=MAX_POLICY_BYTES)
    except OSError:
        text = None
    # `git cat-file -e HEAD:MEMORY.md` holds for a folder of that name too
    if shared and text is None:
        return "shared-memory", (
            "a shared-memory repository without a policy file: Letta Code "
            "installs shared-memory in every one it mounts"
        )
    head_has_root = any(
        e.path == fmt.ROOT_INDEX or e.path.startswith(fmt.ROOT_INDEX + "/")
        for e in _git.ls_tree(info.path, commit)
    )
    ever = head_has_root
    if not ever and text is not None and text.strip() == "root-marker":
        ever = bool(
            _git.run_git(
                info.path, "rev-list", "-n", "1", commit, "--", fmt.ROOT_INDEX, check=False
            ).strip()
        )
    return fmt.layout_policy(text, memory_md_ever=ever, head_has_root=head_has_root)


def _v2_evidence(texts: dict[str, str]) -> bool:
    """A root MEMORY.md without frontmatter, and root files with exactly name + description."""
    index = texts.get(fmt.ROOT_INDEX)
    if index is None or index.startswith("---"):
        return False
    others = [t for p, t in texts.items() if p != fmt.ROOT_INDEX]
    return bool(others) and all(
        not fmt.check_precommit(p, t, None, variant="v2", change="A")
        for p, t in texts.items()
        if p != fmt.ROOT_INDEX
    )


_EVIDENCE_CACHE: dict[tuple[str, str | None], tuple[tuple[str, ...], str | None]] = {}


def letta_evidence(
    path: Path, info: _git.RepoInfo | None, paths: list[str]
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
        found.append(
            f"{fmt.CONFIG_PATH} is in the tree (the Letta server creates every memory "
            "repository with it)"
        )
    parts = path.parts
    if fmt.CONSTRAINTS_CONFIG in paths:
        found.append(
            f"{fmt.CONSTRAINTS_CONFIG} is in the tree (Letta Code's tracked memory "
            "constraints policy)"
        )
    if shared_memory_name(path):
        found.append(
            f"the folder is a shared-memory repository mounted beside an agent's memory "
            f"under .letta/agents/{parts[-2]}/ (where Letta Code mounts them)"
        )
    if agent_memory_folder(path):
        found.append(
            f"the folder is an agent's memory under .letta/agents/{parts[-2]}/ (where "
            "Letta Code keeps it)"
        )
    hook = _installed_hook(info)
    if hook is not None:
        found.append(
            f"this checkout has Letta Code's pre-commit hook installed ({hook} "
            f"version; .git/hooks/pre-commit says {fmt.LETTA_HOOK_MARKER!r})"
        )
    if info is not None and not info.empty:
        agent_id = (
            _git.run_git(info.path, "config", "--get", "letta.agentId", check=False)
            .decode("utf-8", "replace")
            .strip()
        )
        if agent_id:
            found.append(f"git config letta.agentId = {agent_id[:80]!r} (set by Letta Code)")
        log = (
            _git.run_git(info.path, "log", "--all", "--format=%ae%x1f%s", check=False)
            .decode("utf-8", "replace")
            .splitlines()
        )
        counts: dict[str, int] = {}
        for line in log:
            email, _, subject = line.partition("\x1f")
            kind = fmt.classify_author(None, email, message=subject)
            if kind in ("agent", "reflection_subagent", "server_user", "system", "harness"):
                counts[kind] = counts.get(kind, 0) + 1
            if subject.startswith("merge(reflection):"):
                counts["reflection_merge"] = counts.get("reflection_merge", 0) + 1
            if subject.startswith("merge(memory):"):
                counts["memory_merge"] = counts.get("memory_merge", 0) + 1
        words = {
            "agent": "by Letta agent identities (agent-…@letta.com)",
            "reflection_subagent": "by Letta reflection subagents",
            "server_user": "by Letta server users (user-…@letta.ai)",
            "system": "by the Letta server's own identities (…@letta.ai)",
            "harness": "by Letta Code itself (noreply@letta.com)",
            "reflection_merge": "are Letta Code reflection merges (merge(reflection): …)",
            "memory_merge": "are Letta Code memory-worker merges (merge(memory): …)",
        }
        for kind, n in counts.items():
            found.append(f"{n} commit(s) {words[kind]}")
    if fmt.ROOT_INDEX in paths and info is not None and info.head_sha is not None:
        roots = {
            e.path: e.sha
            for e in _git.ls_tree(info.path, info.head_sha)
            if "/" not in e.path
            and e.path.endswith(".md")
            and e.type == "blob"
            and (e.size or 0) <= MAX_FILE_BYTES
        }
        blobs = _git.read_blobs(info.path, roots.values(), max_bytes=MAX_FILE_BYTES)
        texts = {p: (decode(blobs.get(sha, b"")) or "") for p, sha in roots.items()}
        if _v2_evidence(texts):
            found.append(
                "a root MEMORY.md without frontmatter, and every root file has exactly "
                "the name and description memfs v2 requires"
            )
    out = (tuple(found), hook)
    if info is not None:
        _EVIDENCE_CACHE[key] = out
    return out


def _memfs_source(
    path: Path, info: _git.RepoInfo | None, root: Path, paths: list[str], name: str | None
) -> Source:
    if info is None and (root / fmt.CONFIG_PATH).is_file():
        paths = [*paths, fmt.CONFIG_PATH]
    evidence, hook = letta_evidence(root, info, paths)
    layout = _letta_layout(paths) if evidence else "generic_markdown"
    return Source(path, layout, info, root, name=name, evidence=evidence, hook_installed=hook)


def locate(path: Path) -> Source:
    """Find the repository (or folder) and decide the layout. Reads nothing but names."""
    if not path.exists() and not path.is_symlink():
        raise StoreNotFound("no such file or folder", path=path)
    if path.is_file() and path.name == "agent.yaml":
        path = path.parent
    if not path.is_dir():
        raise UnrecognizedStore("a file, not a memory folder or repository", path=path)
    if not os.access(path, os.R_OK | os.X_OK):
        raise SourceError(
            "cannot read this folder (permission denied)",
            path=path,
            hint="memlab needs read and execute permission on it",
        )
    path = path.resolve()

    # An elfmem substrate: the .elfmem folder itself, or a project folder holding one.
    if path.name == ".elfmem" or (path / ".elfmem" / "memory").is_dir():
        holder = path if path.name != ".elfmem" else path.parent
        for candidate, prefix in ((holder, ".elfmem/"), (holder / ".elfmem", "")):
            info = _git.find_repo(candidate) if candidate.is_dir() else None
            if info is not None:
                return Source(
                    path, "elfmem_substrate", info, candidate, prefix=prefix, name=holder.name
                )
        return Source(path, "elfmem_substrate", None, holder, prefix=".elfmem/", name=holder.name)

    info = _git.find_repo(path)
    # A Souveraine agent dir (agent.yaml beside memory/) or a Letta agent root
    # (~/.letta/agents/<id>/)
    if info is None and (path / "memory").is_dir():
        inner = _git.find_repo(path / "memory")
        if inner is not None:
            if (path / "agent.yaml").is_file():
                return Source(
                    path, "souveraine", inner, path / "memory", agent_yaml=path / "agent.yaml"
                )
            return _memfs_source(path, inner, path / "memory", _tree_paths(inner), path.name)
    if info is not None:
        paths = _tree_paths(info)
        if "agent.yaml" in paths:
            return Source(path, "souveraine", info, path)
        if (path.parent / "agent.yaml").is_file():
            return Source(
                path, "souveraine", info, path, agent_yaml=path.parent / "agent.yaml", name=None
            )
        if _is_memfs_tree(paths) or agent_memory_folder(path) or shared_memory_name(path):
            name = path.parent.name if path.name == "memory" else path.name
            return _memfs_source(path, info, path, paths, name)
        raise UnrecognizedStore(
            # a repository with no commits: _tree_paths read the names in its folder
            "a git repository with no commits yet and no system/, MEMORY.md, skills/ or "
            ".letta/config.json in its folder"
            if info.empty
            else "a git repository, but its HEAD has no system/, MEMORY.md, "
            "skills/ or .letta/config.json",
            path=path,
            hint="point memlab at a Letta memory repo, a Souveraine agent dir "
            "or a folder holding .elfmem/",
        )
    # Plain folders: a Souveraine dir or a `letta memory backup` copy without .git.
    if (path / "agent.yaml").is_file():
        root = path / "memory" if (path / "memory" / "system").is_dir() else path
        return Source(path, "souveraine", None, root, agent_yaml=path / "agent.yaml")
    disk = _disk_paths(path)
    if _is_memfs_tree(disk):
        return _memfs_source(path, None, path, disk, path.name)
    raise UnrecognizedStore(
        "not a git repository and no system/, MEMORY.md, agent.yaml or .elfmem/ inside", path=path
    )


def _letta_layout(paths: list[str]) -> str:
    if fmt.ROOT_INDEX in paths:
        return "letta_v2"
    if any(p.startswith("memory/") for p in paths) and not any(
        p.startswith("system/") for p in paths
    ):
        return "letta_v1_memory_prefix"
    return "letta_v1"


def decode(data: bytes, *, as_letta: bool = False) -> str | None:
    """A file's bytes as text, or None when memlab does not read them as text (NUL bytes, not
    UTF-8).

    ``as_letta``: a memory file (``.md``) of a Letta layout, read as Letta Code 0.34.12 reads
    it, which never calls a memory file binary: it compiles the prompt from
    ``git show HEAD:<path>`` run with ``encoding: "utf8"`` (``collectCommittedMemoryFiles``,
    src/backend/local/system-prompt-compilation.ts, ``letta.js`` line 118056 of the
    ``letta==0.34.12`` wheel's payload) and sizes it with ``readFileSync(path, "utf8")``
    (``estimateSystemPromptSize``, src/agent/system-prompt-size.ts, line 221680, behind
    ``letta memory tokens``): Node's UTF-8 decoding, an invalid byte sequence U+FFFD, a NUL
    byte a character (:func:`~memlab.formats.letta_memfs.hook_text`, the same read)."""
    if as_letta:
        return fmt.hook_text(data)
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def letta_text_note(data: bytes) -> tuple[str, str] | None:
    """The problem row (kind, message) for a Letta memory file whose bytes are not plain
    UTF-8 text (NUL bytes, invalid UTF-8), read as Letta Code reads it (:func:`decode`); None
    for plain text."""
    if decode(data) is not None:
        return None
    what = "holds NUL bytes" if b"\x00" in data else "is not valid UTF-8"
    kind = "nul_bytes" if b"\x00" in data else "not_utf8"
    return kind, (
        f"{what}; read as Letta Code 0.34.12 reads a memory file (UTF-8, invalid "
        "bytes as U+FFFD, NUL bytes kept as characters): text, not binary"
    )
