r"""The sizes of one point-cloud run: :data:`QUICK`, :data:`MEDIUM` and :data:`FULL`.

**FULL** is the reference (Deep Sets' ``PointClouds/run.py``): 1,000 epochs of ModelNet40's
9,843 training clouds at batch 64 (153 batches an epoch, 153,000 Adam steps), width 256, three
equivariant layers, 1,000 training particles. On one core of the 2-core AMD EPYC (one torch
thread, the other core busy) a step of ``max/max`` took 1.6 s and of ``r-lse/r-lse`` 4.9 s, so
one FULL run takes three to nine *days* on a CPU core: it is meant for a GPU.

**MEDIUM** keeps the 1,000 training particles, the three equivariant layers, dropout, weight
decay, the learning rate and its schedule, and shrinks width (64), batch (32) and steps (1,500)
so that the ten columns of Table 2 with three seeds fit about an hour on two cores on the offline
shapes (12 x 100 training clouds, 40 epochs). Measured on one core of the 2-core AMD EPYC (one
torch thread while another job kept both cores busy, so an idle machine is faster), seconds per
step: ``max/max`` 0.079 (400 clouds/s; a 400-step run took 32 s training and 3.8 s evaluation
and reached 46 % test accuracy), ``max/q-sum`` 0.082, ``max/q-max`` 0.088, ``q-sum/q-sum`` 0.10,
``max/r-max`` 0.12, ``max/r-lse`` and ``max/r-sum`` 0.14, ``r-sum/r-sum`` 0.20, ``r-max/r-max``
0.22, ``r-lse/r-lse`` 0.25 (126 clouds/s; a 200-step run took 51 s training and 8.9 s
evaluation): 1.42 s for one step of every column, so a seed of all ten takes about 2,130 s of
training plus about 60 s of evaluation, and three seeds about 6,600 core-seconds, 55 minutes on
two cores.

*One deviation from the reference*: MEDIUM uses Adam's default :math:`\epsilon = 10^{-8}`, not
its :math:`10^{-3}`. With :math:`\epsilon = 10^{-3}` the columns with a learnable final
aggregation sat at the constant predictor (loss :math:`\ln 12 = 2.48`) for most of a MEDIUM run
(``max/r-lse``: still 2.47 after 650 steps, 8 % test accuracy after 400), because their gradients
are far smaller than :math:`\epsilon`; with :math:`10^{-8}` ``max/r-lse`` left that plateau
after about 200 steps (1.55 at 600 steps) and ``r-lse/r-lse`` after about 250. FULL's 153,000
steps make such a plateau negligible, so FULL keeps the reference's :math:`10^{-3}`.

**QUICK** is the same code at toy sizes (100 particles, 20 training clouds per class, width 32,
1,000 steps at a learning rate of :math:`3 \cdot 10^{-3}`, :math:`\epsilon = 10^{-8}`), for tests,
CI and the book's live cells. Measured on the same machine: ``max/max`` trained in 3.6 s (5.0 s as
the first run of a process) and reached 58-60 % test accuracy on 12 classes at 1,000 particles,
``max/r-lse`` trained in 7.3 s and reached 36-40 % (seeds 0 and 1). With 200 steps the learnable
columns had not left chance.

The evaluation sizes of Table 2 are :data:`TABLE_SIZES`; each budget adds a curve of sizes
(``curve_sizes``). Test clouds are sampled with as many particles as the largest size
(:func:`points_per_test_cloud`), and every smaller size is a random subset of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sweeps import TrainingBudget

__all__ = ["TABLE_SIZES", "Budget", "QUICK", "MEDIUM", "FULL", "BUDGETS", "evaluation_sizes",
           "points_per_test_cloud"]

#: The population sizes of Table 2's rows (the models are trained at 1,000).
TABLE_SIZES = (1000, 100, 50)


@dataclass(frozen=True)
class Budget(TrainingBudget):
    """Training and evaluation sizes of one run (the fields of
    :class:`~setfuncs.experiments.sweeps.TrainingBudget`, where ``test_size`` is the offline
    shapes' test clouds per class (ModelNet40 is always tested on its whole test split) and
    ``equivariant_layers`` counts the layers on the raw coordinates too; plus):

    Attributes:
        points: training particles per cloud (the paper: 1,000).
        train_per_class: training clouds per class of the offline shapes (ModelNet40: its whole
            training split).
        weight_decay, eps: Adam's weight decay and epsilon (the reference: 1e-7, 1e-3).
        dropout: before each of the classifier's linear layers (the reference: 0.5).
        decay_at, decay: the learning rate is multiplied by ``decay`` after these fractions of
            the steps (the reference: 0.1 after 40 % and 80 %).
        curve_sizes: further evaluation sizes for the accuracy-versus-size curve.
    """

    points: int = 1000
    train_per_class: int = 100
    weight_decay: float = 1e-7
    eps: float = 1e-3
    dropout: float = 0.5
    decay_at: tuple[float, ...] = (0.4, 0.8)
    decay: float = 0.1
    curve_sizes: tuple[int, ...] = (10, 20, 50, 100, 200, 500, 1000, 2000)

    def __post_init__(self) -> None:
        super().__post_init__()
        for field in ("points", "train_per_class"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Budget.{field} must be a positive int, got {value!r}")
        if self.equivariant_layers < 1:
            raise ValueError(f"Budget.equivariant_layers must be >= 1 (the first layer reads the "
                             f"coordinates), got {self.equivariant_layers}")
        if not (self.weight_decay >= 0 and self.eps > 0 and 0 <= self.dropout < 1 and 0 < self.decay <= 1):
            raise ValueError(f"need weight_decay >= 0, eps > 0, 0 <= dropout < 1 and 0 < decay <= 1, got "
                             f"{self.weight_decay}, {self.eps}, {self.dropout}, {self.decay}")
        if list(self.decay_at) != sorted(self.decay_at) or not all(0 < f < 1 for f in self.decay_at):
            raise ValueError(f"Budget.decay_at must be increasing fractions of the steps in (0, 1), "
                             f"got {self.decay_at}")
        sizes = self.curve_sizes
        if not all(isinstance(n, int) and n >= 1 for n in sizes) or len(set(sizes)) != len(sizes):
            raise ValueError(f"Budget.curve_sizes must be distinct positive ints, got {sizes}")


#: Seconds per run on one core, for tests, CI and live chapters.
QUICK = Budget("quick", steps=1000, batch=32, lr=3e-3, clip=5.0, hidden=32, equivariant_layers=3,
               recurrent_steps=2, test_size=10, points=100, train_per_class=20, eps=1e-8,
               curve_sizes=(10, 20, 50, 100, 200, 1000))
#: Ten columns x three seeds in about an hour on two cores, on the offline shapes (see the module
#: docstring).
MEDIUM = Budget("medium", steps=1500, batch=32, lr=1e-3, clip=5.0, hidden=64, equivariant_layers=3,
                recurrent_steps=3, test_size=50, points=1000, train_per_class=100, eps=1e-8)
#: The reference scale, 1,000 epochs of ModelNet40 at batch 64 and width 256.
FULL = Budget("full", steps=153_000, batch=64, lr=1e-3, clip=5.0, hidden=256, equivariant_layers=3,
              recurrent_steps=3, test_size=100, points=1000, train_per_class=800)
BUDGETS = {"quick": QUICK, "medium": MEDIUM, "full": FULL}


def evaluation_sizes(budget: Budget) -> tuple[int, ...]:
    """Every population size a run is evaluated at: Table 2's and the curve's, ascending."""
    return tuple(sorted(set(TABLE_SIZES) | set(budget.curve_sizes)))


def points_per_test_cloud(budget: Budget) -> int:
    """Particles per test cloud: the largest evaluation size (the others are subsets)."""
    return max(evaluation_sizes(budget))
