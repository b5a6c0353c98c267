"""Welzl's algorithm for the minimal enclosing circle of one population, written to be read.

Welzl (1991), *Smallest enclosing disks (balls and ellipsoids)*. Let ``md(P, R)`` be the smallest
circle that contains the points ``P`` and has the points ``R`` on its boundary. Then::

    md(P, R):
        if P is empty or |R| = 3:  return the trivial circle of R
        pick a point p of P (at random)
        D = md(P - p, R)
        if p in D:                 return D
        else:                      return md(P - p, R + {p})      # p must lie on the boundary

and the minimal enclosing circle of ``P`` is ``md(P, {})``. Picking ``p`` at random makes the
expected running time linear in ``|P|``. Shuffling ``P`` once and always picking its *last* point
unrolls the ``P - p`` recursion into a loop over the points in order (the "move-to-front" form):
only the ``R + {p}`` calls recurse, so the recursion is at most three deep::

    md(P, R):
        if |R| = 3: return circle(R)
        D = circle(R)
        for i, p in enumerate(P):
            if p not in D: D = md(P[:i], R + {p})
        return D

The trivial circles of the support set ``R``:

* ``|R| = 0``: the empty circle (it contains nothing);
* ``|R| = 1``: centre ``a``, radius 0;
* ``|R| = 2``: the diametral circle, centre ``(a + b) / 2``, radius ``|a - b| / 2``;
* ``|R| = 3``: the circumcircle. With ``u = b - a``, ``v = c - a`` and
  ``d = 2 (u_x v_y - u_y v_x)``, its centre is ``a + (v_y |u|^2 - u_y |v|^2, u_x |v|^2 - v_x |u|^2) / d``
  and its radius the distance from the centre to ``a``. We name the points so that ``a`` faces the
  longest side: its angle is the largest, so ``u x v`` does not cancel in thin triangles.
  Collinear points (``d = 0``) have no circumcircle: we return the diametral circle of the two
  points farthest apart, ``b`` and ``c``.

"Inside" allows a relative tolerance, ``|p - c| <= r (1 + RTOL)``, so that duplicates and points
already on the boundary (co-circular points) never enter ``R`` through rounding error. Points are
shifted by their first point before solving, so that the tolerance is relative to the population's
extent, not to its distance from the origin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["RTOL", "Circle", "Step", "circle_of", "min_enclosing_circle", "welzl_trace"]

#: Relative tolerance of the containment test ``|p - c| <= r (1 + RTOL)``.
RTOL = 1e-10
#: Triples with ``|sin(angle)| <= COLLINEAR_TOL`` between their edges count as collinear.
COLLINEAR_TOL = 1e-12


@dataclass(frozen=True)
class Circle:
    """A circle ``|x - center| <= radius``; ``radius = -inf`` is the empty circle of ``R = {}``."""

    center: np.ndarray
    radius: float

    def contains(self, p: np.ndarray) -> bool:
        """``|p - center| <= radius (1 + RTOL)``."""
        return float(np.hypot(*(p - self.center))) <= self.radius * (1 + RTOL)


EMPTY = Circle(np.zeros(2), -np.inf)


@dataclass(frozen=True)
class Step:
    """One containment test of the recursion: is ``point`` inside ``circle = md(P[:i], support)``?

    ``support`` holds the indices (into the original ``points``) of ``R``; ``point`` is the index
    of the candidate ``p``; ``depth = |R|``. When ``inside`` is False the recursion continues with
    ``R + {point}``. Centres are in the original coordinates.
    """

    support: tuple[int, ...]
    point: int
    circle: Circle
    inside: bool
    depth: int


def as_points(points: np.ndarray | torch.Tensor, ndim: int) -> np.ndarray:
    """``points`` as a float64 numpy array of shape ``[..., N, 2]`` with ``ndim`` axes, or a ValueError."""
    if isinstance(points, torch.Tensor):
        points = points.detach().cpu().numpy()
    points = np.asarray(points, dtype=np.float64)
    layout = "[N, 2] (one population of N points in the plane)" if ndim == 2 else \
        "[B, N, 2] (B populations of N points in the plane)"
    if points.ndim != ndim or points.shape[-1] != 2:
        hint = ""
        if ndim == 2 and points.ndim == 3:
            hint = "; for a batch [B, N, 2] use min_enclosing_circles"
        if ndim == 3 and points.ndim == 2:
            hint = "; for one population [N, 2] use min_enclosing_circle or add a batch axis with points[None]"
        raise ValueError(f"points must have shape {layout}, got shape {points.shape}{hint}")
    if points.shape[-2] == 0:
        raise ValueError(f"points has N = 0 points per population (shape {points.shape}); the minimal "
                         "enclosing circle needs at least one point")
    bad = ~np.isfinite(points).all(axis=-1)
    if bad.any():
        where = np.argwhere(bad)[:5].tolist()
        label = "point" if ndim == 2 else "(population, point)"
        raise ValueError(f"points contain NaN or inf at {label} index {where}"
                         f"{' ...' if bad.sum() > 5 else ''}: drop or impute those points first")
    return points


def circle_of(support: np.ndarray) -> Circle:
    """The trivial circle of ``|R| <= 3`` support points ``[|R|, 2]`` (see the module docstring)."""
    if len(support) == 0:
        return EMPTY
    if len(support) == 1:
        return Circle(support[0].copy(), 0.0)
    if len(support) == 2:
        a, b = support
        return Circle((a + b) / 2, float(np.hypot(*(a - b))) / 2)
    opposite = [float(np.sum((support[(k + 1) % 3] - support[(k + 2) % 3]) ** 2)) for k in range(3)]
    a, b, c = np.roll(support, -int(np.argmax(opposite)), axis=0)     # a faces the longest side
    u, v = b - a, c - a
    uu, vv = u @ u, v @ v
    d = 2 * (u[0] * v[1] - u[1] * v[0])
    if abs(d) <= 2 * COLLINEAR_TOL * np.sqrt(uu * vv):
        return circle_of(np.stack([b, c]))                               # the two extremes
    offset = np.array([v[1] * uu - u[1] * vv, u[0] * vv - v[0] * uu]) / d
    return Circle(a + offset, float(np.hypot(*offset)))


def _md(points: np.ndarray, order: list[int], support: list[int], steps: list[Step] | None) -> Circle:
    """``md(P, R)`` in move-to-front form, with ``P = points[order]`` and ``R = points[support]``."""
    disk = circle_of(points[support])
    if len(support) == 3:
        return disk
    for i, p in enumerate(order):
        inside = disk.contains(points[p])
        if steps is not None:
            steps.append(Step(tuple(support), p, disk, inside, len(support)))
        if not inside:
            disk = _md(points, order[:i], support + [p], steps)
    return disk


def _solve(points: np.ndarray | torch.Tensor, seed: int | None,
           steps: list[Step] | None) -> tuple[np.ndarray, float]:
    points = as_points(points, ndim=2)
    origin = points[0]
    order = np.random.default_rng(seed).permutation(len(points)).tolist()
    disk = _md(points - origin, order, [], steps)
    if steps is not None:
        steps[:] = [Step(s.support, s.point, Circle(s.circle.center + origin, s.circle.radius),
                         s.inside, s.depth) for s in steps]
    return disk.center + origin, disk.radius


def min_enclosing_circle(points: np.ndarray | torch.Tensor, seed: int | None = 0) -> tuple[np.ndarray, float]:
    """Minimal enclosing circle of one population ``[N, 2]`` (numpy or torch) by Welzl's algorithm.

    Returns ``(center, radius)``: a float64 array of shape ``[2]`` and a float. Every point lies
    within ``radius (1 + 3 RTOL)`` of ``center`` (one tolerance per recursion level). ``seed``
    fixes the random order of the points; the circle does not depend on it (up to rounding).
    """
    return _solve(points, seed, None)


def welzl_trace(points: np.ndarray | torch.Tensor, seed: int | None = 0) -> list[Step]:
    """Every containment test Welzl's algorithm makes on ``points`` ``[N, 2]``, in order.

    For a step-through figure: step ``k`` shows ``circle`` with its ``support`` points highlighted
    and the candidate ``point`` green (``inside``) or red (it joins the support). The answer, after
    the last step, is ``min_enclosing_circle(points, seed)``.
    """
    steps: list[Step] = []
    _solve(points, seed, steps)
    return steps
