"""Shared fixtures: every aggregation and model spec the property suites run over, and population
strategies for hypothesis.

The suite runs torch's AVX2 CPU kernels on an x86-64 machine, as the sweep engine's workers do
(:data:`setfuncs.experiments.engine.workers.CPU_CAPABILITY`): the float32 values some tests compare bit for
bit were recorded with them, and a test that sets a worker's run beside the same run in this process
needs both on the same kernels. A CPU with AVX-512 would otherwise pick kernels that round
differently. ``ATEN_CPU_CAPABILITY`` set before pytest starts wins. torch fixes its kernels at its
first operation, so the variable is set here, before any test runs one (importing torch and
setfuncs runs none; ``test_this_suite_runs_the_kernels_the_engines_workers_use`` checks the result).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterator

import pytest
import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import setfuncs as sf
from setfuncs.experiments.engine import worker_environment

os.environ.update(worker_environment())

settings.register_profile("default", max_examples=20, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")
torch.set_num_threads(1)

#: Modules whose tests mostly wait for worker processes and subprocesses (sweeps, book builds).
#: They are collected first, so that ``pytest -n 2`` starts its longest tests at once and fills
#: the waits with short ones, rather than ending on one long test.
WAITING_MODULES = ("test_sweep_engine.py", "test_student_edition.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the tests of :data:`WAITING_MODULES` to the front (otherwise in collection order)."""
    items.sort(key=lambda item: item.path.name not in WAITING_MODULES)


@dataclass(frozen=True)
class AggregationCase:
    """How to build one aggregation for ``D`` features, and whether it needs positive particles."""

    name: str
    build: Callable[[int], sf.Aggregation]
    positive: bool = False


AGGREGATIONS: list[AggregationCase] = (
    [AggregationCase(spec, lambda d, s=spec: sf.aggregation(s, features=d)) for spec in sf.spec_names()]
    + [
        AggregationCase("quantile-0.3", lambda d: sf.aggregation("quantile", q=0.3)),
        AggregationCase("pmean-2", lambda d: sf.aggregation("pmean", p=2.0), positive=True),
        AggregationCase("pmean-0", lambda d: sf.PowerMean(0.0), positive=True),
        AggregationCase("softmax-fixed", lambda d: sf.aggregation("softmax", temperature=0.5)),
        AggregationCase("softmax-learnable", lambda d: sf.aggregation("softmax", learnable=True)),
        AggregationCase("r-lse-sigmoid", lambda d: sf.aggregation("r-lse", features=d, normalize="sigmoid")),
        AggregationCase("r-max-softmax", lambda d: sf.aggregation("r-max", features=d, normalize="softmax")),
        AggregationCase("q-sum-softmax-n", lambda d: sf.aggregation("q-sum", features=d, normalize="softmax-n")),
        AggregationCase("q-mean-identity", lambda d: sf.aggregation("q-mean", features=d, normalize="identity")),
        AggregationCase("iso-mean", lambda d: sf.mean_as_sum()),
        AggregationCase("iso-lse", lambda d: sf.lse_as_sum()),
        AggregationCase("iso-lme", lambda d: sf.lme_as_sum()),
        AggregationCase("r-lme-log", lambda d: sf.aggregation("r-lme", features=d, weighting="log")),
        AggregationCase("r-lse-log-sigmoid", lambda d: sf.aggregation("r-lse", features=d, weighting="log",
                                                                      normalize="sigmoid")),
        AggregationCase("q-max-log", lambda d: sf.aggregation("q-max", features=d, weighting="log")),
        AggregationCase("iso-pmean-3", lambda d: sf.power_mean_as_sum(3.0), positive=True),
    ]
)

#: The paper's model specs: Table 2 (point clouds) and the 3x3 grid of sections 4.1-4.2 in all four
#: plain/recurrent settings; and the book's with log-mean-exp (lme) in place of LSE.
MODEL_SPECS: list[str] = sorted(set(sf.TABLE2_SPECS) | {"max/r-lme", "r-lme/r-lme"} | {
    f"{pe}{e}/{pf}{f}" for e in ("mean", "max", "lse", "lme") for f in ("mean", "max", "lse", "lme")
    for pe in ("", "r-") for pf in ("", "r-")})


def aggregation_ids(cases: list[AggregationCase]) -> list[str]:
    return [c.name for c in cases]


every_aggregation = pytest.mark.parametrize("case", AGGREGATIONS, ids=aggregation_ids(AGGREGATIONS))
every_model_spec = pytest.mark.parametrize("spec", MODEL_SPECS)


@st.composite
def populations(draw, positive: bool = False, max_n: int = 7, max_d: int = 4, masked: bool = True):
    """A float64 batch ``x: [B, N, D]``, a mask (or None) with at least one real particle per row."""
    b = draw(st.integers(1, 3))
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**31 - 1))
    scale = draw(st.sampled_from([0.1, 1.0, 5.0]))
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(b, n, d, generator=gen, dtype=torch.float64) * scale
    if positive:
        x = x.exp()
    mask = None
    if masked and draw(st.booleans()):
        mask = torch.rand(b, n, generator=gen) < 0.7
        mask[torch.arange(b), torch.randint(0, n, (b,), generator=gen)] = True
    return x, mask


@pytest.fixture(scope="module")
def in_process_scheduler() -> Iterator[str]:
    """The address of a Dask scheduler whose one worker is a thread of this process, for
    ``Engine(scheduler=...)``: a sweep on it writes what a sweep on a local cluster writes, without
    starting worker processes (each imports torch and the experiment anew). The sweep-engine tests
    run the real worker processes: start-up, signals, deaths."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as cluster:
        yield cluster.scheduler_address


def seeded(module: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Re-initialise a module's parameters reproducibly and switch it to float64 eval mode."""
    torch.manual_seed(seed)
    for p in module.parameters():
        torch.nn.init.normal_(p, std=0.5)
    return module.double().eval()
