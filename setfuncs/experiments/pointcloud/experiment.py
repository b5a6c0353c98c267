"""The point-cloud classification experiment (Section 4.3, Table 2), declared as an
:class:`~setfuncs.experiments.experiment.Experiment`: its sweep, results file and findings table."""

from __future__ import annotations

from ..experiment import Experiment
from ..tasks import DataRun
from . import budget, differences, findings, metric, sweep as run_side

#: Table 2's columns and their log-mean-exp twins on a cloud data set, the accuracy of every run.
EXPERIMENT = Experiment.declare(run_side, budget, metric.accuracy_at_training_size, findings.pointcloud_claims,
                                differences.protocol_differences, run_side.COLUMNS, DataRun, title="point-cloud",
                                data=run_side.Data(), data_identity=run_side.data_identity,
                                alternatives={"failed runs left out": {"failed": "dropped"},
                                              "the raw loss of accuracy": {"drop": "raw"}})
