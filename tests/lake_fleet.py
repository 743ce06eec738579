"""The lake-readback fleet: copies of the bundled stores only (no random edits, no commit made
now), so the same files, and the same lake, on every machine. ``data/lake-readback`` holds what
the per-store-file lake (memlab before the few-files layout) read back for this fleet."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from memlab.sources._bundle import unpack_bundle

RUN_DATE = "2026-12-01"
AS_OF = "2026-08-04"


def build(data: Path, root: Path) -> Path:
    """12 stores of 5 kinds under ``root``; one of them a truncated database (a failure row)."""
    for sub in ("elfmem", "letta-af", "letta-server", "memfs"):
        (root / sub).mkdir(parents=True)
    shutil.copy2(data / "demo" / "elfmem-demo.db", root / "elfmem" / "demo.db")
    for p in sorted((data / "samples" / "elfmem").glob("*.db")):
        shutil.copy2(p, root / "elfmem" / p.name)
    for p in sorted((data / "samples" / "letta-af").glob("*.af")):
        shutil.copy2(p, root / "letta-af" / p.name)
    for p in sorted((data / "samples" / "letta-server").glob("*.db")):
        shutil.copy2(p, root / "letta-server" / p.name)
    for p in sorted((data / "samples" / "memfs").glob("*.bundle")):
        unpack_bundle(p, root / "memfs" / p.stem)
    demo = (data / "demo" / "elfmem-demo.db").read_bytes()
    (root / "elfmem" / "truncated.db").write_bytes(demo[:3000])
    return root


def normalise(df: pd.DataFrame, root: str) -> pd.DataFrame:
    """A path- and order-independent form of a lake table: ``store_id`` (a hash of the absolute
    path) dropped, ``root`` written ``<root>`` in text, categories compared as their text (the
    order of a union of categories follows file order), columns and rows sorted."""
    df = df.drop(columns=[c for c in ("store_id",) if c in df.columns]).copy()
    for c in df.columns:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype("string")
        elif df[c].dtype == "string":
            df[c] = df[c].str.replace(root, "<root>", regex=False)
    df = df[sorted(df.columns)]
    df = df.sort_values(list(df.columns), kind="stable", key=lambda s: s.astype("string"))
    return df.reset_index(drop=True)
