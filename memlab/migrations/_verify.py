"""Parity: load a migrated copy back with memlab's own loaders and compare it with its source.

One row per (check, item): ``presence``, ``content`` (sha256), ``tags``, ``pinned``,
``relations``, ``cue``, ``created``, ``archive`` for elfmem blocks; ``presence``, ``content``,
``description``, ``read_only``, ``limit``, ``side_record`` for Letta blocks; ``side:<kind>`` for
every elfmem side record (seed, link, outcome, amendment, contradiction, co-retrieval, session,
frame, peer, config, clock); ``unexpected`` for anything in the copy the source does not
explain; ``retrieval`` (the v2 plan's phase-4 gate: the same top-k block ids for fixed queries
before and after, computed with :mod:`memlab.embed`).

Where a block *goes* is the plan's decision and is recomputed from the source; what the copy
*holds* is compared with the source frames directly, never with what the writer produced.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from memlab import kinds
from memlab.errors import MigrationError, MissingExtra
from memlab.formats.blockfile import parse_blockfile, parse_ledger
from memlab.migrations import _elfmem, _letta
from memlab.migrations._parity import ParityRows, checkout_view, normal_value, repos_at, side_texts
from memlab.store import Store

__all__ = [
    "verify_paths",
    "differences",
    "Copy",
    "CopyParity",
    "check_elfmem",
    "check_block_retrieval",
    "check_text_retrieval",
    "RETRIEVAL_K",
    "N_QUERIES",
]

RETRIEVAL_K = 5
N_QUERIES = 10


# --------------------------------------------------------------------------- reading the copy


def _load_copy(folder: Path) -> Store:
    from memlab.kinds._memfs._load import load_memfs

    return load_memfs(folder, history=False)


# --------------------------------------------------------------------------- elfmem blocks


def _dest_elfmem_blocks(copy: Store, target: str) -> pd.DataFrame:
    """Blocks of the copy as one frame: id, path, tags, pinned, relations, body, cue, created,
    extra."""
    rows: list[dict[str, Any]] = []
    if target == "substrate":
        for r in copy.blocks.itertuples(index=False):
            if r.section == "self":
                rows.extend(_parsed(r.body, str(r.file)))
            else:
                rows.append(
                    {
                        "id": r.id,
                        "path": str(r.file),
                        "tags": list(r.tags),
                        "pinned": bool(r.pinned),
                        "relations": list(r.relations),
                        "body": str(r.body),
                        "cue": None if pd.isna(r.cue) else str(r.cue),
                        "created": r.created,
                        "extra": dict(r.extra),
                    }
                )
    else:
        for r in copy.files.itertuples(index=False):
            if str(r.path).endswith(".md"):
                rows.extend(_parsed(str(r.body), str(r.path)))
    return pd.DataFrame(
        rows,
        columns=["id", "path", "tags", "pinned", "relations", "body", "cue", "created", "extra"],
    )


def _parsed(text: str, path: str) -> list[dict[str, Any]]:
    blocks, _ = parse_blockfile(text, file=path)
    return [
        {
            "id": b.id,
            "path": path,
            "tags": list(b.tags),
            "pinned": b.pinned,
            "relations": list(b.relations),
            "body": b.body,
            "cue": b.cue,
            "created": pd.to_datetime(b.created, utc=True, errors="coerce"),
            "extra": dict(b.extra),
        }
        for b in blocks
    ]


def _check_elfmem_blocks(
    rows: ParityRows,
    src: Store,
    copy_blocks: pd.DataFrame,
    expected_path: dict[str, str],
    repo: str,
) -> None:
    tags = _elfmem.tags_by_block(src)
    pins = dict(zip(src.blocks["id"].astype(str), _elfmem.effective_pinned(src.blocks, tags)))
    rels = _elfmem.declared_relations(src)
    by_id: dict[str, list[dict]] = {}
    for rec in copy_blocks.to_dict("records"):
        by_id.setdefault(str(rec["id"]), []).append(rec)
    for row in src.blocks.itertuples(index=False):
        bid = str(row.id)
        found = by_id.get(bid, [])
        want_path = expected_path.get(bid)
        rows.add(
            "presence",
            bid,
            f"1 block at {want_path}",
            f"{len(found)} block(s)" + (f" at {found[0]['path']}" if found else ""),
            ok=len(found) == 1 and found[0]["path"] == want_path,
            repo=repo,
            path=want_path,
        )
        if len(found) != 1:
            continue
        got = found[0]
        rows.add(
            "content",
            bid,
            _elfmem.content_sha(row.content),
            _elfmem.content_sha(got["body"]),
            repo=repo,
            path=want_path,
        )
        rows.add("tags", bid, tags.get(bid, []), sorted(got["tags"]), repo=repo, path=want_path)
        rows.add("pinned", bid, bool(pins[bid]), bool(got["pinned"]), repo=repo, path=want_path)
        rows.add(
            "relations",
            bid,
            sorted(rels.get(bid, [])),
            sorted(map(tuple, got["relations"])),
            repo=repo,
            path=want_path,
        )
        cue = _elfmem.value_or_none(getattr(row, "cue", None))
        rows.add(
            "cue",
            bid,
            None if cue is None else str(cue).strip() or None,
            got["cue"],
            repo=repo,
            path=want_path,
        )
        want_created = pd.Timestamp(row.created_at) if not pd.isna(row.created_at) else None
        have_created = got["created"] if not pd.isna(got["created"]) else None
        rows.add(
            "created",
            bid,
            _elfmem.iso(want_created),
            _elfmem.iso(have_created),
            repo=repo,
            path=want_path,
        )
        if _elfmem.value_or_none(row.status) == "archived":
            want = {
                k: v
                for k, v in (
                    ("archive_reason", _elfmem.value_or_none(row.archive_reason)),
                    ("superseded_by", _elfmem.value_or_none(getattr(row, "superseded_by", None))),
                )
                if v is not None
            }
            have = {
                k: got["extra"].get(k)
                for k in ("archive_reason", "superseded_by")
                if got["extra"].get(k) is not None
            }
            rows.add("archive", bid, want, have, repo=repo, path=want_path)
    known = set(src.blocks["id"].astype(str))
    for bid, recs in by_id.items():
        if bid not in known:
            rows.add(
                "unexpected",
                bid,
                "not in source",
                f"{len(recs)} block(s) at {recs[0]['path']}",
                ok=False,
                repo=repo,
                path=recs[0]["path"],
            )


# --------------------------------------------------------------------------- elfmem side records


def _reassembled(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Put text carried in ``memlab.text`` chunks back into the event it was cut from."""
    text_kind = _elfmem.MEMLAB_KIND + "text"
    by_s = {e.get("s"): e for e in events if e.get("k") != text_kind}
    chunks: dict[tuple[Any, Any], list[tuple[Any, Any]]] = {}
    for e in events:
        if e.get("k") == text_kind:
            chunks.setdefault((e.get("ref"), e.get("field")), []).append(
                (e.get("part"), e.get("text"))
            )
    for (ref, name), parts in chunks.items():
        if ref in by_s:
            by_s[ref][name] = "".join(t for _, t in sorted(parts))
    return [e for e in events if e.get("k") != text_kind]


def _events(ledger_texts: dict[str, str]) -> list[dict[str, Any]]:
    """Ledger events of side files read with memlab's ledger reader."""
    events: list[dict[str, Any]] = []
    for path, text in sorted(ledger_texts.items()):
        found, _ = parse_ledger(text, file=path)
        events.extend(found)
    return _reassembled(events)


def _ledger_events_from_store(copy: Store) -> list[dict[str, Any]]:
    """Ledger events of a substrate as the memfs loader framed them."""
    led = copy.frames.get("ledger")
    if led is None or led.empty:
        return []
    return _reassembled(
        [
            {
                "t": r.t,
                "s": None if pd.isna(r.s) else int(r.s),
                "ah": r.ah,
                "k": str(r.k),
                **dict(r.payload),
            }
            for r in led.itertuples(index=False)
        ]
    )


def _check_side(rows: ParityRows, src: Store, events: list[dict[str, Any]], repo: str) -> None:
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_kind.setdefault(str(e.get("k")), []).append(e)

    def index(kind: str, keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
        out: dict[tuple, list[dict]] = {}
        for e in by_kind.get(kind, []):
            out.setdefault(tuple(normal_value(e.get(k)) for k in keys), []).append(e)
        return out

    # Seeds: the state elfmem's rebuild replays (reinforcement, clock position, α/β, λ, summary).
    seeds = index("seed", ("id",))
    block_side = index(_elfmem.MEMLAB_KIND + "block", ("id",))
    for row in src.blocks.itertuples(index=False):
        want = {
            "n": int(_elfmem.number_or(getattr(row, "reinforcement_count", None), 0.0)),
            "lah": _elfmem.number_or(getattr(row, "last_reinforced_at", None), 0.0),
            "a": _elfmem.number_or(getattr(row, "success_count", None), 0.5),
            "b": _elfmem.number_or(getattr(row, "failure_count", None), 0.5),
            "lam": _elfmem.number_or(getattr(row, "decay_lambda", None), 0.01),
            "sum": _elfmem.value_or_none(getattr(row, "summary", None)) or None,
        }
        found = seeds.get((str(row.id),), [])
        have = {k: found[0].get(k) for k in want} if len(found) == 1 else f"{len(found)} seed(s)"
        rows.add("side:seed", row.id, want, have, repo=repo)
        found = block_side.get((str(row.id),), [])
        want_side = {
            key: _elfmem.value_or_none(getattr(row, col, None))
            for col, key in _elfmem.BLOCK_SIDE_FIELDS.items()
            if hasattr(row, col)
        }
        want_side = {k: v for k, v in want_side.items() if v is not None}
        have_side = (
            {k: found[0].get(k) for k in want_side}
            if len(found) == 1
            else f"{len(found)} record(s)"
        )
        rows.add("side:block", row.id, want_side, have_side, repo=repo)

    config = _elfmem.frame(src, "config")
    clock = (
        _elfmem.value_or_none(config["total_active_hours"].iloc[0])
        if not config.empty and "total_active_hours" in config
        else None
    )
    if clock is not None:
        inst = by_kind.get("instance", [])
        rows.add(
            "side:clock",
            "total_active_hours",
            float(clock),
            inst[-1].get("total_ah") if inst else None,
            repo=repo,
        )

    edges = _elfmem.frame(src, "edges")
    links = index("link", ("from", "to"))
    for row in edges.itertuples(index=False) if not edges.empty else []:
        want = {
            "rel": _elfmem.value_or_none(row.relation_type),
            "o": _elfmem.value_or_none(row.origin),
            "w": _elfmem.value_or_none(row.weight),
            "rc": _elfmem.value_or_none(row.reinforcement_count),
            "by": _elfmem.value_or_none(getattr(row, "declared_by", None)),
            "note": _elfmem.value_or_none(row.note),
        }
        found = links.get((str(row.from_id), str(row.to_id)), [])
        have = {k: found[0].get(k) for k in want} if len(found) == 1 else f"{len(found)} link(s)"
        rows.add("side:link", f"{row.from_id}->{row.to_id}", want, have, repo=repo)

    for spec in _elfmem.SIDE_TABLES:
        df = _elfmem.frame(src, spec.frame)
        if df.empty:
            continue
        mapping = spec.mapping if spec.mapping is not None else {c: c for c in df.columns}
        keys = spec.key_fields if spec.key_fields else (next(iter(mapping)),)
        found_index = index(_elfmem.MEMLAB_KIND + spec.kind, keys)
        for rec in df.to_dict("records"):
            want = {k: _elfmem.value_or_none(rec.get(c)) for k, c in mapping.items() if c in rec}
            key = tuple(normal_value(want.get(k)) for k in keys)
            found = found_index.get(key, [])
            have = (
                {k: found[0].get(k) for k in want} if len(found) == 1 else f"{len(found)} record(s)"
            )
            rows.add(f"side:{spec.kind}", "/".join(str(k) for k in key), want, have, repo=repo)
    raw = _elfmem.frame(src, "config_raw")
    cfg = index(_elfmem.MEMLAB_KIND + "config", ("key",))
    for rec in raw.to_dict("records") if not raw.empty else []:
        found = cfg.get((str(rec["key"]),), [])
        rows.add(
            "side:config",
            rec["key"],
            _elfmem.value_or_none(rec["value"]),
            found[0].get("value") if len(found) == 1 else f"{len(found)} record(s)",
            repo=repo,
        )


# --------------------------------------------------------------------------- retrieval


def _queries(texts: list[str], fallback: list[str]) -> list[str]:
    out = [q for q in dict.fromkeys(t.strip() for t in texts) if q]
    for f in fallback:
        if len(out) >= N_QUERIES:
            break
        if f and f not in out:
            out.append(f)
    return out[:N_QUERIES]


def _top_k(ids: list[str], docs: np.ndarray, qs: np.ndarray, k: int) -> list[list[str]]:
    """For each query vector, the ids of the ``k`` best documents (ties broken by id, so equal
    scores cannot reorder between runs)."""
    out = []
    for row in qs @ docs.T:
        idx = sorted(range(len(ids)), key=lambda i: (-round(float(row[i]), 6), ids[i]))[:k]
        out.append([ids[i] for i in idx])
    return out


def _check_retrieval(
    rows: ParityRows,
    queries: list[str],
    before: dict[str, str],
    after: dict[str, str],
    k: int,
    repo: str = "",
) -> None:
    if not before or not queries:
        return
    try:
        from memlab.embed import get_embedder

        emb = get_embedder()
        qs = emb.encode(queries)  # once, for both sides
        ids_b = sorted(before)
        ids_a = sorted(after)
        top_b = _top_k(ids_b, emb.encode([before[i] for i in ids_b]), qs, k)
        top_a = (
            _top_k(ids_a, emb.encode([after[i] for i in ids_a]), qs, k)
            if ids_a
            else [[] for _ in queries]
        )
    except MissingExtra as exc:
        rows.add(
            "retrieval",
            "(all queries)",
            f"top-{k}",
            "not computed",
            ok=None,
            repo=repo,
            detail=str(exc),
        )
        return
    for q, b, a in zip(queries, top_b, top_a):
        rows.add("retrieval", q, b, a, repo=repo, detail=f"top-{k} block ids for this query")


# --------------------------------------------------------------------------- entry point


def verify_paths(
    src: str | Path,
    dest: Path,
    *,
    ref: str | None = None,
    retrieval: bool = True,
    queries: list[str] | None = None,
    k: int = RETRIEVAL_K,
    store: Store | None = None,
    plan: Any = None,
) -> pd.DataFrame:
    """The parity table, from the source kind's :class:`~memlab.kinds.Verifier`;
    ``store``/``plan`` skip reloading and replanning a just-run migration."""
    from memlab.sources import load

    if not dest.exists():
        raise MigrationError(
            "nothing to verify: the destination does not exist",
            path=dest,
            hint="run the migration (or its plan script) first",
        )
    store = store if store is not None else load(src)
    kind = kinds.lookup(store.kind)
    verifier = kind.verifier() if kind is not None else None
    if verifier is None:
        raise MigrationError(
            f"cannot verify a {store.kind} source",
            path=src,
            hint="memlab migrates elfmem databases and Letta agent files",
        )
    return verifier.parity(
        src, dest, store=store, plan=plan, ref=ref, retrieval=retrieval, queries=queries, k=k
    )


@dataclass
class Copy:
    """A migrated copy as memlab's verifiers read it: its repositories checked out (at
    ``ref``), each loaded with the memfs loader, the target it is a copy for (the loaded kind's
    ``copy_of``) and its memfs layout; with the source and the check's options."""

    src: str | Path
    dest: Path
    ref: str | None
    store: Store
    plan: Any
    copies: dict[str, Store]
    repo_folders: dict[str, Path]
    target: str
    layout: str
    retrieval: bool
    queries: list[str] | None
    k: int


class CopyParity:
    """The verifiers of a copy memlab's migrations write (memfs repositories under ``dest``):
    :meth:`parity` checks the copies out and loads them, then :meth:`check` adds the rows."""

    def parity(
        self,
        src: str | Path,
        dest: Path,
        *,
        store: Any,
        plan: Any,
        ref: str | None,
        retrieval: bool,
        queries: list[str] | None,
        k: int,
    ) -> pd.DataFrame:
        rows = ParityRows()
        repo_folders: dict[str, Path] = {}
        copies: dict[str, Store] = {}
        with _views(repos_at(dest), ref) as views:
            for sub, folder in views:
                repo_folders[sub] = folder
                copies[sub] = _load_copy(folder)
            first = next(iter(copies.values()))
            copy = Copy(
                src=src,
                dest=dest,
                ref=ref,
                store=store,
                plan=plan,
                copies=copies,
                repo_folders=repo_folders,
                target=getattr(kinds.lookup(first.kind), "copy_of", None) or first.kind,
                layout="v2" if first.meta.get("layout") == "letta_v2" else "v1",
                retrieval=retrieval,
                queries=queries,
                k=k,
            )
            self.check(rows, copy)
        return rows.frame()

    def check(self, rows: ParityRows, copy: Copy) -> None:
        raise NotImplementedError


def check_elfmem(rows: ParityRows, c: Copy) -> None:
    """An elfmem database's blocks, ledger and side records, and its retrieval, in a copy for
    its target (its own markdown substrate, or a memfs repository)."""
    from memlab.migrations._planning import plan_migration

    store, plan, layout, target = c.store, c.plan, c.layout, c.target
    if plan is None or plan.target != target or getattr(plan, "layout", layout) != layout:
        plan = plan_migration(
            c.src, to=target, store=store, layout=layout if target == "letta" else None
        )
    expected_path = {
        str(r.item): str(r.path) for r in plan.moved.itertuples(index=False) if r.kind == "block"
    }
    copy = c.copies[""] if "" in c.copies else next(iter(c.copies.values()))
    folder = c.repo_folders.get("", next(iter(c.repo_folders.values())))
    copy_blocks = _dest_elfmem_blocks(copy, target)
    _check_elfmem_blocks(rows, store, copy_blocks, expected_path, "")
    if target == "substrate":
        events = _ledger_events_from_store(copy)
    else:
        events = _events(side_texts(folder, _letta.LEDGER_PREFIX))
    _check_side(rows, store, events, "")
    if c.retrieval:
        live = store.blocks[store.blocks["status"].astype("string") != "archived"]
        before = {str(i): str(cc).strip() for i, cc in zip(live["id"], live["content"])}
        after = {
            str(r["id"]): str(r["body"])
            for r in copy_blocks.to_dict("records")
            if str(r["id"]) in before
        }
        tag_counts = _elfmem.frame(store, "tags")
        tag_q = (
            [
                t.replace("/", " ").replace("-", " ")
                for t in tag_counts["tag"].astype(str).value_counts().index
            ]
            if not tag_counts.empty
            else []
        )
        qs = c.queries or _queries(tag_q, [_elfmem.title_for(x) for x in live["content"]])
        _check_retrieval(rows, qs, before, after, c.k)


def check_text_retrieval(
    rows: ParityRows, c: Copy, before: dict[str, str], after: dict[str, str]
) -> None:
    """The retrieval check of texts by item id, ``before`` (the source's) against ``after``
    (the copy's), for a verifier that reads its own items: the same top-k ids for each query
    (the copy's options' queries, else ones drawn from the texts)."""
    if not c.retrieval:
        return
    qs = c.queries or _queries([], list(before.values()))
    _check_retrieval(rows, qs, before, after, c.k)


def check_block_retrieval(
    rows: ParityRows, c: Copy, store: Store, bodies: dict[str, dict[str, str]]
) -> None:
    """The retrieval check of Letta blocks (``store``'s) against the ``bodies`` a copy holds
    (per repository, block id -> text)."""
    if not c.retrieval:
        return
    before = {
        str(r.block_id): ("" if pd.isna(r.value) else str(r.value))
        for r in store.blocks.itertuples(index=False)
    }
    after: dict[str, str] = {}
    for per_repo in bodies.values():
        after.update(per_repo)
    labels = [
        str(x).rsplit("/", 1)[-1].replace("_", " ").replace("-", " ")
        for x in store.blocks["label"].dropna()
    ]
    qs = c.queries or _queries(labels, [])
    nonempty = {i: t for i, t in before.items() if t.strip()}
    _check_retrieval(rows, qs, nonempty, {i: after.get(i, "") for i in nonempty}, c.k)


@contextmanager
def _views(repos: list[tuple[str, Path]], ref: str | None) -> Iterator[list[tuple[str, Path]]]:
    with ExitStack() as stack:
        yield [(sub, stack.enter_context(checkout_view(path, ref))) for sub, path in repos]


def differences(parity: pd.DataFrame) -> pd.DataFrame:
    return parity[parity["ok"].fillna(True) == False]  # noqa: E712 - NA means "not computed"
