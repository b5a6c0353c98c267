r"""Figure 5's numbers from a sweep's results file.

:func:`attention_table`: one row per configuration -- runs, failed runs, localiser weights, mean
test ELBO over seeds at every population size (the image localiser has one value), the count
accuracy and box IoU at the training size, and whether the mean ELBO grows with the population
size at every step. Failed runs (collapsed, or counting at chance) are counted and left out of
every mean. The paper's findings, with intervals and verdicts, are in
:mod:`~setfuncs.experiments.attention.findings`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from setfuncs.tables import text_table

from ..results import sorted_runs
from ..schema import finished_runs, run_status, status_counts
from .localisers import IMAGE
from .sweep import SET_SPECS

__all__ = ["LEARNABLE", "HEADER_KEYS", "usable_runs", "mean_over_runs", "attention_table",
           "never_count_two", "elbo_curves", "format_table"]

#: The learnable set aggregations (the others are plain).
LEARNABLE = tuple(s for s in SET_SPECS if s[:2] in ("q-", "r-"))

#: What the table, the findings and the command line read of the header, besides every sweep's
#: (:data:`~setfuncs.experiments.results.HEADER_KEYS`).
HEADER_KEYS = ("budget_parameters.particles", "budget_parameters.eval_sizes", "data.source")


def _sizes(results: dict) -> list[int]:
    return [int(n) for n in results["budget_parameters"]["eval_sizes"]]


def usable_runs(results: dict, spec: str) -> tuple[list[dict], list[dict]]:
    """The runs of ``spec`` that neither diverged nor failed (the experiment's own ``failed``:
    collapsed, or counting no better than the most frequent count), and all its finished runs
    (:func:`~setfuncs.experiments.schema.finished_runs`: engine failures, which a later sitting
    reruns, are not runs)."""
    runs = [r for r in sorted_runs(finished_runs(results)) if r["spec"] == spec]       # by seed, whatever the file's order
    return [r for r in runs if run_status(r) != "diverged" and not r.get("failed")], runs


def never_count_two(results: dict) -> tuple[float, list[dict]]:
    r"""The usable runs whose count accuracy is exactly the share of test canvases with fewer than two
    digits, :math:`(c_0 + c_1) / (c_0 + c_1 + c_2)` from the file's ``data.test_counts``, wherever it
    counts at full strength: for the image localiser, and for a set localiser at the training size
    and every larger one. That is the score of a model that counts every empty and one-digit canvas
    right and never answers two. Returns ``(share, runs)``."""
    counts = results["data"]["test_counts"]
    share = (counts[0] + counts[1]) / sum(counts)
    train = results["budget_parameters"]["particles"]
    sizes = [str(n) for n in _sizes(results) if n >= train]
    runs = [r for spec in sorted({r["spec"] for r in results["runs"]}) for r in usable_runs(results, spec)[0]]
    return share, [r for r in runs if all(np.isclose(r["evaluation"][size]["count_accuracy"], share, rtol=0, atol=1e-12)
                                          for size in (["image"] if r["spec"] == IMAGE else sizes))]


def mean_over_runs(runs: list[dict], key: str, size: str) -> float | None:
    """The mean of the metric ``key`` (``"elbo"``, ``"count_accuracy"``, ``"box_iou"``) at population
    size ``size`` (``"image"`` for the image localiser) over the runs that have it; None if none has."""
    values = [r["evaluation"][size][key] for r in runs if size in (r.get("evaluation") or {})]
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def attention_table(results: dict) -> list[dict]:
    """One row per configuration with runs (image first, then the set aggregations in sweep order).

    Keys: ``spec, runs, diverged, failed, localiser_parameters``, ``elbo_<n>`` for every evaluated size
    (set localisers) or ``elbo_image``, ``count_accuracy``, ``box_iou`` (training size or image).
    Whether a localiser's ELBO rises with n is a claim the findings test
    (:mod:`~setfuncs.experiments.attention.findings`), not a column of point estimates.
    """
    sizes = _sizes(results)
    train = str(results["budget_parameters"]["particles"])
    present = {r["spec"] for r in finished_runs(results)}
    rows = []
    for spec in [s for s in (IMAGE,) + SET_SPECS if s in present] + sorted(present - {IMAGE, *SET_SPECS}):
        done, runs = usable_runs(results, spec)
        row: dict = {"spec": spec, "runs": len(runs), "diverged": status_counts(runs)["diverged"],
                     "failed": sum(bool(r.get("failed")) for r in runs if run_status(r) != "diverged"),
                     "localiser_parameters": done[0]["localiser_parameters"] if done else None}
        key = "image" if spec == IMAGE else train
        row["elbo_image"] = mean_over_runs(done, "elbo", "image") if spec == IMAGE else None
        for n in sizes:
            row[f"elbo_{n}"] = None if spec == IMAGE else mean_over_runs(done, "elbo", str(n))
        row["count_accuracy"] = mean_over_runs(done, "count_accuracy", key)
        row["box_iou"] = mean_over_runs(done, "box_iou", key)
        rows.append(row)
    return rows


def elbo_curves(results: dict) -> dict:
    """``{"sizes", "training_size", "image"`` (mean ELBO or None), ``"curves": {spec: [mean ELBO at each size]}}``."""
    sizes = sorted(_sizes(results))
    rows = attention_table(results)
    image = next((r["elbo_image"] for r in rows if r["spec"] == IMAGE), None)
    curves = {r["spec"]: [r[f"elbo_{n}"] for n in sizes] for r in rows if r["spec"] != IMAGE}
    return {"sizes": sizes, "training_size": results["budget_parameters"]["particles"], "image": image,
            "curves": curves}


def format_table(rows: Sequence[dict], sizes: Sequence[int]) -> str:
    """A fixed-width text rendering of :func:`attention_table` rows."""
    columns = [("spec", "localiser", "{:<10}"), ("runs", "runs", "{:>5}"), ("failed", "failed", "{:>7}"),
               ("localiser_parameters", "weights", "{:>9.0f}"),
               ("elbo_image", "ELBO image", "{:>11.1f}")]
    columns += [(f"elbo_{n}", f"ELBO n={n}", "{:>11.1f}") for n in sorted(sizes)]
    columns += [("count_accuracy", "count acc", "{:>10.1%}"), ("box_iou", "box IoU", "{:>8.2f}")]
    return text_table(rows, columns)
