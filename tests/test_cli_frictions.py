"""The small frictions of issue 26, each as a new user meets it on the command line."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
SCHEMA9 = DATA / "samples/elfmem/elfmem-0.20.0-schema9.db"


def _cli(*args: str, cwd: Path = ROOT, columns: int = 160) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=600)


def _one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memlab: error: "), done.stderr
    return lines[0]


def test_version_is_the_package_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("version")
    if version is None:  # dynamic: setup.py / the package's own attribute
        version = re.search(r'__version__ = "([^"]+)"',
                            (ROOT / "memlab/__init__.py").read_text()).group(1)
    done = _cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"memlab {version}"


@pytest.mark.parametrize("as_of", ["08/04/2026", "8.4.26", "04-08-2026"])
def test_day_or_month_first_dates_are_refused_as_ambiguous(as_of):
    line = _one_line_error(_cli("audit", str(SCHEMA9), "--as-of", as_of))
    assert "ambiguous" in line and "YYYY-MM-DD" in line
    line = _one_line_error(_cli("report", "audit", str(SCHEMA9), "--as-of", as_of))
    assert "ambiguous" in line
    assert _cli("audit", str(SCHEMA9), "--as-of", "2026-08-04", "--json").returncode == 0


def test_report_of_a_store_kind_without_a_store_is_an_error(tmp_path):
    for kind in ("audit", "memfs", "review", "migration"):
        line = _one_line_error(_cli("report", kind, "--out", str(tmp_path / kind)))
        assert f"memlab report {kind} needs the store" in line
        assert not (tmp_path / kind).exists()  # nothing ran: not the demo


def _git_files(repo: Path) -> int:
    """Memory files (``*.md`` outside dot-folders) at main, as git lists them."""
    out = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "main"],
                         capture_output=True, text=True, check=True).stdout
    return sum(1 for p in out.splitlines() if p.endswith(".md") and not p.startswith("."))


@pytest.mark.parametrize("bundle", sorted((DATA / "samples/memfs").glob("*.bundle")),
                         ids=lambda p: p.name)
def test_inspect_accepts_a_git_bundle(bundle, tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--branch", "main", str(bundle), str(clone)],
                   check=True, capture_output=True)
    done = _cli("inspect", str(bundle.relative_to(ROOT)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("letta_memfs  data/samples/memfs/" + bundle.name)
    assert "(git bundle, at its main branch)" in done.stdout.splitlines()[0]
    files = int(re.search(r"^files\s+(\d+)$", done.stdout, re.M).group(1))
    assert files == _git_files(clone)
    assert not [p for p in Path("/tmp").glob(f"memlab-inspect-p{os.getpid()}-*")]


def test_discover_prints_a_readable_table(tmp_path):
    from test_discover import CONFIG, PERSONA, _commit, _repo, _write

    home = tmp_path / "home"
    memory = home / ".letta/agents/agent-aaa/memory"
    _write(memory / "system/persona.md", PERSONA)
    _write(memory / ".letta/config.json", CONFIG)
    _commit(_repo(memory, name="EmmaBot"), ["system/persona.md", ".letta/config.json"],
            "Initial commit", "2026-03-01T12:00:00+00:00")
    _write(home / ".letta/agents/agent-bbb/memory/system/persona.md", PERSONA)  # no git
    done = _cli("discover", str(home))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"2 store(s) under {home}  (– : not known for that store)"
    header = lines[1].split()
    assert header[:4] == ["name", "kind", "layout", "path"] and "problem" in header
    rows = {line.split()[0]: line for line in lines[3:]}
    assert set(rows) == {"EmmaBot", "agent-bbb"}  # no name: its id, never "–"
    assert "./.letta/agents/agent-aaa/memory" in rows["EmmaBot"]
    assert "2026-03-01 12:00" in rows["EmmaBot"]
    for bad in ("NaN", "<NA>", "NaT", "None"):
        assert bad not in done.stdout
    assert all(len(line) <= 160 for line in lines)
    narrow = _cli("discover", str(home), columns=60).stdout.splitlines()
    assert narrow[1].split() == ["name", "kind", "path"]  # still a table, one line per store
    assert narrow[3].split() == ["EmmaBot", "letta_memfs", "./.letta/agents/agent-aaa/memory"]
    assert max(map(len, narrow)) <= 60 and narrow[5].startswith("not shown at this width: ")


def test_migrate_messages_name_what_exists(tmp_path):
    work = tmp_path / "elsewhere"
    work.mkdir()
    done = _cli("migrate", str(SCHEMA9), str(tmp_path / "verified"), "--to", "substrate",
                "--verify", "--no-retrieval")
    assert done.returncode == 0, done.stderr
    assert ".flags)" not in done.stdout and "MigrationResult.flags" in done.stdout
    from memlab.migrations import MigrationResult

    assert "flags" in MigrationResult.__dataclass_fields__
    planned = _cli("migrate", str(SCHEMA9), str(tmp_path / "planned"), "--to", "substrate",
                   "--plan")
    assert planned.returncode == 0, planned.stderr
    command = re.search(r"review it, then run: (.+)$", planned.stdout, re.M).group(1)
    # the printed command runs as printed from any folder, and builds the destination
    ran = subprocess.run(shlex.split(command), cwd=work, capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert subprocess.run(["git", "-C", str(tmp_path / "planned"), "rev-parse", "HEAD"],
                          capture_output=True).returncode == 0


def test_report_fleet_of_a_lake_reads_it_back(tmp_path):
    import json

    lake = tmp_path / "lake"
    done = _cli("-q", "fleet", str(DATA / "samples/letta-af"), "--out", str(lake),
                "--workers", "0")
    assert done.returncode == 0, done.stderr
    import pyarrow.parquet as pq

    table = pq.ParquetDataset(lake / "headline").read(columns=["store_id"])  # pyarrow, not memlab
    rows, stores = table.num_rows, len(set(table.column("store_id").to_pylist()))
    out = tmp_path / "report"
    done = _cli("-q", "report", "fleet", str(lake), "--out", str(out), "-p", "workers=0")
    assert done.returncode == 0, done.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["stores"], metrics["ok"], metrics["failed"]) == (rows, stores, 0)
    assert not (out / "lake").exists()  # read back, not audited again
