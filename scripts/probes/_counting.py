"""How a trained AIR counts the test canvases: what the MNIST-canvas probes print of each run."""

from __future__ import annotations

from typing import NamedTuple


class Counting(NamedTuple):
    """``confusion``: true counts (rows 0-2) against the model's (columns 0-3), as text; ``residual``: the
    one-digit canvases' mean squared residual after 0, 1, ..., K steps (every step present), as text;
    ``iou``: the first step's box against a one-digit canvas's digit, the mean."""

    confusion: str
    residual: str
    iou: float


#: The columns :func:`report` prints, as a title.
TITLE = f"{'count acc':>9} {'baseline':>9} {'failed':>7}  {'confusion (true 0 / 1 / 2)':<38}"


def report(model, spec: str, test, budget, residual: bool = False, width: int = 38) -> str:
    """One probe row of a trained ``model`` of localiser ``spec``: count accuracy, the baseline of always
    answering the most frequent count, whether the run failed, the confusion of counts (``width``
    characters), with ``residual`` the one-digit canvases' residual after each step, and the first box's IoU."""
    from setfuncs.experiments.attention.sweep import evaluate_run

    run = evaluate_run(model, spec, budget, test)
    found = counting(model, test, budget)
    steps = f" {found.residual:<24}" if residual else ""
    return (f"{run['count_accuracy']:>9.1%} {run['count_baseline']:>9.1%} {run['failed']!s:>7}  "
            f"{found.confusion:<{width}}{steps} {found.iou:>6.2f}")


def counting(model, test, budget) -> Counting:
    """The :class:`Counting` of ``model`` on the test canvases ``test`` (particles of ``budget``'s size, seed 0)."""
    import numpy as np
    import torch

    from setfuncs.experiments.attention.evaluate import box_iou
    from setfuncs.experiments.attention.particles import sample_particles
    from setfuncs.experiments.attention.transformer import where_to_boxes

    images = torch.as_tensor(test.images)
    particles = (sample_particles(images, budget.particles, torch.Generator().manual_seed(0))
                 if model.reads_particles else None)
    with torch.no_grad():
        inference = model.infer(images, particles)
        _, q = model.elbo(images, particles, inference)
        means = torch.cat([torch.zeros_like(images).unsqueeze(1), inference.placed.cumsum(1)], 1)
        residual = ((images.unsqueeze(1) - means) ** 2).flatten(2).sum(-1).numpy()
    confusion = np.zeros((3, 4), dtype=int)
    np.add.at(confusion, (test.counts, q.argmax(1).numpy()), 1)
    one_digit = np.flatnonzero(test.counts == 1)
    boxes = where_to_boxes(inference.where_mean[:, 0], model.canvas_size).numpy()
    iou = float(np.mean([box_iou(boxes[i][None], test.boxes[i, 0][None]).item() for i in one_digit]))
    return Counting(" / ".join(" ".join(f"{v:>2}" for v in row) for row in confusion),
                    " ".join(f"{v:5.1f}" for v in residual[one_digit].mean(0)), iou)
