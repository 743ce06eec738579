"""The memfs audit's ``constraints`` and ``constraint_history`` tables, against Letta Code
0.34.12 run on the same real repositories.

Repositories are built with real git (plumbing, so any mode can be committed: symlinks,
gitlinks, executables), with and without ``.memfs.config.json`` and a layout policy file. The
oracle is the release itself: ``validateMemoryConstraintsHead`` (what Letta Code runs before it
syncs memory: "Committed memory fails validation") for the validator rows, the pre-commit hook
Letta Code installs for the v2 frontmatter rows, and the installed validator script over each
commit for the history.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

import memlab
from memlab.formats import letta_memfs as fmt

from test_memfs_constraints import trees, valid_configs

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "agent-1@letta.com",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "agent-1@letta.com",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(repo: Path, *args: str, input: bytes | None = None, env: dict | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], input=input, check=True,
                          capture_output=True, env={**GIT_ENV, **(env or {})}).stdout.decode()


def _commit_tree(repo: Path, files: list[dict], message: str, when: int,
                 identity: str = "agent-1@letta.com") -> str:
    """Replace the index with ``files`` (path, mode, text) and commit it on HEAD."""
    index = repo / ".git" / "index"
    index.unlink(missing_ok=True)
    for f in files:
        if f["mode"] == "160000":
            sha = "1" * 40
        else:
            sha = _git(repo, "hash-object", "-w", "--stdin", input=f["text"].encode()).strip()
        _git(repo, "update-index", "--add", "--cacheinfo", f"{f['mode']},{sha},{f['path']}")
    tree = _git(repo, "write-tree").strip()
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "-q", "--verify", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    stamp = {"GIT_AUTHOR_DATE": f"{when} +0000", "GIT_COMMITTER_DATE": f"{when} +0000",
             "GIT_AUTHOR_EMAIL": identity, "GIT_COMMITTER_EMAIL": identity}
    sha = _git(repo, "commit-tree", tree, *(["-p", head] if head else []), "-m", message,
               env=stamp).strip()
    _git(repo, "update-ref", "HEAD", sha)
    return sha


def _repo(tmp: Path, name: str, files: list[dict], *, config: str | None = None,
          policy: str | None = None) -> Path:
    repo = tmp / ".letta" / "agents" / name / "memory"  # where Letta Code keeps it
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    if config is not None:
        files = [*files, {"path": fmt.CONSTRAINTS_CONFIG, "mode": "100644", "text": config}]
    _commit_tree(repo, files, "Update memory", 1_780_000_000)
    if policy is not None:
        (repo / ".git" / fmt.LAYOUT_POLICY_FILE).write_text(policy + "\n")
    return repo


def _constraints(repo: Path):
    store = memlab.load_memfs(repo)
    assert store.meta["layout"] != "generic_markdown", store.meta  # agent identity is evidence
    return memlab.audit(store).tables["constraints"]


SETTINGS = settings(max_examples=100, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(files=trees(), config=st.one_of(st.none(), valid_configs()),
       policy=st.sampled_from([None, *fmt.LAYOUT_POLICIES, "nonsense"]), data=st.data())
def test_validator_rows_equal_letta_codes_head_audit(letta_code, tmp_path_factory, files, config,
                                                     policy, data):
    if config is not None:  # read-only globs need a parent commit to mean anything; see below
        config.pop("readOnlyFiles", None)
    paths = {f["path"] for f in files}
    # git keeps no file and folder of one name: drop a file that sits under another file
    files = [f for f in files if not any("/".join(f["path"].split("/")[:i]) in paths
                                         for i in range(1, f["path"].count("/") + 1))]
    if not files:
        files = [{"path": "system/persona.md", "mode": "100644", "text": "---\ndescription: d\n---\n"}]
    tmp = tmp_path_factory.mktemp("repo")
    repo = _repo(tmp, "agent", files, config=None if config is None else json.dumps(config),
                 policy=policy)
    rows = _constraints(repo)
    expected = letta_code.audit_errors(repo)
    assert rows.loc[rows["check"] == "validator", "message"].tolist() == expected


def test_v2_frontmatter_rows_equal_the_installed_hook(letta_code, tmp_path):
    files = [{"path": "MEMORY.md", "mode": "100644", "text": "---\nname: x\n---\n# Memory\n"},
             {"path": "persona.md", "mode": "100644", "text": "---\nname: P\nread_only: true\n---\nhi"},
             {"path": "notes/MEMORY.md", "mode": "100644", "text": "# Notes\n"},
             {"path": "notes/a.md", "mode": "100644", "text": "no frontmatter"},
             {"path": "hidden/b.md", "mode": "100644", "text": "not projected: no hidden/MEMORY.md"},
             {"path": "skills/s/SKILL.md", "mode": "100644", "text": "skills are not memory"}]
    repo = _repo(tmp_path, "agent", files, policy="root-marker")
    rows = _constraints(repo)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, env=GIT_ENV)
    hook = letta_code.install_hooks(clone, "root-marker")
    run = subprocess.run([str(hook)], cwd=clone, capture_output=True, text=True, env=GIT_ENV)
    said = [line[2:] for line in run.stdout.splitlines() if line.startswith("  ")]
    assert run.returncode == 1 and said  # the hook refuses a commit of this tree
    assert rows.loc[rows["check"] == "frontmatter", "message"].tolist() == said
    # ...and the validator rows are what --audit reports (hidden/b.md lacks its index)
    assert rows.loc[rows["check"] == "validator", "message"].tolist() == \
        letta_code.audit_errors(repo) == ["hidden/b.md: missing required index hidden/MEMORY.md"]
    assert memlab.audit(memlab.load_memfs(repo)).headline["constraint_errors"] == len(rows) == 5


def test_history_names_the_commit_that_first_broke_each_rule(letta_code, tmp_path):
    """Each commit judged against its parent, as the hook would have judged it; the oracle is
    the validator script Letta Code installs, run in a clone at each commit with the commit's
    tree staged over its parent."""
    index = {"path": "MEMORY.md", "mode": "100644", "text": "# Memory\n"}
    persona = {"path": "persona.md", "mode": "100644", "text": "---\nname: P\ndescription: d\n---\nhi"}
    config0 = {"path": fmt.CONSTRAINTS_CONFIG, "mode": "100644",
               "text": json.dumps({"version": 1, "maxFileCharacters": 60})}
    config = {**config0, "text": json.dumps({"version": 1, "maxFileCharacters": 60,
                                             "readOnlyFiles": ["persona.md"]})}
    repo = tmp_path / "agent" / "memory"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    steps = [
        [index, persona, config0],                                           # c0: clean
        [index, {**persona, "text": persona["text"] + "!"}, config,          # c1: read-only edit,
         {"path": "deep/a/b/c.md", "mode": "100644", "text": "x"}],           #     depth, index
        [index, {**persona, "text": persona["text"] + "!"}, config,
         {"path": "big.md", "mode": "100644", "text": "y" * 100}],            # c2: size; c1's fixed
    ]
    shas = [_commit_tree(repo, files, f"step {i}", 1_780_000_000 + i) for i, files in enumerate(steps)]
    (repo / ".git" / fmt.LAYOUT_POLICY_FILE).write_text("root-marker\n")
    store = memlab.load_memfs(repo)
    hist = memlab.audit(store).tables["constraint_history"]

    # The oracle, commit by commit.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, env=GIT_ENV)
    letta_code.install_hooks(clone, "root-marker")
    validator = clone / ".git" / "hooks" / "letta-memory-constraints.cjs"
    said: dict[str, list[str]] = {}
    for parent, sha in zip([None, *shas], shas):
        if parent is None:
            continue  # a root commit has no parent to stand on; memlab checks it against nothing
        _git(clone, "checkout", "-q", "--detach", parent)
        _git(clone, "read-tree", sha)
        run = subprocess.run([str(letta_code.node), str(validator)], cwd=clone, capture_output=True,
                             text=True, env={**GIT_ENV, "LETTA_MEMORY_CONSTRAINTS_UPDATE": "1"})
        said[sha] = [line[2:] for line in run.stderr.splitlines() if line.startswith("  ")]
    first = {}
    for sha in shas[1:]:
        for line in said[sha]:
            first.setdefault(line.split(":")[0], sha)
    got = {row.path: row.first_sha for row in hist.itertuples()}
    assert got == first  # and nothing at c0
    assert set(first) == {"persona.md", "deep/a/b/c.md", "big.md"}
    fixed = hist.set_index("path")
    assert fixed.loc["persona.md", "fixed_sha"] == shas[2]      # c2 leaves persona.md as c1 had it
    assert bool(fixed.loc["big.md", "at_ref"]) is True


def test_not_a_letta_repository_is_not_checked(tmp_path):
    repo = tmp_path / "plain"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _commit_tree(repo, [{"path": "MEMORY.md", "mode": "100644", "text": "---\nx: 1\n---\n"}],
                 "notes", 1_780_000_000, identity="me@example.com")
    audit = memlab.audit(memlab.load_memfs(repo))
    assert audit.headline["layout"] == "generic_markdown"
    assert audit.headline["constraint_errors"] is None


def test_memlabs_own_migrations_give_no_constraint_finding(tmp_path):
    """Every bundled Agent File and the 0.11.7 server, migrated to v2: memlab's audit of the
    output finds no constraint error at HEAD, none over history (the migration's read-only list
    is its own commit, after the files: not an agent's read-only edit) and no finding at all.
    (tests/test_migrate_v2.py checks the same outputs with Letta Code's own --audit.)"""
    root = Path(__file__).resolve().parents[1] / "data" / "samples"
    sources = sorted((root / "letta-af").glob("*.af")) + [root / "letta-server" / "letta-0.11.7.db"]
    for src in sources:
        out = tmp_path / src.stem
        memlab.migrate(src, out, to="letta", retrieval=False)
        for repo in [p for p in [out, *out.iterdir()] if (p / ".git").exists()]:
            audit = memlab.audit(repo)
            assert audit.headline["layout_policy"] == "root-marker", repo
            assert audit.headline["constraint_errors"] == 0, (repo, audit.tables["constraints"])
            assert audit.tables["constraint_history"].empty, repo
            assert audit.headline["findings"] == 0, repo


def test_a_repository_moved_to_v2_keeps_its_legacy_hook_verdicts(tmp_path):
    """Commits made before a repository had a root MEMORY.md ran the legacy hook: moving the
    repository to v2 (history kept) must not re-judge them by the v2 rules or drop them."""
    from memlab.sources._bundle import unpack_bundle

    bundle = Path(__file__).resolve().parents[1] / "data" / "samples" / "memfs" / "deep-research-memfs.bundle"
    v1 = unpack_bundle(bundle, tmp_path / "v1")
    memlab.migrate(v1, tmp_path / "v2", to="letta", layout="v2", retrieval=False)
    cols = ["sha", "variant", "rule", "path"]
    before = memlab.audit(v1).tables["hook_violations"][cols]
    after = memlab.audit(tmp_path / "v2").tables["hook_violations"][cols]
    assert len(before) == 3 and set(before["variant"].astype(str)) == {"current"}
    assert sorted(map(tuple, after.astype(str).values)) == sorted(map(tuple, before.astype(str).values))
