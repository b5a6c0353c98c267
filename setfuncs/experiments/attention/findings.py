r"""The paper's findings on Figure 5, tested on a sweep's runs paired by seed (:mod:`setfuncs.experiments.findings`).

The paper states three findings (its ``results/paper-results.json``); we test each on the sweep's
runs, every comparison paired by seed. A run that diverged or failed (collapsed, or counting no
better than the most frequent count: :func:`~setfuncs.experiments.attention.table.usable_runs`) has no
measurement; as in every chapter it counts against its configuration (``failed="against"``,
:data:`~setfuncs.experiments.findings.claims.FAILED_RULES`): it takes the worst outcome its comparison saw,
and never one that favours its configuration (:func:`worst_outcome`); ``failed="dropped"`` leaves such
runs out, the alternative the sensitivity column shows. Selecting runs on their outcome would
otherwise favour a configuration that fails often:

1. *On par at 200 particles, with an order of magnitude fewer weights*: for each set localiser,
   :math:`d_s` is its test ELBO at the training size minus the image localiser's, for the runs of
   seed :math:`s`; "on par or better" is read as "above :math:`-`:data:`ON_PAR_NATS`" (the
   ``margin``), and the claim holds if *some* set localiser is on par (a union over them,
   Bonferroni-corrected). The weights are counted, not estimated: a ratio of at least 10 between
   the image localiser's weights and the largest set localiser's reproduces that part.
2. *Learnable aggregations improve strictly monotonically with population size; non-learnable
   ones do not reliably*: for each set localiser and each step between consecutive test sizes,
   :math:`d_s` is the run's mean ELBO gain over that step (each run's gain is paired by canvas
   over several particle draws, :mod:`~setfuncs.experiments.attention.evaluate`). A learnable
   localiser's claim is that every step's gain is positive, one claim per localiser; the plain ones'
   is a claim about their class, one claim: that some plain localiser fails to gain at some step (the
   claim's differences are the negated gains of every plain localiser and step, and one suffices).
3. *Bounding boxes tighten as the population grows*: per seed, the mean over set localisers of
   the matched box IoU at the largest size minus at the smallest, over the localisers (a failed
   run at its worst outcome, or, with ``failed="dropped"``, its localiser left out for that seed).

Only the first is a comparison of configurations, and it has a margin; the others are about each
localiser's own curve, which a null copy of the file (outcomes shuffled across localisers) leaves
as it is. None of them has a pairing that makes its differences symmetric about zero (even a mean
of changes that are each symmetric need not be), so every claim here is tested with the exact
sign test of the median (:attr:`~setfuncs.experiments.findings.claims.Claim.test`), which needs no symmetry.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from ..differences import claim_gaps, header_field
from ..findings import Claim, Comparison, Finding, check_failed
from ..results import load_paper
from ..sweeps import variant_spec
from .canvas import MULTI_MNIST
from .differences import CLAIM_AXES, protocol_differences
from .localisers import IMAGE
from .metric import per_seed
from .sweep import PAPER_SET_SPECS
from .table import LEARNABLE, usable_runs

__all__ = ["ON_PAR_NATS", "WEIGHT_RATIO", "variant_specs", "worst_outcome", "attention_claims", "counted_weights"]

#: How far below the image localiser (nats per canvas) a set localiser may be and still count as on par.
ON_PAR_NATS = 1.0
#: "An order of magnitude fewer weights" — the smallest ratio of the image localiser's weights to a set localiser's.
WEIGHT_RATIO = 10


def variant_specs(variant: str = "paper") -> list[str]:
    """The set localisers of the paper's comparison, with log-mean-exp in place of LSE for ``"lme"``."""
    return [variant_spec(s, variant) for s in PAPER_SET_SPECS]


def _words(paper: str | os.PathLike | None) -> list[str]:
    """The three claims' words: the paper's (``results/paper-results.json``), or short ones."""
    return (list(load_paper(paper)["spatial_attention"]["findings"]) if paper is not None else
            ["set localiser on par with the image localiser", "learnable aggregations improve monotonically",
             "bounding boxes tighten"])


def _usable(results: dict, specs: Sequence[str]) -> dict[str, list[dict]]:
    """The usable runs of the image localiser and of every spec; a ValueError if one has none."""
    runs = {}
    for spec in [IMAGE, *specs]:
        runs[spec] = usable_runs(results, spec)[0]
        if not runs[spec]:
            raise ValueError(f"the findings need usable runs of every localiser; {spec} has none")
    return runs


def worst_outcome(values: dict[int, float], failed: Sequence[int], ceiling: float) -> dict[int, float]:
    """``values`` (seed -> a usable run's outcome, higher better for its configuration) with every seed of
    ``failed`` at the worst of them, and at most ``ceiling`` (an outcome that does not favour the
    configuration: no gain, or not on par); a ValueError if there is no usable value to take it from."""
    if failed and not values:
        raise ValueError("a failed run takes the worst outcome of its comparison, but the comparison has no usable run")
    worst = min(min(values.values()), ceiling) if values else ceiling
    return dict(sorted({**values, **{seed: worst for seed in failed}}.items()))


def _failed_seeds(results: dict, spec: str) -> list[int]:
    usable, every = usable_runs(results, spec)
    kept = {r["seed"] for r in usable}
    return [r["seed"] for r in every if r["seed"] not in kept]


def counted_weights(results: dict, paper: str | os.PathLike | None = None,
                    variants: Sequence[str] = ("paper", "lme")) -> list[Finding]:
    """The counted part of the first claim, "an order of magnitude fewer weights" (no test: ``seeds`` 0, no
    p-value): the image localiser's weights over the largest set localiser's, reproduced at a ratio of
    :data:`WEIGHT_RATIO`; one row per variant, or one row ``"both"`` where the variants count the same.
    The image localiser's weights grow with the canvas's pixels, so the ratio is the paper's only on the
    paper's canvas (:data:`~setfuncs.experiments.attention.canvas.MULTI_MNIST`): on another the verdict is
    ``"not comparable"``, the canvas named in the note."""
    rows = []
    for variant in variants:
        specs = variant_specs(variant)
        runs = _usable(results, specs)
        largest = max(specs, key=lambda s: runs[s][0]["localiser_parameters"])
        ratio = runs[IMAGE][0]["localiser_parameters"] / runs[largest][0]["localiser_parameters"]
        side = header_field(results, "data", "canvas_size")
        comparable = side == MULTI_MNIST.canvas_size
        verdict = ("reproduced" if ratio >= WEIGHT_RATIO else "not reproduced") if comparable else "not comparable"
        note = ("counted, no uncertainty" if comparable else
                f"on a {side} x {side} canvas, where the paper's is {MULTI_MNIST.canvas_size} x "
                f"{MULTI_MNIST.canvas_size}: the image localiser's weights grow with the pixels")
        row = Finding(_words(paper)[0] + " (weights)", f"image localiser's weights / {largest}'s (the largest set "
                      f"localiser)", ratio, np.nan, np.nan, 0, np.nan, np.nan, np.nan, verdict, variant,
                      note=note, comparative=False, key="on-par/weights", part="weights")
        if not any(r.measure == row.measure and r.estimate == row.estimate for r in rows):
            rows.append(row)
    if len(rows) == 1 and len(variants) > 1:
        rows = [Finding(**{**rows[0].__dict__, "variant": "both"})]
    return rows


def _versus_image(spec: str, runs: dict[str, list[dict]], image: dict[int, float], failures: dict[str, list[int]],
                  train: str) -> Comparison:
    """A set localiser's ELBO at the training size against the image localiser's, seed by seed: a failed set
    run at the worst difference and not on par, a failed image run at the best, the set localiser at least
    its equal."""
    d = Comparison.paired(f"{spec} vs image", per_seed(runs[spec], lambda r: r["evaluation"][train]["elbo"]), image)
    usable = dict(zip(d.seeds, d.differences))
    worse = [s for s in failures[spec] if s in image]
    better = {s: max(max(usable.values()), 0.0) for s in failures[IMAGE] if s not in failures[spec]}
    values = {**worst_outcome(usable, worse, -ON_PAR_NATS), **better}
    return Comparison(d.label, tuple(sorted(values)), np.array([values[s] for s in sorted(values)]))


def attention_claims(results: dict, paper: str | os.PathLike | None = None, variant: str = "paper",
                     failed: str = "against") -> list[Claim]:
    """The tested claims of Section 4.4 on ``results`` for ``variant``; with ``paper``
    (``results/paper-results.json``) the claims are the paper's words. The counted weights are
    :func:`counted_weights`. ``failed``: how a failed run counts (module docstring)."""
    words = _words(paper)
    params = results["budget_parameters"]
    train, sizes = str(params["particles"]), sorted(int(n) for n in params["eval_sizes"])
    steps = [f"{a}->{b}" for a, b in zip(sizes[:-1], sizes[1:])]
    specs = variant_specs(variant)
    gap_of = claim_gaps(results, protocol_differences, CLAIM_AXES)
    runs = _usable(results, specs)
    for spec in specs:
        if any("elbo_gains" not in r for r in runs[spec]):
            raise ValueError(f"the findings need every set localiser's ELBO gains paired by canvas ('elbo_gains'), "
                             f"which the runs of {spec} lack: the file was written before they were recorded; "
                             f"rerun the sweep to test the findings")
    against = check_failed(failed) == "against"
    failures = {spec: _failed_seeds(results, spec) if against else [] for spec in [IMAGE, *specs]}
    image = per_seed(runs[IMAGE], lambda r: r["evaluation"]["image"]["elbo"])
    on_par = Claim(words[0] + " (ELBO)", f"ELBO at n = {train} of a set localiser - the image localiser's "
                   f"(nats per canvas; some localiser must be above -{ON_PAR_NATS:g})",
                   tuple(_versus_image(spec, runs, image, failures, train) for spec in specs),
                   combine="any", margin=ON_PAR_NATS, gap=gap_of["set localiser on par with the image localiser"],
                   note=f"on par: within {ON_PAR_NATS:g} nat", key="on-par/elbo", part="ELBO")
    claims = [on_par]

    def step_gains(spec: str, sign: float) -> tuple[Comparison, ...]:
        """``sign`` times the localiser's mean ELBO gain over each step, a failed run at its worst (no gain)."""
        parts = []
        for step in steps:
            gains = worst_outcome({r["seed"]: r["elbo_gains"][step]["mean"] for r in runs[spec]}, failures[spec], 0.0)
            parts.append(Comparison(f"{spec} {step}", tuple(gains), sign * np.array(list(gains.values()))))
        return tuple(parts)

    for paper_spec, spec in zip(PAPER_SET_SPECS, specs):
        if spec not in LEARNABLE:
            continue
        named = paper_spec if spec == paper_spec else f"{paper_spec} as {spec}"    # the paper's localiser, as tested
        claims.append(Claim(f"{words[1]} ({named}, learnable)",
                            f"mean ELBO gain of {spec} at every step {sizes} (all must be positive)",
                            step_gains(spec, 1.0), comparative=False,
                            gap=gap_of["learnable aggregations improve monotonically"],
                            note="gains paired by canvas", key=f"monotonic/{paper_spec}", part=f"{named}, learnable"))
    plain = [spec for spec in specs if spec not in LEARNABLE]
    claims.append(Claim(f"{words[1]} (the plain aggregations, as a class)",
                        f"minus the mean ELBO gain of some plain localiser ({', '.join(plain)}) at some step {sizes} "
                        f"(one positive suffices)",
                        tuple(part for spec in plain for part in step_gains(spec, -1.0)), combine="any",
                        comparative=False, gap=gap_of["learnable aggregations improve monotonically"],
                        note="gains paired by canvas; a claim about the class: some plain localiser fails to gain "
                             "at some step", key="monotonic/plain", part="the class, plain"))
    by_seed: dict[int, list[float]] = {}          # a failed run at its worst, or (dropped) its localiser left out
    for spec in specs:
        change = worst_outcome({r["seed"]: r["evaluation"][str(sizes[-1])]["box_iou"]
                                - r["evaluation"][str(sizes[0])]["box_iou"] for r in runs[spec]}, failures[spec], 0.0)
        for seed, value in change.items():
            by_seed.setdefault(seed, []).append(value)
    tighter = {s: float(np.mean(by_seed[s])) for s in sorted(by_seed)}
    claims.append(Claim(words[2], f"mean over the set localisers of box IoU at n = {sizes[-1]} - at n = {sizes[0]}, "
                                  f"per seed (its usable runs)",
                        (Comparison("set localisers", tuple(tighter), np.array(list(tighter.values()))),),
                        comparative=False, gap=gap_of["bounding boxes tighten"],
                        note="matched IoU over all canvases", key="boxes-tighten"))
    return claims


def lme_against_lse(results: dict) -> list[dict]:
    r"""Each set localiser with LSE against its log-mean-exp twin at every tested population size (not in
    the paper).

    For the localisers of :data:`~setfuncs.experiments.attention.sweep.PAPER_SET_SPECS` with LSE (``lse``,
    ``r-lse``) and their twins (``lme``, ``r-lme``), seed by seed: :math:`d_s` is the twin's test ELBO at
    :math:`n` particles minus the LSE localiser's (nats per canvas, positive: log-mean-exp is better). Every
    finished run counts with the ELBO it measured, a failed one (collapsed, or counting no better than the
    most frequent count) included, as the point clouds' twins count a collapsed run at its accuracy; a run
    without a finite ELBO at :math:`n` is left out with its pair. Two-sided sign-flip tests, Holm-corrected
    over every pair and size (:func:`~setfuncs.experiments.findings.twins.lme_against_lse`).

    One row per pair and size, keys ``spec, twin, n`` and those of ``compare_pairs``.
    """
    import math

    from ..findings import lme_against_lse as twins_against
    from ..results import sorted_runs
    from ..schema import finished_runs
    from ..sweeps import lme_twin

    sizes = sorted(int(n) for n in results["budget_parameters"]["eval_sizes"])
    runs = [r for r in sorted_runs(finished_runs(results)) if r["spec"] != IMAGE]

    def elbo(n: int) -> dict[tuple[str, int], float]:
        values = {(r["spec"], r["seed"]): ((r.get("evaluation") or {}).get(str(n)) or {}).get("elbo") for r in runs}
        return {key: v if isinstance(v, (int, float)) and math.isfinite(v) else np.nan for key, v in values.items()}

    specs = [spec for spec in PAPER_SET_SPECS if lme_twin(spec) != spec]
    rows = twins_against({n: elbo(n) for n in sizes}, specs, "difference")
    return [{"spec": row.pop("spec"), "twin": row.pop("twin"), "n": row.pop("at"), **row} for row in rows]
