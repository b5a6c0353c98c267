// Chapter 1: the paper's equivariant layer, eq. (1), Y = tanh((X - 1 α(X)) Wᵀ + b), on a population of
// named 2-D particles stored as the rows of X. The reader drags particles, adds and removes them,
// picks α (sum, mean or max) and shuffles the rows: each output moves with its particle, and a
// shuffle permutes the rows of X and Y alike while α(X), α(Y) and every particle's output stay.
import { button, choice, draggable, fmt, h, mulberry32, plot, root, s } from "./lib.js";

const SL_LETTERS = "ABCDEFGH";
const SL_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
const SL_NAMES = { sum: "sum", mean: "mean", max: "max" };
const SL_STYLE = `
.sl-table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 0.25rem 0; }
.sl-table th, .sl-table td { padding: 0.1rem 0.6rem; text-align: right; }
.sl-table th { font-weight: 600; border-bottom: 1px solid currentColor; }
.sl-table td.sl-name { text-align: center; font-weight: 700; }
.xp svg text.sl-small { font-size: 11px; }
.xp svg text.sl-letter { font-size: 12px; font-weight: 700; fill: white; pointer-events: none; }
`;

// α over the particle axis, feature by feature, as setfuncs' plain aggregations compute it.
function slReduce(name, values) {
  if (name === "max") return Math.max(...values);
  const total = values.reduce((acc, v) => acc + v, 0);
  return name === "mean" ? total / values.length : total;
}

// eq. (1): alpha = α(X), the outputs Y (rows in X's order) and aggregate = α(Y).
function slForward(state) {
  const x = state.particles;
  const alpha = [0, 1].map((j) => slReduce(state.aggregation, x.map((row) => row[j])));
  const y = x.map((row) => state.weight.map((w, o) =>
    Math.tanh(w[0] * (row[0] - alpha[0]) + w[1] * (row[1] - alpha[1]) + state.bias[o])));
  const aggregate = [0, 1].map((j) => slReduce(state.aggregation, y.map((row) => row[j])));
  return { alpha, y, aggregate };
}

// A read-out of a pair of numbers, "label (a, b)": two <output data-readout=name_1|name_2>.
function slPair(name, label) {
  const outs = [1, 2].map((j) => h("output", { "data-readout": `${name}_${j}` }));
  const wrapper = h("span", { class: "xp-readout", "aria-live": "polite" }, `${label} (`, outs[0], ", ", outs[1], ")");
  wrapper.set = (pair) => outs.forEach((out, j) => { out.dataset.value = String(pair[j]); out.textContent = fmt(pair[j]); });
  return wrapper;
}

// A table cell holding one number as a read-out.
function slCell(name, value) {
  return h("td", {}, h("output", { "data-readout": name, "data-value": String(value) }, fmt(value)));
}

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const top = root(el, "an equivariant layer and the aggregates of a population whose rows can be shuffled");
    const doc = el.ownerDocument ?? document;
    if (!doc.getElementById("sl-style")) {
      const style = doc.createElement("style");
      style.id = "sl-style";
      style.textContent = SL_STYLE;
      (doc.head ?? doc).appendChild(style);
    }
    const panel = (label, title) => {
      const area = plot({ width: 330, height: 330, x: [-1, 1], y: [-1, 1], label,
        margin: { left: 36, right: 10, top: 24, bottom: 30 } });
      area.layer.append(s("text", { x: 178, y: 16, "text-anchor": "middle" }, title));
      area.axes({ ticks: 4 });
      return area;
    };
    const input = panel("the population X: draggable particles and their aggregate", "population X, aggregate α(X)");
    const output = panel("the equivariant layer's output for every particle, and the aggregate of the outputs",
      "outputs Y = equivariant(X), α(Y)");
    // the aggregates, above the particles but not in the way of a drag: a diamond (inputs) and a
    // square (outputs), hollow at the panel's edge when they lie off it (the sum can)
    const aggregateMark = (area, name) => {
      const shape = s("rect", { width: 12, height: 12, fill: "currentColor", stroke: "currentColor", "stroke-width": 2 });
      const text = s("text", {}, name);
      const group = s("g", { "pointer-events": "none" }, shape, text);
      area.particles = s("g");
      area.layer.append(area.particles, group);
      return { shape, text };
    };
    const diamond = aggregateMark(input, "α(X)");
    const square = aggregateMark(output, "α(Y)");
    const marks = new Map(); // label -> {handle, letter, row (input), out, outLetter, outRow}

    const make = (label) => {
      const colour = SL_COLOURS[SL_LETTERS.indexOf(label)];
      const circle = () => s("circle", { r: 12, fill: colour, stroke: "white", "stroke-width": 1.5 });
      const letter = () => s("text", { class: "sl-letter", "text-anchor": "middle", dy: "0.35em" }, label);
      const tag = () => s("text", { class: "sl-small" });
      const mark = { handle: circle(), letter: letter(), row: tag(), out: circle(), outLetter: letter(), outRow: tag() };
      input.particles.append(mark.row, mark.handle, mark.letter);
      output.particles.append(mark.outRow, mark.out, mark.outLetter);
      draggable(input, mark.handle, {
        label: `particle ${label}; drag it or use the arrow keys`,
        get: () => state.particles[state.labels.indexOf(label)],
        onMove: ([u, v]) => { state.particles[state.labels.indexOf(label)] = [u, v]; draw(); },
      });
      marks.set(label, mark);
    };

    const place = (area, node, text, tag, [u, v], row) => {
      const cx = area.sx(u), cy = area.sy(v);
      node.setAttribute("cx", cx); node.setAttribute("cy", cy);
      text.setAttribute("x", cx); text.setAttribute("y", cy);
      tag.setAttribute("x", cx + 14); tag.setAttribute("y", cy + 20);
      tag.textContent = `row ${row}`;
    };
    const pin = (area, { shape, text }, [u, v], diamondShape) => {
      const inside = Math.abs(u) <= 1 && Math.abs(v) <= 1;
      const cx = area.sx(Math.max(-1, Math.min(1, u))), cy = area.sy(Math.max(-1, Math.min(1, v)));
      shape.setAttribute("x", cx - 6); shape.setAttribute("y", cy - 6);
      shape.setAttribute("fill", inside ? "currentColor" : "none");
      if (diamondShape) shape.setAttribute("transform", `rotate(45 ${cx} ${cy})`);
      text.setAttribute("x", Math.min(cx + 10, area.width - 40)); text.setAttribute("y", Math.max(cy - 10, 36));
    };

    const alphaOut = slPair("alpha", "α(X) =");
    const aggregateOut = slPair("aggregate", "α(Y) =");
    const namedOut = slPair("named", "particle A's output =");
    const body = h("tbody");
    const table = h("table", { class: "sl-table", "aria-label": "the rows of X and of Y = equivariant(X)" },
      h("thead", {}, h("tr", {}, h("th", {}, "row"), h("th", {}, "particle"), h("th", { colspan: 2 }, "X (input)"),
        h("th", { colspan: 2 }, "Y = equivariant(X)"))), body);
    const status = h("p", { class: "xp-note", "aria-live": "polite" },
      "Drag a particle (or focus it and use the arrow keys); shuffle the rows and watch what changes.");
    const addButton = button("add a particle", () => add());
    const removeButton = button("remove a particle", () => remove());

    const draw = () => {
      const { alpha, y, aggregate } = slForward(state);
      for (const [label, mark] of marks) {
        if (!state.labels.includes(label)) { Object.values(mark).forEach((node) => node.remove()); marks.delete(label); }
      }
      state.labels.forEach((label, i) => {
        if (!marks.has(label)) make(label);
        const mark = marks.get(label);
        place(input, mark.handle, mark.letter, mark.row, state.particles[i], i + 1);
        place(output, mark.out, mark.outLetter, mark.outRow, y[i], i + 1);
      });
      pin(input, diamond, alpha, true);
      pin(output, square, aggregate, false);
      alphaOut.set(alpha);
      aggregateOut.set(aggregate);
      namedOut.set(y[state.labels.indexOf("A")]);
      body.replaceChildren(...state.labels.map((label, i) => h("tr", {},
        h("td", {}, String(i + 1)), h("td", { class: "sl-name", style: `color: ${SL_COLOURS[SL_LETTERS.indexOf(label)]}` }, label),
        slCell(`x_r${i + 1}_1`, state.particles[i][0]), slCell(`x_r${i + 1}_2`, state.particles[i][1]),
        slCell(`out_r${i + 1}_1`, y[i][0]), slCell(`out_r${i + 1}_2`, y[i][1]))));
      addButton.disabled = state.labels.length >= SL_LETTERS.length;
      removeButton.disabled = state.labels.length <= 2;
      model.set("state", structuredClone(state));
      model.save_changes();
    };

    // A new order of the rows (never the same one), drawn from a seed the state counts up.
    const shuffle = () => {
      const n = state.labels.length;
      const random = mulberry32(state.shuffles + 1);
      let order = [...Array(n).keys()];
      do {
        order = [...Array(n).keys()];
        for (let i = n - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [order[i], order[j]] = [order[j], order[i]];
        }
      } while (order.every((k, i) => k === i));
      state.labels = order.map((k) => state.labels[k]);
      state.particles = order.map((k) => state.particles[k]);
      state.shuffles += 1;
      status.textContent = `Rows shuffled: X now stores ${state.labels.join(", ")}. The rows of Y moved with them; ` +
        "α(X), α(Y) and particle A's output did not change.";
      draw();
    };
    const add = () => {
      if (state.labels.length >= SL_LETTERS.length) return;
      const random = mulberry32(1000 + state.added);
      const label = [...SL_LETTERS].find((letter) => !state.labels.includes(letter));
      state.labels.push(label);
      state.particles.push([-0.8 + 1.6 * random(), -0.8 + 1.6 * random()]);
      state.added += 1;
      status.textContent = `Particle ${label} added in row ${state.labels.length}.`;
      draw();
    };
    const remove = () => {
      if (state.labels.length <= 2) return;
      let row = state.labels.length - 1;
      if (state.labels[row] === "A") row -= 1; // A stays: the read-outs follow it
      const [label] = state.labels.splice(row, 1);
      state.particles.splice(row, 1);
      status.textContent = `Particle ${label} removed from row ${row + 1}.`;
      draw();
    };

    top.append(
      h("div", { class: "xp-controls" },
        choice({ name: "aggregation", label: "aggregation α", options: SL_NAMES, value: state.aggregation,
          onInput: (value) => { state.aggregation = value; draw(); } }),
        button("shuffle the rows", shuffle), addButton, removeButton),
      h("div", { class: "xp-panels" }, input.svg, output.svg),
      h("div", { class: "xp-readouts" }, alphaOut, aggregateOut, namedOut),
      table,
      status,
    );
    draw();
  },
};
