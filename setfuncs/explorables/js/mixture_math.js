// Chapter 9's numbers, computed in the browser (and in node, for tests/test_explorable_mixture.py):
// a population drawn from a two-component Gaussian mixture with mulberry32, the repository's EM
// (setfuncs/experiments/mixture/em.py: fit_gmm from initial_parameters, ported step for step) and
// the Beta a model's two outputs describe (setfuncs/experiments/mixture/loss.py). Names start with
// `mx` so that they do not clash with the other files inlined into the same module.
import { mulberry32 } from "./lib.js";

// em.py's constants: scikit-learn's GaussianMixture defaults, and the 2-means iterations.
export const MX_TOL = 1e-3;
export const MX_REG_COVAR = 1e-6;
export const MX_MAX_ITER = 100;
const MX_KMEANS_ITER = 30;
const MX_EPS = 2.220446049250313e-16; // torch.finfo(torch.float64).eps
// loss.py's EPSILON: added to both softplus outputs.
export const MX_EPSILON = 1e-3;

// N particles of the mixture w1 N(mu1, std^2 I) + (1 - w1) N(mu2, std^2 I), from mulberry32(seed):
// particle i takes the uniforms c, u, v (3i, 3i + 1, 3i + 2); it belongs to component 2 when
// c >= w1 (as data.py's sample_labelled_particles decides), and its noise is Box-Muller's
// z = sqrt(-2 ln(1 - u)) (cos 2 pi v, sin 2 pi v); x = mu + std z, rounded to float32 (the
// experiment's particles are float32). setfuncs.explorables.mixture.draw_population is the same.
export function mxPopulation(seed, n, weight, means, std) {
  const next = mulberry32(seed);
  const x = [], second = [];
  for (let i = 0; i < n; i++) {
    const c = next(), u = next(), v = next();
    const other = c >= weight;
    const r = Math.sqrt(-2 * Math.log(1 - u)), angle = 2 * Math.PI * v;
    const mu = other ? means[1] : means[0];
    x.push([Math.fround(mu[0] + std * (r * Math.cos(angle))), Math.fround(mu[1] + std * (r * Math.sin(angle)))]);
    second.push(other);
  }
  return { x, second };
}

// em.py's _m_step on one population (coordinates xs, ys; responsibilities r0, r1 of the two
// components): n_k = sum_n r_nk + 10 eps, mu_k = sum_n r_nk x_n / n_k,
// Sigma_k = sum_n r_nk (x_n - mu_k)(x_n - mu_k)^T / n_k + reg I.
function mxMStep(xs, ys, resp, reg) {
  const n = xs.length, nk = [0, 0], means = [], covariances = [];
  for (let k = 0; k < 2; k++) {
    const r = resp[k];
    let total = 0, sx = 0, sy = 0;
    for (let i = 0; i < n; i++) {
      total += r[i];
      sx += r[i] * xs[i];
      sy += r[i] * ys[i];
    }
    nk[k] = total + 10 * MX_EPS;
    const mx = sx / nk[k], my = sy / nk[k];
    let c00 = 0, c01 = 0, c11 = 0;
    for (let i = 0; i < n; i++) {
      const dx = xs[i] - mx, dy = ys[i] - my;
      c00 += r[i] * dx * dx;
      c01 += r[i] * dx * dy;
      c11 += r[i] * dy * dy;
    }
    means.push([mx, my]);
    covariances.push([[c00 / nk[k] + reg, c01 / nk[k]], [c01 / nk[k], c11 / nk[k] + reg]]);
  }
  return { nk, means, covariances };
}

// em.py's _e_step: log r_nk = log w_k + log N(x_n; mu_k, Sigma_k) - log sum_j (...), the 2 x 2
// inverse written out; returns the lower bound (mean log-likelihood) and the responsibilities
// (written into resp, two arrays of N).
function mxEStep(xs, ys, weights, means, covariances, resp) {
  const n = xs.length, logTwoPi = Math.log(2 * Math.PI);
  const parts = covariances.map((s, k) => {
    const det = s[0][0] * s[1][1] - s[0][1] * s[0][1];
    return { s00: s[0][0], s01: s[0][1], s11: s[1][1], det, logDet: Math.log(det), logW: Math.log(weights[k]),
      mx: means[k][0], my: means[k][1] };
  });
  const logProb = (k, i) => {
    const { s00, s01, s11, det, logDet, logW, mx, my } = parts[k];
    const dx = xs[i] - mx, dy = ys[i] - my;
    const mahalanobis = (s11 * dx * dx - 2 * s01 * dx * dy + s00 * dy * dy) / det;
    return -logTwoPi - 0.5 * logDet - 0.5 * mahalanobis + logW;
  };
  let bound = 0;
  for (let i = 0; i < n; i++) {
    const l0 = logProb(0, i), l1 = logProb(1, i);
    const top = Math.max(l0, l1);
    const logNorm = Number.isFinite(top) ? top + Math.log(Math.exp(l0 - top) + Math.exp(l1 - top)) : top;
    bound += logNorm;
    resp[0][i] = Math.exp(l0 - logNorm);
    resp[1][i] = Math.exp(l1 - logNorm);
  }
  return bound / n;
}

// Particles [[x, y], ...] as two coordinate arrays.
function mxColumns(x) {
  return [Float64Array.from(x, (p) => p[0]), Float64Array.from(x, (p) => p[1])];
}

// em.py's initial_parameters: 2-means seeded by farthest points (the particle farthest from the
// population's mean, then the particle farthest from it; the first of equals), Lloyd iterations
// until no label changes (at most 30; ties go to component 0), then one M-step on the hard labels,
// weights n_k / N.
export function mxInitialParameters(x, reg = MX_REG_COVAR) {
  const n = x.length;
  let cx = 0, cy = 0;
  for (const p of x) { cx += p[0]; cy += p[1]; }
  cx /= n; cy /= n;
  const farthest = (ox, oy) => {
    let best = -1, index = 0;
    x.forEach((p, i) => {
      const d = (p[0] - ox) ** 2 + (p[1] - oy) ** 2;
      if (d > best) { best = d; index = i; }
    });
    return x[index];
  };
  const first = farthest(cx, cy), second = farthest(first[0], first[1]);
  let centers = [first.slice(), second.slice()];
  let labels = new Array(n).fill(false);
  for (let iteration = 0; iteration < MX_KMEANS_ITER; iteration++) {
    const next = x.map((p) => {
      const d0 = (p[0] - centers[0][0]) ** 2 + (p[1] - centers[0][1]) ** 2;
      const d1 = (p[0] - centers[1][0]) ** 2 + (p[1] - centers[1][1]) ** 2;
      return d1 < d0;
    });
    const moving = iteration === 0 || next.some((label, i) => label !== labels[i]);
    labels = next;
    if (!moving) break;
    centers = [false, true].map((side, k) => {
      let count = 0, sx = 0, sy = 0;
      x.forEach((p, i) => { if (labels[i] === side) { count += 1; sx += p[0]; sy += p[1]; } });
      return count > 0 ? [sx / count, sy / count] : centers[k];
    });
  }
  const [xs, ys] = mxColumns(x);
  const hard = [Float64Array.from(labels, (l) => (l ? 0 : 1)), Float64Array.from(labels, (l) => (l ? 1 : 0))];
  const { nk, means, covariances } = mxMStep(xs, ys, hard, reg);
  return { weights: [nk[0] / n, nk[1] / n], means, covariances };
}

// em.py's fit_gmm on one population x (N >= 2 particles [x, y]): from mxInitialParameters, each
// iteration one E-step then one M-step (w_k = n_k / sum n_j); it stops once the lower bound (of the
// parameters before the M-step) changes by less than tol, or after max_iter iterations.
// Returns {weights, means, covariances, lowerBound, iterations, converged}.
export function mxFitGmm(x, { tol = MX_TOL, reg = MX_REG_COVAR, maxIter = MX_MAX_ITER } = {}) {
  if (x.length < 2) throw new Error(`EM for two components needs at least 2 particles, got ${x.length}`);
  let { weights, means, covariances } = mxInitialParameters(x, reg);
  const [xs, ys] = mxColumns(x), resp = [new Float64Array(x.length), new Float64Array(x.length)];
  let lowerBound = -Infinity, converged = false, iterations = 0;
  for (let iteration = 1; iteration <= maxIter; iteration++) {
    const bound = mxEStep(xs, ys, weights, means, covariances, resp);
    const step = mxMStep(xs, ys, resp, reg);
    means = step.means;
    covariances = step.covariances;
    weights = [step.nk[0] / (step.nk[0] + step.nk[1]), step.nk[1] / (step.nk[0] + step.nk[1])];
    converged = Math.abs(bound - lowerBound) < tol;
    lowerBound = bound;
    iterations = iteration;
    if (converged) break;
  }
  return { weights, means, covariances, lowerBound, iterations, converged };
}

// torch.nn.functional.softplus (threshold 20).
function mxSoftplus(v) {
  return v > 20 ? v : Math.log1p(Math.exp(v));
}

// loss.py's beta_concentrations and beta_mean: a = softplus(u) + eps, b = softplus(v) + eps, a / (a + b).
export function mxBeta(output) {
  const a = mxSoftplus(output[0]) + MX_EPSILON, b = mxSoftplus(output[1]) + MX_EPSILON;
  return { a, b, mean: a / (a + b) };
}

// ln Gamma(z), z > 0 (Lanczos, g = 7, nine terms; about 1e-15 relative): for drawing densities only.
const MX_LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
function mxLogGamma(z) {
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - mxLogGamma(1 - z);
  z -= 1;
  let sum = MX_LANCZOS[0];
  for (let k = 1; k < 9; k++) sum += MX_LANCZOS[k] / (z + k);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

// The Beta(a, b) density at t in (0, 1).
export function mxBetaDensity(t, a, b) {
  return Math.exp((a - 1) * Math.log(t) + (b - 1) * Math.log1p(-t)
    + mxLogGamma(a + b) - mxLogGamma(a) - mxLogGamma(b));
}

// The ellipse {mu + r v : v^T Sigma^-1 v = 1} of a 2 x 2 covariance: half-axes (square roots of the
// eigenvalues, times r) and the angle of the first axis in degrees.
export function mxEllipse(covariance, r = 1) {
  const [[a, b], [, d]] = covariance;
  const mid = (a + d) / 2, half = Math.sqrt(((a - d) / 2) ** 2 + b * b);
  const l1 = mid + half, l2 = Math.max(mid - half, 0);
  const angle = (Math.atan2(l1 - a, b || 1e-300) * 180) / Math.PI;
  return { rx: r * Math.sqrt(l1), ry: r * Math.sqrt(l2), angle: b === 0 ? (a >= d ? 0 : 90) : angle };
}
