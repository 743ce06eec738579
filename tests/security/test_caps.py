"""One capped read path (issue 34, hole 15 and class 3): a file over memlab's size cap is
"not read: over N bytes", never "invalid" and never read whole; the rest of the audit goes on.

- A ``.memfs.config.json`` over 10 MB was reported as invalid JSON and hid the tree's real
  findings: it is now one ``config_not_read`` row, and the checks that do not depend on the
  config still run.
- Files memlab reads from a git folder itself (config, ``commondir``, ``shallow``, the layout
  policy, the ``.git`` file of a worktree) go through :mod:`memlab._files`, capped.
- :func:`memlab._files.iter_lines`, the streaming reader for reflogs: bounded memory, a file over
  the cap refused before a byte is read, an over-long line said, not cut.
"""

from __future__ import annotations

import os
import subprocess
import tracemalloc
from pathlib import Path

import pytest

import memlab
from memlab.constants import MAX_FILE_BYTES

GIT_ENV = {"PATH": os.environ["PATH"], "HOME": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "a",
           "GIT_AUTHOR_EMAIL": "agent-1@letta.com", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "agent-1@letta.com", "GIT_AUTHOR_DATE": "1780000000 +0000",
           "GIT_COMMITTER_DATE": "1780000000 +0000"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          env=GIT_ENV, timeout=120).stdout.decode().strip()


def _v2_repo(tmp: Path, config: bytes | None) -> Path:
    """A MemFS v2 checkout (root MEMORY.md) with one real finding: ``notes/a.md`` has no
    ``notes/MEMORY.md`` above it. ``config``: the bytes of its ``.memfs.config.json``."""
    repo = tmp / ".letta" / "agents" / "agent-1" / "memory"
    (repo / "notes").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "MEMORY.md").write_text("# Memory\n")
    (repo / "notes" / "a.md").write_text("---\nname: a\ndescription: d\n---\n\nx\n")
    if config is not None:
        (repo / ".memfs.config.json").write_bytes(config)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "Update memory")
    return repo


def _big_config(size: int) -> bytes:
    """Valid JSON of ``size`` bytes: a config Letta Code would read (padding is whitespace)."""
    head = b'{"version": 1, "maxFileCharacters": 5000'
    return head + b" " * (size - len(head) - 1) + b"}"


def _rows(repo: Path):
    store = memlab.load_memfs(repo)
    audit = memlab.audit(store)
    return audit.tables["constraints"], audit.tables.get("constraint_history")


def test_a_config_over_the_cap_is_not_read_and_the_tree_is_still_checked(tmp_path):
    repo = _v2_repo(tmp_path, _big_config(MAX_FILE_BYTES + 1000))
    rows, history = _rows(repo)
    by_rule = dict(zip(rows["rule"], rows["message"]))
    assert by_rule.get("config_not_read") == \
        f".memfs.config.json: not read: over {MAX_FILE_BYTES:,} bytes", by_rule
    assert "config_invalid" not in by_rule
    assert "notes/MEMORY.md" in by_rule.get("missing_index", ""), by_rule  # the real finding
    if history is not None and len(history):
        assert "config_invalid" not in set(history["rule"])


def test_a_config_under_the_cap_is_read_as_before(tmp_path):
    """Negative control: the same config a little under the cap is read, and is valid."""
    repo = _v2_repo(tmp_path, _big_config(200_000))
    rows, _ = _rows(repo)
    assert not {"config_not_read", "config_invalid"} & set(rows["rule"])
    assert "missing_index" in set(rows["rule"])


def test_an_oversized_git_config_is_one_error_line(tmp_path):
    from memlab import _git
    from memlab.errors import RepoError

    repo = _v2_repo(tmp_path, None)
    with open(repo / ".git" / "config", "ab") as fh:  # sparse: no disk, no time
        fh.truncate(MAX_FILE_BYTES + 4096)
    with pytest.raises(RepoError) as info:
        _git.check_repo(repo)
    assert f"not read: over {MAX_FILE_BYTES:,} bytes" in str(info.value)


def test_an_oversized_shallow_file_is_not_read_whole(tmp_path):
    from memlab.errors import RepoError
    from memlab.sources._git_repo import find_repo

    repo = _v2_repo(tmp_path, None)
    head = _git(repo, "rev-parse", "HEAD").encode()
    # git accepts it (the same boundary commit, 250,000 times); memlab does not read 10 MB
    (repo / ".git" / "shallow").write_bytes((head + b"\n") * (MAX_FILE_BYTES // 40))
    with pytest.raises(RepoError) as info:
        find_repo(repo)
    assert "not read: over" in str(info.value)


def test_a_huge_dot_git_file_is_sniffed_not_read(tmp_path):
    """A worktree's ``.git`` file is read for its first line only (a sparse 4 GiB one used to
    be read whole)."""
    from memlab._git import git_dir

    folder = tmp_path / "wt"
    folder.mkdir()
    with open(folder / ".git", "wb") as fh:
        fh.write(b"gitdir: /nowhere\n")
        fh.truncate(4 << 30)
    tracemalloc.start()
    try:
        assert git_dir(folder) == Path("/nowhere")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


# ---- the streaming reader ----------------------------------------------------------------------

def test_iter_lines_refuses_a_file_over_the_cap_before_reading(tmp_path):
    from memlab._files import FileTooLarge, LineTooLong, iter_lines, read_regular  # noqa: F401

    path = tmp_path / "HEAD"
    with open(path, "wb") as fh:
        fh.truncate(1 << 30)  # a sparse 1 GiB reflog
    tracemalloc.start()
    try:
        with pytest.raises(FileTooLarge) as info:
            next(iter_lines(path, max_bytes=MAX_FILE_BYTES, max_line_bytes=4096))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.reason.startswith(f"not read: over {MAX_FILE_BYTES:,} bytes")
    assert peak < 1 << 20


def test_iter_lines_streams_in_bounded_memory(tmp_path):
    from memlab._files import FileTooLarge, LineTooLong, iter_lines, read_regular  # noqa: F401

    path = tmp_path / "HEAD"
    line = b"0" * 40 + b" " + b"1" * 40 + b" A <a@b> 1780000000 +0000\tcommit: x"
    with open(path, "wb") as fh:
        for _ in range(40):
            fh.write((line + b"\n") * 5000)
    tracemalloc.start()
    try:
        n = sum(1 for got in iter_lines(path, max_bytes=64 << 20, max_line_bytes=4096)
                if got == line)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == 200_000
    assert peak < 2 << 20, peak  # the file is 23 MB


def test_iter_lines_gives_lines_as_splitting_would(tmp_path):
    from memlab._files import FileTooLarge, LineTooLong, iter_lines, read_regular  # noqa: F401

    path = tmp_path / "HEAD"
    text = b"a\n\nb c\r\nlast-without-newline"
    path.write_bytes(text)
    assert list(iter_lines(path, max_bytes=100, max_line_bytes=100, chunk=3)) == \
        text.split(b"\n")
    path.write_bytes(b"x\n")
    assert list(iter_lines(path, max_bytes=100, max_line_bytes=100)) == [b"x"]


def test_iter_lines_says_a_line_is_too_long(tmp_path):
    from memlab._files import FileTooLarge, LineTooLong, iter_lines, read_regular  # noqa: F401

    path = tmp_path / "HEAD"
    path.write_bytes(b"short\n" + b"y" * 10_000 + b"\nafter\n")
    got = []
    with pytest.raises(LineTooLong) as info:
        for line in iter_lines(path, max_bytes=MAX_FILE_BYTES, max_line_bytes=4096, chunk=512):
            got.append(line)
    assert got == [b"short"]
    assert info.value.line == 2 and "line 2 is over 4,096 bytes" in info.value.reason


def test_iter_lines_refuses_a_fifo(tmp_path):
    from memlab._files import NotRegularFile, iter_lines

    os.mkfifo(tmp_path / "HEAD")
    with pytest.raises(NotRegularFile):
        next(iter_lines(tmp_path / "HEAD", max_bytes=100, max_line_bytes=100))


def test_the_cap_wording_is_one(tmp_path):
    from memlab._files import FileTooLarge, LineTooLong, iter_lines, read_regular  # noqa: F401

    path = tmp_path / "f"
    path.write_bytes(b"x" * 101)
    with pytest.raises(FileTooLarge) as info:
        read_regular(path, max_bytes=100)
    assert info.value.reason == "not read: over 100 bytes (101 bytes)"
