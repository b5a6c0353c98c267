"""The backward pass of every aggregation from a scalar loss hands torch's batched matrix product
only plain matrices.

The gradient of ``y.sum()`` reaches ``y`` as a broadcast tensor (stride 0). A batched product with
such an operand cannot go to BLAS as one call: on the CPU torch falls back to one small product per
population, on one thread. The masked sum did exactly that (``weighted_sum``, measured when half precision came: 1.5x the
dense ``x.sum(1)`` on two threads where the masked mean, whose division makes the gradient plain,
took 1.05x); ``benchmarks/aggregations.py`` had missed it by seeding the backward pass with a plain
``torch.ones_like(y)``. Which code path torch takes is decided by the operands' strides, so this is
checked on the strides themselves: a dispatch mode sees every ``bmm``/``baddbmm`` call.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import setfuncs as sf
from conftest import AGGREGATIONS, AggregationCase, aggregation_ids

D = 4
BATCHED_PRODUCTS = {torch.ops.aten.bmm.default, torch.ops.aten.baddbmm.default}


class BroadcastOperands(TorchDispatchMode):
    """Records each batched matrix product one of whose matrices has a stride-0 axis of length > 1."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[int, ...]]]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in BATCHED_PRODUCTS:
            tensors = [a for a in args if isinstance(a, torch.Tensor) and a.dim() == 3]
            if any(size > 1 and stride == 0 for t in tensors for size, stride in zip(t.shape[1:], t.stride()[1:])):
                self.found.append((str(func), [t.stride() for t in tensors]))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("loss", ["sum", "mean"])
@pytest.mark.parametrize("case", AGGREGATIONS, ids=aggregation_ids(AGGREGATIONS))
def test_backward_from_a_scalar_loss_multiplies_plain_matrices(case: AggregationCase, loss: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(3, 9, D, dtype=torch.float64)
    x = (x.exp() if case.positive else x).requires_grad_(True)
    mask = torch.rand(3, 9) > 0.3
    mask[:, 0] = True
    module = case.build(D).double()
    y = module(x, mask)
    with BroadcastOperands() as seen:
        getattr(y, loss)().backward()
    assert seen.found == []


@pytest.mark.parametrize("aggregation", [sf.Sum(), sf.Mean()], ids=["sum", "mean"])
def test_weighted_sum_gradients_do_not_depend_on_the_gradient_layout(aggregation: sf.Aggregation) -> None:
    """A broadcast gradient and the same gradient as a plain tensor give the same gradients, of the
    particles and of the weights (the learnable aggregations' path), equal to autograd's through
    ``torch.bmm``."""
    torch.manual_seed(0)
    x = torch.randn(3, 9, D, dtype=torch.float64, requires_grad=True)
    weights = torch.rand(3, 9, dtype=torch.float64, requires_grad=True)
    mask = torch.rand(3, 9) > 0.3
    mask[:, 0] = True
    grads = []
    for seed in (torch.ones(1, dtype=torch.float64).expand(3, D), torch.ones(3, D, dtype=torch.float64)):
        grads.append(torch.autograd.grad(aggregation.weighted(x, weights, mask), (x, weights), seed))
    by_bmm = torch.bmm(weights.unsqueeze(1), x).squeeze(1)
    if isinstance(aggregation, sf.Mean):
        by_bmm = by_bmm / mask.sum(1, keepdim=True)
    grads.append(torch.autograd.grad(by_bmm, (x, weights), torch.ones(3, D, dtype=torch.float64)))
    for other in grads[1:]:
        torch.testing.assert_close(grads[0], other, rtol=0, atol=0)


def test_weighted_sum_has_exact_second_derivatives() -> None:
    x = torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True)
    weights = torch.rand(2, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda a, w: sf.Sum().weighted(a, w, None), (x, weights))
