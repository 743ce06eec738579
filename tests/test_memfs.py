"""memfs: format rules, git history, every layout, bad input, read-only loading, the audit."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from memfs_repos import (AGENT, HUMAN, PNG, SERVER, _Writer, _t, build_letta_memory_prefix,
                         build_letta_v1, build_letta_v2, build_souveraine, build_substrate, snapshot)
from memlab.kinds._memfs._audit import audit_memfs, prompt_at
from memlab.errors import RepoError, StoreNotFound, UnrecognizedStore, UnsafePath
from memlab.formats import letta_memfs as fmt
from memlab.kinds._memfs._load import file_versions, files_at, load_memfs


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    root = tmp_path_factory.mktemp("memfs")
    return {
        "v1": build_letta_v1(root / "v1"),
        "prefix": build_letta_memory_prefix(root / "prefix"),
        "v2": build_letta_v2(root / "v2"),
        "souv": build_souveraine(root / "souv"),
        "souv_in": build_souveraine(root / "souv_in", agent_yaml_in_repo=True),
        "sub": build_substrate(root / "sub"),
    }


@pytest.fixture(scope="module")
def v1(repos):
    return load_memfs(repos["v1"].path)


@pytest.fixture(scope="module")
def v1_audit(repos):
    return audit_memfs(load_memfs(repos["v1"].path))


# --------------------------------------------------------------------------- format rules

def test_labels_follow_letta_path_mapping():
    assert fmt.label_from_relative_path("system\\human\\prefs.md") == "system/human/prefs"
    assert fmt.label_for_path("system/human/prefs.md") == "system/human/prefs"
    assert fmt.label_for_path("skills/search/SKILL.md") == "skills/search"
    assert fmt.label_for_path("skills/search/notes.md") is None  # ignored by client and server
    assert fmt.label_for_path("skills/flat.md") is None
    assert fmt.label_for_path(".letta/config.json") is None
    assert fmt.label_for_path("memory/system/persona.md", memory_prefix=True) == "system/persona"
    assert fmt.path_for_label("skills/search") == "skills/search/SKILL.md"
    assert fmt.path_for_label("system/persona") == "system/persona.md"
    assert fmt.root_memory_path_from_legacy_label("system/a/b") == "a-b.md"


@pytest.mark.parametrize("label", ["../../etc/x", "/etc/passwd", "system//x", "system/./x",
                                   "C:/x", "system\\..\\x", "a\x00b", ""])
def test_unsafe_labels_are_refused(label):
    with pytest.raises(UnsafePath):
        fmt.path_for_label(label)


@pytest.mark.parametrize("name,email,extra,kind", [
    ("EmmaBot", "agent-5afcfa48-3f0e-4b1a-9c57-1f1f2e3d4c5b@letta.com", {}, "agent"),
    ("EmmaBot", "agent-5afcfa48@letta.com", {}, "agent"),
    ("Reflection Subagent", "agent-9d1e@letta.com", {}, "reflection_subagent"),
    ("EmmaBot", "agent-5afc@letta.com", {"message": "chore: tidy \U0001f52e"}, "reflection_subagent"),
    ("EmmaBot", "agent-5afc@letta.com", {"branch": "letta/reflection/r1"}, "reflection_subagent"),
    ("User user-1", "user-1@letta.ai", {}, "server_user"),
    ("Letta System", "system@letta.ai", {}, "system"),
    ("Letta Agent", "agent@letta.ai", {}, "system"),
    ("Jane", "4242+jane@users.noreply.github.com", {}, "human"),
    ("x", "agent-1@letta.ai", {}, "human"),  # agent ids live on letta.com, not letta.ai
    ("agent-e2b6", "agent-e2b6@souveraine.local", {}, "agent"),
])
def test_author_kinds(name, email, extra, kind):
    assert fmt.classify_author(name, email, **extra) == kind


def test_frontmatter_values_are_kept_as_written():
    fm = fmt.read_frontmatter('---\ndescription: "no"\nlimit: 0123\nread_only: no\n'
                              'tags: [a, b]\n---\n\nBody line.\n')
    assert fm.fields == {"description": '"no"', "limit": "0123", "read_only": "no", "tags": "[a, b]"}
    assert fm.description == "no"          # a default YAML load gives False
    assert fm.limit == 123                 # a default YAML load gives 83 (octal)
    assert fm.read_only is None            # neither true nor false: ambiguous
    assert [p[0] for p in fm.problems] == ["ambiguous_read_only"]
    assert fm.body == "Body line.\n"


def test_wrapped_description_is_read_as_letta_code_reads_it():
    fm = fmt.read_frontmatter("---\ndescription: A long description\n  wrapped by PyYAML\n---\nx")
    assert fm.fields["description"] == "A long description\n  wrapped by PyYAML"
    # Letta Code's memory tool reads line by line: the continuation line is not part of it ...
    assert fm.description == "A long description"
    # ... while the server's YAML reads the whole value; the problem row says what follows.
    assert fm.server.description == "A long description wrapped by PyYAML"
    [(kind, message, _)] = fm.problems
    assert kind == "readers_disagree" and "'A long description wrapped by PyYAML'" in message
    assert "the rest is lost" in message


def test_malformed_yaml_is_a_problem_with_its_line():
    fm = fmt.read_frontmatter("---\ndescription: ok\nlimit: [5000\n---\nbody")
    assert fm.fields["limit"] == "[5000"
    kind, message, line = fm.problems[0]
    assert kind == "malformed_yaml" and line == 3
    assert fm.description == "ok" and fm.yaml_ok is False  # Letta Code reads it line by line
    assert fm.server.whole_file and fm.server.value.startswith("---\ndescription: ok")


def test_no_or_unclosed_frontmatter_reads_whole_file_as_body():
    assert fmt.read_frontmatter("plain value\n").body == "plain value\n"
    fm = fmt.read_frontmatter("---\ndescription: x\nno closing fence\n")
    assert not fm.has_frontmatter and fm.problems[0][0] == "unclosed_frontmatter"


def _rules(path, new, head=None, **kw):
    return [v.rule for v in fmt.check_precommit(path, new, head, **kw)]


OK = "---\ndescription: Who I am\n---\n\nbody\n"
RO = "---\ndescription: Rules\nread_only: true\n---\n\nbody\n"


@pytest.mark.parametrize("new,head,rules", [
    (OK, None, []),
    ("no frontmatter\n", None, ["missing_frontmatter"]),
    ("---\ndescription: x\n", None, ["unclosed_frontmatter"]),
    (RO.replace("body", "edited"), RO, ["read_only_modified"]),
    ("---\ndescription: x\nmetadata: {a: 1}\n---\nb", None, ["unknown_key"]),
    (RO, None, ["protected_set"]),
    (RO, OK, ["protected_changed"]),
    ("---\ndescription: x\nread_only: false\n---\nb", "---\ndescription: x\nread_only: true\n---\nb",
     ["read_only_modified"]),
    ("---\ndescription: x\n---\nb", "---\ndescription: x\nread_only: false\n---\nb",
     ["protected_removed"]),
    ("---\ndescription:\n---\nb", None, ["empty_description"]),
    ("---\nlimit: 5\n---\nb", None, ["missing_description"]),
    ("---\ndescription: a\n  wrapped\nlimit: 0\n---\nb", None, []),  # current: limit tolerated
])
def test_current_hook_rules(new, head, rules):
    assert _rules("system/x.md", new, head) == rules


def test_february_hook_required_a_positive_limit_and_had_no_continuation_lines():
    feb = dict(variant="2026-02")
    assert _rules("system/x.md", OK, **feb) == ["missing_limit"]
    assert _rules("system/x.md", "---\ndescription: a\nlimit: 0\n---\nb", **feb) == ["bad_limit"]
    assert _rules("system/x.md", "---\ndescription: a\nlimit: 2000\n---\nb", **feb) == []
    wrapped = "---\ndescription: a\n  wrapped\nlimit: 10\n---\nb"
    assert _rules("system/x.md", wrapped, **feb) == ["unknown_key"]
    assert _rules("skills/flat.md", "x", **feb) == []  # skills came to memfs later


def test_hook_scope_paths_and_change_types():
    assert _rules("notes/x.md", "no frontmatter") == []            # not validated at all
    assert _rules("memory/system/x.md", "no frontmatter") == ["missing_frontmatter"]
    assert _rules("skills/flat.md", OK) == ["flat_skill"]
    assert _rules("skills/flat.md", OK, change="R") == ["flat_skill"]
    assert _rules("system/x.md", "junk", RO, change="D") == []       # deletions not examined
    assert _rules("system/x.md", "junk", RO, change="R") == []       # renames escape ACM
    # `for file in $(git diff ...)` splits on spaces: the words are checked, not the file.
    assert _rules("system/my notes.md", "junk") == []


def test_v2_hook_rules():
    v2 = dict(variant="v2")
    named = fmt.render_memfs_v2_file("persona", "Who I am", "body")
    assert _rules("persona.md", named, **v2) == []
    assert _rules("MEMORY.md", "---\nname: x\n---\n", **v2) == ["index_frontmatter"]
    assert _rules("persona.md", OK, **v2) == ["missing_name"]
    assert _rules("persona.md", named.replace("name:", "title:"), **v2) == ["unknown_key", "missing_name"]
    assert _rules("notes/x.md", "junk", staged_paths={"MEMORY.md"}, **v2) == []  # not projected
    assert _rules("notes/x.md", "junk", staged_paths={"notes/MEMORY.md"}, **v2) == ["missing_frontmatter"]


@pytest.mark.parametrize("description", ["Who I am", "no", "0123", "a: b", "#hash", "multi\nline  text",
                                         'quote " and \\ backslash', "ünïcode",
                                         # YAML refuses DEL and C1 controls raw, even quoted
                                         "del\x7fchar", "csi\x9b[31m", "#del\x7f"])
def test_rendered_files_pass_the_hook_and_read_back(description):
    text = fmt.render_memfs_file(description, "Body\n", limit=4000)
    assert fmt.check_precommit("system/x.md", text) == []
    assert fmt.check_precommit("system/x.md", text, variant="2026-02") == []
    fm = fmt.read_frontmatter(text)
    assert fm.description == " ".join(description.split()) and fm.limit == 4000
    assert fm.body == "Body\n" and fm.problems == []


def test_read_only_is_written_as_the_server_writes_it():
    text = fmt.render_memfs_file("Rules", "x", read_only=True)
    assert fmt.read_frontmatter(text).read_only is True
    # Only the server may set it: the hook refuses it from the agent on a new file.
    assert _rules("system/x.md", text) == ["protected_set"]
    with pytest.raises(ValueError):
        fmt.render_memfs_file("  ", "x")
    with pytest.raises(ValueError):
        fmt.render_memfs_file("d", "x", limit=0)


def test_hook_variant_by_date():
    utc = dt.timezone.utc
    assert fmt.hook_variant_at(dt.datetime(2026, 2, 1, tzinfo=utc)) is None
    assert fmt.hook_variant_at(dt.datetime(2026, 3, 1, tzinfo=utc)) == "2026-02"
    assert fmt.hook_variant_at(dt.datetime(2026, 4, 1, tzinfo=utc)) == "current"
    assert fmt.hook_variant_at(dt.datetime(2026, 4, 1, tzinfo=utc), layout="letta_v2") == "v2"


# --------------------------------------------------------------------------- layouts

def test_letta_v1_files(v1):
    assert v1.kind == "letta_memfs" and v1.meta["layout"] == "letta_v1"
    files = v1.files.set_index("path")
    assert files.loc["system/persona.md", "label"] == "system/persona"
    assert files.loc["skills/search/SKILL.md", "label"] == "skills/search"
    assert pd.isna(files.loc["skills/quick.md", "label"])
    prompt = set(files.index[files["in_prompt"]])
    assert prompt == {"system/persona.md", "system/human.md", "system/memory_filesystem.md",
                      "system/policies.md", "system/active-issues.md", "system/notes/tasks.md"}
    assert files.loc["system/memory_filesystem.md", "read_only"] == True  # noqa: E712
    assert files.loc["system/human.md", "fm_metadata"] == "{source: chat}"
    assert files.loc["system/active-issues.md", "limit"] == 5000
    assert files.loc["system/active-issues.md", "over_limit"] == True  # noqa: E712
    assert "reference/diagram.png" in v1.meta["other_files"]
    assert str(files["body_chars"].dtype) == "Int64" and str(files["read_only"].dtype) == "boolean"
    kinds = set(v1.problems.loc[v1.problems["file"] == "system/human.md", "kind"])
    assert kinds == {"unknown_key"}  # the committed metadata key, not the uncommitted edit


def test_letta_v1_history_authors_and_numstat(repos, v1):
    shas = repos["v1"].shas
    h = v1.history
    commits = h.drop_duplicates("sha").set_index("sha")
    assert commits.loc[shas["init"], "author_kind"] == "server_user"
    assert commits.loc[shas["agent_truncated"], "author_kind"] == "agent"
    assert commits.loc[shas["reflection"], "author_kind"] == "reflection_subagent"
    assert commits.loc[shas["human"], "author_kind"] == "human"
    assert commits.loc[shas["reflection"], "branch"] == "letta/reflection/(merged)"
    assert commits.loc[shas["reflection_open"], "branch"] == "letta/reflection/refl-2"
    assert commits["author_kind"].value_counts().to_dict() == {
        "agent": 8, "server_user": 3, "reflection_subagent": 2, "human": 1, "system": 0,
            "migration": 0, "review": 0, "memory_worker": 0, "harness": 0}
    row = h[(h["sha"] == shas["agent_notes"]) & (h["path"] == "system/human.md")].iloc[0]
    assert (row["change_type"], row["lines_added"], row["lines_deleted"]) == ("M", 3, 0)
    issues = h[(h["sha"] == shas["over_limit"])].iloc[0]
    assert issues["lines_added"] == 115  # 110 issue lines + 5 frontmatter lines
    png = h[h["path"] == "reference/diagram.png"].iloc[0]
    assert pd.isna(png["lines_added"]) and pd.isna(png["lines_deleted"])
    merge = h[h["sha"] == shas["merge"]]
    assert len(merge) == 1 and pd.isna(merge["path"].iloc[0]) and len(merge["parents"].iloc[0]) == 2
    assert str(h["authored_at"].dtype) == "datetime64[ns, UTC]"
    assert list(h.columns) == ["sha", "parents", "author_name", "author_email", "author_kind",
                               "authored_at", "committed_at", "message", "branch", "path",
                               "change_type", "lines_added", "lines_deleted", "no_verify_suspect",
                               "branch_role"]
    assert commits.loc[shas["reflection"], "branch_role"] == "reflection"
    assert commits.loc[shas["human"], "branch_role"] == "main"


def test_uncommitted_edits_are_reported_separately(repos, v1):
    changes = dict(zip(v1.uncommitted["path"], v1.uncommitted["change"]))
    assert changes == {"system/human.md": "modified", "notes/draft.md": "untracked"}
    assert v1.meta["uncommitted"] == 2
    # The committed text is what the agent sees, not the working copy.
    committed = v1.files.set_index("path").loc["system/human.md", "body"]
    assert "Uses pytest." in committed


def test_memory_prefix_era(repos):
    s = load_memfs(repos["prefix"].path)
    assert s.meta["layout"] == "letta_v1_memory_prefix"
    files = s.files.set_index("path")
    assert files.loc["memory/system/persona.md", "label"] == "system/persona"
    assert files.loc["memory/system/persona.md", "domain"] == "system"
    assert files["in_prompt"].sum() == 3
    renamed = s.history[s.history["sha"] == repos["prefix"].shas["rename"]].iloc[0]
    assert (renamed["change_type"], renamed["path"]) == ("R", "notes.md")


def test_letta_v2_root_memory(repos):
    s = load_memfs(repos["v2"].path)
    assert s.meta["layout"] == "letta_v2"
    prompt = set(s.files.loc[s.files["in_prompt"], "path"])
    assert prompt == {"MEMORY.md", "persona.md", "human.md"}
    assert s.files.set_index("path").loc["persona.md", "fm_name"] == '"persona"'


@pytest.mark.parametrize("which,sub", [("souv", ""), ("souv", "memory"), ("souv_in", "")])
def test_souveraine_agent_dir(repos, which, sub):
    s = load_memfs(repos[which].path / sub if sub else repos[which].path)
    assert s.kind == "souveraine" and s.meta["layout"] == "souveraine"
    assert s.meta["agent"]["name"] == "Ani" and s.name == "Ani"
    files = s.files.set_index("path")
    assert files.loc["memory/journal/2026-05-01.md", "domain"] == "memory/journal"
    assert files.loc["memory/journal/2026-05-01.md", "in_prompt"] == True  # noqa: E712 (agent.yaml block)
    assert files.loc["memory/subconscious/inbox.md", "in_prompt"] == False  # noqa: E712
    assert files.loc["system/persona.md", "fm_read_only"] == '"false"'
    assert files.loc["system/persona.md", "read_only"] == False  # noqa: E712
    assert files.loc["ledger/decisions.md", "fm_tags"] == "[ledger]"
    assert files.loc["system/state.md", "over_limit"] == True  # noqa: E712
    assert set(s.history["author_kind"]) == {"agent"}


def test_elfmem_substrate(repos):
    for path in (repos["sub"].path, repos["sub"].path / ".elfmem"):
        s = load_memfs(path)
        assert s.kind == "elfmem_substrate"
        assert set(s.blocks["id"].dropna()) == {"a1b2c3d4e5f60718", "0f1e2d3c4b5a6978"}
        assert s.ledger["k"].tolist() == ["learn"]
        assert len(s.history) == 4


def test_loading_and_auditing_leave_the_repo_byte_identical(repos):
    for name in ("v1", "souv", "sub"):
        root = repos[name].path
        before = snapshot(root)
        store = load_memfs(root)
        audit_memfs(store)
        if name == "v1":
            prompt_at(store, repos["v1"].shas["init"])
            files_at(store, "HEAD~3")
            file_versions(store)
        assert snapshot(root) == before, name


# --------------------------------------------------------------------------- bad input

def _repo_with(tmp_path, files: dict, *, message="Initial commit", who=SERVER) -> Path:
    w = _Writer(tmp_path / "repo")
    w.commit(message, who, _t("2026-04-01"), files=files)
    return w.path


def test_malformed_yaml_is_a_problem_row(tmp_path):
    path = _repo_with(tmp_path, {"system/bad.md": "---\ndescription: [unclosed\n---\nbody\n",
                                 "system/ok.md": fmt.render_memfs_file("fine", "ok")})
    s = load_memfs(path)
    bad = s.problems[s.problems["file"] == "system/bad.md"]
    assert bad.loc[bad["kind"] == "malformed_yaml", "line"].tolist() == [2]
    row = s.files.set_index("path").loc["system/bad.md"]
    assert row["description"] == "[unclosed" and row["fm_description"] == "[unclosed"
    assert row["server_whole_file"] and not row["yaml_ok"] and not row["readers_agree"]


def test_a_limit_past_int64_is_a_problem_row_not_a_traceback(tmp_path):
    path = _repo_with(tmp_path, {"system/huge.md": "---\ndescription: d\nlimit: " + "9" * 23
                                 + "\n---\nbody\n",
                                 "system/ok.md": fmt.render_memfs_file("fine", "ok", limit=500)})
    s = load_memfs(path)
    bad = s.problems[s.problems["file"] == "system/huge.md"]
    assert bad["kind"].tolist() == ["bad_limit"] and "too large" in bad["message"].iloc[0]
    limits = s.files.set_index("path")["limit"]
    assert pd.isna(limits["system/huge.md"]) and limits["system/ok.md"] == 500
    assert audit_memfs(s).headline["findings"] >= 1


def test_a_limit_of_zero_is_a_problem_row_and_has_no_ratio(tmp_path):
    path = _repo_with(tmp_path, {"system/zero.md": "---\ndescription: d\nlimit: 0\n---\nbody\n",
                                 "system/ok.md": fmt.render_memfs_file("fine", "x" * 20, limit=10)})
    s = load_memfs(path)
    bad = s.problems[s.problems["file"] == "system/zero.md"]
    assert bad["kind"].tolist() == ["bad_limit"] and "limit 0" in bad["message"].iloc[0]
    audit = audit_memfs(s)
    over = audit.tables["over_limit"].set_index("path")
    assert bool(s.files.set_index("path").loc["system/zero.md", "over_limit"])
    assert pd.isna(over.loc["system/zero.md", "ratio"])  # was inf, printed "(infx)"
    assert over.loc["system/ok.md", "ratio"] == 2.0 and audit.headline["max_limit_ratio"] == 2.0
    assert "system/zero.md: 5/0 chars (limit not positive)" in audit.summary()
    assert "Infinity" not in audit.to_json()


def test_deeply_nested_yaml_is_a_problem_row_not_a_traceback(tmp_path):
    deep = "[" * 5000
    path = _repo_with(tmp_path, {"system/deep.md": f"---\ndescription: {deep}\n---\nbody\n",
                                 "system/ok.md": fmt.render_memfs_file("fine", "ok")})
    s = load_memfs(path)
    bad = s.problems[s.problems["file"] == "system/deep.md"]
    assert "malformed_yaml" in set(bad["kind"])
    assert "system/ok.md" in set(s.files["path"])
    written = fmt.render_memfs_file(deep, "body")
    assert fmt.read_frontmatter(written).description == deep


def test_binary_markdown_is_text_as_letta_reads_it(tmp_path):
    """A Letta memory file with NUL bytes is text to Letta Code (UTF-8, NUL kept; see
    tests/security/test_letta_text.py for the installed Letta Code's own read): loaded, with
    a ``nul_bytes`` note; git's line counts are still NA (``binary_file``)."""
    path = _repo_with(tmp_path, {"system/blob.md": b"\x00\x01\x02binary", "system/ok.md": OK})
    s = load_memfs(path)
    assert "system/blob.md" in set(s.files["path"])
    kinds = set(s.problems.loc[s.problems["file"] == "system/blob.md", "kind"])
    # read now, so the frontmatter check sees it: it has none
    assert kinds == {"nul_bytes", "binary_file", "no_frontmatter"}


def test_symlinks_are_never_followed_out_of_the_repo(tmp_path):
    w = _Writer(tmp_path / "repo")
    (w.path / "system").mkdir()
    os.symlink("/etc/passwd", w.path / "system/escape.md")
    os.symlink("../../outside.md", w.path / "system/up.md")
    os.symlink("persona.md", w.path / "system/alias.md")
    w.commit("Initial commit", SERVER, _t("2026-04-01"), files={"system/persona.md": OK})
    w.repo.git.add("-A")
    w.commit("feat: links", AGENT, _t("2026-04-02"))
    s = load_memfs(w.path)
    kinds = dict(zip(s.problems["file"], s.problems["kind"]))
    assert kinds["system/escape.md"] == "symlink_outside_repo"
    assert kinds["system/up.md"] == "symlink_outside_repo"
    assert kinds["system/alias.md"] == "symlink"
    assert set(s.files["path"]) == {"system/persona.md"}


def test_unsafe_block_path_in_agent_yaml_is_never_read(tmp_path):
    agent = {"name": "Ani", "blocks": [{"label": "../../etc/x", "file": "../../etc/x"},
                                       {"label": "persona", "file": "system/persona.md"}]}
    b = build_souveraine(tmp_path / "agent", agent_yaml=agent)
    s = load_memfs(b.path)
    unsafe = s.problems[s.problems["kind"] == "unsafe_path"]
    assert len(unsafe) == 1 and "../../etc/x" in unsafe["message"].iloc[0]
    assert not any("etc" in p for p in s.files["path"])


def test_shallow_clone_is_flagged(tmp_path, repos):
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", "--no-local",
                    f"file://{repos['prefix'].path}", str(clone)], check=True)
    s = load_memfs(clone)
    assert s.meta["shallow"] is True
    assert "shallow_clone" in set(s.problems["kind"])
    assert s.history["sha"].nunique() == 2


def test_detached_head_is_flagged(tmp_path, repos):
    clone = tmp_path / "detached"
    subprocess.run(["git", "clone", "-q", str(repos["prefix"].path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "--detach", "HEAD~1"], check=True)
    s = load_memfs(clone)
    assert s.meta["branch"] is None
    assert "detached_head" in set(s.problems["kind"])
    assert s.meta["ref_sha"] == repos["prefix"].shas["with_limit"]


def test_empty_repo_is_a_repo_error(tmp_path):
    # memory files written, none committed yet: a memory repository the agent sees nothing of
    (tmp_path / "empty").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path / "empty")], check=True)
    (tmp_path / "empty" / "MEMORY.md").write_text("# Memory\n")
    with pytest.raises(RepoError, match="no commits"):
        load_memfs(tmp_path / "empty")


def test_a_bare_git_init_folder_is_no_memory(tmp_path):
    # `git init` and nothing else: no commit and no memory file on disk is no memory at all
    (tmp_path / "empty").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path / "empty")], check=True)
    with pytest.raises(UnrecognizedStore, match="no commits yet and no system/"):
        load_memfs(tmp_path / "empty")


def test_unknown_and_hostile_refs_are_repo_errors(repos):
    with pytest.raises(RepoError, match="unknown ref"):
        load_memfs(repos["v2"].path, ref="no-such-branch")
    with pytest.raises(RepoError, match="not a valid git ref"):
        load_memfs(repos["v2"].path, ref="--output=/tmp/x")


def test_plain_folders(tmp_path):
    with pytest.raises(StoreNotFound):
        load_memfs(tmp_path / "absent")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "a.txt").write_text("x")
    with pytest.raises(UnrecognizedStore) as info:
        load_memfs(tmp_path / "junk")
    assert str(tmp_path / "junk") in str(info.value)
    backup = tmp_path / "memory-backup-20260401"
    (backup / "system").mkdir(parents=True)
    (backup / "system" / "persona.md").write_text(OK)
    s = load_memfs(backup)
    assert s.kind == "letta_memfs" and s.history.empty
    assert "not_a_repo" in set(s.problems["kind"])
    assert s.files["label"].tolist() == ["system/persona"]


def test_a_code_repo_is_not_a_memory_repo(tmp_path):
    path = _repo_with(tmp_path, {"src/main.py": "print(1)\n"})
    with pytest.raises(UnrecognizedStore):
        load_memfs(path)


# --------------------------------------------------------------------------- the audit

def test_audit_finds_the_hook_bypasses(repos, v1_audit):
    shas = repos["v1"].shas
    suspects = set(v1_audit["no_verify_commits"]["sha"])
    assert suspects == {shas[k] for k in repos["v1"].facts["suspects"]}
    rules = dict(zip(v1_audit["no_verify_commits"]["sha"], v1_audit["no_verify_commits"]["rules"]))
    assert rules[shas["edit_read_only"]] == "read_only_modified"
    assert rules[shas["unknown_key"]] == "unknown_key"
    assert rules[shas["flat_skill"]] == "flat_skill"
    viol = v1_audit["hook_violations"]
    server = viol[viol["sha"] == shas["server_metadata"]]
    assert server["rule"].tolist() == ["unknown_key"] and not server["no_verify_suspect"].any()
    assert v1_audit.headline["no_verify_commits"] == 4


def test_audit_fills_no_verify_suspect_in_history(repos):
    store = load_memfs(repos["v1"].path)
    assert store.history["no_verify_suspect"].isna().all()
    audit_memfs(store)
    h = store.history
    flagged = set(zip(h.loc[h["no_verify_suspect"], "sha"], h.loc[h["no_verify_suspect"], "path"]))
    assert (repos["v1"].shas["drop_read_only"], "system/policies.md") in flagged
    assert len(flagged) == 4 and h["no_verify_suspect"].notna().all()


def test_audit_read_only_and_limit(repos, v1_audit):
    ro = v1_audit["read_only"].set_index("path")
    assert ro.loc["system/memory_filesystem.md", "change"] == "edited"
    assert ro.loc["system/policies.md", "change"] == "flag_removed"
    over = v1_audit["over_limit"].iloc[0]
    assert over["path"] == "system/active-issues.md" and over["limit"] == 5000
    assert over["body_chars"] == repos["v1"].facts["issues_chars"]
    breach = v1_audit["limit_breaches"]
    assert breach["sha"].tolist() == [repos["v1"].shas["over_limit"]]
    assert v1_audit.headline["max_limit_ratio"] == pytest.approx(repos["v1"].facts["issues_chars"] / 5000)


def test_prompt_at_any_commit(repos, v1, v1_audit):
    init = prompt_at(v1, repos["v1"].shas["init"])
    assert sorted(init.files["path"]) == ["system/human.md", "system/memory_filesystem.md",
                                         "system/persona.md", "system/policies.md"]
    assert init.tree == ["reference/README.md"]
    persona = init.files.set_index("path").loc["system/persona.md"]
    # "I am EmmaBot, a careful coding agent.\n" + "Who I am, what I value, how I work"
    assert (persona["body_chars"], persona["chars"]) == (38, 72)
    history = v1_audit["prompt_history"].set_index("sha")
    first = history.loc[repos["v1"].shas["init"]]
    assert first["prompt_files"] == 4 and first["prompt_listed"] == 1
    # One definition of prompt size: rendered files plus one line per listed path.
    assert first["prompt_chars"] == init.files["chars"].sum() + len("reference/README.md\n")
    assert first["prompt_chars"] == init.total_chars
    head = prompt_at(v1, "HEAD")
    # The headline (metrics.json) and the last point of the chart are the same number.
    assert v1_audit.headline["prompt_chars"] == head.total_chars == history["prompt_chars"].iloc[-1]


def test_audit_as_of_ignores_later_commits(repos):
    a = audit_memfs(load_memfs(repos["v1"].path), as_of="2026-03-29T12:00")
    assert a["no_verify_commits"].empty
    assert "system/active-issues.md" not in set(a["prompt"]["path"])
    assert a.headline["commits"] == 5 and a.headline["as_of"].startswith("2026-03-29T12")


def test_february_hook_applies_to_february_commits(repos):
    a = audit_memfs(load_memfs(repos["prefix"].path))
    viol = a["hook_violations"]
    assert viol["sha"].tolist() == [repos["prefix"].shas["no_limit"]]
    assert viol["variant"].tolist() == ["2026-02"] and viol["rule"].tolist() == ["missing_limit"]


def test_audit_of_other_layouts(repos):
    v2 = audit_memfs(load_memfs(repos["v2"].path))
    assert v2["hook_violations"].empty and v2.headline["prompt_files"] == 3
    souv = audit_memfs(load_memfs(repos["souv"].path))
    assert souv["hook_violations"].empty and souv.notes
    assert souv["over_limit"]["path"].tolist() == ["system/state.md"]
    assert set(souv["size_by_domain"]["domain"]) >= {"system", "memory/journal", "ledger"}


def test_churn_and_authors(repos, v1_audit):
    churn = v1_audit["churn"].set_index("path")
    assert churn.loc["system/human.md", "commits"] == 4
    assert churn.loc["system/human.md", "commits_agent"] == 3
    kinds = v1_audit["author_kinds"].set_index("author_kind")
    assert kinds.loc["agent", "commits"] == 8 and kinds.loc["human", "commits"] == 1
    weekly = v1_audit["churn_weekly"]
    assert weekly["churn"].sum() == churn["churn"].sum()
    import json
    json.loads(v1_audit.to_json())  # the headline is JSON-safe


def test_log_records_survive_chunk_boundaries_and_separators_in_messages(tmp_path):
    from memlab.sources import _git

    w = _Writer(tmp_path / "repo")
    w.commit("Initial commit", SERVER, _t("2026-04-01"), files={"system/persona.md": OK})
    w.commit("odd \x1e separator and \x1f unit", AGENT, _t("2026-04-02"),
             files={"system/persona.md": OK + "more\n"})
    s = load_memfs(w.path)
    assert s.history["message"].tolist() == ["odd \x1e separator and \x1f unit", "Initial commit"]
    raw = b"".join(_git._run_log(w.path, ("--raw", "--numstat")))
    whole = list(_git._records([raw]))
    for size in (1, 7, 64):
        chunks = [raw[i:i + size] for i in range(0, len(raw), size)]
        assert list(_git._records(chunks)) == whole


def test_figure_data(v1_audit):
    from memlab.kinds._memfs._audit import churn_matrix, commits_by_kind, size_over_time

    sizes = size_over_time(v1_audit)
    assert sizes.index.is_monotonic_increasing and "system" in sizes.columns
    assert (sizes["notes"].iloc[0], sizes["notes"].iloc[-1]) == (0, len("- review alpha\n"))
    by_kind = commits_by_kind(v1_audit)
    assert list(by_kind.columns) == list(fmt.AUTHOR_KINDS)
    assert by_kind.to_numpy().sum() == v1_audit.headline["commits"]
    churn = churn_matrix(v1_audit, top=3)
    assert churn.index[0] == "system/active-issues.md" and churn.iloc[0].sum() == 115
    commits = v1_audit["commits"]
    assert commits["no_verify_suspect"].sum() == 4 and commits["merge"].sum() == 1


def test_audit_of_a_folder_without_git(tmp_path):
    backup = tmp_path / "memory-backup"
    (backup / "system").mkdir(parents=True)
    (backup / "system" / "persona.md").write_text(fmt.render_memfs_file("Me", "x" * 10, limit=5))
    a = audit_memfs(backup)
    assert a.headline["commits"] == 0 and a.headline["over_limit_files"] == 1
    assert a["hook_violations"].empty


# --------------------------------------------------------------------------- layout by evidence

_BAD_PERSONA = "---\ndescription: Who I am\nowner: jane\n---\n\nI am the app's persona.\n"


def _persona_repo(tmp_path, name, *, letta: bool, who=HUMAN, hook: str | None = None) -> Path:
    w = _Writer(tmp_path / name)
    files = {"system/persona.md": fmt.render_memfs_file("Who I am", "I am the app's persona.\n"),
             "README.md": "# An app\n"}
    if letta:
        files[".letta/config.json"] = '{"version": 1}\n'
    w.commit("initial import", HUMAN, _t("2026-04-01"), files=files)
    w.commit("persona: add owner", who, _t("2026-04-02"), files={"system/persona.md": _BAD_PERSONA})
    if hook is not None:
        (w.path / ".git" / "hooks").mkdir(exist_ok=True)
        (w.path / ".git" / "hooks" / "pre-commit").write_text(hook)
    return w.path


def test_a_generic_repo_with_a_persona_file_is_never_accused(tmp_path):
    path = _persona_repo(tmp_path, "app", letta=False)
    store = load_memfs(path)
    assert store.meta["layout"] == "generic_markdown" and store.meta["letta_evidence"] == []
    a = audit_memfs(store)
    assert a["hook_violations"].empty
    # not checked is null, never 0 (issue 26): no Letta hook or read_only rule guards it
    assert a.headline["no_verify_commits"] is None and a.headline["hook_violations"] is None
    assert a.headline["read_only_edits"] is None
    assert "--no-verify" not in a.summary() and "hook: not checked" in a.summary()
    assert "read_only: not checked (generic_markdown" in a.summary()
    assert a.headline["prompt_chars"] == 0  # nothing says any agent renders it
    assert a.headline["commits"] == 2 and a.headline["lines_changed"] > 0  # still sized and churned
    assert a.headline["findings"] == 0 and a["read_only"].empty and a["readers"].empty


def test_letta_readers_are_not_held_against_a_generic_repo(tmp_path):
    w = _Writer(tmp_path / "notes")
    w.commit("notes", HUMAN, _t("2026-04-01"), files={
        "system/persona.md": "---\ndescription: Patterns: async fan-out\nread_only: true\n---\nx\n"})
    w.commit("edit", HUMAN, _t("2026-04-02"), files={
        "system/persona.md": "---\ndescription: Patterns: async fan-out\n---\ny\n"})
    store = load_memfs(w.path)
    assert store.meta["layout"] == "generic_markdown"
    assert "readers_disagree" not in set(store.problems["kind"])
    assert store.files["readers_agree"].tolist() == [False]  # still recorded, not a finding
    a = audit_memfs(store)
    assert a["read_only"].empty  # read_only is Letta's protection, not a generic tree's
    # Strict YAML failing is still a fact about the file, whoever reads it.
    assert store.problems["kind"].tolist() == ["malformed_yaml"] and a.headline["findings"] == 1


def test_a_letta_repo_is_accused_and_told_which_hook_and_why(tmp_path):
    path = _persona_repo(tmp_path, "agent", letta=True, who=AGENT)
    store = load_memfs(path)
    assert store.meta["layout"] == "letta_v1"
    assert any(".letta/config.json" in e for e in store.meta["letta_evidence"])
    a = audit_memfs(store)
    [row] = a["no_verify_commits"].to_dict("records")
    assert row["rules"] == "unknown_key" and row["author_kind"] == "agent"
    assert row["variant"] == "current" and "2026-04-02" in row["variant_reason"]
    assert "d557d47e" in row["variant_reason"]
    assert "installs the hook on every clone" in row["hook_basis"]


def test_a_human_in_a_letta_repo_is_accused_only_where_the_hook_is_installed(tmp_path):
    no_hook = audit_memfs(_persona_repo(tmp_path, "plain", letta=True))
    viol = no_hook["hook_violations"]
    assert viol["rule"].tolist() == ["unknown_key"] and not viol["hook_applies"].any()
    assert no_hook.headline["no_verify_commits"] == 0
    hooked = _persona_repo(tmp_path, "hooked", letta=True,
                           hook="#!/usr/bin/env bash\n# Installed by Letta Code CLI\nexit 0\n")
    store = load_memfs(hooked)
    assert store.meta["letta_hook_installed"] == "current"
    a = audit_memfs(store)
    [row] = a["no_verify_commits"].to_dict("records")
    assert row["author_kind"] == "human" and "checkout has Letta Code's pre-commit hook" in row["hook_basis"]


def test_a_review_apply_commit_is_not_a_human_bypassing_the_hook(tmp_path):
    # `memlab apply` commits as memlab with git plumbing: even where the checkout has Letta's
    # hook, its commit did not run it, so it is not counted as a --no-verify commit.
    hooked = _persona_repo(tmp_path, "applied", letta=True, who=("memlab", fmt.REVIEW_EMAIL),
                           hook="#!/usr/bin/env bash\n# Installed by Letta Code CLI\nexit 0\n")
    a = audit_memfs(load_memfs(hooked))
    assert a.headline["no_verify_commits"] == 0 and a.headline["commits_review"] == 1
    [row] = a["hook_violations"].to_dict("records")
    assert row["author_kind"] == "review" and not row["hook_applies"]
    assert "memlab apply" in row["hook_basis"]


@pytest.mark.parametrize("name", ["v1", "prefix", "v2"])
def test_letta_builders_carry_letta_evidence(repos, name):
    store = load_memfs(repos[name].path)
    assert store.meta["layout"].startswith("letta") and store.meta["letta_evidence"]


# --------------------------------------------------------------------------- each consumer's reading

def test_a_colon_in_a_description_is_read_as_letta_code_reads_it(tmp_path):
    text = "---\ndescription: Advanced agent orchestration patterns: async fan-out\n---\n\nBody.\n"
    path = _repo_with(tmp_path, {"system/patterns.md": text})
    s = load_memfs(path)
    row = s.files.set_index("path").loc["system/patterns.md"]
    assert row["description"] == "Advanced agent orchestration patterns: async fan-out"
    assert row["read_only"] == False  # noqa: E712
    assert row["client_description"] == row["description"] and pd.isna(row["server_description"])
    assert not row["yaml_ok"] and row["server_whole_file"]
    assert row["server_value_chars"] == len(text) and row["body_chars"] == len("Body.\n")
    [msg] = s.problems.loc[(s.problems["file"] == "system/patterns.md")
                           & (s.problems["kind"] == "readers_disagree"), "message"]
    assert "Letta server" in msg and f"({len(text)} chars, not 7)" in msg and "whole file" in msg
    a = audit_memfs(s)
    assert a["readers"]["path"].tolist() == ["system/patterns.md"]
    assert a.headline["readers_disagree_files"] == 1


def test_memory_files_and_other_files_are_apart_and_copied_trees_flagged(tmp_path):
    w = _Writer(tmp_path / "repo")
    persona = fmt.render_memfs_file("Who I am", "I am Evie.\n" * 20)
    human = fmt.render_memfs_file("The human", "Sam.\n")
    w.commit("Initial commit", SERVER, _t("2026-04-01"), files={
        ".letta/config.json": '{"version": 1}\n', "system/persona.md": persona,
        "system/human.md": human, "profile.png": PNG * 400})
    w.commit("feat: copy", AGENT, _t("2026-04-02"), files={
        "agents/agent-1/system/persona.md": persona, "agents/agent-1/system/human.md": human,
        "tools/run.ts": "export const x = 1;\n" * 50})
    a = audit_memfs(load_memfs(w.path))
    assert a.headline["top_churn_file"].endswith(".md")
    assert a.headline["top_churn_other_file"] == "tools/run.ts"
    assert a.headline["other_bytes"] == len(PNG * 400) + len("export const x = 1;\n" * 50) + len('{"version": 1}\n')
    from memlab.kinds._memfs._audit import size_over_time
    assert "(root)" not in size_over_time(a).columns  # profile.png is not memory
    [dup] = a["duplicate_trees"].to_dict("records")
    assert (dup["tree"], dup["copy_of"], dup["identical_files"]) == ("agents/agent-1/", "(root)", 2)
    assert a.headline["duplicated_trees"] == 1
