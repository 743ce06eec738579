"""Who worked where (issue 33, item 2): a commit's branch is the first-parent line it lies on,
the main line first, never the ref ``git log --all --source`` happened to reach it from.

Real git repositories: clones with unpushed work, a memory worker in flight, merged harness and
feature branches, the same history with its refs created in other orders. Each history is one
that ``--source`` traversal gets wrong (checked: these tests fail on the traversal-order code).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import memlab
from memlab.sources import _git_branches
from memlab.kinds._memfs._load import file_versions
from memfs_repos import AGENT, HUMAN, _Writer, _t

HARNESS = ("Letta Code", "noreply@letta.com")
OTHER_AGENT = ("Scout", "agent-0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d@letta.com")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env={"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
                                          "PATH": "/usr/bin:/bin", "HOME": str(repo)}).stdout


def _md(body: str) -> str:
    return f"---\ndescription: notes\n---\n{body}\n"


def _attribution(path: Path) -> dict[str, tuple[str, str, str]]:
    """sha -> (branch, branch_role, author_kind), once per commit."""
    h = memlab.load_memfs(path).history.drop_duplicates("sha")
    return {s: (b, str(r), str(k)) for s, b, r, k in
            zip(h["sha"], h["branch"], h["branch_role"], h["author_kind"])}


def _main_commits(w: _Writer, n: int, day: str = "2026-04-01", start: int = 0) -> list[str]:
    return [w.commit(f"agent edit {i}", AGENT, _t(day, 8 + i),
                     files={"system/notes.md": _md(f"note {i}")}) for i in range(start, start + n)]


# --------------------------------------------------------------------------- (a) unpushed work

def test_unpushed_commit_keeps_main_commits_on_main(tmp_path):
    origin = _Writer(tmp_path / "seed")
    pushed = _main_commits(origin, 5)
    _git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "seed"), str(tmp_path / "server.git"))
    _git(tmp_path, "clone", "-q", str(tmp_path / "server.git"), str(tmp_path / "agent"))
    w = _Writer(tmp_path / "agent")
    unpushed = w.commit("agent edit unpushed", AGENT, _t("2026-04-02"),
                        files={"system/notes.md": _md("unpushed")})
    got = _attribution(tmp_path / "agent")
    assert len(got) == 6
    assert {s: got[s] for s in pushed + [unpushed]} == {
        s: ("main", "main", "agent") for s in pushed + [unpushed]}
    # file_versions names the same branches as the history frame.
    fv = file_versions(tmp_path / "agent").drop_duplicates("sha")
    assert set(fv["branch"]) == {"main"}


def test_commits_fetched_but_not_merged_are_the_upstream_main_line(tmp_path):
    """Local main behind origin/main: the other writer's commits are on main's upstream."""
    seed = _Writer(tmp_path / "seed")
    base = _main_commits(seed, 3)
    _git(tmp_path, "clone", "-q", str(tmp_path / "seed"), str(tmp_path / "agent"))
    theirs = seed.commit("other writer", OTHER_AGENT, _t("2026-04-03"),
                         files={"system/other.md": _md("theirs")})
    _git(tmp_path / "agent", "fetch", "-q", "origin")
    w = _Writer(tmp_path / "agent")
    mine = w.commit("agent edit local", AGENT, _t("2026-04-02"),
                    files={"system/notes.md": _md("mine")})
    got = _attribution(tmp_path / "agent")
    assert {s: got[s] for s in base + [mine]} == {s: ("main", "main", "agent") for s in base + [mine]}
    assert got[theirs] == ("origin/main", "main", "agent")


# --------------------------------------------------------------------------- (b) worker in flight

def _worker_in_flight(path: Path, *, worker_first: bool, extra_branches: tuple[str, ...] = (),
                      head: str = "main") -> dict[str, str]:
    """main: 2 agent commits, a memory-worker branch off main1 with 2 commits, main goes on
    with 3 more; the worker's commits are dated after all of main's (a date-ordered traversal
    reaches main0 and main1 from the worker's tip first). ``worker_first`` makes the worker's
    commits (and refs) before main's later ones; the shas are the same either way."""
    w = _Writer(path)
    shas: dict[str, str] = {}
    for i in range(2):
        shas[f"main{i}"] = w.commit(f"agent edit {i}", AGENT, _t("2026-04-01", 8 + i),
                                    files={"system/notes.md": _md(f"note {i}")})

    def worker() -> None:
        w.checkout("-b", "letta/memory-worker/w1", shas["main1"])
        for i in range(2):
            shas[f"worker{i}"] = w.commit(f"worker pass {i}", AGENT, _t("2026-04-02", 9 + i),
                                          files={"reference/worker.md": _md(f"pass {i}")})
        w.checkout("main")

    def main_line() -> None:
        for i in range(2, 5):
            shas[f"main{i}"] = w.commit(f"agent edit {i}", AGENT, _t("2026-04-01", 8 + i),
                                        files={"system/notes.md": _md(f"note {i}")})

    if worker_first:
        worker()
        w.checkout("-q", "main")
        main_line()
    else:
        main_line()
        worker()
    for name in extra_branches:  # names sorting before main, at old commits
        _git(path, "branch", name, shas["main0"])
    w.checkout(head)
    return shas


def test_memory_worker_in_flight_claims_only_its_own_commits(tmp_path):
    shas = _worker_in_flight(tmp_path / "r", worker_first=False)
    got = _attribution(tmp_path / "r")
    for i in range(5):
        assert got[shas[f"main{i}"]] == ("main", "main", "agent"), i
    for i in range(2):
        assert got[shas[f"worker{i}"]] == ("letta/memory-worker/w1", "memory_worker", "memory_worker")


def test_worker_checked_out_does_not_take_main(tmp_path):
    shas = _worker_in_flight(tmp_path / "r", worker_first=False, head="letta/memory-worker/w1")
    got = _attribution(tmp_path / "r")
    assert [got[shas[f"main{i}"]][1] for i in range(5)] == ["main"] * 5
    assert {got[shas[f"worker{i}"]][2] for i in range(2)} == {"memory_worker"}


# --------------------------------------------------------------------------- (d) order-free

def test_attribution_does_not_depend_on_ref_order_or_names(tmp_path):
    a = _worker_in_flight(tmp_path / "a", worker_first=False)
    b = _worker_in_flight(tmp_path / "b", worker_first=True,
                          extra_branches=("0-backup", "aaa", "letta/reflection/r0"))
    c = _worker_in_flight(tmp_path / "c", worker_first=True, head="letta/memory-worker/w1")
    assert a == b == c  # same commits, same shas
    got = [_attribution(tmp_path / x) for x in "abc"]
    # Branches at main's old commits claim nothing main's line already has.
    assert got[0] == got[1] == got[2]


def test_main_line_not_named_main(tmp_path):
    """The checked-out branch is the main line when there is no main or master."""
    w = _Writer(tmp_path / "r", branch="trunk")
    line = _main_commits(w, 3)
    w.checkout("-b", "aaa-feature")
    side = w.commit("human note", HUMAN, _t("2026-04-02"), files={"reference/h.md": _md("h")})
    w.checkout("trunk")
    got = _attribution(tmp_path / "r")
    assert {got[s] for s in line} == {("trunk", "main", "agent")}
    assert got[side] == ("aaa-feature", "other", "human")


# --------------------------------------------------------------------------- (c) merged lines

def test_merged_worker_reflection_and_feature_branches(tmp_path):
    w = _Writer(tmp_path / "r")
    base = _main_commits(w, 2)
    w.checkout("-b", "letta/memory-worker/w1")
    worker = [w.commit(f"worker pass {i}", AGENT, _t("2026-04-02", 9 + i),
                       files={"reference/worker.md": _md(f"pass {i}")}) for i in range(2)]
    w.checkout("main")
    mid = w.commit("agent edit mid", AGENT, _t("2026-04-02", 12),
                   files={"system/notes.md": _md("mid")})
    merge_w = w.merge("letta/memory-worker/w1", "merge(memory): worker w1", HARNESS,
                      _t("2026-04-02", 13))
    _git(tmp_path / "r", "branch", "-D", "letta/memory-worker/w1")
    w.checkout("-b", "letta/reflection/r1")
    refl = w.commit("reflect \U0001f52e", AGENT, _t("2026-04-03", 9),
                    files={"reference/reflect.md": _md("r")})
    w.checkout("main")
    w.commit("agent edit 3", AGENT, _t("2026-04-03", 10), files={"system/notes.md": _md("3")})
    merge_r = w.merge("letta/reflection/r1", "merge(reflection): r1", HARNESS, _t("2026-04-03", 11))
    w.checkout("-b", "topic")
    topic = w.commit("human edit", HUMAN, _t("2026-04-04", 9), files={"reference/h.md": _md("h")})
    w.checkout("main")
    w.commit("agent edit 4", AGENT, _t("2026-04-04", 10), files={"system/notes.md": _md("4")})
    merge_t = w.merge("topic", "Merge branch 'topic'", HUMAN, _t("2026-04-04", 11))
    _git(tmp_path / "r", "branch", "-D", "topic")
    got = _attribution(tmp_path / "r")
    for s in base + [mid]:
        assert got[s] == ("main", "main", "agent")
    for s in worker:
        assert got[s] == ("letta/memory-worker/(merged)", "memory_worker", "memory_worker")
    assert got[merge_w] == ("main", "main", "harness") and got[merge_r][:2] == ("main", "main")
    # The reflection branch still exists: its own name.
    assert got[refl] == ("letta/reflection/r1", "reflection", "reflection_subagent")
    assert got[topic] == ("topic (merged)", "other", "human")
    assert got[merge_t] == ("main", "main", "human")
    # A merged worker's commits keep their role when the merged main is only on the remote.
    _git(tmp_path, "clone", "-q", "--no-local", str(tmp_path / "r"), str(tmp_path / "clone"))
    _git(tmp_path / "clone", "checkout", "-q", "--detach", "HEAD~3")
    _git(tmp_path / "clone", "branch", "-q", "-D", "main")
    cloned = _attribution(tmp_path / "clone")
    assert {cloned[s][1:] for s in worker} == {("memory_worker", "memory_worker")}
    assert {cloned[s] for s in base + [mid]} == {("origin/main", "main", "agent")}


# --------------------------------------------------------------------------- bounds

def test_two_git_processes_however_many_refs(tmp_path, monkeypatch):
    w = _Writer(tmp_path / "r")
    line = _main_commits(w, 3)
    for i in range(40):
        _git(tmp_path / "r", "branch", f"b{i:02d}", line[i % 3])
        _git(tmp_path / "r", "tag", f"t{i:02d}", line[i % 3])
    calls = []
    real = _git_branches.run_git

    def counting(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(_git_branches, "run_git", counting)
    got = _attribution(tmp_path / "r")
    assert calls == ["for-each-ref", "rev-parse"]
    assert {got[s] for s in line} == {("main", "main", "agent")}


@pytest.mark.parametrize("message, label, role", [
    ("merge(memory): w", "letta/memory-worker/(merged)", "memory_worker"),
    ("merge(reflection): r", "letta/reflection/(merged)", "reflection"),
    ("Merge branch 'main' of https://example.invalid/m.git", "main (merged)", "main"),
    ("Merge remote-tracking branch 'origin/master' into main", "origin/master (merged)", "main"),
    ("Merge branch 'feature/x'", "feature/x (merged)", "other"),
    ("Sync", "(merged into main)", "other"),
])
def test_side_line_names(message, label, role):
    commits = {"m": (["a", "b"], message), "a": ([], "root"), "b": (["a"], "side")}
    got = _git_branches.claim(commits, [("main", "main", "m")])
    assert got == {"m": ("main", "main"), "a": ("main", "main"), "b": (label, role)}


def test_a_line_merged_into_a_worker_is_not_the_workers(tmp_path):
    """Commits merged into a memory-worker branch from elsewhere were not made by the worker:
    role other, and the author kind does not follow the label's mention of the worker."""
    w = _Writer(tmp_path / "r")
    base = _main_commits(w, 2)
    w.checkout("-b", "letta/memory-worker/w1")
    own = w.commit("worker pass", AGENT, _t("2026-04-02", 9), files={"reference/w.md": _md("w")})
    w.checkout("-b", "scratch", base[-1])
    scratch = w.commit("scratch note", AGENT, _t("2026-04-02", 10), files={"reference/s.md": _md("s")})
    w.checkout("letta/memory-worker/w1")
    w.merge("scratch", "take scratch notes", AGENT, _t("2026-04-02", 11))
    _git(tmp_path / "r", "branch", "-D", "scratch")
    w.checkout("main")
    got = _attribution(tmp_path / "r")
    assert got[own] == ("letta/memory-worker/w1", "memory_worker", "memory_worker")
    assert got[scratch] == ("(merged into letta/memory-worker/w1)", "other", "agent")
    assert {got[s] for s in base} == {("main", "main", "agent")}


def test_line_order_from_a_ref_table():
    """The claiming order and roles for a ref table as for-each-ref reads it."""
    tips = {"refs/heads/aaa": "1", "refs/heads/main": "2", "refs/heads/letta/memory-worker/w": "3",
            "refs/remotes/origin/main": "4", "refs/remotes/up/main": "5",
            "refs/remotes/origin/letta/reflection/r": "6", "refs/tags/v1": "7",
            "refs/heads/zzz": "8"}
    order = _git_branches.line_order(tips, {"refs/heads/main": "refs/remotes/up/main"},
                                     {"refs/remotes/origin/HEAD": "refs/remotes/origin/main"},
                                     "9", None)
    assert order == [("main", "main", "2"), ("up/main", "main", "5"),
                     ("aaa", "other", "1"), ("letta/memory-worker/w", "memory_worker", "3"),
                     ("zzz", "other", "8"), ("origin/letta/reflection/r", "reflection", "6"),
                     ("origin/main", "main", "4"), ("tags/v1", "other", "7"),
                     ("HEAD", "main", "9")]
    # No local main or master: HEAD's branch is the main line, whatever its name, and the
    # remote's branch of that name its upstream; with no local branch at all, the remote's HEAD.
    order = _git_branches.line_order({"refs/heads/trunk": "1", "refs/remotes/origin/trunk": "2",
                                      "refs/heads/aaa": "3"}, {}, {}, "1", "refs/heads/trunk")
    assert order[:2] == [("trunk", "main", "1"), ("origin/trunk", "main", "2")]
    order = _git_branches.line_order({"refs/remotes/origin/dev": "1", "refs/remotes/origin/aaa": "2"},
                                     {}, {"refs/remotes/origin/HEAD": "refs/remotes/origin/dev"},
                                     None, None)
    assert order == [("origin/dev", "main", "1"), ("origin/aaa", "other", "2")]
