"""The oracle itself: Letta Code 0.34.12's bundled functions answer as its format notes say.

These pin the harness (tests/letta_code.py) to documented behaviour of the release, so a
differential test that agrees with it agrees with Letta Code, not with a broken harness."""

from __future__ import annotations

import subprocess

DEFAULTS = {"version": 1, "maxDepth": 2, "maxFileCharacters": 20000, "maxCoreMemoryCharacters": 65536}


def _f(path, text, mode="100644"):
    return {"path": path, "mode": mode, "text": text}


def test_v2_tree_rules_from_the_bundle(letta_code):
    errors = letta_code.tree([_f("a/b.md", "x" * 20001)], config=DEFAULTS, layout="root-marker",
                             require_root_marker=True)
    assert errors == ["MEMORY.md: root memory index is required for MemFS v2",
                      "a/b.md: missing required index a/MEMORY.md",
                      "a/b.md: 20001 characters exceeds 20000 from maxFileCharacters"]
    # code points, not UTF-16 units: 20,000 astral characters are within the limit
    assert letta_code.tree([_f("MEMORY.md", "\U0001F600" * 20000)], config=DEFAULTS,
                           layout="root-marker") == []


def test_v2_frontmatter_rejects_read_only_and_limit_v1_keeps_them(letta_code):
    v2 = letta_code.frontmatter("h.md", "---\nname: H\ndescription: d\nlimit: 5\n---\n", fmt="memfs-v2")
    assert v2 == ["h.md: unknown frontmatter key 'limit' (allowed: name description)"]
    assert letta_code.frontmatter("system/h.md", "---\ndescription: d\nlimit: 5\n---\n", fmt="legacy") == []


def test_config_parser_and_initial_files(letta_code):
    assert letta_code.config('{"version": 1, "maxDepth": 3}') == {"config": {"version": 1, "maxDepth": 3}}
    assert letta_code.config('{"version": 2, "x": 1}')["errors"] == [
        ".memfs.config.json: unknown field 'x'", ".memfs.config.json: version must be 1"]
    files = letta_code.initial([{"label": "system/human/prefs", "value": "v", "description": "a\nb"}])
    assert [(f["relativePath"], f["content"]) for f in files] == [
        ("human_prefs.md", "---\nname: Human Prefs\ndescription: a b\n---\nv"),
        ("MEMORY.md", "# Memory\n")]


def test_head_audit_and_installed_hook(letta_code, tmp_path):
    repo = tmp_path / "memory"
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "MEMORY.md").write_text("# Memory\n")
    (repo / "notes").mkdir()
    (repo / "notes" / "x.md").write_text("---\nname: X\ndescription: d\n---\nbody\n")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    assert letta_code.audit_errors(repo) == ["notes/x.md: missing required index notes/MEMORY.md"]
    hook = letta_code.install_hooks(repo, "root-marker")
    assert (repo / ".git" / "letta-memory-layout-policy").read_text() == "root-marker\n"
    (repo / "notes" / "MEMORY.md").write_text("# Notes\n")
    subprocess.run([*git, "add", "-A"], check=True)
    assert subprocess.run([str(hook)], cwd=repo, capture_output=True).returncode == 0
