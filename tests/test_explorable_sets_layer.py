"""Chapter 1's explorable in chromium: what its buttons and handles do, against setfuncs.Equivariant.

The generic test (``tests/test_explorables.py``) moves the one control a probe can set, the
aggregation. Here the buttons and a handle are used as a reader uses them: shuffling the rows
permutes the rows of X and of Y alike and leaves alpha(X), alpha(Y) and particle A's output as they
were (to the last bits a sum in another order may round differently); after shuffles, additions,
removals and a keyboard drag, the page still shows what :class:`setfuncs.Equivariant` computes for
the population in its table.
"""

from __future__ import annotations

import math

import pytest

from explorable_harness import book_page
from setfuncs.explorables.sets_layer import BIAS, WEIGHT, SetsLayer


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory):
    explorable = SetsLayer()
    with book_page(tmp_path_factory.mktemp("sets_layer"), explorable.static_html(explorable.still_png()),
                   {"width": 1000, "height": 900}) as page:
        yield page


def shown(page) -> dict[str, float]:
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll("[data-readout]")]
        .map(node => [node.dataset.readout, Number(node.dataset.value)]))""")


def table_state(page, aggregation: str) -> dict:
    """The state the page's table shows: the particles' names and positions in row order."""
    labels = page.locator("table td.sl-name").all_inner_texts()
    values = shown(page)
    particles = [[values[f"x_r{row}_1"], values[f"x_r{row}_2"]] for row in range(1, len(labels) + 1)]
    return {"labels": labels, "particles": particles, "aggregation": aggregation, "weight": WEIGHT, "bias": BIAS}


def rows(values: dict[str, float], prefix: str) -> list[tuple[float, float]]:
    count = sum(key.startswith(f"{prefix}_r") and key.endswith("_1") for key in values)
    return [(values[f"{prefix}_r{row}_1"], values[f"{prefix}_r{row}_2"]) for row in range(1, count + 1)]


@pytest.mark.parametrize("aggregation", ["sum", "mean", "max"])
def test_a_shuffle_permutes_the_rows_and_keeps_the_aggregates(page, aggregation: str) -> None:
    page.select_option("[data-control=aggregation]", aggregation)
    before, names_before = shown(page), page.locator("table td.sl-name").all_inner_texts()
    page.get_by_role("button", name="shuffle the rows").click()
    after, names_after = shown(page), page.locator("table td.sl-name").all_inner_texts()
    assert names_after != names_before and sorted(names_after) == sorted(names_before)
    exact = aggregation == "max"  # max selects an input; a sum in another order may round differently
    for key in ("alpha_1", "alpha_2", "aggregate_1", "aggregate_2", "named_1", "named_2"):
        assert after[key] == before[key] if exact else math.isclose(after[key], before[key], rel_tol=1e-14, abs_tol=1e-15), key
    # X_pi and Y_pi: each particle's input and output moved to its new row together
    inputs = dict(zip(names_before, rows(before, "x")))
    outputs = dict(zip(names_before, rows(before, "out")))
    assert rows(after, "x") == [inputs[name] for name in names_after]
    for (u, v), name in zip(rows(after, "out"), names_after):
        assert math.isclose(u, outputs[name][0], abs_tol=1e-14) and math.isclose(v, outputs[name][1], abs_tol=1e-14)


def test_after_edits_the_page_shows_what_setfuncs_computes(page) -> None:
    page.select_option("[data-control=aggregation]", "mean")
    page.get_by_role("button", name="add a particle").click()
    page.get_by_role("button", name="add a particle").click()
    page.get_by_role("button", name="shuffle the rows").click()
    page.get_by_role("button", name="remove a particle").click()
    handle = page.get_by_role("slider", name="particle A; drag it or use the arrow keys")
    position = shown(page)
    handle.focus()
    for key in ("ArrowLeft", "ArrowLeft", "ArrowDown"):
        page.keyboard.press(key)
    values = shown(page)
    assert values["named_1"] < position["named_1"] and values["named_2"] < position["named_2"], "A's output follows A"
    state = table_state(page, "mean")
    assert len(state["labels"]) == 6 and "A" in state["labels"]
    expected = SetsLayer.readouts(state)
    assert set(expected) == set(values)
    for key, truth in expected.items():
        assert math.isclose(values[key], truth, rel_tol=1e-12, abs_tol=1e-12), (key, values[key], truth)


def test_with_the_sum_a_dragged_particle_moves_every_output_but_its_own(page) -> None:
    """x_i - sum_j x_j does not depend on x_i: eq. (1) with the sum, as the chapter's text says."""
    page.select_option("[data-control=aggregation]", "sum")
    before = shown(page)
    page.get_by_role("slider", name="particle A; drag it or use the arrow keys").focus()
    page.keyboard.press("ArrowUp")
    after = shown(page)
    assert math.isclose(after["named_1"], before["named_1"], abs_tol=1e-12)
    assert math.isclose(after["named_2"], before["named_2"], abs_tol=1e-12)
    others = [key for key in after if key.startswith("out_r") and after[key] != before[key]]
    names = page.locator("table td.sl-name").all_inner_texts()
    assert len(others) >= len(names) - 1, "every other particle's output moved"
