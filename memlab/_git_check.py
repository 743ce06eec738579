"""Where a repository's git folder is, found without running git (:func:`git_dir`,
:func:`find_root`, :func:`common_dir`), and whether git may run there (:func:`check_repo`):
config includes refused, no FIFO, socket or device anywhere git would read, and the per-driver
overrides for the filters, diff and merge drivers the repository's config names. Part of
:mod:`memlab._git`, which re-exports the public names.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from memlab._files import FileTooLarge, over_cap, read_head, read_text
from memlab._git_process import run_unvetted
from memlab.constants import MAX_FILE_BYTES
from memlab.errors import RepoError

__all__ = ["find_root", "git_dir", "common_dir", "LINKED_ENTRIES", "check_repo"]

# Keys whose per-driver subsections name programs: neutralised with an empty value.
_DRIVER_KEY = re.compile(
    r"^(filter\.(.+)\.(clean|smudge|process)|diff\.(.+)\.(textconv|command)"
    r"|merge\.(.+)\.driver)$",
    re.IGNORECASE,
)
_INCLUDE_SECTION = re.compile(r"^\s*\[\s*(include(?:if)?)\b", re.IGNORECASE | re.MULTILINE)
_INCLUDE_KEY = re.compile(r"^(include(?:if\..*)?)\.path$", re.IGNORECASE)


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
        listed = run_unvetted(path, ["config", "--no-includes", "--list", "-z"], check=False)
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
