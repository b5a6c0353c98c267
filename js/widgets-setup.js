// Loaded between require.js and embed-amd.js on pages with widgets (see _config.yml).
// 1. RequireJS resolves module ids from this script's folder (_static/ipywidgets/), so the
//    widget manager finds its font files there instead of next to the page.
require.config({ baseUrl: document.currentScript.src.replace(/[^/]*$/, "") });
// 2. @jupyter-widgets/base typesets widget labels with the MathJax 2 call
//    MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]); the book runs MathJax 3, which at
//    start-up replaces the window.MathJax configuration object. Give every value of
//    window.MathJax a Hub that forwards to MathJax 3 (a no-op until MathJax has started).
if (window.MathJax) {
  const hub = { Queue: (command) => window.MathJax.typesetPromise?.([command[2]]) };
  let mathjax = Object.assign(window.MathJax, { Hub: hub });
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: () => mathjax,
    set: (value) => { mathjax = Object.assign(value, { Hub: value.Hub ?? hub }); },
  });
}
