"""The sizes of one circle run: :data:`QUICK`, :data:`MEDIUM` and :data:`FULL`.

The paper does not give its training length, batch size or widths; :data:`QUICK` (a few seconds per
run, for CI and the live chapter), :data:`MEDIUM` (2,000 steps at width 64, the committed sweep) and
:data:`FULL` (20,000 Adam steps, width 128) are our choices. All runs of one budget share them; runs
differ only in their seed. Every results file records each run's time (``train_seconds``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sweeps import TrainingBudget
from .data import POPULATION_SIZE

__all__ = ["Budget", "QUICK", "MEDIUM", "FULL", "BUDGETS"]


@dataclass(frozen=True)
class Budget(TrainingBudget):
    """Training and evaluation sizes of one run (the fields of
    :class:`~setfuncs.experiments.sweeps.TrainingBudget`, plus):

    Attributes:
        test_population_sizes: the ``N`` of the test sets, ``test_size`` populations each (must
            include 20, the training size, which gives the table's MSE).
    """

    test_population_sizes: tuple[int, ...] = (5, 10, 20, 50, 100)

    def __post_init__(self) -> None:
        super().__post_init__()
        if POPULATION_SIZE not in self.test_population_sizes or min(self.test_population_sizes) < 1:
            raise ValueError(f"Budget.test_population_sizes must be positive and include the training "
                             f"size {POPULATION_SIZE}, got {self.test_population_sizes}")


#: A few seconds per run on one core (real training, small).
QUICK = Budget("quick", steps=300, batch=64, lr=3e-3, clip=1.0, hidden=32, equivariant_layers=2,
               recurrent_steps=3, test_size=500)
#: What one hour of two CPU cores affords for a whole sweep (the FULL architecture at half the
#: width, a tenth of the steps); the committed ``results/circle-medium.json`` used it.
MEDIUM = Budget("medium", steps=2000, batch=64, lr=1e-3, clip=1.0, hidden=64, equivariant_layers=2,
                recurrent_steps=3, test_size=2000,
                test_population_sizes=(5, 10, 15, 20, 30, 50, 75, 100))
#: Paper-like scale (the paper does not state its training length).
FULL = Budget("full", steps=20_000, batch=64, lr=1e-3, clip=1.0, hidden=128, equivariant_layers=2,
              recurrent_steps=3, test_size=5000)
BUDGETS = {"quick": QUICK, "medium": MEDIUM, "full": FULL}
