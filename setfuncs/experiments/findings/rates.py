r"""The error rates and power of the compound-claim rule, by simulation at the seed counts the chapters use.

A claim of :math:`k` parts (:class:`~setfuncs.experiments.findings.claims.Claim`) is judged by
:func:`~setfuncs.experiments.findings.judge.judge`: "every part holds" by the intersection-union rule
(each part's one-sided p-value at the level, the largest of them the claim's), "some part fails" by the
joint sign-flip test with the maximum statistic over the parts
(:func:`~setfuncs.experiments.paired.joint_sign_flip_test`), and the two directions weighted
:data:`~setfuncs.experiments.findings.claims.CLAIM_SHARE` to :math:`1 -` that share. An any-claim swaps
the two rules. :func:`simulate` draws tables of one such claim and counts how often each direction is
decided at the level a claim has in a family of :math:`m` claims at Holm's first step, :math:`\alpha / m`
(the strictest a false claim can meet, and the one a single true null among false ones meets).

Each :class:`Scenario` fixes the parts' means :math:`\mu_i` in units of the noise's standard deviation.
The noise of seed :math:`s` is one of :data:`NOISES`:

* ``"correlated normal"``: :math:`d_{is} = \mu_i + \sqrt\rho\, z_s + \sqrt{1 - \rho}\, z_{is}`, the parts
  sharing a seed effect (:data:`CORRELATION`), jointly symmetric about the means, which is the null the
  joint test is exact under;
* ``"shared configuration"``: the parts compare one configuration :math:`X` with :math:`k` others
  :math:`Y_i` of one seed, :math:`d_{is} = \mu_i + (g_{Y_i s} - g_{X s})/\sqrt 2` with every :math:`g`
  an independent standard Gumbel variable (the log of an exponential error, skewed), so that each
  part is symmetric about its mean but the vector of parts is not (its third moments do not vanish):
  the case a "best of" claim meets, where the joint test's exactness is not guaranteed and the
  simulation has to show its rate.

The scenarios (:data:`SCENARIOS`) are the global null, partial nulls (some parts hold, the rest at 0),
one part against, and every part for; for any-claims the null and one part for. What each rate must
stay under is in :attr:`Scenario.bounds`, what it must reach in :attr:`Scenario.power`.

**What ten seeds cannot do.** At :math:`\alpha/m` with :math:`m = 6` the opposite's share
:math:`(1 - w)\,\alpha/m` is below :math:`2/2^{10}`, so the opposite is decided only where its p-value is
the smallest possible, :math:`2^{-10}`: the failing part must lie below 0 on all ten seeds, and lean
against the claim more steadily than any part that holds leans for it (the sign patterns flip those
too). One part failing by 2 sd lies below 0 on all ten seeds with probability :math:`\Phi(2)^{10} = 0.79`,
the most any test of it could reach at that level; the joint test reaches about 0.6 with three parts
and 0.5 with nine (the committed artefact, ``results/simulations/compound-rule.json``), where the
Bonferroni bound over the parts it replaces, :math:`k\, 2^{-10}/(1 - w)`, exceeds the level and decides
nothing at all.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .claims import ALPHA, CLAIM_SHARE, Claim, Comparison
from .judge import weigh

__all__ = ["CORRELATION", "NOISES", "RULE_FILES", "Scenario", "SCENARIOS", "simulate", "rates", "rule_digest"]

#: The correlation of the parts' noise under ``"correlated normal"``.
CORRELATION = 0.5
#: The noises :func:`simulate` draws (module docstring).
NOISES = ("correlated normal", "shared configuration")
_GUMBEL_STD = np.pi / np.sqrt(6)
#: The source files that make the rule, relative to the ``setfuncs/experiments`` package: what
#: :func:`rule_digest` hashes.
RULE_FILES = ("paired.py", "findings/claims.py", "findings/judge.py", "findings/rates.py")


@dataclass(frozen=True)
class Scenario:
    """One simulated claim: its parts' means (noise standard deviations), how its parts combine, and the
    rates it must stay under.

    Attributes:
        name: what it is, in words.
        means: :math:`\\mu_i`, one per part.
        combine: ``"all"`` or ``"any"``.
        bounds: ``{"claim" or "opposite": the most that direction may be decided}``, as a share of the
            level :math:`\\alpha/m` (1: at most the level; :data:`~setfuncs.experiments.findings.claims.CLAIM_SHARE` or :math:`1 -` it: at most
            that direction's share).
        power: ``{"claim" or "opposite": the least that direction must be decided}``, absolute.
    """

    name: str
    means: tuple[float, ...]
    combine: str = "all"
    bounds: dict[str, float] = field(default_factory=dict)
    power: dict[str, float] = field(default_factory=dict)


def _scenarios(k: int) -> list[Scenario]:
    w, rest = CLAIM_SHARE, 1 - CLAIM_SHARE
    half = k // 2
    return [
        Scenario(f"all-claim, {k} parts: every part at 0 (the global null)", (0.0,) * k,
                 bounds={"claim": w, "opposite": rest}),
        Scenario(f"all-claim, {k} parts: {k - half} hold by 2 sd, {half} at 0 (a partial null)",
                 (2.0,) * (k - half) + (0.0,) * half, bounds={"claim": w, "opposite": rest}),
        Scenario(f"all-claim, {k} parts: {k - 1} hold by 2 sd, one at 0 (a partial null)",
                 (2.0,) * (k - 1) + (0.0,), bounds={"claim": w, "opposite": rest}),
        Scenario(f"all-claim, {k} parts: every part holds by 2 sd", (2.0,) * k,
                 bounds={"opposite": rest}, power={"claim": 0.8}),
        Scenario(f"all-claim, {k} parts: {k - 1} hold by 1 sd, one fails by 2 sd", (1.0,) * (k - 1) + (-2.0,),
                 bounds={"claim": w}, power={"opposite": 0.4}),
        Scenario(f"any-claim, {k} parts: every part at 0 (the global null)", (0.0,) * k, "any",
                 bounds={"claim": w, "opposite": rest}),
        Scenario(f"any-claim, {k} parts: one holds by 2 sd, the rest fail by 1 sd", (2.0,) + (-1.0,) * (k - 1), "any",
                 bounds={"opposite": rest}, power={"claim": 0.8}),
    ]


#: The scenarios at three and nine parts (the sizes of the chapters' compound claims).
SCENARIOS = tuple(s for k in (3, 9) for s in _scenarios(k))


def _noise(rng: np.random.Generator, noise: str, k: int, seeds: int) -> np.ndarray:
    if noise == "correlated normal":
        return (np.sqrt(CORRELATION) * rng.standard_normal((1, seeds))
                + np.sqrt(1 - CORRELATION) * rng.standard_normal((k, seeds)))
    if noise == "shared configuration":
        g = rng.gumbel(size=(k + 1, seeds))
        return (g[1:] - g[:1]) / (np.sqrt(2) * _GUMBEL_STD)
    raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")


def simulate(scenario: Scenario, noise: str, seeds: int = 10, family: int = 6, reps: int = 2000,
             seed: int = 0) -> dict[str, float]:
    """``{"claim": rate, "opposite": rate}``: the share of ``reps`` simulated claims of ``scenario`` whose
    direction is decided at :math:`\\alpha` / ``family`` (module docstring), with ``seeds`` seeds of
    ``noise``, drawn with ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    means = np.asarray(scenario.means, dtype=float)[:, None]
    level = ALPHA / family
    counts = {"claim": 0, "opposite": 0}
    labels = tuple(range(seeds))
    for _ in range(reps):
        d = means + _noise(rng, noise, len(scenario.means), seeds)
        claim = Claim("simulated", "d", tuple(Comparison(f"part {i}", labels, row) for i, row in enumerate(d)),
                      combine=scenario.combine)
        test = weigh(claim, family)
        if test.p_value <= level:
            counts["claim" if test.claims else "opposite"] += 1
    return {key: value / reps for key, value in counts.items()}


def rates(seeds: int = 10, family: int = 6, reps: int = 2000,
          scenarios: Sequence[Scenario] = SCENARIOS) -> list[dict]:
    """One row per scenario and noise: the scenario's fields, ``noise``, ``rates`` (:func:`simulate`, each
    noise with its own stream) and ``level`` (:math:`\\alpha` / ``family``)."""
    rows = []
    for i, scenario in enumerate(scenarios):
        for j, noise in enumerate(NOISES):
            rows.append({"name": scenario.name, "combine": scenario.combine, "means": list(scenario.means),
                         "bounds": scenario.bounds, "power": scenario.power, "noise": noise,
                         "level": ALPHA / family,
                         "rates": simulate(scenario, noise, seeds, family, reps, seed=1000 * i + j)})
    return rows


def rule_digest() -> str:
    """The SHA-256 of :data:`RULE_FILES`' code, in order, their docstrings and comments left out (the syntax
    tree, ``ast.dump``): what a committed simulation of the rule was run on, which a change of wording
    leaves alone."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in RULE_FILES:
        tree = ast.parse((root / name).read_text())
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
        digest.update(name.encode() + b"\0" + ast.dump(tree).encode() + b"\0")
    return digest.hexdigest()
