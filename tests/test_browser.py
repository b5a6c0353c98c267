"""The built book in a real browser: every page loads cleanly, offline, and sliders work.

Serves ``_build/html`` on 127.0.0.1 and drives Debian's chromium with Playwright (Playwright
never downloads a browser here). ``make test`` builds the book first and sets
``BOOK_BROWSER_TEST_REQUIRED``, as does CI (``CI``): then a missing build is a failure. Run on its
own without a build, the test skips.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

HTML = Path(__file__).resolve().parents[1] / "_build" / "html"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-default-apps", "--disable-domain-reliability"]
#: Errors we accept, matched against "<message> @ <url>", each with its reason. Keep it short.
ALLOWED_ERRORS: list[tuple[re.Pattern[str], str]] = [
    # sphinx-thebe 0.3.1 under Jupyter Book 1 puts its inline configuration script on every page
    # twice; the second `const THEBE_JS_URL` throws. Harmless: the book has no thebe button, and
    # the first copy defines the values.
    (re.compile(r"^page error: Identifier 'THEBE_JS_URL' has already been declared"),
     "sphinx-thebe's duplicated inline script"),
    # Chromium asks every site for /favicon.ico by itself; the book has no favicon.
    (re.compile(r"/favicon\.ico$"), "the browser's own favicon request"),
]
#: Pages whose slider the test moves: the logsumexp figure and the step-through of Welzl's
#: algorithm (each page has one slider).
SLIDER_PAGES = ["book/04_logsumexp.html", "book/08_circle.html", "book/10_point_clouds.html",
                "book/11_attention.html"]

if not (HTML / "index.html").exists():
    if os.environ.get("CI") or os.environ.get("BOOK_BROWSER_TEST_REQUIRED"):
        pytest.fail(f"{HTML} is missing: build the book first (make book)", pytrace=False)
    pytest.skip(f"{HTML} is missing: run `make book` first", allow_module_level=True)

#: Every page of the book; template fragments that Sphinx themes leave in _static are not pages.
PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if "_static" not in p.relative_to(HTML).parts)


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves files without logging every request to stderr."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        pass


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=HTML))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: `make browser` (or `make test`) installs Debian's chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class PageLog:
    """Errors, failed requests and off-host requests seen while a page loads."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("pageerror", lambda error: self._error(f"page error: {error}"))
        page.on("console", lambda message: message.type == "error" and self._error(
            f"console error: {message.text} @ {message.location.get('url', '')}"))
        page.on("request", self._request)
        page.on("requestfailed", lambda r: self._error(f"request failed @ {r.url}"))
        page.on("response", lambda r: r.status >= 400 and self._error(
            f"HTTP {r.status} @ {r.url}"))

    def _error(self, error: str) -> None:
        if not any(pattern.search(error) for pattern, _ in ALLOWED_ERRORS):
            self.errors.append(error)

    def _request(self, request) -> None:
        url = urlparse(request.url)
        if url.scheme not in ("data", "blob", "about") and url.hostname != "127.0.0.1":
            self.foreign.append(request.url)


def open_page(browser: Browser, url: str) -> tuple[Page, PageLog]:
    page = browser.new_page()
    log = PageLog(page)
    page.goto(url, wait_until="networkidle")
    return page, log


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_cleanly_and_offline(browser: Browser, base_url: str, path: str) -> None:
    page, log = open_page(browser, base_url + path)
    page.close()
    assert not log.errors, "\n".join(log.errors)
    assert not log.foreign, f"requests left 127.0.0.1: {log.foreign}"


def visible_frame(page: Page) -> tuple[str, bytes]:
    """The src and a screenshot of the slider's one visible figure."""
    images = page.locator(".widget-image").filter(visible=True)
    assert images.count() == 1, f"{images.count()} visible widget images"
    return images.first.get_attribute("src"), images.first.screenshot()


@pytest.mark.parametrize("path", SLIDER_PAGES)
def test_slider_switches_figures_without_a_kernel(browser: Browser, base_url: str, path: str) -> None:
    page, log = open_page(browser, base_url + path)
    handle = page.locator(".widget-slider .noUi-handle").first
    handle.wait_for(state="visible")
    before = visible_frame(page)
    handle.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)
    after = visible_frame(page)
    page.close()
    assert after[0] != before[0], "the visible image did not change"
    assert after[1] != before[1], "the visible figure looks the same"
    assert not log.errors, "\n".join(log.errors)
    assert not log.foreign, f"requests left 127.0.0.1: {log.foreign}"
