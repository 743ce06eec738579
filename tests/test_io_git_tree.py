"""memlab.io's one ``ls-tree`` parser and its one rule for a name that is not UTF-8, on a real
git repository holding ``caf\\xe9.md`` (Latin-1, not UTF-8) beside plain and odd names.

Before memlab.io there were three parsers: ``memlab._git.tree_entries`` decoded a name with
``surrogateescape`` (``'caf\\udce9.md'``), the loaders' ``sources._git_repo.ls_tree`` with
``replace`` (``'caf\\ufffd.md'``, keeping the bytes in ``raw``), the plan script like the first.
Both forms are what callers rely on (the writers put the bytes back into trees; the loaders
show the name), so both are kept, derived by one rule from one parse: ``tree_name`` is the
lossless surrogateescape text, ``shown_name`` its U+FFFD form. The expected values below are
what the old parsers returned (checked on the code before this change)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memlab import _git
from memlab.io import parse_ls_tree, shown_name, tree_name
from memlab.sources import _git_repo

LATIN1 = b"caf\xe9.md"
NAMES = [LATIN1, b"ok.md", b"tab\there.md", "caf\u00e9-utf8.md".encode(), b"sub/\xff\xfe.md"]


def _git_cmd(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1",
                               "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(repo)}).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("nonutf8")
    _git_cmd(root, "init", "-q", "-b", "main")
    for i, name in enumerate(NAMES):
        path = Path(bytes(root).decode("utf-8", "surrogateescape") + "/" + name.decode("utf-8", "surrogateescape"))
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"x" * (i + 1))
    _git_cmd(root, "add", "-A")
    _git_cmd(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "names")
    return root


def test_the_writers_key_is_lossless(repo):
    found = _git.tree_entries(repo, "HEAD", recursive=True)
    assert "caf\udce9.md" in found and "sub/\udcff\udcfe.md" in found  # as before
    assert "tab\there.md" in found and "caf\u00e9-utf8.md" in found
    assert {k.encode("utf-8", "surrogateescape") for k, v in found.items() if v[1] == "blob"} \
        == set(NAMES)
    assert set(_git.flat_tree(repo, "HEAD")) == {n for n, v in found.items() if v[1] == "blob"}


def test_the_loaders_path_is_shown_with_U_FFFD_and_keeps_the_bytes(repo):
    entries = {e.path: e for e in _git_repo.ls_tree(repo, "HEAD")}
    latin = entries["caf\ufffd.md"]  # as before: U+FFFD in the text, the bytes in raw
    assert latin.raw == LATIN1 and latin.name_bytes == LATIN1 and latin.size == 1
    assert entries["sub/\ufffd\ufffd.md"].raw == b"sub/\xff\xfe.md"
    assert entries["caf\u00e9-utf8.md"].raw is None  # valid UTF-8: no raw kept
    assert entries["ok.md"].raw is None and entries["ok.md"].size == 2
    assert {e.name_bytes for e in entries.values()} == set(NAMES)


def test_one_parse_and_one_rule(repo):
    long = parse_ls_tree(_git_cmd(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", "HEAD"),
                         long=True)
    short = parse_ls_tree(_git_cmd(repo, "ls-tree", "-r", "-z", "--full-tree", "HEAD"))
    assert [r._replace(size=None) for r in long] == short
    assert sorted(r.raw for r in short) == sorted(NAMES)
    assert sorted(r.size for r in long) == [1, 2, 3, 4, 5]
    for r in short:
        name = tree_name(r.raw)
        assert name.encode("utf-8", "surrogateescape") == r.raw  # lossless
        assert shown_name(name) == r.raw.decode("utf-8", "replace")  # the shown form as before
    # a tree listing without -r: the folder is a record too, its size "-" under --long
    top = parse_ls_tree(_git_cmd(repo, "ls-tree", "-z", "--long", "HEAD"), long=True)
    assert [(r.type, r.size) for r in top if r.raw == b"sub"] == [("tree", None)]
