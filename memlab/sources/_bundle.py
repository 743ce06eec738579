"""Git bundles of memory repositories (the bundled samples are), unpacked into a folder
before a load (:func:`unpack_bundle`).

A bundle works wherever a repository does, read-only: :func:`memlab.load` (and so ``audit``,
``review``, ``migrate``) unpacks one into a private temporary folder (:func:`private_unpack`)
that lives as long as the loaded store. The bundle itself is never written;
``store.meta["bundle"]`` names it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from memlab.errors import OutputExists, RepoError, StoreNotFound

__all__ = ["SAMPLE_BUNDLE", "is_bundle", "private_unpack", "unpack_bundle"]

#: What a git bundle file starts with (``git bundle create`` writes v2, or v3 with options).
_SIGNATURES = (b"# v2 git bundle\n", b"# v3 git bundle\n")

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
        try:
            hardened.run(work, "bundle", "unbundle", str(src))
        except RepoError as exc:  # a truncated or damaged pack: named by the bundle
            raise RepoError(
                f"git cannot unpack this bundle ({exc.message})",
                path=src,
                hint="the file is damaged or truncated; make the bundle again",
            ) from None
        refs = b"".join(
            b"update %s\0%s\0\0" % (ref.encode(), sha.encode()) for ref, sha in heads.items()
        )
        hardened.run(work, "update-ref", "-z", "--stdin", input=refs)
        try:
            hardened.run(work, "reset", "-q", "--hard", "refs/heads/main")
        except RepoError as exc:  # named by the bundle, not by the folder about to go
            raise RepoError(
                f"its main branch cannot be checked out ({exc.message})",
                path=src,
                hint="git refuses such paths in any checkout; the bundle is not unpacked",
            ) from None
        # A bundle carries no reflogs: the entries git just wrote record memlab's unpacking,
        # not the repository's history, so they go, and none are written later. The integrity
        # audit then says it had no evidence (null, with the reason) instead of judging these.
        shutil.rmtree(work / ".git" / "logs", ignore_errors=True)
        hardened.run(work, "config", "core.logAllRefUpdates", "false")
        try:
            os.rename(work, out)  # onto a missing or empty folder only
        except OSError:
            if _holds_bundle(out, heads):  # another run finished first
                return out.resolve()
            raise OutputExists(
                "the folder exists and does not hold this bundle",
                path=out,
                hint="choose an empty folder",
            ) from None
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return out.resolve()


def _holds_bundle(out: Path, heads: dict[str, str]) -> bool:
    """True when ``out`` is a repository whose branches are exactly ``heads``; False when it is
    missing or empty; OutputExists when it holds anything else."""
    from memlab import _git as hardened
    from memlab.sources import _git  # lazily: every load asks is_bundle, few read a repository

    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return False
    info = _git.find_repo(out) if out.is_dir() else None
    have = {}
    if info is not None:
        refs = (
            hardened.run(
                out, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", check=False
            )
            .decode()
            .splitlines()
        )
        have = {r: s for s, _, r in (ln.partition(" ") for ln in refs)}
    if have == heads:
        return True
    raise OutputExists(
        "the folder exists and does not hold this bundle", path=out, hint="choose an empty folder"
    )


def is_bundle(path: str | Path) -> bool:
    """True when ``path`` is a file that starts as a git bundle does (its name does not decide)."""
    if not isinstance(path, (str, Path)):
        return False
    p = Path(path).expanduser()
    try:
        if not p.is_file():
            return False
        with open(p, "rb") as fh:
            head = fh.read(16)
    except (OSError, ValueError):  # unreadable, or a name the OS refuses: not ours to judge
        return False
    return head in _SIGNATURES


def private_unpack(bundle: str | Path) -> tuple[Path, Path]:
    """Unpack ``bundle`` into a new private folder ``$TMPDIR/memlab-bundle-p<pid>-*``; returns
    (the repository, the folder to remove when done). Nothing is left behind on an error; a
    folder a killed process left is removed by the next one (:func:`memlab._tmp.sweep_stale`)."""
    import tempfile

    from memlab._tmp import PREFIX, sweep_stale

    sweep_stale()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}bundle-p{os.getpid()}-"))
    try:
        return unpack_bundle(bundle, folder), folder
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
