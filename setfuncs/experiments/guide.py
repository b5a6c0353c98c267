r"""The evidence of the guide "Which aggregation should I use?" (``book/teaching/choosing.ipynb``), as typed rows
that render through :mod:`~setfuncs.experiments.views`: :class:`Evidence` (paired by seed, or a chapter's finding),
:class:`Cost` (naming its source file and hardware) and one :class:`Recommendation` per kind of task, each
:class:`Part` of it bound to the rows that must have decided it, or to the theory it rests on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

import setfuncs as sf
from setfuncs.model import parameter_count
from setfuncs.repository import RESULTS_DIR, results_file

from .attention.findings import lme_against_lse as attention_twins
from .attention.report import results_table, twin_gains
from .circle.budget import BUDGETS as CIRCLE_BUDGETS
from .circle.data import POPULATION_SIZE
from .circle.findings import lme_against_lse as circle_twins, lme_against_lse_by_size
from .findings import LEVEL, VARIANT_LABELS, Finding, interval_text, select
from .mixture.budget import BUDGETS as MIXTURE_BUDGETS, METRIC_SIZE
from .mixture.findings import lme_against_lse as mixture_twins
from .mixture.report import collapse_lines
from .overview import NAMES, RESULTS
from .pointcloud.budget import BUDGETS as CLOUD_BUDGETS
from .pointcloud.differences import MODELNET40_CLASSES
from .pointcloud.findings import lme_against_lse as cloud_twins
from .pointcloud.model import PointCloudClassifier
from .schema import finished_runs
from .views import Lines, Table, table

__all__ = ["UNDECIDED", "NO_DECISION", "LME", "FORMATS", "MEASURES", "SIDES", "Evidence", "from_pair", "finding_evidence",
           "lme_evidence", "lme_counts", "lme_table", "size_evidence", "evidence_table", "Cost", "read_step_times",
           "STEP_FILES", "step_times", "full_weights", "RUN_SPECS", "run_costs", "cost_table", "Part", "Recommendation",
           "training_sizes", "recommendations", "recommendation_table"]

#: What a row decided where its test decided neither side.
UNDECIDED = "undecided"
#: What a part of a recommendation says where no experiment decides it.
NO_DECISION = "no experiment decided this"
#: The two sides of every log-mean-exp-against-LSE comparison, in the order their estimates favour.
LME = ("log-mean-exp", "LSE")
#: Each experiment's format of estimates: log ratios of MSEs, shares of pairs won, accuracies, nats.
FORMATS = {"circle": "+.2f", "mixture": "+.2f", "pointcloud": "+.1%", "attention": "+.2f"}
#: The per-seed difference of each experiment's log-mean-exp-against-LSE comparisons.
MEASURES = {"circle": "ln MSE with LSE - ln MSE with log-mean-exp", "pointcloud": "accuracy with log-mean-exp - with LSE",
            "mixture": "+1 a seed whose log-mean-exp run scores better, -1 worse",
            "attention": "ELBO with log-mean-exp - with LSE"}


@dataclass(frozen=True)
class Evidence:
    """A comparison paired by seed (``verdict`` "") or a chapter's finding: a positive ``estimate`` favours
    ``sides[0]``; ``better``: the side Holm's ``adjusted`` p decided, or :data:`UNDECIDED`; ``at``: the size."""

    experiment: str
    compared: str
    measure: str
    sides: tuple[str, str]
    seeds: int
    estimate: float
    low: float
    high: float
    adjusted: float
    better: str
    fmt: str
    source: str
    verdict: str = ""
    test: str = "sign-flip"
    at: int | None = None
    pooled: bool = False

    decided = property(lambda self: self.better != UNDECIDED)
    favours = property(lambda self: self.sides[0] if self.estimate > 0 else self.sides[1] if self.estimate < 0 else "")

    def phrase(self) -> str:
        said = f"decided for {self.better}" if self.decided else UNDECIDED
        said = self.verdict if self.verdict in ("reproduced", UNDECIDED) else ", ".join(filter(None, (self.verdict, said)))
        return (f"{NAMES[self.experiment]}, {self.compared}: {said}, {self.estimate:{self.fmt}} "
                f"({interval_text(self.low, self.high, self.fmt, self.test)}), {self.seeds} seeds")


def from_pair(experiment: str, row: Mapping, compared: str, function: str = "findings.lme_against_lse",
              at: int | None = None, pooled: bool = False, sides: tuple[str, str] = LME, measure: str = "") -> Evidence:
    """An :class:`Evidence` of a :func:`~setfuncs.experiments.findings.judge.compare_pairs` row of ``function``."""
    return Evidence(experiment, compared, measure or MEASURES[experiment], sides, row["seeds"], row["estimate"], row["low"],
                    row["high"], row["adjusted"], row["better"], FORMATS[experiment], f"setfuncs.experiments.{experiment}."
                    f"{function} on results/{RESULTS[experiment]}", "", row.get("test", "sign-flip"), at, pooled)


#: The two sides of the findings the guide cites, the claim's first (``{lse}``: LSE or log-mean-exp, by variant).
SIDES = {"recurrent-equivariant-improve": ("recurrent equivariant layers", "plain equivariant layers"),
         "max-behind/equivariant": ("mean and {lse} equivariant layers", "max equivariant layers"),
         "max-equivariant-crucial": ("max-type equivariant layers", "other equivariant layers"),
         "max-max-best": ("max/max", "another column"), "learnable-final/50": ("every learnable final one", "max/max"),
         "max-r-lse-generalises": ("max/r-{lse}", "max/max"), "on-par/elbo": ("on par", "behind the image localiser"),
         "max-max-drops-more": ("max/max loses more", "max/r-{lse} loses more"),
         "boxes-tighten": ("tighter boxes", "looser boxes"), "monotonic": ("a gain at every step", "no gain at some step")}


def _words(found: Sequence[Finding], f: Finding) -> str:
    """A finding's words (a part's with its claim's) up to a ``;``, without a long parenthesis, then its part."""
    first = next(g for g in found if g.key.split("/")[0] == f.key.split("/")[0] and g.variant == f.variant)
    head, _, tail = (f"{first.words.removesuffix(f' at {first.part}')} (at {f.part})" if f.words.startswith("...")
                     else f.words).partition(";")
    return re.sub(r" \([^()]{40,}\)", "", head) + (tail[tail.rfind(" ("):] if tail.endswith(")") else "")


def finding_evidence(found: Mapping[str, Sequence[Finding]], experiment: str, key: str, variant: str = "paper"):
    """The finding ``key`` (of ``variant`` or ``"both"``) of ``experiment``'s table in ``found``: decided for the
    claim's side (:data:`SIDES`) where reproduced, for the other where the opposite was decided."""
    f = next((g for g in select(found[experiment], key) if g.key == key and g.variant in (variant, "both")), None)
    sides = SIDES.get(key, SIDES.get(key.split("/")[0]))
    if f is None or sides is None:
        raise ValueError(f"{experiment}: no finding {key!r} of the variant {variant!r}, or no sides for it in SIDES")
    sides = tuple(s.format(lse="log-mean-exp" if f.variant == "lme" else "LSE") for s in sides)
    better = sides[0] if f.verdict == "reproduced" else sides[1] if f.decided else UNDECIDED
    return Evidence(experiment, f"{_words(found[experiment], f)} [{VARIANT_LABELS[f.variant]}]"
                    + (f" (shown: {f.shown})" if f.shown else ""), f.measure, sides, f.seeds, f.estimate, f.low, f.high,
                    f.adjusted, better, FORMATS[experiment],
                    f"the findings of setfuncs.experiments.{experiment} on results/{RESULTS[experiment]}", f.verdict, f.test)


def lme_evidence(runs: Mapping[str, dict]) -> list[Evidence]:
    """Log-mean-exp against LSE in every experiment, as its own ``lme_against_lse`` computes it (its rows and Holm
    correction): circle and mixture configurations with a pooled row, point clouds and attention at every size."""
    train = training_sizes(runs)
    rows = [from_pair(e, r, "all pairs pooled" if r["spec"] == "all" else f"{r['twin']} vs {r['spec']}",
                      at=train[e], pooled=r["spec"] == "all")
            for e, twins in (("circle", circle_twins), ("mixture", mixture_twins)) for r in twins(runs[e])]
    return rows + [from_pair(e, r, f"{r['twin']} vs {r['spec']} at n = {r['n']:,}", at=r["n"])
                   for e, twins in (("pointcloud", cloud_twins), ("attention", attention_twins)) for r in twins(runs[e])]


def lme_counts(runs: Mapping[str, dict]) -> Lines:
    """Counted, not tested: the mixture's collapsed runs with LSE and log-mean-exp in the equivariant layers
    (chapter 9's ``collapse_lines``) and the attention localisers' failed runs (chapter 11's ``results_table``)."""
    said = [*(("mixture", line) for line in collapse_lines(runs["mixture"]).lines),
            ("attention", results_table(runs["attention"]).notes[0])]
    return Lines(tuple(f"{NAMES[e]}, counted, not tested: {line}" for e, line in said))


def lme_table(evidence: Sequence[Evidence], counts: Sequence[str] = ()) -> Table:
    """Per experiment: comparisons of log-mean-exp with LSE won by each side after Holm's correction, undecided,
    the decided estimates' range and the pooled row; notes: the measures and ``counts``."""
    rows, notes = [], []
    for experiment in dict.fromkeys(r.experiment for r in evidence):
        mine = [r for r in evidence if r.experiment == experiment and not r.pooled]
        pooled = next((r for r in evidence if r.experiment == experiment and r.pooled), None)
        decided, fmt = [r.estimate for r in mine if r.decided], FORMATS[experiment]
        rows.append({"experiment": NAMES[experiment], "sizes": ", ".join(f"{n:,}" for n in sorted({r.at for r in mine})),
                     "comparisons": len(mine), "lme": sum(r.better == LME[0] for r in mine),
                     "lse": sum(r.better == LME[1] for r in mine), "undecided": sum(not r.decided for r in mine),
                     "range": f"{min(decided):{fmt}} to {max(decided):{fmt}}" if decided else None,
                     "pooled": pooled and f"{pooled.estimate:{fmt}} ({interval_text(pooled.low, pooled.high, fmt)})"})
        notes.append(f"{NAMES[experiment]}: {mine[0].measure} ({mine[0].source})")
    return table(rows, [("experiment", "experiment", "{}"), ("sizes", "population sizes", "{}"),
                        ("comparisons", "comparisons", "{}"), ("lme", "log-mean-exp better", "{}"),
                        ("lse", "LSE better", "{}"), ("undecided", "undecided", "{}"), ("range", "decided estimates", "{}"),
                        ("pooled", f"all pairs pooled ({LEVEL:.0%} interval)", "{}")],
                 "Log-mean-exp against LSE, each configuration against its twin, paired by seed (two-sided tests, "
                 "Holm-corrected within each experiment)", [*notes, *counts])


def size_evidence(runs: Mapping[str, dict], found: Mapping[str, Sequence[Finding]]) -> list[Evidence]:
    """At other sizes than trained on: the circle's log-mean-exp against LSE (pooled) at its smallest, training and
    largest sizes; the point clouds' twins and three claims at Table 2's smallest; chapter 11's claims and gains."""
    by_size, train = lme_against_lse_by_size(runs["circle"]), training_sizes(runs)
    rows = [from_pair("circle", r, f"log-mean-exp vs LSE, all pairs pooled, at N = {r['n']:,}",
                      "findings.lme_against_lse_by_size", r["n"], True)
            for r in by_size if r["n"] in (by_size[0]["n"], train["circle"], by_size[-1]["n"])]
    twins = cloud_twins(runs["pointcloud"])
    rows += [from_pair("pointcloud", r, f"{r['twin']} vs {r['spec']} at n = {r['n']:,}", at=r["n"])
             for r in twins if r["n"] == min(t["n"] for t in twins)]
    rows += [finding_evidence(found, "pointcloud", key)
             for key in ("learnable-final/50", "max-r-lse-generalises", "max-max-drops-more")]
    rows += [finding_evidence(found, "attention", key, variant) for key, variant in (
        ("monotonic/q-sum", "paper"), ("monotonic/r-sum", "paper"), ("monotonic/r-lse", "paper"),
        ("monotonic/r-lse", "lme"), ("boxes-tighten", "paper"))]
    n = sorted(int(n) for n in runs["attention"]["budget_parameters"]["eval_sizes"])
    return rows + [from_pair("attention", r, f"ELBO gain from n = {n[-2]:,} to {n[-1]:,}, {r['label']}",
                             "report.twin_gains", n[-1], sides=LME[::-1],
                             measure="gain with LSE - gain with log-mean-exp (nats)")
                   for r in twin_gains(runs["attention"]).rows]


def evidence_table(rows: Sequence[Evidence], caption: str) -> Table:
    """The rows: what is compared, seeds, estimate and interval, Holm's p, a finding's verdict, the side decided."""
    return table([{"experiment": NAMES[r.experiment], "compared": r.compared, "seeds": r.seeds,
                   "estimate": f"{r.estimate:{r.fmt}} ({interval_text(r.low, r.high, r.fmt, r.test)})",
                   "adjusted": r.adjusted, "verdict": r.verdict or None, "better": r.better} for r in rows],
                 [("experiment", "experiment", "{}"), ("compared", "compared", "{}"), ("seeds", "seeds", "{}"), ("estimate",
                  f"estimate ({LEVEL:.0%} interval)", "{}"), ("adjusted", "Holm p", "{:.2g}"), ("verdict", "verdict", "{}"),
                  ("better", "decided for", "{}")], caption)


@dataclass(frozen=True)
class Cost:
    """What training ``configuration`` of ``task`` at ``budget`` cost: ``value`` in ``measure``, on ``hardware``, per ``source``."""

    task: str
    budget: str
    configuration: str
    weights: int | None
    measure: str
    value: float
    hardware: str
    source: str
    runs: int = 0


_SECTION = re.compile(r"^(?P<task>\w[\w ]*?) (?P<budget>[A-Z]+): model-steps per second")
_MODE = re.compile(r"(?P<mode>[a-z]+)\s+[\d.]+/s \(\s*(?P<ms>[\d.]+) ms\)")
#: The committed printouts of ``benchmarks/training.py`` (under ``results/``), on a CPU and on a GPU.
STEP_FILES = ("benchmarks/training-cpu.txt", "benchmarks/training-h200.txt")


def read_step_times(path: str | Path) -> list[Cost]:
    """Every step time of a printout of ``benchmarks/training.py``: the hardware from its ``device:`` line (up to a ``;``),
    and under each ``<task> <BUDGET>: model-steps per second`` heading the ``<mode> <rate>/s (<ms> ms)`` fields."""
    path = Path(path)
    device = re.search(r"^device: ([^;\n]+)", text := path.read_text(encoding="utf-8"), re.M)
    if device is None:
        raise ValueError(f"{path}: no 'device:' line names the hardware the steps were timed on")
    source = path.relative_to(RESULTS_DIR.parent).as_posix() if path.is_relative_to(RESULTS_DIR.parent) else str(path)
    times, section = [], None
    for line in text.splitlines():
        if head := _SECTION.match(line):
            section = head
        elif line[:1] not in (" ", "\t"):
            section = section if not line.strip() else None
        elif section is not None:
            spec, _, rest = line.strip().partition(" ")
            task, budget = section["task"], section["budget"].lower()
            times += [Cost(task, budget, spec, full_weights(task, budget, spec), f"{m['mode']} step (ms)",
                           float(m["ms"]), device[1].strip(), source) for m in _MODE.finditer(rest)]
    if not times:
        raise ValueError(f"{path}: no '<mode> <rate>/s (<ms> ms)' under a '<task> <BUDGET>: model-steps per second'")
    return times


def step_times(modes: Sequence[str] = ("eager", "ensemble")) -> list[Cost]:
    """The step times of :data:`STEP_FILES` in ``modes``."""
    return [t for name in STEP_FILES for t in read_step_times(results_file(name)) if t.measure.split()[0] in modes]


def full_weights(task: str, budget: str, spec: str) -> int | None:
    """The weights of ``spec``'s model at the ``budget`` of the circle, the mixture or the point clouds (for ModelNet40),
    as ``benchmarks/training.py`` builds it; None for another task or budget."""
    if (b := {"circle": CIRCLE_BUDGETS, "mixture": MIXTURE_BUDGETS, "point clouds": CLOUD_BUDGETS}.get(task, {}).get(budget)):
        shape = {"hidden": b.hidden, "equivariant_layers": b.equivariant_layers, "steps": b.recurrent_steps}
        return parameter_count(PointCloudClassifier(MODELNET40_CLASSES, spec, dropout=b.dropout, **shape)
                               if task == "point clouds" else sf.DeepSet(2, 3 if task == "circle" else 2, spec, **shape))
    return None


#: The configurations whose training time :func:`run_costs` reads, the plain one first.
RUN_SPECS = {"circle": ("max/max", "r-max/r-max", "r-lse/r-lse"), "mixture": ("max/max", "r-max/r-max", "r-lse/r-lse"),
             "pointcloud": ("max/max", "max/q-sum", "r-lse/r-lse"), "attention": ("mean", "q-sum", "r-sum", "r-lse")}


def run_costs(runs: Mapping[str, dict]) -> list[Cost]:
    """The training time per run of :data:`RUN_SPECS` in the sweeps ``runs``, median over the finished runs; the
    weights counted at the sweep's budget (circle, mixture) or as recorded (attention: the localiser's)."""
    costs = []
    for task, specs in RUN_SPECS.items():
        results, hw = runs[task], runs[task]["hardware"]
        for spec in specs:
            if not (done := [r for r in finished_runs(results) if r["spec"] == spec]):
                raise ValueError(f"results/{RESULTS[task]} has no finished run of {spec}")
            weights = (done[0]["parameters"] if task == "pointcloud" else done[0]["localiser_parameters"]
                       if task == "attention" else full_weights(task, results["budget"], spec))
            costs.append(Cost(NAMES[task], results["budget"], spec, weights, "training s per run (median)",
                              float(np.median([r["train_seconds"] for r in done])), f"{hw['cpu_model']}, "
                              f"{hw['torch_threads_per_run']} torch thread per run", f"results/{RESULTS[task]}", len(done)))
    return costs


def cost_table(costs: Sequence[Cost], caption: str) -> Table:
    """A row per task and configuration with its weights, a column per hardware and measure, and per hardware its first
    measure as a multiple of the task's first (plain) configuration's; notes: the sources by hardware."""
    columns = list(dict.fromkeys((c.hardware, c.measure) for c in costs))
    firsts, plain, rows = {h: next(m for g, m in columns if g == h) for h, _ in columns}, {}, {}
    for c in costs:
        row = rows.setdefault((c.task, c.budget, c.configuration), {"task": f"{c.task} ({c.budget})", "spec": c.configuration,
                                                                     "weights": c.weights})
        row[f"{c.hardware}|{c.measure}"] = c.value
        if c.measure == firsts[c.hardware]:
            row[f"{c.hardware}|x"] = c.value / plain.setdefault((c.task, c.budget, c.hardware), c.value)
    short = {h: h.split(",")[0] for h in firsts}
    heads = [head for h in firsts for head in [*((f"{h}|{m}", f"{short[h]}: {m}", "{:,.4g}") for g, m in columns if g == h),
                                               (f"{h}|x", f"{short[h]}: × the plain one", "{:.1f}")]]
    notes = [f"{short[h]}: {', '.join(dict.fromkeys(c.source for c in costs if c.hardware == h))} ({h})" for h in firsts]
    return table(list(rows.values()), [("task", "task", "{}"), ("spec", "configuration", "{}"), ("weights", "weights", "{:,}"),
                                       *heads], caption, notes)


@dataclass(frozen=True)
class Part:
    """A part of a default: its ``claim``, and the rows that must each have decided the side beside them (:data:`UNDECIDED`:
    the claim says nothing decided it), or none: it rests on ``theory``; ``topic``: named where they decided otherwise."""

    claim: str
    support: tuple[tuple[Evidence, str], ...] = ()
    topic: str = ""
    theory: str = ""

    holds = property(lambda self: bool(self.support) and all(row.better == side for row, side in self.support))

    def text(self) -> str:
        got = sorted({row.better for row, _ in self.support})
        return (f"{self.claim} ({NO_DECISION}; the default rests on theory: {self.theory})" if not self.support else
                self.claim if self.holds else
                f"{self.topic}: " + (NO_DECISION if got == [UNDECIDED] else f"decided otherwise ({', '.join(got)})"))


@dataclass(frozen=True)
class Recommendation:
    """One default for a kind of task (``task``), in parts."""

    task: str
    parts: tuple[Part, ...]

    default = property(lambda self: "; ".join(part.text() for part in self.parts))
    evidence = property(lambda self: tuple({id(r): r for part in self.parts for r, _ in part.support}.values()))

    evidence_text = property(lambda self: "; ".join([r.phrase() for r in self.evidence]
                                                    + [f"theory: {p.theory}" for p in self.parts if not p.support]))


def training_sizes(runs: Mapping[str, dict]) -> dict[str, int]:
    """Each experiment's training population size (the mixture, which trains on several: its metric's)."""
    return {"circle": POPULATION_SIZE, "mixture": METRIC_SIZE, "pointcloud": runs["pointcloud"]["budget_parameters"]
            ["points"], "attention": runs["attention"]["budget_parameters"]["particles"]}


def recommendations(lme: Sequence[Evidence], sizes: Sequence[Evidence], found: Mapping[str, Sequence[Finding]],
                    train: Mapping[str, int]) -> list[Recommendation]:
    """One default per kind of task, its parts bound to rows of :func:`lme_evidence`, :func:`size_evidence` and the findings;
    log-mean-exp against LSE by the pooled row or the weakest at the size trained on (``train``), elsewhere the weakest."""
    def twin(e: str) -> tuple[tuple[Evidence, str]]:
        mine = [r for r in lme if r.experiment == e]
        return (((next((r for r in mine if r.pooled), None)
                  or min((r for r in mine if r.at == train[e]), key=lambda r: r.estimate)), LME[0]),)

    def elsewhere(e: str) -> tuple[Evidence, str]:
        return min((r for r in sizes if r.experiment == e and r.sides == LME and r.at != train[e]),
                   key=lambda r: r.estimate), LME[0]

    def claim(e: str, key: str, side: str, variant: str = "paper") -> tuple[Evidence, str]:
        return finding_evidence(found, e, key, variant), side

    instead, which = "log-mean-exp where LSE would go", "log-mean-exp or LSE"
    return [
        Recommendation("regression of a quantity fixed by extreme particles (the circle)", (
            Part("recurrent (learnable) equivariant layers", (claim(
                "circle", "recurrent-equivariant-improve", "recurrent equivariant layers"),), "equivariant layers"),
            Part(instead, twin("circle"), which))),
        Recommendation("estimating a distribution from a sample (the mixture)", (
            Part("mean or log-mean-exp in the equivariant layers, not max", (claim(
                "mixture", "max-behind/equivariant", "mean and log-mean-exp equivariant layers", "lme"),),
                "mean-type or max equivariant layers"),
            Part("log-mean-exp, never LSE", twin("mixture"), which))),
        Recommendation("classifying point clouds", (
            Part("max-type equivariant layers (max, r-max)", (claim(
                "pointcloud", "max-equivariant-crucial", "max-type equivariant layers"),), "equivariant layers"),
            Part(instead, twin("pointcloud"), which),
            Part("no final aggregation is best at every size: max/max is behind another column at the training size "
                 "and ahead of max/r-LSE on the smallest clouds", (
                     claim("pointcloud", "max-max-best", "another column"),
                     claim("pointcloud", "max-r-lse-generalises", "max/max")), "the final aggregation"))),
        Recommendation("localising objects on a canvas (attention)", (
            Part("q-sum, whose ELBO rose at every step of the population size (decided for no other learnable "
                 "localiser)", (claim("attention", "monotonic/q-sum", SIDES["monotonic"][0]),
                                claim("attention", "monotonic/r-sum", UNDECIDED),
                                claim("attention", "monotonic/r-lse", UNDECIDED)), "which localiser"),
            Part(instead, twin("attention"), which),
            Part(f"whether a set localiser is on par with the image localiser: {NO_DECISION}",
                 (claim("attention", "on-par/elbo", UNDECIDED),), "on par with the image localiser"))),
        Recommendation("test populations larger or smaller than in training", (
            Part("an aggregate that keeps its scale: log-mean-exp, not LSE", (elsewhere("circle"),
                                                                             elsewhere("pointcloud")), which),
            Part("the mean rather than the sum", (), theory="the sum grows like N, the mean settles (chapter 4)"))),
        Recommendation("counting, or any answer that depends on N", (
            Part("the sum, or LSE with a positive embedding; not the mean, log-mean-exp or max", (),
                 theory="sum decompositions and their disguises (chapters 2 and 3); what the mean and max cannot "
                        "count (chapters 3 and 7)"),))]


def recommendation_table(recommendations_: Sequence[Recommendation]) -> Table:
    """One row per kind of task: the default and the rows (or the theory) it rests on."""
    return table([{"task": r.task, "default": r.default, "evidence": r.evidence_text} for r in recommendations_],
                 [("task", "kind of task", "{}"), ("default", "default", "{}"),
                  ("evidence", f"evidence (estimate, {LEVEL:.0%} interval, seeds)", "{}")],
                 "One default per kind of task, and the evidence for it")
