"""One git object and commit writer (issue 25, item 4): every migration and apply output is the
same, byte for byte, as before the writer was made one.

The golden commit shas below were recorded from main's code (commit 1469868, before the writer
was made one) by running :func:`migration_heads` and :func:`apply_commit` there: for every case,
the direct apply and the plan script (run with ``python3 -I``) each make the repository, and the
final commit of each repository is recorded (a commit id fixes its tree, every file, its
parents and so every earlier commit). Letta and Souveraine targets are dated at :data:`WHEN`
(``migrate`` would date them now); substrate, Letta server and memfs-upgrade plans are dated
from their source. The review apply's trees were recorded the same way (its commit message
names the proposal's digest, which covers the temporary repository's path, so its commit ids
are checked against ``git commit-tree`` run on that tree, parent and message at the pinned
date :data:`APPLY_WHEN` instead; main's code let ``git commit-tree`` read the clock).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
WHEN = pd.Timestamp("2026-01-02T03:04:05Z")
APPLY_WHEN = 1_780_000_000
AF = {p.stem: p for p in sorted((DATA / "samples/letta-af").glob("*.af"))}
DEMO = DATA / "demo/elfmem-demo.db"
ELFMEM = {p.stem: p for p in sorted((DATA / "samples/elfmem").glob("*.db"))}
SERVER = {p.stem: p for p in sorted((DATA / "samples/letta-server").glob("*.db"))}
BUNDLE = DATA / "samples/memfs/deep-research-memfs.bundle"


def _cases() -> dict[str, tuple]:
    """case -> (source, target, layout, dated at WHEN?)"""
    cases: dict[str, tuple] = {"demo-substrate": (DEMO, "substrate", None, False),
                               "demo-letta-v2": (DEMO, "letta", "v2", True),
                               "demo-souveraine": (DEMO, "souveraine", None, True)}
    for name, path in ELFMEM.items():
        cases[f"{name}-substrate"] = (path, "substrate", None, False)
        cases[f"{name}-letta-v2"] = (path, "letta", "v2", True)
    for name, path in AF.items():
        cases[f"{name}-letta-v2"] = (path, "letta", "v2", True)
        cases[f"{name}-letta-v1"] = (path, "letta", "v1", True)
    cases["ezra-souveraine"] = (AF["ezra"], "souveraine", None, True)
    for name, path in SERVER.items():
        cases[f"{name}-letta-v2"] = (path, "letta", "v2", False)
        cases[f"{name}-letta-v1"] = (path, "letta", "v1", False)
    cases["memfs-bundle-upgrade"] = (BUNDLE, "letta", "v2", False)
    return cases


CASES = _cases()


def _plan(case: str, tmp: Path):
    from memlab.migrations import _letta, plan_migration
    from memlab.sources import load
    from memlab.sources._bundle import unpack_bundle

    src, target, layout, fixed = CASES[case]
    if src == BUNDLE:
        src = unpack_bundle(BUNDLE, tmp / "bundle-src")
    if fixed:
        return _letta.plan_memfs(load(src), src, target=target, when=WHEN, layout=layout)
    return plan_migration(src, to=target, layout=layout)


def _run(*args, cwd: Path, input: bytes | None = None, env: dict | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                          env=env, check=True)
    return proc.stdout.decode().strip()


def _branch_heads(dest: Path, plan, branch: str) -> dict[str, str]:
    return {r.subdir: _run("rev-parse", f"refs/heads/{branch}", cwd=dest / r.subdir)
            for r in plan.repos if r.commits}


def _run_script(text: str, where: Path, dest: Path) -> None:
    script = where / "plan.py"
    script.write_text(text)
    run = subprocess.run([sys.executable, "-I", str(script), str(dest)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr


def migration_heads(case: str, tmp: Path) -> dict[str, str]:
    """Final commit per repository, made by the direct apply and by the plan script (equal)."""
    from memlab.migrations import _apply, _script

    plan = _plan(case, tmp)
    direct = tmp / "direct"
    _apply.apply_new(plan, direct, branch="main", force=False)
    heads = _branch_heads(direct, plan, "main")
    scripted = tmp / "scripted"
    _run_script(_script.render_script(plan, scripted, branch="main", mode="new"), tmp, scripted)
    assert _branch_heads(scripted, plan, "main") == heads
    return heads


def branch_heads(tmp: Path) -> dict[str, str]:
    """ezra.af's v2 plan committed on a new branch of the demo's substrate repository, by the
    direct apply and by the plan script (branch mode: parent and tree from HEAD)."""
    from memlab.migrations import _apply, _letta, _script
    from memlab.sources import load

    base = tmp / "base"
    _apply.apply_new(_plan("demo-substrate", tmp), base, branch="main", force=False)
    for copy in ("direct", "scripted"):
        shutil.copytree(base, tmp / copy, symlinks=True)
    plan = _letta.plan_memfs(load(AF["ezra"]), AF["ezra"], target="letta", when=WHEN, layout="v2")
    _apply.apply_branch(plan, tmp / "direct", branch="ezra", force=False)
    heads = _branch_heads(tmp / "direct", plan, "ezra")
    base_head, base_flat = _apply.branch_base(tmp / "scripted")
    _run_script(_script.render_script(plan, tmp / "scripted", branch="ezra", mode="branch",
                                      base_head=base_head, base_flat=base_flat),
                tmp, tmp / "scripted")
    assert _branch_heads(tmp / "scripted", plan, "ezra") == heads
    return heads


GOLDEN_MIGRATIONS: dict[str, dict[str, str]] = {
    'customer_service-letta-v1': {'': 'b93545f10585ddfd50c25ed390b84863c0ce4160'},
    'customer_service-letta-v2': {'': 'ba89e58d45b253e4d19996e4554c4b55cc933eea'},
    'deep-thought-letta-v1': {'': '0661b0a5e39734166012dabf882036736e022002'},
    'deep-thought-letta-v2': {'': '71dffccd06780de003b2987fd4869aa9e968a6e0'},
    'deep_research_agent-letta-v1': {'': '5f1f14d80a28eaab7258acd39599cd9fe0a25b23'},
    'deep_research_agent-letta-v2': {'': 'ee47dfd85948ffd86b50aff5581c27f65ea19a86'},
    'demo-letta-v2': {'': '2982039ecd6abd1ed2cbb921f26801a0b02b5e3f'},
    'demo-souveraine': {'': 'cb4edbee9c231252b3cc39ae7beda5d8ff5806e4'},
    'demo-substrate': {'': '6e0c5125e1688a7b9d4274beb11ede22865213f0'},
    'elfmem-0.19.2-schema5-letta-v2': {'': 'c63056d7ace80c114041cdb35ec4ed3dc03c5638'},
    'elfmem-0.19.2-schema5-substrate': {'': '9ae40a8af5c8aa568a422999d8b919d4df896d14'},
    'elfmem-0.20.0-schema9-letta-v2': {'': '49f247443bc44ed256dd25e29950d3237e5d2c2f'},
    'elfmem-0.20.0-schema9-substrate': {'': '4c33a3efb8579e79644d76c872e74079884ec40f'},
    'ezra-letta-v1': {'': '2a9f929978421c294caeca9ad901b35a332c16f5'},
    'ezra-letta-v2': {'': 'de85785595cd964cb2a8cdab8724172ace08cf88'},
    'ezra-souveraine': {'': 'dd24cbad5f4ed70af04e614f5192da45ebb7dc11'},
    'letta-0.11.7-letta-v1': {
        'ezra': '4e57c142031b4f33cd30176c0aaa0264b7ac252a',
        'juno': '4eaa9236bda97cff859fbe65d7f63e78a0e051a2',
        'vega': 'bd3c01496d1c61304c91883fde5ef17fef17898c',
        'orion': '26a5bdcc225e65f936f01f90ed2fda8847677728',
    },
    'letta-0.11.7-letta-v2': {
        'ezra': '9e76f1ae6661407bf58fd4fd8abb9c2bf42524f8',
        'juno': '1bab615f83c0fa02b1d74ccd045e481d7673e417',
        'vega': '5af05a22ed4a1b2d43d8c3991dc7da63508a9642',
        'orion': 'b7b1169f718a0f52660d5ca3bc73ce0d1248a57f',
    },
    'letta-0.11.7-nohistory-letta-v1': {
        'ezra': '77d6fdb5790e11ac8461eade3d30a237de18f871',
        'juno': '63146d1c6c26347edae1134c6e707a870419f8d4',
        'vega': '66f0587dfd4d6e29974193c6df133eb060c488d7',
        'orion': 'c9a6e6be8406938072fc2b026a73957479694545',
    },
    'letta-0.11.7-nohistory-letta-v2': {
        'ezra': '357dfb0d927717c26c7026e3f879e480bda54e1a',
        'juno': 'cac87c6dec5829b909bf20291a4c0626aa0b7ccd',
        'vega': 'c9545e047a98515adaccf5f02a1b7c0313654d28',
        'orion': 'f2fa6470545d28dae3baad0bf0405f2950f3aa8e',
    },
    'memfs-bundle-upgrade': {'': 'dfe9578be94876e4d64363d09bbe04640a66519d'},
}
GOLDEN_BRANCH: dict[str, str] = {
    '': '2032fb98d5be902ebe9f4b84ba4f782666ddda2b',
}
GOLDEN_APPLY_TREES: dict[str, str] = {'head': '32a6896a1055414a2cc9419b0d146cf4ab22b93d',
                                      'branch': '32a6896a1055414a2cc9419b0d146cf4ab22b93d'}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_migration_makes_the_commits_it_made_before(case, tmp_path):
    assert migration_heads(case, tmp_path) == GOLDEN_MIGRATIONS[case]


def test_a_migration_on_a_branch_makes_the_commits_it_made_before(tmp_path):
    assert branch_heads(tmp_path) == GOLDEN_BRANCH


# ---- review's apply ---------------------------------------------------------------------------
def _commit_files(root: Path, files: dict[str, str], message: str, day: str) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    stamp = f"{day}T10:00:00+0000"
    who = {"GIT_AUTHOR_NAME": "Rex", "GIT_AUTHOR_EMAIL": "agent-1@letta.com",
           "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_NAME": "Rex",
           "GIT_COMMITTER_EMAIL": "agent-1@letta.com", "GIT_COMMITTER_DATE": stamp,
           "PATH": "/usr/bin:/bin", "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null"}
    _run("add", "--", *files, cwd=root, env=who)
    _run("-c", "core.hooksPath=/dev/null", "commit", "-q", "--no-verify", "-m", message,
         cwd=root, env=who)


def _fm(description: str, body: str, extra: str = "") -> str:
    return f"---\ndescription: {description}\n{extra}---\n\n{body}"


def letta_repo(root: Path) -> Path:
    """The Letta memfs repository of tests/test_review.py, built with git."""
    root.mkdir(parents=True)
    _run("init", "-q", "--initial-branch=main", cwd=root)
    _commit_files(root, {
        ".letta/config.json": '{"version": 1}\n',
        "system/persona.md": _fm("Who I am", "I am Rex, a careful deploy agent.\n"),
        "system/human.md": _fm("The human", "Name: Sam. Prefers short answers.\n"),
        "system/policies.md": _fm("Operator rules", "Deploy only from the main branch after CI "
                                  "is green.\n", "read_only: true\n"),
        "reference/sqlite.md": _fm("SQLite notes", "SQLite WAL mode lets readers continue "
                                   "while a single writer commits.\n"),
    }, "Initial commit", "2026-03-01")
    _commit_files(root, {
        "reference/deploy.md": _fm("Deploy notes", "Deploy only from main once CI is green.\n"),
        "reference/sqlite-notes.md": _fm("More SQLite", "SQLite WAL mode lets readers proceed "
                                         "while one writer commits.\n"),
        "system/notes.md": _fm("Scratch notes", "- ship the audit\n", "metadata: {source: chat}\n"),
        "system/active.md": _fm("Active issues", "issue " * 60 + "\n", "limit: 100\n"),
        "tools/run.sh": "#!/bin/sh\necho hi\n",
    }, "feat: notes", "2026-03-05")
    _run("update-index", "--chmod=+x", "tools/run.sh", cwd=root)
    _commit_files(root, {"system/persona.md": _fm("Who I am", "I am Rex. I deploy whenever "
                                                   "asked.\n")}, "fix: persona", "2026-03-10")
    return root


def _tick(md: Path, ids) -> None:
    text = md.read_text()
    for i in ids:
        assert f"- [ ] `{i}`" in text
        text = text.replace(f"- [ ] `{i}`", f"- [x] `{i}`")
    md.write_text(text)


def apply_commits(tmp: Path, embedder) -> dict[str, tuple[Path, str, str]]:
    """Review the repository above and apply every recommended option (a deletion, a key
    removed, a limit raised, a file restored), on HEAD and on a new branch:
    ``{where: (repository, parent, commit)}``."""
    import memlab
    from memlab.reviews import apply_proposal, review

    out = {}
    for where, branch in (("head", None), ("branch", "memlab/review")):
        root = letta_repo(tmp / where)
        proposal = review(memlab.load(root), as_of="2026-03-12", embedder=embedder)
        md = proposal.write(tmp / f"reviews-{where}")
        _tick(md, [c.options[0] for c in proposal.choices])
        parent = _run("rev-parse", "HEAD", cwd=root)
        result = apply_proposal(md, branch=branch)
        assert len(result.files) >= 3, result.files
        out[where] = (root, parent, result.commit)
    return out


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    from memlab.embed import get_embedder

    return get_embedder(cache_dir=tmp_path_factory.mktemp("writer-cache"))


def _pin_apply_clock(monkeypatch) -> None:
    from memlab.reviews import _apply

    # (main's code was pinned by adding GIT_AUTHOR_DATE / GIT_COMMITTER_DATE to its identity)
    monkeypatch.setattr(_apply, "_clock", lambda: (APPLY_WHEN, 0))


@pytest.mark.slow
def test_review_apply_makes_the_commits_it_made_before(tmp_path, embedder, monkeypatch):
    _pin_apply_clock(monkeypatch)
    made = apply_commits(tmp_path, embedder)
    # The commit message names the proposal's digest, which covers the temporary repository's
    # path: the trees are golden, and each commit is the one git commit-tree makes from that
    # tree, parent, message, memlab's review identity and the pinned date.
    assert {w: _run("rev-parse", f"{sha}^{{tree}}", cwd=root) for w, (root, _, sha) in made.items()} \
        == GOLDEN_APPLY_TREES
    from memlab.formats.letta_memfs import REVIEW_EMAIL, REVIEW_NAME

    for root, parent, sha in made.values():
        body = subprocess.run(["git", "cat-file", "commit", sha], cwd=root, capture_output=True,
                              check=True).stdout
        message = body.split(b"\n\n", 1)[1]
        who = {"GIT_AUTHOR_NAME": REVIEW_NAME, "GIT_AUTHOR_EMAIL": REVIEW_EMAIL,
               "GIT_COMMITTER_NAME": REVIEW_NAME, "GIT_COMMITTER_EMAIL": REVIEW_EMAIL,
               "GIT_AUTHOR_DATE": f"{APPLY_WHEN} +0000",
               "GIT_COMMITTER_DATE": f"{APPLY_WHEN} +0000", "PATH": "/usr/bin:/bin",
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(root)}
        tree = _run("rev-parse", f"{sha}^{{tree}}", cwd=root)
        assert _run("commit-tree", "--no-gpg-sign", tree, "-p", parent, "-F", "-", cwd=root,
                    input=message, env=who) == sha


# ---- the writer against git itself --------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
@pytest.mark.parametrize("offset, shown", [(0, "+0000"), (-150, "-0230"), (330, "+0530")])
def test_hash_object_and_commit_tree_match_git_in_either_object_format(tmp_path, fmt, offset,
                                                                        shown):
    from memlab import _git
    from memlab._gitobj import Signature

    repo = tmp_path / "r"
    repo.mkdir()
    _run("init", "-q", f"--object-format={fmt}", cwd=repo)
    data = "caf\u00e9\n\0binary".encode()
    blob = _git.hash_object(repo, data)
    assert blob == _run("hash-object", "--stdin", cwd=repo, input=data)
    tree = _run("mktree", cwd=repo, input=f"100755 blob {blob}\tr\u00e9sum\u00e9.sh\n".encode())
    who = {"GIT_AUTHOR_NAME": "A U Thor", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "A U Thor", "GIT_COMMITTER_EMAIL": "a@example.com",
           "GIT_AUTHOR_DATE": f"{APPLY_WHEN} {shown}", "GIT_COMMITTER_DATE": f"{APPLY_WHEN} {shown}",
           "PATH": "/usr/bin:/bin", "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null"}
    message = "subject\n\nbody line\n\n\n"
    by_git = _run("commit-tree", "--no-gpg-sign", tree, "-F", "-", cwd=repo,
                  input=message.encode(), env=who)
    ours = _git.commit_tree(repo, tree, [], message,
                            Signature("A U Thor", "a@example.com", APPLY_WHEN, offset))
    assert ours == by_git
    child_git = _run("commit-tree", "--no-gpg-sign", tree, "-p", by_git, "-m", "second", cwd=repo,
                     env=who)
    assert _git.commit_tree(repo, tree, [by_git], "second\n",  # -m adds the newline
                            Signature("A U Thor", "a@example.com", APPLY_WHEN, offset)) == child_git
    _run("update-ref", "refs/heads/main", child_git, cwd=repo)
    assert "error" not in subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True,
                                         text=True).stderr
