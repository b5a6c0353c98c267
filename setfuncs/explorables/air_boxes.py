r"""Chapter 11's explorable: the boxes a trained set-based AIR infers from the reader's population.

The reader picks one of the chapter's test canvases and a population size :math:`n` from 1 to 1,000;
the page samples the population exactly as :mod:`~setfuncs.explorables.digit_particles` does (the
same mulberry32 draws, :func:`~setfuncs.explorables.digit_particles.sample_population`) and runs the
trained model's inference network on the canvas and those particles, in the browser
(``js/air.js``, from :func:`~setfuncs.explorables.air_weights.export_air`), by its means, without
noise (:meth:`AIR.infer <setfuncs.experiments.attention.air.AIR.infer>` with ``noise=False``):
for :math:`K` steps, each step's box :math:`z^\text{where}_i = (s, t_x, t_y)`, the pixel box
:math:`(c_x \mp sH/2, c_y \mp sH/2)` with :math:`c = (t + 1) H / 2`
(:func:`~setfuncs.experiments.attention.transformer.where_to_boxes`), and its presence probability
:math:`\sigma(\ell_i)`; then the count's distribution

.. math::
    q(N = k) = \prod_{i \le k} \sigma(\ell_i) \cdot \big(1 - \sigma(\ell_{k+1})\big)^{[k < K]}

(:meth:`AIR.count_log_probs <setfuncs.experiments.attention.air.AIR.count_log_probs>`) and the
model's count :math:`\hat N = \arg\max_k q(N = k)`. The first :math:`\hat N` boxes are drawn solid,
the others faint and dashed.

The read-outs are ``count`` (:math:`\hat N`), ``q0`` .. ``q<K>``, and for every step :math:`i = 1..K`
``present<i>`` (:math:`\sigma(\ell_i)`), ``box<i>_s``, ``box<i>_x``, ``box<i>_y``
(:math:`z^\text{where}_i`, in the normalised frame :math:`[-1, 1]^2`, :math:`y` down). Python computes
them with the torch model the export describes (:func:`~setfuncs.explorables.air_weights.load_air`)
in float32, the page in float64: they agree to a few :math:`10^{-6}` (``tests/test_explorable_air_boxes.py``),
well within :attr:`AirBoxes.tolerance`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from .air_weights import export_air, load_air
from .base import Explorable
from .digit_particles import canvas_words, population, population_state
from .esm import module_source

if TYPE_CHECKING:
    from setfuncs.experiments.attention.air import AIR

__all__ = ["AirBoxes", "STEP_COLOURS", "infer_boxes"]

#: Each step's colour, bright on the black canvas, in the page and in the still frame (js/air_boxes.js has the same).
STEP_COLOURS = ["#4da6ff", "#ff5c5c", "#c08cff", "#3fe0d0", "#ffd24d"]


def infer_boxes(model: "AIR", image: np.ndarray, particles: np.ndarray) -> dict[str, np.ndarray]:
    r"""What the page computes for one canvas ``image [H, H]`` and its ``particles [n, 2]``, in float32:
    ``present`` :math:`\sigma(\ell_i)` ``[K]``, ``where`` :math:`z^\text{where}_i` ``[K, 3]``, ``boxes``
    (pixels, ``[K, 4]``), ``q`` :math:`q(N = k)` ``[K + 1]``."""
    from setfuncs.experiments.attention.transformer import where_to_boxes

    canvas = torch.as_tensor(np.asarray(image), dtype=torch.float32)[None]
    with torch.no_grad():
        inference = model.infer(canvas, torch.as_tensor(np.asarray(particles), dtype=torch.float32)[None], noise=False)
        q = model.count_log_probs(inference.presence_logits).exp()
    return {"present": inference.presence_logits.sigmoid()[0].double().numpy(),
            "where": inference.where[0].double().numpy(),
            "boxes": where_to_boxes(inference.where, model.canvas_size)[0].double().numpy(),
            "q": q[0].double().numpy()}


def _inferred(state: dict[str, Any]) -> tuple[dict[str, Any], np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The chosen canvas, its image, the population and what the model infers from them."""
    canvas, particles = population(state)
    size = state["size"]
    image = np.asarray(canvas["levels"], dtype=np.float64).reshape(size, size) / state["levels"]
    return canvas, image, particles, infer_boxes(load_air(state["model"]), image, particles)


class AirBoxes(Explorable):
    """A test canvas, the reader's population of its particles and the boxes a trained set-based AIR
    infers from them by its means, each step's presence probability, and the count's distribution
    :math:`q(N = k)` with the most probable count (module docstring)."""

    module = "air_boxes"
    _esm = module_source(module)
    probes = [{"n": 7}, {"canvas": "3", "n": 137}, {"canvas": "5", "n": 613}]
    tolerance = 1e-4

    def __init__(self, images: np.ndarray, counts: Sequence[int], boxes: np.ndarray, model: "AIR", n: int = 200,
                 canvas: int = 0, seed: int = 1, trained_particles: int | None = None, precision: str = "float32",
                 label: str = "") -> None:
        state = population_state(images, counts, boxes, n, canvas, seed, trained_particles, label)
        size, exported = state["size"], export_air(model, precision)
        if exported["canvas_size"] != size:
            raise ValueError(f"images: the model reads {exported['canvas_size']} x {exported['canvas_size']} "
                             f"canvases, got {size} x {size}; give canvases of the geometry it was trained on")
        state["model"] = exported
        count, steps = int(counts[canvas]), exported["max_steps"]
        found = int(self.readouts(state)["count"])
        solid = {0: "all dashed", steps: "all solid"}.get(found, f"the first {found} solid, the rest dashed")
        truth = ", true boxes in green" if count else ""
        super().__init__(state, alt=f"{canvas_words(size, count)}{truth}, {n} orange particles sampled from it, "
                                    f"and the {steps} boxes the set-based AIR ({model.spec!r} localiser) infers from "
                                    f"them, one colour a step, {solid}; beside it a bar chart of the model's count "
                                    f"probabilities q(N = k) for k = 0 to {steps}, the most probable count, "
                                    f"{found}, outlined.")

    @classmethod
    def example(cls) -> "AirBoxes":
        from setfuncs.experiments.attention.air import AIR
        from setfuncs.experiments.attention.canvas import make_canvases

        canvases = make_canvases(6, seed=2)
        torch.manual_seed(0)
        model = AIR("mean", canvas_size=canvases.images.shape[1], glimpse_size=6, what_features=4, hidden=16,
                    set_hidden=8).eval()
        with torch.no_grad():  # wider than at initialisation, where the boxes barely move with the population
            for weight in model.localiser.parameters():
                weight.normal_(0, 0.5)
        return cls(canvases.images, canvases.counts, canvases.boxes, model, n=20, trained_particles=200)

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        _, _, _, found = _inferred(state)
        values = {"count": float(np.argmax(found["q"]))} | {f"q{k}": float(v) for k, v in enumerate(found["q"])}
        for i, (p, (s, x, y)) in enumerate(zip(found["present"], found["where"]), start=1):
            values |= {f"present{i}": float(p), f"box{i}_s": float(s), f"box{i}_x": float(x), f"box{i}_y": float(y)}
        return values

    def still(self) -> Figure:
        state = self.state
        canvas, image, particles, found = _inferred(state)
        size, n, count = state["size"], len(particles), int(np.argmax(found["q"]))
        fig, (left, right) = plt.subplots(1, 2, figsize=(7.2, 3.7), width_ratios=(1.1, 1), layout="constrained")
        left.imshow(image, cmap="gray", vmin=0, vmax=1, extent=(0, size, size, 0))
        for x0, y0, x1, y1 in canvas["boxes"]:
            left.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=1.0, color="tab:green"))
        left.scatter(*((particles + 1) * size / 2).T, s=10 if n <= 200 else 4, color="tab:orange", linewidths=0)
        for i, ((x0, y0, x1, y1), p) in enumerate(zip(found["boxes"], found["present"])):
            counted = i < count
            colour = STEP_COLOURS[i % len(STEP_COLOURS)]
            left.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=2.2 if counted else 1.4,
                                         ls="-" if counted else "--", alpha=1 if counted else 0.8, color=colour))
            left.text(x0 + size / 80, y0 + size / 80, str(i + 1), color=colour, fontsize=9, va="top",
                      alpha=1 if counted else 0.7, fontweight="bold" if counted else "normal", clip_on=True)
            left.plot([], [], color=colour, ls="-" if counted else "--", lw=2, label=f"step {i + 1}: σ(ℓ) = {p:.2f}")
        left.set(xlim=(0, size), ylim=(size, 0), xticks=[], yticks=[])
        left.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=2, frameon=False)
        left.set_title(f"canvas {int(state['canvas']) + 1}: {canvas['count']} digit{'' if canvas['count'] == 1 else 's'}, "
                       f"n = {n} particles", fontsize=10)
        ks = np.arange(len(found["q"]))
        right.bar(ks, found["q"], color=["#1f77b4" if k == count else "#aec7e8" for k in ks],
                  edgecolor=["black" if k == count else "none" for k in ks], linewidth=1.2)
        for k, v in zip(ks, found["q"]):
            right.text(k, v + 0.02, f"{v:.2f}", ha="center", fontsize=9)
        right.set(xticks=ks, ylim=(0, 1.1), xlabel="count N = k", ylabel="q(N = k)")
        right.tick_params(labelsize=9)
        right.set_title(f"the model counts {count} (outlined)", fontsize=10)
        return fig
