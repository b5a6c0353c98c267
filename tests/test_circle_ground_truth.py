"""Ground truth of the minimal enclosing circle experiment: Welzl's algorithm, the batched solver
and the brute-force oracle agree with each other and with the ``miniball`` package, contain every
point, are minimal, ignore the order of the points, and survive degenerate populations; the
batched solver's pruning to the convex hull keeps every hull vertex and changes no circle."""

from __future__ import annotations

from itertools import combinations
from typing import Callable

import miniball
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from scipy.spatial import ConvexHull

from setfuncs.experiments.circle import (batched, circle_of, min_enclosing_circle,
                                         min_enclosing_circles, min_enclosing_circles_bruteforce,
                                         welzl_trace)
from setfuncs.experiments.circle.batched import PRUNE_FROM, hull_candidates
from setfuncs.experiments.circle.batched_torch import min_enclosing_circles_torch
from setfuncs.experiments.circle.data import sample_populations
from setfuncs.experiments.circle.welzl import RTOL

Disk = tuple[np.ndarray, float]


def welzl(points: np.ndarray) -> Disk:
    return min_enclosing_circle(points)


def fast(points: np.ndarray) -> Disk:
    centers, radii = min_enclosing_circles(points[None])
    return centers[0], float(radii[0])


def on_torch(points: np.ndarray) -> Disk:
    """The torch port (what labels the training streams on a GPU), run here on the CPU."""
    centers, radii = min_enclosing_circles_torch(torch.as_tensor(points, dtype=torch.float64)[None])
    return centers[0].numpy(), float(radii[0])


def brute(points: np.ndarray) -> Disk:
    centers, radii = min_enclosing_circles_bruteforce(points[None])
    return centers[0], float(radii[0])


SOLVERS: dict[str, Callable[[np.ndarray], Disk]] = {"welzl": welzl, "batched": fast, "torch": on_torch,
                                                    "bruteforce": brute}
every_solver = pytest.mark.parametrize("solve", SOLVERS.values(), ids=SOLVERS.keys())


def population(seed: int, n: int, kind: str) -> np.ndarray:
    """``n`` points from a 3-component Gaussian mixture or uniform on a rectangle."""
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        return rng.uniform([-3, -1], [2, 4], size=(n, 2))
    means = rng.normal(scale=3.0, size=(3, 2))
    return means[rng.integers(3, size=n)] + rng.normal(scale=0.5, size=(n, 2))


def assert_contains(points: np.ndarray, center: np.ndarray, radius: float) -> None:
    dist = np.hypot(*(points - center).T)
    assert np.all(dist <= radius * (1 + 1e-9)), (dist.max(), radius)


def assert_minimal(points: np.ndarray, radius: float) -> None:
    """No diametral circle of a pair or circumcircle of a triple smaller than ``radius`` contains
    every point (the MEC is one of those circles)."""
    for size in (2, 3):
        for support in combinations(range(len(points)), size):
            circle = circle_of(points[list(support)])
            if circle.radius < radius * (1 - 1e-9):
                dist = np.hypot(*(points - circle.center).T)
                assert dist.max() > circle.radius * (1 + 1e-9), (support, circle, radius)


def assert_same(a: Disk, b: Disk, rtol: float = 1e-9) -> None:
    scale = max(a[1], b[1], 1e-300)
    assert abs(a[1] - b[1]) <= rtol * scale, (a, b)
    np.testing.assert_allclose(a[0], b[0], rtol=0, atol=rtol * scale)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 20), kind=st.sampled_from(["gmm", "uniform"]))
def test_random_populations_agree_with_miniball(seed: int, n: int, kind: str) -> None:
    points = population(seed, n, kind)
    center, r2 = miniball.get_bounding_ball(points, rng=np.random.default_rng(seed))
    reference = (center, float(np.sqrt(r2)))
    for solve in SOLVERS.values():
        result = solve(points)
        assert_same(result, reference, rtol=1e-7)       # miniball's own containment tolerance
        assert_same(result, brute(points))
        assert_contains(points, *result)


def test_batch_of_populations_matches_oracle_row_by_row() -> None:
    points = np.stack([population(seed, 20, kind) for seed in range(100) for kind in ("gmm", "uniform")])
    centers, radii = min_enclosing_circles(points)
    oracle_centers, oracle_radii = min_enclosing_circles_bruteforce(points)
    np.testing.assert_allclose(radii, oracle_radii, rtol=1e-9)
    np.testing.assert_allclose(centers, oracle_centers, rtol=0, atol=1e-9 * radii.max())
    for p, c, r in zip(points, centers, radii):
        assert_same((c, r), welzl(p))


@given(points=arrays(np.float64, st.tuples(st.integers(1, 7), st.just(2)),
                     elements=st.integers(-4, 4).map(float) | st.floats(-5, 5, width=32)))
def test_adversarial_populations_contained_and_minimal(points: np.ndarray) -> None:
    """Small grids of repeated, collinear and co-circular values hypothesis finds."""
    _, oracle = brute(points)
    for solve in SOLVERS.values():
        center, radius = solve(points)
        assert_contains(points, center, radius)
        assert radius <= oracle * (1 + 1e-9) + 1e-300
    assert_minimal(points, oracle)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 12))
def test_minimal(seed: int, n: int) -> None:
    points = population(seed, n, "gmm")
    for solve in SOLVERS.values():
        assert_minimal(points, solve(points)[1])


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 20), kind=st.sampled_from(["gmm", "uniform"]))
def test_permutation_invariance(seed: int, n: int, kind: str) -> None:
    points = population(seed, n, kind)
    shuffled = points[np.random.default_rng(seed + 1).permutation(n)]
    for solve in SOLVERS.values():
        assert_same(solve(points), solve(shuffled), rtol=1e-12)
    assert_same(min_enclosing_circle(points, seed=1), min_enclosing_circle(points, seed=2), rtol=1e-12)


EDGE_CASES: dict[str, tuple[list[list[float]], list[float], float]] = {
    "one point": ([[1.5, -2.0]], [1.5, -2.0], 0.0),
    "two points": ([[0, 0], [3, 4]], [1.5, 2.0], 2.5),
    "all equal": ([[2.0, 1.0]] * 20, [2.0, 1.0], 0.0),
    "two distinct repeated": ([[0, 0], [0, 2]] * 10, [0.0, 1.0], 1.0),
    "collinear": ([[t, 2 * t + 1] for t in (0.5, -1, 3, 0, 2, 3, -1, 1)], [1.0, 3.0], 2 * np.sqrt(5)),
    "three collinear": ([[0, 0], [1, 1], [3, 3]], [1.5, 1.5], 1.5 * np.sqrt(2)),
    "obtuse triangle": ([[0, 0], [4, 0], [1, 1]], [2.0, 0.0], 2.0),
    "right triangle": ([[0, 0], [4, 0], [0, 3]], [2.0, 1.5], 2.5),
    "acute triangle": ([[0, 0], [4, 0], [2, 3]], [2.0, 5 / 6], 13 / 6),
    "collinear, 1e-22 off": ([[1, 8.5e-23], [1, 1], [1, 0]], [1.0, 0.5], 0.5),
    "obtuse, a 1e-22 side": ([[1, 8.5e-23], [0, 1], [1, 0]], [0.5, 0.5], np.sqrt(0.5)),
    "square with centre": ([[1, 1], [-1, 1], [-1, -1], [1, -1], [0, 0]], [0.0, 0.0], np.sqrt(2)),
}


@every_solver
@pytest.mark.parametrize("case", EDGE_CASES.values(), ids=EDGE_CASES.keys())
def test_edge_cases(solve, case) -> None:
    points, center, radius = np.array(case[0], dtype=float), np.array(case[1]), case[2]
    assert_same(solve(points), (center, radius), rtol=1e-12)


@every_solver
@pytest.mark.parametrize("n", [3, 4, 7, 20])
def test_co_circular_points_give_their_circle(solve, n: int) -> None:
    """Points on a circle that no half-circle holds: the MEC is that circle (regular polygons
    hold exactly antipodal pairs when n is even)."""
    angles = 2 * np.pi * np.arange(n) / n + 0.3
    points = np.array([1.0, -2.0]) + 3.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    assert_same(solve(points), (np.array([1.0, -2.0]), 3.0), rtol=1e-12)


def test_near_antipodal_tie_falls_back_to_oracle(monkeypatch) -> None:
    """Two points 1e-9 to 3e-8 rad from antipodal have a diametral circle whose radius ties the
    MEC's in float64 while its centre is up to 5e-8 off: where rounding lets that circle win, the
    batched solver must notice and use the oracle."""
    calls, original = [], batched._bruteforce

    def spy(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls.append(len(x))
        return original(x)

    monkeypatch.setattr(batched, "_bruteforce", spy)
    for gap in (1e-9, 3e-9, 1e-8, 3e-8):
        for turn in np.linspace(0, 6, 13):
            angles = np.array([0, np.pi - gap, -np.pi / 2 - 0.3, -np.pi / 2 + 0.3]) + turn
            points = np.array([1.0, -2.0]) + 3.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
            result = fast(points)
            assert_contains(points, *result)
            assert_same(result, (np.array([1.0, -2.0]), 3.0), rtol=1e-12)
    assert calls, "no near tie reached the fallback: pick other angles so that the test covers it"


@every_solver
def test_translation_and_scale_equivariance(solve) -> None:
    points = population(7, 20, "gmm")
    center, radius = solve(points)
    assert_same(solve(1e-3 * points + 1e4), (1e-3 * center + 1e4, 1e-3 * radius), rtol=1e-9)


def batches_of_every_kind(rng: np.random.Generator, count: int, n: int) -> dict[str, np.ndarray]:
    """``count`` populations ``[count, n, 2]`` of each kind: the experiment's, and degenerate ones
    (repeated, collinear, co-circular, on an integer grid, tiny and far from the origin)."""
    angles = rng.uniform(0, 2 * np.pi, (count, n))
    polygon = 2 * np.pi * np.arange(n) / n
    regular = np.stack([np.cos(polygon), np.sin(polygon)], axis=-1) * np.where(np.arange(n) % 2, 1.0, 0.5)[:, None]
    t = rng.normal(size=(count, n, 1))
    grid = rng.integers(-2, 3, (count, n, 2)).astype(float)
    grid[:, : n // 2] = 0
    outlier = rng.normal(scale=0.1, size=(count, n, 2))
    outlier[:, -1] = [5.0, -3.0]
    return {
        "experiment": sample_populations(count, n, torch.Generator().manual_seed(int(rng.integers(2**31)))).numpy(),
        "uniform": rng.uniform([-3, -1], [2, 4], size=(count, n, 2)),
        "integer grid": rng.integers(-3, 4, (count, n, 2)).astype(float),
        "mostly one point": grid,
        "each point three times": np.repeat(rng.normal(size=(count, n, 2)), 3, axis=1)[:, :n],
        "all equal": np.full((count, n, 2), 1.5),
        "collinear": np.concatenate([t, 2 * t + 1], axis=-1),
        "on a circle": 3 * np.stack([np.cos(angles), np.sin(angles)], axis=-1) + 1,
        "regular polygon, every other point inside": np.broadcast_to(regular, (count, n, 2)) + [2.0, -1.0],
        "tiny and far away": 1e-12 * rng.normal(size=(count, n, 2)) + 5,
        "a cluster and one far point": outlier,
    }


@pytest.mark.parametrize("n", [1, 2, 3, 4, PRUNE_FROM - 1, PRUNE_FROM, 20, 37, 64])
def test_pruning_to_the_hull_changes_no_circle_bit_for_bit(n: int) -> None:
    """The pruned solver (the default) against the all-triples solver (``prune=False``, the solver
    before pruning) on every kind of population: the same centres and radii, bit for bit, alone
    and mixed in one batch (its chunks prune to different sizes, so the scratch space grows)."""
    rng = np.random.default_rng(n)
    kinds = batches_of_every_kind(rng, 6 if n > 40 else 40, n)
    for kind, x in [*kinds.items(), ("all kinds, shuffled", rng.permutation(np.concatenate(list(kinds.values()))))]:
        centers, radii = min_enclosing_circles(x, chunk=16)
        reference_centers, reference_radii = min_enclosing_circles(x, chunk=16, prune=False)
        assert np.array_equal(centers, reference_centers) and np.array_equal(radii, reference_radii), kind


def test_hull_candidates_keep_every_hull_vertex_and_few_others() -> None:
    """Every vertex of scipy's convex hull is kept, and of 100 points of the experiment's
    populations about 10 remain (what makes the solver fast); on a square grid exactly the points
    on the square's boundary remain (points on a hull edge are kept, not judged by rounding)."""
    x = sample_populations(200, 100, torch.Generator().manual_seed(4)).double().numpy()
    keep = hull_candidates(x)
    for points, kept in zip(x, keep):
        assert kept[ConvexHull(points).vertices].all()
    assert keep.sum(axis=1).mean() < 15 and keep.sum(axis=1).max() < 30, keep.sum(axis=1)
    grid = np.stack(np.meshgrid(np.arange(6.0), np.arange(6.0)), axis=-1).reshape(1, 36, 2)
    on_boundary = ((grid == 0) | (grid == 5)).any(axis=-1)
    assert np.array_equal(hull_candidates(3 * grid - 7), on_boundary)
    assert hull_candidates(np.ones((2, 9, 2))).sum(axis=1).tolist() == [1, 1]


def test_prune_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="prune must be True or False, got 'no'"):
        min_enclosing_circles(np.zeros((1, 3, 2)), prune="no")


def test_torch_input_and_output_types() -> None:
    points = torch.as_tensor(population(3, 20, "gmm"))
    center, radius = min_enclosing_circle(points)
    assert isinstance(center, np.ndarray) and center.dtype == np.float64 and center.shape == (2,)
    assert isinstance(radius, float)
    centers, radii = min_enclosing_circles(points[None].float().repeat(3, 1, 1))
    assert centers.dtype == torch.float32 and centers.shape == (3, 2) and radii.shape == (3,)
    np.testing.assert_allclose(radii.numpy(), radius, rtol=1e-6)
    centers, radii = min_enclosing_circles(points[None].numpy())
    assert centers.dtype == np.float64 and radii.dtype == np.float64


def test_welzl_trace_steps() -> None:
    points = population(5, 12, "gmm")
    steps = welzl_trace(points, seed=3)
    assert [s.point for s in steps if s.depth == 0] == np.random.default_rng(3).permutation(12).tolist()
    assert not steps[0].inside and steps[0].support == ()
    for step in steps:
        assert len(step.support) == step.depth
        dist = np.hypot(*(points[step.point] - step.circle.center))
        assert step.inside == bool(dist <= step.circle.radius * (1 + RTOL))
        for s in step.support:
            assert np.isclose(np.hypot(*(points[s] - step.circle.center)), step.circle.radius)
    again = welzl_trace(points, seed=3)
    assert [(s.support, s.point, s.inside) for s in again] == [(s.support, s.point, s.inside) for s in steps]


@pytest.mark.parametrize("solve, points, match", [
    (min_enclosing_circle, np.zeros(4), r"shape \[N, 2\].*got shape \(4,\)"),
    (min_enclosing_circle, np.zeros((5, 3)), r"shape \[N, 2\]"),
    (min_enclosing_circle, np.zeros((2, 5, 2)), "use min_enclosing_circles"),
    (min_enclosing_circles, np.zeros((5, 2)), r"add a batch axis with points\[None\]"),
    (min_enclosing_circles, np.zeros((2, 0, 2)), "at least one point"),
    (min_enclosing_circle, np.zeros((0, 2)), "at least one point"),
    (min_enclosing_circles, np.array([[[0, 0], [np.nan, 1]]]), r"NaN or inf at .*\[\[0, 1\]\].*drop or impute"),
    (min_enclosing_circle, np.array([[0, np.inf]]), r"NaN or inf at point index \[\[0\]\]"),
    (min_enclosing_circles_bruteforce, torch.zeros(3, 2), r"shape \[B, N, 2\]"),
])
def test_bad_input(solve, points, match) -> None:
    with pytest.raises(ValueError, match=match):
        solve(points)


def test_the_torch_solver_labels_a_training_stream_as_numpy_does() -> None:
    """20,000 training populations: the float32 labels of the torch solver are the numpy solver's."""
    x = sample_populations(20_000, 20, torch.Generator().manual_seed(5))
    numpy_centers, numpy_radii = min_enclosing_circles(x)
    torch_centers, torch_radii = min_enclosing_circles_torch(x, chunk=3000)
    assert torch_centers.dtype == torch.float32
    torch.testing.assert_close(torch_centers, numpy_centers, rtol=0, atol=1e-6)
    torch.testing.assert_close(torch_radii, numpy_radii, rtol=1e-6, atol=0)
    with pytest.raises(ValueError, match="must be finite"):
        min_enclosing_circles_torch(torch.full((1, 3, 2), float("nan")))
    with pytest.raises(ValueError, match=r"\[B, N, 2\]"):
        min_enclosing_circles_torch(torch.zeros(3, 2))
