"""Souveraine's review rule lives in its kind's package (issue 36; memlab/kinds/souveraine/
_rules.py): every memory file carries frontmatter with a non-empty description. Checked on the
rule itself and through ``memlab.review`` of a real Souveraine agent dir (git, agent.yaml),
with hard negatives: what Letta Code's hook refuses (an unknown key) is not Souveraine's rule."""

from __future__ import annotations

import datetime as dt

import pytest
from memfs_repos import SOUVERAINE, _Writer, build_souveraine

import memlab
from memlab import kinds, reviews
from memlab.embed import get_embedder
from memlab.kinds.souveraine._rules import SouveraineRules, souveraine_violations


def _rules(text: str) -> list[str]:
    return [rule for rule, _ in souveraine_violations("memory/a.md", text, variant="current",
                                                      all_paths={"memory/a.md"})]


def test_the_rule_wants_frontmatter_with_a_description():
    assert _rules("Just text.\n") == ["missing_frontmatter"]
    assert _rules("---\nlimit: 5\n---\nbody\n") == ["missing_description"]
    assert _rules("---\ndescription: '   '\n---\nbody\n") == ["missing_description"]
    # negatives: a description is all it asks; keys Letta Code's hook refuses are not its rule
    assert _rules("---\ndescription: Notes\n---\nbody\n") == []
    assert _rules("---\ndescription: Notes\nmetadata: x\nfoo: 1\n---\nbody\n") == []


def test_the_kind_names_its_own_rules_and_memlab_reviews_still_exports_them():
    rules = kinds.get("souveraine").review.resolved.rules
    assert type(rules) is SouveraineRules and reviews.SouveraineRules is SouveraineRules
    hook = kinds.get("letta_memfs").review.resolved.rules
    assert type(hook) is reviews.LettaHook and type(hook).__module__.startswith(
        "memlab.kinds.letta_memfs")


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return get_embedder(cache_dir=tmp_path_factory.mktemp("souv-rules-cache"))


def test_review_of_a_souveraine_dir_flags_exactly_the_files_breaking_its_rule(tmp_path, embedder):
    agent = tmp_path / "agent"
    build_souveraine(agent)
    _Writer(agent / "memory").commit(
        "memory write: notes", SOUVERAINE, dt.datetime(2026, 5, 4, 10, tzinfo=dt.timezone.utc),
        files={
            "memory/notes/bare.md": "No frontmatter at all.\n",
            "memory/notes/blank.md": "---\ndescription: ''\n---\n\nEmpty description.\n",
            # negatives: a Letta-only key and a plain good file
            "memory/notes/extra.md": "---\ndescription: Extra\nmetadata: kept\n---\n\nFine.\n",
            "memory/notes/good.md": "---\ndescription: Good\n---\n\nFine too.\n",
        })
    store = memlab.load(agent)
    assert store.kind == "souveraine"
    proposal = reviews.review(store, as_of="2026-05-05", embedder=embedder)
    flagged = {}
    for item in proposal.items:
        if item.section == "rules":
            flagged.setdefault(item.target["file"], set()).add(item.action)
    # the fix each breach offers: frontmatter added, a description set; nothing else
    assert flagged == {"memory/notes/bare.md": {"add_frontmatter"},
                       "memory/notes/blank.md": {"set_description"}}
