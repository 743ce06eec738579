"""Starting one git process the hardened way: the environment it gets (:data:`ENV_OVERRIDES`,
:func:`env`), the ``-c`` overrides on its command line (:data:`CONFIG_OVERRIDES`,
:func:`command`), its deadline (:func:`deadline`, :data:`GIT_TIMEOUT_ENV`) and the one-line
RepoError when it fails (:func:`failure`). :func:`run_unvetted` and :func:`spawn_unvetted` start
git with all of that but do not check the repository (:func:`memlab._git_check.check_repo`
does; :mod:`memlab._git_run` runs a command only after it). Part of :mod:`memlab._git`, which
re-exports the public names.
"""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

from memlab import _proc
from memlab.errors import RepoError

__all__ = [
    "GIT_TIMEOUT_ENV",
    "deadline",
    "ENV_OVERRIDES",
    "CONFIG_OVERRIDES",
    "IDENTITY_KEYS",
    "env",
    "command",
    "run_unvetted",
    "failure",
    "spawn_unvetted",
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


def command(*args: str, overrides: Sequence[str] = ()) -> list[str]:
    """The argv of one hardened git command (overrides come before ``args``)."""
    base = ["git", "--no-optional-locks", *overrides]  # later -c wins: ours come last
    for pair in CONFIG_OVERRIDES:
        base += ["-c", pair]
    for safe in _safe_directories():
        base += ["-c", f"safe.directory={safe}"]
    return [*base, *args]


def run_unvetted(
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
        raise failure(repo, args, proc.returncode, proc.stderr)
    return proc


def failure(repo: Path, args: Sequence[str], code: int, stderr: bytes) -> RepoError:
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


def spawn_unvetted(repo: Path, args: Sequence[str], cmd: list[str], **popen) -> _proc.Spawned:
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
