"""What the integrity audit costs (issues 34 item 6 and 40): a constant number of git processes
per repository however long its reflogs, and reflogs streamed under a size cap (a sparse 1 GiB
reflog is not read: "not read: over N bytes", never GBs of memory), long lines and times past
2262 included. Reflogs are made by git itself (``update-ref --stdin`` transactions over
commits ``fast-import`` wrote)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import memlab
from memlab.audits._integrity import memfs_integrity
from memlab.kinds._memfs._integrity_reflog import MAX_REFLOG_BYTES

from integrity_repos import ENV, git

ROOT = Path(__file__).resolve().parents[1]


def reflogged_repo(path: Path, n: int) -> tuple[Path, list[str]]:
    """A memory repository whose ``main`` moved through ``n`` commits one transaction at a time
    (``n`` reflog lines), then was reset to a side commit: the last ``n - 1`` commits lost."""
    path.parent.mkdir(parents=True, exist_ok=True)
    git(path.parent, "init", "-q", "-b", "main", str(path))
    stream = []
    for i in range(1, n + 1):
        body = f"---\ndescription: notes\n---\nline {i}\n"
        stream += [f"commit refs/import/main", f"mark :{i}",
                   f"committer User <user-1@letta.ai> {1_700_000_000 + i} +0000",
                   f"data {len(f'Update system/notes block {i}')}",
                   f"Update system/notes block {i}",
                   *([f"from :{i - 1}"] if i > 1 else []),
                   "M 644 inline system/notes.md", f"data {len(body.encode())}", body]
    side = "---\ndescription: side\n---\nside\n"
    stream += ["commit refs/import/side", f"mark :{n + 1}",
               f"committer User <user-1@letta.ai> {1_700_000_000 + n + 1} +0000",
               "data 7", "side it", "from :1", "M 644 inline system/side.md",
               f"data {len(side.encode())}", side]
    marks = path / "marks"
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet", f"--export-marks={marks}"],
                   input="\n".join(stream) + "\n", text=True, check=True, env=ENV)
    sha = {int(m[1:]): s for m, s in (line.split() for line in marks.read_text().splitlines())}
    marks.unlink()
    moves = "".join(f"start\nupdate refs/heads/main {sha[i]}\ncommit\n" for i in range(1, n + 1))
    subprocess.run(["git", "-C", str(path), "update-ref", "--stdin", "-m", "commit: update"],
                   input=moves, text=True, check=True, env=ENV, stdout=subprocess.DEVNULL)
    subprocess.run(["git", "-C", str(path), "update-ref", "-m", "reset: moving to side",
                    "refs/heads/main", sha[n + 1]], check=True, env=ENV)
    for ref in ("refs/import/main", "refs/import/side"):
        git(path, "update-ref", "-d", ref)
    git(path, "reset", "-q", "--hard")
    return path, [sha[i] for i in range(1, n + 2)]


class Counting(subprocess.Popen):
    started: list[list[str]] = []

    def __init__(self, args, *a, **kw):
        Counting.started.append(list(args))
        super().__init__(args, *a, **kw)


def git_processes(store, monkeypatch) -> tuple[int, object]:
    Counting.started = []
    monkeypatch.setattr(subprocess, "Popen", Counting)
    found = memfs_integrity(store)
    monkeypatch.undo()
    return len([a for a in Counting.started if a and a[0] == "git"]), found


def test_git_processes_do_not_grow_with_the_reflog(tmp_path, monkeypatch):
    counts = {}
    for n in (10, 320):
        repo, shas = reflogged_repo(tmp_path / f"r{n}" / "memory", n)
        lines = (repo / ".git" / "logs" / "refs" / "heads" / "main").read_text().splitlines()
        assert len(lines) == n + 1
        store = memlab.load(repo)
        count, found = git_processes(store, monkeypatch)
        counts[n] = count
        # the same one finding in both: the reset lost n - 1 commits
        assert found["kind"].astype(str).tolist() == ["reset_away"]
        assert found["lost"].iloc[0] == n - 1 and found["sha"].iloc[0] == shas[n - 1]
    assert counts[10] == counts[320] and 3 <= counts[320] <= 6, counts


def test_a_sparse_gigabyte_reflog_is_not_read(tmp_path):
    repo, _ = reflogged_repo(tmp_path / "big" / "memory", 5)
    log = repo / ".git" / "logs" / "refs" / "heads" / "main"
    os.truncate(log, 1 << 30)  # sparse: nothing written, 1 GiB long
    # The peak is VmHWM, which belongs to this process's own memory map: ru_maxrss would carry
    # the high-water mark of the pytest process the child was forked from across exec.
    code = ("import json, re, memlab; a = memlab.audit(%r); "
            "hwm = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); "
            "print(json.dumps([a.headline['integrity_findings'], a.headline['integrity_reason'], "
            "hwm]))" % str(repo))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    findings, reason, maxrss_kb = json.loads(out.stdout.strip().splitlines()[-1])
    assert findings is None
    assert f"not read: over {MAX_REFLOG_BYTES} bytes" in reason and "refs/heads/main" in reason
    assert maxrss_kb < 700_000, maxrss_kb  # memlab + pandas; far from the 1 GiB file


def test_hostile_reflog_lines_are_skipped_or_read_without_error(tmp_path):
    repo, shas = reflogged_repo(tmp_path / "odd" / "memory", 3)
    log = repo / ".git" / "logs" / "refs" / "heads" / "main"
    zero = "0" * 40
    with log.open("a") as fh:
        fh.write(f"{shas[0]} {shas[1]} User <u@x> 99999999999999999999 +0000\tfrom year 3000\n")
        fh.write(f"{shas[0]} {shas[1]} " + "x <" * 150_000 + " 1 +0000\tlong\n")  # ~450 KB line
        fh.write(f"{zero} {shas[2]} User <u@x> 1700000000 +0000\t" + "m" * 200_000 + "\n")
        fh.write("not a reflog line at all\n")
        # a reset dated in the year 3000 (past 2262, where nanosecond timestamps end)
        fh.write(f"{shas[1]} {shas[-1]} User <u@x> 32503680000 +0000\treset: moving to side\n")
    found = memlab.audit(repo)
    rows = found.tables["integrity"]
    assert rows["kind"].astype(str).tolist() == ["reset_away", "reset_away"]
    assert found.headline["integrity_findings"] == 2
    assert rows["when"].iloc[1].year == 3000
    assert rows["lost"].tolist() == [1, 1]  # each lost commit belongs to the last entry


def test_a_reflog_that_is_a_symlink_is_not_followed_and_is_named(tmp_path):
    repo, _ = reflogged_repo(tmp_path / "link" / "memory", 3)
    other = repo / ".git" / "logs" / "refs" / "heads" / "other"
    other.symlink_to("/etc/hostname")
    audit = memlab.audit(repo)
    assert audit.headline["integrity_findings"] is None
    assert "refs/heads/other: not read" in audit.headline["integrity_reason"]
