// The inference network of a set-based Attend-Infer-Repeat, run by its means (no noise), in the
// reader's browser (and in node), from the JSON of setfuncs.explorables.air_weights.export_air (its
// docstring has the equations). At every step i = 1..K, from h = c = 0 and z_0 = 0:
//
//   x_j    = [u_j, sin 2πBᵀu_j, cos 2πBᵀu_j, h, clip±3((u_j - t_k)/s_k), 1 (k < i), 0 (k >= i)]
//   r      = DeepSet(X)                        (deepset.js)
//   (h, c) = LSTMCell([r, z_{i-1}], (h, c));   o = W h + b
//   ℓ_i = o_0;  where_i = (s_min + (s_max - s_min) σ(o_1), tanh o_2, tanh o_3)
//   what_i = first half of encoder(glimpse(canvas, where_i));   z_i = [where_i, what_i, 1]
//
// glimpse: torch's affine_grid + grid_sample (bilinear, zeros outside, align_corners=False) at
// u = s v + t for the glimpse's pixel centres v. Then q(N = k) = Π_{i<=k} σ(ℓ_i) (1 - σ(ℓ_{k+1}))
// (no last factor at k = K) and the boxes of where_to_boxes. Maths in float64; torch computes in
// float32 (tests/test_explorable_air_boxes.py compares them). The Deep Set, the layers, σ, the LSTM
// cell and the tensors' decoding are deepset.js's; private helpers here are prefixed `air`.
import { decodeTensors, forward, layers, linear, logSigmoid, lstmCell, sigmoid } from "./deepset.js";

/** The export layout this file reads (setfuncs.explorables.air_weights.AIR_FORMAT). */
export const AIR_FORMAT = 1;

/**
 * The inference by the means of one canvas and its population.
 * @param {object} exported  the JSON of export_air
 * @param {number[]} canvas  canvas_size² intensities, row by row
 * @param {number[][]} particles  n >= 1 particles [x, y] in the frame [-1, 1]² (y down)
 * @returns {{logits: number[], present: number[], where: number[][], what: number[][], q: number[],
 *   count: number, boxes: number[][]}} per step its presence logit ℓ_i and probability σ(ℓ_i), z_where
 *   (s, t_x, t_y), z_what and pixel box (x0, y0, x1, y1); q(N = k) for k = 0..K and its argmax
 */
export function airInfer(exported, canvas, particles) {
  airCheck(exported, canvas, particles);
  const model = airDecoded(exported);
  const K = exported.max_steps, [low, high] = exported.scale_range;
  const fixed = particles.map(([x, y]) => {
    const phases = model.frequencies[0].map((b0, f) => 2 * Math.PI * (x * b0 + y * model.frequencies[1][f]));
    return [x, y, ...phases.map(Math.sin), ...phases.map(Math.cos)];
  });
  let h = new Array(exported.arguments.hidden).fill(0), c = h.slice();
  let previous = new Array(exported.latent_features).fill(0);
  const logits = [], where = [], what = [];
  for (let i = 0; i < K; i++) {
    const x = particles.map((u, j) => [...fixed[j], ...h, ...airExplained(u, where, exported)]);
    const read = forward(exported.deep_set, x).output;
    [h, c] = lstmCell(model.lstm, [...read, ...previous], h, c);
    const out = linear(model.head, h);
    const zWhere = [low + (high - low) * sigmoid(out[1]), Math.tanh(out[2]), Math.tanh(out[3])];
    const encoded = layers(model.encoder, airGlimpse(canvas, zWhere, exported));
    const zWhat = encoded.slice(0, exported.what_features);
    logits.push(out[0]);
    where.push(zWhere);
    what.push(zWhat);
    previous = [...zWhere, ...zWhat, 1];
  }
  const q = airCountProbabilities(logits);
  return { logits, present: logits.map(sigmoid), where, what, q, count: q.indexOf(Math.max(...q)),
    boxes: where.map((z) => airBox(z, exported)) };
}

function airCheck(exported, canvas, particles) {
  if (!exported || exported.format !== AIR_FORMAT) {
    throw new Error(`air.js reads the format-${AIR_FORMAT} JSON of setfuncs.explorables.air_weights.export_air; ` +
      `got format ${exported && exported.format}`);
  }
  const pixels = exported.canvas_size ** 2;
  if (!(Array.isArray(canvas) || ArrayBuffer.isView(canvas)) || canvas.length !== pixels) {
    throw new Error(`canvas must hold ${pixels} intensities (${exported.canvas_size} x ${exported.canvas_size}, ` +
      `row by row), got ${canvas && canvas.length}`);
  }
  if (!Array.isArray(particles) || particles.length === 0) {
    throw new Error("particles must be a non-empty array of [x, y] (a population needs at least one particle)");
  }
}

// Every particle in the frame of every earlier glimpse k: clip((u - t_k) / s_k, ±3) and 1, zeros
// for the steps still to come (s clamped to at least min_scale).
function airExplained([x, y], where, exported) {
  const parts = [];
  for (let k = 0; k < exported.max_previous; k++) {
    if (k < where.length) {
      const [s, tx, ty] = where[k], scale = Math.max(s, exported.min_scale);
      const clip = (v) => Math.min(Math.max(v, -3), 3);
      parts.push(clip((x - tx) / scale), clip((y - ty) / scale), 1);
    } else {
      parts.push(0, 0, 0);
    }
  }
  return parts;
}

// The glimpse_size² glimpse at z_where, row by row: the canvas sampled bilinearly at
// u = s v + t, v the glimpse's pixel centres (2k + 1)/g - 1, pixel index ((u + 1) W - 1) / 2,
// corners outside the canvas zero.
function airGlimpse(canvas, [s, tx, ty], exported) {
  const g = exported.glimpse_size, side = exported.canvas_size, scale = Math.max(s, exported.min_scale);
  const at = (row, col) => (row >= 0 && row < side && col >= 0 && col < side ? canvas[row * side + col] : 0);
  const look = new Array(g * g);
  for (let j = 0; j < g; j++) {
    const iy = ((scale * ((2 * j + 1) / g - 1) + ty + 1) * side - 1) / 2;
    const y0 = Math.floor(iy), fy = iy - y0;
    for (let k = 0; k < g; k++) {
      const ix = ((scale * ((2 * k + 1) / g - 1) + tx + 1) * side - 1) / 2;
      const x0 = Math.floor(ix), fx = ix - x0;
      look[j * g + k] = (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1))
        + fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1));
    }
  }
  return look;
}

// q(N = k), k = 0..K: exp(Σ_{i<k} ln σ(ℓ_i) + ln σ(-ℓ_k) [k < K]).
function airCountProbabilities(logits) {
  let before = 0;
  const q = [];
  for (let k = 0; k <= logits.length; k++) {
    q.push(Math.exp(before + (k < logits.length ? logSigmoid(-logits[k]) : 0)));
    if (k < logits.length) before += logSigmoid(logits[k]);
  }
  return q;
}

// where_to_boxes: (c_x - s H/2, c_y - s H/2, c_x + s H/2, c_y + s H/2), c = (t + 1) H / 2.
function airBox([s, tx, ty], exported) {
  const half = exported.canvas_size / 2, scale = Math.max(s, exported.min_scale);
  const cx = (tx + 1) * half, cy = (ty + 1) * half;
  return [cx - scale * half, cy - scale * half, cx + scale * half, cy + scale * half];
}

// The export's tensors (frequencies, lstm, head, encoder) as nested arrays, decoded once per export
// (forward decodes the Deep Set's).
const airDecodedCache = new WeakMap();
function airDecoded(exported) {
  if (!airDecodedCache.has(exported)) {
    const { frequencies, lstm, head, encoder } = exported;
    airDecodedCache.set(exported, decodeTensors({ frequencies, lstm, head, encoder }));
  }
  return airDecodedCache.get(exported);
}
