"""The spatial-attention model (Section 4.4): the spatial transformer, the two localisers, the
ELBO of Attend-Infer-Repeat with the presence chain summed out, and a tiny training run."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from setfuncs.experiments.attention import (SURROGATE, AIR, IMAGE, QUICK, SET_SPECS, ImageLocaliser, SetLocaliser, box_iou,
                                            boxes_to_where, digit_pools, evaluate_at, glimpse, localiser_parameters,
                                            make_air, make_canvases, place, sample_particles, train_air)
from setfuncs.experiments.attention.air import gaussian_kl
from setfuncs.model import parameter_count


def _square(x0: int, y0: int, side: int, size: int = 32) -> torch.Tensor:
    canvas = torch.zeros(1, size, size)
    canvas[0, y0:y0 + side, x0:x0 + side] = 1.0
    return canvas


def test_a_glimpse_is_read_where_z_where_says() -> None:
    canvas = _square(4, 18, 8)                                                  # columns 4..11, rows 18..25
    where = torch.as_tensor(boxes_to_where(np.array([[4, 18, 12, 26]]), 32))
    np.testing.assert_allclose(where.numpy(), [[0.25, -0.5, 0.375]])
    look = glimpse(canvas, where, 8)
    torch.testing.assert_close(look, torch.ones(1, 8, 8))                       # pixel-exact window
    bigger = glimpse(canvas, where * torch.tensor([2.0, 1, 1]), 16)             # twice as wide, same centre
    assert bigger[0, 4:12, 4:12].min() > 0.99 and bigger[0, :3].max() < 1e-6 and bigger[0, :, 13:].max() < 1e-6
    rows, cols = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    centre = ((bigger[0] * rows).sum() / bigger[0].sum(), (bigger[0] * cols).sum() / bigger[0].sum())
    assert abs(centre[0] - 7.5) < 0.1 and abs(centre[1] - 7.5) < 0.1            # the square is centred
    elsewhere = glimpse(canvas, torch.tensor([[0.25, 0.5, -0.5]]), 8)
    assert elsewhere.max() < 1e-6
    with pytest.raises(ValueError, match="z_where"):
        glimpse(canvas, torch.zeros(1, 2), 8)


@pytest.mark.parametrize("h, w", [(8, 8), (5, 12), (32, 32)])
def test_the_affine_grid_is_torchs(h: int, w: int) -> None:
    """The batched-product grid the glimpses use equals torch.nn.functional.affine_grid (align_corners=False)."""
    from setfuncs.experiments.attention.transformer import affine_grid
    theta = torch.randn(6, 2, 3, generator=torch.Generator().manual_seed(h * w))
    expected = torch.nn.functional.affine_grid(theta, [6, 1, h, w], align_corners=False)
    torch.testing.assert_close(affine_grid(theta, h, w), expected, rtol=1e-6, atol=1e-6)


def test_place_inverts_glimpse() -> None:
    torch.manual_seed(0)
    canvas = torch.zeros(2, 32, 32)
    canvas[0, 8:20, 10:22] = torch.rand(12, 12)
    canvas[1, 2:14, 16:28] = torch.rand(12, 12)
    where = torch.as_tensor(boxes_to_where(np.array([[10, 8, 22, 20], [16, 2, 28, 14]]), 32))
    looks = glimpse(canvas, where, 12)
    torch.testing.assert_close(looks[0], canvas[0, 8:20, 10:22])
    torch.testing.assert_close(place(looks, where, 32), canvas)                 # written back where it was read
    # at a non-pixel-aligned scale the round trip still restores the window's interior
    smooth = torch.exp(-((torch.arange(32.0) - 15.5) ** 2)[:, None] / 40 - ((torch.arange(32.0) - 15.5) ** 2) / 40)
    where = torch.tensor([[0.7, 0.05, -0.03]])
    back = place(glimpse(smooth[None], where, 24), where, 32)
    torch.testing.assert_close(back[0, 8:24, 8:24], smooth[8:24, 8:24], atol=0.02, rtol=0)
    assert back[0, :2].abs().max() < 1e-6                                         # zeros outside the window


def _setup(n: int = 30, count: int = 6):
    images = torch.as_tensor(make_canvases(count, 0).images)
    particles = sample_particles(images, n, torch.Generator().manual_seed(0))
    return images, particles


@pytest.mark.parametrize("spec", (IMAGE,) + SET_SPECS)
def test_the_elbo_is_finite_for_every_localiser(spec: str) -> None:
    images, particles = _setup()
    torch.manual_seed(0)
    model = AIR(spec, hidden=16, set_hidden=8, what_features=4, glimpse_size=6, steps=2)
    elbo, q = model.elbo(images, particles if model.reads_particles else None)
    assert elbo.shape == (6,) and torch.isfinite(elbo).all()
    assert q.shape == (6, 4) and torch.allclose(q.sum(1), torch.ones(6)) and (q >= 0).all()
    # an upper limit of any Gaussian likelihood of 1024 pixels with std 0.3, and of the ELBO
    assert (elbo < 1024 * (-math.log(0.3) - 0.5 * math.log(2 * math.pi))).all()
    (-elbo.mean()).backward()
    grads = [p.grad for p in model.localiser.parameters() if p.grad is not None]
    assert grads and any(g.abs().sum() > 0 for g in grads)


def test_the_count_distribution_is_the_presence_chain() -> None:
    model = AIR("mean", hidden=8, set_hidden=8)
    logits = torch.tensor([[0.3, -1.2, 2.0]])
    p = torch.sigmoid(logits)[0]
    expected = [1 - p[0], p[0] * (1 - p[1]), p[0] * p[1] * (1 - p[2]), p[0] * p[1] * p[2]]
    torch.testing.assert_close(model.count_log_probs(logits).exp()[0], torch.stack(expected))
    prior = model.prior_count_log_probs(logits).exp()
    rho = model.presence_prior
    torch.testing.assert_close(prior, torch.tensor([1 - rho, rho * (1 - rho), rho ** 2 * (1 - rho), rho ** 3]))
    assert gaussian_kl(torch.zeros(3), torch.ones(3), torch.zeros(3), torch.ones(3)).item() == 0
    assert gaussian_kl(torch.ones(3), torch.ones(3), torch.zeros(3), torch.ones(3)).item() == pytest.approx(1.5)


def test_the_elbo_is_the_expectation_over_sampled_presences() -> None:
    """Summing the presence chain out equals averaging single-sample ELBOs over sampled counts."""
    images, particles = _setup(count=3)
    torch.manual_seed(0)
    model = AIR("max", hidden=16, set_hidden=8)
    with torch.no_grad():
        inference = model.infer(images, particles)
        elbo, q = model.elbo(images, particles, inference)
        generator = torch.Generator().manual_seed(0)
        counts = torch.multinomial(q, 20_000, replacement=True, generator=generator)        # [B, S]
        means = torch.cat([torch.zeros(3, 1, 32, 32), inference.placed.cumsum(1)], 1)
        log_lik = torch.distributions.Normal(means, 0.3).log_prob(images.unsqueeze(1)).flatten(2).sum(-1)
        kl = torch.cat([torch.zeros(3, 1), inference.kl.cumsum(1)], 1)
        terms = log_lik + model.prior_count_log_probs(images) - q.log() - kl
        sampled = terms.gather(1, counts).mean(1)
    torch.testing.assert_close(sampled, elbo, atol=0.05 * terms.std().item() + 0.5, rtol=0)


@pytest.mark.parametrize("spec", SET_SPECS)
def test_the_set_localiser_ignores_particle_order(spec: str) -> None:
    torch.manual_seed(0)
    localiser = SetLocaliser(spec, latent_features=12, hidden=16, set_hidden=8, steps=2).double().eval()
    particles = torch.rand(3, 25, 2, dtype=torch.float64) * 2 - 1
    previous = torch.randn(3, 12, dtype=torch.float64)
    state = (torch.randn(3, 16, dtype=torch.float64), torch.randn(3, 16, dtype=torch.float64))
    wheres = torch.tensor([[[0.4, 0.1, -0.2]]] * 3, dtype=torch.float64)
    out = localiser(particles, previous, state, wheres)
    permuted = localiser(particles[:, torch.randperm(25)], previous, state, wheres)
    for a, b in zip(out[:3] + out[3], permuted[:3] + permuted[3]):
        torch.testing.assert_close(a, b)
    other = localiser(particles[[1, 2, 0]], previous, state, wheres)
    assert not torch.allclose(other[1], out[1])                                # but it reads the particles


@pytest.mark.parametrize("spec", SET_SPECS)
@pytest.mark.parametrize("earlier", [0, 1, 2])
def test_the_set_localiser_reads_the_deep_set_of_its_particle_features(spec: str, earlier: int) -> None:
    """``read`` computes the Deep Set's first layer in parts (fixed features once per scene, the state
    once per canvas); it is the Deep Set of the whole feature vectors of the module docstring."""
    torch.manual_seed(1)
    localiser = SetLocaliser(spec, latent_features=12, hidden=16, set_hidden=8, steps=2).double().eval()
    particles = torch.rand(3, 25, 2, dtype=torch.float64) * 2 - 1
    h = torch.randn(3, 16, dtype=torch.float64)
    wheres = torch.rand(3, earlier, 3, dtype=torch.float64) * 0.5 + 0.1
    phase = 2 * math.pi * particles @ localiser.frequencies
    features = torch.cat([particles, phase.sin(), phase.cos(), h.unsqueeze(1).expand(-1, 25, -1),
                          localiser.explained(particles, wheres)], -1)
    torch.testing.assert_close(localiser.read(localiser.prepare(particles), h, wheres), localiser.deep_set(features),
                               rtol=1e-12, atol=1e-12)


def test_the_set_localiser_has_several_times_fewer_weights() -> None:
    counts = localiser_parameters(32, 12, hidden=64, set_hidden=32, spec="mean")
    assert counts[IMAGE] == parameter_count(ImageLocaliser(32, 12, 64))
    assert counts[IMAGE] > 280_000 and 5 < counts[IMAGE] / counts["mean"] < 15
    for spec in SET_SPECS:
        assert parameter_count(make_air(spec, QUICK, SURROGATE).localiser) * 3 < counts[IMAGE]


def test_bad_input_says_what_to_pass() -> None:
    images, particles = _setup()
    with pytest.raises(ValueError, match="reads particles"):
        AIR("mean").elbo(images)
    with pytest.raises(ValueError, match=r"canvases must be \[B, 32, 32\]"):
        AIR(IMAGE).elbo(images[:, :16])
    with pytest.raises(ValueError, match="particles must be"):
        AIR("mean").elbo(images, particles[:2])
    with pytest.raises(ValueError, match="one aggregation spec"):
        SetLocaliser("max/max", 12)
    with pytest.raises(ValueError, match="unknown aggregation"):
        AIR("median-of-three")
    with pytest.raises(ValueError, match="presence_prior"):
        AIR("mean", presence_prior=1.5)


def test_box_iou() -> None:
    np.testing.assert_allclose(box_iou(np.array([[0, 0, 2, 2]]), np.array([[0, 0, 2, 2], [1, 0, 3, 2], [5, 5, 6, 6]])),
                               [[1.0, 1 / 3, 0.0]])


def test_a_tiny_run_increases_the_elbo() -> None:
    """Sixty steps of the set localiser with mean aggregation on 200 canvases: the training loss
    falls and the test ELBO rises by many nats (measured: 88 -> 168 nats per canvas)."""
    budget = replace(QUICK, name="tiny", steps=60, batch=16, train_canvases=200, particles=50)
    train, test = digit_pools()
    canvases, held_out = make_canvases(200, 0, train), make_canvases(60, 1, test)
    torch.manual_seed(0)
    model = make_air("mean", budget, SURROGATE)
    before = evaluate_at(model, held_out, 50, seed=0)["elbo"]
    losses = train_air(model, canvases.images, budget, seed=1)
    after = evaluate_at(model, held_out, 50, seed=0)["elbo"]
    assert len(losses) == 60 and all(np.isfinite(losses))
    assert np.mean(losses[-10:]) < np.mean(losses[:10]) - 0.01
    assert after > before + 20


def test_the_canvases_geometry_sets_the_likelihoods_sigma() -> None:
    """The surrogate canvases train at LIKELIHOOD_STD, the 50 x 50 MNIST canvases at their own sigma_x (0.45, where
    the image localiser counts), through make_air, and the provenance records the one used."""
    from setfuncs.experiments.attention import LIKELIHOOD_STD, QUICK
    from setfuncs.experiments.attention.canvas import MULTI_MNIST, SURROGATE
    from setfuncs.experiments.attention.train import make_air

    assert SURROGATE.likelihood_std == LIKELIHOOD_STD and MULTI_MNIST.likelihood_std > LIKELIHOOD_STD
    for geometry in (SURROGATE, MULTI_MNIST):
        assert make_air("mean", QUICK, geometry).likelihood_std == geometry.likelihood_std
