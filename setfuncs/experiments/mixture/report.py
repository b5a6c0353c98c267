r"""Chapter 9's analyses of the sweep as short calls: the result box, Figure 4b and its numbers, and the
methods page's tables, each a small object that renders itself (:mod:`~setfuncs.experiments.views`).

- :data:`SWEEP`, :data:`FORMAT`, :func:`lead`, :func:`result_box`: the file the chapter reads and its box;
- :func:`sweep_lines`, :func:`plot_figure4b`, :func:`violin_summary`, :func:`accuracy_table`,
  :func:`collapse_lines`: Figure 4b and what the chapter reads from it;
- :func:`findings_by_summary`, :func:`readings`, :func:`summary_table`, :func:`power_lines`,
  :func:`twin_verdicts`, :func:`violin_details`, :func:`provenance`, :func:`protocol_lines`,
  :func:`plot_by_size`, :func:`by_size_lines`, :func:`sigma_table`, :func:`sigma_lines`,
  :func:`rerun_lines`, :func:`plot_learning_curves`, :func:`late_change_table`, :func:`cost_table`:
  the methods page.

The task's pictures and the live training are in :mod:`~setfuncs.experiments.mixture.lesson`.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, Sequence

import numpy as np

from .. import report
from ..convergence import checkpoint_curves, late_change, loss_curves
from ..differences import claim_gaps
from ..findings import ALPHA, LEVEL, VARIANT_LABELS, Finding, detectable_phrase, interval_text
from ..paired import smallest_p_value
from ..results import provenance_rows
from ..schema import status_counts
from ..sweeps import SETTINGS, TEST_SEED, lme_configurations, paper_configurations
from ..views import Lines, Table, table
from .accuracy import accuracy_against_metric
from .data import COMPONENT_STD, TRAIN_SIZES, test_populations
from .differences import CLAIM_AXES, protocol_differences
from .em import em_smaller_weight
from .experiment import EXPERIMENT
from .findings import PEAK_BATCH
from .metric import SUMMARIES
from .sensitivity import seeds_needed, sensitivity_table
from .table import by_population_size
from .violins import plot_violins, violin_groups, violin_table

__all__ = ["SWEEP", "FORMAT", "BOOTSTRAPS", "lead", "result_box", "sweep_lines", "plot_figure4b", "violin_summary",
           "violin_details", "collapse_lines", "accuracy_table", "provenance", "protocol_lines", "findings_by_summary",
           "readings", "summary_table", "power_lines", "twin_verdicts", "plot_by_size", "by_size_lines", "sigma_table",
           "sigma_lines", "rerun_lines", "plot_learning_curves", "late_change_table", "cost_table"]

#: The sweep the chapter reads — the paper's grid and its log-mean-exp twins, ten seeds each.
SWEEP = "mixture-medium.json"
#: The format of the estimates in prose — shares of matched pairs won minus lost, or differences of shares
#: of batches worse than EM, both between -1 and 1.
FORMAT = "+.2f"
#: Bootstrap batches per violin (the paper's peak statistic, batches of ``PEAK_BATCH`` runs).
BOOTSTRAPS = 1000


def _are(count: int, verdict: str) -> str:
    return f"{count} {'is' if count == 1 else 'are'} {verdict}"


def lead(results: dict, found: Sequence[Finding]) -> str:
    """The result box's lead, every number read from ``results`` and ``found``: how the paper's tested
    findings split by verdict, most frequent first; then the task and what we ran (the configurations of
    the file by grid, seeds, steps, budget, the component spread). A ValueError if none is tested."""
    tested = [f for f in found if f.family == "paper" and f.seeds > 0]
    if not tested:
        raise ValueError("found holds no tested finding of the paper's claims")
    pieces = [_are(n, v) for v, n in Counter(f.verdict for f in tested).most_common()]
    said = ", ".join(pieces[:-1]) + (" and " if len(pieces) > 1 else "") + pieces[-1]
    specs = results["configurations"]
    lme = [s for s in specs if "lme" in s]
    p = results["budget_parameters"]
    return (f"Of the {len(tested)} tested findings on the paper's claims, {said}. The paper asks a Deep Set for the "
            f"smaller weight of the two-component Gaussian mixture behind a population and scores it against EM; we "
            f"trained {len(specs) - len(lme)} configurations of the paper's grid and {len(lme)} with log-mean-exp in "
            f"place of LSE, {results['runs_per_configuration']} seeds each, {p['steps']:,} steps ({results['budget']} "
            f"budget), at σ = {results['mixture']['component_std']}. An estimate is a share of matched pairs won minus "
            f"lost (or of {PEAK_BATCH}-run batches worse than EM), between −1 and 1.")


def result_box(results: dict, paper: str | os.PathLike) -> report.ResultBox:
    """The chapter's result box: :func:`lead`, then one sentence per verdict of the paper's claims on the
    findings of ``results`` (``paper``: ``results/paper-results.json``), in :data:`FORMAT`."""
    found = EXPERIMENT.findings(results, paper)
    return report.result_box(found, lead(results, found), FORMAT)


def sweep_lines(results: dict) -> Lines:
    """What the sweep holds (runs, configurations, seeds, budget, collapsed and diverged runs) and how many
    violins of :func:`violin_summary` sit below 0 (EM outperformed) or have no run left to draw."""
    runs, counts = results["runs"], status_counts(results["runs"])
    rows = violin_table(results, PEAK_BATCH, BOOTSTRAPS, 0)
    drawn = [r for r in rows if r["median_peak"] is not None]
    empty = [f"{r['label']} ({r['by']})" for r in rows if r["median_peak"] is None]
    return Lines((f"{len(runs)} runs: {len(results['configurations'])} configurations × "
                  f"{results['runs_per_configuration']} seeds at the {results['budget']} budget; "
                  f"{counts['collapsed']} collapsed to a constant, {counts['diverged']} diverged.",
                  f"{sum(r['median_peak'] < 0 for r in drawn)} of the {len(drawn)} violins drawn have their median "
                  f"peak below 0, EM outperformed; " + (f"{len(empty)} had no run left to draw: {', '.join(empty)}."
                                                       if empty else "every group has runs to draw.")))


def plot_figure4b(results: dict) -> Any:
    """Figure 4b from the sweep (``setfuncs.experiments.mixture.violins.plot_violins``), both groupings."""
    return plot_violins({by: violin_groups(results, by, PEAK_BATCH, BOOTSTRAPS, 0) for by in ("equivariant", "final")})


_VIOLIN_COLUMNS = [("by", "grouped by", "{}"), ("label", "aggregation", "{}"), ("runs", "runs", "{}"),
                   ("collapsed", "collapsed", "{}"), ("median_peak", "median peak", "{:.3g}")]


def violin_summary(results: dict) -> Table:
    """Per violin: its runs, how many collapsed (not drawn), the median peak and the share of peaks worse
    than EM (``setfuncs.experiments.mixture.violins.violin_table``)."""
    return table(violin_table(results, PEAK_BATCH, BOOTSTRAPS, 0),
                 _VIOLIN_COLUMNS + [("peaks_worse_than_em", "peaks worse than EM", "{:.0%}")],
                 f"The violins' numbers (metric at n = 100, peaks of batches of {PEAK_BATCH} runs)")


def violin_details(results: dict) -> Table:
    """:func:`violin_summary` with the 5 % and 95 % peaks, the median and the best run, and the best spec."""
    return table(violin_table(results, PEAK_BATCH, BOOTSTRAPS, 0), _VIOLIN_COLUMNS + [
        ("q05_peak", "5 % peak", "{:.3g}"), ("q95_peak", "95 % peak", "{:.3g}"),
        ("peaks_worse_than_em", "peaks worse than EM", "{:.0%}"), ("median_metric", "median run", "{:.3g}"),
        ("best_metric", "best run", "{:.3g}"), ("best_spec", "best spec", "{}")],
        "The violins' numbers (metric at n = 100; collapsed runs counted, not drawn)")


def collapse_lines(results: dict) -> Lines:
    """Per LSE and log-mean-exp group in the equivariant layers, plain and learnable: its collapsed runs
    and its median peak (estimates of the violins' table, not tests)."""
    groups = {r["label"]: r for r in violin_table(results, PEAK_BATCH, BOOTSTRAPS, 0) if r["by"] == "equivariant"}
    return Lines(tuple(f"{label} in the equivariant layers: {groups[label]['collapsed']} of {groups[label]['runs']} runs "
                       "collapsed; " + ("no run trained" if groups[label]["median_peak"] is None
                                        else f"median peak {groups[label]['median_peak']:+.2f}")
                       for label in ("lse", "r-lse", "lme", "r-lme")))


def accuracy_table(results: dict) -> Table:
    """Point accuracy against the KDE metric per equivariant aggregation
    (``setfuncs.experiments.mixture.accuracy.accuracy_against_metric``), EM's error computed on the
    sweep's test populations."""
    p = results["budget_parameters"]
    test = test_populations(p["test_size"], 100, TEST_SEED)
    em_mae = float((em_smaller_weight(test.x) - test.smaller_weight).abs().mean())
    kdes = len(test.x) * len(p["test_population_sizes"])
    return table(accuracy_against_metric(results, em_mae), [
        ("group", "equivariant aggregation", "{}"), ("runs", "runs (not collapsed)", "{}"),
        ("mae", "median |error| of the Beta mean", "{:.3f}"), ("better", "runs more accurate than EM", "{:.0%}"),
        ("median_metric", "median run: metric, median over populations", "{:.3g}"),
        ("mean_metric", "median run: metric, mean over populations", "{:.3g}"),
        ("floor", f"median run: model KDEs at the bandwidth floor (of {kdes})", "{:.0f}")],
        f"Point accuracy against the KDE metric (EM's mean |error| on these populations: {em_mae:.3f})")


def provenance(results: dict) -> Table:
    """How the sweep was made: its budget, :func:`~setfuncs.experiments.results.provenance_rows`, the seed
    scheme and the configurations."""
    p = results["budget_parameters"]
    rows = [("budget", f"{results['budget']}: {p['steps']:,} steps of {p['batch']} populations, width {p['hidden']}, "
                       f"{p['test_size']} test populations")]
    rows += provenance_rows(results, "setfuncs.experiments.mixture")
    rows += [("seeds", f"{results['seeds']}: {results['seed_scheme']}"),
             ("configurations", f"{len(paper_configurations())} of the paper's grid and {len(lme_configurations())} with "
                                f"log-mean-exp in place of LΣE, {results['runs_per_configuration']} seeds each: "
                                f"{len(results['runs'])} runs")]
    return table([{"what": k, "value": v} for k, v in rows], [("what", "", "{}"), ("value", "", "{}")])


def protocol_lines(results: dict) -> Lines:
    """The claims grouped by the axes on which our protocol is not known to match the paper's
    (:data:`~setfuncs.experiments.mixture.differences.CLAIM_AXES`), which keep a decided opposite from "contradicted"."""
    blocked: dict[str, list[str]] = {}
    for claim, gap in claim_gaps(results, protocol_differences, CLAIM_AXES).items():
        blocked.setdefault(gap, []).append(claim)
    return Lines(tuple(f"{' / '.join(claims)}: " + (
        "may be called contradicted" if not gap else f"cannot be called contradicted; not known to match on "
        f"{len(gap.split('; '))} of its {len(CLAIM_AXES[claims[0]])} axes: {gap}") for gap, claims in blocked.items()))


def findings_by_summary(results: dict, paper: str | os.PathLike) -> dict[str, list[Finding]]:
    """The findings table with a run's metric summarised over its test populations by each of
    :data:`~setfuncs.experiments.mixture.metric.SUMMARIES` (the median first, the chapter's)."""
    return {summary: EXPERIMENT.findings(results, paper, summary=summary) for summary in SUMMARIES}


def readings(found: Sequence[Finding]) -> Lines:
    """The findings claim by claim, grouped by verdict: the estimate and which way it leans, and for an
    undecided claim what its seeds could detect, else its Holm p-value and note."""
    grouped: dict[str, list[str]] = {}
    for f in found:
        lean = "the paper's way" if f.estimate > 0 else "against the paper" if f.estimate < 0 else "neither way"
        text = f"[{VARIANT_LABELS[f.variant]}] {f.claim}: estimate {f.estimate:+.2g}, leaning {lean}"
        text += (f"; {detectable_phrase(f, '.2g')}" if f.verdict == "undecided"
                 else f"; Holm p {f.adjusted:.2g}" + (f"; {f.note}" if f.note else ""))
        grouped.setdefault(f.verdict, []).append(text)
    return Lines(tuple(line for verdict, texts in grouped.items()
                       for line in (f"{verdict} ({len(texts)} of {len(found)}):", *(f"  {t}" for t in texts))))


def summary_table(found_by: dict[str, list[Finding]]) -> Table:
    """The findings under the median and the mean over test populations side by side (estimate, Holm p,
    verdict), whether the verdicts agree; the notes count the verdicts by agreement and name the estimates
    that lean the other way under the mean."""
    median, mean = found_by["median"], {(f.key, f.variant): f for f in found_by["mean"]}
    rows = []
    for m in median:
        a = mean[m.key, m.variant]
        rows.append({"claim": m.claim, "with": VARIANT_LABELS[m.variant], "agree": "yes" if m.verdict == a.verdict else "no",
                     **{f"{s}_{k}": getattr(f, k) for s, f in zip(SUMMARIES, (m, a))
                        for k in ("estimate", "adjusted", "verdict")}})
    agreement = Counter(f"{r['median_verdict']} under both" if r["agree"] == "yes" else
                        f"{r['median_verdict']} under the median, {r['mean_verdict']} under the mean" for r in rows)
    flips = [f"[{r['with']}] {r['claim']}" for r in rows if np.sign(r["median_estimate"]) != np.sign(r["mean_estimate"])]
    columns = [("claim", "the paper's claim", "{}"), ("with", "with", "{}")] + [
        (f"{s}_{k}", f"{s}: {title}", fmt) for s in SUMMARIES
        for k, title, fmt in (("estimate", "estimate", "{:+.2f}"), ("adjusted", "Holm p", "{:.2g}"),
                              ("verdict", "verdict", "{}"))] + [("agree", "same verdict", "{}")]
    return table(rows, columns, "The findings with a run's metric the median or the mean over its test populations",
                 [f"verdicts that differ between the summaries: {sum(r['agree'] == 'no' for r in rows)} of {len(rows)}",
                  "by agreement: " + "; ".join(f"{k} ({n})" for k, n in agreement.most_common()),
                  f"estimates that lean the other way under the mean: {len(flips)}" + (f": {'; '.join(flips)}" if flips else "")])


def power_lines(found_by: dict[str, list[Finding]]) -> Lines:
    """What each family's size and seeds let any outcome decide (:func:`setfuncs.experiments.report.family_power`),
    then per summary the verdicts and the detectable effects of its table."""
    lines = [str(row) for row in report.family_power(found_by["median"])]
    for summary, rows in found_by.items():
        sizes = sorted({f.detectable for f in rows if 0 < f.detectable < np.inf})
        unknown = sum(f.detectable == 0 for f in rows)
        lines.append(f"{summary}: " + ", ".join(f"{n} {v}" for v, n in Counter(f.verdict for f in rows).items())
                     + f"; detectable effects: {', '.join(f'{d:.2g}' for d in sizes)}"
                     + (f" ({unknown} unknown: the differences do not vary)" if unknown else ""))
    return Lines(tuple(lines))


def twin_verdicts(found: Sequence[Finding]) -> Table:
    """Each finding of the paper's grid beside its log-mean-exp twin (the same key): verdict and estimate."""
    lme = {f.key: f for f in found if f.variant == "lme"}
    rows = [{"claim": f.key.split("/")[0].replace("-", " ") + (f": {f.part}" if f.part else ""),
             "paper": f"{f.verdict}, {f.estimate:{FORMAT}}",
             "lme": f"{lme[f.key].verdict}, {lme[f.key].estimate:{FORMAT}}"}
            for f in found if f.variant == "paper" and f.seeds > 0 and f.key in lme]
    return table(rows, [("claim", "finding", "{}"), ("paper", VARIANT_LABELS["paper"], "{}"),
                        ("lme", VARIANT_LABELS["lme"], "{}")], "Verdict and estimate of each twin finding")


def plot_by_size(results: dict) -> Any:
    """The metric against the test population size per setting, median and best run
    (``setfuncs.experiments.mixture.figures.plot_by_population_size``), the paper's grid."""
    from .figures import plot_by_population_size

    return plot_by_population_size(by_population_size(results, variant="paper"))


def by_size_lines(results: dict) -> Lines:
    """Per setting, the sizes at which its median run and its best run beat EM; then how often the median
    run beats EM inside the training range, and how many settings lose at the largest size."""
    rows, sizes = by_population_size(results, variant="paper"), results["budget_parameters"]["test_population_sizes"]
    inside = [n for n in sizes if TRAIN_SIZES[0] <= n <= TRAIN_SIZES[1]]
    lines = [f"test population sizes: {', '.join(map(str, sizes))}; training sizes {TRAIN_SIZES[0]} to {TRAIN_SIZES[1]} "
             f"(shaded); every test population has {results['test_set']['particles']} particles, so the larger "
             "subsamples repeat particles"]
    for r in rows:
        median, best = dict(zip(r["sizes"], r["median"])), dict(zip(r["sizes"], r["best"]))
        lines.append(f"{r['setting']}: median run beats EM at n = {[n for n in r['sizes'] if median[n] < 0] or 'none'}; "
                     f"best run {r['best_spec']} at n = {[n for n in r['sizes'] if best[n] < 0] or 'none'}")
    beats = sum(dict(zip(r["sizes"], r["median"]))[n] < 0 for r in rows for n in inside)
    lines.append(f"inside the training range (n = {', '.join(map(str, inside))}) the median run beats EM at {beats} of "
                 f"{len(rows) * len(inside)} settings and sizes; at n = {sizes[-1]} the median run loses to EM in "
                 f"{sum(r['median'][-1] >= 0 for r in rows)} of {len(rows)} settings, the best run in "
                 f"{sum(r['best'][-1] >= 0 for r in rows)}")
    return Lines(tuple(lines))


def sigma_table(spread: dict) -> Table:
    """EM against the σ probe's configurations at each σ
    (:func:`~setfuncs.experiments.mixture.sensitivity.sensitivity_table`), with each median's interval."""
    columns = [("sigma", "σ", "{}"), ("spec", "configuration", "{}"), ("used", "seeds", "{}"),
               ("metric", "metric: median over seeds", "{:+.3f}"), ("interval", f"{LEVEL:.0%} interval", "{}"),
               ("metric_mean", "metric, mean over populations", "{:+.3f}"), ("verdict", "metric against EM", "{}"),
               ("model_mae", "model |error|: median", "{:.3f}"), ("em_mae", "EM |error|", "{:.3f}"),
               ("mae_verdict", "|error| against EM", "{}")]
    # only the shown columns: an unbounded interval's ends are infinite, and the rows' repr would print them
    rows = [{**{key: r.get(key) for key, _, _ in columns},
             "interval": interval_text(r["metric_low"], r["metric_high"], "+.2f", "sign")} for r in sensitivity_table(spread)]
    return table(rows, columns,
                 f"EM against {len(spread['configurations'])} configurations at each σ, seeds {spread['seeds']} "
                 f"({spread['budget']} budget)" + ("" if spread["complete"] else ", not complete"))


def sigma_lines(spread: dict) -> Lines:
    """What :func:`sigma_table` says: how many rows beat EM at each σ under both summaries, EM's error
    against a constant guess and the models', and whether its seeds can decide any row."""
    rows, sigmas = sensitivity_table(spread), spread["sigmas"]
    references = {r["sigma"]: r for r in spread["references"]}
    at = {s: [r for r in rows if r["sigma"] == s] for s in sigmas}
    lines = []
    for key, summary in (("metric", "median"), ("metric_mean", "mean")):
        below = ", ".join(f"{sum(r[key] < 0 for r in group)} of {len(group)} at σ = {s}" for s, group in at.items())
        middle = {s: float(np.median([r[key] for r in group])) for s, group in at.items()}
        trend = "nearer 0" if abs(middle[sigmas[0]]) < abs(middle[sigmas[-1]]) else "further from 0"
        lines.append(f"With the {summary} over test populations, the metric (median over seeds) is below 0 for {below}; "
                     f"its median over the configurations is {middle[sigmas[0]]:+.2f} at σ = {sigmas[0]} and "
                     f"{middle[sigmas[-1]]:+.2f} at σ = {sigmas[-1]}: {trend} at σ = {sigmas[0]}.")
    low, high = references[sigmas[0]], references[sigmas[-1]]
    lines.append(f"EM's mean absolute error is {low['em_mae']:.3f} at σ = {sigmas[0]} and {high['em_mae']:.3f} at "
                 f"σ = {sigmas[-1]}, where a constant guess, {high['constant']:.3g}, errs by {high['constant_mae']:.3f}; "
                 f"the models' median error lies between {min(r['model_mae'] for r in rows):.3f} and "
                 f"{max(r['model_mae'] for r in rows):.3f}, below EM's in "
                 f"{sum(r['model_mae'] < r['em_mae'] for r in rows)} of {len(rows)} rows.")
    used = min(r["used"] for r in rows)
    floor = smallest_p_value(used, "two-sided")
    lines.append(f"With {used} seeds no two-sided sign-test p-value is below {floor:.3g} (one-sided "
                 f"{smallest_p_value(used):.3g}), and Holm multiplies the smallest of the {len(rows)} rows by {len(rows)}: "
                 + ("a row can be decided" if len(rows) * floor <= ALPHA else "no row can be decided")
                 + f" at {ALPHA}, whatever the runs show; a table of {len(rows)} rows needs {seeds_needed(len(rows))} seeds.")
    return Lines(tuple(lines))


def rerun_lines(spread: dict, results: dict) -> Lines:
    """The σ probe's runs at the sweep's σ against the committed sweep's runs of the same configuration and
    seed: how many have exactly the same metric, and the commits that trained them."""
    sweep = {(r["spec"], r["seed"]): r["metric"] for r in results["runs"]}
    shared = [(r["metric"], sweep[r["spec"], r["seed"]]) for r in spread["runs"] if r["sigma"] == COMPONENT_STD
              and r["error"] is None and (r["spec"], r["seed"]) in sweep]
    same = sum(a == b for a, b in shared)
    others = f"; the others differ by up to {max(abs(a - b) for a, b in shared):.2g}" if same < len(shared) else ""
    dirty = " with uncommitted changes" if spread["git_commit"].endswith("-dirty") else ""
    return Lines((f"At σ = {COMPONENT_STD}, {same} of the probe's {len(shared)} runs have exactly the metric of the "
                  f"committed sweep's run of the same configuration and seed{others} (the sweep ran the code of commit "
                  f"{results['git_commit'][:7]}, the probe that of {spread['git_commit'][:7]}{dirty}).",))


def plot_learning_curves(results: dict, width: float = 6.85) -> Any:
    """The sweep's learning curves by setting (:mod:`~setfuncs.experiments.convergence`): the training Beta
    NLL (top) and the test NLL at the checkpoints (below it), medians with quartile bands, in a
    figure ``width`` inches wide."""
    import matplotlib.pyplot as plt

    from ..convergence import plot_checkpoint_curves, plot_loss_curves

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(width, 6.6), layout="constrained", sharex=True)
    plot_loss_curves(top, loss_curves(results, "setting"), quantity="training Beta NLL", log=False)
    plot_checkpoint_curves(bottom, checkpoint_curves(results, "setting"), "test NLL")
    top.set_xlabel("")
    for ax in (top, bottom):
        for text in ax.get_legend().get_texts():
            text.set_fontsize("medium")
    return fig


def late_change_table(results: dict) -> Table:
    """Per setting, the median test NLL at the last two checkpoints and the median change between them
    over seeds with its interval and verdict (:func:`~setfuncs.experiments.convergence.late_change`: sign
    test, one Holm correction over the settings); a note counts those still improving."""
    curves = checkpoint_curves(results, "setting")
    rows = [{"setting": r["label"], "before": curves[r["label"]]["median"][-2], "last": curves[r["label"]]["median"][-1],
             "change": f"{r['estimate']:+.3f} ({interval_text(r['low'], r['high'], '+.3f', 'sign')})",
             "adjusted": r["adjusted"], "verdict": r["better"]} for r in late_change(results, "setting", False)]
    a, b = next(iter(curves.values()))["steps"][-2:]
    improving = [r["setting"] for r in rows if r["verdict"] == "still improving"]
    return table(rows, [("setting", "setting", "{}"), ("before", f"step {a:,}", "{:.3f}"), ("last", f"step {b:,}", "{:.3f}"),
                        ("change", f"improvement ({LEVEL:.0%} interval)", "{}"), ("adjusted", "Holm p", "{:.3g}"),
                        ("verdict", "verdict", "{}")],
                 f"Median test NLL at the last two checkpoints of {len(results['runs'])} runs, and its change per seed",
                 [f"still improving at the end of the {results['budget']} budget: {len(improving)} of {len(rows)} "
                  "settings" + (f" ({', '.join(improving)})" if improving else "")])


def cost_table(results: dict) -> Table:
    """Per setting, over its runs: the median training and evaluation minutes and the total hours; a note
    gives the sweep's wall time."""
    rows = []
    for setting in SETTINGS:
        runs = [r for r in results["runs"] if r["setting"] == setting]
        if runs:
            rows.append({"setting": setting, "runs": len(runs),
                         "train": float(np.median([r["train_seconds"] for r in runs])) / 60,
                         "eval": float(np.median([r["eval_seconds"] for r in runs])) / 60,
                         "hours": sum(r["train_seconds"] + r["eval_seconds"] for r in runs) / 3600})
    return table(rows, [("setting", "setting", "{}"), ("runs", "runs", "{}"), ("train", "training (min)", "{:.1f}"),
                        ("eval", "evaluation (min)", "{:.1f}"), ("hours", "all runs (h)", "{:.1f}")],
                 f"Cost per run, median ({results['budget']} budget, one torch thread per run)",
                 [f"the sweep's wall time: {results['wall_seconds'] / 60:.0f} min"])
