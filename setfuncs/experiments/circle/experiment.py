"""The minimal enclosing circle experiment (Section 4.1, Table 1), declared as an
:class:`~setfuncs.experiments.experiment.Experiment`: its sweep, results file and findings table."""

from __future__ import annotations

from ..experiment import Experiment
from ..sweeps import GRID, GridRun
from . import budget, differences, findings, metric, sweep as run_side

__all__ = ["EXPERIMENT", "sweep", "load_results", "circle_findings"]

#: The 56 configurations on fresh populations, the test MSE of every run.
EXPERIMENT = Experiment.declare(run_side, budget, GRID, GridRun, metric.mse_by_run, findings.circle_claims,
                                differences.protocol_differences, concurrent_safe=True)
sweep = EXPERIMENT.sweep
load_results = EXPERIMENT.load_results
circle_findings = EXPERIMENT.findings
