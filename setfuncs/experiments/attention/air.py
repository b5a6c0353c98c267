r"""Attend-Infer-Repeat (Eslami et al. 2016) with an exchangeable localiser, and its ELBO.

**Generative model.** A canvas :math:`x \in [0,1]^{H \times W}` shows :math:`N \le K` objects
(:math:`K` = ``max_steps`` = 3 for zero to two digits, one spare step). The count has the
geometric-like prior :math:`p(N = k) = \rho^k (1 - \rho)` for :math:`k < K` and
:math:`p(N = K) = \rho^K`, with :math:`\rho` = :data:`PRESENCE_PRIOR` = 0.01, so every object
costs :math:`\ln 100 \approx 4.6` nats, and the model adds an object only when it explains enough
of the canvas to pay for it; every object has
:math:`z^\text{what}_i \sim \mathcal{N}(0, I)` (``what_features`` dimensions) and
:math:`z^\text{where}_i = (s, t_x, t_y) \sim \mathcal{N}((s_0, 0, 0), \operatorname{diag}(\sigma_s^2, 1, 1))`
(:func:`where_prior`: :math:`s_0` the digits' share of the canvas side, 28 of 50 pixels on AIR's
multi-MNIST canvases, 0.4 on the 32-pixel surrogate's with digits of 10 to 14 pixels
(:class:`~setfuncs.experiments.attention.canvas.Geometry`), and :math:`\sigma_s` =
:data:`WHERE_SCALE_STD` = 0.05, so that a glimpse much larger than a digit costs nats). A decoder (an MLP, the
*what*-VAE's) turns :math:`z^\text{what}_i` into a :math:`g \times g` glimpse (sigmoid pixels),
the spatial transformer places it at :math:`z^\text{where}_i`
(:func:`~setfuncs.experiments.attention.transformer.place`), and the canvas mean
:math:`\bar x` is the sum of the placed glimpses. **Likelihood**: independent Gaussians
:math:`x_{jk} \sim \mathcal{N}(\bar x_{jk}, \sigma_x^2)` with :math:`\sigma_x` =
:data:`LIKELIHOOD_STD` = 0.3 (as Pyro's AIR on multi-MNIST) on the surrogate canvases, and 0.45 on
the 50 x 50 MNIST canvases (the canvases' geometry sets it, :data:`~setfuncs.experiments.attention.canvas.MULTI_MNIST`:
there 0.3 makes the model use every step on every canvas). We choose a Gaussian over a
Bernoulli because the canvases are continuous intensities (a Bernoulli "likelihood" of grey
values is not a normalised density, so its ELBO would bound nothing), and because the sum of
overlapping glimpses may exceed 1, which a Gaussian mean allows. An all-black canvas has
:math:`\log p(x \mid N = 0) = HW(-\ln \sigma_x - \tfrac12 \ln 2\pi)` nats (about 292 on a 32 x 32
canvas at 0.3, -301 on a 50 x 50 one at 0.45), the largest value any ELBO on such a canvas can reach.

**Inference network.** Step :math:`i` asks the localiser
(:mod:`~setfuncs.experiments.attention.localisers`) for :math:`q(z^\text{pres}_i = 1 \mid
\cdot) = \sigma(\ell_i)` and :math:`q(z^\text{where}_i \mid \cdot)`, reads the glimpse at a sample
of :math:`z^\text{where}_i` (:func:`~setfuncs.experiments.attention.transformer.glimpse`) and
encodes it into :math:`q(z^\text{what}_i \mid \text{glimpse}) = \mathcal{N}(\mu, \sigma^2)` (an
MLP, the *what*-VAE's encoder). The presence chain stops at the first :math:`z^\text{pres}_i = 0`.

**The ELBO, and the discrete presence variable.** The presence chain makes the count
:math:`N` discrete with only :math:`K + 1 = 4` values, and every step after the first absent
one is irrelevant. So instead of a score-function estimator (REINFORCE with a learned baseline,
the original's choice, whose variance makes AIR "notoriously hard to train") or a Concrete
relaxation (biased: trains a relaxed model, not the ELBO), we **sum the presence variable out
exactly**: the network runs all :math:`K` steps as if every object so far were present
(:math:`z^\text{pres}_{<i} = 1`, the only history under which step :math:`i` matters), and

.. math::
    q(N = k) &= \prod_{i \le k} \sigma(\ell_i) \cdot \big(1 - \sigma(\ell_{k+1})\big)^{[k < K]}, \\
    \mathcal{L}(x) &= \sum_{k=0}^{K} q(N = k) \Big[ \log p\big(x \mid z_{1:k}\big)
        + \log p(N = k) - \log q(N = k)
        - \sum_{i \le k} \big( \mathrm{KL}(q(z^\text{where}_i) \,\|\, p) + \mathrm{KL}(q(z^\text{what}_i) \,\|\, p) \big)
        \Big],

with one reparameterised sample of every :math:`z^\text{where}_i, z^\text{what}_i` and analytic
Gaussian KLs given that sample's history. :math:`\mathcal{L}` is exactly the expectation over the
presence samples of the usual single-sample ELBO, so it is a true lower bound on
:math:`\log p(x)` in expectation over the continuous samples, with zero variance from the
discrete part; it costs :math:`K + 1` likelihood evaluations, whose means are cumulative sums of
the placed glimpses. Training maximises it with the reparameterisation gradient; evaluation
reports it per canvas (:meth:`AIR.elbo`). The most probable count
:math:`\arg\max_k q(N = k)` is the model's count; :meth:`AIR.sample` draws discrete presences for
pictures of the boxes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .localisers import IMAGE, Localiser, make_localiser
from .transformer import glimpse, place

__all__ = ["WHERE_SCALE_STD", "where_prior", "PRESENCE_PRIOR", "LIKELIHOOD_STD", "Inference", "AIR", "gaussian_kl"]

#: The prior std :math:`\sigma_s` of the glimpse scale (the shifts' is 1).
WHERE_SCALE_STD = 0.05


def where_prior(scale: float) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Prior mean and std of ``z_where = (scale, shift_x, shift_y)`` for a prior glimpse scale :math:`s_0`
    = ``scale``: ``((scale, 0, 0), (WHERE_SCALE_STD, 1, 1))``."""
    return (scale, 0.0, 0.0), (WHERE_SCALE_STD, 1.0, 1.0)
#: :math:`\rho`: the prior probability that one more object is present.
PRESENCE_PRIOR = 0.01
#: :math:`\sigma_x`: the standard deviation of the Gaussian likelihood of every pixel.
LIKELIHOOD_STD = 0.3


def gaussian_kl(mean: Tensor, std: Tensor, prior_mean: Tensor, prior_std: Tensor) -> Tensor:
    r""":math:`\mathrm{KL}(\mathcal{N}(\mu, \sigma^2) \,\|\, \mathcal{N}(\mu_0, \sigma_0^2))` summed over the last axis."""
    var_ratio = (std / prior_std) ** 2
    return 0.5 * (var_ratio + ((mean - prior_mean) / prior_std) ** 2 - 1 - var_ratio.log()).sum(-1)


class Inference(NamedTuple):
    """One pass of the inference network over ``B`` canvases and all ``K`` steps.

    ``presence_logits [B, K]``, ``where [B, K, 3]`` (samples; the means with ``noise=False``),
    ``where_mean [B, K, 3]``, ``kl [B, K]`` (KL of where plus what at each step), ``placed [B, K, H, W]``
    (each step's decoded glimpse on the canvas).
    """

    presence_logits: Tensor
    where: Tensor
    where_mean: Tensor
    kl: Tensor
    placed: Tensor


class AIR(nn.Module):
    r"""Attend-Infer-Repeat with the localiser named by ``spec`` (module docstring).

    Args:
        spec: ``"image"`` for the original localiser, or the aggregation of the set-based one
            (e.g. ``"mean"``, ``"r-lse"``), which reads particles.
        canvas_size: ``H = W`` of the canvases.
        max_steps: ``K``, the most objects per canvas.
        glimpse_size: ``g``, the side of a glimpse in pixels.
        what_features: dimensions of ``z_what``.
        hidden: the localiser's LSTM state and the what-VAE's hidden width.
        set_hidden, equivariant_layers, steps, readout: the set localiser's Deep Set width,
            equivariant layers, and reads and readout of recurrent aggregations
            (:class:`~setfuncs.experiments.attention.localisers.SetLocaliser`).
        presence_prior, likelihood_std: :math:`\rho` and :math:`\sigma_x`.
        where_scale: :math:`s_0`, the prior mean of the glimpse scale (:func:`where_prior`), which also
            centres the localiser's range of scales
            (:func:`~setfuncs.experiments.attention.localisers.scale_range`).
    """

    def __init__(self, spec: str, canvas_size: int = 32, max_steps: int = 3, glimpse_size: int = 12,
                 what_features: int = 8, hidden: int = 64, set_hidden: int = 32, equivariant_layers: int = 0,
                 steps: int = 3, readout: str = "last", presence_prior: float = PRESENCE_PRIOR,
                 likelihood_std: float = LIKELIHOOD_STD, where_scale: float = 0.4) -> None:
        super().__init__()
        if max_steps < 1 or glimpse_size < 2 or what_features < 1:
            raise ValueError(f"need max_steps >= 1, glimpse_size >= 2 and what_features >= 1, got {max_steps}, "
                             f"{glimpse_size}, {what_features}")
        if not 0 < presence_prior < 1 or likelihood_std <= 0:
            raise ValueError(f"need 0 < presence_prior < 1 and likelihood_std > 0, got {presence_prior}, "
                             f"{likelihood_std}")
        if not 0 < where_scale < 1:
            raise ValueError(f"need 0 < where_scale < 1 (the prior glimpse scale, a fraction of the canvas side), "
                             f"got {where_scale}")
        self.spec = spec
        self.canvas_size, self.max_steps, self.glimpse_size = canvas_size, max_steps, glimpse_size
        self.what_features = what_features
        self.presence_prior, self.likelihood_std, self.where_scale = presence_prior, likelihood_std, where_scale
        self.latent_features = 3 + what_features + 1
        self.localiser: Localiser = make_localiser(spec, canvas_size, self.latent_features, hidden, set_hidden,
                                                   equivariant_layers, steps, max_steps, readout, where_scale)
        pixels = glimpse_size * glimpse_size
        self.encoder = nn.Sequential(nn.Linear(pixels, hidden), nn.ELU(), nn.Linear(hidden, 2 * what_features))
        self.decoder = nn.Sequential(nn.Linear(what_features, hidden), nn.ELU(), nn.Linear(hidden, pixels))
        with torch.no_grad():  # decoded glimpses start dark, so early objects do not paint the canvas grey
            self.decoder[-1].bias.fill_(-2.0)
        prior_mean, prior_std = where_prior(where_scale)
        self.register_buffer("where_prior_mean", torch.tensor(prior_mean))
        self.register_buffer("where_prior_std", torch.tensor(prior_std))

    @property
    def reads_particles(self) -> bool:
        """Whether the localiser reads a particle population (else the canvas)."""
        return self.localiser.reads == "particles"

    def _check(self, canvases: Tensor, particles: Tensor | None) -> Tensor:
        h = self.canvas_size
        if canvases.ndim != 3 or canvases.shape[1:] != (h, h):
            raise ValueError(f"canvases must be [B, {h}, {h}], got shape {tuple(canvases.shape)}")
        if self.reads_particles:
            if particles is None:
                raise ValueError(f"the set localiser {self.spec!r} reads particles: pass particles [B, n, 2] "
                                 f"from sample_particles(canvases, n)")
            if particles.ndim != 3 or particles.shape[0] != canvases.shape[0] or particles.shape[2] != 2:
                raise ValueError(f"particles must be [B, n, 2] for the B = {canvases.shape[0]} canvases, got "
                                 f"shape {tuple(particles.shape)}")
            return particles
        return canvases

    def infer(self, canvases: Tensor, particles: Tensor | None = None, noise: bool = True) -> Inference:
        r"""Run the inference network for all ``K`` steps (every earlier object present), each step's
        latents one reparameterised sample, :math:`z^\text{where}_i = \mu_i + \sigma_i \odot \epsilon_i` and
        :math:`z^\text{what}_i = \mu'_i + \sigma'_i \odot \epsilon'_i` with :math:`\epsilon_i, \epsilon'_i \sim
        \mathcal{N}(0, I)`; with ``noise=False`` the means, :math:`z^\text{where}_i = \mu_i` and
        :math:`z^\text{what}_i = \mu'_i` (deterministic: what chapter 11's explorable runs in the browser,
        ``setfuncs.explorables.air_boxes``)."""
        scene = self.localiser.prepare(self._check(canvases, particles))
        b = canvases.shape[0]
        state = self.localiser.initial_state(b, canvases)
        previous = canvases.new_zeros(b, self.latent_features)
        logits, wheres, means, kls, placed = [], [], [], [], []
        for _ in range(self.max_steps):
            history = torch.stack(wheres, 1) if wheres else canvases.new_zeros(b, 0, 3)
            logit, where_mean, where_std, state = self.localiser(scene, previous, state, history)
            where = where_mean + where_std * torch.randn_like(where_std) if noise else where_mean
            look = glimpse(canvases, where, self.glimpse_size).flatten(1)
            what_mean, what_raw = self.encoder(look).chunk(2, -1)
            what_std = F.softplus(what_raw) + 1e-3
            what = what_mean + what_std * torch.randn_like(what_std) if noise else what_mean
            image = self.decoder(what).sigmoid().view(b, self.glimpse_size, self.glimpse_size)
            placed.append(place(image, where, self.canvas_size))
            kls.append(gaussian_kl(where_mean, where_std, self.where_prior_mean, self.where_prior_std)
                       + gaussian_kl(what_mean, what_std, torch.zeros_like(what_mean), torch.ones_like(what_std)))
            logits.append(logit)
            wheres.append(where)
            means.append(where_mean)
            previous = torch.cat([where, what, torch.ones_like(logit).unsqueeze(-1)], -1)
        return Inference(torch.stack(logits, 1), torch.stack(wheres, 1), torch.stack(means, 1),
                         torch.stack(kls, 1), torch.stack(placed, 1))

    def count_log_probs(self, presence_logits: Tensor) -> Tensor:
        """:math:`\\log q(N = k)` ``[B, K + 1]`` from the presence logits ``[B, K]``."""
        present = F.logsigmoid(presence_logits).cumsum(1)
        b = presence_logits.shape[0]
        before = torch.cat([presence_logits.new_zeros(b, 1), present], 1)          # log prod_{i<=k} p_i
        stop = torch.cat([F.logsigmoid(-presence_logits), presence_logits.new_zeros(b, 1)], 1)
        return before + stop

    def prior_count_log_probs(self, like: Tensor) -> Tensor:
        """:math:`\\log p(N = k)` ``[K + 1]``."""
        k = torch.arange(self.max_steps + 1, dtype=like.dtype, device=like.device)
        stop = torch.where(k < self.max_steps, math.log(1 - self.presence_prior), 0.0)
        return k * math.log(self.presence_prior) + stop

    def elbo(self, canvases: Tensor, particles: Tensor | None = None, inference: Inference | None = None
             ) -> tuple[Tensor, Tensor]:
        """The ELBO of every canvas ``[B]`` (nats) and :math:`q(N = k)` ``[B, K + 1]`` (module docstring)."""
        inf = self.infer(canvases, particles) if inference is None else inference
        b = canvases.shape[0]
        means = torch.cat([canvases.new_zeros(b, 1, self.canvas_size, self.canvas_size),
                           inf.placed.cumsum(1)], 1)                                 # [B, K+1, H, W]
        sigma = self.likelihood_std
        log_lik = (-0.5 * ((canvases.unsqueeze(1) - means) / sigma) ** 2
                   - math.log(sigma) - 0.5 * math.log(2 * math.pi)).flatten(2).sum(-1)
        kl = torch.cat([canvases.new_zeros(b, 1), inf.kl.cumsum(1)], 1)
        log_q = self.count_log_probs(inf.presence_logits)
        terms = log_lik + self.prior_count_log_probs(canvases) - log_q - kl
        q = log_q.exp()
        return (q * terms).sum(1), q

    def sample(self, canvases: Tensor, particles: Tensor | None = None, generator: torch.Generator | None = None
               ) -> tuple[Tensor, Tensor]:
        """Draw the discrete count from :math:`q(N)` and return ``(where [B, K, 3], present [B, K] bool)``:
        the sampled boxes, of which the first ``N`` are present."""
        with torch.no_grad():
            inf = self.infer(canvases, particles)
            q = self.count_log_probs(inf.presence_logits).exp()
            counts = torch.multinomial(q, 1, generator=generator).squeeze(1)
        present = torch.arange(self.max_steps, device=counts.device).unsqueeze(0) < counts.unsqueeze(1)
        return inf.where, present

    def extra_repr(self) -> str:
        return (f"spec={self.spec!r}, canvas={self.canvas_size}, K={self.max_steps}, glimpse={self.glimpse_size}, "
                f"what={self.what_features}" + ("" if self.spec == IMAGE else ", reads particles"))
