"""A kind's review adapter and verify are behaviour objects (issue 36, item 1): every built-in
kind's resolve to objects implementing the protocols of :mod:`memlab.kinds`, a legacy string
("forget") is refused where the adapter is made, and a plugin's own object is what review
calls (the toy distribution's end-to-end run is tests/test_kind_plugin.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from memlab import kinds, migrations, reviews

PROTOCOLS = {"removal": kinds.Removal, "edit": kinds.Edit, "apply": kinds.Apply,
             "drift": kinds.Drift, "rules": kinds.Rules}


def test_every_built_in_kind_holds_behaviour_objects_not_strings():
    seen = set()
    for kind in kinds.kinds():
        if kind.review is not None:
            adapter = kind.review.resolved
            for field, protocol in PROTOCOLS.items():
                value = getattr(adapter, field)
                assert value is None or isinstance(value, protocol), (kind.name, field, value)
                if value is not None:
                    seen.add(type(value).__name__)
            assert adapter.removal is not None and adapter.apply is not None
        verifier = kind.verifier()
        assert verifier is None or isinstance(verifier, kinds.Verifier), kind.name
        if verifier is not None:
            seen.add(type(verifier).__name__)
    # each of memlab's objects is used by some built-in kind (ByHand is only a default); a
    # kind package may bring its own (mem0's and letta_memfs's verifiers), which memlab's engines do not export
    own = {n for n in seen if not (hasattr(reviews, n) or hasattr(migrations, n))}
    assert own == {"Mem0Parity", "MemfsParity"}
    assert seen - own == {"Forget", "ArchiveBlock", "DeleteFile", "InLetta", "ElfmemEdit", "SetBody",
                    "GitCommit", "ElfmemScript", "Checklist", "SeedDrift", "FileDrift",
                    "LettaHook", "SouveraineRules", "AgentLimits", "ElfmemParity",
                    "BlocksParity", "ServerParity"}
    # which kind brings which of its own (MemfsParity runs UpgradeParity for a v1 -> v2 copy
    # and its own checks for a claude_memory copy)
    mine = {"MemfsParity": "letta_memfs", "Mem0Parity": "mem0"}
    assert all(type(kinds.get(k).verifier()).__name__ == n for n, k in mine.items())


def test_a_string_that_names_no_object_is_refused_where_the_adapter_is_made():
    with pytest.raises(TypeError, match="removal= takes an object.*'forget'"):
        kinds.Review(units=lambda s: None, removal="forget")
    with pytest.raises(TypeError, match="apply= takes an object.*'commit'"):
        kinds.Review(units=lambda s: None, apply="commit")
    # a "module:attribute" string names an object, resolved once; an object is kept as given
    review = kinds.Review(units=lambda s: None, removal="memlab.reviews:Forget")
    assert isinstance(review.resolved.removal, reviews.Forget)
    assert review.resolved is review.resolved
    own = reviews.DeleteFile()
    assert kinds.Review(units=lambda s: None, removal=own).resolved.removal is own
    # the defaults: a checklist line, a checklist proposal
    plain = kinds.Review(units=lambda s: None).resolved
    assert isinstance(plain.removal, reviews.ByHand) and isinstance(plain.apply,
                                                                    reviews.Checklist)
    assert plain.edit is None and plain.drift is None and plain.rules is None


def test_review_calls_the_kinds_own_removal(tmp_path):
    """A kind registered with its own removal object: the proposal's steps are that object's,
    for every unit review proposes to remove (and none of memlab's removal ops appear)."""
    from memlab.store import Store

    calls = []

    class Shelve:
        op = "shelve"

        def step(self, unit, *, reason):
            calls.append((str(unit["uid"]), reason))
            return {"op": self.op, "uid": str(unit["uid"]), "text": f"shelve {unit['uid']}"}

        def apply(self, edits, step, item):
            raise AssertionError("review never applies")

    old = pd.Timestamp("2025-01-01", tz="UTC")

    def units(store):
        return reviews.units_frame([
            {"uid": f"u{i}", "unit": "block", "title": t, "text": t, "status": "block",
             "tags": [], "protected": i == 2, "created": old, "chars": len(t)}
            for i, t in enumerate(["the cat sleeps on the mat", "tax forms are due in april",
                                   "a pinned note that is never removed"])])

    path = tmp_path / "x.shelf"
    path.write_text("x")
    kinds.register("shelf_test", display="shelf", load=lambda p: Store("shelf_test", p, {}),
                   review=kinds.Review(units=units, removal=Shelve()))
    try:
        store = Store("shelf_test", path, {})
        proposal = reviews.review(store, as_of="2026-06-01", progress=False)
    finally:
        kinds.unregister("shelf_test")
    ops = {s["op"] for it in proposal.items for s in it.change["steps"]}
    assert ops == {"shelve"}
    assert sorted(calls) == [("u0", "decayed"), ("u1", "decayed")]  # the protected one: never
    assert proposal.fingerprint.keys() == {"sha256", "bytes"}  # the default apply: a checklist
    assert not any(it.appliable for it in proposal.items if it.change["steps"])


def test_register_and_kind_take_keywords_after_the_name():
    with pytest.raises(TypeError):
        kinds.register("kw_test", "a display", "memlab.sources:load")  # type: ignore[misc]
    with pytest.raises(TypeError):
        kinds.Kind("kw_test", "a display", "memlab.sources:load")  # type: ignore[misc]
    kind = kinds.Kind(name="kw_test", display="a display", load_ref="memlab.sources:load")
    assert kind.review is None and kind.verifier() is None and kind.detect is None
    assert "kw_test" not in {k.name for k in kinds.kinds()}  # made, never registered
