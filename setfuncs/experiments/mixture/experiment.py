"""The mixture-weights experiment (Section 4.2, Figure 4), an :class:`~setfuncs.experiments.experiment.Experiment`."""

from ..experiment import Experiment
from . import budget, differences, findings, metric, sweep

#: The 56 configurations on fresh mixtures; every run's KDE score against EM.
EXPERIMENT = Experiment.declare(sweep, budget, metric.metric_by_run, findings.mixture_claims, differences.protocol_differences,
                                concurrent_safe=True,
                                alternatives={"failed runs left out": {"failed": "dropped"},
                                              "the mean over test populations": {"summary": "mean"}})
