"""The mixture-weights experiment (Section 4.2, Figure 4), declared as an
:class:`~setfuncs.experiments.experiment.Experiment`: its sweep, results file and findings table."""

from __future__ import annotations

from ..experiment import Experiment
from ..sweeps import GRID, GridRun
from . import budget, differences, findings, metric, sweep as run_side

__all__ = ["EXPERIMENT", "sweep", "load_results", "mixture_findings"]

#: The 56 configurations on fresh mixtures, the KDE score against EM of every run.
EXPERIMENT = Experiment.declare(run_side, budget, GRID, GridRun, metric.metric_by_run, findings.mixture_claims,
                                differences.protocol_differences, concurrent_safe=True)
sweep = EXPERIMENT.sweep
load_results = EXPERIMENT.load_results
mixture_findings = EXPERIMENT.findings
