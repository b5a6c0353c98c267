"""Chapter 11's pictures: canvases with boxes, the particle populations read from them, a glimpse
read and written back, and the box IoU of the sweep's localisers against the population size.

matplotlib is imported inside each function, so importing the module needs only numpy and torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
from torch import Tensor

from .table import LEARNABLE
from .transformer import glimpse, place, where_to_boxes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["show_canvas", "plot_glimpses", "draw_iou_by_size"]


def show_canvas(ax: Axes, image: np.ndarray, boxes: np.ndarray | None = None, color: str = "tab:green") -> None:
    """A square canvas ``[H, H]`` in pixel coordinates, with ``boxes`` ``(x0, y0, x1, y1)`` ``[k, 4]`` drawn over it."""
    from matplotlib.patches import Rectangle

    h = image.shape[-1]
    ax.imshow(image, cmap="gray", vmin=0, vmax=1, extent=(0, h, h, 0))
    for x0, y0, x1, y1 in ([] if boxes is None else boxes):
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=1.2, color=color))
    ax.set(xlim=(0, h), ylim=(h, 0), xticks=[], yticks=[])


def plot_glimpses(canvas: Tensor, wheres: Sequence[tuple[str, Tensor]], size: int, title: str) -> Figure:
    r"""One row per named ``z_where = (s, t_x, t_y)`` ``[1, 3]`` of ``wheres``: the canvas ``[1, H, H]``
    with the box in red, the ``size`` x ``size`` glimpse read there
    (:func:`~setfuncs.experiments.attention.glimpse`), and the glimpse written back into a blank
    canvas (:func:`~setfuncs.experiments.attention.place`). The figure fits the book's 7-inch column:
    each row's first title gives the box's name on one line and its numbers on the next."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(wheres), 3, figsize=(6.85, 5.2), layout="constrained", squeeze=False)
    canvas_size = canvas.shape[-1]
    for row, (name, where) in enumerate(wheres):
        look = glimpse(canvas, where, size)
        back = place(look, where, canvas_size)
        box = where_to_boxes(where, canvas_size).numpy()
        show_canvas(axes[row, 0], canvas[0].numpy(), box, color="tab:red")
        axes[row, 1].imshow(look[0].numpy(), cmap="gray", vmin=0, vmax=1)
        axes[row, 1].set(xticks=[], yticks=[])
        show_canvas(axes[row, 2], back[0].numpy(), box, color="tab:red")
        s, tx, ty = where[0].tolist()
        axes[row, 0].set_title(f"{name}:\ns = {s:.2f}, t = ({tx:+.2f}, {ty:+.2f})", fontsize="medium")
        axes[row, 1].set_title(f"glimpse,\n{size}×{size} pixels", fontsize="medium")
        axes[row, 2].set_title("glimpse written back\n(place)", fontsize="medium")
    fig.suptitle(title, fontsize="medium")
    return fig


def draw_iou_by_size(ax: Axes, rows: Sequence[dict], sizes: Sequence[int], image_iou: float | None,
                     training_size: int) -> None:
    """Mean box IoU against the population size of every set localiser (``rows``:
    :func:`~setfuncs.experiments.attention.by_size.metrics_by_size`; learnable ones solid, plain
    dashed; sizes without a value skipped), the image localiser's IoU as a black dashed line
    (when given) and the training size as a grey one; log x-axis."""
    for k, row in enumerate(rows):
        points = [(n, row[f"box_iou_{n}"]) for n in sizes if row[f"box_iou_{n}"] is not None]
        if points:
            ax.plot(*zip(*points), marker="o", ms=3, color=f"C{k % 10}",
                    ls="-" if row["spec"] in LEARNABLE else "--", label=row["spec"])
    if image_iou is not None:
        ax.axhline(image_iou, color="black", ls="--", lw=1, label="image localiser")
    ax.axvline(training_size, color="gray", ls="--", lw=1, label="training size")
    ax.set(xscale="log", xlabel="population size n (particles)", ylabel="box IoU (matched, all canvases)")
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.minorticks_off()
    ax.legend(fontsize="medium", ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    ax.set_title("box IoU against population size", fontsize="medium")
