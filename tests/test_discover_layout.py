"""discover names the layout memlab.load gives (issue 33 item 3): both ask the loader's one
layout detection, so an inventory row and the loaded store never disagree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import memlab
from memlab.sources.discover import discover
from memlab.sources._bundle import unpack_bundle

PERSONA = "---\ndescription: who I am\nlimit: 5000\n---\nI am Emma.\n"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=Agent",
                    "-c", "user.email=agent@example.invalid", *args],
                   check=True, capture_output=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _rows(home: Path) -> pd.DataFrame:
    return discover(home).set_index("agent_id")


def test_the_bundled_samples_layouts_are_the_loaders(data_dir, tmp_path):
    home = tmp_path / "home"
    bundles = sorted((data_dir / "samples" / "memfs").glob("*.bundle"))
    assert len(bundles) >= 2
    for bundle in bundles:
        repo = unpack_bundle(bundle, tmp_path / "unpacked")
        memory = home / ".letta" / "agents" / f"agent-{bundle.stem}" / "memory"
        memory.parent.mkdir(parents=True)
        shutil.move(str(repo), memory)
    rows = _rows(home)
    layouts = set()
    for bundle in bundles:
        row = rows.loc[f"agent-{bundle.stem}"]
        loaded = memlab.load(row["path"]).meta["layout"]
        assert row["layout"] == loaded, bundle.name
        layouts.add(loaded)
    assert layouts == {"letta_v1", "letta_v2"}  # both samples, two layouts


def test_a_v2_index_on_disk_over_a_v1_prefix_head_is_what_load_says(tmp_path):
    # HEAD holds the v1 memory/ prefix layout; a MEMORY.md written but not committed sits
    # beside it. The folder-listing rule discover had called it letta_v2; load reads HEAD.
    home = tmp_path / "home"
    memory = home / ".letta" / "agents" / "agent-mixed" / "memory"
    _write(memory / "memory" / "system" / "persona.md", PERSONA)
    _git(memory.parent, "init", "-q", str(memory))
    _git(memory, "add", "-A")
    _git(memory, "commit", "-qm", "init")
    _write(memory / "MEMORY.md", "# index\n")
    row = _rows(home).loc["agent-mixed"]
    assert memlab.load(memory).meta["layout"] == "letta_v1_memory_prefix"
    assert row["layout"] == "letta_v1_memory_prefix"


def test_a_new_v2_repository_and_a_local_backend_copy_without_git(tmp_path):
    home = tmp_path / "home"
    v2 = home / ".letta" / "agents" / "agent-new" / "memory"
    _write(v2 / "MEMORY.md", "# index\n")
    _git(home, "init", "-q", str(v2))  # no commit yet: the files on disk are the memory
    local = home / ".letta" / "lc-local-backend" / "memfs" / "agent-local" / "memory"
    _write(local / "memory" / "system" / "persona.md", PERSONA)
    rows = _rows(home)
    assert rows.loc["agent-new", "layout"] == "letta_v2"
    assert rows.loc["agent-local", "layout"] == "letta_v1_memory_prefix"
    assert memlab.load(local).meta["layout"] == "letta_v1_memory_prefix"


def test_a_v2_tree_without_git_where_letta_keeps_memory_is_letta_memory(tmp_path):
    """A v2 tree (root MEMORY.md, name/description frontmatter) with no .git, in the local
    backend's memfs/<id>/memory or an agent's memory/: discover named it letta_v2 while
    memlab.load took it for a Claude Code memory folder (MEMORY.md and no git) and audited it
    by Claude's rules. Both now say letta_memfs. Negative control: the same files in a Claude
    Code project folder stay claude_memory."""
    v2 = {"MEMORY.md": "# Memory\n", "persona.md":
          "---\nname: Persona\ndescription: who I am\n---\nI am X.\n"}
    home = tmp_path / "home"
    places = {
        "agent-local": home / ".letta" / "lc-local-backend" / "memfs" / "agent-local" / "memory",
        "agent-copy": home / ".letta" / "agents" / "agent-copy" / "memory",
    }
    claude = home / ".claude" / "projects" / "-home-me-proj" / "memory"
    for folder in (*places.values(), claude):
        for rel, text in v2.items():
            _write(folder / rel, text)
    rows = _rows(home)
    for agent, folder in places.items():
        store = memlab.load(folder)
        assert (store.kind, store.meta["layout"]) == ("letta_memfs", "letta_v2"), agent
        assert (rows.loc[agent, "kind"], rows.loc[agent, "layout"]) == ("letta_memfs", "letta_v2")
    assert memlab.load(claude).kind == "claude_memory"


def test_a_folder_the_loader_refuses_has_no_layout_and_says_why(tmp_path):
    home = tmp_path / "home"
    memory = home / ".letta" / "agents" / "agent-inc" / "memory"
    _write(memory / "system" / "persona.md", PERSONA)
    _git(memory.parent, "init", "-q", str(memory))
    _git(memory, "add", "-A")
    _git(memory, "commit", "-qm", "init")
    with open(memory / ".git" / "config", "a") as fh:
        fh.write("[include]\n\tpath = elsewhere\n")
    with pytest.raises(memlab.errors.MemlabError):
        memlab.load(memory)
    row = _rows(home).loc["agent-inc"]
    assert pd.isna(row["layout"])
    assert "memlab cannot load it" in row["problem"]


def test_a_code_repository_met_on_a_walk_is_no_store(repo_root, tmp_path):
    """Walking a folder of projects: a real code repository (a clone of this one, whose HEAD
    has no memory marker) is not listed, not even as a store memlab cannot load; a memory
    repository beside it is, and so is a memory repository the loader refuses (a row with
    the reason: memory that is broken is still memory)."""
    projects = tmp_path / "projects"
    projects.mkdir()
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo_root}",
                    str(projects / "memlab")], check=True, capture_output=True)
    with pytest.raises(memlab.errors.UnrecognizedStore):
        memlab.load(projects / "memlab")
    memory = projects / "agent-notes"
    _write(memory / "system" / "persona.md", PERSONA)
    _git(memory.parent, "init", "-q", str(memory))
    _git(memory, "add", "-A")
    _git(memory, "commit", "-qm", "init")
    broken = projects / "agent-broken"
    shutil.copytree(memory, broken)
    with open(broken / ".git" / "config", "a") as fh:
        fh.write("[include]\n\tpath = elsewhere\n")
    inv = discover(projects, max_depth=1)
    by_path = {Path(p).name: r for p, r in zip(inv["path"], inv.to_dict("records"))}
    assert sorted(by_path) == ["agent-broken", "agent-notes"]
    assert by_path["agent-notes"]["layout"] == memlab.load(memory).meta["layout"]
    assert "memlab cannot load it" in by_path["agent-broken"]["problem"]


def test_a_git_init_folder_met_on_a_walk_is_no_store(tmp_path):
    """`git init` and nothing more is no memory: a walk lists no row for it (it had been a
    generic_markdown store "no commits yet"). A new repository holding a MEMORY.md not yet
    committed is memory the agent cannot see yet: it keeps its row and says so; so does an
    empty repository where Letta Code keeps an agent's memory (negative controls)."""
    projects = tmp_path / "projects"
    for name in ("scratch", "new-memory"):
        (projects / name).mkdir(parents=True)
        _git(projects, "init", "-q", name)
    _write(projects / "new-memory" / "MEMORY.md", "# Memory\n")
    agent = tmp_path / "home" / ".letta" / "agents" / "agent-fresh" / "memory"
    agent.mkdir(parents=True)
    _git(agent, "init", "-q", ".")
    walked = discover(projects, max_depth=1)
    assert [Path(p).name for p in walked["path"]] == ["new-memory"]
    assert walked["problem"].tolist() == ["no commits yet"]
    assert _rows(tmp_path / "home").loc["agent-fresh", "problem"] == "no commits yet"
    with pytest.raises(memlab.errors.UnrecognizedStore, match="no commits yet"):
        memlab.load(projects / "scratch")


def test_a_skills_or_docs_repository_met_on_a_walk_is_no_store(tmp_path):
    """A skills repository (skills/<name>/SKILL.md, as agent-skills repositories lay them out)
    and a docs repository (reference/) carry folder names the loader also reads as memory, but
    no Letta sign and nothing a prompt is made of: a walk lists neither (both had been
    generic_markdown stores). Negative controls beside them: a Letta v2 repository with
    skills/ and a MEMORY.md, and markdown memory in system/ with no Letta sign, keep rows; an
    explicit load of the skills repository still reads it as the user asked."""
    projects = tmp_path / "projects"
    trees = {
        "agent-skills": {"README.md": "# Skills\n", "skills/pdf/SKILL.md":
                         "---\nname: pdf\ndescription: read PDFs\n---\nUse pdftotext.\n"},
        "handbook": {"README.md": "# Handbook\n", "reference/api.md": "# API\n",
                     "src/main.py": "print('hi')\n"},
        "v2-memory": {"MEMORY.md": "# Memory\n", "skills/pdf/SKILL.md": "---\nname: pdf\n"
                      "description: read PDFs\n---\nUse pdftotext.\n"},
        "notes": {"system/persona.md": PERSONA},
    }
    for name, files in trees.items():
        for rel, text in files.items():
            _write(projects / name / rel, text)
        _git(projects, "init", "-q", name)
        _git(projects / name, "add", "-A")
        _git(projects / name, "commit", "-qm", "init")
    walked = discover(projects, max_depth=1)
    by_name = {Path(p).name: layout for p, layout in zip(walked["path"], walked["layout"])}
    assert sorted(by_name) == ["notes", "v2-memory"]
    for name in by_name:
        assert by_name[name] == memlab.load(projects / name).meta["layout"]
    assert memlab.load(projects / "agent-skills").meta["layout"] == "generic_markdown"


def test_stores_that_keep_no_git_history_are_not_faulted_for_it_on_a_walk(data_dir, tmp_path):
    """A Claude Code memory folder and a mem0 folder keep no git history by design: a walk
    listed each with problem "not in a git repository". Their rows are now the ones their
    kinds' finders give (the same function). Negative control: an elfmem substrate copied
    out of its repository, whose history memlab would read from git, still says so."""
    projects = tmp_path / "projects"
    shutil.copytree(data_dir / "samples" / "claude-memory" / "recommendarr",
                    projects / "recommendarr")
    shutil.copytree(data_dir / "samples" / "mem0" / "2.2.1", projects / "mem0-store")
    shutil.copytree(data_dir / "samples" / "elfmem-substrate", projects / "substrate")
    rows = discover(projects, max_depth=1).set_index("kind")
    assert pd.isna(rows.loc["claude_memory", "problem"])
    assert rows.loc["claude_memory", "files"] == sum(
        1 for p in (projects / "recommendarr").rglob("*") if p.is_file())
    assert pd.isna(rows.loc["mem0", "problem"])
    assert rows.loc["mem0", "path"] == str(projects / "mem0-store" / "history.db")
    assert rows.loc["elfmem_substrate", "problem"] == "not in a git repository"
