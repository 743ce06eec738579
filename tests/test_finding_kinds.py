"""A scheduled run names every kind of finding the audit counts (issue 33 item 3): the memfs
audit's ``findings`` and the run's finding identities come from one list
(``memlab._metrics.FINDINGS``). Before it, a constraint error or an integrity row counted in
``findings`` was named by no run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import memlab
from memlab import _metrics
from memlab.kinds._memfs import _report
from memlab.report import schedule
from memlab.report._runs import FINDING_KEYS, finding_keys

ENV = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "agent-1@letta.com",
       "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "agent-1@letta.com",
       "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(repo: Path, *args: str, when: int | None = None) -> None:
    env = dict(ENV)
    if when is not None:
        env.update(GIT_AUTHOR_DATE=f"{when} +0000", GIT_COMMITTER_DATE=f"{when} +0000")
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _v2_repo(home: Path, files: dict[str, str]) -> Path:
    repo = home / ".letta" / "agents" / "agent-1" / "memory"  # where Letta Code keeps it
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "Update memory", when=1_780_000_000)
    return repo


GOOD = {"MEMORY.md": "# Memory\n", "persona.md": "---\nname: persona\ndescription: who I am\n"
                                                "---\nI am Emma.\n"}
# a v2 root file without the frontmatter Letta Code's v2 hook requires: a constraint error
BAD = {**GOOD, "notes.md": "no frontmatter here\n"}


def test_every_table_the_memfs_audit_counts_is_a_finding_kind_runs_record(tmp_path):
    repo = _v2_repo(tmp_path / "home", BAD)
    audit = memlab.audit(repo)
    counts = _report.finding_counts(audit.headline, audit.tables)
    assert sum(counts.values()) == audit.headline["findings"]
    # load problems are recorded apart (problem_keys); every other counted table is listed
    assert set(counts) - {"problems"} <= set(_metrics.FINDINGS)
    assert dict(FINDING_KEYS) == _metrics.FINDINGS


def test_a_scheduled_run_names_a_constraint_error_and_an_integrity_row(tmp_path):
    repo = _v2_repo(tmp_path / "home", BAD)
    # a rewrite the reflog shows: the commit amended (its first version reachable from no ref)
    (repo / "persona.md").write_text("---\nname: persona\ndescription: who I am\n---\nI am "
                                     "Emma, amended.\n", encoding="utf-8")
    _git(repo, "commit", "-q", "-a", "--amend", "--no-verify", "-m", "Update memory",
         when=1_780_000_100)
    audit = memlab.audit(repo)
    constraints, integrity = audit.tables["constraints"], audit.tables["integrity"]
    assert len(constraints) >= 1 and "notes.md" in set(constraints["path"])
    assert audit.headline["constraint_errors"] == len(constraints)
    # what `memlab report all` records for each store, in its own process
    state = schedule._store_state(repo, None)
    named = state["findings"]
    assert any(k.startswith("constraints: notes.md") for k in named), named
    assert sum(k.startswith("constraints: ") for k in named) == len(
        constraints.drop_duplicates(["path", "rule", "check"]))
    keys = [c for c in FINDING_KEYS["integrity"] if c in integrity.columns]
    assert sum(k.startswith("integrity: ") for k in named) == len(integrity.drop_duplicates(keys))
    assert len(integrity) >= 1  # the amend is a finding the audit counts, and the run names it


def test_a_clean_repository_names_no_constraint_finding(tmp_path):
    repo = _v2_repo(tmp_path / "home", GOOD)
    audit = memlab.audit(repo)
    assert audit.headline["constraint_errors"] == 0
    assert not [k for k in finding_keys(audit.tables) if k.startswith("constraints: ")]


def test_a_table_without_its_key_columns_is_keyed_by_what_it_has_never_dropped():
    import pandas as pd

    odd = pd.DataFrame({"kind": ["forced_update"], "detail": ["main moved"]})
    assert finding_keys({"integrity": odd}) == ["integrity: forced_update"]
