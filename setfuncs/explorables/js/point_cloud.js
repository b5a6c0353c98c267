// Chapter 10: one point cloud subsampled to n points, turned by an azimuth (about the up axis z) and
// an elevation (about x), drawn in 3-D by a fixed camera, and classified by each trained model in the
// browser: the same subset (the first n points in the order of N mulberry32 keys), the same turn
// x' = R_x(elevation) R_z(azimuth) x and the same standardisation (clip to ±100 mean |x|, then one
// mean and one standard deviation over all 3n coordinates) as setfuncs/explorables/point_cloud.py.
import { forward } from "./deepset.js";
import { choice, fmt, h, mulberry32, readout, root, s, saver, slider } from "./lib.js";

const PC_SIDE = 340;
const PC_BLUES = ["#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"];
// the models' colours (point_cloud.py's MODEL_COLOURS, for the still frame)
const PC_MODEL_COLOURS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b"];

// A cloud of setfuncs.explorables.point_cloud.encode_cloud: base64 int16 q (little-endian), x = q * scale.
function pcDecode({ points, scale, data }) {
  const binary = atob(data);
  const view = new DataView(new ArrayBuffer(binary.length));
  for (let k = 0; k < binary.length; k++) view.setUint8(k, binary.charCodeAt(k));
  return Array.from({ length: points }, (_, i) => [0, 1, 2].map((d) => view.getInt16(2 * (3 * i + d), true) * scale));
}

// The points' order by their keys, `points` uniforms of mulberry32(seed) (a stable sort).
function pcOrder(points, seed) {
  const random = mulberry32(seed);
  const keys = Array.from({ length: points }, () => random());
  return keys.map((_, i) => i).sort((a, b) => keys[a] - keys[b]);
}

// R_x(elevation) R_z(azimuth) p, angles in degrees.
function pcTurn([x, y, z], azimuth, elevation) {
  const a = (azimuth * Math.PI) / 180, e = (elevation * Math.PI) / 180;
  const x1 = Math.cos(a) * x - Math.sin(a) * y, y1 = Math.sin(a) * x + Math.cos(a) * y;
  return [x1, Math.cos(e) * y1 - Math.sin(e) * z, Math.sin(e) * y1 + Math.cos(e) * z];
}

// The package's standardize for one cloud: clip to ±100 mean |x|, then (x - mean) / std over all 3n.
function pcStandardize(cloud) {
  const values = cloud.flat();
  const clip = (100 * values.reduce((a, v) => a + Math.abs(v), 0)) / values.length;
  const z = values.map((v) => Math.min(Math.max(v, -clip), clip));
  const mean = z.reduce((a, v) => a + v, 0) / z.length;
  const std = Math.sqrt(z.reduce((a, v) => a + (v - mean) ** 2, 0) / z.length);
  return cloud.map((_, i) => [0, 1, 2].map((d) => (z[3 * i + d] - mean) / std));
}

function pcSoftmax(logits) {
  const top = Math.max(...logits);
  const e = logits.map((v) => Math.exp(v - top));
  const total = e.reduce((a, v) => a + v, 0);
  return e.map((v) => v / total);
}

// Screen (right, up) and nearness of p seen by the fixed camera (the Python still frame's _camera).
function pcCamera([x, y, z], camera) {
  const a = (camera.azimuth * Math.PI) / 180, e = (camera.elevation * Math.PI) / 180;
  const x1 = Math.cos(a) * x - Math.sin(a) * y, y1 = Math.sin(a) * x + Math.cos(a) * y;
  return [x1, Math.sin(e) * y1 + Math.cos(e) * z, -Math.cos(e) * y1 + Math.sin(e) * z];
}

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const runs = state.models.map((weights, k) => ({ weights, label: state.model_labels[k], k })); // decoded once each
    const clouds = {};
    const cloudOf = (name) => (clouds[name] ??= pcDecode(state.clouds[name]));
    const orders = {};
    const orderOf = (points, seed) => (orders[`${points}:${seed}`] ??= pcOrder(points, seed));
    const top = root(el, "a point cloud subsampled, turned and classified");

    // the cloud, drawn by the camera: all points light grey, the subset in blues by nearness
    const svg = s("svg", { viewBox: `0 0 ${PC_SIDE} ${PC_SIDE}`, width: PC_SIDE, height: PC_SIDE, role: "img",
      "aria-label": "the cloud in 3-D: all its points in light grey, the subset in blue, darker nearer; drag to turn it",
      style: "cursor: grab" });
    const background = s("rect", { width: PC_SIDE, height: PC_SIDE, fill: "transparent" });
    const fullDots = s("path", { stroke: "#c8c8c8", "stroke-width": 2, "stroke-linecap": "round", fill: "none" });
    const subsetLayers = PC_BLUES.map((colour) => s("path", { stroke: colour, "stroke-width": 5.5, "stroke-linecap": "round", fill: "none" }));
    const axesLayer = s("g", { "font-size": 13 });
    svg.append(background, fullDots, ...subsetLayers, axesLayer);

    // every model's class probabilities in one grid: a row per class (its name, a thin bar per model in
    // the model's colour, the predicted class's bar outlined, and the values in the same order)
    for (const run of runs) run.colour = PC_MODEL_COLOURS[run.k % PC_MODEL_COLOURS.length];
    const bars = state.classes.map((name) => {
      const fills = runs.map((run) => h("div", { style: `height: 0.3rem; width: 0; margin: 1px 0; background: ${run.colour}` }));
      const track = h("div", { style: "background: rgba(127,127,127,0.15); padding: 1px 0" }, ...fills);
      const values = runs.map((run) => {
        const value = readout(`p${run.k}_${name}`, "");
        value.style.cssText = `display: inline-block; min-width: 3.2em; font-size: 0.9em; text-align: right; color: ${run.colour}`;
        return value;
      });
      const label = h("span", { style: "white-space: nowrap" }, name);
      return { name, fills, values, label, track, shown: h("span", { style: "white-space: nowrap" }, ...values) };
    });
    for (const run of runs) run.predicted = readout(`predicted${run.k}`, `${run.label} predicts:`);
    const key = h("div", { style: "grid-column: 1 / -1; display: flex; flex-wrap: wrap; gap: 0 1rem" },
      ...runs.map((run) => h("span", { style: `font-weight: 600; color: ${run.colour}` }, `\u25a0 ${run.label}`)));
    const panel = h("div", { role: "group", "aria-label": "class probabilities of each model",
      style: "display: grid; grid-template-columns: max-content minmax(2rem, 1fr) max-content; gap: 0.1rem 0.4rem; " +
        "align-items: center; align-content: start; font-variant-numeric: tabular-nums; flex: 1 1 18rem" },
    key, ...bars.flatMap((b) => [b.label, b.track, b.shown]));
    const caption = h("p", { class: "xp-note" });

    let pending = false;
    const save = saver(model, state, 300);  // a large state: sent once the reader pauses
    const draw = () => {
      pending = false;
      const cloud = cloudOf(state.shape);
      const n = Math.round(state.n);
      const order = orderOf(cloud.length, state.seed);
      const subset = order.slice(0, n).map((i) => pcTurn(cloud[i], state.azimuth, state.elevation));

      // drawing
      const radius = 1.05 * Math.max(...cloud.map((p) => Math.hypot(...p)));
      const scale = (PC_SIDE / 2 - 12) / radius;
      const toScreen = ([r, u]) => [PC_SIDE / 2 + scale * r, PC_SIDE / 2 - scale * u];
      const path = (points) => points.map((p) => { const [a, b] = toScreen(p); return `M${a.toFixed(1)} ${b.toFixed(1)}h0`; }).join("");
      fullDots.setAttribute("d", path(cloud.map((p) => pcCamera(pcTurn(p, state.azimuth, state.elevation), state.camera))));
      const seen = subset.map((p) => pcCamera(p, state.camera));
      const bins = PC_BLUES.map(() => []);
      for (const p of seen) {
        const t = (p[2] / radius + 1) / 2; // nearness in [0, 1]
        bins[Math.min(PC_BLUES.length - 1, Math.max(0, Math.floor(t * PC_BLUES.length)))].push(p);
      }
      subsetLayers.forEach((layer, k) => {
        layer.setAttribute("d", path(bins[k]));
        layer.setAttribute("stroke-width", n > 300 ? 4 : 5.5);
      });
      const [ox, oy] = [34, PC_SIDE - 34];
      axesLayer.replaceChildren(...[["x", [1, 0, 0]], ["y", [0, 1, 0]], ["z", [0, 0, 1]]].flatMap(([name, axis]) => {
        const [r, u] = pcCamera(axis, state.camera);
        const [ex, ey] = [ox + 24 * r, oy - 24 * u];
        return [s("line", { x1: ox, y1: oy, x2: ex, y2: ey, stroke: "currentColor", "stroke-width": 1.5 }),
          s("text", { x: ox + 33 * r - 4, y: oy - 33 * u + 4 }, name)];
      }));

      // what the models see, and what each says
      const input = pcStandardize(subset);
      for (const run of runs) {
        const probabilities = pcSoftmax(forward(run.weights, input).output);
        const best = probabilities.indexOf(Math.max(...probabilities));
        bars.forEach(({ fills, values }, c) => {
          const p = probabilities[c];
          fills[run.k].style.width = `${(100 * p).toFixed(2)}%`;
          fills[run.k].style.outline = c === best ? "1.5px solid currentColor" : "none";
          values[run.k].set(p, `${(100 * p).toFixed(p < 0.1 ? 1 : 0)}\u00a0%`);
        });
        run.predicted.set(best, state.classes[best]);
      }
      for (const { name, label } of bars) {
        label.style.fontWeight = name === state.shape ? "700" : "400";
        label.textContent = name === state.shape ? `${name} (true)` : name;
      }
      caption.textContent = `${n} of the ${cloud.length.toLocaleString("en")} points of this '${state.shape}' cloud${state.label ? ` (${state.label})` : ""}, ` +
        `turned ${fmt(state.azimuth)}° about z and ${fmt(state.elevation)}° about x, draw ${state.seed}` +
        (state.trained_points ? `; the models were trained on clouds of ${state.trained_points} points, every heading about z, never tipped over.` : ".");
      save();
    };
    const redraw = () => { if (!pending) { pending = true; requestAnimationFrame(draw); } };

    const points = cloudOf(state.shape).length;
    const count = slider({ name: "n", label: "points n", min: 1, max: points, log: true, step: 0.002, value: state.n,
      format: (v) => String(Math.round(v)), onInput: (v) => { state.n = Math.round(v); draw(); } });
    const azimuth = slider({ name: "azimuth", label: "azimuth (about z, °)", min: -180, max: 180, step: 0.5, value: state.azimuth,
      format: (v) => fmt(v), onInput: (v) => { state.azimuth = v; draw(); } });
    const elevation = slider({ name: "elevation", label: "elevation (about x, °)", min: -90, max: 90, step: 0.5, value: state.elevation,
      format: (v) => fmt(v), onInput: (v) => { state.elevation = v; draw(); } });
    const shapes = Object.fromEntries(state.classes.map((name) => [name, name]));

    // drag the cloud to turn it: across for the azimuth, up and down for the elevation
    svg.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      svg.setPointerCapture(event.pointerId);
      let [x0, y0] = [event.clientX, event.clientY];
      const move = (e) => {
        const wrap = (v) => ((((v + 180) % 360) + 360) % 360) - 180;
        state.azimuth = Math.round(2 * wrap(state.azimuth + 0.6 * (e.clientX - x0))) / 2;
        state.elevation = Math.round(2 * Math.min(90, Math.max(-90, state.elevation - 0.6 * (e.clientY - y0)))) / 2;
        [x0, y0] = [e.clientX, e.clientY];
        azimuth.set(state.azimuth);
        elevation.set(state.elevation);
        redraw();
      };
      const up = () => { svg.removeEventListener("pointermove", move); svg.removeEventListener("pointerup", up); };
      svg.addEventListener("pointermove", move);
      svg.addEventListener("pointerup", up);
    });

    top.append(
      h("div", { class: "xp-controls" },
        choice({ name: "shape", label: "cloud", options: shapes, value: state.shape, onInput: (v) => { state.shape = v; draw(); } }),
        count,
        h("button", { type: "button", class: "xp-button", "aria-label": "draw another subset (next seed)",
          onclick: () => { state.seed += 1; draw(); } }, "new draw")),
      h("div", { class: "xp-controls" }, azimuth, elevation),
      h("div", { class: "xp-panels", style: "align-items: flex-start" }, svg, panel),
      h("div", { class: "xp-readouts" }, ...runs.map((run) => run.predicted)),
      caption,
      h("p", { class: "xp-note" }, "Drag the cloud to turn it. Grey: all the cloud's points; blue: the n the models read " +
        "(darker nearer); outlined bar: the class a model predicts." +
        (state.left_out?.length ? ` Left out to keep the page light: the ${state.left_out.join(", ")} model${state.left_out.length > 1 ? "s" : ""}.` : "")),
    );
    draw();
  },
};
