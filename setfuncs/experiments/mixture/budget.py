"""The sizes of one mixture run: :data:`QUICK`, :data:`MEDIUM` and :data:`FULL`.

The paper gives no training length or widths; all runs of one budget share them and
differ only in their seed: :data:`QUICK` (1,000 steps of 32 populations, width 32, 8 test
populations at sizes 10 and 100) for CI and the live chapter, :data:`MEDIUM` (2,500 steps of 32,
width 48, 64 test populations at seven sizes) for the committed sweep, :data:`FULL` (20,000 steps
of 64, width 128) at a paper-like scale. Measured times per run are in the README and in every
results file (``train_seconds``, ``eval_seconds``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sweeps import TrainingBudget
from .data import TEST_POPULATION_SIZE

__all__ = ["METRIC_SIZE", "Budget", "QUICK", "MEDIUM", "FULL", "BUDGETS"]

#: The population size of the violins' per-run metric (the paper's population size).
METRIC_SIZE = TEST_POPULATION_SIZE


@dataclass(frozen=True)
class Budget(TrainingBudget):
    """Training and evaluation sizes of one run (the fields of
    :class:`~setfuncs.experiments.sweeps.TrainingBudget`, plus):

    Attributes:
        test_size: test populations (of 100 particles each; default 16);
        test_population_sizes: the bootstrap sizes ``n`` (must include 100, at least 2 for EM);
        bootstraps: bootstrap subsamples per population and size (the paper: 100).
    """

    test_size: int = 16
    test_population_sizes: tuple[int, ...] = (5, 10, 20, 50, 100, 200, 500)
    bootstraps: int = 100

    def __post_init__(self) -> None:
        super().__post_init__()
        sizes = self.test_population_sizes
        if METRIC_SIZE not in sizes or min(sizes) < 2 or len(set(sizes)) != len(sizes):
            raise ValueError(f"Budget.test_population_sizes must be distinct sizes >= 2 (EM needs two "
                             f"particles) that include {METRIC_SIZE}, the violins' size; got {sizes}")
        if isinstance(self.bootstraps, bool) or not isinstance(self.bootstraps, int) or self.bootstraps < 2:
            raise ValueError(f"Budget.bootstraps must be at least 2, an int (a KDE needs two "
                             f"estimates), got {self.bootstraps!r}")


#: A few seconds per run on one core, real training at a small size, for tests, CI and live chapters.
QUICK = Budget("quick", steps=1000, batch=32, lr=3e-3, clip=1.0, hidden=32, equivariant_layers=2,
               recurrent_steps=3, test_size=8, test_population_sizes=(10, 100))
#: The committed sweep's budget (``results/mixture-medium.json``).
MEDIUM = Budget("medium", steps=2500, batch=32, lr=2e-3, clip=1.0, hidden=48, equivariant_layers=2,
                recurrent_steps=3, test_size=64)
#: Paper-like scale (the paper does not state its training length).
FULL = Budget("full", steps=20_000, batch=64, lr=1e-3, clip=1.0, hidden=128, equivariant_layers=2,
              recurrent_steps=3, test_size=64)
BUDGETS = {"quick": QUICK, "medium": MEDIUM, "full": FULL}
