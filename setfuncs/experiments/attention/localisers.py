r"""The two localisers of the spatial-attention experiment: where to look at step :math:`i`.

At every step :math:`i = 1, \dots, K` of Attend-Infer-Repeat a localiser reads the scene and its
recurrent state :math:`h_{i-1}` together with the previous step's latents
:math:`z_{i-1} = (z^\text{where}_{i-1}, z^\text{what}_{i-1}, z^\text{pres}_{i-1})` (zeros at the
first step) and returns

* the presence logit :math:`\ell_i`, with :math:`q(z^\text{pres}_i = 1) = \sigma(\ell_i)`,
* the mean :math:`\mu_i` and standard deviation :math:`\sigma_i` of
  :math:`q(z^\text{where}_i) = \mathcal{N}(\mu_i, \operatorname{diag} \sigma_i^2)`,
  :math:`z^\text{where} = (s, t_x, t_y)`,
* its new state :math:`h_i`.

:class:`ImageLocaliser` is the original (Eslami et al. 2016): an LSTM whose input is the whole
flattened canvas,

.. math::
    h_i = \operatorname{LSTM}\big([\operatorname{vec}(I), z_{i-1}], h_{i-1}\big).

:class:`SetLocaliser` replaces the image by the population :math:`U = \{u_1, \dots, u_n\}` of
particles sampled from the canvas density (:mod:`~setfuncs.experiments.attention.particles`)
and reads it with a Deep Set (:class:`setfuncs.model.DeepSet`). Every particle's features are its
coordinates, fixed random Fourier features of them, the recurrent state, and its coordinates in
the frame of every earlier glimpse, so that the set function knows what earlier steps explained:

.. math::
    x_j &= \big[u_j,\ \sin(2\pi B^\top u_j),\ \cos(2\pi B^\top u_j),\ h_{i-1},\
           \operatorname{clip}_{\pm 3}\!\big((u_j - t_k)/s_k\big), 1 \ (k < i),\ 0 \ (k \ge i)\big], \\
    m_j &= \operatorname{embed}(x_j), \qquad
    C = \operatorname{combine}(M), \qquad
    a = \operatorname{aggregate}(C), \qquad
    r = \operatorname{process}(a), \\
    h_i &= \operatorname{LSTM}\big([r, z_{i-1}], h_{i-1}\big),

with :math:`B \in \mathbb{R}^{2 \times 32}`, :math:`B_{ab} \sim \mathcal{N}(0, 1)` drawn once
(:data:`FOURIER_FEATURES`, :data:`FOURIER_SCALE`, :data:`FOURIER_SEED`; not trained).
``embed`` is a two-layer ReLU MLP, ``combine`` a stack of equivariant layers (eq. (1); none by
default, see :class:`SetLocaliser`), ``aggregate`` the localiser's aggregation (plain: ``mean``,
``max``, ``sum``, ``lse``; learnable: ``q-sum``, ``r-sum``, ``r-lse``, ...) and ``process`` a
two-layer MLP. Every feature is computed per particle, so the localiser stays invariant to the
order of the particles.

*Why these features*: nothing in a sum of embeddings of the raw coordinates :math:`[u_j, h_{i-1}]`
says which particles an earlier box has already explained, so a second step has no reason to look
elsewhere; the glimpse-frame coordinates say it directly, and the Fourier features give a sum of
embeddings the resolution of a histogram of the particles, which is what the image localiser reads
from the pixels.

Because the LSTM's input is :math:`r` (a few dozen numbers) instead of the :math:`HW` pixels,
the set localiser has several times fewer weights (:func:`localiser_parameters`; chapter 11
counts them for every budget, against the paper's "an order of magnitude").
Both share the heads

.. math::
    \ell_i = w_\text{pres}^\top h_i + b, \quad
    \mu_i = \big(s_{\min} + (s_{\max} - s_{\min})\,\sigma(\cdot),\ \tanh(\cdot),\ \tanh(\cdot)\big), \quad
    \sigma_i = \operatorname{softplus}(\cdot) + 10^{-3},

all linear in :math:`h_i`, with :math:`(s_{\min}, s_{\max}) = (s_0 / 2, 3 s_0 / 2)` around the prior glimpse
scale :math:`s_0` (:func:`scale_range`).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from setfuncs.model import DeepSet, parameter_count

from .transformer import MIN_SCALE

__all__ = ["scale_range", "FOURIER_FEATURES", "FOURIER_SCALE", "FOURIER_SEED", "FIXED_FEATURES", "LocaliserOutput",
           "Prepared", "Localiser",
           "ImageLocaliser", "SetLocaliser", "make_localiser", "localiser_parameters", "IMAGE"]

def scale_range(where_scale: float) -> tuple[float, float]:
    """The range ``(s_0 / 2, 3 s_0 / 2)`` of the mean glimpse scale :math:`s` (a fraction of the canvas
    side) around the prior's :math:`s_0` = ``where_scale``: (0.2, 0.6) on the surrogate canvases, (0.28,
    0.84) on AIR's."""
    return where_scale / 2, 3 * where_scale / 2
#: How many fixed random Fourier features of a particle's coordinates the set localiser reads.
FOURIER_FEATURES = 32
#: The frequency scale of the Fourier features (cycles per unit of the normalised frame).
FOURIER_SCALE = 1.0
#: The seed that draws the Fourier features' frequencies.
FOURIER_SEED = 0
#: How many of a particle's features stay the same at every step (its coordinates and Fourier features).
FIXED_FEATURES = 2 + 2 * FOURIER_FEATURES
#: The name of the image localiser where a set localiser would have its spec.
IMAGE = "image"

#: ``(presence logit [B], z_where mean [B, 3], z_where std [B, 3], new state)``.
LocaliserOutput = tuple[Tensor, Tensor, Tensor, tuple[Tensor, Tensor]]


class Prepared(NamedTuple):
    """What a :class:`SetLocaliser` reads at every step: the particles ``[B, n, 2]`` and the part of its
    first layer that does not change from step to step ``[B, n, set_hidden]``."""

    particles: Tensor
    fixed: Tensor


class Localiser(nn.Module):
    """Shared parts: the LSTM cell over ``[read, z_{i-1}]`` and the presence and where heads.

    Subclasses define ``read`` (what the LSTM sees of the scene) and ``reads``, ``"image"`` or
    ``"particles"``: which input :meth:`forward` takes.
    """

    reads: str = ""

    def __init__(self, read_features: int, latent_features: int, hidden: int, where_scale: float = 0.4) -> None:
        super().__init__()
        self.hidden = hidden
        self.scale_range = scale_range(where_scale)
        self.latent_features = latent_features
        self.lstm = nn.LSTMCell(read_features + latent_features, hidden)
        self.head = nn.Linear(hidden, 7)
        with torch.no_grad():  # start near "present (0.88), scale s_0, central, std 0.05"
            self.head.weight[[0, 1, 4, 5, 6]] *= 0.1
            self.head.bias.copy_(torch.tensor([2.0, 0.0, 0.0, 0.0, -3.0, -3.0, -3.0]))

    def initial_state(self, batch: int, like: Tensor) -> tuple[Tensor, Tensor]:
        """Zero ``(h, c)`` for ``batch`` scenes."""
        zeros = like.new_zeros(batch, self.hidden)
        return zeros, zeros

    def prepare(self, scene: Tensor) -> Any:
        """What every step reads of ``scene``, computed once before the first (here: the scene)."""
        return scene

    def read(self, scene: Any, h: Tensor, wheres: Tensor) -> Tensor:
        raise NotImplementedError

    def forward(self, scene: Any, previous: Tensor, state: tuple[Tensor, Tensor],
                wheres: Tensor | None = None) -> LocaliserOutput:
        """One step: ``scene`` (canvases ``[B, H, W]`` or particles ``[B, n, 2]``, or what
        :meth:`prepare` made of them), the previous latents ``[B, latent_features]``, the state
        ``(h, c)`` and the ``z_where`` samples of the earlier steps ``[B, i - 1, 3]`` (None or empty at
        the first step)."""
        if isinstance(scene, Tensor):
            scene = self.prepare(scene)
        if wheres is None:
            wheres = previous.new_zeros(previous.shape[0], 0, 3)
        h, c = self.lstm(torch.cat([self.read(scene, state[0], wheres), previous], -1), state)
        out = self.head(h)
        low, high = self.scale_range
        mean = torch.stack([low + (high - low) * out[:, 1].sigmoid(), out[:, 2].tanh(), out[:, 3].tanh()], -1)
        std = F.softplus(out[:, 4:7]) + 1e-3
        return out[:, 0], mean, std, (h, c)


class ImageLocaliser(Localiser):
    """The original AIR localiser: an LSTM reading the flattened canvas ``[B, H, W]`` at every step."""

    reads = "image"

    def __init__(self, canvas_size: int, latent_features: int, hidden: int = 64, where_scale: float = 0.4) -> None:
        super().__init__(canvas_size * canvas_size, latent_features, hidden, where_scale)
        self.canvas_size = canvas_size

    def read(self, scene: Tensor, h: Tensor, wheres: Tensor) -> Tensor:
        if scene.ndim != 3 or scene.shape[1:] != (self.canvas_size, self.canvas_size):
            raise ValueError(f"the image localiser reads canvases [B, {self.canvas_size}, {self.canvas_size}], "
                             f"got shape {tuple(scene.shape)}")
        return scene.flatten(1)


class SetLocaliser(Localiser):
    r"""The set-based localiser: a Deep Set over the particles ``[B, n, 2]``, each concatenated with
    the recurrent state ``h_{i-1}``.

    Args:
        aggregation: the Deep Set's aggregation (``"mean"``, ``"max"``, ``"sum"``, ``"lse"``,
            ``"q-sum"``, ``"r-sum"``, ``"r-lse"``, ...), final and inside any equivariant layers.
        latent_features: size of the previous step's latents.
        hidden: LSTM state size; set_hidden: width of the Deep Set.
        equivariant_layers: equivariant layers in ``combine`` (default 0, see below); steps: reads
            of recurrent aggregations.
        max_steps: AIR's steps ``K`` (the localiser sees the ``K - 1`` earlier glimpses).
        readout: of recurrent aggregations (``r-*``): ``"last"`` (default here, :math:`a_T`) or
            ``"backward"`` (the paper's LSTM over :math:`a_T, \dots, a_1`), which squeezes the
            positions the localiser needs through another recurrent layer;
            ``scripts/probes/attention_design.py`` compares the two in QUICK runs of ``r-lse``.

    Why no equivariant layers by default: eq. (1) subtracts the aggregate from every particle,
    :math:`\sigma(X - \mathbf{1}\alpha(X))`, which for nearly linear embeddings of coordinates
    removes their common translation -- exactly the information a localiser needs;
    ``scripts/probes/attention_design.py`` compares none against one in QUICK runs of ``mean``.
    """

    reads = "particles"

    def __init__(self, aggregation: str, latent_features: int, hidden: int = 64, set_hidden: int = 32,
                 equivariant_layers: int = 0, steps: int = 3, max_steps: int = 3, readout: str = "last",
                 where_scale: float = 0.4) -> None:
        if not isinstance(aggregation, str) or "/" in aggregation:
            raise ValueError(f"the set localiser takes one aggregation spec such as 'mean' or 'r-lse', got "
                             f"{aggregation!r}")
        super().__init__(set_hidden, latent_features, hidden, where_scale)
        self.spec = aggregation
        self.max_previous = max_steps - 1
        generator = torch.Generator().manual_seed(FOURIER_SEED)
        self.register_buffer("frequencies", FOURIER_SCALE * torch.randn(2, FOURIER_FEATURES, generator=generator))
        self.deep_set = DeepSet(2 + 2 * FOURIER_FEATURES + hidden + 3 * self.max_previous, set_hidden, f"{aggregation}/{aggregation}", hidden=set_hidden,
                                embed_layers=2, equivariant_layers=equivariant_layers, process_layers=2,
                                steps=steps, activation="relu",
                                learnable_options={"readout": readout} if aggregation.startswith("r-") else None)

    def prepare(self, scene: Tensor) -> Prepared:
        """The particles and the part of the Deep Set's first layer that reads what stays the same at
        every step, their coordinates and Fourier features (see :meth:`read`)."""
        if scene.ndim != 3 or scene.shape[-1] != 2:
            raise ValueError(f"the set localiser reads particles [B, n, 2], got shape {tuple(scene.shape)}; "
                             f"sample them with sample_particles")
        phase = 2 * math.pi * scene @ self.frequencies
        fixed = torch.cat([scene, phase.sin(), phase.cos()], -1)        # FIXED_FEATURES columns
        return Prepared(scene, fixed @ self.deep_set.embed[0].weight[:, :FIXED_FEATURES].T)

    def read(self, scene: Prepared, h: Tensor, wheres: Tensor) -> Tensor:
        r"""The Deep Set of the particle features :math:`x_j` (module docstring), its first layer
        :math:`W x_j + b` computed in parts, the same sum: the coordinates' and Fourier features' part
        once per scene (:meth:`prepare`), the state's part :math:`W_h h_{i-1} + b` once per canvas,
        and only the glimpse-frame part per particle and step."""
        particles, fixed = scene
        if particles.shape[0] != h.shape[0]:
            raise ValueError(f"the set localiser reads particles [B, n, 2] for the B = {h.shape[0]} canvases, "
                             f"got shape {tuple(particles.shape)}; sample them with sample_particles")
        if wheres.shape[1] > self.max_previous:
            raise ValueError(f"the set localiser was built for {self.max_previous + 1} steps, got "
                             f"{wheres.shape[1]} earlier glimpses")
        first = self.deep_set.embed[0]
        start = FIXED_FEATURES + self.hidden              # the first layer's columns: fixed, state, glimpse frames
        shared = F.linear(h, first.weight[:, FIXED_FEATURES:start], first.bias)
        pre = fixed + shared.unsqueeze(1) + self.explained(particles, wheres) @ first.weight[:, start:].T
        return self.deep_set.process(self.deep_set.aggregate(self.deep_set.memory_from_first_layer(pre)))

    def explained(self, particles: Tensor, wheres: Tensor) -> Tensor:
        r"""Every particle's coordinates in the frame of every earlier glimpse and a flag that the
        glimpse exists, ``[B, n, 3 * max_previous]``: :math:`\operatorname{clip}((u - t_k) / s_k, -3, 3)`
        and 1 for the earlier steps :math:`k`, zeros for the steps still to come."""
        b, n, _ = particles.shape
        parts = []
        for k in range(self.max_previous):
            if k < wheres.shape[1]:
                s = wheres[:, k, :1].clamp_min(MIN_SCALE).unsqueeze(1)
                relative = ((particles - wheres[:, k, 1:].unsqueeze(1)) / s).clamp(-3, 3)
                parts += [relative, particles.new_ones(b, n, 1)]
            else:
                parts.append(particles.new_zeros(b, n, 3))
        return torch.cat(parts, -1) if parts else particles.new_zeros(b, n, 0)


def make_localiser(spec: str, canvas_size: int, latent_features: int, hidden: int = 64, set_hidden: int = 32,
                   equivariant_layers: int = 0, steps: int = 3, max_steps: int = 3, readout: str = "last",
                   where_scale: float = 0.4) -> Localiser:
    """:class:`ImageLocaliser` for ``spec == "image"``, else a :class:`SetLocaliser` with that aggregation."""
    if spec == IMAGE:
        return ImageLocaliser(canvas_size, latent_features, hidden, where_scale)
    return SetLocaliser(spec, latent_features, hidden, set_hidden, equivariant_layers, steps, max_steps, readout,
                        where_scale)


def localiser_parameters(canvas_size: int, latent_features: int, hidden: int = 64, set_hidden: int = 32,
                         spec: str = "mean") -> dict[str, int]:
    """Trainable weights of both localisers at these sizes: ``{"image": ..., spec: ...}``."""
    return {IMAGE: parameter_count(ImageLocaliser(canvas_size, latent_features, hidden)),
            spec: parameter_count(SetLocaliser(spec, latent_features, hidden, set_hidden))}
