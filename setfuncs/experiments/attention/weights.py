"""How many weights each localiser trains: the image localiser against the set localisers.

The image localiser reads every pixel through a dense layer, so its weights grow with the canvas;
a set localiser reads a population through a Deep Set whose weights do not depend on the number
of particles or on the canvas. ``ratio`` in :func:`weight_table` is the image localiser's weights
divided by a localiser's own.
"""

from __future__ import annotations

from setfuncs.model import parameter_count

from .budget import FULL, MEDIUM
from .canvas import Geometry
from .localisers import IMAGE
from .sweep import SPECS
from .table import LEARNABLE
from .train import make_air

__all__ = ["localiser_kind", "weight_table"]


def localiser_kind(spec: str) -> str:
    """``"image (original)"``, ``"set, learnable"`` (a query or recurrent aggregation) or ``"set, plain"``."""
    return "image (original)" if spec == IMAGE else ("set, learnable" if spec in LEARNABLE else "set, plain")


def weight_table(geometry: Geometry) -> list[dict]:
    """One row per localiser of :data:`~setfuncs.experiments.attention.SPECS` (the image localiser first)
    on canvases of ``geometry`` (:data:`~setfuncs.experiments.attention.canvas.MULTI_MNIST` or
    :data:`~setfuncs.experiments.attention.canvas.SURROGATE`).

    Keys: ``spec, kind`` (:func:`localiser_kind`), ``localiser`` and ``model`` (trainable weights of
    the localiser and of the whole AIR model at the medium budget, which the quick budget shares),
    ``localiser_full`` (at the full budget) and ``ratio`` (the image localiser's medium-budget
    weights divided by this localiser's).
    """
    rows = []
    for spec in SPECS:
        medium, full = make_air(spec, MEDIUM, geometry), make_air(spec, FULL, geometry)
        rows.append({"spec": spec, "kind": localiser_kind(spec), "localiser": parameter_count(medium.localiser),
                     "model": parameter_count(medium), "localiser_full": parameter_count(full.localiser)})
    image = next(row["localiser"] for row in rows if row["spec"] == IMAGE)
    for row in rows:
        row["ratio"] = image / row["localiser"]
    return rows
