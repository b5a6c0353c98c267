"""mulberry32, the explorables' seeded generator, in Python (``js/lib.js`` has the same one).

A population an explorable draws in the browser from a seed is drawn here bit for bit, so the
browser test can compute in Python what the page shows for a seed it never saw:
``t = a + 0x6D2B79F5; t = (t ^ t >> 15) * (t | 1); t ^= t + (t ^ t >> 7) * (t | 61);
u = (t ^ t >> 14) / 2^32``, all in 32-bit unsigned arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["mulberry32", "uniforms"]

MASK = 0xFFFFFFFF


def mulberry32(seed: int) -> Iterator[float]:
    """An endless stream of uniform numbers in [0, 1), as ``mulberry32(seed)`` in ``js/lib.js``."""
    a = seed & MASK
    while True:
        a = (a + 0x6D2B79F5) & MASK
        t = a
        t = ((t ^ (t >> 15)) * (t | 1)) & MASK
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & MASK)) & MASK
        yield ((t ^ (t >> 14)) & MASK) / 4294967296


def uniforms(seed: int, count: int) -> list[float]:
    """The first ``count`` numbers of :func:`mulberry32` ``(seed)``."""
    stream = mulberry32(seed)
    return [next(stream) for _ in range(count)]
