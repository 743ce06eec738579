"""git itself judges the migration's branch names (issue 33 item 3): memlab asks
``git check-ref-format --branch`` and no rule of its own. Each name below is checked against
git's verdict run here as the oracle, and against the verdict git's documentation gives."""

from __future__ import annotations

import os
import subprocess

import pytest

from memlab.errors import MigrationError
from memlab.migrations import check_branch_name, migrate

# (name, git accepts it): the refused ones each break one rule of git-check-ref-format(1)
NAMES = [
    ("a.lock/b", False),     # a component ending in .lock (memlab's own rule let it through)
    ("a/b.lock/c", False),
    ("a.lock", False),
    ("a..b", False),         # two dots
    ("@{", False), ("a@{b", False), ("@{-1}", False),  # @{ (and no expansion of @{-N})
    ("x.", False), ("a/", False), ("/a", False), ("a//b", False), ("a/.b", False), (".a", False),
    ("-x", False),           # a branch cannot start with a dash
    ("HEAD", False),
    ("a b", False), ("a\tb", False), ("a\x01b", False), ("a\x7fb", False), ("a\x1fb", False),
    ("a~b", False), ("a^b", False), ("a:b", False), ("a?b", False), ("a*b", False),
    ("a[b", False), ("a\\b", False), ("", False),
    # negative controls: names people use, which git accepts
    ("memlab/substrate", True), ("main", True), ("feature/x.y-z_1", True), ("café", True),
    ("a.b", True), ("x@", True), ("@x", True), ("a@b", True), ("v1.2.3", True),
    ("reflection/2026-12-06", True), ("a-", True), ("a.lockx", True), ("lock.a", True),
]


def _git_says(name: str, tmp_path) -> bool:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
           "GIT_CEILING_DIRECTORIES": str(tmp_path.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    proc = subprocess.run(["git", "check-ref-format", "--branch", name], cwd=tmp_path,
                          capture_output=True, env=env)
    return proc.returncode == 0 and proc.stdout.rstrip(b"\n") == os.fsencode(name)


@pytest.mark.parametrize("name,accepted", NAMES, ids=[repr(n) for n, _ in NAMES])
def test_memlab_accepts_a_branch_name_exactly_when_git_does(name, accepted, tmp_path):
    assert _git_says(name, tmp_path) is accepted  # the oracle agrees with git's documentation
    if accepted:
        assert check_branch_name(name) == name
    else:
        with pytest.raises(MigrationError) as err:
            check_branch_name(name)
        assert "\n" not in str(err.value) and repr(name) in str(err.value)


def test_a_nul_byte_or_a_non_text_name_is_refused_before_git_is_asked():
    for bad in ("a\0b", None, 3):
        with pytest.raises(MigrationError):
            check_branch_name(bad)


def test_migrate_refuses_a_dot_lock_component_before_writing(tmp_path, data_dir):
    with pytest.raises(MigrationError) as err:
        migrate(data_dir / "samples/letta-af/customer_service.af", tmp_path / "out", to="letta",
                branch="a.lock/b", retrieval=False)
    assert "a.lock/b" in str(err.value)
    assert list(tmp_path.iterdir()) == []
