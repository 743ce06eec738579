"""The one way memlab runs git, for reading and for writing.

A memory repository is untrusted input: whoever wrote it controls its ``.git/config``, its
``.gitattributes`` and every file in it. Git will run programs a repository's config names
(``core.fsmonitor``, hooks, ``filter.<x>.clean/smudge/process``, ``diff.external``, textconv,
``core.pager``, ``core.sshCommand``, credential helpers, ``gpg.program``...). Every git process
memlab starts goes through :func:`run` (or :func:`stream`, :func:`pipe`), which

* starts git with a minimal environment: ``PATH``, ``TMPDIR``, ``LC_ALL=C``, no system or global
  config (``GIT_CONFIG_NOSYSTEM=1``, ``GIT_CONFIG_GLOBAL=/dev/null``, ``GIT_ATTR_NOSYSTEM=1``),
  no inherited ``GIT_*`` variable, no terminal prompt, stdin closed unless memlab sends input;
* overrides every program-naming key with ``-c`` (:data:`CONFIG_OVERRIDES`), plus an empty value
  for every ``filter.<x>.*``, ``diff.<x>.*`` and ``merge.<x>.driver`` the repository defines
  (command-line config wins over the repository's own);
* refuses (:class:`~memlab.errors.RepoError` naming the key) a repository whose config uses
  ``include``/``includeIf`` (memlab does not follow config into other files), and one that
  leads git to a FIFO, socket or device (git would block on it): in its git folder, its common
  folder, a folder a symlink there leads to, or along ``objects/info/alternates``;
* runs git through :mod:`memlab._proc` with a deadline (:data:`GIT_TIMEOUT_ENV`, default
  :data:`~memlab.constants.GIT_TIMEOUT_S`): past it git's whole process group is killed and a
  RepoError names the store and the variable (the backstop for what the checks cannot see).

memlab's own writes never need a checkout filter, and no git process makes an object: a
migration and review's apply write their blobs, trees and commits from Python through the one
writer, :mod:`memlab._gitobj` (:func:`write_object`, :func:`hash_object`, :func:`commit_tree`
here), and move the branch with ``update-ref``; working-tree files are written by memlab itself.
The analyst's own ``safe.directory`` entries (global config, which is theirs and trusted) are passed
through so a repository they allowed stays readable.
:data:`ENV_OVERRIDES` and :data:`CONFIG_OVERRIDES` are plain data so the standalone migration
plan script embeds exactly the same hardening.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO, Iterator, Mapping, Sequence

from memlab import _proc
from memlab._files import FileTooLarge, over_cap, read_head, read_text
from memlab._gitobj import Signature, commit_body, write_loose
from memlab.constants import MAX_FILE_BYTES
from memlab.errors import RepoError
from memlab.io import parse_ls_tree, tree_name

__all__ = [
    "ENV_OVERRIDES",
    "CONFIG_OVERRIDES",
    "IDENTITY_KEYS",
    "env",
    "command",
    "run",
    "stream",
    "check_repo",
    "find_root",
    "git_dir",
    "returncode",
    "hash_object",
    "commit_tree",
    "update_ref",
    "rev_parse",
    "read_blob",
    "tree_entries",
    "write_object",
    "flat_tree",
    "symbolic_branch",
    "object_format",
    "common_dir",
    "deadline",
    "GIT_TIMEOUT_ENV",
    "pipe",
]

#: The environment variable that sets how long one git process may run, in seconds (default
#: :data:`~memlab.constants.GIT_TIMEOUT_S`); past it the process group is killed and the read
#: stops with one line naming the store and this variable.
GIT_TIMEOUT_ENV = "MEMLAB_GIT_TIMEOUT"


def deadline() -> _proc.Deadline:
    """Every git process's time limit (:data:`GIT_TIMEOUT_ENV`, read at each start)."""
    from memlab.constants import GIT_TIMEOUT_S

    return _proc.deadline_from_env(GIT_TIMEOUT_ENV, GIT_TIMEOUT_S)


#: Environment every git process gets on top of PATH/TMPDIR (nothing else is inherited).
ENV_OVERRIDES: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": "false",
    "LC_ALL": "C",
    "LANG": "C",
}

#: ``-c key=value`` pairs that switch off every program a repository's config could name.
CONFIG_OVERRIDES: tuple[str, ...] = (
    "core.hooksPath=" + os.devnull,
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.editor=false",
    "sequence.editor=false",
    "core.sshCommand=false",
    "core.askPass=",
    "core.gitProxy=",
    "core.alternateRefsCommand=",
    "core.attributesFile=" + os.devnull,
    "core.untrackedCache=false",
    "credential.helper=",
    "diff.external=",
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "log.showSignature=false",
    "protocol.allow=never",
    "gc.auto=0",
    "maintenance.auto=false",
    "i18n.commitEncoding=UTF-8",
    "core.quotePath=false",
)

#: Environment names that carry a commit's author and committer.
IDENTITY_KEYS = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
)

# Keys whose per-driver subsections name programs: neutralised with an empty value.
_DRIVER_KEY = re.compile(
    r"^(filter\.(.+)\.(clean|smudge|process)|diff\.(.+)\.(textconv|command)"
    r"|merge\.(.+)\.driver)$",
    re.IGNORECASE,
)
_INCLUDE_SECTION = re.compile(r"^\s*\[\s*(include(?:if)?)\b", re.IGNORECASE | re.MULTILINE)
_INCLUDE_KEY = re.compile(r"^(include(?:if\..*)?)\.path$", re.IGNORECASE)


@lru_cache(maxsize=1)
def _safe_directories() -> tuple[str, ...]:
    """The analyst's own ``safe.directory`` entries (their global config: trusted)."""
    limit = _proc.Deadline(min(10.0, deadline().seconds), GIT_TIMEOUT_ENV)
    try:
        proc = _proc.run(
            ["git", "config", "--global", "--get-all", "safe.directory"],
            deadline=limit,
            what="git config --global",
            path=None,
            error=RepoError,
            env={
                k: v
                for k, v in os.environ.items()
                if k in ("PATH", "HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL")
            },
        )
    except (OSError, RepoError):
        return ()
    return tuple(line for line in proc.stdout.decode("utf-8", "replace").splitlines() if line)


def env(
    repo: Path | None = None, *, ceiling: bool = True, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whole environment of a git process. ``ceiling``: only ``repo`` itself may be the
    repository, never one that encloses it. ``extra``: identity or ``GIT_INDEX_FILE``."""
    out = {k: os.environ[k] for k in ("PATH", "TMPDIR", "SYSTEMROOT") if k in os.environ}
    out["HOME"] = os.environ.get("HOME", "/")
    out.update(ENV_OVERRIDES)
    if repo is not None and ceiling:
        out["GIT_CEILING_DIRECTORIES"] = str(Path(repo).resolve().parent)
    if extra:
        out.update(extra)
    return out


def find_root(path: str | Path) -> Path | None:
    """The nearest folder at or above ``path`` that holds a git repository, found without
    running git (git would read the untrusted config before memlab could check it)."""
    p = Path(path).expanduser().absolute()
    for cand in (p, *p.parents):
        if git_dir(cand) is not None:
            return cand
    return None


def git_dir(path: Path) -> Path | None:
    """The git folder of the repository at ``path`` (``.git``, a ``gitdir:`` file's target, or
    ``path`` itself when bare), found without running git; None when there is none."""
    dot = path / ".git"
    try:
        st = os.stat(dot, follow_symlinks=False) if os.path.lexists(dot) else None
    except OSError:
        return None
    if st is not None and stat.S_ISDIR(st.st_mode):
        return dot
    if st is not None and stat.S_ISREG(st.st_mode):
        try:
            head = read_head(dot, 4096).decode("utf-8", "replace")
        except OSError:
            return None
        if head.startswith("gitdir:"):
            target = Path(head[len("gitdir:") :].split("\n", 1)[0].strip())
            return target if target.is_absolute() else (path / target)
        return None
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        return path
    return None


def _special(path: Path) -> bool:
    """True when ``path`` exists and is a FIFO, socket or device (what git would block on)."""
    try:
        mode = os.stat(path).st_mode  # through symlinks: a link to /dev/zero is a device
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _config_files(gdir: Path) -> list[Path]:
    files = [gdir / "config", gdir / "config.worktree"]
    common = common_dir(gdir)
    if common != gdir:
        files.append(common / "config")
    return files


def _refuse_special(full: Path, gdir: Path) -> None:
    if _special(full):
        try:
            shown = full.relative_to(gdir)
        except ValueError:
            shown = full
        raise RepoError(
            f"the git folder leads to {shown}, which is not a regular file (a FIFO, "
            "socket or device); git would block on it",
            path=gdir,
            hint="memlab reads only regular files; remove it",
        )


def _walk_for_special(top: Path, gdir: Path, queue: list[Path], budget: list[int] | None) -> None:
    """Refuse a FIFO, socket or device at or below ``top``; queue the folders symlinks in it
    lead to (git follows them: a symlinked ``refs/heads`` or ``logs``). ``budget``: how many
    more entries may be looked at (a folder outside the git folder), None for no limit."""
    from memlab._files import walk
    from memlab.constants import MAX_FOLDER_DEPTH

    def too_deep(folder: str) -> None:
        # Refused rather than skipped: what lies below (a FIFO, say) would not be checked.
        raise RepoError(
            f"the git folder leads to {folder}, more than {MAX_FOLDER_DEPTH} levels "
            "deep; memlab does not walk it",
            path=gdir,
            hint="git itself never nests its folder so deep: remove that folder",
        )

    _refuse_special(top, gdir)
    for dirpath, dirnames, filenames in walk(top, too_deep=too_deep):
        if budget is not None:
            budget[0] -= len(dirnames) + len(filenames)
            if budget[0] < 0:
                raise RepoError(
                    f"a symlink or alternates entry of the git folder leads to {top}, "
                    f"which holds more than {LINKED_ENTRIES:,} entries; memlab does "
                    "not walk it",
                    path=gdir,
                    hint="point it at a real git folder, or load a clone",
                )
        for name in filenames + dirnames:
            full = Path(dirpath, name)
            _refuse_special(full, gdir)
            if os.path.islink(full) and os.path.isdir(full):
                queue.append(full)


#: How many entries memlab looks at in the folders outside a git folder that its symlinks and
#: ``objects/info/alternates`` lead to (a link to ``/`` is refused, not walked).
LINKED_ENTRIES = 200_000
#: git's own limit on nested alternates (``alt_odb_usable``: 5 levels).
_ALTERNATES_DEPTH = 5


def _alternates(objects: Path, gdir: Path) -> list[Path]:
    """The object folders ``objects/info/alternates`` names (relative to ``objects``)."""
    from memlab._files import read_regular

    path = objects / "info" / "alternates"
    if not os.path.lexists(path):
        return []
    try:
        raw = read_regular(path, max_bytes=1 << 20)
    except FileTooLarge as exc:
        raise RepoError(
            f"objects/info/alternates {exc.reason}",
            path=gdir,
            hint="git reads a few lines there; remove it or load a clone",
        ) from None
    except OSError:
        return []  # unreadable or dangling: git skips it too
    out = []
    for line in raw.decode("utf-8", "surrogateescape").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith('"') and line.endswith('"') and len(line) > 1:
            line = (
                line[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")
            )
        target = Path(line)
        out.append(target if target.is_absolute() else objects / target)
    return out


def _scan_git_dir(gdir: Path) -> None:
    """Refuse a git folder that leads git to a FIFO, socket or device: anywhere in it, in its
    common folder (a linked worktree's), in the folders its symlinks lead to (``refs/heads``,
    ``logs``, ``HEAD``, ``packed-refs``), and along ``objects/info/alternates`` (git's five
    levels). The process deadline (:data:`GIT_TIMEOUT_ENV`) is the backstop for anything else."""
    common = common_dir(gdir)
    queue: list[Path] = []
    seen: set[str] = set()
    roots = [gdir] + ([common] if common != gdir else [])
    for root in roots:
        seen.add(os.path.realpath(root))
        _walk_for_special(root, gdir, queue, None)
    budget = [LINKED_ENTRIES]
    objects = [(common / "objects", 0)]
    while queue or objects:
        if objects:
            folder, depth = objects.pop()
            if depth > 0:
                _refuse_special(folder, gdir)
                real = os.path.realpath(folder)
                if real not in seen and os.path.isdir(folder):
                    seen.add(real)
                    _walk_for_special(folder, gdir, queue, budget)
            if depth < _ALTERNATES_DEPTH and os.path.isdir(folder):
                objects += [(alt, depth + 1) for alt in _alternates(folder, gdir)]
            continue
        folder = queue.pop()
        real = os.path.realpath(folder)
        if any(real == s or real.startswith(s.rstrip(os.sep) + os.sep) for s in seen):
            continue  # walked already (a link back into the git folder, or a loop)
        seen.add(real)
        _walk_for_special(folder, gdir, queue, budget)


_checked: dict[tuple, tuple[str, ...]] = {}


def check_repo(path: Path) -> tuple[str, ...]:
    """Check the repository at ``path`` is safe to run git in; return its per-driver overrides.

    Raises RepoError naming the key when its config includes other files, or naming the file
    when its git folder holds a FIFO, socket or device. Cached per config file state.
    """
    gdir = git_dir(path)
    if gdir is None:
        return ()
    key_parts: list = [str(path)]
    texts = []
    for cfg in _config_files(gdir):
        try:
            st = os.stat(cfg)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            raise RepoError(
                f"{cfg.name} of the git folder is not a regular file; git would block reading it",
                path=cfg,
                hint="memlab reads only regular files",
            )
        key_parts.append((str(cfg), st.st_mtime_ns, st.st_size, st.st_ino))
        try:
            texts.append((cfg, read_text(cfg, max_bytes=MAX_FILE_BYTES)))
        except FileTooLarge as exc:
            raise RepoError(
                f"its git config {exc.reason}",
                path=cfg,
                hint="a git config is a few hundred bytes; load a clone",
            ) from None
    key = tuple(key_parts)
    if key in _checked:
        return _checked[key]
    for cfg, text in texts:
        m = _INCLUDE_SECTION.search(text)
        if m:
            raise RepoError(
                f"its git config uses {m.group(1)}.path, which would read config from "
                "another file; memlab does not follow config includes",
                path=cfg,
                hint="remove the [include]/[includeIf] section, or load a clone",
            )
    _scan_git_dir(gdir)
    overrides: list[str] = []
    if any(
        ("filter" in t.lower() or "diff" in t.lower() or "merge" in t.lower()) for _, t in texts
    ):
        listed = _raw(path, ["config", "--no-includes", "--list", "-z"], check=False)
        for entry in listed.stdout.split(b"\0"):
            name = entry.partition(b"\n")[0].decode("utf-8", "replace")
            if _INCLUDE_KEY.match(name):
                raise RepoError(
                    f"its git config sets {name}; memlab does not follow config includes",
                    path=gdir / "config",
                )
            m = _DRIVER_KEY.match(name)
            if m:
                overrides += ["-c", f"{name}="]
                if m.group(2):
                    overrides += ["-c", f"filter.{m.group(2)}.required=false"]
    _checked[key] = tuple(overrides)
    return _checked[key]


def command(*args: str, overrides: Sequence[str] = ()) -> list[str]:
    """The argv of one hardened git command (overrides come before ``args``)."""
    base = ["git", "--no-optional-locks", *overrides]  # later -c wins: ours come last
    for pair in CONFIG_OVERRIDES:
        base += ["-c", pair]
    for safe in _safe_directories():
        base += ["-c", f"safe.directory={safe}"]
    return [*base, *args]


def _raw(
    repo: Path,
    args: Sequence[str],
    *,
    input: bytes | None = None,
    check: bool = True,
    extra_env: Mapping[str, str] | None = None,
    ceiling: bool = True,
    overrides: Sequence[str] = (),
) -> subprocess.CompletedProcess:
    cmd = command(*args, overrides=overrides)
    try:
        proc = _proc.run(
            cmd,
            deadline=deadline(),
            what=f"git {args[0]}",
            path=repo,
            error=RepoError,
            input=input,
            cwd=repo,
            env=env(repo, ceiling=ceiling, extra=extra_env),
        )
    except FileNotFoundError as exc:
        if not Path(repo).exists():
            raise RepoError("folder not found", path=repo) from exc
        raise RepoError(
            "git is not installed or not on PATH", path=repo, hint="install git 2.32 or newer"
        ) from exc
    except NotADirectoryError as exc:
        raise RepoError("not a folder", path=repo) from exc
    except PermissionError as exc:
        raise RepoError(
            f"cannot run git in this folder: {exc.strerror}",
            path=repo,
            hint="memlab needs read and execute permission on the folder and on git",
        ) from exc
    if check and proc.returncode != 0:
        raise _failure(repo, args, proc.returncode, proc.stderr)
    return proc


def _failure(repo: Path, args: Sequence[str], code: int, stderr: bytes) -> RepoError:
    from memlab._escape import terminal_line

    err = stderr.decode("utf-8", "replace").strip()
    if "dubious ownership" in err:
        return RepoError(
            "git refuses to read a repository owned by another user",
            path=repo,
            hint=f"git config --global --add safe.directory {repo}",
        )
    # git says what is wrong on its error:/fatal: lines, often before a generic last line
    # ("error: invalid path 'system/.git/config'" then "fatal: Could not reset index file").
    lines = [line.strip() for line in err.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith(("error:", "fatal:"))][:2] or lines[-1:]
    what = "; ".join(said) if said else f"exit status {code}"
    return RepoError(f"git {args[0]} failed: {terminal_line(what, 300)}", path=repo)


def _config_args(config: Sequence[str]) -> tuple[str, ...]:
    return tuple(a for pair in config for a in ("-c", pair))


def run(
    repo: str | Path,
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    extra_env: Mapping[str, str] | None = None,
    ceiling: bool = True,
    config: Sequence[str] = (),
) -> bytes:
    """Run one hardened git command in ``repo``; its stdout. RepoError on failure (``check``).

    ``config``: extra harmless ``key=value`` settings (e.g. ``diff.renameLimit=2000``), applied
    before the overrides so they can never re-enable a program."""
    repo = Path(repo)
    overrides = _config_args(config) + (check_repo(repo) if repo.is_dir() else ())
    return _raw(
        repo,
        args,
        input=input,
        check=check,
        extra_env=extra_env,
        ceiling=ceiling,
        overrides=overrides,
    ).stdout


def returncode(
    repo: str | Path,
    *args: str,
    input: bytes | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> int:
    """Run one hardened git command for its exit status only."""
    repo = Path(repo)
    overrides = check_repo(repo) if repo.is_dir() else ()
    return _raw(
        repo, args, input=input, check=False, extra_env=extra_env, overrides=overrides
    ).returncode


#: How long :func:`stream` waits after a short read so git's output gathers in the pipe. git log
#: flushes once per commit: read as it arrives, a 10k-commit history came in ~3,300 reads of
#: ~1.3 KB, each a wake-up of the reader (and, with no idle core, a context switch away from
#: git); waiting 4 ms after a read under 64 KB makes it ~90 reads, and git never waits on a full
#: pipe (the pipe is enlarged to 1 MiB where Linux allows; git writes ~10 MB/s).
STREAM_GATHER_S = 0.004
_SHORT_READ = 1 << 16


def stream(repo: str | Path, *args: str, config: Sequence[str] = ()) -> Iterator[bytes]:
    """Yield a hardened git command's stdout as it is produced, in chunks gathered for up to
    :data:`STREAM_GATHER_S` (fewer, larger reads: parsing still overlaps git's own work)."""
    repo = Path(repo)
    overrides = _config_args(config) + (check_repo(repo) if repo.is_dir() else ())
    cmd = command(*args, overrides=overrides)
    with tempfile.TemporaryFile() as err:
        proc = _start(repo, args, cmd, stderr=err)
        _enlarge_pipe(proc.stdout.fileno())
        try:
            while True:
                chunk = proc.stdout.read1(1 << 20)
                if not chunk:
                    break
                yield chunk
                if len(chunk) < _SHORT_READ:
                    time.sleep(STREAM_GATHER_S)
            code = proc.wait()
        finally:
            proc.close()
        if code != 0:
            err.seek(0)
            raise _failure(repo, args, code, err.read())


def _start(repo: Path, args: Sequence[str], cmd: list[str], **popen) -> _proc.Spawned:
    try:
        return _proc.spawn(
            cmd,
            deadline=deadline(),
            what=f"git {args[0]}",
            path=repo,
            error=RepoError,
            cwd=repo,
            env=env(repo),
            **popen,
        )
    except FileNotFoundError as exc:
        raise RepoError(
            "git is not installed or not on PATH", path=repo, hint="install git 2.32 or newer"
        ) from exc
    except PermissionError as exc:
        raise RepoError(f"cannot run git in this folder: {exc.strerror}", path=repo) from exc


def _enlarge_pipe(fd: int) -> None:
    """Ask Linux for a 1 MiB pipe (``F_SETPIPE_SZ``); elsewhere, or over the system's
    ``pipe-max-size``, the default pipe stays."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass


@contextmanager
def pipe(
    repo: str | Path, *args: str, input: bytes, config: Sequence[str] = ()
) -> Iterator[BinaryIO]:
    """A hardened git command fed ``input`` (from a thread, so neither side can block the
    other) whose stdout is read incrementally: a batch of large blobs is never held twice."""
    repo = Path(repo)
    overrides = _config_args(config) + (check_repo(repo) if repo.is_dir() else ())
    cmd = command(*args, overrides=overrides)
    with tempfile.TemporaryFile() as err:
        proc = _start(repo, args, cmd, stdin=subprocess.PIPE, stderr=err)
        stdin = proc.stdin
        if stdin is None:  # stdin=PIPE above
            raise TypeError("git's stdin is not a pipe")

        def feed() -> None:
            try:
                stdin.write(input)
            except (BrokenPipeError, OSError, ValueError):
                pass
            finally:
                try:
                    stdin.close()
                except OSError:
                    pass

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        try:
            yield proc.stdout
        except BaseException:
            proc.close()
            feeder.join()
            raise
        proc.stdout.close()  # what the caller left unread: git stops (SIGPIPE) as before
        try:
            code = proc.wait()
        finally:
            proc.close()
            feeder.join()
        if code != 0:
            err.seek(0)
            raise _failure(repo, args, code, err.read())


# ---- plumbing used by the writers ------------------------------------------------------------


def rev_parse(repo: Path, rev: str) -> str | None:
    """The commit ``rev`` names, or None (``rev`` is never read as an option)."""
    out = run(
        repo,
        "rev-parse",
        "-q",
        "--verify",
        "--end-of-options",
        f"{rev}^{{commit}}",
        check=False,
        ceiling=False,
    )
    return out.decode().strip() or None


def read_blob(repo: Path, sha: str) -> bytes | None:
    """A blob's bytes (no filters, no textconv), or None when the repository lacks it."""
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha or ""):
        return None
    proc = _raw(
        repo, ["cat-file", "blob", sha], check=False, ceiling=False, overrides=check_repo(repo)
    )
    return proc.stdout if proc.returncode == 0 else None


def tree_entries(
    repo: Path, commit: str, paths: Sequence[str] = (), *, recursive: bool = False
) -> dict[str, tuple[str, str, str]]:
    """``{path: (mode, type, sha)}`` of ``commit``'s tree (only ``paths`` when given); a path
    is :func:`memlab.io.tree_name` of git's bytes (lossless, so a tree written back keeps them)."""
    args = ["ls-tree", "-z", "--full-tree"] + (["-r"] if recursive else []) + [commit]
    if paths:
        args += ["--", *paths]
    out = run(repo, *args, ceiling=False)
    return {tree_name(r.raw): (r.mode, r.type, r.sha) for r in parse_ls_tree(out)}


def _repo_git_dir(repo: Path) -> Path:
    gdir = git_dir(Path(repo))
    if gdir is None:
        raise RepoError("not a git repository", path=repo)
    return gdir


def hash_object(repo: Path, data: bytes, kind: str = "blob") -> str:
    """Store ``data`` as an object of the repository at ``repo`` (never through a clean filter:
    written from Python by :mod:`memlab._gitobj`); its id."""
    return write_object(_repo_git_dir(repo), kind, data)


def commit_tree(
    repo: Path, tree: str, parents: Sequence[str], message: str, signature: Signature
) -> str:
    """Store a commit of ``tree`` as ``git commit-tree -F`` would (never signed, no hooks),
    written from Python by :mod:`memlab._gitobj`; its id."""
    return write_object(
        _repo_git_dir(repo), "commit", commit_body(tree, parents, signature, message)
    )


def update_ref(repo: Path, ref: str, new: str, old: str, *, message: str = "memlab") -> bool:
    """Compare-and-swap ``ref`` from ``old`` (40 zeros: must not exist) to ``new``; False when
    the ref was not ``old`` any more."""
    return returncode(repo, "update-ref", "-m", message, ref, new, old) == 0


def common_dir(gdir: Path) -> Path:
    """Where a git folder's objects and refs live (a linked worktree points at its main one)."""
    common = gdir / "commondir"
    if common.is_file() and not _special(common):
        try:
            text = read_head(common, 4097).decode("utf-8", "replace")
        except OSError:
            return gdir
        if len(text) > 4096:  # git reads a path there; this is not one
            raise RepoError(
                f"commondir {over_cap(4096)}",
                path=gdir,
                hint="it names the main git folder of a linked worktree",
            )
        target = Path(text.strip())
        return target if target.is_absolute() else (gdir / target)
    return gdir


_formats: dict[tuple, str] = {}


def object_format(gdir: Path) -> str:
    """``"sha1"`` or ``"sha256"``: the object ids of the repository whose git folder is ``gdir``
    (asked of git once per folder and state of its config file)."""
    config = common_dir(Path(gdir)) / "config"
    try:
        st = os.stat(config)
        key: tuple = (str(config.resolve()), st.st_ino, st.st_mtime_ns, st.st_size)
    except OSError:
        key = (str(config),)
    if key not in _formats:
        out = run(gdir, "rev-parse", "--show-object-format", check=False, ceiling=False)
        _formats[key] = "sha256" if out.decode("ascii", "replace").strip() == "sha256" else "sha1"
    return _formats[key]


def write_object(gdir: Path, kind: str, body: bytes) -> str:
    """Store one loose object in the git folder ``gdir`` from Python (no git process, so nothing
    can run), in the repository's object format; its id. Atomic
    (:func:`memlab._gitobj.write_loose`)."""
    return write_loose(
        common_dir(gdir) / "objects", kind, body, sha256=object_format(gdir) == "sha256"
    )


def flat_tree(repo: Path, commit: str) -> dict[str, tuple[str, str]]:
    """``{path: (mode, sha)}`` of every non-tree entry of ``commit``, recursively."""
    return {
        p: (m, s)
        for p, (m, t, s) in tree_entries(repo, commit, recursive=True).items()
        if t != "tree"
    }


def symbolic_branch(repo: Path) -> str | None:
    """The branch HEAD names (None when detached)."""
    out = run(repo, "symbolic-ref", "-q", "HEAD", check=False, ceiling=False)
    ref = out.decode("utf-8", "replace").strip()
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None
