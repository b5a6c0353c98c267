r"""A trained :class:`~setfuncs.model.DeepSet` as JSON, for the browser's forward pass
(``setfuncs/explorables/js/deepset.js``), and back (:func:`load_model`).

:func:`export_model` writes down what :meth:`DeepSet.forward <setfuncs.model.DeepSet.forward>`
computes in eval mode (dropout off) for one population :math:`X = \{x_1, \dots, x_N\}`:

.. math::
    m_i &= \operatorname{embed}(x_i)                       && \text{Linear and activation layers}\\
    C &= \operatorname{combine}(M)                          && \text{equivariant layers, } \sigma(X - \mathbf 1 \alpha(X))
        \text{ or } \sigma(X\Gamma - \mathbf 1 \alpha(X)\Lambda)\\
    a &= \operatorname{aggregate}(C)                        && \text{plain or learnable}\\
    r &= \operatorname{process}(a)                          && \text{Linear and activation layers}

The JSON (``format`` ``FORMAT``) holds ``spec``, ``in_features``, ``out_features``, ``precision``,
the constructor's ``arguments`` (:attr:`DeepSet.arguments <setfuncs.model.DeepSet>`) and the four stages: ``embed`` and ``process`` are lists of ``{"type": "linear", "weight", "bias"}``
(``weight`` is ``[out][in]``, :math:`y = W x + b`) and ``{"type": "activation", "name", ...}``;
``combine`` a list of ``{"type": "equivariant" | "deepsets", "linear" | "gamma", "lambda",
"aggregate", "activation"}``; ``aggregate`` one aggregation, ``{"kind": ...}``:

* plain: ``sum mean max min lse lme``, ``quantile`` (``q``; ``median`` is ``q = 0.5``), ``pmean``
  (``p``, and ``softplus``: :math:`M_p(\max(\operatorname{softplus}(X), t))` with the floor
  :math:`t` the smallest normal number of the model's dtype, as :class:`~setfuncs.model.SoftplusPowerMean`
  computes it; without, the bare :class:`~setfuncs.plain.PowerMean` of positive particles),
  ``softmax`` (``log_temperature``: :math:`\sum_i \operatorname{softmax}_i(x_{\cdot,d}/\tau)\,x_{i,d}`);
* learnable (:mod:`setfuncs.learnable`), ``query`` and ``recurrent`` (read-process-write is a
  recurrent one with ``reduce`` sum, ``normalize`` softmax and ``readout`` last): ``reduce`` (a
  plain one of the above), ``normalize``, ``weighting``, ``scale`` :math:`= 1/\sqrt D` and the
  reads :math:`w_{t,i} = \operatorname{normalize}(m_i^\top q_t \cdot \text{scale})`,
  :math:`a_t = \operatorname{reduce}(\{w_{t,i} m_i\})` (or :math:`\{m_i + \ln w_{t,i}\}`), with
  ``query`` (constant) or ``query0`` and the LSTM ``cell`` of the queries
  :math:`q_{t+1} = \operatorname{LSTM}(a_t; q_t, c_t)` and, for ``readout`` backward, the LSTM
  ``readout_rnn`` over :math:`a_T, \dots, a_1` from zero state. An LSTM is ``weight_ih``,
  ``weight_hh`` (``[4D][D]``, gates in PyTorch's order i, f, g, o), ``bias_ih``, ``bias_hh``.

Every weight tensor is ``{"shape": [...], "dtype": "float32" | "float16", "data": <base64>}``, its
values little-endian in row-major order: float32 (the default) is the trained model exactly, at
5.3 characters a weight (a decimal list takes about 11); float16 halves that again for a large model
(a relative change of at most 2^-11 per weight, and the browser then computes the model with those
weights, as :func:`load_model` does). Hyperparameters (``p``, ``q``, ``scale``, the floor) are exact. **No masks**: the
browser passes one population, every particle real, so the padding masks of the torch modules
(:func:`~setfuncs.population.pad_populations`) have nothing to do there and are not exported.
Anything else, a module class (subclasses included: they may compute differently), an activation,
an aggregation, an LSTM variant, a non-finite weight, is refused with a ``ValueError`` that names
it and lists what is supported: the export never describes a function the JS would compute
differently.
"""

from __future__ import annotations

import base64
import contextvars
from typing import Any

import numpy as np
import torch
from torch import nn

from ..equivariant import DeepSetsEquivariant, Equivariant
from ..learnable import NORMALIZES, REDUCES, WEIGHTINGS, QueryAggregation, ReadProcessWrite, RecurrentAggregation
from ..model import DeepSet, SoftplusPowerMean
from ..plain import (SMALL_EXPONENT, Aggregation, LogMeanExp, LogSumExp, Max, Mean, Median, Min, PowerMean,
                     Quantile, SoftmaxWeightedSum, Sum)

__all__ = ["FORMAT", "export_model", "layers", "linear", "lstm", "rounded"]

#: The JSON layout's version; ``deepset.js`` refuses any other.
FORMAT = 2
#: Plain aggregations without parameters, by exact class.
_PLAIN = {Sum: "sum", Mean: "mean", Max: "max", Min: "min", LogSumExp: "lse", LogMeanExp: "lme"}
_LEARNABLE = (QueryAggregation, RecurrentAggregation, ReadProcessWrite)
_SUPPORTED_AGGREGATIONS = ("sum, mean, max, min, lse, lme, median, quantile(q), pmean(p) (SoftplusPowerMean "
                           "or PowerMean), softmax(temperature), q-<reduce>, r-<reduce>, rpw")
_ACTIVATIONS = {nn.Tanh: "tanh", nn.ReLU: "relu", nn.ELU: "elu", nn.GELU: "gelu", nn.Identity: "identity"}
_SUPPORTED_ACTIVATIONS = "torch.nn.Tanh, ReLU, ELU, GELU, Identity"


#: The precisions a weight can be exported in, with numpy's little-endian dtype of each.
PRECISIONS = {"float32": "<f4", "float16": "<f2"}
#: While :func:`load_model` runs, the tensors :func:`rounded` meets, in the order it meets them.
_MET: contextvars.ContextVar[list | None] = contextvars.ContextVar("met", default=None)


def export_model(model: DeepSet, precision: str = "float32") -> dict[str, Any]:
    r"""The JSON-serialisable description of ``model``'s eval-mode forward pass
    :math:`r = \operatorname{process}(\operatorname{aggregate}(\operatorname{combine}(\operatorname{embed}(X))))`,
    weights in ``precision`` (the layout is in the module's docstring).
    A ``ValueError`` names whatever the browser's forward pass does not compute."""
    if not isinstance(model, DeepSet):
        raise ValueError(f"export_model exports a setfuncs.DeepSet, got {type(model).__name__}")
    overridden = [name for name in ("forward", "memory", "memory_from_first_layer")
                  if getattr(type(model), name) is not getattr(DeepSet, name)]
    if overridden:
        raise ValueError(f"{type(model).__name__} overrides DeepSet.{', DeepSet.'.join(overridden)}; export_model "
                         f"supports models that compute DeepSet's forward pass (subclasses that only set arguments)")
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
    floor = torch.finfo(next(model.parameters()).dtype).tiny
    return {
        "format": FORMAT, "spec": model.spec, "in_features": model.in_features,
        "out_features": model.out_features, "precision": precision, "arguments": dict(model.arguments),
        "embed": layers(model.embed, "embed", precision),
        "combine": [_equivariant(layer, f"combine[{k}]", precision, floor) for k, layer in enumerate(model.combine)],
        "aggregate": _aggregation(model.aggregate, "aggregate", precision, floor),
        "process": layers(model.process, "process", precision),
    }


def rounded(tensor: torch.Tensor, where: str, precision: str) -> dict[str, Any]:
    """``tensor`` as an exported tensor ``{"shape", "dtype", "data"}``: its values in ``precision``
    (a key of ``PRECISIONS``), little-endian, row-major, base64 (:func:`decode` reads it back;
    :func:`load_model` reads the tensors back in the order they are met here). ``where`` names the
    tensor in the ``ValueError`` that refuses non-finite values or values beyond ``precision``'s range."""
    values = tensor.detach().cpu().double().numpy()
    if not np.isfinite(values).all():
        raise ValueError(f"{where} holds non-finite weights (inf or NaN), which JSON cannot carry; "
                         f"export a model with finite weights")
    encoded = values.astype(PRECISIONS[precision])
    if not np.isfinite(encoded).all():
        raise ValueError(f"{where} holds weights beyond {precision}'s range; export it in float32")
    met = _MET.get()
    if met is not None:
        met.append((tensor, where))
    return {"shape": list(values.shape), "dtype": precision,
            "data": base64.b64encode(encoded.tobytes()).decode("ascii")}


def decode(encoded: dict[str, Any]) -> np.ndarray:
    """One exported tensor (``{"shape", "dtype", "data"}``) as a float64 array."""
    raw = np.frombuffer(base64.b64decode(encoded["data"]), dtype=PRECISIONS[encoded["dtype"]])
    return raw.astype(np.float64).reshape(encoded["shape"])


def _encoded(node: Any) -> list[dict[str, Any]]:
    """The exported tensors in ``node``, depth first, in the order :func:`export_model` wrote them."""
    if isinstance(node, dict):
        if set(node) == {"shape", "dtype", "data"}:
            return [node]
        return [tensor for value in node.values() for tensor in _encoded(value)]
    if isinstance(node, list):
        return [tensor for value in node for tensor in _encoded(value)]
    return []


def load_model(exported: dict[str, Any]) -> DeepSet:
    """The :class:`~setfuncs.model.DeepSet` an export describes, in eval mode, with exactly the
    exported weights (float32): what the browser computes, computed by torch."""
    if exported.get("format") != FORMAT:
        raise ValueError(f"load_model reads exports of format {FORMAT}, got {exported.get('format')!r}")
    model = DeepSet(**exported["arguments"]).eval()
    token = _MET.set([])
    try:
        export_model(model, exported["precision"])
        met = _MET.get()
    finally:
        _MET.reset(token)
    tensors = _encoded(exported)
    if len(tensors) != len(met):
        raise ValueError(f"the export holds {len(tensors)} tensors, a DeepSet({exported['arguments']}) has {len(met)}")
    with torch.no_grad():
        for (tensor, where), encoded in zip(met, tensors):
            if list(tensor.shape) != encoded["shape"]:
                raise ValueError(f"{where}: the export's shape {encoded['shape']} is not the model's {list(tensor.shape)}")
            tensor.copy_(torch.from_numpy(decode(encoded)))
    if export_model(model, exported["precision"]) != exported:
        raise ValueError(f"the export is not what DeepSet(**arguments) builds (a module was changed after "
                         f"construction?): load_model rebuilds models from their arguments only")
    return model


def linear(module: nn.Module, where: str, precision: str) -> dict[str, Any]:
    """``{"weight": [out][in], "bias": [out] | None}`` of an exact :class:`torch.nn.Linear`, each a
    :func:`rounded` tensor in ``precision``; anything else is refused with a ``ValueError`` naming
    ``where``."""
    if type(module) is not nn.Linear:
        raise ValueError(f"{where} is {type(module).__name__}; export_model supports torch.nn.Linear there")
    weight = rounded(module.weight, f"{where}.weight", precision)  # met in the order they are written
    return {"weight": weight, "bias": None if module.bias is None else rounded(module.bias, f"{where}.bias", precision)}


def _activation(module: nn.Module, where: str) -> dict[str, Any]:
    """``{"type": "activation", "name": ...}`` (ELU's ``alpha``, GELU's ``approximate``)."""
    name = _ACTIVATIONS.get(type(module))
    if name is None:
        raise ValueError(f"{where} is {type(module).__name__}; export_model supports the activations "
                         f"{_SUPPORTED_ACTIVATIONS} (and Linear, Dropout in embed and process)")
    out: dict[str, Any] = {"type": "activation", "name": name}
    if name == "elu":
        out["alpha"] = float(module.alpha)
    if name == "gelu":
        if module.approximate not in ("none", "tanh"):
            raise ValueError(f"{where}: GELU(approximate={module.approximate!r}); supported: 'none', 'tanh'")
        out["approximate"] = module.approximate
    return out


def layers(sequence: nn.Module, where: str, precision: str) -> list[dict[str, Any]]:
    """The layers of an MLP (:func:`setfuncs.model.mlp`), an exact :class:`torch.nn.Sequential`, in
    order: ``{"type": "linear", "weight", "bias"}`` (:func:`linear`, weights in ``precision``) and
    ``{"type": "activation", "name", ...}``; Dropout, off in eval mode, is left out. Anything else is
    refused with a ``ValueError`` naming ``where`` and the layer's index."""
    if type(sequence) is not nn.Sequential:
        raise ValueError(f"{where} is {type(sequence).__name__}; export_model supports torch.nn.Sequential there")
    out = []
    for k, module in enumerate(sequence):
        if type(module) is nn.Dropout:
            continue
        if type(module) is nn.Linear:
            out.append({"type": "linear", **linear(module, f"{where}[{k}]", precision)})
        else:
            out.append(_activation(module, f"{where}[{k}]"))
    return out


def _equivariant(layer: nn.Module, where: str, precision: str, floor: float) -> dict[str, Any]:
    r"""One layer of ``combine``: :math:`\sigma(W(x_i - \alpha(X)) + b)` (``equivariant``) or
    :math:`\sigma(\Gamma x_i + b - \Lambda \alpha(X))` (``deepsets``)."""
    parts: dict[str, Any]
    if type(layer) is Equivariant:
        parts = {"type": "equivariant", "linear": linear(layer.linear, f"{where}.linear", precision)}
    elif type(layer) is DeepSetsEquivariant:
        parts = {"type": "deepsets", "gamma": linear(layer.gamma, f"{where}.gamma", precision),
                 "lambda": linear(layer.lam, f"{where}.lam", precision)}
    else:
        raise ValueError(f"{where} is {type(layer).__name__}; export_model supports the equivariant layers "
                         f"Equivariant and DeepSetsEquivariant")
    return {**parts, "aggregate": _aggregation(layer.aggregate, f"{where}.aggregate", precision, floor),
            "activation": _activation(layer.activation, f"{where}.activation")}


def _aggregation(agg: nn.Module, where: str, precision: str, floor: float) -> dict[str, Any]:
    """``{"kind": ...}`` of a plain or learnable aggregation (exact classes only)."""
    kind = type(agg)
    if kind in _PLAIN:
        return {"kind": _PLAIN[kind]}
    if kind in (Quantile, Median):
        return {"kind": "quantile", "q": agg.q}
    if kind in (PowerMean, SoftplusPowerMean):
        return {"kind": "pmean", "p": agg.p, "softplus": kind is SoftplusPowerMean, "floor": floor,
                "small_exponent": SMALL_EXPONENT}
    if kind is SoftmaxWeightedSum:
        return {"kind": "softmax", "log_temperature": rounded(agg.log_temperature, f"{where}.log_temperature", precision),
                "floor": floor}
    if kind in _LEARNABLE:
        return _learnable(agg, where, precision, floor)
    name = kind.__name__ if isinstance(agg, Aggregation) else f"{kind.__name__} (not an Aggregation)"
    raise ValueError(f"{where} is {name}; export_model supports the aggregations {_SUPPORTED_AGGREGATIONS} "
                     f"(the classes the registry builds, not subclasses)")


def _learnable(agg: QueryAggregation | RecurrentAggregation, where: str, precision: str, floor: float) -> dict[str, Any]:
    r"""A query or recurrent aggregation (read-process-write included): its reads
    :math:`a_t = \operatorname{reduce}(\{w_{t,i} m_i\})` and the LSTMs of its queries and readout."""
    reduce = agg.reduce_name
    if reduce not in REDUCES or type(agg.reducer) is not REDUCES[reduce]:
        raise ValueError(f"{where}.reducer is {type(agg.reducer).__name__} for reduce={reduce!r}; export_model "
                         f"supports the reduces {', '.join(REDUCES)} as setfuncs.learnable.REDUCES builds them")
    if agg.normalize_name not in NORMALIZES or agg.weighting not in WEIGHTINGS:
        raise ValueError(f"{where}: normalize={agg.normalize_name!r}, weighting={agg.weighting!r}; export_model "
                         f"supports normalize in {list(NORMALIZES)} and weighting in {list(WEIGHTINGS)}")
    out = {"kind": "query" if type(agg) is QueryAggregation else "recurrent",
           "reduce": _aggregation(agg.reducer, f"{where}.reducer", precision, floor),
           "normalize": agg.normalize_name, "weighting": agg.weighting, "scale": float(agg.scale)}
    if out["kind"] == "query":
        return {**out, "query": rounded(agg.query, f"{where}.query", precision)}
    if agg.readout not in ("backward", "last") or (agg.readout == "backward") != (agg.backward_rnn is not None):
        raise ValueError(f"{where}: readout={agg.readout!r} with backward_rnn "
                         f"{type(agg.backward_rnn).__name__}; export_model supports readout 'backward' "
                         f"(an LSTM) and 'last' (none)")
    cell = agg.query if agg.steps > 1 else None  # one read never asks the LSTM for a query
    return {**out, "steps": agg.steps, "readout": agg.readout, "query0": rounded(agg.query0, f"{where}.query0", precision),
            "cell": None if cell is None else lstm(cell, f"{where}.query", precision),
            "readout_rnn": None if agg.backward_rnn is None else lstm(agg.backward_rnn, f"{where}.backward_rnn", precision)}


def lstm(module: nn.Module, where: str, precision: str) -> dict[str, Any]:
    r"""The weights ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh`` (:func:`rounded` tensors in
    ``precision``) of an :class:`torch.nn.LSTMCell` or a one-layer, one-way :class:`torch.nn.LSTM`
    with biases and no projection:
    :math:`(i, f, g, o) = W_{ih} x + b_{ih} + W_{hh} h + b_{hh}`,
    :math:`c' = \sigma(f) c + \sigma(i) \tanh g`, :math:`h' = \sigma(o) \tanh c'`;
    anything else is refused with a ``ValueError`` naming ``where``."""
    suffix = "_l0" if type(module) is nn.LSTM else ""
    plain_cell = type(module) is nn.LSTMCell and module.bias
    plain_rnn = (type(module) is nn.LSTM and module.num_layers == 1 and not module.bidirectional
                 and module.bias and module.proj_size == 0)
    if not (plain_cell or plain_rnn):
        raise ValueError(f"{where} is {module!r}; export_model supports torch.nn.LSTMCell with bias and "
                         f"torch.nn.LSTM with one layer, one direction, bias and no projection")
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    return {name: rounded(getattr(module, name + suffix), f"{where}.{name}{suffix}", precision) for name in names}

