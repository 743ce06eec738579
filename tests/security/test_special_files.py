"""Only regular files are read: a FIFO, socket or device anywhere memlab looks becomes a problem
row or one clear error line, never a hang. Each case runs the real CLI under a timeout."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from hostile import git, memory_repo

TIMEOUT = 60


def _cli(*args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                              text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:  # pragma: no cover - the failure this file guards
        pytest.fail(f"memlab {' '.join(args)} hung on a special file")


def _one_line_error(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("suffix", [".db", ".af", ".json", ".sqlite"])
def test_a_fifo_passed_as_the_store_is_one_error_line(tmp_path, suffix):
    fifo = tmp_path / f"store{suffix}"
    os.mkfifo(fifo)
    _one_line_error(_cli("inspect", str(fifo)), "FIFO", "regular file")
    _one_line_error(_cli("audit", str(fifo)), "FIFO")


def test_a_device_passed_as_the_store_is_one_error_line(tmp_path):
    link = tmp_path / "zero.db"
    link.symlink_to("/dev/zero")
    _one_line_error(_cli("inspect", str(link)), "device")


def test_a_fifo_beside_the_database_as_its_wal_is_refused(tmp_path, data_dir):
    db = tmp_path / "elfmem.db"
    db.write_bytes((data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db").read_bytes())
    os.mkfifo(f"{db}-wal")
    _one_line_error(_cli("inspect", str(db)), "FIFO")


def test_fifo_and_socket_files_in_a_plain_memory_folder_are_problem_rows(tmp_path):
    import memlab

    folder = tmp_path / "agent"
    (folder / "system").mkdir(parents=True)
    (folder / "system" / "persona.md").write_text("---\ndescription: me\n---\n\nI am Rex.\n")
    os.mkfifo(folder / "system" / "trap.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "system" / "sock.md"))
    try:
        proc = _cli("inspect", str(folder))
        assert proc.returncode == 0, proc.stderr
        store = memlab.load(folder)
    finally:
        sock.close()
    rows = store.problems[store.problems["kind"] == "special_file"]
    assert set(rows["file"]) == {"system/trap.md", "system/sock.md"}
    assert "system/persona.md" in set(store.files["path"])


def test_fifos_in_a_working_tree_are_reported_not_read(tmp_path):
    import memlab

    repo = tmp_path / "memory"
    memory_repo(repo)
    (repo / "system" / "human.md").unlink()
    os.mkfifo(repo / "system" / "human.md")        # a tracked file swapped for a FIFO
    os.mkfifo(repo / "system" / "new.md")          # an untracked FIFO
    os.mkfifo(repo / ".gitignore")                 # git itself would block reading this
    proc = _cli("inspect", str(repo))
    assert proc.returncode == 0, proc.stderr
    store = memlab.load(repo)
    changes = dict(zip(store.uncommitted["path"], store.uncommitted["change"]))
    assert changes["system/human.md"] == "unreadable"
    assert changes["system/new.md"] == "untracked"


@pytest.mark.parametrize("where", ["config", "HEAD", "info/exclude", "packed-refs"])
def test_a_fifo_inside_the_git_folder_is_refused_by_name(tmp_path, where):
    repo = tmp_path / "memory"
    memory_repo(repo)
    target = repo / ".git" / where
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    os.mkfifo(target)
    proc = _cli("inspect", str(repo))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert "regular file" in proc.stderr


def test_apply_on_a_tree_holding_a_fifo_does_not_hang(tmp_path):
    from hostile import proposal, tick

    repo = tmp_path / "memory"
    memory_repo(repo)
    os.mkfifo(repo / "system" / "untracked-trap.md")
    md, item = proposal(repo, tmp_path / "reviews")
    tick(md, item.id)
    proc = _cli("apply", str(md))
    assert proc.returncode == 0, proc.stderr
    assert git(repo, "log", "-1", "--format=%an") == "memlab"
