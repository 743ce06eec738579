"""What `memlab browse` reads: each path as a store, a report run or a fleet lake, turned into
named tables (pandas frames with the store's dtypes). Nothing here writes.

* a **store** (anything :func:`memlab.load` reads): every frame under its own name, the load
  problems as ``problems``, every table of :func:`memlab.audit` as ``audit_<name>`` and the
  audit's headline as one row of ``headline``. Each row carries ``store`` (the store's name)
  and ``store_kind``, so several stores share one table per frame (columns unioned, as the
  fleet lake reads them back);
* a **fleet lake** (a folder :func:`memlab.lake.is_lake` accepts): ``headline``, ``problems``,
  ``failures`` and every ``frames/<name>`` as ``<name>``, rows as :func:`memlab.read_lake`
  gives them (they carry ``store``, ``store_kind`` and ``run_date`` already);
* a **report run** (a folder holding memlab's ``runs.json``, or a runs folder of dated ones):
  ``runs``, ``run_stores``, ``run_reports``, ``run_metrics``, ``run_findings``,
  ``run_problems`` and ``run_alerts``, read from each run's record.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from memlab._metrics import METRICS, definition

__all__ = ["Tables", "UNSPLIT", "collect", "run_folders"]

#: table name -> (store kind or None, frame) pairs to stack.
Tables = dict[str, list[tuple[str | None, pd.DataFrame]]]

#: Tables whose rows stay in one table whatever their stores' kinds: the same columns for every
#: kind, or one row per store by design.
UNSPLIT = ("headline", "problems", "failures", "metrics", "browse_notes")


def run_folders(path: Path) -> list[Path]:
    """The run folders at ``path``: itself when it holds ``runs.json``, else its dated
    subfolders that do (a runs folder); [] when neither."""
    from memlab.report._runs import DATE_DIR

    if (path / "runs.json").is_file():
        return [path]
    if not path.is_dir():
        return []
    return sorted(
        p
        for p in path.iterdir()
        if DATE_DIR.match(p.name)
        and p.is_dir()
        and not p.is_symlink()
        and (p / "runs.json").is_file()
    )


def _stamp(df: pd.DataFrame, store: str, kind: str) -> pd.DataFrame:
    df = df.copy()
    df.insert(0, "store_kind", pd.Series([kind] * len(df), index=df.index, dtype="string"))
    df.insert(0, "store", pd.Series([store] * len(df), index=df.index, dtype="string"))
    return df


def _unique_name(name: str, taken: set[str]) -> str:
    out, n = name, 2
    while out in taken:
        out, n = f"{name} ({n})", n + 1
    taken.add(out)
    return out


def _add(tables: Tables, name: str, df: Any, kind: str | None = None) -> None:
    if isinstance(df, pd.DataFrame):
        tables.setdefault(name, []).append((kind, df))


def _store(path: Path | str, tables: Tables, notes: list[dict], names: set[str]) -> None:
    import memlab
    from memlab.errors import MemlabError

    store = memlab.load(path)
    name = _unique_name(str(store.name), names)
    kind = str(store.kind)
    for frame, df in store.frames.items():
        _add(tables, str(frame), _stamp(df, name, kind), kind)
    _add(tables, "problems", _stamp(store.problems, name, kind), kind)
    try:
        result = memlab.audit(store)
    except MemlabError as exc:  # a store memlab loads but does not audit: said, not dropped
        notes.append({"source": name, "note": f"not audited: {exc}"})
        return
    for table, df in result.tables.items():
        if table == "problems":  # the audit's copy of the load problems
            continue
        _add(tables, f"audit_{table}", _stamp(df, name, kind), kind)
    row = {k: v for k, v in result.headline.items() if k not in ("store", "store_kind")}
    # object columns: a metric one store lacks stays an integer in the others
    _add(
        tables,
        "headline",
        pd.DataFrame([{"store": name, "store_kind": kind, **row}], dtype=object),
        kind,
    )


def _lake(path: Path, tables: Tables) -> None:
    from memlab.lake import lake_tables, read_lake

    for table in lake_tables(path):
        df = read_lake(path, table)
        name = table.split("/", 1)[1] if table.startswith("frames/") else table
        kinds = sorted(df["store_kind"].dropna().unique()) if "store_kind" in df.columns else []
        if name in UNSPLIT or len(kinds) < 2:
            _add(tables, name, df, kinds[0] if kinds else None)
            continue
        for kind in kinds:  # the lake's union of every kind's columns, split back by kind
            part = df[df["store_kind"] == kind]
            _add(
                tables,
                name,
                part.loc[
                    :,
                    part.notna().any()
                    | part.columns.isin(
                        ["store", "store_kind", "store_id", "store_path", "run_date"]
                    ),
                ],
                str(kind),
            )


def _count(value: Any) -> int | None:
    return len(value) if isinstance(value, (list, dict)) else None


def _runs(folders: list[Path], tables: Tables, notes: list[dict]) -> None:
    from memlab.report._runs import read_run, reports_of, store_metrics

    rows: dict[str, list[dict]] = {
        k: []
        for k in (
            "runs",
            "run_stores",
            "run_reports",
            "run_metrics",
            "run_findings",
            "run_problems",
            "run_alerts",
        )
    }
    for folder in folders:
        record = read_run(folder)
        if record is None:
            notes.append({"source": folder.name, "note": "runs.json is not a memlab run record"})
            continue
        date = str(record.get("date") or folder.name)
        stores: Any = record.get("stores") if isinstance(record.get("stores"), dict) else {}
        reports = [r for r in record.get("reports") or [] if isinstance(r, dict)]
        alerts = [a for a in record.get("alerts") or [] if isinstance(a, dict)]
        rows["runs"].append(
            {
                "date": date,
                "started": record.get("started"),
                "duration_s": record.get("duration_s"),
                "memlab_version": record.get("memlab_version"),
                "as_of": record.get("as_of"),
                "status": record.get("status"),
                "stores": len(stores),
                "reports": len(reports),
                "failed_reports": sum(1 for r in reports if r.get("error")),
                "alerts": len(alerts),
            }
        )
        for store, state in stores.items():
            state = state if isinstance(state, dict) else {}
            rows["run_stores"].append(
                {
                    "run_date": date,
                    "store": str(store),
                    "kind": state.get("kind"),
                    "digest": state.get("digest"),
                    "problems": _count(state.get("problems")),
                    # None: not checked (the audit failed or the run did not record it), never 0
                    "findings": _count(state.get("findings")),
                    "review_choices": _count(state.get("choices")),
                    "error": state.get("error") or state.get("audit_error"),
                }
            )
            for key in state.get("findings") or []:
                table, _, finding = str(key).partition(": ")
                rows["run_findings"].append(
                    {"run_date": date, "store": str(store), "table": table, "finding": finding}
                )
            for key in state.get("problems") or []:
                rows["run_problems"].append(
                    {"run_date": date, "store": str(store), "problem": str(key)}
                )
            for metric, value in store_metrics(reports_of(record, store)).items():
                m = METRICS.get(metric)
                rows["run_metrics"].append(
                    {
                        "run_date": date,
                        "store": str(store),
                        "metric": metric,
                        "value": value,
                        "unit": m.unit if m else None,
                        # a retired name an older run holds says what it was
                        "definition": definition(metric) or None,
                    }
                )
        for r in reports:
            rows["run_reports"].append(
                {k: r.get(k) for k in ("store", "kind", "report", "html", "error")}
                | {"run_date": date}
            )
        for a in alerts:
            rows["run_alerts"].append({"run_date": date, **a})
    for table, found in rows.items():
        df = pd.DataFrame(found)
        if table != "runs" and "run_date" in df.columns:
            df = df[["run_date", *[c for c in df.columns if c != "run_date"]]]
        _add(tables, table, df)


def _stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The frames one under the other, columns unioned; a column keeps its dtype where every
    frame that has it agrees (an Int64 count absent from one store stays Int64, not float)."""
    out = pd.concat(frames, ignore_index=True)
    for col in out.columns:
        dtypes = {str(f[col].dtype) for f in frames if col in f.columns}
        if len(dtypes) == 1 and str(out[col].dtype) != (dtype := dtypes.pop()):
            try:
                out[col] = out[col].astype(dtype)
            except (TypeError, ValueError):
                pass
    return out


def collect(
    paths: Iterable[str | Path],
) -> tuple[dict[str, pd.DataFrame], dict[str, tuple[str, str | None]], list[dict]]:
    """(table name -> frame, table name -> (frame name, store kind), notes) for ``paths``, each
    a store, a fleet lake or a report run. A frame whose stores are of one kind is one table
    under its own name; frames of one name from stores of several kinds (an elfmem database's
    ``blocks`` and an Agent File's) are one table per kind, ``<kind>_<frame>``, each with its
    own columns, types and keys (:data:`UNSPLIT` excepted). A path none of these reads is the
    loader's error (a :class:`~memlab.errors.MemlabError` naming it)."""
    from memlab.lake import is_lake

    tables: Tables = {}
    notes: list[dict] = []
    names: set[str] = set()
    for raw in paths:
        if isinstance(raw, str) and "://" in raw:  # a DSN memlab.load reads
            _store(raw, tables, notes, names)
            continue
        path = Path(raw).expanduser()
        folders = run_folders(path) if path.is_dir() else []
        if path.is_dir() and is_lake(path):
            _lake(path, tables)
        elif folders:
            _runs(folders, tables, notes)
        else:
            _store(path, tables, notes, names)
    out: dict[str, pd.DataFrame] = {}
    bases: dict[str, tuple[str, str | None]] = {}
    with warnings.catch_warnings():  # concat of frames whose columns differ: unioned, by design
        warnings.simplefilter("ignore", FutureWarning)
        for name, pairs in tables.items():
            kinds = sorted({k for k, _ in pairs if k is not None})
            groups = (
                [(kinds[0] if len(kinds) == 1 else None, [f for _, f in pairs])]
                if name in UNSPLIT or len(kinds) < 2
                else [(k, [f for kk, f in pairs if kk == k]) for k in kinds]
            )
            for kind, frames in groups:
                table = name if len(groups) == 1 else f"{kind}_{name}"
                frames = [f.reset_index(drop=True) for f in frames]
                out[table] = frames[0] if len(frames) == 1 else _stack(frames)
                bases[table] = (name, kind)
    metrics = pd.DataFrame(
        [
            {
                "name": m.name,
                "definition": m.definition,
                "unit": m.unit,
                "group": m.group,
                "computed": m.computed,
                "doc_value": m.doc_value,
            }
            for m in METRICS.values()
        ]
    )
    out["metrics"], bases["metrics"] = metrics, ("metrics", None)
    return out, bases, notes
