r"""Test metrics of a trained AIR model, at every population size, paired across sizes.

Every size is evaluated on the *same* test canvases, with ``draws`` independent particle samples
per canvas (and one sample of the continuous latents per draw); a canvas's value at a size is the
mean over its draws. Draw ``d`` at size :math:`n` uses ``torch.Generator().manual_seed(seed + n)``
for the particles and ``torch.manual_seed(seed + n)`` for the latents, consumed in order. The image
localiser reads the canvases; its draws differ only in the latents.

* **ELBO**: the mean over test canvases of :math:`\mathcal{L}(x)` (nats per canvas; higher is
  better), with its standard error over canvases.
* **ELBO gains**: for consecutive sizes :math:`n_1 < n_2`, the per-canvas differences
  :math:`\mathcal{L}_{n_2}(x) - \mathcal{L}_{n_1}(x)`, their mean and standard error. Pairing by
  canvas removes the canvas-to-canvas spread (tens of nats) from a comparison of a few nats.
* **Count accuracy**: the fraction of canvases and draws with :math:`\arg\max_k q(N = k)` equal to
  the true count.
* **Box IoU** (:func:`matched_box_iou`): every canvas with a true or a predicted object, the
  predicted boxes (the means of :math:`q(z^\text{where})` of the first :math:`\arg\max_k q(N = k)`
  steps) matched one to one with the true boxes to maximise the total IoU; unmatched boxes on
  either side score 0, so a wrong count costs IoU instead of dropping the canvas.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment

from .air import AIR
from .canvas import Canvases
from .particles import sample_particles
from .transformer import where_to_boxes

__all__ = ["EVAL_DRAWS", "box_iou", "matched_box_iou", "canvas_scores", "evaluate_at", "evaluate_model"]

#: Particle draws per canvas and size.
EVAL_DRAWS = 4


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection over union of boxes ``(x0, y0, x1, y1)``: ``a [P, 4]`` x ``b [Q, 4]`` -> ``[P, Q]``."""
    a, b = np.asarray(a, dtype=np.float64)[:, None], np.asarray(b, dtype=np.float64)[None]
    w = (np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0])).clip(0)
    h = (np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1])).clip(0)
    inter = w * h
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])  # noqa: E731
    return inter / (area(a) + area(b) - inter)


def matched_box_iou(true_boxes: np.ndarray, predicted: np.ndarray) -> float | None:
    r"""The one-to-one matching of ``true_boxes [k, 4]`` and ``predicted [j, 4]`` with the largest
    total IoU (the Hungarian algorithm), divided by :math:`\max(k, j)`: 1 for a perfect count and
    boxes, 0 for boxes that miss; None when both are empty (nothing to localise)."""
    k, j = len(true_boxes), len(predicted)
    if k == 0 and j == 0:
        return None
    if k == 0 or j == 0:
        return 0.0
    iou = box_iou(true_boxes, predicted)
    rows, cols = linear_sum_assignment(iou, maximize=True)
    return float(iou[rows, cols].sum() / max(k, j))


@torch.no_grad()
def canvas_scores(model: AIR, test: Canvases, n: int | None, seed: int, batch: int = 100,
                  draws: int = EVAL_DRAWS) -> dict[str, np.ndarray]:
    """Per-canvas values at population size ``n`` (None for the image localiser), each the mean over
    ``draws``: ``elbo [M]``, ``count_correct [M]`` (fraction of draws), ``box_iou [M]`` (NaN where
    :func:`matched_box_iou` is None) and ``first_centre [M, 2]`` (the first step's box centre in
    pixels). The model runs on its device (the particles are drawn on the CPU, the latents' noise on
    the model's device); the matching runs on the CPU."""
    model.eval()
    device = next(model.parameters()).device
    images = torch.as_tensor(test.images, dtype=torch.float32)
    generator = torch.Generator().manual_seed(seed + (n or 0))
    torch.manual_seed(seed + (n or 0))
    m = len(images)
    elbo, correct, iou, centre = np.zeros(m), np.zeros(m), np.zeros(m), np.zeros((m, 2))
    counted = np.zeros(m)
    for _ in range(draws):
        for start in range(0, m, batch):
            chunk = images[start:start + batch]
            particles = sample_particles(chunk, n, generator).to(device) if model.reads_particles else None
            on_device = chunk.to(device)
            inference = model.infer(on_device, particles)
            value, q = model.elbo(on_device, particles, inference)
            count = q.argmax(1).cpu().numpy()
            boxes = where_to_boxes(inference.where_mean, model.canvas_size).cpu().numpy()
            rows = slice(start, start + len(chunk))
            elbo[rows] += value.cpu().numpy()
            correct[rows] += count == test.counts[rows]
            centre[rows] += (boxes[:, 0, :2] + boxes[:, 0, 2:]) / 2
            for i, (c, b) in enumerate(zip(count, boxes), start=start):
                score = matched_box_iou(test.boxes[i, :test.counts[i]], b[:c])
                if score is not None:
                    iou[i] += score
                    counted[i] += 1
    with np.errstate(invalid="ignore"):
        box = np.where(counted > 0, iou / np.maximum(counted, 1), np.nan)
    return {"elbo": elbo / draws, "count_correct": correct / draws, "box_iou": box, "first_centre": centre / draws}


def _summary(scores: dict[str, np.ndarray]) -> dict:
    elbo, box = scores["elbo"], scores["box_iou"]
    return {"elbo": float(elbo.mean()), "elbo_se": float(elbo.std(ddof=1) / np.sqrt(len(elbo))),
            "count_accuracy": float(scores["count_correct"].mean()),
            "box_iou": float(np.nanmean(box)) if np.isfinite(box).any() else None}


def evaluate_at(model: AIR, test: Canvases, n: int | None, seed: int, batch: int = 100,
                draws: int = EVAL_DRAWS) -> dict:
    """``{"elbo", "elbo_se", "count_accuracy", "box_iou"}`` on the test canvases at population size
    ``n`` (None for the image localiser)."""
    return _summary(canvas_scores(model, test, n, seed, batch, draws))


def evaluate_model(model: AIR, test: Canvases, sizes: tuple[int, ...], seed: int, batch: int = 100,
                   draws: int = EVAL_DRAWS) -> tuple[dict[str, dict], dict[str, dict], dict[str, np.ndarray]]:
    """:func:`evaluate_at` at every population size (``{"5": {...}, ...}``, or ``{"image": {...}}``
    for the image localiser); the paired ELBO gains between consecutive sizes
    (``{"5->20": {"mean", "se"}, ...}``, empty for the image localiser); and the per-canvas scores
    (:func:`canvas_scores`) by the same keys."""
    keys: list[int | None] = [None] if not model.reads_particles else sorted(sizes)
    scores = {("image" if n is None else str(n)): canvas_scores(model, test, n, seed, batch, draws) for n in keys}
    gains = {}
    for low, high in zip(keys[:-1], keys[1:]):
        difference = scores[str(high)]["elbo"] - scores[str(low)]["elbo"]
        gains[f"{low}->{high}"] = {"mean": float(difference.mean()),
                                   "se": float(difference.std(ddof=1) / np.sqrt(len(difference)))}
    return {key: _summary(value) for key, value in scores.items()}, gains, scores
