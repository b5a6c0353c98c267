r"""What an experiment chapter shows of its findings, written once for every experiment.

Each experiment's ``report`` module calls these with its own findings and number format:

- :func:`result_box`, the box under the chapter's title: the paper's claims and what our runs say of
  each, one sentence per verdict, every number read from the findings (:class:`ResultBox`);
- :func:`verdict_table`, the compact findings table: the verdict first as a badge (a symbol and a word,
  never colour alone), the claim, the estimate with its interval (:class:`VerdictTable`);
- :func:`plot_findings`, the forest view: each claim's estimate and interval on its own axis, oriented
  so that right of zero agrees with the paper, marked by verdict;
- :func:`family_power`, what a family's size and its seeds let any outcome decide.

Every object renders itself: ``_repr_html_`` in the book and in JupyterLab, ``_repr_markdown_`` where
HTML is not shown (the PDF), ``str`` as text.
"""

from __future__ import annotations

import html
import textwrap
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .findings import ALPHA, CLAIM_SHARE, FAMILIES, LEVEL, VERDICTS, Finding, detectable_phrase, interval_text, seeds_needed
from .paired import smallest_p_value

__all__ = ["ResultBox", "VerdictTable", "FamilyPower", "result_box", "verdict_table", "plot_findings",
           "family_power", "finding_phrase", "claim_phrase", "claims_of", "settled", "SETTLES",
           "VERDICT_MARKS"]

#: How each verdict is marked beside its colour — a symbol in text, a marker shape in figures.
VERDICT_MARKS: dict[str, dict[str, str]] = {
    "reproduced": {"symbol": "✓", "marker": "o", "colour": "#1a7f37"},
    "undecided": {"symbol": "?", "marker": "D", "colour": "#6e7781"},
    "not reproduced": {"symbol": "✗", "marker": "X", "colour": "#cf222e"},
    "contradicted": {"symbol": "✗✗", "marker": "s", "colour": "#82071e"},
    "not comparable": {"symbol": "≠", "marker": "P", "colour": "#8250df"},
}


def _number(value: float, spec: str) -> str:
    return f"{value:{spec}}"


def finding_phrase(f: Finding, spec: str, words: str | None = None) -> str:
    """One finding in words: ``words`` (default its claim's), then its estimate with the interval (format
    ``spec``), and for an undecided claim what its seeds could detect; a counted part (no test) gives its
    count and its note."""
    words = f.words if words is None else words
    if f.seeds == 0:
        return f"{words} (counted, not tested: {_number(f.estimate, '.3g')}; {f.note})"
    said = f"{words} (estimate {_number(f.estimate, spec)}, {LEVEL:.0%} interval {interval_text(f.low, f.high, spec, f.test)}"
    if f.verdict == "undecided":
        said += f"; {detectable_phrase(f, spec.lstrip('+'))}"
    return said + ")"


#: The order in which a part's verdict settles a claim whose every part must hold — a part decided
#: against settles it, then a part left undecided; a counted part that cannot be compared settles it
#: only when no part is tested.
SETTLES = ("contradicted", "not reproduced", "undecided", "reproduced", "not comparable")


def settled(parts: Sequence[Finding]) -> str:
    """The verdict of a claim whose every part must hold, from its parts' verdicts (:data:`SETTLES`)."""
    verdicts = {f.verdict for f in parts}
    return next(v for v in SETTLES if v in verdicts)


def _base(f: Finding) -> tuple[str, str]:
    """A part's claim words without the part, and the part's label (the words' closing parenthesis)."""
    at = f.words.rfind(" (")
    if "/" not in f.key or at < 0 or not f.words.endswith(")"):
        return f.words, ""
    return f.words[:at], f.words[at + 2:-1]


def claim_phrase(parts: Sequence[Finding], spec: str) -> str:
    """A claim in words with its numbers: one finding's :func:`finding_phrase`, or a claim of several
    parts as its words, then each part with its numbers, and with its own verdict where the parts' differ."""
    if len(parts) == 1:
        return finding_phrase(parts[0], spec)
    base = _base(parts[0])[0]
    mixed = len({f.verdict for f in parts}) > 1
    return base + ": " + ", ".join(
        finding_phrase(f, spec, (f"{_base(f)[1]} {f.verdict}" if mixed else _base(f)[1])) for f in parts)


@dataclass(frozen=True)
class ResultBox:
    """The result box of an experiment chapter: a title, a lead sentence, one sentence per verdict of the
    paper's claims, and one of the book's own claims."""

    title: str
    lead: str
    sentences: tuple[str, ...]

    def __str__(self) -> str:
        return "\n".join([self.title, self.lead, *self.sentences])

    def _repr_markdown_(self) -> str:
        return "\n\n".join([f"**{self.title}**", self.lead, *self.sentences])

    def _repr_html_(self) -> str:
        body = "".join(f"<p>{html.escape(s)}</p>" for s in self.sentences)
        return (f'<div class="result-box" id="what-we-found" role="note"><p class="result-box-title">{html.escape(self.title)}</p>'
                f"<p>{html.escape(self.lead)}</p>{body}</div>")


def claims_of(found: Sequence[Finding]) -> dict[str, list[Finding]]:
    """The findings grouped by claim (the key before its first ``/``), in the table's order."""
    claims: dict[str, list[Finding]] = {}
    for f in found:
        claims.setdefault(f.key.split("/")[0], []).append(f)
    return claims


def result_box(found: Sequence[Finding], lead: str, spec: str, title: str = "What we found") -> ResultBox:
    """The result box of a findings table ``found``: ``lead`` (what the paper claimed and what was run),
    then, for the paper's family, one sentence per verdict in :data:`~setfuncs.experiments.findings.claims.VERDICTS` order naming every claim
    it settles (:func:`settled`) with its numbers (:func:`claim_phrase`, format ``spec``; a part whose
    verdict differs from its claim's is named with its own), then the book's own claims' verdicts counted.
    A ValueError if the table has none of the paper's claims."""
    paper = claims_of([f for f in found if f.family == "paper"])
    if not paper:
        raise ValueError("the findings hold none of the paper's claims (family 'paper'): nothing to report")
    seeds = sorted({f.seeds for parts in paper.values() for f in parts if f.seeds})
    counted = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]} to {seeds[-1]}"
    sentences = []
    for verdict in VERDICTS:
        claims = [parts for parts in paper.values() if settled(parts) == verdict]
        if claims:
            sentences.append(f"{verdict.capitalize()}, {len(claims)} of the paper's {len(paper)} claims ({counted} "
                             f"seeds): " + "; ".join(claim_phrase(parts, spec) for parts in claims) + ".")
    own = claims_of([f for f in found if f.family != "paper"])
    if own:
        counts = Counter(settled(parts) for parts in own.values())
        sentences.append(f"The book's own {len(own)} claims, with log-mean-exp in place of LSE: "
                         + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v]) + ".")
    return ResultBox(title, lead, tuple(sentences))


@dataclass(frozen=True)
class VerdictTable:
    """The compact findings table: one row per finding, verdict first."""

    rows: tuple[dict[str, str], ...]
    caption: str = ""

    def __str__(self) -> str:
        lines = [self.caption] if self.caption else []
        return "\n".join(lines + [f"{r['symbol']} {r['verdict']:15s} {r['claim']}: {r['estimate']}" for r in self.rows])

    def _repr_markdown_(self) -> str:
        head = "| verdict | claim | estimate (95 % interval) |\n|---|---|---|\n"
        return (f"{self.caption}\n\n" if self.caption else "") + head + "".join(
            f"| {r['symbol']} {r['verdict']} | {r['claim']} | {r['estimate']} |\n" for r in self.rows)

    def _repr_html_(self) -> str:
        caption = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        body = "".join(
            f'<tr><td><span class="verdict verdict-{r["verdict"].replace(" ", "-")}">'
            f'<span aria-hidden="true">{r["symbol"]}</span> {r["verdict"]}</span></td>'
            f"<td>{html.escape(r['claim'])}</td><td>{html.escape(r['estimate'])}</td></tr>" for r in self.rows)
        return (f'<div class="verdict-table"><table>{caption}<thead><tr><th>verdict</th><th>claim</th>'
                f"<th>estimate ({LEVEL:.0%} interval)</th></tr></thead><tbody>{body}</tbody></table></div>")


def _estimate(f: Finding, spec: str) -> str:
    if f.seeds == 0:
        return f"counted: {_number(f.estimate, '.3g')}"
    return f"{_number(f.estimate, spec)} ({interval_text(f.low, f.high, spec, f.test)})"


def verdict_table(found: Sequence[Finding], spec: str, family: str | None = "paper",
                  caption: str = "") -> VerdictTable:
    """The compact table of ``found`` (only ``family``'s rows; None: every row, the book's own marked
    "own:"), the estimate in format ``spec``."""
    rows = [f for f in found if family is None or f.family == family]
    return VerdictTable(tuple({"verdict": f.verdict, "symbol": VERDICT_MARKS[f.verdict]["symbol"],
                               "claim": (f.words if f.family == "paper" or family else f"own: {f.words}"),
                               "estimate": _estimate(f, spec)} for f in rows), caption)


def _short(words: str, width: int = 60) -> str:
    return words if len(words) <= width else words[:width - 1].rstrip() + "…"


def _wrapped(words: str, width: int = 78, lines: int = 2) -> str:
    """``words`` on at most ``lines`` lines of ``width`` characters, the last cut with an ellipsis."""
    wrapped = textwrap.wrap(words, width)
    if len(wrapped) > lines:
        wrapped = wrapped[:lines - 1] + [_short(" ".join(wrapped[lines - 1:]), width)]
    return "\n".join(wrapped)


def plot_findings(found: Sequence[Finding], family: str = "paper", width: float = 6.2) -> Any:
    """The forest view of ``family``'s tested findings: one axis per claim (each measure has its own
    units), the estimate marked by verdict (:data:`VERDICT_MARKS`: shape and colour), its interval as a
    bar, a dashed line at 0 (right of it agrees with the paper) and the verdict written at the right.
    Counted parts (no test) are left out. Returns the matplotlib figure: ``width`` inches of axes, with
    the verdicts about 7 in in all (the book's 672 px column), its text 9-10 pt (12 px and more there)."""
    import matplotlib.pyplot as plt

    rows = [f for f in found if f.family == family and f.seeds > 0]
    if not rows:
        raise ValueError(f"no tested finding of the family {family!r} to plot")
    titles = [_wrapped(f.words) for f in rows]
    heights = [0.58 + 0.17 * title.count("\n") for title in titles]  # inches: the axis and its title's lines
    fig, axes = plt.subplots(len(rows), 1, figsize=(width, sum(heights) + 0.5), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    for ax, f, title in zip(axes[:, 0], rows, titles):
        mark = VERDICT_MARKS[f.verdict]
        low, high = (f.low, f.high) if np.isfinite(f.low) and np.isfinite(f.high) else (f.estimate, f.estimate)
        ax.axvline(0, color="0.5", linestyle="--", linewidth=0.8)
        ax.plot([low, high], [0, 0], color=mark["colour"], linewidth=2)
        ax.plot([f.estimate], [0], marker=mark["marker"], color=mark["colour"], markersize=8, linestyle="none")
        span = max(abs(low), abs(high), abs(f.estimate), 1e-12)
        ax.set_xlim(-1.15 * span, 1.15 * span)
        ax.set_yticks([])
        ax.set_title(title, fontsize="medium", loc="left", pad=2)
        ax.text(1.01, 0.5, f"{mark['symbol']} {f.verdict}", transform=ax.transAxes, va="center", fontsize="medium",
                color=mark["colour"])
        ax.tick_params(axis="x", labelsize="medium")
        for side in ("left", "right", "top"):
            ax.spines[side].set_visible(False)
    axes[-1, 0].set_xlabel("estimate with its 95 % interval (right of 0: as the paper claims)", fontsize="medium")
    return fig


@dataclass(frozen=True)
class FamilyPower:
    """What a family's size and its seeds allow: the smallest p-value a claim can have, the first Holm
    step's level, whether any outcome can decide a claim, and the fewest seeds that can."""

    family: str
    claims: int
    seeds: int
    smallest_p: float
    first_step: float
    decidable: bool
    seeds_needed: int

    def __str__(self) -> str:
        return (f"{FAMILIES[self.family]}: {self.claims} claims, {self.seeds} seeds; the smallest p-value a claim can "
                f"have is {self.smallest_p:.3g}, Holm's first step needs {self.first_step:.3g}: "
                + ("a claim can be decided" if self.decidable else "no outcome can decide a claim")
                + f"; a family of {self.claims} needs at least {self.seeds_needed} seeds")


def family_power(found: Sequence[Finding]) -> list[FamilyPower]:
    """One :class:`FamilyPower` per family of the tested findings (counted parts left out), at the fewest
    seeds of the family's claims and the test of its claims (the sign test if any claim uses it, the
    weaker of the two). The smallest p-value is :math:`2^{-n}` over the claim's share
    :data:`~setfuncs.experiments.findings.claims.CLAIM_SHARE`; Holm's first step compares it with
    :math:`\\alpha / m` for a family of :math:`m` claims."""
    rows = []
    for family in FAMILIES:
        tested = [f for f in found if f.family == family and f.seeds > 0]
        if not tested:
            continue
        seeds, claims = min(f.seeds for f in tested), len(tested)
        test = "sign" if any(f.test == "sign" for f in tested) else "sign-flip"
        smallest = smallest_p_value(seeds) / CLAIM_SHARE
        rows.append(FamilyPower(family, claims, seeds, smallest, ALPHA / claims, smallest <= ALPHA / claims,
                                seeds_needed(1, claims, test)))
    return rows
