"""Resident memory of the embedding model, beside a command that does not load it.

Each measurement runs in its own process (peak RSS is ``ru_maxrss`` of that process):

* anchor: ``memlab audit`` of the demo database (no embeddings: the model is never imported);
* model: ``get_embedder()`` then ``encode`` of one text the cache has never seen (a fresh
  UUID in it), so the model is loaded and run once; RSS after ``import memlab``, after
  ``encode``, and the peak.

Uses the default embedding cache (``$MEMLAB_CACHE_DIR`` or ``~/.cache/memlab/embeddings``), so
the precision gate's earlier measurement is reused; on a machine's first run the gate also runs
the model in fp32 and bf16 and the peak is higher.

    python benchmarks/bench_model_rss.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_RSS = """
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
"""

_ANCHOR = _RSS + """
import contextlib, io, json, resource, sys
from memlab.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["audit", sys.argv[1]])
print(json.dumps({"peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "torch": "torch" in sys.modules}))
"""

_MODEL = _RSS + """
import json, resource, sys, uuid
import memlab
after_import = rss_mb()
from memlab.embed import get_embedder
emb = get_embedder()
emb.encode([f"a text no cache holds: {uuid.uuid4()}"])
print(json.dumps({"after_import": after_import, "after_encode": rss_mb(),
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "precision": emb.provenance()["precision"], "misses": emb.stats.misses}))
"""


def _child(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    anchor = _child(_ANCHOR, str(REPO / "data" / "demo" / "elfmem-demo.db"))
    model = _child(_MODEL)
    print(f"memlab audit (anchor, model not imported: {not anchor['torch']}): "
          f"peak {anchor['peak']:.0f} MB")
    print(f"embedding model ({model['precision']}, {model['misses']} text encoded): RSS "
          f"{model['after_import']:.0f} MB after import memlab, {model['after_encode']:.0f} MB "
          f"after encode (+{model['after_encode'] - model['after_import']:.0f} MB); peak "
          f"{model['peak']:.0f} MB = {model['peak'] / anchor['peak']:.1f}x the anchor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
