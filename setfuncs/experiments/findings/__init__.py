r"""Findings: the paper's claims, tested on runs paired by seed, one correction per family, and a verdict.

Its parts: :mod:`~setfuncs.experiments.findings.claims` (the constants, comparisons, claims and
findings, and selection by key), :mod:`~setfuncs.experiments.findings.judge` (the tests, the
correction and the verdicts) and :mod:`~setfuncs.experiments.findings.text` (a table in words and
in HTML), :mod:`~setfuncs.experiments.findings.twins` (log-mean-exp against LSE, not a claim of
the paper), :mod:`~setfuncs.experiments.findings.rates` (the compound rule's error rates, by
simulation) and :mod:`~setfuncs.experiments.findings.sensitivity` (each verdict under the analysis'
alternatives). This package names their public objects; what follows is the method they implement.

Every experiment chapter ends with a table of :class:`~setfuncs.experiments.findings.claims.Finding` rows, one per claim of the paper.
A claim is tested on **comparisons paired by seed** (:class:`~setfuncs.experiments.findings.claims.Comparison`): two configurations
trained with the same seed see the same training stream, so a comparison is the list of per-seed
differences :math:`d_s` of a statistic, oriented so that the claim says their mean is positive
(a claim of "on par or better" adds its ``margin``: :math:`d_s + \text{margin}`). Each comparison
of configurations is tested with the exact **sign-flip test**
(:func:`~setfuncs.experiments.paired.sign_flip_test`) in both directions, and its estimate is the
mean difference with Student's 95 % interval (:func:`~setfuncs.experiments.paired.t_interval`):
under the null the two configurations are exchangeable within a seed, so :math:`d_s` is symmetric
about 0, which is what the sign-flip test needs. A claim about one group's own level
(:attr:`~setfuncs.experiments.findings.claims.Claim.comparative` False) or with a margin has no such symmetry; it is tested with the
exact **sign test** of the median (:func:`~setfuncs.experiments.paired.sign_test`), and its estimate
is the median with the distribution-free interval from order statistics
(:func:`~setfuncs.experiments.paired.median_interval`); its measure says so.

**Claims made of several comparisons.** "X is the best" is "X beats each of the others": every
part must hold, so its p-value in the claim's direction is the largest of its parts' (an
intersection-union test, valid at the level without a correction, conservative away from the
boundary). Its opposite, "some part fails", is tested by one joint sign-flip test of all the parts
(:func:`~setfuncs.experiments.paired.joint_sign_flip_test`): the same sign pattern flips a seed in
every part, and the statistic is the largest of the parts' Student statistics against the claim, so
the test is exact whatever the parts' dependence (under the null that every seed's vector of
differences is symmetric) and has about the power of the part that fails, where a Bonferroni bound
would multiply its p-value by the number of parts. A decided part so settles the claim: an all-claim
with a part decided against is *not reproduced* (or *contradicted*). A claim that holds if *any* part
does ("does not improve at every step") swaps the two rules: the joint test for the claim, the
largest of the opposite p-values against it. A claim tested by the sign test (below) has no symmetry
to flip jointly, and its joint direction is Bonferroni's, :math:`\min(1, k \min_i p_i)`.
:mod:`~setfuncs.experiments.findings.rates` measures the rule's error rates and power at ten seeds
(the committed artefact ``results/simulations/compound-rule.json``).

**Both directions, one error budget.** The paper states each claim's direction in advance, so
the claim's error budget :math:`\alpha` is split: a share :data:`~setfuncs.experiments.findings.claims.CLAIM_SHARE` for deciding the
claim, the rest for deciding its opposite. The claim's p-value is
:math:`p = \min(1, p_\text{claim}/w, p_\text{opposite}/(1 - w))` with :math:`w` = :data:`~setfuncs.experiments.findings.claims.CLAIM_SHARE`,
a valid p-value for "no difference" (a weighted Bonferroni over the two directions). With
:math:`w = 0.8` a single claim has the power of a one-sided test at 4 %: at 10 seeds, 87 % against
an effect of one standard deviation of normal differences (a two-sided test at 5 % has 79 %).

**One correction per family.** The paper's claims are one family (:data:`~setfuncs.experiments.findings.claims.FAMILIES`,
:func:`~setfuncs.experiments.findings.judge.family_of`): a chapter's claims of the paper's variant, a
claim both variants share counted once, have their p-values adjusted together with **Holm's**
step-down procedure (:func:`~setfuncs.experiments.paired.holm`), and the book's own claims (the
log-mean-exp variant's) are another family with its own correction, so that adding the book's
claims to a table never moves a verdict on the paper's. A claim is *decided* when its adjusted
p-value is at most :data:`~setfuncs.experiments.findings.claims.ALPHA`, in the direction that gave
its p-value. When no claim is true (a null copy of a results file, :mod:`~setfuncs.experiments.nulls`)
each family decides any of its claims with probability at most :data:`~setfuncs.experiments.findings.claims.ALPHA`;
``tests/test_findings_calibration.py`` proves it by simulation at the seed counts the chapters use.
What Holm's procedure does not promise in general is the rate of deciding a *direction* wrongly when
some claims are true and others are not (a small true effect of the other sign): each claim alone
keeps that rate at most :math:`w\alpha` in the claim's direction and :math:`(1 - w)\alpha` in the
opposite one, before the correction.

**Verdicts** (:data:`~setfuncs.experiments.findings.claims.VERDICTS`):

* *reproduced*: the claim's direction is decided;
* *contradicted*: the opposite direction is decided, and our protocol matches the paper's on
  every axis the claim depends on (:mod:`~setfuncs.experiments.differences`);
* *not reproduced*: the opposite is decided on a protocol that differs from the paper's on such an
  axis (the note says which), or nothing is decided although the seeds had 80 % power to detect
  the effect the paper reports (:attr:`~setfuncs.experiments.findings.claims.Claim.paper_effect`, in the measure's units);
* *not comparable*: a counted part of a claim (no test) that our protocol fixes differently from the
  paper's, so that no outcome of ours bears on it (attention's weights on another canvas);
* *undecided*: nothing is decided, and the seeds lacked that power. The row gives the smallest
  effect the seeds could detect with 80 % power (:func:`~setfuncs.experiments.paired.detectable_effect`
  of the claim's own test at its worst-case Holm level :math:`w\alpha/m`, :math:`m` the claims of its
  family, times the differences' standard deviation): what these seeds cannot tell. A claim whose every part must hold needs
  every part decided: each part is given power :math:`1 - 0.2/k` for its :math:`k` parts, so that
  all of them pass together with probability at least 80 % (a union bound over the parts'
  failures).

With :math:`n` seeds a one-sided sign-flip p-value is at least :math:`2^{-n}`
(:func:`~setfuncs.experiments.paired.smallest_p_value`): three seeds never decide anything, five
only a claim alone in its family; :func:`~setfuncs.experiments.findings.judge.seeds_needed` gives the
fewest seeds that can decide a claim in a family of a given size.
"""

from .claims import (ALPHA, CLAIM_SHARE, FAILED_RULES, FAMILIES, LEVEL, POWER, SCORES, VARIANT_LABELS, VARIANT_TITLES,
                     VERDICTS, Claim, Comparison, Finding, check_failed, matched, select)
from .judge import compare_pairs, decided, family_of, judge, opposite_floor, opposite_needs, seeds_needed
from .sensitivity import POOLED, sensitivity, sensitivity_html
from .text import bound_text, detectable_phrase, detectable_text, findings_html, findings_rows, format_findings, interval_text
from .twins import lme_against_lse

__all__ = ["VERDICTS", "ALPHA", "LEVEL", "POWER", "CLAIM_SHARE", "FAMILIES", "FAILED_RULES", "check_failed",
           "VARIANT_TITLES", "VARIANT_LABELS",
           "Comparison", "Claim", "Finding", "SCORES", "matched", "judge", "family_of", "select", "compare_pairs",
           "opposite_floor", "opposite_needs", "seeds_needed",
           "decided", "findings_rows", "format_findings", "findings_html", "bound_text", "interval_text",
           "detectable_text", "detectable_phrase", "lme_against_lse", "POOLED", "sensitivity", "sensitivity_html"]
