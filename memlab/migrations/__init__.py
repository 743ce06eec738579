"""Migrate a memory store to another form, as reviewable commits with verified parity.

    >>> result = memlab.migrate("data/demo/elfmem-demo.db", "/tmp/demo-substrate")
    >>> result.differences            # parity rows that failed (empty when the copy is whole)
    >>> result.flags                  # what needs a human look (over-limit, renamed labels, ...)
    >>> memlab.migrate("ezra.af", "/tmp/ezra-memfs", to="letta", plan=True)   # a script to review

Targets (``to=``): ``"substrate"`` (elfmem's ``.elfmem/memory`` markdown + ``.elfmem/ledger``,
from an elfmem DB), ``"letta"`` (a Letta Code memfs repository) and ``"souveraine"`` (a Souveraine
agent dir: ``agent.yaml`` + memfs), from an elfmem DB, a Letta Agent File or a blocks JSON list;
a Letta server database and a memfs v1 repository go to ``"letta"``. Which kind goes to which
target, and by which planner, is declared in :mod:`memlab.kinds`. ``"letta"`` writes memfs v2,
as Letta Code 0.34.12 creates it (:mod:`memlab.migrations._letta_v2`), unless ``layout="v1"``;
a v1 repository moves to v2 in a new repository holding its history
(:mod:`memlab.kinds.letta_memfs._upgrade`).

Both ways to run make the same commits, byte for byte: ``plan=True`` writes a standalone Python
script (standard library + the ``git`` CLI) beside the destination for a human to read and run;
otherwise the plan is applied through :mod:`memlab._git` (objects written directly from Python by
:mod:`memlab._gitobj`, the one object and commit writer the script embeds too; no hooks). Commits
have a fixed author (``memlab migrate``) and a fixed date: the
source's latest timestamp for an elfmem substrate; for Letta and Souveraine targets the time
of the first migration of this source into the destination (the source's own date is kept in
a trailer); so a re-run finds the same commit ids and changes nothing. The source is only ever
read. A destination is built in a temporary sibling
folder and renamed into place when complete; an existing one is refused (``OutputExists``)
unless it already holds exactly this migration or ``force=True``. ``branch=`` with an existing
repository as the destination adds the commits on a new branch instead, leaving the working
tree alone.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from memlab import _git
from memlab._escape import terminal_lines
from memlab.errors import (
    MemlabError,
    MigrationError,
    OutputExists,
    ParityError,
    RepoError,
    UnsafePath,
)
from memlab.io import write_atomic
from memlab.migrations._parity import PARITY_COLUMNS, ParityRows
from memlab.migrations._plan import (
    Plan,
    PlannedCommit,
    PlannedRepo,
    flags_frame,
    moved_frame,
    signature_at,
)
from memlab.migrations._planning import check_target, located, natural_target, plan_migration
from memlab.migrations._verifiers import BlocksParity, ElfmemParity, ServerParity, UpgradeParity
from memlab.migrations._verify import Copy, CopyParity
from memlab.store import Store

__all__ = [
    "migrate",
    "verify",
    "plan_migration",
    "natural_target",
    "MigrationResult",
    "Plan",
    "PlannedRepo",
    "PlannedCommit",
    "moved_frame",
    "flags_frame",
    "signature_at",
    "script_path",
    "check_branch_name",
    # verifiers (memlab.kinds.Verifier): memlab's, and what a plugin's may build on
    "ElfmemParity",
    "BlocksParity",
    "ServerParity",
    "UpgradeParity",
    "CopyParity",
    "Copy",
    "ParityRows",
    "PARITY_COLUMNS",
]

DEFAULT_BRANCH = "main"


@dataclass
class MigrationResult:
    """What a migration did, what it flagged, and how the copy compares with its source."""

    source: Path
    dest: Path
    target: str
    #: "created", "replaced", "unchanged", "branch" (new branch of an existing repo) or "planned".
    mode: str
    branch: str
    #: one row per commit: repo, n, sha, tree, message, files.
    commits: pd.DataFrame
    #: one row per source item: kind, item, label, repo, path, section, chars, note.
    moved: pd.DataFrame
    #: what needs a human look: kind, item, path, severity, message.
    flags: pd.DataFrame
    #: parity rows (see :func:`verify`); None for a plan that has not been run yet.
    parity: pd.DataFrame | None = None
    script: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def differences(self) -> pd.DataFrame:
        """Parity rows that failed; empty when the copy matches its source."""
        from memlab.migrations._verify import differences

        if self.parity is None:
            return pd.DataFrame(columns=["check", "item", "expected", "actual"])
        return differences(self.parity)

    @property
    def ok(self) -> bool | None:
        """True when parity holds, False when it does not, None when not verified yet."""
        return None if self.parity is None else self.differences.empty

    def headline(self) -> dict[str, Any]:
        """Flat JSON-safe numbers for a report's metrics.json."""
        blocks = self.moved[self.moved["kind"] == "block"]
        out: dict[str, Any] = {
            "target": self.target,
            "mode": self.mode,
            "source": self.source.name,
            "blocks_moved": int(len(blocks)),
            "files_written": _files_written(blocks),
            "repositories": int(self.commits["repo"].nunique()) if len(self.commits) else 0,
            "commits": int(len(self.commits)),
            "flags": int(len(self.flags)),
        }
        for kind, n in self.flags["kind"].astype(str).value_counts().items():
            out[f"flags_{kind}"] = int(n)
        if self.parity is not None:
            out["parity_checks"] = int(len(self.parity))
            out["parity_differences"] = int(len(self.differences))
            retrieval = self.parity[self.parity["check"] == "retrieval"]
            if len(retrieval):
                out["retrieval_queries_same_top_k"] = int(retrieval["ok"].fillna(False).sum())
                out["retrieval_queries"] = int(len(retrieval))
        return out

    def diff(self, *, stat: bool = True, paths: list[str] | None = None) -> str:
        """``git show`` of every migration commit (``--stat`` by default), repository by
        repository."""
        if self.mode == "planned":
            return "(a plan: run its script first; nothing is committed yet)"
        out: list[str] = []
        for repo_name, group in self.commits.groupby("repo", sort=True):
            folder = self.dest / repo_name if repo_name else self.dest
            for sha in group["sha"]:
                # Hardened (memlab._git): no external diff, textconv or pager the repo names runs.
                args = [
                    "show",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--no-color",
                    "--stat" if stat else "--patch",
                    "--format=commit %H%nAuthor: %an <%ae>%nDate:   %aI%n%n%w(0,4,4)%B",
                    sha,
                ]
                if paths:
                    args += ["--", *paths]
                text = _git.run(folder, *args).decode("utf-8", "replace").rstrip("\n")
                out.append((f"[{repo_name}] " if repo_name else "") + text)
        return "\n\n".join(out)

    def __repr__(self) -> str:
        blocks = int((self.moved["kind"] == "block").sum()) if len(self.moved) else 0
        parity = (
            "not verified"
            if self.parity is None
            else "parity ok"
            if self.ok
            else f"{len(self.differences)} parity difference(s)"
        )
        return (
            f"<MigrationResult {self.source.name} -> {self.dest} ({self.target}, {self.mode}): "
            f"{blocks} blocks, {len(self.commits)} commits, {len(self.flags)} flags, {parity}>"
        )

    def __str__(self) -> str:
        where = {
            "created": "new repository",
            "replaced": "replaced the destination (force)",
            "unchanged": "already migrated; nothing changed",
            "branch": f"new branch {self.branch!r}",
            "planned": "plan script written; nothing applied",
        }.get(self.mode, self.mode)
        lines = [f"{self.source.name} -> {self.dest} ({self.target}): {where}"]
        blocks = self.moved[self.moved["kind"] == "block"]
        files = _files_written(blocks)
        repos = int(self.commits["repo"].nunique()) if len(self.commits) else 0
        heads = (
            ", ".join(
                f"{(r or '.')}@{s[:12]}"
                for r, s in self.commits.groupby("repo")["sha"].last().items()
            )
            if len(self.commits)
            else ""
        )
        across = f" across {repos} repositories" if repos > 1 else ""
        lines.append(
            f"  {len(blocks)} block(s) into {files} file(s){across}; "
            f"{len(self.commits)} commit(s)" + (f"; heads {heads}" if heads else "")
        )
        if self.script is not None:
            # the full path: the command runs from any folder (the script names DEST itself)
            lines.append(f"  script: {self.script}")
            lines.append(
                f"  review it, then run: python3 {shlex.quote(str(Path(self.script).resolve()))}"
            )
        if len(self.flags):
            from memlab._terminal import flag_lines

            lines.append(
                f"  flagged {len(self.flags)} item(s) for a look (each one is a row of "
                "the flags table: MigrationResult.flags in Python, or the report of "
                "`memlab report migration`):"
            )
            lines.extend(flag_lines(self.flags))
        if self.parity is not None:
            diff = self.differences
            lines.append(f"  parity: {len(self.parity)} check(s), {len(diff)} difference(s)")
            for row in diff.head(5).itertuples(index=False):
                lines.append(
                    f"    {row.check} {row.item}: expected {row.expected}, got {row.actual}"
                )
        return terminal_lines(lines)


def _files_written(blocks: pd.DataFrame) -> int:
    """Files written: one per (repository, path); the same path in two repositories is two files."""
    if blocks.empty:
        return 0
    return int(blocks[["repo", "path"]].astype("string").fillna("").drop_duplicates().shape[0])


def _resolve(src: str | Path, dest: str | Path) -> tuple[str | Path, Path]:
    """The source (a DSN stays a string) and the destination, both resolved."""
    d = Path(os.path.abspath(Path(dest).expanduser()))
    if located(src):  # a Letta server's PostgreSQL: nothing on disk to overlap with
        return str(src).strip(), d
    s = Path(src).expanduser().resolve()
    if d == s or s.is_relative_to(d.resolve() if d.exists() else d):
        raise UnsafePath(
            "the destination is the source or contains it; a migration never "
            "writes over its source",
            path=d,
            hint=f"choose a destination outside {s.parent if s.is_file() else s}",
        )
    return s, d


def _plan_memfs(
    store: Store,
    source: Path,
    *,
    target: str,
    dest: str | Path | None = None,
    layout: str | None = None,
) -> Plan:
    """The Letta/Souveraine planner as :mod:`memlab.kinds` calls it: commits dated at memlab's
    earlier migration of the same source into ``dest``, or now."""
    from memlab.migrations._letta import file_sha, plan_memfs, previous_migration_time

    when = (
        previous_migration_time(
            Path(os.path.abspath(Path(dest).expanduser())),
            file_sha(source) if source.is_file() else "",
        )
        if dest is not None
        else None
    )
    return plan_memfs(store, source, target=target, when=when, layout=layout)


def script_path(dest: str | Path) -> Path:
    """Where ``plan=True`` writes the script for ``dest``: ``<dest>.migrate.py`` beside it."""
    d = Path(os.path.abspath(Path(dest).expanduser()))
    return d.with_name(d.name + ".migrate.py")


def _commit_table(plan: Plan, heads: dict[str, list[tuple[str, str]]]) -> pd.DataFrame:
    rows = []
    for repo in plan.repos:
        for n, (commit, (tree, sha)) in enumerate(zip(repo.commits, heads.get(repo.subdir, []))):
            rows.append(
                {
                    "repo": repo.subdir,
                    "n": n,
                    "sha": sha,
                    "tree": tree,
                    "message": commit.message.splitlines()[0],
                    "files": len(commit.files),
                }
            )
    df = pd.DataFrame(rows, columns=["repo", "n", "sha", "tree", "message", "files"])
    for col in ("repo", "sha", "tree", "message"):
        df[col] = df[col].astype("string")
    df["n"] = df["n"].astype("Int64")
    df["files"] = df["files"].astype("Int64")
    return df


def check_branch_name(name: str) -> str:
    """``name`` if git accepts it as a branch name. git itself judges: ``git check-ref-format
    --branch`` (through :mod:`memlab._git`), run in an empty folder outside any repository so
    nothing is expanded (``@{-1}``), and the name must come back unchanged. A name git cannot
    be given (not text, empty, a NUL byte) is refused before git is asked."""
    ok = isinstance(name, str) and bool(name) and "\0" not in name
    if ok:
        with tempfile.TemporaryDirectory(prefix="memlab-branch-") as where:
            try:
                said = _git.run(where, "check-ref-format", "--branch", name)
            except RepoError:
                ok = False
            else:
                ok = said.rstrip(b"\n") == os.fsencode(name)
    if not ok:
        raise MigrationError(
            f"{name!r} is not a valid git branch name (git check-ref-format --branch refuses it)",
            hint="use letters, digits, '-', '_', '.' and '/' (e.g. memlab/substrate)",
        )
    return name


def _write_script(path: Path, text: str, *, force: bool) -> None:
    if path.exists():
        if path.read_text(encoding="utf-8") == text:
            return
        if not force:
            raise OutputExists("a different migration script is already there", path=path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"), mode=0o755)


def migrate(
    src: str | Path,
    dest: str | Path,
    *,
    to: str | None = None,
    plan: bool = False,
    force: bool = False,
    branch: str | None = None,
    verify: bool = False,
    retrieval: bool = True,
    agent: str | list[str] | None = None,
    layout: str | None = None,
) -> MigrationResult:
    """Migrate ``src`` into ``dest`` (see the module docstring); returns a :class:`MigrationResult`.

    ``to=None`` picks :func:`natural_target` (substrate for an elfmem database, Letta memfs for
    Letta blocks). ``verify=True`` raises :class:`ParityError` when the copy, loaded back, differs
    from its
    source; the parity table is in the result either way (after an apply). ``retrieval=False``
    skips the embedding-based top-k check, which loads a sentence model. ``agent`` (a name or
    id, or a list) selects agents of a Letta server database (``postgresql://`` DSN or Letta
    SQLite file), which otherwise migrates whole: one repository per agent. ``layout`` is a
    Letta target's memfs layout, ``"v2"`` by default (see :func:`plan_migration`).
    """
    from memlab.migrations import _apply, _script
    from memlab.migrations._verify import differences, verify_paths
    from memlab.progress import bar
    from memlab.sources import load
    from memlab.sources._bundle import is_bundle

    s, d = _resolve(src, dest)
    name = check_branch_name(branch or DEFAULT_BRANCH)
    check_target(to)  # before loading the source: a typo costs no load
    if plan and not isinstance(s, str) and is_bundle(s):
        raise MigrationError(
            "a plan script cannot be written for a git bundle: it would read "
            "the temporary folder the bundle is unpacked into",
            path=s,
            hint="clone it (git clone BUNDLE repo) and plan from the clone, or "
            "migrate without --plan",
        )
    # A step bar (closed on return; on an error it closes as it is dropped).
    steps = bar(total=3 if plan else 4, desc="migrating", unit="step")
    steps.set_postfix_str("loading the source")
    store = load(s)
    steps.update(1)
    steps.set_postfix_str("planning")
    the_plan = plan_migration(s, to=to, store=store, dest=d, agent=agent, layout=layout)
    to = the_plan.target
    s = store.path if isinstance(s, str) else s  # a DSN: the store's password-free name
    steps.update(1)
    steps.set_postfix_str("writing the plan script" if plan else "writing commits")
    branch_mode = branch is not None and _apply.is_git_repo(d)
    if branch_mode and any(r.base is not None for r in the_plan.repos):
        raise MigrationError(
            "moving a memfs repository to v2 makes a new repository with its "
            "history; it does not go on a branch",
            path=d,
            hint="migrate into a new folder (omit --branch)",
        )
    if plan:
        base_head, base_flat = (None, None)
        if branch_mode:
            # check_branch already read HEAD's tree for "create"; "unchanged" answers with the
            # fork point instead, and the script is always written against HEAD.
            decision, base_head, base_flat, _ = _apply.check_branch(the_plan, d, name, force=force)
            if decision != "create":
                base_head, base_flat = _apply.branch_base(d)
        text = _script.render_script(
            the_plan,
            d,
            branch=name,
            mode="branch" if branch_mode else "new",
            base_head=base_head,
            base_flat=base_flat,
        )
        out = script_path(d)
        try:
            _write_script(out, text, force=force)
        except OSError as exc:
            raise MigrationError(
                f"could not write the plan script: {exc.strerror}",
                path=out,
                hint="check the folder's permissions and free space",
            ) from exc
        heads = the_plan.expected_heads({"": (base_head, base_flat or {})} if branch_mode else None)
        steps.close()
        return MigrationResult(
            s,
            d,
            to,
            "planned",
            name,
            _commit_table(the_plan, heads),
            the_plan.moved,
            the_plan.flags,
            None,
            out,
            the_plan.notes,
        )
    try:
        if branch_mode:
            applied = _apply.apply_branch(the_plan, d, branch=name, force=force)
        else:
            applied = _apply.apply_new(the_plan, d, branch=name, force=force)
    except MemlabError:
        raise
    except Exception as exc:  # OSError, git errors: say where, not a traceback
        raise MigrationError(
            f"could not write the migration: {exc}",
            path=d,
            hint="check the destination's permissions and free space; the "
            "source was not touched and no partial destination was left",
        ) from exc
    steps.update(1)
    steps.set_postfix_str("verifying parity" + (" and retrieval" if retrieval else ""))
    parity = verify_paths(
        s, d, ref=name if branch_mode else None, retrieval=retrieval, store=store, plan=the_plan
    )
    steps.update(1)
    steps.close()
    result = MigrationResult(
        s,
        d,
        to,
        applied.mode,
        name,
        _commit_table(the_plan, applied.heads),
        the_plan.moved,
        the_plan.flags,
        parity,
        None,
        the_plan.notes,
    )
    if verify:
        diff = differences(parity)
        if len(diff):
            shown = "; ".join(f"{r.check} {r.item}" for r in diff.head(5).itertuples(index=False))
            raise ParityError(
                f"{len(diff)} parity difference(s) after migration: {shown}",
                path=d,
                hint="see MigrationResult.parity (memlab.verify(src, dest))",
                differences=diff,
            )
    return result


def verify(
    src: str | Path,
    dest: str | Path,
    *,
    ref: str | None = None,
    retrieval: bool = True,
    queries: list[str] | None = None,
    k: int = 5,
    agent: str | list[str] | None = None,
) -> pd.DataFrame:
    """Load ``dest`` with memlab's loaders and compare it with ``src``, one row per check.

    Columns: check, item, repo, path, expected, actual, ok, detail. ``ok`` is NA for a check
    that could not run (the retrieval check without the embeddings extra). ``ref`` reads a
    branch other than the checked-out one. ``queries`` overrides the fixed retrieval queries
    (default: the source's most common tags, or its block labels).
    """
    from memlab.migrations._verify import verify_paths

    s = str(src).strip() if located(src) else Path(src).expanduser().resolve()
    d = Path(os.path.abspath(Path(dest).expanduser()))
    plan = None
    if agent is not None:
        from memlab.sources import load

        store = load(s)
        plan = plan_migration(s, store=store, agent=agent)
        return verify_paths(
            s, d, ref=ref, retrieval=retrieval, queries=queries, k=k, store=store, plan=plan
        )
    return verify_paths(s, d, ref=ref, retrieval=retrieval, queries=queries, k=k)
