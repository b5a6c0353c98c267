// The forward pass of a trained setfuncs.DeepSet, in the reader's browser (and in node), from the
// JSON of setfuncs.explorables.weights.export_model (its docstring describes the layout).
//
//   m_i = embed(x_i)            per-particle Linear + activation layers
//   C   = combine(M)            equivariant layers  sigma(W (x_i - alpha(X)) + b)          ("equivariant")
//                                               or  sigma(Gamma x_i + b - Lambda alpha(X)) ("deepsets")
//   a   = aggregate(C)          plain, or learnable: reads w_{t,i} = normalize(m_i . q_t * scale),
//                               a_t = reduce({w_{t,i} m_i})  (or reduce({m_i + ln w_{t,i}}) with weighting "log")
//   r   = process(a)            Linear + activation layers
//
// One population, every particle real: the torch modules' padding masks have nothing to do here.
// Maths in float64; torch computes in float32, so outputs agree to about 1e-6 relative
// (tests/test_model_export.py). Dependency-free, no imports: only top-level `export function` /
// `export const` declarations, private helpers prefixed `ds`, so that the file can be inlined
// together with others into one module (setfuncs/explorables/esm.py). Besides `forward`, it exports
// the building blocks other models' front ends share (air.js): `linear`, `layers`, `sigmoid`,
// `logSigmoid`, `lstmCell` and `decodeTensors`.

/** The export layout this file reads (setfuncs.explorables.weights.FORMAT). */
export const DEEPSET_FORMAT = 2;

/**
 * The model's output for one population.
 * @param {object} model  the JSON of export_model
 * @param {number[][]} x  N >= 1 particles, each an array of model.in_features finite numbers
 * @returns {{output: number[], reads: number[][] | null}} the outputs r, and the attention weights
 *   w_{t,i} (T reads x N particles) of the final aggregation when it is learnable, else null
 */
export function forward(exported, x) {
  dsCheck(exported, x);
  const model = dsDecoded(exported);
  let m = x.map((particle) => layers(model.embed, particle));
  for (const layer of model.combine) m = dsEquivariant(layer, m);
  const { value, reads } = dsAggregate(model.aggregate, m);
  return { output: layers(model.process, value), reads };
}

function dsCheck(model, x) {
  if (!model || model.format !== DEEPSET_FORMAT) {
    throw new Error(`deepset.js reads the format-${DEEPSET_FORMAT} JSON of setfuncs.explorables.weights.` +
      `export_model; got format ${model && model.format}`);
  }
  if (!Array.isArray(x) || x.length === 0) {
    throw new Error("x must be a non-empty array of particles (a population needs at least one particle)");
  }
  x.forEach((particle, i) => {
    if (!Array.isArray(particle) || particle.length !== model.in_features
        || !particle.every((v) => typeof v === "number" && Number.isFinite(v))) {
      throw new Error(`particle ${i} must be an array of ${model.in_features} finite numbers ` +
        `(the model's in_features), got ${JSON.stringify(particle)}`);
    }
  });
}

// ---- layers

/**
 * A linear layer, y = W v + b.
 * @param {{weight: number[][], bias: number[] | null}} layer  decoded weights, W [out][in]; no bias: b = 0
 * @param {number[]} v  the input, in features
 * @returns {number[]} y, out features
 */
export function linear(layer, v) {
  return layer.weight.map((row, j) => {
    let s = layer.bias ? layer.bias[j] : 0;
    for (let k = 0; k < row.length; k++) s += row[k] * v[k];
    return s;
  });
}

/**
 * An MLP: decoded layers {type: "linear", weight, bias} and {type: "activation", name, ...}, in order.
 * @param {object[]} mlp  the decoded layers, as export_model writes embed and process
 * @param {number[]} v  the input
 * @returns {number[]} the last layer's output
 */
export function layers(mlp, v) {
  for (const layer of mlp) {
    if (layer.type === "linear") v = linear(layer, v);
    else if (layer.type === "activation") v = v.map(dsActivation(layer));
    else throw new Error(`unknown layer type ${JSON.stringify(layer.type)}; deepset.js knows linear, activation`);
  }
  return v;
}

function dsActivation(spec) {
  switch (spec.name) {
    case "tanh": return Math.tanh;
    case "relu": return (v) => (v > 0 ? v : 0);
    case "identity": return (v) => v;
    case "elu": return (v) => (v > 0 ? v : spec.alpha * Math.expm1(v));
    case "gelu":
      if (spec.approximate === "tanh") {
        return (v) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v)));
      }
      return (v) => 0.5 * v * (1 + dsErf(v / Math.SQRT2));
    default:
      throw new Error(`unknown activation ${JSON.stringify(spec.name)}; deepset.js knows tanh, relu, elu, gelu, identity`);
  }
}

// erf x: its Maclaurin series below 2.5 (terms at most e^{x^2} ~ 500, so ~1e-13 lost), else
// 1 - erfc x with erfc x = e^{-x^2}/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), 80 terms.
function dsErf(x) {
  const a = Math.abs(x);
  if (a < 2.5) {
    let term = x, sum = x;
    for (let n = 1; n < 200; n++) {
      term *= -x * x / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) <= 1e-17 * Math.abs(sum)) break;
    }
    return (2 / Math.sqrt(Math.PI)) * sum;
  }
  let f = a;
  for (let k = 80; k >= 1; k--) f = a + (k / 2) / f;
  const erfc = Math.exp(-a * a) / Math.sqrt(Math.PI) / f;
  return x > 0 ? 1 - erfc : erfc - 1;
}

function dsEquivariant(layer, m) {
  const pooled = dsAggregate(layer.aggregate, m).value;
  let pre;
  if (layer.type === "equivariant") {
    pre = m.map((particle) => linear(layer.linear, particle.map((v, d) => v - pooled[d])));
  } else if (layer.type === "deepsets") {
    const shift = linear(layer.lambda, pooled);
    pre = m.map((particle) => linear(layer.gamma, particle).map((v, d) => v - shift[d]));
  } else {
    throw new Error(`unknown equivariant layer ${JSON.stringify(layer.type)}; deepset.js knows equivariant, deepsets`);
  }
  const sigma = dsActivation(layer.activation);
  return pre.map((particle) => particle.map(sigma));
}

// ---- plain aggregations, feature-wise over the particles

function dsAggregate(agg, m) {
  if (agg.kind === "query" || agg.kind === "recurrent") return dsLearnable(agg, m);
  return { value: dsPlain(agg, m), reads: null };
}

function dsPlain(agg, m) {
  const reduce = dsReducer(agg);
  const features = m[0].length;
  const value = new Array(features);
  for (let d = 0; d < features; d++) value[d] = reduce(m.map((particle) => particle[d]));
  return value;
}

function dsReducer(agg) {
  switch (agg.kind) {
    case "sum": return dsSum;
    case "mean": return (col) => dsSum(col) / col.length;
    case "max": return dsLargest;
    case "min": return (col) => -dsLargest(col.map((v) => -v));
    case "lse": return dsLogSumExp;
    case "lme": return (col) => dsLogSumExp(col) - Math.log(col.length);
    case "quantile": return (col) => dsQuantile(col, agg.q);
    case "pmean": return (col) => dsPowerMean(col, agg);
    case "softmax": return (col) => dsSoftmaxWeighted(col, agg);
    default:
      throw new Error(`unknown aggregation ${JSON.stringify(agg.kind)}; deepset.js knows sum, mean, max, min, ` +
        "lse, lme, quantile, pmean, softmax, query, recurrent");
  }
}

function dsLargest(col) {
  let h = -Infinity;
  for (const v of col) if (v > h) h = v;
  return h;
}

function dsSum(col) {
  let s = 0;
  for (const v of col) s += v;
  return s;
}

// ln sum_i e^{x_i} = h + ln sum_i e^{x_i - h}, h the largest (infinite h: h itself)
function dsLogSumExp(col) {
  const h = dsLargest(col);
  if (!Number.isFinite(h)) return h;
  let s = 0;
  for (const v of col) s += Math.exp(v - h);
  return h + Math.log(s);
}

// x_(lo) + (h - lo)(x_(hi) - x_(lo)), h = q (N - 1): numpy.quantile's default; q = 0, 1: min, max
function dsQuantile(col, q) {
  const sorted = col.slice().sort((a, b) => a - b);
  const h = q * (sorted.length - 1);
  const lo = Math.floor(h), hi = Math.ceil(h);
  if (q === 0 || q === 1) return sorted[lo];
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

// torch.nn.functional.softplus: ln(1 + e^x), x itself above 20
function dsSoftplus(v) {
  return v > 20 ? v : Math.log1p(Math.exp(v));
}

// M_p(y) = (mean y^p)^{1/p}; y = max(softplus x, floor) for SoftplusPowerMean; p = 0 geometric mean;
// small |p| through expm1/log1p; overflow of y^p: s M_p(y / s), s the largest (p > 0) or smallest y
function dsPowerMean(col, agg) {
  const y = agg.softplus ? col.map((v) => Math.max(dsSoftplus(v), agg.floor)) : col;
  if (!agg.softplus && y.some((v) => v <= 0)) {
    throw new Error("the power mean is defined for positive particles only; found values <= 0");
  }
  const p = agg.p, mean = (values) => dsSum(values) / values.length;
  if (p === 0) return Math.exp(mean(y.map(Math.log)));
  if (Math.abs(p) < agg.small_exponent) return Math.exp(Math.log1p(mean(y.map((v) => Math.expm1(p * Math.log(v))))) / p);
  const fast = mean(y.map((v) => v ** p)) ** (1 / p);
  if (Number.isFinite(fast) && fast > 0) return fast;
  const s = p > 0 ? dsLargest(y) : -dsLargest(y.map((v) => -v));
  return s * mean(y.map((v) => (v / s) ** p)) ** (1 / p);
}

// sum_i softmax_i(x / tau) x_i, the logits shifted by the largest x (the softmax does not change)
function dsSoftmaxWeighted(col, agg) {
  const tau = Math.max(Math.exp(agg.log_temperature), agg.floor);
  const h = dsLargest(col);
  let total = 0, weighted = 0;
  for (const v of col) {
    const e = Math.exp((v - h) / tau);
    total += e;
    weighted += e * v;
  }
  return weighted / total;
}

// ---- learnable aggregations: query, recurrent, read-process-write

/** The logistic function σ(v) = 1 / (1 + e^{-v}), without overflow of e^{-v} for large negative v. */
export function sigmoid(v) {
  return v >= 0 ? 1 / (1 + Math.exp(-v)) : Math.exp(v) / (1 + Math.exp(v));
}

/** ln σ(v) = -softplus(-v), without overflow either way. */
export function logSigmoid(v) {
  return v < 0 ? v - Math.log1p(Math.exp(v)) : -Math.log1p(Math.exp(-v));
}

function dsNormalize(logits, kind) {
  if (kind === "softmax" || kind === "softmax-n") {
    const h = dsLargest(logits);
    const e = logits.map((l) => Math.exp(l - h));
    const scale = (kind === "softmax" ? 1 : logits.length) / dsSum(e);
    return e.map((v) => v * scale);
  }
  if (kind === "sigmoid") return logits.map(sigmoid);
  if (kind === "identity") return logits.slice();
  throw new Error(`unknown normalize ${JSON.stringify(kind)}; deepset.js knows softmax, softmax-n, sigmoid, identity`);
}

// ln w_i directly: log_softmax (+ ln N for softmax-n), logsigmoid
function dsLogNormalize(logits, kind) {
  if (kind === "softmax" || kind === "softmax-n") {
    const shift = dsLogSumExp(logits) - (kind === "softmax" ? 0 : Math.log(logits.length));
    return logits.map((l) => l - shift);
  }
  if (kind === "sigmoid") return logits.map(logSigmoid);
  throw new Error(`weighting "log" needs normalize softmax, softmax-n or sigmoid, got ${JSON.stringify(kind)}`);
}

// one read: w_i = normalize(m_i . q * scale), a = reduce({w_i m_i}) or reduce({m_i + ln w_i})
function dsRead(agg, m, q) {
  const logits = m.map((particle) => particle.reduce((s, v, d) => s + v * q[d], 0) * agg.scale);
  if (agg.weighting === "log") {
    const logW = dsLogNormalize(logits, agg.normalize);
    return { value: dsPlain(agg.reduce, m.map((p, i) => p.map((v) => v + logW[i]))), weights: logW.map(Math.exp) };
  }
  if (agg.weighting !== "multiply") {
    throw new Error(`unknown weighting ${JSON.stringify(agg.weighting)}; deepset.js knows multiply, log`);
  }
  const w = dsNormalize(logits, agg.normalize);
  return { value: dsPlain(agg.reduce, m.map((p, i) => p.map((v) => w[i] * v))), weights: w };
}

/**
 * One step of an LSTM cell (torch.nn.LSTMCell, gates in PyTorch's order i, f, g, o):
 * (i, f, g, o) = W_ih x + b_ih + W_hh h + b_hh; c' = σ(f) c + σ(i) tanh g; h' = σ(o) tanh c'.
 * @param {{weight_ih: number[][], weight_hh: number[][], bias_ih: number[], bias_hh: number[]}} lstm  decoded
 * @param {number[]} x  the input
 * @param {number[]} h  the hidden state, D features
 * @param {number[]} c  the cell state, D features
 * @returns {[number[], number[]]} the next hidden and cell states [h', c']
 */
export function lstmCell(lstm, x, h, c) {
  const gates = linear({ weight: lstm.weight_ih, bias: lstm.bias_ih }, x);
  const recurrent = linear({ weight: lstm.weight_hh, bias: lstm.bias_hh }, h);
  const D = h.length, cell = new Array(D), hidden = new Array(D);
  for (let d = 0; d < D; d++) {
    const gate = (k) => gates[k * D + d] + recurrent[k * D + d];
    cell[d] = sigmoid(gate(1)) * c[d] + sigmoid(gate(0)) * Math.tanh(gate(2));
    hidden[d] = sigmoid(gate(3)) * Math.tanh(cell[d]);
  }
  return [hidden, cell];
}

function dsLearnable(agg, m) {
  if (agg.kind === "query") {
    const read = dsRead(agg, m, agg.query);
    return { value: read.value, reads: [read.weights] };
  }
  let q = agg.query0, c = q.map(() => 0);
  const results = [], reads = [];
  for (let t = 0; t < agg.steps; t++) {
    if (t > 0) [q, c] = lstmCell(agg.cell, results[t - 1], q, c);
    const read = dsRead(agg, m, q);
    results.push(read.value);
    reads.push(read.weights);
  }
  if (agg.readout === "last") return { value: results[results.length - 1], reads };
  if (agg.readout !== "backward") {
    throw new Error(`unknown readout ${JSON.stringify(agg.readout)}; deepset.js knows backward, last`);
  }
  let state = [q.map(() => 0), q.map(() => 0)];
  for (let t = results.length - 1; t >= 0; t--) state = lstmCell(agg.readout_rnn, results[t], state[0], state[1]);
  return { value: state[0], reads };
}

// ---- the export's tensors

// The export of export_model, decoded (decodeTensors) once per export.
const dsDecodedCache = new WeakMap();
function dsDecoded(exported) {
  if (!dsDecodedCache.has(exported)) dsDecodedCache.set(exported, decodeTensors(exported));
  return dsDecodedCache.get(exported);
}

/**
 * A copy of an exported JSON value with every tensor {shape, dtype, data} (little-endian float32 or
 * float16, row-major, base64; setfuncs.explorables.weights.rounded) replaced by nested arrays of
 * numbers (a number for shape []); everything else is copied as it is.
 * @param {*} node  any part of an export
 * @returns {*} node, decoded
 */
export function decodeTensors(node) {
  if (Array.isArray(node)) return node.map(decodeTensors);
  if (node === null || typeof node !== "object") return node;
  const keys = Object.keys(node);
  if (keys.length === 3 && "shape" in node && "dtype" in node && "data" in node) return dsTensor(node);
  return Object.fromEntries(keys.map((key) => [key, decodeTensors(node[key])]));
}

function dsTensor({ shape, dtype, data }) {
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let k = 0; k < binary.length; k++) bytes[k] = binary.charCodeAt(k);
  const view = new DataView(bytes.buffer);
  let flat;
  if (dtype === "float32") flat = Array.from({ length: bytes.length / 4 }, (_, k) => view.getFloat32(4 * k, true));
  else if (dtype === "float16") flat = Array.from({ length: bytes.length / 2 }, (_, k) => dsHalf(view.getUint16(2 * k, true)));
  else throw new Error(`deepset.js: a tensor of dtype ${dtype}; the export has float32 or float16`);
  const build = (offset, dims) => {
    if (dims.length === 0) return flat[offset];
    const stride = dims.slice(1).reduce((a, d) => a * d, 1);
    return Array.from({ length: dims[0] }, (_, k) => build(offset + k * stride, dims.slice(1)));
  };
  return build(0, shape);
}

// IEEE 754 half precision bits to a number.
function dsHalf(bits) {
  const sign = bits & 0x8000 ? -1 : 1, exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}
