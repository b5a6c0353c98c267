"""Chapter 10's explorable (setfuncs.explorables.point_cloud): what the page feeds the model is what the
package's test-time pipeline feeds it, and dragging the cloud turns it as the sliders do.

Without a browser: the 16-bit clouds decode within half a quantisation step of the originals; the
subset rule is a uniform draw without replacement (every point equally likely over many seeds) whose
subsets grow by keeping the earlier points; the turn by azimuth alone is the package's ``rotate_z`` and
keeps every point's distance from the origin; the read-outs are the probabilities that the package's
``evaluate.probabilities`` (subsample, standardise, softmax of the logits) gives the same subset, and
the exported model computes what the trained one does. In chromium: a drag across the cloud changes
the azimuth and a drag up and down the elevation, and the read-outs still agree with Python.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from explorable_harness import book_page
from setfuncs.experiments.pointcloud import PointCloudClassifier, rotate_z, synthetic_shapes
from setfuncs.experiments.pointcloud.evaluate import probabilities as package_probabilities
from setfuncs.explorables.point_cloud import (FULL_SCALE, PointCloud, decode_cloud, encode_cloud, probabilities,
                                              subset_order, turned)
from setfuncs.explorables.weights import export_model, load_model


@functools.cache
def clouds() -> tuple[np.ndarray, list[str]]:
    x, _, names = synthetic_shapes(1, "train", points=300, seed=0)
    return x, names


def model(spec: str = "max/max") -> PointCloudClassifier:
    torch.manual_seed(3)
    return PointCloudClassifier(12, spec, hidden=16, equivariant_layers=2, dropout=0.5).eval()


def test_clouds_travel_within_half_a_quantisation_step() -> None:
    cloud = clouds()[0][6].astype(np.float64)
    encoded = encode_cloud(cloud)
    step = np.abs(cloud).max() / FULL_SCALE
    assert np.abs(decode_cloud(encoded) - cloud).max() <= step / 2 * (1 + 1e-12)
    assert json.loads(json.dumps(encoded)) == encoded
    with pytest.raises(ValueError, match="not all zero"):
        encode_cloud(np.zeros((4, 3)))


def test_the_subsets_are_uniform_without_replacement_and_grow() -> None:
    points, n, seeds = 40, 10, 2000
    counts = np.zeros(points)
    for seed in range(seeds):
        order = subset_order(points, seed)
        assert sorted(order.tolist()) == list(range(points)), "a permutation: no point twice"
        counts[order[:n]] += 1
    expected = seeds * n / points
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 80, f"chi-square {chi2:.1f} on {points - 1} degrees of freedom: the subsets are not uniform"
    order = subset_order(points, 7)
    assert set(order[:5]) <= set(order[:12]), "a larger n keeps the points of a smaller one"


def test_the_turn_is_rotate_z_then_a_turn_about_x() -> None:
    cloud = clouds()[0][11]
    assert np.allclose(turned(cloud, 73.0, 0.0), rotate_z(cloud[None], np.array([np.deg2rad(73.0)]))[0], atol=1e-6)
    tipped = turned(cloud, 0.0, 90.0)  # R_x(90°): (x, y, z) -> (x, -z, y)
    assert np.allclose(tipped, np.stack([cloud[:, 0], -cloud[:, 2], cloud[:, 1]], axis=1), atol=1e-6)
    both = turned(cloud, -121.0, 28.5)
    assert np.allclose(np.linalg.norm(both, axis=1), np.linalg.norm(cloud, axis=1), atol=1e-5)


def test_readouts_are_the_package_pipeline_on_the_same_subset_for_each_model() -> None:
    x, names = clouds()
    nets = {spec: model(spec) for spec in ("max/max", "max/r-lse", "max/r-lme")}
    widget = PointCloud(x, names, nets, shape="torus", n=37, azimuth=47.5, elevation=-20.0, seed=5)
    state = dict(widget.state)
    assert state["model_labels"] == list(nets)
    shown = PointCloud.readouts(state)
    subset = decode_cloud(state["clouds"]["torus"])[subset_order(300, 5)[:37]]
    turned_subset = turned(subset, 47.5, -20.0)
    # evaluate.probabilities subsamples n of n points (a permutation, which a Deep Set ignores),
    # standardises and takes the softmax of the trained model's logits
    for k, net in enumerate(nets.values()):
        truth = package_probabilities(net, turned_subset[None], 37)[0]
        assert np.allclose([shown[f"p{k}_{name}"] for name in names], truth, atol=1e-6)
        assert shown[f"predicted{k}"] == float(np.argmax(truth))
        assert np.allclose(probabilities(load_model(export_model(net)), turned_subset), truth, atol=1e-6)
    alone = PointCloud.readouts(dict(PointCloud(x, names, nets["max/r-lse"], shape="torus", n=37, azimuth=47.5,
                                                elevation=-20.0, seed=5).state))
    assert alone == {key.replace("p1_", "p0_").replace("predicted1", "predicted0"): value
                     for key, value in shown.items() if key.startswith(("p1_", "predicted1"))}, "one model alone reads the same"


def test_the_initial_state_is_checked() -> None:
    x, names = clouds()
    with pytest.raises(ValueError, match="shape must be one of"):
        PointCloud(x, names, model(), shape="teapot")
    with pytest.raises(ValueError, match="n in 1..300"):
        PointCloud(x, names, model(), n=301)
    with pytest.raises(ValueError, match=r"not one per class \(11 classes\)"):
        PointCloud(x[:11], names[:11], model(), shape="L")
    with pytest.raises(ValueError, match="at least one"):
        PointCloud(x, names, {}, shape="L")


def test_dragging_the_cloud_turns_it(tmp_path: Path) -> None:
    x, names = clouds()
    widget = PointCloud(x, names, {spec: model(spec) for spec in ("max/max", "max/r-lse")}, shape="T", n=60)
    with book_page(tmp_path, widget.static_html(widget.still_png()), {"width": 1100, "height": 900}) as page:
        box = page.locator("figure svg[role=img]").first.bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(cx, cy)
        page.mouse.down()
        page.mouse.move(cx + 50, cy + 30, steps=5)
        page.mouse.up()
        page.wait_for_timeout(200)  # the drag redraws on the next animation frame
        value = lambda name: float(page.locator(f'[data-control="{name}"]').input_value())  # noqa: E731
        azimuth, elevation = value("azimuth"), value("elevation")
        shown = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll("[data-readout]")]
            .map(node => [node.dataset.readout, Number(node.dataset.value)]))""")
    assert azimuth == pytest.approx(30.0, abs=1.0) and elevation == pytest.approx(-18.0, abs=1.0), (azimuth, elevation)
    state = {**widget.state, "azimuth": azimuth, "elevation": elevation}
    truths = PointCloud.readouts(state)
    assert {"p1_T", "predicted1"} <= set(truths) <= set(shown), "every model's read-outs on the page"
    for key, truth in truths.items():
        assert shown[key] == pytest.approx(truth, abs=PointCloud.tolerance), key


def test_the_chapter_call_starts_at_the_training_size_and_keeps_the_page_light() -> None:
    from setfuncs.experiments.pointcloud import QUICK, MEDIUM
    from setfuncs.experiments.pointcloud.lesson import STATE_LIMIT, LiveRun, cloud_explorable, example_clouds
    from setfuncs.model import parameter_count

    examples = example_clouds(points=1000)
    torch.manual_seed(0)
    for budget in (QUICK, MEDIUM):
        runs = {spec: LiveRun(spec, 0, budget, PointCloudClassifier(12, spec, hidden=budget.hidden,
                                                                     equivariant_layers=budget.equivariant_layers),
                              (), 0.0, {}) for spec in ("max/max", "max/r-lse", "max/r-lme")}
        widget = cloud_explorable(examples, runs)
        state = widget.state
        assert (state["shape"], state["n"], state["trained_points"]) == ("cylinder", budget.points, budget.points)
        size = len(json.dumps(state, separators=(",", ":")))
        assert size <= STATE_LIMIT, f"{budget.name}: a state of {size:,} bytes"
        assert state["model_labels"] + state["left_out"] == list(runs) and state["model_labels"][0] == "max/max"
        assert [model["precision"] for model in state["models"]] == [
            "float32" if parameter_count(runs[spec].model) <= 10_000 else "float16" for spec in state["model_labels"]]
        assert state["models"][0]["precision"] == ("float32" if budget is QUICK else "float16")
        if budget is QUICK:
            assert state["left_out"] == [], "the book's build shows every live model"
    with pytest.raises(ValueError, match="one size"):
        cloud_explorable(examples, {"a": runs["max/max"], "b": dataclasses.replace(runs["max/r-lse"], budget=QUICK)})
