r"""EM against the neural models at several component spreads :math:`\sigma`: the reader of the probe
``scripts/probes/mixture_sigma_models.py`` (``results/probes/mixture-sigma-models.json``).

The paper does not state :math:`\sigma`; the experiment uses :data:`~setfuncs.experiments.mixture.data.COMPONENT_STD`
``= 0.7``, where EM is least accurate of the values that keep the clusters apart
(``scripts/probes/mixture_sigma.py``). The probe trains a few configurations with a few seeds at
the MEDIUM budget at each :math:`\sigma` of :data:`SIGMAS`, exactly as the sweep trains (the same
seeds, head and evaluation, :mod:`~setfuncs.experiments.mixture.sweep`, with ``std=sigma``), and
evaluates each run on that :math:`\sigma`'s test populations. The test populations of every
:math:`\sigma` share their mixtures and noise (:mod:`~setfuncs.experiments.mixture.data`), and
seed ``s`` trains on the same draws at every :math:`\sigma`.

**Against EM, paired by seed.** For a configuration at one :math:`\sigma`, seed ``s`` gives the
model's value :math:`m_s` of a quantity (:data:`QUANTITIES`) and EM its value :math:`e` on the same
test populations (EM has no seed), so the per-seed difference is :math:`d_s = m_s - e`:

* ``metric``: the sweep's per-run metric, :math:`\log \hat p_{\text{EM}}(w) - \log \hat p_{\text{model}}(w)`
  at :math:`n = 100`, median over the test populations; it already is a difference against EM, so
  :math:`e = 0`;
* ``metric_mean``: the same, but the mean over the test populations (the chapter's second
  summary, :data:`~setfuncs.experiments.mixture.metric.SUMMARIES`);
* ``test_mae``: the mean absolute error of the Beta mean over the test populations, against
  EM's :math:`e = \frac1P \sum_p |\hat w^{\text{EM}}_p - w_p|` on the whole populations.

Negative :math:`d` favours the model. A seed's difference is against EM's one fixed value, not
against another configuration trained with the same seed, so nothing makes it symmetric about 0:
each (:math:`\sigma`, configuration) row is tested two-sided with the exact sign test of the median
(:func:`~setfuncs.experiments.paired.sign_test`), one Holm correction over the rows of a table
(:func:`~setfuncs.experiments.paired.holm`), and given the median of :math:`d` with its
distribution-free interval (:func:`~setfuncs.experiments.paired.median_interval`: unbounded with
five seeds or fewer). With
:math:`n` seeds no two-sided p-value is below :math:`2^{1-n}`
(:func:`~setfuncs.experiments.paired.smallest_p_value`): **three seeds give at least 0.25**, so
no row can be decided at 5 %, whatever the runs show; such a row's verdict says so
(``"undecided with 3 seeds"``), and :func:`seeds_needed` gives the seeds a table would need.
A run that diverged or collapsed has no usable value: it is counted, and its seed is left out of
the row's test.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from ..findings import ALPHA, LEVEL, POWER
from ..paired import detectable_effect, holm, median_interval, paired_differences, sign_test, smallest_p_value
from ..results import sorted_runs
from ..strictjson import restore_non_finite
from ..schema import SchemaError, check_results, run_status
from .sweep import METRIC_SIZE, RUN_SCHEMA

__all__ = ["PROBE", "RESULTS_NAME", "SIGMAS", "QUANTITIES", "REFERENCE_KEYS", "RUN_ORDER", "load_sensitivity",
           "run_values", "em_comparison", "seeds_needed", "sensitivity_table"]

#: The ``probe`` field of the probe's file.
PROBE = "mixture_sigma_models"
#: The probe's file under ``results/``.
RESULTS_NAME = "probes/mixture-sigma-models.json"
#: The component standard deviations the probe trains at (0.7 is the experiment's).
SIGMAS = (0.5, 0.6, 0.7)
#: What a row compares with EM, as the module describes them; the metric with either summary and
#: the absolute error.
QUANTITIES = ("metric", "metric_mean", "test_mae")
#: The order in which the probe's runs are read (:func:`~setfuncs.experiments.results.sorted_runs`).
RUN_ORDER = ("sigma", "spec", "seed")
#: What the file records per sigma, on that sigma's test populations.
REFERENCE_KEYS = ("sigma", "em_mae", "constant", "constant_mae")

_WRITER = "`python scripts/probes/mixture_sigma_models.py`"
_HEADER_KEYS = ("probe", "budget", "budget_parameters", "configurations", "seeds", "sigmas", "references",
                "complete", "runs")


def _fail(path: str | os.PathLike, what: str) -> ValueError:
    return ValueError(f"{path}: {what}; write it again with {_WRITER}, or pass the committed results/{RESULTS_NAME}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_header(results: object, path: str | os.PathLike) -> None:
    """A ValueError naming ``path`` unless ``results`` has the probe's header, one reference per sigma."""
    if not isinstance(results, dict) or results.get("probe") != PROBE:
        found = results.get("probe", results.get("experiment")) if isinstance(results, dict) else type(results).__name__
        raise _fail(path, f"not the file of the probe {PROBE!r} (it holds {found!r})")
    missing = [key for key in _HEADER_KEYS if key not in results]
    if missing:
        raise _fail(path, f"lacks {', '.join(missing)}")
    sigmas = results["sigmas"]
    if not isinstance(sigmas, list) or not sigmas or not all(_is_number(s) and s > 0 for s in sigmas):
        raise _fail(path, f"sigmas is {sigmas!r}, not a list of positive standard deviations")
    references = results["references"]
    records = isinstance(references, list) and all(isinstance(r, dict) for r in references)
    if (not records or [r.get("sigma") for r in references] != sigmas
            or not all(_is_number(r.get(k)) for r in references for k in REFERENCE_KEYS)):
        raise _fail(path, f"references must be one record of {', '.join(REFERENCE_KEYS)} per sigma, in the order "
                          f"of sigmas {sigmas}")
    if not isinstance(results["runs"], list) or not results["runs"]:
        raise _fail(path, "has no runs")


def load_sensitivity(path: str | os.PathLike) -> dict:
    """The probe's file, checked before any table reads it; every error names the file.

    Refuses (ValueError; FileNotFoundError for a missing file) a file that is not JSON, not the
    probe's (:data:`PROBE`), lacks a header key, has no reference per sigma or no runs, holds a run
    at a sigma it does not list, or whose runs of one sigma break the sweep's schema
    (:data:`~setfuncs.experiments.mixture.sweep.RUN_SCHEMA`, one run per configuration and seed:
    :func:`~setfuncs.experiments.schema.check_results`). Non-finite floats are restored.
    """
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path} does not exist; write it with {_WRITER} (about an hour of one core), or "
                                f"pass the committed results/{RESULTS_NAME}")
    try:
        results = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise _fail(path, f"not JSON ({err})") from err
    _check_header(results, path)
    for index, run in enumerate(results["runs"]):
        if not isinstance(run, dict) or run.get("sigma") not in results["sigmas"]:
            sigma = run.get("sigma") if isinstance(run, dict) else None
            raise _fail(path, f"run {index} has sigma {sigma!r}, not one of sigmas {results['sigmas']}")
    for sigma in results["sigmas"]:
        runs = [run for run in results["runs"] if run["sigma"] == sigma]
        try:
            check_results({"runs": runs}, f"{path} (the runs at sigma {sigma})", RUN_SCHEMA)
        except SchemaError as err:
            raise _fail(path, str(err)) from err
    try:
        return restore_non_finite(results)
    except ValueError as err:
        raise _fail(path, str(err)) from err


def run_values(results: dict, quantity: str = "metric") -> dict[tuple[float, str], dict[int, float]]:
    """``{(sigma, spec): {seed: value}}`` of ``quantity`` (one of :data:`QUANTITIES`) for every run, in
    the file's order of sigmas and configurations (its runs read by sigma, configuration and seed,
    :data:`RUN_ORDER`, whatever order they finished in); NaN for a run that diverged or collapsed (a test
    leaves its seed out)."""
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {QUANTITIES}, got {quantity!r}")
    values: dict[tuple[float, str], dict[int, float]] = {
        (sigma, spec): {} for sigma in results["sigmas"] for spec in results["configurations"]}
    for run in sorted_runs(results, RUN_ORDER):
        if run_status(run) != "trained":
            value = math.nan
        elif quantity == "metric_mean":
            value = float(np.mean(run["metric_per_population"][str(METRIC_SIZE)]))
        else:
            value = float(run[quantity])
        values.setdefault((run["sigma"], run["spec"]), {})[run["seed"]] = value
    return {key: seeds for key, seeds in values.items() if seeds}


def _em_value(results: dict, sigma: float, quantity: str) -> float:
    """EM's value of ``quantity`` at ``sigma``: 0 for the metric (a log ratio against EM), else EM's error."""
    if quantity != "test_mae":
        return 0.0
    return next(r["em_mae"] for r in results["references"] if r["sigma"] == sigma)


def seeds_needed(claims: int, alpha: float = ALPHA) -> int:
    """The fewest seeds with which a table of ``claims`` two-sided sign tests, Holm-corrected, can
    decide one: the smallest :math:`n` with :math:`\\text{claims} \\cdot 2^{1-n} \\le \\alpha`."""
    if isinstance(claims, bool) or not isinstance(claims, int) or claims < 1:
        raise ValueError(f"claims must be a positive int, got {claims!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return next(n for n in range(1, 64) if claims * smallest_p_value(n, "two-sided") <= alpha)


def _verdict(used: int, mean: float, adjusted: float, decidable: bool, alpha: float) -> str:
    if used == 0:
        return "no trained run"
    if not decidable:
        return f"undecided with {used} seed{'s' if used > 1 else ''}"
    if adjusted > alpha:
        return "undecided"
    return "model better than EM" if mean < 0 else "EM better than model"


def em_comparison(results: dict, quantity: str = "metric", alpha: float = ALPHA, level: float = LEVEL) -> list[dict]:
    """Every (sigma, configuration) against EM on ``quantity``, paired by seed (see the module): one row
    each, in the file's order, with one Holm correction over the rows.

    A row holds ``sigma, spec``, ``runs`` (recorded) and ``used`` (trained, so tested), ``model``
    (the median of the model's values over the used seeds), ``em`` (EM's value), ``difference``
    (the median of :math:`d`) with its ``level`` interval ``low, high`` (NaN with fewer than two
    seeds), ``p`` (two-sided sign test), ``adjusted`` (Holm), ``detectable`` (the smallest shift
    of :math:`d` the seeds detect with 80 % power at the worst-case Holm level
    :math:`\\alpha / m`: infinite where no p-value can pass it) and ``verdict``: ``"model better
    than EM"`` or ``"EM better than model"`` (decided at ``alpha``), ``"undecided"``, ``"undecided
    with n seeds"`` (no p-value these seeds can give passes Holm's first step) or ``"no trained run"``.
    """
    rows, differences = [], []
    for (sigma, spec), model in run_values(results, quantity).items():
        row, d = _paired_row(model, _em_value(results, sigma, quantity), level)
        rows.append({"sigma": sigma, "spec": spec, **row})
        differences.append(d)
    best = min(len(rows) * smallest_p_value(max(row["used"], 1), "two-sided") for row in rows)
    for row, d, adjusted in zip(rows, differences, holm([row["p"] for row in rows])):
        row["adjusted"] = float(adjusted)
        row["detectable"] = (detectable_effect(len(d), alpha / (2 * len(rows)), POWER, "sign") * float(np.std(d, ddof=1))
                             if len(d) >= 2 else math.inf)
        row["verdict"] = _verdict(row["used"], row["difference"], row["adjusted"], best <= alpha, alpha)
    return rows


def _paired_row(model: dict[int, float], em: float, level: float) -> tuple[dict, np.ndarray]:
    """One row of :func:`em_comparison` before Holm's correction, and its differences ``d_s = m_s - e``."""
    seeds, d = paired_differences(model, {seed: em for seed in model})
    median, low, high = median_interval(d, level) if len(d) >= 2 else (float(np.mean(d)) if len(d) else math.nan,
                                                                       math.nan, math.nan)
    return {"runs": len(model), "used": len(seeds),
            "model": float(np.median([model[s] for s in seeds])) if seeds else math.nan, "em": em,
            "difference": median, "low": low, "high": high,
            "p": sign_test(d, "two-sided") if len(d) else 1.0}, d


def sensitivity_table(results: dict, alpha: float = ALPHA) -> list[dict]:
    """The chapter's table: per (sigma, configuration), the median over seeds of the model's metric
    (both summaries) and error, EM's and the constant guess's error, the runs used, and the verdicts
    of :func:`em_comparison` on the metric (``verdict``) and on the error (``mae_verdict``), each
    quantity with its own Holm correction over the rows."""
    metric, mean, mae = (em_comparison(results, q, alpha) for q in ("metric", "metric_mean", "test_mae"))
    constant = {r["sigma"]: r["constant_mae"] for r in results["references"]}
    return [{"sigma": m["sigma"], "spec": m["spec"], "runs": m["runs"], "used": m["used"], "metric": m["model"],
             "metric_low": m["low"], "metric_high": m["high"], "metric_mean": a["model"], "model_mae": e["model"],
             "em_mae": e["em"], "constant_mae": constant[m["sigma"]], "verdict": m["verdict"],
             "mean_verdict": a["verdict"], "mae_verdict": e["verdict"]}
            for m, a, e in zip(metric, mean, mae)]
