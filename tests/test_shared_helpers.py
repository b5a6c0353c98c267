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
from setfuncs.powersums import max_from_power_sums, particles_from_power_sums, power_sums


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
