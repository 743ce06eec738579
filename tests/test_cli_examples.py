"""The CLI as people type it (issue 33, item 4): every command's documented default works, a bad
output location fails before any work, and every ``Example:`` of the README's CLI reference
runs on the bundled data with its exit code and output checked.

One folder is the working directory of the whole module (``data`` in it links to the
checkout's ``data/``, so the examples run exactly as printed); the embedding cache is the
session's ``$MEMLAB_CACHE_DIR`` (tests/conftest.py), so the demo is embedded once.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
from pathlib import Path

import pytest

from memlab.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
DEMO = "data/demo/elfmem-demo.db"


@pytest.fixture(scope="module")
def cwd(tmp_path_factory):
    """A fresh working directory for the module, holding ``data`` (a link to the checkout's),
    with fp32 embeddings (the bf16 gate is slow on a busy box)."""
    folder = tmp_path_factory.mktemp("cwd")
    (folder / "data").symlink_to(ROOT / "data", target_is_directory=True)
    before, env = Path.cwd(), dict(os.environ)
    os.chdir(folder)
    os.environ["MEMLAB_EMBED_PRECISION"] = "fp32"
    os.environ.pop("MEMLAB_REPORTS_DIR", None)
    try:
        yield folder
    finally:
        os.chdir(before)
        os.environ.clear()
        os.environ.update(env)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memlab: error: "), err
    return lines[0]


def _today() -> str:
    return f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d}"


# ---- documented defaults -----------------------------------------------------------------


def test_review_without_out_writes_its_proposal_here(cwd, capsys):
    code, out, err = run(capsys, "review", DEMO)
    assert code == 0, err
    md = cwd / f"review-{_today()}.md"
    assert md.is_file() and md.with_suffix(".json").is_file()
    assert f"wrote review-{_today()}.md" in out
    assert re.match(r"\d+ choice\(s\), the top \d+ listed in full", out)


def test_review_never_replaces_todays_proposal_without_force(cwd, capsys, monkeypatch):
    md = cwd / f"review-{_today()}.md"
    if not md.exists():
        assert run(capsys, "review", DEMO)[0] == 0
    ticked = md.read_text(encoding="utf-8").replace("- [ ]", "- [x]", 1)
    md.write_text(ticked, encoding="utf-8")
    import memlab.reviews

    def no_work(*a, **k):
        raise AssertionError("the review ran although its output was refused")

    with monkeypatch.context() as m:
        m.setattr(memlab.reviews, "review", no_work)
        line = one_line_error(*run(capsys, "review", DEMO))
        assert f"review-{_today()}.md" in line and "--force" in line
    assert md.read_text(encoding="utf-8") == ticked  # the person's tick is still there
    # --all writes another file: today's short proposal does not block it
    code, out, err = run(capsys, "review", DEMO, "--all")
    assert code == 0, err
    assert (cwd / f"review-{_today()}-all.md").is_file()
    code, out, err = run(capsys, "review", DEMO, "--force")
    assert code == 0, err
    assert md.read_text(encoding="utf-8") != ticked


@pytest.mark.parametrize("argv", [
    ("review", DEMO, "--out", "{file}"),
    ("review", DEMO, "--out", "{file}/sub"),
    ("export", "parquet", DEMO, "--out", "{file}"),
    ("fleet", "data/demo", "--out", "{file}/lake", "--workers", "0"),
    ("report", "audit", DEMO, "--out", "{file}"),
    ("migrate", DEMO, "{file}/sub", "--to", "substrate"),
])
def test_a_bad_output_location_fails_before_any_work(cwd, capsys, monkeypatch, argv):
    import memlab.lake
    import memlab.migrations
    import memlab.report
    import memlab.reviews

    def no_work(*a, **k):
        raise AssertionError("work started although the output location is bad")

    for module, name in ((memlab.reviews, "review"), (memlab.lake, "export_parquet"),
                         (memlab.lake, "fleet"), (memlab.report, "report"),
                         (memlab.migrations, "migrate")):
        monkeypatch.setattr(module, name, no_work)
    (cwd / "a-file").write_text("not a folder\n")
    argv = [a.format(file="a-file") for a in argv]
    line = one_line_error(*run(capsys, *argv))
    assert "a-file" in line and "folder" in line
