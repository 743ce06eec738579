"""Which numeric precision the sentence model runs in on this machine: bf16 behind a fidelity gate.

bf16 (``model.to(torch.bfloat16)``) roughly halves the forward pass on CPUs with native bf16
(AVX512-BF16, AMX) and changes the vectors only slightly; on other CPUs it is emulated and
slower. So memlab does not assume: the first time a model is used with a cache on a machine it
embeds a fixed probe set (:data:`PROBE_TEXTS`) in fp32 and in bf16, and picks bf16 only if

* every probe's cosine between its fp32 and its bf16 vector is at least :data:`MIN_COSINE`, and
* bf16 embedded the probe set at least :data:`MIN_SPEEDUP` times as fast as fp32 (best of
  :data:`TIMED_ROUNDS` interleaved rounds each, after a warm-up, so a load spike on a shared
  machine hits both alike);

otherwise fp32. The gate asks before it times: on a CPU without native bf16 (no AVX512-BF16 or
AMX on x86, no ``bf16`` feature on Arm, as the CPU flags and torch report it) bf16 can only be
emulated, so the choice is fp32 at once, with no model loaded and nothing timed
(:func:`native_bf16`). Where it does time, the timed rounds stop as soon as the answer is known
(the first round's fidelity already fails the gate: fidelity does not change between rounds) or
the budget :data:`GATE_BUDGET_S` (``$MEMLAB_PRECISION_GATE_SECONDS``) is spent, and a one-line
note says what it is doing and for how long. The measurement (:class:`PrecisionChoice`) is stored
in the embedding cache's
``meta`` table under the model and a fingerprint of this machine (CPU, torch and
sentence-transformers versions), so it is measured once and every later process, including a
kernel that only reads cached vectors, knows the precision without loading the model.
``MEMLAB_EMBED_PRECISION=fp32`` (or ``Embedder(precision="fp32")``) skips the gate.

Vectors are cached under a key that includes the precision (:func:`cache_model_key`), so fp32
and bf16 vectors of the same text never mix.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import os
import platform
import random
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

import numpy as np

__all__ = [
    "PRECISIONS",
    "MIN_COSINE",
    "MIN_SPEEDUP",
    "TIMED_ROUNDS",
    "ENV",
    "GATE_BUDGET_S",
    "BUDGET_ENV",
    "NATIVE_BF16_FLAGS",
    "PROBE_TEXTS",
    "PrecisionChoice",
    "decide",
    "machine_fingerprint",
    "native_bf16",
    "gate_budget",
    "meta_key",
    "cache_model_key",
    "requested_precision",
    "measure",
    "without_native_bf16",
    "dumps",
    "loads",
]

PRECISIONS = ("fp32", "bf16")
#: Minimum per-text cosine between fp32 and bf16 vectors of the probe set for bf16 to be used.
MIN_COSINE = 0.9999
#: bf16 must embed the probe set at least this many times as fast as fp32. A margin above 1.0
#: so that timing noise on a busy machine cannot pick bf16 on a CPU that only emulates it.
MIN_SPEEDUP = 1.10
TIMED_ROUNDS = 2
#: The environment variable that forces a precision ("fp32") or asks for the gate ("auto").
ENV = "MEMLAB_EMBED_PRECISION"
#: Wall-clock budget of the gate's timed rounds, in seconds (the warm-up and the first round
#: always run: without them there is nothing to decide on).
GATE_BUDGET_S = 20.0
#: The environment variable that sets :data:`GATE_BUDGET_S`.
BUDGET_ENV = "MEMLAB_PRECISION_GATE_SECONDS"
#: CPU flags (``/proc/cpuinfo``) that mean bf16 arithmetic in hardware: x86's AVX512-BF16 and
#: AMX-BF16, Arm's BF16 extension.
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})

_PROBE_WORDS = (
    "deploy main branch ci green sqlite wal reader writer commit budget alert monthly llm spend "
    "retrieval fusion rank vector bm25 token prompt context agent memory block pinned archive "
    "review proposal git hook frontmatter limit persona human policy rollback release hotfix prod "
    "staging key rotate python asyncio task await dataclass frozen hash evidence assertion test "
    "failing bug user spelling british documentation peer summary change latency spike disk usage "
    "build box server restart local model the a of to and in is that it for on with as was"
).split()
_PROBE_SENTENCES = [
    "SQLite WAL mode lets readers continue while a single writer commits.",
    "The user prefers British spelling in documentation.",
    "Deploy only from the main branch after CI is green.",
    "I am an agent that remembers what worked and lets failures decay.",
    "Rotate the API key every ninety days; the last rotation was on 4 August.",
    "Prefer small commits with honest messages.",
    "Der Benutzer bevorzugt kurze Antworten ohne Aufzählungen.",
    "日本語のメモ: バックアップは毎晩取る。",
    "def load(path): return pd.read_parquet(path)  # keep reads lazy",
]


def _probe_texts(n: int = 48, seed: int = 14) -> list[str]:
    """A fixed mix of memory-like texts: real sentences (English, German, Japanese, code) and
    sentences of 4 to 200 words from a memory-topic vocabulary, the longest past the model's
    256-token window. Degenerate inputs (the empty string, one word) are left out: memory blocks
    are sentences, and on them the two precisions differ most (about 0.99985)."""
    rng = random.Random(seed)
    out = list(_PROBE_SENTENCES)
    lengths = [4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 200]
    while len(out) < n:
        k = lengths[len(out) % len(lengths)]
        out.append(" ".join(rng.choice(_PROBE_WORDS) for _ in range(k)).capitalize() + ".")
    return out


#: The fixed probe set the gate embeds in both precisions.
PROBE_TEXTS: tuple[str, ...] = tuple(_probe_texts())


@dataclass(frozen=True)
class PrecisionChoice:
    """The precision an embedder uses and why, as recorded in the cache and in reports."""

    precision: str
    reason: str
    min_cosine: float | None = None
    mean_cosine: float | None = None
    fp32_texts_per_s: float | None = None
    bf16_texts_per_s: float | None = None
    probe_texts: int = 0
    measured_at: str | None = None
    machine: str | None = None
    #: How many timed rounds of each precision ran (None where nothing was timed).
    timed_rounds: int | None = None

    @property
    def speedup(self) -> float | None:
        if self.fp32_texts_per_s and self.bf16_texts_per_s:
            return self.bf16_texts_per_s / self.fp32_texts_per_s
        return None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["speedup"] = self.speedup
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "PrecisionChoice":
        fields: dict[str, Any] = {k: d.get(k) for k in cls.__dataclass_fields__}
        fields["probe_texts"] = int(fields.get("probe_texts") or 0)
        if fields.get("timed_rounds") is not None:
            fields["timed_rounds"] = int(fields["timed_rounds"])
        if fields["precision"] not in PRECISIONS:
            raise ValueError(f"unknown precision {fields['precision']!r}")
        return cls(**fields)

    def short(self) -> str:
        """A few words for a report header: the precision and its measured fidelity."""
        if self.min_cosine is None:
            return f"{self.precision} ({self.reason})"
        return (
            f"{self.precision} (bf16 vs fp32 cosine min {self.min_cosine:.5f}, mean "
            f"{self.mean_cosine:.5f} over {self.probe_texts} probes)"
        )

    def describe(self) -> str:
        """One line for a report: the precision and the fidelity it was measured at."""
        if self.min_cosine is None:
            return f"{self.precision} ({self.reason})"
        speed = f", {self.speedup:.2f}x the fp32 speed" if self.speedup else ""
        return (
            f"{self.precision}: bf16 vs fp32 cosine min {self.min_cosine:.6f}, mean "
            f"{self.mean_cosine:.6f} over {self.probe_texts} probe texts{speed} "
            f"(measured {self.measured_at}; {self.reason})"
        )


def decide(min_cosine: float, fp32_texts_per_s: float, bf16_texts_per_s: float) -> tuple[str, str]:
    """The gate's rule on measured figures: (precision, reason)."""
    speedup = bf16_texts_per_s / fp32_texts_per_s if fp32_texts_per_s > 0 else 0.0
    if not np.isfinite(min_cosine) or min_cosine < MIN_COSINE:
        return "fp32", f"bf16 fidelity too low (min cosine {min_cosine:.6f} < {MIN_COSINE})"
    if speedup < MIN_SPEEDUP:
        return "fp32", f"bf16 not faster on this CPU ({speedup:.2f}x < {MIN_SPEEDUP}x)"
    return "bf16", f"bf16 passed the gate (min cosine >= {MIN_COSINE}, {speedup:.2f}x faster)"


@functools.lru_cache(maxsize=1)
def machine_fingerprint() -> str:
    """What the speed and fidelity of bf16 depend on: CPU model and flags, torch and
    sentence-transformers versions. A cache folder shared by two machines keeps one decision
    per machine."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("model name", "flags")):
                    cpu += line.strip()
                if line.strip() == "":
                    break  # the first CPU is enough
    except OSError:
        pass
    from importlib import metadata

    versions = []
    for dist in ("torch", "sentence-transformers"):  # read without importing them
        try:
            versions.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{dist}=?")
    raw = "|".join([platform.machine(), cpu, *versions])
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


def _cpu_flags(cpuinfo: str) -> set[str]:
    """The first CPU's feature flags (x86 ``flags``, Arm ``Features``) from a /proc/cpuinfo
    file; empty where there is no such file."""
    flags: set[str] = set()
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    flags.update(value.split())
                if line.strip() == "" and flags:
                    break  # the first CPU is enough
    except OSError:
        pass
    return flags


def native_bf16(cpuinfo: str = "/proc/cpuinfo", *, ask_torch: bool = True) -> tuple[bool, str]:
    """Whether this CPU does bf16 arithmetic in hardware, and the basis of that answer.

    Asked of the CPU's flags first (no import), then, where they name a bf16 unit, of torch
    itself (``torch.cpu._is_avx512_bf16_supported`` / ``_is_amx_tile_supported`` on x86): both
    must agree for bf16 to be worth timing. Where the CPU's flags cannot be read, the answer is
    True with that basis, and the gate times as before."""
    flags = _cpu_flags(cpuinfo)
    if not flags:
        return True, f"CPU flags unreadable ({cpuinfo}): bf16 is timed"
    found = sorted(flags & NATIVE_BF16_FLAGS)
    if not found:
        return False, "no native bf16 on this CPU (no avx512_bf16, amx_bf16 or bf16 CPU flag)"
    if ask_torch and platform.machine().lower() in ("x86_64", "amd64", "i686", "i386"):
        try:
            import torch.cpu as tcpu

            checks = {
                name: getattr(tcpu, f"_is_{name}_supported", None)
                for name in ("avx512_bf16", "amx_tile")
            }
            answers = {name: bool(fn()) for name, fn in checks.items() if callable(fn)}
        except Exception as exc:  # torch missing or broken: the CPU flags stand alone
            return True, f"CPU flags {', '.join(found)} (torch not asked: {type(exc).__name__})"
        if answers and not any(answers.values()):
            said = ", ".join(f"{k}={v}" for k, v in answers.items())
            return False, f"CPU flags {', '.join(found)} but torch uses no bf16 unit ({said})"
        if answers:
            said = ", ".join(f"{k}={v}" for k, v in answers.items())
            return True, f"CPU flags {', '.join(found)}; torch: {said}"
    return True, f"CPU flags {', '.join(found)}"


def gate_budget() -> float:
    """The timed rounds' budget in seconds: $MEMLAB_PRECISION_GATE_SECONDS, else
    :data:`GATE_BUDGET_S`."""
    raw = os.environ.get(BUDGET_ENV, "").strip()
    if not raw:
        return GATE_BUDGET_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not np.isfinite(value) or value < 0:
        from memlab.errors import InvalidArgument

        raise InvalidArgument(f"{BUDGET_ENV} must be a number of seconds >= 0, not {raw!r}")
    return value


def meta_key(model: str, machine: str) -> str:
    return f"precision/{model}/{machine}"


def cache_model_key(model: str, precision: str) -> str:
    """The ``model`` column vectors are cached under: the bare model name for fp32 (so caches
    written before the gate stay valid), ``"<model>|bf16"`` for bf16."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
    return model if precision == "fp32" else f"{model}|{precision}"


def requested_precision(explicit: str | None = None) -> str:
    """ "fp32" or "auto" from the argument, else from $MEMLAB_EMBED_PRECISION (default auto)."""
    value = (explicit or os.environ.get(ENV) or "auto").strip().lower()
    if value not in ("auto", "fp32"):
        from memlab.errors import InvalidArgument

        raise InvalidArgument(
            f"embedding precision must be 'auto' or 'fp32', not {value!r} "
            f"(from {'the argument' if explicit else ENV})"
        )
    return value


def measure(
    encode_fp32: Callable[[Sequence[str]], np.ndarray],
    encode_bf16: Callable[[Sequence[str]], np.ndarray],
    texts: Sequence[str] = PROBE_TEXTS,
    *,
    rounds: int = TIMED_ROUNDS,
    machine: str | None = None,
    budget_s: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> PrecisionChoice:
    """Embed ``texts`` with both encoders (unit-length float32 rows), time them, and decide.

    Up to ``rounds`` interleaved timed rounds after a warm-up; after the first, no further round
    runs when the fidelity already fails the gate (it is the same every round) or when another
    round would pass ``budget_s`` (default :func:`gate_budget`) since the warm-up began.
    ``timed_rounds`` in the result says how many ran."""
    texts = list(texts)
    budget = gate_budget() if budget_s is None else budget_s
    start = clock()
    encode_fp32(texts[:8])  # warm-up: first-call allocations are not the steady speed
    encode_bf16(texts[:8])
    best = {"fp32": float("inf"), "bf16": float("inf")}
    vecs: dict[str, np.ndarray] = {}
    done = 0
    while done < max(1, rounds):
        t_round = clock()
        for name, fn in (("fp32", encode_fp32), ("bf16", encode_bf16)):
            t0 = clock()
            vecs[name] = np.asarray(fn(texts), dtype=np.float32)
            best[name] = min(best[name], clock() - t0)
        done += 1
        cos = np.einsum("ij,ij->i", vecs["fp32"], vecs["bf16"])
        if not np.isfinite(cos.min()) or cos.min() < MIN_COSINE:
            break  # fidelity fails: more timing cannot change the answer
        if clock() - start + (clock() - t_round) > budget:
            break  # another round would pass the budget
    cos = np.einsum("ij,ij->i", vecs["fp32"], vecs["bf16"])
    fp32_rate, bf16_rate = len(texts) / best["fp32"], len(texts) / best["bf16"]
    precision, reason = decide(float(cos.min()), fp32_rate, bf16_rate)
    return PrecisionChoice(
        precision=precision,
        reason=reason,
        min_cosine=float(cos.min()),
        mean_cosine=float(cos.mean()),
        fp32_texts_per_s=fp32_rate,
        bf16_texts_per_s=bf16_rate,
        probe_texts=len(texts),
        measured_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        machine=machine,
        timed_rounds=done,
    )


def without_native_bf16(basis: str, machine: str | None = None) -> PrecisionChoice:
    """The choice where the CPU has no bf16 unit: fp32, nothing timed, the basis said."""
    return PrecisionChoice(
        precision="fp32",
        reason=f"{basis}: fp32 without timing",
        measured_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        machine=machine,
    )


def dumps(choice: PrecisionChoice) -> str:
    return json.dumps(choice.as_dict(), sort_keys=True)


def loads(text: str) -> PrecisionChoice | None:
    try:
        return PrecisionChoice.from_dict(json.loads(text))
    except (ValueError, TypeError, KeyError):
        return None  # an unreadable record is measured again
