"""Shell lines memlab writes are quoted for the program that reads them (issue 34, hole 9).

The crontab line quoted ``'MEMLAB_REPORTS_DIR=/a b/reports'`` whole: to sh that is a command
name, not an assignment, so in any folder that needs quoting (a space, a non-ASCII letter) the
nightly run exited 127. The systemd unit doubled ``$`` in ``Environment=``, where systemd
expands nothing, so the variable held ``$$``.

The cron line is run as cron runs it: the command after the five time fields, ``\\%`` turned
back into ``%`` (cron's only rewrite), through ``sh -c``; the program it starts is a recorder
script that writes its working folder, its ``MEMLAB_REPORTS_DIR`` and its arguments. The
systemd units go through ``systemd-analyze verify`` where it is installed (it checks that
ExecStart's program exists at the path it parsed, so the recorder lives under the odd name)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memlab.errors import InvalidArgument
from memlab.report._timer import install_systemd, make_schedule

#: Folder names sh needs quoted, each with what else cron or systemd would rewrite.
FOLDERS = ["nightly runs", "régis", "100% $HOME `id` 'q' ;x", "ünï cödé & $(id)"]

RECORDER = """#!/bin/sh
exec python3 -c 'import json, os, sys
print(json.dumps({"cwd": os.getcwd(), "reports": os.environ.get("MEMLAB_REPORTS_DIR"),
                  "argv": sys.argv[1:]}))' "$@" > "$RECORD"
"""


def _setup(tmp_path: Path, name: str):
    work = tmp_path / name
    work.mkdir()
    config = tmp_path / "c.yaml"
    config.write_text("stores: {}\n")
    bindir = work / "bin dir"
    bindir.mkdir()
    program = bindir / "py thon"
    program.write_text(RECORDER)
    program.chmod(0o755)
    return work, config, program


@pytest.mark.parametrize("name", FOLDERS)
def test_the_crontab_line_runs_under_sh_in_a_folder_that_needs_quoting(tmp_path, name):
    work, config, program = _setup(tmp_path, name)
    s = make_schedule(config, workdir=work, at="06:00", python=str(program))
    line = s.crontab_line()
    command = line.split(" ", 5)[5].replace("\\%", "%")  # what cron hands to sh
    record = tmp_path / "record.json"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "RECORD": str(record)}
    ran = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env,
                         cwd="/", timeout=60, stdin=subprocess.DEVNULL)
    assert ran.returncode == 0, (line, ran.stderr)
    got = json.loads(record.read_text())
    assert got == {"cwd": str(work), "reports": str(work / "reports"),
                   "argv": list(s.argv[1:])}, line


@pytest.mark.parametrize("name", FOLDERS)
def test_the_systemd_unit_says_each_word_once(tmp_path, name):
    work, config, program = _setup(tmp_path, name)
    s = make_schedule(config, workdir=work, at="06:00", python=str(program))
    if "'" in name:  # WorkingDirectory= does not unquote: refused by name, not mis-written
        with pytest.raises(InvalidArgument, match="WorkingDirectory"):
            s.service()
        return
    service = s.service()
    env = next(ln for ln in service.splitlines() if ln.startswith("Environment="))
    # Environment= expands specifiers (%), never variables: '$' stays single
    reports = str(work / "reports").replace("%", "%%")
    assert env == f'Environment="MEMLAB_REPORTS_DIR={reports}"', env
    exec_start = next(ln for ln in service.splitlines() if ln.startswith("ExecStart="))
    assert exec_start.startswith(f'ExecStart="{str(program).replace("%", "%%")}" '), exec_start
    if shutil.which("systemd-analyze") is None:
        pytest.skip("no systemd-analyze here: the unit text was checked, not systemd's reading")
    files = install_systemd(s, folder=tmp_path / "units")
    verify = subprocess.run(["systemd-analyze", "verify", *map(str, files)],
                            capture_output=True, text=True, timeout=60)
    # verify exits 0 even on "Invalid syntax, ignoring": nothing may be said at all
    assert verify.returncode == 0 and verify.stderr.strip() == "", verify.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_verify_sees_a_wrong_program_path(tmp_path):
    """Negative control for the check above: a unit whose ExecStart program is not where the
    unit says (the '$$' the old quoting wrote in its path) is reported by verify."""
    work, config, program = _setup(tmp_path, "a $x")
    s = make_schedule(config, workdir=work, at="06:00", python=str(program))
    files = install_systemd(s, folder=tmp_path / "units")
    text = files[0].read_text()
    assert f'ExecStart="{program}" ' in text
    files[0].write_text(text.replace(f'ExecStart="{program}"',
                                     f'ExecStart="{str(program).replace("$", "$$")}"'))
    verify = subprocess.run(["systemd-analyze", "verify", *map(str, files)],
                            capture_output=True, text=True, timeout=60)
    assert "is not executable" in verify.stderr, verify.stderr
