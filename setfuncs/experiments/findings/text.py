"""A findings table in words: its rows, intervals and detectable effects as text, and as HTML."""

from __future__ import annotations

import math
import re
from dataclasses import asdict
from typing import Sequence

import numpy as np

from ..paired import TESTS
from .claims import FAMILIES, LEVEL, VARIANT_LABELS, Finding

__all__ = ["findings_rows", "format_findings", "findings_html", "bound_text", "interval_text", "finding_interval_text",
           "detectable_text", "detectable_phrase"]


def findings_rows(findings: Sequence[Finding]) -> list[dict]:
    """Plain dicts of the findings, for :func:`setfuncs.tables.html_table` or :func:`~setfuncs.tables.text_table`."""
    return [asdict(f) for f in findings]


def bound_text(value: float, spec: str) -> str:
    """``value`` in the format ``spec``, except that a fixed-point format (``f`` or ``%``) which would
    round a value that is not zero to zero shows its first significant digit instead: an interval's
    bound at :math:`-0.003` reads ``"-0.003"`` in ``".2f"``, not ``"-0.00"``, which could not tell
    whether the interval holds 0. A bound that is 0 is shown as 0 (never as ``-0``)."""
    if value == 0:
        return f"{0.0:{spec}}"
    text = f"{value:{spec}}"
    fixed = re.fullmatch(r"(.*)\.(\d+)([f%])", spec)
    if fixed is None or not math.isfinite(value) or any(c in "123456789" for c in text):
        return text
    magnitude = abs(value) * (100 if fixed.group(3) == "%" else 1)
    decimals = -math.floor(math.log10(magnitude))
    return f"{value:{fixed.group(1)}.{decimals}{fixed.group(3)}}"


def interval_text(low: float, high: float, spec: str = ".3g", test: str = "sign-flip") -> str:
    """``"low to high"`` in the format ``spec`` (each bound through :func:`bound_text`, so that a bound
    that is not 0 never reads as 0); ``"none from one seed"`` where the interval is
    undefined (NaN: Student's interval needs two paired differences, and a comparison of one seed
    has none); ``"unbounded: too few seeds"`` where a bound is infinite (the median's order-statistic
    interval from five seeds or fewer). An interval of no width (``low == high``) depends on the
    ``test`` it comes from: Student's (``"sign-flip"``) has it only where :math:`s_d = 0`, as
    accuracies on one test set can give with a few seeds, and a spread of 0 is no estimate of the
    spread: ``"none: the differences are all equal"``. The median's order-statistic interval
    (``"sign"``) has it wherever the two order statistics at its ends tie, which needs only the
    middle seeds to be equal, and it then keeps its level (the interval covers the median with
    at least its level for any distribution, ties included): ``"low to high (the differences tie)"``."""
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    if np.isnan(low) or np.isnan(high):
        return "none from one seed"
    if np.isinf(low) or np.isinf(high):
        return "unbounded: too few seeds"
    if low == high and test == "sign-flip":
        return "none: the differences are all equal"
    tie = " (the differences tie)" if low == high else ""
    return f"{bound_text(low, spec)} to {bound_text(high, spec)}{tie}"


def finding_interval_text(f: Finding) -> str:
    """A finding's interval in words (:func:`interval_text`), or ``"counted"`` for a row that is counted, not tested."""
    return "counted" if f.seeds == 0 else interval_text(f.low, f.high, test=f.test)


def detectable_text(f: Finding, spec: str = ".2g") -> str | None:
    """The smallest effect ``f``'s seeds detect with :data:`~setfuncs.experiments.findings.claims.POWER`, in the format ``spec``;
    ``"none: too few seeds"`` where they detect no effect of any size (infinite: even every seed on
    the claim's side gives a p-value above the level); ``"unknown: the differences do not vary"``
    where it is 0 (the effect is a multiple of the differences' standard deviation, here 0); None
    for a counted claim (no seeds, NaN)."""
    if np.isnan(f.detectable):
        return None
    if np.isinf(f.detectable):
        return "none: too few seeds"
    return "unknown: the differences do not vary" if f.detectable == 0 else f"{f.detectable:{spec}}"


def detectable_phrase(f: Finding, spec: str = ".2g") -> str:
    """What an undecided claim's seeds could have detected, as a clause: ``"these seeds could detect
    no effect of any size"`` (infinite: too few seeds), ``"these seeds could detect no effect smaller
    than <detectable>"`` in the format ``spec``, or, where it is 0 (differences that do not vary),
    ``"how large an effect these seeds could detect is unknown: the differences do not vary"``; a
    ValueError for a counted claim (NaN), which has no test and no detectable effect."""
    if np.isnan(f.detectable):
        raise ValueError(f"the claim {f.claim!r} is counted, not tested: it has no detectable effect to phrase")
    if np.isinf(f.detectable):
        return "these seeds could detect no effect of any size"
    if f.detectable == 0:
        return "how large an effect these seeds could detect is unknown: the differences do not vary"
    return f"these seeds could detect no effect smaller than {f.detectable:{spec}}"


def _p_text(p: float) -> str:
    """A p-value to three digits, or ``n/a`` for a counted claim (not tested: NaN)."""
    return "n/a" if np.isnan(p) else f"{p:.3g}"


def format_findings(findings: Sequence[Finding]) -> str:
    """The findings as text, one block each: the claim, the measure, the estimate with its interval,
    the p-values and the verdict."""
    blocks = []
    for i, f in enumerate(findings, 1):
        blocks.append(f"{i}. [{f.variant}] {f.claim}\n   {f.measure}: {f.estimate:.4g} ({LEVEL:.0%} interval "
                      f"{finding_interval_text(f)}, {f.seeds} seeds), p = {_p_text(f.p_value)}, Holm {_p_text(f.adjusted)}, "
                      f"detectable {detectable_text(f, '.3g') or 'n/a (counted)'} -> {f.verdict}"
                      + (f"\n   ({f.note})" if f.note else ""))
    return "\n".join(blocks)


def findings_html(findings: Sequence[Finding], caption: str | None = None) -> str:
    """The findings as an HTML table: the paper's claim, the variant, what we measured (with the
    finding's note), the seeds, the estimate with its interval, the p-value and its Holm-adjusted
    value within its family, the smallest effect the seeds detect with 80 % power, and the verdict. A note
    that every finding shares is said once, after the caption, and so is which rows make each family where
    the table holds both (:data:`~setfuncs.experiments.findings.claims.FAMILIES`)."""
    from setfuncs.tables import html_table

    notes = {f.note for f in findings}
    shared = next(iter(notes)) if len(notes) == 1 else ""
    if shared:
        caption = f"{caption}; {shared}" if caption else shared
    if {f.family for f in findings if f.seeds} == set(FAMILIES):
        families = ("Holm p is corrected within each family: the paper's claims (with LSE (paper) or both) and, "
                    "apart, the book's own (with log-mean-exp)")
        caption = f"{caption}; {families}" if caption else families
    claims = list(dict.fromkeys(f.claim for f in findings))
    ordered = sorted(findings, key=lambda f: claims.index(f.claim))      # stable: a claim's variants side by side
    rows = [{**{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in asdict(f).items()},
             "variant": VARIANT_LABELS[f.variant],
             "measure": f"{f.measure} ({f.note})" if f.note and not shared else f.measure,
             "interval": finding_interval_text(f), "detectable": detectable_text(f)} for f in ordered]
    return html_table(rows, [("claim", "the paper's claim", "{}"), ("variant", "with", "{}"),
                             ("measure", "our measure", "{}"), ("seeds", "seeds", "{}"),
                             ("estimate", "estimate", "{:.3g}"), ("interval", f"{LEVEL:.0%} interval", "{}"),
                             ("p_value", "p", "{:.2g}"), ("adjusted", "Holm p", "{:.2g}"),
                             ("detectable", "detectable (80 %)", "{}"), ("verdict", "verdict", "{}")],
                      caption=caption, span="claim")
