r"""Null copies of a results file: the same runs with their outcomes shuffled across configurations.

A findings table claims that some configurations are better than others. To check how often its
tests decide a claim when none is true, :func:`null_copy` makes a file in which no configuration
*is* better than another but everything else is as in the real one: within every seed, the
outcomes of the runs (every metric, the training record, whether it diverged or collapsed) are
permuted at random across the configurations, while each record keeps the name of its
configuration and seed (:data:`IDENTITY_KEYS`). The seeds' own effects (a hard training stream,
a lucky initialisation) stay paired, as in the real file, so a test paired by seed sees the noise
it will see in the chapters. A calibrated table decides some claim of a null copy in at most about
5 % of copies.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Sequence

import numpy as np

from .schema import finished_runs

__all__ = ["IDENTITY_KEYS", "null_copy"]

#: What names a run (kept in place by :func:`null_copy`); every other key is its outcome.
IDENTITY_KEYS = ("spec", "seed", "setting", "equivariant", "final", "localiser", "data", "provenance", "worker")


def null_copy(results: dict, seed: int, groups: Sequence[Sequence[str]] | None = None) -> dict:
    """A deep copy of ``results`` whose finished runs' outcomes are permuted within every seed,
    with ``numpy.random.default_rng(seed)``.

    Args:
        results: a sweep's results (as its experiment's ``load_results`` returns them).
        seed: of the permutations.
        groups: specs whose runs exchange outcomes (e.g. the configurations of one variant, or of
            one setting); None: all of a seed's finished runs. A spec in no group keeps its outcomes.

    Runs that failed (no outcome) stay as they are.
    """
    rng = np.random.default_rng(seed)
    copied = copy.deepcopy(results)
    blocks = [None] if groups is None else [set(g) for g in groups]
    for block in blocks:
        by_seed: dict[int, list[dict]] = defaultdict(list)
        for run in finished_runs(copied):
            if block is None or run["spec"] in block:
                by_seed[run["seed"]].append(run)
        for runs in by_seed.values():
            outcomes = [{k: v for k, v in run.items() if k not in IDENTITY_KEYS} for run in runs]
            for run, outcome in zip(runs, (outcomes[i] for i in rng.permutation(len(runs)))):
                for key in [k for k in run if k not in IDENTITY_KEYS]:
                    del run[key]
                run.update(outcome)
    return copied
