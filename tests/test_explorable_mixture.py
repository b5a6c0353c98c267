"""Chapter 9's explorable computes in the browser what the repository computes: the population
(``js/mixture_math.js``'s ``mxPopulation`` against :func:`setfuncs.explorables.mixture.draw_population`),
EM (``mxFitGmm``, a port of :func:`setfuncs.experiments.mixture.em.fit_gmm`, against it and against
scikit-learn's ``GaussianMixture`` from the same start), the Beta mean of a model's outputs and the
Beta density the page draws.

The JavaScript runs in node (a build requirement of the book, as for ``tests/test_model_export.py``),
inlined into one module by :func:`setfuncs.explorables.esm.module_source`, as notebooks get it.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
import torch

from setfuncs.experiments.mixture.em import MAX_ITER, REG_COVAR, TOL, fit_gmm, initial_parameters
from setfuncs.experiments.mixture.loss import beta_concentrations, beta_mean
from setfuncs.explorables.esm import module_source
from setfuncs.explorables.mixture import draw_population

#: (seed, N, weight of component 1, means): the chapter's kind of mixture, a small one, a large one
#: with the smaller component second, means the reader dragged close together (EM iterates long),
#: and the smallest population the page draws.
CASES = [
    (3, 100, 0.3, [[math.cos(0.5), math.sin(0.5)], [-math.cos(0.5), -math.sin(0.5)]]),
    (11, 12, 0.137, [[1.0, 0.0], [-1.0, 0.0]]),
    (42, 1000, 0.81, [[0.4, -2.2], [-1.5, 1.1]]),
    (7, 300, 0.45, [[0.2, 0.1], [-0.3, 0.0]]),
    (0, 5, 0.05, [[2.0, 2.0], [-2.0, -2.0]]),
]
#: Beta outputs (raw model outputs u, v) for the Beta mean and density.
OUTPUTS = [[0.3, 1.2], [-4.0, 25.0], [21.5, -0.7], [3.0, 3.0]]

RUNNER = """
import * as mx from "./mixture_math.mjs";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { cases, outputs } = JSON.parse(input);
const populations = cases.map(([seed, n, weight, means]) => {
  const { x, second } = mx.mxPopulation(seed, n, weight, means, 0.7);
  return { x, second, init: mx.mxInitialParameters(x), fit: mx.mxFitGmm(x),
           ellipses: mx.mxFitGmm(x).covariances.map((c) => mx.mxEllipse(c, 1)) };
});
const betas = outputs.map((o) => {
  const beta = mx.mxBeta(o);
  return { ...beta, density: [0.01, 0.2, 0.5, 0.77, 0.99].map((t) => mx.mxBetaDensity(t, beta.a, beta.b)) };
});
process.stdout.write(JSON.stringify({ populations, betas }));
"""


@pytest.fixture(scope="module")
def node_results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the explorables' JavaScript is tested in node (Node 20; `make setup`)")
    folder = tmp_path_factory.mktemp("mixture_js")
    (folder / "mixture_math.mjs").write_text(module_source("mixture_math"), encoding="utf-8")
    (folder / "runner.mjs").write_text(RUNNER, encoding="utf-8")
    run = subprocess.run([node, str(folder / "runner.mjs")], input=json.dumps({"cases": CASES, "outputs": OUTPUTS}),
                         capture_output=True, text=True, timeout=120, cwd=folder)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _x(case: tuple) -> np.ndarray:
    return draw_population(case[0], case[1], case[2], case[3])[0]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_the_population_is_the_same_particles(node_results: dict, index: int) -> None:
    js = node_results["populations"][index]
    x, second = draw_population(*CASES[index][:4])
    assert np.array_equal(np.array(js["second"]), second)
    # float32 particles from float64 maths: equal bit for bit unless a libm's last bit moves a rounding
    assert np.abs(np.array(js["x"], dtype=np.float64) - x.astype(np.float64)).max() <= 1e-6
    assert np.mean(np.array(js["x"], dtype=np.float32) == x) > 0.99


def test_the_components_come_in_the_share_the_weight_asks_for() -> None:
    x, second = draw_population(5, 20_000, 0.2, [[1.0, 0.0], [-1.0, 0.0]])
    assert abs((~second).mean() - 0.2) < 0.01                       # component 1 with probability w1
    first = x[~second].astype(np.float64)
    assert np.allclose(first.mean(axis=0), [1, 0], atol=0.03) and np.allclose(first.std(axis=0), 0.7, atol=0.02)
    assert scipy.stats.kstest((first[:, 0] - 1) / 0.7, "norm").pvalue > 1e-3


@pytest.mark.parametrize("index", range(len(CASES)))
def test_em_starts_where_the_repository_starts(node_results: dict, index: int) -> None:
    init = node_results["populations"][index]["init"]
    weights, means, covariances = (t[0].numpy() for t in initial_parameters(torch.from_numpy(_x(CASES[index])).double()[None]))
    assert np.allclose(init["weights"], weights, rtol=1e-12, atol=1e-12)
    assert np.allclose(init["means"], means, rtol=1e-10, atol=1e-12)
    assert np.allclose(init["covariances"], covariances, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_em_is_the_repositorys_em(node_results: dict, index: int) -> None:
    fit = node_results["populations"][index]["fit"]
    ours = fit_gmm(torch.from_numpy(_x(CASES[index])).double()[None])
    assert fit["iterations"] == int(ours.iterations[0]) and fit["converged"] == bool(ours.converged[0])
    assert np.allclose(fit["weights"], ours.weights[0].numpy(), rtol=0, atol=1e-9)
    assert np.allclose(fit["means"], ours.means[0].numpy(), rtol=0, atol=1e-8)
    assert np.allclose(fit["covariances"], ours.covariances[0].numpy(), rtol=0, atol=1e-8)
    assert math.isclose(fit["lowerBound"], float(ours.lower_bound[0]), rel_tol=1e-10)
    assert fit["iterations"] >= 2 and math.isclose(sum(fit["weights"]), 1, rel_tol=1e-12)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_em_agrees_with_scikit_learn_from_the_same_start(node_results: dict, index: int) -> None:
    from sklearn.mixture import GaussianMixture

    x = _x(CASES[index]).astype(np.float64)
    weights, means, covariances = (t[0].numpy() for t in initial_parameters(torch.from_numpy(x)[None]))
    reference = GaussianMixture(2, covariance_type="full", reg_covar=REG_COVAR, tol=TOL, max_iter=MAX_ITER,
                                weights_init=weights, means_init=means,
                                precisions_init=np.linalg.inv(covariances)).fit(x)
    fit = node_results["populations"][index]["fit"]
    assert fit["iterations"] == reference.n_iter_
    assert abs(min(fit["weights"]) - reference.weights_.min()) < 1e-6
    assert np.allclose(fit["weights"], reference.weights_, atol=1e-6)


def _log_likelihood(x: np.ndarray, parameters: dict) -> float:
    """The mean log-likelihood of ``x`` under a fitted mixture (scipy's Gaussians)."""
    density = sum(w * scipy.stats.multivariate_normal(m, c).pdf(x)
                  for w, m, c in zip(parameters["weights"], parameters["means"], parameters["covariances"]))
    return float(np.log(density).mean())


@pytest.mark.parametrize("index", range(len(CASES)))
def test_em_climbs_the_likelihood(node_results: dict, index: int) -> None:
    """EM never lowers the likelihood: the page's fit explains its population better than the 2-means
    start it came from (a wrong E- or M-step would not), or as well where the start is already a fixed
    point (five particles of one cluster)."""
    js, x = node_results["populations"][index], _x(CASES[index]).astype(np.float64)
    assert _log_likelihood(x, js["fit"]) >= _log_likelihood(x, js["init"]) - 1e-9


def test_em_finds_the_weight_of_a_large_population(node_results: dict) -> None:
    js = node_results["populations"][2]
    assert abs(min(js["fit"]["weights"]) - (1 - CASES[2][2])) < 0.03


@pytest.mark.parametrize("index", range(len(CASES)))
def test_the_ellipses_are_the_covariances(node_results: dict, index: int) -> None:
    for ellipse, covariance in zip(node_results["populations"][index]["ellipses"],
                                   node_results["populations"][index]["fit"]["covariances"]):
        values, vectors = np.linalg.eigh(np.array(covariance))
        assert np.allclose([ellipse["rx"] ** 2, ellipse["ry"] ** 2], values[::-1], rtol=1e-9)
        axis = vectors[:, 1]
        angle = math.radians(ellipse["angle"])
        assert abs(abs(axis @ [math.cos(angle), math.sin(angle)]) - 1) < 1e-9


@pytest.mark.parametrize("index", range(len(OUTPUTS)))
def test_the_beta_is_the_losss_beta(node_results: dict, index: int) -> None:
    beta = node_results["betas"][index]
    output = torch.tensor([OUTPUTS[index]], dtype=torch.float64)
    a, b = (float(c[0]) for c in beta_concentrations(output))
    assert math.isclose(beta["a"], a, rel_tol=1e-14) and math.isclose(beta["b"], b, rel_tol=1e-14)
    assert math.isclose(beta["mean"], float(beta_mean(output)[0]), rel_tol=1e-14)
    expected = scipy.stats.beta.pdf([0.01, 0.2, 0.5, 0.77, 0.99], a, b)
    assert np.allclose(beta["density"], expected, rtol=1e-9, atol=1e-300)
