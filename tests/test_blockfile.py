"""elfmem markdown substrate: memlab's reader/writer against elfmem 0.20's own parser."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.errors import MigrationError, UnsafePath
from memlab.formats.blockfile import (
    MAX_LEDGER_LINE_BYTES,
    Block,
    content_id,
    fit_ledger_event,
    format_block,
    format_blockfile,
    format_ledger,
    format_ledger_line,
    ledger_path,
    parse_blockfile,
    parse_ledger,
    substrate_path,
)
from memlab.kinds.elfmem_substrate._parse import parse_substrate

elf_blockfile = pytest.importorskip("elfmem.memory.blockfile")
elf_ledger = pytest.importorskip("elfmem.memory.ledger")


def _rich_block() -> Block:
    return Block(
        title="Prefer small reversible changes",
        body="Ship in slices.\n\nEach slice is revertable on its own.",
        id="3f9a0c1d2e4b5a67",
        tags=["self/value", "engineering"],
        pinned=True,
        created="2026-04-07T10:15:00+00:00",
        cls="identity",
        cue="planning a risky change",
        relations=[("elaborates", "aaaa000011112222"), ("supports", "bbbb000011112222"),
                   ("predicts", "cccc000011112222"), ("supports", "dddd000011112222")],
        extra={"source_peer": "alv", "confidence": "0.91"},
    )


def _kinds(problems) -> list[str]:
    return list(problems.frame()["kind"].astype(str))


# --- round trip -----------------------------------------------------------------------------


def test_round_trip_keeps_every_declared_field():
    blocks = [_rich_block(), Block(title="Plain", body="Just text.", id="eeee000011112222")]
    text = format_blockfile(blocks)
    back, problems = parse_blockfile(text, file="notes/knowledge.md")
    assert back == blocks
    assert len(problems) == 0
    assert back[0].relations == [("supports", "bbbb000011112222"),
                                 ("supports", "dddd000011112222"),
                                 ("predicts", "cccc000011112222"),
                                 ("elaborates", "aaaa000011112222")]
    assert back[0].unknown_relations == [("elaborates", "aaaa000011112222")]
    assert [b.line for b in back] == [1, 12]


def test_output_is_byte_identical_to_elfmem_writer_for_what_elfmem_can_express():
    b = _rich_block()
    b.relations = [r for r in b.relations if r[0] != "elaborates"]
    elf = elf_blockfile.Block(
        title=b.title, content=b.body, id=b.id, tags=list(b.tags), pinned=b.pinned,
        created=b.created, cue=b.cue, volatility=b.cls,
        links=[elf_blockfile.Link(relation=r, target=t) for r, t in b.relations],
        extra=dict(b.extra))
    other = Block(title="Second", body="two")
    elf_other = elf_blockfile.Block(title="Second", content="two")
    assert format_blockfile([b, other]) == elf_blockfile.write_blocks([elf, elf_other])
    # elfmem assigns the same content-hash id to an id-less block.
    assert elf_other.id == content_id("two")


def test_elfmem_parser_reads_memlab_output_without_errors_including_unknown_relations():
    blocks = [_rich_block(), Block(title="Log entry", body="observed x", id="ffff000011112222",
                                   relations=[("elaborates", "3f9a0c1d2e4b5a67"),
                                              ("validates", "eeee000011112222")])]
    text = format_blockfile(blocks)
    result = elf_blockfile.parse_blocks(text)
    assert result.errors == []
    assert result.absorbed == []
    assert [b.id for b in result.blocks] == [b.id for b in blocks]
    assert [b.tags for b in result.blocks] == [b.tags for b in blocks]
    assert [b.pinned for b in result.blocks] == [True, False]
    assert [b.cue for b in result.blocks] == ["planning a risky change", None]
    assert [b.content for b in result.blocks] == [b.body for b in blocks]
    assert [(ln.relation, ln.target) for ln in result.blocks[0].links] == blocks[0].links
    assert result.blocks[0].unknown_relations == ["elaborates"]
    assert result.blocks[1].unknown_relations == ["elaborates", "validates"]
    assert result.blocks[0].extra == {"source_peer": "alv", "confidence": "0.91"}


def test_body_that_starts_like_a_field_is_safe_only_behind_an_inline_line():
    with_cue = Block(title="t", body="cue:: not a cue, just prose", id="a1", cue="real cue")
    back, _ = parse_blockfile(format_block(with_cue))
    assert back == [with_cue]
    with pytest.raises(MigrationError, match="read back"):
        format_block(Block(title="t", body="cue:: not a cue", id="a1"))


def test_body_heading_followed_by_comment_is_refused_not_split():
    bad = Block(title="t", body="intro\n## Sub\n<!-- a remark -->\ntext", id="a1")
    with pytest.raises(MigrationError, match="2 blocks"):
        format_blockfile([bad])
    # A plain sub-heading survives, absorbed into its block as elfmem does.
    ok = Block(title="Mind model", body="## Goals\nwin\n\n## Beliefs\nx", id="a2")
    back, problems = parse_blockfile(format_block(ok))
    assert back == [ok]
    assert _kinds(problems) == ["absorbed_heading", "absorbed_heading"]


@pytest.mark.parametrize("block, match", [
    (Block(title="two\nlines", body="b", id="a"), "title"),
    (Block(title="   ", body="b", id="a"), "title"),
    (Block(title="t", body="b", id="has space"), "id="),
    (Block(title="t", body="b", id="a", tags=["a,b"]), "tag"),
    (Block(title="t", body="b", id="a", tags=["x]"]), "tag"),
    (Block(title="t", body="b", id="a", relations=[("is about", "x")]), "relation name"),
    (Block(title="t", body="b", id="a", relations=[("supports", "x]]")]), "target"),
    (Block(title="t", body="b", id="a", relations=[("cue", "x")]), "relation name"),
    (Block(title="t", body="b", id="a", extra={"pinned": "true"}), "extra field"),
    (Block(title="t", body="b", id="a", extra={"note": "two words"}), "note="),
    (Block(title="t", body="b", id="a", created="2026-01-01 10:00"), "created="),
    (Block(title="t", body="b", id="a", cue="multi\u2028line"), "cue"),
])
def test_writer_refuses_what_would_not_read_back(block, match):
    with pytest.raises(MigrationError, match=match):
        format_block(block)


def test_writer_refuses_duplicate_ids_like_elfmem_would():
    with pytest.raises(MigrationError, match="duplicate id"):
        format_blockfile([Block(title="a", body="1", id="same"), Block(title="b", body="2", id="same")])


# --- property tests -------------------------------------------------------------------------

_words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")),
                 min_size=1, max_size=30)
_titles = _words.map(str.strip).filter(bool)
_tags = st.lists(st.from_regex(r"[a-z][a-z0-9/_-]{0,15}", fullmatch=True), max_size=5, unique=True)
_bodies = st.text(max_size=300)
_prose = st.lists(st.text(alphabet="abc XYZ.,!?-_*#0123456789\u00e9\u4e2d", max_size=40),
                  max_size=8).map("\n".join)
_ids = st.from_regex(r"[0-9a-f]{16}", fullmatch=True)
_relations = st.lists(st.tuples(st.sampled_from(["supports", "refines", "predicts",
                                                 "elaborates", "co_occurs", "see-also"]), _ids),
                      max_size=5)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=_titles, body=_bodies, tags=_tags, pinned=st.booleans(), block_id=_ids,
       cue=st.none() | _titles, relations=_relations)
def test_property_round_trip_or_refusal(title, body, tags, pinned, block_id, cue, relations):
    block = Block(title=title, body=body, id=block_id, tags=tags, pinned=pinned, cue=cue,
                  relations=relations)
    try:
        text = format_block(block)
    except MigrationError:
        return  # refused loudly: the only acceptable alternative to an exact round trip
    back, _ = parse_blockfile(text)
    expected = Block(title=title.strip(), body=body.strip(), id=block_id, tags=tags,
                     pinned=pinned, cue=cue.strip() if cue else None, relations=relations)
    assert back == [expected]
    elf = elf_blockfile.parse_blocks(text)
    assert elf.errors == []
    assert [(b.id, b.tags, b.pinned, b.content) for b in elf.blocks] == \
        [(block_id, tags, pinned, body.strip())]
    assert [(ln.relation, ln.target) for ln in elf.blocks[0].links] == expected.links
    assert sorted(set(elf.blocks[0].unknown_relations)) == \
        sorted({r for r, _ in expected.unknown_relations})


@settings(max_examples=100, deadline=None)
@given(title=_titles, body=_prose, tags=_tags, relations=_relations)
def test_property_ordinary_prose_is_never_refused(title, body, tags, relations):
    # Plain prose without '##' lines or 'key::' lines must always be writable.
    body = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
    block = Block(title=title, body=body, id=content_id(body), tags=tags, relations=relations)
    assert parse_blockfile(format_block(block))[0] == [
        Block(title=title.strip(), body=body.strip(), id=block.id, tags=tags, relations=relations)]


_pieces = st.sampled_from([
    "## Title", "##\tTabbed ", "### not a heading", "## ", "",
    "<!-- id: a1  tags: [x, y]  pinned: true  created: 2026-01-01T00:00:00+00:00 -->",
    "<!-- id: a2 cls: status note: hi -->", "<!-- id: a1 -->", "<!-- tags: [broken -->",
    "<!-- just a remark -->", "<!-- : -->", "cue:: when asked", "cue::", "supports:: [[a2]], [[a3]]",
    "refines:: a1, a2", "elaborates:: [[a1]]", "note:: plain", "supports:: [[a2]] because",
    "body text", "- list item", "  indented", "\r", "\u2028", "text\x85more", "pinned: true",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(_pieces, max_size=25).map("\n".join))
def test_property_reader_matches_elfmem_parser(text):
    ours, problems = parse_blockfile(text, file="x.md")
    try:
        theirs = elf_blockfile.parse_blocks(text)
    except elf_blockfile.BlockFileError:
        assert "duplicate_id" in _kinds(problems)
        return
    assert "duplicate_id" not in _kinds(problems)
    assert len(ours) == len(theirs.blocks)
    for a, b in zip(ours, theirs.blocks):
        assert (a.title, a.body, a.id, a.tags, a.pinned, a.created, a.cls, a.cue) == \
            (b.title, b.content, b.id, b.tags, b.pinned, b.created, b.volatility, b.cue)
        assert a.links == _canon([(ln.relation, ln.target) for ln in b.links])
        assert {r for r, _ in a.unknown_relations} == set(b.unknown_relations)
        assert a.extra == b.extra
    assert _kinds(problems).count("bad_frontmatter") == len(theirs.errors)
    assert _kinds(problems).count("absorbed_heading") == len(theirs.absorbed)


def _canon(pairs):
    return Block(title="x", relations=pairs).relations


# --- malformed and hostile input ------------------------------------------------------------


def test_malformed_frontmatter_keeps_the_block_and_reports():
    text = "## Good\n<!-- id: g1 -->\n\nfine\n\n## Broken\n<!-- id: b1  tags: [x, y -->\n\nstill here\n"
    blocks, problems = parse_blockfile(text, file="notes/x.md")
    assert [b.title for b in blocks] == ["Good", "Broken"]
    assert blocks[1].id is None and blocks[1].body == "still here"
    frame = problems.frame()
    assert list(frame["kind"]) == ["bad_frontmatter"]
    assert frame["line"].tolist() == [7]
    assert frame["file"].tolist() == ["notes/x.md"]


def test_duplicate_ids_keep_both_blocks_and_report_where():
    text = "## One\n<!-- id: same -->\n\n1\n\n## Two\n<!-- id: same -->\n\n2\n"
    with pytest.raises(elf_blockfile.BlockFileError):
        elf_blockfile.parse_blocks(text)
    blocks, problems = parse_blockfile(text, file="notes/x.md")
    assert [b.body for b in blocks] == ["1", "2"]
    row = problems.frame().iloc[0]
    assert row["kind"] == "duplicate_id" and "lines 1, 6" in row["message"]


def test_silent_losses_in_elfmem_become_problems():
    text = ("# Preamble elfmem drops\n\n## A\n<!-- id: a1  stray words  pinned: yes -->\n"
            "cue:: first\ncue:: second\nsupports:: [[b1]] because reasons\nrefines::\n\nbody\n")
    blocks, problems = parse_blockfile(text)
    assert blocks[0].cue == "second" and blocks[0].pinned is False
    assert blocks[0].relations == [("supports", "b1")]
    assert sorted(_kinds(problems)) == sorted([
        "preamble_ignored", "frontmatter_text_ignored", "bad_pinned", "duplicate_cue",
        "relation_text_dropped", "empty_relation"])


def test_hostile_titles_and_non_text_are_data_not_crashes():
    text = ("## ../../etc/passwd\n<!-- id: x1 -->\n\n\x00binary\ufffd\n\n"
            "## /abs/path\n<!-- id: ../../x -->\n\nz\n")
    blocks, problems = parse_blockfile(text)
    assert [b.title for b in blocks] == ["../../etc/passwd", "/abs/path"]
    assert blocks[0].body == "\x00binary\ufffd"
    assert blocks[1].id == "../../x" and len(problems) == 0
    _, problems = parse_blockfile(b"bytes")  # type: ignore[arg-type]
    assert _kinds(problems) == ["not_text"]


def test_crlf_file_reads_like_elfmem_and_is_flagged():
    text = "## Title\r\n<!-- id: c1 -->\r\n\r\nbody\r\n"
    blocks, problems = parse_blockfile(text)
    assert blocks[0].title == elf_blockfile.parse_blocks(text).blocks[0].title == "Title\r"
    assert "crlf" in _kinds(problems)


def test_large_file_with_many_headings_parses():
    # 20k absorbed sub-headings: elfmem's own scan is quadratic here, memlab's is not.
    text = "## Top\n<!-- id: t1 -->\n\n" + "".join(f"## sub {i}\nline\n" for i in range(20_000))
    blocks, problems = parse_blockfile(text)
    assert len(blocks) == 1
    assert len(problems) == 20_000
    assert blocks[0].body.count("## sub") == 20_000


@pytest.mark.parametrize("category", ["../x", "/etc/x", "a//b", "a/../b", "C:/x", "a\\b", "", " a"])
def test_substrate_path_refuses_escaping_categories(category):
    with pytest.raises(UnsafePath):
        substrate_path("notes", category)


def test_substrate_path_allows_nested_categories():
    assert substrate_path("archive", "pattern/strategy") == ".elfmem/memory/archive/pattern/strategy.md"


# --- ledger ---------------------------------------------------------------------------------


def _events():
    return [
        {"t": "2026-04-07T10:00:00+00:00", "s": 0, "ah": 0.0, "k": "instance", "total_ah": 3.69},
        {"t": "2026-04-07T10:00:01+00:00", "s": 1, "ah": 1.5, "k": "seed", "id": "a1",
         "created": "2026-04-01T00:00:00+00:00", "n": 92, "lah": 1.5, "a": 3.2, "b": 0.0,
         "lam": 1e-05, "sum": "a short summary \u2028 with a line separator"},
        {"t": "2026-04-07T10:00:02+00:00", "s": 2, "ah": 1.5, "k": "link", "from": "a1",
         "to": "b1", "rel": "elaborates", "o": "agent", "w": 0.7, "rc": 2, "lah": None, "by": "a1"},
    ]


def test_ledger_round_trip_and_elfmem_replay(tmp_path):
    text = format_ledger(_events())
    assert all(len(line.encode()) < MAX_LEDGER_LINE_BYTES for line in text.splitlines())
    events, problems = parse_ledger(text, file="ledger/2026-04.jsonl")
    assert len(problems) == 0
    assert [{k: v for k, v in e.items() if k != "line"} for e in events] == _events()
    assert [e["line"] for e in events] == [1, 2, 3]
    folder = tmp_path / "ledger"
    folder.mkdir()
    (folder / "2026-04.jsonl").write_text(text, encoding="utf-8")
    replay = elf_ledger.replay(folder)
    assert replay.skipped_lines == 0 and replay.events_read == 3
    assert replay.total_active_hours == 3.69
    assert replay.blocks["a1"].reinforcement_count == 92
    assert replay.blocks["a1"].summary == "a short summary \u2028 with a line separator"
    assert replay.links[("a1", "b1")].relation == "elaborates"


def test_ledger_line_limit_and_fitting():
    big = {"t": "2026-04-07T10:00:00+00:00", "s": 0, "ah": 0.0, "k": "seed", "id": "a1",
           "sum": "x" * 5000, "note": "y" * 100}
    with pytest.raises(MigrationError, match="over 4000"):
        format_ledger_line(big)
    fitted, dropped = fit_ledger_event(big)
    assert dropped == ["sum"]
    assert len(format_ledger_line(fitted).encode()) < MAX_LEDGER_LINE_BYTES
    with pytest.raises(MigrationError, match="no droppable"):
        fit_ledger_event({"t": "x", "s": 0, "ah": 0, "k": "asm", "ids": ["a" * 16] * 400})
    with pytest.raises(MigrationError, match="lacks"):
        format_ledger_line({"k": "use"})
    with pytest.raises(MigrationError, match="plain JSON"):
        format_ledger_line({"t": "x", "s": 0, "ah": float("nan"), "k": "use"})
    assert ledger_path("2026-04-07T10:00:00+00:00") == ".elfmem/ledger/2026-04.jsonl"


def test_ledger_bad_lines_are_named():
    text = ('{"t":"2026-01-01T00:00:00+00:00","s":0,"ah":0,"k":"use","ids":["a"]}\n'
            "not json\n[1,2]\n\n" + json.dumps({"t": "2026", "k": "x", "pad": "z" * 4100}) + "\n"
            '{"t":"2026-01-01","s":1,"ah":0,"k":"use","note":"a\u2028b"}\n')
    events, problems = parse_ledger(text, file="l.jsonl")
    assert [e["line"] for e in events] == [1, 5, 6]
    frame = problems.frame()
    assert list(zip(frame["line"], frame["kind"])) == [
        (2, "ledger_bad_json"), (3, "ledger_bad_event"), (5, "ledger_line_too_long"),
        (6, "ledger_line_split")]


# --- substrate frames -----------------------------------------------------------------------


def _substrate_files():
    notes = format_blockfile([_rich_block(), Block(title="Plain", body="Just text.",
                                                   id="eeee000011112222")])
    inbox = format_blockfile([Block(title="New", body="unreviewed", id="1111000011112222",
                                    created="2026-05-01T08:00:00Z",
                                    relations=[("refines", "eeee000011112222"),
                                               ("supports", "9999999999999999")])])
    return {
        ".elfmem/memory/self.md": "# Constitution\n\n## Principle\n<!-- id: not-a-block -->\n",
        ".elfmem/memory/notes/knowledge.md": notes,
        ".elfmem/memory/log/pattern/strategy.md": inbox,
        ".elfmem/memory/archive/old.md": "## Gone\n<!-- id: eeee000011112222 -->\n\nold copy\n",
        ".elfmem/memory/notes.md": "## stray\n",
        ".elfmem/ledger/2026-04.jsonl": format_ledger(_events()),
        ".elfmem/config.yaml": "profile: x\n",
        "README.md": "# project\n",
    }


def test_parse_substrate_frames():
    blocks, ledger, problems = parse_substrate(_substrate_files())
    assert list(blocks.columns) == ["id", "title", "file", "section", "category", "tags",
                                    "pinned", "created", "cls", "cue", "relations", "extra",
                                    "body", "body_chars", "line"]
    assert str(blocks["created"].dtype) == "datetime64[ns, UTC]"
    assert str(blocks["pinned"].dtype) == "boolean"
    assert str(blocks["section"].dtype) == "category"
    by_section = blocks.groupby("section", observed=True).size().to_dict()
    assert by_section == {"archive": 1, "log": 1, "notes": 2, "self": 1}
    me = blocks[blocks["section"] == "self"].iloc[0]
    assert me["body"].startswith("# Constitution") and "not-a-block" in me["body"]
    assert pd.isna(me["id"])
    inbox = blocks[blocks["section"] == "log"].iloc[0]
    assert inbox["category"] == "pattern/strategy"
    assert inbox["created"] == pd.Timestamp("2026-05-01T08:00:00Z")
    rich = blocks[blocks["id"] == "3f9a0c1d2e4b5a67"].iloc[0]
    assert rich["pinned"] and rich["cls"] == "identity"
    assert ("elaborates", "aaaa000011112222") in rich["relations"]
    assert rich["body_chars"] == len(rich["body"])

    assert list(ledger.columns) == ["file", "line", "t", "s", "ah", "k", "payload"]
    assert list(ledger["k"].astype(str)) == ["instance", "seed", "link"]
    assert ledger.loc[1, "payload"]["n"] == 92
    assert str(ledger["t"].dtype) == "datetime64[ns, UTC]"

    kinds = problems.frame().groupby("kind", observed=True).size().to_dict()
    # eeee... lives in notes/ and archive/; five links point nowhere; notes.md is not read.
    assert kinds == {"duplicate_id": 1, "dangling_link": 5, "unread_file": 1}


def test_parse_substrate_hostile_paths_and_values():
    files = {"../.elfmem/memory/notes/x.md": "## x\n", "/abs/.elfmem/memory/notes/y.md": "## y\n",
             ".elfmem/memory/notes/z.md": b"## bytes",  # type: ignore[dict-item]
             ".elfmem/memory/notes/w.md": "## W\n<!-- id: w1  created: 99999-01-01 -->\n\nx\n"}
    blocks, ledger, problems = parse_substrate(files)
    assert list(blocks["id"]) == ["w1"]
    assert pd.isna(blocks.loc[0, "created"])
    assert sorted(_kinds(problems)) == ["bad_created", "not_text", "unsafe_path", "unsafe_path"]
    assert ledger.empty and list(ledger.columns)[0] == "file"


def test_parse_substrate_empty():
    blocks, ledger, problems = parse_substrate({})
    assert blocks.empty and ledger.empty and len(problems) == 0
    assert str(blocks["created"].dtype) == "datetime64[ns, UTC]"


# --- a substrate written by elfmem 0.20's own export ------------------------------------------

SUBSTRATE = "samples/elfmem-substrate"


@pytest.fixture(scope="module")
def exported(data_dir) -> dict[str, str]:
    root = data_dir / SUBSTRATE
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*")) if p.is_file() and ".elfmem" in p.parts}


def test_elfmem_export_reads_the_same_in_memlab_and_elfmem(exported):
    md = {k: v for k, v in exported.items() if k.endswith(".md")}
    assert len(md) == 6
    for path, text in md.items():
        ours, problems = parse_blockfile(text, file=path)
        theirs = elf_blockfile.parse_blocks(text)
        assert [(b.id, b.title, b.body, b.tags, b.pinned, b.cls, b.created, b.links)
                for b in ours] == \
            [(b.id, b.title, b.content, b.tags, b.pinned, b.volatility, b.created,
              _canon([(ln.relation, ln.target) for ln in b.links])) for b in theirs.blocks]
        assert _kinds(problems).count("absorbed_heading") == len(theirs.absorbed)
        # memlab's writer re-writes the file so that it reads back identically.
        assert parse_blockfile(format_blockfile(ours))[0] == ours


def test_elfmem_export_substrate_frames(exported):
    blocks, ledger, problems = parse_substrate(exported)
    assert len(blocks) == 47
    assert blocks.groupby("section", observed=True).size().to_dict() == {
        "archive": 1, "log": 3, "notes": 43}
    assert blocks["id"].is_unique and blocks["created"].notna().all()
    assert int(blocks["pinned"].sum()) == int(blocks["tags"].map(
        lambda t: "self/constitutional" in t).sum())
    assert ledger["k"].astype(str).value_counts().to_dict() == {"link": 97, "seed": 47,
                                                                 "instance": 1}
    assert set(ledger.loc[ledger["k"] == "seed", "payload"].map(lambda p: p["id"])) == \
        set(blocks["id"])
    assert _kinds(problems) == ["absorbed_heading"] * 3


def test_memlab_restores_the_relation_elfmem_export_dropped(exported, tmp_path):
    _, ledger, _ = parse_substrate(exported)
    agent_links = [p for k, p in zip(ledger["k"], ledger["payload"])
                   if k == "link" and p.get("o") == "agent"]
    assert len(agent_links) == 5
    path = ".elfmem/memory/notes/knowledge.md"
    blocks, _ = parse_blockfile(exported[path])
    written = {(b.id, r, t) for b in blocks for r, t in b.relations}
    missing = [(p["from"], p["rel"], p["to"]) for p in agent_links
               if (p["from"], p["rel"], p["to"]) not in written
               and any(b.id == p["from"] for b in blocks)]
    assert missing == [("37c6d16cc2acdfc5", "elaborates", "3c8dc28ffb9239ce")]
    for b in blocks:
        b.relations = b.relations + [(r, t) for src, r, t in missing if src == b.id]
    text = format_blockfile(blocks)
    elf = elf_blockfile.parse_blocks(text)
    assert elf.errors == []
    holder = next(b for b in elf.blocks if b.id == "37c6d16cc2acdfc5")
    assert holder.unknown_relations == ["elaborates"]
    back, _ = parse_blockfile(text)
    assert ("elaborates", "3c8dc28ffb9239ce") in next(
        b for b in back if b.id == "37c6d16cc2acdfc5").relations


def test_elfmem_replays_the_exported_ledger_as_memlab_reads_it(exported, data_dir):
    events, problems = parse_ledger(exported[".elfmem/ledger/2026-11.jsonl"])
    replay = elf_ledger.replay(data_dir / SUBSTRATE / ".elfmem/ledger")
    assert len(problems) == 0 and replay.skipped_lines == 0
    assert replay.events_read == len(events) == 145
    # memlab's writer reproduces elfmem's own lines byte for byte.
    assert format_ledger(events) == exported[".elfmem/ledger/2026-11.jsonl"]
