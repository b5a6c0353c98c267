r"""A set-based AIR's inference network as JSON, for the browser (``setfuncs/explorables/js/air.js``),
and back (:func:`load_air`).

:func:`export_air` writes down what :meth:`AIR.infer <setfuncs.experiments.attention.air.AIR.infer>`
computes with ``noise=False`` for one canvas :math:`I` and its population :math:`U = \{u_1, \dots, u_n\}`,
at every step :math:`i = 1, \dots, K` from :math:`h_0 = c_0 = 0`, :math:`z_0 = 0`:

.. math::
    x_j &= \big[u_j,\ \sin(2\pi B^\top u_j),\ \cos(2\pi B^\top u_j),\ h_{i-1},\
           \operatorname{clip}_{\pm 3}((u_j - t_k)/s_k), 1\ (k < i),\ 0\ (k \ge i)\big]
           && \text{the particle's features}\\
    r &= \operatorname{process}(\operatorname{aggregate}(\operatorname{combine}(\operatorname{embed}(X))))
           && \text{the Deep Set, } \texttt{deep\_set}\\
    (h_i, c_i) &= \operatorname{LSTMCell}([r, z_{i-1}], (h_{i-1}, c_{i-1})), \quad o = W h_i + b
           && \texttt{lstm}, \texttt{head}\\
    \ell_i &= o_0, \quad z^\text{where}_i = (s_{\min} + (s_{\max} - s_{\min})\,\sigma(o_1), \tanh o_2, \tanh o_3)
           && \text{presence logit, where (the mean)}\\
    z^\text{what}_i &= \text{the first half of } \operatorname{encoder}(\operatorname{glimpse}(I, z^\text{where}_i))
           && \text{what (the mean)}\\
    z_i &= [z^\text{where}_i, z^\text{what}_i, 1]

(the glimpse: :func:`~setfuncs.experiments.attention.transformer.glimpse`, bilinear, zeros outside the
canvas, ``align_corners=False``, the scale clamped to at least ``min_scale``). The JSON (``format``
``AIR_FORMAT``) holds ``arguments`` (the :class:`~setfuncs.experiments.attention.air.AIR`
constructor's), ``precision``, the sizes ``canvas_size``, ``max_steps`` :math:`K`, ``glimpse_size``,
``what_features``, ``latent_features``, ``max_previous`` (:math:`K - 1` earlier glimpses), the
constants ``scale_range`` :math:`(s_{\min}, s_{\max})` and ``min_scale``, and the tensors in
:mod:`~setfuncs.explorables.weights`' layout: ``frequencies`` :math:`B` ``[2, F]``, ``deep_set`` (an
:func:`~setfuncs.explorables.weights.export_model`), ``lstm`` (``weight_ih``, ``weight_hh``,
``bias_ih``, ``bias_hh``), ``head`` (``weight``, ``bias``) and ``encoder`` (linear and activation
layers). The what-decoder, the standard deviations and the priors are not part of inference by the
means, and are left out.

``precision`` ``"float16"`` halves the state of a model, every weight (and the fixed frequencies
:math:`B`) rounded to half precision, a relative change of at most :math:`2^{-11}` each; the page and
:func:`load_air` then compute the same rounded model, and the boxes move from those of the float32
model by about :math:`10^{-3}` of the canvas side (``tests/test_explorable_air_boxes.py`` bounds it,
the chapter's call states what it measured).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from .weights import PRECISIONS, decode, export_model, layers, linear, lstm, load_model, rounded

if TYPE_CHECKING:
    from setfuncs.experiments.attention.air import AIR

__all__ = ["AIR_FORMAT", "air_arguments", "export_air", "load_air"]

#: The JSON layout's version; ``air.js`` refuses any other.
AIR_FORMAT = 1


def air_arguments(model: "AIR") -> dict[str, Any]:
    """The keyword arguments of :class:`~setfuncs.experiments.attention.air.AIR` that build ``model``'s
    architecture again (its localiser's Deep Set's own arguments give its widths and reads)."""
    deep_set = model.localiser.deep_set.arguments
    return {"spec": model.spec, "canvas_size": model.canvas_size, "max_steps": model.max_steps,
            "glimpse_size": model.glimpse_size, "what_features": model.what_features,
            "hidden": model.localiser.hidden, "set_hidden": deep_set["hidden"],
            "equivariant_layers": deep_set["equivariant_layers"], "steps": deep_set["steps"],
            "readout": deep_set["learnable_options"].get("readout", "last"),
            "presence_prior": model.presence_prior, "likelihood_std": model.likelihood_std,
            "where_scale": model.where_scale}


def export_air(model: "AIR", precision: str = "float32") -> dict[str, Any]:
    """The JSON-serialisable description of ``model``'s inference network run by its means (module
    docstring), weights in ``precision``. A ``ValueError`` names what the browser does not compute:
    a model that is not exactly an AIR with a :class:`~setfuncs.experiments.attention.localisers.SetLocaliser`."""
    from setfuncs.experiments.attention.air import AIR
    from setfuncs.experiments.attention.localisers import SetLocaliser
    from setfuncs.experiments.attention.transformer import MIN_SCALE

    if type(model) is not AIR:
        raise ValueError(f"export_air exports a setfuncs.experiments.attention.AIR, got {type(model).__name__}")
    localiser = model.localiser
    if type(localiser) is not SetLocaliser:
        raise ValueError(f"model: export_air exports AIR with a set localiser (it reads particles); "
                         f"this one has {type(localiser).__name__} ({model.spec!r})")
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
    return {
        "format": AIR_FORMAT, "arguments": air_arguments(model), "precision": precision,
        "canvas_size": model.canvas_size, "max_steps": model.max_steps, "glimpse_size": model.glimpse_size,
        "what_features": model.what_features, "latent_features": model.latent_features,
        "max_previous": localiser.max_previous, "scale_range": list(localiser.scale_range), "min_scale": MIN_SCALE,
        "frequencies": rounded(localiser.frequencies, "localiser.frequencies", precision),
        "deep_set": export_model(localiser.deep_set, precision),
        "lstm": lstm(localiser.lstm, "localiser.lstm", precision),
        "head": linear(localiser.head, "localiser.head", precision),
        "encoder": layers(model.encoder, "encoder", precision),
    }


def load_air(exported: dict[str, Any]) -> "AIR":
    """The :class:`~setfuncs.experiments.attention.air.AIR` an export describes, in eval mode, with
    exactly the exported weights (float32; the decoder keeps its initial weights, which inference does
    not read): what the browser computes, computed by torch."""
    from setfuncs.experiments.attention.air import AIR

    if exported.get("format") != AIR_FORMAT:
        raise ValueError(f"load_air reads exports of format {AIR_FORMAT}, got {exported.get('format')!r}")
    model = AIR(**exported["arguments"]).eval()
    localiser = model.localiser
    linears = [module for module in model.encoder if type(module) is nn.Linear]
    exported_linears = [layer for layer in exported["encoder"] if layer["type"] == "linear"]
    with torch.no_grad():
        localiser.deep_set.load_state_dict(load_model(exported["deep_set"]).state_dict())
        localiser.frequencies.copy_(_tensor(exported["frequencies"]))
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(localiser.lstm, name).copy_(_tensor(exported["lstm"][name]))
        for module, layer in zip([localiser.head, *linears], [exported["head"], *exported_linears]):
            module.weight.copy_(_tensor(layer["weight"]))
            module.bias.copy_(_tensor(layer["bias"]))
    if export_air(model, exported["precision"]) != exported:
        raise ValueError(f"the export is not what AIR(**arguments) builds (a module changed after construction?): "
                         f"load_air rebuilds models from their arguments {exported['arguments']} only")
    return model


def _tensor(encoded: dict[str, Any]) -> torch.Tensor:
    """One exported tensor as float32."""
    return torch.from_numpy(decode(encoded)).float()
