"""YAML whose aliases expand without bound ("billion laughs") is refused by the one YAML reader,
so no loader, inventory or frame ever expands it; and a frontmatter with thousands of keys gives
a bounded number of ``fm_`` columns.

PyYAML builds an alias as the same shared object, so ``yaml.safe_load`` of a 316-byte bomb is
cheap; ``str()`` of the result is 10**8 strings (memlab discover took 8 s and 1.3 GB on 8 levels
and never finished on 12). The reader measures the node graph before anything is built.
"""

from __future__ import annotations


import pandas as pd
import pytest

from hostile import git, memory_repo, yaml_bomb
from memfs_repos import build_souveraine
from memlab.constants import MAX_FM_COLUMNS, MAX_YAML_NODES
from memlab.formats._yaml import read_yaml
from memlab.sources.discover import discover
from memlab.kinds._memfs._load import load_memfs

MERGE_BOMB = "a: &a {k0: 1, k1: 2}\n" + "".join(
    f"{c}: &{c} {{<<: [{', '.join('*' + p for _ in range(9))}]}}\n"
    for p, c in zip("abcdefghijkl", "bcdefghijklm"))


@pytest.mark.parametrize("text", [yaml_bomb(8), yaml_bomb(12), yaml_bomb(25), MERGE_BOMB],
                         ids=["8-levels", "12-levels", "25-levels", "merge-keys"])
def test_an_alias_bomb_is_a_failed_reading_not_a_value(text):
    for base in (False, True):
        read = read_yaml(text, base=base)
        assert not read.ok and read.value is None and read.failure == "size"
        assert "alias bomb" in read.problem and f"{MAX_YAML_NODES:,}" in read.problem


def test_an_alias_inside_the_node_it_names_is_refused():
    for text in ("&a [*a]", "a: &a {b: *a}", "x: &x [1, [2, *x]]"):
        read = read_yaml(text)
        assert not read.ok and read.failure == "size" and "recursive alias" in read.problem


def test_aliases_that_stay_small_and_big_documents_without_aliases_still_read():
    assert read_yaml(yaml_bomb(3)).value["name"] == [[["lol"] * 9] * 9] * 9
    assert read_yaml("a: &a {x: 1}\nb: {<<: *a, y: 2}\n").value["b"] == {"x": 1, "y": 2}
    many = "".join(f"- {i}\n" for i in range(MAX_YAML_NODES * 2))  # 200,000 items, no alias
    assert read_yaml(many).value[-1] == MAX_YAML_NODES * 2 - 1


def test_a_bomb_in_frontmatter_is_a_problem_row_and_never_expanded(tmp_path):
    repo = tmp_path / "repo"
    memory_repo(repo)
    (repo / "system/bomb.md").write_text("---\n" + yaml_bomb(12, "description") + "---\nbody\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "bomb")
    store = load_memfs(repo)
    rows = store.problems[store.problems["file"] == "system/bomb.md"]
    [message] = rows.loc[rows["kind"] == "malformed_yaml", "message"]
    assert "alias bomb" in message and "not read" in message
    assert "readers_disagree" not in set(rows["kind"])
    row = store.files.set_index("path").loc["system/bomb.md"]
    assert row["server_description"] is pd.NA and row["server_value_chars"] is pd.NA
    assert row["readers_agree"] is pd.NA and not row["yaml_ok"]
    assert row["description"] == "*l"  # Letta Code reads the line as written
    longest = max(len(v) for col in store.files for v in store.files[col] if isinstance(v, str))
    assert longest < 2_000  # no cell holds an expansion
    assert set(store.files["path"]) >= {"system/persona.md", "system/human.md"}


def test_a_bomb_in_agent_yaml_is_a_problem_row_for_the_loader_and_discover(tmp_path):
    home = tmp_path / "home"
    agent = home / ".souveraine/agents/sv-1"
    build_souveraine(agent)
    (agent / "agent.yaml").write_text(yaml_bomb(12))
    pi = home / ".pi/unified/agents/agent-pi"
    build_souveraine(pi, agent_yaml_in_repo=True)
    (pi / "agent.yaml").write_text(yaml_bomb(12))
    inv = discover(home).set_index("agent_id")
    for agent_id in ("sv-1", "agent-pi"):
        assert inv.loc[agent_id, "name"] == "builder"  # git's user.name, not the bomb
        assert "agent.yaml is not read" in inv.loc[agent_id, "problem"]
        assert "alias bomb" in inv.loc[agent_id, "problem"]
    store = load_memfs(agent)
    [message] = store.problems.loc[store.problems["kind"] == "malformed_yaml", "message"]
    assert "agent.yaml is not read" in message and "alias bomb" in message
    assert len(store.name) < 100
    assert store.meta["agent"] is None


def test_a_frontmatter_with_thousands_of_keys_gives_at_most_the_capped_fm_columns(tmp_path):
    repo = tmp_path / "repo"
    memory_repo(repo)
    many = "---\ndescription: m\n" + "".join(f"k{i}: v{i}\n" for i in range(2_000)) + "---\nb\n"
    (repo / "system/many.md").write_text(many)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "many")
    store = load_memfs(repo)
    fm_cols = [c for c in store.files.columns if c.startswith("fm_")]
    assert len(fm_cols) == MAX_FM_COLUMNS
    row = store.files.set_index("path").loc["system/many.md"]
    assert row["fm_description"] == "m" and row["fm_k0"] == "v0"
    assert "k1999: v1999" in row["frontmatter_raw"]  # the keys left out are kept here
    [message] = store.problems.loc[(store.problems["file"] == "system/many.md")
                                   & (store.problems["kind"] == "frontmatter_keys"), "message"]
    assert f"{2_001 - MAX_FM_COLUMNS:,} of them are left out" in message
    [unknown] = store.problems.loc[store.problems["kind"] == "unknown_key", "message"]
    assert "and 1,980 more" in unknown and len(unknown) < 500


def test_the_fm_column_cap_holds_across_the_files_of_a_store(tmp_path):
    repo = tmp_path / "repo"
    memory_repo(repo)
    for name in ("a", "b"):  # 40 keys each, description shared: 79 distinct
        keys = "".join(f"{name}{i}: x\n" for i in range(39))
        (repo / f"system/{name}.md").write_text(f"---\ndescription: d\n{keys}---\nbody\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "keys")
    store = load_memfs(repo)
    assert len([c for c in store.files.columns if c.startswith("fm_")]) == MAX_FM_COLUMNS
    capped = store.problems[store.problems["kind"] == "frontmatter_keys"]
    assert list(capped["file"]) == ["system/b.md"]
    assert "15 of them are left out" in capped["message"].iloc[0]
    files = store.files.set_index("path")
    assert files.loc["system/a.md", "fm_a38"] == "x" and files.loc["system/b.md", "fm_b23"] == "x"
    assert "fm_b24" not in store.files.columns


def test_a_bomb_in_the_reports_config_is_one_named_error_that_says_why(tmp_path):
    from memlab.errors import ReportError
    from memlab.report.schedule import load_config

    config = tmp_path / "reports.yaml"
    config.write_text(yaml_bomb(12) + "stores:\n  demo: demo.db\n")
    with pytest.raises(ReportError) as err:
        load_config(config)
    assert "alias bomb" in str(err.value) and "not valid YAML" not in str(err.value)
    assert str(config) in str(err.value)
