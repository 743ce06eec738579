"""Embeddings for memlab: an offline sentence model, an on-disk cache, and faiss neighbour search.

    >>> from memlab.embed import get_embedder, NeighborIndex
    >>> emb = get_embedder()
    >>> vecs = emb.encode(["WAL lets readers continue", "readers proceed under WAL"])
    >>> NeighborIndex(vecs).pairs_above(0.9)

``encode`` returns (n, 384) float32 rows of unit length, so a dot product is a cosine. Every
vector is cached on disk keyed by model, precision and the SHA-256 of the text
(``$MEMLAB_CACHE_DIR`` or ``~/.cache/memlab/embeddings``); ``Embedder.stats`` counts hits and
misses. The model runs in bf16 only where a fidelity-and-speed gate measured on this machine
allows it (:mod:`memlab.embed._precision`); vectors of the simulation's fixed scale corpus come
from a shipped pack once a sample of it has been verified against the model
(:mod:`memlab.embed._shipped`). ``Embedder.provenance()`` says which of these a run used.
Missing torch or sentence-transformers raises :class:`memlab.errors.MissingExtra`.
"""

from __future__ import annotations

from memlab.embed._cache import EmbeddingCache, default_cache_dir, text_sha256
from memlab.embed._embedder import (
    DEFAULT_MODEL,
    DIMENSION,
    Embedder,
    EmbedStats,
    cosine,
    get_embedder,
)
from memlab.embed._index import NeighborIndex, brute_force_pairs
from memlab.embed._precision import MIN_COSINE, PROBE_TEXTS, PrecisionChoice
from memlab.embed._shipped import ShippedVectors

__all__ = [
    "get_embedder",
    "Embedder",
    "EmbedStats",
    "EmbeddingCache",
    "cosine",
    "NeighborIndex",
    "brute_force_pairs",
    "default_cache_dir",
    "text_sha256",
    "DEFAULT_MODEL",
    "DIMENSION",
    "PrecisionChoice",
    "PROBE_TEXTS",
    "MIN_COSINE",
    "ShippedVectors",
]
