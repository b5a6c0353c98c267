"""Chapter 7's explorable (:mod:`setfuncs.explorables.population_sizes`) draws the chapter's Gaussian
populations and reads each model's estimate at any size.

* Box-Muller on mulberry32 gives standard normal coordinates (Kolmogorov-Smirnov against
  :func:`scipy.stats.norm`, and no correlation between the two), centres uniform in [-2, 2]^2;
* a larger population adds points to a smaller one (the curves of the page rest on it), and the
  page's draw (``szPopulation`` in node) is Python's, its sample standard deviation numpy's;
* the read-outs are ``model(x)`` on the first N points, at the size the slider's value rounds to.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
import torch
from scipy import stats

from setfuncs.explorables.esm import module_source
from setfuncs.explorables.population_sizes import PopulationSizes, gaussian_population, size
from setfuncs.explorables.weights import load_model


def test_draws_are_gaussian_around_uniform_centres() -> None:
    seeds = range(400)
    centres = np.array([gaussian_population(seed, 1, 0.0)[0] for seed in seeds])
    assert stats.kstest(centres.ravel(), stats.uniform(-2, 4).cdf).pvalue > 1e-3
    z = np.concatenate([(np.array(gaussian_population(seed, 50, 1.7)) - c) / 1.7
                        for seed, c in zip(seeds, centres)])
    assert stats.kstest(z.ravel(), stats.norm.cdf).pvalue > 1e-3
    assert abs(np.corrcoef(z.T)[0, 1]) < 0.03


def test_a_larger_population_adds_points() -> None:
    assert gaussian_population(5, 500, 0.8)[:37] == gaussian_population(5, 37, 0.8)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is missing")
def test_the_page_draws_the_same_population_and_sample_std(tmp_path) -> None:
    cases = [(0, 2, 0.5), (7, 20, 1.2), (42, 500, 2.5)]
    script = tmp_path / "draw.mjs"
    script.write_text(module_source("population_sizes") + f"\nconsole.log(JSON.stringify({json.dumps(cases)}.map("
                      "([s, n, sigma]) => { const p = szPopulation(s, n, sigma).points; return [p, szSampleStd(p)]; })));\n")
    drawn = json.loads(subprocess.run(["node", str(script)], check=True, capture_output=True, text=True).stdout)
    for (seed, n, sigma), (points, std) in zip(cases, drawn):
        python = np.array(gaussian_population(seed, n, sigma))
        np.testing.assert_allclose(points, python, rtol=0, atol=1e-12)
        assert std == pytest.approx(np.sqrt(python.var(axis=0, ddof=1).mean()), rel=1e-12)


def test_readouts_are_each_models_estimate_at_the_rounded_size() -> None:
    widget = PopulationSizes.example()
    state = {**widget.state, "n": 36.6, "sigma": 0.9, "seed": 3}
    assert size(state) == 37 and size({"n": 1.2}) == 2 and size({"n": 612}) == 500
    values = PopulationSizes.readouts(state)
    x = torch.tensor([gaussian_population(3, 37, 0.9)], dtype=torch.float64)
    for key in state["keys"]:
        with torch.no_grad():
            assert values[f"hat_{key}"] == pytest.approx(load_model(state["models"][key])(x.float()).item(), abs=1e-6)
    assert values["sample_std"] == pytest.approx(np.sqrt(x[0].numpy().var(axis=0, ddof=1).mean()), rel=1e-12)
    assert values["N"] == 37 and values["true_sigma"] == 0.9
