"""Chapter 2's explorable finds polynomial roots itself: its decoder against setfuncs.powersums.

The page (``setfuncs/explorables/js/power_sums.js``) computes ρ(Σφ), the largest real part of a
root of the polynomial whose roots have the population's first L power sums, with Newton's
identities and Aberth's simultaneous iteration; setfuncs (:func:`~setfuncs.powersums.max_from_power_sums`)
takes the eigenvalues of numpy's companion matrix. Run in node over populations whose particles lie
apart (the roots are then well conditioned), the two agree, and where L >= N the page's roots are
the particles (and zeros) and its ρ is the maximum.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from setfuncs.explorables.esm import module_source
from setfuncs.explorables.power_sums import PowerSumsMax, decoded_max, latent_sums
from setfuncs.powersums import particles_from_power_sums

RUNNER = """
import { readFileSync } from "node:fs";
import { psDecode, psSums } from "./power_sums.mjs";
const cases = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(cases.map(([x, latent]) => {
  const sums = psSums(x, latent);
  return { sums, ...psDecode(sums) };
})));
"""


def populations(count: int, seed: int) -> list[tuple[list[float], int]]:
    """``count`` populations of 1 to 12 particles in [0, 1], at least 0.05 apart, each with a latent dimension 1..12."""
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        n, latent = (int(v) for v in rng.integers(1, 13, size=2))
        x = np.sort(rng.random(n))
        if n == 1 or np.diff(x).min() >= 0.05:
            cases.append((rng.permutation(x).tolist(), latent))
    return cases


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory):
    """The page's decoder, run in node on a list of (population, L)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the explorables' computations are tested in node (Node 20, `make setup`)")
    folder = tmp_path_factory.mktemp("power_sums")
    (folder / "power_sums.mjs").write_text(module_source("power_sums") + "\nexport { psDecode, psSums };\n",
                                           encoding="utf-8")
    (folder / "run.mjs").write_text(RUNNER, encoding="utf-8")

    def run(cases: list[tuple[list[float], int]]) -> list[dict]:
        done = subprocess.run([node, str(folder / "run.mjs")], input=json.dumps(cases), capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)
    return run


def test_the_page_decodes_as_setfuncs_does(page) -> None:
    cases = populations(300, seed=0)
    for (x, latent), result in zip(cases, page(cases)):
        assert np.allclose(result["sums"], latent_sums(x, latent), rtol=1e-14, atol=0), (x, latent)
        assert abs(result["rho"] - decoded_max(x, latent)) < 1e-9, (x, latent)
        roots = np.array([complex(*r) for r in result["roots"]])
        assert len(roots) == latent
        if latent < len(x):  # L roots that are not the particles, found alike by both methods
            assert np.allclose(np.sort(roots.real), particles_from_power_sums(latent_sums(x, latent)), atol=1e-7)


def test_from_latent_dimension_n_on_the_roots_are_the_particles(page) -> None:
    cases = [(x, latent) for x, latent in populations(300, seed=1) if latent >= len(x)]
    assert len(cases) > 100
    for (x, latent), result in zip(cases, page(cases)):
        roots = np.array([complex(*r) for r in result["roots"]])
        assert abs(result["rho"] - max(x)) < 1e-9, (x, latent)
        # every particle is a root; the other L - N roots are the padding zeros, smeared by rounding
        assert all(np.abs(roots - v).min() < 1e-6 for v in x if v >= 0.05), (x, latent, roots)
        assert np.abs(np.sort(np.abs(roots))[:latent - len(x)]).max(initial=0) < 0.06, (x, latent, roots)


def test_below_n_the_decoder_misses_the_maximum(page) -> None:
    """The chapter's point, on the page's numbers: with L < N, rho is not the maximum (for these populations)."""
    x = PowerSumsMax().state["population"]
    results = page([(x, latent) for latent in range(1, 13)])
    errors = [abs(r["rho"] - max(x)) for r in results]
    assert min(errors[:len(x) - 1]) > 1e-3 and max(errors[len(x) - 1:]) < 1e-12, errors
    assert results[0]["rho"] == pytest.approx(sum(x)), "L = 1: the one root is s_1, the sum"
