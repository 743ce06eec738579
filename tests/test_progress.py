"""Progress bars: shown on a terminal's stderr with counts, rate and ETA; silent otherwise.

Each run happens in a real pseudo-terminal (what a person at a shell has), so the tests see
exactly what would be drawn.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "elfmem-demo.db"
SIM = ["-m", "memlab", "simulate", "--scenarios", "S1", "--iterations", "1,4",
       "--instance", str(DEMO)]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMLAB_QUIET", "MEMLAB_PROGRESS")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def in_terminal(args: list[str], *, cols: int = 100, env: dict[str, str] | None = None,
                timeout: float = 600) -> str:
    """Run ``python ARGS`` with stdout and stderr on a pty of ``cols`` columns; return the screen
    stream as text (carriage returns kept)."""
    pid, fd = pty.fork()
    if pid == 0:  # child
        try:
            os.chdir(REPO)
            os.execve(sys.executable, [sys.executable, *args], env or _env())
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, b"".join(chunks)[-2000:]
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow
def test_simulate_shows_cells_done_rate_and_what_runs_on_a_terminal():
    screen = in_terminal(SIM)
    frames = [f for f in screen.split("\r") if f.startswith("simulating")]
    assert frames, screen[-1500:]
    last = frames[-1]
    assert "0/2" in frames[0] and "1/2" in last  # scenario x iteration cells, done/total
    assert re.search(r"\d+(\.\d+)?s?/?cell|cell/s", last)  # a rate
    assert re.search(r"<\d\d:\d\d", last)  # the ETA field
    assert any("S1 x " in f for f in frames)  # which cell is running
    assert "Iteration x Scenario" in screen  # the result is still printed


@pytest.mark.slow
def test_quiet_and_non_terminal_runs_draw_nothing():
    assert "simulating" not in in_terminal(["-m", "memlab", "--quiet", *SIM[2:]])
    assert "simulating" not in in_terminal([*SIM, "--quiet"])
    piped = subprocess.run([sys.executable, *SIM], cwd=REPO, env=_env(), capture_output=True,
                           text=True, timeout=600)
    assert piped.returncode == 0
    assert piped.stderr == ""  # a cron log gets the result, not bar frames
    assert "Iteration x Scenario" in piped.stdout


EMBED = """
import sys
import memlab.embed._embedder as e
e.LONG_STEP_SECONDS = float(sys.argv[1])   # announce even a short cold step
emb = e.get_embedder()
emb.encode([f"note number {i} about write-ahead logging" for i in range(300)])
emb.encode([f"note number {i} about write-ahead logging" for i in range(350)], progress=True)
"""


@pytest.mark.slow
def test_embedding_bar_counts_texts_and_cache_hits_and_announces_a_cold_step(tmp_path):
    env = _env(MEMLAB_CACHE_DIR=str(tmp_path / "cache"))
    screen = in_terminal(["-c", EMBED, "0"], env=env)
    frames = [f for f in screen.split("\r") if f.startswith("embedding")]
    # first call: 300 cold texts; second: 50 new, 300 from the cache
    assert any("/300" in f and "0 cached" in f for f in frames), frames[-3:]
    assert any("0/50" in f and "300 cached" in f for f in frames), frames[-3:]
    assert re.search(r"text/s|s/text", screen)
    note = re.search(r"memlab: embedding 300 texts not in the cache \(0 cached\) takes about "
                     r"\d+ s here \((\d+) texts/s\); done once: the vectors are kept in (\S+)",
                     screen)
    assert note, screen[-1500:]
    assert int(note.group(1)) > 0 and note.group(2) == str(tmp_path / "cache")
    # the same texts again, fully cached: nothing to draw
    again = in_terminal(["-c", EMBED, "0"], env=env)
    assert "texts not in the cache" not in again and "/300" not in again


def test_progress_off_when_quiet_env_or_not_a_tty(monkeypatch, capsys):
    from memlab import progress

    monkeypatch.delenv("MEMLAB_QUIET", raising=False)
    monkeypatch.setenv("MEMLAB_PROGRESS", "1")
    assert progress.enabled()
    with progress.quiet():
        assert not progress.enabled()
    assert progress.enabled()
    monkeypatch.setenv("MEMLAB_QUIET", "1")
    assert not progress.enabled()
    monkeypatch.delenv("MEMLAB_QUIET")
    monkeypatch.delenv("MEMLAB_PROGRESS")
    assert not progress.enabled()  # pytest captures stderr: not a terminal
    progress.note("never printed")
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("seconds, said", [(4, "4 s"), (89, "89 s"), (200, "3 min"),
                                           (5400, "1 h 30 min")])
def test_durations_read_as_a_person_plans(seconds, said):
    from memlab.progress import duration

    assert duration(seconds) == said


@pytest.mark.slow
def test_report_all_counts_reports_and_each_notebooks_cells_and_keeps_bars_out_of_html(tmp_path):
    import shutil

    shutil.copy(DEMO, tmp_path / "demo.db")
    config = tmp_path / "reports.yaml"
    config.write_text("as_of: 2026-08-04\nsimulation: false\nstores:\n  demo: demo.db\n")
    out = tmp_path / "out"
    screen = in_terminal(["-m", "memlab", "report", "all", "--config", str(config),
                          "--out", str(out)])
    frames = screen.split("\r")
    assert "memlab: 2 report(s) to render (1 store(s) x their notebooks)" in screen
    reports = [f for f in frames if f.startswith("reports")]
    assert any("0/2" in f and "demo/audit" in f for f in reports), reports[:3]
    assert any("1/2" in f and "demo/review" in f for f in reports), reports[-3:]
    assert any(re.search(r"01-audit:\s+\d+%.*\d+/\d+ \[", f) for f in frames)  # its cells
    assert any(f.startswith("05-review") for f in frames)
    for html in (out / "demo/audit/01-audit.html", out / "demo/review/05-review.html"):
        text = html.read_text()
        assert "it/s" not in text and "text/s" not in text and "step/s" not in text


@pytest.mark.slow
def test_in_a_notebook_kernel_bars_are_widgets_and_notes_are_shown(tmp_path):
    import json

    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from memlab.progress import bar, note\n"
        "note('embedding 9 texts takes about 1 s here')\n"
        "for _ in bar(range(30), desc='demo', unit='x'):\n    pass")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, tmp_path / "in.ipynb")
    run = subprocess.run([sys.executable, "-m", "papermill", str(tmp_path / "in.ipynb"),
                          str(tmp_path / "out.ipynb"), "--no-progress-bar"], cwd=tmp_path,
                         env=_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    outputs = json.loads((tmp_path / "out.ipynb").read_text())["cells"][0]["outputs"]
    texts = "".join("".join(o.get("text", "")) for o in outputs if o["output_type"] == "stream")
    assert "memlab: embedding 9 texts takes about 1 s here" in texts
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)


@pytest.mark.slow
def test_loading_the_model_draws_no_bar_when_memlab_draws_none(tmp_path):
    """A cold cache makes ``memlab review`` load the model: transformers' own "Loading weights"
    bar must follow memlab's rule (it reached a piped stderr and ``--quiet`` runs)."""
    sample = REPO / "data" / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db"
    review = ["-m", "memlab", "review", str(sample), "--as-of", "2026-08-04", "--force"]
    env = _env(MEMLAB_CACHE_DIR=str(tmp_path / "cold-cache"))
    piped = subprocess.run([sys.executable, *review, "--out", str(tmp_path / "piped")], cwd=REPO,
                           env=env, capture_output=True, text=True, timeout=600)
    assert piped.returncode == 0, piped.stderr[-2000:]
    assert "wrote" in piped.stdout and piped.stderr == ""
    env = _env(MEMLAB_CACHE_DIR=str(tmp_path / "cold-cache-2"))
    screen = in_terminal(["-m", "memlab", "--quiet", *review[2:], "--out", str(tmp_path / "tty")],
                         env=env)
    assert "wrote" in screen and "Loading weights" not in screen, screen[-1500:]


_SLOW = '''
import sys, nbformat
from pathlib import Path
tmp = Path(sys.argv[1])
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("x = 1"),
            nbformat.v4.new_code_cell("# wait for the slow part\\nimport time\\ntime.sleep(3)"),
            nbformat.v4.new_code_cell("print(x)")]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbformat.write(nb, tmp / "slow.ipynb")
from memlab.report import execute_notebook
r = execute_notebook(str(tmp / "slow.ipynb"), {}, tmp / "out", long_cell=1.0)
print("done", r.html.name)
'''


@pytest.mark.slow
def test_a_notebook_run_names_each_cell_says_when_one_is_long_and_clears_its_bar(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text(_SLOW)
    screen = in_terminal([str(script), str(tmp_path)])
    frames = [f.strip("\n") for f in screen.split("\r")]
    bars = [f for f in frames if f.startswith("slow:")]
    assert any("cell 1: the report's parameters" in f for f in bars), bars
    assert any("cell 3: wait for the slow part" in f and "2/4" in f for f in bars), bars
    assert any("3/4" in f for f in bars) and any("4/4" in f or "cell 4: print(x)" in f
                                                for f in bars)
    [notice] = [f for f in frames if f.startswith("memlab: slow: cell 3/4 has been running")]
    assert "(wait for the slow part)" in notice and "the bar moves on when it ends" in notice
    # finished: the bar's line is blanked (leave=False) before the result is printed
    end = frames.index(next(f for f in frames if f.startswith("done")))
    last_bar = max(i for i, f in enumerate(frames) if f.startswith("slow:"))
    assert last_bar < end and any(f.strip() == "" for f in frames[last_bar + 1:end])


@pytest.mark.slow
def test_loading_the_model_on_a_terminal_draws_only_memlab_bars(tmp_path):
    """``memlab review`` on a terminal with a cold cache loads the model: transformers' own
    "Loading weights" bar is not drawn (it showed twice), memlab's bars still are."""
    sample = REPO / "data" / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db"
    env = _env(MEMLAB_CACHE_DIR=str(tmp_path / "cold-cache"))
    screen = in_terminal(["-m", "memlab", "review", str(sample), "--as-of", "2026-08-04",
                          "--force", "--out", str(tmp_path / "tty")], env=env)
    assert "wrote" in screen and "Loading weights" not in screen, screen[-1500:]
