// The static book's loader of explorables (every page loads it; it does nothing on a page without
// one). Each <figure data-explorable="name" data-state="{json}"> holds the still frame; this loads
// ./name.js, the same ES module JupyterLab runs as an anywidget front end, and calls its
// render({model, el}) with a model that keeps the state in the page: get, set, on, off,
// save_changes and send, as anywidget's model has them. Once drawn, the figure is marked data-ready
// (the browser test's "interactive"), which hides its still frame (css/book.css, and the rule
// below for pages without it); if the module fails, the still frame stays and the error goes to
// the console. Either way the figure is then marked data-settled and sends "explorable-settled",
// which MathJax waits for before it typesets the page (scripts/book_pages.py).

const HERE = new URL(".", import.meta.url);
const STYLE = document.createElement("style");
STYLE.textContent = "figure[data-explorable][data-ready] > .explorable-still { display: none; }";
document.head.append(STYLE);

function pageModel(state) {
  const values = new Map(Object.entries(state));
  const listeners = new Map();
  return {
    get: (key) => values.get(key),
    set(key, value) {
      values.set(key, value);
      for (const callback of listeners.get(`change:${key}`) ?? []) callback({ new: value });
    },
    on(event, callback) { listeners.set(event, [...(listeners.get(event) ?? []), callback]); },
    off(event, callback) {
      listeners.set(event, callback ? (listeners.get(event) ?? []).filter((c) => c !== callback) : []);
    },
    save_changes() {},
    send() {},
  };
}

async function start(figure) {
  const module = await import(new URL(`${figure.dataset.explorable}.js`, HERE));
  const model = pageModel({ state: JSON.parse(figure.dataset.state) });
  const el = document.createElement("div");
  el.className = "explorable-live";
  figure.append(el);
  await module.default.render({ model, el });
  figure.dataset.ready = "true";  // the book's stylesheet hides the still frame of a ready figure
  figure.dataset.readyAt = performance.now().toFixed(0);  // ms since navigation: time to interactive
}

// The loader runs as soon as it has loaded (async), often while the page is still being parsed:
// each figure starts as the parser reaches it, not after every other script of the page.
const started = new WeakSet();
function settled(figure) {
  figure.dataset.settled = "true";
  figure.dispatchEvent(new Event("explorable-settled"));
}
function startAll() {
  for (const figure of document.querySelectorAll("figure[data-explorable]")) {
    if (started.has(figure)) continue;
    started.add(figure);
    start(figure)
      .catch((error) => console.error(`explorable ${figure.dataset.explorable}:`, error))
      .finally(() => settled(figure));
  }
}
startAll();
if (document.readyState === "loading") {
  const parsing = new MutationObserver(startAll);
  parsing.observe(document.documentElement, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", () => { parsing.disconnect(); startAll(); });
}
