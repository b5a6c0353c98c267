"""EM against the neural models at the component standard deviations sigma = 0.5, 0.6 and 0.7.

``mixture_sigma.py`` measured EM alone: its error grows with sigma, and the experiment's
sigma = 0.7 is where it is largest among the values that keep the clusters bimodal. Whether the
networks beat EM may depend on sigma, so this probe trains a few configurations with seeds 0, 1, 2
at each sigma of ``SIGMAS`` at the MEDIUM budget, exactly as the sweep trains them
(``setfuncs.experiments.mixture.sweep``: ``train_model``, ``test_checkpoints`` and ``evaluate_run``
with ``std=sigma``; the sweep's seeds, head initialisation and run protocol), and evaluates each run
against EM on the same test populations at that sigma (the sweep's metric, its median and mean over
the populations, and the mean absolute error next to EM's and the constant guess's).

The configurations (``CONFIGURATIONS``):

* ``r-max/r-mean``: the best configuration of the committed ``results/mixture-medium.json`` by its
  median metric over the five seeds (-0.36; none of its runs collapsed);
* ``mean/mean``: the plain Deep Set, the baseline every aggregation is compared with;
* ``r-mean/r-mean``: recurrent in both places, the learnable twin of ``mean/mean`` (median metric
  -0.31; no run collapsed). LSE configurations are left out: most plain-LSE runs collapse in this
  code (chapter 9), which would test the collapse, not sigma.

Writes ``results/probes/mixture-sigma-models.json`` after every run (``complete`` false until the
last), read by ``setfuncs.experiments.mixture.sensitivity``. MEDIUM runs take about 80-150 s of one
core each: the 27 runs about an hour. ``--budget quick`` is CI-sized.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from _header import print_header

from setfuncs.experiments.mixture.data import SMALLER_WEIGHT_RANGE, TEST_POPULATION_SIZE, test_populations
from setfuncs.experiments.mixture.em import em_smaller_weight
from setfuncs.experiments.mixture.sensitivity import PROBE, RESULTS_NAME, SIGMAS
from setfuncs.experiments.mixture.budget import BUDGETS, Budget
from setfuncs.experiments.mixture.sweep import RUN_SCHEMA, evaluate_run, provenance, test_checkpoints, train_model
from setfuncs.experiments.protocol import run_protocol
from setfuncs.experiments.results import RESULTS_DIR
from setfuncs.experiments.strictjson import replace_non_finite
from setfuncs.experiments.mixture.experiment import EXPERIMENT
from setfuncs.experiments.sweeps import TEST_SEED, run_record

CONFIGURATIONS = ("r-max/r-mean", "mean/mean", "r-mean/r-mean")
SEEDS = 3


def reference(budget: Budget, sigma: float) -> dict:
    """EM's and the constant guess's mean absolute error of the smaller weight on the test populations
    at ``sigma`` (EM on each whole population; the constant is the middle of the weight's range, the
    best constant for this error)."""
    test = test_populations(budget.test_size, TEST_POPULATION_SIZE, TEST_SEED, sigma)
    constant = sum(SMALLER_WEIGHT_RANGE) / 2
    return {"sigma": sigma, "em_mae": float((em_smaller_weight(test.x) - test.smaller_weight).abs().mean()),
            "constant": constant, "constant_mae": float((test.smaller_weight - constant).abs().mean())}


def run(sigma: float, setting: str, equivariant: str, final: str, seed: int, budget: Budget) -> dict:
    """One run of the sweep's protocol with training and test populations at ``sigma``."""
    checkpoints = test_checkpoints(budget, sigma)
    record = run_protocol(
        run_record(setting, equivariant, final, seed), RUN_SCHEMA,
        lambda: train_model(setting, equivariant, final, seed, budget, False, "cpu", checkpoints, std=sigma),
        lambda model: evaluate_run(model, budget, sigma), checkpoints)
    return {"sigma": sigma, **record}


def outcome(record: dict) -> str:
    """One line on a finished run: its metric, error and times, or why it has none."""
    if record["error"] is not None:
        return f"diverged after {record['train_seconds']:.0f} s: {record['error']}"
    return (f"metric {record['metric']:+.3f}, |error| {record['test_mae']:.3f}"
            f"{' (collapsed)' if record['collapsed'] else ''}, {record['train_seconds']:.0f} s + "
            f"{record['eval_seconds']:.0f} s")


def write(path: Path, results: dict) -> None:
    """Write ``results`` to ``path`` as strict JSON (non-finite floats named), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.partial")
    partial.write_text(json.dumps(replace_non_finite(results), indent=1) + "\n")
    os.replace(partial, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", choices=("quick", "medium"), default="medium")
    parser.add_argument("--configurations", nargs="+", default=list(CONFIGURATIONS), metavar="SPEC")
    parser.add_argument("--seeds", type=int, default=SEEDS, help="seeds 0 .. SEEDS-1 (default %(default)s)")
    parser.add_argument("--sigmas", type=float, nargs="+", default=list(SIGMAS))
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / RESULTS_NAME)
    args = parser.parse_args()
    if any(not sigma > 0 for sigma in args.sigmas):
        sys.exit(f"--sigmas must be positive standard deviations, got {args.sigmas}")
    print_header()
    budget = BUDGETS[args.budget]
    specs, tasks = EXPERIMENT.tasks(args.seeds, budget, args.configurations)
    started = time.perf_counter()
    results = {"probe": PROBE, **provenance(budget, args.seeds, specs), "sigmas": args.sigmas,
               "references": [], "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "complete": False, "runs": []}
    results["mixture"]["component_std"] = args.sigmas
    results["references"] = [reference(budget, sigma) for sigma in args.sigmas]
    for ref in results["references"]:
        print(f"sigma {ref['sigma']}: EM |error| {ref['em_mae']:.3f}, constant {ref['constant']} |error| "
              f"{ref['constant_mae']:.3f}", flush=True)
    for task in tasks:                      # seed by seed, then sigma by sigma
        for sigma in args.sigmas:
            record = run(sigma, *task.args[:4], budget)
            results["runs"].append(record)
            results["wall_seconds"] = time.perf_counter() - started
            write(args.out, results)
            print(f"sigma {sigma} {record['spec']:<14} seed {record['seed']}: {outcome(record)}", flush=True)
    results.update(finished=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   wall_seconds=time.perf_counter() - started, complete=True)
    write(args.out, results)
    print(f"\nwrote {args.out}: {len(results['runs'])} runs in {results['wall_seconds'] / 60:.1f} min")


if __name__ == "__main__":
    main()
