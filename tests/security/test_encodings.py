"""Text memlab cannot store as it came: a lone surrogate escaped in JSON, a key repeated in one
object, a file or folder name that is not UTF-8, a number past 64 bits. Each is kept readable
(U+FFFD for what is not a character) and named in a problem row; none is a traceback or a
silent drop. Each case loads real files, through the real CLI where a user would meet it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import memlab
from memlab.kinds.agent_file._load import load_agent_file

from hostile import agent_file

TIMEOUT = 120
LEDGER = "samples/elfmem-substrate/.elfmem/ledger/2026-11.jsonl"
EVENT = '{"t":"2026-11-30T10:20:07+00:00","s":3,"ah":1,"k":"\\ud800"}'


def _cli(*args: str) -> subprocess.CompletedProcess:
    # errors="replace": a header line may echo the store path as given, bytes and all.
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                          text=True, errors="replace", timeout=TIMEOUT, stdin=subprocess.DEVNULL)


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



# ---- F2: file and folder names that are not UTF-8 ---------------------------------------------

BAD = b"\xff\xfe"          # two bytes no UTF-8 text holds
SHOWN = "\ufffd\ufffd"     # how memlab shows them, as history already did
PERSONA = "---\ndescription: me\n---\nI am Rex.\n"


def _plain_folder(root):
    (root / "system").mkdir(parents=True)
    (root / "system" / "persona.md").write_text(PERSONA)
    with open(bytes(root / "system") + b"/" + BAD + b".md", "wb") as fh:
        fh.write(b"---\ndescription: d\n---\nhi\n")
    return root


def _non_utf8(store) -> list[str]:
    rows = store.problems[store.problems["kind"] == "non_utf8_path"]
    return [f"{f}: {m}" for f, m in zip(rows["file"], rows["message"])]


def test_a_non_utf8_file_name_in_a_plain_folder_is_read_and_named(tmp_path):
    folder = _plain_folder(tmp_path / "agent")
    store = memlab.load(folder)
    files = dict(zip(store.files["path"], store.files["body"]))
    assert files == {"system/persona.md": "I am Rex.\n", f"system/{SHOWN}.md": "hi\n"}
    assert store.files.set_index("path").loc[f"system/{SHOWN}.md", "description"] == "d"
    (found,) = _non_utf8(store)
    assert found.startswith(f"system/{SHOWN}.md: ") and "not UTF-8" in found
    out = _clean_run(_cli("inspect", str(folder)))
    assert "non_utf8_path" in out


def test_a_store_inside_a_non_utf8_folder_loads_and_names_itself_readably(tmp_path):
    folder = _plain_folder(tmp_path / os.fsdecode(b"agent-" + BAD))
    store = memlab.load(folder)
    (where,) = store.problems.loc[store.problems["kind"] == "not_a_repo", "file"]
    assert where.endswith(f"agent-{SHOWN}")
    _clean_run(_cli("inspect", os.fsdecode(bytes(folder))))


def test_an_elfmem_database_with_a_non_utf8_name_loads(tmp_path, data_dir):
    # SQLite is opened by a file: URI; the name's own bytes must be percent-encoded in it.
    db = tmp_path / os.fsdecode(b"memory-" + BAD + b".db")
    db.write_bytes((data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db").read_bytes())
    store = memlab.load(db)
    assert store.kind == "elfmem_db" and len(store.blocks) == 47
    out = _clean_run(_cli("inspect", os.fsdecode(bytes(db))))
    assert "47" in out


def test_two_names_that_read_alike_are_not_merged(tmp_path):
    folder = _plain_folder(tmp_path / "agent")
    with open(bytes(folder / "system") + b"/\xfe\xff.md", "wb") as fh:  # also shown as SHOWN
        fh.write(b"---\ndescription: other\n---\nbye\n")
    store = memlab.load(folder)
    assert store.files["path"].tolist().count(f"system/{SHOWN}.md") == 1
    found = _non_utf8(store)
    assert len(found) == 2 and any("another file's; not read" in m for m in found)


def test_a_committed_non_utf8_name_is_clean_in_the_working_tree(tmp_path):
    from hostile import git

    repo = _plain_folder(tmp_path / "repo")
    (repo / ".letta").mkdir()
    (repo / ".letta" / "config.json").write_text('{"version": 1}\n')
    git(repo, "init", "-q", "--initial-branch=main", ".")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "init")
    assert git(repo, "status", "--porcelain") == ""  # git itself sees no drift
    store = memlab.load(repo)
    assert store.uncommitted.empty and store.meta["uncommitted"] == 0
    assert dict(zip(store.files["path"], store.files["body"]))[f"system/{SHOWN}.md"] == "hi\n"
    found = _non_utf8(store)
    assert any("committed file" in m for m in found)   # the tree read
    assert any("commit " in m and "touches" in m for m in found)  # history, as before
    _clean_run(_cli("inspect", str(repo)))

    # Drift in and beside it is reported under the shown names.
    with open(bytes(repo / "system") + b"/" + BAD + b".md", "ab") as fh:
        fh.write(b"more\n")
    with open(bytes(repo / "system") + b"/\xfa.md", "wb") as fh:
        fh.write(b"new\n")
    with open(bytes(repo) + b"/\xfbignored.md", "wb") as fh:
        fh.write(b"x\n")
    (repo / ".gitignore").write_bytes(b"\xfbignored.md\n")
    store = memlab.load(repo)
    assert dict(zip(store.uncommitted["path"], store.uncommitted["change"].astype(str))) == {
        f"system/{SHOWN}.md": "modified", "system/\ufffd.md": "untracked",
        ".gitignore": "untracked"}
    assert any(m.startswith("system/\ufffd.md: an uncommitted file") for m in _non_utf8(store))


def test_discover_lists_an_agent_whose_folder_name_is_not_utf8(tmp_path):
    from hostile import git

    home = tmp_path / "home"
    agents = home / ".letta" / "agents"
    for name in (b"agent-ok", b"agent-" + BAD):
        memory = bytes(agents) + b"/" + name + b"/memory"
        os.makedirs(memory + b"/system")
        with open(memory + b"/system/persona.md", "w") as fh:
            fh.write(PERSONA)
    git(agents / "agent-ok" / "memory", "init", "-q", ".")
    bad_repo = agents / os.fsdecode(b"agent-" + BAD) / "memory"
    git(bad_repo, "init", "-q", ".")
    git(bad_repo, "add", "-A")
    git(bad_repo, "commit", "-q", "--no-verify", "-m", "init")
    inv = memlab.discover(home)
    rows = inv.set_index("agent_id")
    assert sorted(inv["agent_id"]) == ["agent-ok", f"agent-{SHOWN}"]
    bad = rows.loc[f"agent-{SHOWN}"]
    assert bad["path"].endswith(f"agent-{SHOWN}/memory") and bad["files"] == 1
    assert "not UTF-8" in bad["problem"]
    assert str(bad["last_commit"]).startswith("2026-03-01")  # git still read through the real name
    assert rows.loc["agent-ok", "problem"] == "no commits yet"
    out = _clean_run(_cli("discover", str(home)))
    assert "agent-ok" in out
    # The real name, as a shell passes it, loads.
    assert memlab.load(bad_repo).files["path"].tolist() == ["system/persona.md"]


def test_discover_reads_a_config_name_with_a_lone_surrogate(tmp_path):
    memory = tmp_path / "home" / ".letta" / "agents" / "agent-1" / "memory"
    (memory / "system").mkdir(parents=True)
    (memory / "system" / "persona.md").write_text(PERSONA)
    (memory / ".letta").mkdir()
    (memory / ".letta" / "config.json").write_text('{"name": "Rex\\udc00"}')
    inv = memlab.discover(tmp_path / "home")
    assert inv["name"].tolist() == ["Rex\ufffd"]
    assert "lone surrogate" in inv["problem"].iloc[0]


# ---- the same escape in YAML: frontmatter and agent.yaml --------------------------------------

def test_a_lone_surrogate_escape_in_frontmatter_yaml_is_a_problem_row(tmp_path):
    folder = tmp_path / "agent"
    (folder / "system").mkdir(parents=True)
    (folder / "system" / "persona.md").write_text('---\ndescription: "a\\ud800b"\n---\nI am Rex.\n')
    store = memlab.load(folder)
    row = store.files.set_index("path").loc["system/persona.md"]
    assert row["description"] == "a\ufffdb" and row["server_description"] == "a\ufffdb"
    assert row["body"] == "I am Rex.\n"
    bad = store.problems[store.problems["kind"] == "bad_text"]
    assert bad["file"].tolist() == ["system/persona.md"]
    assert "\\ud800" in bad["message"].iloc[0] and "description" in bad["message"].iloc[0]
    _clean_run(_cli("inspect", str(folder)))


def test_a_lone_surrogate_in_agent_yaml_is_replaced_in_the_store_and_the_inventory(tmp_path):
    agent = tmp_path / "home" / ".souveraine" / "agents" / "agent-1"
    (agent / "memory" / "system").mkdir(parents=True)
    (agent / "memory" / "system" / "persona.md").write_text(PERSONA)
    (agent / "agent.yaml").write_text('name: "R\\udc00x"\nuuid: agent-1\nblocks: []\n')
    store = memlab.load(agent)
    assert store.meta["name"] == "R\ufffdx"
    bad = store.problems[store.problems["kind"] == "bad_text"]
    assert len(bad) == 1 and bad["message"].iloc[0].startswith("name holds a lone surrogate")
    _clean_run(_cli("inspect", str(agent)))
    inv = memlab.discover(tmp_path / "home")
    assert inv["name"].tolist() == ["R\ufffdx"]
    assert "agent.yaml: name holds a lone surrogate" in inv["problem"].iloc[0]
    _clean_run(_cli("discover", str(tmp_path / "home")))
