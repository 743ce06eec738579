"""The elfmem audit: the v2 doc's figures from the demo instance, real samples, every schema."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import sqlite3
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure

import memlab.plots as plots
from memlab.audits import audit, compare
from memlab.audits import seeds
from memlab.kinds.elfmem_db._audit import audit_elfmem, gini, lorenz
from memlab.errors import MemlabError, StoreNotFound, UnsupportedSchema
from memlab.kinds.elfmem_db._load import load_elfmem
from memlab.store import Store

from elfmem_schemas import build_db

DEMO = "demo/elfmem-demo.db"
S5 = "samples/elfmem/elfmem-0.19.2-schema5.db"
S9 = "samples/elfmem/elfmem-0.20.0-schema9.db"
AS_OF = "2026-08-04"


@pytest.fixture(scope="module")
def demo(data_dir):
    return audit(data_dir / DEMO, as_of=AS_OF)


@pytest.fixture(scope="module")
def s5(data_dir):
    return audit(data_dir / S5)


@pytest.fixture(scope="module")
def s9(data_dir):
    return audit(data_dir / S9)


# ── the demo reproduces the doc, as printed ───────────────────────────────────────────────

def test_demo_summary_prints_the_docs_derived_figures(demo):
    text = demo.summary()
    lines = {line.strip().split("  ")[0]: line for line in text.splitlines()}
    assert lines["LLM calls per surviving block"].endswith(" 20.7")
    assert lines["Input tokens per corpus token"].endswith(" 52.1×")
    assert lines["Input tokens per summary token"].endswith(" 188.7×")
    assert "recency after 3.69 h: 1.0000 / 0.9963 / 0.9638 / 0.8317" in text
    assert "tags per block: 4.4 vs 0.17" in text
    assert "3.69 total active hours across 370 sessions (average session: 36 s)" in text
    assert "GPU time at 14 s/call              11.3 h" in text


def test_demo_summary_prints_the_raw_counts(demo):
    text = demo.summary()
    for expected in ["Lifetime LLM calls                 2,903",
                     "Lifetime LLM input tokens          1,646,801",
                     "Lifetime LLM output tokens         60,186",
                     "Embedding calls                    49",
                     "Blocks ever created                185",
                     "Blocks active now                  140 (inbox 3, archived 42)",
                     "126,532 chars", "34,908 chars ≈ 8,727 tokens",
                     "superseded 41, decayed 1", "supersession : decay = 41:1",
                     "4 of 10 role slots remain, 4 with content different from the seed",
                     "contradictions: 14 found, 12 unresolved",
                     "outcome records: 6; amendments: 0",
                     "edges: 53 (27 similar, 9 co_occurs, 9 replies_to, 8 predicts)",
                     "mind/* blocks: 3",
                     "top counts: 92, 74, 67, 64, 36, 25, 20, 20, 19, 19",
                     "last consolidated 2026-06-21", "inbox: 3 block(s)",
                     "superseded_by: not recorded (schema 5 < 6)"]:
        assert expected in text, expected
    assert "deletes an archived block's tags" in text


def test_demo_headline_is_flat_json_with_exact_counts(demo):
    h = demo.headline
    assert json.loads(json.dumps(h)) == h
    assert all(not isinstance(v, (dict, list)) for v in h.values())
    assert (h["llm_calls"], h["llm_input_tokens"], h["llm_output_tokens"],
            h["embedding_calls"]) == (2903, 1_646_801, 60_186, 49)
    assert (h["blocks_ever"], h["blocks_active"], h["blocks_inbox"],
            h["blocks_archived"]) == (185, 140, 3, 42)
    assert (h["live_chars"], h["summary_chars"]) == (126_532, 34_908)
    assert (h["live_tokens"], h["summary_tokens"]) == (31_586.0, 8_727.0)
    assert round(h["calls_per_surviving_block"], 1) == 20.7
    assert round(h["input_per_corpus_token"], 1) == 52.1
    assert round(h["input_per_summary_token"], 1) == 188.7
    assert h["gpu_hours"] == pytest.approx(2903 * 14 / 3600)
    assert (h["archived_superseded"], h["archived_decayed"]) == (41, 1)
    assert h["supersession_to_decay"] == 41.0
    assert [round(h[f"recency_{t}"], 4) for t in ("permanent", "durable", "standard",
                                                   "ephemeral")] == [1.0, 0.9963, 0.9638, 0.8317]
    assert (h["role_slots_seeded"], h["role_slots_left"], h["role_slots_changed"]) == (10, 4, 4)
    assert (h["tags_active"], h["tags_archived"]) == (616, 7)
    assert (h["contradictions"], h["contradictions_unresolved"], h["outcomes"],
            h["amendments"], h["mind_blocks"]) == (14, 12, 6, 0, 3)
    assert (h["edges"], h["edges_similar"], h["edges_co_occurs"], h["edges_replies_to"],
            h["edges_predicts"]) == (53, 27, 9, 9, 8)
    assert h["reinforcement_top10"] == "92, 74, 67, 64, 36, 25, 20, 20, 19, 19"


def test_demo_constitution_shows_which_slots_eroded_and_how(demo):
    cons = demo["constitution"].set_index("role")
    kept = cons[cons["state"].eq("changed")]
    assert sorted(kept.index) == ["feedback-loop", "minimum-force", "stewardship", "uncertainty"]
    assert cons.at["uncertainty", "live_content"].startswith(
        "Authoritative state is read, never inferred")
    assert str(cons.at["uncertainty", "live_created_at"].date()) == "2026-05-08"
    # every original still holds the seeded text, archived as superseded
    assert set(cons["original_status"]) == {"archived"}
    assert set(cons["original_archive_reason"]) == {"superseded"}
    assert not cons["original_content_changed"].any()
    assert cons.loc["identity", "state"] == "lost"
    prot = demo["protected_superseded"]
    rhythms = prot[prot["content"].str.startswith("The four rhythms")]
    assert len(rhythms) == 1
    assert rhythms["decay_lambda"].iloc[0] == 1e-05 and rhythms["confidence"].iloc[0] == 1.0


def test_demo_staleness_against_the_docs_today(demo):
    st = demo["staleness"].iloc[0]
    assert str(st["last_consolidated_at"].date()) == "2026-06-21"
    assert 43 < st["consolidation_age_days"] < 44
    inbox = demo["inbox"]
    assert len(inbox) == 3 and (inbox["age_days"] >= 42).all()  # six weeks


def test_tags_caveat_travels_with_the_numbers(demo):
    tags = demo["tags"].set_index("status")
    assert tags.at["archived", "tags"] == 7 and tags.at["archived", "blocks"] == 42
    assert any("deletes an archived block's tags" in n for n in demo.notes)


def test_recency_per_block_uses_each_blocks_own_lambda(demo):
    per = demo["recency_blocks"]
    hours = demo.headline["total_active_hours"]
    assert len(per) == 143  # active + inbox
    expected = (-per["decay_lambda"] * (hours - per["last_reinforced_at"]).clip(lower=0)).map(
        math.exp)
    assert (per["recency"] - expected).abs().max() < 1e-12
    penalised = per[per["penalised"]]
    # one negative outcome doubled a STANDARD lambda (elfmem: x2 per penalty, capped at 0.05)
    assert list(penalised["decay_lambda"]) == [0.02] and list(penalised["tier"]) == ["STANDARD"]
    assert not per["tier"].eq("other").any()
    assert any("1 live STANDARD block(s) decay faster" in n for n in demo.notes)
    assert not per["below_prune"].any()


def test_reinforcement_concentration(demo, data_dir):
    top = demo["reinforcement_top"]
    assert list(top["reinforcement_count"]) == [92, 74, 67, 64, 36, 25, 20, 20, 19, 19]
    assert top["self_block"].iloc[:4].all()  # the surviving role blocks lead
    store = load_elfmem(data_dir / DEMO)
    counts = store.blocks.loc[store.blocks["status"] == "active", "reinforcement_count"]
    x = counts.astype("float64").to_numpy()
    # Gini by mean absolute difference, independent of the audit's rank formula
    mad_gini = abs(x[:, None] - x[None, :]).sum() / (2 * len(x) ** 2 * x.mean())
    assert demo.headline["reinforcement_gini"] == pytest.approx(mad_gini)
    assert demo.headline["reinforcement_top5_share"] == pytest.approx(
        (92 + 74 + 67 + 64 + 36) / x.sum())
    curve = demo["lorenz"]
    assert curve["share_of_reinforcement"].is_monotonic_increasing
    assert curve["share_of_reinforcement"].iloc[-1] == pytest.approx(1.0)


def test_seconds_per_call_only_scales_gpu_hours(data_dir):
    store = load_elfmem(data_dir / DEMO)
    fast = audit(store, as_of=AS_OF, seconds_per_call=7.0)
    slow = audit(store, as_of=AS_OF, seconds_per_call=14.0)
    assert fast.headline["gpu_hours"] * 2 == pytest.approx(slow.headline["gpu_hours"])
    assert fast.headline["llm_calls"] == slow.headline["llm_calls"]
    assert "GPU time at 7 s/call" in fast.summary()


# ── the real samples (written by elfmem 0.19.2 and 0.20.0) ────────────────────────────────

def test_schema5_sample_known_counts(s5, data_dir):
    expected = json.loads((data_dir / S5).with_suffix(".summary.json").read_text())
    h = s5.headline
    assert (h["archived_superseded"], h["archived_decayed"]) == (3, 4)
    assert h["blocks_ever"] == expected["tables"]["blocks"]
    assert (h["blocks_active"], h["blocks_archived"], h["blocks_inbox"]) == (
        expected["block_status"]["active"], expected["block_status"]["archived"],
        expected["block_status"]["inbox"])
    assert h["edges"] == expected["tables"]["edges"]
    assert h["edges_co_occurs"] == expected["edge_relations"]["co_occurs"]
    assert h["contradictions"] == expected["tables"]["contradictions"]
    assert h["llm_calls"] == 82 and h["llm_input_tokens"] == 27236
    assert h["superseded_by_recorded"] is False
    # the PERMANENT minimum-force seed was superseded; curiosity was amended in place
    cons = s5["constitution"].set_index("role")
    assert h["role_slots_left"] == expected["self_role_tags"] == 9
    assert cons.at["minimum-force", "state"] == "lost"
    assert cons.at["minimum-force", "original_archive_reason"] == "superseded"
    assert cons.at["curiosity", "state"] == "changed"
    assert cons.at["curiosity", "original_id"] == cons.at["curiosity", "live_block_id"]
    assert bool(cons.at["curiosity", "original_content_changed"])
    assert h["protected_superseded"] == 1


def test_schema9_sample_known_counts(s9, data_dir):
    expected = json.loads((data_dir / S9).with_suffix(".summary.json").read_text())
    h = s9.headline
    assert h["near_duplicates"] == expected["contradiction_kinds"]["near_duplicate"] == 3
    assert h["archived_forgotten"] == 1 and h["archived_superseded"] == 0
    assert h["supersession_to_decay"] is None
    assert h["superseded_by_recorded"] is True
    assert h["role_slots_left"] == expected["self_role_tags"] == 10
    assert h["edges"] == expected["tables"]["edges"]
    kinds = s9["subsystems"].set_index("measure")["value"]
    assert kinds["kind: near_duplicate"] == 3
    assert "near_duplicate 3" in s9.summary()


def test_audit_leaves_the_files_alone(data_dir):
    paths = [data_dir / rel for rel in (DEMO, S9)]
    before = [(p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths]
    compare(paths, as_of=AS_OF)
    after = [(p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths]
    assert before == after
    for path in paths:
        assert not path.with_name(path.name + "-wal").exists()
        assert not path.with_name(path.name + "-shm").exists()
    head = paths[0].read_bytes()[:100]
    assert head[18] == 2 and head[19] == 2  # the demo is in WAL mode, as a live instance


def test_compare_one_row_per_store(data_dir):
    table = compare([data_dir / DEMO, data_dir / S5, data_dir / S9], as_of=AS_OF)
    assert list(table.index) == ["elfmem-demo.db", "elfmem-0.19.2-schema5.db",
                                 "elfmem-0.20.0-schema9.db"]
    assert list(table["archived_superseded"]) == [41, 3, 0]
    assert list(table["archived_decayed"]) == [1, 4, 0]
    assert list(table["llm_calls"]) == [2903, 82, 43]
    assert str(table["llm_calls"].dtype) == "Int64"
    assert str(table["calls_per_surviving_block"].dtype) == "Float64"
    # a relation only one store has is missing, not zero, for the others
    assert table["edges_replies_to"].isna().tolist() == [False, True, True]
    assert set(table["kind"]) == {"elfmem_db"}


def test_compare_keeps_same_named_stores_apart(data_dir, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    for folder in (a, b):
        (folder / "elfmem.db").write_bytes((data_dir / S9).read_bytes())
    table = compare([a / "elfmem.db", b / "elfmem.db"], as_of=AS_OF)
    assert list(table.index) == ["a/elfmem.db", "b/elfmem.db"]


# ── every schema elfmem ever wrote ────────────────────────────────────────────────────────

# 1: no schema_version key; 2: pre-role-tag releases; 5: the doc's era; 6: superseded_by
# arrives (a migrated 0.19.2 database); 9: current
@pytest.mark.parametrize("version", [1, 2, 5, 6, 9])
def test_audit_runs_on_every_schema(tmp_path, version):
    db = tmp_path / f"v{version}.db"
    build_db(db, version)
    result = audit(db, as_of="2026-12-01")
    h = result.headline
    json.dumps(h)
    assert h["schema_version"] == version
    # 0.19.2 databases migrated to 6-8 gain one block written with the new columns
    assert h["blocks_ever"] == (7 if 6 <= version <= 8 else 6) and h["blocks_archived"] == 2
    assert (h["archived_superseded"], h["archived_decayed"]) == (1, 1)
    assert h["superseded_by_recorded"] is (version >= 6)
    chains = result["archived"].set_index("archive_reason")["chain_length"]
    # a migration backfills superseded_by as NULL, so only a fresh 0.20.0 file has the link
    assert chains["superseded"] == (1 if version == 9 else 0)
    assert h["role_slots_seeded"] == 1  # one self/role/identity block, its text rewritten
    assert "Cost" in result.summary() and "Staleness" in result.summary()


def test_missing_token_usage_is_na_with_a_note(tmp_path, data_dir):
    db = tmp_path / "no-usage.db"
    db.write_bytes((data_dir / DEMO).read_bytes())
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM system_config WHERE key = 'lifetime_token_usage'")
    con.close()
    result = audit(db, as_of=AS_OF)
    assert result.headline["llm_calls"] is None
    assert result.headline["calls_per_surviving_block"] is None
    assert "LLM calls per surviving block      –" in result.summary()
    assert any("lifetime_token_usage" in n for n in result.notes)
    assert result.headline["live_chars"] == 126_532  # the rest still computes


def test_pre_role_tag_seed_is_matched_by_text(tmp_path, data_dir):
    # an 0.8-0.13.0 instance: seeds carry no self/role/* tag, only their text
    db = tmp_path / "old.db"
    db.write_bytes((data_dir / S5).read_bytes())
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM block_tags WHERE tag LIKE 'self/role/%'")
        con.execute("UPDATE system_config SET value = '2' WHERE key = 'schema_version'")
    con.close()
    result = audit(db, as_of="2026-12-01")
    cons = result["constitution"].set_index("role")
    assert result.headline["seed_releases"] == "0.8.0–0.13.0"
    assert cons.at["identity", "state"] == "unchanged"
    assert cons.at["minimum-force", "state"] == "lost"
    # without a role tag, rewritten content can no longer be tied to its slot
    assert cons.at["curiosity", "state"] == "changed"  # amended in place: same id
    assert result.headline["role_slots_left"] == 9


# ── bad input ─────────────────────────────────────────────────────────────────────────────

def test_bad_input_raises_memlab_errors(tmp_path, data_dir):
    with pytest.raises(StoreNotFound, match="nope.db"):
        audit(tmp_path / "nope.db")
    store = load_elfmem(data_dir / S9)
    with pytest.raises(MemlabError, match="seconds_per_call"):
        audit(store, seconds_per_call=0)
    with pytest.raises(MemlabError, match="not a date"):
        audit(store, as_of="last tuesday")
    other = Store(kind="agent_file", path=tmp_path / "x.af", frames={})
    with pytest.raises(UnsupportedSchema, match="x.af"):
        audit_elfmem(other)
    odd = Store(kind="mystery", path=tmp_path / "m", frames={})
    with pytest.raises(UnsupportedSchema, match="mystery"):
        audit(odd)


# ── helpers, seeds, plots, the generator ──────────────────────────────────────────────────

def test_gini_and_lorenz_known_values():
    assert gini([3, 3, 3, 3]) == pytest.approx(0.0)
    assert gini([0, 0, 0, 10]) == pytest.approx(0.75)
    assert math.isnan(gini([]))
    curve = lorenz([0, 0, 0, 10])
    assert list(curve["share_of_reinforcement"]) == [0.0, 0.0, 0.0, 0.0, 1.0]


def test_seed_texts_match_the_installed_elfmem():
    # read elfmem/seed.py on its own: importing the elfmem package pulls in its whole stack
    spec = importlib.util.find_spec("elfmem")
    seed_py = Path(spec.submodule_search_locations[0]) / "seed.py"
    module_spec = importlib.util.spec_from_file_location("_elfmem_seed", seed_py)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    CONSTITUTIONAL_SEED = module.CONSTITUTIONAL_SEED

    release = seeds.seed_release("0.20.0")
    assert [(s.role, s.content, list(s.tags)) for s in release.slots] == [
        (b["role"], b["content"], b["tags"]) for b in CONSTITUTIONAL_SEED]
    assert seeds.seed_release("0.9.1").has_role_tags is False
    assert seeds.seed_release("0.13.1").has_role_tags is True
    assert seeds.match_seed(block_id="85515efd7a93ce4a") == "identity"
    assert seeds.match_seed("  NATURE wastes nothing. Apply the minimum force that solves the "
                            "problem.\nComplexity is debt; simplicity compounds. When unsure how "
                            "much to do, do less and observe.") == "minimum-force"
    table = seeds.seed_table()
    assert len(table) == 20 and table["role_tag"].isna().sum() == 10


@pytest.mark.parametrize("name", ["archival_causes", "recency_curves", "reinforcement_lorenz",
                                  "token_spend"])
def test_plots_return_figures(demo, name):
    fig = getattr(plots, name)(demo)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title()
    own = Figure().add_subplot()
    assert getattr(plots, name)(demo.tables, ax=own) is own.figure


def test_plots_draw_the_numbers(demo):
    assert "Gini 0.65" in plots.reinforcement_lorenz(demo).axes[0].get_title()
    assert "52.1×" in plots.token_spend(demo).axes[0].get_title()
    rec = plots.recency_curves(demo).axes[0]
    assert [round(line.get_xdata()[0], 2) for line in rec.get_lines()
            if len(line.get_xdata()) == 1][:4] == [3.69] * 4
    bars = plots.archival_causes(demo).axes[0].patches
    assert sorted(round(b.get_width()) for b in bars) == [1, 41]
    with pytest.raises(MemlabError, match="lorenz"):
        plots.reinforcement_lorenz({})


def test_demo_generator_reproduces_the_committed_file(tmp_path, data_dir, repo_root,
                                                      monkeypatch):
    spec = importlib.util.spec_from_file_location("make_demo",
                                                  repo_root / "scripts" / "make_demo.py")
    make_demo = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "make_demo", make_demo)  # dataclasses look it up
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script adds scripts/ for its corpus
    spec.loader.exec_module(make_demo)
    out = tmp_path / "demo.db"
    figures = make_demo.build(out)
    assert figures["input_per_summary_token"] == "188.7"
    assert hashlib.sha256(out.read_bytes()).digest() == hashlib.sha256(
        (data_dir / DEMO).read_bytes()).digest()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.db"]


def test_json_output_has_no_non_standard_numbers():
    """JSON has no NaN or Infinity: ``memlab audit --json`` piped to jq or a strict parser must
    read null, not fail on ``Infinity``."""
    from memlab.audits._base import json_safe
    import numpy as np

    got = json_safe({"inf": float("inf"), "neg": np.float64("-inf"), "nan": np.float32("nan"),
                     "ok": np.float64(2.5), "nested": [float("inf"), 1.0]})
    assert got == {"inf": None, "neg": None, "nan": None, "ok": 2.5, "nested": [None, 1.0]}
    json.dumps(got, allow_nan=False)
