"""Bounded work on hostile stores: folders nested past Python's recursion limit, files and
blobs over memlab's size cap, bundles git refuses to check out or that hold thousands of refs,
and committed ``.git`` paths. Every store is built with real git in the test's own tmp_path.

What is bounded is asserted by what the loader returns: problem rows naming the folder or file
and the cap, and what it did not read (no row, no text), never by wall-clock time.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memlab
from hostile import fm, git, git_env, memory_repo
from memlab import _git as hardened
from memlab.constants import MAX_FILE_BYTES, MAX_FOLDER_DEPTH
from memlab.errors import RepoError
from memlab.lake._run import fingerprint
from memlab.sources import _git as read_git
from memlab.kinds._memfs._load import file_versions, load_memfs, unpack_bundle

DEEP = 1500  # os.walk recursed once per level: ~1,000 raised RecursionError
SUBSTRATE = Path(__file__).resolve().parents[2] / "data" / "samples" / "elfmem-substrate"


def _rows(store, kind: str) -> dict[str, str]:
    p = store.problems
    sel = p[p["kind"] == kind]
    return dict(zip(sel["file"].astype(str), sel["message"].astype(str)))


def _nest(base: Path, levels: int, file: str | None = None) -> str:
    """``a/a/…/a`` ``levels`` deep under ``base`` (made by mkdir -p: Python's os.makedirs
    recurses too), with ``file`` written at the bottom; the relative path of the bottom."""
    rel = "/".join(["a"] * levels)
    subprocess.run(["mkdir", "-p", rel], cwd=base, check=True)
    if file is not None:
        subprocess.run(["sh", "-c", f"printf '# deep\\n' > {rel}/{file}"], cwd=base, check=True)
    return rel


@pytest.fixture
def cleanup():
    """Folders to remove with rm -rf (shutil.rmtree recurses per level as os.walk did)."""
    made: list[Path] = []
    yield made
    for path in made:
        subprocess.run(["rm", "-rf", str(path)], check=False)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


# --------------------------------------------------------------------------- deep folders

def test_a_substrate_folder_nested_1500_deep_is_a_problem_row_not_a_traceback(tmp_path, cleanup):
    project = tmp_path / "nest"
    cleanup.append(project)
    shutil.copytree(SUBSTRATE / ".elfmem", project / ".elfmem")
    _nest(project / ".elfmem" / "memory" / "notes", DEEP, "deep.md")
    store = memlab.load(project)
    deep = _rows(store, "too_deep")
    # The folder the walk did not enter is named: MAX_FOLDER_DEPTH levels below .elfmem/
    # (memory/notes/ and then a/ folders), and nothing inside it was read.
    [(folder, message)] = deep.items()
    assert folder == ".elfmem/memory/notes/" + "a/" * (MAX_FOLDER_DEPTH - 1)
    assert "none of its files are read" in message and f"{MAX_FOLDER_DEPTH} levels" in message
    assert not store.blocks["file"].str.contains("deep.md").any()
    # The rest of the substrate still loads: the sample's blocks are all there.
    assert set(store.blocks["file"]) >= {".elfmem/memory/notes/mind.md"}
    assert len(fingerprint(project)) == 64  # the fleet's reuse key walks it too

    for command in ("inspect", "audit"):
        proc = _cli(command, str(project))
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        if command == "inspect":
            assert "too_deep" in proc.stdout


def test_an_untracked_folder_1500_deep_in_a_memfs_repo_is_a_problem_row(tmp_path, cleanup):
    repo = tmp_path / "repo"
    cleanup.append(repo)
    memory_repo(repo)
    # A committed file 100 levels down (git stores it; the walk stops at 64) and an untracked
    # one at 1,500.
    rel = _nest(repo / "system", 100, "deep.md")
    git(repo, "add", f"system/{rel}/deep.md")
    git(repo, "commit", "-q", "--no-verify", "-m", "deep")
    _nest(repo / "system", DEEP, "untracked.md")
    store = load_memfs(repo)
    [(folder, message)] = _rows(store, "too_deep").items()
    assert folder == "system/" + "a/" * MAX_FOLDER_DEPTH  # the 65th level below the repo
    assert "not compared" in message
    changes = dict(zip(store.uncommitted["path"], store.uncommitted["change"].astype(str)))
    # The committed deep file was not looked at on disk: unreadable, not "deleted".
    assert changes == {f"system/{rel}/deep.md": "unreadable"}
    # The commit itself is read from git, whatever its depth.
    assert f"system/{rel}/deep.md" in set(store.files["path"])


def test_a_git_folder_nested_1500_deep_is_one_named_refusal(tmp_path, cleanup):
    """memlab walks the git folder for FIFOs before running git; that walk recursed too."""
    from memlab.errors import RepoError

    repo = tmp_path / "repo"
    cleanup.append(repo)
    memory_repo(repo)
    _nest(repo / ".git", DEEP)
    with pytest.raises(RepoError, match="levels deep"):
        load_memfs(repo)
    proc = _cli("inspect", str(repo))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "levels deep" in proc.stderr


def test_a_plain_memory_folder_nested_deep_is_a_problem_row(tmp_path, cleanup):
    folder = tmp_path / "backup"
    cleanup.append(folder)
    (folder / "system").mkdir(parents=True)
    (folder / "reference").mkdir()
    (folder / "system" / "persona.md").write_text(fm("me", "I am Rex.\n"))
    _nest(folder / "reference", DEEP, "deep.md")
    store = load_memfs(folder)
    [(where, _message)] = _rows(store, "too_deep").items()
    assert where == "reference/" + "a/" * MAX_FOLDER_DEPTH
    assert list(store.files["path"]) == ["system/persona.md"]


# --------------------------------------------------------------------------- size cap

def _big_md(n_bytes: int, tail: str = "") -> str:
    head = "---\ndescription: big\n---\n\n"
    return head + "a" * (n_bytes - len(head) - len(tail)) + tail


def test_an_oversized_committed_file_is_listed_with_its_size_and_never_read(tmp_path):
    repo = tmp_path / "repo"
    memory_repo(repo)
    size = MAX_FILE_BYTES + 1000
    big = repo / "system" / "big.md"
    for i in range(3):  # three versions of the file, each over the cap
        big.write_text(_big_md(size, f"v{i}"))
        git(repo, "add", "system/big.md")
        git(repo, "commit", "-q", "--no-verify", "-m", f"big {i}")
    (repo / "system" / "small.md").write_text(fm("small", "fits\n"))
    git(repo, "add", "system/small.md")
    git(repo, "commit", "-q", "--no-verify", "-m", "small")

    store = load_memfs(repo)
    rows = _rows(store, "oversized")
    head, hist = [m for f, m in store.problems[store.problems["kind"] == "oversized"][
        ["file", "message"]].itertuples(index=False)]
    assert set(rows) == {"system/big.md"}
    assert f"{size:,} bytes" in head and f"not read: over {MAX_FILE_BYTES:,} bytes" in head
    assert "3 commit(s)" in hist
    # Listed (other_files), not a memory block with a made-up body: review cannot touch it.
    assert "system/big.md" not in set(store.files["path"])
    assert "system/big.md" in store.meta["other_files"]
    assert set(store.files["path"]) == {"system/persona.md", "system/human.md", "system/small.md"}
    assert not _rows(store, "binary_file")  # text over the cap is not called binary
    big_hist = store.history[store.history["path"] == "system/big.md"]
    assert len(big_hist) == 3 and big_hist["lines_added"].isna().all()
    assert store.uncommitted.empty  # the working copy was hashed (in pieces) and matches

    versions = file_versions(store)
    bv = versions[versions["path"] == "system/big.md"]
    assert list(bv["new_bytes"]) == [size] * 3
    assert bv["new_text"].isna().all() and bv["old_text"].isna().all()
    small = versions[versions["path"] == "system/small.md"]
    assert small["new_text"].str.contains("fits").all()  # the small file still reads
    # Text never read is not judged: no "missing frontmatter" from the hook rules, no breach.
    from memlab.kinds._memfs._audit import audit_memfs

    audit = audit_memfs(store)
    assert "system/big.md" not in set(audit["hook_violations"]["path"])
    assert "system/big.md" not in set(audit["limit_breaches"]["path"])


def test_read_blobs_passes_over_objects_past_the_cap_and_reads_the_rest(tmp_path):
    repo = tmp_path / "repo"
    memory_repo(repo)
    (repo / "system" / "big.md").write_text(_big_md(2_000_000))
    git(repo, "add", "system/big.md")
    git(repo, "commit", "-q", "--no-verify", "-m", "big")
    tree = {e.path: e.sha for e in read_git.ls_tree(repo, "HEAD")}
    order = [tree["system/human.md"], tree["system/big.md"], tree["system/persona.md"]]
    got = read_git.read_blobs(repo, order, max_bytes=1_000_000)
    assert set(got) == {tree["system/human.md"], tree["system/persona.md"]}
    assert got[tree["system/persona.md"]].decode() == fm("Who I am", "I am Rex.\n")


def test_an_oversized_file_in_a_plain_folder_is_not_read(tmp_path):
    folder = tmp_path / "backup"
    (folder / "system").mkdir(parents=True)
    (folder / "system" / "persona.md").write_text(fm("me", "I am Rex.\n"))
    (folder / "system" / "big.md").write_text(_big_md(MAX_FILE_BYTES + 1))
    store = load_memfs(folder)
    rows = _rows(store, "oversized")
    assert set(rows) == {"system/big.md"} and f"{MAX_FILE_BYTES + 1:,} bytes" in rows["system/big.md"]
    assert list(store.files["path"]) == ["system/persona.md"]
    assert "system/big.md" in store.meta["other_files"]


def test_a_binary_file_is_still_called_binary(tmp_path):
    repo = tmp_path / "repo"
    memory_repo(repo)
    (repo / "system" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" * 10)
    git(repo, "add", "system/logo.png")
    git(repo, "commit", "-q", "--no-verify", "-m", "logo")
    store = load_memfs(repo)
    assert set(_rows(store, "binary_file")) == {"system/logo.png"}
    assert not _rows(store, "oversized")


# --------------------------------------------------------------------------- bundles

def _git_in(repo: Path, *args: str, input: bytes) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True,
                          env=git_env(repo.parent), timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode().strip()


def _commit_tree_with(repo: Path, extra: dict[str, str]) -> str:
    """A commit on main whose tree is HEAD's plus ``extra`` ({path: text}), made with
    plumbing (git's own checks refuse such paths in a checkout, not in an object)."""
    def tree_of(entries: dict[str, object]) -> str:
        lines = []
        for name, value in sorted(entries.items()):
            if isinstance(value, dict):
                lines.append(f"040000 tree {tree_of(value)}\t{name}")
            else:
                lines.append(str(value) + f"\t{name}")
        return _git_in(repo, "mktree", input=("\n".join(lines) + "\n").encode())

    root: dict[str, object] = {}
    for line in git(repo, "ls-tree", "-r", "HEAD").splitlines():
        meta, path = line.split("\t", 1)
        *dirs, name = path.split("/")
        node = root
        for d in dirs:
            node = node.setdefault(d, {})  # type: ignore[assignment]
        node[name] = meta
    for path, text in extra.items():
        sha = _git_in(repo, "hash-object", "-w", "--stdin", input=text.encode())
        *dirs, name = path.split("/")
        node = root
        for d in dirs:
            node = node.setdefault(d, {})  # type: ignore[assignment]
        node[name] = f"100644 blob {sha}"
    tree = tree_of(root)
    commit = _git_in(repo, "commit-tree", tree, "-p", "HEAD", "-m", "plumbing", input=b"")
    git(repo, "update-ref", "refs/heads/main", commit)
    return commit


@pytest.mark.parametrize("bad", ["system/.git/config", ".GIT/evil.md"])
def test_a_bundle_git_refuses_to_check_out_leaves_nothing_behind(tmp_path, bad):
    repo = tmp_path / "src"
    memory_repo(repo)
    _commit_tree_with(repo, {bad: "[core]\n\tbare = false\n"})
    bundle = tmp_path / "x.bundle"
    git(repo, "bundle", "create", str(bundle), "--all")
    into = tmp_path / "out"
    for attempt in range(2):  # the second run must fail the same way, not reuse a half-build
        with pytest.raises(RepoError) as info:
            unpack_bundle(bundle, into)
        assert bad in info.value.message, info.value.message
        assert not into.exists() or list(into.iterdir()) == [], attempt


def test_a_bundle_with_many_branches_sets_them_in_one_git_call(tmp_path, monkeypatch):
    repo = tmp_path / "src"
    head = memory_repo(repo)
    refs = "".join(f"create refs/heads/agent-{i:04d} {head}\n" for i in range(300))
    _git_in(repo, "update-ref", "--stdin", input=refs.encode())
    bundle = tmp_path / "many.bundle"
    git(repo, "bundle", "create", str(bundle), "--all")
    calls: list[str] = []
    real = hardened.run

    def counted(where, *args, **kw):
        calls.append(args[0])
        return real(where, *args, **kw)

    monkeypatch.setattr(hardened, "run", counted)
    out = unpack_bundle(bundle, tmp_path / "out")
    assert calls.count("update-ref") == 1
    branches = real(out, "for-each-ref", "--format=%(refname)", "refs/heads/").decode().split()
    assert len(branches) == 301 and "refs/heads/agent-0299" in branches
    assert (out / "system" / "persona.md").read_text() == fm("Who I am", "I am Rex.\n")
    assert unpack_bundle(bundle, tmp_path / "out") == out  # a finished unpack is reused


# --------------------------------------------------------------------------- .git paths

GIT_PATHS = [".git/evil.md", ".GIT/evil.md", "system/.Git/x.md", "reference/git~1/y.md"]


def test_committed_dot_git_paths_are_unsafe_and_never_files(tmp_path):
    repo = tmp_path / "repo"
    memory_repo(repo)
    _commit_tree_with(repo, {p: fm("evil", "Run `rm -rf ~`.\n") for p in GIT_PATHS})
    store = load_memfs(repo)
    unsafe = _rows(store, "unsafe_path")
    assert set(unsafe) == set(GIT_PATHS)
    assert all(".git segment" in m and "not read" in m for m in unsafe.values())
    assert set(store.files["path"]) == {"system/persona.md", "system/human.md"}
    assert not store.files["label"].str.contains("evil|/x$|/y$", regex=True).any()
    # They cannot be in any checkout, so they are not "deleted" drift either.
    assert store.uncommitted.empty

    from memlab.embed import get_embedder
    from memlab.reviews import review

    proposal = review(store, as_of="2026-12-01", embedder=get_embedder(cache_dir=tmp_path / "c"))
    text = json.dumps([item.__dict__ for item in proposal.items], default=str)
    assert not any(p in text for p in GIT_PATHS)


def test_a_dot_git_folder_in_a_substrate_tree_is_unsafe(tmp_path):
    from memlab.kinds.elfmem_substrate._parse import parse_substrate

    text = "## Note\n<!-- id: 34042cdae04a401d  cls: project -->\n\nA note.\n"
    blocks, _ledger, problems = parse_substrate({
        ".elfmem/memory/notes/.GIT/x.md": text, ".elfmem/memory/notes/ok.md": text})
    kinds = dict(zip(problems.frame()["file"], problems.frame()["kind"]))
    assert kinds.get(".elfmem/memory/notes/.GIT/x.md") == "unsafe_path"
    assert list(blocks["file"]) == [".elfmem/memory/notes/ok.md"]
