r"""Test metrics of a trained AIR model, at every population size.

For a set localiser and every test population size :math:`n`, particles are drawn once per test
canvas with ``torch.Generator().manual_seed(seed + n)`` and the continuous latents after
``torch.manual_seed(seed + n)``; the image localiser reads the canvases and is evaluated once.

* **ELBO**: the mean over test canvases of :math:`\mathcal{L}(x)` (nats per canvas; higher is better).
* **Count accuracy**: the fraction of canvases with :math:`\arg\max_k q(N = k)` equal to the true count.
* **Box IoU**: for canvases whose count is right and non-zero, the mean over true boxes of the
  best intersection-over-union with the predicted boxes (the means of :math:`q(z^\text{where})`
  of the first :math:`N` steps).
"""

from __future__ import annotations

import numpy as np
import torch

from .air import AIR
from .canvas import Canvases
from .particles import sample_particles
from .transformer import where_to_boxes

__all__ = ["box_iou", "evaluate_at", "evaluate_model"]


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection over union of boxes ``(x0, y0, x1, y1)``: ``a [P, 4]`` x ``b [Q, 4]`` -> ``[P, Q]``."""
    a, b = np.asarray(a, dtype=np.float64)[:, None], np.asarray(b, dtype=np.float64)[None]
    w = (np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0])).clip(0)
    h = (np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1])).clip(0)
    inter = w * h
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])  # noqa: E731
    return inter / (area(a) + area(b) - inter)


@torch.no_grad()
def evaluate_at(model: AIR, test: Canvases, n: int | None, seed: int, batch: int = 100) -> dict:
    """``{"elbo", "count_accuracy", "box_iou"}`` on the test canvases at population size ``n``
    (None for the image localiser)."""
    model.eval()
    images = torch.as_tensor(test.images, dtype=torch.float32)
    generator = torch.Generator().manual_seed(seed + (n or 0))
    torch.manual_seed(seed + (n or 0))
    elbos, counts, wheres = [], [], []
    for start in range(0, len(images), batch):
        chunk = images[start:start + batch]
        particles = sample_particles(chunk, n, generator) if model.reads_particles else None
        inference = model.infer(chunk, particles)
        elbo, q = model.elbo(chunk, particles, inference)
        elbos.append(elbo)
        counts.append(q.argmax(1))
        wheres.append(inference.where_mean)
    elbo = torch.cat(elbos).numpy()
    count = torch.cat(counts).numpy()
    boxes = where_to_boxes(torch.cat(wheres), model.canvas_size).numpy()
    ious = []
    for m in np.flatnonzero((count == test.counts) & (test.counts > 0)):
        k = int(test.counts[m])
        ious.extend(box_iou(test.boxes[m, :k], boxes[m, :k]).max(1))
    return {"elbo": float(elbo.mean()), "count_accuracy": float((count == test.counts).mean()),
            "box_iou": float(np.mean(ious)) if ious else None}


def evaluate_model(model: AIR, test: Canvases, sizes: tuple[int, ...], seed: int, batch: int = 100
                   ) -> dict[str, dict]:
    """:func:`evaluate_at` at every population size (``{"5": {...}, ...}``), or once under ``"image"``
    for the image localiser."""
    if not model.reads_particles:
        return {"image": evaluate_at(model, test, None, seed, batch)}
    return {str(n): evaluate_at(model, test, n, seed, batch) for n in sizes}
