"""A failing ``memlab.kinds`` plugin (issue 34, hole 14) is one warning line naming it; the
plugins after it still load and every command still runs (it was a 31-line traceback on every
command, ``--version`` included, and the plugins after it never loaded).

The plugins are real entry points: a ``*.dist-info`` folder with an ``entry_points.txt`` on the
subprocess's path, found by ``importlib.metadata`` as an installed distribution is. The good
plugin is docs/examples/memlab-toy-kind (sorted after every broken one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "docs" / "examples" / "memlab-toy-kind"

#: name -> (module source, entry point value); each sorts before "toy".
BROKEN = {
    "a_import": ("import nonexistent_dependency_xyz\n", "broken_import:register"),
    "b_raises": ("def register():\n    raise RuntimeError('boom\\n\\x1b[31mred')\n",
                 "broken_raises:register"),
    "c_exits": ("def register():\n    raise SystemExit(3)\n", "broken_exits:register"),
    "d_missing": ("", "broken_missing:no_such_function"),
}

_LIST = ("import json; from memlab import kinds; "
         "print(json.dumps({'names': [k.name for k in kinds.kinds()], "
         "'failures': kinds.plugin_failures}))")


def _dist(site: Path, name: str, entry: str) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"  # as pip names it
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[memlab.kinds]\n{entry}\n")


@pytest.fixture
def site(tmp_path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    _dist(site, "memlab-toy-kind", "toy = memlab_toy:register")
    return site


def _run(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(TOY), str(ROOT)])}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=120, stdin=subprocess.DEVNULL, cwd=site)


def _with_broken(site: Path) -> None:
    for name, (source, entry) in BROKEN.items():
        module = entry.split(":")[0]
        (site / f"{module}.py").write_text(source)
        _dist(site, f"broken-{name}", f"{name} = {entry}")


def test_broken_plugins_are_one_line_each_and_the_next_still_loads(site):
    _with_broken(site)
    got = _run(site, "-m", "memlab", "--version")
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith("memlab "), got.stdout
    lines = got.stderr.splitlines()
    assert "Traceback" not in got.stderr, got.stderr
    assert len(lines) == len(BROKEN), got.stderr
    for line, name in zip(lines, sorted(BROKEN)):
        assert line.startswith("memlab: warning: ") and f"plugin {name} = " in line, line
        assert "\x1b" not in line  # the plugin's message cannot recolour the terminal
    assert "ModuleNotFoundError" in lines[0] and "SystemExit" in lines[2]

    listed = _run(site, "-c", _LIST)
    assert listed.returncode == 0, listed.stderr
    out = json.loads(listed.stdout)
    assert "toy" in out["names"], out  # the plugin after the broken ones
    assert len(out["failures"]) == len(BROKEN)
    assert not set(BROKEN) & set(out["names"])


def test_a_command_runs_with_a_broken_plugin(site):
    _with_broken(site)
    (site / "agent.toy").write_text("TOY\none block\nanother\n")
    got = _run(site, "-m", "memlab", "inspect", "agent.toy")
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr
    assert len(got.stderr.splitlines()) == len(BROKEN), got.stderr


def test_no_warning_when_every_plugin_loads(site):
    """Negative control: the good plugin alone says nothing on stderr."""
    got = _run(site, "-m", "memlab", "--version")
    assert got.returncode == 0 and got.stderr == "", got.stderr
    names = _run(site, "-c", "from memlab import kinds; print([k.name for k in kinds.kinds()])")
    assert "'toy'" in names.stdout and names.stderr == "", names
