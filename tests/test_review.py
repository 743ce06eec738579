"""memlab.review: proposals on real elfmem samples, and the apply round trip on real git repos."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import git
import pytest

import memlab
from memlab.embed import get_embedder
from memlab.errors import ProposalRejected, StaleProposal
from memlab.formats.blockfile import Block, format_blockfile, format_ledger
from memlab.review import Item, apply_proposal, read_proposal, review

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
        assert pair["similarity"] >= 0.90  # MiniLM agrees with elfmem's own detector
        # Exactly one of the two is proposed for archiving, with the other as survivor.
        removals = [it for it in proposal.items if it.section == "duplicates"
                    and it.target["uid"] in (a, b)]
        assert len(removals) == 1
        assert removals[0].evidence["survivor"] in (a, b)
        assert removals[0].evidence["recorded_near_duplicate"] == pytest.approx(score, abs=1e-4)


def test_schema9_never_removes_pinned_or_constitutional_blocks(embedder):
    store = memlab.load(SCHEMA9)
    proposal = review(store, as_of="2027-06-01", embedder=embedder)  # late: most blocks are stale
    protected = _protected_ids(store)
    assert "50bb7e4575aab7fe" in protected  # the seeded minimum-force block
    removed = {it.target["uid"] for it in proposal.items if it.action == "archive"}
    assert removed, "the review proposes archiving something"
    assert not removed & protected
    # The constitutional block has a paraphrase (0.94): it must be the survivor, not the victim.
    cluster = next(c for c in proposal.clusters if "50bb7e4575aab7fe" in c["members"])
    assert cluster["survivor"] == "50bb7e4575aab7fe"
    assert "constitutional" in cluster["why"]
    assert {it.target["uid"] for it in proposal.items if it.group == cluster["id"]} == {"63059c44993bfa67"}
    # An elfmem database is reviewed but never written: every item is a checklist item.
    assert all(not it.appliable for it in proposal.items)


def test_schema5_contradiction_row_and_eroded_constitution(embedder):
    store = memlab.load(SCHEMA5)
    proposal = review(store, as_of="2026-11-30", embedder=embedder)
    con = [it for it in proposal.items if it.section == "contradictions"]
    assert {it.target["uid"] for it in con} == {"1ce443276aabea51", "e2e29cc8296f405a"}
    assert all(it.exclusive and it.group == con[0].group for it in con)
    assert any("recorded" in str(it.evidence.get("source")) for it in con)
    # 0.19.2 superseded the seeded minimum-force block: the role is missing, and the evidence
    # names the archived seed block and why it went.
    missing = next(it for it in proposal.items if it.section == "drift"
                   and it.evidence.get("role") == "minimum-force")
    assert missing.evidence["seed_block"] == "50bb7e4575aab7fe"
    assert missing.evidence["archive_reason"] == "superseded"
    changed = next(it for it in proposal.items if it.section == "drift"
                   and it.evidence.get("role") == "curiosity")
    assert changed.target["uid"] == "c75b02a4dc4ef807"
    assert 0 < changed.evidence["similarity"] < 0.95


def test_stale_follows_the_span_and_outcomes(embedder):
    store = memlab.load(SCHEMA9)
    early = review(store, as_of="2026-11-30", embedder=embedder)
    assert not [it for it in early.items if it.section == "stale"]
    late = review(store, as_of="2027-06-01", stale_after_days=90, embedder=embedder)
    stale = {it.target["uid"] for it in late.items if it.section == "stale"}
    assert "a80f78b342f87ffb" in stale  # British spelling: reinforced once, never an outcome
    outcome_blocks = set(store.outcomes["block_id"].astype(str))
    assert not stale & outcome_blocks  # an outcome is evidence of use
    longer = review(store, as_of="2027-06-01", stale_after_days=400, embedder=embedder)
    assert not [it for it in longer.items if it.section == "stale"]


def test_proposal_file_is_markdown_with_a_json_twin(embedder, tmp_path):
    proposal = review(memlab.load(SCHEMA9), as_of="2026-11-30", embedder=embedder)
    md = proposal.write(tmp_path)
    assert md.name == f"review-{proposal.made_at[:10]}.md"
    twin = json.loads(md.with_suffix(".json").read_text())
    text = md.read_text()
    assert twin["store"]["kind"] == "elfmem_db"
    assert twin["fingerprint"]["sha256"] and twin["fingerprint"]["sha256"] in text
    for it in proposal.items:
        assert f"- [ ] `{it.id}`" in text
    back = read_proposal(md)
    assert [i.id for i in back.items] == [i.id for i in proposal.items]
    # Same store, same thresholds: same ids (stable across runs).
    again = review(memlab.load(SCHEMA9), as_of="2026-11-30", embedder=embedder)
    assert [i.id for i in again.items] == [i.id for i in proposal.items]
    # Applying a database proposal is refused with a way forward.
    first = proposal.items[0].id
    md.write_text(text.replace(f"- [ ] `{first}`", f"- [x] `{first}`"))
    with pytest.raises(ProposalRejected, match="memory repos only"):
        apply_proposal(md)


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
    dups = {it.target["uid"]: it for it in proposal.items if it.section == "duplicates"}
    # The read-only policy survives its paraphrase; the older SQLite note survives the newer.
    assert set(dups) == {"reference/deploy.md", "reference/sqlite-notes.md"}
    assert dups["reference/deploy.md"].evidence["survivor"] == "system/policies.md"
    assert dups["reference/sqlite-notes.md"].evidence["survivor"] == "reference/sqlite.md"
    assert all(it.target["uid"] != "system/policies.md" for it in proposal.items)
    drift = _item(proposal, section="drift")
    assert drift.target["file"] == "system/persona.md" and drift.action == "restore_file"
    limit = _item(proposal, section="limits")
    assert limit.target["file"] == "system/active.md" and limit.change["value"] == "400"
    rule = _item(proposal, section="rules")
    assert rule.change == {**rule.change, "op": "remove_key", "key": "metadata", "file": "system/notes.md"}
    fp = proposal.fingerprint
    assert fp["head_sha"] == git.Repo(letta_repo).head.commit.hexsha
    assert set(fp["files"]) >= {"reference/deploy.md", "system/persona.md", "system/notes.md"}


def test_apply_round_trip_commits_exactly_the_ticked_items(letta_repo, embedder, tmp_path):
    repo = git.Repo(letta_repo)
    before = repo.head.commit
    proposal = review(memlab.load(letta_repo), as_of="2026-03-12", embedder=embedder)
    md = proposal.write(tmp_path / "reviews")
    dup = _item(proposal, section="duplicates", uid="reference/sqlite-notes.md")
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
    # Applying the same proposal again changes nothing and says so.
    again = apply_proposal(md)
    assert repo.head.commit == after and "already applied" in again.summary()


def test_apply_on_a_new_branch_leaves_the_checkout(letta_repo, embedder, tmp_path):
    repo = git.Repo(letta_repo)
    before = repo.head.commit
    proposal = review(memlab.load(letta_repo), as_of="2026-03-12", embedder=embedder)
    md = proposal.write(tmp_path)
    drift = _item(proposal, section="drift")
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
    dup = _item(proposal, section="duplicates", uid="reference/deploy.md")
    original = md.read_text()

    # An edit beyond ticking: a change of the evidence text.
    _tick(md, dup.id)
    md.write_text(md.read_text().replace("similarity 0.", "similarity 1.", 1))
    with pytest.raises(StaleProposal, match=r"edited beyond ticking at line \d+") as err:
        apply_proposal(md)
    assert err.value.path == md

    # An edited twin.
    md.write_text(original)
    twin = md.with_suffix(".json")
    data = json.loads(twin.read_text())
    data["items"][0]["change"]["file"] = "system/policies.md"
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
    md = proposal.write(tmp_path)
    _tick(md, "dup-0000000001")
    with pytest.raises(ProposalRejected, match="read_only") as err:
        apply_proposal(md)
    assert "system/policies.md" in str(err.value)

    proposal.items.pop()
    md = proposal.write(tmp_path / "dirty")
    rule = _item(proposal, section="rules")
    _tick(md, rule.id)
    (letta_repo / "system/human.md").write_text("edited by hand\n")
    with pytest.raises(ProposalRejected, match="uncommitted changes"):
        apply_proposal(md)


def test_contradiction_alternatives_cannot_both_be_ticked(tmp_path, embedder):
    root = tmp_path / "memory"
    repo = git.Repo.init(root, initial_branch="main")
    _commit(repo, {
        "system/persona.md": _fm("Who I am", "I am Rex.\n"),
        "reference/hotfix.md": _fm("Hotfixes", "Deploy fixes as a hotfix directly on prod when it is urgent.\n"),
        "reference/rollback.md": _fm("Rollbacks", "Deploy rollbacks use the previous tagged release, "
                                                  "never a hotfix on prod.\n"),
    }, "Initial commit", "2026-03-01")
    proposal = review(memlab.load(root), as_of="2026-03-02", embedder=embedder)
    con = [it for it in proposal.items if it.section == "contradictions"]
    assert {it.target["uid"] for it in con} == {"reference/hotfix.md", "reference/rollback.md"}
    md = proposal.write(tmp_path / "r")
    _tick(md, *(it.id for it in con))
    with pytest.raises(ProposalRejected, match="alternatives"):
        apply_proposal(md)


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
    removals = {it.target["uid"]: it for it in proposal.items if it.section == "duplicates"}
    assert set(removals) == {"a000000000000001", "a000000000000004"}
    md = proposal.write(tmp_path / "r")
    _tick(md, removals["a000000000000001"].id)
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
    md = proposal.write(tmp_path / "forged")
    _tick(md, "dup-00000000ff")
    with pytest.raises(ProposalRejected, match="pinned and constitutional"):
        apply_proposal(md)


# ---- notebook views --------------------------------------------------------------------------
def test_views_place_duplicates_together_and_browse_writes_ticks(embedder, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from memlab.review import views

    proposal = review(memlab.load(SCHEMA9), as_of="2026-11-30", embedder=embedder)
    xy = views.projection(proposal).set_index("uid")
    assert len(xy) == len(proposal.units)
    spread = float(((xy[["x", "y"]] - xy[["x", "y"]].mean()) ** 2).sum(axis=1).mean() ** 0.5)
    for c in proposal.clusters:  # near-duplicates sit much closer than the typical unit
        a, b = c["members"][:2]
        assert float(((xy.loc[a, ["x", "y"]] - xy.loc[b, ["x", "y"]]) ** 2).sum() ** 0.5) < spread
    assert views.projection(proposal).equals(views.projection(proposal))  # deterministic
    ax = views.plot_similarity_histogram(proposal)
    n = len(proposal.units)
    assert len(proposal.similarities) == n * (n - 1) // 2
    assert any("near_duplicate 0.90" in t.get_text() for t in ax.get_legend().get_texts())
    views.plot_cluster_map(proposal)
    table = views.cluster_table(proposal)
    assert table["survivor"].sum() == len(proposal.clusters)
    m = views.metrics(proposal)
    assert (m["duplicate_clusters"], m["duplicates_items"], m["protected_units"]) == (4, 4, 10)

    widget = views.browse(proposal, tmp_path)
    chooser, box, (button, status) = widget.children[0], widget.children[1], widget.children[2].children
    first = box.children[0].children[0]
    first.value = True
    button.click()
    text = next(tmp_path.glob("review-*.md")).read_text()
    assert f"- [x] `{proposal.items[0].id}`" in text
    assert read_proposal(next(tmp_path.glob("review-*.md"))).ticked == {proposal.items[0].id}


def test_memlab_review_stays_callable_after_a_submodule_import(embedder):
    from memlab.review import Proposal, views  # noqa: F401 - binds the package to memlab.review

    assert isinstance(memlab.review(memlab.load(SCHEMA9), as_of="2026-11-30", embedder=embedder),
                      Proposal)


def test_a_blob_gone_from_the_repo_or_not_utf8_is_refused_by_name(tmp_path):
    import git

    from memlab.errors import ProposalRejected, StaleProposal
    from memlab.review._apply import _blob_text

    from memlab.review._repo import open_repo

    repo = git.Repo.init(tmp_path)
    (tmp_path / "system").mkdir()
    (tmp_path / "system" / "bin.md").write_bytes(b"\xff\xfe not utf-8")
    repo.index.add(["system/bin.md"])
    sha = repo.index.entries[("system/bin.md", 0)].hexsha
    repo = open_repo(tmp_path)
    with pytest.raises(ProposalRejected, match="system/bin.md is not UTF-8"):
        _blob_text(repo, sha, "system/bin.md")
    with pytest.raises(StaleProposal, match="system/gone.md"):
        _blob_text(repo, "ab" * 20, "system/gone.md")
