"""A power mean inside a Deep Set reads a positive embedding ("nothing silently wrong"):
every model spec with ``pmean(p)`` in either place runs forward and backward on real-valued
particles, with finite outputs and gradients, and keeps the contract (permutation and padding
invariance); every other spec builds the same parameters and computes the same outputs as before."""

from __future__ import annotations

import hashlib
import math

import pytest
import torch
import torch.nn.functional as F

import setfuncs as sf
from conftest import seeded
from setfuncs.model import SoftplusPowerMean

#: Every aggregation spec a model spec can name: the 22 without a parameter and the three with one.
PARTS = sf.spec_names() + ["quantile(0.5)", "pmean(3)", "softmax(0.5)"]
#: The 49 of the 625 model specs with a power mean in either place, and other exponents (the
#: geometric mean p = 0, negative p).
PMEAN_SPECS = sorted({f"pmean(3)/{part}" for part in PARTS} | {f"{part}/pmean(3)" for part in PARTS}
                     | {"pmean(0)/pmean(-1.5)", "pmean(-2)/mean", "max/pmean(0)", "r-lse/pmean(0.5)"})
#: What padded particles hold in :func:`test_every_power_mean_spec_ignores_padding`.
JUNK = [math.inf, -math.inf, 1e30, math.nan]


def _population(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Real-valued particles of either sign ``[3, 7, 2]`` (float64, scale 3) and a ragged mask."""
    gen = torch.Generator().manual_seed(seed)
    x = 3 * torch.randn(3, 7, 2, generator=gen, dtype=torch.float64)
    mask = torch.tensor([[True] * 7, [True] * 4 + [False] * 3, [True] + [False] * 6])
    return x, mask


def _model(spec: str, embed_layers: int = 1) -> sf.DeepSet:
    return seeded(sf.DeepSet(2, 3, spec=spec, hidden=5, steps=2, embed_layers=embed_layers), seed=4)


def test_there_are_49_power_mean_specs() -> None:
    assert len(PARTS) == 25 and len({s for s in PMEAN_SPECS if "pmean(3)" in s}) == 49


def test_the_documented_spec_runs() -> None:
    """The model docstring's example, on the issue's input (float32, either sign)."""
    torch.manual_seed(0)
    out = sf.DeepSet(2, 3, "pmean(3)/mean")(torch.randn(4, 10, 2))
    assert out.shape == (4, 3) and bool(torch.isfinite(out).all())


@pytest.mark.parametrize("spec", PMEAN_SPECS)
@pytest.mark.parametrize("embed_layers", [1, 0])
def test_every_power_mean_spec_trains_on_real_valued_data(spec: str, embed_layers: int) -> None:
    """Finite outputs, and finite gradients for every parameter and particle, without a mask and with one."""
    model = _model(spec, embed_layers)
    x, mask = _population(0)
    for m in (None, mask):
        x = x.detach().requires_grad_()
        out = model(x, m)
        assert out.shape == (3, 3) and bool(torch.isfinite(out).all())
        model.zero_grad()
        out.square().sum().backward()
        assert bool(torch.isfinite(x.grad).all())
        assert all(p.grad is not None and bool(torch.isfinite(p.grad).all()) for p in model.parameters())


@pytest.mark.parametrize("spec", PMEAN_SPECS)
def test_every_power_mean_spec_is_permutation_invariant(spec: str) -> None:
    model = _model(spec)
    x, mask = _population(1)
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(model(x[:, perm], mask[:, perm]), model(x, mask), rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(model(x[:, perm]), model(x), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("spec", PMEAN_SPECS)
def test_every_power_mean_spec_ignores_padding(spec: str) -> None:
    """Padded particles holding inf, -inf, 1e30 or NaN change neither the outputs nor the gradients."""
    model = _model(spec)
    x, mask = _population(3)
    x = x.requires_grad_()
    expected = model(x, mask)
    (expected_grad,) = torch.autograd.grad(expected.sum(), x)
    for junk in JUNK:
        padded = torch.cat([x, torch.full((3, 2, 2), junk, dtype=x.dtype)], 1)
        out = model(padded, torch.cat([mask, torch.zeros(3, 2, dtype=torch.bool)], 1))
        torch.testing.assert_close(out, expected, rtol=1e-9, atol=1e-9)
        (grad,) = torch.autograd.grad(out.sum(), x)
        torch.testing.assert_close(grad, expected_grad, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("p", [-2.0, 0.0, 0.5, 3.0])
def test_the_model_power_mean_is_the_power_mean_of_the_softplus(p: float) -> None:
    """:math:`M_p(\\operatorname{softplus}(X))`, which tends to :math:`M_p(X)` on large positive particles."""
    x, mask = _population(5)
    ours = SoftplusPowerMean(p)
    torch.testing.assert_close(ours(x, mask), sf.PowerMean(p)(F.softplus(x), mask), rtol=1e-12, atol=1e-12)
    large = x.abs() + 40
    torch.testing.assert_close(ours(large, mask), sf.PowerMean(p)(large, mask), rtol=1e-15, atol=0)
    assert isinstance(sf.DeepSet(2, 3, f"pmean({p})/pmean({p})").aggregate, SoftplusPowerMean)


@pytest.mark.parametrize("junk", JUNK)
def test_junk_in_padding_reaches_no_gradient(junk: float) -> None:
    """Padded particles get a zero gradient, not NaN (``0 * sigmoid(NaN)``), and change nothing."""
    x, mask = _population(6)
    x = x.masked_fill(~mask.unsqueeze(-1), junk).requires_grad_()
    out = SoftplusPowerMean(3.0)(x, mask)
    out.sum().backward()
    torch.testing.assert_close(out, sf.PowerMean(3.0)(F.softplus(x.detach().nan_to_num(0.0)), mask))
    assert bool(torch.isfinite(x.grad).all()) and bool((x.grad[~mask] == 0).all())


@pytest.mark.parametrize("p", [-2.0, 0.0, 3.0])
def test_the_embedding_stays_positive_where_softplus_underflows(p: float) -> None:
    """Particles of -1e4 (softplus 0 in float32 and float64) give a finite output and gradient."""
    for dtype in (torch.float32, torch.float64):
        x = torch.tensor([[[-1e4], [-200.0], [1.0]]], dtype=dtype, requires_grad=True)
        out = SoftplusPowerMean(p)(x)
        out.sum().backward()
        assert bool(torch.isfinite(out).all()) and bool((out > 0).all()) and bool(torch.isfinite(x.grad).all())


# --- every other spec is unchanged ------------------------------------------------------------------

#: Saved before the power mean got its embedding (commit 15ac30f): per spec and keyword arguments,
#: the first 16 hex digits of the SHA-256 of the state dict (names and bytes) of
#: ``torch.manual_seed(0); DeepSet(3, 2, spec, hidden=5, steps=2, **kwargs)``, and its outputs on
#: :func:`_saved_input`. The power-mean specs have the parameters they had before (none of their own).
SAVED = [
    ("max/max", {}, "2d70c1ea043018fa", [[0.32824572920799255, 0.14219114184379578],
                                         [0.32226812839508057, 0.15208366513252258]]),
    ("r-lse/r-lse", {}, "f282544ab066c49a", [[-0.1416039764881134, -0.08695439994335175],
                                             [-0.1339338719844818, -0.08375236392021179]]),
    ("mean/quantile(0.5)", {"layer": "deepsets"}, "a8c53647c9f0a788", [[0.4859809875488281, -0.25984397530555725],
                                                                       [0.5012208223342896, -0.2838863432407379]]),
    ("softmax(0.5)/lse", {"embed_layers": 0}, "2dcf841821622fd1", [[-0.8550969362258911, 0.16890382766723633],
                                                                   [-0.8581433296203613, 0.22124919295310974]]),
    ("q-sum/rpw", {}, "8635cd512ecdd39d", [[0.18890485167503357, -0.10416661202907562],
                                           [0.18873295187950134, -0.10439017415046692]]),
    ("pmean(3)/mean", {}, "2d70c1ea043018fa", None),
    ("max/pmean(-2)", {}, "2d70c1ea043018fa", None),
]


def _saved_input() -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(2, 6, 3, generator=torch.Generator().manual_seed(7))
    return x, torch.tensor([[True] * 6, [True] * 4 + [False] * 2])


def _state_digest(model: torch.nn.Module) -> str:
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize(("spec", "kwargs", "digest", "outputs"), SAVED, ids=[s for s, *_ in SAVED])
def test_other_specs_build_and_compute_what_they_did(spec: str, kwargs: dict, digest: str,
                                                     outputs: list | None) -> None:
    """Parameters and state-dict keys bit-identical (the random stream is the same on every
    machine); outputs equal to float32 rounding (matrix kernels may sum in another order on
    another CPU)."""
    torch.manual_seed(0)
    model = sf.DeepSet(3, 2, spec, hidden=5, steps=2, **kwargs)
    assert _state_digest(model) == digest
    if outputs is not None:
        with torch.no_grad():
            torch.testing.assert_close(model(*_saved_input()), torch.tensor(outputs), rtol=1e-6, atol=1e-7)
