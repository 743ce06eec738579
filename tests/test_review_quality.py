"""Review quality on ground truth: the labelled elfmem 0.20.0 set in data/review-eval, the
polarity rule, triage, and the elfmem apply script run against the real elfmem package."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import importlib.util
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import memlab
from memlab.embed import get_embedder
from memlab.errors import OutputExists, ProposalRejected
from memlab.reviews import TOP_N, apply_proposal, review
from memlab.reviews._polarity import opposite
from memlab.reviews._quality import evaluate

pytestmark = pytest.mark.slow  # loads the embedding model

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "data" / "review-eval"
DB = EVAL / "elfmem-0.20.0-review-eval.db"
SCHEMA5 = ROOT / "data" / "samples" / "elfmem" / "elfmem-0.19.2-schema5.db"
AS_OF = "2026-12-01"


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return get_embedder(cache_dir=tmp_path_factory.mktemp("quality-cache"))


@pytest.fixture(scope="module")
def labels():
    return json.loads((EVAL / "labels.json").read_text())


@pytest.fixture(scope="module")
def proposal(embedder):
    return review(memlab.load(DB), as_of=AS_OF, embedder=embedder)


def _removed(proposal) -> set[str]:
    return {u for it in proposal.items for u in (it.target.get("removes") or [])}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _statuses(db: Path) -> dict[str, str]:
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT id, status FROM blocks"))
    finally:
        con.close()


# ---- ground truth ------------------------------------------------------------------------------
def test_destructive_precision_and_no_unique_fact_removed(proposal, labels):
    result = evaluate(proposal, labels).set_index("kind")
    assert result.loc["destructive", "proposed"] >= 20
    assert result.loc["destructive", "precision"] >= 0.95
    assert result.loc["duplicates", "precision"] >= 0.95
    assert result.attrs["unique_removed"] == []
    assert not _removed(proposal) & set(labels["unique"])
    # Recall is measured, not assumed: most labelled duplicates and contradictions are found.
    assert result.loc["duplicates", "recall_main"] >= 0.8
    assert result.loc["contradictions", "recall_main"] >= 0.8


def test_edited_after_recording_is_stale_evidence_never_a_choice(proposal, labels, embedder):
    edited = [p for p in labels["pairs"] if p["case"] == "edited-after-recording"]
    assert len(edited) == 4
    store = memlab.load(DB)
    rows = store.contradictions
    for p in edited:
        a, b = p["a"], p["b"]
        # elfmem recorded them as near-duplicates, and the row is still there...
        assert ((rows["block_a_id"].isin([a, b])) & (rows["block_b_id"].isin([a, b]))).any()
        # ...but re-measured now they are unrelated: shown as stale evidence, never a choice.
        stale = [f for f in proposal.findings if f.section == "stale_evidence"
                 and a in f.summary and b in f.summary]
        assert len(stale) == 1 and "no longer holds" in stale[0].summary
        assert stale[0].evidence["similarity_now"] < 0.5
        assert stale[0].evidence["recorded"] >= 0.90
        assert a not in _removed(proposal) and b not in _removed(proposal)
    assert "Stale evidence" in proposal.markdown()


def test_negation_that_agrees_is_never_a_contradiction(proposal, labels):
    assert opposite("The build requires the lockfile to be committed.",
                    "The build breaks without the lockfile committed.")[0] is False
    assert opposite("Deploy only after CI is green.", "Never deploy without a green CI run.")[0] is False
    assert opposite("Migrations must run before the app starts.",
                    "The app cannot start until the migrations have run.")[0] is False
    assert opposite("Deploys to production happen on Fridays.",
                    "Deploys to production never happen on Fridays.")[0] is True
    agree = [p for p in labels["pairs"] if p["label"] == "agree"]
    contra = {frozenset(m for o in c.options for m in proposal.item(o).target.get("removes") or [])
              for c in proposal.choices if c.section == "contradictions"}
    assert not [p for p in agree if frozenset((p["a"], p["b"])) in contra]
    assert evaluate(proposal, labels).attrs["agree_as_contradiction"] == 0


def test_no_constitution_means_no_constitution_items(proposal):
    # The set was made without setup(seed=True): nothing constitutional was ever there.
    store = memlab.load(DB)
    assert not store.tags["tag"].astype(str).str.startswith("self/").any()
    assert not [c for c in proposal.choices if c.section == "drift"]


def test_clusters_are_stars_every_member_above_threshold_to_its_survivor(proposal):
    near = proposal.thresholds["near_duplicate"]
    vec = dict(zip(proposal.units["uid"], proposal.vectors))
    for c in proposal.clusters:
        for m in c["members"]:
            if m != c["survivor"]:
                assert float(vec[m] @ vec[c["survivor"]]) >= near - 1e-6


# ---- triage ------------------------------------------------------------------------------------
def test_first_screen_is_a_short_ranked_list_and_a_summary_of_the_rest(proposal, tmp_path):
    assert len(proposal.choices) > TOP_N  # enough to need triage
    scores = [c.impact["score"] for c in proposal.choices]
    assert scores == sorted(scores, reverse=True)
    md = proposal.write(tmp_path)
    lines = md.read_text().splitlines()
    screen = "\n".join(lines[:45])
    rows = [l for l in lines[:45] if l.startswith("| ") and l.split("|")[1].strip().isdigit()]
    assert [int(r.split("|")[1]) for r in rows] == list(range(1, TOP_N + 1))
    rest = len(proposal.choices) - TOP_N
    assert f"Not listed here: {rest} more choice(s)" in screen
    assert "| kind | choices | tokens saved |" in screen
    # The markdown has checkboxes for the top choices only; the twin holds all of them.
    twin = json.loads(md.with_suffix(".json").read_text())
    assert len(twin["choices"]) == len(proposal.choices)
    shown = {o for c in proposal.choices[:TOP_N] for o in c.options}
    boxes = {l.split("`")[1] for l in lines if l.startswith("- [ ] `")}
    assert boxes == shown
    # --all: a separate file with every choice.
    full = review(memlab.load(DB), as_of=AS_OF, embedder=get_embedder(), all=True)
    path = full.write(tmp_path)
    assert path.name.endswith("-all.md") and md.exists()
    boxes = {l.split("`")[1] for l in path.read_text().splitlines() if l.startswith("- [ ] `")}
    assert boxes == {it.id for it in full.items}


# ---- apply on an elfmem database: a script through elfmem's own API ----------------------------
def _tick(md: Path, *ids: str) -> None:
    text = md.read_text()
    for i in ids:
        assert f"- [ ] `{i}`" in text
        text = text.replace(f"- [ ] `{i}`", f"- [x] `{i}`")
    md.write_text(text)


def _load_script(path: Path):
    spec = importlib.util.spec_from_file_location("memlab_apply_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _offline_system(db: Path):
    spec = importlib.util.spec_from_file_location("make_review_eval", ROOT / "scripts" / "make_review_eval.py")
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    return maker._system(db)


def test_elfmem_apply_writes_a_script_that_makes_exactly_the_ticked_changes(tmp_path, embedder):
    db = tmp_path / "agent.db"
    shutil.copy(DB, db)
    proposal = review(memlab.load(db), as_of=AS_OF, embedder=embedder, all=True)
    dups = [c for c in proposal.choices if c.section == "duplicates"][:2]
    keep = proposal.item(dups[0].options[0])
    other = proposal.item(dups[1].options[0])
    ticks = [keep.id, other.id]
    md = proposal.write(tmp_path / "reviews")
    assert "memlab never writes this database" in md.read_text()
    _tick(md, *ticks)
    before = _sha(db)
    result = apply_proposal(md)
    assert _sha(db) == before  # memlab itself wrote nothing to the database
    script = result.script
    assert script == md.with_name(md.stem + ".apply.py") and script.is_file()
    ast.parse(script.read_text())
    mod = _load_script(script)
    expected = [(s["op"], s.get("block_id")) for t in ticks for s in proposal.item(t).change["steps"]]
    assert [(c[1], c[2]) for c in mod.CHANGES] == expected
    # The script's own checks and backup, then its changes through the real elfmem API.
    mod.check_release()
    mod.check_blocks()
    mod.backup()
    assert Path(mod.BACKUP).is_file()
    with pytest.raises(SystemExit):
        mod.backup()  # never overwrites a backup

    async def run():
        system = await _offline_system(db)
        try:
            await mod.apply(system)
        finally:
            await system.close()

    asyncio.run(run())
    con = sqlite3.connect(db)
    status = dict(con.execute("SELECT id, status FROM blocks"))
    con.close()
    for it in (keep, other):
        for removed in it.target["removes"]:
            assert status[removed] == "archived"
        assert status[it.target["keeps"]] == "active"
    # Nothing unticked changed: every other block keeps its status and text.
    con = sqlite3.connect(mod.BACKUP)
    before = dict(con.execute("SELECT id, status FROM blocks"))
    con.close()
    changed = {b for b in status if status[b] != before.get(b)}
    assert changed == set(keep.target["removes"]) | set(other.target["removes"])
    # Run again: the blocks changed, so the checks refuse before touching anything.
    with pytest.raises(SystemExit):
        mod.check_blocks()
    # A second apply will not overwrite the script.
    with pytest.raises(OutputExists):
        apply_proposal(md)


@pytest.mark.parametrize("name", ["odd#frag/agent.db", "q?mode=rwc/agent.db", "pct%2e/a&b.db"])
def test_the_script_checks_the_database_it_will_change_whatever_its_path(tmp_path, embedder,
                                                                         name, monkeypatch):
    """The script's read-only check opens DATABASE through an SQLite URI: a '#', '?' or '%' in
    the path must not make it check (and create) another file than the one it then changes.
    elfmem itself opens the database by a SQLAlchemy URL, where '?' and '%' are URL syntax: the
    script hands it a path that names the same file, or refuses before writing anything."""
    db = tmp_path / name
    db.parent.mkdir(parents=True)
    shutil.copy(DB, db)
    proposal = review(memlab.load(db), as_of=AS_OF, embedder=embedder)
    dup = next(c for c in proposal.choices if c.section == "duplicates")
    md = proposal.write(tmp_path / "reviews")
    _tick(md, dup.options[0])
    mod = _load_script(apply_proposal(md).script)
    assert mod.DATABASE == str(db)
    mod.check_blocks()  # was "no such table: blocks": it had opened (and made) an empty file
    monkeypatch.chdir(tmp_path)
    if "?" in name or "%" in name:
        with pytest.raises(SystemExit):  # from here elfmem would open tmp_path/"q" or "pct."
            mod.elfmem_path()
        monkeypatch.chdir(db.parent)
    before = _statuses(db)

    async def run():
        system = await _offline_system(mod.elfmem_path())
        try:
            await mod.apply(system)
        finally:
            await system.close()

    asyncio.run(run())
    assert _statuses(db) != before  # the change landed in the database the check checked
    # nothing but the database (and SQLite's own -wal/-shm beside it) and the review folder
    assert {p.name for p in tmp_path.iterdir()} == {db.parent.name, "reviews"}
    assert {p.name for p in db.parent.iterdir()} <= {db.name, db.name + "-wal", db.name + "-shm"}


def test_store_text_enters_the_script_only_as_literals():
    from memlab.reviews import Item
    from memlab.reviews._elfmem_script import render_script

    nasty = 'x"""\n__import__("os").system("echo pwned")\n\'\'\'\\'
    item = Item(id="merg-0000000001", section="duplicates", action="merge", option="merge",
                summary="", target={}, evidence={},
                change={"steps": [{"op": "edit", "block_id": "abc'\"def", "content": nasty,
                                   "content_sha256": "0" * 64, "text": ""}], "text": ""})
    text = render_script(database='/tmp/a"""b.db', digest="f" * 64, items=[item])
    tree = ast.parse(text)
    assigned = {t.targets[0].id: ast.literal_eval(t.value) for t in tree.body
                if isinstance(t, ast.Assign) and isinstance(t.targets[0], ast.Name)
                and t.targets[0].id in ("CHANGES", "DATABASE")}
    assert assigned["DATABASE"] == '/tmp/a"""b.db'
    assert assigned["CHANGES"] == [("merg-0000000001", "edit", "abc'\"def", "0" * 64, nasty)]
    assert "pwned" not in "".join(ast.get_docstring(tree) or "")


def test_old_elfmem_release_is_refused_with_one_line(tmp_path, embedder, capsys):
    proposal = review(memlab.load(SCHEMA5), as_of="2026-11-30", embedder=embedder)
    md = proposal.write(tmp_path)
    text = md.read_text()
    restore = next(o for c in proposal.choices if c.section == "drift" for o in c.options
                   if proposal.item(o).option == "restore")
    _tick(md, restore)
    with pytest.raises(ProposalRejected, match="schema 5"):
        apply_proposal(md)
    from memlab.cli import main

    assert main(["apply", str(md)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no edit or forget" in err[0]
    assert "checklist only" in text


def test_elfmem_script_restores_a_changed_seed_through_edit(tmp_path, embedder):
    from memlab.audits import seeds

    db = tmp_path / "agent.db"
    shutil.copy(ROOT / "data" / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db", db)
    proposal = review(memlab.load(db), as_of="2026-11-30", embedder=embedder)
    changed = next(c for c in proposal.choices if c.kind == "constitution changed")
    restore = next(proposal.item(o) for o in changed.options if proposal.item(o).option == "restore")
    md = proposal.write(tmp_path / "r")
    _tick(md, restore.id)
    mod = _load_script(apply_proposal(md).script)
    mod.check_release()
    mod.check_blocks()
    mod.backup()

    async def run():
        system = await _offline_system(db)
        try:
            await mod.apply(system)
        finally:
            await system.close()

    asyncio.run(run())
    con = sqlite3.connect(db)
    (content,) = con.execute("SELECT content FROM blocks WHERE id = ?",
                             (restore.target["uid"],)).fetchone()
    con.close()
    seed = seeds.seed_release(role_tags=True).slot("curiosity").content
    assert content == seed
    # The backup still holds the text before the edit.
    con = sqlite3.connect(mod.BACKUP)
    (before,) = con.execute("SELECT content FROM blocks WHERE id = ?", (restore.target["uid"],)).fetchone()
    con.close()
    assert before == "Curiosity drives me, bounded by the task at hand."


def test_a_store_kind_review_does_not_cover_is_one_named_error(tmp_path):
    from memlab.errors import MemlabError
    from memlab.store import Store

    store = Store("letta_server", tmp_path / "letta.db", {})
    with pytest.raises(MemlabError, match="review does not cover letta_server stores") as err:
        review(store, embedder=object())
    assert err.value.path == tmp_path / "letta.db" and err.value.hint


def test_a_kind_that_cannot_edit_is_offered_no_restore_of_a_changed_seed(tmp_path, embedder,
                                                                          monkeypatch):
    """A store kind whose review looks for seed drift but has no edit adapter (a plugin's
    read-only elfmem kind): its drift choice offered a "restore" option whose one step was
    None, which apply could not make. Now the choice keeps "keep_current" alone; the real
    elfmem kind (negative control, the test above) still offers restore."""
    import dataclasses

    from memlab import kinds

    db = tmp_path / "agent.db"
    shutil.copy(ROOT / "data" / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db", db)
    kind = kinds.get("elfmem_db")
    monkeypatch.setattr(type(kind), "review", dataclasses.replace(kind.review, edit=None))
    proposal = review(memlab.load(db), as_of="2026-11-30", embedder=embedder)
    changed = [c for c in proposal.choices if c.kind == "constitution changed"]
    assert changed  # the sample's changed seed is still found
    for choice in changed:
        options = [proposal.item(o) for o in choice.options]
        assert [o.option for o in options] == ["keep_current"]
        assert all(s is not None for o in options for s in o.change["steps"])
