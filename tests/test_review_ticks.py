"""A person's ticks in a proposal file survive the same review written again (library and CLI).

``Proposal.write`` rewrites the markdown of the same proposal (same digest) from the object;
before, ticks made by hand in the file were erased. Now a tick the write would erase is
refused (OutputExists naming the .md), while an unticked file is rewritten as before,
``overwrite=True`` / ``--force`` replaces it, and a different proposal is still refused.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

import memlab
from memlab.cli import main
from memlab.errors import OutputExists
from memlab.reviews import read_proposal, review

pytestmark = pytest.mark.slow  # builds a real review (loads the embedding model once)

SCHEMA9 = Path(__file__).resolve().parents[1] / "data" / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db"
AS_OF = "2026-11-30"


@pytest.fixture(scope="module")
def built():
    with pytest.MonkeyPatch.context() as m:
        m.setenv("MEMLAB_EMBED_PRECISION", "fp32")  # the bf16 gate is slow on a busy box
        return review(memlab.load(SCHEMA9), as_of=AS_OF, progress=False)


@pytest.fixture
def proposal(built):
    """The built proposal with no ticks of its own (each test its own object)."""
    return dataclasses.replace(built, ticked=set())


def _two(proposal) -> tuple[str, str]:
    """The first option of each of the first two choices (both listed in the markdown)."""
    assert len(proposal.choices) >= 2
    return proposal.choices[0].options[0], proposal.choices[1].options[0]


def _tick_by_hand(md: Path, item_id: str) -> None:
    """What a person does in an editor: one '- [ ]' turned into '- [x]'."""
    text = md.read_text(encoding="utf-8")
    assert f"- [ ] `{item_id}`" in text
    md.write_text(text.replace(f"- [ ] `{item_id}`", f"- [x] `{item_id}`"), encoding="utf-8")


def test_hand_ticks_are_not_erased_by_writing_the_same_proposal_again(proposal, tmp_path):
    a, _ = _two(proposal)
    md = proposal.write(tmp_path)
    twin = md.with_suffix(".json")
    assert json.loads(twin.read_text())["digest"] == proposal.to_dict()["digest"]  # same proposal
    _tick_by_hand(md, a)
    ticked, twin_before = md.read_bytes(), twin.read_bytes()
    with pytest.raises(OutputExists) as err:
        proposal.write(tmp_path)
    assert err.value.path == md
    assert a in err.value.message and "erase" in err.value.message
    assert "overwrite=True" in err.value.hint and "--force" in err.value.hint
    assert md.read_bytes() == ticked and twin.read_bytes() == twin_before
    assert read_proposal(md).ticked == {a}  # what `memlab apply` will see


def test_object_ticks_that_drop_a_hand_tick_are_refused(proposal, tmp_path):
    a, b = _two(proposal)
    md = proposal.write(tmp_path)
    _tick_by_hand(md, a)
    ticked = md.read_bytes()
    proposal.tick(b)  # the object's own decision, not the person's
    with pytest.raises(OutputExists, match=a):
        proposal.write(tmp_path)
    assert md.read_bytes() == ticked


def test_the_file_ticks_kept_and_more_added_are_written(proposal, tmp_path):
    a, b = _two(proposal)
    md = proposal.write(tmp_path)
    _tick_by_hand(md, a)
    ticked = md.read_bytes()
    proposal.tick(a)
    assert proposal.write(tmp_path) == md and md.read_bytes() == ticked  # same ticks: same file
    loaded = read_proposal(md)  # the ticked file, loaded, ticked further and written back
    loaded.tick(b)
    loaded.write(tmp_path)
    assert read_proposal(md).ticked == {a, b}


def test_an_unticked_file_is_rewritten_as_before(proposal, tmp_path):
    a, _ = _two(proposal)
    md = proposal.write(tmp_path)
    plain = md.read_bytes()
    assert proposal.write(tmp_path) == md and md.read_bytes() == plain
    proposal.tick(a)
    proposal.write(tmp_path)
    assert read_proposal(md).ticked == {a}
    assert md.read_bytes() != plain


def test_overwrite_replaces_a_ticked_file(proposal, tmp_path):
    a, _ = _two(proposal)
    md = proposal.write(tmp_path)
    plain = md.read_bytes()
    _tick_by_hand(md, a)
    assert proposal.write(tmp_path, overwrite=True) == md
    assert md.read_bytes() == plain and read_proposal(md).ticked == set()


def test_a_different_proposal_is_still_refused(proposal, tmp_path):
    md = proposal.write(tmp_path)
    before = md.read_bytes()
    other = review(memlab.load(SCHEMA9), as_of="2026-12-30", progress=False)
    assert other.to_dict()["digest"] != proposal.to_dict()["digest"]
    other.made_at = proposal.made_at  # the same day's file
    with pytest.raises(OutputExists, match="a different review proposal") as err:
        other.write(tmp_path)
    assert err.value.path == md.with_suffix(".json") and md.read_bytes() == before


# ---- the CLI ---------------------------------------------------------------------------------


def _run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().err


def test_cli_keeps_hand_ticks_when_the_same_review_is_written_again(tmp_path, capsys, monkeypatch):
    """`memlab review` refuses today's file before it works; its writer is the backstop when
    that check looked at another day than the proposal's (a run across midnight UTC): here
    the clock of the review is fixed, so both runs make the same proposal of 2026-11-30."""
    import memlab.reviews._build as build

    monkeypatch.setenv("MEMLAB_EMBED_PRECISION", "fp32")
    monkeypatch.setattr(build, "_now", lambda: pd.Timestamp("2026-11-30T23:59:59Z"))
    out = tmp_path / "reviews"
    argv = ("review", str(SCHEMA9), "--out", str(out), "--as-of", AS_OF)
    assert _run(capsys, *argv)[0] == 0
    md = out / "review-2026-11-30.md"
    item = read_proposal(md).choices[0].options[0]
    _tick_by_hand(md, item)
    ticked = md.read_bytes()

    code, err = _run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("memlab: error: "), err
    assert str(md) in lines[0] and item in lines[0] and "--force" in lines[0]
    assert md.read_bytes() == ticked

    assert _run(capsys, *argv, "--force")[0] == 0  # the explicit flag replaces it
    assert read_proposal(md).ticked == set()


# ---- the writers that replace: the review notebook's run and its browse button ----------------


def _later_the_same_day(proposal):
    """The same review run again later on the day: another proposal (another digest), the
    same review-DATE file, as a second `memlab report review` into the folder makes."""
    later = dataclasses.replace(proposal, made_at=proposal.made_at[:10] + "T23:59:59Z")
    assert later.file_stem() == proposal.file_stem()
    assert later.to_dict()["digest"] != proposal.to_dict()["digest"]
    return later


def test_unticked_mode_replaces_an_untouched_proposal_and_refuses_a_ticked_one(proposal, tmp_path):
    a, _ = _two(proposal)
    later = _later_the_same_day(proposal)
    md = proposal.write(tmp_path)
    twin = md.with_suffix(".json")
    with pytest.raises(OutputExists, match="a different review proposal"):
        later.write(tmp_path)  # the default still refuses another proposal
    assert later.write(tmp_path, overwrite="unticked") == md  # untouched: replaced, as before
    assert json.loads(twin.read_text())["digest"] == later.to_dict()["digest"]

    _tick_by_hand(md, a)
    ticked, twin_before = md.read_bytes(), twin.read_bytes()
    with pytest.raises(OutputExists) as err:
        proposal.write(tmp_path, overwrite="unticked")
    assert err.value.path == md and a in err.value.message and "erase" in err.value.message
    assert "move it away" in err.value.hint
    assert md.read_bytes() == ticked and twin.read_bytes() == twin_before
    assert read_proposal(md).ticked == {a}


def test_ticks_the_object_wrote_or_read_are_its_own_to_take_back(proposal, tmp_path):
    a, b = _two(proposal)
    md = proposal.tick(a).write(tmp_path)
    assert proposal.untick(a).write(tmp_path) == md  # its own tick, unticked: rewritten
    assert read_proposal(md).ticked == set()
    proposal.tick(a).write(tmp_path)
    _tick_by_hand(md, b)  # a person's tick beside the object's
    proposal.untick(a)
    with pytest.raises(OutputExists, match=b) as err:
        proposal.write(tmp_path)
    assert a not in err.value.message  # a is the object's own; b is the person's
    loaded = read_proposal(md)  # a loaded file's ticks were seen: unticking one is a choice
    loaded.untick(b).write(tmp_path)
    assert read_proposal(md).ticked == {a}
    # What the object saw in one folder says nothing about another.
    other = dataclasses.replace(proposal, ticked=set())
    there = other.write(tmp_path / "there")
    _tick_by_hand(there, a)
    other.tick(a).write(tmp_path / "here")  # its own tick, in 'here'
    with pytest.raises(OutputExists, match=a):
        other.untick(a).write(tmp_path / "there")


def _browser(proposal, folder):
    from memlab.reviews import views

    widget = views.browse(proposal, folder)
    box, (button, status) = widget.children[1], widget.children[2].children
    checks = {cb.description.split()[0]: cb for row in box.children for cb in row.children[:1]}
    return checks, button, status


def test_browse_button_shows_the_refusal_and_keeps_hand_ticks(proposal, tmp_path):
    a, b = _two(proposal)
    md = proposal.write(tmp_path)  # the notebook's own write
    checks, button, status = _browser(proposal, tmp_path)
    checks[b].value = True
    button.click()  # the browser's ticks are written
    assert read_proposal(md).ticked == {b} and status.value.startswith("wrote ")
    checks[b].value = False
    button.click()  # and its own tick taken back
    assert read_proposal(md).ticked == set()

    _tick_by_hand(md, a)
    ticked = md.read_bytes()
    checks[b].value = True
    button.click()
    assert md.read_bytes() == ticked  # nothing written
    assert status.value.startswith("<b>not written</b>: ")
    assert str(md) in status.value and a in status.value and "erase" in status.value


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_an_unknown_overwrite_is_refused_before_anything_is_written(proposal, tmp_path, value):
    from memlab.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="overwrite must be"):
        proposal.write(tmp_path, overwrite=value)
    assert not list(tmp_path.iterdir())
