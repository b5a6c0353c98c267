// Welzl's algorithm for the minimal enclosing circle of points in the plane, in the browser: the same
// move-to-front form and trivial circles as setfuncs/experiments/circle/welzl.py (read its docstring).
//
//   md(P, R): if |R| = 3 return circle(R); D = circle(R)
//             for i, p in enumerate(P): if p not in D: D = md(P[:i], R + {p})
//             return D
//
// circle(R): |R| = 0 the empty circle (radius -inf), 1 a point, 2 the diametral circle, 3 the
// circumcircle with `a` facing the longest side (collinear triples: the diametral circle of the two
// extremes). "Inside" allows |p - c| <= r (1 + WELZL_RTOL). The points are shifted by the first one
// and visited in an order shuffled by a fixed seed (any order gives the same circle up to rounding).
// No imports; every top-level name starts with `welzl` (the file is inlined with others).

/** Relative tolerance of the containment test, as welzl.py's RTOL. */
export const WELZL_RTOL = 1e-10;
const WELZL_COLLINEAR_TOL = 1e-12;

function welzlTrivial(support) {
  if (support.length === 0) return { c: [0, 0], r: -Infinity, on: [] };
  if (support.length === 1) return { c: support[0].p.slice(), r: 0, on: [support[0].i] };
  if (support.length === 2) {
    const [a, b] = support;
    return { c: [(a.p[0] + b.p[0]) / 2, (a.p[1] + b.p[1]) / 2], r: Math.hypot(a.p[0] - b.p[0], a.p[1] - b.p[1]) / 2,
      on: [a.i, b.i] };
  }
  const side = (u, v) => (u.p[0] - v.p[0]) ** 2 + (u.p[1] - v.p[1]) ** 2;
  const opposite = [0, 1, 2].map((k) => side(support[(k + 1) % 3], support[(k + 2) % 3]));
  const k = opposite.indexOf(Math.max(...opposite));
  const [a, b, c] = [support[k], support[(k + 1) % 3], support[(k + 2) % 3]];   // a faces the longest side
  const u = [b.p[0] - a.p[0], b.p[1] - a.p[1]], v = [c.p[0] - a.p[0], c.p[1] - a.p[1]];
  const uu = u[0] * u[0] + u[1] * u[1], vv = v[0] * v[0] + v[1] * v[1];
  const d = 2 * (u[0] * v[1] - u[1] * v[0]);
  if (Math.abs(d) <= 2 * WELZL_COLLINEAR_TOL * Math.sqrt(uu * vv)) return welzlTrivial([b, c]);
  const offset = [(v[1] * uu - u[1] * vv) / d, (u[0] * vv - v[0] * uu) / d];
  return { c: [a.p[0] + offset[0], a.p[1] + offset[1]], r: Math.hypot(offset[0], offset[1]), on: [a.i, b.i, c.i] };
}

function welzlContains(disk, p) {
  return Math.hypot(p[0] - disk.c[0], p[1] - disk.c[1]) <= disk.r * (1 + WELZL_RTOL);
}

function welzlMd(order, support) {
  let disk = welzlTrivial(support);
  if (support.length === 3) return disk;
  for (let i = 0; i < order.length; i++) {
    if (!welzlContains(disk, order[i].p)) disk = welzlMd(order.slice(0, i), [...support, order[i]]);
  }
  return disk;
}

/**
 * The minimal enclosing circle of `points` (N >= 1 pairs [x, y] of finite numbers).
 * @returns {{center: number[], radius: number, support: number[]}} the circle and the indices of the
 *   two or three points that fix it (its support: on its boundary)
 */
export function welzlCircle(points) {
  if (!Array.isArray(points) || points.length === 0) throw new Error("welzlCircle needs at least one point");
  const origin = points[0];
  const shifted = points.map((p, i) => ({ p: [p[0] - origin[0], p[1] - origin[1]], i }));
  // a fixed shuffle (Fisher-Yates with a small linear congruential generator): the order is random
  // to the algorithm, the same on every call
  let state = 12345;
  for (let i = shifted.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const j = state % (i + 1);
    [shifted[i], shifted[j]] = [shifted[j], shifted[i]];
  }
  const disk = welzlMd(shifted, []);
  return { center: [disk.c[0] + origin[0], disk.c[1] + origin[1]], radius: disk.r, support: disk.on.slice().sort((a, b) => a - b) };
}
