"""StackedLinear: M independent linear layers, equal to M torch.nn.Linear layers, and trained alike."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from setfuncs.stacked import StackedLinear


def as_linears(stack: StackedLinear) -> list[nn.Linear]:
    """The M layers of a stack as separate nn.Linear modules with the same weights."""
    layers = []
    for weight, bias in zip(stack.weight.detach(), stack.bias.detach()):
        layer = nn.Linear(*weight.shape).double()
        with torch.no_grad():
            layer.weight.copy_(weight.T)
            layer.bias.copy_(bias[0])
        layers.append(layer)
    return layers


def test_a_stack_computes_what_its_layers_compute() -> None:
    torch.manual_seed(0)
    stack = StackedLinear(4, 3, 5).double()
    x = torch.randn(4, 7, 2, 3, dtype=torch.float64)
    expected = torch.stack([layer(x[m]) for m, layer in enumerate(as_linears(stack))])
    torch.testing.assert_close(stack(x), expected)


def test_the_initialisation_range_follows_the_fan_in() -> None:
    torch.manual_seed(0)
    stack = StackedLinear(3, 50, 400, fan_in=torch.tensor([1.0, 4.0, 100.0]))
    bounds = stack.weight.detach().abs().amax(dim=(1, 2))
    torch.testing.assert_close(bounds, torch.tensor([1.0, 0.5, 0.1]), rtol=0.02, atol=0.0)


def test_training_a_stack_equals_training_each_layer_alone() -> None:
    """The summed loss gives each model its own gradient; Adam adapts each weight on its own."""
    torch.manual_seed(0)
    stack = StackedLinear(3, 4, 1).double()
    alone = as_linears(stack)
    stack_opt = torch.optim.Adam(stack.parameters(), lr=1e-2)
    alone_opts = [torch.optim.Adam(layer.parameters(), lr=1e-2) for layer in alone]
    for _ in range(25):
        x, y = torch.randn(16, 4, dtype=torch.float64), torch.randn(16, 1, dtype=torch.float64)
        stack_opt.zero_grad()
        ((stack(x.expand(3, -1, -1)) - y) ** 2).mean(dim=(1, 2)).sum().backward()
        stack_opt.step()
        for layer, opt in zip(alone, alone_opts):
            opt.zero_grad()
            ((layer(x) - y) ** 2).mean().backward()
            opt.step()
    for m, layer in enumerate(alone):
        torch.testing.assert_close(stack.weight[m].detach(), layer.weight.detach().T)


def test_bad_shapes_are_refused() -> None:
    stack = StackedLinear(2, 3, 1)
    with pytest.raises(ValueError, match=r"expects \[M=2, \.\.\., in=3\]"):
        stack(torch.randn(3, 5, 3))
    with pytest.raises(ValueError, match="models"):
        StackedLinear(0, 3, 1)
    with pytest.raises(ValueError, match="fan_in"):
        StackedLinear(2, 3, 1, fan_in=torch.tensor([1.0]))
