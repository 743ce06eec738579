"""The elfmem v2 evidence (§2 of the v2 re-evaluation), recomputed from any elfmem database.

:func:`audit_elfmem` takes a :class:`~memlab.store.Store` of kind ``elfmem_db`` and returns an
:class:`~memlab.audits._base.Audit` whose tables answer the doc's questions one by one:

========================  ======================================================================
table                     question
========================  ======================================================================
``cost``                  how much LLM work maintains how much live text (§2.1)
``archive_reasons``       why blocks were archived (§2.2)
``archived``              each archived block, with its ``superseded_by`` chain when recorded
``clock``                 how far the session-aware clock has moved (§2.2)
``recency_tiers``         what the four decay tiers give after that lifetime
``recency_blocks``        each live block's recency from its own lambda and reinforcement
``constitution``          which seeded role slots survive, with what content (§2.3)
``protected_superseded``  archived blocks that were PERMANENT, pinned or at confidence 1.0
``tags``                  tags per active vs archived block (with elfmem's deletion caveat)
``subsystems``            contradictions, outcomes, amendments, edges, minds (§2.4)
``edges``                 edges by relation type
``reinforcement_top``     the ten most reinforced live blocks (§2.5)
``lorenz``                the reinforcement Lorenz curve
``staleness``             last consolidation and inbox ages against ``as_of`` (§2.6)
``inbox``                 each inbox block and its age
========================  ======================================================================

Token counts follow the doc: tokens ≈ chars / 4. "Live" means ``status == 'active'``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from memlab._escape import terminal_lines
from memlab.audits import seeds as _seeds
from memlab.audits._base import Audit, json_safe
from memlab.constants import (CHARS_PER_TOKEN, DECAY_LAMBDA, LAMBDA_CEILING, PENALTY_FACTOR,
                              PRUNE_THRESHOLD, SECONDS_PER_CALL, is_penalised, tier_of_lambda)
from memlab.errors import InvalidArgument, UnsupportedSchema
from memlab.store import Store, parse_as_of

__all__ = ["audit_elfmem", "gini", "lorenz", "parse_as_of"]

_CAVEAT = ("elfmem's update_block_status() deletes an archived block's tags, edges and "
           "contradiction rows, so few tags on archived blocks is mostly an artefact of "
           "archival, not evidence that they lacked standing")


# ── public helpers ────────────────────────────────────────────────────────────────────────

def gini(values: Any) -> float:
    """Gini coefficient of non-negative counts (0 = equal, →1 = one block holds everything)."""
    x = np.sort(np.asarray(pd.Series(values).dropna(), dtype="float64"))
    if x.size == 0 or x.sum() == 0:
        return float("nan")
    n = x.size
    ranks = np.arange(1, n + 1)
    return float((2.0 * (ranks * x).sum()) / (n * x.sum()) - (n + 1.0) / n)


def lorenz(values: Any) -> pd.DataFrame:
    """Lorenz curve points: cumulative share of blocks (poorest first) vs share of the total."""
    x = np.sort(np.asarray(pd.Series(values).dropna(), dtype="float64"))
    total = x.sum()
    n = x.size
    share_blocks = np.concatenate([[0.0], np.arange(1, n + 1) / n]) if n else np.array([0.0])
    share_total = (np.concatenate([[0.0], np.cumsum(x) / total]) if n and total
                   else np.zeros_like(share_blocks))
    return pd.DataFrame({"share_of_blocks": share_blocks, "share_of_reinforcement": share_total})


# ── the audit ─────────────────────────────────────────────────────────────────────────────

def audit_elfmem(store: Store, *, as_of: Any = None, seconds_per_call: float = SECONDS_PER_CALL) -> Audit:
    """Recompute the v2 doc's evidence set for one elfmem database.

    ``as_of`` is the "today" staleness is measured against (default: now, UTC);
    ``seconds_per_call`` converts LLM calls into GPU-hours (the doc uses 14 s, the local
    adapter's latency). Works on every schema the loader reads (1-9); figures a schema cannot
    support (``superseded_by`` before 6, contradiction kinds before 9, token usage when
    ``lifetime_token_usage`` was never written) come out as NA, with a note saying why.

    Example::

        a = audit_elfmem(memlab.load("data/demo/elfmem-demo.db"), as_of="2026-08-04")
        print(a.summary())
        a["archive_reasons"]
    """
    if store.kind != "elfmem_db":
        raise UnsupportedSchema(f"audit_elfmem needs an elfmem database, got a {store.kind!r} "
                                "store", path=store.path,
                                hint="use memlab.audits.audit(), which picks the right audit")
    try:
        spc = float(seconds_per_call)
    except (TypeError, ValueError):
        spc = float("nan")
    if not math.isfinite(spc) or spc <= 0:
        raise InvalidArgument(f"seconds_per_call must be a positive number of seconds, got "
                          f"{seconds_per_call!r}", hint="the doc's figure is 14")
    when = parse_as_of(as_of)
    ctx = _Context(store, when, spc)
    tables: dict[str, pd.DataFrame] = {}
    headline: dict[str, Any] = {
        "store": store.name, "kind": store.kind,
        "schema_version": store.meta.get("schema_version"),
        "elfmem_release": store.meta.get("elfmem_release"),
        "as_of": when.isoformat(),
    }
    for section in (_cost, _archival, _clock, _constitution, _tags, _subsystems,
                    _reinforcement, _staleness):
        section(ctx, tables, headline)
    headline = json_safe(headline)
    return Audit(kind=store.kind, store_name=store.name, tables=tables, headline=headline,
                 summary_text=_summary(ctx, tables, headline), notes=ctx.notes)


#: Block columns that can hold a store's largest values.
_HEAVY = ("content", "summary", "envelope_json", "embedding")
#: The block columns the sections read from the status subsets (``ctx.active``, ...): only
#: these are filtered into them. A section that needs another reads it through heavy().
_SUBSET = ("id", "status", "category", "created_at", "archive_reason", "pinned",
           "superseded_by", "confidence", "reinforcement_count", "decay_lambda",
           "last_reinforced_at", "content_chars", "summary_chars")


class _Context:
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
        light = self.blocks[[c for c in _SUBSET if c in self.blocks.columns
                             and c not in _HEAVY]]
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
        return None if value is None or _isna(value) else value

    def frame(self, name: str) -> pd.DataFrame:
        return self.store.frames.get(name, pd.DataFrame())


def _strings(frame: pd.DataFrame, col: str, rows: list[dict[str, Any]]) -> Any:
    """``frame[col].astype("string")`` for a frame built from ``rows`` (text, None or NA
    values): the same array, made from the row values rather than from the inferred column."""
    if not rows:
        return frame[col].astype("string")
    return pd.array([row[col] for row in rows], dtype="string")


def _isna(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _num(value: Any) -> float:
    return float("nan") if value is None or _isna(value) else float(value)


def _ratio(a: Any, b: Any) -> float:
    a, b = _num(a), _num(b)
    return a / b if b and math.isfinite(a) and math.isfinite(b) else float("nan")


def _int(value: Any) -> int | None:
    return None if value is None or _isna(value) else int(value)


# ── §2.1 cost ─────────────────────────────────────────────────────────────────────────────

def _cost(ctx: _Context, tables: dict, headline: dict) -> None:
    calls = ctx.cfg("llm_calls")
    tin, tout = ctx.cfg("llm_input_tokens"), ctx.cfg("llm_output_tokens")
    if calls is None and tin is None:
        ctx.notes.append("system_config has no lifetime_token_usage (written only at "
                         "end_session() with a TokenCounter attached): cost figures are NA")
    elif _num(tin) == 0 and _num(calls) > 0:
        ctx.notes.append("LLM calls were counted but input tokens are 0: the model server "
                         "reports no token usage (common for local servers)")
    live_chars = int(ctx.active["content_chars"].fillna(0).sum())
    summary_chars = int(ctx.active["summary_chars"].fillna(0).sum())
    live_tokens, summary_tokens = live_chars / CHARS_PER_TOKEN, summary_chars / CHARS_PER_TOKEN
    active = len(ctx.active)
    rows = [
        ("llm_calls", calls, "calls"),
        ("llm_input_tokens", tin, "tokens"),
        ("llm_output_tokens", tout, "tokens"),
        ("embedding_calls", ctx.cfg("embedding_calls"), "calls"),
        ("embedding_tokens", ctx.cfg("embedding_tokens"), "tokens"),
        ("blocks_ever", len(ctx.blocks), "blocks"),
        ("blocks_active", active, "blocks"),
        ("blocks_inbox", len(ctx.inbox), "blocks"),
        ("blocks_archived", len(ctx.archived), "blocks"),
        ("live_chars", live_chars, "chars"),
        ("live_tokens", live_tokens, "tokens (chars/4)"),
        ("summary_chars", summary_chars, "chars"),
        ("summary_tokens", summary_tokens, "tokens (chars/4)"),
        ("calls_per_surviving_block", _ratio(calls, active), "calls per active block"),
        ("input_per_corpus_token", _ratio(tin, live_tokens), "×"),
        ("input_per_summary_token", _ratio(tin, summary_tokens), "×"),
        ("gpu_hours", _num(calls) * ctx.seconds_per_call / 3600.0,
         f"hours at {ctx.seconds_per_call:g} s/call"),
    ]
    cost = pd.DataFrame(rows, columns=["metric", "value", "unit"])
    cost["value"] = pd.to_numeric(cost["value"], errors="coerce").astype("float64")
    cost["metric"] = cost["metric"].astype("string")
    cost["unit"] = cost["unit"].astype("string")
    tables["cost"] = cost
    values = {metric: value for metric, value, _ in rows}
    for metric in ("llm_calls", "llm_input_tokens", "llm_output_tokens", "embedding_calls",
                   "embedding_tokens", "blocks_ever", "blocks_active", "blocks_inbox",
                   "blocks_archived", "live_chars", "summary_chars"):
        headline[metric] = _int(values[metric])
    for metric in ("live_tokens", "summary_tokens", "calls_per_surviving_block",
                   "input_per_corpus_token", "input_per_summary_token", "gpu_hours"):
        headline[metric] = _num(values[metric])
    headline["seconds_per_call"] = ctx.seconds_per_call


# ── §2.2 archival ─────────────────────────────────────────────────────────────────────────

def _archival(ctx: _Context, tables: dict, headline: dict) -> None:
    arch = ctx.archived
    reasons = arch["archive_reason"].astype("string").fillna("(none recorded)")
    counts = reasons.value_counts()
    table = pd.DataFrame({"archive_reason": counts.index.astype("string"),
                          "count": counts.to_numpy().astype("int64")})
    table["share"] = table["count"] / max(1, len(arch))
    table = table.sort_values(["count", "archive_reason"], ascending=[False, True],
                              ignore_index=True)
    table["count"] = table["count"].astype("Int64")
    tables["archive_reasons"] = table

    ids = ctx.blocks["id"].astype("string")
    status_by_id = dict(zip(ids, ctx.status))
    succ = dict(zip(ids, ctx.blocks["superseded_by"].astype("string")))
    recorded = ctx.schema >= 6 and "superseded_by" in ctx.store.meta.get("columns", {}).get(
        "blocks", ["superseded_by"])

    def chain(block_id: str) -> tuple[str | None, int, str | None]:
        """Follow superseded_by to the block that finally holds the text."""
        seen, cur = {block_id}, block_id
        steps = 0
        while True:
            nxt = succ.get(cur)
            if nxt is None or _isna(nxt) or nxt in seen:
                break
            seen.add(nxt)
            cur, steps = nxt, steps + 1
        return (cur if steps else None), steps, (status_by_id.get(cur) if steps else None)

    rows = []
    contents = ctx.heavy(arch, "content")
    # The values iterrows() would give (one object array of the columns read, row by row),
    # without building a Series for every row.
    fields = ["id", "category", "created_at", "decay_lambda", "confidence", "pinned",
              "reinforcement_count", "superseded_by"]
    values = arch[fields].to_numpy(dtype=object)
    reason_of = reasons.to_dict() if reasons.index.is_unique else None
    for label, row, text in zip(arch.index, values, contents):
        b = dict(zip(fields, row))
        end, steps, end_status = chain(str(b["id"]))
        rows.append({"id": b["id"], "archive_reason": reasons.loc[label] if reason_of is None
                     else reason_of[label],
                     "category": b["category"], "created_at": b["created_at"],
                     "decay_lambda": b["decay_lambda"], "tier": _tier(b["decay_lambda"]),
                     "confidence": b["confidence"], "pinned": b["pinned"],
                     "reinforcement_count": b["reinforcement_count"],
                     "seed_role": _seeds.match_seed(text, b["id"]),
                     "superseded_by": b["superseded_by"], "chain_end": end,
                     "chain_length": steps, "chain_end_status": end_status})
    archived = pd.DataFrame(rows, columns=[
        "id", "archive_reason", "category", "created_at", "decay_lambda", "tier", "confidence",
        "pinned", "reinforcement_count", "seed_role", "superseded_by", "chain_end",
        "chain_length", "chain_end_status"])
    archived["content"] = contents.astype("string").reset_index(drop=True)
    for col in ("id", "archive_reason", "seed_role", "superseded_by", "chain_end",
                "chain_end_status", "tier"):
        archived[col] = _strings(archived, col, rows)
    archived["chain_length"] = archived["chain_length"].astype("Int64")
    archived["created_at"] = pd.to_datetime(archived["created_at"], utc=True)
    tables["archived"] = archived
    if not recorded:
        ctx.notes.append(f"schema {ctx.schema} has no blocks.superseded_by (added in schema 6): "
                         "which block superseded which was never recorded")

    by = dict(zip(table["archive_reason"], table["count"]))
    sup, dec = int(by.get("superseded", 0)), int(by.get("decayed", 0))
    headline["archived_superseded"] = sup
    headline["archived_decayed"] = dec
    headline["archived_forgotten"] = int(by.get("forgotten", 0))
    headline["archived_other"] = int(len(arch) - sup - dec - by.get("forgotten", 0))
    # the doc's §10 test: a ~40:1 ratio elsewhere closes the case. None when nothing decayed.
    headline["supersession_to_decay"] = sup / dec if dec else None
    headline["superseded_by_recorded"] = bool(recorded)


def _tier(lam: Any) -> str | None:
    if _isna(lam):
        return None
    return tier_of_lambda(lam) or "other"


# ── session clock and recency ─────────────────────────────────────────────────────────────

def _clock(ctx: _Context, tables: dict, headline: dict) -> None:
    sessions = ctx.frame("sessions")
    hours = _num(ctx.cfg("total_active_hours"))
    n = len(sessions)
    durations = sessions["duration_s"] if "duration_s" in sessions else pd.Series(dtype=float)
    prune = _num(ctx.cfg("prune_threshold"))
    prune = prune if math.isfinite(prune) and prune > 0 else PRUNE_THRESHOLD
    clock = pd.DataFrame([{
        "total_active_hours": hours, "sessions": n,
        "mean_session_s": hours * 3600.0 / n if n and math.isfinite(hours) else float("nan"),
        "median_session_s": float(durations.median()) if durations.notna().any() else float("nan"),
        "first_session": sessions["started_at"].min() if n else pd.NaT,
        "last_session": sessions["started_at"].max() if n else pd.NaT,
        "prune_threshold": prune,
        "last_curate_at_hours": _num(ctx.cfg("last_curate_at")),
    }])
    tables["clock"] = clock

    # Both tables from numpy columns in one constructor each (the same arithmetic as on the
    # Series, without a pandas operation per column).
    lam = np.asarray(list(DECAY_LAMBDA.values()))
    to_prune = math.log(1.0 / prune) / lam
    tiers = pd.DataFrame({
        "tier": pd.array(list(DECAY_LAMBDA), dtype="string"), "decay_lambda": lam,
        "recency_after_lifetime": np.exp(-lam * hours), "half_life_hours": math.log(2) / lam,
        "hours_to_prune": to_prune,
        "lifetimes_to_prune": to_prune / hours if hours else float("nan"),
    })
    tables["recency_tiers"] = tiers

    live = ctx.live
    since = (hours - live["last_reinforced_at"]).clip(lower=0.0)
    recency = np.exp(-live["decay_lambda"].to_numpy() * since.to_numpy())
    per_block = pd.DataFrame({
        "id": live["id"].astype("string").array, "status": live["status"].array,
        "category": live["category"].array, "decay_lambda": live["decay_lambda"].array,
        "tier": live["decay_lambda"].map(_tier).astype("string").array,
        "penalised": live["decay_lambda"].map(is_penalised).astype("boolean").array,
        "last_reinforced_at": live["last_reinforced_at"].array, "hours_since": since.array,
        "recency": recency, "below_prune": pd.array(recency < prune, dtype="boolean"),
    }, index=pd.RangeIndex(len(live)))
    tables["recency_blocks"] = per_block

    headline["total_active_hours"] = hours
    headline["sessions"] = n
    headline["mean_session_s"] = float(clock["mean_session_s"].iloc[0])
    for name, value in zip(tiers["tier"], tiers["recency_after_lifetime"]):
        headline[f"recency_{name.lower()}"] = float(value)
    headline["live_blocks_below_prune"] = int(per_block["below_prune"].sum())
    headline["min_block_recency"] = float(per_block["recency"].min()) if len(per_block) \
        else float("nan")
    penalised = int(per_block["penalised"].sum())
    if penalised:
        ctx.notes.append(f"{penalised} live STANDARD block(s) decay faster than their tier: "
                         f"negative outcomes multiplied lambda by {PENALTY_FACTOR:g} (up to "
                         f"{LAMBDA_CEILING:g})")
    other = int(per_block["tier"].eq("other").sum())
    if other:
        ctx.notes.append(f"{other} live block(s) have a decay_lambda elfmem never writes")


# ── §2.3 constitution ─────────────────────────────────────────────────────────────────────

class _Records:
    """``frame[columns].to_dict("records")`` keyed by block id (``position``: id -> row),
    each row made only when first asked for, with the values ``to_dict`` gives: the
    constitution looks up a few ids, not every block."""

    def __init__(self, frame: pd.DataFrame, columns: list[str], position: dict[str, int]
                 ) -> None:
        from pandas.core.dtypes.cast import maybe_box_native  # what to_dict boxes with

        self._box = maybe_box_native
        # numpy columns iterate as ndarray.item() (Python scalars, not boxed again); extension
        # and object columns as their array does, then boxed: element by element that is the
        # array's own item, except for a categorical, whose missing value iterates as None
        # (one-row slices are iterated for those)
        self._columns = []
        for c in columns:
            dtype = frame[c].dtype
            how = ("item" if isinstance(dtype, np.dtype) and dtype != object else
                   "iterate" if isinstance(dtype, pd.CategoricalDtype) else "index")
            self._columns.append((c, frame[c].to_numpy() if how == "item" else frame[c].array,
                                  how))
        self._position = position
        self._rows: dict[str, dict[str, Any]] = {}

    def __contains__(self, block_id: object) -> bool:
        return block_id in self._position

    def get(self, block_id: Any, default: Any = None) -> Any:
        return self[block_id] if block_id in self._position else default

    def __getitem__(self, block_id: str) -> dict[str, Any]:
        row = self._rows.get(block_id)
        if row is None:
            p = self._position[block_id]
            row = {c: (values.item(p) if how == "item" else self._box(
                       values[p] if how == "index" else next(iter(values[p:p + 1]))))
                   for c, values, how in self._columns}
            self._rows[block_id] = row
        return row


def _release_lower(release: Any) -> tuple[int, ...] | None:
    found = re.findall(r"(\d+)\.(\d+)\.(\d+)", str(release or ""))
    return tuple(int(p) for p in found[0]) if found else None


def _constitution(ctx: _Context, tables: dict, headline: dict) -> None:
    tags = ctx.tags
    tag_text = tags["tag"].astype("string")
    role_rows = tags[tag_text.str.startswith(_seeds.ROLE_TAG_PREFIX).fillna(False).to_numpy()]
    lower = _release_lower(ctx.store.meta.get("elfmem_release"))
    role_era = len(role_rows) > 0 or (lower is not None and lower >= (0, 13, 1))
    release = _seeds.seed_release(role_tags=role_era)
    # Plain-Python lookups: ten slots against every block would otherwise mean ten full-frame
    # boolean filters per question.
    cols = ["id", "status", "archive_reason", "superseded_by", "decay_lambda",
            "confidence", "created_at"]
    # Content is read one block at a time and only ever compared with a seeded text: a block's
    # form is built no longer than the longest seed (+1), so a huge block is never held twice.
    limit = max([_seeds.SEED_CHARS] + [len(_seeds.normalise(slot.content)) for slot in release.slots])
    contents = ctx.blocks["content"]
    ids = [str(i) for i in ctx.blocks["id"]]
    position = {i: n for n, i in enumerate(ids)}  # the last row of a repeated id, as records
    records = _Records(ctx.blocks, cols, position)

    def content_of(block_id: str) -> Any:
        return contents.iloc[position[block_id]]

    # The first 64K characters decide unless they are nearly all whitespace: only then is a
    # longer block read whole.
    head_chars = 1 << 16
    heads = contents.astype("string").str.slice(0, head_chars)
    lengths = contents.astype("string").str.len()
    norm: dict[str, str | None] = {}
    for i, head, n in zip(ids, heads, lengths):
        if _isna(head):
            norm[i] = None
            continue
        form = _seeds.normalise(head, limit)
        if n > head_chars and len(form) <= limit:
            form = _seeds.normalise(content_of(i), limit)
        norm[i] = form

    by_norm: dict[str, list[str]] = {}
    for i, text in norm.items():
        by_norm.setdefault(text, []).append(i)
    live_ids = set(ctx.live["id"].astype("string"))
    amendments = ctx.frame("amendments")
    amended_from: dict[str, str] = {}
    if len(amendments):
        for block_id, pre in zip(amendments["block_id"].astype("string"),
                                 amendments["pre_content"]):
            if not _isna(pre) and block_id in records:
                amended_from.setdefault(_seeds.normalise(pre, limit), block_id)
    holders_by_tag: dict[str, list[str]] = {}
    for block_id, tag in zip(role_rows["block_id"].astype("string"),
                             role_rows["tag"].astype("string")):
        if block_id in live_ids:
            holders_by_tag.setdefault(tag, []).append(block_id)

    rows = []
    for slot in release.slots:
        seed_norm = _seeds.normalise(slot.content)
        # the block that was seeded: its content-derived id, else the same text (re-seeded),
        # else a block whose amendment started from the seeded text
        if slot.block_id in records:
            orig_id = slot.block_id
        elif by_norm.get(seed_norm):
            orig_id = by_norm[seed_norm][0]
        else:
            orig_id = amended_from.get(seed_norm)
        original = records.get(orig_id) if orig_id else None
        if role_era:
            holder_ids = holders_by_tag.get(slot.role_tag, [])
        else:
            holder_ids = [i for i in live_ids if i == slot.block_id or norm.get(i) == seed_norm]
        holder_ids = sorted(holder_ids, key=lambda i: (records[i]["created_at"], i))
        unchanged = any(norm.get(i) == seed_norm for i in holder_ids)
        seeded = original is not None or bool(holder_ids)
        state = ("not seeded" if not seeded else "lost" if not holder_ids
                 else "unchanged" if unchanged else "changed")
        first = records[holder_ids[0]] if holder_ids else None
        rows.append({
            "role": slot.role, "role_tag": slot.role_tag or _seeds.CONSTITUTIONAL_TAG,
            "seeded_text": slot.content, "state": state, "live_blocks": len(holder_ids),
            "live_block_id": None if first is None else first["id"],
            "live_content": None if first is None else content_of(str(first["id"])),
            "live_created_at": pd.NaT if first is None else first["created_at"],
            "original_id": None if original is None else original["id"],
            "original_status": None if original is None else original["status"],
            "original_archive_reason": None if original is None else original["archive_reason"],
            "original_superseded_by": None if original is None else original["superseded_by"],
            "original_decay_lambda": np.nan if original is None else original["decay_lambda"],
            "original_confidence": np.nan if original is None else original["confidence"],
            "original_content_changed": (None if original is None else
                                         norm.get(str(original["id"])) != seed_norm),
        })
    cons = pd.DataFrame(rows)
    for col in ("role", "role_tag", "seeded_text", "state", "live_block_id", "live_content",
                "original_id", "original_status", "original_archive_reason",
                "original_superseded_by"):
        cons[col] = _strings(cons, col, rows)
    cons["live_blocks"] = cons["live_blocks"].astype("Int64")
    cons["live_created_at"] = pd.to_datetime(cons["live_created_at"], utc=True)
    cons["original_content_changed"] = cons["original_content_changed"].astype("boolean")
    tables["constitution"] = cons

    states = [row["state"] for row in rows]  # cons["state"], as text
    seeded = sum(state != "not seeded" for state in states)
    left = sum(state in ("changed", "unchanged") for state in states)
    headline["seed_releases"] = release.label
    headline["role_slots_seeded"] = seeded
    headline["role_slots_left"] = left
    headline["role_slots_changed"] = states.count("changed")
    headline["role_slots_lost"] = states.count("lost")
    if not role_era:
        ctx.notes.append(f"seeded by elfmem {release.label} (no self/role/* tags): slots are "
                         "recognised by their seeded text only, so a rewritten slot counts as lost")
    if not seeded:
        ctx.notes.append("no constitutional seed found (setup() ran without seed=True)")

    # Blocks elfmem calls maximally protected, archived anyway (doc §2.3).
    arch = tables["archived"]
    permanent = arch["tier"].eq("PERMANENT").fillna(False).to_numpy(dtype=bool)
    pinned = arch["pinned"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    certain = (arch["confidence"] >= 1.0).fillna(False).to_numpy(dtype=bool)
    constitutional_ids = set(tags.loc[tag_text.eq(_seeds.CONSTITUTIONAL_TAG).fillna(False)
                                      .to_numpy(), "block_id"].astype("string"))
    chosen = permanent | pinned | certain
    why = [", ".join(w for w, flag in (
        ("PERMANENT", p), ("pinned", q), ("confidence 1.0", c)) if flag)
        for p, q, c in zip(permanent[chosen], pinned[chosen], certain[chosen])]
    # only the columns the table shows are filtered; "why" goes in third
    prot = arch.loc[chosen, ["id", "archive_reason", "decay_lambda", "confidence", "seed_role",
                             "superseded_by", "content"]]
    prot.insert(2, "why", pd.array(why, dtype="string"))
    prot = prot.reset_index(drop=True)
    tables["protected_superseded"] = prot
    headline["protected_archived"] = len(prot)
    headline["protected_superseded"] = int(prot["archive_reason"].eq("superseded").sum())
    headline["constitutional_tagged_live"] = len(constitutional_ids & live_ids)


# ── tags (with the deletion caveat) ───────────────────────────────────────────────────────

def _tags(ctx: _Context, tables: dict, headline: dict) -> None:
    status_by_id = pd.Series(ctx.status.to_numpy(), index=ctx.blocks["id"].astype("string"))
    tag_status = ctx.tags["block_id"].astype("string").map(status_by_id).fillna("(orphan)")
    counts = tag_status.value_counts()
    # the distinct tagged blocks of each status (nunique: NA ids are not counted), one pass
    tagged_ids: dict[str, set[Any]] = {}
    for status, block_id in zip(tag_status, ctx.tags["block_id"].to_numpy(dtype=object,
                                                                           na_value=None)):
        if block_id is not None:
            tagged_ids.setdefault(status, set()).add(block_id)
    rows = []
    for status, n_blocks in (("active", len(ctx.active)), ("inbox", len(ctx.inbox)),
                             ("archived", len(ctx.archived))):
        n_tags = int(counts.get(status, 0))
        tagged = len(tagged_ids.get(status, ()))
        rows.append({"status": status, "blocks": n_blocks, "tags": n_tags,
                     "tagged_blocks": tagged,
                     "tags_per_block": n_tags / n_blocks if n_blocks else float("nan")})
    orphans = int(counts.get("(orphan)", 0))
    table = pd.DataFrame(rows)
    table["status"] = table["status"].astype("string")
    for col in ("blocks", "tags", "tagged_blocks"):
        table[col] = table[col].astype("Int64")
    tables["tags"] = table
    ctx.notes.append("tags: " + _CAVEAT)
    if orphans:
        ctx.notes.append(f"{orphans} tag row(s) point at no block")
    t = table.set_index("status")
    headline["tags_active"] = int(t.at["active", "tags"])
    headline["tags_archived"] = int(t.at["archived", "tags"])
    headline["tags_per_active_block"] = float(t.at["active", "tags_per_block"])
    headline["tags_per_archived_block"] = float(t.at["archived", "tags_per_block"])


# ── §2.4 subsystems ───────────────────────────────────────────────────────────────────────

def _subsystems(ctx: _Context, tables: dict, headline: dict) -> None:
    con = ctx.frame("contradictions")
    kinds = (con["kind"].astype("string") if "kind" in con else pd.Series(dtype="string"))
    if ctx.schema < 9:
        # before schema 9 the table held nothing but pairwise contradiction findings
        kinds = kinds.fillna("contradiction")
    kinds = kinds.fillna("(unknown)")
    resolved = con["resolved"].astype("boolean") if "resolved" in con else pd.Series(
        dtype="boolean")
    outcomes = ctx.frame("outcomes")
    amendments = ctx.frame("amendments")
    edges = ctx.frame("edges")
    tag_text = ctx.tags["tag"].astype("string")
    mind_ids = set(ctx.tags.loc[tag_text.str.startswith("mind/").fillna(False).to_numpy(),
                                "block_id"].astype("string"))
    reverted = (int(amendments["reverted_at"].notna().sum())
                if "reverted_at" in amendments else 0)

    rows = [("contradictions", "found", len(con)),
            ("contradictions", "unresolved", int((~resolved.fillna(False)).sum())),
            ("contradictions", "resolved", int(resolved.fillna(False).sum()))]
    for kind, n in kinds.value_counts().sort_index().items():
        rows.append(("contradictions", f"kind: {kind}", int(n)))
    rows += [("outcomes", "records", len(outcomes)),
             ("outcomes", "blocks with outcomes",
              int(outcomes["block_id"].nunique()) if len(outcomes) else 0),
             ("amendments", "records", len(amendments)),
             ("amendments", "reverted", reverted),
             ("graph", "edges", len(edges))]
    rel = (edges["relation_type"].astype("string").fillna("(none)").value_counts()
           if len(edges) else pd.Series(dtype="int64"))
    rel = rel.sort_values(ascending=False, kind="stable")
    for name, n in rel.items():
        rows.append(("graph", f"relation: {name}", int(n)))
    rows += [("minds", "mind/* blocks", len(mind_ids)),
             ("minds", "category mind", int(ctx.blocks["category"].astype("string")
                                           .eq("mind").sum())),
             ("peers", "peers", len(ctx.frame("peers")))]
    sub = pd.DataFrame(rows, columns=["subsystem", "measure", "value"])
    sub["subsystem"] = sub["subsystem"].astype("string")
    sub["measure"] = sub["measure"].astype("string")
    sub["value"] = sub["value"].astype("Int64")
    tables["subsystems"] = sub
    edge_table = pd.DataFrame({"relation_type": rel.index.astype("string"),
                               "count": rel.to_numpy().astype("int64")})
    if len(edges):
        # each relation's origins, sorted and joined (a groupby of a few rows costs more)
        found: dict[str, set[str]] = {}
        for relation, source in zip(edges["relation_type"].astype("string").fillna("(none)"),
                                    edges["origin"].astype("string")):
            seen = found.setdefault(relation, set())
            if not _isna(source):
                seen.add(source)
        origin = {relation: ", ".join(sorted(seen)) for relation, seen in found.items()}
        edge_table["origins"] = pd.array([origin.get(relation) for relation in
                                          edge_table["relation_type"]], dtype="string")
    else:
        edge_table["origins"] = pd.Series(dtype="string")
    edge_table["count"] = edge_table["count"].astype("Int64")
    tables["edges"] = edge_table

    headline["contradictions"] = len(con)
    headline["contradictions_unresolved"] = int((~resolved.fillna(False)).sum())
    headline["near_duplicates"] = int(kinds.eq("near_duplicate").sum())
    headline["outcomes"] = len(outcomes)
    headline["amendments"] = len(amendments)
    headline["edges"] = len(edges)
    for name, n in rel.items():
        headline[f"edges_{re.sub(r'[^0-9a-z]+', '_', str(name).lower()).strip('_')}"] = int(n)
    headline["mind_blocks"] = len(mind_ids)
    ctx.notes.append("the doc's 'contradiction checks ≈ 2/3 of LLM calls' needs per-operation "
                     "call counts, which elfmem does not store")


# ── §2.5 reinforcement ────────────────────────────────────────────────────────────────────

def _reinforcement(ctx: _Context, tables: dict, headline: dict) -> None:
    active = ctx.active
    counts = active["reinforcement_count"].astype("Float64").fillna(0).astype("float64")
    order = counts.sort_values(ascending=False, kind="stable").index
    top = active.loc[order[:10]]
    top_ids = top["id"].astype("string")
    tag_ids = ctx.tags["block_id"].astype("string")
    # one pass over the tags: the blocks holding a self/* tag (a tag or block with no id, which
    # a damaged database can hold, matches nothing)
    is_self = ctx.tags["tag"].astype("string").str.startswith("self/").fillna(False)
    self_ids = set(tag_ids[is_self.to_numpy(dtype=bool) & tag_ids.notna().to_numpy()])
    self_block = [False if pd.isna(i) else i in self_ids for i in top_ids]
    table = pd.DataFrame({
        "rank": np.arange(1, len(top) + 1),
        "id": top_ids.to_numpy(),
        "reinforcement_count": top["reinforcement_count"].to_numpy(),
        "category": top["category"].to_numpy(),
        "decay_lambda": top["decay_lambda"].to_numpy(),
        "self_block": self_block,
        "content": ctx.heavy(top, "content").astype("string").str.slice(0, 80).to_numpy(),
    })
    table["rank"] = table["rank"].astype("Int64")
    table["reinforcement_count"] = table["reinforcement_count"].astype("Int64")
    table["id"] = table["id"].astype("string")
    table["content"] = table["content"].astype("string")
    table["self_block"] = table["self_block"].astype("boolean")
    tables["reinforcement_top"] = table
    tables["lorenz"] = lorenz(counts)
    total = counts.sum()
    headline["reinforcement_top10"] = ", ".join(str(int(v)) for v in
                                                 counts.loc[order[:10]].to_numpy())
    headline["reinforcement_max"] = int(counts.max()) if len(counts) else None
    headline["reinforcement_gini"] = gini(counts)
    headline["reinforcement_top5_share"] = (float(counts.loc[order[:5]].sum() / total)
                                            if total else float("nan"))


# ── §2.6 staleness ────────────────────────────────────────────────────────────────────────

def _staleness(ctx: _Context, tables: dict, headline: dict) -> None:
    last = ctx.cfg("last_consolidated_at")
    last = pd.Timestamp(last) if last is not None else pd.NaT
    age = (ctx.as_of - last).total_seconds() / 86400.0 if not pd.isna(last) else float("nan")
    inbox = ctx.inbox
    ages = (ctx.as_of - inbox["created_at"]).dt.total_seconds() / 86400.0
    activity = [ctx.frame("sessions").get("started_at", pd.Series(dtype="datetime64[ns, UTC]")),
                ctx.frame("sessions").get("ended_at", pd.Series(dtype="datetime64[ns, UTC]")),
                ctx.blocks["created_at"], pd.Series([last])]
    stamps = pd.concat([pd.to_datetime(s, utc=True) for s in activity], ignore_index=True)
    last_activity = stamps.max() if stamps.notna().any() else pd.NaT
    tables["staleness"] = pd.DataFrame([{
        "as_of": ctx.as_of, "last_consolidated_at": last, "consolidation_age_days": age,
        "last_activity_at": last_activity, "inbox_blocks": len(inbox),
        "oldest_inbox_days": float(ages.max()) if len(ages) else float("nan"),
        "median_inbox_days": float(ages.median()) if len(ages) else float("nan"),
    }])
    tables["inbox"] = pd.DataFrame({
        "id": inbox["id"].astype("string").to_numpy(),
        "created_at": inbox["created_at"].to_numpy(),
        "age_days": ages.to_numpy(),
        "category": inbox["category"].to_numpy(),
        "content": ctx.heavy(inbox, "content").astype("string").reset_index(drop=True),
    }).sort_values("age_days", ascending=False, ignore_index=True)
    if not pd.isna(last_activity) and ctx.as_of.date() < last_activity.date():
        ctx.notes.append(f"as_of {ctx.as_of.date()} is before the store's last activity "
                         f"({last_activity.date()}); ages are negative for later events")
    headline["last_consolidated_at"] = last
    headline["consolidation_age_days"] = age
    headline["inbox_oldest_days"] = float(ages.max()) if len(ages) else float("nan")
    headline["last_activity_at"] = last_activity


# ── the printable summary ─────────────────────────────────────────────────────────────────

def _fmt_int(v: Any) -> str:
    return "n/a" if v is None or _isna(v) else f"{int(v):,}"


def _fmt(v: Any, spec: str, suffix: str = "") -> str:
    if v is None or _isna(v) or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    return f"{v:{spec}}{suffix}"


def _clip(text: Any, width: int = 48) -> str:
    if text is None or _isna(text):
        return ""
    first = " ".join(str(text).split())
    return first if len(first) <= width else first[:width].rstrip() + "..."


def _summary(ctx: _Context, tables: dict, h: dict) -> str:
    out: list[str] = []
    add = out.append
    add(f"elfmem audit: {h['store']} (schema {h['schema_version']}, elfmem "
        f"{h['elfmem_release']}), as of {ctx.as_of.date()}")
    add("")
    add("Cost")
    width = 34
    rows = [("Lifetime LLM calls", _fmt_int(h["llm_calls"])),
            ("Lifetime LLM input tokens", _fmt_int(h["llm_input_tokens"])),
            ("Lifetime LLM output tokens", _fmt_int(h["llm_output_tokens"])),
            ("Embedding calls", _fmt_int(h["embedding_calls"])),
            ("Blocks ever created", _fmt_int(h["blocks_ever"])),
            ("Blocks active now", f"{_fmt_int(h['blocks_active'])} (inbox "
                                  f"{_fmt_int(h['blocks_inbox'])}, archived "
                                  f"{_fmt_int(h['blocks_archived'])})"),
            ("Live corpus size", f"{_fmt_int(h['live_chars'])} chars ≈ "
                                 f"{_fmt_int(round(h['live_tokens']))} tokens"),
            ("Live summaries size", f"{_fmt_int(h['summary_chars'])} chars ≈ "
                                    f"{_fmt_int(round(h['summary_tokens']))} tokens"),
            ("LLM calls per surviving block", _fmt(h["calls_per_surviving_block"], ".1f")),
            ("Input tokens per corpus token", _fmt(h["input_per_corpus_token"], ".1f", "×")),
            ("Input tokens per summary token", _fmt(h["input_per_summary_token"], ".1f", "×")),
            (f"GPU time at {ctx.seconds_per_call:g} s/call", _fmt(h["gpu_hours"], ".1f", " h"))]
    out += [f"  {k:<{width}} {v}" for k, v in rows]
    add("")

    add("Archival")
    reasons = tables["archive_reasons"]
    if len(reasons):
        add("  " + ", ".join(f"{r} {int(n)}" for r, n in zip(reasons["archive_reason"],
                                                           reasons["count"])))
        sup, dec = h["archived_superseded"], h["archived_decayed"]
        if sup or dec:
            add(f"  supersession : decay = {sup}:{dec}")
    else:
        add("  nothing archived")
    if not h["superseded_by_recorded"]:
        add(f"  superseded_by: not recorded (schema {h['schema_version']} < 6)")
    else:
        arch = tables["archived"]
        chained = int(arch["chain_length"].fillna(0).gt(0).sum())
        add(f"  superseded_by recorded for {chained} of {len(arch)} archived blocks")
    add("")

    add("Session clock")
    add(f"  {_fmt(h['total_active_hours'], '.2f')} total active hours across "
        f"{_fmt_int(h['sessions'])} sessions (average session: "
        f"{_fmt(h['mean_session_s'], '.0f')} s)")
    tiers = tables["recency_tiers"]
    add(f"  recency after {_fmt(h['total_active_hours'], '.2f')} h: "
        + " / ".join(_fmt(v, ".4f") for v in tiers["recency_after_lifetime"])
        + "  (" + " / ".join(f"{t} λ={lam:g}" for t, lam in zip(tiers["tier"],
                                                                tiers["decay_lambda"])) + ")")
    add(f"  live blocks below the prune threshold "
        f"({_fmt(float(tables['clock']['prune_threshold'].iloc[0]), 'g')}) now: "
        f"{h['live_blocks_below_prune']} of {len(tables['recency_blocks'])}")
    add("")

    add("Constitution")
    cons = tables["constitution"]
    if h["role_slots_seeded"]:
        add(f"  {h['role_slots_left']} of {h['role_slots_seeded']} role slots remain, "
            f"{h['role_slots_changed']} with content different from the seed "
            f"(seed of elfmem {h['seed_releases']})")
        for role_tag, content, created_at, state in zip(
                cons["role_tag"], cons["live_content"], cons["live_created_at"], cons["state"]):
            if state not in ("changed", "unchanged"):
                continue
            created = "" if pd.isna(created_at) else f" (created {created_at.date()})"
            add(f"  {role_tag:<26} -> \"{_clip(content)}\"{created} [{state}]")
        lost = cons[cons["state"].eq("lost")]
        if len(lost):
            fate = lost["original_archive_reason"].fillna("missing").value_counts()
            add("  lost: " + ", ".join(lost["role"]) + "  (originals: " +
                ", ".join(f"{k} {v}" for k, v in fate.items()) + ")")
        gone = cons[cons["original_status"].eq("archived")]
        if len(gone):
            add(f"  seeded originals archived: {len(gone)} ("
                + ", ".join(f"{k} {v}" for k, v in
                            gone["original_archive_reason"].fillna("none").value_counts()
                            .items()) + ")")
    else:
        add("  no constitutional seed found")
    prot = tables["protected_superseded"]
    if len(prot):
        why = prot["why"].fillna("")
        flags = [(why.str.contains(f, regex=False).sum(), label) for f, label in (
            ("PERMANENT", "PERMANENT"), ("pinned", "pinned"),
            ("confidence 1.0", "at confidence 1.0"))]
        add(f"  protected blocks archived anyway: {len(prot)} ("
            + ", ".join(f"{n} {label}" for n, label in flags if n) + ")")
    add("")

    add("Tags")
    tg = tables["tags"].set_index("status")
    add(f"  tags per block: {_fmt(h['tags_per_active_block'], '.1f')} vs "
        f"{_fmt(h['tags_per_archived_block'], '.2f')}  (active {h['tags_active']} tags / "
        f"{int(tg.at['active', 'blocks'])} blocks; archived {h['tags_archived']} / "
        f"{int(tg.at['archived', 'blocks'])})")
    add("  caveat: " + _CAVEAT)
    add("")

    add("Subsystems")
    sub = tables["subsystems"]
    kinds = [(m.split(": ", 1)[1], int(v)) for s, m, v in zip(sub["subsystem"], sub["measure"],
                                                                sub["value"])
             if s == "contradictions" and m.startswith("kind: ")]
    add(f"  contradictions: {h['contradictions']} found, {h['contradictions_unresolved']} "
        "unresolved" + (" (" + ", ".join(f"{k} {v}" for k, v in kinds) + ")" if kinds else ""))
    add(f"  outcome records: {h['outcomes']}; amendments: {h['amendments']}")
    edges = tables["edges"]
    add(f"  edges: {h['edges']}" + (" (" + ", ".join(
        f"{int(n)} {r}" for r, n in zip(edges["relation_type"], edges["count"])) + ")"
        if len(edges) else ""))
    add(f"  mind/* blocks: {h['mind_blocks']}")
    add("")

    add("Reinforcement")
    add(f"  top counts: {h['reinforcement_top10'] or 'n/a'}")
    share = h["reinforcement_top5_share"]
    add(f"  Gini {_fmt(h['reinforcement_gini'], '.2f')}; the top 5 hold "
        f"{_fmt(None if share is None else share * 100, '.0f', '%')} of all reinforcement")
    add("")

    add("Staleness")
    st = tables["staleness"].iloc[0]
    if pd.isna(st["last_consolidated_at"]):
        add("  never consolidated")
    else:
        add(f"  last consolidated {st['last_consolidated_at'].date()}: "
            f"{_fmt(h['consolidation_age_days'], '.1f')} days "
            f"({_fmt(h['consolidation_age_days'] / 7, '.1f')} weeks) before {ctx.as_of.date()}")
    if len(tables["inbox"]):
        ages = tables["inbox"]["age_days"]
        add(f"  inbox: {len(ages)} block(s), {_fmt(ages.min(), '.1f')}-"
            f"{_fmt(ages.max(), '.1f')} days old ({_fmt(ages.max() / 7, '.1f')} weeks at most)")
    else:
        add("  inbox empty")
    notes = [n for n in ctx.notes if not n.startswith("tags: ")]
    if notes:
        add("")
        add("Notes")
        out += [f"  - {n}" for n in notes]
    return terminal_lines(out)
