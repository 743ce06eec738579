"""Migrations to Letta Code 0.34.12's memfs v2 (the default), and ``--layout v1`` kept exactly.

The golden tree shas below were recorded from main's code (commit ff2fc4f) before v2 existed:
each planned commit's tree for every bundled Agent File and an elfmem DB (commits dated at a fixed
time, so the side file's ``migrated_at`` is fixed too) and for both Letta server SQLite fixtures
(dated from the source). ``layout="v1"`` must still give exactly these trees.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from memlab.kinds._memfs._audit import audit_memfs
from memlab.cli import main
from memlab.migrations import _letta, migrate, plan_migration, verify
from memlab.sources import load
from memlab.kinds._memfs._load import load_memfs

from migrate_v2_helpers import AGENT, _git, _head_files, _hook_accepts_noop_and_refuses_limit, _repos

DATA = Path(__file__).resolve().parents[1] / "data"
WHEN = pd.Timestamp("2026-01-02T03:04:05Z")
V1_SOURCES = {p.name: p for p in [*sorted((DATA / "samples/letta-af").glob("*.af")),
                                   DATA / "samples/elfmem/elfmem-0.20.0-schema9.db"]}
SERVER_SOURCES = {p.name: p for p in [DATA / "samples/letta-server/letta-0.11.7.db",
                                       DATA / "samples/letta-server/letta-0.11.7-nohistory.db"]}

GOLDEN_V1_TREES = {
    'customer_service.af': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '3c5ded056171b5123eb85e5b498b5070de57f741',
            '1d5bd6820bdcbe04619197b82faf99a9cf4bfb9c',
        ],
    },
    'deep-thought.af': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '225f719387058e90689ac2e0707481daae041c09',
            '1bb6b7a006fe2f8eef96eb0ca461aaea19e86c3d',
        ],
    },
    'deep_research_agent.af': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'e0ecc2176c7c10818289e9cf4a8462106437dea0',
            '542260c4b2eaddb205613753a55add995c18c25c',
        ],
    },
    'ezra.af': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '471ebc323403b0df14791d056b007bda8705b6d4',
            '35e31b0ded8faa6ff333da4fbc5e4d3fa2d80409',
        ],
    },
    'elfmem-0.20.0-schema9.db': {
        '': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'a5e06b7af207518086085669effce557b68198b6',
            '9d1666da91f02bb6e69da28f1e72772d4c12662c',
        ],
    },
    'letta-0.11.7.db': {
        'ezra': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '21e23255a9cf9f108b0d5f50ab5ce8a2634704c4',
            '27799d22f81686ade8b2b4d1868b685591a473d6',
            'd5340ca048241c086d9c4904c6d04ab6dc0198cc',
            '046ec042e2b3b88e2a1f2e32d085a7dc815dd152',
            '6b5aed916604818cdef95f263f2152f761cad3d6',
            '316763bb9be7bba1423a615252c9cb129ac52cb1',
            'b2fdffe412cfcfcd8d5edb76e4e1b8e7b9d281ce',
            'cd6d1d641110244c4d90ecbb805c37cc99a1f6c7',
            'ab6fff94951cd35d4a7fee0dddace3ed0d661d29',
        ],
        'juno': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'b393e522b7953cd35599720fc6825711426e7b91',
            '04699ebb6af29b0e6e0e1b22c334c0629877c8fb',
            'a5d8ecd16559ca70a7f6028acc4392d6cd40775b',
            'c625761c689e0ad00078cfa9a1c562b97798d079',
            '1b868d7dfe41a0b5c4cb7718efed23ac0e0054df',
            '5c90c4dfc01f9547456d8309d3760737be48a874',
            '1459bcd092188ad2f1eb9ae1ba81a2f6adfed633',
            'a36d7e6295c0b9b284370558bab3fecb3afc53a8',
            '62e19f9c3414584f6b138f7895d1d2cc9c86776d',
        ],
        'orion': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '3e42d4e65ac9c2010b420d7c75c55c8f6cae1b63',
            '374f98ac9720adba0559034089688eb691540396',
        ],
        'vega': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '238f7c0c9a4f9cc6cf7a4e438c46040fb217b972',
            'aa7075950c29640ae05b0df91c0e6717922248f1',
            '46a4e3c0142bc6ceef896c5a3ff1988db574a77c',
        ],
    },
    'letta-0.11.7-nohistory.db': {
        'ezra': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'aae7feb05b876dee67f1a3b3f9ce1c18d9625b13',
            'd61f053c8d7aad4240158b72ceb0be94623e3699',
        ],
        'juno': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            'a795c3448a9bcdfd349186430fe4964415da4f6f',
            '1e37d908b790ed41309682950e182f47481bbdf5',
        ],
        'orion': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '3e42d4e65ac9c2010b420d7c75c55c8f6cae1b63',
            '41cff669cb19234f8d59fde0b3073645a25243c9',
        ],
        'vega': [
            '82fe63150e0322798c6108d1384e788326d3ba32',
            '6767a7b7d90646aed3a39c335c13085fd7bb7579',
            'ca5a16394444f2925097b962b9aaa869508cea48',
        ],
    },
}


def _trees(plan) -> dict[str, list[str]]:
    return {sub: [tree for tree, _ in chain] for sub, chain in sorted(plan.expected_heads().items())}


@pytest.mark.parametrize("name", sorted(V1_SOURCES))
def test_v1_layout_of_block_sources_is_byte_identical_to_before(name):
    src = V1_SOURCES[name].resolve()
    plan = _letta.plan_memfs(load(src), src, target="letta", when=WHEN, layout="v1")
    assert _trees(plan) == GOLDEN_V1_TREES[name]


@pytest.mark.parametrize("name", sorted(SERVER_SOURCES))
def test_v1_layout_of_server_sources_is_byte_identical_to_before(name):
    plan = plan_migration(SERVER_SOURCES[name].resolve(), layout="v1")
    assert _trees(plan) == GOLDEN_V1_TREES[name]


# --------------------------------------------------------------------------- v2 output, judged by Letta Code


AGENT_FILES = sorted((DATA / "samples/letta-af").glob("*.af"))


@pytest.fixture(scope="module")
def v2_migrated(tmp_path_factory):
    cache: dict[str, tuple] = {}

    def _get(src: Path):
        if src.name not in cache:
            dest = tmp_path_factory.mktemp("v2") / src.stem
            cache[src.name] = (migrate(src, dest, retrieval=False, verify=True), dest)
        return cache[src.name]

    return _get


def _agent_blocks(src: Path, subdir: str) -> list[dict]:
    """The blocks Letta Code would be given to create the agent of repository ``subdir``:
    label, value and description as the source holds them."""
    store = load(src.resolve())
    blocks, links = store.blocks, store.frames.get("block_agents")
    agents = store.frames.get("agents")
    if links is not None and len(links) and agents is not None and len(agents):
        ids = set(links["block_id"].astype(str))
        blocks = blocks[blocks["block_id"].astype(str).isin(ids)]
    out = []
    for r in blocks.to_dict("records"):
        desc = r.get("description")
        out.append({"label": str(r["label"]), "value": "" if pd.isna(r["value"]) else str(r["value"]),
                    "description": None if desc is None or pd.isna(desc) else str(desc)})
    return out


@pytest.mark.parametrize("af", AGENT_FILES, ids=lambda p: p.stem)
def test_agent_files_migrate_to_what_letta_code_creates(af, v2_migrated, letta_code):
    result, dest = v2_migrated(af)
    assert result.mode == "created" and result.ok is True
    (repo,) = _repos(dest)
    assert letta_code.audit(repo)["policy"] == "root-marker"
    assert letta_code.audit_errors(repo) == []  # Letta Code's own --audit, whole tree
    blocks = [b for b in _agent_blocks(af, "")
              if _letta.sanitise_label(b["label"], "x")[0] == b["label"]]
    expected = {f["relativePath"]: f["content"] for f in letta_code.initial(blocks)}
    ours = _head_files(repo)
    for path, content in expected.items():
        assert ours.get(path) == content, path  # file name, name:, description: and value
    root = {p for p in ours if "/" not in p and p.endswith(".md")}
    sanitised = len(_agent_blocks(af, "")) - len(blocks)
    assert len(root - set(expected)) == sanitised
    assert ours["MEMORY.md"] == "# Memory\n"
    store = load_memfs(repo)
    assert store.meta["layout"] == "letta_v2"
    a = audit_memfs(store)
    assert a.headline["findings"] == 0, a.summary()
    assert a.headline["problems"] == 0


def test_ezra_keeps_detached_blocks_behind_an_index_and_its_limits_in_the_config(v2_migrated,
                                                                                letta_code):
    result, dest = v2_migrated(DATA / "samples/letta-af/ezra.af")
    files = _head_files(dest)
    assert "detached/MEMORY.md" in files and not files["detached/MEMORY.md"].startswith("---")
    assert all(p.count("/") <= 1 for p in files if p.endswith(".md"))
    config = json.loads(files[".memfs.config.json"])
    assert letta_code.config(files[".memfs.config.json"]) == {"config": config}
    limits = {e["pattern"]: e["maxCharacters"] for e in config["fileCharacterLimits"]}
    moved = result.moved[result.moved["kind"] == "block"].set_index("item")
    store = load(DATA / "samples/letta-af/ezra.af")
    block = store.blocks.set_index("block_id")
    flagged = set(result.flags[result.flags["kind"] == "limit_not_carried"]["path"])
    assert len(flagged) == 3
    for item, row in moved.iterrows():
        text, limit = files[row["path"]], block.loc[item, "limit"]
        value = "" if pd.isna(block.loc[item, "value"]) else block.loc[item, "value"]
        if row["path"] in flagged:  # over its limit already: the entry is the file's size
            assert limits[row["path"]] == len(text) and len(value) > limit
        else:  # the value keeps exactly its budget: limit + the frontmatter as written
            assert limits[row["path"]] - (len(text) - len(value)) == limit
    # ezra's core is over Letta's 65,536: raised, and said so, never silently
    core = sum(len(t) for p, t in files.items() if "/" not in p and p.endswith(".md"))
    assert core > 65536 and config["maxCoreMemoryCharacters"] == core
    assert (result.flags["kind"] == "core_total_raised").sum() == 1


def test_read_only_blocks_are_listed_in_read_only_files(v2_migrated, letta_code, tmp_path):
    result, dest = v2_migrated(DATA / "samples/letta-af/deep_research_agent.af")
    files = _head_files(dest)
    config = json.loads(files[".memfs.config.json"])
    assert config["readOnlyFiles"] == ["persona.md"]
    assert "read_only" not in files["persona.md"]
    log = _git(dest, "log", "--format=%s", "main").stdout.splitlines()
    assert log[1] == "chore: protect 1 read-only memory file(s)"
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(dest), str(clone))
    letta_code.install_hooks(clone, "root-marker")
    env = {**AGENT, "PATH": f"{letta_code.payload / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    assert _git(clone, "commit", "--allow-empty", "-qm", "noop", env=env, check=False).returncode == 0
    with open(clone / "persona.md", "a", encoding="utf-8") as fh:
        fh.write("\nnot allowed\n")
    _git(clone, "add", "persona.md")
    refused = _git(clone, "commit", "-qm", "x", env=env, check=False)
    assert refused.returncode != 0
    assert "persona.md: read-only file cannot be created, changed or removed" in refused.stderr


@pytest.mark.parametrize("af", AGENT_FILES, ids=lambda p: p.stem)
def test_letta_codes_v2_hook_accepts_a_no_op_commit(af, v2_migrated, letta_code, tmp_path):
    _, dest = v2_migrated(af)
    for repo in _repos(dest):
        _hook_accepts_noop_and_refuses_limit(repo, letta_code, tmp_path)


@pytest.mark.parametrize("name", sorted(SERVER_SOURCES))
def test_server_fixtures_migrate_to_what_letta_code_accepts(name, v2_migrated, letta_code,
                                                           tmp_path):
    result, dest = v2_migrated(SERVER_SOURCES[name])
    assert result.ok is True
    store = load(SERVER_SOURCES[name])
    names = dict(zip(store.agents["agent_id"].astype(str), store.agents["name"].astype(str)))
    live = store.blocks[~store.blocks["is_deleted"].fillna(False).astype(bool)]
    for repo in _repos(dest):
        assert letta_code.audit_errors(repo) == []
        _hook_accepts_noop_and_refuses_limit(repo, letta_code, tmp_path)
        agent = next(a for a, n in names.items() if n.lower() == repo.name)
        ids = set(store.block_agents[store.block_agents["agent_id"].astype(str) == agent]["block_id"])
        blocks = [{"label": r["label"], "value": r["value"] or "",
                   "description": r["description"] if isinstance(r["description"], str) else None}
                  for r in live[live["block_id"].isin(ids)].to_dict("records")]
        ours = _head_files(repo)
        for f in letta_code.initial(blocks):
            assert ours.get(f["relativePath"]) == f["content"], f["relativePath"]
        a = audit_memfs(load_memfs(repo))
        assert a.headline["findings"] == 0, a.summary()


def test_layout_v1_via_the_cli_writes_todays_tree(tmp_path, capsys):
    af = DATA / "samples/letta-af/ezra.af"
    assert main(["migrate", str(af), str(tmp_path / "v1"), "--layout", "v1", "--no-retrieval",
                 "--verify"]) == 0
    trees = _git(tmp_path / "v1", "log", "--reverse", "--format=%T", "main").stdout.split()
    # the first two commits (init, blocks) hold no date: their trees are main's, byte for byte
    assert trees[:2] == GOLDEN_V1_TREES["ezra.af"][""][:2]
    assert main(["migrate", str(af), str(tmp_path / "v2"), "--no-retrieval", "--verify"]) == 0
    assert (tmp_path / "v2" / "MEMORY.md").read_text() == "# Memory\n"
    assert verify(af, tmp_path / "v1", retrieval=False)["ok"].all()
    assert verify(af, tmp_path / "v2", retrieval=False)["ok"].all()


def test_layout_is_refused_where_it_does_not_apply(tmp_path, capsys):
    src = DATA / "samples/elfmem/elfmem-0.20.0-schema9.db"
    assert main(["migrate", str(src), str(tmp_path / "s"), "--to", "substrate", "--layout",
                 "v2"]) == 2
    assert "--layout v2 is for Letta Code targets" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


# --------------------------------------------------------------------------- v2 decisions


def _blocks_json(tmp_path: Path, labels: list[str], name: str = "blocks.json") -> Path:
    """A blocks-API list built from real ezra.af blocks, relabelled."""
    doc = json.loads((DATA / "samples/letta-af/ezra.af").read_text())
    blocks = []
    for i, label in enumerate(labels):
        b = dict(doc["blocks"][i])
        b["id"], b["label"] = f"block-{i}", label
        blocks.append(b)
    path = tmp_path / name
    path.write_text(json.dumps(blocks))
    return path


def test_hostile_labels_and_collisions_in_v2(tmp_path, letta_code):
    hostile = ["../../outside", "/etc/passwd", ".git/hooks/pre-commit", "a b/c", "system//x",
               "..", "persona", "system/persona", "Persona", "human/prefs", "human_prefs",
               "MEMORY.md"]
    src = _blocks_json(tmp_path, hostile)
    result = migrate(src, tmp_path / "out", retrieval=False, verify=True)
    paths = dict(zip(result.moved["item"], result.moved["path"]))
    assert paths["block-0"] == "outside.md"
    assert paths["block-1"] == "etc_passwd.md"
    assert paths["block-2"] == "git_hooks_pre-commit.md"
    assert paths["block-3"] == "a-b_c.md"
    assert paths["block-4"] == "x.md"
    assert paths["block-5"].startswith("block-block-5")
    # persona, system/persona and Persona are one file to Letta Code (it refuses the set:
    # "Initial memory path collision"); memlab keeps the first in label order (Persona,
    # persona, system/persona) and numbers the rest.
    assert [paths[b] for b in ("block-8", "block-6", "block-7")] == \
        ["Persona.md", "persona-2.md", "persona-3.md"]
    assert {paths["block-9"], paths["block-10"]} == {"human_prefs.md", "human_prefs-2.md"}
    # a block labelled MEMORY.md is not the index: Letta would give it frontmatter there
    assert paths["block-11"] == "MEMORY-2.md"
    assert result.flags["kind"].eq("path_collision").sum() == 4
    assert (tmp_path / "out/MEMORY.md").read_text() == "# Memory\n"
    assert letta_code.audit_errors(tmp_path / "out") == []
    assert all("/" not in p for p in _git(tmp_path / "out", "ls-files").stdout.split()
               if p.endswith(".md"))
    with pytest.raises(RuntimeError, match="Initial memory path collision"):
        letta_code.initial([{"label": "persona", "value": "a"}, {"label": "Persona", "value": "b"}])


def test_a_memory_block_is_the_root_index_as_letta_makes_it(tmp_path, letta_code):
    blocks = [{"id": "b0", "label": "MEMORY", "value": "# Index\n\nSee persona.\n",
               "description": "Root memory index."},
              {"id": "b1", "label": "persona", "value": "I am.", "description": None}]
    src = tmp_path / "blocks.json"
    src.write_text(json.dumps(blocks))
    result = migrate(src, tmp_path / "out", retrieval=False, verify=True)
    assert result.ok
    ours = _head_files(tmp_path / "out")
    for f in letta_code.initial([{k: b[k] for k in ("label", "value", "description")}
                                 for b in blocks]):
        assert ours[f["relativePath"]] == f["content"]
    assert ours["MEMORY.md"] == "# Index\n\nSee persona.\n"
    assert letta_code.audit_errors(tmp_path / "out") == []


def test_parity_catches_a_changed_v2_copy(tmp_path):
    src = DATA / "samples/letta-af/deep_research_agent.af"
    migrate(src, tmp_path / "out", retrieval=False)
    human = tmp_path / "out/human.md"
    human.write_text(human.read_text().replace("The human block", "A human block", 1) + "extra\n")
    config = tmp_path / "out/.memfs.config.json"
    doc = json.loads(config.read_text())
    doc["readOnlyFiles"] = ["nothing.md"]  # persona.md is no longer protected
    config.write_text(json.dumps(doc))
    _git(tmp_path / "out", "commit", "-qam", "edit",
         env={"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
              "GIT_COMMITTER_EMAIL": "x@x"})
    parity = verify(src, tmp_path / "out", retrieval=False)
    bad = parity[~parity["ok"]]
    assert set(zip(bad["check"], bad["item"])) == {("content", "block-0"),
                                                   ("description", "block-0"),
                                                   # its frontmatter shrank: 2 more for the value
                                                   ("limit", "block-0"),
                                                   ("read_only", "block-1")}


def test_verify_follows_the_recorded_path_not_the_name(tmp_path):
    src = DATA / "samples/letta-af/customer_service.af"
    migrate(src, tmp_path / "out", retrieval=False)
    side = tmp_path / "out/.memlab/letta-blocks.json"
    doc = json.loads(side.read_text())
    doc["blocks"][0]["path"] = "elsewhere.md"  # the record no longer says where the block went
    side.write_text(json.dumps(doc))
    _git(tmp_path / "out", "commit", "-qam", "edit",
         env={"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
              "GIT_COMMITTER_EMAIL": "x@x"})
    bad = verify(src, tmp_path / "out", retrieval=False)
    bad = bad[~bad["ok"]]
    assert ("presence", doc["blocks"][0]["block_id"]) in set(zip(bad["check"], bad["item"]))


def test_v2_rerun_and_plan_script_make_the_same_commits(tmp_path):
    import sys

    from memlab.migrations import script_path

    src = DATA / "samples/letta-af/deep_research_agent.af"
    planned = migrate(src, tmp_path / "scripted", plan=True)
    run = subprocess.run([sys.executable, "-I", str(script_path(tmp_path / "scripted"))],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    direct = migrate(src, tmp_path / "scripted", retrieval=False)
    assert direct.mode == "unchanged"
    assert list(planned.commits["sha"]) == list(direct.commits["sha"])
    assert len(direct.commits) == 4  # init, blocks, read-only list, side file
    assert direct.ok is True


# --------------------------------------------------------------------------- item 6: pins


ROOT = DATA.parent
#: The `letta` releases memlab installs anywhere: the last Python servers (PostgreSQL, SQLite)
#: and Letta Code, the test oracle. Unpinned `letta` is Letta Code now, not the server.
LETTA_PINS = {"0.16.8", "0.11.7", "0.34.12"}


def test_every_letta_install_is_pinned():
    files = [p for folder in ("scripts", "docs", ".ci") for p in (ROOT / folder).rglob("*")
             if p.is_file()] + [ROOT / n for n in ("README.md", "Makefile", "environment.yml",
                                                   "pyproject.toml", "setup.py")]
    files.append(ROOT / "tests" / "letta_code.py")
    pinned: set[str] = set()
    unpinned = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        pinned |= set(re.findall(r"\bletta(?:\[[a-z,]+\])?==([0-9][0-9.]*[0-9])", text))
        pinned |= set(re.findall(r'f"letta==\{VERSION\}"', text)) and {"0.34.12"}
        for line in text.splitlines():
            if re.search(r"pip3?\s+(install|download)\b", line) and re.search(
                    r"(?<![\w-])letta(?![\w-])(?!\[[a-z,]+\]==|==|\[letta-server\])", line) \
                    and "memlab[letta-server]" not in line:
                unpinned.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert unpinned == []
    assert pinned and pinned <= LETTA_PINS, pinned


def test_the_readme_v2_section_runs_as_written(tmp_path, capsys):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Migrating to Letta Code memfs v2", 1)[1].split("\n## ", 1)[0]
    lines = re.search(r"```console\n(.*?)```", section, re.S).group(1).splitlines()
    src_repo = None
    for line in lines:
        args = line.split()[1:]
        # each argument mapped once (a checkout under /tmp keeps its data/ paths)
        args = [str(ROOT / a) if a.startswith("data/") else
                str(tmp_path / Path(a).name) if a.startswith("/tmp/") else a for a in args]
        if args[1].startswith("~/.letta"):  # an agent's v1 memory: the one /tmp/ezra-v1 made
            args[1] = src_repo = str(tmp_path / "ezra-v1")
        assert main(args) == 0, line
    assert (tmp_path / "ezra" / "MEMORY.md").exists() and (tmp_path / "ezra-v1" / "system").is_dir()
    assert src_repo and (tmp_path / "agent-1-v2" / "MEMORY.md").exists()
    assert "0 difference(s)" in capsys.readouterr().out


ELFMEM_DBS = [DATA / "samples/elfmem/elfmem-0.19.2-schema5.db",
              DATA / "samples/elfmem/elfmem-0.20.0-schema9.db", DATA / "demo/elfmem-demo.db"]


@pytest.mark.parametrize("db", ELFMEM_DBS, ids=lambda p: p.name)
def test_elfmem_databases_to_letta_are_v2_letta_code_accepts(db, tmp_path, letta_code):
    result = migrate(db, tmp_path / "out", to="letta", retrieval=False, verify=True)
    assert result.ok is True
    assert letta_code.audit_errors(tmp_path / "out") == []
    files = _head_files(tmp_path / "out")
    assert "persona.md" in files and not any(p.startswith("system/") for p in files)
    for path in files:  # every folder holding memory has its index: projected, not core
        if path.endswith(".md") and "/" in path and not path.startswith(".memlab/"):
            assert f"{path.rsplit('/', 1)[0]}/MEMORY.md" in files
    assert load_memfs(tmp_path / "out").meta["layout"] == "letta_v2"


def test_odd_names_and_descriptions_stay_valid_and_verify(tmp_path, letta_code):
    blocks = [{"id": "b0", "label": "_", "value": "x", "description": "|"},
              {"id": "b1", "label": "notes-", "value": "\nstarts with a blank line\n",
               "description": "a: b # not a comment"},
              {"id": "b2", "label": "cr", "value": "v", "description": "one\rtwo\u2028three"},
              {"id": "b3", "label": "q", "value": "v", "description": "''"}]
    src = tmp_path / "blocks.json"
    src.write_text(json.dumps(blocks))
    result = migrate(src, tmp_path / "out", retrieval=False, verify=True)
    assert result.ok is True
    assert letta_code.audit_errors(tmp_path / "out") == []
    files = _head_files(tmp_path / "out")
    # what Letta Code writes for the same block, where its output is valid
    (letta,) = [f for f in letta_code.initial([{k: blocks[1][k] for k in ("label", "value",
                                                                            "description")}])
                if f["relativePath"] != "MEMORY.md"]
    assert files[letta["relativePath"]] == letta["content"]
    assert files["_.md"].startswith('---\nname: Memory\ndescription: "|"\n---\n')
    assert 'description: "\'\'"' in files["q.md"]
    assert "one two three" in files["cr.md"]
    kinds = set(result.flags["kind"].astype(str))
    assert {"description_quoted", "description_flattened"} <= kinds


@pytest.mark.parametrize("value", ["plain\nlines\n", "  padded\r\n", "crlf\r\nlines\r\n", "lone\rcr",
                                   "\ufeffbom first", "mid\ufeffbom", "tab\tand\u2028separator\u3000",
                                   "---\nlooks: like frontmatter\n---\nbody\n"])
def test_a_value_letta_code_shows_otherwise_is_flagged(value, tmp_path, letta_code):
    """Flagged exactly when what Letta Code's own reader (parseFrontmatter, which feeds the
    agent's prompt) shows is neither the value nor the value trimmed (JavaScript's trim, asked
    of Node); the file keeps the source's bytes either way."""
    blocks = [{"id": "b0", "label": "MEMORY", "value": value, "description": "root"},
              {"id": "b1", "label": "notes", "value": value, "description": "notes"}]
    src = tmp_path / "blocks.json"
    src.write_text(json.dumps(blocks))
    result = migrate(src, tmp_path / "out", retrieval=False, verify=True)
    assert result.ok is True
    files = _head_files(tmp_path / "out")
    flagged = set(result.flags[result.flags["kind"] == "agent_view_differs"]["path"])
    assert value in files["notes.md"]  # the bytes as the source had them
    for path in ("MEMORY.md", "notes.md"):
        if value not in files[path]:  # a root value that looks like frontmatter goes elsewhere
            continue
        seen = letta_code.parse(files[path])["body"]
        assert (path in flagged) == (seen not in (value, letta_code.trim(value))), (path, seen)
