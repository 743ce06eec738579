"""Build the sample fleet (stores of every kind, made from data/) under a folder.

    python scripts/make_fleet.py data/fleet [--force] [--seed 0]

The stores are made by memlab.lake.make_sample_fleet (see its docstring for how each kind is
made); the folder is not committed (memfs repos are git repositories of their own).
"""

from __future__ import annotations

import argparse
import sys

import memlab.lake


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", help="folder to write the fleet into")
    parser.add_argument("--force", action="store_true", help="replace a non-empty folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = memlab.lake.make_sample_fleet(args.dest, force=args.force, seed=args.seed)
    print(f"sample fleet written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
