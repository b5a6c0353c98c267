"""What the explorables' tests share: pages in chromium and the modules' functions in node.

* :func:`harness_page`: an explorable's front end alone on a page, with a model that records what it
  saves, for the tests that drive one explorable as a reader would (drag, keys, buttons) and then
  compare the state the page saved with Python's read-outs: the page imports
  ``setfuncs/explorables/js/<module>.js`` and calls its ``render({model, el})`` with the state; every
  ``model.set`` lands in ``window.__state``, and ``window.__ready`` is set once it has drawn.
  Without chromium these tests skip, saying so.
* :func:`book_page`: explorables as the static book shows them (their ``<figure data-explorable>``
  and the book's loader) on a page of their own; :func:`serve` serves a folder on 127.0.0.1.
  Without chromium these fail in CI (``CI`` or ``BOOK_BROWSER_TEST_REQUIRED``) and skip elsewhere.
* :func:`in_node`: a module's functions run in node on a list of cases.

Chromium must be at ``/usr/bin/chromium`` (``make test`` installs it).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from setfuncs.explorables.esm import JS_DIR

CHROMIUM = "/usr/bin/chromium"
REQUIRED = bool(os.environ.get("CI") or os.environ.get("BOOK_BROWSER_TEST_REQUIRED"))
#: A page of the static book, reduced to its explorables: the book's loader and their figures.
BOOK_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>{title}</title>
<script type="module" src="explorables/loader.js"></script></head><body>{figure}</body></html>"""
HARNESS = """<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>
<div id="root"></div><script type="application/json" id="state">{state}</script>
<script type="module">
import explorable from "./{module}.js";
let current = JSON.parse(document.getElementById("state").textContent);
const model = {{ get: () => current, set: (key, value) => {{ current = value; window.__state = value; }},
  on() {{}}, off() {{}}, save_changes() {{}}, send() {{}} }};
await explorable.render({{ model, el: document.getElementById("root") }});
window.__ready = true;
</script></body></html>"""


class Quiet(SimpleHTTPRequestHandler):
    """Serves files without logging every request to stderr."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        pass


def harness_page(tmp_path_factory: pytest.TempPathFactory, module: str, state: dict[str, Any]) -> Iterator[Any]:
    """A Playwright page with ``module`` drawn from ``state`` (a fixture's body: yields the page,
    then fails on any page error the test caused)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    folder = tmp_path_factory.mktemp(module)
    shutil.copytree(JS_DIR, folder, dirs_exist_ok=True)
    (folder / "harness.html").write_text(HARNESS.format(state=json.dumps(state), module=module), encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless"])
        page = browser.new_page(viewport={"width": 1100, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/harness.html")
        page.wait_for_function("() => window.__ready === true", timeout=15_000)
        yield page
        browser.close()
        assert not errors, errors
    server.shutdown()
    server.server_close()


def needs_chromium() -> None:
    """Fail (in CI) or skip (elsewhere), saying why, where chromium is missing."""
    if not Path(CHROMIUM).exists():
        message = f"{CHROMIUM} is missing: `make test` installs Debian's chromium"
        pytest.fail(message) if REQUIRED else pytest.skip(message)


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """``folder`` served on 127.0.0.1 while the block runs; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def book_folder(folder: Path, pages: dict[str, str]) -> Path:
    """``folder`` with the explorables' modules (``explorables/``) and ``<name>.html`` holding each
    figure's HTML of ``pages`` (name -> an explorable's ``static_html``) as the static book shows it."""
    shutil.copytree(JS_DIR, folder / "explorables", dirs_exist_ok=True)
    for name, figure in pages.items():
        (folder / f"{name}.html").write_text(BOOK_PAGE.format(title=name, figure=figure), encoding="utf-8")
    return folder


@contextlib.contextmanager
def book_page(folder: Path, figure: str, viewport: dict[str, int]) -> Iterator[Any]:
    """A Playwright page showing ``figure`` (an explorable's ``static_html``) with the book's loader,
    once every explorable on it is ready; fails on any page error once the block has run."""
    needs_chromium()
    from playwright.sync_api import sync_playwright

    from test_browser import CHROMIUM_ARGS
    book_folder(folder, {"page": figure})
    with serve(folder) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=viewport)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url + "page.html", wait_until="networkidle")
        page.wait_for_function("() => [...document.querySelectorAll('figure[data-explorable]')]"
                               ".every((figure) => figure.dataset.ready === 'true')")
        yield page
        browser.close()
    assert not errors, errors


def in_node(module: str, function: str, cases: list) -> list:
    """``function(module, case)`` (a JavaScript arrow function's source) for each case, in node, with
    ``module`` the explorable's module inlined (``esm.module_source``)."""
    from setfuncs.explorables.esm import module_source

    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH (the book's build needs Node 20)")
    source = json.dumps(module_source(module))
    script = (f"const module = await import('data:text/javascript;base64,' + Buffer.from({source}).toString('base64'));\n"
              f"const cases = {json.dumps(cases)};\n"
              f"process.stdout.write(JSON.stringify(cases.map((c) => ({function})(module, c))));\n")
    run = subprocess.run([node, "--input-type=module"], input=script, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)
