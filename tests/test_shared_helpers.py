"""The chapters' shared helpers: the explicit power-sum decomposition recovers populations and
their max; the pair grid evaluates one population per grid point."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import setfuncs as sf
from setfuncs.plots import pair_grid
from setfuncs.tables import html_table, text_table
from setfuncs.powersums import (bounded_embedding, bounded_power_sums, max_from_power_sums,
                                particles_from_bounded_power_sums, particles_from_power_sums, power_sums)


@given(seed=st.integers(0, 2**16), n=st.integers(1, 6))
def test_power_sums_determine_the_population(seed: int, n: int) -> None:
    x = np.random.default_rng(seed).uniform(-1, 1, size=(3, n))
    s = power_sums(x)
    for row, sums in zip(x, s):
        np.testing.assert_allclose(particles_from_power_sums(sums), np.sort(row), atol=1e-5)
        assert max_from_power_sums(sums) == pytest.approx(row.max(), abs=1e-5)


def test_power_sums_are_invariant() -> None:
    x = np.array([[0.3, -0.2, 0.9]])
    np.testing.assert_allclose(power_sums(x), power_sums(x[:, ::-1]))
    with pytest.raises(ValueError, match=r"shape \[B, N\]"):
        power_sums(np.ones(3))


@given(seed=st.integers(0, 2**16), n_max=st.integers(1, 5), data=st.data())
def test_bounded_power_sums_determine_populations_of_every_size(seed: int, n_max: int, data) -> None:
    # One embedding for every size up to n_max: rho recovers the size and the particles.
    sizes = data.draw(st.lists(st.integers(1, n_max), min_size=1, max_size=4))
    rng = np.random.default_rng(seed)
    populations = [rng.uniform(-2, 2, size=n) for n in sizes]
    for population, sums in zip(populations, bounded_power_sums(populations, n_max)):
        recovered = particles_from_bounded_power_sums(sums)
        assert len(recovered) == len(population)
        np.testing.assert_allclose(recovered, np.sort(population), atol=1e-4)


def test_bounded_embedding_keeps_sums_of_different_sizes_apart() -> None:
    # The counterexample to a continuous rho with phi(x) = (e^x, ..., e^{N x}): the sums of {0, -n}
    # tend to the sum of {0}, while the population size is 2 along the sequence and 1 at the limit.
    # With y = 2 + tanh x > 1 they stay at least 1 apart (the first coordinate differs by y(-n)).
    def exponential(population: list[float]) -> np.ndarray:
        x = np.asarray(population, dtype=float)
        return np.exp(np.outer(x, [1, 2])).sum(axis=0)

    gaps_exp = [np.linalg.norm(exponential([0, -n]) - exponential([0])) for n in (1, 10, 40)]
    assert gaps_exp[-1] < 1e-15 < gaps_exp[0]
    singleton = bounded_power_sums([[0.0]], 2)[0]
    for n in (1, 10, 40, 1000):
        pair = bounded_power_sums([[0.0, -n]], 2)[0]
        assert np.linalg.norm(pair - singleton) >= 1
        assert len(particles_from_bounded_power_sums(pair)) == 2
    assert (bounded_embedding(np.array([-1e3, 0.0, 1e3]), 3) >= 1).all()


@given(seed=st.integers(0, 2**16), n=st.integers(1, 4))
def test_bounded_rho_is_continuous(seed: int, n: int) -> None:
    # Sums that move a little move the recovered population a little and never change its size.
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=n)
    nearby = x + rng.uniform(-1e-6, 1e-6, size=n)
    s, s_nearby = bounded_power_sums([x, nearby], 4)
    assert np.abs(s - s_nearby).max() < 1e-3
    moved = particles_from_bounded_power_sums(s_nearby)
    assert len(moved) == n
    assert np.abs(moved - particles_from_bounded_power_sums(s)).max() < 1e-3


def test_bounded_power_sums_check_their_input() -> None:
    with pytest.raises(ValueError, match="1 to 2 scalars"):
        bounded_power_sums([[0.1, 0.2, 0.3]], 2)
    with pytest.raises(ValueError, match="n_max"):
        bounded_embedding(np.zeros(2), 0)


def test_pair_grid_evaluates_each_pair() -> None:
    x1, x2, values = pair_grid(sf.aggregation("max"), -1.0, 1.0, points=5)
    np.testing.assert_allclose(values, np.maximum(x1, x2))
    assert values.shape == (5, 5) and x1[0, -1] == 1.0 and x2[-1, 0] == 1.0
    with pytest.raises(ValueError, match="low < high"):
        pair_grid(sf.aggregation("max"), 1.0, 1.0)


def test_html_table_formats_escapes_and_marks_missing_values() -> None:
    html = html_table([{"name": "a<b", "x": 0.12345}, {"name": "c", "x": None}],
                      [("name", "name", "{}"), ("x", "value & more", "{:.2f}")], caption="cap")
    assert html.startswith('<div class="setfuncs-table"><table><caption>cap</caption>')
    assert html.endswith("</table></div>")
    assert "<th>value &amp; more</th>" in html and "a&lt;b" in html
    assert '<td style="text-align: right">0.12</td>' in html and "<td>–</td>" in html
    assert html.count("<tr>") == 3


def test_html_table_spans_consecutive_equal_cells_only() -> None:
    rows = [{"claim": "c", "x": 1}, {"claim": "c", "x": 2}, {"claim": "d", "x": 3}, {"claim": "c", "x": 4}]
    html = html_table(rows, [("claim", "claim", "{}"), ("x", "x", "{}")], span="claim")
    assert html.count('<td rowspan="2">c</td>') == 1 and html.count("<td>c</td>") == 1   # the last c stands alone
    assert html.count("<td>d</td>") == 1 and html.count("<tr>") == 5
    assert html.count("<td") == 3 + 4                    # three claim cells for four rows, one x cell per row
    with pytest.raises(ValueError, match="span must be the key of one of the columns"):
        html_table(rows, [("x", "x", "{}")], span="claim")


def test_html_table_refuses_malformed_columns() -> None:
    with pytest.raises(ValueError, match="triple"):
        html_table([{"x": 1}], [("x", "x")])


def test_text_table_aligns_columns_and_marks_missing_values() -> None:
    text = text_table([{"name": "max", "x": 0.5}, {"name": "r-lse", "x": None}],
                      [("name", "agg.", "{:<6}"), ("x", "MSE", "{:>7.3f}")])
    lines = text.split("\n")
    assert lines == ["agg.      MSE", "max     0.500", "r-lse       -"]
