r"""Chapter 8's analyses as short calls, each returning a small object that renders itself
(:mod:`~setfuncs.experiments.views`) or a figure: the result box (:func:`result_box`, :func:`lead`);
Table 1 and the medians behind it (:func:`table1` to :func:`lowest_lines`); Table 1's median best MSE
tested by swapping rows within seeds beside the typical run's verdicts (:func:`peak_rows`,
:func:`peak_summary`; in full: :func:`~setfuncs.experiments.circle.peak_test.peak_html`); log-mean-exp
against LSE (:func:`lme_table`, :func:`lme_lines`); and the methods page's tables (:func:`provenance` to
:func:`power_lines`). The task's pictures, the live training and the best runs at other population sizes
are in :mod:`~setfuncs.experiments.circle.lesson`, whose functions this module names too, so that a
chapter cell reads ``report.<name>``.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, Sequence

import numpy as np

from .. import report
from ..convergence import checkpoint_curves, late_change, loss_curves
from ..differences import claim_gaps
from ..findings import LEVEL, VARIANT_LABELS, VERDICTS, Finding, detectable_phrase, interval_text
from ..results import provenance_rows
from ..reruns import rerun_agreement
from ..schema import finished_runs
from ..sweeps import SETTINGS, TEST_SEED, lme_configurations, paper_configurations
from ..views import Lines, Table, table
from .baseline import constant_mse
from .data import POPULATION_SIZE, test_set
from .differences import CLAIM_AXES, convergence_ratios, protocol_differences
from .experiment import EXPERIMENT
from .findings import lme_against_lse
from . import lesson
from .lesson import (LiveRun, budget_table, by_size_lines, explore_circles, live_budget, live_table,  # noqa: F401
                     parameter_table, plot_by_size, plot_live_predictions, plot_live_training, plot_populations,
                     solver_check, task_facts, train_best, twin_table)
from .medians import lowest_counts, median_grids, median_mse
from .metric import mse_by_spec
from .peak_test import peak_agreement, peak_findings
from .table import circle_table

__all__ = ["SWEEP", "FULL_SWEEP", "PROBE", "FORMAT", "lead", "result_box", "table1", "table1_lines", "plot_table1",
           "rankings", "plot_grids", "lowest_lines", "peak_rows", "peak_summary", "lme_table",
           "lme_lines", "provenance", "table1_full", "protocol_lines", "convergence_lines",
           "plot_learning_curves", "late_change_table", "rerun_table", "cost_table", "finding_lines", "power_lines"]

#: The sweep the chapter reads — every configuration of the paper's grid and its log-mean-exp twins, ten seeds.
SWEEP = "circle-medium.json"
#: Two configurations trained at the FULL budget on a GPU (the convergence check).
FULL_SWEEP = "benchmarks/circle-full-gpu-h200.json"
#: Five configurations trained again at the medium budget with their learning curves.
PROBE = "probes/circle-convergence.json"
#: The format of the estimates in prose — log ratios of test MSEs (e to the estimate is the factor).
FORMAT = "+.3f"
PP, PR, RP, RR = SETTINGS


def lead(results: dict, found: Sequence[Finding]) -> str:
    """The result box's lead, every number read from ``results`` and ``found``: how the paper's tested
    findings split by verdict, most frequent first; what the paper compared and what we ran (the
    configurations, seeds, steps and budget); and for how many claims the paper's own statistic, tested
    on the same runs (:func:`peak_rows`), says what the typical run says. A ValueError if no paper's
    finding is tested."""
    tested = [f for f in found if f.family == "paper" and f.seeds > 0]
    if not tested:
        raise ValueError("found holds no tested finding of the paper's claims")
    pieces = [f"{n} {'is' if n == 1 else 'are'} {v}" for v, n in Counter(f.verdict for f in tested).most_common()]
    said = ", ".join(pieces[:-1]) + (" and " if len(pieces) > 1 else "") + pieces[-1]
    peaks = peak_rows(results, found)
    p = results["budget_parameters"]
    return (f"Of the {len(tested)} tested findings on the paper's claims, {said}. The paper trains Deep Sets to "
            f"predict the minimal enclosing circle of {POPULATION_SIZE} particles and compares four settings, plain "
            f"or recurrent aggregations in the equivariant layers and in the final aggregation, by their best runs; "
            f"we trained the {len(paper_configurations())} configurations of its grid and "
            f"{len(lme_configurations())} with log-mean-exp in place of LSE, {results['runs_per_configuration']} "
            f"seeds each, {p['steps']:,} steps ({results['budget']} budget), and compared the settings' typical "
            f"runs seed by seed; estimates are log ratios of test MSEs. The paper's own statistic, the median best "
            f"MSE, tested on the same runs, says what the typical run says for {sum(r['agree'] for r in peaks)} "
            f"of the {len(peaks)} claims.")


def result_box(results: dict, paper: str | os.PathLike) -> report.ResultBox:
    """The chapter's result box: :func:`lead`, then one sentence per verdict of the paper's claims on the
    findings of ``results`` (``paper``: ``results/paper-results.json``), in :data:`FORMAT`."""
    found = EXPERIMENT.findings(results, paper)
    return report.result_box(found, lead(results, found), FORMAT)


def _tables(results: dict, paper: str | os.PathLike) -> dict[str, list[dict]]:
    """Table 1's rows (:func:`~setfuncs.experiments.circle.circle_table`, batches of 20, 1,000 bootstraps,
    seed 0) of both grids, by variant."""
    return {v: circle_table(results, batch_size=20, bootstraps=1000, seed=0, paper=paper, variant=v)
            for v in ("paper", "lme")}


def table1(results: dict, paper: str | os.PathLike, lme: bool = False) -> Table:
    """Table 1 on the paper's grid as ratios to the plain/plain row, ours beside the paper's: the best
    MSE and the median best MSE (of batches of 20 runs), and each row's best run; with ``lme`` our ratios
    with log-mean-exp in place of LSE beside them (and no best run)."""
    tables = _tables(results, paper)
    rows = [{**r, "lme_best": t["best_mse_ratio"], "lme_median": t["median_best_mse_ratio"]}
            for r, t in zip(tables["paper"], tables["lme"])]
    columns = [c for key, name, short in (("best_mse", "best MSE", "best"), ("median_best_mse", "median best", "median"))
               for c in [(f"{key}_ratio", f"{name} ÷ plain/plain", "{:.2f}"),
                         *([("lme_" + short, "with log-mean-exp", "{:.2f}")] if lme else []),
                         (f"paper_{key}_ratio", "paper", "{:.2f}")]]
    return table(rows, [("setting", "equivariant / final", "{}"), *([] if lme else [("best_spec", "best run", "{}")]),
                        *columns], f"Table 1 as ratios to the plain/plain row: our {results['budget']} sweep and the paper's")


def table1_lines(results: dict, paper: str | os.PathLike) -> Lines:
    """The recurrent/recurrent row's best MSE over the plain/plain row's, ours against the paper's (the
    goal we set ourselves: at most the paper's ratio), and the paper's best MSE over ours by row."""
    rows = {r["setting"]: r for r in _tables(results, paper)["paper"]}
    ours, theirs = rows[RR]["best_mse_ratio"], rows[RR]["paper_best_mse_ratio"]
    scale = [r["paper_best_mse"] / r["best_mse"] for r in rows.values()]
    return Lines((f"recurrent/recurrent ÷ plain/plain, best MSE: ours {ours:.2f}, the paper's {theirs:.2f}: the goal "
                  f"(at most the paper's ratio) is {'met' if ours <= theirs else 'not met'}.",
                  f"The paper's best MSE is {min(scale):.0f} to {max(scale):.0f} times ours, by row: the absolute "
                  f"scales do not compare."))


def plot_table1(results: dict, paper: str | os.PathLike, width: float = 6.8) -> Any:
    """Table 1's two statistics as ratios to the plain/plain row, one panel each (the best MSE above, the
    median best MSE below, on one scale): ours on the paper's grid, ours with log-mean-exp in place of
    LSE, and the paper's, per setting; a dashed line at 1."""
    import matplotlib.pyplot as plt

    tables = _tables(results, paper)
    fig, axes = plt.subplots(2, 1, figsize=(width, 5.6), layout="constrained", sharex=True, sharey=True)
    x = np.arange(len(SETTINGS))
    for ax, key, title in zip(axes, ("best_mse", "median_best_mse"), ("best MSE", "median best MSE")):
        bars = {"ours (mean, max, LSE)": [r[f"{key}_ratio"] for r in tables["paper"]],
                "ours (mean, max, log-mean-exp)": [r[f"{key}_ratio"] for r in tables["lme"]],
                "the paper's Table 1": [r[f"paper_{key}_ratio"] for r in tables["paper"]]}
        for k, (label, values) in enumerate(bars.items()):
            ax.bar(x + (k - 1) * 0.27, values, 0.27, label=label)
        ax.axhline(1, color="0.4", ls="--", lw=0.8)
        ax.set_title(f"{title} ÷ plain/plain (lower is better)", fontsize=11)
        ax.set_ylabel("ratio to the plain/plain row")
    axes[-1].set_xticks(x, SETTINGS)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    return fig


def rankings(results: dict, paper: str | os.PathLike) -> Lines:
    """The four settings ranked by each of Table 1's statistics (lowest first), ours on the paper's grid
    beside the paper's."""
    rows = _tables(results, paper)["paper"]
    lines = []
    for key, name in (("best_mse", "best MSE"), ("median_best_mse", "median best MSE"), ("center_mse", "centre MSE"),
                      ("radius_mse", "radius MSE")):
        for who, column in (("ours", key), ("the paper's", f"paper_{key}")):
            lines.append(f"{name}, {who}: " + " < ".join(r["setting"] for r in sorted(rows, key=lambda r: r[column])))
    return Lines(tuple(lines))


def plot_grids(results: dict) -> Any:
    """The median test MSE over seeds of every configuration as heat maps, one per setting
    (``setfuncs.experiments.circle.figures.plot_median_grids``)."""
    from .figures import plot_median_grids

    return plot_median_grids(median_grids(mse_by_spec(results)))


def lowest_lines(results: dict) -> Lines:
    """On the paper's grid, how often each aggregation gives the lowest median MSE in a row (as the final
    aggregation) and in a column (as the equivariant one) of the heat maps
    (``setfuncs.experiments.circle.medians.lowest_counts``)."""
    final, equivariant = lowest_counts(median_grids(mse_by_spec(results)))
    return Lines(tuple(f"lowest median MSE in each of the {sum(counts.values())} {where}: "
                       + ", ".join(f"{a} {n}" for a, n in counts.items())
                       for where, counts in (("rows (the final aggregation)", final),
                                             ("columns (the equivariant aggregation)", equivariant))))


def peak_rows(results: dict, found: Sequence[Finding]) -> list[dict[str, Any]]:
    """Table 1's median best MSE tested by swapping rows within seeds, claim by claim, beside the typical
    run's verdicts (:func:`~setfuncs.experiments.circle.peak_test.peak_findings`, :func:`~setfuncs.experiments.circle.peak_test.peak_agreement`)."""
    return peak_agreement(peak_findings(results), found)


def peak_summary(results: dict, found: Sequence[Finding]) -> Lines:
    """One sentence: for how many claims the paper's statistic says what the typical run says, and each
    claim where they disagree, with both verdicts."""
    rows = peak_rows(results, found)
    differ = [f"{r['words']} (the typical run: {r['verdict']}; the median best: {r['direction']})"
              for r in rows if not r["agree"]]
    return Lines((f"Tested exactly on the same runs, the paper's median best MSE says what the typical run says for "
                  f"{sum(r['agree'] for r in rows)} of the {len(rows)} claims"
                  + (f"; they differ on {'; '.join(differ)}." if differ else "."),))


def lme_table(results: dict) -> Table:
    """Each LSE configuration against its log-mean-exp twin, paired by seed
    (:func:`~setfuncs.experiments.circle.findings.lme_against_lse`): both medians over seeds, their ratio (lme ÷ LSE),
    the mean log gain :math:`\\ln \\text{MSE}_\\text{LSE} - \\ln \\text{MSE}_\\text{lme}` with its interval,
    Holm p and the side it favours."""
    mse_of = mse_by_spec(results)
    rows = []
    for row in lme_against_lse(results):
        if row["setting"] != "all":
            lse, lme = median_mse(mse_of, row["spec"]), median_mse(mse_of, row["twin"])
            rows.append({**row, "lse": lse, "lme": lme, "ratio": lme / lse,
                         "interval": interval_text(row["low"], row["high"], ".2f")})
    return table(rows, [("setting", "equivariant / final", "{}"), ("spec", "with LSE", "{}"), ("lse", "median MSE", "{:.3f}"),
                        ("twin", "with log-mean-exp", "{}"), ("lme", "median MSE", "{:.3f}"), ("ratio", "ratio", "{:.2f}"),
                        ("estimate", "mean log gain", "{:.2f}"), ("interval", f"{LEVEL:.0%} interval", "{}"),
                        ("adjusted", "Holm p", "{:.2g}"), ("better", "better", "{}")],
                 "Each LSE configuration against its log-mean-exp twin, paired by seed (ratio of medians = lme / LSE)")


#: Where LSE sits in a configuration, for :func:`lme_lines`.
LSE_PLACES = {"in plain equivariant layers": lambda spec: spec.startswith("lse/"),
              "in recurrent equivariant layers": lambda spec: spec.startswith("r-lse/"),
              "in the final aggregation only": lambda spec: "lse" not in spec.split("/")[0]}


def lme_lines(results: dict) -> Lines:
    """Log-mean-exp against LSE in a few sentences: the pairs by the side their corrected test favours,
    the pooled comparison, the gains by where LSE sits, and the worst LSE median beside a constant
    prediction's MSE on the sweep's test set (``setfuncs.experiments.circle.baseline.constant_mse``)."""
    rows = lme_against_lse(results)
    pairs, pooled = [r for r in rows if r["setting"] != "all"], next(r for r in rows if r["setting"] == "all")
    mse_of = mse_by_spec(results)
    sides = Counter(r["better"] for r in pairs)
    lines = [f"log-mean-exp has the lower MSE in {sides['log-mean-exp']} of the {len(pairs)} pairs, LSE in "
             f"{sides['LSE']}, {sides['undecided']} undecided (two-sided tests, corrected together)",
             f"pooled over the pairs: mean log gain {pooled['estimate']:.2f} ({LEVEL:.0%} interval "
             f"{interval_text(pooled['low'], pooled['high'], '.2f')}), the median pair's MSE ratio lme/LSE "
             f"{np.exp(-pooled['estimate']):.2f}"]
    for where, holds in LSE_PLACES.items():
        gains = [r["estimate"] for r in pairs if holds(r["spec"])]
        medians = [median_mse(mse_of, r["spec"]) for r in pairs if holds(r["spec"])]
        lines.append(f"LSE {where} ({len(gains)} pairs): mean log gain {np.mean(gains):.2f} on average, {min(gains):.2f} to "
                     f"{max(gains):.2f}; "
                     f"median MSE with LSE {min(medians):.3f} to {max(medians):.3f}")
    _, y, _ = test_set(results["budget_parameters"]["test_size"], POPULATION_SIZE, TEST_SEED)
    worst = max(pairs, key=lambda r: median_mse(mse_of, r["spec"]))
    lines.append(f"a constant prediction (the mean circle) scores MSE {constant_mse(y):.2f} on the sweep's test set; "
                 f"the worst LSE median, {worst['spec']}, {median_mse(mse_of, worst['spec']):.2f}, its twin "
                 f"{worst['twin']} {median_mse(mse_of, worst['twin']):.2f}")
    return Lines(tuple(lines))


def provenance(results: dict) -> Table:
    """How the sweep was made (:func:`~setfuncs.experiments.results.provenance_rows`), with its budget and
    its configurations counted."""
    p = results["budget_parameters"]
    rows = [("budget", f"{results['budget']}: {p['steps']:,} steps, width {p['hidden']}")]
    rows += provenance_rows(results, "setfuncs.experiments.circle")
    rows += [("configurations", f"{len(paper_configurations())} of the paper's grid and {len(lme_configurations())} "
                                f"with log-mean-exp in place of LSE, {results['runs_per_configuration']} seeds each: "
                                f"{len(results['runs'])} runs")]
    return table([{"what": k, "value": v} for k, v in rows], [("what", "", "{}"), ("value", "", "{}")])


def table1_full(results: dict, paper: str | os.PathLike, variant: str = "paper") -> Table:
    """Table 1 of ``variant``'s grid in full: runs, collapsed, best MSE with its split, median best MSE and
    the best run, beside the paper's four numbers."""
    rows = _tables(results, paper)[variant]
    grid = "the paper's aggregations (mean, max, LSE)" if variant == "paper" else "log-mean-exp in place of LSE"
    return table(rows, [("setting", "equivariant / final", "{}"), ("runs", "runs", "{}"), ("collapsed", "collapsed", "{}"),
                        ("best_mse", "best MSE", "{:.3f}"), ("radius_mse", "radius MSE", "{:.3f}"),
                        ("center_mse", "centre MSE", "{:.3f}"), ("median_best_mse", "median best MSE", "{:.3f}"),
                        ("best_spec", "best run", "{}"), ("paper_best_mse", "paper: best MSE", "{:.2f}"),
                        ("paper_radius_mse", "paper: radius", "{:.2f}"), ("paper_center_mse", "paper: centre", "{:.2f}"),
                        ("paper_median_best_mse", "paper: median best", "{:.2f}")],
                 f"Minimal enclosing circle, N = {POPULATION_SIZE}, {grid}: our sweep ({results['budget']} budget) "
                 f"and the paper's Table 1")


def protocol_lines(results: dict) -> Lines:
    """The protocol table's rows counted by status, then per group of claims the axes on which our protocol
    is not known to match the paper's (:func:`~setfuncs.experiments.differences.claim_gaps`), which keep a
    decided opposite from being called contradicted."""
    protocol = protocol_differences(results)
    lines = ["rows by status: " + ", ".join(f"{s} {n}" for s, n in Counter(r.status for r in protocol).items())]
    blocking: dict[str, list[str]] = {}
    for claim, gap in claim_gaps(results, protocol_differences, CLAIM_AXES).items():
        blocking.setdefault(gap, []).append(claim)
    for gap, claims in blocking.items():
        axes = gap.split("; ") if gap else []
        lines.append(f"{'; '.join(claims)}: " + (f"cannot be called contradicted on this protocol, {len(axes)} axes "
                                                 f"not known to match ({', '.join(axes)})" if axes else
                                                 "can be called contradicted: the protocol matches on every axis"))
    return Lines(tuple(lines))


def convergence_lines(results: dict, full: dict) -> Lines:
    """Both budgets, and per configuration run at both the median test MSE of each and their ratio
    (:func:`~setfuncs.experiments.circle.differences.convergence_ratios`: above 1, the medium runs had not converged)."""
    ratios = convergence_ratios(results, full)
    medium, longer = mse_by_spec(results), mse_by_spec(full)
    lines = [f"{name} budget: {s['budget_parameters']['steps']:,} steps, width {s['budget_parameters']['hidden']}"
             for name, s in ((results["budget"], results), (full["budget"], full))]
    lines += [f"{spec}: median MSE {median_mse(medium, spec):.4f} ({len(medium[spec])} seeds) at the medium budget, "
              f"{median_mse(longer, spec):.4f} ({len(longer[spec])} seeds) at the full: ratio {ratio:.1f}"
              for spec, ratio in ratios.items()]
    lines.append(f"the medium runs of {sum(r > 1 for r in ratios.values())} of {len(ratios)} configurations had not "
                 f"converged (ratio above 1)")
    return Lines(tuple(lines))


def plot_learning_curves(probe: dict, width: float = 6.8) -> Any:
    """The probe's learning curves by configuration (:mod:`~setfuncs.experiments.convergence`): the training
    loss (above) and the test MSE at the checkpoints (below), medians with quartile bands, on log scales
    labelled as plain numbers; the upper panel's legend names both panels' curves where they are the
    same (each panel has its own otherwise)."""
    import matplotlib.pyplot as plt

    from ..convergence import plot_checkpoint_curves, plot_loss_curves
    from ...plots import plain_log_ticks

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(width, 7.2), layout="constrained", sharex=True)
    plot_loss_curves(top, loss_curves(probe, "spec"), quantity="training loss")
    plot_checkpoint_curves(bottom, checkpoint_curves(probe, "spec"), f"test MSE at N = {POPULATION_SIZE}")
    bottom.set_yscale("log")
    for ax in (top, bottom):
        plain_log_ticks(ax.yaxis)
        ax.legend(fontsize="medium")                        # convergence draws it "small", too small in the column
    top.set_xlabel("")
    (above, names_above), (below, names_below) = top.get_legend_handles_labels(), bottom.get_legend_handles_labels()
    if names_above == names_below and [h.get_color() for h in above] == [h.get_color() for h in below]:
        bottom.get_legend().remove()
    return fig


def late_change_table(probe: dict) -> Table:
    """Per configuration of the probe, the median test MSE at the last two checkpoints and the median
    improvement between them over seeds with its interval and verdict
    (:func:`~setfuncs.experiments.convergence.late_change`: sign test, one Holm correction over the
    configurations); notes describe the probe and count those still improving."""
    curves = checkpoint_curves(probe, "spec")
    rows = [{"spec": r["label"], "before": curves[r["label"]]["median"][-2], "last": curves[r["label"]]["median"][-1],
             "change": f"{r['estimate']:.4f} ({interval_text(r['low'], r['high'], '.4f', 'sign')})",
             "adjusted": r["adjusted"], "verdict": r["better"]} for r in late_change(probe, "spec", higher_is_better=False)]
    a, b = next(iter(curves.values()))["steps"][-2:]
    improving = [r["spec"] for r in rows if r["verdict"] == "still improving"]
    return table(rows, [("spec", "configuration", "{}"), ("before", f"step {a:,}", "{:.4f}"), ("last", f"step {b:,}", "{:.4f}"),
                        ("change", f"improvement ({LEVEL:.0%} interval)", "{}"), ("adjusted", "Holm p", "{:.2g}"),
                        ("verdict", "verdict", "{}")],
                 "Median test MSE at the last two checkpoints, and its improvement per seed",
                 [f"probe: {len(probe['runs'])} runs ({len(probe['configurations'])} configurations × "
                  f"{len(probe['seeds'])} seeds), {probe['budget_parameters']['steps']:,} steps each, commit "
                  f"{probe['git_commit'][:7]}, {probe['wall_seconds'] / 60:.0f} min of wall time",
                  f"still improving at the end of the {probe['budget']} budget: {len(improving)} of {len(rows)} "
                  f"configurations" + (f" ({', '.join(improving)})" if improving else "")])


def rerun_table(probe: dict, results: dict) -> Table:
    """The probe's runs against the committed sweep's of the same configuration and seed
    (:func:`~setfuncs.experiments.reruns.rerun_agreement`): bit-identical seeds, the largest relative
    difference of the test MSE and both medians."""
    rows = [{"spec": spec, **row} for spec, row in rerun_agreement(probe, results, "mse").items()]
    return table(rows, [("spec", "configuration", "{}"), ("identical", "bit-identical seeds", "{}"), ("seeds", "of", "{}"),
                        ("largest_relative_difference", "largest relative difference", "{:.1%}"),
                        ("median_committed", "median MSE, committed", "{:.4f}"), ("median_rerun", "rerun", "{:.4f}")],
                 f"The probe (commit {probe['git_commit'][:7]}) against the committed sweep (commit "
                 f"{results['git_commit'][:7]})")


def cost_table(results: dict) -> Table:
    """Per setting, over its finished runs (both grids): the runs and the median and largest training
    time in seconds; a note gives the sweep's wall time."""
    rows = []
    for setting in SETTINGS:
        seconds = [r["train_seconds"] for r in finished_runs(results) if r["setting"] == setting]
        rows.append({"setting": setting, "runs": len(seconds), "median": float(np.median(seconds)),
                     "largest": float(np.max(seconds))})
    return table(rows, [("setting", "setting", "{}"), ("runs", "runs", "{}"), ("median", "median training (s)", "{:.0f}"),
                        ("largest", "largest (s)", "{:.0f}")],
                 f"Training time per run ({results['budget']} budget, one torch thread per run)",
                 [f"the sweep's wall time: {results['wall_seconds'] / 60:.0f} min"])


def finding_lines(found: Sequence[Finding]) -> Lines:
    """Per claim, its verdicts on both grids and per grid what it rests on: the estimate with its interval,
    seeds and Holm p where decided, what its seeds could detect where not, and its note; last, the table's
    verdicts counted."""
    lines = []
    by_claim: dict[str, list[Finding]] = {}
    for f in found:
        by_claim.setdefault(f.key, []).append(f)
    for rows in by_claim.values():
        lines.append(f"{' / '.join(dict.fromkeys(f.verdict for f in rows))}: {rows[0].words}")
        for f in rows:
            said = (f"estimate {f.estimate:.2f} ({LEVEL:.0%} {interval_text(f.low, f.high, '.2f', f.test)}, "
                    f"{f.seeds} seeds), Holm p {f.adjusted:.3f}" if f.decided else detectable_phrase(f, ".2f"))
            lines.append(f"    {VARIANT_LABELS[f.variant]}, {f.verdict}: {said}" + (f"; {f.note}" if f.note else ""))
    counts = Counter(f.verdict for f in found)
    return Lines((*lines, "verdicts over the table: " + ", ".join(f"{v} {counts[v]}" for v in VERDICTS)))


def power_lines(found: Sequence[Finding]) -> Lines:
    """What each family's size and seeds let any outcome decide (:func:`setfuncs.experiments.report.family_power`)."""
    return Lines(tuple(str(row) for row in report.family_power(found)))
