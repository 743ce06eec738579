"""The frame context every elfmem audit section reads, and the small value helpers they share.

:class:`Context` types a store's frames once (the status subsets hold only the light block
columns); ``isna``/``num``/``as_int`` turn config and cell values into plain numbers;
``strings`` rebuilds a text column from row values; ``CAVEAT`` is the tag-deletion caveat
the tags section and the summary both print. Shared by :mod:`memlab.kinds.elfmem_db._audit` and its
``_elfmem_*`` modules.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab.store import Store

__all__ = ["CAVEAT", "Context", "strings", "isna", "num", "as_int"]

CAVEAT = (
    "elfmem's update_block_status() deletes an archived block's tags, edges and "
    "contradiction rows, so few tags on archived blocks is mostly an artefact of "
    "archival, not evidence that they lacked standing"
)


#: Block columns that can hold a store's largest values.
_HEAVY = ("content", "summary", "envelope_json", "embedding")
#: The block columns the sections read from the status subsets (``ctx.active``, ...): only
#: these are filtered into them. A section that needs another reads it through heavy().
_SUBSET = (
    "id",
    "status",
    "category",
    "created_at",
    "archive_reason",
    "pinned",
    "superseded_by",
    "confidence",
    "reinforcement_count",
    "decay_lambda",
    "last_reinforced_at",
    "content_chars",
    "summary_chars",
)


class Context:
    """The frames an audit reads, typed once, plus the notes sections leave for the reader."""

    def __init__(self, store: Store, as_of: pd.Timestamp, seconds_per_call: float) -> None:
        self.store = store
        self.as_of = as_of
        self.seconds_per_call = seconds_per_call
        self.notes: list[str] = []
        frames = store.frames
        self.blocks = frames["blocks"]
        self.tags = frames["tags"]
        cfg = frames.get("config")
        self.config = cfg.iloc[0] if cfg is not None and len(cfg) else pd.Series(dtype=object)
        self.status = self.blocks["status"].astype("string")
        # The status subsets hold the columns sections read (:data:`_SUBSET`): never the text
        # columns, as filtering would copy every value in them (a 1 GB block twice more), and
        # nothing else, as each column costs a copy per subset. Text comes through heavy().
        light = self.blocks[[c for c in _SUBSET if c in self.blocks.columns and c not in _HEAVY]]
        # The masks from one array of the status text (NA is None: in no subset), not four
        # pandas comparisons.
        status = self.status.to_numpy(dtype=object, na_value=None)
        active, inbox = status == "active", status == "inbox"
        self.active = light[active]
        self.inbox = light[inbox]
        self.archived = light[status == "archived"]
        self.live = light[active | inbox]
        self.schema = int(store.meta.get("schema_version") or 1)

    def heavy(self, frame: pd.DataFrame, column: str) -> pd.Series:
        """``column`` of ``blocks`` for the rows of a subset (copies only those rows' values);
        also the way to any column a subset does not hold."""
        return self.blocks[column].loc[frame.index]

    def cfg(self, key: str) -> Any:
        value = self.config.get(key, pd.NA)
        return None if value is None or isna(value) else value

    def frame(self, name: str) -> pd.DataFrame:
        return self.store.frames.get(name, pd.DataFrame())


def strings(frame: pd.DataFrame, col: str, rows: list[dict[str, Any]]) -> Any:
    """``frame[col].astype("string")`` for a frame built from ``rows`` (text, None or NA
    values): the same array, made from the row values rather than from the inferred column."""
    if not rows:
        return frame[col].astype("string")
    return pd.array([row[col] for row in rows], dtype="string")


def isna(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def num(value: Any) -> float:
    return float("nan") if value is None or isna(value) else float(value)


def as_int(value: Any) -> int | None:
    return None if value is None or isna(value) else int(value)
