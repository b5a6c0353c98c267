r"""Training and evaluation of the mixture-weights experiment (Figure 4 of the paper).

**Configurations.** As in the circle experiment (:mod:`setfuncs.experiments.sweeps`): four
settings (equivariant / final aggregation, each plain or recurrent) times the 3 x 3 combinations
of ``{mean, max, lse}``, 36 model specs such as ``"r-lse/max"``, and the 20 of them that use LSE
again with log-mean-exp (``lme``) in its place; each a :class:`~setfuncs.model.DeepSet` ``2 -> 2``
whose outputs are a Beta distribution's concentrations.

**Training.** Adam on the Beta negative log-likelihood of the smaller true weight
(:func:`~setfuncs.experiments.mixture.loss.beta_nll`), fresh populations at every step, the
population size drawn anew at every step with :math:`P(N = n) \propto n` on ``20..150``
(:func:`~setfuncs.experiments.mixture.data.training_sampler`). The output layer starts at the
marginal Beta fit (:func:`~setfuncs.experiments.mixture.loss.marginal_head_bias`, weights scaled
by :data:`~setfuncs.model.HEAD_SCALE`): with a randomly initialised output layer, 44 % of an
earlier sweep's runs collapsed to a constant prediction (chapter 9).

**Evaluation.** Every run of a sweep uses the same ``budget.test_size`` test populations of 100
particles (:data:`~setfuncs.experiments.sweeps.TEST_SEED`) and the same bootstrap subsamples
(:data:`BOOTSTRAP_SEED`). At every ``n`` in ``budget.test_population_sizes`` (which must include
100; sizes above 100 resample particles) the run records the metric of
:mod:`~setfuncs.experiments.mixture.metric`,
:math:`\log \hat p_{\text{EM}}(w) - \log \hat p_{\text{model}}(w)`, per test population and its
**median** over them (a mean would be ruled by the few populations whose KDE is degenerate); the
per-run scalar of the violins (``metric``) is that median at ``n = 100``. EM's estimates are the
same for every run, so each process computes them once per size (cached). Each run also records
its spread ratio and whether it collapsed (:mod:`~setfuncs.experiments.collapse`).

**Budgets** are in :mod:`~setfuncs.experiments.mixture.budget`.

**Seeds.** Run ``seed`` initialises the model after ``torch.manual_seed(seed)`` and draws its
training data from ``torch.Generator().manual_seed(TRAIN_SEED + seed)``
(:data:`~setfuncs.experiments.sweeps.TRAIN_SEED`), as in the circle sweep.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy
import torch

import setfuncs as sf
from setfuncs.model import HEAD_SCALE
from setfuncs.steps import TrainingLog
from setfuncs.experiments.caching import shared_cache
from setfuncs.experiments.protocol import Checkpoints, checkpoint_steps, run_protocol
from setfuncs.experiments.provenance import sweep_provenance
from setfuncs.experiments.schema import RunSchema
from setfuncs.experiments.sweeps import (TEST_SEED, TRAIN_SEED, GridRun, make_deep_set, run_configuration_ensemble,
                                         run_record, train_configuration, train_configuration_ensemble)

from . import em as em_module
from ..collapse import COLLAPSE_RATIO, collapse_record
from .budget import METRIC_SIZE, Budget
from .data import (COMPONENT_STD, SMALLER_WEIGHT_RANGE, TEST_POPULATION_SIZE, mixture_description, test_populations,
                   training_sampler)
from .loss import beta_mean, beta_nll, marginal_beta, marginal_head_bias
from .metric import (MIN_BANDWIDTH, bootstrap_samples, em_estimates, log_score_ratio,
                     model_estimates, scott_bandwidth)
from .stream import ensemble_stream, stacked_sampler

__all__ = ["NAME", "RUN_SCHEMA", "BOOTSTRAP_SEED",
           "make_model", "train_model", "train_ensemble", "test_checkpoints", "evaluate_metric", "evaluate_run", "run_one",
           "run_ensemble", "provenance"]

#: The ``experiment`` field of a results file.
NAME = "gmm_mixture_weights"
#: What every finished run records (:mod:`~setfuncs.experiments.schema`), checked where a file is read.
RUN_SCHEMA = RunSchema(metrics=("metric",), maps=("metric_by_population_size",),
                       fields=("setting", "equivariant", "final"),
                       details=("test_nll", "test_mae", "metric_per_population", "kde_floor_hits"))
#: Seed of the bootstrap subsamples of the test populations.
BOOTSTRAP_SEED = 0


def make_model(setting: str, equivariant: str, final: str, budget: Budget) -> sf.DeepSet:
    """The Deep Set ``2 -> 2`` (raw Beta concentrations) of one configuration at ``budget``'s size, its
    output started at the marginal Beta fit."""
    return make_deep_set(setting, equivariant, final, budget, marginal_head_bias(*SMALLER_WEIGHT_RANGE))


@shared_cache(maxsize=32)
def _test_samples(test_size: int, n: int, bootstraps: int, std: float = COMPONENT_STD) -> torch.Tensor:
    """The bootstrap subsamples ``[P, K, n, 2]`` of the test populations with component standard
    deviation ``std`` (shared by every run)."""
    return bootstrap_samples(test_populations(test_size, TEST_POPULATION_SIZE, TEST_SEED, std).x, n,
                             bootstraps, BOOTSTRAP_SEED)


@shared_cache(maxsize=32)
def _em_reference(test_size: int, n: int, bootstraps: int, std: float = COMPONENT_STD) -> np.ndarray:
    """EM's estimates ``[P, K]`` of :func:`_test_samples` (computed once per process and ``std``)."""
    return em_estimates(_test_samples(test_size, n, bootstraps, std)).numpy()


def evaluate_metric(model: torch.nn.Module, budget: Budget, std: float = COMPONENT_STD) -> dict:
    """The metric of ``model`` on the test populations at every size of ``budget``, their components'
    standard deviation ``std`` (:func:`~setfuncs.experiments.mixture.data.test_populations`).

    Returns ``metric_by_population_size`` (``{"5": median over populations, ...}``),
    ``metric_per_population`` (``{"5": [one value per population], ...}``) and ``kde_floor_hits``
    (how many of the model's KDEs had Scott's bandwidth below
    :data:`~setfuncs.experiments.mixture.metric.MIN_BANDWIDTH`). A FloatingPointError if the
    model's estimates are not all finite (a broken model: the run is recorded as diverged).
    """
    truth = test_populations(budget.test_size, TEST_POPULATION_SIZE, TEST_SEED, std).smaller_weight.numpy()
    by_size, per_population, floor_hits = {}, {}, 0
    for n in budget.test_population_sizes:
        ours = model_estimates(model, _test_samples(budget.test_size, n, budget.bootstraps, std)).numpy()
        if not np.isfinite(ours).all():
            raise FloatingPointError(f"{int((~np.isfinite(ours)).sum())} of the model's {ours.size} estimates at "
                                     f"n = {n} are NaN or infinite")
        theirs = _em_reference(budget.test_size, n, budget.bootstraps, std)
        values = [log_score_ratio(o, t, w) for o, t, w in zip(ours, theirs, truth)]
        floor_hits += sum(scott_bandwidth(o) < MIN_BANDWIDTH for o in ours)
        by_size[str(n)] = float(np.median(values))
        per_population[str(n)] = [float(v) for v in values]
    return {"metric_by_population_size": by_size, "metric_per_population": per_population,
            "kde_floor_hits": int(floor_hits)}


def train_model(setting: str, equivariant: str, final: str, seed: int, budget: Budget,
                progress: bool = True, device: str = "cpu", checkpoints: Checkpoints | None = None,
                std: float = COMPONENT_STD) -> tuple[sf.DeepSet, TrainingLog]:
    """Train one configuration with one seed (:func:`~setfuncs.experiments.sweeps.train_configuration`
    on fresh populations, a new size ``N`` at every step, component standard deviation ``std``): the
    model (in eval mode) and its Beta NLL at every step. On ``device`` (a GPU: the population size
    changes from step to step, so the step is not graphed and :func:`~setfuncs.train.fit` says so
    once); ``checkpoints`` (:func:`test_checkpoints`) record the test NLL during training."""
    return train_configuration(setting, equivariant, final, seed, budget, marginal_head_bias(*SMALLER_WEIGHT_RANGE),
                               lambda generator: training_sampler(budget.batch, generator, std=std), beta_nll,
                               progress, device, checkpoints)


def train_ensemble(setting: str, equivariant: str, final: str, seeds: Sequence[int], budget: Budget,
                   progress: bool = True, device: str = "cpu", checkpoints: Sequence[Checkpoints] | None = None
                   ) -> list[tuple[sf.DeepSet, TrainingLog | FloatingPointError]]:
    """Train one configuration with ``seeds`` as one ensemble on ``device``
    (:func:`~setfuncs.experiments.sweeps.train_configuration_ensemble`): seed ``s`` trains on the batches of
    :func:`train_model` from ``TRAIN_SEED + s``, padded to the largest population size with a mask, so
    that every step has one shape; the seeds' streams are drawn once per process and stacked on
    ``device`` (:func:`~setfuncs.experiments.mixture.stream.ensemble_stream`), shared by every
    configuration. Per seed, the model and its losses or the error of a diverged run.
    ``checkpoints``: one :func:`test_checkpoints` per seed."""
    x, y, sizes = ensemble_stream(tuple(seeds), budget.steps, budget.batch, str(torch.device(device)))
    return train_configuration_ensemble(setting, equivariant, final, list(seeds), budget,
                                        marginal_head_bias(*SMALLER_WEIGHT_RANGE), stacked_sampler(x, y, sizes),
                                        beta_nll, progress, device, checkpoints)


def test_checkpoints(budget: Budget, std: float = COMPONENT_STD) -> Checkpoints:
    """The Beta NLL of the test populations' smaller weights (``test_nll``; component standard deviation
    ``std``) at the :func:`~setfuncs.experiments.protocol.checkpoint_steps` of ``budget``, on the
    model's device."""
    test = test_populations(budget.test_size, TEST_POPULATION_SIZE, TEST_SEED, std)

    def nll(model: sf.DeepSet) -> float:
        device = next(model.parameters()).device
        return float(beta_nll(model(test.x.to(device)), test.smaller_weight[:, None].to(device)))

    return Checkpoints("test_nll", checkpoint_steps(budget.steps), nll)


def evaluate_run(model: torch.nn.Module, budget: Budget, std: float = COMPONENT_STD, device: str = "cpu") -> dict:
    """The metrics of a trained ``model``, on ``device`` (a run trained alone: the CPU; an ensemble: its
    training device, where the model's estimates of the bootstrap samples cost seconds instead of
    minutes), on the test populations with component standard
    deviation ``std``: ``test_nll`` and ``test_mae`` (Beta NLL and absolute error of the Beta mean on
    the whole test populations), ``spread_ratio`` and ``collapsed`` of the Beta means, ``metric``
    (the median metric at ``n = 100``) and the three keys of :func:`evaluate_metric`."""
    model.to(device)
    test = test_populations(budget.test_size, TEST_POPULATION_SIZE, TEST_SEED, std)
    with torch.no_grad():
        output = model(test.x.to(device)).cpu()
        metrics = {"test_nll": float(beta_nll(output, test.smaller_weight[:, None])),
                   "test_mae": float((beta_mean(output).double() - test.smaller_weight).abs().mean()),
                   **collapse_record(beta_mean(output), test.smaller_weight)}
    evaluation = evaluate_metric(model, budget, std)
    return {**metrics, "metric": evaluation["metric_by_population_size"][str(METRIC_SIZE)], **evaluation}


def run_one(setting: str, equivariant: str, final: str, seed: int, budget: Budget,
            progress: bool = False, device: str = "cpu") -> dict:
    """Train one configuration with one seed on ``device`` and evaluate it on the CPU; a JSON-friendly
    record (:func:`~setfuncs.experiments.protocol.run_protocol`).

    Keys: ``spec, setting, equivariant, final, seed``, the training record (``train_seconds``,
    ``final_train_loss`` (mean Beta NLL of the last 50 steps), ``training``, ``learning_curve`` with the
    test NLL at five checkpoints (:func:`test_checkpoints`):
    :func:`~setfuncs.experiments.protocol.training_record`), the keys of :func:`evaluate_run`,
    ``eval_seconds`` and ``error`` (None, or the message of a diverged training or of non-finite
    estimates, whose metrics are then None).
    """
    record = run_record(setting, equivariant, final, seed)
    checkpoints = test_checkpoints(budget)
    return run_protocol(record, RUN_SCHEMA,
                        lambda: train_model(setting, equivariant, final, seed, budget, progress, device, checkpoints),
                        lambda model: evaluate_run(model, budget), checkpoints)


def run_ensemble(tasks: Sequence[tuple]) -> list[dict]:
    """:func:`run_one` for several seeds of one configuration, trained as one ensemble
    (:func:`train_ensemble`, each seed with its :func:`test_checkpoints`) and evaluated one by one on
    the training device (:func:`evaluate_run`: the estimates equal the CPU's up to float rounding;
    the EM reference and the density estimates stay on the CPU)
    (:func:`~setfuncs.experiments.sweeps.run_configuration_ensemble`); ``tasks`` are
    :func:`run_one`'s arguments (:class:`~setfuncs.experiments.sweeps.GridRun`), equal but for the seed."""
    runs = [GridRun(*task) for task in tasks]
    run = runs[0]
    checkpoints = [test_checkpoints(run.budget) for _ in runs]
    return run_configuration_ensemble(
        runs, RUN_SCHEMA,
        lambda seeds: train_ensemble(run.setting, run.equivariant, run.final, seeds, run.budget, run.progress,
                                     run.device, checkpoints),
        lambda model: evaluate_run(model, run.budget, device=run.device), checkpoints)


def provenance(budget: Budget, runs: int, specs: Sequence[str]) -> dict:
    """Command line, budget, seeds, data, metric, versions and hardware of a sweep (no timings or runs)."""
    test = test_populations(budget.test_size, TEST_POPULATION_SIZE, TEST_SEED)
    return {
        **sweep_provenance(NAME, budget, runs, specs,
                           f"model init torch.manual_seed(seed); training data seed {TRAIN_SEED} + seed; "
                           f"test populations seed {TEST_SEED}; bootstrap subsamples seed "
                           f"[{BOOTSTRAP_SEED}, n] (numpy SeedSequence)", scipy=scipy.__version__),
        "mixture": mixture_description(),
        "test_set": {"populations": budget.test_size, "particles": TEST_POPULATION_SIZE,
                     "seed": TEST_SEED, "smaller_weights": test.smaller_weight.tolist()},
        "metric": {"definition": "log p_EM_kde(w) - log p_model_kde(w); negative: EM is outperformed",
                   "point_estimate": "Beta mean a / (a + b)", "kde": "scipy.stats.gaussian_kde, Scott",
                   "min_bandwidth": MIN_BANDWIDTH, "violin_size": METRIC_SIZE,
                   "per_run": "median over the test populations"},
        "head": {"init": "output bias at softplus^-1 of the marginal Beta fit minus epsilon, weights x "
                         f"{HEAD_SCALE}", "marginal_beta": list(marginal_beta(*SMALLER_WEIGHT_RANGE))},
        "collapse": {"spread_ratio_below": COLLAPSE_RATIO, "of": "Beta means against the true weights"},
        "em": {"tol": em_module.TOL, "reg_covar": em_module.REG_COVAR, "max_iter": em_module.MAX_ITER,
               "covariance": "full", "init": "farthest-point 2-means, then one M-step"},
    }
