"""Shipped vectors: a verified cache of a fixed corpus's embeddings, not a substitute for the model.

The simulation's scale scenarios (S7, S11) embed the same 14,000 notes on every machine: they
come from a fixed seed, not from the user's data; and the default ``memlab simulate`` (seed 0,
the doc's instance) embeds the same few thousand other texts every time, most of them asked
for by the shipped releases' drivers (notes, their lowercased forms and summaries, queries).
``scripts/make_shipped_vectors.py`` embeds both sets once with the bundled model (fp32) and
stores the vectors as float16 in ``memlab/embed/data/<model>-<corpus hash>.npz``, one pack per
set, with the texts and a manifest (model, corpus hash, count, source, how they were made).

When an :class:`~memlab.embed.Embedder` misses its on-disk cache for a text whose key is in a
pack of its model, it may take the shipped vector instead of running the model, but only after
the pack has been **verified on this machine**: a random sample of :data:`VERIFY_SAMPLE` of its
texts is embedded fresh by the model at the embedder's precision, and if any shipped vector's
cosine to its fresh one is below :data:`MIN_COSINE` the whole pack is refused (a warning says
so) and every text goes to the model as if there were no pack. The verdict is recorded in the
cache's ``meta`` table under the pack file's SHA-256, the precision and the machine, so a pack
is sampled once, and any change to the file's bytes means a new verification. A sample cannot
catch a file in which only a few vectors were altered; it catches the failure that matters, a
pack from another model, model revision or corpus.

A shipped vector is the fp32 model's vector rounded to float16 and re-normalised (cosine to the
fp32 vector about 0.99999), whatever precision the embedder runs in; :attr:`Embedder.stats`
counts them in ``shipped``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

__all__ = [
    "ShippedVectors",
    "Verification",
    "shipped_packs",
    "write_pack",
    "corpus_sha256",
    "DATA_DIR",
    "MIN_COSINE",
    "VERIFY_SAMPLE",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
#: A shipped vector whose cosine to a fresh one is below this refuses its whole pack.
MIN_COSINE = 0.999
#: How many texts of a pack are re-embedded to verify it.
VERIFY_SAMPLE = 32
PACK_FORMAT = 1


def corpus_sha256(texts: Sequence[str]) -> str:
    """The corpus hash: SHA-256 over the texts' own SHA-256s, in order."""
    h = hashlib.sha256()
    for t in texts:
        h.update(hashlib.sha256(t.encode("utf-8")).digest())
    return h.hexdigest()


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model.split("/")[-1])


def pack_name(model: str, corpus_hash: str) -> str:
    return f"{_slug(model)}-{corpus_hash[:12]}.npz"


def write_pack(
    path: str | Path, model: str, texts: Sequence[str], vectors: np.ndarray, **manifest: Any
) -> Path:
    """Store ``vectors`` (one unit row per text) as float16 with the texts and a manifest."""
    texts = list(texts)
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.shape[0] != len(texts):
        raise ValueError(f"{len(texts)} texts but {vectors.shape[0]} vectors")
    meta = {
        "format": PACK_FORMAT,
        "model": model,
        "corpus_sha256": corpus_sha256(texts),
        "count": len(texts),
        "dimension": int(vectors.shape[1]),
        "dtype": "float16",
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        **manifest,
    }
    blob = "\x00".join(texts).encode("utf-8")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        # Compressed: the texts shrink to a quarter; float16 vectors hardly compress.
        np.savez_compressed(
            fh,
            vectors=vectors.astype(np.float16),
            texts=np.frombuffer(blob, dtype=np.uint8),
            manifest=np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8),
        )
    return path


@dataclass(frozen=True)
class Verification:
    ok: bool
    min_cosine: float
    sample: int
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "min_cosine": self.min_cosine,
            "sample": self.sample,
            "reason": self.reason,
        }


class ShippedVectors:
    """One pack: keys (sorted SHA-256 digests), float16 vectors, texts and manifest."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        raw = self.path.read_bytes()
        #: SHA-256 of the file's bytes: what a verification verdict is recorded under.
        self.file_sha256 = hashlib.sha256(raw).hexdigest()
        import io
        import zipfile

        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as z:
                self.manifest: dict[str, Any] = json.loads(z["manifest"].tobytes().decode("utf-8"))
                vectors = z["vectors"]
                texts = z["texts"].tobytes().decode("utf-8").split("\x00")
        except (zipfile.BadZipFile, KeyError, UnicodeDecodeError) as exc:
            # A flipped byte fails the zip's CRC-32: the file is damaged or was edited.
            raise ValueError(f"{self.path}: not a readable vector pack ({exc})") from exc
        n = int(self.manifest.get("count", -1))
        if not (vectors.shape[0] == n and len(texts) == n):
            raise ValueError(f"{self.path}: pack arrays disagree with its manifest ({n} rows)")
        if corpus_sha256(texts) != self.manifest.get("corpus_sha256"):
            raise ValueError(f"{self.path}: the texts do not hash to the manifest's corpus_sha256")
        self.model: str = self.manifest["model"]
        # Keys are the texts' SHA-256, sorted for binary search.
        keys = np.array([hashlib.sha256(t.encode("utf-8")).digest() for t in texts], dtype="S32")
        order = np.argsort(keys, kind="stable")
        self._keys = keys[order]
        self._vectors = vectors[order]
        self._texts = [texts[i] for i in order]

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def texts(self) -> list[str]:
        return list(self._texts)

    def _rows(self, hex_keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        wanted = np.array([bytes.fromhex(k) for k in hex_keys], dtype="S32")
        pos = np.searchsorted(self._keys, wanted)
        pos = np.minimum(pos, max(len(self._keys) - 1, 0))
        hit = (self._keys[pos] == wanted) if len(self._keys) else np.zeros(len(wanted), bool)
        return hit, pos

    def lookup(self, hex_keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Unit float32 vectors for the keys (hex SHA-256 of the text) this pack holds."""
        if not hex_keys:
            return {}
        hit, pos = self._rows(hex_keys)
        rows = self._vectors[pos[hit]].astype(np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        rows /= norms
        keys = [k for k, h in zip(hex_keys, hit) if h]
        return dict(zip(keys, rows))

    def verify(
        self,
        encode: Callable[[list[str]], np.ndarray],
        *,
        sample: int = VERIFY_SAMPLE,
        rng: np.random.Generator | None = None,
    ) -> Verification:
        """Embed a random sample of the pack's texts with ``encode`` (unit rows) and compare."""
        rng = rng if rng is not None else np.random.default_rng()
        idx = rng.choice(len(self), size=min(sample, len(self)), replace=False)
        fresh = np.asarray(encode([self._texts[i] for i in idx]), dtype=np.float32)
        shipped = np.stack([self._vectors[i].astype(np.float32) for i in idx])
        shipped /= np.maximum(np.linalg.norm(shipped, axis=1, keepdims=True), 1e-12)
        cos = np.einsum("ij,ij->i", fresh, shipped)
        low = float(cos.min()) if len(cos) else float("nan")
        if not np.isfinite(low) or low < MIN_COSINE:
            return Verification(
                False,
                low,
                len(idx),
                f"a shipped vector's cosine to the fresh one is {low:.6f} < {MIN_COSINE}",
            )
        return Verification(True, low, len(idx), "sample agrees with the model")


def shipped_packs(model: str, folder: Path = DATA_DIR) -> list[Path]:
    """Pack files in ``folder`` made for ``model`` (by file name; the manifest is checked on
    load)."""
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"{_slug(model)}-*.npz"))
