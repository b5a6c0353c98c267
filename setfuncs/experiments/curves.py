r"""Training curves as the experiment chapters draw them: each run's loss, smoothed by a moving average.

A run's loss is one number per Adam step and noisy, since every step draws a fresh batch. The
curve shows the mean over a window of :math:`w` consecutive steps,

.. math:: \bar\ell_t = \frac{1}{w} \sum_{s=t}^{t+w-1} \ell_s, \qquad t = 0, \dots, T - w,

so a run of :math:`T` steps gives :math:`T - w + 1` points (``numpy.convolve`` in ``"valid"`` mode).
matplotlib is imported by the axes a caller passes in, never here, so the module imports on a
headless node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["moving_average", "plot_training_curves"]


def moving_average(values: Sequence[float] | np.ndarray, window: int = 20) -> np.ndarray:
    r"""The means :math:`\bar\ell_t` of every ``window`` consecutive values, ``len(values) - window + 1`` of them.

    Raises ValueError if ``window`` is not a positive int or exceeds the number of values.
    """
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a positive int, got {window!r}")
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or len(values) < window:
        raise ValueError(f"need a 1-D sequence of at least window = {window} values, got shape {values.shape}")
    return np.convolve(values, np.ones(window) / window, mode="valid")


def plot_training_curves(ax: Axes, curves: Mapping[str, Sequence[float] | np.ndarray], window: int = 20,
                         quantity: str = "training loss", baseline: tuple[float, str] | None = None,
                         legend_fontsize: float | None = None, **settings: Any) -> None:
    """Draw every curve of ``curves`` (label -> one value per step) as its :func:`moving_average` on ``ax``.

    Curves take the axes' colour cycle in order; a label that starts with ``_`` stays out of the
    legend (matplotlib's rule). ``baseline = (value, label)`` adds a grey dotted horizontal line,
    such as the loss of the best constant prediction. The x-axis is labelled "Adam step", the
    y-axis ``"<quantity> (moving average of <window>)"``; ``settings`` go to ``ax.set`` last, so
    they may add a title or a log scale or replace either label. A legend follows.
    """
    for label, values in curves.items():
        ax.plot(moving_average(values, window), label=label)
    if baseline is not None:
        value, label = baseline
        ax.axhline(value, color="gray", ls=":", label=label)
    ax.set(**{"xlabel": "Adam step", "ylabel": f"{quantity} (moving average of {window})", **settings})
    ax.legend(fontsize=legend_fontsize)
