"""Chapter 11's analysis and figures: metrics by population size, the description of a sweep's
file, the localisers' weights, and the pictures of canvases, populations and glimpses."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from setfuncs.experiments import attention as at
from setfuncs.experiments.attention.by_size import metrics_by_size
from setfuncs.experiments.attention.describe import data_label, sweep_provenance
from setfuncs.experiments.attention.draw import draw_iou_by_size, plot_glimpses, show_canvas
from setfuncs.experiments.attention.weights import localiser_kind, weight_table
from setfuncs.experiments.results import provenance_rows, results_file
from setfuncs.model import parameter_count


def synthetic_results() -> dict:
    rng = np.random.default_rng(0)

    def run(spec: str, seed: int, sizes: list[str], **status) -> dict:
        return {"spec": spec, "seed": seed, "error": None, "failed": False, "localiser_parameters": 10,
                "evaluation": {n: {"elbo": float(rng.normal()), "count_accuracy": float(rng.uniform()),
                                   "box_iou": float(rng.uniform())} for n in sizes}, **status}

    sizes = ["5", "20", "200"]
    runs = [run("image", 0, ["image"]), run("mean", 0, sizes), run("mean", 1, sizes),
            run("mean", 2, sizes, failed=True), run("r-lse", 0, sizes), run("r-lse", 1, sizes, error="nan"),
            {"spec": "max", "seed": 0, "failure": "engine"}]
    return {"runs": runs, "evaluation": {"sizes": [200, 5, 20]},
            "budget_parameters": {"particles": 20, "eval_sizes": [5, 20, 200]}}


def test_metrics_by_size_are_means_over_usable_runs() -> None:
    results = synthetic_results()
    rows = metrics_by_size(results)
    assert [row["spec"] for row in rows] == ["mean", "r-lse"]           # no image, no run-less spec
    for row in rows:
        usable = [r for r in results["runs"] if r["spec"] == row["spec"] and r["error"] is None and not r["failed"]]
        for n in (5, 20, 200):
            for key in ("count_accuracy", "box_iou"):
                assert row[f"{key}_{n}"] == pytest.approx(np.mean([r["evaluation"][str(n)][key] for r in usable]))


def test_localiser_kind_and_weights() -> None:
    assert [localiser_kind(s) for s in ("image", "mean", "r-lse", "q-sum")] == [
        "image (original)", "set, plain", "set, learnable", "set, learnable"]
    rows = weight_table(at.SURROGATE)
    assert [row["spec"] for row in rows] == list(at.SPECS) and rows[0]["ratio"] == 1.0
    mean = next(row for row in rows if row["spec"] == "mean")
    assert mean["localiser"] == parameter_count(at.make_air("mean", at.MEDIUM, at.SURROGATE).localiser)
    assert mean["ratio"] == pytest.approx(rows[0]["localiser"] / mean["localiser"])
    assert all(row["model"] > row["localiser"] for row in rows)


def test_description_of_the_committed_sweep() -> None:
    results = at.load_results(results_file("attention-medium.json"))
    assert data_label({"data": {"source": "sklearn", "canvas_size": 50}}) == (
        "scikit-learn digits on 50×50 canvases (not MNIST)")
    assert data_label({"data": {"source": "mnist", "canvas_size": 50}}) == "MNIST digits on 50×50 canvases"
    rows = sweep_provenance(results)
    assert [what for what, _ in rows[:4]] == ["data", "budget", "failed runs", "test population sizes"]
    assert rows[4:] == provenance_rows(results, "setfuncs.experiments.attention")
    finished = [r for r in results["runs"] if "failure" not in r and r["error"] is None]
    assert rows[2][1].startswith(f"{sum(r['failed'] for r in finished)} of {len(finished)}: ")


def test_figures_draw_what_they_are_given() -> None:
    canvases = at.make_canvases(3, seed=0)
    fig, ax = plt.subplots()
    show_canvas(ax, canvases.images[0], np.array([[1.0, 2.0, 11.0, 12.0], [0.0, 0.0, 5.0, 5.0]]))
    assert len(ax.patches) == 2 and ax.patches[0].get_width() == 10.0

    where = torch.tensor([[0.5, 0.0, 0.0]])
    fig = plot_glimpses(torch.as_tensor(canvases.images[:1]), [("a", where), ("b", where)], 8, "t")
    assert len(fig.axes) == 6 and fig.axes[1].get_images()[0].get_array().shape == (8, 8)

    fig, ax = plt.subplots()
    rows = [{"spec": "mean", "box_iou_5": 0.2, "box_iou_20": None},
            {"spec": "r-lse", "box_iou_5": None, "box_iou_20": None}]
    draw_iou_by_size(ax, rows, [5, 20], image_iou=0.7, training_size=20)
    assert [line.get_label() for line in ax.get_lines()] == ["mean", "image localiser", "training size"]
    plt.close("all")
