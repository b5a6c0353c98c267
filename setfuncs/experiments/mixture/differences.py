r"""Where the mixture sweep's protocol differs from the paper's Section 4.2, axis by axis.

:func:`protocol_differences` gives the rows of the chapter's protocol table (the row type is
``setfuncs.experiments.differences.Difference``): the paper's value (module constants below, each
with the sentence of Section 4.2 that states it), ours read from a results file, and the status
``same``, ``kept`` (with its reason) or ``unknown`` (the paper does not state it). Section 4.2
states the number of components, the range of the weights, the placement of the means, the test
population size, the law of the training population sizes (but not its range), the loss, the
number of bootstrap estimates, the metric and the batches of its peak statistic; it states neither
the component variance (only that the clusters are not linearly separable) nor EM's settings, the
KDE's bandwidth, how a run's metric summarises its test populations, nor anything of the training
budget (the training rows are those of the circle's table,
:func:`~setfuncs.experiments.differences.training_differences`).

**Which axes a claim depends on** (:data:`CLAIM_AXES`). The three claims of Figure 4b compare
trained models by a metric relative to EM, so each depends on

* every axis of training (:data:`~setfuncs.experiments.differences.TRAINING_AXES`): the
  steps and the width above all, since an unconverged budget can change a ranking;
* every axis of the data: the component variance sets how much EM and a model can learn at all,
  and the training sizes which population sizes a model has seen;
* every axis of the metric: the test population size and the size of the violins, the bootstrap
  estimates, the point estimate drawn from the Beta, the KDE, EM's settings (its score is the
  reference of every metric, and "worse than EM" is a sign flip against it) and how a run's metric
  summarises its test populations (a median and a mean can order runs differently);
* the configurations pooled, the runs per configuration and the statistic.

So the three claims share one tuple of axes. The paper states neither the training budget nor the
metric's details, so every claim has gaps (``setfuncs.experiments.differences.gaps``) and none can
be called contradicted.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from ..differences import (NOT_STATED, TRAINING_AXES, Difference, code_default, header_field, seed_range,
                           training_differences)
from ..sweeps import paper_configurations, spec_of
from .table import peak_performance

__all__ = ["PAPER_COMPONENTS", "PAPER_WEIGHT_RANGE", "PAPER_POPULATION_SIZE", "PAPER_BOOTSTRAPS", "PAPER_PEAK_BATCH",
           "CLAIM_AXES", "weight_interval", "protocol_differences"]

#: Section 4.2 — "each mixture consists of two components".
PAPER_COMPONENTS = 2
#: Section 4.2 — "the mixture weights are sampled from [.05, .95]".
PAPER_WEIGHT_RANGE = (0.05, 0.95)
#: Section 4.2 — "The GMM populations of size 100 in our data set".
PAPER_POPULATION_SIZE = 100
#: Section 4.2 — "gathering 100 estimates each from EM and the model for each population size".
PAPER_BOOTSTRAPS = 100
#: Section 4.2 and Figure 4b — "the peak performance for batches of 5 experiments".
PAPER_PEAK_BATCH = 5

_DATA_AXES = ("mixture components", "weights range", "means", "component variance", "training population sizes",
              "loss")
_METRIC_AXES = ("test population size", "violin population size", "bootstrap estimates", "point estimate", "KDE",
                "EM", "metric", "test populations and their summary")
_CLAIM = _DATA_AXES + TRAINING_AXES + _METRIC_AXES + ("configurations", "seeds and runs per configuration",
                                                      "statistic")
#: Each claim of Section 4.2 (as the findings test it) and the axes of the protocol it depends on
#: (the module docstring gives the reasoning).
CLAIM_AXES: dict[str, tuple[str, ...]] = {
    "learnable equivariant layers boost every reduction": _CLAIM,
    "LSE benefits most": _CLAIM,
    "max-type aggregations fall behind": _CLAIM,
}


def weight_interval(description: str) -> tuple[float, float]:
    """The interval ``[a, b]`` of the smaller weight from the file's description of it
    (``"uniform in [0.05, 0.5]"``); a ValueError if it names none."""
    found = re.search(r"\[[^\]]*\]", description) if isinstance(description, str) else None
    interval = json.loads(found.group()) if found else None
    if not (isinstance(interval, list) and len(interval) == 2 and all(isinstance(v, (int, float)) for v in interval)):
        raise ValueError(f"the results' mixture.smaller_weight must name an interval '[a, b]', got {description!r}")
    return float(interval[0]), float(interval[1])


def _stated(axis: str, paper: Any, ours: Any, paper_text: str, ours_text: str) -> Difference:
    """A row on which the paper states a value: ``same`` where ours equals it, else ``kept``."""
    if ours == paper:
        return Difference(axis, paper_text, ours_text, "same")
    return Difference(axis, paper_text, ours_text, "kept",
                      "the sweep of this file ran it so; a sweep with the paper's value would remove the difference")


def _data(results: Mapping[str, Any]) -> list[Difference]:
    """The rows of the populations: components, weights, means, variance, sizes, loss."""
    mixture = header_field(results, "mixture")
    low, high = weight_interval(header_field(mixture, "smaller_weight"))
    connected = math.isclose(high, 0.5)     # [a, b] and [1 - b, 1 - a] meet: one interval [a, 1 - a]
    both = (f"[{low:g}, {1 - low:g}]" if connected else f"[{low:g}, {high:g}] and [{1 - high:g}, {1 - low:g}]")
    matches = connected and all(math.isclose(a, b) for a, b in zip((low, 1 - low), PAPER_WEIGHT_RANGE))
    train_sizes = header_field(mixture, "train_population_sizes")
    test_size = header_field(mixture, "test_population_size")
    return [
        _stated("mixture components", PAPER_COMPONENTS, header_field(mixture, "components"),
                f"{PAPER_COMPONENTS}", f"{header_field(mixture, 'components')}"),
        _stated("weights range", True, matches,
                f"[{PAPER_WEIGHT_RANGE[0]:g}, {PAPER_WEIGHT_RANGE[1]:g}] (their distribution {NOT_STATED})",
                f"the smaller weight w {header_field(mixture, 'smaller_weight')}, the other 1 - w: both in {both}"),
        Difference("means", "span a diameter of the unit circle at a uniformly random position",
                   f"{header_field(mixture, 'means')}", "same"),
        Difference("component variance",
                   f"one fixed diagonal value for both, the clusters not linearly separable; the value {NOT_STATED}",
                   f"isotropic standard deviation {header_field(mixture, 'component_std'):g} for both", "unknown",
                   "few populations linearly separable while EM still beats a constant guess "
                   "(scripts/probes/mixture_sigma.py, results/probes/mixture_sigma.txt)"),
        Difference("training population sizes", f"P(N = n) proportional to n; its range {NOT_STATED}", train_sizes,
                   "unknown", f"a range around the test size {test_size}"),
        Difference("loss", "log-likelihood of the smaller true weight under the model's Beta(a, b)",
                   "Beta negative log-likelihood of the smaller true weight (the model outputs a, b)", "same"),
    ]


def _metric(results: Mapping[str, Any]) -> list[Difference]:
    """The rows of the metric: sizes, bootstraps, point estimate, KDE, EM, the metric, the test set."""
    metric = header_field(results, "metric")
    test = header_field(results, "test_set")
    em = header_field(results, "em")
    bootstraps = header_field(results, "budget_parameters", "bootstraps")
    test_size = header_field(results, "mixture", "test_population_size")
    return [
        _stated("test population size", PAPER_POPULATION_SIZE, test_size, f"{PAPER_POPULATION_SIZE}", f"{test_size}"),
        Difference("violin population size", f"{NOT_STATED} (estimates at every population size, Figure 4a)",
                   f"n = {header_field(metric, 'violin_size')} (the metric is recorded at n = "
                   f"{', '.join(str(n) for n in header_field(results, 'budget_parameters', 'test_population_sizes'))})",
                   "unknown", f"the paper's population size, {PAPER_POPULATION_SIZE}"),
        _stated("bootstrap estimates", PAPER_BOOTSTRAPS, bootstraps,
                f"{PAPER_BOOTSTRAPS} subsamples with replacement, each estimated by EM and by the model",
                f"{bootstraps} subsamples with replacement, the same ones for EM and the model"),
        Difference("point estimate", f"{NOT_STATED} (the model outputs a Beta distribution)",
                   f"{header_field(metric, 'point_estimate')}", "unknown"),
        Difference("KDE", f"a kernel density estimate; its kernel and bandwidth {NOT_STATED}",
                   f"{header_field(metric, 'kde')}, bandwidth at least {header_field(metric, 'min_bandwidth'):g}",
                   "unknown", "the floor keeps a collapsed run's KDE finite"),
        Difference("EM", f"expectation maximisation; its settings {NOT_STATED}",
                   f"{header_field(em, 'covariance')} covariances, tol {header_field(em, 'tol'):g}, reg_covar "
                   f"{header_field(em, 'reg_covar'):g}, at most {header_field(em, 'max_iter')} iterations, "
                   f"initialised by {header_field(em, 'init')}",
                   "unknown", "scikit-learn's defaults, from a deterministic start, so every run meets the same EM"),
        Difference("metric", "log ratio of the true weight's scores under the two KDEs; negative: EM is outperformed",
                   f"{header_field(metric, 'definition')}", "same"),
        Difference("test populations and their summary", NOT_STATED,
                   f"{header_field(test, 'populations')} test populations of {header_field(test, 'particles')} "
                   f"particles (seed {header_field(test, 'seed')}); a run's metric: {header_field(metric, 'per_run')}",
                   "unknown", "a mean would be ruled by the few populations whose KDE is degenerate"),
    ]


def _runs(results: Mapping[str, Any]) -> list[Difference]:
    """The configurations, the seeds and runs, and the statistic."""
    ran = set(header_field(results, "configurations"))
    paper = {spec_of(*c) for c in paper_configurations()}
    runs = header_field(results, "runs_per_configuration")
    batch = code_default(peak_performance, "batch_size")
    return [
        Difference("configurations",
                   f"mean, max and LSE, plain or learnable, in the equivariant layers and the final aggregation "
                   f"(Figure 4b); the grid of runs {NOT_STATED}",
                   f"{len(paper & ran)} configurations of the circle's grid and {len(ran - paper)} with log-mean-exp "
                   f"in place of LSE", "unknown"),
        Difference("seeds and runs per configuration", NOT_STATED,
                   f"{runs} runs per configuration, seeds {seed_range(header_field(results, 'seeds'))} "
                   f"({header_field(results, 'seed_scheme')})", "unknown",
                   f"the committed sweep's budget: {header_field(results, 'wall_seconds') / 3600:.1f} h on "
                   f"{header_field(results, 'hardware', 'cpu_count')} CPU cores"),
        Difference("statistic",
                   f"peak performance: the best metric of bootstrap batches of {PAPER_PEAK_BATCH} runs, as violins",
                   f"violins: the best metric of bootstrap batches of {batch} runs; findings: wins of matched "
                   f"configurations, paired by seed", "kept",
                   "a violin gives no test and the figure no numbers, and many runs collapse, so the findings count "
                   "the wins of matched configurations and the violins show the paper's peaks"),
    ]


def protocol_differences(results: Mapping[str, Any]) -> list[Difference]:
    """Every axis of the mixture protocol, the paper's against the sweep of ``results`` (a results
    file read by :meth:`~setfuncs.experiments.experiment.Experiment.load_results`): the data, the training
    rows, the metric, the configurations, seeds and runs, and the statistic. A ValueError names a
    header key that ``results`` lacks."""
    return [*_data(results), *training_differences(results), *_metric(results), *_runs(results)]
