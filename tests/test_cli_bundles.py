"""A git bundle works wherever a repository does (issue 33, item 4): ``memlab.load`` and so
``audit``, ``review`` and ``migrate`` read the bundled ``.bundle`` samples that ``inspect``
reads, read-only, from a private temporary folder removed afterwards; ``apply`` refuses a
proposal made from a bundle (a bundle is not a working repository) in one line."""

from __future__ import annotations

import gc
import json
import tempfile
from pathlib import Path

import pytest

import memlab
from memlab.cli import main

ROOT = Path(__file__).resolve().parents[1]
V1 = ROOT / "data/samples/memfs/deep-research-memfs.bundle"
V2 = ROOT / "data/samples/memfs/letta-code-v2.bundle"


@pytest.fixture
def tmpdir_only(tmp_path, monkeypatch):
    """$TMPDIR for this test alone, so what is left in it afterwards is what memlab left."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _left(folder: Path) -> list[Path]:
    """memlab's temporary folders in ``folder`` (torch keeps its own caches there too)."""
    return [p for p in folder.iterdir() if p.name.startswith("memlab-")]


def _bytes(path: Path) -> bytes:
    return path.read_bytes()


def run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err) -> str:
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memlab: error: "), err
    return lines[0]


def test_load_reads_a_bundle_as_its_repository_while_the_store_lives(tmpdir_only):
    before = _bytes(V2)
    store = memlab.load(V2)
    assert store.meta["bundle"] == str(V2)
    assert store.meta["layout"] == "letta_v2" and len(store.frames["files"]) == 14
    unpacked = Path(store.path)
    assert unpacked.is_dir() and tmpdir_only in unpacked.parents
    # the same repository loaded from an unpacked copy gives the same files
    from memlab.sources._bundle import unpack_bundle

    plain = memlab.load(unpack_bundle(V2, tmpdir_only.parent / "plain"))
    assert "bundle" not in plain.meta
    assert sorted(plain.frames["files"]["path"]) == sorted(store.frames["files"]["path"])
    del store
    gc.collect()
    assert not unpacked.exists() and _left(tmpdir_only) == []
    assert _bytes(V2) == before  # read-only


def test_a_file_named_bundle_that_is_not_one_is_not_taken_for_one(tmp_path, capsys):
    fake = tmp_path / "notes.bundle"
    fake.write_text("# not a git bundle\n")
    line = one_line_error(*run(capsys, "audit", fake))
    assert "notes.bundle" in line and "not a store memlab knows" in line
    broken = tmp_path / "broken.bundle"
    broken.write_bytes(_bytes(V2)[:200])  # a bundle's header, its pack cut off
    line = one_line_error(*run(capsys, "audit", broken))
    assert "broken.bundle" in line


def test_audit_and_inspect_accept_the_bundled_samples(tmpdir_only, capsys):
    for bundle in (V1, V2):
        code, out, err = run(capsys, "audit", bundle, "--as-of", "2026-12-01")
        assert code == 0, err
        assert out.startswith("memfs audit of ") and "commits:" in out
        code, out, err = run(capsys, "inspect", bundle)
        assert code == 0, err
        assert f"{bundle} (git bundle, at its main branch)" in out
    code, out, err = run(capsys, "audit", V1, V2, "--json")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)] == [str(V1), str(V2)]
    assert _left(tmpdir_only) == []


def test_review_of_a_bundle_writes_a_proposal_that_apply_refuses(tmpdir_only, tmp_path, capsys,
                                                                  monkeypatch):
    monkeypatch.setenv("MEMLAB_EMBED_PRECISION", "fp32")
    out_dir = tmp_path / "reviews"
    code, out, err = run(capsys, "review", V2, "--out", out_dir, "--as-of", "2026-12-01")
    assert code == 0, err
    md = next(out_dir.glob("review-*.md"))
    data = json.loads(md.with_suffix(".json").read_text())
    assert data["store"]["bundle"] == str(V2)
    assert "not a working repository" in md.read_text()
    text = md.read_text().replace("- [ ]", "- [x]", 1)
    md.write_text(text)
    for extra in ((), ("--dry-run",), ("--repo", V2)):
        line = one_line_error(*run(capsys, "apply", md, *extra))
        assert "git bundle" in line and "not a working repository" in line
    assert _left(tmpdir_only) == []


def test_migrate_accepts_a_bundle_and_refuses_a_plan_script_for_one(tmpdir_only, tmp_path, capsys):
    code, out, err = run(capsys, "migrate", V1, tmp_path / "v2", "--verify")
    assert code == 0, err
    assert out.startswith("deep-research-memfs.bundle -> ") and "0 difference(s)" in out
    assert memlab.load(tmp_path / "v2").meta["layout"] == "letta_v2"
    line = one_line_error(*run(capsys, "migrate", V1, tmp_path / "plan", "--plan"))
    assert "git bundle" in line and "--plan" in line
    assert not (tmp_path / "plan").exists() and not (tmp_path / "plan.migrate.py").exists()
    assert _left(tmpdir_only) == []



def test_sigterm_removes_the_unpacked_bundle(tmp_path):
    """A command stopped with SIGTERM (what a scheduler or `timeout` sends) removes the folder
    it unpacked the bundle into, as Ctrl-C does."""
    import os
    import signal
    import subprocess
    import sys
    import time

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT),
           "MEMLAB_CACHE_DIR": str(tmp_path / "cold-cache"), "MEMLAB_EMBED_PRECISION": "fp32"}
    proc = subprocess.Popen([sys.executable, "-m", "memlab", "review", str(V1), "--out",
                             str(tmp_path / "out")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not _left(tmp) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _left(tmp), proc.communicate()  # the review unpacked the bundle
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, (out, err)  # stopped, not finished
    assert _left(tmp) == []
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
