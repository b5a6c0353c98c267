r"""Chapter 7's explorable: Deep Sets trained at one population size, run at any size the reader picks.

The chapter's task: :math:`N` points in the plane from a round Gaussian :math:`\mathcal N(c, \sigma^2 I)`,
centre :math:`c` uniform in :math:`[-2, 2]^2`; a model estimates :math:`\sigma`. The reader picks
:math:`N` (2 to 500), :math:`\sigma` and a seed; the page draws the population (mulberry32 and
Box-Muller, the same numbers here), runs each trained model on it (``js/deepset.js``) and shows its
estimate :math:`\hat\sigma` beside the sample standard deviation and the true :math:`\sigma`, and, for
the same draw, each estimate against :math:`N` (the first :math:`n` points of the draw, for every
:math:`n` on a grid), so that the aggregations that keep their scale off the training size stand
out from those that drift.
"""

from __future__ import annotations

import math
import re
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from ..model import DeepSet
from .base import Explorable
from .esm import module_source
from .rng import mulberry32
from .weights import export_model, load_model

__all__ = ["PopulationSizes", "gaussian_population", "sample_std", "N_RANGE", "SIGMA_RANGE"]

#: The population sizes and the spreads the sliders span.
N_RANGE, SIGMA_RANGE = (2, 500), (0.2, 2.5)
#: The spreads the chapter trains on, and the half-width of the square of centres.
TRAIN_SIGMA, CENTRE = (0.5, 2.0), 2.0
#: The population shown first.
DEFAULT_SEED, DEFAULT_SIGMA = 7, 1.2
#: The plot of the population shows [-VIEW, VIEW]^2; the plot of the estimates sigma-hat in [0, TOP].
VIEW, TOP = 8.0, 4.0
#: The chapter's colours of the aggregations (matplotlib's default cycle in the chapter's order).
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def gaussian_population(seed: int, n: int, sigma: float) -> list[list[float]]:
    """``n`` points of :math:`\\mathcal N(c, \\sigma^2 I)` drawn from ``seed`` (as ``szPopulation`` in
    the page): uniforms u from mulberry32, the centre ``c = 4u - 2`` per coordinate, then per point a
    Box-Muller pair ``r = sqrt(-2 ln(1 - u1))``, ``theta = 2 pi u2``: ``c + sigma r (cos, sin)``. The
    first ``n`` points of a larger draw are the draw of ``n``: a larger population adds points."""
    u = mulberry32(int(seed))
    centre = [2 * CENTRE * next(u) - CENTRE, 2 * CENTRE * next(u) - CENTRE]
    points = []
    for _ in range(n):
        r, theta = math.sqrt(-2 * math.log(1 - next(u))), 2 * math.pi * next(u)
        points.append([centre[0] + sigma * r * math.cos(theta), centre[1] + sigma * r * math.sin(theta)])
    return points


def sample_std(x: torch.Tensor) -> torch.Tensor:
    """The chapter's classical estimate of populations ``x: [B, N, 2]``: the sample variance (with
    Bessel's correction) of each coordinate, averaged over both, its square root: ``[B]``."""
    return x.var(dim=1).mean(dim=-1).sqrt()


def size(state: dict[str, Any]) -> int:
    """The population size a state shows: its ``n`` rounded (half up, as the page's Math.round)."""
    return min(max(math.floor(float(state["n"]) + 0.5), N_RANGE[0]), N_RANGE[1])


def grid() -> list[int]:
    """The sizes at which the page draws each estimate against N: about 40 on a log scale."""
    values = np.rint(np.logspace(math.log10(N_RANGE[0]), math.log10(N_RANGE[1]), 40)).astype(int)
    return sorted(set(values.tolist()))


class PopulationSizes(Explorable):
    """Trained estimators of :math:`\\sigma` on one Gaussian population of any size.

    Args:
        models: key -> trained :class:`~setfuncs.model.DeepSet` (2 features in, 1 out); the key (e.g.
            the aggregation, ``"lme"``) names its read-out ``hat_<key>``.
        train_size: the population size the models were trained at (marked in the page).
        n, sigma, seed: the population shown first (:func:`gaussian_population`).
        precision: of the exported weights (:func:`~setfuncs.explorables.weights.export_model`);
            float16 keeps a page light.
    """

    module = "population_sizes"
    _esm = module_source(module)
    probes = [{"n": 150}, {"sigma": 0.7, "n": 4}, {"seed": 42, "n": 480}]
    tolerance = 1e-4

    def __init__(self, models: dict[str, DeepSet], train_size: int = 20, n: int | None = None,
                 sigma: float = DEFAULT_SIGMA, seed: int = DEFAULT_SEED, precision: str = "float16") -> None:
        if not models or len(models) > len(COLOURS):
            raise ValueError(f"PopulationSizes shows 1 to {len(COLOURS)} models, got {len(models)}")
        for key, model in models.items():
            if not re.fullmatch(r"[a-z0-9-]+", key):
                raise ValueError(f"model keys name read-outs: lower-case letters, digits and '-', got {key!r}")
            if model.in_features != 2 or model.out_features != 1:
                raise ValueError(f"{key}: the task maps 2-D particles to one number, sigma; the model maps "
                                 f"{model.in_features} to {model.out_features}")
        n = train_size if n is None else n
        if not N_RANGE[0] <= n <= N_RANGE[1] or not SIGMA_RANGE[0] <= sigma <= SIGMA_RANGE[1]:
            raise ValueError(f"n must lie in {N_RANGE} and sigma in {SIGMA_RANGE} (the sliders' ranges), "
                             f"got {n} and {sigma}")
        keys = list(models)
        super().__init__(
            {"models": {key: export_model(model, precision) for key, model in models.items()}, "keys": keys,
             "colours": dict(zip(keys, COLOURS)), "n": n, "sigma": sigma, "seed": seed,
             "train_size": train_size, "train_sigma": list(TRAIN_SIGMA), "grid": grid(),
             "n_range": list(N_RANGE), "sigma_range": list(SIGMA_RANGE), "view": VIEW, "top": TOP},
            alt=f"Left, a scatter plot of {n} points drawn from a round Gaussian of standard deviation "
                f"{sigma:g}, a dashed circle of radius sigma around its centre. Right, a line plot with a "
                f"logarithmic axis of the population size from 2 to 500: the estimate of sigma of each of "
                f"the models {', '.join(keys)} (trained at {train_size} points, a dashed vertical line) "
                f"and the sample standard deviation (dotted), on the first N points of this population, "
                f"with the true sigma as a horizontal line.")

    @classmethod
    def example(cls) -> "PopulationSizes":
        """Untrained, seeded final-only models of the chapter's (16 units instead of 32)."""
        torch.manual_seed(0)
        return cls({agg: DeepSet(2, 1, spec=f"{agg}/{agg}", hidden=16, equivariant_layers=0).eval()
                    for agg in ("mean", "sum", "lse", "lme", "r-sum")})

    @classmethod
    def estimates(cls, state: dict[str, Any], sizes: list[int]) -> dict[str, np.ndarray]:
        """Each model's estimate, and ``sample std``'s, on the first n points of the state's draw
        for each n in ``sizes``, in torch."""
        drawn = gaussian_population(state["seed"], max(sizes), float(state["sigma"]))
        points = torch.tensor(drawn, dtype=torch.float64)
        out = {"sample std": np.array([sample_std(points[None, :n]).item() for n in sizes])}
        for key in state["keys"]:
            model = load_model(state["models"][key])
            with torch.no_grad():
                out[key] = np.array([model(points[None, :n].float()).item() for n in sizes])
        return out

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        n = size(state)
        values = cls.estimates(state, [n])
        return {"N": float(n), "true_sigma": float(state["sigma"]), "sample_std": float(values["sample std"][0]),
                **{f"hat_{key}": float(values[key][0]) for key in state["keys"]}}

    def still(self) -> Figure:
        state = self.state
        n, sigma = size(state), float(state["sigma"])
        sizes = state["grid"]
        values = self.estimates(state, sizes)
        x = np.array(gaussian_population(state["seed"], n, sigma))
        fig, (ax, curves) = plt.subplots(1, 2, figsize=(7.5, 4.1), width_ratios=(1, 1.45), layout="constrained")
        ax.scatter(*x.T, s=8, color="#1f77b4", clip_on=True)
        u = mulberry32(int(state["seed"]))
        centre = (2 * CENTRE * next(u) - CENTRE, 2 * CENTRE * next(u) - CENTRE)
        ax.add_patch(plt.Circle(centre, sigma, fill=False, linestyle="--", color="k"))
        ticks = np.linspace(-VIEW, VIEW, 5)
        ax.set(xlim=(-VIEW, VIEW), ylim=(-VIEW, VIEW), aspect="equal", title=f"N = {n}, σ = {sigma:g}",
               xticks=ticks, yticks=ticks)
        ax.tick_params(labelsize=9)
        curves.axhspan(*TRAIN_SIGMA, color="0.93", label="σ of the training data")
        curves.axhline(sigma, color="0.4", linewidth=2, label="true σ")
        for key in state["keys"]:
            curves.plot(sizes, values[key], color=state["colours"][key], label=key)
        curves.plot(sizes, values["sample std"], "k:", label="sample std")
        curves.axvline(state["train_size"], color="gray", linestyle="--", linewidth=1)
        curves.axvline(n, color="#d35400", linewidth=1.5)
        curves.set(xscale="log", xlim=N_RANGE, ylim=(0, TOP), xlabel="population size N", ylabel="estimate σ̂",
                   xticks=[2, 5, 20, 50, 200, 500], xticklabels=["2", "5", "20", "50", "200", "500"])
        curves.tick_params(labelsize=9)
        fig.legend(*curves.get_legend_handles_labels(), loc="outside lower center", ncol=5, fontsize=9)
        return fig
