"""``--json`` carries every row the text shows (issue 33, item 4): each count the text prints
is the number of rows of the matching JSON table, and each row the text lists is in it.

The memfs store is the bundled Letta Code v2 sample cloned with real git plus one commit of two
binary files (two problem rows; its constraint row is the sample's own missing index); the v1
sample carries hook, no-verify, limit and problem rows; the Agent File and the Letta server
database their own tables.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from memlab.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
V1 = DATA / "samples/memfs/deep-research-memfs.bundle"
V2 = DATA / "samples/memfs/letta-code-v2.bundle"
AF = DATA / "samples/letta-af/ezra.af"
SERVER = DATA / "samples/letta-server/letta-0.11.7.db"
AS_OF = "2026-12-01"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("json") / "agent"
    subprocess.run(["git", "clone", "-q", "--branch", "main", str(V2), str(path)], check=True)
    (path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (path / "blob.bin").write_bytes(b"\x00\x01\x02")
    env = {**os.environ, "GIT_AUTHOR_NAME": "someone", "GIT_AUTHOR_EMAIL": "someone@example.org",
           "GIT_COMMITTER_NAME": "someone", "GIT_COMMITTER_EMAIL": "someone@example.org"}
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "--no-verify", "-m", "add two images"],
                   check=True, env=env)
    return path


def run(capsys, *argv) -> str:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def both(capsys, *argv) -> tuple[str, dict]:
    """The text output (one line per logical line: wrapped continuations joined) and the JSON."""
    text = run(capsys, *argv)
    text = re.sub(r"\n {5,}", " ", text)  # wrap_text's continuation lines
    return text, json.loads(run(capsys, *argv, "--json"))


def count(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    assert m, (pattern, text)
    return int(m.group(1).replace(",", ""))


def test_memfs_audit_json_has_every_row_the_text_counts_and_lists(repo, capsys):
    for store in (repo, V1):
        text, data = both(capsys, "audit", store, "--as-of", AS_OF)
        t = data["tables"]
        assert count(r"hook: (\d+) violation", text) == len(t["hook_violations"])
        assert count(r"(\d+) commit\(s\) must have used --no-verify", text) == \
            len(t["no_verify_commits"])
        errors = count(r"constraints \([^)]*\): (\d+) error", text)
        assert errors == len(t["constraints"]) == data["headline"]["constraint_errors"]
        assert count(r"error\(s\) on (\d+) path", text) == len({r["path"] for r in t["constraints"]})
        if data["headline"]["integrity_findings"] is None:  # no reflogs (a bundle): not checked
            assert "integrity: not checked (" in text
        else:
            assert count(r"integrity: (\d+) finding", text) == len(t["integrity"])
        assert count(r"limit: (\d+) file\(s\) over", text) == len(t["over_limit"])
        assert count(r"(\d+) commit\(s\) wrote over a limit", text) == \
            len({r["sha"] for r in t["limit_breaches"]})
        assert count(r"problems: (\d+)", text) == len(t["problems"])
        assert count(r"commits: (\d+)", text) == len(t["commits"])
        # each constraint row the text lists is a JSON row
        listed = re.findall(r"^    (\S+): (.+)$", text.split("constraints (")[1].split("\n  integrity")[0],
                            re.M)
        assert len(listed) == len(t["constraints"])
        for path, message in listed:
            assert any(r["path"] == path and message in r["message"] for r in t["constraints"])
    # the store with both: problem rows and a constraint row
    _, data = both(capsys, "audit", repo, "--as-of", AS_OF)
    assert len(data["tables"]["problems"]) == 2 and len(data["tables"]["constraints"]) == 1
    assert {r["file"] for r in data["tables"]["problems"]} == {"pic.png", "blob.bin"}
    assert data["headline"]["constraint_errors"] == 1


def test_inspect_json_has_every_problem_the_text_lists(repo, capsys):
    for store in (repo, V1, AF):
        text, data = both(capsys, "inspect", store)
        assert count(r"(\d+) problem\(s\)", text) == len(data["problems"])
        for kind, where in re.findall(r"^  (\w+)  (\S+?)(?::\d+)?: ", text.split("problem(s)")[1],
                                      re.M):
            assert any(p["kind"] == kind and where.endswith(p["file"]) for p in data["problems"])
    # more problems than --max-problems lists: the JSON still has them all
    text, data = both(capsys, "inspect", V1, "--max-problems", "1")
    assert "4 problem(s), the first 1:" in text and len(data["problems"]) == 4


def test_agent_file_and_server_audit_json_have_the_rows_the_text_counts(capsys):
    text, data = both(capsys, "audit", AF, "--as-of", AS_OF)
    t = data["tables"]
    assert count(r"(\d+) block\(s\) attached to no agent", text) == len(t["orphan_blocks"])
    assert count(r"(\d+) block\(s\) over their limit", text) == len(t["blocks_over_limit"])
    for label in re.findall(r"^    (\S+): [\d,]+ / [\d,]+ chars", text, re.M):
        assert label in {r["label"] for r in t["blocks_over_limit"]}
    assert count(r"(\d+) problem\(s\) while reading", text) == len(t["problems"]) == 1
    text, data = both(capsys, "audit", SERVER, "--as-of", AS_OF)
    t = data["tables"]
    assert count(r"(\d+) block\(s\) over their limit", text) == len(t["blocks_over_limit"])
    assert count(r"integrity: (\d+) checkpoint", text) == len(t["integrity"])
    assert count(r"(\d+) block\(s\) unwritten for", text) == len(t["stale_blocks"])
    assert count(r"(\d+) agent\(s\)", text) == len(t["core_memory"])


def test_a_comparison_json_has_a_row_per_store(repo, capsys):
    text, data = both(capsys, "audit", repo, V1, AF, "--as-of", AS_OF)
    assert len(data) == 3
    assert [r["path"] for r in data] == [str(repo), str(V1), str(AF)]


def test_discover_json_has_every_store_the_text_lists(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # a table as wide as its paths: none is cut
    text = run(capsys, "discover", DATA / "samples")
    data = json.loads(run(capsys, "discover", DATA / "samples", "--json"))
    assert count(r"^(\d+) store\(s\) under", text) == len(data) >= 8
    for row in data:  # each path the text shows (relative to the root) is a JSON row
        assert "./" + str(Path(row["path"]).relative_to(DATA / "samples")) in text


@pytest.mark.slow  # the modelled scenarios embed their texts
def test_simulate_json_has_every_cell_and_evidence_row_the_text_shows(capsys, monkeypatch):
    monkeypatch.setenv("MEMLAB_EMBED_PRECISION", "fp32")
    argv = ("simulate", "--no-real", "--scenarios", "S1,S3", "--iterations", "1,4")
    text = run(capsys, *argv)
    data = json.loads(run(capsys, *argv, "--json"))
    table = text.split("Iteration x Scenario")[1].split("\n\n")[0]
    shown = re.findall(r"~(?:pass|PART|FAIL)", table)
    assert len(shown) == len(data["cells"]) == 4
    evidence = re.findall(r"^    \d: .+\[modelled(?:, (?:cached|computed now))?\]", text, re.M)
    assert len(evidence) == len({(r["iteration"], r["scenario"]) for r in data["evidence"]})
    assert len(data["fitness"]) == 2 and len(data["journey"]) == 2
