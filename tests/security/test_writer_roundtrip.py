"""What memlab writes reads back as what was meant, whatever text an agent put in the store.

Each writer gets hostile text (controls, DEL, C1, NEL, U+2028/2029, BOM, zero-width characters,
``---`` and ``- [x]`` lines, HTML, YAML indicators, NUL, names that are not UTF-8) and the test
checks what a user relies on: a migrated repository loads back with memlab's own loader holding
the same text and passes Letta Code's hook, a proposal's JSON twin and markdown are written and
applied, or memlab refuses with a specific error naming the file and the block. Never a
traceback, never a file that does not load back.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import memlab
from memlab.errors import MigrationError, ParityError
from memlab.formats import letta_memfs as fmt
from memlab.migrations._verify import differences
from memlab.reviews import apply_proposal, read_proposal

from hostile import agent_file, memory_repo, proposal, tick

DATA = Path(__file__).resolve().parents[2] / "data"
ELFMEM = DATA / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db"

PIECES = ["\x00", "\x07", "\x1b[31m", "\x7f", "\x85", "\x9b", "\u2028", "\u2029", "\ufeff",
          "\u200b", "\u202e", "\r", "\n", "\t", "\x0b", "\x0c", "\x1c", "---", "\n---\n",
          "- [x] ", "\n- [x] `rules-0123456789`", "<!-- id: x -->", "-->", "<script>", "&amp;",
          '"', "'", "\\", "#", ": ", "- ", "? ", "|", ">", "&a", "*a", "!!python", "{", "[",
          "no", "0123", "null", " ", "\xa0", "\U0001f52e", "é", "x" * 300]
#: Hostile text: pieces from the list above and arbitrary code points, full Unicode.
hostile = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=10).map("".join)

FAST = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


def _refused_by_name(exc: MigrationError, block_id: str) -> None:
    """A refusal is specific: not the generic parity failure, and it names the block."""
    assert not isinstance(exc, ParityError), exc
    assert block_id in str(exc), exc


# ---- migrations: Letta blocks -> memfs / Souveraine -----------------------------------------

@FAST
@given(label=hostile, description=hostile, value=hostile, name=hostile,
       to=st.sampled_from(["letta", "souveraine"]))
@example(label="persona", description="d", value="a\x00b", name="rex", to="letta")
@example(label="persona", description="d", value="v", name="Rex\x85the second", to="souveraine")
def test_a_migrated_agent_file_loads_back_with_the_same_text(tmp_path_factory, label, description,
                                                             value, name, to):
    folder = tmp_path_factory.mktemp("af")
    src = agent_file(folder / "a.af", name, [label], value=value)
    try:
        result = memlab.migrate(src, folder / "out", to=to, retrieval=False)  # verify=False
    except MigrationError as exc:
        _refused_by_name(exc, "block-0")
        assert not (folder / "out").exists()
        return
    assert differences(memlab.verify(src, folder / "out", retrieval=False)).empty
    copy = memlab.load(folder / "out")
    assert copy.problems.empty, copy.problems.to_dict("records")
    [moved] = result.moved[result.moved["kind"] == "block"].itertuples()
    got = copy.files.set_index("path").loc[moved.path]
    assert (got["label"], got["body"]) == (moved.label, f"{value} 0")
    text = (folder / "out" / moved.path).read_text(encoding="utf-8")
    assert fmt.check_precommit(moved.path, text, change="A") == []
    if to == "souveraine" and name:  # an unnamed agent is called by its id
        assert copy.meta["agent"]["name"] == name


def test_a_migration_from_an_agent_file_whose_name_is_not_utf8_records_that_name(tmp_path):
    src = agent_file(tmp_path / os.fsdecode(b"rex-\xff.af"), "rex", ["persona"])
    for to in ("letta", "souveraine"):
        out = tmp_path / f"out-{to}"
        result = memlab.migrate(src, out, to=to, retrieval=False, verify=True)
        assert result.ok
        side = json.loads((out / ".memlab/letta-blocks.json").read_text(encoding="utf-8"))
        assert side["source"] == src.name


# ---- migrations: elfmem DB -> substrate / memfs ---------------------------------------------

def _first_active(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT id FROM blocks WHERE status = 'active' ORDER BY id LIMIT 1"
                           ).fetchone()[0]
    finally:
        con.close()


@FAST
@given(content=hostile, cue=hostile, to=st.sampled_from(["substrate", "letta"]))
@example(content="a\x00b", cue="", to="substrate")
@example(content="ok", cue="when\x00asked", to="letta")
def test_a_migrated_elfmem_db_loads_back_with_the_same_text(tmp_path_factory, content, cue, to):
    folder = tmp_path_factory.mktemp("elf")
    db = folder / "e.db"
    shutil.copyfile(ELFMEM, db)
    block = _first_active(db)
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE blocks SET content = ?, cue = ? WHERE id = ?", (content, cue, block))
    con.close()
    try:
        memlab.migrate(db, folder / "out", to=to, retrieval=False)  # verify=False
    except MigrationError as exc:
        _refused_by_name(exc, block)
        assert not (folder / "out").exists()
        return
    assert differences(memlab.verify(db, folder / "out", retrieval=False)).empty


# ---- review proposals -----------------------------------------------------------------------

@FAST
@given(store_name=hostile, summary=hostile, value=hostile)
def test_an_applied_proposal_writes_exactly_the_ticked_text(tmp_path_factory, store_name, summary,
                                                            value):
    folder = tmp_path_factory.mktemp("review")
    repo = folder / "memory"
    memory_repo(repo)
    md, item = proposal(repo, folder / "reviews", store_name=store_name, summary=summary,
                        value=value)
    assert read_proposal(md).ticked == set()
    tick(md, item.id)
    assert apply_proposal(md).applied == [item.id]
    text = (repo / "system/persona.md").read_text(encoding="utf-8")
    fm = fmt.read_frontmatter(text)
    assert (fm.description, fm.body, fm.problems) == (value, "I am Rex.\n", [])


def test_a_proposal_for_a_store_in_a_non_utf8_folder_is_written_and_applied(tmp_path):
    repo = tmp_path / os.fsdecode(b"memory-\xff")
    memory_repo(repo)
    md, item = proposal(repo, tmp_path / "reviews")
    assert read_proposal(md).store["path"] == str(repo)
    tick(md, item.id)
    assert apply_proposal(md).applied == [item.id]
    assert fmt.read_frontmatter((repo / "system/persona.md").read_text()).description == \
        "New description"
