// Chapter 3: the power means M_p(X) = ((1/N) Σ x_i^p)^(1/p) of positive particles, between min
// and max, at any exponent p. The slider moves u = asinh(p) (state key asinh_p), a stretched axis:
// nearly linear around p = 0, logarithmic in both tails, from p = -100 to 100, continuous (step
// "any"). Top: filled contours of min, M_p and max on pairs (x1, x2) in [0.1, 2]², with shared
// levels. Bottom: M_p of the reader's population against p, the population's landmarks (min,
// geometric mean, mean, max) as dotted lines, a dot at the current p and the particles in a column
// on the right, each draggable up and down (pointer or arrow keys; Delete removes one).
import { button, draggable, fmt, h, plot, readout, root, s, slider, viridis } from "./lib.js";

const PM_P_LIMIT = 100;
const PM_U = Math.asinh(PM_P_LIMIT);
const PM_PAIR = [0.1, 2.0];
const PM_LEVELS = 19;
const PM_VALUES = [0.05, 2.5];
const PM_CAPACITY = 40;
const PM_TICKS = [-100, -10, -2, 0, 2, 10, 100];
const PM_LANDMARKS = [["minimum", "min", "#d62728"], ["geometric", "geometric mean", "#9467bd"],
  ["mean", "mean", "#2ca02c"], ["maximum", "max", "#ff7f0e"]];
const PM_COLUMN = PM_U * 1.15; // the particles' column, in the curve's x coordinates

// M_p of positive xs, accurate at every p: with t_i = p ln x_i and c = max_i t_i,
// ln((1/N) Σ e^{t_i}) = c + log1p((1/N) Σ expm1(t_i - c)), which neither overflows (large |p|)
// nor loses the digits of x^p - 1 (p near 0); p = 0 is the geometric mean exp((1/N) Σ ln x_i).
export function pmPowerMean(xs, p) {
  const n = xs.length;
  if (p === 0) return Math.exp(xs.reduce((a, v) => a + Math.log(v), 0) / n);
  const t = xs.map((v) => p * Math.log(v));
  const c = Math.max(...t);
  const spread = t.reduce((a, v) => a + Math.expm1(v - c), 0) / n;
  return Math.exp((c + Math.log1p(spread)) / p);
}

// Filled contours of f on [lo, hi]² with `levels` equal bands between lo and hi (shared by the
// panels), and a light line where neighbouring pixels fall in different bands. A PNG data URL.
function pmBands(f, lo, hi, { pixels = 150, levels = PM_LEVELS } = {}) {
  const band = new Int16Array(pixels * pixels);
  for (let r = 0; r < pixels; r++) {
    const x2 = hi - ((r + 0.5) / pixels) * (hi - lo);
    for (let c = 0; c < pixels; c++) {
      const x1 = lo + ((c + 0.5) / pixels) * (hi - lo);
      band[r * pixels + c] = Math.min(Math.max(Math.floor(((f(x1, x2) - lo) / (hi - lo)) * levels), 0), levels - 1);
    }
  }
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = pixels;
  const context = canvas.getContext("2d");
  const image = context.createImageData(pixels, pixels);
  for (let i = 0; i < band.length; i++) {
    const edge = (i % pixels < pixels - 1 && band[i + 1] !== band[i]) || (i + pixels < band.length && band[i + pixels] !== band[i]);
    const [r, g, b] = edge ? [255, 255, 255] : viridis(band[i] / (levels - 1));
    image.data.set([r, g, b, edge ? 170 : 255], i * 4);
  }
  context.putImageData(image, 0, 0);
  return canvas.toDataURL();
}

// Axes with ticks at given data values (labels given), drawn into area's own axes layer.
function pmAxes(area, { xticks, xlabels = xticks.map((t) => fmt(t)), yticks, xlabel = "", ylabel = "", xend = area.x[1] }) {
  const layer = area.svg.querySelector(".xp-axes");
  layer.replaceChildren();
  const [x0, y0, y1] = [area.x[0], area.y[0], area.y[1]];
  const line = (a, b, c, d) => s("line", { x1: a, y1: b, x2: c, y2: d, stroke: "currentColor", "stroke-width": 1 });
  layer.append(line(area.sx(x0), area.sy(y0), area.sx(xend), area.sy(y0)), line(area.sx(x0), area.sy(y0), area.sx(x0), area.sy(y1)));
  xticks.forEach((t, k) => {
    layer.append(line(area.sx(t), area.sy(y0), area.sx(t), area.sy(y0) + 4));
    layer.append(s("text", { x: area.sx(t), y: area.sy(y0) + 16, "text-anchor": "middle" }, xlabels[k]));
  });
  for (const t of yticks) {
    layer.append(line(area.sx(x0) - 4, area.sy(t), area.sx(x0), area.sy(t)));
    layer.append(s("text", { x: area.sx(x0) - 6, y: area.sy(t) + 4, "text-anchor": "end" }, fmt(t)));
  }
  const middle = (area.sx(x0) + area.sx(xend)) / 2;
  if (xlabel) layer.append(s("text", { x: middle, y: area.height - 4, "text-anchor": "middle" }, xlabel));
  if (ylabel) {
    const my = (area.sy(y0) + area.sy(y1)) / 2;
    layer.append(s("text", { x: 12, y: my, "text-anchor": "middle", transform: `rotate(-90 12 ${my})` }, ylabel));
  }
}

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const top = root(el, "power means between min and max, at any exponent p");
    const population = () => state.population.slice(0, state.size);
    const exponent = () => Math.sinh(state.asinh_p);

    // Top: min, M_p and max on pairs of particles.
    const [lo, hi] = PM_PAIR;
    const panels = [["min", (a, b) => Math.min(a, b)], ["M_p", null], ["max", (a, b) => Math.max(a, b)]].map(([title, f]) => {
      const area = plot({ width: 224, height: 244, x: [lo, hi], y: [lo, hi], margin: { left: 36, right: 8, top: 22, bottom: 42 },
        label: `filled contours of ${title} of two particles x1, x2 from ${lo} to ${hi}` });
      area.image = s("image", { preserveAspectRatio: "none", x: area.sx(lo), y: area.sy(hi), width: area.sx(hi) - area.sx(lo), height: area.sy(lo) - area.sy(hi) });
      area.title = s("text", { x: 130, y: 15, "text-anchor": "middle" }, title);
      area.layer.append(area.image, area.title);
      if (f) area.image.setAttribute("href", pmBands(f, lo, hi));
      pmAxes(area, { xticks: [0.1, 1, 2], yticks: [0.1, 1, 2], xlabel: "x₁", ylabel: "x₂" });
      return area;
    });

    // Bottom: M_p of the population against p (stretched axis), and the particles' column.
    const curve = plot({ width: 700, height: 300, x: [-PM_U * 1.03, PM_U * 1.22], y: [0, PM_VALUES[1]],
      margin: { left: 46, right: 8, top: 24, bottom: 36 }, label: "the power mean of the population against the exponent p, and the particles" });
    const landmarkLines = Object.fromEntries(PM_LANDMARKS.map(([key, , colour]) =>
      [key, s("line", { stroke: colour, "stroke-width": 1.5, "stroke-dasharray": "2 3" })]));
    const path = s("path", { fill: "none", stroke: "#1f77b4", "stroke-width": 2 });
    const guide = s("line", { stroke: "currentColor", "stroke-width": 1, "stroke-dasharray": "5 4", opacity: 0.6 });
    const dot = s("circle", { r: 6, fill: "black", stroke: "white", "stroke-width": 1.5 });
    const separator = s("line", { x1: curve.sx(PM_U * 1.07), x2: curve.sx(PM_U * 1.07), y1: curve.sy(0), y2: curve.sy(PM_VALUES[1]), stroke: "#999" });
    const columnTitle = s("text", { x: curve.sx(PM_COLUMN), y: 15, "text-anchor": "middle" }, "particles");
    curve.layer.append(...Object.values(landmarkLines), separator, columnTitle, path, guide, dot);
    pmAxes(curve, { xticks: PM_TICKS.map(Math.asinh), xlabels: PM_TICKS.map(String), yticks: [0, 0.5, 1, 1.5, 2, 2.5],
      xlabel: "exponent p (stretched axis: p = sinh u)", ylabel: "M_p", xend: PM_U * 1.03 });
    // The column is a strip of its own for the drags: x ignored, y the particle's value.
    const strip = { x: [0, 1], y: PM_VALUES, pointer: (event) => [0.5, curve.pointer(event)[1]] };
    const dots = Array.from({ length: PM_CAPACITY }, (_, i) => {
      const node = s("circle", { r: 7, fill: "#1f77b4", "fill-opacity": 0.8, stroke: "white", "stroke-width": 1.5 });
      node.addEventListener("keydown", (event) => {
        if (event.key === "Delete" || event.key === "Backspace") { event.preventDefault(); remove(i); }
      });
      node.addEventListener("dblclick", () => remove(i));
      curve.layer.append(node);
      return node;
    });

    // Readouts.
    const readouts = {
      p: readout("p", "p ="),
      power_mean: readout("power_mean", "M_p ="),
      ...Object.fromEntries(PM_LANDMARKS.map(([key, label, colour]) => {
        const r = readout(key, `${label} =`);
        r.prepend(h("span", { "aria-hidden": "true", style: `color: ${colour}` }, "● "));
        return [key, r];
      })),
    };

    const draw = () => {
      const xs = population(), p = exponent();
      // the M_p panel at the current p
      panels[1].image.setAttribute("href", pmBands((a, b) => pmPowerMean([a, b], p), lo, hi));
      panels[1].title.textContent = `M_p, p = ${fmt(p)}`;
      // the curve, sampled evenly in u, and the landmarks
      const points = [];
      for (let k = 0; k <= 280; k++) {
        const u = -PM_U + (2 * PM_U * k) / 280;
        points.push(`${k ? "L" : "M"}${curve.sx(u).toFixed(2)},${curve.sy(pmPowerMean(xs, Math.sinh(u))).toFixed(2)}`);
      }
      path.setAttribute("d", points.join(""));
      const values = { minimum: Math.min(...xs), geometric: pmPowerMean(xs, 0), maximum: Math.max(...xs),
        mean: xs.reduce((a, v) => a + v, 0) / xs.length };
      for (const [key, line] of Object.entries(landmarkLines)) {
        Object.entries({ x1: curve.sx(-PM_U * 1.03), x2: curve.sx(PM_U * 1.07), y1: curve.sy(values[key]), y2: curve.sy(values[key]) })
          .forEach(([k, v]) => line.setAttribute(k, v));
        readouts[key].set(values[key]);
      }
      const value = pmPowerMean(xs, p);
      dot.setAttribute("cx", curve.sx(state.asinh_p));
      dot.setAttribute("cy", curve.sy(value));
      Object.entries({ x1: curve.sx(state.asinh_p), x2: curve.sx(PM_COLUMN), y1: curve.sy(value), y2: curve.sy(value) })
        .forEach(([k, v]) => guide.setAttribute(k, v));
      dots.forEach((node, i) => {
        const shown = i < state.size;
        node.style.display = shown ? "" : "none";
        if (!shown) return;
        node.setAttribute("cx", curve.sx(PM_COLUMN) + ((i % 3) - 1) * 7);
        node.setAttribute("cy", curve.sy(state.population[i]));
        node.setAttribute("aria-label", `particle ${i + 1} = ${fmt(state.population[i])}; arrow keys move it, Delete removes it`);
      });
      readouts.p.set(p);
      readouts.power_mean.set(value);
      sizeSlider.set(state.size);
      model.set("state", structuredClone(state));
      model.save_changes();
    };
    const remove = (i) => {
      if (state.size <= 1) return;
      const [gone] = state.population.splice(i, 1);
      state.population.push(gone); // back to the reserve that "add" draws from
      state.size -= 1;
      draw();
    };
    dots.forEach((node, i) => draggable(strip, node, {
      label: `particle ${i + 1}`,
      get: () => [0.5, state.population[i]],
      onMove: ([, v]) => { state.population[i] = v; draw(); },
    }));

    const pSlider = slider({ name: "asinh_p", label: "exponent p", min: -PM_U, max: PM_U, step: "any", value: state.asinh_p,
      format: (u) => fmt(Math.sinh(u)), onInput: (u) => { state.asinh_p = u; draw(); } });
    const preset = (p, text) => button(text, () => { state.asinh_p = Math.asinh(p); pSlider.set(state.asinh_p); draw(); },
      { "aria-label": `set p to ${p}` });
    const sizeSlider = slider({ name: "size", label: "particles N", min: 1, max: PM_CAPACITY, step: 1, value: state.size,
      format: (v) => String(Math.round(v)), onInput: (v) => { state.size = Math.round(v); draw(); } });
    top.append(
      h("div", { class: "xp-controls" }, pSlider),
      h("div", { class: "xp-controls" }, h("span", {}, "go to"),
        preset(-1, "p = −1 (harmonic)"), preset(0, "p = 0 (geometric)"), preset(1, "p = 1 (mean)"), preset(2, "p = 2")),
      h("div", { class: "xp-panels" }, ...panels.map((area) => area.svg)),
      h("div", { class: "xp-controls" }, sizeSlider,
        button("add a particle", () => { state.size = Math.min(state.size + 1, PM_CAPACITY); draw(); }),
        button("remove a particle", () => remove(state.size - 1))),
      curve.svg,
      h("div", { class: "xp-readouts" }, readouts.p, readouts.power_mean, ...PM_LANDMARKS.map(([key]) => readouts[key])),
      h("p", { class: "xp-note" }, "Drag a particle in the column on the right up or down (or focus it and use the arrow keys; " +
        "Delete or a double click removes it). The dashed line runs from the dot, M_p at the current p, to the particles."),
    );
    draw();
  },
};
