"""Render a :class:`~memlab.migrations._plan.Plan` as a standalone Python script a human can review.

The script uses only the standard library and the ``git`` command line, carries every file's
content as a literal (so reviewing it means reading what will be committed), and makes exactly
the commits the direct apply makes: it embeds memlab's one object and commit writer,
:mod:`memlab._gitobj`, with the atomic writer and ``ls-tree`` parser of :mod:`memlab.io`,
generated from those modules' source when the script is written (never a second copy kept by
hand), writes every blob, tree and commit with it under the same fixed
author and date, and stops if any commit id differs from the one memlab computed when it wrote
the script. git itself only makes the repository, fetches a base history, answers rev-parse,
lists the base tree, moves the branch and checks the result out.
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

from memlab import _git, _gitobj
from memlab._escape import comment, py_literal
from memlab.io import _atomic, _git_tree
from memlab.migrations._plan import Plan

__all__ = ["EMBEDDED", "writer_source", "render_script"]

_MAX_FLAG_LINES = 60


def _literal(data: bytes) -> str:
    """A Python expression for ``data``: a triple-quoted string when that is exact, else repr
    lines."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"bytes.fromhex({data.hex()!r})"
    plain = (
        "\\" not in text
        and '"""' not in text
        and not text.endswith('"')
        and all(ch.isprintable() or ch in "\n\t" for ch in text)
    )
    if plain:
        return f'"""\\\n{text}""".encode("utf-8")'
    lines = text.splitlines(keepends=True) or [""]
    body = "\n".join(f"    {py_literal(line)}" for line in lines)
    return f'(\n{body}\n).encode("utf-8")'


#: The standard-library-only modules the script embeds, in order: the atomic writer and the
#: ls-tree parser of :mod:`memlab.io`, then the object and commit writer that uses the first.
EMBEDDED = (_atomic, _git_tree, _gitobj)


def writer_source() -> str:
    """The source of :data:`EMBEDDED` as the script embeds it: each whole module but its
    ``from __future__`` line (the script starts with its own) and its imports from memlab (the
    script holds what they name, embedded before)."""
    return "\n\n\n".join(
        "\n".join(
            line
            for line in inspect.getsource(module).splitlines()
            if line != "from __future__ import annotations" and not line.startswith("from memlab")
        )
        for module in EMBEDDED
    )


def _comment_block(lines: list[str]) -> str:
    return "\n".join(comment(f"# {line}").rstrip() for line in lines)


def render_script(
    plan: Plan,
    dest: Path,
    *,
    branch: str,
    mode: str,
    base_head: str | None = None,
    base_flat: dict | None = None,
) -> str:
    """The full text of the plan script. ``mode`` is "new" (a new repo) or "branch"."""
    base = {"": (base_head, base_flat or {})} if mode == "branch" else None
    expected = plan.expected_heads(base)
    out: list[str] = []
    moved = plan.moved
    summary = [
        f"memlab migration plan: {plan.source.name} -> {dest} (target: {plan.target})",
        "",
        f"Source:      {plan.source}",
        f"Destination: {dest}"
        + (
            f"  (new branch {branch!r} of the existing repository)"
            if mode == "branch"
            else f"  (new repository, branch {branch!r})"
        ),
        f"Author:      {plan.signature.name} <{plan.signature.email}>, date fixed at "
        f"{plan.signature.timestamp} (seconds since 1970, UTC) so the commits are reproducible",
        f"Moves:       {int((moved['kind'] == 'block').sum())} block(s) "
        f"into {plan.file_count()} file(s) in "
        f"{sum(len(r.commits) for r in plan.repos)} commit(s)",
    ]
    if len(plan.flags):
        summary += ["", f"Flagged for review ({len(plan.flags)}):"]
        for row in plan.flags.head(_MAX_FLAG_LINES).itertuples():
            summary.append(f"  - [{row.kind}] {row.item}: {row.message}")
        if len(plan.flags) > _MAX_FLAG_LINES:
            summary.append(
                f"  ... and {len(plan.flags) - _MAX_FLAG_LINES} more (see memlab's flags table)"
            )
    for note in plan.notes:
        summary += [""] + textwrap.wrap(note, 92)
    summary += [
        "",
        "Run:   python3 THIS_SCRIPT [DEST] [--force]",
        "It writes every object from Python with memlab's own writer (embedded below),",
        "It builds the repository beside DEST and renames it into place only when complete",
        "(new-repository mode), or creates the branch last with a compare-and-swap (branch mode);",
        "a second run finds the same commits and changes nothing. It checks every commit id",
        "against the one memlab computed and stops on any difference.",
    ]
    out.append("#!/usr/bin/env python3")
    # Store text (names, flags, notes) reaches the docstring only as comment() lines: printable,
    # no line break Python's tokenizer honours, no closing quotes; raw, so escapes stay text.
    out.append(
        'r"""' + "\n".join(comment(line).replace('"""', "'''") for line in summary) + '\n"""'
    )
    out.append("")
    out.append("from __future__ import annotations")
    out.append("")
    out.append(f"DEST = {py_literal(str(dest))}")
    out.append(
        f"MODE = {py_literal(mode)}  "
        "# 'new': a new repository; 'branch': a new branch of an existing one"
    )
    out.append(f"BRANCH = {py_literal(branch)}")
    out.append(
        f"BASE_HEAD = {py_literal(base_head)}  "
        "# branch mode: the HEAD this plan was computed against"
    )
    out.append(f"AUTHOR_NAME = {py_literal(plan.signature.name)}")
    out.append(f"AUTHOR_EMAIL = {py_literal(plan.signature.email)}")
    out.append(f"TIMESTAMP = {py_literal(plan.signature.timestamp)}")
    out.append("")
    out.append(
        "# How git is run (the same hardening as memlab._git): no system or global config, and"
    )
    out.append("# every program a repository's config could name is switched off.")
    out.append(f"GIT_ENV = {py_literal(dict(_git.ENV_OVERRIDES))}")
    out.append(f"GIT_CONFIG = {py_literal(list(_git.CONFIG_OVERRIDES))}")
    out.append("")
    out.append(
        "# One entry per repository; each commit lists the files it adds or replaces, with the"
    )
    out.append("# commit id memlab computed for it.")
    out.append("REPOS = []")
    for planned in plan.repos:
        chain = expected[planned.subdir]
        out.append("")
        out.append("# " + "=" * 94)
        out.append(
            comment(
                f"# Repository: {planned.subdir or '(the destination itself)'}"
                + (f"  [{planned.title}]" if planned.title else "")
            )
        )
        out.append("# " + "=" * 94)
        out.append("_commits = []")
        for commit, (tree, sha) in zip(planned.commits, chain):
            out.append("")
            out.append("# " + "-" * 94)
            out.append(
                _comment_block(
                    ["Commit: " + line for line in commit.message.rstrip().splitlines()[:1]]
                    + ["  " + line for line in commit.message.rstrip().splitlines()[1:]]
                )
            )
            if commit.author is not None:
                out.append(
                    comment(
                        f"# author: {commit.author.name} <{commit.author.email}> at "
                        f"{commit.author.timestamp}"
                    )
                )
            out.append(f"# files: {len(commit.files)}; expected tree {tree}, commit {sha}")
            out.append("# " + "-" * 94)
            out.append("_files = []")
            for path, data in commit.files:
                out.append(f"_files.append(({py_literal(path)}, {_literal(data)}))")
            author = (
                (commit.author.name, commit.author.email, commit.author.timestamp)
                if commit.author is not None
                else None
            )
            out.append(
                f"_commits.append({{'message': {py_literal(commit.message)}, 'files': _files, "
                f"'removed': {py_literal(list(commit.removed))}, "
                f"'author': {py_literal(author)}, "
                f"'tree': {py_literal(tree)}, 'commit': {py_literal(sha)}}})"
            )
        fetched = (str(planned.base_repo), planned.base) if planned.base is not None else None
        if fetched is not None:
            out.append(
                comment(f"# On top of the history of {fetched[0]} at {fetched[1]} (fetched)")
            )
        out.append(
            f"REPOS.append({{'subdir': {py_literal(planned.subdir)}, 'commits': _commits, "
            f"'base': {py_literal(fetched)}}})"
        )
    out.append("")
    out.append("# " + "=" * 98)
    out.append(
        "# The git object and commit writer: memlab/io/_atomic.py, memlab/io/_git_tree.py and"
    )
    out.append(
        "# memlab/_gitobj.py, embedded as they are when memlab wrote this script (generated from"
    )
    out.append("# those modules; not a copy to edit). Standard library only.")
    out.append("# " + "=" * 98)
    out.append(writer_source())
    out.append(_MACHINERY)
    return "\n".join(out)


_MACHINERY = r'''
# ==================================================================================================
# Machinery: standard library and the git command line only. Nothing below needs reviewing to
# know what will be committed; it only makes the commits above with the writer, checks their
# ids, and puts the result in place without ever leaving a half-written destination.
# ==================================================================================================

import argparse
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

ZERO = "0" * 40


def run_git(*args, cwd, stdin=None, env=None):
    """Run one git command, hardened: a minimal environment (GIT_ENV: no system or global
    config) and GIT_CONFIG as -c overrides, so no hook, fsmonitor, filter, pager or other
    program a repository's config names can run. Returns the CompletedProcess."""
    full_env = {k: os.environ[k] for k in ("PATH", "TMPDIR", "HOME", "SYSTEMROOT") if k in os.environ}
    full_env.update(GIT_ENV)
    full_env.update(env or {})
    command = ["git", "--no-optional-locks"]
    for pair in GIT_CONFIG:
        command += ["-c", pair]
    return subprocess.run(command + list(args), cwd=cwd, input=stdin, capture_output=True,
                          stdin=None if stdin is not None else subprocess.DEVNULL, env=full_env)


def git(*args, cwd, stdin=None, env=None):
    """Run one hardened git command; its stdout (stripped) or a clear error naming the command."""
    proc = run_git(*args, cwd=cwd, stdin=stdin, env=env)
    if proc.returncode != 0:
        sys.exit(f"git {' '.join(args[:2])} failed in {cwd}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode("utf-8").strip()


def branch_sha(repo_dir):
    if not (repo_dir / ".git").exists():
        return None
    proc = run_git("rev-parse", "--verify", "-q", f"refs/heads/{BRANCH}^{{commit}}", cwd=repo_dir)
    return proc.stdout.decode().strip() or None


def objects_dir(repo_dir):
    """The objects folder of the repository at ``repo_dir`` (a linked worktree's is its main
    repository's); refused unless the repository uses SHA-1 ids, as the plan does."""
    if git("rev-parse", "--show-object-format", cwd=repo_dir) not in ("sha1", "--show-object-format"):
        sys.exit(f"{repo_dir}: this repository does not use SHA-1 object ids; the plan's commits do")
    common = Path(git("rev-parse", "--git-common-dir", cwd=repo_dir))
    return (common if common.is_absolute() else repo_dir / common) / "objects"


def tree_files(repo_dir, commit):
    """``{path: (mode, sha)}`` of every entry but a folder in ``commit``'s tree."""
    out = run_git("ls-tree", "-r", "-z", "--full-tree", commit, cwd=repo_dir)
    if out.returncode != 0:
        sys.exit(f"git ls-tree failed in {repo_dir}: {out.stderr.decode(errors='replace').strip()}")
    return {tree_name(r.raw): (r.mode, r.sha) for r in parse_ls_tree(out.stdout)}


def make_commits(repo_dir, commits, parent):
    """Write the planned commits with the embedded writer (every blob, tree and commit from
    Python: no git process makes an object, and the repository's index and working tree are
    not touched); return the last commit id."""
    objects = objects_dir(repo_dir)

    def store(kind, body):
        return write_loose(objects, kind, body)

    flat = tree_files(repo_dir, parent) if parent else {}
    for commit in commits:
        # A replayed history commit has its own author and date; every other, the plan's.
        name, email, when = commit.get("author") or (AUTHOR_NAME, AUTHOR_EMAIL, TIMESTAMP)
        files = [(path, None) for path in commit.get("removed", [])] + list(commit["files"])
        tree, sha = commit_files(store, flat, files, parent, Signature(name, email, when),
                                 commit["message"])
        if (tree, sha) != (commit["tree"], commit["commit"]):
            subject = commit["message"].splitlines()[0] if commit["message"] else ""
            sys.exit(f"commit {subject!r} came out as {sha} (tree {tree}); the plan "
                     f"expected {commit['commit']} (tree {commit['tree']}). Nothing was put in place.")
        parent = sha
    return parent


def apply_new(dest, force):
    finals = {r["subdir"]: (r["commits"][-1]["commit"] if r["commits"] else None) for r in REPOS}
    existed = dest.exists() and not (dest.is_dir() and not any(dest.iterdir()))
    if existed:
        if all(branch_sha(dest / sub) == sha for sub, sha in finals.items() if sha):
            print(f"{dest}: already holds this migration; nothing to do")
            return
        if not force:
            sys.exit(f"{dest}: exists and holds something else (choose a new destination, or pass --force)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.memlab-tmp-{uuid.uuid4().hex[:12]}"
    old = None
    try:
        tmp.mkdir()
        for repo in REPOS:
            repo_dir = tmp / repo["subdir"] if repo["subdir"] else tmp
            repo_dir.mkdir(parents=True, exist_ok=True)
            git("init", "-q", f"--initial-branch={BRANCH}", ".", cwd=repo_dir)
            parent = None
            if repo.get("base"):  # the source repository's history, fetched, then built on
                source, parent = repo["base"]
                git("-c", "protocol.file.allow=always", "fetch", "-q", "--no-tags",
                    "--no-write-fetch-head", source, "+HEAD:refs/memlab/base", cwd=repo_dir)
                got = git("rev-parse", "--verify", "refs/memlab/base^{commit}", cwd=repo_dir)
                git("update-ref", "-d", "refs/memlab/base", cwd=repo_dir)
                if got != parent:
                    sys.exit(f"{source}: HEAD is {got}, not {parent} as planned; plan again")
            head = make_commits(repo_dir, repo["commits"], parent)
            if head:
                git("update-ref", f"refs/heads/{BRANCH}", head, ZERO, cwd=repo_dir)
                # A repository this script just made: no filter driver is configured anywhere
                # git looks (GIT_ENV), so this checkout runs no program.
                git("reset", "-q", "--hard", cwd=repo_dir)
        if dest.exists():
            old = dest.parent / f".{dest.name}.memlab-tmp-{uuid.uuid4().hex[:12]}"
            os.rename(dest, old)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and old.exists() and not dest.exists():
            os.rename(old, dest)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    print(f"{dest}: migrated ({sum(len(r['commits']) for r in REPOS)} commit(s))")


def apply_branch(dest, force):
    repo = REPOS[0]
    final = repo["commits"][-1]["commit"]
    current = branch_sha(dest)
    if current == final:
        print(f"{dest}: branch {BRANCH!r} already holds this migration; nothing to do")
        return
    if current is not None:
        if not force:
            sys.exit(f"{dest}: branch {BRANCH!r} already exists (choose another name, or pass --force)")
        checked_out = run_git("symbolic-ref", "-q", "--short", "HEAD", cwd=dest).stdout.decode().strip()
        if checked_out == BRANCH:
            sys.exit(f"{dest}: branch {BRANCH!r} is checked out; check out another branch first")
    head = run_git("rev-parse", "--verify", "-q", "HEAD^{commit}", cwd=dest).stdout.decode().strip() or None
    if head != BASE_HEAD:
        sys.exit(f"{dest}: HEAD is {head}, but this plan was written against {BASE_HEAD}; "
                 "run `memlab migrate --plan` again")
    tip = make_commits(dest, repo["commits"], BASE_HEAD)
    git("update-ref", f"refs/heads/{BRANCH}", tip, current or ZERO, cwd=dest)
    print(f"{dest}: branch {BRANCH!r} created at {tip}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", nargs="?", default=DEST, help=f"destination (default {DEST})")
    parser.add_argument("--force", action="store_true", help="replace an existing destination or branch")
    args = parser.parse_args(argv)
    dest = Path(args.dest).expanduser().absolute()
    if MODE == "branch":
        apply_branch(dest, args.force)
    else:
        apply_new(dest, args.force)


if __name__ == "__main__":
    main()
'''  # noqa: E501 (the script's own text, emitted verbatim)
