"""Digest every output memlab makes from the bundled inputs, to show a refactor changed none.

For the demo database and every sample under ``data/samples/`` (memfs bundles are unpacked into
a temp folder first), prints one JSON object ``{"<input> <output>": sha256}``:

- ``load``: each frame's dtypes and CSV text, the problems frame, the store's kind;
- ``audit``: each table's dtypes and CSV text, the headline (as JSON), the summary text, at a
  fixed ``as_of``;
- ``migrate``: every file (path, mode, content) at every branch head memlab wrote, the flags
  and moved frames; the clock (``migrated_at``) is left out;
- ``review``: the proposal's markdown and JSON twin, at the same ``as_of``; the clock
  (``made_at``) and the digest made from it are left out.

Run it at two commits and diff the output (nothing is written outside ``--work``, which is removed afterwards)::

    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python scripts/output_digest.py > /tmp/after.json
    git worktree add /tmp/before <commit> && (cd /tmp/before && HF_HUB_OFFLINE=1 PYTHONPATH=. \\
        /work/main/.venv/bin/python /work/main/scripts/output_digest.py) > /tmp/before.json
    diff /tmp/before.json /tmp/after.json

Options: ``--skip review`` (the review embeds every unit, the slow part), ``--only NAME``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import shutil
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MEMLAB_QUIET", "1")

ROOT = Path.cwd()
AS_OF = "2026-08-04"
MARK = ".memlab-output-digest"


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text if isinstance(text, bytes) else text.encode()).hexdigest()[:16]


def _frame(df) -> str:
    return _sha(repr(list(df.dtypes.astype(str).items())) + "\n" + df.to_csv(index=True))


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout


def _tree_digest(repo: Path, ref: str) -> str:
    """Every path, mode and content at ``ref``; a JSON file's ``migrated_at`` (the clock) left
    out, so two runs of the same code agree."""
    h = hashlib.sha256()
    for line in _git(repo, "ls-tree", "-r", "--full-tree", ref).splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, obj = meta.split()
        data = subprocess.run(["git", "-C", str(repo), "cat-file", kind, obj], capture_output=True,
                              check=True).stdout
        if path.endswith(".json") and b"migrated_at" in data:
            data = json.dumps(_drop(json.loads(data), "migrated_at"), sort_keys=True).encode()
        h.update(f"{mode} {path}\n".encode() + hashlib.sha256(data).digest())
    return h.hexdigest()[:16]


def _drop(value, key):
    if isinstance(value, dict):
        return {k: _drop(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [_drop(v, key) for v in value]
    return value


def inputs(tmp: Path) -> list[tuple[str, Path]]:
    """Copies of the inputs under ``tmp`` (outputs name their source's path, so both runs of a
    comparison must read the same paths)."""
    (tmp / "in").mkdir(parents=True)
    out = [("demo", Path(shutil.copy(ROOT / "data/demo/elfmem-demo.db", tmp / "in")))]
    samples = ROOT / "data/samples"
    for p in sorted(samples.rglob("*")):
        if p.suffix in (".db", ".af"):
            dest = tmp / "in" / p.relative_to(samples)
            dest.parent.mkdir(parents=True, exist_ok=True)
            out.append((p.relative_to(samples).as_posix(), Path(shutil.copy(p, dest))))
        elif p.suffix == ".bundle":
            from memlab.sources._bundle import unpack_bundle

            out.append((p.relative_to(samples).as_posix(), unpack_bundle(p, tmp / "in")))
    return out


def digest(name: str, path: Path, tmp: Path, skip: set[str]) -> dict[str, str]:
    import memlab
    import memlab.errors

    out: dict[str, str] = {}
    store = memlab.load(path)
    out[f"{name} load kind"] = store.kind
    for frame, df in sorted(store.frames.items()):
        out[f"{name} load {frame}"] = _frame(df)
    out[f"{name} load problems"] = _frame(store.problems)
    if "audit" not in skip:
        a = memlab.audit(store, as_of=AS_OF)
        for table, df in sorted(a.tables.items()):
            out[f"{name} audit {table}"] = _frame(df)
        out[f"{name} audit headline"] = _sha(json.dumps(a.headline, sort_keys=True, default=str))
        out[f"{name} audit summary"] = _sha(a.summary())
    if "migrate" not in skip:
        dest = tmp / "mig" / name.replace("/", "_")
        try:
            r = memlab.migrate(path, dest)
        except memlab.errors.MemlabError as e:  # refused: the refusal is the output
            out[f"{name} migrate"] = f"refused: {type(e).__name__}: {e}".replace(str(tmp), "<tmp>")
        else:
            out[f"{name} migrate flags"] = _frame(r.flags)
            out[f"{name} migrate moved"] = _frame(r.moved.drop(columns=["repo"], errors="ignore"))
            for repo in sorted(p.parent for p in dest.rglob(".git")):
                for ref in _git(repo, "for-each-ref", "--format=%(refname)", "refs/heads").split():
                    out[f"{name} migrate {repo.relative_to(dest).as_posix()} {ref}"] = \
                        _tree_digest(repo, ref)
    if "review" not in skip:
        try:
            p = memlab.review(store, as_of=AS_OF, progress=False)
        except memlab.errors.MemlabError as e:
            out[f"{name} review"] = f"refused: {type(e).__name__}: {e}".replace(str(tmp), "<tmp>")
        else:
            d = p.to_dict()
            made, digest_ = d.pop("made_at", None), d.pop("digest", None)
            md = p.markdown()
            for stamp in filter(None, (made, digest_ and digest_[:16])):
                md = md.replace(str(stamp), "<stamp>")
            out[f"{name} review markdown"] = _sha(md)
            out[f"{name} review json"] = _sha(json.dumps(d, sort_keys=True, default=str))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip", action="append", default=[], choices=["audit", "migrate", "review"])
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--work", default="/tmp/memlab-output-digest",
                    help="fixed work folder (the same in both runs; removed afterwards)")
    args = ap.parse_args(argv)
    result: dict[str, str] = {}
    tmp = Path(args.work)
    if tmp.exists():
        if not (tmp / MARK).is_file():
            ap.error(f"{tmp} exists and is not this script's work folder")
        shutil.rmtree(tmp)
    tmp.mkdir()
    (tmp / MARK).write_text("made by scripts/output_digest.py\n")
    try:
        for name, path in inputs(tmp):
            if args.only and name not in args.only:
                continue
            result.update(digest(name, path, tmp, set(args.skip)))
            print(f"done {name}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp)
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
