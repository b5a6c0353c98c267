"""Before a window's sweeps train configurations at once: are they exact on this device, and faster?

    python scripts/concurrent_check.py --device cuda --configurations 4

Trains ``--configurations`` circle configurations (one per setting, then more) at the FULL
budget's width and batch, ``--seeds`` seeds each as one ensemble, for ``--steps`` steps: first one
configuration after another, then all at once, each in a thread and on a CUDA stream of its own
(:func:`setfuncs.experiments.concurrent.run_concurrently`, what ``--concurrent K`` of a sweep
does). Prints both wall times and their ratio. Exit status 0 when every run of the concurrent
pass has the test MSE and the final training loss of its run one after another (relative
difference at most ``--rtol``) and, on a GPU, replayed a CUDA graph at every step after the warm-up;
1 otherwise, with what differed: ``scripts/gpu_sweeps.sh`` then trains one configuration at a time.
The wall times include each pass's evaluation; the first pass also makes the seeds' stream and the
test set, which the second reuses.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

import torch

from setfuncs.experiments import circle
from setfuncs.experiments.concurrent import run_concurrently
from setfuncs.experiments.sweeps import spec_of
from setfuncs.steps import WARMUP_STEPS

#: One configuration per setting first, then others, so that K configurations span the grid's kinds.
ORDER = [("plain/plain", "max", "max"), ("recurrent/recurrent", "lse", "lse"), ("plain/recurrent", "mean", "max"),
         ("recurrent/plain", "lme", "mean"), ("plain/plain", "lse", "mean"), ("recurrent/recurrent", "max", "max"),
         ("plain/recurrent", "max", "lse"), ("recurrent/plain", "mean", "mean")]


def differences(at_once: list[dict], one_by_one: list[dict], rtol: float, graphed: int | None) -> list[str]:
    """What differs between the two passes' records (empty: nothing beyond ``rtol``)."""
    found = []
    for a, b in zip(at_once, one_by_one, strict=True):
        name = f"{a['spec']} seed {a['seed']}"
        if (a["spec"], a["seed"]) != (b["spec"], b["seed"]):
            found.append(f"{name}: records out of order ({b['spec']} seed {b['seed']} one after another)")
            continue
        if a["error"] is not None or b["error"] is not None:
            found.append(f"{name}: error at once {a['error']!r}, one after another {b['error']!r}")
            continue
        for key in ("mse", "final_train_loss"):
            if abs(a[key] - b[key]) > rtol * abs(b[key]):
                found.append(f"{name}: {key} {a[key]!r} at once, {b[key]!r} one after another")
        if graphed is not None and a["training"]["graphed_steps"] != graphed:
            found.append(f"{name}: {a['training']['graphed_steps']} graphed steps at once, expected {graphed} "
                         f"({a['training']['graph_fallback']})")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (default: cuda)")
    parser.add_argument("--configurations", type=int, default=4, choices=range(2, len(ORDER) + 1),
                        metavar=f"2..{len(ORDER)}", help="configurations at once (default: 4)")
    parser.add_argument("--seeds", type=int, default=20, help="seeds per configuration (default: 20, the FULL sweep's)")
    parser.add_argument("--steps", type=int, default=300, help="training steps (default: 300)")
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance (default: 1e-4)")
    args = parser.parse_args(argv)
    budget = replace(circle.FULL, name="check", steps=args.steps, test_size=256, test_population_sizes=(20,))
    configurations = ORDER[:args.configurations]
    seeds = list(range(args.seeds))
    groups = [([(spec_of(*c), s) for s in seeds], [(*c, s, budget, False, args.device) for s in seeds])
              for c in configurations]
    gpu = torch.device(args.device).type == "cuda"
    start = time.perf_counter()
    one_by_one = [record for _, tasks in groups for record in circle.run_ensemble(tasks)]
    apart = time.perf_counter() - start
    start = time.perf_counter()
    at_once = run_concurrently(circle.run_ensemble, groups, args.device)
    together = time.perf_counter() - start
    print(f"{len(configurations)} circle configurations x {len(seeds)} seeds x {args.steps} steps at width "
          f"{budget.hidden} on {args.device}: one after another {apart:.1f} s, at once {together:.1f} s "
          f"(x{apart / together:.2f}, the first pass making the stream and test set)")
    found = differences(at_once, one_by_one, args.rtol, args.steps - WARMUP_STEPS if gpu else None)
    for line in found:
        print("differs:", line)
    print("concurrent check:", "passed" if not found else f"FAILED ({len(found)} differences)")
    return 0 if not found else 1


if __name__ == "__main__":
    sys.exit(main())
