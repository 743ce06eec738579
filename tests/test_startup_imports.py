"""What `memlab audit` of an elfmem .db does not import (issue 40, item 4b): the repository
reader behind the bundle check, and importlib.metadata when no installed distribution declares
a ``memlab.kinds`` plugin; and, as the control, that a declared plugin is still looked up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo" / "elfmem-demo.db"

_PROBE = """
import json, sys
import memlab
store = memlab.load(sys.argv[1])
from memlab import kinds
print(json.dumps({"blocks": len(store.blocks), "kinds": sorted(k.name for k in kinds.kinds()),
                  "loaded": sorted(m for m in ("importlib.metadata", "memlab.sources._git",
                                               "memlab.formats.letta_memfs", "yaml")
                                   if m in sys.modules)}))
"""


def _probe(extra_path: Path | None = None) -> tuple[dict, str]:
    path = [str(extra_path)] if extra_path else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(ROOT)]), "MEMLAB_QUIET": "1"}
    out = subprocess.run([sys.executable, "-c", _PROBE, str(DEMO)], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def test_loading_an_elfmem_db_imports_no_repository_reader_and_no_plugin_machinery():
    seen, stderr = _probe()
    assert seen["blocks"] > 0 and "elfmem_db" in seen["kinds"]
    assert seen["loaded"] == [], seen["loaded"]
    assert "warning" not in stderr


def test_a_declared_plugin_is_still_looked_up_through_importlib_metadata(tmp_path):
    # control: a distribution on the path that declares the group (its module is missing, so
    # loading it fails, which memlab reports as one warning line and goes on)
    dist = tmp_path / "site" / "memlab_fake_kind-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memlab-fake-kind\n"
                                   "Version: 1.0\n")
    (dist / "entry_points.txt").write_text("[memlab.kinds]\n"
                                           "fake = memlab_fake_kind_missing:register\n")
    seen, stderr = _probe(tmp_path / "site")
    assert "importlib.metadata" in seen["loaded"]
    assert "fake = memlab_fake_kind_missing:register" in stderr and "failed" in stderr
    assert seen["blocks"] > 0
