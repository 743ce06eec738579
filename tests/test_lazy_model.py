"""Commands that need no embeddings never import the model's libraries (torch,
sentence-transformers, transformers: ~600 MB of RSS once the model runs; README, Memory).

Each command runs in a fresh interpreter through ``memlab.cli.main``; the driver then prints
which of those modules ``sys.modules`` holds. A control run imports torch before the command,
so the probe is shown to see a loaded library. (``migrate`` checks retrieval parity with the
model unless ``--no-retrieval``; ``review`` and ``simulate`` need it.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

MODEL_MODULES = ("torch", "sentence_transformers", "transformers")

_DRIVER = r"""
import contextlib, importlib, io, json, sys
preload, argv = sys.argv[1], sys.argv[2:]
if preload:
    importlib.import_module(preload)
from memlab.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "loaded": sorted(m for m in MODULES if m in sys.modules)}))
""".replace("MODULES", repr(MODEL_MODULES))


def _run(argv: list[str], preload: str = "") -> dict:
    proc = subprocess.run([sys.executable, "-c", _DRIVER, preload, *argv], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", [
    ["inspect", "{data}/demo/elfmem-demo.db"],
    ["audit", "{data}/demo/elfmem-demo.db", "{data}/samples/letta-af/ezra.af"],
    ["discover", "{data}"],
    ["export", "parquet", "{data}/demo/elfmem-demo.db", "--out", "{tmp}/lake"],
    ["fleet", "{data}/samples/letta-af", "--out", "{tmp}/lake", "--workers", "0"],
    ["migrate", "{data}/samples/letta-af/ezra.af", "{tmp}/repo", "--to", "letta",
     "--no-retrieval"],
    ["migrate", "{data}/demo/elfmem-demo.db", "{tmp}/sub", "--to", "substrate",
     "--no-retrieval"],
], ids=lambda c: " ".join(c[:1] + c[-2:] if c[0] == "migrate" else c[:2]))
def test_a_command_without_embeddings_does_not_import_the_model(command, data_dir, tmp_path):
    argv = [a.format(data=data_dir, tmp=tmp_path) for a in command]
    got = _run(argv)
    assert got == {"code": 0, "loaded": []}


def test_the_probe_sees_a_loaded_model_library(data_dir):
    got = _run(["inspect", str(data_dir / "demo" / "elfmem-demo.db")], preload="torch")
    assert got["code"] == 0 and "torch" in got["loaded"]
