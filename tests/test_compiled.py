"""A compiled objective trains as the eager one does (``torch.compile``, a candidate for the GPU sweeps).

``benchmarks/training.py --modes compiled`` times ``fit`` with the objective compiled by
``torch.compile`` (Inductor, fixed shapes). Whatever it measures on a GPU is worth something only
if the compiled step is the same step: here, on the CPU, five Adam steps of small Deep Sets with
every kind of aggregation (mean, max, LSE, log-mean-exp, recurrent), traced by Dynamo and
AOTAutograd, give the eager losses, and weights equal to float32 rounding as Adam carries it
(:data:`CASES` says why Inductor's CPU code is left out). A GPU's Triton kernels are not CPU code:
there ``tests/test_cuda.py`` has no compiled test yet, and the benchmark's numbers say only speed.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import Tensor, nn

import setfuncs as sf
from setfuncs.train import fit

#: (spec, backend): the traced graph is checked (Dynamo and AOTAutograd, run eagerly: ``aot_eager``),
#: the part that could change the step. Inductor's CPU code is not: with torch 2.13.0 on an AVX-512
#: CPU (a Zen 5 EPYC) the C++ it generated for ``lse/lme`` and for a bare ``torch.logsumexp``
#: corrupted the heap (glibc aborts, "corrupted size vs. prev_size", in 2 of 3 runs) and, built for
#: AVX2, made the first loss inf, while it trained as eager on the AVX2 machines before: a fault of
#: that torch on such CPUs (PyTorch's issues report Inductor heap corruption of this kind), not of
#: the step. The compiled mode is for GPUs, whose Triton kernels are not CPU code anyway.
CASES = [("lse/lme", "aot_eager"), ("max/mean", "aot_eager"), ("r-max/r-lse", "aot_eager")]


def objective(model: nn.Module, x: Tensor, y: Tensor, mask: Tensor | None) -> Tensor:
    return nn.functional.mse_loss(model(x, mask), y)


@pytest.mark.parametrize("spec, backend", CASES)
def test_a_compiled_objective_takes_the_eager_steps(spec: str, backend: str) -> None:
    torch.manual_seed(0)
    model = sf.DeepSet(2, 3, spec, hidden=8, equivariant_layers=1, steps=2)
    twin = copy.deepcopy(model)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(4, 5, 2, generator=g), torch.randn(4, 3, generator=g), None) for _ in range(5)]
    logs = {}
    for name, trained, scored in (("eager", model, objective),
                                  ("compiled", twin, torch.compile(objective, backend=backend, dynamic=False))):
        stream = iter(batches)
        logs[name] = fit(trained, lambda: next(stream), loss=None, objective=scored, steps=5, lr=1e-2,
                         clip=1.0, progress=False)
    assert logs["compiled"] == pytest.approx(logs["eager"], rel=1e-5, abs=1e-6)
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(q, p, rtol=1e-3, atol=1e-5)   # Adam divides by small gradients too
    assert logs["eager"][-1] != logs["eager"][0]      # the steps moved the model
