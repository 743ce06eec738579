"""A store kind from another distribution: docs/examples/memlab-toy-kind, installed (pip,
``--target``, offline) into a folder a subprocess puts on its path, reaches memlab through the
``memlab.kinds`` entry point group: loaded, audited and discovered; reviewed (API and CLI),
its ticks applied and migrated with ``--verify``, all by the toy's own behaviour objects (its
removal moves a line to the toy format's TRASH section, its apply rewrites the file, its
verifier compares the copy line by line), with no edit to memlab (issue 36)."""

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
proposal = memlab.review(store, as_of="2026-06-01")
out["choices"] = [[c.section, c.title] for c in proposal.choices]
out["steps"] = sorted({s["op"] for it in proposal.items for s in it.change["steps"]})
out["fingerprint"] = sorted(proposal.fingerprint)
try:
    memlab.migrate(store.path, "migrated", to="substrate")
except MemlabError as exc:
    out["migrate_elsewhere"] = [type(exc).__name__, str(exc)]
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
    toy = tmp_path / "home/.toy/agent7.toy"
    toy.write_text("TOY\nremember the milk\nbuy bread\n")
    old = 1735689600  # 2025-01-01T00:00:00Z: the lines' only date is the file's mtime
    os.utime(toy, (old, old))
    return tmp_path


def test_an_installed_toy_kind_is_loaded_audited_discovered_and_reviewed(toy_site, home):
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
    # reviewed through the toy's adapter: its units (the header line is none), its removal
    # (an op memlab has no code for) and its apply's fingerprint
    assert sorted(out["choices"]) == [
        ["stale", 'no use recorded (a toy file) for 516 days: `L2` "remember the milk"'],
        ["stale", 'no use recorded (a toy file) for 516 days: `L3` "buy bread"'],
    ]
    assert out["steps"] == ["toy_trash"]
    assert out["fingerprint"] == ["sha256"]
    # a target the toy does not migrate to is still refused in its words
    assert out["migrate_elsewhere"][0] == "MigrationError"
    assert "does not migrate to 'substrate'" in out["migrate_elsewhere"][1]
    assert not (home / "migrated").exists()


def _tick(md: Path, text: str) -> None:
    """Tick the option whose line mentions ``text`` (as a person does in the markdown)."""
    lines = md.read_text(encoding="utf-8").splitlines(keepends=True)
    hit = [i for i, line in enumerate(lines) if line.startswith("- [ ] ") and text in line]
    assert len(hit) == 1, hit
    lines[hit[0]] = lines[hit[0]].replace("- [ ] ", "- [x] ", 1)
    md.write_text("".join(lines), encoding="utf-8")


_LOAD = r"""
import json, memlab
s = memlab.load("home/.toy/agent7.toy")
print(json.dumps([list(s.blocks.content), list(s.trash.content)]))
"""

_VERIFY = r"""
import json, memlab
p = memlab.verify("home/.toy/agent7.toy", "migrated")
print(json.dumps([sorted(set(p.check.astype(str))), int((p.ok == False).sum()), len(p)]))
"""


def test_the_cli_reviews_applies_and_migrates_the_toy_with_its_own_behaviour(toy_site, home):
    run = _run(["-m", "memlab", "review", "home/.toy/agent7.toy", "--out", "proposals",
                "--as-of", "2026-06-01"], toy_site, home)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("2 choice(s), the top 2 listed in full; wrote ")
    md = next((home / "proposals").glob("review-*.md"))
    text = md.read_text(encoding="utf-8")
    assert "moves each ticked line below the file's TRASH line" in text  # the toy's own note
    assert 'move line 2 "remember the milk" to the TRASH section (decayed)' in text
    _tick(md, "remember the milk")

    run = _run(["-m", "memlab", "apply", str(md)], toy_site, home)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "1 item(s) changed 1 file(s)",
        f"moved 1 line(s) to the TRASH section of {home / 'home/.toy/agent7.toy'}"]
    assert (home / "home/.toy/agent7.toy").read_text() == \
        "TOY\nbuy bread\nTRASH\nremember the milk\n"
    loaded = _run(["-c", _LOAD], toy_site, home)
    assert json.loads(loaded.stdout) == [["TOY", "buy bread"], ["remember the milk"]]
    # applying the same proposal again: the file is not the one reviewed
    again = _run(["-m", "memlab", "apply", str(md)], toy_site, home)
    assert again.returncode == 2 and "the toy file changed since it was reviewed" in again.stderr

    run = _run(["-m", "memlab", "migrate", "home/.toy/agent7.toy", "migrated", "--verify"],
               toy_site, home)
    assert run.returncode == 0, run.stderr
    checked = _run(["-c", _VERIFY], toy_site, home)
    assert json.loads(checked.stdout) == [["toy_line", "toy_trash"], 0, 3]
    # negative control: a line trashed in the source after the migration (it lands below the
    # TRASH line) is a difference the toy's verifier finds
    with open(home / "home/.toy/agent7.toy", "a", encoding="utf-8") as fh:
        fh.write("a late line\n")
    checked = _run(["-c", _VERIFY], toy_site, home)
    assert json.loads(checked.stdout) == [["toy_line", "toy_trash"], 1, 4]


@pytest.mark.parametrize("command, expected", [
    (["audit", "home/.toy/agent7.toy"], (0, "3 blocks\n")),
    (["migrate", "home/.toy/agent7.toy", "migrated", "--to", "substrate"],
     (2, "a toy store does not migrate to 'substrate'")),
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
