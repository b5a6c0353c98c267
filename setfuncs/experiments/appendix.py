r"""What the appendix "How this book tests a claim" computes: the sign-flip test drawn, the compound
rule's simulated error rates, and what each experiment's families and seeds can decide.

- :func:`sign_flip_means` lists the mean of the paired differences under every one of the :math:`2^n`
  patterns of signs, the distribution the exact sign-flip test compares the observed mean with;
  :func:`plot_sign_flip` draws it, with the observed mean and the share at least as large (the
  one-sided p-value, equal to :func:`~setfuncs.experiments.paired.sign_flip_test`'s);
- :func:`null_rates` reads the committed simulation of the compound-claim rule
  (``results/simulations/compound-rule.json``) at its null scenarios: how often a claim with no effect
  is decided, against the bound the rule promises;
- :func:`power_rows` is :func:`~setfuncs.experiments.report.family_power` for several experiments
  side by side.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .findings import Finding
from .paired import _all_signs
from .report import family_power

__all__ = ["sign_flip_means", "plot_sign_flip", "NullRate", "null_rates", "null_rates_sentence", "power_rows"]


def sign_flip_means(d: Sequence[float] | np.ndarray) -> np.ndarray:
    r"""The means :math:`\frac1n \sum_s \epsilon_s d_s` over all :math:`2^n` sign patterns
    :math:`\epsilon \in \{-1, 1\}^n`, the first one all ones (the observed mean). Under the null that each
    :math:`d_s` is as likely as :math:`-d_s`, every pattern is equally likely. A ValueError for no
    differences or more than 20 (a million patterns)."""
    values = np.asarray(d, dtype=float)
    if values.ndim != 1 or not 1 <= values.size <= 20:
        raise ValueError(f"d must hold 1 to 20 paired differences, got shape {values.shape}")
    return _all_signs(values.size) @ values / values.size


def plot_sign_flip(d: Sequence[float] | np.ndarray, label: str, width: float = 7.0) -> Any:
    """A histogram of :func:`sign_flip_means` with the observed mean marked and the share of patterns at
    least as large written beside it (the exact one-sided p-value). Returns the figure."""
    import matplotlib.pyplot as plt

    means = sign_flip_means(d)
    observed = means[0]
    share = float(np.mean(means >= observed - 1e-12 * max(1.0, float(np.abs(means).max()))))
    fig, ax = plt.subplots(figsize=(width, 2.8), layout="constrained")
    ax.hist(means, bins=41, color="0.75", edgecolor="0.55")
    ax.axvline(observed, color="#cf222e", linewidth=2)
    ax.text(observed, ax.get_ylim()[1] * 0.9, f"  observed mean {observed:.3g}\n  share at least as large {share:.2g}",
            color="#cf222e", fontsize="medium", va="top", ha="right" if observed > 0 else "left")
    ax.set_xlabel(f"mean of the {len(means).bit_length() - 1} paired differences under each sign pattern ({label})")
    ax.set_ylabel("patterns")
    return fig


@dataclass(frozen=True)
class NullRate:
    """One null scenario of the simulation: how often the rule decided the claim or its opposite, the
    bound it promises for each (the family's level times the direction's share), and the simulation's
    own error, three binomial standard errors of its ``reps`` repetitions at the bound."""

    scenario: str
    noise: str
    family: int
    claim: float
    opposite: float
    claim_bound: float
    opposite_bound: float
    reps: int

    def margin(self, bound: float) -> float:
        """Three binomial standard errors of ``reps`` draws at the rate ``bound``."""
        return 3 * float(np.sqrt(bound * (1 - bound) / self.reps))

    @property
    def within(self) -> bool:
        """Whether both rates lie within their bounds plus the simulation's error."""
        return (self.claim <= self.claim_bound + self.margin(self.claim_bound)
                and self.opposite <= self.opposite_bound + self.margin(self.opposite_bound))

    def __str__(self) -> str:
        return (f"{self.scenario} ({self.noise}, family of {self.family}): claim {self.claim:.2%} (bound "
                f"{self.claim_bound:.2%}), opposite {self.opposite:.2%} (bound {self.opposite_bound:.2%})")


def null_rates(path: str | os.PathLike) -> list[NullRate]:
    """The null scenarios (every part at 0) of the simulation file ``path``
    (``scripts/simulate_findings.py``), each with its rates and bounds. A ValueError naming the file where
    it holds no such rows."""
    data = json.loads(open(path, encoding="utf-8").read())
    rows = [NullRate(r["name"].split(": ")[0], r["noise"], r["family"], r["rates"]["claim"], r["rates"]["opposite"],
                     r["level"] * r["bounds"]["claim"], r["level"] * r["bounds"]["opposite"], int(data["reps"]))
            for r in data.get("rows", []) if "global null" in r["name"]]
    if not rows:
        raise ValueError(f"{path} holds no null scenario (rows named 'the global null'); write it with "
                         f"`{data.get('command', 'python scripts/simulate_findings.py')}`")
    return rows


def null_rates_sentence(rates: Sequence[NullRate]) -> str:
    """How many of the null scenarios keep both bounds within the simulation's error, in a sentence."""
    kept = sum(r.within for r in rates)
    return (f"{kept} of {len(rates)} null scenarios keep both rates within bound + 3 standard errors "
            f"({rates[0].reps:,} repetitions each).")


def power_rows(found: Mapping[str, Sequence[Finding]]) -> list[dict]:
    """``{experiment, family, claims, seeds, smallest p, first step, decidable, seeds needed}`` for every
    family of every experiment's findings (:func:`~setfuncs.experiments.report.family_power`)."""
    return [{"experiment": name, **vars(row)} for name, rows in found.items() for row in family_power(rows)]
