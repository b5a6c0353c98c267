"""Drive an explorable in a real page and compare what it reads out with Python's numbers.

Shared by ``tests/test_explorables.py`` (every explorable alone, on a page of its own) and
``tests/test_browser.py`` (the explorables of the built book). An explorable is a
``<figure data-explorable=name data-state=json>`` (:mod:`setfuncs.explorables.base`): for each of
its class's probes, each control (``[data-control=name]``) is set to the probe's value, the value
the control really took is read back (a range input snaps to its step), and every read-out the class
computes (:meth:`~setfuncs.explorables.base.Explorable.readouts`) is compared with the page's
``[data-readout=name]`` ``data-value``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from playwright.sync_api import Locator, Page

from setfuncs.explorables import REGISTRY

#: Seconds an explorable has to draw itself after the page has loaded.
READY_TIMEOUT_MS = 15_000


def set_control(figure: Locator, name: str, value: Any) -> Any:
    """Set the control ``name`` to ``value`` (the state's value) and return the value it took."""
    control = figure.locator(f'[data-control="{name}"]')
    if control.count() != 1:
        raise AssertionError(f"{control.count()} controls named {name!r} in the explorable")
    tag = control.evaluate("node => node.tagName.toLowerCase()")
    if tag == "select":
        control.select_option(str(value))
        return control.input_value()
    log = control.get_attribute("data-scale") == "log"
    control.fill(repr(math.log10(value) if log else value))
    taken = float(control.input_value())
    return 10 ** taken if log else taken


def page_readouts(figure: Locator) -> dict[str, float]:
    """Every read-out's exact value, by name."""
    return figure.evaluate("""figure => Object.fromEntries([...figure.querySelectorAll("[data-readout]")]
        .map(node => [node.dataset.readout, Number(node.dataset.value)]))""")


def probe_root(root: Locator, name: str, state: dict[str, Any]) -> list[str]:
    """Apply every probe of the explorable ``name`` drawn in ``root`` from ``state``; the
    mismatches found, one line each."""
    cls = REGISTRY[name]
    state = dict(state)
    problems: list[str] = []
    for settings in cls.probes:
        for control, value in settings.items():
            state[control] = set_control(root, control, value)
        shown, expected = page_readouts(root), cls.readouts(state)
        for key, truth in expected.items():
            if key not in shown:
                problems.append(f"{name} at {settings}: no read-out {key!r} on the page (it has {sorted(shown)})")
            elif not math.isclose(shown[key], truth, rel_tol=cls.tolerance, abs_tol=cls.tolerance):
                problems.append(f"{name} at {settings}: {key} = {shown[key]!r} on the page, {truth!r} in Python")
    return problems


def probe(page: Page, figure: Locator) -> list[str]:
    """Wait for the static page's ``figure`` to be drawn, then :func:`probe_root` it with the state
    the page carries."""
    figure.locator(".explorable-live").wait_for(timeout=READY_TIMEOUT_MS)
    page.wait_for_function("figure => figure.dataset.ready === 'true'", arg=figure.element_handle(),
                           timeout=READY_TIMEOUT_MS)
    return probe_root(figure, figure.get_attribute("data-explorable"), json.loads(figure.get_attribute("data-state")))
