"""memlab.io's one atomic writer: the target is replaced whole or left as it was, no temp file
is left behind, the mode is the one asked for, and a link at the target is replaced, never
followed."""

from __future__ import annotations

import os
import stat

import pytest

from memlab.io import replacing, replacing_path, write_atomic


def test_a_write_replaces_the_target_with_its_mode(tmp_path):
    target = tmp_path / "f.json"
    target.write_bytes(b"old")
    write_atomic(target, b"new", mode=0o600)
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == 0o600
    write_atomic(target, b"newer", mode=0o755, fsync=True)
    assert target.read_bytes() == b"newer" and stat.S_IMODE(target.stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]


def test_a_failed_write_leaves_the_target_and_no_temp_file(tmp_path):
    target = tmp_path / "f.parquet"
    target.write_bytes(b"old")
    with pytest.raises(ZeroDivisionError):
        with replacing(target) as fh:
            fh.write(b"half")
            1 / 0
    with pytest.raises(ZeroDivisionError):
        with replacing_path(target) as tmp:
            with open(tmp, "wb") as fh:
                fh.write(b"half")
            1 / 0
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.parquet"]


def test_the_temp_name_and_a_link_at_the_target(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep me")
    link = tmp_path / "in" / "link.txt"
    link.parent.mkdir()
    os.symlink(outside, link)
    with replacing_path(link) as tmp:
        name = os.path.basename(tmp)
        assert name.startswith(".link.txt.") and name.endswith(".tmp")  # hidden, beside it
        assert os.path.dirname(tmp) == str(link.parent)
    assert not link.is_symlink() and link.read_bytes() == b""
    assert outside.read_bytes() == b"keep me"
    with replacing_path(tmp_path / "obj", prefix="tmp_obj_") as tmp:  # git's loose-object name
        assert os.path.basename(tmp).startswith("tmp_obj_")
