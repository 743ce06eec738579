"""Two dated `memlab report all` runs over stores that changed between them, for the run
index's tests (test_schedule.py and tests/browser/test_run_index_in_browser.py).

The stores are copies in a temporary folder (data/ is never changed): the elfmem 0.20.0 sample
and the customer-service Agent File. Between the runs six active blocks of the database are
archived as superseded, and the agent file's ``human`` block gets a limit below its length.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
FIRST, SECOND = "2026-11-30", "2026-12-01"
CONFIG = f"""as_of: {FIRST}
simulation: false
alerts:
  - metric: blocks_active
    change_above: 2
  - metric: input_per_corpus_token
    above: 40
  - metric: n_blocks_over_limit
    above: 0
stores:
  db: db.sqlite
  cs: cs.af
"""


@dataclass
class TwoRuns:
    root: Path  # the runs folder (reports/)
    config: Path
    db: Path
    af: Path
    codes: tuple[int, int]  # `memlab report all --fail-on-alert` exit status of each run
    outputs: tuple[str, str]  # its stdout


def active_blocks(db: Path) -> int:
    """Counted by SQLite itself, not by memlab."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return c.execute("SELECT count(*) FROM blocks WHERE status = 'active'").fetchone()[0]


def change_stores(db: Path, af: Path) -> None:
    with sqlite3.connect(db) as c:
        c.execute("UPDATE blocks SET status = 'archived', archive_reason = 'superseded' WHERE id IN "
                  "(SELECT id FROM blocks WHERE status = 'active' ORDER BY id LIMIT 6)")
    outer = json.loads(af.read_text())
    inner = json.loads(outer)  # this sample is double-encoded, as Letta wrote it
    for block in inner["blocks"]:
        if block["label"] == "human":
            block["limit"] = 100  # its value is about 180 characters
    af.write_text(json.dumps(json.dumps(inner)))


_SHARED: list[TwoRuns] = []


def shared_two_runs() -> TwoRuns:
    """:func:`two_runs` once per test session (in a temporary folder removed at exit): the
    run-index tests only read what the runs wrote, and each run renders four notebooks."""
    if not _SHARED:
        folder = Path(tempfile.mkdtemp(prefix="memlab-two-runs-"))
        atexit.register(shutil.rmtree, folder, True)
        _SHARED.append(two_runs(folder))
    return _SHARED[0]


def two_runs(folder: Path) -> TwoRuns:
    from memlab.cli import main

    db, af = folder / "db.sqlite", folder / "cs.af"
    shutil.copy(DATA / "samples/elfmem/elfmem-0.20.0-schema9.db", db)
    shutil.copy(DATA / "samples/letta-af/customer_service.af", af)
    config = folder / "reports.yaml"
    config.write_text(CONFIG)
    root = folder / "reports"
    codes, outputs = [], []
    for n, date in enumerate((FIRST, SECOND)):
        if n == 1:
            change_stores(db, af)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            codes.append(main(["-q", "report", "all", "--config", str(config), "--out",
                               str(root / date), "--fail-on-alert"]))
        outputs.append(out.getvalue())
    return TwoRuns(root, config, db, af, tuple(codes), tuple(outputs))
