// Chapter 11: the boxes a trained set-based AIR infers from the reader's population of particles. The
// population is drawn as in digit_particles.js (particles.js, from mulberry32(seed)); air.js runs the
// model's inference network by its means on the canvas and those particles for K steps: each step's
// box z_where = (s, t_x, t_y) and presence probability σ(ℓ_i), and the count's distribution
// q(N = k) with its argmax N, the model's count. The first N boxes are drawn solid, the rest dashed
// (setfuncs/explorables/air_boxes.py computes the same read-outs with torch).
import { airInfer } from "./air.js";
import { button, choice, fmt, h, readout, root, s, saver, slider } from "./lib.js";
import { dpBoxes, dpDots, dpImage, dpPopulation } from "./particles.js";

const AB_SIDE = 320;
// each step's colour (air_boxes.py's STEP_COLOURS, for the still frame)
const AB_STEP_COLOURS = ["#4da6ff", "#ff5c5c", "#c08cff", "#3fe0d0", "#ffd24d"];

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const size = state.size, K = state.model.max_steps;
    const colour = (i) => AB_STEP_COLOURS[i % AB_STEP_COLOURS.length];
    const top = root(el, "the boxes a trained set-based AIR infers from a population of particles");

    // the canvas in pixel units: its true boxes, the population, the model's boxes
    const svg = s("svg", { viewBox: `0 0 ${size} ${size}`, width: AB_SIDE, height: AB_SIDE, role: "img",
      style: `flex: 0 1 ${AB_SIDE}px` });
    const image = s("image", { x: 0, y: 0, width: size, height: size, preserveAspectRatio: "none", style: "image-rendering: pixelated" });
    const truth = s("g", { fill: "none", stroke: "#2ca02c", "stroke-width": size / 200 });
    const dots = s("path", { stroke: "#ff7f0e", "stroke-linecap": "round", fill: "none" });
    const boxes = s("g", { fill: "none" });
    svg.append(image, truth, dots, boxes);
    const images = {};  // the canvases' pictures, made once each

    // q(N = k): a row per count, its bar and its value
    const bars = Array.from({ length: K + 1 }, (_, k) => {
      const fill = h("div", { style: "height: 0.9rem; width: 0; background: #aec7e8" });
      const value = readout(`q${k}`, "");
      value.style.cssText = "display: inline-block; min-width: 3.2em; text-align: right";
      const label = h("span", { style: "white-space: nowrap" }, `N = ${k}`);
      return { fill, value, label, track: h("div", { style: "background: rgba(127,127,127,0.15)" }, fill) };
    });
    const counts = h("div", { role: "group", "aria-label": "the model's count probabilities q(N = k)",
      style: "display: grid; grid-template-columns: max-content minmax(4rem, 1fr) max-content; gap: 0.2rem 0.5rem; " +
        "align-items: center; align-content: start; font-variant-numeric: tabular-nums" },
    h("span", { style: "grid-column: 1 / -1; font-weight: 600" }, "q(N = k), the count's probabilities"),
    ...bars.flatMap((b) => [b.label, b.track, b.value]));

    // the steps: presence probability and z_where of each
    const steps = Array.from({ length: K }, (_, i) => ({
      present: readout(`present${i + 1}`, ""), s: readout(`box${i + 1}_s`, ""),
      x: readout(`box${i + 1}_x`, ""), y: readout(`box${i + 1}_y`, ""),
    }));
    const table = h("table", { style: "border-collapse: collapse; font-variant-numeric: tabular-nums" },
      h("caption", { style: "text-align: left; font-weight: 600" }, "each step: presence σ(ℓ), box scale s, centre (x, y)"),
      h("tr", {}, ...["step", "σ(ℓ)", "s", "x", "y"].map((t) => h("th", { scope: "col", style: "padding: 0 0.4rem" }, t))),
      ...steps.map((step, i) => h("tr", {},
        h("th", { scope: "row", style: "padding: 0 0.4rem; text-align: left; white-space: nowrap" },
          h("span", { style: `color: ${colour(i)}; text-shadow: 0 0 1px #000`, "aria-hidden": "true" }, "\u25a0 "), String(i + 1)),
        ...["present", "s", "x", "y"].map((key) => h("td", { style: "text-align: right; padding: 0 0.4rem" }, step[key])))));
    const count = readout("count", "the model counts N =");
    const caption = h("p", { class: "xp-note" });

    const save = saver(model, state, 300);  // a large state: sent once the reader pauses
    const draw = () => {
      const { canvas, n, particles } = dpPopulation(state);
      const found = airInfer(state.model, canvas.levels.map((v) => v / state.levels), particles);

      image.setAttribute("href", (images[state.canvas] ??= dpImage(canvas.levels, size, state.levels)));
      truth.replaceChildren(...dpBoxes(canvas));
      dots.setAttribute("d", dpDots(particles.map(([x, y]) => [(x + 1) * size / 2, (y + 1) * size / 2])));
      dots.setAttribute("stroke-width", (n > 200 ? 0.45 : 0.9) * size / 50);
      boxes.replaceChildren(...found.boxes.flatMap(([x0, y0, x1, y1], i) => {
        const counted = i < found.count;
        return [
          s("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, stroke: colour(i),
            "stroke-width": (counted ? 2.2 : 1.4) * size / 160, "stroke-opacity": counted ? 1 : 0.8,
            "stroke-dasharray": counted ? null : `${size / 40} ${size / 60}` }),
          s("text", { x: x0 + size / 80, y: y0 + size / 18, "aria-hidden": "true",
            style: `fill: ${colour(i)}; fill-opacity: ${counted ? 1 : 0.8}; font-size: ${size / 16}px; font-weight: ${counted ? 700 : 400}` },
          String(i + 1)),
        ];
      }));

      count.set(found.count, String(found.count));
      bars.forEach(({ fill, value, label }, k) => {
        const q = found.q[k];
        fill.style.width = `${(100 * q).toFixed(2)}%`;
        fill.style.background = k === found.count ? "#1f77b4" : "#aec7e8";
        fill.style.outline = k === found.count ? "1.5px solid currentColor" : "none";
        label.style.fontWeight = k === found.count ? "700" : "400";
        value.set(q, `${(100 * q).toFixed(q < 0.1 ? 1 : 0)}\u00a0%`);
      });
      steps.forEach((step, i) => {
        const [zs, zx, zy] = found.where[i];
        step.present.set(found.present[i], `${(100 * found.present[i]).toFixed(0)}\u00a0%`);
        step.s.set(zs, fmt(zs, 2));
        step.x.set(zx, fmt(zx, 2));
        step.y.set(zy, fmt(zy, 2));
      });
      svg.setAttribute("aria-label", `canvas ${state.canvas + 1} with ${canvas.count} digit${canvas.count === 1 ? "" : "s"}, ` +
        `true boxes in green, ${n} particles in orange, and the model's ${K} boxes, one colour a step: ` +
        found.boxes.map(([x0, y0, x1, y1], i) => `box ${i + 1} ${i < found.count ? "solid" : "dashed"} from ` +
          `(${x0.toFixed(0)}, ${y0.toFixed(0)}) to (${x1.toFixed(0)}, ${y1.toFixed(0)}) pixels`).join("; "));
      caption.textContent = `${state.label ? `${state.label}. ` : ""}${canvas.count} digit${canvas.count === 1 ? "" : "s"} ` +
        `on this canvas (true boxes in green); n = ${n} particle${n === 1 ? "" : "s"}, draw ${state.seed}` +
        (state.trained ? `; the model was trained on populations of ${state.trained}.` : ".");
      save();
    };

    const options = Object.fromEntries(state.canvases.map((c, k) =>
      [String(k), `canvas ${k + 1} (${c.count} digit${c.count === 1 ? "" : "s"})`]));
    top.append(
      h("div", { class: "xp-controls" },
        choice({ name: "canvas", label: "canvas", options, value: state.canvas,
          onInput: (v) => { state.canvas = Number(v); draw(); } }),
        slider({ name: "n", label: "particles n", min: 1, max: state.max_n, log: true, step: 0.002, value: state.n,
          format: (v) => String(Math.round(v)), onInput: (v) => { state.n = Math.round(v); draw(); } }),
        button("new draw", () => { state.seed += 1; draw(); }, { "aria-label": "draw a new population (next seed)" })),
      h("div", { class: "xp-panels", style: "align-items: flex-start" }, svg,
        h("div", { style: "display: flex; flex-direction: column; gap: 0.75rem; flex: 1 1 16rem" }, counts, table)),
      h("div", { class: "xp-readouts" }, count),
      caption,
      h("p", { class: "xp-note" }, "The model runs its inference network by the means, no noise: each step reads the " +
        "particles (and where earlier steps looked), proposes a box and the probability that one more digit is " +
        "present. Solid: the first N boxes, N the most probable count; dashed: the steps after it. Green: the true boxes."),
    );
    draw();
  },
};
