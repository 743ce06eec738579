"""memlab's own migrations, audited: every bundled Agent File migrates to a Letta memfs repo that
memlab's audit finds nothing in and Letta Code's real pre-commit hook accepts edits to.

These are the v1 (``--layout v1``) repositories and the legacy hook; the v2 default is judged by
Letta Code 0.34.12 itself in tests/test_migrate_v2.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from memlab.kinds._memfs._audit import audit_memfs
from memlab.formats import letta_memfs as fmt
from memlab.migrations import migrate
from memlab.kinds._memfs._load import load_memfs

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = sorted((DATA / "samples" / "letta-af").glob("*.af"))
HOOK = DATA / "letta-code" / "pre-commit"
AGENT = ("Sample Agent", "agent-0b5e8c1d-2f3a-4b6c-8d7e-9f0a1b2c3d4e@letta.com")


def _git(repo: Path, *args: str, env: dict | None = None, check: bool = True):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=check)


def _repos(dest: Path) -> list[Path]:
    if (dest / ".git").exists():
        return [dest]
    return sorted(p for p in dest.iterdir() if (p / ".git").exists())


@pytest.fixture(scope="module", params=SAMPLES, ids=[p.stem for p in SAMPLES])
def migrated(request, tmp_path_factory):
    dest = tmp_path_factory.mktemp("migrated") / request.param.stem
    before = pd.Timestamp.now(tz="UTC").floor("s")
    result = migrate(request.param, dest, to="letta", retrieval=False, layout="v1")
    after = pd.Timestamp.now(tz="UTC").ceil("s")
    return request.param, dest, result, (before, after)


def test_every_sample_has_a_bundled_copy():
    assert {p.name for p in SAMPLES} >= {"ezra.af", "deep-thought.af", "customer_service.af",
                                         "deep_research_agent.af"}


def test_a_migrated_repo_audits_with_no_finding(migrated):
    _, dest, result, _ = migrated
    assert result.differences.empty
    for repo in _repos(dest):
        store = load_memfs(repo)
        assert store.meta["layout"] == "letta_v1"
        assert any(".letta/config.json" in e for e in store.meta["letta_evidence"])
        a = audit_memfs(store)
        assert a.headline["findings"] == 0, a.summary()
        assert a.headline["no_verify_commits"] == 0 and a.headline["problems"] == 0
        assert a.headline["readers_disagree_files"] == 0
        assert set(store.history["author_kind"].astype(str)) == {"migration"}
        viol = a["hook_violations"]
        assert not viol["hook_applies"].any()
        # The one rule broken on purpose: read_only set by the migration, as Letta's server does.
        assert set(viol["rule"].astype(str)) <= {"protected_set"}
        assert "findings: 0" in a.summary()


def test_commits_are_dated_at_the_migration_and_keep_the_source_time(migrated):
    src, dest, result, (before, after) = migrated
    from memlab.sources import load

    created = load(src).meta.get("created_at")
    for repo in _repos(dest):
        log = _git(repo, "log", "--format=%aI|%cI|%B%x00", "main").stdout.strip("\x00\n").split("\x00")
        for entry in log:
            authored, committed, body = entry.strip("\n").split("|", 2)
            assert before <= pd.Timestamp(authored) <= after and authored == committed
            assert f"Memlab-Source: {src.name}" in body
            trailer = [ln for ln in body.splitlines() if ln.startswith("Memlab-Source-Created-At: ")]
            assert len(trailer) == 1
            if created:
                assert pd.Timestamp(trailer[0].split(": ", 1)[1]) == \
                    pd.Timestamp(created).tz_convert("UTC").floor("s")
        side = json.loads((repo / ".memlab" / "letta-blocks.json").read_text())
        assert pd.Timestamp(side["migrated_at"]) >= before
        assert side["source_created_at"] == (trailer[0].split(": ", 1)[1] if created else None)
    again = migrate(src, dest, to="letta", retrieval=False, layout="v1")
    assert again.mode == "unchanged"
    assert list(again.commits["sha"]) == list(result.commits["sha"])


@pytest.mark.skipif(shutil.which("bash") is None, reason="the hook is a bash script")
def test_letta_codes_own_hook_accepts_an_agents_edit_of_a_migrated_repo(migrated, tmp_path):
    _, dest, _, _ = migrated
    for repo in _repos(dest):
        clone = tmp_path / repo.name
        _git(tmp_path, "clone", "-q", str(repo), str(clone))
        hooks = clone / ".git" / "hooks"
        hooks.mkdir(exist_ok=True)
        shutil.copy(HOOK, hooks / "pre-commit")
        (hooks / "pre-commit").chmod(0o755)
        who = {"GIT_AUTHOR_NAME": AGENT[0], "GIT_AUTHOR_EMAIL": AGENT[1],
               "GIT_COMMITTER_NAME": AGENT[0], "GIT_COMMITTER_EMAIL": AGENT[1]}
        checked = [p for p in _git(clone, "ls-files").stdout.split() if fmt.is_validated_path(p)]
        editable = [p for p in checked
                    if fmt.read_frontmatter((clone / p).read_text(encoding="utf-8")).read_only is not True]
        for p in editable:
            with open(clone / p, "a", encoding="utf-8") as fh:
                fh.write("\nA line the agent added.\n")
        if editable:
            _git(clone, "add", "--", *editable)
            done = _git(clone, "-c", "core.hooksPath=.git/hooks", "commit", "-q", "-m",
                        "feat: note a new fact", env=who, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
        protected = sorted(set(checked) - set(editable))
        if protected:  # and the hook did run: a read_only file's edit is refused
            with open(clone / protected[0], "a", encoding="utf-8") as fh:
                fh.write("\nnot allowed\n")
            _git(clone, "add", "--", protected[0])
            refused = _git(clone, "-c", "core.hooksPath=.git/hooks", "commit", "-q", "-m", "x",
                           env=who, check=False)
            assert refused.returncode != 0
            assert "is read_only and cannot be modified" in refused.stdout + refused.stderr


def _two_agent_file(path: Path) -> Path:
    doc = {
        "agents": [{"id": "agent-0", "name": "Main", "block_ids": ["block-0", "block-2"]},
                   {"id": "agent-1", "name": "Sleeper", "block_ids": ["block-1", "block-2"]}],
        "blocks": [
            {"id": "block-0", "label": "persona", "value": "I am Main.", "description": "Who I am"},
            {"id": "block-1", "label": "persona", "value": "I am Sleeper.", "description": "Who I am"},
            {"id": "block-2", "label": "human", "value": "Sam.", "description": "The human"},
        ],
        "created_at": "2026-03-01T12:00:00Z",
    }
    path.write_text(json.dumps(doc))
    return path


def test_a_two_agent_migration_is_summarised_and_inspectable_per_repo(tmp_path):
    from memlab.cli import main

    src = _two_agent_file(tmp_path / "pair.af")
    result = migrate(src, tmp_path / "out", to="letta", retrieval=False)
    # persona + human in each of the two repositories: four files, not two distinct paths.
    assert "4 block(s) into 4 file(s) across 2 repositories" in str(result)
    assert result.headline()["files_written"] == 4
    from memlab.kinds._memfs._load import repos_in

    repos = repos_in(tmp_path / "out")
    assert repos["repo"].tolist() == ["main", "sleeper"]
    # v2: persona.md, human.md and the root MEMORY.md index in each
    assert repos["memory_files"].tolist() == [3, 3] and repos["migrated_from"].tolist() == ["pair.af"] * 2
    assert main(["inspect", str(tmp_path / "out")]) == 0
