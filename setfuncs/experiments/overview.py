r"""The book's answer on its front page: the paper's conclusions against the four experiments, each cell
the verdicts of the paper's claims that bear on it, linked to its chapter.

:func:`overview` reads the committed results of every experiment, judges them
(:meth:`~setfuncs.experiments.experiment.Experiment.findings`), and gathers, for each conclusion of
:data:`~setfuncs.experiments.conclusions.LINKS` and each experiment, the linked claims of the paper's family,
each claim settled by its parts (:func:`~setfuncs.experiments.report.settled`). The :class:`Overview` renders
as an HTML grid of verdict badges, as Markdown and as text, with a sentence counting every verdict.
"""

from __future__ import annotations

import html
import os
from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

from .conclusions import CHAPTERS, LINKS
from .findings import VERDICTS, Finding, select
from .report import VERDICT_MARKS, claims_of, settled

__all__ = ["Overview", "overview", "overview_of", "committed_results", "committed_findings", "RESULTS", "NAMES"]

#: The committed results file each experiment's chapter reads (for the attention chapter, the sweep on MNIST's canvases).
RESULTS = {"circle": "circle-medium.json", "mixture": "mixture-medium.json", "pointcloud": "pointcloud-medium.json",
           "attention": "attention-mnist-medium.json"}
#: The experiments' names in the grid's header.
NAMES = {"circle": "Circle (ch. 8)", "mixture": "Mixture (ch. 9)", "pointcloud": "Point clouds (ch. 10)",
         "attention": "Attention (ch. 11)"}


@dataclass(frozen=True)
class Overview:
    """``cells[conclusion][experiment]``: the settled verdicts of the paper's claims there, in order
    (empty where no claim of that experiment bears on the conclusion); ``totals``: every verdict of the
    paper's claims over the four chapters, counted once per claim."""

    cells: Mapping[str, Mapping[str, tuple[str, ...]]]
    totals: Mapping[str, int]

    def sentence(self) -> str:
        """The verdicts of all the paper's claims the four chapters test, counted."""
        claims = sum(self.totals.values())
        return (f"Of the {claims} claims of the paper that the four experiment chapters test, "
                + ", ".join(f"{self.totals[v]} {v}" for v in VERDICTS if self.totals.get(v)) + ".")

    def __str__(self) -> str:
        lines = [self.sentence()]
        for conclusion, row in self.cells.items():
            said = "; ".join(f"{NAMES[e]}: {', '.join(v)}" for e, v in row.items() if v) or "no experiment tests it"
            lines.append(f"{conclusion}: {said}")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        head = "| the paper's conclusion | " + " | ".join(NAMES.values()) + " |\n|" + "---|" * (len(NAMES) + 1) + "\n"
        body = "".join(f"| {c} | " + " | ".join(", ".join(row.get(e, ())) or "–" for e in NAMES) + " |\n"
                       for c, row in self.cells.items())
        return f"{self.sentence()}\n\n{head}{body}"

    def _repr_html_(self) -> str:
        def badge(verdict: str) -> str:
            mark = VERDICT_MARKS[verdict]
            return (f'<span class="verdict verdict-{verdict.replace(" ", "-")}"><span aria-hidden="true">'
                    f"{mark['symbol']}</span> {verdict}</span>")

        def cell(experiment: str, verdicts: tuple[str, ...]) -> str:
            label = f' data-label="{html.escape(NAMES[experiment])}"'
            if not verdicts:
                return f'<td class="overview-none"{label}>–</td>'
            return (f'<td{label}><a href="{CHAPTERS[experiment]}.html#what-we-found">'
                    + " ".join(badge(v) for v in verdicts) + "</a></td>")

        header = "".join(f'<th><a href="{CHAPTERS[e]}.html">{html.escape(n)}</a></th>' for e, n in NAMES.items())
        rows = "".join(f"<tr><th>{html.escape(c)}</th>" + "".join(cell(e, row.get(e, ())) for e in NAMES) + "</tr>"
                       for c, row in self.cells.items())
        return (f"<p>{html.escape(self.sentence())}</p>"
                f'<div class="verdict-table overview"><table><caption>The paper\'s conclusions and the verdicts of '
                f"the claims each experiment tests for them (the paper's claims, each settled by its parts)</caption>"
                f"<thead><tr><th>the paper's conclusion</th>{header}</tr></thead><tbody>{rows}</tbody></table></div>")


def overview_of(found: Mapping[str, Sequence[Finding]]) -> Overview:
    """The :class:`Overview` of the findings tables ``found`` (one per experiment of :data:`NAMES`)."""
    cells: dict[str, dict[str, tuple[str, ...]]] = {}
    for conclusion, links in LINKS.items():
        row: dict[str, list[str]] = {}
        for experiment, key in links:
            parts = [f for f in select(found[experiment], key) if f.family == "paper"]
            for claim in claims_of(parts).values():
                row.setdefault(experiment, []).append(settled(claim))
        cells[conclusion] = {e: tuple(v) for e, v in row.items()}
    totals = Counter(settled(parts) for table in found.values()
                     for parts in claims_of([f for f in table if f.family == "paper"]).values())
    return Overview(cells, dict(totals))


def _modules() -> dict:
    from . import attention, circle, mixture, pointcloud

    return {"circle": circle, "mixture": mixture, "pointcloud": pointcloud, "attention": attention}


def committed_results() -> dict[str, dict]:
    """Every experiment's committed results (:data:`RESULTS`), loaded and checked by its experiment."""
    from .results import results_file

    return {name: module.EXPERIMENT.load_results(results_file(RESULTS[name])) for name, module in _modules().items()}


def committed_findings(runs: Mapping[str, dict] | None = None, paper: str | os.PathLike | None = None
                       ) -> dict[str, list[Finding]]:
    """Every experiment's findings on ``runs`` (default :func:`committed_results`) against the paper's
    numbers (``paper``; default ``results/paper-results.json``)."""
    from .results import results_file

    runs = committed_results() if runs is None else runs
    paper = results_file("paper-results.json") if paper is None else paper
    return {name: list(module.EXPERIMENT.findings(runs[name], paper)) for name, module in _modules().items()}


def overview(paper: str | os.PathLike | None = None) -> Overview:
    """The :class:`Overview` of the committed results (:data:`RESULTS`) against the paper's numbers
    (``paper``; default ``results/paper-results.json``)."""
    return overview_of(committed_findings(paper=paper))
