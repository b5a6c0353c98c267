"""The minimal enclosing circle experiment (Section 4.1, Table 1), an :class:`~setfuncs.experiments.experiment.Experiment`."""

from ..experiment import Experiment
from . import budget, differences, findings, metric, sweep

#: The 56 configurations on fresh populations; the test MSE of every run.
EXPERIMENT = Experiment.declare(sweep, budget, metric.mse_by_run, findings.circle_claims, differences.protocol_differences,
                                concurrent_safe=True)
