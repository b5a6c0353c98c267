"""Seconds per MEDIUM point-cloud training step under Dask's allocator settings and the engine's.

    OMP_NUM_THREADS=1 python benchmarks/worker_malloc.py                  # max/max and max/r-lse, 30 steps
    OMP_NUM_THREADS=1 python benchmarks/worker_malloc.py --specs max/max --steps 50

Dask's nanny starts every worker with ``MALLOC_TRIM_THRESHOLD_=65536``, which turns off glibc's
adaptive mmap threshold: each activation (``[32, 1000, 64]`` floats, 8 MB) is then mapped from the
kernel when it is allocated and returned when it is freed, and every step page-faults it anew. The
sweep engine's workers start with :data:`setfuncs.experiments.engine.workers.WORKER_MALLOC` instead. glibc
reads these variables when a process starts, so each setting times its steps in a fresh process
(a thread of it, as a Dask worker runs its task) on the same batches, after warm-up steps; the
script prints seconds, kernel seconds and minor page faults per step, the loss after the last step
(equal under both: the allocator does not change the arithmetic) and the ratio of the step times.
Run it on an otherwise idle machine: another busy process on the same cores changes both timings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

#: The environments compared: Dask's default for its workers, and the engine's.
SETTINGS = {"dask default": {"MALLOC_TRIM_THRESHOLD_": "65536"}}


def time_steps(spec: str, steps: int, warmup: int) -> dict:
    """Seconds, kernel seconds and minor faults per training step of ``spec`` at MEDIUM, in a thread."""
    import resource
    import threading
    import time

    import numpy as np
    import torch

    from setfuncs.experiments.pointcloud import BUDGETS, make_model, training_batches
    from setfuncs.experiments.pointcloud.sweep import Data, load_data

    torch.set_num_threads(1)
    budget = BUDGETS["medium"]
    clouds = load_data(Data("shapes"), budget)
    torch.manual_seed(0)
    model = make_model(spec, len(clouds.class_names), budget, clouds.train_y)
    optimizer = torch.optim.Adam(model.parameters(), budget.lr, eps=budget.eps, weight_decay=budget.weight_decay)
    sample = training_batches(clouds.train_x, clouds.train_y, budget.batch, np.random.default_rng(0))
    out: dict = {}

    def step() -> float:
        x, y, _ = sample()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    def work() -> None:
        for _ in range(warmup):
            step()
        before, clock = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        for _ in range(steps):
            loss = step()
        after = resource.getrusage(resource.RUSAGE_SELF)
        out.update(seconds=(time.perf_counter() - clock) / steps, kernel=(after.ru_stime - before.ru_stime) / steps,
                   faults=(after.ru_minflt - before.ru_minflt) / steps, loss=loss)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return out


def main() -> None:
    from setfuncs.experiments.engine import WORKER_MALLOC

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--specs", nargs="+", default=["max/max", "max/r-lse"], help="Table 2 columns to time")
    parser.add_argument("--steps", type=int, default=30, help="timed steps per column and setting")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    parser.add_argument("--child", nargs=3, metavar=("SPEC", "STEPS", "WARMUP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(time_steps(args.child[0], int(args.child[1]), int(args.child[2]))))
        return
    settings = {**SETTINGS, "engine (WORKER_MALLOC)": WORKER_MALLOC}
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    print(f"MEDIUM point-cloud steps, one torch thread, {args.steps} timed after {args.warmup}")
    for spec in args.specs:
        timed = {}
        for name, variables in settings.items():
            child = subprocess.run([sys.executable, __file__, "--child", spec, str(args.steps), str(args.warmup)],
                                   env={**clean, **variables}, capture_output=True, text=True, check=True)
            timed[name] = r = json.loads(child.stdout.strip().splitlines()[-1])
            print(f"  {spec:10s} {name:24s} {r['seconds']:.4f} s/step, kernel {r['kernel']:.4f} s, "
                  f"{r['faults']:8.0f} faults/step, loss {r['loss']:.6f}")
        base, ours = timed["dask default"], timed["engine (WORKER_MALLOC)"]
        print(f"  {spec:10s} Dask's default / engine: {base['seconds'] / ours['seconds']:.2f}x the time per step; "
              f"same loss: {base['loss'] == ours['loss']}")


if __name__ == "__main__":
    main()
