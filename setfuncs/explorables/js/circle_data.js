// Chapter 8's explorable, its data: a population drawn from a seed as the experiment draws one (a
// Gaussian mixture drawn anew for the population) and the square view around its circle;
// setfuncs/explorables/circle.py computes both in Python, number for number.
import { mulberry32 } from "./lib.js";

// One standard normal number from two uniforms (Box-Muller, the cosine half):
// sqrt(-2 ln(1 - u1)) cos(2 pi u2).
function circleNormal(uniform) {
  const u1 = uniform();
  const u2 = uniform();
  return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
}

/**
 * `size` particles [x, y] from mulberry32(seed), the mixture of setfuncs/experiments/circle/data.py:
 * K = 1 + floor(max_components u) components, each a mean mean_std (z1, z2), a standard deviation
 * uniform in std_range and a weight -ln(1 - u) (normalised: Dirichlet(1)); each particle picks a
 * component by weight and is mean + std (z1, z2). The first n particles of a larger size are the same.
 */
export function circlePopulation(seed, size, mixture) {
  const uniform = mulberry32(seed);
  const count = 1 + Math.floor(mixture.max_components * uniform());
  const [low, high] = mixture.std_range;
  const components = [];
  let total = 0;
  for (let k = 0; k < count; k++) {
    const mean = [mixture.mean_std * circleNormal(uniform), mixture.mean_std * circleNormal(uniform)];
    const std = low + (high - low) * uniform();
    const weight = -Math.log1p(-uniform());
    total += weight;
    components.push({ mean, std, weight });
  }
  const particles = [];
  for (let i = 0; i < size; i++) {
    let pick = uniform() * total, k = 0;
    while (k < count - 1 && pick >= components[k].weight) {
      pick -= components[k].weight;
      k += 1;
    }
    const { mean, std } = components[k];
    const x = mean[0] + std * circleNormal(uniform);
    const y = mean[1] + std * circleNormal(uniform);
    particles.push([x, y]);
  }
  return particles;
}

// The square view around a circle (centre c, radius r): half-width max(min_half, 1.35 r), in
// steps of a half; the same rule as circle.py's view().
export function circleView(center, radius, minHalf) {
  const half = Math.ceil(2 * Math.max(minHalf, 1.35 * radius)) / 2;
  const cx = Math.round(2 * center[0]) / 2, cy = Math.round(2 * center[1]) / 2;
  return { x: [cx - half, cx + half], y: [cy - half, cy + half] };
}
