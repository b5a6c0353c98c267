r"""Figure 5: bounding-box samples on test canvases (4a) and test ELBO against population size (4b)."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .air import AIR
from .particles import sample_particles
from .transformer import where_to_boxes

__all__ = ["box_samples", "plot_boxes", "plot_elbo_curves"]


def box_samples(model: AIR, canvases: np.ndarray, n: int | None, samples: int, seed: int) -> list[list[np.ndarray]]:
    """For every canvas, ``samples`` arrays of present boxes ``[k, 4]`` (pixels), each from a fresh
    population of ``n`` particles (set localisers) and fresh latents."""
    images = torch.as_tensor(canvases, dtype=torch.float32)
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    out: list[list[np.ndarray]] = [[] for _ in range(len(images))]
    for _ in range(samples):
        particles = sample_particles(images, n, generator) if model.reads_particles else None
        where, present = model.sample(images, particles, generator)
        boxes = where_to_boxes(where, model.canvas_size).numpy()
        for m in range(len(images)):
            out[m].append(boxes[m][present[m].numpy()])
    return out


def plot_boxes(model: AIR, canvases: np.ndarray, sizes: Sequence[int | None], samples: int = 8, seed: int = 0,
               show_particles: bool = True) -> Figure:
    """Figure 5a: a grid of canvases (rows) by population sizes (columns), each with ``samples``
    sampled bounding boxes (step 1 red, 2 cyan, 3 yellow) and one population's particles."""
    colours = ("tab:red", "tab:cyan", "gold")
    fig, axes = plt.subplots(len(canvases), len(sizes), figsize=(1.8 * len(sizes), 1.8 * len(canvases)),
                             squeeze=False)
    for j, n in enumerate(sizes):
        drawn = box_samples(model, canvases, n, samples, seed)
        particles = (sample_particles(torch.as_tensor(canvases), n, torch.Generator().manual_seed(seed)).numpy()
                     if model.reads_particles and show_particles else None)
        for i, canvas in enumerate(canvases):
            ax = axes[i, j]
            h = canvas.shape[-1]
            ax.imshow(canvas, cmap="gray", vmin=0, vmax=1, extent=(0, h, h, 0))
            if particles is not None:
                # a raster inside the SVG, like the canvas under it: thousands of vector dots are slow to draw
                ax.scatter((particles[i, :, 0] + 1) * h / 2, (particles[i, :, 1] + 1) * h / 2, s=1.5,
                           color="tab:orange", alpha=0.6, linewidths=0, rasterized=True)
            for boxes in drawn[i]:
                for k, (x0, y0, x1, y1) in enumerate(boxes):
                    ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=0.8, alpha=0.6,
                                           color=colours[k % len(colours)]))
            ax.set_xlim(0, h)
            ax.set_ylim(h, 0)
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title("image" if n is None else f"n = {n}", fontsize="medium")
    fig.tight_layout()
    return fig


def plot_elbo_curves(curves: dict, ax: plt.Axes | None = None) -> Figure:
    """Figure 5b from :func:`~setfuncs.experiments.attention.table.elbo_curves`: mean test ELBO
    against population size (log axis) for every set aggregation (learnable ones solid, plain
    dashed), a dashed vertical line at the training size and a dashed horizontal line at the image
    localiser's ELBO. Drawn on ``ax``, it leaves the figure's layout to the caller; on a figure of its
    own, it lays that figure out."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6, 3.6))
    else:
        fig = ax.figure
    for spec, values in curves["curves"].items():
        points = [(n, v) for n, v in zip(curves["sizes"], values) if v is not None]
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, ys, marker="o", ms=3, ls="-" if spec[:2] in ("q-", "r-") else "--", label=spec)
    ax.axvline(curves["training_size"], color="gray", ls="--", lw=1, label="training size")
    if curves.get("image") is not None:
        ax.axhline(curves["image"], color="black", ls="--", lw=1, label="image localiser")
    ax.set_xscale("log")
    ax.set_xlabel("population size n (particles)")
    ax.set_ylabel("test ELBO (nats per canvas)")
    ax.legend(fontsize="medium", ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    if own:
        fig.tight_layout()
    return fig
