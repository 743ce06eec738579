"""Embeddings for memlab: an offline sentence model, an on-disk cache, and faiss neighbour search.

    >>> from memlab.embed import get_embedder, NeighborIndex
    >>> emb = get_embedder()
    >>> vecs = emb.encode(["WAL lets readers continue", "readers proceed under WAL"])
    >>> NeighborIndex(vecs).pairs_above(0.9)

``encode`` returns (n, 384) float32 rows of unit length, so a dot product is a cosine. Every
vector is cached on disk keyed by model and the SHA-256 of the text (``$MEMLAB_CACHE_DIR`` or
``~/.cache/memlab/embeddings``); ``Embedder.stats`` counts hits and misses. Missing torch or
sentence-transformers raises :class:`memlab.errors.MissingExtra`.
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
]
