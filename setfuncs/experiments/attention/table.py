r"""Figure 4's numbers from a sweep's results file, next to the paper's findings.

:func:`attention_table`: one row per configuration -- runs, localiser weights, mean test ELBO
over seeds at every population size (the image localiser has one value), the count accuracy and
box IoU at the training size, and whether the mean ELBO grows strictly with the population size.
:func:`findings`: the three findings of the paper (``results/paper-results.json``, qualitative strings) with
what our results say about each.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from setfuncs.tables import text_table

from ..results import load_paper, load_sweep
from .localisers import IMAGE
from .sweep import EXPERIMENT, SET_SPECS

__all__ = ["LEARNABLE", "load_results", "mean_over_runs", "attention_table", "elbo_curves", "findings", "format_table",
           "format_findings"]

#: The learnable set aggregations (the others are plain).
LEARNABLE = tuple(s for s in SET_SPECS if s[:2] in ("q-", "r-"))


def load_results(path: str | os.PathLike) -> dict:
    """A spatial-attention sweep's results file; ValueError if it is none."""
    return load_sweep(path, EXPERIMENT, "setfuncs.experiments.attention")


def _sizes(results: dict) -> list[int]:
    return [int(n) for n in results["budget_parameters"]["eval_sizes"]]


def mean_over_runs(runs: list[dict], key: str, size: str) -> float | None:
    """The mean of the metric ``key`` (``"elbo"``, ``"count_accuracy"``, ``"box_iou"``) at population
    size ``size`` (``"image"`` for the image localiser) over the runs that have it; None if none has."""
    values = [r["evaluation"][size][key] for r in runs if size in (r.get("evaluation") or {})]
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def attention_table(results: dict) -> list[dict]:
    """One row per configuration with runs (image first, then the set aggregations in sweep order).

    Keys: ``spec, runs, diverged, localiser_parameters``, ``elbo_<n>`` for every evaluated size
    (set localisers) or ``elbo_image``, ``count_accuracy``, ``box_iou`` (training size or image),
    ``monotonic`` (set localisers: the mean ELBO increases strictly with n).
    """
    sizes = _sizes(results)
    train = str(results["budget_parameters"]["particles"])
    present = {r["spec"] for r in results["runs"]}
    rows = []
    for spec in [s for s in (IMAGE,) + SET_SPECS if s in present] + sorted(present - {IMAGE, *SET_SPECS}):
        runs = [r for r in results["runs"] if r["spec"] == spec]
        done = [r for r in runs if r.get("error") is None]
        row: dict = {"spec": spec, "runs": len(runs), "diverged": len(runs) - len(done),
                     "localiser_parameters": done[0]["localiser_parameters"] if done else None}
        key = "image" if spec == IMAGE else train
        row["elbo_image"] = mean_over_runs(done, "elbo", "image") if spec == IMAGE else None
        for n in sizes:
            row[f"elbo_{n}"] = None if spec == IMAGE else mean_over_runs(done, "elbo", str(n))
        row["count_accuracy"] = mean_over_runs(done, "count_accuracy", key)
        row["box_iou"] = mean_over_runs(done, "box_iou", key)
        curve = [row[f"elbo_{n}"] for n in sorted(sizes)]
        row["monotonic"] = (None if spec == IMAGE or None in curve else
                            bool(all(b > a for a, b in zip(curve, curve[1:]))))
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


def findings(results: dict, paper: str | os.PathLike | None = None) -> list[dict]:
    """The paper's findings on spatial attention (from its ``results/paper-results.json``; None: without them)
    with ours: ``[{"paper": ..., "ours": ...}, ...]``."""
    theirs = [None, None, None]
    if paper is not None:
        theirs = list(load_paper(paper)["spatial_attention"]["findings"])
    rows = attention_table(results)
    by_spec = {r["spec"]: r for r in rows}
    train = results["budget_parameters"]["particles"]
    sets = [r for r in rows if r["spec"] != IMAGE and r[f"elbo_{train}"] is not None]
    image = by_spec.get(IMAGE)
    if sets and image is not None and image["elbo_image"] is not None:
        best = max(sets, key=lambda r: r[f"elbo_{train}"])
        ratio = image["localiser_parameters"] / best["localiser_parameters"]
        on_par = (f"best set localiser {best['spec']}: ELBO {best[f'elbo_{train}']:.1f} at n = {train} vs "
                  f"image localiser {image['elbo_image']:.1f} (difference {best[f'elbo_{train}'] - image['elbo_image']:+.1f}"
                  f" nats); localiser weights {best['localiser_parameters']:,} vs {image['localiser_parameters']:,} "
                  f"({ratio:.1f}x fewer)")
    else:
        on_par = "needs runs of the image localiser and of a set localiser"
    def monotone(specs: Sequence[str]) -> str:
        known = [by_spec[s] for s in specs if s in by_spec and by_spec[s]["monotonic"] is not None]
        yes = [r["spec"] for r in known if r["monotonic"]]
        return f"{len(yes)} of {len(known)} ({', '.join(yes) or 'none'})"
    monotonic = (f"ELBO strictly increasing in n: learnable {monotone(LEARNABLE)}; plain "
                 f"{monotone([s for s in SET_SPECS if s not in LEARNABLE])}")
    sizes = sorted(_sizes(results))
    tighter = []
    for r in sets:
        runs = [x for x in results["runs"] if x["spec"] == r["spec"] and x.get("error") is None]
        ious = [mean_over_runs(runs, "box_iou", str(n)) for n in sizes]
        if ious[0] is not None and ious[-1] is not None:
            tighter.append(f"{r['spec']} {ious[0]:.2f}->{ious[-1]:.2f}")
    tighten = (f"box IoU at n = {sizes[0]} -> {sizes[-1]}: " + ", ".join(tighter)) if tighter else "no box IoUs"
    return [{"paper": p, "ours": o} for p, o in zip(theirs, (on_par, monotonic, tighten))]


def format_table(rows: Sequence[dict], sizes: Sequence[int]) -> str:
    """A fixed-width text rendering of :func:`attention_table` rows."""
    columns = [("spec", "localiser", "{:<10}"), ("runs", "runs", "{:>5}"), ("localiser_parameters", "weights", "{:>9.0f}"),
               ("elbo_image", "ELBO image", "{:>11.1f}")]
    columns += [(f"elbo_{n}", f"ELBO n={n}", "{:>11.1f}") for n in sorted(sizes)]
    columns += [("count_accuracy", "count acc", "{:>10.1%}"), ("box_iou", "box IoU", "{:>8.2f}"),
                ("monotonic", "monotonic", "{!s:>10}")]
    return text_table(rows, columns)


def format_findings(items: Sequence[dict]) -> str:
    """The findings as text: ``paper: ...`` / ``ours: ...`` pairs."""
    lines = []
    for i, item in enumerate(items, 1):
        if item["paper"] is not None:
            lines.append(f"{i}. paper: {item['paper']}")
        lines.append(f"{'   ' if item['paper'] is not None else f'{i}. '}ours:  {item['ours']}")
    return "\n".join(lines)
