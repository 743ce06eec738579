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
    from memlab.sim.model.scenarios._base import CORPUS_SEED

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
    from memlab.sim.real._driver import embedded_forms
    from memlab.sim._texts import NoteMaker
    from memlab.sim.real import RealParams

    [run] = [p for s, p in _packs_by_source().items() if s.startswith("memlab simulate defaults")]
    scale = _packs_by_source()["memlab.sim scale corpus (S7/S11), doc instance"]
    assert not set(run.texts) & set(scale.texts)
    assert run.path.stat().st_size < 8e6
    # The real rows' scale corpus at seed 0 (sim/real/_scale._scale_world), in every form the
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


# ---- the gate asks before it times (issue 40) --------------------------------------------------
# A real x86 flag line without a bf16 unit (Skylake-SP: AVX-512, no AVX512-BF16, no AMX), one
# with AVX512-BF16 (Cooper Lake), and an Arm Neoverse-N1 line (no BF16) / V1 line (BF16).
_SKYLAKE = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx "
            "fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl pni "
            "pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c "
            "rdrand hypervisor lahf_lm abm 3dnowprefetch avx2 smep bmi2 erms invpcid avx512f "
            "avx512dq rdseed adx smap clflushopt clwb avx512cd avx512bw avx512vl xsaveopt")
_COOPER = _SKYLAKE + " avx512_vnni avx512_bf16"
_N1 = "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop"
_V1 = _N1 + " sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg " \
      "dcpodp svei8mm svebf16 i8mm bf16 dgh rng"


def _cpuinfo(tmp_path, key, flags):
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nmodel name\t: test\n{key}\t\t: {flags}\n\n"
                    f"processor\t: 1\n{key}\t\t: {flags} avx512_bf16 bf16\n\n")
    return str(path)


@pytest.mark.parametrize("key, flags, native", [
    ("flags", _SKYLAKE, False), ("flags", _COOPER, True),
    ("Features", _N1, False), ("Features", _V1, True),
])
def test_native_bf16_is_read_from_the_first_cpus_flags(tmp_path, key, flags, native):
    from memlab.embed._precision import native_bf16

    got, basis = native_bf16(_cpuinfo(tmp_path, key, flags), ask_torch=False)
    assert got is native
    assert ("no native bf16" in basis) is (not native)


def test_unreadable_cpu_flags_leave_the_gate_to_time(tmp_path):
    from memlab.embed._precision import native_bf16

    got, basis = native_bf16(str(tmp_path / "missing"), ask_torch=False)
    assert got is True and "unreadable" in basis


def test_this_machines_answer_agrees_with_torch():
    torch = pytest.importorskip("torch")
    from memlab.embed._precision import native_bf16

    got, basis = native_bf16()
    if "unreadable" in basis:
        pytest.skip(basis)
    import platform

    if platform.machine().lower() in ("x86_64", "amd64"):
        said = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
        assert got is bool(said), basis


def test_without_native_bf16_nothing_is_loaded_or_timed(tmp_path):
    """On a CPU without a bf16 unit the choice is fp32 at once: no torch import, no model,
    nothing timed; the one-line note says why, and the choice is recorded for later processes."""
    script = textwrap.dedent(f"""
        import sys, time
        from memlab.embed import _precision, _embedder
        _precision.native_bf16 = lambda *a, **k: (
            False, "no native bf16 on this CPU (no avx512_bf16, amx_bf16 or bf16 CPU flag)")
        t0 = time.perf_counter()
        e = _embedder.Embedder(cache_dir={str(tmp_path)!r}, precision="auto", shipped=False)
        c = e.precision_choice
        print(c.precision, c.timed_rounds, c.min_cosine, "torch" in sys.modules,
              "sentence_transformers" in sys.modules, _embedder.TIMINGS["gate_s"])
        print(e.provenance()["description"])
    """)
    env = {**__import__("os").environ, "MEMLAB_PROGRESS": "1"}
    env.pop("MEMLAB_QUIET", None)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True)
    first, description = out.stdout.splitlines()[:2]
    assert first == "fp32 None None False False 0.0", out.stdout
    assert "no native bf16" in description and "without timing" in description
    notes = [ln for ln in out.stderr.splitlines() if ln.startswith("memlab:")]
    assert notes == ["memlab: embedding precision fp32: no native bf16 on this CPU (no "
                     "avx512_bf16, amx_bf16 or bf16 CPU flag)"], out.stderr
    stored = EmbeddingCache(tmp_path).get_meta(meta_key(DEFAULT_MODEL, machine_fingerprint()))
    assert loads(stored).reason.startswith("no native bf16")


def _encoders(cost_s):
    import time as _time

    rng = np.random.default_rng(1)
    base = rng.standard_normal((len(PROBE_TEXTS), 16)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    calls = {"fp32": 0, "bf16": 0}

    def make(name, factor):
        def encode(texts):
            calls[name] += 1
            _time.sleep(cost_s * factor * len(texts) / len(PROBE_TEXTS))
            return base[:len(texts)]
        return encode
    return make("fp32", 1.0), make("bf16", 0.5), calls


def test_a_faithful_bf16_is_timed_for_every_round_within_budget():
    fp32, bf16, calls = _encoders(0.01)
    choice = measure(fp32, bf16, budget_s=60.0)
    assert choice.timed_rounds == 2 and calls == {"fp32": 3, "bf16": 3}  # warm-up + 2 rounds
    assert choice.precision == "bf16"


def test_the_budget_stops_the_timed_rounds_after_the_first():
    fp32, bf16, calls = _encoders(0.2)
    choice = measure(fp32, bf16, rounds=5, budget_s=0.1)
    assert choice.timed_rounds == 1 and calls == {"fp32": 2, "bf16": 2}
    assert choice.precision == "bf16"  # decided on the one round it had


def test_failed_fidelity_ends_the_timing_at_once():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((len(PROBE_TEXTS), 32)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    noisy = base + 0.02 * rng.standard_normal(base.shape).astype(np.float32)
    calls = {"n": 0}

    def bf16(texts):
        calls["n"] += 1
        return noisy[:len(texts)]

    choice = measure(lambda t: base[:len(t)], bf16, rounds=5, budget_s=600.0)
    assert choice.timed_rounds == 1 and calls["n"] == 2
    assert choice.precision == "fp32" and "fidelity" in choice.reason


def test_a_bad_budget_is_one_line(monkeypatch):
    from memlab.embed._precision import gate_budget
    from memlab.errors import MemlabError

    monkeypatch.setenv("MEMLAB_PRECISION_GATE_SECONDS", "soon")
    with pytest.raises(MemlabError, match="MEMLAB_PRECISION_GATE_SECONDS"):
        gate_budget()
    monkeypatch.setenv("MEMLAB_PRECISION_GATE_SECONDS", "5")
    assert gate_budget() == 5.0
