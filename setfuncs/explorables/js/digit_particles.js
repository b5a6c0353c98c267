// Chapter 11: a population of n particles sampled from a digit canvas read as a density, at any n
// (particles.js draws them from mulberry32(seed), three uniforms a particle, in the frame [-1, 1]², y
// down as in the image). Growing n keeps the particles drawn so far
// (setfuncs/explorables/digit_particles.py draws the same ones).
import { button, choice, fmt, h, plot, readout, root, s, saver, slider } from "./lib.js";
import { dpBoxes, dpDots, dpImage, dpPopulation, dpWeights } from "./particles.js";

const DP_SIDE = 300;

// The share of the density inside the box [x0, y0, x1, y1] (normalised frame), pixels by the
// fraction of their area inside it.
function dpShareInBox(levels, size, [x0, y0, x1, y1]) {
  const weights = dpWeights(levels);
  const px0 = (x0 + 1) * size / 2, px1 = (x1 + 1) * size / 2, py0 = (y0 + 1) * size / 2, py1 = (y1 + 1) * size / 2;
  const overlap = (k, a, b) => Math.max(0, Math.min(k + 1, b) - Math.max(k, a));
  let inside = 0, total = 0;
  for (let r = 0; r < size; r++) {
    const down = overlap(r, py0, py1);
    for (let c = 0; c < size; c++) {
      const w = weights[r * size + c];
      total += w;
      if (down > 0) inside += w * down * overlap(c, px0, px1);
    }
  }
  return inside / total;
}

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const size = state.size;
    const top = root(el, "particles sampled from a digit canvas");

    // left: the canvas in pixel units, with its true boxes, the population, its box and its mean
    const left = s("svg", { viewBox: `0 0 ${size} ${size}`, width: DP_SIDE, height: DP_SIDE, role: "img",
      "aria-label": "the canvas with its particles in orange, the true digit boxes in green, the particles' bounding box dashed and their mean as a cross" });
    const image = s("image", { x: 0, y: 0, width: size, height: size, preserveAspectRatio: "none", style: "image-rendering: pixelated" });
    const truth = s("g", { fill: "none", stroke: "#2ca02c", "stroke-width": size / 200 });
    const leftDots = s("path", { stroke: "#ff7f0e", "stroke-linecap": "round", fill: "none" });
    const leftBox = s("rect", { fill: "none", stroke: "#1f77b4", "stroke-width": size / 150, "stroke-dasharray": `${size / 40} ${size / 60}` });
    const leftMean = s("path", { stroke: "#1f77b4", "stroke-width": size / 90, fill: "none" });
    left.append(image, truth, leftDots, leftBox, leftMean);

    // right: the population alone in the frame the localiser reads, y pointing down
    const area = plot({ width: DP_SIDE, height: DP_SIDE, x: [-1, 1], y: [1, -1], margin: { left: 36, right: 10, top: 10, bottom: 30 },
      label: "the particles alone in the normalised frame from -1 to 1, y pointing down" });
    const frame = s("rect", { x: area.sx(-1), y: area.sy(-1), width: area.sx(1) - area.sx(-1), height: area.sy(1) - area.sy(-1),
      fill: "none", stroke: "currentColor", "stroke-opacity": 0.25 });
    const rightDots = s("path", { stroke: "#ff7f0e", "stroke-linecap": "round", fill: "none" });
    const rightMean = s("path", { stroke: "#1f77b4", "stroke-width": 3, fill: "none" });
    area.layer.append(frame, rightDots, rightMean);
    area.axes({ ticks: 2, xlabel: "x", ylabel: "y (down)" });

    const readouts = {
      mean_x: readout("mean_x", "mean x ="),
      mean_y: readout("mean_y", "mean y ="),
      spread: readout("spread", "spread ="),
      in_box: readout("in_box", "density inside the dashed box ="),
    };
    const caption = h("p", { class: "xp-note" });

    const save = saver(model, state, 300);  // a large state: sent once the reader pauses
    const draw = () => {
      const { canvas, n, particles } = dpPopulation(state);
      image.setAttribute("href", dpImage(canvas.levels, size, state.levels));
      truth.replaceChildren(...dpBoxes(canvas));
      const toPixel = ([x, y]) => [(x + 1) * size / 2, (y + 1) * size / 2];
      const dot = (n > 200 ? 0.55 : 1.1) * size / 50;
      leftDots.setAttribute("d", dpDots(particles.map(toPixel)));
      leftDots.setAttribute("stroke-width", dot);
      rightDots.setAttribute("d", dpDots(particles.map(([x, y]) => [area.sx(x), area.sy(y)])));
      rightDots.setAttribute("stroke-width", n > 200 ? 3 : 5);

      let mx = 0, my = 0;
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (const [x, y] of particles) {
        mx += x; my += y;
        x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
      }
      mx /= n; my /= n;
      let squares = 0;
      for (const [x, y] of particles) squares += (x - mx) ** 2 + (y - my) ** 2;
      const spread = Math.sqrt(squares / n);
      const share = dpShareInBox(canvas.levels, size, [x0, y0, x1, y1]);

      const [bx0, by0] = toPixel([x0, y0]), [bx1, by1] = toPixel([x1, y1]);
      Object.entries({ x: bx0, y: by0, width: bx1 - bx0, height: by1 - by0 }).forEach(([k, v]) => leftBox.setAttribute(k, v));
      const [cx, cy] = toPixel([mx, my]), arm = size / 25;
      leftMean.setAttribute("d", `M${cx - arm} ${cy}H${cx + arm}M${cx} ${cy - arm}V${cy + arm}`);
      const rx = area.sx(mx), ry = area.sy(my);
      rightMean.setAttribute("d", `M${rx - 9} ${ry}H${rx + 9}M${rx} ${ry - 9}V${ry + 9}`);

      readouts.mean_x.set(mx, fmt(mx, 2));
      readouts.mean_y.set(my, fmt(my, 2));
      readouts.spread.set(spread, fmt(spread, 2));
      readouts.in_box.set(share, `${(100 * share).toFixed(0)}\u00a0%`);
      caption.textContent = `${state.label ? `${state.label}. ` : ""}${canvas.count} digit${canvas.count === 1 ? "" : "s"} on this canvas (true boxes in green); ` +
        `n = ${n} particle${n === 1 ? "" : "s"}, draw ${state.seed}` +
        (state.trained ? `; the localisers are trained on ${state.trained} particles and tested on 5 to 1,000.` : ".");
      save();
    };

    const options = Object.fromEntries(state.canvases.map((c, k) =>
      [String(k), `canvas ${k + 1} (${c.count} digit${c.count === 1 ? "" : "s"})`]));
    const count = slider({ name: "n", label: "particles n", min: 1, max: state.max_n, log: true, step: 0.002,
      value: state.n, format: (v) => String(Math.round(v)), onInput: (v) => { state.n = Math.round(v); draw(); } });
    top.append(
      h("div", { class: "xp-controls" },
        choice({ name: "canvas", label: "canvas", options, value: state.canvas,
          onInput: (v) => { state.canvas = Number(v); draw(); } }),
        count,
        button("new draw", () => { state.seed += 1; draw(); }, { "aria-label": "draw a new population (next seed)" })),
      h("div", { class: "xp-panels" }, left, area.svg),
      h("div", { class: "xp-readouts" }, ...Object.values(readouts)),
      caption,
      h("p", { class: "xp-note" }, "Orange: the particles; blue cross: their mean; dashed: their bounding box. " +
        "Growing n keeps the particles already drawn and adds new ones."),
    );
    draw();
  },
};
