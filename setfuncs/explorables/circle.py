r"""Chapter 8's explorable: a population the reader edits, its minimal enclosing circle and the circles
trained Deep Sets predict for it.

The page draws a population of particles from a seed, the way the experiment draws its populations
(:mod:`setfuncs.experiments.circle.data`: a Gaussian mixture of one to three components drawn anew,
here from :func:`~setfuncs.explorables.rng.mulberry32` so that the browser and Python draw the same
particles), at any size :math:`N`; the reader drags particles, adds and removes them. On every change
it computes the exact minimal enclosing circle :math:`(c_x, c_y, r)` by Welzl's algorithm
(``js/welzl.js``, the move-to-front form of :mod:`setfuncs.experiments.circle.welzl`) and rings its
support, and runs each model's forward pass (``js/deepset.js``) on the particles as they are (the
experiment feeds raw coordinates and trains on raw targets: no normalisation), reading out its centre,
radius and squared error :math:`\lVert \hat c - c \rVert^2 + (\hat r - r)^2`, the experiment's test
MSE on this one population (:func:`~setfuncs.experiments.circle.sweep.circle_errors`).

:meth:`EnclosingCircle.readouts` computes the same numbers with the library: the circle with
:func:`~setfuncs.experiments.circle.welzl.min_enclosing_circle`, the predictions with the torch model
:func:`~setfuncs.explorables.weights.load_model` builds from the page's weights.

**The weights travel in half precision.** A recurrent model of the chapter's ``quick`` budget has
54,147 weights: :func:`~setfuncs.explorables.weights.export_model` ``(model, "float16")`` stores
them in 148 KB of JSON (two bytes a weight, about three significant digits; 292 KB in float32), and
the page's whole state with the plain model is about 158 KB (a ``full`` budget's models, at width
128, are about 16 times larger). The rounding moves the trained models' predictions by about
:math:`10^{-3}` (radii are about 2, their test errors 0.1 to 0.2); the page shows those rounded
models, in the browser and in :meth:`~EnclosingCircle.readouts`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, NamedTuple, Sequence

import numpy as np
import torch
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from ..model import DeepSet
from .base import Explorable
from .esm import module_source
from .rng import mulberry32

__all__ = ["Predictor", "EnclosingCircle", "population", "view"]

#: Largest population size and seed of the page's sliders.
MAX_SIZE, MAX_SEED = 100, 999
#: Smallest half-width of the view (a population of one particle still shows a square of this size).
MIN_HALF = 2.5


class Predictor(NamedTuple):
    """A model the explorable shows: ``key`` names its read-outs (``<key>_cx``), ``label`` its row,
    ``colour`` (any matplotlib colour) its dashed circle."""

    key: str
    label: str
    model: DeepSet
    colour: str


def mixture() -> dict[str, Any]:
    """The experiment's mixture constants (:mod:`setfuncs.experiments.circle.data`), as the page reads them."""
    from ..experiments.circle import data

    return {"max_components": data.MAX_COMPONENTS, "mean_std": data.MEAN_STD, "std_range": list(data.STD_RANGE)}


def population(seed: int, size: int, mix: dict[str, Any] | None = None) -> list[list[float]]:
    r"""``size`` particles ``[x, y]`` from :func:`~setfuncs.explorables.rng.mulberry32` ``(seed)`` as
    ``circlePopulation`` draws them in ``js/circle_data.js``: :math:`K = 1 + \lfloor 3u \rfloor`
    components, each a mean :math:`1.5 (z_1, z_2)`, a standard deviation :math:`0.2 + 0.8u` and a
    weight :math:`-\ln(1 - u)`; each particle picks a component with probability proportional to its
    weight and is its mean plus its standard deviation times :math:`(z_1, z_2)`. Normal numbers are
    :math:`z = \sqrt{-2 \ln(1 - u_1)} \cos(2\pi u_2)` (Box-Muller). The mixture of
    :func:`~setfuncs.experiments.circle.data.sample_populations`, drawn with another generator."""
    mix = mixture() if mix is None else mix
    stream = mulberry32(int(seed))

    def normal() -> float:
        u1 = next(stream)
        u2 = next(stream)
        return math.sqrt(-2 * math.log(1 - u1)) * math.cos(2 * math.pi * u2)

    count = 1 + math.floor(mix["max_components"] * next(stream))
    low, high = mix["std_range"]
    components, total = [], 0.0
    for _ in range(count):
        mean = (mix["mean_std"] * normal(), mix["mean_std"] * normal())
        std = low + (high - low) * next(stream)
        weight = -math.log1p(-next(stream))
        total += weight
        components.append((mean, std, weight))
    particles = []
    for _ in range(int(size)):
        pick, k = next(stream) * total, 0
        while k < count - 1 and pick >= components[k][2]:
            pick -= components[k][2]
            k += 1
        (mx, my), std, _ = components[k]
        x = mx + std * normal()
        y = my + std * normal()
        particles.append([x, y])
    return particles


def view(center: Sequence[float], radius: float, min_half: float = MIN_HALF) -> tuple[list[float], list[float]]:
    """The square the page shows around a circle, as ``circleView`` in ``js/circle_data.js``: half-width
    :math:`\\max(\\text{min\\_half}, 1.35 r)` rounded up to a half, centred on the centre rounded to a half."""
    half = math.ceil(2 * max(min_half, 1.35 * radius)) / 2
    cx, cy = (_round_half(2 * c) / 2 for c in center)
    return [cx - half, cx + half], [cy - half, cy + half]


def _round_half(value: float) -> float:
    """JavaScript's ``Math.round``: halves round up (towards +infinity)."""
    return math.floor(value + 0.5)


class EnclosingCircle(Explorable):
    """A population (drawn from ``seed`` at ``size``, then edited by the reader), its minimal enclosing
    circle and the circles the ``predictors`` predict; read-outs ``cx, cy, r`` and per predictor
    ``<key>_cx, <key>_cy, <key>_r, <key>_error``."""

    module = "circle"
    _esm = module_source(module)
    probes = [{"size": 37}, {"seed": 731}, {"size": 6, "seed": 58}]
    #: The page computes in float64 what torch computes in float32.
    tolerance = 1e-4

    def __init__(self, predictors: Sequence[Predictor], size: int | None = None, seed: int = 4) -> None:
        from ..experiments.circle.data import POPULATION_SIZE
        from .weights import export_model

        size = POPULATION_SIZE if size is None else size
        if not 1 <= size <= MAX_SIZE or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"size must lie in [1, {MAX_SIZE}] and seed in [0, {MAX_SEED}] (the sliders' ranges), "
                             f"got size={size}, seed={seed}")
        keys = [p.key for p in predictors]
        if len(set(keys)) != len(keys) or not all(k.isidentifier() for k in keys):
            raise ValueError(f"the predictors' keys name their read-outs: distinct identifiers, got {keys}")
        models = [{"key": p.key, "label": p.label, "colour": to_hex(p.colour), "colour_name": _colour_name(p.colour),
                   "weights": export_model(p.model, "float16")} for p in predictors]
        state = {"seed": seed, "size": size, "population": None, "mixture": mixture(), "min_half": MIN_HALF,
                 "max_size": MAX_SIZE, "max_seed": MAX_SEED, "models": models}
        shown = self.readouts(state)
        predicted = "; ".join(f"{m['label']} ({m['colour_name']}): centre ({shown[m['key'] + '_cx']:.2f}, "
                              f"{shown[m['key'] + '_cy']:.2f}), radius {shown[m['key'] + '_r']:.2f}" for m in models)
        super().__init__(state, alt=f"A population of {size} particles (seed {seed}) in the plane with its minimal "
                                    f"enclosing circle in black, centre ({shown['cx']:.2f}, {shown['cy']:.2f}) and "
                                    f"radius {shown['r']:.2f}, the particles that fix it ringed and the sample mean "
                                    f"as a blue cross; dashed, the circles the trained models predict: {predicted}.")

    @classmethod
    def example(cls) -> "EnclosingCircle":
        """Small seeded untrained models of the chapter's two live architectures (width 8)."""
        from ..experiments.circle.budget import QUICK
        from ..experiments.circle.data import target_mean
        from ..experiments.sweeps import make_deep_set

        predictors = []
        for k, (setting, colour) in enumerate((("plain/plain", "tab:orange"), ("recurrent/recurrent", "tab:green"))):
            torch.manual_seed(k)
            model = make_deep_set(setting, "max", "max", replace(QUICK, hidden=8), target_mean()).eval()
            predictors.append(Predictor(setting.split("/")[0], f"{setting} (untrained)", model, colour))
        return cls(predictors)

    @classmethod
    def solve(cls, state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, float, dict[str, np.ndarray]]:
        """The particles ``[N, 2]`` of ``state``, their circle's centre and radius
        (:func:`~setfuncs.experiments.circle.welzl.min_enclosing_circle`) and every model's output
        ``(c_x, c_y, r)`` by key (the torch model of :func:`~setfuncs.explorables.weights.load_model`)."""
        from ..experiments.circle.welzl import min_enclosing_circle
        from .weights import load_model

        points = state["population"]
        if points is None:
            points = population(round(state["seed"]), round(state["size"]), state["mixture"])
        points = np.asarray(points, dtype=np.float64)
        center, radius = min_enclosing_circle(points)
        outputs = {}
        for entry in state["models"]:
            model = load_model(entry["weights"])
            dtype = next(model.parameters()).dtype
            with torch.no_grad():
                outputs[entry["key"]] = model(torch.as_tensor(points, dtype=dtype)[None])[0].double().numpy()
        return points, center, radius, outputs

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        from ..experiments.circle.sweep import circle_errors

        _, center, radius, outputs = cls.solve(state)
        shown = {"cx": float(center[0]), "cy": float(center[1]), "r": float(radius)}
        target = torch.tensor([[center[0], center[1], radius]], dtype=torch.float64)
        for key, (cx, cy, r) in outputs.items():
            error = circle_errors(torch.tensor([[cx, cy, r]], dtype=torch.float64), target)["mse"]
            shown.update({f"{key}_cx": float(cx), f"{key}_cy": float(cy), f"{key}_r": float(r), f"{key}_error": error})
        return shown

    def still(self) -> Figure:
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.patches import Circle as CirclePatch

        from ..experiments.circle.draw import draw_population

        points, center, radius, outputs = self.solve(self.state)
        shown = self.readouts(self.state)
        fig, (ax, side) = plt.subplots(1, 2, figsize=(7.4, 3.8), width_ratios=(1, 1.1), layout="constrained")
        draw_population(ax, points, center, radius)
        ax.plot(*center, "o", color="black", markersize=3)
        handles = [Line2D([], [], color="black", label=f"exact circle (Welzl):\ncentre ({shown['cx']:.3g}, "
                                                       f"{shown['cy']:.3g}), radius {shown['r']:.3g}"),
                   Line2D([], [], ls="", marker="o", markersize=8, mfc="none", mec="black",
                          label="its support (the particles that fix it)"),
                   Line2D([], [], ls="", marker="x", markersize=8, mew=2, color="tab:blue", label="sample mean")]
        for entry in self.state["models"]:
            cx, cy, r = outputs[entry["key"]]
            ax.add_patch(CirclePatch((cx, cy), max(r, 0.0), fill=False, color=entry["colour"], lw=1.8, ls="--"))
            ax.plot(cx, cy, "+", color=entry["colour"], markersize=9, mew=2)
            key = entry["key"]
            handles.append(Line2D([], [], color=entry["colour"], ls="--",
                                  label=f"{entry['label']}:\ncentre ({shown[key + '_cx']:.3g}, {shown[key + '_cy']:.3g}), "
                                        f"radius {shown[key + '_r']:.3g},\nsquared error {shown[key + '_error']:.3g}"))
        xlim, ylim = view(center, radius, self.state["min_half"])
        ax.set(xlim=xlim, ylim=ylim, xticks=np.linspace(*xlim, 5), yticks=np.linspace(*ylim, 5))
        ax.tick_params(labelsize=9)
        ax.set_title(f"N = {len(points)} particles, seed {self.state['seed']}", fontsize=10)
        side.axis("off")
        side.legend(handles=handles, loc="center left", fontsize=9, frameon=False, handlelength=2.2, labelspacing=1.0)
        return fig


def _colour_name(colour: str) -> str:
    """A colour's name for alt text: ``"tab:orange"`` -> ``"orange"``."""
    return colour.removeprefix("tab:") if isinstance(colour, str) and not colour.startswith("#") else to_hex(colour)
