"""Chapter 5's explorable (``setfuncs/explorables/parts.py``) beyond the generic tests.

* The rules it teaches hold, in Python and in the browser's code (``PT_AGGREGATIONS`` of
  ``js/parts.js``, in node): over random populations and random divisions, every rule marked exact
  combines the parts' partial aggregates into the whole population's aggregate, the mean of means
  and the median of medians do not (but the mean of means does for parts of equal size), and node's
  partial aggregates and combined values are setfuncs's.
* A reader's edits in chromium (drag a particle to another part, the arrow keys, delete, add, equal
  parts, shuffle, every aggregation): the state the page keeps and the read-outs it shows are what
  Python computes from that state (the generic browser test only moves the controls).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorable_harness import harness_page, in_node
from setfuncs.explorables.parts import AGGREGATIONS, CAPACITY, MAX_PARTS, Parts, combine, divide, partial


def random_states(count: int, seed: int = 0, equal: bool = False) -> list[dict]:
    generator = np.random.default_rng(seed)
    states = []
    for _ in range(count):
        size, parts = int(generator.integers(2, CAPACITY + 1)), int(generator.integers(2, MAX_PARTS + 1))
        lanes = [i % parts for i in range(CAPACITY)] if equal else generator.integers(0, MAX_PARTS, CAPACITY).tolist()
        if equal:
            size = parts * max(1, size // parts)
        states.append({"values": generator.uniform(-4, 4, CAPACITY).round(2).tolist(), "lanes": lanes,
                       "size": size, "parts": parts})
    return states


def python_side(state: dict, kind: str) -> tuple[list[float], float, float]:
    """Partial aggregates of the non-empty parts, the combined value and the whole's, in Python."""
    parts = [part for part in divide(state) if part]
    partials = [partial(kind, torch.tensor(part, dtype=torch.float64).reshape(1, -1, 1)) for part in parts]
    whole = partial(kind, torch.tensor(state["values"][: state["size"]], dtype=torch.float64).reshape(1, -1, 1))
    return partials, combine(kind, partials, [len(part) for part in parts]), whole


@pytest.mark.parametrize("kind", list(AGGREGATIONS))
def test_exact_rules_are_exact_and_the_others_are_not(kind: str) -> None:
    exact = AGGREGATIONS[kind][2]
    gaps = []
    for state in random_states(60):
        _, combined, whole = python_side(state, kind)
        gaps.append(abs(combined - whole) / max(1.0, abs(whole)))
    if exact:
        assert max(gaps) < 1e-12, f"{kind} combined from its parts differs from the whole by {max(gaps)}"
    else:
        assert max(gaps) > 1e-2, f"{kind} should differ from the whole for some division"


def test_the_mean_of_means_is_exact_for_parts_of_equal_size() -> None:
    for state in random_states(30, seed=1, equal=True):
        assert len({len(part) for part in divide(state)}) == 1
        _, combined, whole = python_side(state, "mean_naive")
        assert math.isclose(combined, whole, rel_tol=1e-12, abs_tol=1e-12)


def test_the_browser_rules_compute_what_setfuncs_computes() -> None:
    cases, truths = [], []
    for kind in AGGREGATIONS:
        for state in random_states(12, seed=2):
            parts = [part for part in divide(state) if part]
            cases.append({"kind": kind, "parts": parts, "whole": state["values"][: state["size"]]})
            truths.append(python_side(state, kind))
    browser = in_node("parts", """(m, c) => {
        const rule = m.PT_AGGREGATIONS[c.kind];
        const partials = c.parts.map((part) => rule.partial(part));
        return [partials, rule.combine(partials, c.parts.map((part) => part.length)), rule.partial(c.whole)];
    }""", cases)
    for case, (partials, combined, whole), (js_partials, js_combined, js_whole) in zip(cases, truths, browser):
        assert np.allclose(js_partials, partials, rtol=1e-12, atol=1e-12), case["kind"]
        assert math.isclose(js_combined, combined, rel_tol=1e-12, abs_tol=1e-12), case["kind"]
        assert math.isclose(js_whole, whole, rel_tol=1e-12, abs_tol=1e-12), case["kind"]


# ---- in chromium: the reader's edits

@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory):
    yield from harness_page(tmp_path_factory, "parts", Parts().state)


def check(page) -> dict:
    """The page's state, after checking that its read-outs are what Python computes from it."""
    state = page.evaluate("() => window.__state")
    shown = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll("[data-readout]")]
        .filter(node => node.dataset.value !== undefined).map(node => [node.dataset.readout, Number(node.dataset.value)]))""")
    expected = Parts.readouts(state)
    assert set(shown) == set(expected), (sorted(shown), sorted(expected))
    for key, truth in expected.items():
        assert math.isclose(shown[key], truth, rel_tol=1e-9, abs_tol=1e-12), (key, shown[key], truth)
    return state


def particle(page, index: int):
    return page.locator(f'circle[aria-label^="particle {index} ="]')


def part_of(state: dict, index: int) -> int:
    return state["lanes"][index] % state["parts"]


def test_moving_particles_between_parts_keeps_python_and_the_page_in_step(page) -> None:
    page.get_by_label("aggregation").select_option("mean_counts")
    before = check(page)

    # drag a particle that no other one covers into the next part, and to the right
    on_top = page.evaluate("""() => [...document.querySelectorAll('circle[aria-label^="particle "]')].map((node) => {
        const box = node.getBoundingClientRect();
        return document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2) === node; })""")
    index = next(i for i in range(before["size"]) if on_top[i] and before["values"][i] < 3)
    box = particle(page, index + 1).bounding_box()
    target_part = (part_of(before, index) + 1) % before["parts"]
    other = next(i for i in range(before["size"]) if part_of(before, i) == target_part)
    row = particle(page, other + 1).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 30, row["y"] + row["height"] / 2, steps=6)
    page.mouse.up()
    dragged = check(page)
    assert part_of(dragged, index) == target_part and dragged["values"][index] > before["values"][index]
    assert [part_of(dragged, i) for i in range(dragged["size"]) if i != index] == \
        [part_of(before, i) for i in range(before["size"]) if i != index], "only the dragged particle moves"
    assert abs(Parts.readouts(dragged)["difference"]) < 1e-12, "(mean, count) pairs combine exactly"

    particle(page, 2).focus()
    start = part_of(dragged, 1)
    page.keyboard.press("ArrowDown" if start < dragged["parts"] - 1 else "ArrowUp")
    keyed = check(page)
    assert part_of(keyed, 1) != start
    page.keyboard.press("ArrowRight")
    assert check(page)["values"][1] > keyed["values"][1]

    page.keyboard.press("Delete")
    assert check(page)["size"] == before["size"] - 1
    page.get_by_role("button", name="add a particle").click()
    assert check(page)["size"] == before["size"]

    page.get_by_label("aggregation").select_option("mean_naive")
    page.get_by_role("button", name="equal parts").click()
    equal = check(page)
    if equal["size"] % equal["parts"] == 0:
        assert abs(Parts.readouts(equal)["difference"]) < 1e-12, "equal parts: the mean of means is the mean"
    page.get_by_role("button", name="shuffle the parts").click()
    shuffled = check(page)
    assert shuffled["lanes"] != equal["lanes"]
    for kind in AGGREGATIONS:
        page.get_by_label("aggregation").select_option(kind)
        check(page)
