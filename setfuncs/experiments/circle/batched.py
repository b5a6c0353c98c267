"""Minimal enclosing circles of a whole batch ``[B, N, 2]`` at once, vectorised in numpy.

The minimal enclosing circle (MEC) of ``P`` is the MEC of at most three of its points (Welzl's
support set), and the MEC of any subset of ``P`` is no larger than that of ``P``. Hence

    r(P)^2 = max over triples {a, b, c} of P of r({a, b, c})^2,

and the MEC of a maximising triple ``T`` is the MEC of ``P``: the MEC of ``P`` contains ``T`` and
has radius ``r(P) = r(T)``, so it is a smallest circle around ``T``, which is unique. The MEC of a triangle with squared sides
``s1, s2, s3`` is

* its circumcircle if it is acute (``2 max(s1, s2, s3) < s1 + s2 + s3``), with
  ``r^2 = s1 s2 s3 / (4 cross^2)``, ``cross = (b - a) x (c - a)`` (twice the signed area);
* otherwise the diametral circle of its longest side, ``r^2 = max(s1, s2, s3) / 4``; over all
  triples, the largest of these is ``max_ij |x_i - x_j|^2 / 4``.

So no containment test is needed: ``C(N, 3)`` products and one maximum per population (1140 for
``N = 20``), computed with the batch as the last axis so that every gather copies contiguous rows;
about 70,000 populations of 20 points per second on one core, ``benchmarks/circle_labels.py``. The centre of the winner is then computed once, and the radius is taken as
``max_n |x_n - center|``, so every point is contained by construction. Where rounding picks a
near-tie (two points almost antipodal on the circle) that radius exceeds the winner's own by more
than ``RTOL``; those populations are solved again by :func:`min_enclosing_circles_bruteforce`.

The brute force, also the tests' oracle: every point, every pair midpoint and every circumcentre
of a non-collinear triple is a candidate centre ``c``; its covering radius is
``rho(c) = max_n |x_n - c|``; the MEC is the candidate with the smallest ``rho``.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from typing import Callable

import numpy as np
import torch

from .welzl import COLLINEAR_TOL, RTOL, as_points

__all__ = ["min_enclosing_circles", "min_enclosing_circles_bruteforce"]

Solver = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@lru_cache(maxsize=None)
def _indices(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``[P, 2]`` and triples ``[T, 3]`` ``i < j (< k)`` of ``range(n)``."""
    pairs = np.array(list(combinations(range(n), 2)), dtype=np.intp).reshape(-1, 2)
    triples = np.array(list(combinations(range(n), 3)), dtype=np.intp).reshape(-1, 3)
    return pairs, triples


@lru_cache(maxsize=None)
def _flat_edges(n: int) -> np.ndarray:
    """``[3, T]`` edges ``ab, bc, ca`` of every triple as rows ``i n + j`` of an ``[n * n, B]`` array."""
    a, b, c = _indices(n)[1].T
    return np.stack([a * n + b, b * n + c, c * n + a])


def _circumcenters(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Circumcentres ``[..., 2]`` of triangles ``a, b, c`` ``[..., 2]``, and which are non-collinear.

    With ``u = b - a``, ``v = c - a``, ``d = 2 u x v``: ``center = a + (v_y |u|^2 - u_y |v|^2,
    u_x |v|^2 - v_x |u|^2) / d``; collinear (``|u x v| <= COLLINEAR_TOL |u| |v|``) gives NaN.
    """
    u, v = b - a, c - a
    uu, vv = (u * u).sum(-1), (v * v).sum(-1)
    d = 2 * (u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0])
    ok = np.abs(d) > 2 * COLLINEAR_TOL * np.sqrt(uu * vv)
    offset = np.stack([v[..., 1] * uu - u[..., 1] * vv, u[..., 0] * vv - v[..., 0] * uu], axis=-1)
    offset = np.divide(offset, d[..., None], out=np.full_like(offset, np.nan), where=ok[..., None])
    return a + offset, ok


def _covering_radius(x: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """``rho(c) = max_n |x_n - c|`` for populations ``x`` ``[B, N, 2]`` and centres ``[B, K, 2]``."""
    diff = x[:, None, :, :] - centers[:, :, None, :]
    return np.sqrt((diff * diff).sum(-1).max(-1))


def _bruteforce(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pairs, triples = _indices(x.shape[1])
    circum, ok = _circumcenters(*(x[:, triples[:, k]] for k in range(3)))
    centers = np.concatenate([x, x[:, pairs].mean(axis=2), circum], axis=1)
    rho = _covering_radius(x, centers)
    rho[:, x.shape[1] + len(pairs):][~ok] = np.inf
    best = rho.argmin(axis=1)
    rows = np.arange(len(x))
    return centers[rows, best], rho[rows, best]


def _triples(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    count, n, _ = x.shape
    if n == 1:
        return x[:, 0].copy(), np.zeros(count)
    rows = np.arange(count)
    # Batch last: every gather below copies whole contiguous rows of B values.
    X, Y = np.ascontiguousarray(x.transpose(2, 1, 0))                      # [n, B] each
    dx, dy = X[:, None] - X[None], Y[:, None] - Y[None]
    d2 = (dx * dx + dy * dy).reshape(n * n, count)                             # |x_i - x_j|^2
    far = d2.argmax(axis=0)
    centers = (x[rows, far // n] + x[rows, far % n]) / 2
    r2 = d2[far, rows] / 4
    if n >= 3:
        ab, bc, ca = _flat_edges(n)
        s1, s2, s3 = d2[ab], d2[bc], d2[ca]                                # [T, B] each
        cross = (X[:, None] * Y[None] - Y[:, None] * X[None]).reshape(n * n, count)  # x_i x x_j
        area2 = cross[ab] + cross[bc] + cross[ca]                          # (b - a) x (c - a)
        area2 *= area2
        acute = 2 * np.maximum(np.maximum(s1, s2), s3) < s1 + s2 + s3
        tri_r2 = np.divide(s1 * s2 * s3, 4 * area2, out=np.zeros_like(s1), where=acute)
        best = tri_r2.argmax(axis=0)
        wins = tri_r2[best, rows] > r2
        triple = _indices(n)[1][best[wins]]
        centers[wins] = _circumcenters(*(x[rows[wins], triple[:, k]] for k in range(3)))[0]
        r2[wins] = tri_r2[best[wins], rows[wins]]
    radii = _covering_radius(x, centers[:, None])[:, 0]
    tie = radii > np.sqrt(r2) * (1 + RTOL)
    if tie.any():
        centers[tie], radii[tie] = _bruteforce(x[tie])
    return centers, radii


def _batched(solver: Solver, points: np.ndarray | torch.Tensor,
             chunk: int) -> tuple[np.ndarray | torch.Tensor, np.ndarray | torch.Tensor]:
    """Validate ``points``, shift each population to its first point, solve in chunks, shift back,
    and return arrays of the input's kind (torch: input dtype if floating, else float64)."""
    x = as_points(points, ndim=3)
    origin = x[:, 0].copy()
    x = x - origin[:, None]
    centers, radii = np.empty((len(x), 2)), np.empty(len(x))
    for start in range(0, len(x), chunk):
        part = slice(start, start + chunk)
        centers[part], radii[part] = solver(x[part])
    centers += origin
    if isinstance(points, torch.Tensor):
        dtype = points.dtype if points.is_floating_point() else torch.float64
        return (torch.as_tensor(centers, dtype=dtype, device=points.device),
                torch.as_tensor(radii, dtype=dtype, device=points.device))
    return centers, radii


def min_enclosing_circles(points: np.ndarray | torch.Tensor, chunk: int = 64
                          ) -> tuple[np.ndarray | torch.Tensor, np.ndarray | torch.Tensor]:
    """Minimal enclosing circles of ``B`` populations ``[B, N, 2]`` (numpy or torch).

    Returns ``(centers [B, 2], radii [B])`` of the input's kind (float64 for numpy). Every point
    lies within ``radii`` of its centre. Cost ``O(B N^3)`` time, ``O(chunk N^3)`` memory: meant
    for the paper's small populations (N = 20), not for large N (use ``min_enclosing_circle``).
    """
    return _batched(_triples, points, chunk)


def min_enclosing_circles_bruteforce(points: np.ndarray | torch.Tensor, chunk: int = 64
                                     ) -> tuple[np.ndarray | torch.Tensor, np.ndarray | torch.Tensor]:
    """The same as :func:`min_enclosing_circles` by brute force (``O(B N^4)``): the tests' oracle.

    Every point, pair midpoint and circumcentre is a candidate centre; the answer is the candidate
    whose farthest point is nearest.
    """
    return _batched(_bruteforce, points, chunk)
