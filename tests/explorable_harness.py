"""An explorable's front end alone on a page, with a model that records what it saves.

For the tests that drive one explorable as a reader would (drag, keys, buttons) and then compare
the state the page saved with Python's read-outs: the page imports ``setfuncs/explorables/js/<module>.js``
and calls its ``render({model, el})`` with the state; every ``model.set`` lands in ``window.__state``,
and ``window.__ready`` is set once it has drawn. Chromium must be at ``/usr/bin/chromium``
(``make test`` installs it); without it the tests skip, saying so.
"""

from __future__ import annotations

import functools
import json
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from setfuncs.explorables.esm import JS_DIR

CHROMIUM = "/usr/bin/chromium"
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
