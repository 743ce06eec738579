"""The CLI: every command documented, errors as one clean line with exit status 2."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from memlab.cli import COMMANDS, build_parser, main


def test_every_command_is_documented_in_the_readme(repo_root):
    readme = (repo_root / "README.md").read_text()
    missing = [name for name in COMMANDS if f"memlab {name}" not in readme]
    assert missing == []


def test_every_command_help_has_an_example(capsys):
    parser = build_parser()
    for name in COMMANDS:
        with pytest.raises(SystemExit):
            parser.parse_args([name, "--help"])
        out = capsys.readouterr().out
        assert "Example:" in out and f"memlab {name}" in out, name


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_missing_path_is_one_line_exit_2(tmp_path, capsys):
    code, _, err = _run(["audit", str(tmp_path / "nope.db")], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "nope.db" in err and "Traceback" not in err


def test_non_sqlite_db_is_one_line_exit_2(tmp_path, capsys):
    bogus = tmp_path / "notes.db"
    bogus.write_text("this is a text file, not a database\n" * 10)
    code, _, err = _run(["audit", str(bogus)], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "notes.db" in err


def test_truncated_sqlite_is_one_line_exit_2(tmp_path, capsys, data_dir):
    good = (data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db").read_bytes()
    broken = tmp_path / "broken.db"
    broken.write_bytes(good[: len(good) // 3])
    code, _, err = _run(["inspect", str(broken)], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "broken.db" in err


def test_unknown_schema_version_is_one_line_exit_2(tmp_path, capsys):
    db = tmp_path / "future.db"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE blocks (id TEXT PRIMARY KEY, content TEXT, category TEXT, source TEXT,
                             created_at TEXT, status TEXT);
        CREATE TABLE system_config (key TEXT PRIMARY KEY, value TEXT);
        INSERT INTO system_config VALUES ('schema_version', '42');
    """)
    con.close()
    code, _, err = _run(["audit", str(db)], capsys)
    assert code == 2
    assert "future.db" in err and "42" in err and err.count("\n") == 1


def test_inspect_lists_frames_of_a_real_sample(capsys, data_dir):
    code, out, _ = _run(["inspect", str(data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db")], capsys)
    assert code == 0
    assert "schema_version: 9" in out
    assert "blocks" in out and "47" in out


def test_module_entry_point_runs():
    result = subprocess.run([sys.executable, "-m", "memlab", "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "audit" in result.stdout
