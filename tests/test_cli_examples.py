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


# ---- every Example: of the README's CLI reference ------------------------------------------


def _readme_examples() -> list[str]:
    """The command lines of the README reference's ``Example:`` blocks, as printed."""
    from memlab.cli._reference import readme_section

    section = readme_section((ROOT / "README.md").read_text(encoding="utf-8"))
    assert section
    lines = []
    for block in re.findall(r"```text\nExample:\n(.*?)```", section, re.S):
        lines += [ln.strip() for ln in block.splitlines() if ln.strip().startswith("memlab ")]
    return lines


def _argv(line: str) -> list[str]:
    """A printed example as the shell would pass it: ``$(date -u +%F)`` is today (UTC), the
    ``# ...`` comment is dropped."""
    words = shlex.split(line.replace("$(date -u +%F)", _today()), comments=True)
    assert words[0] == "memlab" and "$(" not in line.replace("$(date -u +%F)", "")
    return words[1:]


def _files(cwd: Path, *names: str) -> None:
    for name in names:
        assert (cwd / name).exists(), name


#: What each example must print (and write), by its command line as the README prints it; an
#: example without an entry here fails test_every_readme_example_has_a_check.
CHECKS = {
    "memlab inspect data/samples/elfmem/elfmem-0.20.0-schema9.db": lambda out, cwd: (
        out.startswith("elfmem_db  data/samples/elfmem/elfmem-0.20.0-schema9.db")
        and re.search(r"^blocks\s+\d+$", out, re.M)),
    "memlab audit data/demo/elfmem-demo.db --as-of 2026-08-04": lambda out, cwd: (
        out.startswith("elfmem audit: elfmem-demo.db (schema 5")
        and "as of 2026-08-04" in out.splitlines()[0]
        and re.search(r"Blocks ever created\s+185$", out, re.M)),
    "memlab discover data/samples   # or ~: the agents of your own home": lambda out, cwd: (
        re.match(r"\d+ store\(s\) under data/samples", out)
        and all(k in out for k in ("elfmem_db", "agent_file", "letta_server"))),
    "memlab simulate --real-only --scenarios S1,S3 --scale 2000": lambda out, cwd: (
        re.search(r"real cells: \d+ from the result cache, \d+ run", out)
        and "0.19.2" in out and "0.20.0" in out and "S3" in out and "S2 " not in out),
    "memlab simulate --no-real --instance data/demo/elfmem-demo.db --scenarios S1,S3,S5 --seed 0":
        lambda out, cwd: (
            "instance: instance=elfmem-demo.db" in out and "6: drop SQLite" in out
            and re.search(r"^\s+S1\s+S3\s+S5$", out, re.M)
            and "0.20.0" not in out.split("Evidence")[0]),
    "memlab review data/samples/elfmem/elfmem-0.20.0-schema9.db --out reviews/": lambda out, cwd: (
        re.match(rf"\d+ choice\(s\), the top \d+ listed in full; wrote "
                 rf"reviews/review-{_today()}.md", out)
        and (cwd / "reviews" / f"review-{_today()}.json").is_file()),
    "memlab apply reviews/review-$(date -u +%F).md --dry-run   # today's proposal (UTC date)":
        lambda out, cwd: (
            out.startswith(f"1 item(s) ticked: would write reviews/review-{_today()}.apply.py")
            and "VACUUM INTO" in out
            and not (cwd / "reviews" / f"review-{_today()}.apply.py").exists()),  # dry run
    "memlab migrate data/demo/elfmem-demo.db demo-substrate --to substrate --verify":
        lambda out, cwd: (
            out.startswith("elfmem-demo.db -> ")
            and re.search(r"parity: \d+ check\(s\), 0 difference\(s\)", out)
            and (cwd / "demo-substrate" / ".git").is_dir()),
    "memlab report audit data/demo/elfmem-demo.db --as-of 2026-08-04 --out reports/demo":
        lambda out, cwd: (
            "report written: " in out and (cwd / "reports/demo/metrics.json").is_file()
            and any((cwd / "reports/demo").glob("*audit.html"))),
    "memlab schedule --config data/reports-nightly.yaml --at 06:00 --fail-on-alert":
        lambda out, cwd: re.fullmatch(
            r"0 6 \* \* \* cd \S+ && .* report all --config \S+reports-nightly\.yaml "
            r"--fail-on-alert\n", out),
    "memlab fleet data/samples --out reports/fleet --workers 2": lambda out, cwd: (
        re.search(r"(\d+) audited, \d+ reused .*, 0 failed", out)
        and "lake: reports/fleet" in out and (cwd / "reports/fleet").is_dir()),
    "memlab browse data/demo/elfmem-demo.db --build-only reports/browse": lambda out, cwd: (
        (cwd / "reports/browse/memlab.db").is_file()
        and (cwd / "reports/browse/memlab.metadata.json").is_file()),
    # run as a server: the test opens the page it names, then stops it as Ctrl-C does
    "memlab browse data/demo/elfmem-demo.db --port 8001   # then open http://127.0.0.1:8001/memlab":
        lambda out, cwd: out.startswith("memlab browse: http://127.0.0.1:8001/memlab"),
    "memlab export parquet data/demo/elfmem-demo.db --out reports/lake": lambda out, cwd: (
        "1 audited" in out and "0 failed" in out and "lake: reports/lake" in out
        and any((cwd / "reports/lake").rglob("*.parquet"))),
}

#: Examples that embed, run a notebook or run the elfmem releases: seconds to a minute each.
SLOW = ("simulate --real-only", "memlab review", "memlab apply", "memlab migrate",
        "memlab report")


def test_every_readme_example_has_a_check():
    examples = _readme_examples()
    assert len(examples) >= len(COMMANDS)  # at least one per command
    assert {e.split()[1] for e in examples} == set(COMMANDS)
    assert set(examples) == set(CHECKS)
    for line in examples:
        words = _argv(line)
        for word in words:  # the data an example reads is bundled
            if word.startswith("data/"):
                assert (ROOT / word).exists(), (line, word)


@pytest.mark.parametrize("line", [
    pytest.param(line, marks=[pytest.mark.slow] if any(s in line for s in SLOW) else [])
    for line in CHECKS])
def test_readme_example_runs(line, cwd, capsys):
    if line.startswith("memlab apply"):
        md = cwd / "reviews" / f"review-{_today()}.md"
        if not md.exists():  # run alone: the review example makes the proposal
            assert run(capsys, *_argv(next(e for e in CHECKS if e.startswith("memlab review"))))[0] == 0
        text = md.read_text(encoding="utf-8")
        if "- [x]" not in text:  # a person ticks one option
            md.write_text(text.replace("- [ ]", "- [x]", 1), encoding="utf-8")
    if line.startswith("memlab browse") and "--build-only" not in line:
        code, out, err = _serve_then_interrupt(_argv(line), cwd, "http://127.0.0.1:8001/memlab")
    else:
        code, out, err = run(capsys, *_argv(line))
    assert code == 0, err
    assert CHECKS[line](out, cwd), out


def _serve_then_interrupt(argv: list[str], cwd: Path, url: str) -> tuple[int, str, str]:
    """Run a serving example as a user does: a new process, its page opened once it answers,
    then Ctrl-C (SIGINT); its exit status and output."""
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "memlab", *argv], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(url, timeout=2) as page:
                    assert page.status == 200
                    break
            except OSError:
                time.sleep(0.2)
        else:
            raise AssertionError(f"no page at {url}: {proc.poll()} {proc.communicate()[1][-500:]}")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err
