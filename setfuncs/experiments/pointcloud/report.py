r"""Chapter 10's analyses as short calls: the result box, Table 2 from the sweep beside the paper's, and
the methods page's tables, each a small object that renders itself (:mod:`~setfuncs.experiments.views`).

- :data:`SWEEP`, :data:`FORMAT`, :func:`findings`: the results file the chapter reads, the estimates'
  format, and the findings with every part of a claim worded as the result box reads it;
- :func:`lead`, :func:`result_box`: what the paper claimed, what we ran and what the findings say;
- :func:`results_lines`, :func:`plot_against_paper`, :func:`table2`, :func:`rank_lines`,
  :func:`generalisation_lines`, :func:`lse_offset`: Table 2 and its reading;
- :func:`provenance`, :func:`best_table`, :func:`by_size_table`, :func:`protocol_lines`,
  :func:`late_change_table`, :func:`plot_learning_curves`, :func:`beyond_table`, :func:`cost_table`,
  :func:`twin_table`, :func:`twin_verdicts`, :func:`power_lines`, :func:`claim_table`,
  :func:`opposite_lines`: the methods page.

The data, the model and the live training are in :mod:`~setfuncs.experiments.pointcloud.lesson`, whose
functions this module names too, so that a chapter cell reads ``report.<name>``.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import replace
from typing import Any, Sequence

import numpy as np

import setfuncs as sf

from .. import report
from ..convergence import checkpoint_curves, late_change
from ..differences import gaps
from ..overview import RESULTS
from ..findings import LEVEL, VARIANT_LABELS, Finding, interval_text, opposite_floor, opposite_needs
from ..paired import smallest_p_value
from ..results import provenance_rows
from ..views import Lines, Table, table
from .agreement import rank_agreement
from .budget import TABLE_SIZES
from .costs import cost_table as _cost_rows, throughput_spread
from .differences import CLAIM_AXES, PAPER_POINTS, protocol_differences
from .experiment import EXPERIMENT
from .findings import lme_against_lse, pointcloud_claims
from .lesson import (LIVE_SPECS, SHAPES, Confusions, Examples, LiveRun, budget_tables, cloud_explorable, confusion_lines,
                     data_table, example_clouds, live_budget, live_clouds, live_confusions, live_table, parameter_table,
                     plot_examples, plot_live, plot_live_confusions, plot_preprocessing_demo, standardised_lines,
                     train_live)
from .sweep import LME_COLUMNS
from .table import accuracy_curves, data_label, paper_rows, pointcloud_table

__all__ = ["SWEEP", "FORMAT", "findings", "lead", "result_box", "results_lines", "plot_against_paper", "table2",
           "rank_lines", "generalisation_lines", "lse_offset", "provenance", "best_table", "by_size_table",
           "protocol_lines", "late_change_table", "plot_learning_curves", "beyond_table", "cost_table", "twin_table",
           "twin_verdicts", "power_lines", "claim_table", "opposite_lines", "data_label"]

#: The sweep the chapter reads (:data:`~setfuncs.experiments.overview.RESULTS`) — Table 2's ten columns and the
#: two log-mean-exp columns, ten seeds each.
SWEEP = RESULTS["pointcloud"]
#: The format of the estimates in prose — differences of test accuracies, in percent.
FORMAT = "+.1%"


def _said(pieces: Sequence[str]) -> str:
    return ", ".join(pieces[:-1]) + (" and " if len(pieces) > 1 else "") + pieces[-1]


def findings(results: dict, paper: str | os.PathLike) -> list[Finding]:
    """The findings of ``results`` (``setfuncs.experiments.pointcloud.pointcloud_findings``), every
    part of a claim of several worded "<claim> (at <part>)", the form the shared result box reads a part
    from (the first part's words without their closing " at <part>")."""
    base: dict[tuple[str, str], str] = {}
    worded = []
    for f in EXPERIMENT.findings(results, paper):
        if "/" in f.key and f.part:
            claim = base.setdefault((f.variant, f.key.split("/")[0]), f.words.removesuffix(f" at {f.part}"))
            f = replace(f, words=f"{claim} (at {f.part})")
        worded.append(f)
    return worded


def lead(results: dict, found: Sequence[Finding]) -> str:
    """The result box's lead, every number read from ``results`` and ``found``: how the paper's tested
    findings split by verdict, most frequent first; then what the paper did and what we ran (the columns,
    seeds, steps and budget, the data, and what a decided opposite reads on data other than the paper's).
    A ValueError if no paper's finding is tested."""
    tested = [f for f in found if f.family == "paper" and f.seeds > 0]
    if not tested:
        raise ValueError("found holds no tested finding of the paper's claims")
    said = _said([f"{n} {'is' if n == 1 else 'are'} {v}" for v, n in Counter(f.verdict for f in tested).most_common()])
    p, data = results["budget_parameters"], results["data"]
    columns = [s for s in results["configurations"] if s in sf.TABLE2_SPECS]
    lme = [s for s in results["configurations"] if s in LME_COLUMNS]
    sizes = _said([f"{n:,}" for n in results["evaluation"]["table_sizes"]])
    clouds = ("the offline shapes ({} classes of randomly deformed solids, not ModelNet40)".format(data["classes"])
              if data["name"] == "shapes" else f"ModelNet40 ({data['classes']} classes)")
    data_row = next(d for d in protocol_differences(results) if d.axis == "data")
    opposite = "" if data_row.matches else ", on which a decided opposite is not reproduced, never contradicted"
    return (f"Of the {len(tested)} tested findings on the paper's claims, {said}. The paper keeps the Deep Sets "
            f"point-cloud classifier and its hyper-parameters, swaps only its aggregations, trains on "
            f"{PAPER_POINTS:,} points of ModelNet40 and tests on {sizes} points; we trained its {len(columns)} "
            f"columns of Table 2 and {len(lme)} with log-mean-exp in place of LSE, {results['runs_per_configuration']} "
            f"seeds each, {p['steps']:,} steps ({results['budget']} budget) on {p['points']:,} points of {clouds}"
            f"{opposite}; estimates are differences of test accuracies.")


def result_box(results: dict, paper: str | os.PathLike) -> report.ResultBox:
    """The chapter's result box: :func:`lead`, then one sentence per verdict of the paper's claims on
    :func:`findings` of ``results`` (``paper``: ``results/paper-results.json``), in :data:`FORMAT`."""
    found = findings(results, paper)
    return report.result_box(found, lead(results, found), FORMAT)


def _means(results: dict) -> dict[str, dict]:
    return {row["spec"]: row for row in pointcloud_table(results)}


def results_lines(results: dict, paper: str | os.PathLike) -> Lines:
    """Table 2 in two sentences: the leading column of ours and ``max/max`` at the training size and at the
    smallest of Table 2's sizes (means over the runs that trained), then the paper's at the same sizes."""
    rows, theirs = _means(results), paper_rows(paper)
    big, small = TABLE_SIZES[0], TABLE_SIZES[-1]

    def best(accuracy: dict[str, float]) -> tuple[str, float]:
        spec = max((s for s in accuracy if accuracy[s] is not None), key=lambda s: accuracy[s])
        return spec, accuracy[spec]

    ours = {n: best({s: r[f"mean_{n}"] for s, r in rows.items()}) for n in (big, small)}
    paper_best = best({s: v[small] for s, v in theirs.items()})
    mm = rows["max/max"]
    return Lines((f"On our {len(rows)} columns, {ours[big][0]} leads at the training size of {big:,} points with "
                  f"{ours[big][1]:.1%} mean test accuracy, where max/max has {mm[f'mean_{big}']:.1%}; at {small} "
                  f"points {ours[small][0]} leads with {ours[small][1]:.1%} and max/max keeps {mm[f'mean_{small}']:.1%}.",
                  f"The paper's Table 2, on ModelNet40, gives max/max {theirs['max/max'][big]:.1%} at {big:,} points "
                  f"and {theirs['max/max'][small]:.1%} at {small}, where {paper_best[0]} leads with {paper_best[1]:.1%}."))


def plot_against_paper(results: dict, paper: str | os.PathLike) -> Any:
    """Mean accuracy against the population size of every column, ours above the paper's Table 2
    (``setfuncs.experiments.pointcloud.figures.plot_against_paper``), the title saying over how many
    runs the means are."""
    from .figures import plot_against_paper as draw

    seeds, curves = results["runs_per_configuration"], accuracy_curves(results)
    left_out = len(curves) < len(_means(results)) or any(c["runs"] < c["of"] for c in curves)
    over = (f"mean over the runs that did not collapse,\nof {seeds} seeds; the legend gives the counts" if left_out
            else f"mean of {seeds} seeds")
    return draw(curves, paper_rows(paper), results, f"ours: {SHAPES} ({results['budget']} budget, {over})")


def table2(results: dict, paper: str | os.PathLike) -> Table:
    """Per column (:func:`~setfuncs.experiments.pointcloud.table.pointcloud_table`): the runs used (neither
    diverged nor collapsed), our mean test accuracy over them at Table 2's sizes and the paper's; notes
    count the collapsed runs and give chance on both data sets."""
    rows = [{**r, "used": r["runs"] - r["collapsed"] - r["diverged"]} for r in pointcloud_table(results, paper)]
    collapsed = [f"{r['spec']} {r['collapsed']}" for r in rows if r["collapsed"]]
    classes = results["data"]["classes"]
    return table(rows, [("spec", "column", "{}"), ("used", "runs used", "{}")]
                 + [(f"mean_{n}", f"ours, n = {n:,}", "{:.1%}") for n in TABLE_SIZES]
                 + [(f"paper_{n}", f"paper, n = {n:,}", "{:.1%}") for n in TABLE_SIZES],
                 f"Test accuracy, mean over seeds: ours on the {SHAPES}, the paper's on ModelNet40 (one number per cell)",
                 [f"collapsed runs, left out of the means ({sum(r['collapsed'] for r in rows)} of "
                  f"{sum(r['runs'] for r in rows)}): " + (", ".join(collapsed) or "none"),
                  f"chance: 1/{classes} = {1 / classes:.1%} on the {SHAPES}, 1/40 = {1 / 40:.1%} on ModelNet40"])


def rank_lines(results: dict, paper: str | os.PathLike) -> Lines:
    """Spearman's rank correlation of our column means with the paper's at each of Table 2's sizes
    (``setfuncs.experiments.pointcloud.agreement.rank_agreement``), and our top three at each."""
    rows = rank_agreement(pointcloud_table(results), paper_rows(paper), TABLE_SIZES)
    used, left_out = rows[0]["columns"], rows[0]["left_out"]
    return Lines((f"Rank correlation of our means with the paper's over the {len(used)} of {len(sf.TABLE2_SPECS)} "
                  f"columns of Table 2 with a mean at every size: "
                  + ", ".join(f"{r['rho']:+.2f} at n = {r['n']:,}" for r in rows)
                  + (f" (left out, without one: {', '.join(left_out)})" if left_out else "") + ".",
                  "Our top three: " + "; ".join(f"at n = {r['n']:,}, {', '.join(r['order'][:3])}" for r in rows) + "."))


def generalisation_lines(results: dict, specs: Sequence[str] = LIVE_SPECS) -> Lines:
    """For each column of ``specs``: its mean accuracy at the largest and the smallest of Table 2's sizes
    and the loss between them, over its runs that trained."""
    rows, big, small = _means(results), TABLE_SIZES[0], TABLE_SIZES[-1]
    return Lines(tuple(f"{s}: {r[f'mean_{big}']:.1%} at {big:,} points, {r[f'mean_{small}']:.1%} at {small}, a loss of "
                       f"{r[f'mean_{big}'] - r[f'mean_{small}']:.1%} (its {r['runs'] - r['collapsed'] - r['diverged']} "
                       f"runs that trained)" for s in specs for r in [rows[s]]))


def lse_offset(results: dict) -> Lines:
    r"""How far LSE lies above log-mean-exp at Table 2's sizes, :math:`\ln n`, and how far that moves from
    the training size :math:`n_0`, :math:`\ln n - \ln n_0`."""
    train = results["budget_parameters"]["points"]
    return Lines(("LSE minus log-mean-exp, ln n: " + ", ".join(f"{math.log(n):.2f} at n = {n:,}" for n in TABLE_SIZES),
                  f"its shift from the training size, ln n - ln {train:,}: "
                  + ", ".join(f"{math.log(n / train):+.2f} at n = {n:,}" for n in TABLE_SIZES if n != train)))


def provenance(results: dict) -> Table:
    """How the sweep was made: the data, budget, optimiser and test sizes, then
    :func:`~setfuncs.experiments.results.provenance_rows`."""
    p = results["budget_parameters"]
    rows = [("data", data_label(results)),
            ("budget", f"{results['budget']}: {p['steps']:,} steps of {p['batch']} clouds of {p['points']:,} points, "
                       f"width {p['hidden']}"),
            ("optimiser", f"Adam, ε {p['eps']:g}, learning rate × {p['decay']:g} after "
                          f"{' and '.join(f'{f:.0%}' for f in p['decay_at'])} of the steps"),
            ("test population sizes", ", ".join(map(str, results["evaluation"]["sizes"]))),
            ("seeds", results["seed_scheme"])] + provenance_rows(results, "setfuncs.experiments.pointcloud")
    return table([{"what": k, "value": v} for k, v in rows], [("what", "", "{}"), ("value", "", "{}")])


def best_table(results: dict) -> Table:
    """Per column: its runs, those that diverged or collapsed, and the best seed's accuracy at each of
    Table 2's sizes (the largest at each size separately, over the runs that trained)."""
    return table(pointcloud_table(results), [("spec", "column", "{}"), ("runs", "runs", "{}"),
                                             ("diverged", "diverged", "{}"), ("collapsed", "collapsed", "{}")]
                 + [(f"best_{n}", f"best seed, n = {n:,}", "{:.1%}") for n in TABLE_SIZES],
                 f"The best seed's test accuracy, {data_label(results)}")


def by_size_table(results: dict) -> Table:
    """Per column, the mean accuracy at every tested size over its runs with an accuracy
    (:func:`~setfuncs.experiments.pointcloud.table.accuracy_curves`)."""
    curves = accuracy_curves(results)
    sizes = curves[0]["sizes"] if curves else []
    rows = [{"spec": c["spec"], "runs": f"{c['runs']} of {c['of']}", **dict(zip(map(str, c["sizes"]), c["mean"]))}
            for c in curves]
    return table(rows, [("spec", "column", "{}"), ("runs", "runs", "{}")]
                 + [(str(n), f"n = {n:,}", "{:.0%}") for n in sizes],
                 f"Mean test accuracy at every tested size ({results['budget']} budget, trained at "
                 f"n = {results['budget_parameters']['points']:,})")


def protocol_lines(results: dict) -> Lines:
    """Per claim group of :data:`~setfuncs.experiments.pointcloud.differences.CLAIM_AXES`, the axes on which our
    protocol is not known to match the paper's; then, where the data differ, what that means."""
    protocol = protocol_differences(results)
    lines = [f"{key}: {gaps(protocol, axes) or 'none: the protocol matches on every axis it depends on'}"
             for key, axes in CLAIM_AXES.items()]
    data = next(d for d in protocol if d.axis == "data")
    on_data = [key for key, axes in CLAIM_AXES.items() if "data" in axes]
    if not data.matches:
        lines.append(f"the data axis is {data.status} ({data.ours}), and {len(on_data)} of the {len(CLAIM_AXES)} "
                     f"claim groups depend on it: on these data an opposite result reads 'not reproduced on the shape "
                     f"surrogate', never 'contradicted'")
    return Lines(tuple(lines))


def late_change_table(results: dict) -> Table:
    """Per column, the median test accuracy at 1,000 points at the last two checkpoints and the median change
    between them over seeds with its interval and verdict (:func:`~setfuncs.experiments.convergence.late_change`:
    sign test, one Holm correction over the columns); notes count those still improving and name the untested."""
    curves = checkpoint_curves(results, "spec")
    rows = [{"spec": row["label"], "before": curves[row["label"]]["median"][-2], "last": curves[row["label"]]["median"][-1],
             "change": f"{row['estimate']:+.1%} ({interval_text(row['low'], row['high'], '+.1%', 'sign')})",
             "seeds": row["seeds"], "verdict": row["better"]} for row in late_change(results, "spec", higher_is_better=True)]
    steps = next(iter(curves.values()))["steps"] if curves else [0, 0]
    improving = [r["spec"] for r in rows if r["verdict"] == "still improving"]
    untested = sorted({r["spec"] for r in results["runs"]} - {r["spec"] for r in rows})
    return table(rows, [("spec", "column", "{}"), ("before", f"step {steps[-2]:,}", "{:.1%}"),
                        ("last", f"step {steps[-1]:,}", "{:.1%}"), ("change", f"change ({LEVEL:.0%} interval)", "{}"),
                        ("seeds", "seeds", "{}"), ("verdict", "verdict", "{}")],
                 f"Median test accuracy at n = {TABLE_SIZES[0]:,} at the last two checkpoints, and its change per seed",
                 [f"{len(results['runs'])} runs of {results['budget_parameters']['steps']:,} steps; checkpoints at steps "
                  + ", ".join(f"{s:,}" for s in steps),
                  f"still improving at the end of the {results['budget']} budget: {len(improving)} of {len(rows)} columns"
                  + (f" ({', '.join(improving)})" if improving else "")]
                 + ([f"not tested (checkpoints from fewer than two seeds): {', '.join(untested)}"] if untested else []))


def plot_learning_curves(results: dict) -> Any:
    """The sweep's learning curves by column (``setfuncs.experiments.pointcloud.figures.plot_learning_curves``)."""
    from .figures import plot_learning_curves as draw

    return draw(results, SHAPES)


def beyond_table(results: dict) -> Table:
    """Per column (``setfuncs.experiments.pointcloud.costs.cost_table``), over its runs that did not
    collapse: the mean accuracy at the training size, the spread over seeds there, the change to the
    largest tested size and the mean accuracy at 10 points."""
    train, top = results["budget_parameters"]["points"], max(results["evaluation"]["sizes"])
    return table(_cost_rows(results), [("spec", "column", "{}"), ("runs", "runs", "{}"), ("collapsed", "collapsed", "{}"),
                                       ("acc_train", f"mean, n = {train:,}", "{:.1%}"),
                                       ("spread", "best − worst seed", "{:.1%}"),
                                       ("gain_top", f"n = {top:,} minus n = {train:,}", "{:+.1%}"),
                                       ("acc_10", "mean, n = 10", "{:.1%}")],
                 f"Beyond Table 2: larger and much smaller than the training size, {data_label(results)}")


def cost_table(results: dict) -> Table:
    """Per column, its parameters, the median training throughput and the median training time per run
    over all its runs that trained to the end (collapsed ones paid too); notes give the fastest against the
    slowest column and how far runs of one column differ (``costs.throughput_spread``)."""
    rows = _cost_rows(results)
    fastest, slowest = max(rows, key=lambda r: r["throughput"]), min(rows, key=lambda r: r["throughput"])
    return table(rows, [("spec", "column", "{}"), ("parameters", "parameters", "{:,}"),
                        ("throughput", "training clouds / s (median)", "{:,.0f}"),
                        ("seconds", "training s / run (median)", "{:,.0f}")],
                 f"What each column cost to train, {results['budget']} budget, one CPU core per run",
                 [f"fastest column {fastest['spec']} ({fastest['throughput']:,.0f} clouds/s) is "
                  f"{fastest['throughput'] / slowest['throughput']:.1f}× the slowest, {slowest['spec']}",
                  f"runs of one column differ in throughput by up to {throughput_spread(results):.1f}×"])


def twin_table(results: dict) -> Table:
    """Each LSE column against its log-mean-exp twin at each of Table 2's sizes, seed by seed
    (:func:`~setfuncs.experiments.pointcloud.findings.lme_against_lse`: two-sided sign-flip tests, Holm-corrected
    together; not a claim of the paper); notes count the decided and give the smallest two-sided p-value."""
    rows = [{**row, "pair": f"{row['twin']} − {row['spec']}", "interval": interval_text(row["low"], row["high"], "+.1%")}
            for row in lme_against_lse(results)]
    fewest = min(row["seeds"] for row in rows)
    return table(rows, [("pair", "difference of accuracies", "{}"), ("n", "n", "{:,}"), ("seeds", "seeds", "{}"),
                        ("estimate", "mean", "{:+.1%}"), ("interval", f"{LEVEL:.0%} interval", "{}"),
                        ("p_value", "p (two-sided)", "{:.2g}"), ("adjusted", "Holm p", "{:.2g}"),
                        ("better", "higher", "{}")], f"Log-mean-exp against the paper's LSE, {data_label(results)}",
                 [f"decided: {sum(r['better'] != 'undecided' for r in rows)} of {len(rows)}; with {fewest} seeds a "
                  f"two-sided p-value is at least {smallest_p_value(fewest, 'two-sided'):.3g}, and Holm over "
                  f"{len(rows)} comparisons multiplies the smallest by {len(rows)}"])


def twin_verdicts(found: Sequence[Finding]) -> Table:
    """Each finding of the paper's variant beside its log-mean-exp twin (the same key): the two verdicts and
    estimates in :data:`FORMAT`."""
    lme = {f.key: f for f in found if f.variant == "lme"}
    rows = [{"claim": f.words, "paper": f"{f.verdict}, {f.estimate:{FORMAT}}",
             "lme": f"{lme[f.key].verdict}, {lme[f.key].estimate:{FORMAT}}"}
            for f in found if f.variant == "paper" and f.seeds > 0 and f.key in lme]
    return table(rows, [("claim", "finding", "{}"), ("paper", VARIANT_LABELS["paper"], "{}"),
                        ("lme", VARIANT_LABELS["lme"], "{}")], "Verdict and estimate of each twin finding")


def power_lines(found: Sequence[Finding]) -> Lines:
    """What each family's size and seeds let any outcome decide (:func:`setfuncs.experiments.report.family_power`),
    a sentence per family, then how many findings no outcome of these seeds could decide."""
    rows = report.family_power(found)
    never = [f for f in found if f.seeds and any(r.family == f.family and not r.decidable for r in rows)]
    return Lines(tuple(str(row) for row in rows)
                 + (f"findings no outcome of these seeds could decide: {len(never)} of {sum(bool(f.seeds) for f in found)}",))


def _claims(results: dict, paper: str | os.PathLike) -> dict[str, dict]:
    return {variant: {c.key: c for c in pointcloud_claims(results, paper, variant)} for variant in ("paper", "lme")}


def claim_table(results: dict, paper: str | os.PathLike, found: Sequence[Finding]) -> Table:
    """Per claim (its first finding of each variant): the paper's own difference from its Table 2 (the
    effect a *not reproduced* is judged against; negative where the paper's table does not show the
    claim), and the verdict, estimate and Holm-adjusted p-value with LSE and with log-mean-exp."""
    claims = _claims(results, paper)
    first: dict[tuple[str, str], Finding] = {}
    for f in found:
        first.setdefault((f.variant, f.key), f)
    rows = []
    for key, claim in claims["paper"].items():
        row = {"claim": first[("paper", key)].words, "paper_effect": claim.paper_effect}
        for variant in ("paper", "lme"):
            f = first[(variant, key)]
            row[variant] = (f"{f.verdict}, {f.estimate:{FORMAT}} ({interval_text(f.low, f.high, FORMAT, f.test)}), "
                            f"Holm p {f.adjusted:.2g}")
        rows.append(row)
    return table(rows, [("claim", "claim", "{}"), ("paper_effect", "the paper's own difference", "{:+.1%}"),
                        ("paper", VARIANT_LABELS["paper"], "{}"), ("lme", VARIANT_LABELS["lme"], "{}")],
                 "Each claim against the paper's own Table 2, with LSE and with log-mean-exp")


def opposite_lines(results: dict, paper: str | os.PathLike, found: Sequence[Finding]) -> Lines:
    """For each claim that needs every one of several comparisons, per variant: the smallest p-value its
    opposite (one comparison the other way, one joint test) can have, and whether a family of this many
    claims can decide it with these seeds (:func:`~setfuncs.experiments.findings.judge.opposite_needs`)."""
    family = Counter(f.family for f in found)
    family_of = {f.variant: f.family for f in found}
    lines = []
    for variant, claims in _claims(results, paper).items():
        for claim in claims.values():
            if claim.combine != "all" or len(claim.parts) < 2:
                continue
            parts, n, m = len(claim.parts), max(len(p.seeds) for p in claim.parts), family[family_of[variant]]
            needs = opposite_needs(parts, n, m)
            lines.append(f"{claim.key} [{VARIANT_LABELS[variant]}]: its opposite (one of its {parts} comparisons the "
                         f"other way) has a p-value of at least {opposite_floor(parts, n):.2g}; in a family of {m} it is "
                         + ("never decided with these seeds" if needs is None else
                            "decidable whatever the family's other claims show" if needs == 0 else
                            f"decided only if at least {needs} of the family's other {m - 1} claims are decided first"))
    return Lines(tuple(lines))
