"""Minimal enclosing circles of a whole batch ``[B, N, 2]`` at once, vectorised in numpy.

The minimal enclosing circle (MEC) of ``P`` is the MEC of at most three of its points (Welzl's
support set), and the MEC of any subset of ``P`` is no larger than that of ``P``. Hence

    r(P)^2 = max over triples {a, b, c} of P of r({a, b, c})^2,

and the MEC of a maximising triple ``T`` is the MEC of ``P``: the MEC of ``P`` contains ``T`` and
has radius ``r(P) = r(T)``, so it is a smallest circle around ``T``, which is unique. The MEC of a
triangle with squared sides ``s1, s2, s3`` is

* its circumcircle if it is acute (``2 max(s1, s2, s3) < s1 + s2 + s3``), with
  ``r^2 = s1 s2 s3 / (4 cross^2)``, ``cross = (b - a) x (c - a)`` (twice the signed area);
* otherwise the diametral circle of its longest side, ``r^2 = max(s1, s2, s3) / 4``; over all
  triples, the largest of these is ``max_ij |x_i - x_j|^2 / 4``.

So no candidate needs a containment test: ``C(N, 3)`` products and one maximum per population
(1140 for ``N = 20``), computed with the batch as the last axis so that every gather copies
contiguous rows. The MEC of ``P`` is also the MEC of its convex-hull vertices (a point on the
circle is a vertex of the hull), so each population is first pruned to a superset of them
(:func:`hull_candidates`, ``O(N)``): about 9 of 100 Gaussian-mixture points remain, and the triples
of a chunk are those of its largest pruned population. The pruned points lie strictly inside the
hull, the kept ones keep their order, and the winning pair or triple is found among them with the
same arithmetic: the result is the unpruned solver's bit for bit (``prune=False``; checked on
degenerate populations too in ``tests/test_circle_ground_truth.py``), about 2x faster at
``N = 20`` and over 100x at ``N = 100`` (``benchmarks/circle_hull.py``). The centre of the winner
is then computed once and certified: a circle that contains every point and has a diametral pair
or an acute triangle on its boundary is the MEC. The returned radius is ``max_n |x_n - center|``
over every point, so every point is contained by construction; where it exceeds the distance to
the winner's own points by more than ``RTOL`` (rounding picked a near tie, e.g. two points almost
antipodal on the circle), the population is solved again, on every point, by
:func:`min_enclosing_circles_bruteforce`. It did not happen on 20,000 random Gaussian-mixture
populations.

The brute force, also the tests' oracle: every point, every pair midpoint and every circumcentre
of a non-collinear triple is a candidate centre ``c``; its covering radius is
``rho(c) = max_n |x_n - c|``; the MEC is the candidate with the smallest ``rho``.
"""

from __future__ import annotations

from functools import lru_cache, partial
from itertools import combinations
from typing import Callable

import numpy as np
import torch

from .welzl import COLLINEAR_TOL, RTOL, as_points

__all__ = ["PRUNE_DIRECTIONS", "PRUNE_FROM", "PRUNE_MARGIN", "hull_candidates", "min_enclosing_circles",
           "min_enclosing_circles_bruteforce"]

#: Directions ``u_k`` whose extreme points span the polygon that prunes a population
#: (:func:`hull_candidates`): 16 leave about 7 of 20 and 9 of 100 Gaussian-mixture points.
PRUNE_DIRECTIONS = 16
#: The smallest population that is pruned; smaller ones are solved on every point, as below about
#: 12 points the pruning costs more than the triples it saves (``benchmarks/circle_hull.py``).
PRUNE_FROM = 12
#: A point is pruned only when it lies at least ``PRUNE_MARGIN`` times the population's extent
#: inside every edge of that polygon: far above the rounding of the edge test.
PRUNE_MARGIN = 1e-9

#: A triangle counts as acute when ``2 max(s) < (1 - ACUTE_MARGIN) sum(s)``: far above rounding,
#: so that no obtuse triangle passes (its circumcircle is no MEC). Nearly right triangles fail it
#: and fall to their diametral circle, which the certificate below checks.
ACUTE_MARGIN = 1e-12

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

    The vertices are first rotated so that ``a`` is opposite the longest side (the largest angle,
    at least 60 degrees, so that ``u x v`` below does not cancel). With ``u = b - a``, ``v = c - a``,
    ``d = 2 u x v``: ``center = a + (v_y |u|^2 - u_y |v|^2, u_x |v|^2 - v_x |u|^2) / d``; collinear
    (``|u x v| <= COLLINEAR_TOL |u| |v|``) gives NaN.
    """
    tri = np.stack([a, b, c], axis=-2)                                     # [..., 3, 2]
    opposite = ((np.roll(tri, -1, axis=-2) - np.roll(tri, -2, axis=-2)) ** 2).sum(-1)
    apex = opposite.argmax(-1)[..., None, None]
    a, b, c = (np.take_along_axis(tri, (apex + k) % 3, axis=-2)[..., 0, :] for k in range(3))
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


def _acute_r2(dx: np.ndarray, dy: np.ndarray, d2: np.ndarray, edges: np.ndarray,
              work: np.ndarray) -> np.ndarray:
    """``r^2 = s1 s2 s3 / (4 cross^2)`` of every acute triple, 0 for the others: ``[T, B]``.

    ``dx, dy, d2`` are ``[n * n, B]`` (``x_i - x_j`` and ``|x_i - x_j|^2`` at row ``i n + j``),
    ``edges`` the ``[3, T]`` rows of the sides ``ab, bc, ca``. Every ``[T, B]`` float array lives in
    ``work`` ``[5, T, B]``: fresh arrays of this size (above malloc's mmap threshold) cost a page
    fault per page and chunk: 25,000 instead of 60,000 populations/s on a first call.
    """
    s1, s2, s3, area2, tmp = work
    ab, bc, ca = edges
    for side, edge in zip((s1, s2, s3), edges):
        np.take(d2, edge, axis=0, out=side)
    np.maximum(s1, s2, out=tmp)
    np.maximum(tmp, s3, out=tmp)
    tmp *= 2
    tmp -= s1
    tmp -= s2
    tmp -= s3                                                  # 2 max(s) - sum(s)
    np.add(s1, s2, out=area2)
    area2 += s3
    area2 *= -ACUTE_MARGIN
    acute = tmp < area2                                        # 2 max(s) < (1 - margin) sum(s)
    s1 *= s2
    s1 *= s3                                                   # s1 s2 s3
    np.take(dx, ab, axis=0, out=area2)
    area2 *= np.take(dy, ca, axis=0, out=tmp)
    np.take(dy, ab, axis=0, out=s2)
    s2 *= np.take(dx, ca, axis=0, out=s3)
    area2 -= s2                                                # (a - b) x (c - a), from differences
    area2 *= area2
    area2 *= 4                                                 # 4 cross^2
    np.divide(s1, area2, out=s1, where=acute)
    s1 *= acute
    return s1


def hull_candidates(x: np.ndarray) -> np.ndarray:
    """Which points ``[B, N]`` of populations ``x`` ``[B, N, 2]`` may be convex-hull vertices (a superset).

    With ``u_k = (cos 2 pi k / K, sin 2 pi k / K)``, ``K =`` :data:`PRUNE_DIRECTIONS`, the extreme
    points ``v_k = argmax_n <x_n, u_k>`` are hull vertices in counter-clockwise order. A point ``p``
    with ``(v_{k+1} - v_k) x (p - v_k) > PRUNE_MARGIN * max_n |x_n - x_1| * |v_{k+1} - v_k|`` for every
    edge of non-zero length lies inside their polygon, at least that margin from each edge line,
    so strictly inside the hull: it is on no enclosing circle of minimal radius and in no support
    set, and is pruned. The ``v_k`` and every other point are kept.
    """
    count, n, _ = x.shape
    rows = np.arange(count)
    points = np.ascontiguousarray(x.transpose(2, 1, 0))                         # [2, N, B]: batch last
    X, Y = points
    angles = 2 * np.pi * np.arange(PRUNE_DIRECTIONS) / PRUNE_DIRECTIONS
    directions = np.stack([np.cos(angles), np.sin(angles)], axis=1)             # [K, 2]
    extreme = (directions @ points.reshape(2, -1)).reshape(-1, n, count).argmax(axis=1)    # [K, B]
    vx, vy = X[extreme, rows], Y[extreme, rows]
    ex, ey = np.roll(vx, -1, axis=0) - vx, np.roll(vy, -1, axis=0) - vy          # edges v_k -> v_{k+1}
    length = np.hypot(ex, ey)
    extent = np.sqrt(((X - X[0]) ** 2 + (Y - Y[0]) ** 2).max(axis=0))
    # e x (p - v) > margin |e|  <=>  e_x p_y - e_y p_x > e_x v_y - e_y v_x + margin |e|
    threshold = ex * vy - ey * vx + PRUNE_MARGIN * extent * length
    threshold[length == 0] = -np.inf                                            # no edge, no constraint
    normals = np.stack([-ey, ex], axis=-1).transpose(1, 0, 2)                    # [B, K, 2]
    cross = normals @ points.transpose(2, 0, 1)                                 # [B, K, N]
    inside = (cross > threshold.T[:, :, None]).all(axis=1)
    inside[rows[:, None], extreme.T] = False
    return ~inside


def _pruned(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The candidates of :func:`hull_candidates` of each population in their original order, padded
    to the largest count (at least 3) with copies of the population's first candidate ``[B, M, 2]``,
    and each population's count ``[B]``. A pair with a copy has the distance of a pair of originals
    that comes earlier, so the first farthest pair is one of originals; triples with a copy are
    masked out by the caller (their sides, taken in another order, may round differently)."""
    keep = hull_candidates(x)
    count = keep.sum(axis=1)
    size = max(int(count.max()), 3)
    order = np.argsort(~keep, axis=1, kind="stable")[:, :size]                 # kept first, in order
    order = np.where(np.arange(size) < count[:, None], order, order[:, :1])
    return np.take_along_axis(x, order[..., None], axis=1), count


def _triples(x: np.ndarray, work: list[np.ndarray], prune: bool) -> tuple[np.ndarray, np.ndarray]:
    """The max-over-triples solver on one chunk (on its :func:`hull_candidates` if ``prune`` and
    ``N >=`` :data:`PRUNE_FROM`); ``work`` holds the scratch array, allocated anew where a chunk
    needs more."""
    count, n, _ = x.shape
    if n == 1:
        return x[:, 0].copy(), np.zeros(count)
    points, count_kept = _pruned(x) if prune and n >= PRUNE_FROM else (x, None)
    n = points.shape[1]
    rows = np.arange(count)
    # Batch last: every gather below copies whole contiguous rows of B values.
    X, Y = np.ascontiguousarray(points.transpose(2, 1, 0))                 # [n, B] each
    dx, dy = (X[:, None] - X[None]).reshape(n * n, count), (Y[:, None] - Y[None]).reshape(n * n, count)
    d2 = dx * dx + dy * dy                                                 # |x_i - x_j|^2
    far = d2.argmax(axis=0)
    centers = (points[rows, far // n] + points[rows, far % n]) / 2
    r2 = d2[far, rows] / 4
    if n >= 3:
        edges = _flat_edges(n)
        size = 5 * edges.shape[1] * count
        if not work or work[0].size < size:
            work[:] = [np.empty(size)]
        tri_r2 = _acute_r2(dx, dy, d2, edges, work[0][:size].reshape(5, -1, count))
        if count_kept is not None:                  # no triple with a padding copy may win
            tri_r2 *= _indices(n)[1][:, 2, None] < count_kept
        best = tri_r2.argmax(axis=0)
        wins = tri_r2[best, rows] > r2
        support = points[rows[wins, None], _indices(n)[1][best[wins]]]      # [W, 3, 2]
        centers[wins] = _circumcenters(*support.transpose(1, 0, 2))[0]
        r2[wins] = ((support - centers[wins, None]) ** 2).sum(-1).min(-1)
    # Certificate: a circle that contains every point and has a diametral pair or an acute
    # triangle on its boundary is the MEC. Rounding can break it at near ties; use the oracle there.
    radii = _covering_radius(x, centers[:, None])[:, 0]
    tie = ~(radii <= np.sqrt(r2) * (1 + RTOL))                                 # NaN included
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


def min_enclosing_circles(points: np.ndarray | torch.Tensor, chunk: int = 64, prune: bool = True
                          ) -> tuple[np.ndarray | torch.Tensor, np.ndarray | torch.Tensor]:
    """Minimal enclosing circles of ``B`` populations ``[B, N, 2]`` (numpy or torch).

    Returns ``(centers [B, 2], radii [B])`` of the input's kind (float64 for numpy). Every point
    lies within ``radii`` of its centre. With ``prune`` (the default) each population of at least
    :data:`PRUNE_FROM` points is first pruned to its :func:`hull_candidates`, ``H`` points: cost
    ``O(B (N + H^3))`` time and ``O(chunk H^3)`` memory, where ``H`` is a chunk's largest count
    (about 10 to 20 for the paper's populations of 20 to 100 points; up to ``N`` for points on a
    circle, so use ``min_enclosing_circle`` for large co-circular populations). ``prune=False``
    solves on every point, ``O(B N^3)``: the same results bit for bit, the reference of the tests
    and benchmark.
    """
    if not isinstance(prune, bool):
        raise ValueError(f"prune must be True or False, got {prune!r}")
    work: list[np.ndarray] = []       # scratch space, grown by the chunk that needs more
    return _batched(partial(_triples, work=work, prune=prune), points, chunk)


def min_enclosing_circles_bruteforce(points: np.ndarray | torch.Tensor, chunk: int = 64
                                     ) -> tuple[np.ndarray | torch.Tensor, np.ndarray | torch.Tensor]:
    """The same as :func:`min_enclosing_circles` by brute force (``O(B N^4)``): the tests' oracle.

    Every point, pair midpoint and circumcentre is a candidate centre; the answer is the candidate
    whose farthest point is nearest.
    """
    return _batched(_bruteforce, points, chunk)
