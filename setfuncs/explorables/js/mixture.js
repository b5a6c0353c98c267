// Chapter 9: the weights of a two-component Gaussian mixture, read off a population by EM and by
// the chapter's trained Deep Sets. The reader drags the two means, sets the first component's
// weight, the population size N and a seed; the page draws the population (mulberry32, Box-Muller),
// runs the repository's EM on it (mixture_math.js, a port of setfuncs/experiments/mixture/em.py)
// and every model's forward pass (deepset.js), whose two outputs are a Beta distribution over the
// smaller weight w: its density is drawn, its mean a / (a + b) is the model's estimate.
import { button, draggable, fmt, h, plot, readout, root, s, saver, slider } from "./lib.js";
import { forward } from "./deepset.js";
import { mxBeta, mxBetaDensity, mxEllipse, mxFitGmm, mxPopulation } from "./mixture_math.js";

const MX_RED = "#d62728";
const MX_BLUE = "#1f77b4";

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const top = root(el, "a population from a two-component mixture, and the smaller weight EM and each model read off it");
    const E = state.extent;
    const [axisLow, axisHigh] = state.axis;

    // ---- the plane: particles, the true components (2 sigma circles), EM's components (2 sigma ellipses)
    const plane = plot({ width: 360, height: 360, x: [-E, E], y: [-E, E], margin: { left: 34, right: 8, top: 24, bottom: 30 },
      label: "the population in the plane, with the two means and EM's fitted components" });
    const title = s("text", { x: 197, y: 15, "text-anchor": "middle" });
    const particles = s("g");
    const truth = s("g");
    const fitted = s("g");
    const handles = [0, 1].map((k) => {
      const node = s("g", {},
        s("circle", { r: 12, fill: "white", "fill-opacity": 0.55, stroke: "black", "stroke-width": 1.5 }),
        s("path", { d: "M -8 0 H 8 M 0 -8 V 8", stroke: "black", "stroke-width": 2.5 }));
      return node;
    });
    // particles and circles outside the plane's square are clipped at its edges (an id per page instance)
    const clipId = `mx-clip-${Math.random().toString(36).slice(2)}`;
    const [clipLeft, clipTop] = [plane.sx(-E), plane.sy(E)];
    const clipped = s("g", { "clip-path": `url(#${clipId})` }, truth, particles, fitted);
    plane.layer.append(s("defs", {}, s("clipPath", { id: clipId }, s("rect", { x: clipLeft, y: clipTop,
      width: plane.sx(E) - clipLeft, height: plane.sy(-E) - clipTop }))), title, clipped, ...handles);
    plane.axes({ ticks: 6 });

    // ---- the estimates of the smaller weight, one row each
    const rowNames = ["share in population", "EM", ...state.models.map((m) => m.name)];
    const rowHeight = 38;
    const estimates = plot({ width: 440, height: 60 + rowHeight * rowNames.length, x: [axisLow, axisHigh],
      y: [-0.6, rowNames.length - 0.1], margin: { left: 160, right: 12, top: 24, bottom: 34 },
      label: "estimates of the smaller weight w: the share of particles, EM, and each model's Beta density with its mean" });
    const rowY = (r) => rowNames.length - 1 - r; // the first row on top
    const estimateTitle = s("text", { x: 294, y: 15, "text-anchor": "middle" });
    const ridges = s("g");
    const marks = s("g");
    const truthLine = s("line", { stroke: MX_RED, "stroke-width": 2, "stroke-dasharray": "6 4" });
    const frame = s("g");
    const { sx, sy } = estimates;
    frame.append(s("line", { x1: sx(axisLow), y1: sy(-0.6), x2: sx(axisHigh), y2: sy(-0.6), stroke: "currentColor" }));
    for (let k = 0; k <= 6; k++) {
      const v = axisLow + ((axisHigh - axisLow) * k) / 6;
      frame.append(s("line", { x1: sx(v), y1: sy(-0.6), x2: sx(v), y2: sy(-0.6) + 5, stroke: "currentColor" }),
        s("text", { x: sx(v), y: sy(-0.6) + 18, "text-anchor": "middle" }, fmt(v, 2)));
    }
    frame.append(s("text", { x: (sx(axisLow) + sx(axisHigh)) / 2, y: estimates.height - 3, "text-anchor": "middle" },
      "smaller weight w"));
    rowNames.forEach((name, r) => {
      frame.append(s("line", { x1: sx(axisLow), y1: sy(rowY(r)), x2: sx(axisHigh), y2: sy(rowY(r)),
        stroke: "currentColor", "stroke-opacity": 0.15 }),
      s("text", { x: sx(axisLow) - 6, y: sy(rowY(r)) + 4, "text-anchor": "end" }, name));
    });
    estimates.layer.append(estimateTitle, frame, ridges, truthLine, marks);

    // ---- read-outs
    const shown = {
      true_w: readout("true_w", "true smaller weight w ="),
      fraction: readout("fraction", "share of particles from the smaller component ="),
      em_w: readout("em_w", "EM's ŵ ="),
      em_iterations: readout("em_iterations", "EM iterations:"),
    };
    const modelReadouts = state.models.map((m, k) => readout(`model_${k}`, `${m.name}: ŵ =`));

    const save = saver(model, state);  // its models are large

    const draw = () => {
      const n = Math.round(state.n);
      const w1 = state.weight, smallerSecond = w1 > 0.5;
      const { x, second } = mxPopulation(state.seed, n, w1, state.means, state.std);
      const fit = mxFitGmm(x);
      const w = Math.min(w1, 1 - w1);
      let fromSmaller = 0;
      particles.replaceChildren(...x.map((p, i) => {
        const red = second[i] === smallerSecond;
        if (red) fromSmaller += 1;
        return s("circle", { cx: plane.sx(p[0]), cy: plane.sy(p[1]), r: 2.6, fill: red ? MX_RED : MX_BLUE, "fill-opacity": 0.75 });
      }));
      truth.replaceChildren(...state.means.map((mean, k) => s("circle", { cx: plane.sx(mean[0]), cy: plane.sy(mean[1]),
        r: plane.sx(2 * state.std) - plane.sx(0), fill: "none", stroke: (k === 1) === smallerSecond ? MX_RED : MX_BLUE,
        "stroke-width": 1.2 })));
      const scale = plane.sx(1) - plane.sx(0);
      fitted.replaceChildren(...fit.means.map((mean, k) => {
        const { rx, ry, angle } = mxEllipse(fit.covariances[k], 2);
        const cx = plane.sx(mean[0]), cy = plane.sy(mean[1]);
        return s("ellipse", { cx, cy, rx: rx * scale, ry: ry * scale, transform: `rotate(${-angle} ${cx} ${cy})`,
          fill: "none", stroke: "#595959", "stroke-width": 1.5, "stroke-dasharray": "5 4" });
      }));
      handles.forEach((node, k) => node.setAttribute("transform",
        `translate(${plane.sx(state.means[k][0])} ${plane.sy(state.means[k][1])})`));
      title.textContent = `N = ${n}, weights ${fmt(w1)} and ${fmt(1 - w1)}, seed ${state.seed}`;

      const share = fromSmaller / n, emW = Math.min(fit.weights[0], fit.weights[1]);
      const betas = state.models.map((m) => mxBeta(forward(m.model, x).output));
      ridges.replaceChildren();
      marks.replaceChildren();
      const mark = (r, value, colour) => {
        const clipped = value > axisHigh;
        marks.append(s("circle", { cx: sx(Math.min(value, axisHigh)), cy: sy(rowY(r)), r: 6, fill: clipped ? "white" : colour,
          stroke: colour, "stroke-width": 2 }));
      };
      const grid = Array.from({ length: 199 }, (_, i) => axisLow + ((i + 1) * (axisHigh - axisLow)) / 200);
      betas.forEach(({ a, b }, k) => {
        const density = grid.map((t) => mxBetaDensity(t, a, b));
        const most = Math.max(...density.filter(Number.isFinite), 1e-12);
        const base = sy(rowY(k + 2)), lift = 0.8 * (sy(0) - sy(1));
        const points = grid.map((t, i) => `${sx(t).toFixed(1)},${(base - lift * Math.min(density[i] / most, 1)).toFixed(1)}`);
        ridges.append(s("path", { d: `M ${sx(grid[0])},${base} L ${points.join(" L ")} L ${sx(grid[grid.length - 1])},${base} Z`,
          fill: "#9ecae1", "fill-opacity": 0.8, stroke: "#3182bd", "stroke-width": 1 }));
      });
      mark(0, share, "#595959");
      mark(1, emW, "#595959");
      betas.forEach(({ mean }, k) => mark(k + 2, mean, "black"));
      Object.entries({ x1: sx(w), x2: sx(w), y1: sy(rowNames.length - 0.1), y2: sy(-0.6) })
        .forEach(([key, value]) => truthLine.setAttribute(key, value));
      estimateTitle.textContent = `true w = ${fmt(w)} (red dashes); dots: estimates`;

      shown.true_w.set(w);
      shown.fraction.set(share);
      shown.em_w.set(emW);
      shown.em_iterations.set(fit.iterations, String(fit.iterations));
      betas.forEach(({ mean }, k) => modelReadouts[k].set(mean));
      save();
    };

    handles.forEach((node, k) => draggable(plane, node, {
      label: `mean of component ${k + 1}; arrow keys move it`,
      get: () => state.means[k],
      onMove: (point) => { state.means[k] = point; draw(); },
    }));
    const [sizeLow, sizeHigh] = state.sizes;
    const [weightLow, weightHigh, weightStep] = state.weights;
    const weight = slider({ name: "weight", label: "weight w₁ of component 1", min: weightLow, max: weightHigh,
      step: weightStep, value: state.weight, onInput: (value) => { state.weight = value; draw(); } });
    const size = slider({ name: "n", label: "population size N", min: sizeLow, max: sizeHigh, log: true, value: state.n,
      step: 0.01, format: (value) => String(Math.round(value)), onInput: (value) => { state.n = value; draw(); } });
    // steps of 0.01 in log10 N (2.3 %) from 0.7 (N = 5.01, shown as 5) to log10 1000 = 3 exactly, so
    // both ends are reachable (a range input only takes min + k step)
    size.querySelector("input").setAttribute("min", String(Math.round(100 * Math.log10(sizeLow)) / 100));
    size.set(state.n);
    const seed = slider({ name: "seed", label: "seed", min: 0, max: 999, step: 1, value: state.seed,
      format: (value) => String(Math.round(value)), onInput: (value) => { state.seed = Math.round(value); draw(); } });
    const newPopulation = button("new population", () => {
      state.seed = (state.seed + 1) % 1000;
      seed.set(state.seed);
      draw();
    });
    const opposite = button("means as in training (μ₂ = −μ₁ on the unit circle)", () => {
      const [a, b] = state.means[0];
      const angle = a === 0 && b === 0 ? 0 : Math.atan2(b, a);
      state.means = [[Math.cos(angle), Math.sin(angle)], [-Math.cos(angle), -Math.sin(angle)]];
      draw();
    });
    const [trainLow, trainHigh] = state.train_sizes;
    const [wLow, wHigh] = state.train_weights;
    top.append(
      h("div", { class: "xp-controls" }, weight, size),
      h("div", { class: "xp-controls" }, seed, newPopulation, opposite),
      h("div", { class: "xp-panels" }, plane.svg, estimates.svg),
      h("div", { class: "xp-readouts" }, ...Object.values(shown)),
      h("div", { class: "xp-readouts" }, ...modelReadouts),
      h("p", { class: "xp-note" }, `Drag the two crosses (or focus one and use the arrow keys) to move the means. Red `
        + `particles come from the smaller component, blue from the larger (the models and EM see them uncoloured); `
        + `circles: the true components (2σ, σ = ${state.std}); grey dashed ellipses: the components EM fitted (2σ). `
        + `The models were trained on means μ₂ = −μ₁ on the unit circle, w from ${wLow} to ${wHigh} and N from `
        + `${trainLow} to ${trainHigh}: elsewhere they answer questions they never saw.`),
    );
    draw();
  },
};
