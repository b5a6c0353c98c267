r"""Multi-digit canvases: Attend-Infer-Repeat's multi-MNIST setting, scaled down for a CPU.

A canvas is an ``H x W`` grey-scale image (default :data:`CANVAS_SIZE` = 32) holding zero, one or
two digits with equal probability (:data:`MAX_DIGITS` = 2). Every digit is a square of side
:math:`s \sim \mathcal{U}\{s_{\min}, \dots, s_{\max}\}` pixels (default :data:`DIGIT_SIZES` = 10 to
14) placed with its top-left corner uniformly at random so that it lies fully inside the canvas;
overlapping digits are combined by the pixel-wise maximum, so intensities stay in :math:`[0, 1]`.

**Digit sources.** Offline, the 1,797 handwritten digits that ship with scikit-learn
(:func:`sklearn_digits`, 8 x 8 pixels with values 0..16, divided by 16) are upscaled with bilinear
interpolation to each digit's size. :func:`load_mnist_idx` reads MNIST's IDX image files (28 x 28,
0..255, divided by 255), which are downscaled the same way (bilinear, antialiased). Digits are
split into disjoint training and test pools (:func:`digit_pools`), so test canvases hold unseen
digits.

**Boxes.** The true box of a digit is its square, ``(x0, y0, x1, y1)`` in pixels (``x1 = x0 + s``),
and in the normalised frame :math:`[-1, 1]^2` of :func:`torch.nn.functional.affine_grid` (pixel
edges at :math:`-1` and :math:`1`, ``align_corners=False``), where it is
:math:`z_\text{where} = (s / W, c_x, c_y)` with :math:`c` the square's centre: see
:mod:`~setfuncs.experiments.attention.transformer`.
"""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["CANVAS_SIZE", "DIGIT_SIZES", "MAX_DIGITS", "MNIST_URL", "IDX_IMAGES_MAGIC", "Canvases",
           "sklearn_digits", "load_mnist_idx", "resize_digits", "digit_pools", "make_canvases",
           "boxes_to_where", "canvas_description"]

#: Side of a canvas in pixels.
CANVAS_SIZE = 32
#: Smallest and largest side of a digit in pixels (inclusive).
DIGIT_SIZES = (10, 14)
#: The most digits on a canvas; 0, 1, ..., MAX_DIGITS are equally likely.
MAX_DIGITS = 2
#: Where to get MNIST's IDX files.
MNIST_URL = "http://yann.lecun.com/exdb/mnist/ (train-images-idx3-ubyte.gz)"
#: The magic number of an IDX file of unsigned-byte 3-D arrays (images).
IDX_IMAGES_MAGIC = 0x00000803


class Canvases(NamedTuple):
    """``images [M, H, W]`` float32 in [0, 1]; ``boxes [M, MAX_DIGITS, 4]`` float32 pixel boxes
    ``(x0, y0, x1, y1)`` (rows past a canvas's count are NaN); ``counts [M]`` int64."""

    images: np.ndarray
    boxes: np.ndarray
    counts: np.ndarray


def sklearn_digits() -> np.ndarray:
    """scikit-learn's handwritten digits, ``[1797, 8, 8]`` float32 in [0, 1] (values / 16)."""
    from sklearn.datasets import load_digits

    return (load_digits().images / 16.0).astype(np.float32)


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
    when shrinking), clipped to [0, 1]."""
    x = torch.as_tensor(digits, dtype=torch.float32).unsqueeze(1)
    shrink = size < max(digits.shape[1:])
    y = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False, antialias=shrink)
    return y.squeeze(1).clamp(0, 1).numpy()


def digit_pools(digits: np.ndarray | None = None, test_fraction: float = 0.25
                ) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint training and test digits (the last ``test_fraction`` are the test pool).

    ``digits``: ``[M, h, w]`` in [0, 1] (e.g. :func:`load_mnist_idx`); None: :func:`sklearn_digits`.
    """
    digits = sklearn_digits() if digits is None else np.asarray(digits, dtype=np.float32)
    if digits.ndim != 3 or len(digits) < 2:
        raise ValueError(f"digits must be an array [M, h, w] with M >= 2, got shape {digits.shape}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    split = len(digits) - max(1, int(round(test_fraction * len(digits))))
    return digits[:split], digits[split:]


def make_canvases(count: int, seed: int, digits: np.ndarray | None = None, canvas_size: int = CANVAS_SIZE,
                  digit_sizes: tuple[int, int] = DIGIT_SIZES, max_digits: int = MAX_DIGITS) -> Canvases:
    """``count`` canvases drawn with ``numpy.random.default_rng(seed)`` (see the module docstring).

    Args:
        count: canvases ``M``.
        seed: the random seed of digit choice, count, size and position.
        digits: ``[D, h, w]`` digit images in [0, 1] to draw from (default: all of scikit-learn's).
        canvas_size: ``H = W``.
        digit_sizes: smallest and largest digit side (pixels, inclusive).
        max_digits: digits per canvas are uniform on ``0 .. max_digits``.
    """
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
    return Canvases(images, boxes, counts.astype(np.int64))


def boxes_to_where(boxes: np.ndarray, canvas_size: int = CANVAS_SIZE) -> np.ndarray:
    """Pixel boxes ``(x0, y0, x1, y1)`` ``[..., 4]`` as ``z_where = (scale, x, y)`` ``[..., 3]`` in the
    normalised frame: scale = box width / canvas width, (x, y) the centre in [-1, 1]."""
    boxes = np.asarray(boxes, dtype=np.float32)
    scale = (boxes[..., 2] - boxes[..., 0]) / canvas_size
    cx = (boxes[..., 0] + boxes[..., 2]) / canvas_size - 1
    cy = (boxes[..., 1] + boxes[..., 3]) / canvas_size - 1
    return np.stack([scale, cx, cy], axis=-1)


def canvas_description(source: str = "sklearn") -> dict:
    """The canvas settings for a results file's provenance."""
    return {"source": source, "canvas_size": CANVAS_SIZE, "digit_sizes": list(DIGIT_SIZES),
            "max_digits": MAX_DIGITS, "digits_per_canvas": "uniform on 0..MAX_DIGITS",
            "placement": "square digit fully inside the canvas, top-left corner uniform",
            "combine": "pixel-wise maximum",
            "digits": ("scikit-learn load_digits 8x8 / 16, bilinear upscaling" if source == "sklearn"
                       else "MNIST IDX 28x28 / 255, bilinear antialiased downscaling")}
