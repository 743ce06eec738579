"""Options anywhere on a command line: `memlab report audit -q A B --out X` and `memlab audit A
--json B` read A and B as the stores, as they read them with the options last. Plain argparse
filled a command's `PATH ...` list at the first option after the positional before it and
refused the rest as "unrecognized arguments". A wrong argument is still one line, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlab.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]
DEMO = "data/demo/elfmem-demo.db"
S20 = "data/samples/elfmem/elfmem-0.20.0-schema9.db"
AS_OF = "2026-08-04"


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600)


def _one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0], done.stderr
    return lines[0]


@pytest.mark.slow
def test_report_with_an_option_between_the_kind_and_its_stores(tmp_path):
    out = tmp_path / "report"
    done = _cli("report", "audit", "-q", DEMO, "--as-of", AS_OF, S20, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"report written: {out / '01-audit.html'}")
    metrics = json.loads((out / "metrics.json").read_text())
    assert sorted(metrics) == ["elfmem-0.20.0-schema9.db", "elfmem-demo.db"]  # both stores
    # --as-of, between the stores, reached the notebook: its note on the later store
    assert f"elfmem-0.20.0-schema9.db: --as-of {AS_OF} is before the store's last activity" \
        in done.stderr


def test_audit_of_two_stores_with_options_between_them():
    last = _cli("audit", DEMO, S20, "--as-of", AS_OF, "--json")
    assert last.returncode == 0, last.stderr
    assert len(json.loads(last.stdout)) == 2  # one comparison row per store
    for argv in (["audit", DEMO, "--json", S20, "--as-of", AS_OF],
                 ["audit", "--as-of", AS_OF, DEMO, "--json", S20]):
        done = _cli(*argv)
        assert done.returncode == 0, (argv, done.stderr)
        assert done.stdout == last.stdout, argv


def test_export_fleet_and_browse_with_options_between_their_paths(tmp_path):
    done = _cli("export", "parquet", DEMO, "--out", str(tmp_path / "lake"), S20)
    assert done.returncode == 0, done.stderr
    assert "2 audited" in done.stdout
    done = _cli("fleet", "data/samples/elfmem", "--workers", "0", "data/demo",
                "--out", str(tmp_path / "fleet"))
    assert done.returncode == 0, done.stderr
    assert "3 audited" in done.stdout  # the two samples and the demo
    done = _cli("browse", DEMO, "--build-only", str(tmp_path / "browse"), S20)
    assert done.returncode == 0, done.stderr
    import sqlite3

    with sqlite3.connect(tmp_path / "browse" / "memlab.db") as db:
        tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    assert len(tables) > 1


# Every command: the same arguments with the options first, between the positionals and last
# parse to the same namespace.
ORDERS = {
    "inspect": [[DEMO, "--json", "--max-problems", "3"], ["--json", DEMO, "--max-problems", "3"]],
    "audit": [[DEMO, S20, "--as-of", AS_OF, "--json"], [DEMO, "--as-of", AS_OF, S20, "--json"],
              ["--json", DEMO, "--as-of", AS_OF, S20]],
    "discover": [["data/samples", "--json"], ["--json", "data/samples"]],
    "simulate": [["--no-real", "--scenarios", "S1", "--seed", "1"],
                 ["--seed", "1", "--no-real", "--scenarios", "S1"]],
    "review": [[DEMO, "--out", "r", "--all"], ["--out", "r", DEMO, "--all"]],
    "apply": [["p.md", "--dry-run", "--repo", "x"], ["--dry-run", "p.md", "--repo", "x"]],
    "migrate": [[DEMO, "d", "--to", "substrate", "--verify"],
                [DEMO, "--to", "substrate", "d", "--verify"],
                ["--verify", DEMO, "--to", "substrate", "d"]],
    "report": [["audit", DEMO, S20, "-q", "--out", "x", "-p", "a=1"],
               ["audit", "-q", DEMO, "--out", "x", S20, "-p", "a=1"],
               ["-q", "audit", DEMO, "-p", "a=1", S20, "--out", "x"]],
    "schedule": [["--at", "05:00", "--systemd"], ["--systemd", "--at", "05:00"]],
    "fleet": [["a", "b", "--out", "x", "--workers", "0"], ["a", "--out", "x", "b", "--workers", "0"],
              ["--workers", "0", "a", "--out", "x", "b"]],
    "export": [["parquet", DEMO, S20, "--out", "x"], ["parquet", DEMO, "--out", "x", S20],
               ["--out", "x", "parquet", DEMO, S20]],
    "browse": [[DEMO, S20, "--port", "8002"], [DEMO, "--port", "8002", S20]],
}


def test_every_command_has_an_orders_case():
    assert set(ORDERS) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(ORDERS))
def test_options_anywhere_parse_the_same(name):
    first, *others = ORDERS[name]
    want = vars(build_parser().parse_args([name, *first]))
    assert want["command"] == name
    for argv in others:
        assert vars(build_parser().parse_args([name, *argv])) == want, argv


# ---- negative controls: what was wrong before is still refused, on one line -----------------

def test_an_unknown_option_is_still_refused_by_name(tmp_path):
    line = _one_line_error(_cli("audit", DEMO, "--bogus", S20))
    assert "unrecognized arguments: --bogus" in line and DEMO not in line and S20 not in line
    out = tmp_path / "never"
    line = _one_line_error(_cli("report", "audit", "-q", DEMO, "--no-such-flag", "--out", str(out)))
    assert "unrecognized arguments: --no-such-flag" in line
    assert not out.exists()  # refused before anything ran


def test_a_surplus_positional_is_still_refused_by_name():
    line = _one_line_error(_cli("inspect", DEMO, "--json", "extra.db"))
    assert line.endswith("unrecognized arguments: extra.db (see memlab --help)")
    line = _one_line_error(_cli("migrate", DEMO, "--to", "substrate"))
    assert "required: dest" in line


def test_an_option_missing_its_value_is_still_refused():
    line = _one_line_error(_cli("report", "audit", DEMO, "--out"))
    assert "argument --out: expected one argument" in line


def test_double_dash_still_ends_the_options(tmp_path):
    """After `--` a `-name` is a path, not an option (as before intermixed parsing)."""
    args = build_parser().parse_args(["audit", DEMO, "--json", "--", "-x.db"])
    assert args.paths == [DEMO, "-x.db"] and args.json
    args = build_parser().parse_args(["inspect", "--", "--json"])
    assert args.path == "--json" and not args.json
    line = _one_line_error(_cli("inspect", "--", "-no-such.db"))
    assert line.startswith("memlab: error: -no-such.db: no such file")
