"""YAML that parses but does not build: an agent's text must give a problem row, not a traceback.

``created: 2026-13-45`` matches YAML 1.1's timestamp rule, so ``yaml.safe_load`` raises
ValueError (``month must be in 1..12``), not ``yaml.YAMLError``. The Letta server's
``parse_block_markdown`` catches only ``yaml.YAMLError``, so its parser raises on such a file.
"""

from __future__ import annotations

import pandas as pd
import pytest

from memfs_repos import SERVER, _Writer, _t, build_souveraine
from memlab.kinds._memfs._audit import audit_memfs
from memlab.errors import ReportError
from memlab.formats import letta_memfs as fmt
from memlab.formats._yaml import read_yaml
from memlab.report.schedule import load_config
from memlab.sources.discover import discover
from memlab.kinds._memfs._load import load_memfs

BAD_VALUES = ["created: 2026-13-45", "created: 2026-02-30", "at: 2026-01-01 00:00:00 +99:00"]


@pytest.mark.parametrize("line", BAD_VALUES)
def test_frontmatter_with_a_value_yaml_cannot_build_is_a_problem_row(tmp_path, line):
    w = _Writer(tmp_path / "repo")
    w.commit("Initial commit", SERVER, _t("2026-04-01"), files={
        "system/bad.md": f"---\ndescription: dated\n{line}\n---\nbody\n",
        "system/ok.md": fmt.render_memfs_file("fine", "ok")})
    store = load_memfs(w.path)
    bad = store.problems[store.problems["file"] == "system/bad.md"]
    assert {"malformed_yaml", "readers_disagree"} <= set(bad["kind"])
    message = bad.loc[bad["kind"] == "readers_disagree", "message"].iloc[0]
    assert "the Letta server's parser raises" in message and "cannot sync" in message
    row = store.files.set_index("path").loc["system/bad.md"]
    # Letta Code reads the file line by line; the server reads nothing from it.
    assert row["description"] == "dated" and not row["yaml_ok"] and not row["readers_agree"]
    assert not row["server_whole_file"] and row["server_value_chars"] is pd.NA
    assert audit_memfs(store).headline["findings"] >= 1


def test_a_character_yaml_refuses_is_a_one_line_problem_with_its_line(tmp_path):
    # PyYAML's own message for it is two lines ('\n  in "<unicode string>", position 31').
    w = _Writer(tmp_path / "repo")
    w.commit("Initial commit", SERVER, _t("2026-04-01"), files={
        "system/bad.md": "---\ndescription: ok\nnote: a\x7fb\n---\nbody\n"})
    store = load_memfs(w.path)
    rows = store.problems[(store.problems["file"] == "system/bad.md")
                          & (store.problems["kind"] == "malformed_yaml")]
    assert len(rows) >= 1
    for message in rows["message"]:
        assert "\n" not in message and "#x007f" in message
    assert read_yaml("a: 1\nb: x\x7f").line == 1


def test_agent_yaml_with_a_value_yaml_cannot_build(tmp_path):
    b = build_souveraine(tmp_path / "souv")
    (tmp_path / "souv" / "agent.yaml").write_text("name: Ani\ncreated: 2026-13-45\n")
    store = load_memfs(b.path)
    rows = store.problems[store.problems["kind"] == "malformed_yaml"]
    assert rows["message"].str.contains("month must be in 1..12").any()
    home = tmp_path / "home"
    agent = home / ".pi/unified/agents/agent-dated"
    agent.mkdir(parents=True)
    (agent / "agent.yaml").write_text("name: Ani\ncreated: 2026-13-45\n")
    problem = discover(home).set_index("agent_id").loc["agent-dated", "problem"]
    assert "agent.yaml is not valid YAML" in problem and "month must be in 1..12" in problem


def test_reports_config_with_an_impossible_date_is_one_named_error(tmp_path):
    config = tmp_path / "reports.yaml"
    config.write_text("as_of: 2026-13-45\nstores:\n  demo: demo.db\n")
    with pytest.raises(ReportError, match="month must be in 1..12"):
        load_config(config)


def test_a_reading_is_memoised_but_each_caller_gets_its_own_mapping():
    first = read_yaml("description: x\ntags: [a, b]\n")
    first.value["tags"].append("changed by a caller")
    assert read_yaml("description: x\ntags: [a, b]\n").value == {"description": "x",
                                                                  "tags": ["a", "b"]}
