r"""Where the circle sweep's protocol differs from the paper's Section 4.1, axis by axis.

:func:`protocol_differences` gives the rows of the chapter's protocol table (the row type is
``setfuncs.experiments.differences.Difference``): the paper's value (module constants below, each
with the sentence of the paper that states it), ours read from a results file, and the status
``same``, ``kept`` (with its reason) or ``unknown`` (the paper does not state it). The paper's
Section 4.1 states the population size, the targets, the loss, the grid of configurations, the runs
per combination and the two statistics of Table 1; it has no appendix, and it states nothing of the
mixture, the training budget, the optimiser or the architecture's sizes.

**Which axes a claim depends on** (:data:`CLAIM_AXES`). Every claim of Table 1 compares trained
models, so it depends on every axis of training (:data:`~setfuncs.experiments.differences.TRAINING_AXES`): the steps and the width
above all, because a budget that leaves the models unconverged can change a ranking (a row whose
models learn faster wins a short race it might lose a long one). The committed FULL GPU runs in
``results/benchmarks/circle-full-gpu-h200.json`` (the full budget: more steps and a wider model
than the medium sweep) show the medium models far from converged:
:func:`convergence_ratios` reads both files and gives, per configuration, how many times lower the
longer budget's median MSE is. Every claim also depends on the data (the mixture sets which
particles fix the circle, hence how hard the centre is), the population size, the targets and the
loss. Each claim further depends on which configurations are pooled, on the runs pooled and on
the statistic: the paper reads its four row comparisons from peaks over runs (the best MSE of a
row, the median best MSE of batches), and the centre claim from the split of the best runs' MSE,
while the findings test the typical trained model paired by seed. So the five claims share one
tuple of axes. The paper states none of the training axes, so every claim has gaps (``setfuncs.experiments.differences.gaps``) and none can be called contradicted: a
disagreement is "not reproduced on" those axes.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..differences import (NOT_STATED, TRAINING_AXES, Difference, code_default, header_field, seed_range,
                           training_differences)
from ..sweeps import paper_configurations, spec_of
from .data import POPULATION_SIZE
from .metric import mse_by_spec
from .table import circle_table

__all__ = ["PAPER_POPULATION_SIZE", "PAPER_SETTINGS", "PAPER_COMBINATIONS",
           "PAPER_RUNS_PER_COMBINATION", "PAPER_RUNS_PER_ROW", "PAPER_PEAK_BATCH", "TRAINING_AXES",
           "CLAIM_AXES", "protocol_differences", "convergence_ratios"]

#: Section 4.1 — "the minimal enclosing circle of a population of size 20".
PAPER_POPULATION_SIZE = 20
#: Table 1 — four rows, the equivariant layers and the final aggregation each plain or recurrent.
PAPER_SETTINGS = 4
#: Section 4.1 — "20 runs for each of the 9 combinations of aggregations".
PAPER_COMBINATIONS = 9
#: Section 4.1, the same sentence.
PAPER_RUNS_PER_COMBINATION = 20
#: Section 4.1 — "Each row shows the best result out of 180 runs".
PAPER_RUNS_PER_ROW = 180
#: Section 4.1 — "we subsample all available experiments (with replacement) into several sets of 20".
PAPER_PEAK_BATCH = 20

_CLAIM = (("data", "population size", "targets", "loss") + TRAINING_AXES
          + ("configurations", "seeds and runs per configuration", "statistic"))
#: Each claim of Section 4.1 (as the findings test it) and the axes of the protocol it depends on
#: (the module docstring gives the reasoning).
CLAIM_AXES: dict[str, tuple[str, ...]] = {
    "recurrent equivariant layers improve": _CLAIM,
    "recurrent aggregations improve": _CLAIM,
    "equivariant layers grant the larger boost": _CLAIM,
    "recurrent/recurrent is the best row": _CLAIM,
    "the challenge lies in the centre": _CLAIM,
}


def _configurations(results: Mapping[str, Any]) -> Difference:
    """The grid: the paper's configurations that the sweep ran, and any beyond them."""
    ran = set(header_field(results, "configurations"))
    paper = {spec_of(*c) for c in paper_configurations()}
    missing = sorted(paper - ran)
    ours = f"{len(paper & ran)} of the paper's configurations and {len(ran - paper)} with log-mean-exp in place of LSE"
    status, reason = ("same", "") if not missing else ("kept", f"this sweep did not run {missing}")
    return Difference("configurations",
                      f"{PAPER_SETTINGS} settings x {PAPER_COMBINATIONS} combinations of mean, max, LSE",
                      ours, status, reason)


def _runs(results: Mapping[str, Any]) -> tuple[Difference, Difference]:
    """The seeds and runs row and the statistic row (both depend on the runs per configuration)."""
    runs = header_field(results, "runs_per_configuration")
    seeds = header_field(results, "seeds")
    hours = header_field(results, "wall_seconds") / 3600
    cores = header_field(results, "hardware", "cpu_count")
    ours = f"{runs} runs per configuration, seeds {seed_range(seeds)} ({header_field(results, 'seed_scheme')})"
    same = runs == PAPER_RUNS_PER_COMBINATION
    budget = (f"the committed sweep's budget: {runs} runs of {len(header_field(results, 'configurations'))} "
              f"configurations took {hours:.1f} h on {cores} CPU cores")
    seeds_row = Difference("seeds and runs per configuration",
                           f"{PAPER_RUNS_PER_COMBINATION} runs per combination; the seeds {NOT_STATED}",
                           ours, "same" if same else "kept", "" if same else budget)
    batch = code_default(circle_table, "batch_size")
    per_row = runs * PAPER_COMBINATIONS
    reason = ("the findings test the typical trained model; the paper's median best MSE is tested beside them by "
              "swapping two settings' labels within seeds (exact for any statistic: circle.peak_test)")
    if per_row != PAPER_RUNS_PER_ROW:
        reason += (f"; a best improves with the number of runs, so the best of {per_row} runs does not compare "
                   f"with the best of {PAPER_RUNS_PER_ROW}")
    statistic = Difference("statistic",
                           f"best MSE of the {PAPER_RUNS_PER_ROW} runs of a row; median over bootstrap sets of "
                           f"{PAPER_PEAK_BATCH} runs of each set's best MSE",
                           f"table: the best MSE of the {per_row} runs of a row and the median best MSE of bootstrap "
                           f"batches of {batch} runs; findings: matched configurations of two rows, paired by seed, "
                           f"and the median best MSE tested by swapping the rows' labels within seeds",
                           "kept", reason)
    return seeds_row, statistic


def protocol_differences(results: Mapping[str, Any]) -> list[Difference]:
    """Every axis of the circle protocol, the paper's against the sweep of ``results`` (a results file
    read by :meth:`~setfuncs.experiments.experiment.Experiment.load_results`): data, population size,
    targets, loss, the :data:`~setfuncs.experiments.differences.TRAINING_AXES`, configurations, seeds and runs, and the statistic.
    A ValueError names a header key that ``results`` lacks."""
    mixture = header_field(results, "mixture")
    low, high = header_field(mixture, "std_range")
    data = Difference(
        "data", f"populations from a Gaussian mixture model; its components, means, variances and weights {NOT_STATED}",
        f"components {header_field(mixture, 'components')}, means N(0, "
        f"{header_field(mixture, 'mean_std'):g}^2 I), isotropic standard deviations U[{low:g}, {high:g}], "
        f"weights {header_field(mixture, 'weights')}, a new mixture for every population",
        "unknown", "absolute MSEs depend on the mixture's scale, so only ratios between rows compare with the paper's")
    sizes = header_field(results, "budget_parameters", "test_population_sizes")
    same_size = POPULATION_SIZE == PAPER_POPULATION_SIZE
    size = Difference("population size", f"{PAPER_POPULATION_SIZE}",
                      f"{POPULATION_SIZE} in training (the code's POPULATION_SIZE; the file does not record it); "
                      f"tested at N = {', '.join(str(n) for n in sizes)}",
                      "same" if same_size else "kept", "" if same_size else "the code's training size differs")
    outputs = len(header_field(results, "head", "bias"))
    targets = Difference("targets", "centre and radius of the minimal enclosing circle",
                         f"centre and radius of the minimal enclosing circle ({outputs} outputs: centre x, centre y, "
                         f"radius)", "same")
    loss = Difference("loss", "MSE towards the centre and radius of the true circle",
                      f"mean squared error over the {outputs} outputs; reported: radius MSE + squared centre distance",
                      "same")
    seeds_row, statistic = _runs(results)
    return [data, size, targets, loss, *training_differences(results), _configurations(results), seeds_row, statistic]


def convergence_ratios(results: Mapping[str, Any], longer: Mapping[str, Any]) -> dict[str, float]:
    r"""For every configuration run in both sweeps, :math:`\tilde m / \tilde m_{\text{longer}}`: the
    median test MSE of its runs in ``results`` over that in ``longer`` (a run that learnt nothing
    counts as +inf, ``setfuncs.experiments.circle.metric.mse_by_spec``). A ratio above 1 says the
    longer budget's runs are better, so the runs of ``results`` had not converged; it measures every
    way the two budgets differ at once (steps and width for the committed files). A ValueError if
    the files are of different experiments or share no configuration."""
    if header_field(results, "experiment") != header_field(longer, "experiment"):
        raise ValueError(f"results and longer must be sweeps of one experiment, got {results['experiment']!r} and "
                         f"{longer['experiment']!r}")
    ours, theirs = mse_by_spec(dict(results)), mse_by_spec(dict(longer))
    shared = [spec for spec in ours if spec in theirs]
    if not shared:
        raise ValueError(f"results and longer share no configuration; longer ran {sorted(theirs)}")
    return {spec: float(np.median(ours[spec]) / np.median(theirs[spec])) for spec in shared}
