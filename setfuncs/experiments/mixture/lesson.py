r"""Chapter 9's task and live training as short calls: the populations, the best constant Beta, EM
against scikit-learn, a plain and a learnable model trained live with their estimates as the
population grows (Figure 4a), and the first equivariant layer with LSE and with log-mean-exp.

matplotlib is imported inside the functions that draw (through :mod:`.figures`).
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from setfuncs.budget import pick

from ..collapse import collapse_record
from ..curves import plot_training_curves
from ..sweeps import AGGREGATIONS, TEST_SEED, spec_of
from ..views import Lines, Table, table
from .budget import FULL, MEDIUM, QUICK, Budget
from .data import (SMALLER_WEIGHT_RANGE, TRAIN_SIZES, Mixtures, mixture_description, population_size_probabilities,
                   sample_populations, test_populations)
from .figures import draw_preactivations, plot_estimator_curves, plot_populations
from .first_layer import SATURATION, first_layer_capture, initial_first_layer, saturated_share
from .loss import beta_mean, marginal_beta
from .metric import estimator_curve
from .sweep import make_model, train_model

__all__ = ["example_populations", "plot_populations", "population_facts", "plot_size_distribution", "ConstantBeta",
           "constant_beta", "em_check", "live_budget", "LiveRun", "train_live", "plot_live_training", "Curves",
           "estimator_curves", "plot_figure4a", "curve_table", "first_layer_table", "PairRun", "train_lse_pair",
           "plot_lse_lme", "lse_lme_table", "CURVE_SIZES"]

#: The population sizes of Figure 4a's curves (above 100 the subsamples repeat particles).
CURVE_SIZES = (5, 10, 20, 50, 100, 200, 500, 1000)


def example_populations(count: int = 4, size: int = 100, seed: int = 4) -> Mixtures:
    """``count`` populations of ``size`` particles, each from its own mixture, drawn with ``seed``."""
    return sample_populations(count, size, torch.Generator().manual_seed(seed))


def population_facts() -> Lines:
    """The mixtures every population is drawn from (:func:`~setfuncs.experiments.mixture.data.mixture_description`)."""
    d = mixture_description()
    return Lines((f"{d['components']} components; the smaller weight w {d['smaller_weight']}; the means "
                  f"{d['means']}; the same isotropic standard deviation sigma = {d['component_std']} for both",
                  f"training population sizes: {d['train_population_sizes']}; test populations of "
                  f"{d['test_population_size']} particles"))


def plot_size_distribution() -> Any:
    r"""The law of the training population size, :math:`P(N = n) \propto n` on the training range, as bars."""
    import matplotlib.pyplot as plt

    sizes, probabilities = population_size_probabilities()
    fig, ax = plt.subplots(figsize=(5.5, 2.4), layout="constrained")
    ax.bar(sizes.numpy(), probabilities.numpy(), width=1.0, color="tab:gray")
    mean = float((sizes * probabilities).sum())
    ax.set(xlabel="training population size n", ylabel="P(N = n)",
           title=f"P(N = n) ∝ n on {TRAIN_SIZES[0]}..{TRAIN_SIZES[1]}; mean {mean:.0f}")
    return fig


@dataclass(frozen=True)
class ConstantBeta:
    r"""The Beta closest to the law of :math:`w` (uniform on its range), ``a`` and ``b``, and its
    expected loss ``nll`` :math:`= -\mathbb E_w \log \operatorname{Beta}(w \mid a, b)`: the level a model
    must go below to have learnt anything about the population."""

    a: float
    b: float
    nll: float

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b)

    def __str__(self) -> str:
        return (f"the best constant Beta: a = {self.a:.2f}, b = {self.b:.2f}, mean {self.mean:.3f}; "
                f"expected loss {self.nll:.3f}")

    def _repr_html_(self) -> str:
        return f"<p>{html.escape(str(self))}</p>"


def constant_beta(points: int = 100_001) -> ConstantBeta:
    """:func:`~setfuncs.experiments.mixture.loss.marginal_beta` and its loss, averaged over ``points`` weights
    evenly spaced on the weight's range."""
    a, b = marginal_beta()
    w = torch.linspace(*SMALLER_WEIGHT_RANGE, points, dtype=torch.float64)
    return ConstantBeta(float(a), float(b), float(-torch.distributions.Beta(a, b).log_prob(w).mean()))


def em_check(count: int = 300, size: int = 100, seed: int = 8) -> Lines:
    """The batched EM against scikit-learn from the same start on ``count`` populations of ``size``
    (``setfuncs.experiments.mixture.reference.compare_with_sklearn``): their largest difference,
    both rates, and EM's mean absolute error against a constant guess (the middle of the weight's range)."""
    from .reference import compare_with_sklearn

    test = sample_populations(count, size, torch.Generator().manual_seed(seed))
    ours, reference, seconds = compare_with_sklearn(test.x.double())
    difference = np.abs(ours.smaller_weight.numpy() - reference).max()
    guess = sum(SMALLER_WEIGHT_RANGE) / 2
    em_error = float((ours.smaller_weight - test.smaller_weight).abs().mean())
    return Lines((f"largest difference of the smaller weight, batched EM vs scikit-learn: {difference:.1e}",
                  f"populations per second: batched {count / seconds['batched']:,.0f}, scikit-learn "
                  f"{count / seconds['sklearn']:,.0f} ({seconds['sklearn'] / seconds['batched']:.0f}x)",
                  f"EM's mean absolute error on the smaller weight: {em_error:.3f} (a constant guess of {guess:.3f}, "
                  f"the mean weight: {float((test.smaller_weight - guess).abs().mean()):.3f})"))


def live_budget() -> Budget:
    """The live models' budget: ``quick``, or ``full`` with ``SETFUNCS_BUDGET=full``."""
    return pick(QUICK, FULL)


@dataclass(frozen=True)
class LiveRun:
    """One model trained live: its configuration and ``spec``, ``seed``, ``budget``, the trained ``model``,
    its loss (the Beta NLL) at every step and the seconds it took."""

    setting: str
    spec: str
    seed: int
    budget: Budget
    model: torch.nn.Module
    losses: tuple[float, ...]
    seconds: float

    def __str__(self) -> str:
        return (f"trained {self.spec} ({self.setting}), seed {self.seed}, in {self.seconds:.1f} s: "
                f"{self.budget.steps:,} steps of {self.budget.batch} populations ({self.budget.name} budget)")

    def _repr_html_(self) -> str:
        return f"<p>{html.escape(str(self))}</p>"


def train_live(setting: str, equivariant: str, final: str, budget: Budget | None = None, seed: int = 0) -> LiveRun:
    """Train one configuration with the sweep's code (:func:`~setfuncs.experiments.mixture.sweep.train_model`),
    timed; ``budget`` defaults to :func:`live_budget`."""
    budget = live_budget() if budget is None else budget
    start = time.perf_counter()
    model, losses = train_model(setting, equivariant, final, seed=seed, budget=budget, progress=False)
    return LiveRun(setting, spec_of(setting, equivariant, final), seed, budget, model,
                   tuple(float(v) for v in losses), time.perf_counter() - start)


def plot_live_training(runs: Sequence[LiveRun], constant: ConstantBeta) -> Any:
    """The live runs' training losses (moving averages) against the loss of the best constant Beta."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    plot_training_curves(ax, {f"{r.setting}: {r.spec} ({r.seconds:.0f} s)": list(r.losses) for r in runs},
                         quantity="Beta NLL", baseline=(constant.nll, f"the best constant Beta ({constant.nll:.2f})"),
                         legend_fontsize="medium", title=f"live training at the {runs[0].budget.name} budget")
    return fig


@dataclass(frozen=True)
class Curves:
    """Figure 4a's input: one test ``population`` ``[M, 2]``, its smaller weight ``truth``, and per live
    run's setting its :func:`~setfuncs.experiments.mixture.metric.estimator_curve` and spec."""

    population: torch.Tensor
    truth: float
    curves: dict[str, dict]
    specs: dict[str, str]
    budget: str


def estimator_curves(runs: Sequence[LiveRun], index: int = 3, sizes: Sequence[int] = CURVE_SIZES) -> Curves:
    """Every live run's and EM's bootstrap estimates of test population ``index`` (of 16 test populations
    of 100 particles) at ``sizes``."""
    population = test_populations(16, 100, TEST_SEED)
    x = population.x[index]
    return Curves(x, float(population.smaller_weight[index]),
                  {r.setting: estimator_curve(r.model, x, list(sizes)) for r in runs},
                  {r.setting: r.spec for r in runs}, runs[0].budget.name)


def plot_figure4a(curves: Curves) -> Any:
    """Figure 4a for the live runs (``setfuncs.experiments.mixture.figures.plot_estimator_curves``)."""
    return plot_estimator_curves(curves.population, curves.truth, curves.curves, curves.specs, curves.budget)


def curve_table(curves: Curves) -> Table:
    """Per live run and for EM: the median estimate at the smallest and the largest size, and the width
    of the 90 % interval at the test size 100."""
    rows = []
    for setting, curve in curves.curves.items():
        sizes = list(curve["sizes"])
        at = sizes.index(100)
        for name in ("model", "em"):
            c = curve[name]
            rows.append({"setting": setting, "estimator": curves.specs[setting] if name == "model" else "EM",
                         "small": c["median"][0], "large": c["median"][-1], "width": c["q95"][at] - c["q05"][at]})
    first, last = (int(n) for n in next(iter(curves.curves.values()))["sizes"][[0, -1]])
    return table(rows, [("setting", "setting", "{}"), ("estimator", "estimator", "{}"),
                        ("small", f"median at n = {first}", "{:.3f}"), ("large", f"median at n = {last:,}", "{:.3f}"),
                        ("width", "90 % interval width at n = 100", "{:.3f}")],
                 f"Bootstrap estimates of one test population (true w = {curves.truth:.3f})")


def first_layer_table(budget: Budget = MEDIUM, sizes: Sequence[int] = (20, 100)) -> Table:
    r"""The first equivariant layer at initialisation for every aggregation α (configurations ``α/mean``)
    at each population size (``setfuncs.experiments.mixture.first_layer.initial_first_layer``):
    the mean of its input :math:`x_i - \alpha(X)` and the share of saturated tanh units."""
    rows = []
    for equivariant in AGGREGATIONS:
        for n in sizes:
            shift, saturated = initial_first_layer(f"{equivariant}/mean", n, budget)
            rows.append({"aggregation": equivariant, "n": n, "shift": shift, "saturated": saturated})
    return table(rows, [("aggregation", "equivariant aggregation α", "{}"), ("n", "N", "{}"),
                        ("shift", "mean of x_i − α(X)", "{:+.2f}"), ("saturated", f"tanh units with |z| > {SATURATION:g}",
                                                                     "{:.0%}")],
                 f"First equivariant layer at initialisation (seed 0, 64 populations, {budget.name} width)")


@dataclass(frozen=True)
class PairRun:
    """One of the live pair ``lse/mean``, ``lme/mean``: its losses, the first layer's pre-activations on
    the probe populations before and after training, the seconds, on the probe its Beta means' mean
    absolute error and :func:`~setfuncs.experiments.collapse.collapse_record` (``populations`` of 100),
    and the trained ``model`` (for the chapter's explorable)."""

    spec: str
    budget: Budget
    populations: int
    losses: tuple[float, ...]
    before: np.ndarray
    after: np.ndarray
    seconds: float
    mae: float
    spread_ratio: float
    collapsed: bool
    model: torch.nn.Module | None = None


def train_lse_pair(budget: Budget | None = None, seed: int = 0, populations: int = 64) -> tuple[PairRun, ...]:
    """Train ``lse/mean`` and ``lme/mean`` (``plain/plain``) with the sweep's code and read their first
    equivariant layer on ``populations`` test populations of 100 before and after training."""
    budget = live_budget() if budget is None else budget
    probe = test_populations(populations, 100, TEST_SEED)
    runs = []
    for equivariant in ("lse", "lme"):
        torch.manual_seed(seed)
        _, before = first_layer_capture(make_model("plain/plain", equivariant, "mean", budget), probe.x)
        start = time.perf_counter()
        model, losses = train_model("plain/plain", equivariant, "mean", seed=seed, budget=budget, progress=False)
        with torch.no_grad():
            estimates = beta_mean(model(probe.x))
        record = collapse_record(estimates, probe.smaller_weight)
        runs.append(PairRun(f"{equivariant}/mean", budget, populations, tuple(float(v) for v in losses), before.flatten().numpy(),
                            first_layer_capture(model, probe.x)[1].flatten().numpy(), time.perf_counter() - start,
                            float((estimates.double() - probe.smaller_weight).abs().mean()),
                            float(record["spread_ratio"]), bool(record["collapsed"]), model))
    return tuple(runs)


def plot_lse_lme(pair: Sequence[PairRun], constant: ConstantBeta) -> Any:
    """The pair's training losses against the best constant Beta (top), then below, side by side,
    per model the first layer's pre-activations before and after training
    (``setfuncs.experiments.mixture.figures.draw_preactivations``) with one legend under them."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(6.85, 6.2), layout="constrained")
    grid = fig.add_gridspec(2, len(pair), height_ratios=[1, 1.1])
    training = fig.add_subplot(grid[0, :])
    plot_training_curves(training, {r.spec: list(r.losses) for r in pair}, quantity="Beta NLL",
                         baseline=(constant.nll, "the best constant Beta"), legend_fontsize="medium", title="training")
    histograms = [fig.add_subplot(grid[1, k]) for k in range(len(pair))]
    for ax, run in zip(histograms, pair):
        draw_preactivations(ax, run.before, run.after, title=f"{run.spec}, N = 100")
        ax.get_legend().remove()
    fig.legend(*histograms[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize="medium")
    return fig


def lse_lme_table(pair: Sequence[PairRun]) -> Table:
    """The pair side by side: saturated shares before and after, error, spread ratio, collapse, seconds."""
    rows = [{"spec": r.spec, "before": saturated_share(r.before), "after": saturated_share(r.after), "mae": r.mae,
             "spread": r.spread_ratio, "collapsed": r.collapsed, "seconds": r.seconds} for r in pair]
    return table(rows, [("spec", "model", "{}"), ("before", f"|z| > {SATURATION:g} at start", "{:.0%}"),
                        ("after", f"|z| > {SATURATION:g} after", "{:.0%}"), ("mae", "mean |error| of the Beta mean", "{:.3f}"),
                        ("spread", "spread of estimates / spread of truth", "{:.3f}"), ("collapsed", "collapsed", "{}"),
                        ("seconds", "seconds", "{:.0f}")],
                 f"{pair[0].budget.name} budget, seed 0, {pair[0].populations} test populations of 100")
