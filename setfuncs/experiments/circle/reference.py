"""The package's two circle solvers against an independent one, the ``miniball`` package.

``miniball`` (a chapter dependency, imported on use) solves one population at a time with its own
algorithm, so agreement to rounding error checks both of ours: the batched solver
(:func:`~setfuncs.experiments.circle.min_enclosing_circles`) and Welzl's algorithm as written to be
read (:func:`~setfuncs.experiments.circle.min_enclosing_circle`).
"""

from __future__ import annotations

import time

import numpy as np

from .batched import min_enclosing_circles
from .welzl import min_enclosing_circle

__all__ = ["compare_with_miniball"]


def compare_with_miniball(points: np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
    """Solve every population of ``points`` ``[B, N, 2]`` with the batched solver, with Welzl's
    algorithm one population at a time and with ``miniball``, timing each.

    Returns ``(seconds, differences)``: the wall time of each solver by its name, and the largest
    absolute difference to ``miniball`` of the batched radii (``batched_radius``), of Welzl's
    radii (``welzl_radius``) and of the batched centres (``batched_center``, over both coordinates).
    """
    import miniball

    seconds = {}
    start = time.perf_counter()
    batched_centers, batched_radii = min_enclosing_circles(points)
    seconds["batched (setfuncs)"] = time.perf_counter() - start
    start = time.perf_counter()
    welzl = [min_enclosing_circle(p) for p in points]
    seconds["Welzl, one population at a time (setfuncs)"] = time.perf_counter() - start
    start = time.perf_counter()
    reference = [miniball.get_bounding_ball(p, rng=np.random.default_rng(0)) for p in points]
    seconds["miniball (reference)"] = time.perf_counter() - start

    reference_radii = np.sqrt([squared_radius for _, squared_radius in reference])
    reference_centers = np.array([center for center, _ in reference])
    welzl_radii = np.array([radius for _, radius in welzl])
    return seconds, {"batched_radius": float(np.abs(batched_radii - reference_radii).max()),
                     "welzl_radius": float(np.abs(welzl_radii - reference_radii).max()),
                     "batched_center": float(np.abs(batched_centers - reference_centers).max())}
