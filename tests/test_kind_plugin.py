"""A store kind from another distribution: docs/examples/memlab-toy-kind, installed (pip,
``--target``, offline) into a folder a subprocess puts on its path, reaches memlab through the
``memlab.kinds`` entry point group: loaded, audited and discovered; review and migrate refuse
it with one line (exit 2, no traceback)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_API = r"""
import json, sys
import memlab
from memlab import kinds
from memlab.errors import MemlabError

out = {"plugin_imported_by_import_memlab": "memlab_toy" in sys.modules}
store = memlab.load("home/.toy/agent7.toy")
out["plugin_imported_after_load"] = "memlab_toy" in sys.modules
out["kind"] = store.kind
out["blocks"] = list(store.blocks.content)
out["detected"] = store.meta["detected"]
out["audit"] = memlab.audit(store).headline["blocks"]
inv = memlab.discover("home")
row = inv[inv.kind == "toy"].iloc[0]
out["discovered"] = [row.agent_id, row.path]
kinds.get("toy"); kinds.kinds()  # the entry point was called once: a second register() would fail
out["names"] = [k.name for k in kinds.kinds()].count("toy")
for what, call in (("review", lambda: memlab.review(store)),
                   ("migrate", lambda: memlab.migrate(store.path, "migrated"))):
    try:
        call()
        out[what] = "ran"
    except MemlabError as exc:
        out[what] = [type(exc).__name__, str(exc)]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("toy-kind")
    src = work / "src"
    shutil.copytree(ROOT / "docs/examples/memlab-toy-kind", src)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--no-build-isolation", "--target", str(work / "site"), str(src)],
                   check=True, capture_output=True, text=True)
    return work / "site"


def _run(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
           "MEMLAB_QUIET": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True)


@pytest.fixture
def home(tmp_path) -> Path:
    (tmp_path / "home/.toy").mkdir(parents=True)
    (tmp_path / "home/.toy/agent7.toy").write_text("TOY\nremember the milk\nbuy bread\n")
    return tmp_path


def test_an_installed_toy_kind_is_loaded_audited_and_discovered(toy_site, home):
    run = _run(["-c", _API], toy_site, home)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["plugin_imported_by_import_memlab"] is False  # entry points load lazily
    assert out["plugin_imported_after_load"] is True
    assert out["kind"] == "toy"
    assert out["blocks"] == ["TOY", "remember the milk", "buy bread"]
    assert out["detected"] == {"kind": "toy", "evidence": "starts with TOY"}
    assert out["audit"] == 3
    assert out["discovered"] == ["agent7", "home/.toy/agent7.toy"]
    assert out["names"] == 1
    assert out["review"] == ["UnsupportedSchema", "home/.toy/agent7.toy: review does not cover "
                             "toy stores (review works on elfmem databases and substrates, Letta "
                             "memfs and Souveraine repos and Letta agent files; migrate this "
                             "store to one (`memlab migrate SRC DEST`) and review that)"]
    assert out["migrate"][0] == "MigrationError"
    assert "memlab does not migrate from this toy store" in out["migrate"][1]
    assert not (home / "migrated").exists()


@pytest.mark.parametrize("command, expected", [
    (["audit", "home/.toy/agent7.toy"], (0, "3 blocks\n")),
    (["review", "home/.toy/agent7.toy", "--out", "proposals"],
     (2, "review does not cover toy stores")),
    (["migrate", "home/.toy/agent7.toy", "migrated"],
     (2, "memlab does not migrate from this toy store")),
])
def test_the_cli_uses_the_installed_kind_or_refuses_it_in_one_line(toy_site, home, command,
                                                                     expected):
    run = _run(["-m", "memlab", *command], toy_site, home)
    code, text = expected
    assert run.returncode == code, run.stderr
    if code == 0:
        assert run.stdout == text and run.stderr == ""
    else:
        assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
        assert run.stderr.startswith("memlab: error: ") and text in run.stderr


def test_without_the_distribution_the_toy_file_is_unrecognised(home):
    run = _run(["-m", "memlab", "inspect", "home/.toy/agent7.toy"], home / "empty-site", home)
    assert run.returncode == 2 and "not a store memlab knows" in run.stderr
