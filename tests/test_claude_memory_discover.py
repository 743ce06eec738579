"""memlab discover finds Claude Code auto-memory folders where Claude Code puts them:
~/.claude/projects/<slug>/memory, the settings' autoMemoryDirectory and, for the user's own
home, $CLAUDE_COWORK_MEMORY_PATH_OVERRIDE."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd

import memlab

sys.path.insert(0, str(Path(__file__).parent))
import claude_memory_folders as cm  # noqa: E402


def _claude_rows(df):
    return df[df["kind"].astype(str) == "claude_memory"].reset_index(drop=True)


def test_project_memory_folders_under_the_home(tmp_path):
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    cm.build(projects / "-home-u-billing" / "memory")
    cm.build(projects / "-home-u-web" / "memory")
    (projects / "-home-u-nomemory").mkdir(parents=True)  # a project with no memory yet
    rows = _claude_rows(memlab.discover(home))
    assert sorted(rows["agent_id"]) == ["-home-u-billing", "-home-u-web"]
    row = rows.set_index("agent_id").loc["-home-u-billing"]
    assert row["path"] == str(projects / "-home-u-billing" / "memory")
    assert row["files"] == 5  # MEMORY.md and four topic files
    assert row["bytes"] == sum(p.stat().st_size for p in Path(row["path"]).iterdir())
    assert pd.isna(row["problem"])  # all is well
    # the path discover gives is what memlab.load takes
    assert memlab.load(row["path"]).kind == "claude_memory"


def test_a_symlinked_memory_folder_is_listed_and_not_followed(tmp_path):
    home = tmp_path / "home"
    real = cm.build(tmp_path / "elsewhere")
    link = home / ".claude" / "projects" / "-p" / "memory"
    link.parent.mkdir(parents=True)
    os.symlink(real, link)
    rows = _claude_rows(memlab.discover(home))
    assert len(rows) == 1 and "symbolic link" in rows["problem"][0]
    assert rows["files"].isna().all()


def test_the_settings_auto_memory_directory(tmp_path):
    home = tmp_path / "home"
    custom = cm.build(tmp_path / "notes" / "memory")
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"autoMemoryDirectory": str(custom)})
    )
    rows = _claude_rows(memlab.discover(home))
    assert list(rows["path"]) == [str(custom)]
    assert "autoMemoryDirectory" in rows["problem"][0]
    # unreadable settings are said, not dropped
    (home / ".claude" / "settings.json").write_text("{not json")
    rows = _claude_rows(memlab.discover(home))
    assert len(rows) == 1 and "settings.json not read" in rows["problem"][0]


def test_the_environment_override_applies_to_the_real_home_only(tmp_path, monkeypatch):
    custom = cm.build(tmp_path / "cowork")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", str(custom))
    # a root named on the command line stands in for a home: the variable is not its own
    assert _claude_rows(memlab.discover(home)).empty
    monkeypatch.setenv("HOME", str(home))
    rows = _claude_rows(memlab.discover())
    assert list(rows["path"]) == [str(custom)]
    assert "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE" in rows["problem"][0]


def test_a_root_walk_finds_a_memory_folder_anywhere_below_it(tmp_path):
    cm.build(tmp_path / "backups" / "2026-12" / "memory")
    rows = _claude_rows(memlab.discover(tmp_path))
    assert list(rows["path"]) == [str(tmp_path / "backups" / "2026-12" / "memory")]


def test_qwen_code_project_memory_folders(tmp_path):
    home = tmp_path / "home"
    cm.build(home / ".qwen" / "projects" / "-home-u-api" / "memory")
    cm.build(home / ".claude" / "projects" / "-home-u-api" / "memory")
    rows = _claude_rows(memlab.discover(home)).sort_values("path")
    assert list(rows["name"]) == ["-home-u-api", "-home-u-api (Qwen Code)"]
    assert all(memlab.load(p).kind == "claude_memory" for p in rows["path"])
