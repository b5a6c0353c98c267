r"""Chapter 11's explorable: a population of particles sampled from a digit canvas, at any size.

A canvas :math:`I \in [0, 1]^{H \times W}` is read as a density on the normalised frame
:math:`[-1, 1]^2` (:mod:`setfuncs.experiments.attention.particles`): a particle picks pixel
:math:`(j, k)` with probability :math:`I_{jk} / \sum I`, every pixel alike on an empty canvas, then
a point uniformly inside it. The page draws the population in the reader's browser for any
:math:`n` from 1 to 1,000 and any of the chapter's canvases, from a seed, with mulberry32 (the same
draws here, :mod:`setfuncs.explorables.rng`): per particle three uniforms, the first picks the pixel
by the inverse of the cumulative intensities (:func:`sample_population`), the other two place the
particle in it. Growing :math:`n` adds particles and keeps the earlier ones.

The canvases travel as integer intensities (hundredths, :data:`LEVELS`), so the cumulative sums are
exact integers in both languages and a uniform picks the same pixel in both. The read-outs are what
a ``mean`` localiser's simplest aggregate would see, the particles' mean position (in the frame the
localiser reads, :math:`y` pointing down as in the image), their spread (root mean square distance
from that mean), and the share of the density inside the population's bounding box, which tends to 1
as the population fills in the digits.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .base import Explorable
from .esm import module_source
from .rng import uniforms

__all__ = ["LEVELS", "MAX_PARTICLES", "DigitParticles", "sample_population", "density_weights", "encode_canvases",
           "population_state", "canvas_words", "population"]

#: Intensities travel as integers ``round(LEVELS * I)``: two decimals of the grey value.
LEVELS = 100
#: The largest population the slider offers (the paper tests at up to 1,000).
MAX_PARTICLES = 1000


def density_weights(levels: Sequence[int]) -> np.ndarray:
    """The unnormalised density of a canvas's pixels (row by row): its integer intensities, or 1 for
    every pixel of an empty canvas (the package's rule, :func:`~setfuncs.experiments.attention.particles.pixel_probabilities`)."""
    weights = np.asarray(levels, dtype=np.int64)
    return weights if weights.sum() > 0 else np.ones_like(weights)


def sample_population(levels: Sequence[int], size: int, n: int, seed: int) -> np.ndarray:
    r"""``n`` particles ``[n, 2]`` (``(x, y)`` in :math:`[-1, 1]^2`) from a ``size`` x ``size`` canvas of
    integer intensities ``levels`` (row by row), as the page draws them: per particle the uniforms
    :math:`u, v, w` of mulberry32(``seed``), the pixel :math:`p` the first whose cumulative weight
    exceeds :math:`u \sum_k w_k`, and :math:`x = 2(\text{col}_p + v)/W - 1`, :math:`y = 2(\text{row}_p + w)/H - 1`."""
    weights = density_weights(levels)
    if weights.size != size * size:
        raise ValueError(f"a {size} x {size} canvas has {size * size} pixels, got {weights.size} intensities")
    if n < 1:
        raise ValueError(f"n, the particles, must be a positive int, got {n}")
    cumulative = np.cumsum(weights)
    draws = np.array(uniforms(seed, 3 * n)).reshape(n, 3)
    pixels = np.searchsorted(cumulative, draws[:, 0] * float(cumulative[-1]), side="right")
    rows, cols = pixels // size, pixels % size
    return np.stack([2 * (cols + draws[:, 1]) / size - 1, 2 * (rows + draws[:, 2]) / size - 1], axis=1)


def encode_canvases(images: np.ndarray, counts: Sequence[int], boxes: np.ndarray, n: int, canvas: int
                    ) -> list[dict[str, Any]]:
    r"""The canvases ``images [M, H, H]`` as the page carries them, their arguments checked (``n`` in
    1..:data:`MAX_PARTICLES`, ``canvas`` an index of ``images``): per canvas its integer intensities
    ``levels`` :math:`= \operatorname{round}(\text{LEVELS} \cdot \operatorname{clip}(I, 0, 1))` (row by row),
    its digit ``count`` and its true pixel ``boxes`` to two decimals."""
    images = np.asarray(images, dtype=np.float64)
    if images.ndim != 3 or images.shape[1] != images.shape[2]:
        raise ValueError(f"images must be square canvases [M, H, H], got shape {images.shape}")
    if not 1 <= n <= MAX_PARTICLES or not 0 <= canvas < len(images):
        raise ValueError(f"need 1 <= n <= {MAX_PARTICLES} and 0 <= canvas < {len(images)}, got n={n}, canvas={canvas}")
    return [{"levels": np.rint(np.clip(image, 0, 1) * LEVELS).astype(int).ravel().tolist(), "count": int(count),
             "boxes": [[round(float(v), 2) for v in b] for b in np.asarray(box)[:int(count)]]}
            for image, count, box in zip(images, counts, boxes)]


def population_state(images: np.ndarray, counts: Sequence[int], boxes: np.ndarray, n: int, canvas: int, seed: int,
                     trained_particles: int | None, label: str) -> dict[str, Any]:
    """The state a page of chapter 11's populations starts from: the canvases
    (:func:`encode_canvases`, which checks the arguments), the chosen ``canvas``, ``n``, ``seed``, the
    largest ``n`` the slider offers, the training size and the label under the figure."""
    return {"size": len(images[0]), "levels": LEVELS, "canvases": encode_canvases(images, counts, boxes, n, canvas),
            "canvas": canvas, "n": n, "seed": seed, "max_n": MAX_PARTICLES, "trained": trained_particles, "label": label}


def canvas_words(size: int, count: int) -> str:
    """How an alt text names a canvas: its size and its digits."""
    return f"A {size} by {size} canvas with {count} handwritten digit{'s' if count != 1 else ''} in white on black"


def population(state: dict[str, Any]) -> tuple[dict[str, Any], np.ndarray]:
    """The chosen canvas of ``state`` and the population the page draws on it
    (:func:`sample_population` at the page's ``Math.round`` of ``n``)."""
    canvas = state["canvases"][int(state["canvas"])]
    n = int(math.floor(float(state["n"]) + 0.5))  # the page's Math.round of the slider's value
    return canvas, sample_population(canvas["levels"], state["size"], n, int(state["seed"]))


def _share_in_box(levels: Sequence[int], size: int, box: tuple[float, float, float, float]) -> float:
    """The share of the canvas density inside ``box`` ``(x0, y0, x1, y1)`` of the normalised frame,
    pixels counted by the fraction of their area inside it."""
    weights = density_weights(levels).reshape(size, size).astype(np.float64)
    x0, y0, x1, y1 = ((np.asarray(box) + 1) * size / 2).tolist()
    edges = np.arange(size, dtype=np.float64)
    across = np.clip(np.minimum(edges + 1, x1) - np.maximum(edges, x0), 0, None)
    down = np.clip(np.minimum(edges + 1, y1) - np.maximum(edges, y0), 0, None)
    return float(down @ weights @ across / weights.sum())


class DigitParticles(Explorable):
    """Particles sampled in proportion to a canvas's grey values, drawn over it and alone; the read-outs
    are the population's mean, its spread and the share of the density inside its bounding box."""

    module = "digit_particles"
    _esm = module_source(module)
    probes = [{"n": 7}, {"canvas": "5", "n": 137}, {"canvas": "1", "n": 613}]

    def __init__(self, images: np.ndarray, counts: Sequence[int], boxes: np.ndarray, n: int = 20, canvas: int = 0,
                 seed: int = 1, trained_particles: int | None = None, label: str = "") -> None:
        state = population_state(images, counts, boxes, n, canvas, seed, trained_particles, label)
        super().__init__(state, alt=f"{canvas_words(state['size'], int(counts[canvas]))}, "
                                    f"{n} orange particles sampled where the digits are bright, "
                                    f"their bounding box dashed and their mean marked with a cross; beside it the "
                                    f"particles alone in the square from -1 to 1.")

    @classmethod
    def example(cls) -> "DigitParticles":
        from setfuncs.experiments.attention.canvas import make_canvases

        canvases = make_canvases(6, seed=2)
        return cls(canvases.images, canvases.counts, canvases.boxes, trained_particles=200)

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        canvas, particles = population(state)
        mean = particles.mean(axis=0)
        low, high = particles.min(axis=0), particles.max(axis=0)
        return {"mean_x": float(mean[0]), "mean_y": float(mean[1]),
                "spread": float(np.sqrt(np.mean(np.sum((particles - mean) ** 2, axis=1)))),
                "in_box": _share_in_box(canvas["levels"], state["size"], (low[0], low[1], high[0], high[1]))}

    def still(self) -> Figure:
        state = self.state
        canvas, particles = population(state)
        size, n = state["size"], len(particles)
        image = np.asarray(canvas["levels"], dtype=float).reshape(size, size) / LEVELS
        values = self.readouts(state)
        fig, (left, right) = plt.subplots(1, 2, figsize=(7.2, 3.7), layout="constrained")
        dot = 14 if n <= 200 else 5
        pixels = (particles + 1) * size / 2
        left.imshow(image, cmap="gray", vmin=0, vmax=1, extent=(0, size, size, 0))
        for x0, y0, x1, y1 in canvas["boxes"]:
            left.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=1.2, color="tab:green"))
        low, high = pixels.min(axis=0), pixels.max(axis=0)
        left.add_patch(plt.Rectangle(tuple(low), *(high - low), fill=False, lw=1.2, ls="--", color="#1f77b4"))
        left.scatter(*pixels.T, s=dot, color="tab:orange", linewidths=0)
        left.plot(*((particles.mean(axis=0) + 1) * size / 2), "+", color="#1f77b4", ms=14, mew=2.5)
        left.set(xlim=(0, size), ylim=(size, 0), xticks=[], yticks=[])
        left.set_title(f"canvas {int(state['canvas']) + 1}: {canvas['count']} digit{'' if canvas['count'] == 1 else 's'}, "
                       f"n = {n} particles", fontsize=10)
        right.scatter(*particles.T, s=dot, color="tab:orange", linewidths=0)
        right.plot(*particles.mean(axis=0), "+", color="#1f77b4", ms=14, mew=2.5)
        right.set(xlim=(-1, 1), ylim=(1, -1), aspect="equal", xticks=[-1, 0, 1], yticks=[-1, 0, 1])
        right.tick_params(labelsize=9)
        right.set_title("the population alone (what the localiser reads)", fontsize=10)
        fig.supxlabel(f"mean ({values['mean_x']:+.2f}, {values['mean_y']:+.2f}), spread {values['spread']:.2f}, "
                      f"{values['in_box']:.0%} of the density inside the dashed bounding box", fontsize=9)
        return fig
