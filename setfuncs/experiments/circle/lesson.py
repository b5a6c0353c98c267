r"""Chapter 8's task, models and live training as short calls: populations and their circles, the
batched solver checked against ``miniball``, the budgets and the models' sizes, the live models (the
sweep's best plain/plain and recurrent/recurrent configurations, and a plain model with LSE or
log-mean-exp in its equivariant layers) with the explorable that runs them on a population the reader
edits beside Welzl's algorithm, and the sweep's best runs away from the training size (beyond the
paper, no claim tested).

Every function returns a figure, an explorable (``setfuncs.explorables.circle``) or a small object
that renders itself (:mod:`~setfuncs.experiments.views`); matplotlib and the explorable are imported
inside the functions that draw.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from torch import Tensor

from setfuncs.budget import pick
from setfuncs.model import parameter_count

from ..sweeps import SETTINGS, TEST_SEED, spec_of
from ..views import Lines, Table, table
from .budget import BUDGETS, FULL, QUICK, Budget
from .baseline import constant_mse
from .batched import min_enclosing_circles
from .data import POPULATION_SIZE, mixture_description, sample_populations, test_set
from .medians import best_configuration, median_mse
from .metric import mse_by_spec
from .sweep import circle_errors, make_model, train_model
from .table import by_population_size

__all__ = ["plot_populations", "task_facts", "solver_check", "budget_table", "parameter_table", "live_budget",
           "LiveRun", "train_best", "plot_live_training", "plot_live_predictions", "explore_circles", "live_table",
           "twin_table", "plot_by_size", "by_size_lines"]

#: The colour of each live setting's predicted circles.
LIVE_COLOURS = {"plain/plain": "tab:orange", "recurrent/recurrent": "tab:green"}


def plot_populations(count: int = 8, seed: int = 3) -> Any:
    """``count`` populations of the task (two rows), each with its minimal enclosing circle (black), the
    particles that fix it (ringed) and the sample mean (a blue cross)."""
    import matplotlib.pyplot as plt

    from .draw import draw_population

    populations = sample_populations(count, generator=torch.Generator().manual_seed(seed)).double().numpy()
    centres, radii = min_enclosing_circles(populations)
    fig, axes = plt.subplots(2, count // 2, figsize=(6.8, 3.7), layout="constrained")
    for ax, particles, centre, radius in zip(axes.flat, populations, centres, radii):
        draw_population(ax, particles, centre, radius)
    fig.suptitle(f"populations of {POPULATION_SIZE} particles, their minimal enclosing circles and sample means (x)",
                                 fontsize=11)
    return fig


def task_facts(size: int = 2000, seed: int = 0) -> Lines:
    r"""The mixture the populations come from, and over ``size`` test populations the radius (mean and
    standard deviation) and the mean squared distance of the sample mean from the circle's centre,
    :math:`\frac1B \sum_b \lVert \bar x_b - c_b \rVert^2`."""
    x, y, _ = test_set(size, POPULATION_SIZE, seed)
    distance = float(((x.mean(1) - y[:, :2]) ** 2).sum(1).mean())
    mixture = "; ".join(f"{k.replace('_', ' ')} {v}" for k, v in mixture_description().items())
    return Lines((f"mixture: {mixture}",
                  f"radius {float(y[:, 2].mean()):.2f} ± {float(y[:, 2].std()):.2f} (mean ± std over {size:,} "
                  f"populations)",
                  f"squared distance of the sample mean from the centre: {distance:.3f} on average"))


def solver_check(count: int = 2000, seed: int = 5) -> Lines:
    """The batched solver and Welzl's algorithm against ``miniball`` on ``count`` populations
    (``setfuncs.experiments.circle.reference.compare_with_miniball``): each solver's speed and the
    largest differences of radius and centre."""
    from .reference import compare_with_miniball

    points = sample_populations(count, generator=torch.Generator().manual_seed(seed)).double().numpy()
    seconds, differences = compare_with_miniball(points)
    return Lines((f"{count:,} populations of {points.shape[1]} particles",
                  *(f"{name}: {count / elapsed:,.0f} populations/s" for name, elapsed in seconds.items()),
                  f"largest radius difference to miniball: batched {differences['batched_radius']:.1e}, Welzl "
                  f"{differences['welzl_radius']:.1e}; largest centre difference: batched "
                  f"{differences['batched_center']:.1e}"))


def budget_table() -> Table:
    """The three budgets (``setfuncs.experiments.circle.BUDGETS``): steps, batch, learning rate,
    width, equivariant layers, reads, test populations and test sizes."""
    rows = [{**vars(b), "sizes": ", ".join(map(str, b.test_population_sizes))} for b in BUDGETS.values()]
    return table(rows, [("name", "budget", "{}"), ("steps", "Adam steps", "{:,}"), ("batch", "batch", "{}"),
                        ("lr", "learning rate", "{:g}"), ("hidden", "width", "{}"),
                        ("equivariant_layers", "equivariant layers", "{}"), ("recurrent_steps", "reads T", "{}"),
                        ("test_size", "test populations", "{:,}"), ("sizes", "test sizes N", "{}")])


def parameter_table(equivariant: str = "max", final: str = "lse") -> Table:
    """The parameters of one model per setting (``equivariant``/``final`` aggregations) at every budget."""
    rows = [{"setting": s, "spec": spec_of(s, equivariant, final),
             **{name: parameter_count(make_model(s, equivariant, final, b)) for name, b in BUDGETS.items()}}
            for s in SETTINGS]
    return table(rows, [("setting", "setting", "{}"), ("spec", "spec", "{}")]
                 + [(name, f"parameters ({name})", "{:,}") for name in BUDGETS])


def live_budget() -> Budget:
    """The live models' budget: ``quick`` (seconds on one core), ``full`` with ``SETFUNCS_BUDGET=full``."""
    return pick(QUICK, FULL)


@dataclass(frozen=True)
class LiveRun:
    """One model trained live: its ``setting`` and ``spec``, ``seed``, ``budget``, the trained ``model``,
    its loss at every step and the seconds it took."""

    setting: str
    spec: str
    seed: int
    budget: Budget
    model: torch.nn.Module
    losses: tuple[float, ...]
    seconds: float

    def errors(self) -> dict[str, float]:
        """The test MSE, radius MSE and centre MSE on the budget's test set (``_live_test_set``)."""
        x, y = _live_test_set(self.budget)
        with torch.no_grad():
            return circle_errors(self.model(x), y)


def _live_test_set(budget: Budget) -> tuple[Tensor, Tensor]:
    x, y, _ = test_set(budget.test_size, POPULATION_SIZE, TEST_SEED)
    return x, y


def _train(setting: str, equivariant: str, final: str, budget: Budget, seed: int) -> LiveRun:
    start = time.perf_counter()
    model, losses = train_model(setting, equivariant, final, seed=seed, budget=budget, progress=budget != QUICK)
    return LiveRun(setting, spec_of(setting, equivariant, final), seed, budget, model,
                   tuple(float(v) for v in losses), time.perf_counter() - start)


def train_best(results: dict, setting: str, budget: Budget | None = None, seed: int = 0) -> LiveRun:
    """Train, with the sweep's code (:func:`~setfuncs.experiments.circle.sweep.train_model`), the paper's
    configuration of ``setting`` with the lowest median test MSE in ``results``
    (``setfuncs.experiments.circle.medians.best_configuration``); ``budget``: :func:`live_budget`."""
    budget = live_budget() if budget is None else budget
    return _train(*best_configuration(mse_by_spec(results), setting), budget, seed)


def plot_live_training(runs: Sequence[LiveRun]) -> Any:
    """The training loss of every live run (a moving average, log scale labelled as plain numbers) against
    the step, the legend naming each configuration and its training time."""
    import matplotlib.pyplot as plt

    from ..curves import plot_training_curves
    from ...plots import plain_log_ticks

    fig, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
    plot_training_curves(ax, {f"{r.setting}: {r.spec} ({r.seconds:.0f} s)": r.losses for r in runs}, yscale="log",
                         title=f"live training at the {runs[0].budget.name} budget")
    plain_log_ticks(ax.yaxis)
    return fig


def plot_live_predictions(runs: Sequence[LiveRun], shown: int = 8) -> Any:
    """The live models' circles on the first ``shown`` test populations (the true circle black, each
    setting's prediction dashed in ``LIVE_COLOURS``)."""
    from .draw import plot_predictions

    x, y = _live_test_set(runs[0].budget)
    with torch.no_grad():
        predictions = {r.setting: r.model(x).numpy() for r in runs}
    return plot_predictions(x.numpy(), y.numpy(), predictions, colors=LIVE_COLOURS,
                            labels={r.setting: r.spec for r in runs}, shown=shown)


def explore_circles(runs: Sequence[LiveRun], size: int = POPULATION_SIZE, seed: int = 4) -> Any:
    """The explorable of a population the reader drags, adds to and removes from (or draws anew at any
    size and seed), its minimal enclosing circle by Welzl's algorithm with its support ringed, and the
    circles the live ``runs`` predict for it, each in ``LIVE_COLOURS``
    (``setfuncs.explorables.circle.EnclosingCircle``)."""
    from setfuncs.explorables.circle import EnclosingCircle, Predictor

    return EnclosingCircle([Predictor(r.setting.replace("/", "_"), f"{r.setting} ({r.spec})", r.model,
                                      LIVE_COLOURS.get(r.setting, "tab:purple")) for r in runs], size, seed)


def live_table(runs: Sequence[LiveRun], results: dict) -> Table:
    """Per live run: its training time, test MSE, radius MSE and centre MSE on the live budget's test
    set, beside the median test MSE over the seeds of ``results`` (the sweep) of the same configuration."""
    mse_of = mse_by_spec(results)
    rows = [{"setting": r.setting, "spec": r.spec, "seconds": r.seconds, **r.errors(),
             "sweep": median_mse(mse_of, r.spec)} for r in runs]
    name = runs[0].budget.name
    return table(rows, [("setting", "setting", "{}"), ("spec", "spec", "{}"), ("seconds", "training (s)", "{:.1f}"),
                        ("mse", f"MSE ({name})", "{:.3f}"), ("radius_mse", "radius MSE", "{:.3f}"),
                        ("center_mse", "centre MSE", "{:.3f}"),
                        ("sweep", f"median MSE, {results['budget']} sweep", "{:.3f}")])


def twin_table(results: dict, final: str = "max", budget: Budget | None = None, seed: int = 0) -> Table:
    """A plain/plain model with LSE and with log-mean-exp in its equivariant layers (final aggregation
    ``final``), each trained here: training time, test MSE and its split, beside the sweep's median."""
    budget = live_budget() if budget is None else budget
    runs = [_train(SETTINGS[0], equivariant, final, budget, seed) for equivariant in ("lse", "lme")]
    shown = live_table(runs, results)
    return table(shown.rows, shown.columns[1:],
                 "The same plain model with LSE and with log-mean-exp in its equivariant layers")


def _constant_by_size(sizes: Sequence[int], populations: int = 500) -> list[float]:
    return [constant_mse(test_set(populations, n, seed=1)[1]) for n in sizes]


def plot_by_size(results: dict) -> Any:
    """The test MSE of each setting's best run at every population size
    (:func:`~setfuncs.experiments.circle.table.by_population_size`) beside a constant predictor's."""
    from .figures import plot_by_population_size

    curves = by_population_size(results, variant="paper")
    return plot_by_population_size(curves, _constant_by_size(curves[0]["sizes"]), POPULATION_SIZE)


def by_size_lines(results: dict) -> Lines:
    """What the best runs do away from the training size: the setting with the lowest MSE at each size; the
    worst best run as a share of the constant predictor's MSE; each setting's largest MSE as a multiple of
    its MSE at the training size; then the settings whose MSE rises at every larger size, those least
    accurate at the largest size, and the sizes at which a recurrent-equivariant setting leads."""
    curves = by_population_size(results, variant="paper")
    sizes = curves[0]["sizes"]
    at = sizes.index(POPULATION_SIZE)
    constant = _constant_by_size(sizes)
    leaders = [min(curves, key=lambda c: c["mse"][k])["setting"] for k in range(len(sizes))]
    larger = [k for k, n in enumerate(sizes) if n > POPULATION_SIZE]
    rising = sum(all(c["mse"][k] > c["mse"][at] for k in larger) for c in curves)
    last = [c["setting"] for c in curves if int(np.argmax(c["mse"])) == len(sizes) - 1]
    lines = ["lowest MSE at each size: " + ", ".join(f"N={n} {s}" for n, s in zip(sizes, leaders)),
             f"the largest of the best runs' MSEs as a share of the constant predictor's, over all sizes: "
             f"{max(m / k for c in curves for m, k in zip(c['mse'], constant)):.3f}"]
    for c in curves:
        worst = int(np.argmax(c["mse"]))
        lines.append(f"{c['setting']} ({c['spec']}): largest MSE at N={sizes[worst]}, "
                     f"{c['mse'][worst] / c['mse'][at]:.2f} times its MSE at N={POPULATION_SIZE}")
    lines += [f"settings whose best run has a higher MSE than at N={POPULATION_SIZE} at every larger size: "
              f"{rising} of {len(curves)}",
              f"settings least accurate at the largest size, N={sizes[-1]}: {len(last)} of {len(curves)}"
              + (f" ({', '.join(last)})" if last else ""),
              f"sizes at which a setting with recurrent equivariant layers has the lowest MSE: "
              f"{sum(s.startswith('recurrent/') for s in leaders)} of {len(sizes)}"]
    return Lines(tuple(lines))
