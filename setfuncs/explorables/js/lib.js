// Shared parts of the explorables: elements, labelled controls, read-outs, plots, colours, the
// plain aggregations and a seeded random generator. No dependencies; every explorable imports what
// it needs from here (inlined for notebooks by setfuncs/explorables/esm.py).

const SVG_NS = "http://www.w3.org/2000/svg";

// The explorables' style, added once to the document (the book, JupyterLab and Colab alike):
// controls with a 44 px touch target, a visible focus ring, read-outs in tabular figures.
const STYLE = `
.xp { font: inherit; max-width: 100%; }
.xp-controls { display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; align-items: center; margin: 0.25rem 0; }
.xp-control { display: flex; flex-wrap: wrap; align-items: center; gap: 0 0.5rem; min-height: 44px; flex: 1 1 16rem;
  min-width: 0; max-width: 100%; }
.xp-control input[type=range] { flex: 1 1 8rem; min-width: 6rem; height: 44px; margin: 0; accent-color: #1f77b4; }
.xp-control select, .xp-button { min-height: 44px; min-width: 44px; font: inherit; padding: 0 0.6rem; }
.xp-control output { min-width: 4.5em; font-variant-numeric: tabular-nums; }
.xp input:focus-visible, .xp select:focus-visible, .xp button:focus-visible, .xp [tabindex]:focus-visible {
  outline: 3px solid #d35400; outline-offset: 2px; }
.xp-readouts { display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; margin: 0.25rem 0; font-variant-numeric: tabular-nums; }
.xp-readouts output { font-weight: 600; }
.xp svg { max-width: 100%; height: auto; display: block; touch-action: none; }
.xp svg text { font-size: 13px; fill: currentColor; }
.xp .xp-handle { cursor: grab; }
.xp .xp-handle:focus-visible { outline: none; stroke: #d35400; stroke-width: 3px; }
.xp-panels { display: flex; flex-wrap: wrap; gap: 0.5rem; }
.xp-panels > * { flex: 1 1 12rem; min-width: 0; }
.xp table { display: block; max-width: 100%; overflow-x: auto; }
.xp-note { font-size: 0.9em; opacity: 0.85; margin: 0.25rem 0; }
`;

function ensureStyle(root = document) {
  if (root.getElementById?.("xp-style")) return;
  const style = document.createElement("style");
  style.id = "xp-style";
  style.textContent = STYLE;
  (root.head ?? root).appendChild(style);
}

// An HTML element: h("div", {class: "x"}, child, "text", ...).
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

// An SVG element, the same way.
export function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, String(value));
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

// A number as the page shows it: `digits` significant digits, no trailing exponent noise.
export function fmt(value, digits = 3) {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return "0";
  const magnitude = Math.abs(value);
  if (magnitude >= 1e5 || magnitude < 1e-3) return value.toExponential(digits - 1);
  return String(Number(value.toPrecision(digits)));
}

// The notebook's copy of the state: save() sets it on the model at once and sends it (save_changes)
// once the reader has paused for `delay` ms, since a state that carries trained weights is large.
export function saver(model, state, delay = 250) {
  let pending = null;
  return () => {
    model.set("state", { ...state });
    clearTimeout(pending);
    pending = setTimeout(() => model.save_changes(), delay);
  };
}

// A labelled slider whose <input> carries data-control=name, an accessible name (aria-label) and
// its value spoken as the read-out shows it (aria-valuetext). With log: true the input moves on
// log10 of the value (data-scale="log"); onInput(value) gets the value itself.
export function slider({ name, label, min, max, step, value, log = false, format = fmt, onInput }) {
  const toInput = (v) => (log ? Math.log10(v) : v);
  const fromInput = (v) => (log ? 10 ** v : v);
  const input = h("input", {
    type: "range", "data-control": name, "data-scale": log ? "log" : "linear", "aria-label": label,
    min: toInput(min), max: toInput(max), step: step ?? (toInput(max) - toInput(min)) / 400,
    value: toInput(value),
  });
  const shown = h("output", { "aria-hidden": "true" });
  const update = () => {
    const current = fromInput(Number(input.value));
    shown.textContent = format(current);
    input.setAttribute("aria-valuetext", `${label} = ${format(current)}`);
    return current;
  };
  input.addEventListener("input", () => onInput(update()));
  update();
  const wrapper = h("label", { class: "xp-control" }, h("span", {}, label), input, shown);
  wrapper.set = (v) => { input.value = toInput(v); update(); };
  return wrapper;
}

// A labelled <select> (data-control=name) over {value: text} options.
export function choice({ name, label, options, value, onInput }) {
  const select = h("select", { "data-control": name, "aria-label": label },
    ...Object.entries(options).map(([key, text]) => h("option", { value: key, selected: key === String(value) }, text)));
  select.addEventListener("input", () => onInput(select.value));
  return h("label", { class: "xp-control" }, h("span", {}, label), select);
}

// A button (44 px target) that calls onClick.
export function button(label, onClick, attrs = {}) {
  return h("button", { type: "button", class: "xp-button", onclick: onClick, ...attrs }, label);
}

// A read-out: <output data-readout=name data-value=...> after its label; set(value, text?).
export function readout(name, label) {
  const value = h("output", { "data-readout": name, "aria-live": "polite" });
  const wrapper = h("span", { class: "xp-readout" }, `${label} `, value);
  wrapper.set = (number, text = fmt(number)) => {
    value.dataset.value = String(number);
    value.textContent = text;
  };
  return wrapper;
}

// A plot area: an <svg> with a viewBox of width x height, margins for axes, and maps from data
// to pixels; axes(ticks) draws both axes with labels. role="img" and an aria-label name it. The
// maps read the area's current ranges, so `area.x = [a, b]` (or changing them in place) rescales.
export function plot({ width = 420, height = 320, x, y, label, margin = { left: 44, right: 10, top: 10, bottom: 34 } }) {
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label });
  const area = { x, y };
  const sx = (v) => margin.left + ((v - area.x[0]) / (area.x[1] - area.x[0])) * (width - margin.left - margin.right);
  const sy = (v) => height - margin.bottom - ((v - area.y[0]) / (area.y[1] - area.y[0])) * (height - margin.top - margin.bottom);
  const ix = (px) => area.x[0] + ((px - margin.left) / (width - margin.left - margin.right)) * (area.x[1] - area.x[0]);
  const iy = (py) => area.y[0] + ((height - margin.bottom - py) / (height - margin.top - margin.bottom)) * (area.y[1] - area.y[0]);
  const layer = s("g");
  const axesLayer = s("g", { class: "xp-axes" });
  svg.append(layer, axesLayer);
  const axes = ({ xlabel = "", ylabel = "", ticks = 5 } = {}) => {
    const { x, y } = area;
    axesLayer.replaceChildren();
    const line = (x1, y1, x2, y2) => s("line", { x1, y1, x2, y2, stroke: "currentColor", "stroke-width": 1 });
    axesLayer.append(line(sx(x[0]), sy(y[0]), sx(x[1]), sy(y[0])), line(sx(x[0]), sy(y[0]), sx(x[0]), sy(y[1])));
    for (let k = 0; k <= ticks; k++) {
      const vx = x[0] + ((x[1] - x[0]) * k) / ticks, vy = y[0] + ((y[1] - y[0]) * k) / ticks;
      axesLayer.append(s("text", { x: sx(vx), y: sy(y[0]) + 15, "text-anchor": "middle" }, fmt(vx, 2)));
      axesLayer.append(s("text", { x: sx(x[0]) - 4, y: sy(vy) + 4, "text-anchor": "end" }, fmt(vy, 2)));
    }
    if (xlabel) axesLayer.append(s("text", { x: (sx(x[0]) + sx(x[1])) / 2, y: height - 3, "text-anchor": "middle" }, xlabel));
    if (ylabel) axesLayer.append(s("text", { x: 12, y: (sy(y[0]) + sy(y[1])) / 2, "text-anchor": "middle",
      transform: `rotate(-90 12 ${(sy(y[0]) + sy(y[1])) / 2})` }, ylabel));
  };
  // The pointer's position in data coordinates, for drags.
  const pointer = (event) => {
    const point = svg.createSVGPoint();
    point.x = event.clientX; point.y = event.clientY;
    const local = point.matrixTransform(svg.getScreenCTM().inverse());
    return [ix(local.x), iy(local.y)];
  };
  return Object.assign(area, { svg, layer, sx, sy, ix, iy, axes, pointer, width, height, margin });
}

// The touch target of a draggable particle: a press within HANDLE_REACH px (CSS pixels, whatever
// the plot's scale) of its centre grabs it, the nearest one where several are in reach. So every
// particle has a 44 px target however small it is drawn, and a dense population still gives each
// particle the presses nearer to it than to any other.
const HANDLE_REACH = 22;
const DRAGS = new WeakMap();  // handle -> starts its drag from a pointerdown

function nearestHandle(svg, event) {
  let nearest = null, best = HANDLE_REACH;
  for (const node of svg.querySelectorAll(".xp-handle")) {
    const box = node.getBoundingClientRect();
    if (!DRAGS.has(node) || (box.width === 0 && box.height === 0)) continue;
    const distance = Math.hypot(event.clientX - (box.left + box.width / 2), event.clientY - (box.top + box.height / 2));
    if (distance <= best) { nearest = node; best = distance; }  // ties go to the one drawn on top
  }
  return nearest;
}

// One listener per document, in the capture phase: a press in an explorable's plot (the first <svg>
// on the event's path, shadow roots included) grabs the plot's nearest particle in reach.
const LISTENING = new WeakSet();
function grabNearest(event) {
  const svg = event.composedPath().find((node) => node instanceof SVGSVGElement);
  const node = svg && nearestHandle(svg, event);
  if (!node) return;
  event.preventDefault();
  event.stopPropagation();
  DRAGS.get(node)(event);
}

// Make an SVG element draggable by pointer (a 44 px target, above) and by arrow keys (focusable,
// named by `label`, its position spoken): onMove([x, y]) gets the new position in data
// coordinates, clipped to the plot's ranges.
export function draggable(area, node, { label, get, onMove, keyStep = 0.05 }) {
  node.setAttribute("tabindex", "0");
  node.setAttribute("role", "slider");
  node.setAttribute("aria-label", label);
  node.classList.add("xp-handle");
  // its value spoken: the position, as the handle is focused or moved
  const speak = () => node.setAttribute("aria-valuetext", get().map((v) => fmt(v)).join(", "));
  speak();
  node.addEventListener("focus", speak);
  const moved = onMove;
  onMove = (position) => { moved(position); speak(); };
  const clip = ([px, py]) => [Math.min(Math.max(px, area.x[0]), area.x[1]), Math.min(Math.max(py, area.y[0]), area.y[1])];
  DRAGS.set(node, (event) => {
    // the particle keeps its offset from the press: it moves with the finger, not under it
    const [gx, gy] = area.pointer(event), [hx, hy] = get();
    node.setPointerCapture(event.pointerId);
    const move = (e) => { const [px, py] = area.pointer(e); onMove(clip([px - gx + hx, py - gy + hy])); };
    const up = () => { node.removeEventListener("pointermove", move); node.removeEventListener("pointerup", up); };
    node.addEventListener("pointermove", move);
    node.addEventListener("pointerup", up);
  });
  const page = node.ownerDocument;
  if (!LISTENING.has(page)) {
    LISTENING.add(page);
    page.addEventListener("pointerdown", grabNearest, { capture: true });
  }
  node.addEventListener("keydown", (event) => {
    const [px, py] = get();
    const dx = (area.x[1] - area.x[0]) * keyStep, dy = (area.y[1] - area.y[0]) * keyStep;
    const moves = { ArrowLeft: [-dx, 0], ArrowRight: [dx, 0], ArrowUp: [0, dy], ArrowDown: [0, -dy] };
    if (!(event.key in moves)) return;
    event.preventDefault();
    onMove(clip([px + moves[event.key][0], py + moves[event.key][1]]));
  });
}

// Viridis at t in [0, 1] (piecewise linear between nine of its colours), as [r, g, b].
const VIRIDIS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37]];
export function viridis(t) {
  const u = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1);
  const k = Math.min(Math.floor(u), VIRIDIS.length - 2), f = u - k;
  return VIRIDIS[k].map((c, i) => Math.round(c + f * (VIRIDIS[k + 1][i] - c)));
}

// Filled contours of f(x1, x2) on [x0, x1] x [y0, y1]: an image of `pixels` x `pixels` cells, each
// coloured by which of `levels` equal bands between the grid's min and max its value falls in.
// Returns {href (a PNG data URL for an SVG <image>), min, max}.
export function contourImage(f, xr, yr, { pixels = 160, levels = 12 } = {}) {
  const values = new Float64Array(pixels * pixels);
  let lo = Infinity, hi = -Infinity;
  for (let r = 0; r < pixels; r++) {
    const v2 = yr[1] - ((r + 0.5) / pixels) * (yr[1] - yr[0]);
    for (let c = 0; c < pixels; c++) {
      const v1 = xr[0] + ((c + 0.5) / pixels) * (xr[1] - xr[0]);
      const value = f(v1, v2);
      values[r * pixels + c] = value;
      if (value < lo) lo = value;
      if (value > hi) hi = value;
    }
  }
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = pixels;
  const context = canvas.getContext("2d");
  const image = context.createImageData(pixels, pixels);
  const span = hi - lo || 1;
  values.forEach((value, i) => {
    const band = Math.min(Math.floor(((value - lo) / span) * levels), levels - 1);
    const [r, g, b] = viridis(band / (levels - 1));
    image.data.set([r, g, b, 255], i * 4);
  });
  context.putImageData(image, 0, 0);
  return { href: canvas.toDataURL(), min: lo, max: hi };
}

// The plain aggregations of one population xs (numbers), as the book defines them:
// sum, mean, max, min, LSE = log sum exp, log-mean-exp = LSE - log N. (Chapter 3's power means,
// accurate near p = 0 and for large |p|, are in power_means.js.)
export function logSumExp(xs) {
  const top = Math.max(...xs);
  if (!Number.isFinite(top)) return top;
  return top + Math.log(xs.reduce((acc, v) => acc + Math.exp(v - top), 0));
}
export const AGGREGATE = {
  sum: (xs) => xs.reduce((a, v) => a + v, 0),
  mean: (xs) => xs.reduce((a, v) => a + v, 0) / xs.length,
  max: (xs) => Math.max(...xs),
  min: (xs) => Math.min(...xs),
  lse: (xs) => logSumExp(xs),
  lme: (xs) => logSumExp(xs) - Math.log(xs.length),
};


// mulberry32: a seeded generator of uniform numbers in [0, 1) (setfuncs.explorables.rng has the
// same one in Python, so a population drawn here can be drawn there).
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The explorable's root element: ensures the style, marks the element, and returns it.
export function root(el, label) {
  ensureStyle(el.ownerDocument ?? document);
  const node = h("div", { class: "xp", role: "group", "aria-label": label });
  el.replaceChildren(node);
  return node;
}
