"""Float32 and float64 results of every plain and sum-isomorphic aggregation are bit for bit those of
commit 15ac30f, before they were taught half precision and extreme parameters.

The book's printed numbers and the sweeps' stored results were computed with those bits; the half
precision path (float32 inside) and the new limits (``pmean`` at ``0 < |p| < 0.01``, ``softmax`` at
a temperature so small that ``x / t`` overflows) must not touch them. ``outputs`` below is the one
recipe, run here on today's modules and on commit 15ac30f's ``setfuncs/plain.py``,
``setfuncs/isomorphic.py`` and the ``setfuncs/population.py`` they import (``tests/data/setfuncs_15ac30f/``:
copies made with ``git show 15ac30f:setfuncs/<name>.py``, imported as a package of their own), every value
compared through ``float.hex`` so that nothing is lost.

Both run in this process, on this machine: a frozen table of values would compare this machine's math
library with the one that wrote it (torch's float32 ``sqrt``, ``exp`` and ``log`` go through MKL's
vector functions, whose last bit depends on the CPU: on an AVX-512 Xeon 77 of the 388 cases recorded on
an EPYC differed in their last bits), not today's code with 15ac30f's.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

import pytest
import torch

from setfuncs import isomorphic, plain

#: Commit 15ac30f's modules, as a package of their own.
FROZEN = Path(__file__).with_name("data") / "setfuncs_15ac30f"
#: The book's power-mean exponents (chapter *Sum isomorphism*: its table, its limits and the ends of
#: its curve) and its temperatures, plus the large exponents whose x^p overflows.
POWERS = (-256, -64, -16, -4, -2, -1.5, -1, -0.5, -0.01, 0, 0.01, 0.5, 1, 2, 3, 4, 16, 64, 256)
TEMPERATURES = (1e-4, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0, 1e6)
#: The plain aggregations that learnable ones wrap, and whose ``weighted`` they call.
REDUCES = ("Sum", "Mean", "Max", "Min", "LogSumExp", "LogMeanExp", "Median")
MASK = [[True] * 7, [True, False, True, True, False, True, False], [False, False, False, True, True, False, False]]


def populations() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Signed particles ``[3, 7, 2]``, positive ones (the power means' domain) and weights ``[3, 7]``, float64."""
    gen = torch.Generator().manual_seed(28)
    signed = torch.randn(3, 7, 2, generator=gen, dtype=torch.float64) * 2.0
    return signed, signed.exp(), torch.rand(3, 7, generator=gen, dtype=torch.float64) * 2.0


def aggregations(plain: ModuleType, isomorphic: ModuleType) -> dict[str, tuple[Callable[[], torch.nn.Module], bool]]:
    """Every case by name: how to build it from the two modules, and whether it needs positive particles."""
    cases = {name: (getattr(plain, name), False) for name in REDUCES}
    cases["Quantile(0.3)"] = (lambda: plain.Quantile(0.3), False)
    cases.update({f"PowerMean({p})": (lambda p=p: plain.PowerMean(p), True) for p in POWERS})
    cases.update({f"SoftmaxWeightedSum({t})": (lambda t=t: plain.SoftmaxWeightedSum(t), False) for t in TEMPERATURES})
    cases["SoftmaxWeightedSum(learnable)"] = (lambda: plain.SoftmaxWeightedSum(0.5, learnable=True), False)
    cases.update({name: (getattr(isomorphic, name), False) for name in ("mean_as_sum", "lse_as_sum", "lme_as_sum")})
    cases.update({f"power_mean_as_sum({p})": (lambda p=p: isomorphic.power_mean_as_sum(p), True)
                  for p in POWERS if p != 0})
    return cases


def outputs(plain: ModuleType, isomorphic: ModuleType) -> dict[str, list[str]]:
    """``forward`` of every case (and ``weighted`` of the :data:`REDUCES`) in float32 and float64 (and
    float64 input to the module as built, in float32), with and without the mask, each output
    flattened to ``float.hex`` strings."""
    signed, positive, weights = populations()
    mask = torch.tensor(MASK)
    results = {}
    for name, (build, needs_positive) in aggregations(plain, isomorphic).items():
        x = positive if needs_positive else signed
        for dtype, convert in ((torch.float32, True), (torch.float64, True), (torch.float64, False)):
            module = build().to(dtype) if convert else build()  # the book feeds float64 to float32 modules too
            if not convert and any(True for _ in module.parameters()):
                continue
            case = f"{name}{'' if convert else ' unconverted'} {dtype}"
            for mask_name, m in (("none", None), ("mask", mask)):
                w = weights.to(dtype) if m is None else weights.to(dtype).masked_fill(~m, 0.0)
                with torch.no_grad():
                    results[f"{case} {mask_name}"] = module(x.to(dtype), m)
                    if name in REDUCES:
                        results[f"{case} {mask_name} weighted"] = module.weighted(x.to(dtype), w, m)
    return {key: [float(v).hex() for v in value.flatten().tolist()] for key, value in results.items()}


def _differences(now: list[str], frozen: list[str]) -> list[tuple[int, float, float]]:
    """The positions where two hex lists differ, as ``(index, now, frozen)``; NaN equals NaN."""
    pairs = [(float.fromhex(a), float.fromhex(b)) for a, b in zip(now, frozen)]
    return [(i, a, b) for i, (a, b) in enumerate(pairs)
            if not (a == b and math.copysign(1, a) == math.copysign(1, b) or math.isnan(a) and math.isnan(b))]


def _frozen_package() -> tuple[ModuleType, ModuleType]:
    """Commit 15ac30f's ``plain`` and ``isomorphic`` modules, imported from :data:`FROZEN` as the package
    ``setfuncs_15ac30f`` (so that their relative imports find each other, not today's)."""
    spec = importlib.util.spec_from_file_location("setfuncs_15ac30f", FROZEN / "__init__.py",
                                                  submodule_search_locations=[str(FROZEN)])
    package = importlib.util.module_from_spec(spec)
    sys.modules["setfuncs_15ac30f"] = package
    spec.loader.exec_module(package)
    return (importlib.import_module("setfuncs_15ac30f.plain"), importlib.import_module("setfuncs_15ac30f.isomorphic"))


FROZEN_OUTPUTS: dict[str, list[str]] = outputs(*_frozen_package())
NOW = outputs(plain, isomorphic)


@pytest.mark.parametrize("key", sorted(FROZEN_OUTPUTS))
def test_float32_and_float64_outputs_are_bit_identical_to_commit_15ac30f(key: str) -> None:
    assert len(NOW[key]) == len(FROZEN_OUTPUTS[key])
    assert _differences(NOW[key], FROZEN_OUTPUTS[key]) == []


def test_every_case_is_frozen() -> None:
    assert sorted(NOW) == sorted(FROZEN_OUTPUTS) and len(NOW) == 388      # as recorded when the copies were made


def test_the_frozen_modules_are_15ac30f_s_not_today_s() -> None:
    """The comparison is with the old code: its modules are the copies, and they lack what half precision added."""
    old_plain, _ = _frozen_package()
    assert Path(old_plain.__file__).parent == FROZEN and old_plain is not plain
    assert not hasattr(old_plain, "SMALL_EXPONENT") and hasattr(plain, "SMALL_EXPONENT")
