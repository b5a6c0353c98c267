"""Why the sweep engine's workers train with torch's AVX2 kernels: runs of the mixture rerun retrained
under each CPU kernel set this machine offers (``ATEN_CPU_CAPABILITY``, one subprocess per set, since
torch fixes its kernels at its first operation), their numbers beside the file's.

    python scripts/probes/cpu_kernels.py                        # r-max/max and mean/max, seed 4
    python scripts/probes/cpu_kernels.py --runs r-lse/r-lse:3   # others, as spec:seed

A run that reproduces bit for bit under one kernel set and not under another shows that the
kernels, not the code, set its rounding; training amplifies that rounding into a different run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from _header import print_header

from setfuncs.experiments.results import RESULTS_DIR, results_file

ROOT = RESULTS_DIR.parent

#: The kernel sets compared, where the CPU has them (torch falls back to the best it has).
CAPABILITIES = ("avx2", "avx512")
QUANTITIES = ("final_train_loss", "test_nll", "metric")


def retrain(spec: str, seed: int) -> dict:
    """The record of the mixture run ``spec``, ``seed`` at the MEDIUM budget, trained in this process."""
    import importlib

    import torch

    from setfuncs.experiments.sweeps import all_configurations, spec_of

    sweep = importlib.import_module("setfuncs.experiments.mixture.sweep")   # the package names a function sweep

    torch.set_num_threads(1)
    known = {spec_of(*c): c for c in all_configurations()}
    record = sweep.run_one(*known[spec], seed, sweep.MEDIUM)
    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(), **{q: record[q] for q in QUANTITIES}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", default=["r-max/max:4", "mean/max:4"], help="spec:seed of each run")
    parser.add_argument("--child", nargs=2, metavar=("SPEC", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:                                            # one run under the kernels of this process
        print(json.dumps(retrain(args.child[0], int(args.child[1]))))
        return
    print_header()
    path = results_file("mixture-medium.json")
    runs = {(r["spec"], r["seed"]): r for r in json.loads(path.read_text())["runs"]}
    print(f"file: {path.relative_to(ROOT)}")
    for item in args.runs:
        spec, _, seed = item.partition(":")
        if (spec, int(seed)) not in runs:
            raise SystemExit(f"--runs {item}: no run of {spec} with seed {seed} in {path}")
        committed = runs[spec, int(seed)]
        kernels = committed.get("worker", {}).get("cpu_capability", "not recorded")
        print(f"\n{spec}, seed {seed}; the file's run (sitting {committed['provenance']['sitting']}, "
              f"kernels {kernels}): " + ", ".join(f"{q} {committed[q]!r}" for q in QUANTITIES))
        for capability in CAPABILITIES:
            child = subprocess.run([sys.executable, __file__, "--child", spec, seed], capture_output=True, text=True,
                                   env={**os.environ, "ATEN_CPU_CAPABILITY": capability, "OMP_NUM_THREADS": "1"})
            if child.returncode != 0:
                raise SystemExit(f"the run under ATEN_CPU_CAPABILITY={capability} failed:\n{child.stderr}")
            again = json.loads(child.stdout.strip().splitlines()[-1])
            same = all(again[q] == committed[q] for q in QUANTITIES)
            print(f"  ATEN_CPU_CAPABILITY={capability} ({again['cpu_capability']} kernels): "
                  + ", ".join(f"{q} {again[q]!r}" for q in QUANTITIES)
                  + f" -> {'bit for bit the file' if same else 'differs from the file'}")


if __name__ == "__main__":
    main()
