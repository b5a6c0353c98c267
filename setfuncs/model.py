r"""The Deep Set model (eqs. (2)-(5) of the paper), built from a spec in Table 2's notation.

.. math::
    m_i &= \operatorname{embed}(x_i)           && \text{per-particle MLP}\\
    C &= \operatorname{combine}(M)              && \text{stack of equivariant layers, eq. (1)}\\
    a &= \operatorname{aggregate}(C)            && \text{invariant aggregation}\\
    r &= \operatorname{process}(a)              && \text{MLP}

The spec ``"<equivariant>/<final>"`` names the aggregation inside every equivariant layer and the
final one, e.g. ``"max/max"`` (Zaheer et al.'s point-cloud model) or ``"r-lse/r-lse"``; each part
is an aggregation spec of :func:`~setfuncs.registry.aggregation`, parameterised ones included
(``"max/quantile(0.5)"``, ``"pmean(3)/mean"``). With ``embed_layers=0`` there is no embedding,
:math:`m_i = x_i`, and the first equivariant layer reads the raw particles, as in Zaheer et al.'s
point-cloud classifier (:mod:`setfuncs.experiments.pointcloud.model`).

**Power means read a positive embedding.** :math:`M_p` is defined for positive particles only,
and what an aggregation reads inside the model (embeddings after ``tanh``, the output of an
equivariant layer, raw particles) has either sign. So every ``pmean(p)`` of a spec, in the
equivariant layers or at the end, is :class:`SoftplusPowerMean`,
:math:`\alpha(X) = M_p(\operatorname{softplus}(X))`: the positive embedding that chapter 3's
sum-isomorphism theorem asks of a sum-isomorphic aggregation, built in. Every other aggregation
reads its particles as they are.
"""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .equivariant import DeepSetsEquivariant, Equivariant, make_activation
from .plain import Aggregation, PowerMean, accumulate_in_float32, not_scriptable, zero_padding
from .population import check_parameters, check_population, check_sizes
from .registry import aggregation

__all__ = ["DeepSet", "SoftplusPowerMean", "parse_spec", "mlp", "init_head", "HEAD_SCALE", "parameter_count"]

#: How much :func:`init_head` shrinks the output layer's weights.
HEAD_SCALE = 0.1


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``"<equivariant>/<final>"`` into its two aggregation specs (lower case, stripped), e.g.
    ``"max/quantile(0.5)" -> ("max", "quantile(0.5)")``; each is checked when it is built."""
    parts = spec.split("/") if isinstance(spec, str) else []
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise ValueError(f"a model spec is '<equivariant aggregation>/<final aggregation>', e.g. "
                         f"'max/max' or 'r-lse/r-lse'; got {spec!r}")
    return parts[0].strip().lower(), parts[1].strip().lower()


def mlp(sizes: list[int], activation: str = "tanh", dropout: float = 0.0, last_activation: bool = False) -> nn.Sequential:
    """Linear layers ``sizes[0] -> ... -> sizes[-1]`` with activations between (and dropout before each)."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
        layers.append(nn.Linear(a, b))
        if last_activation or i < len(sizes) - 2:
            layers.append(make_activation(activation))
    return nn.Sequential(*layers)


def init_head(process: nn.Module, bias: Sequence[float] | Tensor, scale: float = HEAD_SCALE) -> None:
    r"""Start a model's output at the data's marginal: the last linear layer of ``process`` gets the
    bias ``bias`` and its weights multiplied by ``scale``, so :math:`r = W h + b \approx b` at step 0.

    A regression head starts at the targets' mean, a distribution head at the parameters of the
    best constant prediction (e.g. the Beta fitted to the marginal of the targets), a classifier at
    the log class frequencies. An output layer of full-size random weights instead starts far from
    any sensible prediction; with saturating activations (tanh) and aggregations whose outputs grow
    with the population (LSE), the first steps can then drive the hidden units into saturation,
    where the model collapses to a constant (chapter 9 measures it).
    """
    layers = [m for m in process.modules() if isinstance(m, nn.Linear)]
    if not layers:
        raise ValueError("init_head needs a module with a linear output layer")
    last = layers[-1]
    bias = torch.as_tensor(bias, dtype=last.bias.dtype)
    if bias.shape != last.bias.shape:
        raise ValueError(f"the output layer has {last.out_features} outputs; got a bias of shape {tuple(bias.shape)}")
    if not bool(torch.isfinite(bias).all()) or not scale > 0:
        raise ValueError(f"init_head needs a finite bias and a positive scale, got {bias.tolist()} and {scale}")
    with torch.no_grad():
        last.weight.mul_(scale)
        last.bias.copy_(bias)


def _takes_options(spec: str) -> bool:
    """Whether the aggregation ``spec`` takes ``learnable_options``: query and recurrent ones do."""
    return spec.startswith(("q-", "r-"))


def _check_options(spec: str, equivariant_layers: int, options: dict) -> None:
    """A ValueError if ``options`` (``learnable_options``) are given but no aggregation the model
    builds takes them (the equivariant one only when ``equivariant_layers > 0``): they would be dropped."""
    equivariant, final = parse_spec(spec)
    built = [equivariant, final] if equivariant_layers else [final]
    if options and not any(_takes_options(part) for part in built):
        only = "" if equivariant_layers else f" (with equivariant_layers=0, only its final {final!r})"
        raise ValueError(f"learnable_options {options} go to the query (q-*) and recurrent (r-*) aggregations, "
                         f"and the model spec {spec!r}{only} has none; drop the options or use a spec with one, "
                         f"e.g. 'max/r-lse'")


def _learnable_kwargs(spec: str, steps: int, options: dict) -> dict:
    """Keyword arguments for the aggregation ``spec``: ``steps`` for recurrent ones, ``options``
    (e.g. ``normalize``, ``readout``) for every query and recurrent one, nothing for plain ones
    and read-process-write, whose parts are fixed."""
    if spec == "rpw":
        return {"steps": steps}
    if spec.startswith("r-"):
        return {"steps": steps, **options}
    return dict(options) if _takes_options(spec) else {}


class SoftplusPowerMean(PowerMean):
    r"""The power mean of a positive embedding of the particles, :math:`\alpha(X) = M_p(\phi(X))`:

    .. math::
        \alpha(X) = \Big(\frac{1}{N} \sum_{i=1}^N \phi(x_i)^p\Big)^{1/p}, \qquad
        \phi(x) = \max\big(\operatorname{softplus}(x),\, t\big) > 0, \qquad
        \operatorname{softplus}(x) = \ln(1 + e^{x}),

    elementwise (``p = 0``: the geometric mean), with :math:`t` the smallest positive normal number of
    the dtype, the floor where :math:`\ln(1 + e^x)` underflows (:math:`x` below about :math:`-87`
    in float32). Softplus is a homeomorphism of :math:`\mathbb R` onto :math:`(0, \infty)`, so
    :math:`\alpha` is :math:`M_p` of a positive embedding, sum-isomorphic in chapter 3's weak
    sense like :math:`M_p` (for one population size), and asymptotically equal to :math:`M_p` on
    large positive particles (:math:`\operatorname{softplus}(x) - x \to 0`), never exactly. :class:`DeepSet` builds it for every ``pmean(p)``
    of its spec; :class:`~setfuncs.plain.PowerMean` alone refuses particles ``<= 0``. Padded
    particles are zeroed before the softplus, so junk in them (``inf``, NaN) reaches neither the
    output nor any gradient.
    """

    @accumulate_in_float32
    def reduce(self, x: Tensor, mask: Tensor | None) -> Tensor:
        positive = F.softplus(zero_padding(x, mask)).clamp_min(torch.finfo(x.dtype).tiny)
        return super().reduce(positive, mask)


def _model_aggregation(spec: str, features: int, steps: int, options: dict) -> Aggregation:
    """The aggregation ``spec`` as a :class:`DeepSet` builds it for ``features`` particle features:
    :func:`~setfuncs.registry.aggregation`'s, except that a power mean is a :class:`SoftplusPowerMean`."""
    built = aggregation(spec, features=features, **_learnable_kwargs(spec, steps, options))
    return SoftplusPowerMean(built.p, features=features) if isinstance(built, PowerMean) else built


class DeepSet(nn.Module):
    r"""embed -> combine -> aggregate -> process, mapping ``x: [B, N, in]`` (+ mask) to ``[B, out]``.

    Args:
        in_features, out_features: particle features in, outputs per population.
        spec: ``"<equivariant>/<final>"`` aggregation specs (Table 2 notation, parameters in
            parentheses: ``"max/quantile(0.5)"``; :mod:`~setfuncs.registry`).
        hidden: width of every hidden layer and of the particle embeddings.
        embed_layers: per-particle layers before the equivariant stack; 0 = none, the first
            equivariant layer reads the raw particles (Zaheer et al.'s point-cloud model).
        equivariant_layers: number of equivariant layers in ``combine`` (0 = a plain sum-decomposition model).
        process_layers: linear layers after aggregation (at least 1).
        activation: nonlinearity everywhere.
        dropout: dropout before each linear layer of ``process``.
        steps: reads ``T`` of every recurrent aggregation.
        learnable_options: further arguments of every query and recurrent aggregation in the model,
            e.g. ``{"normalize": "sigmoid"}`` or ``{"readout": "last"}`` (recurrent only); a
            ValueError if the model has none (``"max/max"``, ``"max/rpw"``).
        layer: ``"equivariant"`` for eq. (1), ``"deepsets"`` for Zaheer et al.'s Gamma/Lambda form.

    A ``pmean(p)`` in ``spec`` (either place) reads the softplus of its particles,
    :math:`M_p(\operatorname{softplus}(X))` (:class:`SoftplusPowerMean`): a power mean needs
    positive particles, and the model's have either sign.
    """

    def __init__(self, in_features: int, out_features: int, spec: str = "max/max", hidden: int = 64,
                 embed_layers: int = 1, equivariant_layers: int = 2, process_layers: int = 2,
                 activation: str = "tanh", dropout: float = 0.0, steps: int = 3,
                 layer: str = "equivariant", learnable_options: dict | None = None) -> None:
        super().__init__()
        #: The constructor's arguments, so that ``DeepSet(**model.arguments)`` builds the same
        #: architecture (:func:`setfuncs.explorables.weights.load_model` fills it with exported weights).
        self.arguments = dict(in_features=in_features, out_features=out_features, spec=spec, hidden=hidden,
                              embed_layers=embed_layers, equivariant_layers=equivariant_layers,
                              process_layers=process_layers, activation=activation, dropout=dropout,
                              steps=steps, layer=layer, learnable_options=dict(learnable_options or {}))
        check_sizes(in_features=in_features, out_features=out_features, hidden=hidden)
        if embed_layers < 0 or process_layers < 1 or equivariant_layers < 0:
            raise ValueError(f"need embed_layers >= 0, process_layers >= 1 and equivariant_layers >= 0, got "
                             f"{embed_layers}, {process_layers} and {equivariant_layers}")
        layer_cls = {"equivariant": Equivariant, "deepsets": DeepSetsEquivariant}.get(layer)
        if layer_cls is None:
            raise ValueError(f"layer must be 'equivariant' or 'deepsets', got {layer!r}")
        self.spec = spec
        self.in_features, self.out_features = in_features, out_features
        equivariant_spec, final_spec = parse_spec(spec)
        options = dict(learnable_options or {})
        _check_options(spec, equivariant_layers, options)
        self.embed = mlp([in_features] + [hidden] * embed_layers, activation, last_activation=True)  # none: identity
        widths = [hidden if embed_layers else in_features] + [hidden] * equivariant_layers
        self.combine = nn.ModuleList(
            layer_cls(a, b, _model_aggregation(equivariant_spec, a, steps, options), activation)
            for a, b in zip(widths[:-1], widths[1:]))
        self.aggregate = _model_aggregation(final_spec, widths[-1], steps, options)
        self.process = mlp([self.aggregate.out_features or widths[-1]] + [hidden] * (process_layers - 1)
                           + [out_features], activation, dropout)

    def memory(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        r"""What the final aggregation reads, :math:`C = \operatorname{combine}(M)` with
        :math:`m_i = \operatorname{embed}(x_i)`: ``[B, N, hidden]`` (``[B, N, in]`` with neither
        embedding nor equivariant layers) from ``x: [B, N, in]``; padded particles (``mask`` False)
        are rows of zeros, and the real rows do not depend on them."""
        check_population(x, mask, self.in_features)
        check_parameters(self, x)
        return self.memory_from_first_layer(self.embed[:1](zero_padding(x, mask)), mask)

    def memory_from_first_layer(self, pre: Tensor, mask: Tensor | None = None) -> Tensor:
        r"""The rest of :meth:`~setfuncs.model.DeepSet.memory` from the first embedding layer's pre-activations
        :math:`p_i = W x_i + b` (``[B, N, hidden]``; with no embedding layers :math:`p_i = x_i`):
        the embedding's remaining layers, then ``combine``. For a caller that computes :math:`W x_i + b`
        in parts (:class:`~setfuncs.experiments.attention.localisers.SetLocaliser`); it checks nothing
        that :meth:`~setfuncs.model.DeepSet.memory` checks."""
        m = zero_padding(self.embed[1:](pre), mask)
        for layer in self.combine:
            m = layer(m, mask)
        return m

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        r"""The outputs ``[B, out]``, :math:`r = \operatorname{process}(\operatorname{aggregate}(C))` with
        :math:`C` the :meth:`~setfuncs.model.DeepSet.memory` of ``x: [B, N, in]`` (``mask``: real particles)."""
        return self.process(self.aggregate(self.memory(x, mask), mask))

    def __prepare_scriptable__(self) -> nn.Module:
        """Called by ``torch.jit.script`` before it compiles this model (alone or inside another module):
        the TypeError of :func:`~setfuncs.plain.not_scriptable`, instead of a failure deep inside the compiler."""
        raise not_scriptable(self)


def parameter_count(module: nn.Module) -> int:
    """The number of trainable parameters (entries of every tensor with ``requires_grad``)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
