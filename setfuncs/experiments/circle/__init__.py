"""Ground truth of the minimal enclosing circle experiment (Section 4.1 of the paper).

>>> import numpy as np
>>> from setfuncs.experiments.circle import min_enclosing_circle, min_enclosing_circles
>>> min_enclosing_circle(np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 0.5]]))    # one population [N, 2]
(array([1., 0.]), 1.0)
>>> centers, radii = min_enclosing_circles(np.random.default_rng(0).normal(size=(4, 20, 2)))
>>> centers.shape, radii.shape                                               # a batch [B, N, 2]
((4, 2), (4,))
"""

from .batched import min_enclosing_circles, min_enclosing_circles_bruteforce
from .welzl import Circle, Step, circle_of, min_enclosing_circle, welzl_trace
from .data import circle_batch, circle_targets, sample_populations, test_set
from ..sweeps import SETTINGS, all_configurations, lme_configurations, paper_configurations, spec_of
from .budget import BUDGETS, FULL, MEDIUM, QUICK, Budget
from .sweep import RUN_SCHEMA, circle_errors, make_model, run_ensemble, run_one, train_ensemble, train_model
from .findings import circle_claims, lme_against_lse
from .peak_test import disagreements, peak_agreement, peak_findings, peak_html
from .metric import mse_by_run, mse_by_spec
from .table import by_population_size, circle_table, format_table, median_best, usable_runs
from .differences import CLAIM_AXES, convergence_ratios, protocol_differences
from .experiment import EXPERIMENT

#: The experiment's sweep, results file and findings table (:class:`~setfuncs.experiments.experiment.Experiment`).
sweep, load_results, circle_findings = EXPERIMENT.sweep, EXPERIMENT.load_results, EXPERIMENT.findings

__all__ = ["EXPERIMENT", "RUN_SCHEMA", "min_enclosing_circle", "min_enclosing_circles", "min_enclosing_circles_bruteforce",
           "welzl_trace", "Step", "Circle", "circle_of", "sample_populations", "circle_targets",
           "circle_batch", "test_set", "Budget", "BUDGETS", "QUICK", "MEDIUM", "FULL", "SETTINGS",
           "all_configurations", "paper_configurations", "lme_configurations", "spec_of", "make_model", "train_model", "train_ensemble", "run_one", "run_ensemble", "circle_errors", "sweep",
           "circle_table", "by_population_size", "format_table", "load_results", "median_best", "usable_runs",
           "circle_claims", "circle_findings", "lme_against_lse", "peak_findings", "peak_agreement", "peak_html", "disagreements", "mse_by_spec", "mse_by_run",
           "CLAIM_AXES", "protocol_differences", "convergence_ratios"]
