"""Every explorable, on a page of its own and in Python: the same numbers in both.

Without a browser: each registered explorable (:data:`setfuncs.explorables.REGISTRY`) has a front
end that inlines into one module for notebooks, a still frame at twice its shown width with alt
text, finite read-outs, and probes that differ from its initial state. In Debian's chromium
(Playwright): each is served with ``setfuncs/explorables/js`` the way the book serves it
(``_static/explorables/``, the loader on the page), draws itself without an error, and every probe
(a control moved to a value no still frame holds) gives the read-outs Python computes
(``tests/explorable_probe.py``). (That the still frame with its alt text shows with JavaScript off is
checked on the built chapters, ``tests/test_browser.py``.)
``make test`` installs chromium before the unit tests; where it is missing the browser tests fail
in CI (``CI`` or ``BOOK_BROWSER_TEST_REQUIRED`` set) and skip elsewhere, saying so.
"""

from __future__ import annotations

import functools
import math
import struct

import pytest

from explorable_harness import CHROMIUM, book_folder, needs_chromium, serve
from setfuncs.explorables import REGISTRY
from setfuncs.explorables.esm import module_source

NAMES = sorted(REGISTRY)


@functools.cache
def example(name: str):
    return REGISTRY[name].example()


@functools.cache
def still(name: str) -> bytes:
    return example(name).still_png()


def test_there_is_an_explorable_per_chapter_module() -> None:
    assert len(NAMES) >= 1


@pytest.mark.parametrize("name", NAMES)
def test_front_end_inlines_into_one_module(name: str) -> None:
    source = module_source(name)
    assert "export default" in source and "\nimport " not in source and not source.startswith("import")
    assert example(name)._esm == source


@pytest.mark.parametrize("name", NAMES)
def test_still_frame_is_sharp_and_described(name: str) -> None:
    png = still(name)
    width = struct.unpack(">I", png[16:20])[0]
    html = example(name).static_html(png)
    assert f'width="{width // 2}"' in html, "the still frame shows at half its pixel width (2x)"
    assert 'alt="' in html and len(example(name).alt) > 40
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", NAMES)
def test_probes_move_away_from_the_initial_state(name: str) -> None:
    cls, state = REGISTRY[name], example(name).state
    assert cls.probes, f"{name} has no probe for the browser test"
    for settings in cls.probes:
        assert any(state.get(key) != value for key, value in settings.items()), settings
    readouts = cls.readouts(state)
    assert readouts and all(math.isfinite(value) for value in readouts.values()), readouts


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    """A folder served on 127.0.0.1 as the book serves the explorables: one page per explorable."""
    folder = book_folder(tmp_path_factory.mktemp("explorables"),
                         {name: example(name).static_html(still(name)) for name in NAMES})
    with serve(folder) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    needs_chromium()
    from playwright.sync_api import sync_playwright

    from test_browser import CHROMIUM_ARGS
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.mark.parametrize("name", NAMES)
def test_explorable_computes_what_python_computes(browser, site: str, name: str) -> None:
    from explorable_probe import probe

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.goto(f"{site}{name}.html", wait_until="networkidle")
    problems = probe(page, page.locator("figure[data-explorable]"))
    assert not errors, errors
    assert not problems, "\n".join(problems)
    # a named control with its value spoken, a 44 px target, a still frame hidden once drawn
    controls = page.locator("figure [data-control]")
    for index in range(controls.count()):
        control = controls.nth(index)
        assert control.get_attribute("aria-label"), "every control is named"
        box = control.bounding_box()
        assert box["height"] >= 44 or control.evaluate("n => n.closest('label').getBoundingClientRect().height") >= 44
    assert page.locator("figure .explorable-still").is_hidden()
    page.close()
