"""The mixture-weights experiment (Section 4.2, Figure 4 of the paper).

Populations from two-component 2-D Gaussian mixtures (``data``); Deep Sets that output a Beta
distribution over the smaller mixture weight (``loss``); the batched EM baseline (``em``); the
bootstrap KDE metric against EM and the estimator curves of Figure 4a (``metric``); the
sweep of the paper's 36 configurations and the 20 with log-mean-exp (``sweep``) and the peak-performance violins of Figure 4b with a text table
(``table``). Command line: ``python -m setfuncs.experiments.mixture``.
"""

from .data import (COMPONENT_STD, SMALLER_WEIGHT_RANGE, TEST_POPULATION_SIZE, TRAIN_SIZES, Mixtures,
                   mixture_batch, mixture_log_density, population_size_probabilities,
                   sample_mixtures, sample_particles, sample_population_size, sample_populations,
                   test_populations, training_sampler)
from .loss import (beta_concentrations, beta_log_likelihood, beta_mean, beta_nll, beta_quantiles, marginal_beta,
                   marginal_head_bias)
from .em import EMResult, em_smaller_weight, fit_gmm, initial_parameters
from .metric import (bootstrap_samples, em_estimates, estimator_curve, kde_log_density,
                     log_score_ratio, model_estimates, scott_bandwidth)
from .budget import BUDGETS, FULL, MEDIUM, QUICK, Budget
from .sweep import RUN_SCHEMA, evaluate_metric, make_model, run_ensemble, run_one, train_ensemble, train_model
from .differences import CLAIM_AXES, protocol_differences
from .table import batch_peaks, by_population_size, format_table, mixture_table, peak_performance, variant_runs
from .experiment import EXPERIMENT

#: The experiment's sweep, results file and findings table (:class:`~setfuncs.experiments.experiment.Experiment`).
sweep, load_results, mixture_findings = EXPERIMENT.sweep, EXPERIMENT.load_results, EXPERIMENT.findings

__all__ = ["EXPERIMENT", "RUN_SCHEMA", "COMPONENT_STD", "SMALLER_WEIGHT_RANGE", "TEST_POPULATION_SIZE", "TRAIN_SIZES", "Mixtures",
           "mixture_batch", "mixture_log_density", "population_size_probabilities",
           "sample_mixtures", "sample_particles", "sample_population_size", "sample_populations",
           "test_populations", "training_sampler", "beta_concentrations", "beta_log_likelihood",
           "beta_mean", "beta_nll", "beta_quantiles", "EMResult", "em_smaller_weight", "fit_gmm",
           "initial_parameters", "bootstrap_samples", "em_estimates", "estimator_curve",
           "kde_log_density", "log_score_ratio", "model_estimates", "scott_bandwidth", "Budget",
           "QUICK", "MEDIUM", "FULL", "BUDGETS", "evaluate_metric", "make_model", "train_model", "train_ensemble", "run_one", "run_ensemble", "sweep",
           "peak_performance", "mixture_table", "by_population_size", "format_table", "load_results", "batch_peaks",
           "variant_runs", "mixture_findings", "marginal_beta", "marginal_head_bias",
           "CLAIM_AXES", "protocol_differences"]
