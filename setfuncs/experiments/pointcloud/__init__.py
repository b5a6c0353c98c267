"""The point-cloud experiment (Section 4.3, Table 2 of the paper).

Clouds sampled uniformly from mesh surfaces (``surface``): ModelNet40 read from its OFF files
(``modelnet``) or the package's offline 3-D shapes (``shapes``); Deep Sets' standardisation,
augmentation and subsampling (``preprocess``); its classifier with exchangeable aggregations
(``model``), training schedule (``train``) and accuracy at other population sizes
(``evaluate``); the budgets (``budget``), what differs from the paper's protocol
(``differences``), the ten-column sweep (``sweep``) and Table 2 as text (``table``). Command
line: ``python -m setfuncs.experiments.pointcloud``.
"""

from .budget import (BUDGETS, OWN_SCHEDULE_MEDIUM, FULL, MEDIUM, QUICK, TABLE_SIZES, Budget, evaluation_sizes,
                     points_per_test_cloud)
from .differences import CLAIM_AXES, protocol_differences
from .evaluate import accuracy, accuracy_by_population_size, probabilities
from .model import PointCloudClassifier
from .modelnet import load_modelnet40, mesh_files
from .off import fix_off_header, read_off
from .preprocess import augment, augmentation_parameters, rotate_z, standardize, subsample
from .shapes import SHAPE_NAMES, base_mesh, random_shape, shape_meshes, synthetic_shapes
from .surface import sample_surface
from .sweep import RUN_SCHEMA, COLUMNS, DATA_SETS, LME_COLUMNS, Data, PointClouds, load_data, make_model, run_one, train_model
from .findings import lme_against_lse, variant_columns
from .metric import accuracy_by_run
from .table import accuracy_curves, column_runs, format_table, paper_rows, pointcloud_table
from .train import milestones, train_classifier, training_batches
from .experiment import EXPERIMENT

#: The experiment's sweep, results file and findings table (:class:`~setfuncs.experiments.experiment.Experiment`).
sweep, load_results, pointcloud_findings = EXPERIMENT.sweep, EXPERIMENT.load_results, EXPERIMENT.findings

__all__ = ["EXPERIMENT", "RUN_SCHEMA", "BUDGETS", "FULL", "MEDIUM", "OWN_SCHEDULE_MEDIUM", "QUICK", "CLAIM_AXES", "protocol_differences",
           "TABLE_SIZES", "Budget", "evaluation_sizes",
           "points_per_test_cloud", "accuracy", "accuracy_by_population_size", "probabilities", "PointCloudClassifier", "fix_off_header",
           "load_modelnet40", "mesh_files", "read_off", "augment", "augmentation_parameters", "rotate_z",
           "standardize", "subsample", "SHAPE_NAMES", "base_mesh", "random_shape", "shape_meshes",
           "synthetic_shapes", "sample_surface", "COLUMNS", "LME_COLUMNS", "DATA_SETS", "Data", "PointClouds", "load_data",
           "make_model", "run_one", "sweep", "train_model", "accuracy_by_run", "accuracy_curves",
           "format_table", "load_results", "paper_rows", "pointcloud_table", "milestones", "column_runs",
           "pointcloud_findings", "variant_columns", "lme_against_lse",
           "train_classifier", "training_batches"]
