"""A memory file with NUL bytes is text as Letta reads it (issue 33, item 3). Letta Code
0.34.12 never calls a memory file binary: it compiles the prompt from ``git show HEAD:<path>``
read with ``encoding: "utf8"`` and sizes it with ``readFileSync(path, "utf8")`` (``letta.js``
lines 118056 and 221680 of the wheel's payload; cited in
:func:`memlab.kinds._memfs._locate.decode`). memlab called such a file ``binary`` and left
its text out, so the files frame, the prompt estimate and every limit and constraint check
missed it. Judged here by the installed Letta Code: ``letta memory tokens`` on a copy of the
bundled v2 sample with a root memory file holding NUL bytes and one in Latin-1."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import memlab
from hostile import git, git_env, memory_repo
from memlab.sources._bundle import unpack_bundle

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "data" / "samples" / "memfs" / "letta-code-v2.bundle"
NUL = b"---\nname: nul-notes\ndescription: Notes with NUL bytes\n---\nbefore\x00after\x00\x00end\n"
LATIN = "---\nname: latin\ndescription: caf\xe9\n---\nna\xefve \xe0 la carte\n".encode("latin-1")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"


def _commit(repo: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)
    git(repo, "add", "-A")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "notes"], cwd=repo,
                   env=git_env(repo.parent), check=True, capture_output=True)


@pytest.fixture
def v2_with_nul(tmp_path):
    repo = unpack_bundle(BUNDLE, tmp_path / "v2")
    _commit(repo, {"nul-notes.md": NUL, "latin.md": LATIN, "pic.png": PNG})
    return repo


def test_memory_files_with_nul_bytes_are_sized_as_letta_code_sizes_them(v2_with_nul,
                                                                         letta_code):
    repo = v2_with_nul
    said = {f["path"]: f["tokens"] for f in letta_code.memory_tokens(repo)["files"]}
    assert {"nul-notes.md", "latin.md"} <= set(said)  # Letta Code reads both as text
    store = memlab.load_memfs(repo)
    audit = memlab.audit(store)
    mine = audit.tables["letta_tokens"]
    assert dict(zip(mine["path"], mine["tokens"])) == said
    assert audit.headline["letta_prompt_tokens"] == sum(said.values())
    files = store.files.set_index("path")
    # the body as Letta Code's own parser splits the text it read (NUL kept, U+FFFD)
    for rel, data in (("nul-notes.md", NUL), ("latin.md", LATIN)):
        body = letta_code.parse(data.decode("utf-8", "replace"))["body"]
        assert files.loc[rel, "body"].rstrip("\n") == body, rel  # memlab keeps the last newline
    assert "\x00" in files.loc["nul-notes.md", "body"]
    def kinds(rel: str) -> set[str]:
        return set(store.problems.loc[store.problems["file"] == rel, "kind"].astype(str))

    assert "nul_bytes" in kinds("nul-notes.md") and "binary" not in kinds("nul-notes.md")
    assert "not_utf8" in kinds("latin.md") and "binary" not in kinds("latin.md")
    # negative controls: the image is no memory file, still not read nor called text
    assert "pic.png" not in files.index
    assert "pic.png" not in set(store.problems.loc[store.problems["kind"].isin(
        ["nul_bytes", "not_utf8"]), "file"])
    assert not set(store.problems.loc[store.problems["kind"] == "binary", "file"])


def test_a_tree_letta_never_touched_keeps_nul_files_binary(tmp_path):
    """Negative control: no Letta evidence (``generic_markdown``), no Letta reading: the file
    with NUL bytes stays a ``binary`` row and unread, as before."""
    repo = tmp_path / "notes"
    memory_repo(repo)
    (repo / ".letta" / "config.json").unlink()
    _commit(repo, {"system/nul.md": NUL})
    store = memlab.load_memfs(repo)
    assert store.meta["layout"] == "generic_markdown"
    assert "system/nul.md" not in set(store.files["path"])
    assert "binary" in set(store.problems.loc[store.problems["file"] == "system/nul.md", "kind"])
