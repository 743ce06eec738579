"""A scheduled run's record (``runs.json``) with one store's audit report, written the way
``memlab schedule`` writes it, for tests that compare two runs' metrics in the run index."""

from __future__ import annotations

import json
from pathlib import Path


def write_audit_run(root: Path, date: str, headline: list[str], metrics: dict, *,
                    store: str, kind: str = "agent_file") -> None:
    """``<root>/<date>/runs.json``: one run whose store ``store`` (of ``kind``, charting
    ``headline``) had an audit report with ``metrics`` (its metrics.json entry)."""
    from memlab.report._runs import RUN_FORMAT

    folder = root / date
    folder.mkdir(parents=True)
    record = {
        "format": RUN_FORMAT, "date": date, "status": "ok",
        "stores": {store: {"kind": kind, "headline": headline}},
        "reports": [{"store": store, "kind": "audit", "report": "audit",
                     "html": f"{store}/audit/01-audit.html", "metrics": metrics}],
    }
    (folder / "runs.json").write_text(json.dumps(record), encoding="utf-8")
