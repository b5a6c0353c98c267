// Chapter 11's populations of particles sampled from a digit canvas read as a density, shared by its
// explorables (digit_particles.js, air_boxes.js): a particle takes three uniforms of mulberry32(seed),
// the first picks a pixel by the inverse of the cumulative (integer) intensities, every pixel alike on
// an empty canvas, the other two place it uniformly inside that pixel, in the frame [-1, 1]² (y down,
// as in the image); setfuncs/explorables/digit_particles.py's sample_population draws the same ones.
// Also the state's chosen population, the canvas as an image, its true boxes and the particles as
// one SVG path.
import { mulberry32, s } from "./lib.js";

// The unnormalised density: the integer intensities, or 1 everywhere on an empty canvas.
export function dpWeights(levels) {
  const total = levels.reduce((a, v) => a + v, 0);
  return total > 0 ? levels : levels.map(() => 1);
}

// n particles [[x, y], ...] of a size x size canvas (row by row), from mulberry32(seed).
export function dpSample(levels, size, n, seed) {
  const weights = dpWeights(levels);
  const cumulative = new Float64Array(weights.length);
  let running = 0;
  weights.forEach((w, k) => { running += w; cumulative[k] = running; });
  const random = mulberry32(seed);
  const particles = [];
  for (let i = 0; i < n; i++) {
    const target = random() * running;
    let lo = 0, hi = cumulative.length - 1; // the first pixel whose cumulative weight exceeds target
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] > target) hi = mid; else lo = mid + 1;
    }
    const row = Math.floor(lo / size), col = lo % size;
    const jx = random(), jy = random();
    particles.push([2 * (col + jx) / size - 1, 2 * (row + jy) / size - 1]);
  }
  return particles;
}

// A grey-scale PNG data URL of the canvas (white ink on black, as the chapter draws it).
export function dpImage(levels, size, scale) {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = size;
  const context = canvas.getContext("2d");
  const image = context.createImageData(size, size);
  levels.forEach((v, i) => {
    const g = Math.round((255 * Math.min(v, scale)) / scale);
    image.data.set([g, g, g, 255], i * 4);
  });
  context.putImageData(image, 0, 0);
  return canvas.toDataURL();
}

// Dots as one path of zero-length round-capped strokes (fast for a thousand particles).
export function dpDots(points) {
  return points.map(([x, y]) => `M${x.toFixed(2)} ${y.toFixed(2)}h0`).join("");
}

// The state's chosen canvas, its population size (Math.round of the slider's n) and the particles
// drawn on it (digit_particles.py's population draws the same).
export function dpPopulation(state) {
  const canvas = state.canvases[state.canvas];
  const n = Math.round(state.n);
  return { canvas, n, particles: dpSample(canvas.levels, state.size, n, state.seed) };
}

// The canvas's true boxes [x0, y0, x1, y1] (pixels) as SVG rectangles.
export function dpBoxes(canvas) {
  return canvas.boxes.map(([x0, y0, x1, y1]) => s("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }));
}
