"""memlab.review: proposals on real elfmem samples, and the apply round trip on real git repos."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

import memlab
from memlab.embed import get_embedder
from memlab.errors import ProposalRejected, StaleProposal
from memlab.formats.blockfile import Block, format_blockfile, format_ledger
from memlab.reviews import Choice, Item, apply_proposal, read_proposal, review

pytestmark = pytest.mark.slow  # loads the embedding model (once per session)

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "elfmem"
SCHEMA9 = SAMPLES / "elfmem-0.20.0-schema9.db"
SCHEMA5 = SAMPLES / "elfmem-0.19.2-schema5.db"


@pytest.fixture(scope="session")
def embedder(tmp_path_factory):
    return get_embedder(cache_dir=tmp_path_factory.mktemp("review-cache"))


def _protected_ids(store) -> set[str]:
    tags = store.tags
    constitutional = set(tags.loc[tags["tag"].astype(str).str.startswith(
        ("self/constitutional", "self/role/")), "block_id"].astype(str))
    pinned = set(store.blocks.loc[store.blocks["pinned"].fillna(False).astype(bool), "id"].astype(str))
    return constitutional | pinned


# ---- helpers ---------------------------------------------------------------------------------
def _choice(proposal, section, member):
    """The one choice of ``section`` whose options keep or remove ``member``."""
    found = [c for c in proposal.choices if c.section == section and any(
        member in (proposal.item(o).target.get("removes") or []) + [proposal.item(o).target.get("keeps"),
                                                                    proposal.item(o).target.get("uid")]
        for o in c.options)]
    assert len(found) == 1, (section, member, [c.title for c in proposal.choices])
    return found[0]


def _option(proposal, choice, option, keeps=None):
    found = [proposal.item(o) for o in choice.options if proposal.item(o).option == option
             and (keeps is None or proposal.item(o).target.get("keeps") == keeps)]
    assert len(found) == 1, (option, keeps, [proposal.item(o).option for o in choice.options])
    return found[0]


def _removed(proposal) -> set[str]:
    return {u for it in proposal.items for u in (it.target.get("removes") or [])}


# ---- elfmem samples --------------------------------------------------------------------------
def test_schema9_lists_every_recorded_near_duplicate_pair(embedder):
    store = memlab.load(SCHEMA9)
    proposal = review(store, as_of="2026-11-30", embedder=embedder)
    recorded = store.contradictions[store.contradictions["kind"].astype(str) == "near_duplicate"]
    assert len(recorded) == 3
    cluster_of = {uid: c for c in proposal.clusters for uid in c["members"]}
    for a, b, score in recorded[["block_a_id", "block_b_id", "score"]].itertuples(index=False):
        assert cluster_of[a] is cluster_of[b], (a, b)
        pair = next(p for p in cluster_of[a]["pairs"] if {p["a"], p["b"]} == {a, b})
        assert pair["recorded"] == pytest.approx(score)
        assert pair["similarity"] >= 0.90  # re-measured now: MiniLM agrees with elfmem
        # One choice holds the pair; its first option keeps the survivor and removes the other.
        choice = _choice(proposal, "duplicates", a)
        first = proposal.item(choice.options[0])
        assert first.option == "keep" and "recommended" in first.summary
        assert {first.target["keeps"], *first.target["removes"]} == {a, b}
        assert proposal.item(choice.options[-1]).option == "keep_all"
        assert proposal.item(choice.options[-1]).change["steps"] == []


def test_schema9_never_removes_pinned_or_constitutional_blocks(embedder):
    store = memlab.load(SCHEMA9)
    proposal = review(store, as_of="2027-06-01", embedder=embedder)  # late: most blocks are stale
    protected = _protected_ids(store)
    assert "50bb7e4575aab7fe" in protected  # the seeded minimum-force block
    removed = _removed(proposal)
    assert removed, "the review proposes removing something"
    assert not removed & protected
    # The constitutional block has a paraphrase (0.94): it must be the survivor, not the victim,
    # and no option merges text into it.
    cluster = next(c for c in proposal.clusters if "50bb7e4575aab7fe" in c["members"])
    assert cluster["survivor"] == "50bb7e4575aab7fe"
    assert "constitutional" in cluster["why"]
    choice = _choice(proposal, "duplicates", "63059c44993bfa67")
    assert [proposal.item(o).option for o in choice.options] == ["keep", "keep_all"]
    # Schema 9 is elfmem 0.20: apply can make these changes through elfmem's API.
    assert all(it.appliable for it in proposal.items)


def test_schema5_recorded_contradiction_and_eroded_constitution(embedder):
    store = memlab.load(SCHEMA5)
    proposal = review(store, as_of="2026-11-30", embedder=embedder)
    con = [c for c in proposal.choices if c.section == "contradictions"]
    assert len(con) == 1
    sides = {proposal.item(o).target.get("keeps") for o in con[0].options} - {None}
    assert sides == {"1ce443276aabea51", "e2e29cc8296f405a"}
    assert con[0].evidence["source"] == "recorded by elfmem"
    assert [proposal.item(o).option for o in con[0].options] == ["keep", "keep", "keep_both"]
    # 0.19.2 superseded the seeded minimum-force block by a paraphrase: the restore choice names
    # the live paraphrase and offers to keep it, so restoring is not the only way out.
    missing = next(c for c in proposal.choices if c.evidence.get("role") == "minimum-force")
    assert missing.evidence["seed_block"] == "50bb7e4575aab7fe"
    assert missing.evidence["archive_reason"] == "superseded"
    assert missing.evidence["live_paraphrase"] == "63059c44993bfa67"
    assert [proposal.item(o).option for o in missing.options] == ["keep_paraphrase", "restore"]
    changed = next(c for c in proposal.choices if c.evidence.get("role") == "curiosity")
    restore = _option(proposal, changed, "restore")
    assert restore.change["steps"][0]["op"] == "edit"
    assert restore.change["steps"][0]["block_id"] == "c75b02a4dc4ef807"
    assert 0 < changed.evidence["similarity"] < 0.95
    # elfmem 0.19.2 has no edit or forget: every change is a checklist item.
    assert not any(it.appliable for it in proposal.items if it.change["steps"])


def test_stale_follows_the_span_and_outcomes(embedder):
    store = memlab.load(SCHEMA9)
    early = review(store, as_of="2026-11-30", embedder=embedder)
    assert not [c for c in early.choices if c.section == "stale"]
    late = review(store, as_of="2027-06-01", stale_after_days=90, embedder=embedder)
    stale = {u for c in late.choices if c.section == "stale"
             for u in late.item(c.options[0]).target["removes"]}
    assert "a80f78b342f87ffb" in stale  # British spelling: reinforced once, never an outcome
    outcome_blocks = set(store.outcomes["block_id"].astype(str))
    assert not stale & outcome_blocks  # an outcome is evidence of use
    longer = review(store, as_of="2027-06-01", stale_after_days=400, embedder=embedder)
    assert not [c for c in longer.choices if c.section == "stale"]


def test_proposal_file_is_markdown_with_a_json_twin(embedder, tmp_path):
    proposal = review(memlab.load(SCHEMA9), as_of="2026-11-30", embedder=embedder)
    md = proposal.write(tmp_path)
    assert md.name == f"review-{proposal.made_at[:10]}.md"
    twin = json.loads(md.with_suffix(".json").read_text())
    text = md.read_text()
    assert twin["store"]["kind"] == "elfmem_db"
    assert twin["fingerprint"]["sha256"] and twin["fingerprint"]["sha256"] in text
    assert len(twin["choices"]) == len(proposal.choices)
    for it in proposal.items:
        assert f"- [ ] `{it.id}`" in text
    back = read_proposal(md)
    assert [i.id for i in back.items] == [i.id for i in proposal.items]
    # Same store, same thresholds: same ids (stable across runs).
    again = review(memlab.load(SCHEMA9), as_of="2026-11-30", embedder=embedder)
    assert [i.id for i in again.items] == [i.id for i in proposal.items]


# ---- a Letta memfs repo built with GitPython ---------------------------------------------------
def _commit(repo: git.Repo, files: dict[str, str], message: str, day: str) -> str:
    root = Path(repo.working_tree_dir)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    repo.git.add("--", *files)
    stamp = f"{day}T10:00:00+0000"
    who = {"GIT_AUTHOR_NAME": "Rex", "GIT_AUTHOR_EMAIL": "agent-1@letta.com", "GIT_AUTHOR_DATE": stamp,
           "GIT_COMMITTER_NAME": "Rex", "GIT_COMMITTER_EMAIL": "agent-1@letta.com",
           "GIT_COMMITTER_DATE": stamp}
    repo.git.commit("-q", "--no-verify", "-m", message, env=who)
    return repo.head.commit.hexsha


def _fm(description: str, body: str, extra: str = "") -> str:
    return f"---\ndescription: {description}\n{extra}---\n\n{body}"


@pytest.fixture
def letta_repo(tmp_path) -> Path:
    root = tmp_path / "memory"
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cw:
        cw.set_value("core", "hooksPath", "/dev/null")
        cw.set_value("commit", "gpgsign", "false")
    _commit(repo, {
        ".letta/config.json": '{"version": 1}\n',
        "system/persona.md": _fm("Who I am", "I am Rex, a careful deploy agent.\n"),
        "system/human.md": _fm("The human", "Name: Sam. Prefers short answers.\n"),
        "system/policies.md": _fm("Operator rules", "Deploy only from the main branch after CI is green.\n",
                                  "read_only: true\n"),
        "reference/sqlite.md": _fm("SQLite notes", "SQLite WAL mode lets readers continue while a "
                                                   "single writer commits.\n"),
    }, "Initial commit", "2026-03-01")
    _commit(repo, {
        "reference/deploy.md": _fm("Deploy notes", "Deploy only from main once CI is green.\n"),
        "reference/sqlite-notes.md": _fm("More SQLite", "SQLite WAL mode lets readers proceed while "
                                                        "one writer commits.\n"),
        "system/notes.md": _fm("Scratch notes", "- ship the audit\n", "metadata: {source: chat}\n"),
        "system/active.md": _fm("Active issues", "issue " * 60 + "\n", "limit: 100\n"),
    }, "feat: notes", "2026-03-05")
    _commit(repo, {"system/persona.md": _fm("Who I am", "I am Rex. I deploy whenever asked.\n")},
            "fix: persona", "2026-03-10")
    return root


def _tick(md: Path, *ids: str) -> None:
    text = md.read_text()
    for i in ids:
        assert f"- [ ] `{i}`" in text
        text = text.replace(f"- [ ] `{i}`", f"- [x] `{i}`")
    md.write_text(text)


def _item(proposal, **match) -> Item:
    found = [it for it in proposal.items
             if all(getattr(it, k, None) == v or it.target.get(k) == v for k, v in match.items())]
    assert len(found) == 1, (match, [(i.id, i.action, i.target) for i in proposal.items])
    return found[0]


def test_letta_review_finds_duplicates_drift_limits_and_rules(letta_repo, embedder):
    proposal = review(memlab.load(letta_repo), as_of="2026-03-12", embedder=embedder)
    # The read-only policy survives its paraphrase (the only option: it cannot be removed);
    # the older SQLite note survives the newer.
    deploy = _choice(proposal, "duplicates", "reference/deploy.md")
    assert [(proposal.item(o).option, proposal.item(o).target.get("keeps")) for o in deploy.options] \
        == [("keep", "system/policies.md"), ("keep_all", None)]
    sqlite = _choice(proposal, "duplicates", "reference/sqlite-notes.md")
    assert proposal.item(sqlite.options[0]).target == {
        **proposal.item(sqlite.options[0]).target, "keeps": "reference/sqlite.md",
        "removes": ["reference/sqlite-notes.md"]}
    assert "system/policies.md" not in _removed(proposal)
    drift = _item(proposal, section="drift", option="restore")
    assert drift.target["file"] == "system/persona.md"
    assert drift.change["steps"][0]["op"] == "restore_file"
    limit = _item(proposal, section="limits")
    step = limit.change["steps"][0]
    assert limit.target["file"] == "system/active.md" and step["value"] == "400"
    rule = _item(proposal, section="rules")
    assert rule.change["steps"][0] == {**rule.change["steps"][0], "op": "remove_key", "key": "metadata",
                                       "file": "system/notes.md"}
    fp = proposal.fingerprint
    assert fp["head_sha"] == git.Repo(letta_repo).head.commit.hexsha
    assert set(fp["files"]) >= {"reference/deploy.md", "system/persona.md", "system/notes.md"}


def test_apply_round_trip_commits_exactly_the_ticked_items(letta_repo, embedder, tmp_path):
    repo = git.Repo(letta_repo)
    before = repo.head.commit
    proposal = review(memlab.load(letta_repo), as_of="2026-03-12", embedder=embedder)
    md = proposal.write(tmp_path / "reviews")
    dup = _option(proposal, _choice(proposal, "duplicates", "reference/sqlite-notes.md"), "keep",
                  keeps="reference/sqlite.md")
    rule = _item(proposal, section="rules")
    _tick(md, dup.id, rule.id)

    limit = _item(proposal, section="limits")
    _tick(md, limit.id)
    dry_limit = apply_proposal(md, dry_run=True)
    assert "-limit: 100\n+limit: 400\n" in dry_limit.diff  # a bare integer, as Letta reads it
    md.write_text(md.read_text().replace(f"- [x] `{limit.id}`", f"- [ ] `{limit.id}`"))

    dry = apply_proposal(md, dry_run=True)
    assert dry.commit is None and repo.head.commit == before
    assert "-metadata: {source: chat}" in dry.diff and "+++ /dev/null" in dry.diff

    result = apply_proposal(md)
    after = repo.head.commit
    assert result.commit == after.hexsha and after.parents == (before,)
    assert (after.author.name, after.author.email) == ("memlab", "memlab@localhost")
    assert dup.id in after.message and rule.id in after.message
    changed = {d.a_path: d.change_type for d in before.diff(after)}
    assert changed == {"reference/sqlite-notes.md": "D", "system/notes.md": "M"}
    notes = (after.tree / "system/notes.md").data_stream.read().decode()
    assert notes == _fm("Scratch notes", "- ship the audit\n")
    # The working tree follows the commit and is clean; nothing unticked moved.
    assert not (letta_repo / "reference/sqlite-notes.md").exists()
    assert (letta_repo / "system/notes.md").read_text() == notes
    assert not repo.is_dirty(untracked_files=False)
    assert (letta_repo / "reference/deploy.md").exists()
    assert result.diff == dry.diff
    # The memfs audit tells memlab's commit apart from a human's: no hook ran on it.
    hist = memlab.load(letta_repo).history
    assert set(hist.loc[hist["sha"] == after.hexsha, "author_kind"].astype(str)) == {"review"}
    # Applying the same proposal again changes nothing and says so.
    again = apply_proposal(md)
    assert repo.head.commit == after and "already applied" in again.summary()
    # ...and only that: no "N item(s) changed" claiming a new change (issue 26)
    assert str(again) == f"already applied in commit {after.hexsha[:12]}; nothing to do"


def test_apply_on_a_new_branch_leaves_the_checkout(letta_repo, embedder, tmp_path):
    repo = git.Repo(letta_repo)
    before = repo.head.commit
    proposal = review(memlab.load(letta_repo), as_of="2026-03-12", embedder=embedder)
    md = proposal.write(tmp_path)
    drift = _item(proposal, section="drift", option="restore")
    _tick(md, drift.id)
    result = apply_proposal(md, branch="memlab/review")
    assert repo.head.commit == before and repo.active_branch.name == "main"
    made = repo.commit("memlab/review")
    assert made.hexsha == result.commit and made.parents == (before,)
    assert (made.tree / "system/persona.md").data_stream.read().decode() == \
        _fm("Who I am", "I am Rex, a careful deploy agent.\n")
    # The same items again: already there. Other items onto that branch: refused.
    assert "already applied" in apply_proposal(md, branch="memlab/review").summary()
    assert repo.commit("memlab/review") == made
    rule = _item(proposal, section="rules")
    _tick(md, rule.id)
    with pytest.raises(ProposalRejected, match="already exists"):
        apply_proposal(md, branch="memlab/review")


def test_stale_and_hand_edited_proposals_are_refused(letta_repo, embedder, tmp_path):
    proposal = review(memlab.load(letta_repo), as_of="2026-03-12", embedder=embedder)
    md = proposal.write(tmp_path)
    dup = _option(proposal, _choice(proposal, "duplicates", "reference/deploy.md"), "keep")
    original = md.read_text()

    # An edit beyond ticking: a change of the evidence text.
    _tick(md, dup.id)
    md.write_text(md.read_text().replace("similarity_to_survivor 0.", "similarity_to_survivor 1.", 1))
    with pytest.raises(StaleProposal, match=r"edited beyond ticking at line \d+") as err:
        apply_proposal(md)
    assert err.value.path == md

    # An edited twin.
    md.write_text(original)
    twin = md.with_suffix(".json")
    data = json.loads(twin.read_text())
    data["items"][0]["change"]["steps"] = [{"op": "delete_file", "file": "system/policies.md"}]
    twin.write_text(json.dumps(data))
    with pytest.raises(StaleProposal, match="digest"):
        apply_proposal(md)

    # A repo that moved after the proposal was made.
    md = proposal.write(tmp_path / "again")
    _tick(md, dup.id)
    _commit(git.Repo(letta_repo), {"reference/deploy.md": _fm("Deploy notes", "Changed.\n")},
            "edit", "2026-03-11")
    with pytest.raises(StaleProposal, match="reference/deploy.md"):
        apply_proposal(md)


def test_read_only_target_dirty_tree_and_double_choice_are_rejected(letta_repo, embedder, tmp_path):
    proposal = review(memlab.load(letta_repo), as_of="2026-03-12", embedder=embedder)
    # A proposal item against the read-only policy file (review never makes one; apply must
    # still refuse it).
    proposal.items.append(Item(id="dup-0000000001", section="duplicates", action="delete_file",
                               summary="forced", target={"uid": "system/policies.md",
                                                         "file": "system/policies.md"},
                               evidence={}, change={"op": "delete_file", "file": "system/policies.md",
                                                    "text": "delete system/policies.md"}))
    proposal.choices.insert(0, Choice(id="choice-00000000f1", section="duplicates", kind="forged",
                                      title="forged", options=["dup-0000000001"], impact={}))
    md = proposal.write(tmp_path)
    _tick(md, "dup-0000000001")
    with pytest.raises(ProposalRejected, match="read_only") as err:
        apply_proposal(md)
    assert "system/policies.md" in str(err.value)

    proposal.items.pop()
    proposal.choices.pop(0)
    md = proposal.write(tmp_path / "dirty")
    rule = _item(proposal, section="rules")
    _tick(md, rule.id)
    (letta_repo / "system/human.md").write_text("edited by hand\n")
    with pytest.raises(ProposalRejected, match="uncommitted changes"):
        apply_proposal(md)


def test_two_ticks_in_one_choice_are_refused_with_one_line(tmp_path, embedder, capsys):
    root = tmp_path / "memory"
    repo = git.Repo.init(root, initial_branch="main")
    _commit(repo, {
        "system/persona.md": _fm("Who I am", "I am Rex.\n"),
        "reference/hotfix.md": _fm("Hotfixes", "Hotfixes may be pushed directly to the main branch.\n"),
        "reference/rollback.md": _fm("Rollbacks", "Hotfixes must never be pushed directly to the main "
                                                  "branch.\n"),
    }, "Initial commit", "2026-03-01")
    proposal = review(memlab.load(root), as_of="2026-03-02", embedder=embedder)
    [con] = [c for c in proposal.choices if c.section == "contradictions"]
    keeps = {proposal.item(o).target.get("keeps") for o in con.options}
    assert keeps == {"reference/hotfix.md", "reference/rollback.md", None}
    md = proposal.write(tmp_path / "r")
    text = md.read_text()
    # One choice, its options listed together under one heading that says to tick one.
    heading = next(line for line in text.splitlines() if line.startswith("### ") and "contradiction" in line)
    assert "(tick one option)" in heading
    block = text.split(heading, 1)[1].split("\n### ", 1)[0]
    assert all(f"`{o}`" in block for o in con.options)
    _tick(md, con.options[0], con.options[2])  # keep hotfix AND keep both
    head = repo.head.commit
    with pytest.raises(ProposalRejected, match=r"choice 1 \(contradiction\) has 2 options ticked"):
        apply_proposal(md)
    assert repo.head.commit == head
    from memlab.cli import main

    assert main(["apply", str(md)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2 options ticked" in err[0]


# ---- an elfmem substrate -----------------------------------------------------------------------
def test_substrate_archives_a_duplicate_and_refuses_a_pinned_block(tmp_path, embedder):
    root = tmp_path / "project"
    repo = git.Repo.init(root, initial_branch="main")
    notes = format_blockfile([
        Block(title="WAL readers", body="SQLite WAL mode lets readers continue while a single writer commits.",
              id="a000000000000001", created="2026-01-01T09:00:00+00:00", tags=["tech/db"]),
        Block(title="Minimum force", body="Nature wastes nothing. Apply the minimum force that solves the problem.",
              id="a000000000000002", created="2026-01-02T09:00:00+00:00", pinned=True,
              tags=["self/constitutional"]),
        Block(title="WAL again", body="SQLite WAL mode lets readers proceed while one writer commits.",
              id="a000000000000003", created="2026-02-01T09:00:00+00:00", tags=["tech/db"]),
        Block(title="Force again", body="Nature wastes nothing: apply the minimum force that solves a problem.",
              id="a000000000000004", created="2026-02-02T09:00:00+00:00"),
    ])
    ledger = format_ledger([{"t": "2026-02-03T09:00:00+00:00", "s": 1, "ah": 1.0, "k": "use",
                             "id": "a000000000000003"}])
    _commit(repo, {".elfmem/memory/self.md": "I value clarity.\n",
                   ".elfmem/memory/notes/knowledge.md": notes,
                   ".elfmem/ledger/2026-02.jsonl": ledger, "README.md": "A project.\n"},
            "elfmem: substrate", "2026-02-03")
    store = memlab.load(root)
    assert store.kind == "elfmem_substrate"
    proposal = review(store, as_of="2026-02-10", embedder=embedder)
    # The newer WAL block was used (a ledger `use` event): usage beats age for the survivor.
    survivors = {c["survivor"]: c["why"] for c in proposal.clusters}
    assert set(survivors) == {"a000000000000003", "a000000000000002"}
    assert survivors["a000000000000003"] == "retrieved 1 times vs 0"
    recommended = {u for c in proposal.choices for u in proposal.item(c.options[0]).target["removes"]}
    assert recommended == {"a000000000000001", "a000000000000004"}
    assert "a000000000000002" not in _removed(proposal)  # pinned: no option removes it
    keep = _option(proposal, _choice(proposal, "duplicates", "a000000000000001"), "keep",
                   keeps="a000000000000003")
    md = proposal.write(tmp_path / "r")
    _tick(md, keep.id)
    result = apply_proposal(md)
    after = repo.head.commit
    assert set(result.files) == {".elfmem/memory/notes/knowledge.md", ".elfmem/memory/archive/knowledge.md"}
    kept = (after.tree / ".elfmem/memory/notes/knowledge.md").data_stream.read().decode()
    archived = (after.tree / ".elfmem/memory/archive/knowledge.md").data_stream.read().decode()
    assert "a000000000000001" not in kept and "WAL readers" in archived
    assert "id: a000000000000001" in archived
    reloaded = memlab.load(root)
    blocks = reloaded.blocks
    assert sorted(blocks.loc[blocks["section"] == "notes", "id"]) == \
        ["a000000000000002", "a000000000000003", "a000000000000004"]
    assert list(blocks.loc[blocks["section"] == "archive", "id"]) == ["a000000000000001"]
    assert reloaded.problems.empty, reloaded.problems

    # A forged item against the pinned constitutional block is refused at apply.
    proposal = review(reloaded, as_of="2026-02-10", embedder=embedder)
    proposal.items.append(Item(
        id="dup-00000000ff", section="duplicates", action="archive_block", summary="forced",
        target={"uid": "a000000000000002", "file": ".elfmem/memory/notes/knowledge.md"}, evidence={},
        change={"op": "archive_block", "file": ".elfmem/memory/notes/knowledge.md",
                "block_id": "a000000000000002", "to": ".elfmem/memory/archive/knowledge.md",
                "text": "forced"}))
    proposal.choices.insert(0, Choice(id="choice-00000000f2", section="duplicates", kind="forged",
                                      title="forged", options=["dup-00000000ff"], impact={}))
    md = proposal.write(tmp_path / "forged")
    _tick(md, "dup-00000000ff")
    with pytest.raises(ProposalRejected, match="pinned and constitutional"):
        apply_proposal(md)


# ---- notebook views --------------------------------------------------------------------------
def test_views_place_duplicates_together_and_browse_writes_ticks(embedder, tmp_path):
    from memlab import plots
    from memlab.reviews import views

    proposal = review(memlab.load(SCHEMA9), as_of="2026-11-30", embedder=embedder)
    xy = views.projection(proposal).set_index("uid")
    assert len(xy) == len(proposal.units)
    spread = float(((xy[["x", "y"]] - xy[["x", "y"]].mean()) ** 2).sum(axis=1).mean() ** 0.5)
    for c in proposal.clusters:  # near-duplicates sit much closer than the typical unit
        a, b = c["members"][:2]
        assert float(((xy.loc[a, ["x", "y"]] - xy.loc[b, ["x", "y"]]) ** 2).sum() ** 0.5) < spread
    assert views.projection(proposal).equals(views.projection(proposal))  # deterministic
    ax = plots.similarity_histogram(proposal).axes[0]
    n = len(proposal.units)
    assert len(proposal.similarities) == n * (n - 1) // 2
    assert any("near_duplicate 0.90" in t.get_text() for t in ax.get_legend().get_texts())
    drawn = plots.cluster_map(proposal).axes[0]
    stars = [c for c in drawn.collections if len(c.get_offsets()) == 1 and c.get_sizes()[0] == 220]
    assert len(stars) == len(proposal.clusters)  # one star per cluster survivor
    table = views.cluster_table(proposal)
    assert table["survivor"].sum() == len(proposal.clusters)
    m = views.metrics(proposal)
    assert (m["duplicate_clusters"], m["duplicates_choices"], m["protected_units"]) == (4, 4, 10)

    widget = views.browse(proposal, tmp_path)
    chooser, box, (button, status) = widget.children[0], widget.children[1], widget.children[2].children
    first = box.children[0].children[0]
    first.value = True
    button.click()
    text = next(tmp_path.glob("review-*.md")).read_text()
    assert f"- [x] `{proposal.items[0].id}`" in text
    assert read_proposal(next(tmp_path.glob("review-*.md"))).ticked == {proposal.items[0].id}


def test_a_blob_gone_from_the_repo_or_not_utf8_is_refused_by_name(tmp_path):
    import git

    from memlab.errors import ProposalRejected, StaleProposal
    from memlab.reviews._apply_edits import blob_text

    from memlab.reviews._repo import open_repo

    repo = git.Repo.init(tmp_path)
    (tmp_path / "system").mkdir()
    (tmp_path / "system" / "bin.md").write_bytes(b"\xff\xfe not utf-8")
    repo.index.add(["system/bin.md"])
    sha = repo.index.entries[("system/bin.md", 0)].hexsha
    repo = open_repo(tmp_path)
    with pytest.raises(ProposalRejected, match="system/bin.md is not UTF-8"):
        blob_text(repo, sha, "system/bin.md")
    with pytest.raises(StaleProposal, match="system/gone.md"):
        blob_text(repo, "ab" * 20, "system/gone.md")


def test_merge_keeps_the_sentence_only_the_duplicate_holds(tmp_path, embedder):
    root = tmp_path / "memory"
    repo = git.Repo.init(root, initial_branch="main")
    _commit(repo, {"system/persona.md": _fm("Who I am", "I am Rex.\n"),
                   "reference/backups.md": _fm("Backups", "Backups of the orders database run nightly "
                                               "at 02:00 UTC and are kept for thirty days in the "
                                               "eu-west-1 bucket.\n")}, "init", "2026-03-01")
    _commit(repo, {"reference/backups-2.md": _fm("Backups again", "The orders database is backed up "
                                                 "every night at 02:00 UTC and kept for thirty days in "
                                                 "the eu-west-1 bucket. Restores are tested monthly.\n")},
            "more", "2026-03-02")
    proposal = review(memlab.load(root), as_of="2026-03-03", embedder=embedder)
    choice = _choice(proposal, "duplicates", "reference/backups-2.md")
    assert [proposal.item(o).option for o in choice.options] == ["keep", "keep", "merge", "keep_all"]
    merge = _option(proposal, choice, "merge")
    assert merge.target == {**merge.target, "keeps": "reference/backups.md",
                            "removes": ["reference/backups-2.md"]}
    md = proposal.write(tmp_path / "r")
    _tick(md, merge.id)
    result = apply_proposal(md)
    after = repo.head.commit
    assert result.commit == after.hexsha
    kept = (after.tree / "reference/backups.md").data_stream.read().decode()
    assert kept.startswith("---\ndescription: Backups\n---\n\n")
    assert "Backups of the orders database run nightly" in kept and "Restores are tested monthly." in kept
    assert "reference/backups-2.md" not in [b.path for b in after.tree.traverse()]
