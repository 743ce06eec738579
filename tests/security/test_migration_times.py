"""Migrations read git commit times too (issue 34, hole 8, the loose end after the loaders):
the memfs v1 -> v2 upgrade dates its commits at the source head's time, and a re-run into an
existing destination at memlab's earlier migration commit. Both converted git's ``%ct``/``%at``
with ``pd.Timestamp(int(...))``: a head dated year 3000 or with a 20-digit time raised
``OutOfBoundsDatetime``/``OverflowError``. Now the upgrade flags ``time_out_of_range`` and dates
its commits at memlab's no-time fallback (2000-01-01); an earlier migration commit with such a
time is a MigrationError naming the destination.

The repos are real git repositories, made as in ``test_times.py``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from hostile import git, git_env, memory_repo
from memlab.errors import MigrationError
from memlab.migrations import migrate

LAST_SECOND = pd.Timestamp.max.value // 10**9
YEAR_3000 = 32503680000
TWENTY_DIGITS = 99999999999999999999
FALLBACK = 946684800  # 2000-01-01T00:00:00Z


def _commit_at(repo: Path, seconds: int, message: str) -> None:
    (repo / "system" / "persona.md").write_text(f"---\ndescription: Who I am\n---\n\n{message}\n")
    git(repo, "add", "-A")
    env = {**git_env(repo.parent), "GIT_AUTHOR_DATE": f"@{seconds} +0000",
           "GIT_COMMITTER_DATE": f"@{seconds} +0000"}
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message], cwd=repo, env=env,
                   check=True, capture_output=True)


def _literal_commit_at(repo: Path, seconds: int, message: str) -> None:
    tree, parent = git(repo, "rev-parse", "HEAD^{tree}"), git(repo, "rev-parse", "HEAD")
    body = (f"tree {tree}\nparent {parent}\nauthor Rex <agent@letta.com> {seconds} +0000\n"
            f"committer Rex <agent@letta.com> {seconds} +0000\n\n{message}\n")
    obj = repo.parent / "commit.txt"
    obj.write_text(body)
    sha = git(repo, "hash-object", "-t", "commit", "-w", "--literally", str(obj))
    git(repo, "update-ref", "refs/heads/main", sha)


def _v1_repo_headed_at(tmp_path: Path, seconds: int) -> Path:
    repo = tmp_path / "home" / "agent"
    memory_repo(repo)
    if seconds > LAST_SECOND * 10:
        _literal_commit_at(repo, seconds, "far")
    else:
        _commit_at(repo, seconds, "far")
    assert git(repo, "log", "-1", "--format=%ct") == str(seconds)  # git keeps it
    return repo


@pytest.mark.parametrize("seconds", [YEAR_3000, TWENTY_DIGITS])
def test_an_upgrade_from_a_far_dated_head_is_flagged_not_a_traceback(tmp_path, seconds):
    repo = _v1_repo_headed_at(tmp_path, seconds)
    head = git(repo, "rev-parse", "HEAD")
    result = migrate(repo, tmp_path / "v2", to="letta", layout="v2", retrieval=False)
    flags = result.flags[result.flags["kind"].astype(str) == "time_out_of_range"]
    assert len(flags) == 1 and flags["item"].iloc[0] == head, result.flags
    assert head[:12] in flags["message"].iloc[0]
    dest = tmp_path / "v2"
    assert git(dest, "merge-base", "--is-ancestor", head, "HEAD") == ""
    assert git(dest, "log", "-1", "--format=%ct") == str(FALLBACK)


def test_an_upgrade_from_the_last_second_pandas_holds_keeps_its_time(tmp_path):
    """Negative control: a head at pandas' last second is in range, no flag, dated exactly."""
    repo = _v1_repo_headed_at(tmp_path, LAST_SECOND)
    result = migrate(repo, tmp_path / "v2", to="letta", layout="v2", retrieval=False)
    assert "time_out_of_range" not in set(result.flags["kind"].astype(str))
    assert git(tmp_path / "v2", "log", "-1", "--format=%ct") == str(LAST_SECOND)


AGENT_FILE = Path(__file__).resolve().parents[2] / "data" / "samples" / "letta-af" / "ezra.af"


def _redate_last_migration(repo: Path, seconds: int) -> None:
    """memlab's own last commit in ``repo`` written again with its author time ``seconds``
    (message and trailer kept), as a store edited after the run can hold it; written with
    ``hash-object --literally`` since ``git commit`` refuses a 20-digit date."""
    lines = git(repo, "cat-file", "commit", "HEAD").split("\n")
    for i, line in enumerate(lines):
        if line.startswith("author "):
            name, _, _ = line.rpartition(">")
            lines[i] = f"{name}> {seconds} +0000"
            break
    obj = repo.parent / "commit.txt"
    obj.write_text("\n".join(lines) + "\n")
    sha = git(repo, "hash-object", "-t", "commit", "-w", "--literally", str(obj))
    git(repo, "update-ref", git(repo, "symbolic-ref", "HEAD"), sha)


def _migration_repo(dest: Path) -> Path:
    return next(p for p in [dest, *sorted(dest.iterdir())] if (p / ".git").exists())


@pytest.mark.parametrize("seconds", [YEAR_3000, TWENTY_DIGITS])
def test_a_rerun_over_a_far_dated_earlier_migration_is_a_migration_error(tmp_path, seconds):
    dest = tmp_path / "out"
    first = migrate(AGENT_FILE, dest, to="letta", retrieval=False)
    assert first.ok is not False
    # negative control: re-run over the untouched output reads the earlier time, no error
    again = migrate(AGENT_FILE, dest, to="letta", retrieval=False)
    assert again.ok is not False
    repo = _migration_repo(dest)
    _redate_last_migration(repo, seconds)
    assert git(repo, "log", "-1", "--format=%at") == str(seconds)
    with pytest.raises(MigrationError) as err:
        migrate(AGENT_FILE, dest, to="letta", retrieval=False)
    assert str(seconds) in str(err.value) and repo.name in str(err.value)
