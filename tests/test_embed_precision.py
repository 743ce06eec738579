"""The bf16 gate and shipped vectors (memlab.embed._precision, memlab.embed._shipped)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from memlab.embed import DEFAULT_MODEL, PROBE_TEXTS, Embedder, EmbeddingCache, ShippedVectors
from memlab.embed._precision import (
    MIN_COSINE,
    cache_model_key,
    decide,
    loads,
    machine_fingerprint,
    measure,
    meta_key,
)
from memlab.embed._shipped import corpus_sha256, pack_name, shipped_packs, write_pack

slow = pytest.mark.slow


# ---- the gate's rule ---------------------------------------------------------------------------
@pytest.mark.parametrize("min_cos, fp32, bf16, expected", [
    (0.99995, 100.0, 200.0, "bf16"),    # faithful and twice as fast
    (0.99989, 100.0, 300.0, "fp32"),    # 3x faster but one probe below 0.9999
    (0.99995, 100.0, 105.0, "fp32"),    # faithful but within timing noise
    (0.99995, 100.0, 40.0, "fp32"),     # emulated bf16: slower
    (float("nan"), 100.0, 200.0, "fp32"),
])
def test_gate_rule(min_cos, fp32, bf16, expected):
    assert decide(min_cos, fp32, bf16)[0] == expected


def test_measure_refuses_an_unfaithful_fast_encoder():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((len(PROBE_TEXTS), 32)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    noisy = base + 0.02 * rng.standard_normal(base.shape).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    calls = {"slow": 0}

    def fp32(texts):
        calls["slow"] += 1
        sum(i * i for i in range(20_000))  # a real cost, so the "bf16" side is the faster one
        return base[:len(texts)]

    choice = measure(fp32, lambda texts: noisy[:len(texts)])
    assert choice.precision == "fp32"
    assert choice.min_cosine < MIN_COSINE
    assert "fidelity" in choice.reason
    assert choice.probe_texts == len(PROBE_TEXTS)


def test_cache_keys_keep_precisions_apart():
    assert cache_model_key("m", "fp32") == "m"  # caches from before the gate stay valid
    assert cache_model_key("m", "bf16") == "m|bf16"
    with pytest.raises(ValueError):
        cache_model_key("m", "int8")


def test_fp32_can_be_forced_without_measuring(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLAB_EMBED_PRECISION", "fp32")
    e = Embedder(cache_dir=tmp_path)
    assert e.precision == "fp32" and e.precision_choice.min_cosine is None
    assert "MEMLAB_EMBED_PRECISION" in e.provenance()["description"]
    monkeypatch.setenv("MEMLAB_EMBED_PRECISION", "int8")
    with pytest.raises(ValueError, match="auto' or 'fp32"):
        Embedder(cache_dir=tmp_path)


# ---- the gate, measured on this machine --------------------------------------------------------
@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gate-cache")
    e = Embedder(cache_dir=folder, precision="auto", shipped=False)
    return e, folder


@slow
def test_gate_measures_fidelity_and_records_its_choice(gated):
    from memlab.embed._embedder import _encode_with, _load_model

    e, folder = gated
    choice = e.precision_choice
    assert choice.probe_texts == len(PROBE_TEXTS)
    # The recorded fidelity is what the two models really give on the probe set.
    a = _encode_with(_load_model(DEFAULT_MODEL, "fp32"), PROBE_TEXTS)
    b = _encode_with(_load_model(DEFAULT_MODEL, "bf16"), PROBE_TEXTS)
    cos = np.einsum("ij,ij->i", a, b)
    assert choice.min_cosine == pytest.approx(float(cos.min()), abs=2e-5)
    assert choice.mean_cosine == pytest.approx(float(cos.mean()), abs=2e-5)
    assert 0.999 < choice.min_cosine <= choice.mean_cosine <= 1.0 + 1e-5
    assert choice.fp32_texts_per_s > 0 and choice.bf16_texts_per_s > 0
    # The choice follows the rule on those measured figures.
    assert choice.precision == decide(choice.min_cosine, choice.fp32_texts_per_s,
                                      choice.bf16_texts_per_s)[0]
    # ... and is recorded in the cache for the next process on this machine.
    stored = EmbeddingCache(folder).get_meta(meta_key(DEFAULT_MODEL, machine_fingerprint()))
    assert loads(stored) == choice
    assert e.provenance()["precision"] == choice.precision


@slow
def test_vectors_are_cached_under_their_precision(gated):
    e, folder = gated
    texts = ["precision-keyed cache probe: rotate keys quarterly", "and a second one, 7c1"]
    vecs = e.encode(texts)
    cache = EmbeddingCache(folder)
    assert cache.count(cache_model_key(DEFAULT_MODEL, e.precision)) == 2
    other = "fp32" if e.precision == "bf16" else "bf16"
    assert cache.count(cache_model_key(DEFAULT_MODEL, other)) == 0
    # An fp32 embedder on the same folder never serves the gated vectors as its own.
    forced = Embedder(cache_dir=folder, precision="fp32", shipped=False)
    again = forced.encode(texts)
    if e.precision == "bf16":
        assert forced.stats.misses == 2
        assert np.all(np.einsum("ij,ij->i", vecs, again) > MIN_COSINE - 1e-5)
    else:
        assert forced.stats.hits == 2


@slow
def test_a_new_process_reads_the_choice_and_cached_vectors_without_torch(gated):
    e, folder = gated
    e.encode(["a text the next process finds in the cache, d41"])
    script = textwrap.dedent(f"""
        import sys
        from memlab.embed import Embedder
        e = Embedder(cache_dir={str(folder)!r}, shipped=False)
        v = e.encode(["a text the next process finds in the cache, d41"])
        print(e.precision, e.stats.hits, "torch" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [e.precision, "1", "False"]


# ---- shipped vectors ---------------------------------------------------------------------------
_PACK_TEXTS = [f"Shipped pack probe {i}: the {w} service restarts after the nightly backup."
               for i, w in enumerate("api db cache queue worker scheduler proxy gateway index "
                                     "search billing auth mailer exporter".split())]


@pytest.fixture(scope="module")
def model_vectors(gated):
    from memlab.embed._embedder import _encode_with, _load_model

    return _encode_with(_load_model(DEFAULT_MODEL, "fp32"), _PACK_TEXTS)


@slow
def test_a_verified_pack_supplies_vectors(tmp_path, model_vectors):
    packs = tmp_path / "packs"
    write_pack(packs / pack_name(DEFAULT_MODEL, corpus_sha256(_PACK_TEXTS)), DEFAULT_MODEL,
               _PACK_TEXTS, model_vectors)
    e = Embedder(cache_dir=tmp_path / "cache", shipped=packs)
    got = e.encode(_PACK_TEXTS)
    assert (e.stats.shipped, e.stats.misses) == (len(_PACK_TEXTS), 0)
    assert np.all(np.einsum("ij,ij->i", got, model_vectors) > 0.9999)
    [info] = e.provenance()["shipped_packs"]
    assert info["verification"]["ok"] and info["used"] == len(_PACK_TEXTS)
    assert info["verification"]["min_cosine"] >= 0.999
    # Shipped vectors are not copied into the disk cache: they stay attributable.
    assert EmbeddingCache(tmp_path / "cache").count(e.cache_key) == 0


@slow
@pytest.mark.parametrize("tamper", ["shuffled", "other-model"])
def test_a_tampered_pack_is_refused(tmp_path, model_vectors, tamper):
    packs = tmp_path / "packs"
    if tamper == "shuffled":
        bad = np.roll(model_vectors, 1, axis=0)  # every text gets its neighbour's vector
    else:
        rng = np.random.default_rng(1)
        bad = model_vectors + 0.05 * rng.standard_normal(model_vectors.shape)  # cos ~0.5
    write_pack(packs / pack_name(DEFAULT_MODEL, corpus_sha256(_PACK_TEXTS)), DEFAULT_MODEL,
               _PACK_TEXTS, bad)
    e = Embedder(cache_dir=tmp_path / "cache", shipped=packs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = e.encode(_PACK_TEXTS)
    assert any("shipped vectors refused" in str(w.message) for w in caught)
    assert (e.stats.shipped, e.stats.misses) == (0, len(_PACK_TEXTS))
    assert np.all(np.einsum("ij,ij->i", got, model_vectors) > 0.9998)  # the model's own
    [info] = e.provenance()["shipped_packs"]
    assert not info["verification"]["ok"] and info["used"] == 0


def test_a_pack_whose_texts_do_not_match_its_manifest_is_not_read(tmp_path):
    path = write_pack(tmp_path / "p.npz", "m", ["alpha", "beta"], np.eye(2, 4))
    with np.load(path) as z:
        arrays = dict(z)
    arrays["texts"] = np.frombuffer("gamma\x00beta".encode(), np.uint8)  # vectors of alpha
    with path.open("wb") as fh:
        np.savez(fh, **arrays)
    with pytest.raises(ValueError, match="corpus_sha256"):
        ShippedVectors(path)


def test_a_pack_with_a_flipped_byte_is_not_read(tmp_path):
    path = write_pack(tmp_path / "p.npz", "m", ["alpha", "beta"], np.eye(2, 4))
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 3] ^= 1
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="not a readable vector pack"):
        ShippedVectors(path)


def _packs_by_source() -> dict[str, ShippedVectors]:
    packs = [ShippedVectors(p) for p in shipped_packs(DEFAULT_MODEL)]
    return {p.manifest["source"]: p for p in packs}


def test_the_shipped_pack_covers_the_simulations_scale_corpus():
    from memlab.sim._texts import NoteMaker
    from memlab.sim.instance import DOC_INSTANCE
    from memlab.sim.scenarios._base import CORPUS_SEED

    packs = _packs_by_source()
    # Two packs: the scale corpus, and the default `memlab simulate`'s other texts
    # (scripts/make_shipped_vectors.py).
    assert len(packs) == 2 and len(shipped_packs(DEFAULT_MODEL)) == 2
    pack = packs["memlab.sim scale corpus (S7/S11), doc instance"]
    notes = NoteMaker(CORPUS_SEED).fresh(DOC_INSTANCE.active_blocks * DOC_INSTANCE.growth, set())
    texts = list(dict.fromkeys(n.text for n in notes))
    assert pack.manifest["corpus_sha256"] == corpus_sha256(texts)
    assert pack.manifest["model"] == DEFAULT_MODEL and len(pack) == len(texts)
    assert pack.path.stat().st_size < 12e6


def test_the_default_runs_pack_holds_what_the_release_drivers_ask_for():
    from memlab.sim._driver import embedded_forms
    from memlab.sim._texts import NoteMaker
    from memlab.sim.real import RealParams

    [run] = [p for s, p in _packs_by_source().items() if s.startswith("memlab simulate defaults")]
    scale = _packs_by_source()["memlab.sim scale corpus (S7/S11), doc instance"]
    assert not set(run.texts) & set(scale.texts)
    assert run.path.stat().st_size < 8e6
    # The real rows' scale corpus at seed 0 (_real_scale._scale_world), in every form the
    # drivers embed, is in it: the notes, their lowercased forms and summaries.
    p = RealParams()
    notes = NoteMaker(70_000).fresh(p.scale - p.s11_pairs)
    forms = {f for n in notes for f in embedded_forms(n.text)}
    assert forms <= set(run.texts) | set(scale.texts)


@slow
def test_the_shipped_packs_pass_verification_against_the_model(gated):
    e, _ = gated
    from memlab.embed._embedder import _encode_with

    for path in shipped_packs(DEFAULT_MODEL):
        verdict = ShippedVectors(path).verify(lambda t: _encode_with(e.model, t), sample=16)
        assert verdict.ok, (path.name, verdict.reason)
