"""How long memlab takes to read a memory repo's full history, next to `git log --numstat` alone.

Builds 10k- and 100k-commit repos with `git fast-import` in a temporary folder (memfs-shaped:
system/, reference/, projects/, notes/; agent, server and reflection authors; a reflection
branch merged back every 250 commits), then times on the same repo:

* the anchor: ``git log --all --raw --numstat`` (git computing the same diffs), output read
  and discarded;
* git with memlab's exact flags (``-z -M --source --format=...`` over branches, remotes, tags
  and HEAD), output read and discarded: what memlab pays before parsing anything;
* memlab: :func:`memlab.sources._git.log_history` (that one pass, streamed and parsed in
  Python while git runs, into the typed history frame, author kinds included).

Best of 3 each (``--repeat``), interleaved. Prints the figures and the ratios to the anchor
(target: memlab <= 1.2x at 10k and 100k commits), and the CPU each side used (git's, plus
memlab's own Python for memlab's row): on 2 shared cores memlab's parsing overlaps git only
when a core is free, so under load the wall ratio drifts towards the CPU ratio. Asserts nothing
about time. Usage: ``python benchmarks/bench_history.py [N ...] [--repeat R]`` (default 10000
100000).
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from memlab.formats.letta_memfs import classify_author
from memlab.sources import _git

AUTHORS = [
    ("EmmaBot", "agent-5afcfa48-3f0e-4b1a-9c57-1f1f2e3d4c5b@letta.com"),
    ("User user-2b7c", "user-2b7c9e10@letta.ai"),
    ("Jane Doe", "4242+janedoe@users.noreply.github.com"),
]
REFLECTION = ("Reflection Subagent", "agent-9d1e7c22@letta.com")
DOMAINS = {"system": 20, "reference": 50, "projects": 80, "notes": 50}
START = 1_770_000_000  # 2026-02-02


def _data(text: str) -> bytes:
    raw = text.encode()
    return b"data %d\n%s\n" % (len(raw), raw)


def _stream(n_commits: int, seed: int = 0) -> bytes:
    """A fast-import stream of ``n_commits`` commits (reflection commits included)."""
    rng = random.Random(seed)
    paths = [f"{d}/f{i:03d}.md" for d, k in DOMAINS.items() for i in range(k)]
    content: dict[str, list[str]] = {}
    out: list[bytes] = []
    mark = 0
    main_tip = None
    made = 0
    when = START

    def edit(path: str) -> bytes:
        lines = content.setdefault(path, [f"---\ndescription: {path}\n---"])
        lines.append(f"- note {rng.randrange(10**6):06d} about {path.split('/')[0]}")
        if len(lines) > 12:
            del lines[1]
        return b"M 100644 inline %s\n%s" % (path.encode(), _data("\n".join(lines) + "\n"))

    def commit(ref: str, who, message: str, changes: list[bytes], parent, merge=None) -> int:
        nonlocal mark, when
        mark += 1
        when += 37
        head = [b"commit %s\n" % ref.encode(), b"mark :%d\n" % mark,
                b"author %s <%s> %d +0000\n" % (who[0].encode(), who[1].encode(), when),
                b"committer %s <%s> %d +0000\n" % (who[0].encode(), who[1].encode(), when),
                _data(message)]
        if parent is not None:
            head.append(b"from :%d\n" % parent)
        if merge is not None:
            head.append(b"merge :%d\n" % merge)
        out.extend(head + changes + [b"\n"])
        return mark

    while made < n_commits:
        if made and made % 250 == 0 and n_commits - made >= 4:
            ref = f"refs/heads/letta/reflection/r{made}"
            tip, touched = main_tip, []
            for _ in range(2):
                path = rng.choice(paths)
                touched.append(path)
                tip = commit(ref, REFLECTION, "chore: consolidate notes \U0001f52e", [edit(path)], tip)
            again = [b"M 100644 inline %s\n%s" % (p.encode(), _data("\n".join(content[p]) + "\n"))
                     for p in touched]
            main_tip = commit("refs/heads/main", AUTHORS[0], "merge(reflection): consolidated notes",
                              again, main_tip, merge=tip)
            made += 3
            continue
        who = rng.choices(AUTHORS, weights=[8, 2, 1])[0]
        changes = [edit(p) for p in rng.sample(paths, rng.choice((1, 1, 2, 3)))]
        main_tip = commit("refs/heads/main", who, "feat: update memory", changes, main_tip)
        made += 1
    return b"".join(out)


def build(path: Path, n_commits: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=_stream(n_commits),
                   check=True)


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its finished children so far."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _anchor(path: Path) -> tuple[float, float]:
    start, cpu = time.perf_counter(), _cpu()
    subprocess.run(["git", "--no-optional-locks", "-C", str(path), "log", "--all", "--raw",
                    "--numstat"], check=True, capture_output=True)
    return time.perf_counter() - start, _cpu() - cpu


def _git_memlab_flags(path: Path) -> tuple[float, float]:
    start, cpu = time.perf_counter(), _cpu()
    subprocess.run(["git", "--no-optional-locks", "-C", str(path), "log", *_git._LOG_FLAGS,
                    "--raw", "--numstat", *_git._REVS, "--"], check=True, capture_output=True)
    return time.perf_counter() - start, _cpu() - cpu


def _memlab(path: Path) -> tuple[float, float, int]:
    start, cpu = time.perf_counter(), _cpu()
    frame, _ = _git.log_history(path, classify=lambda n, e, m, b: classify_author(n, e, message=m, branch=b))
    return time.perf_counter() - start, _cpu() - cpu, len(frame)


def main(sizes: list[int], repeat: int = 3) -> None:
    print(f"{'commits':>8} {'rows':>8} {'anchor: git log --all --raw --numstat':>38} "
          f"{'git, memlab flags':>18} {'memlab history':>15}")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="memlab-bench-") as tmp:
            repo = Path(tmp) / "repo"
            t0 = time.perf_counter()
            build(repo, n)
            built = time.perf_counter() - t0
            _anchor(repo)  # warm the OS cache so no side pays for the first read
            best = {"anchor": float("inf"), "flags": float("inf"), "memlab": float("inf")}
            cpu = dict(best)
            rows = 0
            for _ in range(repeat):  # interleaved: a load swing hits all three alike
                for key, (wall, used) in (("anchor", _anchor(repo)),
                                          ("flags", _git_memlab_flags(repo))):
                    best[key], cpu[key] = min(best[key], wall), min(cpu[key], used)
                wall, used, rows = _memlab(repo)
                best["memlab"], cpu["memlab"] = min(best["memlab"], wall), min(cpu["memlab"], used)
            a, c = best["anchor"], cpu["anchor"]
            print(f"{n:>8} {rows:>8} {a:>37.2f}s {best['flags']:>8.2f}s ({best['flags'] / a:.2f}x)"
                  f" {best['memlab']:>7.2f}s ({best['memlab'] / a:.2f}x)   (built in {built:.1f}s;"
                  f" load average {os.getloadavg()[0]:.1f})")
            print(f"{'':>8} {'CPU s':>8} {c:>37.2f}s {cpu['flags']:>8.2f}s ({cpu['flags'] / c:.2f}x)"
                  f" {cpu['memlab']:>7.2f}s ({cpu['memlab'] / c:.2f}x)   (git's CPU; memlab's row "
                  "adds its own Python)")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 100_000],
                        help="commit counts to build and time (default 10000 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, best kept (default 3)")
    args = parser.parse_args()
    main(args.sizes, args.repeat)
