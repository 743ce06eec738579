"""Text memlab cannot store as it came: a lone surrogate escaped in JSON, a key repeated in one
object, a file or folder name that is not UTF-8, a number past 64 bits. Each is kept readable
(U+FFFD for what is not a character) and named in a problem row; none is a traceback or a
silent drop. Each case loads real files, through the real CLI where a user would meet it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import memlab
from memlab.sources.agent_file import load_agent_file

from hostile import agent_file

TIMEOUT = 120
LEDGER = "samples/elfmem-substrate/.elfmem/ledger/2026-11.jsonl"
EVENT = '{"t":"2026-11-30T10:20:07+00:00","s":3,"ah":1,"k":"\\ud800"}'


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                          text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def _clean_run(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def _ledger(tmp_path, text: str):
    """A substrate holding one ledger file, loaded through memlab.load."""
    ledger = tmp_path / "sub" / ".elfmem" / "ledger" / "2026-11.jsonl"
    ledger.parent.mkdir(parents=True)
    (tmp_path / "sub" / ".elfmem" / "memory").mkdir()
    (tmp_path / "sub" / ".elfmem" / "memory" / "self.md").write_text("# Self\n")
    ledger.write_text(text)
    return memlab.load(tmp_path / "sub")


def _kinds(store) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for row in store.problems.itertuples():
        out.setdefault(row.kind, []).append(row.message)
    return out


# ---- F1: escaped lone surrogates ---------------------------------------------------------------

def test_a_lone_surrogate_in_an_agent_file_label_is_replaced_and_named(tmp_path):
    af = agent_file(tmp_path / "s.af", "rex", ["a\ud800b", "human"])
    assert "\\ud800" in af.read_text()  # json.dumps escaped it: this is what json.loads accepts
    store = load_agent_file(af)
    assert store.blocks["label"].tolist() == ["a\ufffdb", "human"]
    assert store.blocks["value"].tolist() == ["value 0", "value 1"]
    bad = _kinds(store)["bad_text"]
    assert len(bad) == 1 and "blocks[0].label" in bad[0] and "\\ud800" in bad[0]
    assert "U+FFFD" in bad[0]
    out = _clean_run(_cli("inspect", str(af)))
    assert "bad_text" in out and "blocks[0].label" in out


def test_lone_surrogates_in_values_keys_and_a_double_encoded_file(tmp_path):
    doc = {"agents": [{"id": "agent-0", "name": "r\udc80x", "block_ids": ["block-0"]}],
           "blocks": [{"id": "block-0", "label": "persona", "value": "I \ud83d am \udfff.",
                       "limit": 100, "metadata": {"k\udbff": "v"}}]}
    af = tmp_path / "double.af"
    af.write_text(json.dumps(json.dumps(doc)), encoding="utf-8")  # as /export returns it
    store = load_agent_file(af)
    assert store.meta["double_encoded"] is True
    assert store.agents["name"].tolist() == ["r\ufffdx"]
    assert store.blocks["value"].tolist() == ["I \ufffd am \ufffd."]
    assert store.blocks["chars"].tolist() == [len("I \ufffd am \ufffd.")]
    assert store.blocks["metadata"].tolist() == [{"k\ufffd": "v"}]
    bad = _kinds(store)["bad_text"]
    assert len(bad) == 3
    assert any("agents[0].name" in m for m in bad)
    assert any("blocks[0].value" in m and "2 lone surrogates" in m for m in bad)
    assert any("blocks[0].metadata" in m and "key" in m for m in bad)


def test_a_valid_surrogate_pair_is_one_character_and_no_problem(tmp_path):
    af = agent_file(tmp_path / "emoji.af", "rex", ["persona"], value="\U0001f600")
    assert "\\ud83d\\ude00" in af.read_text()
    store = load_agent_file(af)
    assert store.blocks["value"].tolist() == ["\U0001f600 0"]
    assert "bad_text" not in _kinds(store)


def test_a_lone_surrogate_in_the_substrate_ledger_is_a_problem_row(copy_of):
    folder = copy_of("samples/elfmem-substrate")
    ledger = folder / ".elfmem" / "ledger" / "2026-11.jsonl"
    n = len(ledger.read_text().splitlines()) + 1
    with ledger.open("a") as fh:
        fh.write(EVENT + "\n")
    store = memlab.load(folder)
    row = store.ledger[store.ledger["line"] == n]
    assert row["k"].astype(str).tolist() == ["\ufffd"] and row["s"].tolist() == [3]
    bad = store.problems[store.problems["kind"] == "bad_text"]
    assert bad["line"].tolist() == [n]
    assert bad["file"].tolist() == [".elfmem/ledger/2026-11.jsonl"]
    assert bad["message"].iloc[0].startswith("k holds a lone surrogate (\\ud800)")
    out = _clean_run(_cli("inspect", str(folder)))
    assert "bad_text" in out


# ---- silent drops: repeated keys, numbers past 64 bits ----------------------------------------

def test_a_repeated_key_in_an_agent_file_keeps_the_last_value_and_says_so(tmp_path):
    af = tmp_path / "dup.af"
    af.write_text('{"agents": [{"id": "agent-0", "block_ids": ["block-0"]}], "blocks": '
                  '[{"id": "block-0", "label": "persona", "label": "human", "value": "Sam"}]}',
                  encoding="utf-8")
    store = load_agent_file(af)
    assert store.blocks["label"].tolist() == ["human"]  # what json.loads, so Letta, reads
    dup = _kinds(store)["duplicate_key"]
    assert len(dup) == 1
    assert "blocks[0]" in dup[0] and "'label'" in dup[0] and "last value" in dup[0]
    assert "Letta server" in dup[0]


def test_a_repeated_key_in_a_ledger_event_is_a_problem_row(tmp_path):
    store = _ledger(tmp_path, '{"t":"2026-11-30T10:20:07+00:00","s":1,"ah":0,"k":"seed",'
                              '"k":"recall"}\n')
    assert store.ledger["k"].astype(str).tolist() == ["recall"]
    dup = store.problems[store.problems["kind"] == "duplicate_key"]
    assert dup["line"].tolist() == [1] and "'k'" in dup["message"].iloc[0]


def test_a_ledger_s_past_64_bits_is_a_problem_row_and_a_large_one_is_exact(tmp_path):
    events = [{"t": "2026-11-30T10:20:07+00:00", "s": s, "ah": 0, "k": "seed"}
              for s in (99999999999999999999999999, 2**53 + 1, None)]
    store = _ledger(tmp_path, "".join(json.dumps(e) + "\n" for e in events))
    assert store.ledger["s"].isna().tolist() == [True, False, True]
    assert store.ledger["s"].iloc[1] == 2**53 + 1  # not rounded through float64
    bad = store.problems[store.problems["kind"] == "ledger_bad_field"]
    assert bad["line"].tolist() == [1] and "64-bit" in bad["message"].iloc[0]

