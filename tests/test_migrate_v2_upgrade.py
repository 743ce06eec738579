"""A Letta Code memfs v1 repository moved to v2 (``memlab migrate REPO DEST --to letta --layout
v2``): a new repository with the source's history and the move on top, judged by Letta Code
0.34.12 itself (its ``--audit`` and v2 hook)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memlab.kinds._memfs._audit import audit_memfs
from memlab.cli import main
from memlab.formats import letta_memfs as fmt
from memlab.migrations import migrate, verify
from memlab.kinds._memfs._load import load_memfs, unpack_bundle

from migrate_v2_helpers import _git, _head_files, _hook_accepts_noop_and_refuses_limit

DATA = Path(__file__).resolve().parents[1] / "data"
AGENT_FILES = sorted((DATA / "samples/letta-af").glob("*.af"))


BUNDLE = DATA / "samples/memfs/deep-research-memfs.bundle"


def _check_upgrade(src_repo: Path, dest: Path, letta_code, tmp_path: Path) -> None:
    head = _git(src_repo, "rev-parse", "HEAD").stdout.strip()
    before = _git(src_repo, "rev-list", "--count", "HEAD").stdout.strip()
    assert _git(dest, "merge-base", "--is-ancestor", head, "HEAD", check=False).returncode == 0
    after = int(_git(dest, "rev-list", "--count", "HEAD").stdout.strip())
    assert after - int(before) in (1, 2)  # the move, and the read-only list when one is needed
    assert letta_code.audit(dest)["policy"] == "root-marker"
    assert letta_code.audit_errors(dest) == []
    _hook_accepts_noop_and_refuses_limit(dest, letta_code, tmp_path)
    files = _head_files(dest)
    assert not any(p.startswith("system/") for p in files)
    for path, text in files.items():  # every memory file has exactly Letta's name for its path
        if path.endswith(".md") and path.rsplit("/", 1)[-1] != "MEMORY.md" \
                and not path.startswith("skills/"):
            fm = fmt.read_frontmatter(text)
            assert set(fm.fields) == {"name", "description"}, path
            assert fm.fields["name"] == fmt.memory_name_from_path(path.rsplit("/", 1)[-1])


def test_the_bundled_v1_repo_moves_to_v2_with_its_history(tmp_path, letta_code):
    repo = unpack_bundle(BUNDLE, tmp_path / "src")
    source_before = _git(repo, "rev-parse", "HEAD").stdout, _git(repo, "status", "--porcelain").stdout
    result = migrate(repo, tmp_path / "v2", to="letta", layout="v2", retrieval=False, verify=True)
    assert result.ok is True and result.mode == "created"
    assert (_git(repo, "rev-parse", "HEAD").stdout, _git(repo, "status", "--porcelain").stdout) \
        == source_before  # the source is only read
    _check_upgrade(repo, tmp_path / "v2", letta_code, tmp_path)
    paths = dict(zip(result.moved["item"], result.moved["path"]))
    assert paths["system/human.md"] == "human.md"
    assert paths["reference/report-draft.md"] == "reference/report-draft.md"
    files = _head_files(tmp_path / "v2")
    assert "profile.png" in files and "notes/MEMORY.md" in files and "reference/MEMORY.md" in files
    config = json.loads(files[".memfs.config.json"])
    assert config["readOnlyFiles"] == ["persona.md"]
    assert {"limit_not_carried", "read_only_by_migration"} <= set(result.flags["kind"].astype(str))
    # the values are the v1 bodies, byte for byte, as Letta Code reads the v2 files
    old = load_memfs(repo).files.set_index("path")
    for item, path in paths.items():
        if item in old.index:
            assert fmt.read_as_client(files[path]).body == old.loc[item, "body"], item
    again = migrate(repo, tmp_path / "v2", retrieval=False)
    assert again.mode == "unchanged" and list(again.commits["sha"]) == list(result.commits["sha"])
    assert main(["migrate", str(repo), str(tmp_path / "cli"), "--to", "letta", "--layout", "v2",
                 "--verify", "--no-retrieval"]) == 0
    assert _git(tmp_path / "cli", "rev-parse", "HEAD").stdout == \
        _git(tmp_path / "v2", "rev-parse", "HEAD").stdout


def test_a_v1_upgrade_plan_script_makes_the_same_commits(tmp_path):
    from memlab.migrations import script_path

    repo = unpack_bundle(BUNDLE, tmp_path / "src")
    planned = migrate(repo, tmp_path / "scripted", plan=True)
    run = subprocess.run([sys.executable, "-I", str(script_path(tmp_path / "scripted"))],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    direct = migrate(repo, tmp_path / "scripted", retrieval=False)
    assert direct.mode == "unchanged"
    assert list(planned.commits["sha"]) == list(direct.commits["sha"])
    assert verify(repo, tmp_path / "scripted", retrieval=False)["ok"].all()


@pytest.mark.parametrize("af", AGENT_FILES, ids=lambda p: p.stem)
def test_memlabs_own_v1_output_moves_to_v2(af, tmp_path, letta_code):
    migrate(af, tmp_path / "v1", layout="v1", retrieval=False)
    result = migrate(tmp_path / "v1", tmp_path / "v2", retrieval=False, verify=True)
    assert result.ok is True
    _check_upgrade(tmp_path / "v1", tmp_path / "v2", letta_code, tmp_path)
    a = audit_memfs(load_memfs(tmp_path / "v2"))
    assert a.headline["findings"] == 0, a.summary()
    # the .af's own side file follows its blocks: the Agent File verifies against the v2 repo,
    # every value, description, limit and read-only; only a label with a folder outside
    # system/ (ezra's reference/faq) sits where the move put it, not at the direct mapping's
    parity = verify(af, tmp_path / "v2", retrieval=False)
    bad = parity[~parity["ok"]]
    assert set(bad["check"].astype(str)) <= {"presence"}
    assert not (bad["actual"] == "missing").any()
    assert all("/" in a and not a.startswith("system/") for a in bad["actual"])


def test_a_v2_repo_is_not_moved_again(tmp_path, capsys):
    migrate(DATA / "samples/letta-af/customer_service.af", tmp_path / "v2", retrieval=False)
    assert main(["migrate", str(tmp_path / "v2"), str(tmp_path / "again")]) == 2
    assert "memfs v2 already" in capsys.readouterr().err


def test_an_interrupted_v1_move_leaves_nothing_and_the_source_alone(tmp_path, monkeypatch):
    from memlab.migrations import _apply

    repo = unpack_bundle(BUNDLE, tmp_path / "src")
    before = _git(repo, "for-each-ref").stdout, _git(repo, "status", "--porcelain").stdout
    real, calls = _apply._store, [0]

    def interrupted(gdir, kind, body):  # after the history is fetched, mid-way through the move
        calls[0] += 1
        if calls[0] == 5:
            raise KeyboardInterrupt
        return real(gdir, kind, body)

    monkeypatch.setattr(_apply, "_store", interrupted)
    with pytest.raises(KeyboardInterrupt):
        migrate(repo, tmp_path / "out", retrieval=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
    assert (_git(repo, "for-each-ref").stdout, _git(repo, "status", "--porcelain").stdout) == before
    monkeypatch.setattr(_apply, "_store", real)
    assert migrate(repo, tmp_path / "out", retrieval=False, verify=True).ok is True
