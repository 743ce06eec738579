"""Times a store can hold and pandas cannot (issue 34, hole 8): a commit dated year 3000, a
commit object whose time has 20 digits. pandas' ``datetime64[ns]`` ends on 2262-04-11; every
such time was an ``OutOfBoundsDatetime`` or ``OverflowError`` traceback out of ``inspect``,
``audit`` and ``discover``. Now it is NaT in the frame and a problem row naming the commit,
and the times pandas holds, up to its last second, are kept exactly.

The repos are real git repositories; the 20-digit commit is written with ``git hash-object
--literally`` (git itself prints its time back with ``%ct``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import memlab
from hostile import git, git_env, memory_repo

#: pandas' last and first whole seconds (computed here, not imported: the check is independent)
LAST_SECOND = pd.Timestamp.max.value // 10**9
FIRST_SECOND = -(-pd.Timestamp.min.value // 10**9)
YEAR_3000 = 32503680000
TWENTY_DIGITS = 99999999999999999999


def _commit_at(repo: Path, seconds: int, message: str) -> str:
    """A commit on main changing persona.md, authored and committed at ``seconds``."""
    (repo / "system" / "persona.md").write_text(f"---\ndescription: Who I am\n---\n\n{message}\n")
    git(repo, "add", "-A")
    env = {**git_env(repo.parent), "GIT_AUTHOR_DATE": f"@{seconds} +0000",
           "GIT_COMMITTER_DATE": f"@{seconds} +0000"}
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message], cwd=repo, env=env,
                   check=True, capture_output=True)
    return git(repo, "rev-parse", "HEAD")


def _literal_commit_at(repo: Path, seconds: int, message: str) -> str:
    tree, parent = git(repo, "rev-parse", "HEAD^{tree}"), git(repo, "rev-parse", "HEAD")
    body = (f"tree {tree}\nparent {parent}\nauthor Rex <agent@letta.com> {seconds} +0000\n"
            f"committer Rex <agent@letta.com> {seconds} +0000\n\n{message}\n")
    obj = repo.parent / "commit.txt"
    obj.write_text(body)
    sha = git(repo, "hash-object", "-t", "commit", "-w", "--literally", str(obj))
    git(repo, "update-ref", "refs/heads/main", sha)
    return sha


@pytest.fixture
def far_repo(tmp_path) -> tuple[Path, dict[str, int]]:
    repo = tmp_path / "home" / "agent"
    memory_repo(repo)
    shas = {_commit_at(repo, LAST_SECOND, "the last second pandas holds"): LAST_SECOND,
            _commit_at(repo, YEAR_3000, "year 3000"): YEAR_3000}
    shas[_literal_commit_at(repo, TWENTY_DIGITS, "twenty digits")] = TWENTY_DIGITS
    assert git(repo, "log", "-1", "--format=%ct") == str(TWENTY_DIGITS)  # git keeps it
    return repo, shas


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_far_commit_times_are_nat_and_problem_rows(far_repo):
    repo, shas = far_repo
    store = memlab.load(repo)
    hist = store.frames["history"]
    when = {sha: hist.loc[hist["sha"] == sha, "committed_at"].iloc[0] for sha in shas}
    by_time = {v: k for k, v in shas.items()}
    assert pd.isna(when[by_time[YEAR_3000]]) and pd.isna(when[by_time[TWENTY_DIGITS]])
    # negative control: the last second pandas holds is kept, exactly; so is the first commit
    assert when[by_time[LAST_SECOND]] == pd.Timestamp(LAST_SECOND, unit="s", tz="UTC")
    assert hist["committed_at"].notna().sum() == len(hist) - 2
    assert str(hist["committed_at"].dtype) == "datetime64[ns, UTC]"
    far = store.problems[store.problems["kind"] == "time_out_of_range"]
    named = " ".join(far["message"])
    assert by_time[YEAR_3000][:12] in named and by_time[TWENTY_DIGITS][:12] in named
    assert str(TWENTY_DIGITS) in named and by_time[LAST_SECOND][:12] not in named


@pytest.mark.parametrize("command", ["inspect", "audit"])
def test_the_cli_reads_a_repo_with_far_times(far_repo, command):
    repo, _ = far_repo
    got = _cli(command, str(repo))
    assert got.returncode == 0 and "Traceback" not in got.stderr, got.stderr[-2000:]
    assert ("time_out_of_range" if command == "inspect" else "problems: 4") in got.stdout


def test_discover_names_a_far_last_commit(far_repo):
    repo, _ = far_repo
    inv = memlab.discover(repo.parent)
    row = inv.iloc[0]
    assert pd.isna(row["last_commit"]) and "last_commit" in row["problem"], row.to_dict()
    got = _cli("discover", str(repo.parent))
    assert got.returncode == 0 and "Traceback" not in got.stderr, got.stderr[-2000:]


def test_the_conversion_keeps_every_time_pandas_holds():
    from memlab import _times

    assert (_times.FIRST_SECOND, _times.LAST_SECOND) == (FIRST_SECOND, LAST_SECOND)
    utc_second, utc_seconds = _times.utc_second, _times.utc_seconds
    values = [0, FIRST_SECOND, LAST_SECOND, LAST_SECOND + 1, FIRST_SECOND - 1, TWENTY_DIGITS,
              -TWENTY_DIGITS, None, "1772359200", b"12", "x"]
    got, bad = utc_seconds(values)
    assert str(got.dtype) == "datetime64[ns, UTC]"
    assert got[0] == pd.Timestamp(0, unit="s", tz="UTC")
    assert got[1] == pd.Timestamp(FIRST_SECOND, unit="s", tz="UTC")
    assert got[2] == pd.Timestamp(LAST_SECOND, unit="s", tz="UTC")
    assert got[8] == pd.Timestamp("2026-03-01T10:00:00Z") and got[9].value == 12 * 10**9
    assert bad == [3, 4, 5, 6, 10]  # None is not given: NaT, no problem
    assert got[[3, 4, 5, 6, 7, 10]].isna().all()
    fast, none = utc_seconds([1, 2, 3])
    assert none == [] and fast.iloc[-1].value == 3 * 10**9
    assert utc_second(TWENTY_DIGITS) is None and utc_second(LAST_SECOND + 1) is None
    assert utc_second(b"0") == pd.Timestamp(0, unit="s", tz="UTC")
