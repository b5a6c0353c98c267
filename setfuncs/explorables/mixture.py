r"""Chapter 9's explorable: a population from a two-component mixture the reader sets, the smaller
weight EM finds in it and the smaller weight each trained Deep Set reads off it.

The reader drags the two means, sets the first component's weight :math:`w_1`, the population size
:math:`N` and a seed; the page draws the population (:func:`draw_population`, the same particles in
``js/mixture_math.js``)

.. math::
    x_i = \mu_{k_i} + \sigma z_i, \quad k_i = 2 \text{ if } c_i \ge w_1 \text{ else } 1, \quad
    z_i = \sqrt{-2 \ln(1 - u_i)}\,(\cos 2\pi v_i, \sin 2\pi v_i),

with :math:`(c_i, u_i, v_i)` the next three numbers of ``mulberry32(seed)`` and :math:`\sigma` the
chapter's :data:`~setfuncs.experiments.mixture.data.COMPONENT_STD`, then runs on it

* the repository's EM (:func:`~setfuncs.experiments.mixture.em.fit_gmm`, its deterministic
  farthest-point 2-means start, tolerance and iteration limit), ported step for step to JavaScript,
  and reads off its smaller weight;
* every model's forward pass (``js/deepset.js``), whose two outputs are a Beta distribution's
  concentrations :math:`a, b` (softplus plus :math:`10^{-3}`,
  :func:`~setfuncs.experiments.mixture.loss.beta_concentrations`); its estimate is the Beta mean
  :math:`a / (a + b)`, and the page draws the whole Beta density.

:meth:`MixtureWeights.readouts` computes each number with the library: ``fit_gmm`` on the same
float32 particles (in float64, as the experiment runs it) and the torch model of the exported
weights (:func:`~setfuncs.explorables.weights.load_model`) followed by ``beta_mean``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable

import matplotlib.pyplot as plt
import numpy as np
import scipy.stats
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Circle, Ellipse

from ..experiments.mixture.data import COMPONENT_STD, SMALLER_WEIGHT_RANGE, TRAIN_SIZES
from ..experiments.mixture.em import fit_gmm
from ..experiments.mixture.loss import beta_concentrations, beta_mean
from ..model import DeepSet
from .base import Explorable
from .esm import module_source
from .rng import uniforms
from .weights import export_model, load_model

__all__ = ["MixtureWeights", "draw_population"]

#: The plane the page shows, [-EXTENT, EXTENT]^2 (the means can be dragged anywhere in it).
EXTENT = 3.0
#: The population-size slider's range (log scale); EM needs two particles.
SIZES = (5, 1000)
#: The weight slider's range and step (the chapter's weights lie in [0.05, 0.95]).
WEIGHTS = (0.05, 0.95, 0.005)
#: The estimate axis of the right panel.
ESTIMATE_AXIS = (0.0, 0.6)
#: Colours: the smaller component (red), the larger (blue), as the chapter's populations figure.
RED, BLUE = "#d62728", "#1f77b4"


def draw_population(seed: int, n: int, weight: float, means: Iterable[Iterable[float]],
                    std: float = COMPONENT_STD) -> tuple[np.ndarray, np.ndarray]:
    r"""The population the page draws: ``n`` particles ``[n, 2]`` (float32, as the experiment's) and
    whether each comes from the second component ``[n]`` (bool), for the mixture
    :math:`w_1 \mathcal N(\mu_1, \sigma^2 I) + (1 - w_1) \mathcal N(\mu_2, \sigma^2 I)`; particle ``i``
    uses the uniforms ``3i, 3i + 1, 3i + 2`` of :func:`~setfuncs.explorables.rng.mulberry32` (the module's
    docstring has the formula; ``js/mixture_math.js``'s ``mxPopulation`` is the same)."""
    (m1, m2) = [tuple(float(v) for v in mean) for mean in means]
    u = uniforms(int(seed), 3 * int(n))
    x = np.empty((int(n), 2), dtype=np.float64)
    second = np.empty(int(n), dtype=bool)
    for i in range(int(n)):
        c, a, b = u[3 * i: 3 * i + 3]
        other = c >= weight
        r, angle = math.sqrt(-2 * math.log(1 - a)), 2 * math.pi * b
        mu = m2 if other else m1
        x[i] = (mu[0] + std * (r * math.cos(angle)), mu[1] + std * (r * math.sin(angle)))
        second[i] = other
    return x.astype(np.float32), second


def _size(state: dict[str, Any]) -> int:
    """The population size the page uses: the slider's value rounded half up (``Math.round``)."""
    return int(math.floor(float(state["n"]) + 0.5))


def _population(state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    return draw_population(int(state["seed"]), _size(state), float(state["weight"]), state["means"], state["std"])


def _models(models: Any) -> list[tuple[str, DeepSet]]:
    """``(name, model)`` pairs from a mapping name -> model, pairs, or runs with ``spec`` and ``model``
    (the chapter's :class:`~setfuncs.experiments.mixture.lesson.LiveRun` and ``PairRun``)."""
    if isinstance(models, dict):
        return list(models.items())
    pairs = []
    for item in models:
        if isinstance(item, tuple):
            pairs.append(item)
        elif getattr(item, "model", None) is not None and hasattr(item, "spec"):
            pairs.append((item.spec, item.model))
        else:
            raise ValueError(f"MixtureWeights needs models as (name, DeepSet) pairs or runs with .spec and .model, "
                             f"got {type(item).__name__}")
    return pairs


class MixtureWeights(Explorable):
    """A population from a mixture the reader sets, EM's smaller weight and each model's Beta on it."""

    module = "mixture"
    _esm = module_source(module)
    probes = [{"n": 37, "weight": 0.62}, {"seed": 11, "weight": 0.137}, {"n": 640}]
    #: The models run in float32 in torch and in float64 in the browser (deepset.js's own tolerance).
    tolerance = 1e-4

    def __init__(self, models: Any, weight: float = 0.3, n: int = 100, seed: int = 3, angle: float = 0.5,
                 precision: str = "float16") -> None:
        r"""``models``: the trained 2 -> 2 Deep Sets (a mapping name -> model, ``(name, model)`` pairs,
        or the chapter's runs); the mixture starts with the first component's weight ``weight``, means
        :math:`\pm(\cos, \sin)` of ``angle`` and a population of ``n`` from ``seed``. ``precision``
        of the exported weights (:func:`~setfuncs.explorables.weights.export_model`): float16 keeps the
        chapter's four quick-budget models at 133 KB of state (float32: 258 KB, the recurrent model's
        LSTMs alone 201 KB) and moved their Beta means on 64 test populations by at most 1.3e-4; the
        page and :meth:`readouts` both compute with the rounded weights."""
        low, high, _ = WEIGHTS
        if not low <= weight <= high:
            raise ValueError(f"weight must lie in [{low}, {high}] (the slider's range), got {weight}")
        if not SIZES[0] <= n <= SIZES[1] or int(n) != n:
            raise ValueError(f"n must be an integer in [{SIZES[0]}, {SIZES[1]}] (the slider's range), got {n}")
        if not (isinstance(seed, int) and 0 <= seed <= 999):
            raise ValueError(f"seed must be an int in [0, 999] (the slider's range), got {seed!r}")
        pairs = _models(models)
        if not pairs:
            raise ValueError("MixtureWeights needs at least one trained model")
        for name, model in pairs:
            if not isinstance(model, DeepSet) or model.in_features != 2 or model.out_features != 2:
                raise ValueError(f"{name}: need a DeepSet 2 -> 2 (the mixture task's), got {type(model).__name__}")
        first = [math.cos(angle), math.sin(angle)]
        state = {"seed": seed, "n": n, "weight": weight, "std": COMPONENT_STD, "extent": EXTENT,
                 "means": [first, [-first[0], -first[1]]], "sizes": list(SIZES), "weights": list(WEIGHTS),
                 "axis": list(ESTIMATE_AXIS), "train_sizes": list(TRAIN_SIZES),
                 "train_weights": list(SMALLER_WEIGHT_RANGE),
                 "models": [{"name": name, "model": export_model(model.eval(), precision)} for name, model in pairs]}
        names = ", ".join(name for name, _ in pairs)
        super().__init__(state, alt=(
            f"Left: a scatter plot of {n} particles in the plane, red ones from the smaller component and blue "
            f"ones from the larger, around two crosses at the means of a mixture with weights {weight:g} and "
            f"{1 - weight:g}, with grey dashed ellipses for the two components EM fitted. Right: on an axis of "
            f"the smaller weight from 0 to {ESTIMATE_AXIS[1]:g}, a dashed line at the true smaller weight, a mark "
            f"for the share of particles from the smaller component, one for EM's estimate, and for each model "
            f"({names}) its Beta density with its mean."))

    @classmethod
    def example(cls) -> "MixtureWeights":
        """Small seeded, untrained models of the chapter's architectures (``mean/mean``, ``r-mean/mean``,
        ``lse/mean``, ``lme/mean`` at width 8): the test pages' instance."""
        from ..experiments.mixture.budget import QUICK
        from ..experiments.mixture.sweep import make_model

        budget = dataclasses.replace(QUICK, name="tiny", hidden=8)
        models = {}
        for setting, equivariant in (("plain/plain", "mean"), ("recurrent/plain", "mean"), ("plain/plain", "lse"),
                                     ("plain/plain", "lme")):
            torch.manual_seed(0)
            model = make_model(setting, equivariant, "mean", budget)
            models[model.spec] = model
        return cls(models)

    @classmethod
    def _fits(cls, state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, Any, list[torch.Tensor]]:
        """The population, its labels, EM's fit (``fit_gmm``) and each model's raw output ``[1, 2]``
        (the torch model of its exported weights, on the float32 particles)."""
        x, second = _population(state)
        fit = fit_gmm(torch.from_numpy(x).double()[None])
        outputs = []
        for entry in state["models"]:
            model = load_model(entry["model"]).eval()
            with torch.no_grad():
                outputs.append(model(torch.from_numpy(x).to(next(model.parameters()).dtype)[None]))
        return x, second, fit, outputs

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        x, second, fit, outputs = cls._fits(state)
        weight = float(state["weight"])
        out = {"true_w": min(weight, 1 - weight),
               "fraction": float(np.mean(second if weight > 0.5 else ~second)),
               "em_w": float(fit.smaller_weight[0]), "em_iterations": float(fit.iterations[0])}
        out.update({f"model_{k}": float(beta_mean(output)[0]) for k, output in enumerate(outputs)})
        return out

    def still(self) -> Figure:
        state = self.state
        x, second, fit, outputs = self._fits(state)
        betas = [tuple(float(c[0]) for c in beta_concentrations(output)) for output in outputs]
        weight, extent = state["weight"], state["extent"]
        smaller_second = weight > 0.5
        fig, (left, right) = plt.subplots(1, 2, figsize=(7.5, 3.6), layout="constrained",
                                          gridspec_kw={"width_ratios": [1, 1.25]})
        red = second == smaller_second
        left.scatter(*x[~red].T, s=8, color=BLUE, label="larger component")
        left.scatter(*x[red].T, s=8, color=RED, label="smaller component")
        for k, mean in enumerate(state["means"]):
            colour = RED if (k == 1) == smaller_second else BLUE
            left.add_patch(Circle(mean, 2 * state["std"], fill=False, color=colour, lw=1))
            left.plot(*mean, marker="+", markersize=14, mew=2.5, color="black")
        for mean, cov in zip(fit.means[0].numpy(), fit.covariances[0].numpy()):
            values, vectors = np.linalg.eigh(cov)
            angle = math.degrees(math.atan2(vectors[1, 1], vectors[0, 1]))
            left.add_patch(Ellipse(mean, 4 * math.sqrt(values[1]), 4 * math.sqrt(max(values[0], 0)), angle=angle,
                                   fill=False, color="0.35", ls="--", lw=1.2))
        left.set(xlim=(-extent, extent), ylim=(-extent, extent), aspect="equal",
                 title=f"N = {len(x)}, w₁ = {weight:g}, seed {state['seed']}")
        left.tick_params(labelsize=9)
        rows = ["share in population", "EM"] + [entry["name"] for entry in state["models"]]
        height = lambda row: len(rows) - 1 - row  # noqa: E731 (the first row on top, as on the page)
        truth = min(weight, 1 - weight)
        estimates = [float(np.mean(red)), float(fit.smaller_weight[0])] + [a / (a + b) for a, b in betas]
        t = np.linspace(*ESTIMATE_AXIS, 301)[1:-1]
        for row, (a, b) in enumerate(betas, start=2):
            density = scipy.stats.beta.pdf(t, a, b)
            right.fill_between(t, height(row), height(row) + 0.8 * density / max(density.max(), 1e-12),
                               color="#9ecae1", edgecolor="#3182bd", lw=0.8)
        for row, value in enumerate(estimates):
            clipped = value > ESTIMATE_AXIS[1]
            colour = "black" if row >= 2 else "0.35"
            right.plot(min(value, ESTIMATE_AXIS[1]), height(row), "o", color=colour, markersize=6,
                       markerfacecolor="white" if clipped else colour)
        right.axvline(truth, color=RED, ls="--", lw=1.5)
        right.set_yticks([height(row) for row in range(len(rows))], rows, fontsize=9)
        right.set(xlim=ESTIMATE_AXIS, ylim=(-0.6, len(rows) - 0.1), xlabel="smaller weight w",
                  title=f"true w = {truth:.3f} (dashed)")
        right.tick_params(labelsize=9)
        return fig
