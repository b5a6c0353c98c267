"""The spatial-attention experiment (Section 4.4, Figure 5), declared as an
:class:`~setfuncs.experiments.experiment.Experiment`: its sweep, results file and findings table."""

from __future__ import annotations

from ..experiment import Experiment
from ..tasks import DataRun
from . import budget, differences, findings, metric, sweep as run_side
from .table import HEADER_KEYS
from .train import make_air


def _identity(data: run_side.Data, budget: budget.Budget) -> dict:
    """The digits' identity (:func:`~setfuncs.experiments.attention.sweep.data_identity`); the budget does not
    change them."""
    return run_side.data_identity(data)


#: AIR with the image localiser or a set localiser on canvases of digits, the test ELBO of every run.
EXPERIMENT = Experiment.declare(run_side, budget, metric.elbo_by_run, findings.attention_claims,
                                differences.protocol_differences, run_side.SPECS, DataRun, title="spatial-attention",
                                make_model=make_air, data=run_side.Data(), data_identity=_identity,
                                header_keys=HEADER_KEYS, counted=findings.counted_weights)
