// Chapter 6: the attention weights w_{t,i} of a trained learnable aggregation (max/r-sum, max/rpw,
// max/q-sum) on a two-cluster population the reader edits. The forward pass runs here
// (deepset.js) on every change: each particle's area and colour show its weight at the read t
// picked; a red plus marks the target (the small cluster's centroid), a black cross the prediction;
// bars give the total weight on the small cluster at every read.
import { button, choice, draggable, fmt, h, mulberry32, plot, readout, root, s, saver, slider, viridis } from "./lib.js";
import { forward } from "./deepset.js";

const AR_N = 20, AR_SPREAD = 0.3, AR_SMALL = [2, 6];
const AR_LIMITS = { small: [1, 20], large: [1, 40] };
const AR_RING = { small: ["#d35400", 2.5], large: ["#222", 0.8] };

// The chapter's toy task from a seed, as setfuncs.explorables.attention_reads.two_clusters draws it.
export function arTwoClusters(seed) {
  const u = mulberry32(seed);
  const centres = [0, 1].map(() => [4 * u() - 2, 4 * u() - 2]);
  const small = AR_SMALL[0] + Math.floor((AR_SMALL[1] - AR_SMALL[0] + 1) * u());
  const points = [];
  for (let i = 0; i < AR_N; i++) {
    const r = Math.sqrt(-2 * Math.log(1 - u())), theta = 2 * Math.PI * u();
    const c = i < small ? centres[0] : centres[1];
    points.push([c[0] + AR_SPREAD * r * Math.cos(theta), c[1] + AR_SPREAD * r * Math.sin(theta)]);
  }
  return { small: points.slice(0, small), large: points.slice(small) };
}

function arCentroid(points) {
  return [0, 1].map((d) => points.reduce((a, p) => a + p[d], 0) / points.length);
}

function arCross(size, attrs) {
  return s("path", { d: `M${-size},${-size}L${size},${size}M${-size},${size}L${size},${-size}`, fill: "none", ...attrs });
}

function arPlus(size, attrs) {
  return s("path", { d: `M${-size},0L${size},0M0,${-size}L0,${size}`, fill: "none", ...attrs });
}

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const v = state.view;
    const top = root(el, "attention weights of a trained learnable aggregation on a population you edit");
    const save = saver(model, state);

    const area = plot({ width: 420, height: 426, x: [-v, v], y: [-v, v], margin: { left: 36, right: 10, top: 24, bottom: 28 },
      label: "the population: each particle's area and colour show its attention weight at the read shown" });
    const title = s("text", { x: 223, y: 16, "text-anchor": "middle" });
    const dots = s("g");
    const target = arPlus(9, { stroke: "#d62728", "stroke-width": 3 });
    const guess = arCross(7, { stroke: "black", "stroke-width": 3 });
    area.layer.append(title, dots, target, guess);
    area.axes({ ticks: 4 });

    const chart = plot({ width: 280, height: 426, x: [0.4, 4.6], y: [0, 1], margin: { left: 40, right: 10, top: 24, bottom: 62 },
      label: "total weight on the small cluster at each read" });
    const chartTitle = s("text", { x: 155, y: 16, "text-anchor": "middle" }, "weight on the small cluster");
    const columns = s("g");
    const share = s("line", { stroke: "currentColor", "stroke-dasharray": "5 4", "stroke-width": 1.5 });
    const shareKey = s("line", { x1: 44, x2: 74, y1: 416, y2: 416, stroke: "currentColor", "stroke-dasharray": "5 4",
      "stroke-width": 1.5 });
    const shareLabel = s("text", { x: 80, y: 420 });
    chart.layer.append(chartTitle, columns, share, shareKey, shareLabel);
    area.svg.style.flex = "420 1 18rem";
    chart.svg.style.flex = "280 1 12rem";

    const out = {
      prediction_x: readout("prediction_x", "prediction x̂ ="), prediction_y: readout("prediction_y", "ŷ ="),
      target_x: readout("target_x", "target x ="), target_y: readout("target_y", "y ="),
      error: readout("error", "distance ="), weight_small: readout("weight_small", "weight on the small cluster at t ="),
    };
    const note = h("p", { class: "xp-note" });

    let handles = [];
    const rebuild = () => {
      dots.replaceChildren();
      handles = [];
      for (const group of ["small", "large"]) {
        state.population[group].forEach((_, i) => {
          const node = s("circle", { stroke: AR_RING[group][0], "stroke-width": AR_RING[group][1] });
          draggable(area, node, {
            label: `particle ${i + 1} of the ${group} cluster; arrow keys move it`, keyStep: 0.02,
            get: () => state.population[group][i],
            onMove: (point) => { state.population[group][i] = point; draw(); },
          });
          dots.append(node);
          handles.push({ group, i, node });
        });
      }
    };

    const draw = () => {
      const { small, large } = state.population;
      const { output, reads } = forward(state.models[state.model], [...small, ...large]);
      const steps = reads.length, t = Math.min(state.t, steps);
      const w = reads[t - 1];
      const wmax = Math.max(...reads.flat());
      handles.forEach(({ group, i, node }, j) => {
        const [px, py] = state.population[group][i];
        const [r, g, b] = viridis(w[j] / wmax);
        node.setAttribute("cx", area.sx(px));
        node.setAttribute("cy", area.sy(py));
        node.setAttribute("r", 4 + 24 * Math.sqrt(w[j]));
        node.setAttribute("fill", `rgb(${r},${g},${b})`);
        node.setAttribute("aria-valuetext", `at (${fmt(px)}, ${fmt(py)}), weight ${fmt(w[j])}`);
      });
      const [tx, ty] = arCentroid(small);
      const clip = (value) => Math.min(Math.max(value, -v), v);
      target.setAttribute("transform", `translate(${area.sx(clip(tx))},${area.sy(clip(ty))})`);
      guess.setAttribute("transform", `translate(${area.sx(clip(output[0]))},${area.sy(clip(output[1]))})`);
      title.textContent = `${state.labels[state.model]}, read t = ${t} of ${steps}`;

      chart.x[1] = steps + 0.6;
      const y0 = chart.sy(0), left = chart.sx(0.4), right = chart.sx(steps + 0.6);
      columns.replaceChildren(
        s("line", { x1: left, y1: y0, x2: right, y2: y0, stroke: "currentColor" }),
        s("line", { x1: left, y1: y0, x2: left, y2: chart.sy(1), stroke: "currentColor" }),
        ...[0, 0.25, 0.5, 0.75, 1].map((y) => s("text", { x: left - 4, y: chart.sy(y) + 4, "text-anchor": "end" }, String(y))),
        s("text", { x: (left + right) / 2, y: y0 + 32, "text-anchor": "middle" }, "read t"));
      reads.forEach((weights, k) => {
        const onSmall = weights.slice(0, small.length).reduce((a, x) => a + x, 0);
        const x0 = chart.sx(k + 1 - 0.35), x1 = chart.sx(k + 1 + 0.35);
        columns.append(
          s("rect", { x: x0, y: chart.sy(onSmall), width: x1 - x0, height: y0 - chart.sy(onSmall),
            fill: k + 1 === t ? "#1f77b4" : "#9ecae1" }),
          s("text", { x: (x0 + x1) / 2, y: chart.sy(onSmall) - 4, "text-anchor": "middle" }, fmt(onSmall, 2)),
          s("text", { x: (x0 + x1) / 2, y: y0 + 15, "text-anchor": "middle" }, String(k + 1)));
      });
      const fraction = small.length / (small.length + large.length);
      share.setAttribute("x1", left); share.setAttribute("x2", right);
      share.setAttribute("y1", chart.sy(fraction)); share.setAttribute("y2", chart.sy(fraction));
      shareLabel.textContent = `its share of the particles, ${fmt(fraction, 2)}`;

      out.prediction_x.set(output[0]); out.prediction_y.set(output[1]);
      out.target_x.set(tx); out.target_y.set(ty);
      out.error.set(Math.hypot(output[0] - tx, output[1] - ty));
      out.weight_small.set(w.slice(0, small.length).reduce((a, x) => a + x, 0));
      const times = steps === 1 ? "once" : `${steps} times`;
      note.textContent = (state.t > steps ? `This model reads ${times}: read ${steps} is shown. ` : "")
        + `${small.length} particles in the small cluster (orange rings), ${large.length} in the large one.`;
      save();
    };

    const drawSeed = (seed) => {
      state.seed = seed;
      state.population = arTwoClusters(seed);
      state.population_seed = seed;
      rebuild();
      draw();
    };
    if (state.population_seed !== state.seed || !state.population) {
      state.population = arTwoClusters(state.seed);
      state.population_seed = state.seed;
    }

    // a particle added near its cluster's centroid, from a generator of its own (edits are not probed)
    const extra = mulberry32(state.seed + 7919);
    const edit = (group, change) => {
      const list = state.population[group];
      const [lo, hi] = AR_LIMITS[group];
      if (list.length + change < lo || list.length + change > hi) return;
      if (change > 0) {
        const [cx, cy] = arCentroid(list);
        const r = Math.sqrt(-2 * Math.log(1 - extra())), theta = 2 * Math.PI * extra();
        list.push([cx + AR_SPREAD * r * Math.cos(theta), cy + AR_SPREAD * r * Math.sin(theta)]);
      } else {
        list.pop();
      }
      rebuild();
      draw();
    };

    const which = choice({ name: "model", label: "model", value: state.model, options: state.labels,
      onInput: (value) => { state.model = value; draw(); } });
    const read = slider({ name: "t", label: "read t", min: 1, max: state.steps, step: 1, value: state.t,
      format: (value) => String(Math.round(value)), onInput: (value) => { state.t = Math.round(value); draw(); } });
    const seed = slider({ name: "seed", label: "seed", min: 0, max: 999, step: 1, value: state.seed,
      format: (value) => String(Math.round(value)), onInput: (value) => drawSeed(Math.round(value)) });
    top.append(
      h("div", { class: "xp-controls" }, which, read, seed,
        button("new population", () => { const next = (state.seed + 1) % 1000; seed.set(next); drawSeed(next); })),
      h("div", { class: "xp-controls" },
        button("add to small cluster", () => edit("small", 1)), button("remove from small cluster", () => edit("small", -1)),
        button("add to large cluster", () => edit("large", 1)), button("remove from large cluster", () => edit("large", -1))),
      h("div", { class: "xp-panels" }, area.svg, chart.svg),
      h("div", { class: "xp-readouts" }, ...Object.values(out)),
      note,
      h("p", { class: "xp-note" },
        "Drag a particle (or focus it and use the arrow keys) to move it; the model runs again at once."),
    );
    rebuild();
    draw();
  },
};
