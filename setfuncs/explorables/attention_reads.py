r"""Chapter 6's explorable: where a trained learnable aggregation looks, read by read, on a
population the reader edits.

The chapter's toy task: :data:`N_PARTICLES` particles in the plane from two round Gaussian clusters
(standard deviation :data:`SPREAD`, centres uniform in :math:`[-2, 2]^2`), the *small* one holding
2 to 6 of them; the target is the small cluster's centroid. For the Deep Set the reader picks
(``max/r-sum``, ``max/rpw`` or ``max/q-sum``, trained in the chapter), the browser runs the forward
pass (``js/deepset.js``) and shows the attention weights :math:`w_{t,i}` of its final aggregation
at the read :math:`t` the reader picks, each particle's area and colour its weight, with the
prediction and the target. The reader drags particles, adds and removes them, or draws a new
population from a seed (mulberry32 and Box-Muller, the same numbers here and in the page).
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from ..learnable import QueryAggregation, RecurrentAggregation
from ..model import DeepSet
from .base import Explorable
from .esm import module_source
from .rng import mulberry32
from .weights import export_model, load_model

__all__ = ["AttentionReads", "two_clusters", "population", "N_PARTICLES", "SPREAD", "VIEW"]

#: Particles of a drawn population, the spread of each cluster, the small cluster's sizes.
N_PARTICLES, SPREAD, SMALL_SIZES = 20, 0.3, (2, 6)
#: The plot shows [-VIEW, VIEW]^2; particles are dragged within it.
VIEW = 4.0
#: The seed of the population shown first: two clusters well apart (4.7), four particles in the small one.
DEFAULT_SEED = 7


def two_clusters(seed: int) -> tuple[list[list[float]], list[list[float]]]:
    """A population of the chapter's toy task drawn from ``seed`` (as ``arTwoClusters`` in the page):
    the small cluster's particles and the large one's. Uniforms u from mulberry32: the two centres
    ``4u - 2``, the small cluster's size ``2 + floor(5u)``, then per particle a Box-Muller pair
    ``r = sqrt(-2 ln(1 - u1))``, ``theta = 2 pi u2`` around its centre, times :data:`SPREAD`."""
    u = mulberry32(int(seed))
    centres = [[4 * next(u) - 2, 4 * next(u) - 2] for _ in range(2)]
    small = SMALL_SIZES[0] + math.floor((SMALL_SIZES[1] - SMALL_SIZES[0] + 1) * next(u))
    points = []
    for i in range(N_PARTICLES):
        r, theta = math.sqrt(-2 * math.log(1 - next(u))), 2 * math.pi * next(u)
        c = centres[0] if i < small else centres[1]
        points.append([c[0] + SPREAD * r * math.cos(theta), c[1] + SPREAD * r * math.sin(theta)])
    return points[:small], points[small:]


def population(state: dict[str, Any]) -> tuple[list[list[float]], list[list[float]]]:
    """The population a state shows: the reader's (``population``) while it belongs to the seed
    shown (``population_seed``), else the seed's."""
    kept = state.get("population")
    if kept and state.get("population_seed") == int(state["seed"]):
        return kept["small"], kept["large"]
    return two_clusters(int(state["seed"]))


def _loaded(state: dict[str, Any], key: str) -> DeepSet:
    return load_model(state["models"][key]).eval()


class AttentionReads(Explorable):
    """The attention weights of a trained learnable aggregation on a two-cluster population.

    Args:
        models: label -> trained :class:`~setfuncs.model.DeepSet` (2 features in, 2 out, a query or
            recurrent final aggregation); the page's select switches between them by their spec.
        seed: the first population's seed (:func:`two_clusters`).
        t: the read shown first (by default the first model's last).
        precision: of the exported weights (:func:`~setfuncs.explorables.weights.export_model`):
            float16 keeps the three models of chapter 6 at 90 KB (float32: 176 KB) and moves their
            predictions by about 1e-3.
    """

    module = "attention_reads"
    _esm = module_source(module)
    probes = [{"t": 2}, {"model": "max/rpw", "t": 3}, {"seed": 17, "model": "max/q-sum"}]
    tolerance = 1e-4

    def __init__(self, models: dict[str, DeepSet], seed: int = DEFAULT_SEED, t: int | None = None,
                 precision: str = "float16") -> None:
        if not models:
            raise ValueError("AttentionReads needs at least one trained model")
        specs: dict[str, str] = {}
        for label, model in models.items():
            if model.in_features != 2 or model.out_features != 2:
                raise ValueError(f"{label}: the toy task maps 2-D particles to a 2-D centroid, the model maps "
                                 f"{model.in_features} to {model.out_features}")
            if not isinstance(model.aggregate, (QueryAggregation, RecurrentAggregation)):
                raise ValueError(f"{label}: its final aggregation {type(model.aggregate).__name__} has no "
                                 f"attention weights; give models with a query or recurrent aggregation")
            if model.spec in specs:
                raise ValueError(f"{label} and {specs[model.spec]} share the spec {model.spec!r}, which names "
                                 f"them in the page")
            specs[model.spec] = label
        steps = max(getattr(m.aggregate, "steps", 1) for m in models.values())
        t = getattr(next(iter(models.values())).aggregate, "steps", 1) if t is None else t
        if not 1 <= t <= steps:
            raise ValueError(f"t must be a read from 1 to {steps}, got {t}")
        small, large = two_clusters(seed)
        first = next(iter(models.values()))
        super().__init__(
            {"models": {m.spec: export_model(m, precision) for m in models.values()},
             "labels": {spec: label for spec, label in specs.items()}, "model": first.spec,
             "t": t, "steps": steps, "seed": seed, "population": {"small": small, "large": large},
             "population_seed": seed, "view": VIEW},
            alt=f"A scatter plot of {len(small) + len(large)} particles in the plane, a small cluster of "
                f"{len(small)} ringed in orange and a large one of {len(large)}; each particle's area and "
                f"colour show its attention weight at read {t} of the model {specs[first.spec]}, a red plus "
                f"marks the small cluster's centroid (the target) and a black cross the model's prediction. "
                f"Beside it, bars give the total weight on the small cluster at each read.")

    @classmethod
    def example(cls) -> "AttentionReads":
        """Untrained, seeded models of the chapter's three architectures (16 units instead of 32)."""
        torch.manual_seed(0)
        specs = {"recurrent (r-sum)": "max/r-sum", "read-process-write": "max/rpw", "query (q-sum)": "max/q-sum"}
        return cls({label: DeepSet(2, 2, spec=spec, hidden=16, equivariant_layers=1, steps=4).eval()
                    for label, spec in specs.items()})

    @classmethod
    def weights(cls, state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """The prediction ``[2]`` and the attention weights ``[T, N]`` (small cluster first) of the
        state's model on its population, in torch."""
        model = _loaded(state, state["model"])
        small, large = population(state)
        x = torch.tensor([small + large], dtype=torch.float32)
        with torch.no_grad():
            return model(x)[0].double().numpy(), model.aggregate.attend(model.memory(x))[1][0].double().numpy()

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        prediction, w = cls.weights(state)
        small, _ = population(state)
        target = [sum(p[d] for p in small) / len(small) for d in range(2)]
        t = min(int(state["t"]), w.shape[0])
        return {"prediction_x": float(prediction[0]), "prediction_y": float(prediction[1]),
                "target_x": target[0], "target_y": target[1],
                "error": math.hypot(prediction[0] - target[0], prediction[1] - target[1]),
                "weight_small": float(w[t - 1, :len(small)].sum())}

    def still(self) -> Figure:
        state = self.state
        prediction, w = self.weights(state)
        small, large = population(state)
        x = np.array(small + large)
        k, steps = len(small), w.shape[0]
        t = min(int(state["t"]), steps)
        read = self.readouts(state)
        fig, (ax, bars) = plt.subplots(1, 2, figsize=(7.5, 3.9), width_ratios=(1.25, 1), layout="constrained")
        points = ax.scatter(*x.T, s=25 + 900 * w[t - 1], c=w[t - 1], cmap="viridis", vmin=0, vmax=w.max(),
                            edgecolors=["#d35400"] * k + ["#222222"] * (len(x) - k),
                            linewidths=[2.0] * k + [0.6] * (len(x) - k))
        ax.plot(read["target_x"], read["target_y"], "r+", markersize=14, mew=2, label="target")
        ax.plot(*prediction, "kx", markersize=10, mew=2, label="prediction")
        ax.set(xlim=(-VIEW, VIEW), ylim=(-VIEW, VIEW), aspect="equal",
               title=f"{state['labels'][state['model']]}, read t = {t} of {steps}")
        ax.tick_params(labelsize=9)
        ax.legend(fontsize=9, loc="lower left")
        fig.colorbar(points, ax=ax, label="weight $w_{t,i}$", shrink=0.8)
        on_small = w[:, :k].sum(axis=1)
        reads = np.arange(1, steps + 1)
        bars.bar(reads, on_small, color=["#1f77b4" if r == t else "#9ecae1" for r in reads])
        for r, value in zip(reads, on_small):
            bars.text(r, value + 0.015, f"{value:.2g}", ha="center", fontsize=9)
        bars.axhline(k / len(x), color="k", linestyle="--", linewidth=1, label="its share of the particles")
        bars.set(ylim=(0, 1), xticks=reads, xlabel="read t", title="weight on the small cluster")
        bars.legend(fontsize=9, loc="upper right")
        return fig
