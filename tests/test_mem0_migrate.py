"""mem0 -> Letta Code memfs v2: the real mem0ai stores (data/samples/mem0/) migrate with their
event log replayed as commits at their own times, Letta Code 0.34.12's own validator and hook
accept the result, and ``--verify`` parity holds, and catches a changed copy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memlab
from memlab import migrate, verify

sys.path.insert(0, str(Path(__file__).parent))
from migrate_v2_helpers import AGENT, _git  # noqa: E402

VERSIONS = ("0.1.90", "2.2.1")


@pytest.fixture(scope="module", params=VERSIONS)
def migrated(request, data_dir, tmp_path_factory):
    src = data_dir / "samples" / "mem0" / request.param / "history.db"
    out = tmp_path_factory.mktemp(f"mem0-{request.param}") / "out"
    result = migrate(src, out, to="letta", verify=True, retrieval=False)
    return src, out, result


def _log(repo: Path, *args: str) -> list[str]:
    done = subprocess.run(["git", "-C", str(repo), "log", *args], capture_output=True, text=True,
                          check=True)
    return done.stdout.splitlines()


def test_every_history_event_is_a_commit_at_its_own_time(migrated):
    src, out, result = migrated
    store = memlab.load(src)
    assert result.parity["ok"].all() and len(result.parity) > 30
    assert len(result.commits) == 18 + 2  # init, one per event, the side file
    ids = json.loads((src.parent / "scenario.json").read_text())["memory_ids"]
    # the Lisbon -> Porto memory: its file's log is its three events, at mem0's times
    city = ids["city"]
    times = _log(out, "--reverse", "--format=%at %s", "--", f"mem0/{city}.md")
    want = store.history[store.history["memory_id"] == city].sort_values("seq")
    assert [t.split(" ", 1)[1] for t in times] == [f"mem0: add {city}", f"mem0: rewrite {city}",
                                                   f"mem0: rewrite {city}"]
    assert [int(t.split()[0]) for t in times] == [int(a.timestamp()) for a in want["at"]]
    first = _log(out, "--reverse", "-p", "--format=%H", "--", f"mem0/{city}.md")
    assert "+Alice lives in Lisbon." in first and "+Alice lives in Porto." in first
    # a deleted memory is gone from the tree and kept in the history
    trip = ids["bob_trip"]
    assert not (out / f"mem0/{trip}.md").exists()
    assert len(_log(out, "--format=%H", "--", f"mem0/{trip}.md")) == 3
    body = (out / f"mem0/{ids['tea2']}.md").read_text()
    assert body.endswith("\n---\nAlice drinks green tea each morning.")  # as Letta renders it
    assert "user alice" in body.split("---")[1]  # whose memory, from the vector store


def test_untimed_deletions_are_flagged_and_never_run_backwards(migrated):
    src, out, result = migrated
    stamps = [int(s) for s in _log(out, "--reverse", "--format=%at")]
    assert stamps == sorted(stamps)
    untimed = result.flags[result.flags["kind"] == "untimed_event"]
    assert len(untimed) == (3 if src.parent.name == "0.1.90" else 0)


def test_letta_codes_validator_and_hook_accept_the_repository(migrated, letta_code, tmp_path):
    _, out, _ = migrated
    assert letta_code.audit(out)["policy"] == "root-marker"
    assert letta_code.audit_errors(out) == []
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(out), str(clone))
    letta_code.install_hooks(clone, "root-marker")
    env = {**AGENT, "PATH": f"{letta_code.payload / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    done = _git(clone, "commit", "--allow-empty", "-qm", "noop", env=env, check=False)
    assert done.returncode == 0, done.stderr
    # and the hook does run on the memory files: v2 refuses a limit in frontmatter
    target = sorted((clone / "mem0").glob("*-*.md"))[0]
    target.write_text(target.read_text().replace("---\n", "---\nlimit: 5\n", 1))
    _git(clone, "add", str(target.relative_to(clone)))
    refused = _git(clone, "commit", "-qm", "x", env=env, check=False)
    assert refused.returncode != 0 and "unknown frontmatter key 'limit'" in refused.stderr


def test_parity_catches_a_changed_copy(data_dir, tmp_path):
    src = data_dir / "samples/mem0/2.2.1/history.db"
    out = tmp_path / "out"
    migrate(src, out, to="letta", retrieval=False)
    ids = json.loads((src.parent / "scenario.json").read_text())["memory_ids"]
    f = out / f"mem0/{ids['city']}.md"
    f.write_text(f.read_text().replace("Porto", "Braga"))
    (out / f"mem0/{ids['bob_trip']}.md").write_text("---\nname: x\ndescription: x\n---\nback\n")
    _git(out, "add", "-A")
    _git(out, "commit", "-qm", "edit", env=AGENT)
    parity = verify(src, out, retrieval=False)
    bad = parity[parity["ok"] == False]  # noqa: E712
    assert set(zip(bad["check"], bad["item"])) == {("content", ids["city"]),
                                                   ("presence", ids["bob_trip"])}


def test_the_cli_migrates_and_verifies_in_one_line(data_dir, tmp_path, capsys):
    from memlab.cli import main

    src = data_dir / "samples/mem0/0.1.90/history.db"
    code = main(["migrate", str(src), str(tmp_path / "out"), "--to", "letta", "--verify",
                 "--no-retrieval"])
    text = " ".join(capsys.readouterr().out.split())  # the summary wraps at the terminal's width
    assert code == 0 and "7 block(s) into 7 file(s); 20 commit(s)" in text
    assert "0 difference(s)" in text and "untimed_event" in text


def test_a_v1_layout_is_refused_in_one_line(data_dir, tmp_path):
    with pytest.raises(memlab.errors.MigrationError, match="memfs v2 only"):
        migrate(data_dir / "samples/mem0/2.2.1/history.db", tmp_path / "o", to="letta",
                layout="v1", retrieval=False)
    assert not (tmp_path / "o").exists()

