// Chapter 5: divide a population into K parts, reduce each part to a partial aggregate, combine
// the partial aggregates, and compare with the aggregate of the whole population. Left: the
// particles in one row per part (drag along a row to change a value, across rows to move a
// particle to another part; arrow keys do the same, Delete removes one) and all of them in a grey
// row. Right: each part's partial aggregate, the combined value and the whole's, on one axis.
import { button, choice, draggable, fmt, h, logSumExp, mulberry32, plot, readout, root, s, slider } from "./lib.js";

const PT_CAPACITY = 24;
const PT_MAX_PARTS = 6;
const PT_RANGE = [-4, 4];
const PT_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];
const ptSum = (xs) => xs.reduce((a, v) => a + v, 0);
const ptMean = (xs) => ptSum(xs) / xs.length;
// The median as setfuncs.Median computes it: h = (n - 1) / 2 between the order statistics around h.
function ptMedian(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = 0.5 * (sorted.length - 1), lo = Math.floor(at), hi = Math.ceil(at);
  return sorted[lo] + (at - lo) * (sorted[hi] - sorted[lo]);
}
// The noisy-or of probabilities σ(x_i), a sum in disguise: 1 - Π(1 - σ(x_i)) = -expm1(-Σ softplus(x_i)).
const ptNoisyOr = (xs) => -Math.expm1(-ptSum(xs.map((v) => Math.log1p(Math.exp(v)))));

// Each aggregation: its label, its partial aggregate of a part, how the non-empty parts' partials
// (with the parts' sizes) are combined, whether that is exact for every division, and whether its
// values lie on the particles' scale (then the partials are marked in the particles' rows too).
export const PT_AGGREGATIONS = {
  sum: { label: "sum", rule: "sum of the parts' sums", exact: true, partial: ptSum, combine: ptSum },
  mean_counts: { label: "mean via (mean, count) pairs", rule: "Σ n_k·mean_k / Σ n_k", exact: true, scale: true, partial: ptMean,
    combine: (a, n) => ptSum(a.map((v, k) => n[k] * v)) / ptSum(n) },
  mean_naive: { label: "mean via the mean of means", rule: "mean of the parts' means", exact: false, scale: true,
    partial: ptMean, combine: ptMean },
  max: { label: "max", rule: "max of the parts' maxima", exact: true, scale: true, partial: (xs) => Math.max(...xs), combine: (a) => Math.max(...a) },
  min: { label: "min", rule: "min of the parts' minima", exact: true, scale: true, partial: (xs) => Math.min(...xs), combine: (a) => Math.min(...a) },
  lse: { label: "LΣE", rule: "LΣE of the parts' LΣEs", exact: true, scale: true, partial: logSumExp, combine: logSumExp },
  median: { label: "median", rule: "median of the parts' medians", exact: false, scale: true, partial: ptMedian, combine: ptMedian },
  noisy_or: { label: "noisy-or of σ(x)", rule: "1 − Π_k (1 − a_k)", exact: true, partial: ptNoisyOr,
    combine: (a) => -Math.expm1(ptSum(a.map((v) => Math.log1p(-v)))) },
};

// About five round ticks between lo and hi.
function ptTicks(lo, hi) {
  const raw = (hi - lo) / 5, base = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * base).find((v) => v >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step) ticks.push(Math.abs(t) < 1e-12 * step ? 0 : t);
  return ticks;
}

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const top = root(el, "a population divided into parts: partial aggregates, combined and whole");
    const HEIGHT = 300, MARGIN = { left: 62, right: 12, top: 10, bottom: 36 };
    const rows = () => state.parts + 2; // the parts, then "combined" (right) and "all"/"whole"
    const rowY = (r) => MARGIN.top + ((r + 0.5) * (HEIGHT - MARGIN.top - MARGIN.bottom)) / rows();
    const partOf = (i) => state.lanes[i] % state.parts;

    // Left: the particles by part.
    const left = plot({ width: 440, height: HEIGHT, x: [PT_RANGE[0] - 0.3, PT_RANGE[1] + 0.3], y: [0, 1], margin: MARGIN,
      label: "the particles on a number line, one row per part, and all of them in the last row" });
    const leftBack = s("g"), leftAll = s("g");
    left.layer.append(leftBack, leftAll);
    const strip = { x: PT_RANGE, y: [0, 1], pointer: (event) => left.pointer(event) };
    const nodes = Array.from({ length: PT_CAPACITY }, (_, i) => {
      const node = s("circle", { r: 8, stroke: "white", "stroke-width": 1.5 });
      node.addEventListener("keydown", (event) => {
        const moves = { ArrowUp: -1, ArrowDown: 1 };
        if (event.key in moves) {
          event.preventDefault(); event.stopImmediatePropagation();
          state.lanes[i] = Math.min(Math.max(partOf(i) + moves[event.key], 0), state.parts - 1);
          draw();
        } else if (event.key === "Delete" || event.key === "Backspace") {
          event.preventDefault(); event.stopImmediatePropagation(); remove(i);
        }
      });
      node.addEventListener("dblclick", () => remove(i));
      left.layer.append(node);
      draggable(strip, node, {
        label: `particle ${i + 1}`,
        get: () => [state.values[i], 1 - (partOf(i) + 0.5) / rows()],
        onMove: ([v, y]) => {
          state.values[i] = v;
          state.lanes[i] = Math.min(Math.max(Math.floor((1 - y) * rows()), 0), state.parts - 1);
          draw();
        },
      });
      return node;
    });

    // The partial aggregates' ticks go over the particles, and let the pointer through to them.
    const leftTop = s("g", { "pointer-events": "none" });
    left.layer.append(leftTop);

    // Right: the partial aggregates, the combined value and the whole's.
    const right = plot({ width: 340, height: HEIGHT, x: [0, 1], y: [0, 1], margin: { ...MARGIN, left: 78 },
      label: "each part's partial aggregate, the combined value and the whole population's aggregate on one axis" });
    // Side by side (scaled alike, never beyond their own size) down to three quarters of their
    // width; on a narrower screen one above the other.
    Object.assign(left.svg.style, { flex: "440 1 330px", maxWidth: "440px" });
    Object.assign(right.svg.style, { flex: "340 1 255px", maxWidth: "340px" });
    const rightLayer = s("g");
    right.layer.append(rightLayer);

    // Read-outs: one per part (hidden when the part is empty or not there), combined, whole, difference.
    const partReadouts = PT_COLOURS.map((colour, k) => {
      const r = readout(`part${k + 1}`, "");
      r.name = h("span", {});
      r.prepend(h("span", { "aria-hidden": "true", style: `color: ${colour}` }, "● "), r.name);
      return r;
    });
    const combinedReadout = readout("combined", "combined =");
    const wholeReadout = readout("whole", "whole population =");
    const differenceReadout = readout("difference", "combined − whole =");
    const verdict = h("p", { class: "xp-note", "aria-live": "polite" });

    const draw = () => {
      const kind = PT_AGGREGATIONS[state.aggregation];
      const size = state.size, K = state.parts;
      const parts = Array.from({ length: K }, () => []);
      for (let i = 0; i < size; i++) parts[partOf(i)].push(state.values[i]);
      const partials = parts.map((part) => (part.length ? kind.partial(part) : null));
      const present = partials.map((v, k) => [v, parts[k].length]).filter(([v]) => v !== null);
      const combined = kind.combine(present.map(([v]) => v), present.map(([, n]) => n));
      const everyone = state.values.slice(0, size);
      const whole = kind.partial(everyone);

      // left: rows, labels, the partials' ticks (on the particles' scale), the particles
      leftBack.replaceChildren();
      leftAll.replaceChildren();
      leftTop.replaceChildren();
      const rowLine = (layer, r, text, [xa, xb], colour = "currentColor") => {
        layer.append(s("line", { x1: xa, x2: xb, y1: rowY(r), y2: rowY(r), stroke: "#ccc" }),
          s("text", { x: xa - 6, y: rowY(r) + 4, "text-anchor": "end", fill: colour }, text));
      };
      const axis = (layer, [xa, xb], ticks, place, label) => {
        const base = HEIGHT - MARGIN.bottom;
        layer.append(s("line", { x1: xa, x2: xb, y1: base, y2: base, stroke: "currentColor" }),
          s("text", { x: (xa + xb) / 2, y: HEIGHT - 3, "text-anchor": "middle" }, label));
        for (const t of ticks) {
          layer.append(s("line", { x1: place(t), x2: place(t), y1: base, y2: base + 4, stroke: "currentColor" }),
            s("text", { x: place(t), y: base + 16, "text-anchor": "middle" }, fmt(t, 2)));
        }
      };
      const leftSpan = [left.sx(left.x[0]), left.sx(left.x[1])];
      const tick = (x, r, colour) => {
        if (x < left.x[0] || x > left.x[1]) return;
        const half = 0.32 * (rowY(1) - rowY(0));
        leftTop.append(s("line", { x1: left.sx(x), x2: left.sx(x), y1: rowY(r) - half, y2: rowY(r) + half, stroke: colour, "stroke-width": 3 }));
      };
      parts.forEach((_, k) => rowLine(leftBack, k, `part ${k + 1}`, leftSpan, PT_COLOURS[k]));
      rowLine(leftBack, K + 1, "all", leftSpan);
      axis(leftBack, leftSpan, [-4, -3, -2, -1, 0, 1, 2, 3, 4], left.sx, "particle value");
      if (kind.scale) {
        partials.forEach((v, k) => v !== null && tick(v, k, PT_COLOURS[k]));
        tick(whole, K + 1, "currentColor");
      }
      for (const v of everyone) leftAll.append(s("circle", { cx: left.sx(v), cy: rowY(K + 1), r: 6, fill: "#777", "fill-opacity": 0.7, stroke: "white" }));
      nodes.forEach((node, i) => {
        node.style.display = i < size ? "" : "none";
        if (i >= size) return;
        node.setAttribute("cx", left.sx(state.values[i]));
        node.setAttribute("cy", rowY(partOf(i)));
        node.setAttribute("fill", PT_COLOURS[partOf(i)]);
        node.setAttribute("aria-label", `particle ${i + 1} = ${fmt(state.values[i])} in part ${partOf(i) + 1}; ` +
          "left and right change its value, up and down its part, Delete removes it");
      });

      // right: one axis for the partials, combined and whole
      const shown = [...present.map(([v]) => v), combined, whole].filter(Number.isFinite);
      let lo = Math.min(...shown), hi = Math.max(...shown);
      if (kind.scale) { lo = Math.min(lo, PT_RANGE[0]); hi = Math.max(hi, PT_RANGE[1]); }
      if (state.aggregation === "noisy_or") { lo = 0; hi = 1; }
      const pad = Math.max(0.08 * (hi - lo), 0.05 * Math.max(Math.abs(hi), Math.abs(lo), 1e-3));
      lo -= pad; hi += pad;
      const x0 = 78, x1 = right.width - MARGIN.right;
      const ax = (v) => x0 + ((v - lo) / (hi - lo)) * (x1 - x0);
      rightLayer.replaceChildren();
      const rightSpan = [x0, x1];
      parts.forEach((_, k) => rowLine(rightLayer, k, `part ${k + 1}`, rightSpan, PT_COLOURS[k]));
      rowLine(rightLayer, K, "combined", rightSpan);
      rowLine(rightLayer, K + 1, "whole", rightSpan);
      axis(rightLayer, rightSpan, ptTicks(lo, hi), ax, kind.label);
      rightLayer.append(s("line", { x1: ax(whole), x2: ax(whole), y1: MARGIN.top, y2: HEIGHT - MARGIN.bottom,
        stroke: "currentColor", "stroke-dasharray": "4 4", opacity: 0.5 }));
      partials.forEach((v, k) => rightLayer.append(v === null
        ? s("text", { x: (x0 + x1) / 2, y: rowY(k) + 4, "text-anchor": "middle", opacity: 0.7 }, "empty")
        : s("circle", { cx: ax(v), cy: rowY(k), r: 7, fill: PT_COLOURS[k] })));
      const c = rowY(K), d = 8;
      rightLayer.append(s("path", { d: `M${ax(combined)},${c - d}L${ax(combined) + d},${c}L${ax(combined)},${c + d}L${ax(combined) - d},${c}Z`, fill: "currentColor" }),
        s("circle", { cx: ax(whole), cy: rowY(K + 1), r: 8, fill: "none", stroke: "currentColor", "stroke-width": 2.5 }));

      // read-outs
      partReadouts.forEach((r, k) => {
        const output = r.querySelector("output");
        const there = k < K && partials[k] !== null;
        r.hidden = !there;
        if (!there) { delete output.dataset.value; output.textContent = ""; return; }
        r.name.textContent = `part ${k + 1} (${parts[k].length}) =`;
        r.set(partials[k]);
      });
      combinedReadout.set(combined);
      wholeReadout.set(whole);
      differenceReadout.set(combined - whole);
      const same = Math.abs(combined - whole) <= 1e-12 * Math.max(1, Math.abs(whole));
      verdict.textContent = `Combined as ${kind.rule}: ` + (kind.exact
        ? "exact, the whole population's value for every division (up to rounding)."
        : (same ? "equal here, but not for every division: move a particle to another part."
          : `not the whole population's value; they differ by ${fmt(combined - whole)}.`)
          + (state.aggregation === "mean_naive" ? " The mean of means is exact when all parts have the same size." : ""));
      sizeSlider.set(size);
      model.set("state", structuredClone(state));
      model.save_changes();
    };
    const remove = (i) => {
      if (state.size <= 1) return;
      const [value] = state.values.splice(i, 1), [lane] = state.lanes.splice(i, 1);
      state.values.push(value); state.lanes.push(lane); // back to the reserve that "add" draws from
      state.size -= 1;
      draw();
    };
    let shuffles = 0;
    const ptChoice = choice({ name: "aggregation", label: "aggregation", value: state.aggregation,
      options: Object.fromEntries(Object.entries(PT_AGGREGATIONS).map(([key, { label }]) => [key, label])),
      onInput: (value) => { state.aggregation = value; draw(); } });
    ptChoice.querySelector("select").style.maxWidth = "100%";
    ptChoice.style.maxWidth = "100%";
    const sizeSlider = slider({ name: "size", label: "particles N", min: 1, max: PT_CAPACITY, step: 1, value: state.size,
      format: (v) => String(Math.round(v)), onInput: (v) => { state.size = Math.round(v); draw(); } });
    top.append(
      h("div", { class: "xp-controls" },
        ptChoice,
        slider({ name: "parts", label: "parts K", min: 1, max: PT_MAX_PARTS, step: 1, value: state.parts,
          format: (v) => String(Math.round(v)), onInput: (v) => { state.parts = Math.round(v); draw(); } }),
        button("equal parts", () => { state.lanes = state.lanes.map((_, i) => i % state.parts); draw(); },
          { title: "deal the particles out in turn: parts of equal size when K divides N" }),
        button("shuffle the parts", () => {
          const random = mulberry32(1000 + shuffles++);
          state.lanes = state.lanes.map(() => Math.floor(random() * PT_MAX_PARTS)); draw();
        })),
      h("div", { class: "xp-controls" }, sizeSlider,
        button("add a particle", () => { state.size = Math.min(state.size + 1, PT_CAPACITY); draw(); }),
        button("remove a particle", () => remove(state.size - 1))),
      h("div", { class: "xp-panels" }, left.svg, right.svg),
      h("div", { class: "xp-readouts" }, ...partReadouts, combinedReadout, wholeReadout, differenceReadout),
      verdict,
      h("p", { class: "xp-note" }, "Drag a particle along its row to change its value, or to another row to move it to " +
        "another part (or focus it: left and right arrows change its value, up and down its part, Delete removes it)."),
    );
    draw();
  },
};
