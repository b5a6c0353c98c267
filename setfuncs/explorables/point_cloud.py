r"""Chapter 10's explorable: one point cloud, subsampled to any :math:`n`, turned, and classified by each model.

The reader picks one of the chapter's example clouds (one per class of the offline shapes), the
number of points :math:`n` it is subsampled to, and two angles that turn it; the page draws the
subset in 3-D and shows the class probabilities each trained classifier (the chapter's live models,
one aggregation each) gives it, all computed in the browser:

* **subsample**: a uniform random subset without replacement, as
  :func:`~setfuncs.experiments.pointcloud.preprocess.subsample` draws it (the first :math:`n` points
  in the order of :math:`N` uniform keys), the keys drawn by mulberry32 from a seed
  (:mod:`setfuncs.explorables.rng` draws the same), so a larger :math:`n` keeps the points of a
  smaller one;
* **turn**: :math:`x' = R_x(\text{elevation})\,R_z(\text{azimuth})\,x`, about the origin of the
  cloud's coordinates: the azimuth turns it about the up axis :math:`z`, as the offline shapes' own
  random heading does (the model has seen every heading), the elevation tips it over, which no
  training cloud ever was;
* **standardise** (:func:`~setfuncs.experiments.pointcloud.preprocess.standardize`, exactly what the
  model sees at test time): clip to :math:`\pm 100` times the mean absolute coordinate, subtract the
  mean and divide by the standard deviation of all :math:`3n` coordinates;
* **classify**: each exported model (:func:`~setfuncs.explorables.weights.export_model`, run by
  ``js/deepset.js``) and the softmax of its logits.

The clouds travel as 16-bit integers (base64, little-endian) with one scale per cloud, a step of at
most 1/32,767 of the cloud's largest coordinate; the page and :meth:`PointCloud.readouts` decode the
same numbers. The read-outs are, for the :math:`k`-th model, the probability of every class
(``p<k>_<class>``) and the predicted class (``predicted<k>``); Python computes them with the package's ``rotate_z``, ``standardize`` and the torch model
(:func:`~setfuncs.explorables.weights.load_model`), in float32, so they agree with the page's
float64 to about :math:`10^{-6}`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from .base import Explorable
from .esm import module_source
from .rng import uniforms
from .weights import export_model, load_model

__all__ = ["PointCloud", "cloud_state", "CAMERA", "encode_cloud", "decode_cloud", "subset_order", "turned", "probabilities"]

#: The fixed camera of the drawing (degrees): turned by ``azimuth`` about z, looking down ``elevation``.
CAMERA = {"azimuth": -30.0, "elevation": 35.0}
#: The models' colours, in the page and in the still frame (js/point_cloud.js has the same).
MODEL_COLOURS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b"]
#: The largest 16-bit integer, the quantisation's full scale.
FULL_SCALE = 32767


def encode_cloud(cloud: np.ndarray) -> dict[str, Any]:
    """A cloud ``[N, 3]`` as ``{"points": N, "scale": s, "data": base64 of int16 q}``, ``x = q s``."""
    cloud = np.asarray(cloud, dtype=np.float64)
    scale = float(np.abs(cloud).max()) / FULL_SCALE
    if not scale > 0 or not np.isfinite(scale):
        raise ValueError("a cloud needs finite coordinates, not all zero")
    q = np.rint(cloud / scale).astype("<i2")
    return {"points": len(cloud), "scale": scale, "data": base64.b64encode(q.tobytes()).decode("ascii")}


def decode_cloud(encoded: dict[str, Any]) -> np.ndarray:
    """The cloud ``[N, 3]`` (float64) of :func:`encode_cloud`, as the page decodes it."""
    q = np.frombuffer(base64.b64decode(encoded["data"]), dtype="<i2").astype(np.float64)
    return q.reshape(encoded["points"], 3) * encoded["scale"]


def subset_order(points: int, seed: int) -> np.ndarray:
    """The points in the order of their keys, ``points`` uniforms of mulberry32(``seed``): the first
    ``n`` are a uniform subset of ``n`` without replacement (:func:`~setfuncs.experiments.pointcloud.preprocess.subsample`'s rule)."""
    return np.argsort(np.array(uniforms(seed, points)), kind="stable")


def turned(cloud: np.ndarray, azimuth: float, elevation: float) -> np.ndarray:
    r"""``cloud`` ``[n, 3]`` turned by :math:`R_x(\text{elevation}) R_z(\text{azimuth})` (degrees), float32:
    the package's :func:`~setfuncs.experiments.pointcloud.preprocess.rotate_z`, then a turn about x."""
    from setfuncs.experiments.pointcloud.preprocess import rotate_z

    x = rotate_z(np.asarray(cloud)[None], np.array([np.deg2rad(azimuth)]))[0]
    cos, sin = np.cos(np.deg2rad(elevation)), np.sin(np.deg2rad(elevation))
    return np.stack([x[:, 0], cos * x[:, 1] - sin * x[:, 2], sin * x[:, 1] + cos * x[:, 2]], axis=1).astype(np.float32)


def _subset(state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The chosen cloud (all its points) and its subset of ``n`` points, turned."""
    cloud = decode_cloud(state["clouds"][state["shape"]])
    n = int(np.floor(float(state["n"]) + 0.5))  # the page's Math.round of the slider's value
    subset = cloud[subset_order(len(cloud), int(state["seed"]))[:n]]
    return cloud, turned(subset, float(state["azimuth"]), float(state["elevation"]))


def probabilities(model: torch.nn.Module, cloud: np.ndarray) -> np.ndarray:
    """The class probabilities of one cloud ``[n, 3]``: softmax of the logits of its standardised coordinates."""
    from setfuncs.experiments.pointcloud.preprocess import standardize

    with torch.no_grad():
        logits = model(torch.from_numpy(standardize(cloud[None])))
    return logits.softmax(dim=1)[0].double().numpy()


def _camera(points: np.ndarray) -> np.ndarray:
    """Screen ``(right, up)`` and nearness of ``points`` ``[n, 3]`` seen by :data:`CAMERA`, as the page draws them."""
    a, e = np.deg2rad(CAMERA["azimuth"]), np.deg2rad(CAMERA["elevation"])
    x = np.cos(a) * points[:, 0] - np.sin(a) * points[:, 1]
    y = np.sin(a) * points[:, 0] + np.cos(a) * points[:, 1]
    z = points[:, 2]
    return np.stack([x, np.sin(e) * y + np.cos(e) * z, -np.cos(e) * y + np.sin(e) * z], axis=1)


def cloud_state(clouds: np.ndarray, class_names: Sequence[str], models: torch.nn.Module | Mapping[str, torch.nn.Module],
                shape: str = "star", n: int = 50, azimuth: float = 0.0, elevation: float = 0.0, seed: int = 1,
                trained_points: int | None = None, precision: str | Mapping[str, str] = "float32", label: str = "",
                left_out: Sequence[str] = ()) -> dict[str, Any]:
    """The state a :class:`PointCloud` carries to the page, its arguments checked: the clouds encoded
    (:func:`encode_cloud`) and each model exported at its ``precision`` (one for all, or one per label)."""
    clouds = np.asarray(clouds)
    names = list(class_names)
    if clouds.ndim != 3 or clouds.shape[2] != 3 or len(clouds) != len(names):
        raise ValueError(f"need one cloud [N, 3] per class name, got clouds {clouds.shape} and {len(names)} names")
    if shape not in names or not 1 <= n <= clouds.shape[1]:
        raise ValueError(f"shape must be one of {names} and n in 1..{clouds.shape[1]}, got {shape!r}, {n}")
    runs = dict(models) if isinstance(models, Mapping) else {models.spec: models}
    if not runs:
        raise ValueError("models: give at least one trained classifier")
    precisions = dict(precision) if isinstance(precision, Mapping) else dict.fromkeys(runs, precision)
    if set(precisions) != set(runs):
        raise ValueError(f"precision: give one for each model {list(runs)}, got {list(precisions)}")
    exported = [export_model(model, precisions[key]) for key, model in runs.items()]
    wrong = {key: e["out_features"] for key, e in zip(runs, exported) if e["out_features"] != len(names)}
    if wrong:
        raise ValueError(f"models {wrong} have that many outputs, not one per class ({len(names)} classes)")
    return {"classes": names, "clouds": {name: encode_cloud(c) for name, c in zip(names, clouds)},
            "shape": shape, "n": n, "azimuth": azimuth, "elevation": elevation, "seed": seed,
            "camera": CAMERA, "models": exported, "model_labels": list(runs), "trained_points": trained_points,
            "label": label, "left_out": list(left_out)}


class PointCloud(Explorable):
    """A cloud subsampled to ``n`` points and turned by two angles, drawn in 3-D, with each trained
    classifier's class probabilities for exactly that input (``models``: one model, or several by label;
    ``left_out`` names models not shown, which the page says)."""

    module = "point_cloud"
    _esm = module_source(module)
    probes = [{"n": 37, "azimuth": 47.5}, {"shape": "torus", "elevation": -63.0, "n": 420},
              {"shape": "L", "n": 9, "azimuth": -121.0, "elevation": 28.5}]
    tolerance = 1e-5

    def __init__(self, clouds: np.ndarray, class_names: Sequence[str],
                 models: torch.nn.Module | Mapping[str, torch.nn.Module], shape: str = "star",
                 n: int = 50, azimuth: float = 0.0, elevation: float = 0.0, seed: int = 1,
                 trained_points: int | None = None, precision: str | Mapping[str, str] = "float32", label: str = "",
                 left_out: Sequence[str] = ()) -> None:
        state = cloud_state(clouds, class_names, models, shape, n, azimuth, elevation, seed, trained_points,
                            precision, label, left_out)
        points = state["clouds"][shape]["points"]
        super().__init__(state, alt=f"A {shape!r} cloud drawn in 3-D: {n} of its {points:,} points in blue "
                                    f"over all of them in light grey, turned by azimuth {azimuth:g} and elevation "
                                    f"{elevation:g} degrees; beside it a bar chart of the {len(state['classes'])} class "
                                    f"probabilities that each of the classifiers {', '.join(state['model_labels'])} "
                                    f"gives these {n} points.")

    @classmethod
    def example(cls) -> "PointCloud":
        from setfuncs.experiments.pointcloud import PointCloudClassifier, synthetic_shapes

        clouds, _, names = synthetic_shapes(1, "train", points=400, seed=0)
        torch.manual_seed(0)
        models = {spec: PointCloudClassifier(len(names), spec, hidden=16, equivariant_layers=2, dropout=0.5)
                  for spec in ("max/max", "max/r-lse")}
        return cls(clouds, names, models, trained_points=100)

    @classmethod
    def readouts(cls, state: dict[str, Any]) -> dict[str, float]:
        _, subset = _subset(state)
        found: dict[str, float] = {}
        for k, exported in enumerate(state["models"]):
            p = probabilities(load_model(exported), subset)
            found |= {f"p{k}_{name}": float(v) for name, v in zip(state["classes"], p)}
            found[f"predicted{k}"] = float(np.argmax(p))
        return found

    def still(self) -> Figure:
        state = self.state
        cloud, subset = _subset(state)
        values = self.readouts(state)
        names = state["classes"]
        labels = state["model_labels"]
        fig, (left, right) = plt.subplots(1, 2, figsize=(7.4, 3.8), width_ratios=(1.1, 1), layout="constrained")
        full = _camera(turned(cloud, state["azimuth"], state["elevation"]).astype(np.float64))
        seen = _camera(subset.astype(np.float64))
        order = np.argsort(seen[:, 2])
        left.scatter(full[:, 0], full[:, 1], s=2, color="0.82", linewidths=0)
        left.scatter(seen[order, 0], seen[order, 1], s=16, c=seen[order, 2], cmap="Blues", vmin=seen[:, 2].min() - 0.5 *
                     np.ptp(seen[:, 2]) - 1e-9, vmax=seen[:, 2].max() + 1e-9, linewidths=0)
        radius = float(np.linalg.norm(cloud, axis=1).max()) * 1.05
        left.set(xlim=(-radius, radius), ylim=(-radius, radius), aspect="equal", xticks=[], yticks=[])
        left.axis("off")
        origin = np.array([-0.85, -0.85]) * radius
        for name, axis in zip("xyz", _camera(np.eye(3))):  # the axes the model reads, seen by the camera
            tip = origin + 0.14 * radius * axis[:2]
            left.plot(*np.stack([origin, tip]).T, color="black", lw=1.2)
            left.text(*(origin + 0.2 * radius * axis[:2]), name, fontsize=10, ha="center", va="center")
        left.set_title(f"{state['shape']!r}: n = {len(subset)} of {len(cloud):,} points,\nazimuth {state['azimuth']:g}°, "
                       f"elevation {state['elevation']:g}°", fontsize=10)
        height = 0.8 / len(labels)
        for k, label in enumerate(labels):  # one bar per model in each class's row, the predicted one outlined
            probs = np.array([values[f"p{k}_{name}"] for name in names])
            best = int(values[f"predicted{k}"])
            rows = np.arange(len(names)) - 0.4 + height * (k + 0.5)
            right.barh(rows, probs, height=height, color=MODEL_COLOURS[k % len(MODEL_COLOURS)], label=label,
                       edgecolor=["black" if c == best else "none" for c in range(len(names))], linewidth=1.2)
        right.set(xlim=(0, 1), yticks=range(len(names)), ylim=(len(names) - 0.5, -0.5))
        right.set_yticklabels([f"{name} (true)" if name == state["shape"] else name for name in names], fontsize=9)
        right.tick_params(labelsize=9)
        right.set_xlabel("class probability (outlined: each model's prediction)", fontsize=9)
        right.legend(fontsize=8, loc="lower right")
        return fig
