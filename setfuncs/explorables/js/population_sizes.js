// Chapter 7: Deep Sets trained on populations of one size (N = 20), each run here (deepset.js) on a
// Gaussian population of the size N the reader picks, 2 to 500. Left, the population with a dashed
// circle of radius sigma; right, every model's estimate sigma-hat on the first n points of the same
// draw for n from 2 to 500 (the sample standard deviation dotted, the true sigma a grey line), with
// the training size and the N picked marked. Read-outs: each estimate at N.
import { button, fmt, h, mulberry32, plot, readout, root, s, saver, slider } from "./lib.js";
import { forward } from "./deepset.js";

// N points of N(c, sigma^2 I), as setfuncs.explorables.population_sizes.gaussian_population draws them.
export function szPopulation(seed, n, sigma) {
  const u = mulberry32(seed);
  const centre = [4 * u() - 2, 4 * u() - 2];
  const points = [];
  for (let i = 0; i < n; i++) {
    const r = Math.sqrt(-2 * Math.log(1 - u())), theta = 2 * Math.PI * u();
    points.push([centre[0] + sigma * r * Math.cos(theta), centre[1] + sigma * r * Math.sin(theta)]);
  }
  return { centre, points };
}

// Pooled sample standard deviation with Bessel's correction (the chapter's classical estimate).
export function szSampleStd(points) {
  const n = points.length;
  let total = 0;
  for (const d of [0, 1]) {
    const mean = points.reduce((a, p) => a + p[d], 0) / n;
    total += points.reduce((a, p) => a + (p[d] - mean) ** 2, 0) / (n - 1);
  }
  return Math.sqrt(total / 2);
}

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const [nLo, nHi] = state.n_range, v = state.view, top = state.top;
    const node = root(el, "estimates of sigma by models trained at one population size, at the size you pick");
    const save = saver(model, state);

    const cloud = plot({ width: 320, height: 328, x: [-v, v], y: [-v, v], margin: { left: 36, right: 8, top: 24, bottom: 28 },
      label: "the population: N points of a round Gaussian, a dashed circle of radius sigma around its centre" });
    const cloudTitle = s("text", { x: 174, y: 16, "text-anchor": "middle" });
    const dots = s("g", { fill: "#1f77b4" });
    const ring = s("circle", { fill: "none", stroke: "currentColor", "stroke-dasharray": "5 4", "stroke-width": 1.5 });
    const cloudClip = `sz-cloud-${Math.random().toString(36).slice(2)}`;
    cloud.svg.prepend(s("defs", {}, s("clipPath", { id: cloudClip },
      s("rect", { x: cloud.sx(-v), y: cloud.sy(v), width: cloud.sx(v) - cloud.sx(-v), height: cloud.sy(-v) - cloud.sy(v) }))));
    dots.setAttribute("clip-path", `url(#${cloudClip})`);
    ring.setAttribute("clip-path", `url(#${cloudClip})`);
    cloud.layer.append(cloudTitle, dots, ring);
    cloud.svg.style.flex = "320 1 14rem";
    cloud.axes({ ticks: 4 });

    const lx = [Math.log10(nLo), Math.log10(nHi)];
    const chart = plot({ width: 460, height: 328, x: lx, y: [0, top], margin: { left: 44, right: 18, top: 24, bottom: 40 },
      label: "each model's estimate of sigma against the population size N, on the first N points of this population" });
    chart.svg.style.flex = "460 1 18rem";
    const clip = `sz-clip-${Math.random().toString(36).slice(2)}`;
    const [x0, x1, y0, y1] = [chart.sx(lx[0]), chart.sx(lx[1]), chart.sy(0), chart.sy(top)];
    const band = s("rect", { x: x0, width: x1 - x0, fill: "currentColor", opacity: 0.08 });
    const truth = s("line", { x1: x0, x2: x1, stroke: "#777", "stroke-width": 3 });
    const curves = s("g", { "clip-path": `url(#${clip})`, fill: "none", "stroke-width": 2 });
    const marks = s("g", { "clip-path": `url(#${clip})` });
    const trained = s("line", { x1: chart.sx(Math.log10(state.train_size)), x2: chart.sx(Math.log10(state.train_size)),
      y1: y0, y2: y1, stroke: "gray", "stroke-dasharray": "6 4" });
    const current = s("line", { y1: y0, y2: y1, stroke: "#d35400", "stroke-width": 2 });
    const axes = s("g");
    const ticks = [2, 5, 10, 20, 50, 100, 200, 500];
    axes.append(
      s("line", { x1: x0, y1: y0, x2: x1, y2: y0, stroke: "currentColor" }),
      s("line", { x1: x0, y1: y0, x2: x0, y2: y1, stroke: "currentColor" }),
      ...ticks.map((t) => s("text", { x: chart.sx(Math.log10(t)), y: y0 + 15, "text-anchor": "middle" }, String(t))),
      ...[0, 1, 2, 3, 4].filter((y) => y <= top)
        .map((y) => s("text", { x: x0 - 5, y: chart.sy(y) + 4, "text-anchor": "end" }, String(y))),
      s("text", { x: (x0 + x1) / 2, y: chart.height - 4, "text-anchor": "middle" }, "population size N (log scale)"),
      s("text", { x: 12, y: (y0 + y1) / 2, "text-anchor": "middle", transform: `rotate(-90 12 ${(y0 + y1) / 2})` }, "estimate σ̂"),
      s("text", { x: chart.sx(Math.log10(state.train_size)) + 4, y: y1 + 12, fill: "gray" }, `trained at N = ${state.train_size}`));
    chart.svg.prepend(s("defs", {}, s("clipPath", { id: clip }, s("rect", { x: x0, y: y1, width: x1 - x0, height: y0 - y1 }))));
    chart.layer.append(band, truth, curves, trained, current, marks, axes);
    band.setAttribute("y", chart.sy(state.train_sigma[1]));
    band.setAttribute("height", chart.sy(state.train_sigma[0]) - chart.sy(state.train_sigma[1]));

    const swatch = (colour, dashed = false) => h("span", { "aria-hidden": "true",
      style: `display:inline-block;width:1.4em;height:0;border-top:3px ${dashed ? "dotted" : "solid"} ${colour};`
        + "vertical-align:middle;margin-right:0.3em" });
    const out = {
      N: readout("N", "N ="), true_sigma: readout("true_sigma", "true σ ="),
      sample_std: readout("sample_std", "sample standard deviation ="),
    };
    const estimates = Object.fromEntries(state.keys.map((key) => [key, readout(`hat_${key}`, `${key}: σ̂ =`)]));
    out.sample_std.prepend(swatch("currentColor", true));
    state.keys.forEach((key) => estimates[key].prepend(swatch(state.colours[key])));

    let drawn = null;  // the points of the draw at the largest N (a smaller N takes its first points)
    const drawCurves = () => {
      const { points } = szPopulation(state.seed, nHi, state.sigma);
      const path = (values) => state.grid
        .map((n, k) => `${k ? "L" : "M"}${chart.sx(Math.log10(n)).toFixed(2)},${chart.sy(values[k]).toFixed(2)}`).join("");
      curves.replaceChildren(
        ...state.keys.map((key) => s("path", { stroke: state.colours[key],
          d: path(state.grid.map((n) => forward(state.models[key], points.slice(0, n)).output[0])) })),
        s("path", { stroke: "currentColor", "stroke-dasharray": "2 4",
          d: path(state.grid.map((n) => szSampleStd(points.slice(0, n)))) }));
      truth.setAttribute("y1", chart.sy(state.sigma));
      truth.setAttribute("y2", chart.sy(state.sigma));
      drawn = points;
    };

    const draw = () => {
      const n = state.n;
      const { centre } = szPopulation(state.seed, 0, state.sigma);
      const points = drawn.slice(0, n);
      dots.replaceChildren(...points.map(([px, py]) =>
        s("circle", { cx: cloud.sx(px).toFixed(2), cy: cloud.sy(py).toFixed(2), r: 2.2 })));
      ring.setAttribute("cx", cloud.sx(centre[0]));
      ring.setAttribute("cy", cloud.sy(centre[1]));
      ring.setAttribute("r", cloud.sx(state.sigma) - cloud.sx(0));
      cloudTitle.textContent = `N = ${n}, σ = ${fmt(state.sigma)}`;
      const x = chart.sx(Math.log10(n));
      current.setAttribute("x1", x);
      current.setAttribute("x2", x);
      marks.replaceChildren();
      for (const key of state.keys) {
        const value = forward(state.models[key], points).output[0];
        estimates[key].set(value);
        marks.append(s("circle", { cx: x, cy: chart.sy(value), r: 4.5, fill: state.colours[key], stroke: "white" }));
      }
      const std = szSampleStd(points);
      out.sample_std.set(std);
      marks.append(s("circle", { cx: x, cy: chart.sy(std), r: 4, fill: "white", stroke: "currentColor", "stroke-width": 2 }));
      out.N.set(n, String(n));
      out.true_sigma.set(state.sigma);
      save();
    };

    const size = slider({ name: "n", label: "population size N", min: nLo, max: nHi, log: true, value: state.n,
      format: (value) => String(Math.round(value)), onInput: (value) => { state.n = Math.round(value); draw(); } });
    const spread = slider({ name: "sigma", label: "spread σ", min: state.sigma_range[0], max: state.sigma_range[1], step: 0.01,
      value: state.sigma, onInput: (value) => { state.sigma = value; drawCurves(); draw(); } });
    const seed = slider({ name: "seed", label: "seed", min: 0, max: 999, step: 1, value: state.seed,
      format: (value) => String(Math.round(value)), onInput: (value) => { state.seed = Math.round(value); drawCurves(); draw(); } });
    node.append(
      h("div", { class: "xp-controls" }, size, spread),
      h("div", { class: "xp-controls" }, seed,
        button("new population", () => { state.seed = (state.seed + 1) % 1000; seed.set(state.seed); drawCurves(); draw(); }),
        button(`N = ${state.train_size}`, () => { state.n = state.train_size; size.set(state.n); draw(); })),
      h("div", { class: "xp-panels" }, cloud.svg, chart.svg),
      h("div", { class: "xp-readouts" }, out.N, out.true_sigma, out.sample_std),
      h("div", { class: "xp-readouts" }, ...Object.values(estimates)),
      h("p", { class: "xp-note" }, `The curves run each model on the first n points of this population for n from ${nLo} to ${nHi}; `
        + `the shaded band is the range of σ the models were trained on.`),
    );
    drawCurves();
    draw();
  },
};
