"""Record what memlab's lake reads back for the lake-readback fleet (tests/lake_fleet.py) into
data/lake-readback/: one Parquet file per table (normalised: see lake_fleet.normalise), the
dtypes read_lake gave each column, and the tables it could not read (the error, without the two types, whose order varies).

Run it with the code whose layout is the reference (it was run with main at 039ae23, the lake
of one file per store per table):

    PYTHONPATH=<that checkout> python scripts/record_lake_readback.py data/lake-readback
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import memlab  # noqa: E402
from memlab.errors import MemlabError  # noqa: E402
from memlab.lake import lake_tables, read_lake  # noqa: E402

import lake_fleet  # noqa: E402


def main(out: Path) -> None:
    data = Path(__file__).resolve().parents[1] / "data"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = lake_fleet.build(data, Path(tmp) / "fleet")
        lake = Path(tmp) / "lake"
        memlab.fleet([root], out=lake, workers=0, as_of=lake_fleet.AS_OF,
                     run_date=lake_fleet.RUN_DATE, progress=False)
        dtypes, errors = {}, {}
        for table in lake_tables(lake):
            try:
                df = read_lake(lake, table)
            except MemlabError as exc:
                errors[table] = str(exc).split(": ", 1)[1].split(": Unable", 1)[0]  # the sides vary in order
                continue
            dtypes[table] = {str(c): str(t) for c, t in df.dtypes.items()}
            lake_fleet.normalise(df, str(root)).to_parquet(
                out / (table.replace("/", "__") + ".parquet"), index=False)
        (out / "dtypes.json").write_text(json.dumps(dtypes, indent=1, sort_keys=True) + "\n")
        (out / "errors.json").write_text(json.dumps(errors, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
