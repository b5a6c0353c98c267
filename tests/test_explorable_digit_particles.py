"""Chapter 11's explorable (setfuncs.explorables.digit_particles): the populations the page draws with
mulberry32 come from the same density as the package's ``sample_particles``.

The pixels are drawn with the probabilities of ``pixel_probabilities`` (a chi-square test on 100,000
particles), a particle lies in its pixel's square of the normalised frame as the package places it, an
empty canvas gives uniform particles, a larger population keeps the particles of a smaller one, and
the share of the density inside a box counts whole and partly covered pixels.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from setfuncs.experiments.attention.canvas import make_canvases
from setfuncs.experiments.attention.particles import pixel_probabilities, sample_particles
from setfuncs.explorables.digit_particles import LEVELS, DigitParticles, _share_in_box, sample_population


def canvas() -> tuple[np.ndarray, list[int]]:
    """A canvas with two digits and its integer intensities, as the page carries them."""
    canvases = make_canvases(8, seed=2)
    image = canvases.images[int(np.flatnonzero(canvases.counts == 2)[0])]
    return image, np.rint(image * LEVELS).astype(int).ravel().tolist()


def test_pixels_are_drawn_with_the_package_probabilities() -> None:
    image, levels = canvas()
    size, n = image.shape[0], 100_000
    particles = sample_population(levels, size, n, seed=11)
    cols = np.floor((particles[:, 0] + 1) * size / 2).astype(int)
    rows = np.floor((particles[:, 1] + 1) * size / 2).astype(int)
    counts = np.bincount(rows * size + cols, minlength=size * size)
    probs = pixel_probabilities(torch.as_tensor(np.array(levels, dtype=np.float32).reshape(1, size, size)))[0]
    probs = probs.double().numpy().ravel()
    assert counts[probs == 0].sum() == 0, "no particle on a black pixel"
    lit = probs > 0
    expected = n * probs[lit] / probs[lit].sum()
    chi2 = float(((counts[lit] - expected) ** 2 / expected).sum())
    assert stats.chi2.sf(chi2, lit.sum() - 1) > 1e-3, f"chi-square {chi2:.0f} on {lit.sum() - 1} degrees of freedom"
    # the package's own sampler, on the rounded canvas, puts the same share of particles in each half
    theirs = sample_particles(torch.tensor(np.array(levels, dtype=np.float32).reshape(1, size, size)), 20_000,
                              torch.Generator().manual_seed(0))[0].numpy()
    for axis in (0, 1):
        assert np.mean(particles[:, axis] < 0) == pytest.approx(np.mean(theirs[:, axis] < 0), abs=0.02)


def test_a_particle_lies_in_its_pixel_as_the_package_places_it() -> None:
    size = 6
    levels = [0] * size * size
    levels[2 * size + 4] = 37  # row 2, column 4
    ours = sample_population(levels, size, 200, seed=3)
    theirs = sample_particles(torch.tensor(np.array(levels, dtype=np.float32).reshape(1, size, size)), 200,
                              torch.Generator().manual_seed(0))[0].numpy()
    for population in (ours, theirs):
        assert population[:, 0].min() >= 2 * 4 / size - 1 and population[:, 0].max() <= 2 * 5 / size - 1
        assert population[:, 1].min() >= 2 * 2 / size - 1 and population[:, 1].max() <= 2 * 3 / size - 1


def test_an_empty_canvas_gives_uniform_particles_and_populations_grow() -> None:
    particles = sample_population([0] * 100, 10, 4000, seed=5)
    assert np.abs(particles.mean(axis=0)).max() < 0.05 and particles.min() > -1 and particles.max() < 1
    assert np.allclose(particles.var(axis=0), 1 / 3, atol=0.03), "uniform on [-1, 1]: variance 1/3"
    _, levels = canvas()
    small, large = sample_population(levels, 32, 7, seed=9), sample_population(levels, 32, 500, seed=9)
    assert np.array_equal(small, large[:7]), "a larger population keeps the particles of a smaller one"


def test_the_share_in_a_box_counts_covered_pixels() -> None:
    levels = [1, 2, 3, 4]  # a 2 x 2 canvas: pixel (0, 0) covers [-1, 0] x [-1, 0]
    assert _share_in_box(levels, 2, (-1, -1, 1, 1)) == pytest.approx(1.0)
    assert _share_in_box(levels, 2, (-1, -1, 0, 0)) == pytest.approx(0.1)
    assert _share_in_box(levels, 2, (-0.5, -1, 0.5, 0)) == pytest.approx((0.5 * 1 + 0.5 * 2) / 10)
    assert _share_in_box(levels, 2, (0.2, 0.2, 0.2, 0.2)) == 0.0


def test_readouts_follow_the_population() -> None:
    widget = DigitParticles.example()
    state = dict(widget.state)
    values = DigitParticles.readouts({**state, "n": 1000})
    canvas_ = state["canvases"][state["canvas"]]
    particles = sample_population(canvas_["levels"], state["size"], 1000, state["seed"])
    assert values["mean_x"] == pytest.approx(particles[:, 0].mean())
    assert values["in_box"] > 0.95, "a thousand particles span almost all the ink"
    assert DigitParticles.readouts({**state, "n": 1})["in_box"] == 0.0
    with pytest.raises(ValueError, match="0 <= canvas < 6"):
        DigitParticles(np.zeros((6, 8, 8)), [0] * 6, np.zeros((6, 2, 4)), canvas=6)


def test_the_chapter_call_starts_on_a_canvas_with_two_digits() -> None:
    import json

    from setfuncs.experiments.attention.lesson import population_explorable

    canvases = make_canvases(12, seed=2)
    widget = population_explorable(canvases)
    state = widget.state
    assert canvases.counts[state["canvas"]] == 2 and state["n"] == 20 and state["trained"] == 200
    assert [c["count"] for c in state["canvases"]] == canvases.counts.tolist()
    assert len(json.dumps(state, separators=(",", ":"))) < 150_000
