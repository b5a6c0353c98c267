// Chapter 2: the maximum of N numbers in [0, 1] as ρ(Σ φ(x_i)) with φ(x) = (x, x², …, x^L), the power
// sums. ρ (setfuncs.powersums.max_from_power_sums) turns the L sums into the coefficients of the
// polynomial whose L roots have them as power sums (Newton's identities) and returns the largest
// real part of a root. For L ≥ N the roots are the particles and L − N zeros: exact. Below, they are
// other, often complex, numbers. The reader drags particles, adds or removes them, and moves L.
import { button, draggable, fmt, h, mulberry32, plot, readout, root, s, slider } from "./lib.js";

const PS_LARGEST = 12;
const PS_FLOOR = 1e-16;
const PS_BLUE = "#1f77b4";
const PS_ORANGE = "#d35400";
// the complex plane's real axis: the particles live in [0, 1]
const PS_LEFT = -0.5;
const PS_RIGHT = 1.5;

// s_k = Σ_i x_i^k for k = 1..L: the sum of the embeddings φ(x_i) = (x_i, …, x_i^L).
function psSums(xs, latent) {
  return Array.from({ length: latent }, (_, k) => xs.reduce((acc, x) => acc + x ** (k + 1), 0));
}

// Newton's identities: e_0 = 1, k e_k = Σ_{j=1..k} (-1)^(j-1) e_(k-j) s_j (as setfuncs.powersums).
function psElementary(s) {
  const e = [1];
  for (let k = 1; k <= s.length; k++) {
    let total = 0;
    for (let j = 1; j <= k; j++) total += (-1) ** (j - 1) * e[k - j] * s[j - 1];
    e.push(total / k);
  }
  return e;
}

// Complex numbers as [re, im].
const psMul = (a, b) => [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]];
const psDiv = (a, b) => { const d = b[0] * b[0] + b[1] * b[1]; return [(a[0] * b[0] + a[1] * b[1]) / d, (a[1] * b[0] - a[0] * b[1]) / d]; };

// p(z) and p'(z) by Horner's scheme, coefficients highest degree first.
function psHorner(c, z) {
  let p = [c[0], 0], dp = [0, 0];
  for (let k = 1; k < c.length; k++) {
    dp = psMul(dp, z); dp[0] += p[0]; dp[1] += p[1];
    p = psMul(p, z); p[0] += c[k];
  }
  return [p, dp];
}

// Every root of the monic polynomial c (highest degree first) by Aberth–Ehrlich's simultaneous
// iteration; as numpy.roots, trailing zero coefficients are exact roots at zero.
function psRoots(c) {
  let n = c.length - 1;
  const zeros = [];
  while (n > 0 && c[n] === 0) { zeros.push([0, 0]); n -= 1; }
  c = c.slice(0, n + 1);
  if (n === 0) return zeros;
  if (n === 1) return [[-c[1] / c[0], 0], ...zeros];
  const radius = Math.max(...c.slice(1).map((v, k) => Math.abs(v / c[0]) ** (1 / (k + 1)))) * 1.5 || 1;
  const z = Array.from({ length: n }, (_, j) => [radius * Math.cos(2 * Math.PI * j / n + 0.4), radius * Math.sin(2 * Math.PI * j / n + 0.4)]);
  for (let iteration = 0; iteration < 200; iteration++) {
    let moved = 0;
    for (let j = 0; j < n; j++) {
      const [p, dp] = psHorner(c, z[j]);
      if (p[0] === 0 && p[1] === 0) continue;
      let repulsion = [0, 0];
      for (let k = 0; k < n; k++) {
        if (k === j) continue;
        const r = psDiv([1, 0], [z[j][0] - z[k][0], z[j][1] - z[k][1]]);
        if (Number.isFinite(r[0]) && Number.isFinite(r[1])) { repulsion[0] += r[0]; repulsion[1] += r[1]; }
      }
      const pr = psMul(p, repulsion);
      const step = psDiv(p, [dp[0] - pr[0], dp[1] - pr[1]]);
      if (!Number.isFinite(step[0]) || !Number.isFinite(step[1])) continue;
      z[j] = [z[j][0] - step[0], z[j][1] - step[1]];
      moved = Math.max(moved, Math.hypot(...step) / Math.max(1, Math.hypot(...z[j])));
    }
    if (moved < 1e-17) break;
  }
  return [...z, ...zeros];
}

// ρ: the L roots whose power sums are s, and the largest real part among them.
function psDecode(s) {
  const e = psElementary(s);
  const roots = psRoots(e.map((value, k) => (-1) ** k * value));
  return { roots, rho: Math.max(...roots.map((r) => r[0])) };
}

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const top = root(el, "the maximum of a population through its first L power sums");
    const plane = plot({ width: 400, height: 300, x: [PS_LEFT, PS_RIGHT], y: [-1, 1],
      label: "the complex plane: the particles on the real axis and the roots that rho recovers" });
    const errors = plot({ width: 360, height: 300, x: [0.5, PS_LARGEST + 0.5], y: [-16, 1.5],
      margin: { left: 64, right: 10, top: 12, bottom: 40 },
      label: "the error of rho against the true maximum for every latent dimension L, logarithmic" });
    plane.axes({ ticks: 4, xlabel: "real part", ylabel: "imaginary part" });
    const realAxis = s("line", { x1: plane.sx(PS_LEFT), x2: plane.sx(PS_RIGHT), y1: plane.sy(0), y2: plane.sy(0), stroke: "#bbb" });
    const trueLine = s("line", { stroke: PS_BLUE, "stroke-width": 1.5 });
    const rhoLine = s("line", { stroke: PS_ORANGE, "stroke-width": 1.5, "stroke-dasharray": "5 4" });
    const rootLayer = s("g", { "pointer-events": "none" });
    const particleLayer = s("g");
    plane.layer.append(realAxis, trueLine, rhoLine, particleLayer, rootLayer);
    plane.layer.append(s("text", { x: 56, y: 26 }, s("tspan", { fill: PS_BLUE }, "●"), " particles  ",
      s("tspan", { fill: PS_ORANGE }, "×"), " roots ρ recovers"));
    // the error panel: log10 |ρ - max| against L, its axes drawn here (ticks at powers of ten)
    const errorLayer = s("g");
    const nLine = s("line", { stroke: "currentColor", "stroke-dasharray": "4 3" });
    const nText = s("text", { "text-anchor": "start" });
    errors.layer.append(nLine, nText, errorLayer);
    const tickLayer = s("g");
    const edge = (x1, y1, x2, y2) => s("line", { x1, y1, x2, y2, stroke: "currentColor" });
    tickLayer.append(edge(errors.sx(0.5), errors.sy(-16), errors.sx(PS_LARGEST + 0.5), errors.sy(-16)),
      edge(errors.sx(0.5), errors.sy(-16), errors.sx(0.5), errors.sy(1.5)),
      s("text", { x: (errors.sx(0.5) + errors.sx(PS_LARGEST + 0.5)) / 2, y: errors.height - 4, "text-anchor": "middle" }, "latent dimension L"),
      s("text", { x: 12, y: errors.sy(-7), "text-anchor": "middle", transform: `rotate(-90 12 ${errors.sy(-7)})` }, "|ρ(Σφ) − max|"));
    errors.layer.append(tickLayer);
    for (let k = 1; k <= PS_LARGEST; k++) {
      tickLayer.append(s("text", { x: errors.sx(k), y: errors.sy(-16) + 15, "text-anchor": "middle" }, String(k)));
    }
    for (const power of [0, -4, -8, -12, -16]) {
      tickLayer.append(s("text", { x: errors.sx(0.5) - 4, y: errors.sy(power) + 4, "text-anchor": "end" }, `1e${power}`));
    }

    const handles = [];
    const sizeOut = readout("size", "N =");
    const trueOut = readout("true_max", "max =");
    const rhoOut = readout("rho", "ρ(Σφ) =");
    const errorOut = readout("error", "|ρ(Σφ) − max| =");
    const sumsLine = h("div", { class: "xp-readouts" });
    const verdict = h("p", { class: "xp-note", "aria-live": "polite" });
    const addButton = button("add a particle", () => {
      if (state.population.length >= PS_LARGEST) return;
      state.population.push(Number(mulberry32(500 + state.added)().toFixed(3)));
      state.added += 1;
      draw();
    });
    const removeButton = button("remove a particle", () => {
      if (state.population.length <= 1) return;
      state.population.pop();
      draw();
    });
    const latentSlider = slider({ name: "latent", label: "latent dimension L", min: 1, max: PS_LARGEST, step: 1,
      value: state.latent, format: (v) => String(Math.round(v)),
      onInput: (value) => { state.latent = Math.round(value); draw(); } });

    const draw = () => {
      const xs = state.population, n = xs.length, latent = state.latent;
      while (handles.length < n) {
        const i = handles.length;
        const handle = s("circle", { r: 9, fill: PS_BLUE, "fill-opacity": 0.85, stroke: "white", "stroke-width": 1.5 });
        draggable(plane, handle, {
          label: `particle ${i + 1}; drag it along the real axis or use the left and right arrow keys`, keyStep: 0.01,
          get: () => [state.population[i], 0],
          onMove: ([u]) => { state.population[i] = Math.min(1, Math.max(0, u)); draw(); },
        });
        particleLayer.append(handle);
        handles.push(handle);
      }
      while (handles.length > n) handles.pop().remove();
      xs.forEach((x, i) => { handles[i].setAttribute("cx", plane.sx(x)); handles[i].setAttribute("cy", plane.sy(0)); });
      const sums = psSums(xs, latent);
      const { roots, rho } = psDecode(sums);
      const truth = Math.max(...xs);
      // the roots: crosses, and a triangle at the edge with its value for one off the panel
      rootLayer.replaceChildren(...roots.map(([re, im]) => {
        const cx = plane.sx(Math.min(PS_RIGHT, Math.max(PS_LEFT, re))), cy = plane.sy(Math.min(1, Math.max(-1, im)));
        if (re > PS_RIGHT || re < PS_LEFT || Math.abs(im) > 1) {
          const sign = re > PS_RIGHT ? 1 : re < PS_LEFT ? -1 : 0;
          return s("g", {}, s("path", { d: `M ${cx} ${cy - 7} L ${cx + 8 * (sign || 1)} ${cy} L ${cx} ${cy + 7} Z`, fill: PS_ORANGE }),
            s("text", { x: cx - 4 * (sign || 1), y: cy - 10, "text-anchor": sign >= 0 ? "end" : "start" }, `${fmt(re)}${im ? ` ${im > 0 ? "+" : "−"} ${fmt(Math.abs(im))}i` : ""}`));
        }
        return s("path", { d: `M ${cx - 6} ${cy - 6} L ${cx + 6} ${cy + 6} M ${cx - 6} ${cy + 6} L ${cx + 6} ${cy - 6}`,
          stroke: PS_ORANGE, "stroke-width": 2.5 });
      }));
      const vertical = (line, value) => {
        const x = plane.sx(Math.min(PS_RIGHT, Math.max(PS_LEFT, value)));
        Object.entries({ x1: x, x2: x, y1: plane.sy(1), y2: plane.sy(-1) }).forEach(([k, v]) => line.setAttribute(k, v));
      };
      vertical(trueLine, truth);
      vertical(rhoLine, rho);
      // the error at every L for this population, the current L ringed
      const nX = errors.sx(Math.min(n, PS_LARGEST));
      Object.entries({ x1: nX, x2: nX, y1: errors.sy(-16), y2: errors.sy(1.5) }).forEach(([k, v]) => nLine.setAttribute(k, v));
      nText.setAttribute("x", nX + 4); nText.setAttribute("y", errors.sy(-4)); nText.textContent = "L = N";
      const levels = Array.from({ length: PS_LARGEST }, (_, k) =>
        Math.log10(Math.max(Math.abs(psDecode(psSums(xs, k + 1)).rho - truth), PS_FLOOR)));
      const points = levels.map((v, k) => `${errors.sx(k + 1)},${errors.sy(Math.min(v, 1.5))}`).join(" ");
      errorLayer.replaceChildren(s("polyline", { points, fill: "none", stroke: PS_ORANGE, "stroke-width": 1.5 }),
        ...levels.map((v, k) => s("circle", { cx: errors.sx(k + 1), cy: errors.sy(Math.min(v, 1.5)), r: 3.5, fill: PS_ORANGE })),
        s("circle", { cx: errors.sx(latent), cy: errors.sy(Math.min(levels[latent - 1], 1.5)), r: 8, fill: "none",
          stroke: "currentColor", "stroke-width": 1.5 }));
      sizeOut.set(n);
      trueOut.set(truth);
      rhoOut.set(rho);
      errorOut.set(Math.abs(rho - truth));
      sumsLine.replaceChildren(h("span", {}, "Σφ = (s₁, …, s_L) = ("), h("span", {}, ...sums.map((value, k) => {
        const out = readout(`s_${k + 1}`, k === 0 ? "" : ",");
        out.set(value);
        return out;
      }), ")"));
      verdict.textContent = latent >= n
        ? `L = ${latent} ≥ N = ${n}: the roots are the ${n} particles` + (latent > n ? ` and ${latent - n} zeros (the padding)` : "")
          + ", so ρ returns the maximum, up to rounding."
        : `L = ${latent} < N = ${n}: the ${latent} roots with these power sums are not the particles, and ρ misses the maximum.`;
      addButton.disabled = n >= PS_LARGEST;
      removeButton.disabled = n <= 1;
      model.set("state", structuredClone(state));
      model.save_changes();
    };

    top.append(
      h("div", { class: "xp-controls" }, latentSlider,
        button("L = N", () => { state.latent = Math.min(state.population.length, PS_LARGEST); latentSlider.set(state.latent); draw(); }),
        addButton, removeButton),
      h("div", { class: "xp-panels" }, plane.svg, errors.svg),
      h("div", { class: "xp-readouts" }, sizeOut, trueOut, rhoOut, errorOut),
      sumsLine,
      verdict,
      h("p", { class: "xp-note" }, "Drag a blue particle along the real axis (or focus it and use the arrow keys). " +
        "Solid blue line: the true maximum; dashed orange line: ρ(Σφ), the largest real part of a root."),
    );
    draw();
  },
};
