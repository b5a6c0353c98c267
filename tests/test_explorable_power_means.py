"""Chapter 3's explorable (``setfuncs/explorables/power_means.py``) beyond the generic tests.

* Its browser power mean (``pmPowerMean`` in ``js/power_means.js``, in node) against
  :class:`setfuncs.PowerMean` and SciPy's ``pmean``, from p = -1000 to 1000 with p = 0 and exponents
  within 1e-12 of it, on particles from 1e-3 to 1e3: where ``x^p`` overflows, and where it rounds to 1.
* A reader's edits in chromium (drag a particle, move one with the arrow keys, delete one, add two,
  the presets): the state the page keeps and the read-outs it shows are what Python computes from
  that state (the generic browser test only moves the sliders).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
import torch

import setfuncs as sf
from explorable_harness import harness_page, in_node
from setfuncs.explorables.power_means import PowerMeans

EXPONENTS = [-1000, -100, -16, -1, -0.3, -1e-3, -1e-9, 0, 1e-12, 1e-5, 0.0137, 0.5, 1, 2, 16, 100, 1000]


def populations() -> list[list[float]]:
    generator = np.random.default_rng(0)
    wide = [list(10 ** generator.uniform(-3, 3, n)) for n in (1, 2, 5, 40)]
    narrow = [list(generator.uniform(0.1, 2.0, n)) for n in (2, 20)]
    return wide + narrow + [[0.7] * 6]


def test_the_browser_power_mean_is_setfuncs_and_scipy_at_every_exponent() -> None:
    cases = [{"xs": xs, "p": p} for xs in populations() for p in EXPONENTS]
    browser = in_node("power_means", "(m, c) => m.pmPowerMean(c.xs, c.p)", cases)
    for case, value in zip(cases, browser):
        x = torch.tensor(case["xs"], dtype=torch.float64).reshape(1, -1, 1)
        truth = sf.PowerMean(case["p"])(x).item()
        assert math.isclose(value, truth, rel_tol=1e-11), (case["p"], len(case["xs"]), value, truth)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            reference = float(scipy.stats.pmean(np.array(case["xs"]), case["p"]))
        if math.isfinite(reference) and reference > 0 and abs(case["p"]) >= 1e-3:  # SciPy's own rounding below
            assert math.isclose(value, reference, rel_tol=1e-10), (case["p"], value, reference)
        assert min(case["xs"]) * (1 - 1e-12) <= value <= max(case["xs"]) * (1 + 1e-12)


def test_the_browser_power_mean_rises_with_p_and_is_continuous_at_zero() -> None:
    exponents = list(np.sinh(np.linspace(-math.asinh(100), math.asinh(100), 401))) + [-1e-14, 0.0, 1e-14]
    exponents.sort()
    xs = populations()[5]
    values = in_node("power_means", "(m, c) => m.pmPowerMean(c.xs, c.p)", [{"xs": xs, "p": p} for p in exponents])
    assert all(b >= a * (1 - 1e-13) for a, b in zip(values, values[1:])), "M_p is nondecreasing in p"
    at = {p: v for p, v in zip(exponents, values)}
    assert math.isclose(at[-1e-14], at[0.0], rel_tol=1e-12) and math.isclose(at[1e-14], at[0.0], rel_tol=1e-12)


# ---- in chromium: the reader's edits

@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory):
    yield from harness_page(tmp_path_factory, "power_means", PowerMeans().state)


def check(page) -> dict:
    """The page's state, after checking that its read-outs are what Python computes from it."""
    state = page.evaluate("() => window.__state")
    shown = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll("[data-readout]")]
        .map(node => [node.dataset.readout, Number(node.dataset.value)]))""")
    for key, truth in PowerMeans.readouts(state).items():
        assert math.isclose(shown[key], truth, rel_tol=1e-9, abs_tol=1e-12), (key, shown[key], truth)
    return state


def particle(page, index: int):
    return page.locator(f'circle[aria-label^="particle {index} ="]')


def test_dragging_keys_and_buttons_change_the_population_python_reads(page) -> None:
    before = check(page)
    particle(page, 1).focus()
    for _ in range(3):
        page.keyboard.press("ArrowUp")
    moved = check(page)
    assert moved["population"][0] > before["population"][0] + 0.3, "three arrow steps raise particle 1"

    on_top = page.evaluate("""() => [...document.querySelectorAll('circle[aria-label^="particle "]')].map((node) => {
        const box = node.getBoundingClientRect();
        return document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2) === node; })""")
    index = next(i for i in range(1, moved["size"]) if on_top[i])  # a particle no other one covers
    box = particle(page, index + 1).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] - 400, steps=8)  # to the top: clipped at 2.5
    page.mouse.up()
    dragged = check(page)
    assert dragged["population"][index] == 2.5, "dragged to the top, clipped at the largest value"
    assert [v for i, v in enumerate(dragged["population"]) if i != index] == \
        [v for i, v in enumerate(moved["population"]) if i != index], "only the dragged particle moves"

    third = dragged["population"][2]
    particle(page, 3).focus()
    page.keyboard.press("Delete")
    deleted = check(page)
    assert deleted["size"] == before["size"] - 1 and deleted["population"][-1] == third

    page.get_by_role("button", name="add a particle").click()
    page.get_by_role("button", name="add a particle").click()
    added = check(page)
    assert added["size"] == before["size"] + 1

    page.get_by_role("button", name="set p to 0").click()
    at_zero = check(page)
    shown = page.evaluate("() => Number(document.querySelector('[data-readout=power_mean]').dataset.value)")
    geometric = page.evaluate("() => Number(document.querySelector('[data-readout=geometric]').dataset.value)")
    assert at_zero["asinh_p"] == 0 and shown == geometric
    page.get_by_role("button", name="set p to 1").click()
    check(page)
    assert math.isclose(page.evaluate("() => Number(document.querySelector('[data-readout=p]').dataset.value)"), 1.0)
