"""Every spatial-attention run's test ELBO, by configuration and seed: what the claims of Figure 5 pair.

Only usable runs count (:func:`~setfuncs.experiments.attention.table.usable_runs`: neither diverged nor
failed); the image localiser's ELBO is read off the canvas, a set localiser's at the training population
size.
"""

from __future__ import annotations

from typing import Callable

from .localisers import IMAGE
from .sweep import SPECS
from .table import usable_runs

__all__ = ["per_seed", "elbo_by_run"]


def per_seed(runs: list[dict], value: Callable[[dict], float]) -> dict[int, float]:
    """``{seed: value(run)}`` of ``runs``."""
    return {r["seed"]: float(value(r)) for r in runs}


def elbo_by_run(results: dict) -> dict[tuple[str, int], float]:
    """``{(spec, seed): test ELBO}`` (nats per canvas) of every usable run: the image localiser's, and a set
    localiser's at the training size ``budget_parameters.particles``."""
    train = str(results["budget_parameters"]["particles"])
    out = {}
    for spec in SPECS:
        at = "image" if spec == IMAGE else train
        out.update({(spec, seed): elbo for seed, elbo in
                    per_seed(usable_runs(results, spec)[0], lambda r: r["evaluation"][at]["elbo"]).items()})
    return out
