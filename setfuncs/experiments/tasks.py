"""The tasks of a sweep: one :class:`Task` per run, planned seed by seed.

A task names its run (``spec``, ``seed``, what a results file records and a resumed sweep skips) and
carries the arguments of the experiment's ``run_one``, which
:func:`~setfuncs.experiments.engine.sweep.run_sweep` calls on a Dask worker. Every sweep plans its tasks with
:func:`seed_by_seed` (every configuration's seed 0 first, then seed 1, ...), so that an interrupted
sweep holds about equally many runs of every configuration. This module imports nothing of the
experiments layer, so the engine, the protocol and the experiments can all read it.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from setfuncs.population import check_sizes

__all__ = ["Task", "DataRun", "MAX_RUNS", "positive_int", "seed_by_seed"]


class Task(NamedTuple):
    """One run of a sweep: the model ``spec`` (e.g. ``"r-lse/max"``), the ``seed``, and the arguments
    of the experiment's ``run_one``: its typed run (:class:`DataRun`, or
    :class:`~setfuncs.experiments.sweeps.GridRun`), a NamedTuple, so ``run_one(*task.args)``."""

    spec: str
    seed: int
    args: tuple

    @property
    def key(self) -> tuple[str, int]:
        """``(spec, seed)``: what a results file records of a run, and what a resumed sweep skips."""
        return self.spec, self.seed


class DataRun(NamedTuple):
    """The arguments of ``run_one`` of an experiment that reads a data set (point clouds, attention):
    ``run_one(spec, seed, budget, data, progress, device)``."""

    spec: str
    seed: int
    budget: Any
    data: Any
    progress: bool = False
    device: str = "cpu"

    @classmethod
    def of(cls, spec: str, seed: int, budget: Any, data: Any, device: str = "cpu") -> "DataRun":
        """The run of ``spec`` with ``seed`` on ``data`` (no progress bar)."""
        return cls(spec, seed, budget, data, False, device)


#: The most seeds per configuration a sweep plans (``--runs``; its tasks are built before any runs).
MAX_RUNS = 10_000


def positive_int(name: str, value: object) -> int:
    """``value`` if it is a positive int, else a ValueError naming ``name`` (:func:`~setfuncs.population.check_sizes`)."""
    check_sizes(**{name: value})
    return value


def seed_by_seed(runs: int, specs: Sequence[str], known: Sequence[str], args: Callable[[str, int], tuple]
                 ) -> tuple[list[str], list[Task]]:
    """The specs to run and their tasks, seed by seed: every spec with seed 0 first, then seed 1, ...,
    so an interrupted sweep holds about equally many runs of every configuration.

    ``specs`` must be a non-empty subset of ``known``; ``args(spec, seed)`` gives ``run_one``'s arguments.
    """
    positive_int("runs", runs)
    if runs > MAX_RUNS:
        raise ValueError(f"runs must be at most {MAX_RUNS:,} seeds per configuration, got {runs:,}")
    specs = list(specs)
    unknown = [s for s in specs if s not in known]
    if unknown or not specs:
        raise ValueError(f"unknown or no configurations {unknown}; choose among {list(known)}")
    return specs, [Task(spec, seed, args(spec, seed)) for seed in range(runs) for spec in specs]
