"""Each chapter's time to interactive in Chromium on localhost, one page at a time, against a baseline build.

    make book && python benchmarks/page_interactive.py                     # the build alone
    python benchmarks/page_interactive.py --baseline /tmp/base/_build/html  # and an older build beside it

"Interactive" is the moment the last explorable of the page has drawn itself and answers its controls
(the loader's ``data-ready-at``: milliseconds since navigation). Each round loads every chapter of
each build once, in a fresh browser context (an empty cache: a reader's first visit), builds
interleaved so that machine load falls on both alike; the script prints the median over the rounds,
the ratio to the baseline, and the main thread's longest task after the page became interactive
(MathJax's typesetting, which the book holds until the explorables have drawn: a drag in that
window waits for it). Run it on a quiet machine; `make test` prints the same times under load.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
#: Long tasks (over 50 ms) of the main thread, from the page's start (PerformanceObserver, buffered).
LONG_TASKS = """window.__longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.duration]); })
  .observe({ type: "longtask", buffered: true });"""
READY = "() => [...document.querySelectorAll('figure[data-explorable]')].every((f) => f.dataset.ready)"
TIMES = """() => {
  const ready = Math.max(...[...document.querySelectorAll("figure[data-explorable]")].map((f) => Number(f.dataset.readyAt)));
  const after = window.__longTasks.filter(([start]) => start >= ready).map(([, duration]) => duration);
  return { ready, after: Math.max(0, ...after) };
}"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        pass


def serve(folder: Path) -> str:
    """Serve ``folder`` on 127.0.0.1 in a daemon thread; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


def chapters(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.glob("book/[01][0-9]_*.html")
                  if not p.stem.endswith("_methods"))


def measure(browser: Browser, url: str) -> dict[str, float]:
    """One first visit: ms to interactive and the longest main-thread task after it."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.add_init_script(LONG_TASKS)
    page.goto(url, wait_until="load")
    page.wait_for_function(READY, timeout=30_000)
    page.wait_for_timeout(1500)  # MathJax's typesetting after it
    times = page.evaluate(TIMES)
    context.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="the build to time (default: _build/html)")
    parser.add_argument("--baseline", type=Path, help="an older build to time beside it")
    parser.add_argument("--rounds", type=int, default=5, help="loads of each page per build (default: 5)")
    args = parser.parse_args()
    builds = {"book": args.html} | ({"baseline": args.baseline} if args.baseline else {})
    for name, folder in builds.items():
        if not chapters(folder):
            parser.error(f"{folder}: no chapter pages (book/NN_*.html); build the book first (make book)")
    urls = {name: serve(folder) for name, folder in builds.items()}
    pages = chapters(args.html)
    found: dict[tuple[str, str], list[dict[str, float]]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu"])
        for _ in range(args.rounds):
            for page in pages:
                for name, url in urls.items():
                    found.setdefault((name, page), []).append(measure(browser, url + page))
        browser.close()
    print(f"median of {args.rounds} first visits, ms (interactive; longest main-thread task after it)")
    for page in pages:
        line = f"{page:52s}"
        for name in builds:
            ready = statistics.median(t["ready"] for t in found[name, page])
            after = statistics.median(t["after"] for t in found[name, page])
            line += f"  {name} {ready:6.0f} ({after:4.0f})"
        if args.baseline:
            line += f"  ratio {statistics.median(t['ready'] for t in found['book', page]) / statistics.median(t['ready'] for t in found['baseline', page]):.2f}"
        print(line)


if __name__ == "__main__":
    main()
