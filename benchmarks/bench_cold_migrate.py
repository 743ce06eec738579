"""A first `memlab migrate --verify` on an empty cache against its real work: load the model, embed.

Issue 40: a cold migration with its retrieval check costs about what its embedding costs. With
``--verify`` (retrieval on, the default) memlab reloads the result and checks that fixed
queries find the same top-k blocks before and after, embedding the queries and both sides'
texts with the bundled model. Both sides run as fresh processes from this one, interleaved,
best of ``--repeat`` rounds each:

* **anchor**: a new Python process that imports sentence-transformers, loads the same bundled
  all-MiniLM-L6-v2 (fp32, CPU) and encodes, in batches of memlab's size, exactly the distinct
  texts memlab's migration embeds (recorded once, untimed, by a migration into a throwaway
  folder and cache);
* **memlab migrate**: `python -m memlab migrate DEMO DEST --to substrate --verify` with a fresh
  ``MEMLAB_CACHE_DIR`` (precision gate included: nothing recorded), and the same with the
  gate's record pre-seeded (what every later cold cache on this machine costs);
* **memlab migrate --no-retrieval**: the same migration and parity check without the model, to
  show what the embedding side costs on top.

Prints each side's wall time, the ratios, and the load average before and after. Asserts nothing
about time.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_cold_migrate.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_cold_review import _ANCHOR, _run, _seed_gate_record  # noqa: E402

DEMO = ROOT / "data" / "demo" / "elfmem-demo.db"


def _texts_migrate_embeds(tmp: str, source: Path) -> list[str]:
    """The distinct texts a `migrate --verify` of ``source`` hands the embedder (untimed)."""
    import memlab
    from memlab.embed import _embedder

    seen: list[str] = []
    original = _embedder.Embedder.encode

    def recording(self, texts, **kw):
        seen.extend(texts)
        return original(self, texts, **kw)

    os.environ["MEMLAB_CACHE_DIR"] = f"{tmp}/record-cache"
    _embedder.Embedder.encode = recording
    try:
        memlab.migrate(str(source), f"{tmp}/record-dest", to="substrate", verify=True)
    finally:
        _embedder.Embedder.encode = original
        del os.environ["MEMLAB_CACHE_DIR"]
    return list(dict.fromkeys(seen))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="rounds of each side (best kept)")
    ap.add_argument("--source", type=Path, default=DEMO, help="the store to migrate (an elfmem .db)")
    args = ap.parse_args()
    load_before = os.getloadavg()
    from memlab.embed._embedder import BATCH_SIZE

    with tempfile.TemporaryDirectory(prefix="memlab-bench-cold-migrate-") as tmp:
        texts = _texts_migrate_embeds(tmp, args.source)
        if not texts:
            raise SystemExit(f"migrate --verify of {args.source} embedded nothing: no anchor")
        Path(f"{tmp}/texts.json").write_text(json.dumps(texts))
        gate_db = next(Path(f"{tmp}/record-cache").glob("*"))
        env = {k: v for k, v in os.environ.items() if k not in ("MEMLAB_EMBED_PRECISION",
                                                                "MEMLAB_PROGRESS")}
        env["MEMLAB_QUIET"] = "1"
        migrate = [sys.executable, "-m", "memlab", "migrate", str(args.source)]
        best = {k: float("inf") for k in ("anchor", "cold", "cold_gated", "no_retrieval")}
        for i in range(args.repeat):
            best["anchor"] = min(best["anchor"], _run(
                [sys.executable, "-c", _ANCHOR, f"{tmp}/texts.json", str(BATCH_SIZE)], env))
            best["cold"] = min(best["cold"], _run(
                [*migrate, f"{tmp}/cold-dest-{i}", "--to", "substrate", "--verify"],
                {**env, "MEMLAB_CACHE_DIR": f"{tmp}/cold-{i}"}))
            seeded = f"{tmp}/seeded-{i}"
            _seed_gate_record(gate_db, seeded)
            best["cold_gated"] = min(best["cold_gated"], _run(
                [*migrate, f"{tmp}/gated-dest-{i}", "--to", "substrate", "--verify"],
                {**env, "MEMLAB_CACHE_DIR": seeded}))
            best["no_retrieval"] = min(best["no_retrieval"], _run(
                [*migrate, f"{tmp}/plain-dest-{i}", "--to", "substrate", "--verify",
                 "--no-retrieval"], {**env, "MEMLAB_CACHE_DIR": f"{tmp}/plain-{i}"}))
    load_after = os.getloadavg()
    anchor = best["anchor"]
    print(f"texts embedded by `migrate --verify` of {args.source.name}: {len(texts)} distinct "
          f"({sum(map(len, texts)):,} chars); best of {args.repeat}")
    print(f"anchor: import sentence-transformers, load, encode    {anchor:7.2f} s   1.00x")
    print(f"memlab migrate --verify, empty cache (gate measured)  {best['cold']:7.2f} s   "
          f"{best['cold'] / anchor:.2f}x")
    print(f"memlab migrate --verify, empty cache, gate's record   {best['cold_gated']:7.2f} s   "
          f"{best['cold_gated'] / anchor:.2f}x")
    print(f"memlab migrate --verify --no-retrieval (no model)     {best['no_retrieval']:7.2f} s   "
          f"{best['no_retrieval'] / anchor:.2f}x")
    print("load average before {:.2f} {:.2f} {:.2f}, after {:.2f} {:.2f} {:.2f}".format(
        *load_before, *load_after))


if __name__ == "__main__":
    main()
