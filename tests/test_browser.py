"""The built book in a real browser, and a chapter in a real JupyterLab.

Serves ``_build/html`` (or the folder ``BOOK_HTML`` names) on 127.0.0.1 and drives Debian's
chromium with Playwright (Playwright never downloads a browser here): every page loads cleanly and
offline, with no console error; every chapter has an explorable that computes in the browser what
Python computes (a control moved to a value no still frame shows, ``tests/explorable_probe.py``),
shows its still frame with alt text when JavaScript is off, weighs at most 1.5 MB gzipped, shows no
raster figure blurred at devicePixelRatio 2, and at 390 px does not scroll sideways and gives every
control a 44 px target, a name and a spoken value; each chapter's weight and time to interactive are
printed. Result tables and figures fit the page on a desktop and on a phone. A JupyterLab from the
project's environment runs a copy of the logsumexp chapter: no cell fails, its exercises render
numbered by chapter (Exercise 4.1), and its explorable, an anywidget there, computes what Python
computes. ``make test`` builds the book first and sets ``BOOK_BROWSER_TEST_REQUIRED``, as does CI
(``CI``): then a missing build or a missing chromium is a failure. Run on its own, a test that
lacks either skips.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
import os
import re
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from explorable_probe import probe, probe_root
from setfuncs.explorables import REGISTRY

from jupyterlab_server import jupyterlab

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))
REQUIRED = bool(os.environ.get("CI") or os.environ.get("BOOK_BROWSER_TEST_REQUIRED"))
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-default-apps", "--disable-domain-reliability"]
#: Errors we accept, matched against "<message> @ <url>", each with its reason. Keep it short.
ALLOWED_ERRORS: list[tuple[re.Pattern[str], str]] = [
    # Chromium asks every site for /favicon.ico by itself; the book has no favicon.
    (re.compile(r"/favicon\.ico$"), "the browser's own favicon request"),
]
#: The chapters: each has at least one explorable, and a page budget.
CHAPTER_PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.glob("book/[01][0-9]_*.html")
                       if not p.stem.endswith("_methods"))
#: A chapter's page in all (the HTML and everything it loads), gzipped, at most.
PAGE_BUDGET = 1_500_000
#: How long a page may take to load and fall quiet, in ms: in `make test` the unit tests, two browsers
#: and XeLaTeX share two cores, and chapter 11 once took over 30 s (Playwright's default) to fall
#: quiet there, where alone it takes under a second.
LOAD_TIMEOUT = 90_000
#: Seconds from navigation until every explorable of a chapter has drawn itself, at most. The aim,
#: 1 s on localhost, is measured one page at a time on a quiet machine by
#: benchmarks/page_interactive.py (0.52-0.88 s, median of 3 first visits, on 7 December 2026; the build
#: before the modules were preloaded, MathJax waited for them and point clouds became rasters took
#: 1.15-1.97 s in the same run). `make test`
#: runs two browsers and a JupyterLab beside the PDF build, which slows pages several-fold, so this
#: bound only catches an explorable that hangs; the times are printed.
INTERACTIVE_BOUND = 15.0
#: The chapters, the testing appendix, the teaching pages and the introduction: in a desktop window
#: every table, figure and output block must lie within the text column (read from the build).
STRICT_PAGES = sorted(path for path in (p.relative_to(HTML).as_posix() for p in HTML.glob("book/**/*.html"))
                      if re.match(r"book/(\d\d_[a-z_]+(?<!_methods)\.html|appendix_|teaching/|intro\.html)", path))
#: The experiments' methods pages, a reviewer's tables of every claim and run: there a result table wider
#: than the column may scroll inside its wrapper if it shows the scroll cue.
METHODS_PAGES = ["book/08_circle_methods.html", "book/09_mixture_methods.html",
                 "book/10_point_clouds_methods.html", "book/11_attention_methods.html"]
#: The pages that must be checked, whatever the build holds: the experiment chapters.
EXPERIMENT_PAGES = ["book/08_circle.html", "book/09_mixture.html", "book/10_point_clouds.html",
                    "book/11_attention.html"]
#: Window widths for the layout: a desktop and a phone, where a wide result table may scroll inside its
#: wrapper and the findings view and the front page's grid must fit (the experiment pages and the
#: introduction).
LAYOUT_WIDTHS = [1280, 390]
#: (The chapters' own cases are checked on the pages their explorables' and phone tests load anyway:
#: strictly at 1280 px, and at 390 px for the experiment chapters.)
LAYOUT_CASES = ([(path, LAYOUT_WIDTHS[0], True) for path in STRICT_PAGES if path not in CHAPTER_PAGES]
                + [(path, width, False) for path in METHODS_PAGES for width in LAYOUT_WIDTHS]
                + [(path, LAYOUT_WIDTHS[1], False) for path in ["book/intro.html"]])
#: Lists what a page shows of its tables and figures only in part (see the file).
LAYOUT_CHECK = (Path(__file__).with_name("browser_layout.js")).read_text()
#: True once the page has its colour theme, its fonts and (where it has one) MathJax's first
#: typesetting: the layout check measures the page a reader sees, not one still being styled.
SETTLED = """() => document.documentElement.dataset.theme !== ""
  && document.fonts.status === "loaded"
  && (window.MathJax?.startup?.promise === undefined || window.__setfuncsTypeset === true
      || (window.MathJax.startup.promise.then(() => { window.__setfuncsTypeset = true; }), false))"""
#: The chapter that JupyterLab runs: a slider over a continuous range, and exercises.
LAB_CHAPTER = ROOT / "book" / "04_logsumexp.ipynb"
#: Its explorable, as the chapter makes it.
LAB_EXPLORABLE = ("lse_square", {"half_width": 100})

#: Every page of the book; template fragments that Sphinx themes leave in _static are not pages.
PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if "_static" not in p.relative_to(HTML).parts)


def missing(what: str) -> None:
    """Fail where the browser tests are required, skip elsewhere."""
    if REQUIRED:
        pytest.fail(what, pytrace=False)
    pytest.skip(what)


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves files without logging every request to stderr."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        pass


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    if not (HTML / "index.html").exists():
        missing(f"{HTML} is missing: build the book first (make book)")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=HTML))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        missing(f"{CHROMIUM} is missing: `make browser` (or `make test`) installs Debian's "
                "chromium")
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


# The longest test (a JupyterLab, a kernel, the chapter run whole) comes first: `make browser` runs
# the tests on two workers, and started last it would leave the other worker idle to the end.
def test_chapter_runs_in_jupyterlab(browser: Browser, tmp_path: Path) -> None:
    chapter = numbered_copy(LAB_CHAPTER, tmp_path / "chapter")
    (tmp_path / "lab").mkdir()
    with jupyterlab([chapter], tmp_path / "lab") as lab:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        log = PageLog(page)
        page.goto(lab.tree_url(LAB_CHAPTER.name))
        page.wait_for_function(NOTEBOOK_READY, timeout=60_000)
        page.evaluate(RUN_ALL)
        page.wait_for_function(ALL_RUN, timeout=180_000, polling=250)
        assert page.evaluate(ERRORS) == [], "cells failed"
        rendered = page.evaluate(EXERCISES)
        assert rendered == {"exercises": exercise_count(LAB_CHAPTER), "raw": False}
        # Numbered by chapter, as in the HTML book and the PDF; the fallback cell reads as text.
        titles = page.evaluate(EXERCISE_TITLES)
        assert titles and all(re.match(r"Exercise 4\.\d+\b", title) for title in titles), titles
        first = page.evaluate(FIRST_CELL)
        assert "Reading this chapter in JupyterLab" in first and "enumerator" not in first, first

        # The explorable is an anywidget here, drawn by the same ES module as in the static book:
        # moved to values no still frame shows, it reads out what Python computes.
        name, arguments = LAB_EXPLORABLE
        root = page.locator(".jp-Notebook .jp-OutputArea-output .xp")
        root.wait_for(timeout=30_000)
        root.scroll_into_view_if_needed()
        problems = probe_root(root, name, REGISTRY[name](**arguments).state)
        page.close()
    assert not problems, "\n".join(problems)
    # (jupyterlab-myst logs cross-references into other chapters as errors; only the explorable's are checked)
    assert not [error for error in log.errors if "anywidget" in error or "explorable" in error], log.errors
    assert not log.foreign, f"requests left 127.0.0.1: {log.foreign}"


#: The pages besides the chapters (which test_chapter_explorables_compute_what_python_computes opens
#: at a desktop's width and test_on_a_phone_... at a phone's).
OTHER_PAGES = sorted(set(PAGES) - set(CHAPTER_PAGES))


@pytest.mark.parametrize("path", OTHER_PAGES)
def test_page_loads_cleanly_and_offline_and_fits_a_phone(browser: Browser, base_url: str, path: str) -> None:
    """No console error, no request to another host, nothing sideways at 390 px, and the page's
    weight within the chapters' budget (the API reference is one page per part of the package)."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    log = PageLog(page)
    loaded: set[str] = set()
    page.on("response", lambda response: response.ok and loaded.add(response.url))
    page.goto(base_url + path, wait_until="networkidle", timeout=LOAD_TIMEOUT)
    page.wait_for_function(SETTLED)
    sideways = page.evaluate(SIDEWAYS)
    page.close()
    weight = sum(gzipped_size(local_file(url)) for url in loaded if urlparse(url).hostname == "127.0.0.1")
    assert not log.errors, "\n".join(log.errors)
    assert not log.foreign, f"requests left 127.0.0.1: {log.foreign}"
    assert sideways <= 0, f"{path} scrolls {sideways} px sideways at 390 px"
    assert weight <= PAGE_BUDGET, f"{path} weighs {weight:,} bytes gzipped (budget {PAGE_BUDGET:,})"


def local_file(url: str) -> Path:
    """The file of the build a URL of the test's server names."""
    path = HTML / unquote(urlparse(url).path).lstrip("/")
    return path / "index.html" if path.is_dir() else path


@functools.cache
def gzipped_size(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=6))


@pytest.mark.parametrize("path", CHAPTER_PAGES)
def test_chapter_explorables_compute_what_python_computes(browser: Browser, base_url: str, path: str) -> None:
    """Every chapter has an explorable; each one's probes (values no still frame shows) read out
    Python's numbers; the page weighs at most PAGE_BUDGET gzipped and is interactive quickly (both
    printed); at devicePixelRatio 2 no raster figure is soft; its tables and figures fit the column
    (the strict layout check, LAYOUT_CASES); its figures' text is at least the captions' size."""
    context = browser.new_context(device_scale_factor=2, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    log = PageLog(page)
    loaded: set[str] = set()
    page.on("response", lambda response: response.ok and loaded.add(response.url))
    page.goto(base_url + path, wait_until="load")
    figures = page.locator("figure[data-explorable]")
    count = figures.count()
    page.wait_for_function(f"() => document.querySelectorAll('figure[data-explorable][data-ready]').length === {count}",
                           timeout=15_000)
    interactive = max(float(figures.nth(k).get_attribute("data-ready-at")) for k in range(count)) / 1000
    # loaded and drawn: fonts, MathJax's typesetting, every explorable (not "networkidle": twice in
    # `make test`, once at 30 s and once at 90 s, this page never fell quiet, though alone it does in 1 s)
    page.wait_for_function(SETTLED, timeout=LOAD_TIMEOUT)
    layout = lasting_layout_problems(page, strict=True)      # before the probes move anything
    problems = [problem for k in range(count) for problem in probe(page, figures.nth(k))]
    soft = page.evaluate(SOFT_IMAGES)
    smallest = page.evaluate(SMALLEST_FIGURE_TEXT)
    weight = sum(gzipped_size(local_file(url)) for url in loaded if urlparse(url).hostname == "127.0.0.1")
    context.close()
    print(f"\n{path}: {count} explorable(s), {weight / 1e6:.2f} MB gzipped, interactive at {interactive:.2f} s; "
          + (f"smallest figure text {smallest['px']:.1f} px at the column's width ({smallest['figure']}; "
             f"captions {smallest['caption']:.0f} px)" if smallest else "no SVG figure"))
    assert count >= 1, f"{path} has no explorable"
    assert not layout, "at 1280 px (strict):\n" + "\n".join(layout)
    assert not smallest or smallest["px"] >= smallest["caption"] - 0.05, (
        f"{path}: {smallest['figure']} shows text of {smallest['px']:.1f} px, below its caption's {smallest['caption']:.0f} px")
    assert not problems, "\n".join(problems)
    assert not soft, "raster figures below 1.8x their shown width at devicePixelRatio 2:\n" + "\n".join(soft)
    assert weight <= PAGE_BUDGET, f"{path} weighs {weight:,} bytes gzipped (budget {PAGE_BUDGET:,})"
    assert interactive <= INTERACTIVE_BOUND, f"{path}: interactive after {interactive:.2f} s"
    assert not log.errors, "\n".join(log.errors)
    assert not log.foreign, f"requests left 127.0.0.1: {log.foreign}"


@pytest.mark.parametrize("path", CHAPTER_PAGES)
def test_without_javascript_every_explorable_shows_its_still_frame(browser: Browser, base_url: str, path: str) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(base_url + path)
    stills = page.evaluate("""() => [...document.querySelectorAll("figure[data-explorable]")].map(figure => {
        const image = figure.querySelector("img.explorable-still");
        return {name: figure.dataset.explorable, alt: image?.alt ?? "", shown: Boolean(image && image.naturalWidth > 0
                && image.getBoundingClientRect().width > 0)};
    })""")
    context.close()
    assert stills, f"{path} has no explorable"
    assert all(still["shown"] and len(still["alt"]) > 40 for still in stills), stills


#: The smallest text of the page's SVG figures as shown (its font size in the SVG's units times the
#: shown width over the SVG's width; a sub- or superscript of mathematics, a <tspan>, is left out), the
#: figure it is in, and the captions' font size. At the column's width (1280 px) every figure's text
#: is at least the captions' size: the book's kernel draws 11 pt text (14.7 px in the 7-inch column),
#: the captions are 14 px (css/book.css); before 7 December 2026 figures showed 6-13.3 px text beside
#: 16 px captions. On a phone it is printed.
SMALLEST_FIGURE_TEXT = """async () => {
    let smallest = null;
    for (const image of document.querySelectorAll("main img")) {
        const source = image.currentSrc || image.src, shown = image.getBoundingClientRect().width;
        if (!/\\.svg$/.test(source) || !shown) continue;
        const svg = new DOMParser().parseFromString(await (await fetch(source)).text(), "image/svg+xml").documentElement;
        const width = svg.viewBox.baseVal?.width || parseFloat(svg.getAttribute("width"));
        for (const text of svg.querySelectorAll("text")) {
            const size = /font-size:\\s*([0-9.]+)px/.exec(text.getAttribute("style") ?? "");
            const px = size && Number(size[1]) * shown / width;
            if (px && (!smallest || px < smallest.px)) {
                const figure = image.closest("figure");
                smallest = {px, figure: figure?.querySelector(".caption-number")?.textContent.trim() || source.split("/").pop(),
                            caption: parseFloat(getComputedStyle(figure?.querySelector("figcaption") ?? document.body).fontSize)};
            }
        }
    }
    return smallest;
}"""


#: Raster figures (not SVG) whose pixels are fewer than 1.8 times the CSS pixels they are shown
#: at, after the page has settled at devicePixelRatio 2 (images not shown are left out).
SOFT_IMAGES = """() => [...document.querySelectorAll("main img")].filter(image => {
    const shown = image.getBoundingClientRect().width;
    return shown > 0 && !/\\.svg($|\\?)|^data:image\\/svg/.test(image.currentSrc || image.src)
        && image.naturalWidth < 1.8 * shown;
}).map(image => `${(image.currentSrc || image.src).slice(0, 80)}: ${image.naturalWidth} px shown at ${
    image.getBoundingClientRect().width.toFixed(0)} px`)"""


#: At a phone's width: how far the page scrolls sideways, and each explorable control (slider,
#: select, button) without a 44 px target (its own box or its label's), a name or (for a slider) a
#: spoken value; and each draggable particle (role=slider) without a name or a spoken value. (A
#: particle is drawn at its size in the figure; its 44 px target is checked by a drag, below.)
PHONE_CHECK = """() => {
    const root = document.scrollingElement;
    const named = (node) => Boolean(node.getAttribute("aria-label") || node.closest("label")?.textContent.trim()
                                    || node.textContent.trim());
    const controls = [...document.querySelectorAll("figure[data-explorable] [data-control], figure[data-explorable] button")];
    const bad = controls.filter(control => {
        const box = control.getBoundingClientRect(), label = control.closest("label")?.getBoundingClientRect();
        const target = Math.max(box.height, label?.height ?? 0) >= 44 && Math.max(box.width, label?.width ?? 0) >= 44;
        const spoken = control.type !== "range" || Boolean(control.getAttribute("aria-valuetext"));
        return !(target && named(control) && spoken);
    }).map(control => control.outerHTML.slice(0, 120));
    const handles = [...document.querySelectorAll("figure[data-explorable] [role=slider]:not(input)")];
    bad.push(...handles.filter(handle => !(named(handle) && handle.getAttribute("aria-valuetext")))
                       .map(handle => handle.outerHTML.slice(0, 120)));
    return {sideways: root.scrollWidth - root.clientWidth, controls: controls.length, bad};
}"""


#: The press that tests a particle's touch target: the particle (of the first figure that has any)
#: and a point REACH px from its centre, inside its plot, nearer to it than to any other particle,
#: with the most room to spare; and a point MOVE px from there towards the plot's centre.
REACH, MOVE = 20, 30
FAR_PRESS = """([reach, move]) => {
    const figure = [...document.querySelectorAll("figure[data-explorable]")]
        .find(f => f.querySelector(".xp-handle"));
    if (!figure) return null;
    figure.querySelector(".xp-handle").scrollIntoView({block: "center"});
    const handles = [...figure.querySelectorAll(".xp-handle")];
    const centre = (node) => { const b = node.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; };
    let best = null;
    handles.forEach((node, index) => {
        const [cx, cy] = centre(node), svg = node.ownerSVGElement, box = svg.getBoundingClientRect();
        for (let k = 0; k < 16; k++) {
            const x = cx + reach * Math.cos(k * Math.PI / 8), y = cy + reach * Math.sin(k * Math.PI / 8);
            if (!svg.contains(document.elementFromPoint(x, y))) continue;
            const room = Math.min(...handles.filter(other => other !== node)
                .map(other => Math.hypot(x - centre(other)[0], y - centre(other)[1])), Infinity) - reach;
            if (room > 0 && (!best || room > best.room)) {
                const [mx, my] = [box.left + box.width / 2 - x, box.top + box.height / 2 - y];
                const length = Math.hypot(mx, my) || 1;
                best = {index, room, x, y, to: [x + move * mx / length, y + move * my / length],
                        drawn: Math.max(node.getBoundingClientRect().width, node.getBoundingClientRect().height)};
            }
        }
    });
    window.__handleCentres = () => [...figure.querySelectorAll(".xp-handle")].map(centre);
    return best && {...best, before: window.__handleCentres()};
}"""


#: Every SVG figure of the page (not an explorable's still frame): whether it shows its phone variant
#: (scripts/phone_figures.py) and the scale it is shown at (its shown width over its natural width).
PHONE_FIGURES = """() => [...document.querySelectorAll("main img")].filter(image =>
    /\\.svg$/.test(image.src) && image.getBoundingClientRect().width > 0).map(image => ({
        name: image.closest("figure")?.querySelector(".caption-number")?.textContent.trim() || image.src.split("/").pop().slice(0, 12),
        phone: /-phone\\.svg$/.test(image.currentSrc),
        scale: image.getBoundingClientRect().width / image.naturalWidth}))"""
#: A figure without a phone variant shown below this share of its natural size on a phone is listed:
#: setfuncs.phone re-lays what its rule can and what then fits; the rest keep the book's layout.
SHRUNK = 0.75


@pytest.mark.parametrize("path", CHAPTER_PAGES)
def test_on_a_phone_nothing_scrolls_sideways_and_controls_are_usable(browser: Browser, base_url: str, path: str) -> None:
    """At 390 px: nothing scrolls sideways (and an experiment chapter's tables and figures pass the
    layout check); every control has a 44 px target, a name and a spoken value; and a particle (where the explorable has them) is dragged by a press REACH px from its
    centre, outside the dot as drawn: a touch target of 2 x REACH px at least."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(base_url + path, wait_until="networkidle", timeout=LOAD_TIMEOUT)
    page.wait_for_function("() => [...document.querySelectorAll('figure[data-explorable]')].every(f => f.dataset.ready)")
    found = page.evaluate(PHONE_CHECK)
    layout = lasting_layout_problems(page, strict=False) if path in EXPERIMENT_PAGES else []
    figures = page.evaluate(PHONE_FIGURES)
    smallest = page.evaluate(SMALLEST_FIGURE_TEXT)
    shrunk = [f"{figure['name']} at {figure['scale']:.2f}x" for figure in figures
              if not figure["phone"] and figure["scale"] < SHRUNK]
    print(f"\n{path} at 390 px: {sum(figure['phone'] for figure in figures)} of {len(figures)} figures re-laid for the phone"
          + (f"; smallest figure text {smallest['px']:.1f} px ({smallest['figure']})" if smallest else "")
          + (f"; shown smaller: {', '.join(shrunk)}" if shrunk else ""))
    press = page.evaluate(FAR_PRESS, [REACH, MOVE])
    if press:
        page.mouse.move(press["x"], press["y"])
        page.mouse.down()
        page.mouse.move(*press["to"], steps=5)
        page.mouse.up()
        after = page.evaluate("() => window.__handleCentres()")
    page.close()
    assert found["sideways"] <= 0, f"{path} scrolls {found['sideways']} px sideways at 390 px"
    assert found["controls"] >= 1 and not found["bad"], found
    assert not layout, "at 390 px:\n" + "\n".join(layout)
    if press:
        shifts = [((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5 for (x0, y0), (x1, y1) in zip(press["before"], after)]
        assert press["drawn"] / 2 < REACH, f"{path}: the press lies inside the particle as drawn ({press['drawn']:.0f} px)"
        assert max(shifts) > 4 and shifts.index(max(shifts)) == press["index"], (
            f"{path}: a press {REACH} px from particle {press['index']}'s centre moved the particles by {shifts} px")


def test_one_search_box_and_the_pdf_and_issues_buttons(browser: Browser, base_url: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(base_url + "book/04_logsumexp.html", wait_until="networkidle", timeout=LOAD_TIMEOUT)
    searches = page.locator(".search-button-field, .search-button, input[type=search]").filter(visible=True).count()
    pdf = page.locator("a.btn-pdf-book-button, a[href$='_static/deep-sets-book.pdf']").count()
    issues = page.locator("a[href*='/issues']").count()
    printing = page.locator("[onclick*='window.print']").count()
    page.close()
    assert searches == 1, f"{searches} search boxes at desktop width"
    assert pdf == 1 and printing == 0, "the download menu links the book's PDF instead of printing the page"
    assert issues >= 1, "an issues (errata) button to the repository"


@pytest.mark.parametrize("path, width, strict", LAYOUT_CASES)
def test_tables_figures_and_outputs_fit_the_page(browser: Browser, base_url: str, path: str,
                                                  width: int, strict: bool) -> None:
    page = browser.new_page(viewport={"width": width, "height": 800 if width > 1000 else 844})
    page.goto(base_url + path, wait_until="networkidle", timeout=LOAD_TIMEOUT)
    problems = lasting_layout_problems(page, strict=strict)
    page.close()
    assert not problems, f"at {width} px{' (strict)' if strict else ''}:\n" + "\n".join(problems)


#: How far a page scrolls sideways.
SIDEWAYS = "() => document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"


def test_every_experiment_chapter_is_checked_strictly() -> None:
    """The strict pages are read from the build: the four experiment chapters must be among them."""
    assert set(EXPERIMENT_PAGES) <= set(STRICT_PAGES) or not (HTML / "index.html").exists(), STRICT_PAGES


def test_the_strict_check_finds_a_table_wider_than_the_column(browser: Browser, base_url: str) -> None:
    """The desktop check can fail: a findings table forced wider than the column is reported."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(base_url + "book/11_attention.html", wait_until="networkidle", timeout=LOAD_TIMEOUT)
    page.add_style_tag(content=".verdict-table table { width: 2000px !important; }")
    problems = lasting_layout_problems(page, strict=True)
    page.close()
    assert any("leaves the column" in p for p in problems), problems


def test_the_layout_check_finds_a_table_without_its_scroll_cue(browser: Browser, base_url: str) -> None:
    """The check above can fail: with the book's scroll cue taken away (no scrolling, no shadows),
    chapter 8's wide tables at 390 px are reported, and still so a second later."""
    page = browser.new_page(viewport={"width": 390, "height": 900})
    page.goto(base_url + "book/08_circle.html", wait_until="networkidle", timeout=LOAD_TIMEOUT)
    page.add_style_tag(content=".setfuncs-table { overflow-x: visible !important; background: none !important; }")
    problems = lasting_layout_problems(page, strict=False)
    page.close()
    cut = [p for p in problems if "cut off without a scroll cue (overflow-x visible" in p]
    assert len(cut) >= 2 and not any(p.startswith("(a second earlier") for p in problems), problems


def lasting_layout_problems(page: Page, strict: bool) -> list[str]:
    """The layout check's problems on a settled page that last a second.

    Once (CI, 2026-11-27, under the PDF build's load) the first two tables of chapter 8 failed at
    390 px and no other did, which we could not reproduce in 16 loads. A layout the reader sees is
    one that lasts: a problem is checked again a second later, and the first check's problems are
    reported beside the second's if the second still finds any."""
    page.wait_for_function(SETTLED)
    problems = page.evaluate(LAYOUT_CHECK, strict)
    if problems:
        page.wait_for_timeout(1000)
        first, problems = problems, page.evaluate(LAYOUT_CHECK, strict)
        if problems:
            problems += [f"(a second earlier: {problem})" for problem in first if problem not in problems]
    return problems


#: True once the notebook is open and its kernel has started and is idle.
NOTEBOOK_READY = """() => {
    const panel = window.jupyterapp?.shell.currentWidget;
    return Boolean(panel?.context?.isReady && panel.sessionContext?.isReady
                   && panel.sessionContext.session?.kernel?.status === "idle");
}"""
#: JupyterLab's "Run All Cells" (the menu's Run > Run All Cells).
RUN_ALL = "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"
#: True once the kernel is idle again after every code cell has run, or after one failed (then
#: JupyterLab runs no further cells).
ALL_RUN = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const code = Array.from(panel.content.model.cells).filter(cell => cell.type === "code");
    const failed = code.some(cell => cell.toJSON().outputs.some(o => o.output_type === "error"));
    return panel.sessionContext.session.kernel.status === "idle"
        && (failed || code.every(cell => cell.executionCount !== null));
}"""
#: The error outputs of the notebook's cells, as "<ename>: <evalue>".
ERRORS = """() => Array.from(window.jupyterapp.shell.currentWidget.content.model.cells)
    .flatMap(cell => cell.toJSON().outputs ?? [])
    .filter(output => output.output_type === "error")
    .map(output => `${output.ename}: ${output.evalue}`)"""
#: jupyterlab-myst's rendering of the Markdown cells: how many exercise blocks it drew, and
#: whether any directive's source shows as text.
EXERCISES = """() => {
    const rendered = Array.from(document.querySelectorAll(".jp-MarkdownCell .myst"));
    return {exercises: document.querySelectorAll(".jp-MarkdownCell aside.myst-exercise").length,
            raw: rendered.some(element => element.textContent.includes("{exercise}"))};
}"""
#: The beginning of each exercise block's text, where its title and number stand.
EXERCISE_TITLES = """() => Array.from(document.querySelectorAll(".jp-MarkdownCell aside.myst-exercise"))
    .map(element => element.textContent.trim().slice(0, 40))"""
#: The text of the first Markdown cell as rendered (the chapter's JupyterLab fallback cell).
FIRST_CELL = """() => document.querySelector(".jp-MarkdownCell .myst").textContent"""


def exercise_count(notebook: Path) -> int:
    """How many ``{exercise}`` directives the notebook's Markdown cells hold."""
    cells = json.loads(notebook.read_text())["cells"]
    return sum("".join(cell["source"]).count("```{exercise}")
               for cell in cells if cell["cell_type"] == "markdown")


def numbered_copy(notebook: Path, folder: Path) -> Path:
    """A copy of ``notebook`` with its JupyterLab numbering cell (``scripts/lab_numbering.py``), as
    the committed chapters carry it."""
    spec = importlib.util.spec_from_file_location("lab_numbering", ROOT / "scripts" / "lab_numbering.py")
    lab_numbering = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab_numbering)
    number = lab_numbering.chapter_numbers()[notebook]
    copy = folder / notebook.name
    folder.mkdir(parents=True, exist_ok=True)
    copy.write_text(json.dumps(lab_numbering.with_numbering(json.loads(notebook.read_text()), number),
                               indent=1, ensure_ascii=False) + "\n")
    return copy
