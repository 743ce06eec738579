"""How long the full default `memlab simulate` takes cold and warm, split into memlab's part and
the shipped releases' own work.

One run of this script runs the equivalent of `memlab simulate` with its defaults (Iterations
1-6 and the real elfmem 0.19.2 and 0.20.0 rows plus 0.20.0+project's S8 and S9, S1-S11, the
doc's instance, seed 0, scale 2,000: ``simulate(None, None, releases="all",
params=RealParams())`` followed by ``run.render()``, which is what the command prints) twice,
each in a fresh Python process against one embedding cache folder:

* cold: the folder starts empty, so the sentence model loads, the precision gate measures,
  shipped vector packs are verified and every other text is embedded;
* warm: the same folder again (what a second `memlab simulate` on the machine does): the
  embeddings and the real cells' results (``memlab.sim.cache``, ``sim-results/`` in that
  folder) come from the cache, so no release runs; the modelled rows run again.

Each run's wall time (process start to the printed table) is split with
``memlab.embed._embedder.TIMINGS`` and ``memlab.sim.real.releases.TIMINGS`` into the releases' own
work on the clock and memlab's part (everything else). A release's own work is the time its
drivers took to answer, less the embedding done for them meanwhile: learn, consolidate,
curate, recall, review as shipped, plus the JSON-lines exchange. The two releases run side by
side (``run_real``'s ``workers``), so on the clock their own work is the longer of the two;
both are printed. memlab's part is listed by phase: imports, model load, precision gate, pack
verification, embedding with the model, cache and pack lookups, waiting for driver starts,
the modelled rows, and the rest (the operator scripts' own reads, the shorter release waiting
for the longer one, render, exit). The verdict tables of both runs must agree (checked). The release
venvs' one-time creation is not part of either run: it is reported on its own, measured with
``--fresh-envs`` (builds both in a temporary ``$MEMLAB_ENVS_DIR``; needs the package index),
else read from whether they had to be built.

The cold run's anchor (issue 40: each first-run path beside the bare embedding of the same
texts): a fresh process that imports sentence-transformers, loads the same bundled model (fp32,
CPU) and encodes, in memlab's batch size, every distinct text the cold run handed memlab's
embedder (recorded by the cold run itself, whether the model, a shipped pack or the cache
answered it). Printed: the cold run and memlab's part of it, each as a ratio to that anchor.
Prints figures; asserts nothing about time.

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python benchmarks/bench_simulate.py
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python benchmarks/bench_simulate.py --scale 300
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
TARGET = {"cold": 120.0}
#: A warm run (the result cache holds every real cell) takes at most this share of the cold one.
WARM_RATIO = 0.15


def _child(args: argparse.Namespace) -> None:
    """One `memlab simulate` equivalent in this process; phases as JSON on the last line."""
    started = float(args.child_started)
    t0 = time.perf_counter()
    import memlab.sim.run as simrun
    from memlab.embed import _embedder
    from memlab.sim.real import releases
    from memlab.sim.real import RealParams

    import_s = time.perf_counter() - t0
    seen: dict[str, None] = {}
    if args.texts_out:  # the anchor's texts: every one handed to the embedder, once
        encode = _embedder.Embedder.encode

        def recording(self, texts, **kw):
            seen.update(dict.fromkeys(texts))
            return encode(self, texts, **kw)

        _embedder.Embedder.encode = recording
    marks: dict[str, dict[str, float]] = {}
    real_run = simrun.run_real

    def timed_real(*a, **kw):
        marks["real_before"] = dict(_embedder.TIMINGS)
        t = time.perf_counter()
        try:
            return real_run(*a, **kw)
        finally:
            marks["real_s"] = {"s": time.perf_counter() - t}
            marks["real_after"] = dict(_embedder.TIMINGS)

    simrun.run_real = timed_real
    t1 = time.perf_counter()
    params = RealParams() if args.scale is None else RealParams(scale=args.scale)
    run = simrun.simulate(None, None, instance=None, seed=args.seed, releases="all",
                          params=params)
    simulate_s = time.perf_counter() - t1
    t2 = time.perf_counter()
    text = run.render()
    render_s = time.perf_counter() - t2
    if args.texts_out:
        Path(args.texts_out).write_text(json.dumps(list(seen)))
    out = {"wall_s": time.time() - started, "import_s": import_s, "simulate_s": simulate_s,
           "render_s": render_s, "meta_seconds": run.meta["seconds"],
           "real_s": marks["real_s"]["s"], "embed": dict(_embedder.TIMINGS),
           "embed_real": {k: marks["real_after"][k] - marks["real_before"][k]
                          for k in marks["real_after"]},
           "rel": dict(releases.TIMINGS), "scale": params.scale,
           "cache": run.meta.get("cache"),
           "table": run.table.astype(str).to_dict(), "render_lines": len(text.splitlines()),
           "cells": {f"{row.split()[1]} {code}": res.metrics.get("seconds", 0.0)
                     for (row, code), res in run.results.items() if res.basis == "measured"},
           "consolidate_s": {row.split()[1]: res.metrics.get("seconds_learn_consolidate")
                             for (row, code), res in run.results.items()
                             if res.basis == "measured" and code == "S7"}}
    print(json.dumps(out))


def _run_child(label: str, cache: str, args: argparse.Namespace,
               texts_out: str | None = None) -> dict:
    env = dict(os.environ, MEMLAB_CACHE_DIR=cache, MEMLAB_QUIET="1", TQDM_DISABLE="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    cmd = [sys.executable, __file__, "--child", "--child-started", repr(time.time()),
           "--seed", str(args.seed)] + ([] if args.scale is None else ["--scale", str(args.scale)])
    cmd += ["--texts-out", texts_out] if texts_out else []
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=str(ROOT))
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{label} run failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = wall
    return out


def _split(r: dict) -> tuple[dict[str, float], float, dict[str, float]]:
    """memlab's phases on the clock (seconds), the releases' own work on the clock (the
    longer release's, as they run side by side), and each release's own work."""
    e, rel, er = r["embed"], r["rel"], r["embed_real"]
    own = {k.split()[1]: v for k, v in rel.items() if k.startswith("release_s ")}
    longest = max(own.values(), default=0.0)
    lookups = e["encode_s"] - e["load_s"] - e["gate_s"] - e["verify_s"] - e["model_s"]
    modelled = r["meta_seconds"] - r["real_s"] - (e["encode_s"] - er["encode_s"])
    memlab = {
        "imports": r["import_s"],
        "model load": e["load_s"],
        "precision gate": e["gate_s"],
        "pack verification": e["verify_s"],
        f"embedding ({int(e['model_texts']):,} texts by the model)": e["model_s"],
        f"cache/pack lookups ({int(e['encode_calls']):,} encode calls, "
        f"{int(e['encode_texts']):,} texts)": lookups,
        f"waiting for driver starts ({int(rel['starts'])} drivers, summed over threads)": rel["start_s"],
        "modelled rows + source count (less embedding)": modelled,
    }
    # The remainder: the operator scripts' own reads, the shorter release waiting for the
    # longer one, python start, render, exit.
    memlab["rest (operator scripts, render, python start, exit)"] = (
        r["wall_s"] - rel["env_s"] - longest - sum(memlab.values()))
    return memlab, longest, own


def _print(label: str, r: dict) -> tuple[float, float, float]:
    memlab, own, each = _split(r)
    total = r["wall_s"] - r["rel"]["env_s"]
    m = sum(memlab.values())
    print(f"{label}: {total:7.1f} s = memlab {m:6.1f} s + releases' own work {own:6.1f} s "
          f"on the clock (side by side: " + ", ".join(f"{k} {v:.1f} s" for k, v in each.items())
          + f"; {int(r['rel']['requests']):,} driver requests, "
          f"{int(r['rel']['embed_calls'])} embedding answers, "
          f"{int(r['rel']['embed_texts']):,} texts)", flush=True)
    for k, v in memlab.items():
        print(f"        {k:<58} {v:7.1f} s")
    slow = sorted(((v, k) for k, v in r["cells"].items()), reverse=True)[:4]
    print("        slowest real cells (their embedding included): "
          + ", ".join(f"{k} {v:.1f} s" for v, k in slow)
          + "; S7 learn+consolidate of the scale corpus: "
          + ", ".join(f"{k} {v} s" for k, v in r["consolidate_s"].items()))
    return total, m, own


def _anchor(texts_file: str) -> tuple[float, int]:
    """Seconds for a fresh process to load the model and embed the texts; how many texts."""
    from bench_cold_review import _ANCHOR

    from memlab.embed._embedder import BATCH_SIZE

    env = {k: v for k, v in os.environ.items() if k != "MEMLAB_EMBED_PRECISION"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", _ANCHOR, texts_file, str(BATCH_SIZE)], env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - t0, len(json.loads(Path(texts_file).read_text()))


def _envs(args: argparse.Namespace) -> str:
    if not args.fresh_envs:
        return ("release venvs: present, not rebuilt (measure their one-time creation with "
                "--fresh-envs)")
    folder = tempfile.mkdtemp(prefix="memlab-bench-envs-")
    try:
        code = ("import time; from memlab.sim.real.releases import release_env, RELEASES\n"
                "for r in RELEASES:\n t = time.perf_counter(); release_env(r, quiet=True)\n"
                " print(r, round(time.perf_counter() - t, 1))")
        env = dict(os.environ, MEMLAB_ENVS_DIR=folder)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, cwd=str(ROOT), check=True).stdout.split()
        pairs = dict(zip(out[::2], map(float, out[1::2])))
        return ("release venvs, one-time creation (python -m venv + pip install): "
                + ", ".join(f"{k} {v:.0f} s" for k, v in pairs.items())
                + f", {sum(pairs.values()):.0f} s in all (pip's own download cache as this "
                  "machine has it)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=None,
                    help="S7/S11 corpus size (default: RealParams' default, what `memlab "
                         "simulate` uses)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dir", help="embedding cache folder (default: a fresh temporary "
                                        "one, removed afterwards); it must start empty")
    ap.add_argument("--fresh-envs", action="store_true",
                    help="also build both release venvs in a temporary folder and report it")
    ap.add_argument("--json", help="also write both runs' raw phase figures to this file")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child-started", help=argparse.SUPPRESS)
    ap.add_argument("--texts-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args)
        return
    cache = args.cache_dir or tempfile.mkdtemp(prefix="memlab-bench-sim-")
    if any(Path(cache).iterdir()):
        sys.exit(f"{cache} is not empty: the cold run needs an empty cache folder")
    print(f"`memlab simulate` defaults (Iterations 1-6 + elfmem 0.19.2/0.20.0/0.20.0+project "
          f"real, S1-S11, seed {args.seed}"
          f"{'' if args.scale is None else f', scale {args.scale}'}); "
          f"cache {cache}; load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores", flush=True)
    fd, texts_file = tempfile.mkstemp(prefix="memlab-bench-sim-texts-", suffix=".json")
    os.close(fd)
    try:
        cold = _run_child("cold", cache, args, texts_out=texts_file)
        print(f"scale {cold['scale']:,}; load average after the cold run "
              f"{os.getloadavg()[0]:.2f}", flush=True)
        c_total, c_mem, c_own = _print("cold", cold)
        anchor_s, n_texts = _anchor(texts_file)
        print(f"anchor: a fresh process loads the model and embeds the cold run's {n_texts:,} "
              f"distinct texts: {anchor_s:.1f} s; cold run {c_total / anchor_s:.2f}x the anchor, "
              f"memlab's part of it {c_mem / anchor_s:.2f}x (load average "
              f"{os.getloadavg()[0]:.2f})", flush=True)
        warm = _run_child("warm", cache, args)
        if args.json:
            Path(args.json).write_text(json.dumps({"cold": cold, "warm": warm}, indent=1))
        w_total, w_mem, w_own = _print("warm", warm)
        print(f"load average after the warm run {os.getloadavg()[0]:.2f}")
        if cold["table"] != warm["table"]:
            sys.exit("the cold and the warm run gave different verdicts")
        print(f"verdicts: cold and warm agree ({sum(len(v) for v in cold['table'].values())} "
              f"cells)")
        for label, r in (("cold", cold), ("warm", warm)):
            c = r.get("cache") or {}
            print(f"result cache, {label} run: {c.get('hits')} real cells from the cache, "
                  f"{c.get('misses')} run")
        ratio = w_total / max(c_total, 1e-9)
        print(f"cold {c_total:.1f} s, warm {w_total:.1f} s: warm/cold ratio {ratio:.3f} "
              f"(target <= {WARM_RATIO}: {'met' if ratio <= WARM_RATIO else 'missed'}); "
              f"memlab's part cold/warm {c_mem / max(w_mem, 1e-9):.2f}x")
        goal = TARGET["cold"]
        why = (f"; the releases' own work alone is {c_own:.1f} s on the clock > {goal:.0f} s"
               if c_own > goal else "")
        print(f"target cold <= {goal:.0f} s: {'met' if c_total <= goal else 'missed'} "
              f"({c_total:.1f} s{why})")
        print(_envs(args))
        if cold["rel"]["envs_built"]:
            print(f"  (the cold run built {int(cold['rel']['envs_built'])} missing venvs in "
                  f"{cold['rel']['env_s']:.0f} s, left out of its figure)")
    finally:
        if not args.cache_dir:
            shutil.rmtree(cache, ignore_errors=True)
        Path(texts_file).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
