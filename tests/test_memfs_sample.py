"""The bundled memfs sample: unpacked from its git bundle, it is the lived-in Letta repo its
SOURCES.md describes, and its script rebuilds it to the same commits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memlab.kinds._memfs._audit import audit_memfs, size_over_time
from memlab.errors import OutputExists, StoreNotFound
from memlab.kinds._memfs._load import SAMPLE_BUNDLE, load_memfs, unpack_bundle

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / SAMPLE_BUNDLE
HEAD = "cdefa9fe8ab3f3cfef96d837b7223c88cc8e59d3"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    into = tmp_path_factory.mktemp("sample")
    repo = unpack_bundle(BUNDLE, into)
    return repo, audit_memfs(load_memfs(repo))


def test_the_bundle_unpacks_once_and_never_over_something_else(sample, tmp_path):
    repo, _ = sample
    assert repo.name == f"deep-research-memfs-{HEAD[:12]}"
    assert unpack_bundle(BUNDLE, repo.parent) == repo  # reused, not rebuilt
    assert not (ROOT / "data" / "samples" / "memfs" / ".git").exists()
    clash = tmp_path / repo.name
    clash.mkdir()
    (clash / "notes.txt").write_text("mine")
    with pytest.raises(OutputExists):
        unpack_bundle(BUNDLE, tmp_path)
    with pytest.raises(StoreNotFound):
        unpack_bundle(tmp_path / "absent.bundle", tmp_path)


def test_the_sample_is_a_lived_in_letta_repo(sample):
    repo, a = sample
    store = load_memfs(repo)
    h = a.headline
    assert store.meta["head_sha"] == HEAD and store.meta["layout"] == "letta_v1"
    assert (h["commits_agent"], h["commits_server_user"], h["commits_human"],
            h["commits_reflection_subagent"], h["commits_migration"]) == (16, 2, 2, 3, 3)
    assert h["branches"] == 3 and h["reflection_merges"] == 1
    # The seeded findings, each where the sample's SOURCES.md says.
    [bypass] = a["no_verify_commits"].to_dict("records")
    assert bypass["rules"] == "unknown_key" and bypass["paths"] == "system/human.md"
    assert a["readers"]["path"].tolist() == ["system/research_citations.md"]
    assert a["over_limit"]["path"].tolist() == ["reference/report-draft.md"]
    # Other files: memlab's side file, Letta's config and the 6,173-byte picture.
    assert h["top_churn_other_file"] == ".memlab/letta-blocks.json" and h["other_bytes"] == 10017
    assert h["top_churn_file"] == "reference/report-draft.md"
    # Memory and other files apart: the picture is not in the memory sizes.
    assert "(root)" not in size_over_time(a).columns
    assert "(root)" in size_over_time(a, memory=False).columns
    sizes = size_over_time(a)
    assert sizes.index.min().date().isoformat() == "2026-04-06"
    assert (sizes.index.max() - sizes.index.min()).days >= 35


@pytest.mark.slow
def test_the_script_rebuilds_the_same_sample():
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_memfs_sample.py"), "--check"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"same main head {HEAD}" in run.stdout
