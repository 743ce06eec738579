"""A toy memlab store kind: a ``.toy`` file whose first line is ``TOY``, one block per line.

memlab calls :func:`register` once, the first time it looks a kind up, because this
distribution's ``pyproject.toml`` names it in the ``memlab.kinds`` entry point group.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def load_toy(path: Path):
    from memlab.store import Store

    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return Store("toy", Path(path), {"blocks": pd.DataFrame({"content": lines}, dtype="string")})


def audit_toy(store, *, as_of=None):
    from memlab.audits import Audit

    n = len(store.blocks)
    return Audit("toy", store.name, {}, {"blocks": n}, f"{n} blocks")


def find_toy(search):
    """Every ``~/.toy/*.toy`` file, for ``memlab discover``."""
    for f in sorted((search.home / ".toy").glob("*.toy")):
        yield {"agent_id": f.stem, "path": str(f), "files": 1}


def detect_toy(probe):
    return "starts with TOY" if not probe.is_dir and probe.head.startswith(b"TOY") else None


def register() -> None:
    from memlab import kinds

    kinds.register("toy", display="toy store", detect=detect_toy, priority=50,
                   load=load_toy, audit=audit_toy, find=find_toy)
