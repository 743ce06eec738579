"""``memlab simulate``: the scenarios on the modelled iterations and the shipped releases."""

from __future__ import annotations

import argparse

from memlab.cli._command import argument, command, shared
from memlab.cli._output import split_list

__all__ = ["cmd_simulate"]


@command(
    "simulate",
    "Run S1-S11 on the modelled Iterations and on the shipped elfmem releases.",
    "memlab simulate --real-only --scenarios S1,S3 --scale 2000\n"
    "  memlab simulate --no-real --instance data/demo/elfmem-demo.db "
    "--scenarios S1,S3,S5 --seed 0\n\n"
    "Real rows run elfmem 0.19.2 and 0.20.0 in their own venvs under $MEMLAB_ENVS_DIR\n"
    "(default ~/.cache/memlab/envs); a missing venv is created on first use with pip\n"
    "(under a minute each). Limit the run with --real-only (no modelled iterations),\n"
    "--no-real (modelled only), --releases 0.20.0, --scenarios S1,S3; --scale sets the\n"
    "S7/S11 corpus size (default 2,000; the releases' consolidation grows with its square, "
    "so the doc's 14,000 takes about 49 times as long). Real cells come from the\n"
    "result cache ($MEMLAB_CACHE_DIR/sim-results) when nothing that decides them\n"
    "changed; --fresh re-runs them. --json prints the run as one JSON object (evidence,\n"
    "cells, claims, fitness, journey, run).",
)
@argument("--iterations", help="comma-separated iteration numbers or names (default: all)")
@argument("--scenarios", help="comma-separated scenario ids, e.g. S1,S3 (default: all)")
@argument("--instance", help="an elfmem store whose audit parameterises the run")
@argument("--seed", type=int, default=0, help="random seed (default 0)")
@argument(
    "--releases", help="comma-separated elfmem releases to run for real (default: 0.19.2,0.20.0)"
)
@argument("--real-only", action="store_true", help="only the real rows (no modelled iterations)")
@argument("--no-real", action="store_true", help="only the modelled iterations (no release venvs)")
@argument(
    "--scale",
    type=int,
    default=2_000,
    help="S7/S11 corpus size for the real rows (default 2000; the doc's 14000 "
    "takes about 49 times as long as 2,000)",
)
@argument(
    "--sweep",
    help="AXIS=V1,V2,...: run once per value (seeds, scales or "
    "instances) and show which verdicts moved, e.g. seeds=0,1,2",
)
@argument(
    "--stability-seeds",
    type=int,
    default=3,
    metavar="N",
    help="decide each cell at seeds SEED..SEED+N-1 and mark the cells whose verdict "
    "moves (default 3; modelled cells computed or cached at each, measured cells "
    "read from the result cache at the extra seeds, never run there)",
)
@argument(
    "--fresh",
    action="store_true",
    help="re-run every real cell instead of reading the result cache "
    "($MEMLAB_CACHE_DIR/sim-results)",
)
@shared("json")
def cmd_simulate(args: argparse.Namespace) -> int:
    from memlab.sim import simulate
    from memlab.sim.real import RealParams

    iterations = [] if args.real_only else split_list(args.iterations)
    releases = () if args.no_real else (args.releases or "all")
    if args.sweep:
        from memlab.sim.sweep import parse_sweep, sweep

        axis, values = parse_sweep(args.sweep)
        frame = sweep(
            axis,
            values,
            iterations=iterations,
            scenarios=split_list(args.scenarios),
            instance=args.instance,
            seed=args.seed,
            releases=releases,
            params=RealParams(scale=args.scale),
            fresh=args.fresh,
        )
        if args.json:
            print(frame.to_json(orient="records", indent=2))
            return 0
        measured = frame[frame["basis"] == "measured"]
        print(
            f"sweep {axis}={','.join(map(str, values))}: verdict moved in "
            f"{int(measured['moved'].sum())}/{len(measured)} measured cells and "
            f"{int(frame['moved'].sum())}/{len(frame)} cells in all; stable metrics moved in "
            f"{int(measured['metrics_moved'].sum())}/{len(measured)} measured cells"
        )
        print(frame.to_string(index=False))
        return 0
    run = simulate(
        iterations,
        split_list(args.scenarios),
        instance=args.instance,
        seed=args.seed,
        releases=releases,
        params=RealParams(scale=args.scale),
        fresh=args.fresh,
        stability_seeds=args.stability_seeds,
    )
    if args.json:
        from memlab.formats import _json

        print(_json.dumps(run.as_dict(), indent=2, default=str))
    else:
        print(run.render())
    return 0
