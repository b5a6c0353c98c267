r"""One experiment, declared: what every experiment of the book provides, and what is written once over it.

An experiment is a grid of configurations, each trained with several seeds, every run recorded in one
results file, and the paper's claims tested on those runs paired by seed. Its package defines one
:class:`Experiment` in its ``experiment`` module, from its own parts:

- **the run side** -- its results file's ``name`` and run ``schema``, its ``budgets``, its
  ``configurations``, the typed ``run`` of one task (:class:`~setfuncs.experiments.sweeps.GridRun`
  or :class:`~setfuncs.experiments.tasks.DataRun`), and the hooks that build a model, train it,
  evaluate it, run one task (``run_one``) or one configuration's seeds as an ensemble (``run_many``)
  and describe a sweep (``provenance``);
- **the analysis side** -- the metric of every ``(configuration, seed)`` (``metric_by_run``), the
  paper's claims on a results file (``claims``) and where our protocol differs from the paper's on
  what each claim depends on (``differences``).

Written once over it: :meth:`Experiment.sweep` (tasks seed by seed, the budget checked, the file
resumed through :func:`~setfuncs.experiments.engine.sweep.run_sweep`), :meth:`Experiment.load_results`,
:meth:`Experiment.findings` (one Holm correction per family of claims,
:func:`~setfuncs.experiments.findings.judge.judge`), :meth:`Experiment.sensitivity` (each verdict beside
the verdicts under the analysis' alternatives); beside them, for every experiment's ``metric_by_run``,
:func:`~setfuncs.experiments.findings.twins.lme_against_lse` (every LSE configuration against its
log-mean-exp twin, seed by seed). The command line
(``setfuncs.experiments.cli``) reads the same declaration.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Mapping, Sequence

from .engine import Engine
from .findings import Finding, judge
from .findings.sensitivity import POOLED, sensitivity
from .protocol import check_budget, run_experiment
from .provenance import sweep_identity
from .results import load_sweep
from .schema import RunSchema
from .sweeps import GRID, GridRun, TrainingBudget
from .tasks import Task, seed_by_seed

__all__ = ["Experiment", "MetricByRun"]

#: ``{(spec, seed): value}``: one number per run, what the claims pair by seed.
MetricByRun = dict[tuple[str, int], float]


@dataclass(frozen=True, repr=False)
class Experiment:
    """The declaration of one experiment (module docstring).

    Attributes:
        name: the results file's ``experiment`` field, e.g. ``"minimal_enclosing_circle"``.
        package: the experiment's package, e.g. ``"setfuncs.experiments.circle"`` (its command line's).
        title: a few words for messages, e.g. ``"circle"`` ("circle sweep", "a circle Budget").
        schema: what every finished run records (:class:`~setfuncs.experiments.schema.RunSchema`).
        budgets: the named budgets (``quick``, ``medium``, ``full``), all of ``budget_type``.
        configurations: the model specs a sweep runs by default, e.g. ``"r-lse/max"``.
        run: the typed arguments of ``run_one``, a NamedTuple with ``seed`` and ``budget`` whose
            ``run.of(spec, seed, budget, data, device)`` makes one task's.
        make_model, train, evaluate: build one configuration's model, train it with one seed, and
            evaluate a trained model (their signatures are the experiment's own).
        run_one: ``run_one(*run) -> record``, a module-level function the engine's workers import.
        run_many: ``run_many(runs) -> records``, one configuration's seeds as one ensemble (on a GPU).
        provenance: ``provenance(budget, runs, specs[, data]) -> header`` of a results file.
        metric_by_run: ``{(spec, seed): metric}`` of a results file, the number the claims pair.
        claims: ``claims(results, paper, variant) -> [Claim]``, the paper's claims on a file.
        differences: ``differences(results) -> rows`` where our protocol differs from the paper's.
        data: the data a sweep reads by default (None: the experiment draws its own populations).
        data_identity: ``data_identity(data, budget) -> dict``, what a resumed file's data must match.
        header_keys: what a results file must hold besides every sweep's header.
        counted: ``counted(results, paper, variants) -> [Finding]``, parts of a claim that are counted,
            not tested (placed after the first tested part of the same claim).
        alternatives: ``{name: options of claims}``: the analysis' other choices, which
            :meth:`sensitivity` judges the table under (failed runs left out, by default).
        concurrent_safe: whether several configurations may train in threads of one process.
    """

    name: str
    package: str
    title: str
    schema: RunSchema
    budgets: Mapping[str, TrainingBudget]
    budget_type: type
    configurations: tuple[str, ...]
    run: type
    make_model: Callable[..., Any]
    train: Callable[..., Any]
    evaluate: Callable[..., dict]
    run_one: Callable[..., dict]
    run_many: Callable[[Sequence[tuple]], list[dict]]
    provenance: Callable[..., dict]
    metric_by_run: Callable[[dict], MetricByRun]
    claims: Callable[..., list]
    differences: Callable[[dict], list]
    data: Any = None
    data_identity: Callable[..., dict] | None = None
    header_keys: tuple[str, ...] = ()
    counted: Callable[..., list[Finding]] | None = None
    alternatives: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: {"failed runs left out": {"failed": "dropped"}})
    concurrent_safe: bool = False

    @classmethod
    def declare(cls, sweep: ModuleType, budget: ModuleType, metric_by_run: Callable[[dict], MetricByRun],
                claims: Callable[..., list], differences: Callable[[dict], list], configurations: Sequence[str] = GRID,
                run: type = GridRun, **options: Any) -> "Experiment":
        """The experiment whose run side is the ``sweep`` module (its ``NAME``, ``RUN_SCHEMA``, ``make_model``,
        ``train_model``, ``evaluate_run``, ``run_one``, ``run_ensemble`` and ``provenance``) and the ``budget``
        module (its ``BUDGETS`` and ``Budget``), in the package that holds them. By default an experiment on
        the paper's grid (:data:`~setfuncs.experiments.sweeps.GRID`, one
        :class:`~setfuncs.experiments.sweeps.GridRun` per task); ``options`` are the other fields (``title``
        defaults to the package's last name; a field given here wins over the module's)."""
        package = sweep.__name__.rsplit(".", 1)[0]
        fields = dict(name=sweep.NAME, package=package, title=package.rsplit(".", 1)[1], schema=sweep.RUN_SCHEMA,
                      budgets=budget.BUDGETS, budget_type=budget.Budget, configurations=tuple(configurations),
                      run=run, make_model=getattr(sweep, "make_model", None), train=sweep.train_model,
                      evaluate=sweep.evaluate_run, run_one=sweep.run_one, run_many=sweep.run_ensemble,
                      provenance=sweep.provenance, metric_by_run=metric_by_run, claims=claims,
                      differences=differences)
        return cls(**{**fields, **options})

    def __repr__(self) -> str:
        return f"Experiment({self.name!r}, {self.package!r})"

    def load_results(self, path: str | os.PathLike) -> dict:
        """A results file of this experiment, checked (:func:`~setfuncs.experiments.results.load_sweep`
        with its ``name``, ``schema`` and ``header_keys``); a ValueError naming the file if it is none or
        has no runs."""
        return load_sweep(path, self.name, self.package, self.schema, self.header_keys)

    def findings(self, results: dict, paper: str | os.PathLike | None = None,
                 variants: Sequence[str] = ("paper", "lme"), pooled: bool = False, **options: Any) -> list[Finding]:
        """The findings table: the claims of every variant in ``variants`` (``options`` go to
        ``claims``), one Holm correction per family (``pooled``: one over all,
        :func:`~setfuncs.experiments.findings.judge.judge`), and the ``counted`` parts in their order,
        after the first tested part of their claim (keys ``claim/part``)."""
        found = judge([(v, c) for v in variants for c in self.claims(results, paper, v, **options)], pooled)
        counted = [] if self.counted is None else self.counted(results, paper, variants)
        for i, row in enumerate(counted):
            family = row.key.split("/")[0]
            at = min((j for j, f in enumerate(found) if f.key.split("/")[0] == family), default=len(found) - 1)
            found.insert(at + 1 + i, row)
        return found

    def sensitivity(self, results: dict, paper: str | os.PathLike | None = None) -> list[dict[str, Any]]:
        """Every verdict of the paper's claims beside its verdicts under :data:`~setfuncs.experiments.findings.sensitivity.POOLED`
        and each of ``alternatives`` (:func:`~setfuncs.experiments.findings.sensitivity.sensitivity`)."""
        alternatives = {POOLED: {"pooled": True}, **self.alternatives}
        return sensitivity(lambda **options: self.findings(results, paper, **options), alternatives)

    def tasks(self, runs: int, budget: TrainingBudget, configurations: Sequence[str] | None = None,
              data: Any = None, device: str = "cpu") -> tuple[list[str], list[Task]]:
        """The configurations to run (``configurations``, a subset of the experiment's; None: all) and
        their tasks, one ``run`` each, seed by seed (:func:`~setfuncs.experiments.tasks.seed_by_seed`)."""
        return seed_by_seed(runs, self.configurations if configurations is None else configurations,
                            self.configurations, lambda spec, seed: self.run.of(spec, seed, budget, data, device))

    def sweep(self, runs: int, budget: TrainingBudget, out_path: str | os.PathLike,
              configurations: Sequence[str] | None = None, data: Any = None, *, engine: Engine = Engine(),
              restart: bool = False, progress: bool = True) -> dict:
        """Train ``runs`` seeds (``0 .. runs-1``) of every configuration and write one JSON file.

        Runs are submitted seed by seed (every configuration with seed 0 first, then seed 1, ...), so an
        interrupted sweep holds about equally many runs of every configuration. On a GPU (``engine.device``
        ``cuda``) the missing seeds of each configuration train together as one ensemble (``run_many``),
        configuration after configuration.

        Args:
            runs: runs (seeds) per configuration.
            budget: one of ``budgets`` or a custom budget of ``budget_type``.
            out_path: the JSON file, written after every finished run; an earlier sitting's file of the
                same budget (and data) is resumed, its runs kept and only the missing ones run; a file
                of other data is refused.
            configurations: model specs to run; None: all of ``configurations``.
            data: the data set (the experiment's ``data`` type; None: its default). An experiment that
                draws its own populations takes none.
            engine: where the runs train (:class:`~setfuncs.experiments.engine.config.Engine`: a local
                Dask cluster of ``jobs`` worker processes by default, or a running scheduler).
            restart: move an existing ``out_path`` aside to a timestamped backup instead of resuming it.
            progress: a tqdm bar over runs.

        Returns the written results (:func:`~setfuncs.experiments.engine.sweep.run_sweep`): the
        provenance plus the sittings, timings, ``complete`` and ``runs`` (records of ``run_one``).
        """
        check_budget(budget, self.budget_type, self.title)
        if self.data_identity is None and data is not None:
            raise ValueError(f"the {self.title} sweep draws its own populations and reads no data set; got "
                             f"data={data!r} (pass engine= by name)")
        data = self.data if data is None else data
        specs, tasks = self.tasks(runs, budget, configurations, data, engine.trains_on)
        if self.data_identity is None:
            header = self.provenance(budget, runs, specs)
            identity = None
        else:
            header = self.provenance(budget, runs, specs, data)
            identity = sweep_identity(header, data=self.data_identity(data, budget))
        return run_experiment(self.run_one, tasks, header, self.schema, out_path, engine, restart, progress,
                              f"{self.title} sweep", identity=identity, run_many=self.run_many,
                              concurrent_safe=self.concurrent_safe)
