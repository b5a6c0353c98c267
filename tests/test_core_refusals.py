"""Nothing lost, in the core package: settings no training can use are refused in one line
naming the argument and the fix, non-finite data is named as the cause of a non-finite loss, the
quantile's ends are the order statistics, ragged populations that disagree are refused, and the
meta device, ``torch.jit.script`` and GPUs that are not here are answered in one line.

Each case was measured on the code before this change: ``clip=-1`` climbed the loss (0.668 -> 778),
``steps=True`` trained one step, NaN data was answered "lower the learning rate", ``quantile(1)`` of
{1, 2, inf} was NaN, ``pad_populations`` gave a bare torch error on 3 and 4 features and rounded
float64 to float32 silently, a model on the meta device and ``torch.jit.script`` failed deep inside
torch, and ``cuda:N`` without a GPU did not name the count.
"""

from __future__ import annotations

import copy
import importlib.util
import math
import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch
from torch import nn

import setfuncs as sf
from conftest import MODEL_SPECS, AggregationCase, every_aggregation
from setfuncs import steps as steps_module
from setfuncs.ensemble import fit_ensemble
from setfuncs.population import pad_populations
from setfuncs.steps import resolve_device
from setfuncs.train import fit

MSE = nn.functional.mse_loss


def sampler(seed: int = 0, bad_at: int | None = None, value: float = math.nan, where: str = "x"):
    """Batches ``(x [8, 5, 2], y [8, 1], None)``; at call ``bad_at`` (from 0) ``x[2, 1, 0]`` (or ``y[2, 0]``)
    is ``value``."""
    gen = torch.Generator().manual_seed(seed)
    calls = [0]

    def sample():
        x = torch.randn(8, 5, 2, generator=gen)
        y = x.sum(1)[:, :1]
        if calls[0] == bad_at:
            if where == "x":
                x[2, 1, 0] = value
            else:
                y[2, 0] = value
        calls[0] += 1
        return x, y, None
    return sample


def model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return sf.DeepSet(2, 1, "max/max", hidden=8, equivariant_layers=1)


def weights(m: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in m.parameters()]


def unchanged(m: nn.Module, before: list[torch.Tensor]) -> bool:
    return all(torch.equal(a, b) for a, b in zip(m.parameters(), before))


# -- 1. clip ------------------------------------------------------------------------------------

BAD_CLIPS = [-1, -1e-3, 0, 0.0, math.nan, math.inf, -math.inf, True, "1"]


@pytest.mark.parametrize("clip", BAD_CLIPS, ids=repr)
def test_fit_refuses_a_clip_that_is_not_a_positive_finite_number(clip) -> None:
    m = model()
    before = weights(m)
    with pytest.raises(ValueError, match=r"clip must be a positive finite gradient norm .*or None for no clipping"):
        fit(m, sampler(), MSE, 5, lr=1e-2, clip=clip, progress=False)
    assert unchanged(m, before)


@pytest.mark.parametrize("clip", BAD_CLIPS, ids=repr)
def test_fit_ensemble_refuses_a_clip_that_is_not_a_positive_finite_number(clip) -> None:
    models = [model(0), model(1)]
    before = [weights(m) for m in models]
    with pytest.raises(ValueError, match=r"clip must be a positive finite gradient norm .*or None for no clipping"):
        fit_ensemble(models, [sampler(0), sampler(1)], MSE, 5, lr=1e-2, clip=clip, progress=False)
    assert all(unchanged(m, b) for m, b in zip(models, before))


def test_a_positive_clip_and_none_still_train() -> None:
    def learner(seed: int) -> nn.Module:
        torch.manual_seed(seed)
        return sf.DeepSet(2, 1, "sum/sum", hidden=16, equivariant_layers=1)

    def learned(losses: list[float]) -> bool:
        return len(losses) == 60 and np.mean(losses[-10:]) < 0.3 * np.mean(losses[:5])

    for clip in (None, 0.5, 1):
        assert learned(fit(learner(0), sampler(), MSE, 60, lr=1e-2, clip=clip, progress=False))
        logs = fit_ensemble([learner(0), learner(1)], [sampler(0), sampler(1)], MSE, 60, lr=1e-2, clip=clip,
                            progress=False)
        assert all(map(learned, logs))


# -- 2. steps -----------------------------------------------------------------------------------

BAD_STEPS = [2.5, 3.0, "3", True, False, 0, -2, None]


@pytest.mark.parametrize("steps", BAD_STEPS, ids=repr)
def test_fit_refuses_steps_that_are_not_a_positive_int(steps) -> None:
    m = model()
    before = weights(m)
    with pytest.raises(ValueError, match=r"steps must be a positive int \(the number of gradient steps\)"):
        fit(m, sampler(), MSE, steps, progress=False)
    assert unchanged(m, before)


@pytest.mark.parametrize("steps", BAD_STEPS, ids=repr)
def test_fit_ensemble_refuses_steps_that_are_not_a_positive_int(steps) -> None:
    models = [model(0), model(1)]
    with pytest.raises(ValueError, match=r"steps must be a positive int \(the number of gradient steps\)"):
        fit_ensemble(models, [sampler(0), sampler(1)], MSE, steps, progress=False)


def test_an_integer_of_another_type_is_a_step_count() -> None:
    assert len(fit(model(), sampler(), MSE, np.int64(4), progress=False)) == 4
    assert [len(log) for log in fit_ensemble([model(0), model(1)], [sampler(0), sampler(1)], MSE, np.int64(4),
                                             progress=False)] == [4, 4]


# -- 3. non-finite data -------------------------------------------------------------------------

@pytest.mark.parametrize("value, where, said", [(math.nan, "x", "x holds 1 NaN and 0 inf"),
                                                (math.inf, "x", "x holds 0 NaN and 1 inf"),
                                                (-math.inf, "y", "y holds 0 NaN and 1 inf")])
def test_a_non_finite_loss_from_non_finite_data_names_the_data(value: float, where: str, said: str) -> None:
    with pytest.raises(FloatingPointError) as raised:
        fit(model(), sampler(bad_at=7, value=value, where=where), MSE, 25, progress=False, read_every=10)
    message = str(raised.value)
    # a NaN makes its own step's loss NaN; an inf that tanh saturates leaves it finite, and makes the
    # next one NaN through the gradient's 0 * inf: then the batch of the step before is named
    assert ("after 7 steps, and the batch of that step (step 7," in message
            or "after 8 steps, and the batch of the step before it (step 7," in message)
    assert "holds non-finite values: " + said in message and "the data is at fault" in message
    assert "lower the learning rate" not in message
    assert ("index [2, 1, 0]" if where == "x" else "index [2, 0]") in message


def test_the_batch_before_a_read_is_kept_for_the_next_one() -> None:
    """An inf at the last step of a read (step 9 of ``read_every=10``) makes the loss NaN one step later,
    in the next read: the batch is still there to be named."""
    with pytest.raises(FloatingPointError, match=r"after 10 steps, and the batch of the step before it "
                                                 r"\(step 9, counting from 0\) holds non-finite values: x holds "
                                                 r"0 NaN and 1 inf"):
        fit(model(), sampler(bad_at=9, value=math.inf), MSE, 25, progress=False, read_every=10)


def test_a_non_finite_loss_from_finite_data_still_advises_the_learning_rate() -> None:
    """Padding that holds inf is no fault of the data: only real particles are read."""
    gen = torch.Generator().manual_seed(0)

    def padded():
        x = torch.randn(4, 6, 2, generator=gen)
        mask = torch.ones(4, 6, dtype=torch.bool)
        mask[:, 4:] = False
        x[:, 4:] = math.inf
        return x, torch.zeros(4, 1), mask

    with pytest.raises(FloatingPointError, match="after 0 steps; lower the learning rate") as raised:
        fit(model(), padded, lambda p, y: (p - y).sum() * math.inf, 3, progress=False)
    assert "non-finite values" not in str(raised.value)


def test_an_ensemble_names_the_data_of_the_model_whose_batch_held_nan() -> None:
    logs = fit_ensemble([model(0), model(1), model(2)], [sampler(0), sampler(1, bad_at=4), sampler(2)], MSE, 20,
                        progress=False, read_every=10)
    assert isinstance(logs[0], list) and isinstance(logs[2], list) and all(map(math.isfinite, logs[0] + logs[2]))
    assert isinstance(logs[1], FloatingPointError)
    assert "after 4 steps, and the batch of that step (step 4," in str(logs[1])
    assert "x holds 1 NaN and 0 inf" in str(logs[1])
    assert "lower the learning rate" not in str(logs[1])


def test_a_stacked_ensemble_sampler_is_read_per_model() -> None:
    gen = torch.Generator().manual_seed(0)
    calls = [0]

    def stacked():
        x = torch.randn(2, 8, 5, 2, generator=gen)
        if calls[0] == 3:
            x[0, 1, 2, 1] = math.inf
        calls[0] += 1
        return x, x.sum(2)[..., :1], None

    logs = fit_ensemble([model(0), model(1)], stacked, MSE, 10, progress=False, read_every=5)
    assert isinstance(logs[0], FloatingPointError) and isinstance(logs[1], list)
    assert "(step 3, counting from 0) holds non-finite values: x holds 0 NaN and 1 inf" in str(logs[0])
    assert "index [1, 2, 1]" in str(logs[0])


def test_the_data_is_read_only_when_a_loss_is_non_finite(monkeypatch) -> None:
    """No cost on the normal path: training on finite losses never looks at the batches' values."""
    def refuse(batch):
        raise AssertionError("the data was read although every loss was finite")
    monkeypatch.setattr(steps_module, "nonfinite_data", refuse)
    assert len(fit(model(), sampler(), MSE, 12, progress=False, read_every=5)) == 12
    assert len(fit_ensemble([model(0), model(1)], [sampler(0), sampler(1)], MSE, 12, progress=False,
                            read_every=5)[0]) == 12


# -- 4. the quantile's ends ---------------------------------------------------------------------

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _ends_batch(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """``[4, 5, 3]`` particles with infinities of both signs among the real ones, junk in padding."""
    gen = torch.Generator().manual_seed(49)
    x = torch.randn(4, 5, 3, generator=gen, dtype=torch.float64)
    x[0, :3, 0] = torch.tensor([1.0, 2.0, math.inf])           # the issue's {1, 2, inf}
    x[1, 1, 1] = -math.inf
    x[2, 0, 2], x[2, 3, 2] = math.inf, -math.inf
    x[3, :, 0] = math.inf                                       # all infinite
    x[3, :, 1] = -math.inf
    mask = torch.tensor([[True, True, True, False, False], [True, True, False, True, False],
                         [True, True, True, True, True], [True, False, True, False, True]])
    junk = torch.tensor([math.nan, math.inf, -math.inf, 1e30], dtype=torch.float64)
    x[~mask] = junk[torch.arange(int((~mask).sum())) % 4].unsqueeze(-1)
    return x.to(dtype), mask


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("q, extreme", [(0.0, sf.Min), (1.0, sf.Max), (0, sf.Min), (1, sf.Max)])
def test_the_quantiles_at_0_and_1_are_min_and_max_with_infinities(dtype, masked: bool, q, extreme) -> None:
    x, mask = _ends_batch(dtype)
    if not masked:
        x, mask = x[:, :3], None   # the first three particles, whatever they hold, are all real
        x = torch.where(torch.isnan(x), torch.ones_like(x), x)
    for quantile in (sf.Quantile(q), sf.aggregation(f"quantile({q})"), sf.aggregation("quantile", q=q)):
        got, want = quantile(x, mask), extreme()(x, mask)
        assert got.dtype == dtype and torch.equal(got, want), (quantile, got, want)
        assert torch.isinf(got).any()


def test_the_issues_case() -> None:
    x = torch.tensor([[[1.0], [2.0], [math.inf]]])
    assert sf.Quantile(1)(x).item() == math.inf == sf.Max()(x).item()
    assert sf.Quantile(0)(-x).item() == -math.inf == sf.Min()(-x).item()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_nan_among_real_particles_still_makes_the_ends_nan(dtype) -> None:
    x = torch.tensor([[[1.0], [math.nan], [math.inf]]], dtype=dtype)
    mask = torch.tensor([[True, True, False]])
    for q in (0.0, 1.0):
        assert torch.isnan(sf.Quantile(q)(x)).all() and torch.isnan(sf.Quantile(q)(x, mask)).all()
    assert sf.Quantile(1.0)(x[:, [0, 2]]).item() == math.inf


def test_the_ends_pass_their_gradient_to_the_order_statistic() -> None:
    x = torch.tensor([[[3.0], [1.0], [2.0]]], requires_grad=True)
    sf.Quantile(1.0)(x).sum().backward()
    assert x.grad.flatten().tolist() == [1.0, 0.0, 0.0]


def _frozen_plain() -> ModuleType:
    """Commit 15ac30f's ``setfuncs/plain.py`` (``tests/data/setfuncs_15ac30f``, whose quantile is bit for
    bit today's at interior q, ``tests/test_float32_outputs_unchanged.py``), as its own package."""
    if "setfuncs_15ac30f" not in sys.modules:
        frozen = Path(__file__).with_name("data") / "setfuncs_15ac30f"
        spec = importlib.util.spec_from_file_location("setfuncs_15ac30f", frozen / "__init__.py",
                                                      submodule_search_locations=[str(frozen)])
        package = importlib.util.module_from_spec(spec)
        sys.modules["setfuncs_15ac30f"] = package
        spec.loader.exec_module(package)
    return importlib.import_module("setfuncs_15ac30f.plain")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("q", [1e-9, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9, 1 - 1e-9])
def test_interior_quantiles_are_unchanged_bit_for_bit(dtype, q: float) -> None:
    """Interior q on finite data, infinities and NaN, masked and not: the values of the old formula
    (half precision: in float32, rounded once, as ``accumulate_in_float32`` says)."""
    old = _frozen_plain().Quantile(q)
    wide = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    gen = torch.Generator().manual_seed(7)
    finite = torch.randn(5, 7, 3, generator=gen, dtype=torch.float64) * 3
    for x, mask in [(finite, None), (finite, torch.rand(5, 7, generator=gen) < 0.6), _ends_batch(torch.float64)]:
        if mask is not None:
            mask[:, 0] = True
        x = x.to(dtype)
        now = sf.Quantile(q)(x, mask)
        before = old(x.to(wide), mask).to(dtype)
        assert now.dtype == dtype
        same = (now == before) & (torch.signbit(now) == torch.signbit(before)) | (now.isnan() & before.isnan())
        assert bool(same.all()), (q, dtype, now, before)
    median = sf.Median()(finite)
    assert torch.equal(median, torch.from_numpy(np.median(finite.numpy(), axis=1)))


# -- 5. pad_populations -------------------------------------------------------------------------

def test_populations_with_other_feature_counts_are_named() -> None:
    pops = [torch.randn(3, 3), torch.randn(2, 4), torch.randn(5, 3), torch.randn(1, 4)]
    with pytest.raises(ValueError, match="differ in their features") as raised:
        pad_populations(pops)
    message = str(raised.value)
    assert "population(s) [0, 2]: 3 features" in message and "population(s) [1, 3]: 4 features" in message
    assert "select or project the features" in message


def test_populations_of_other_dtypes_are_refused_not_rounded() -> None:
    pops = [torch.randn(3, 2), torch.randn(2, 2, dtype=torch.float64) / 3]
    with pytest.raises(ValueError, match="differ in their dtypes") as raised:
        pad_populations(pops)
    message = str(raised.value)
    assert "population(s) [0]: torch.float32" in message and "population(s) [1]: torch.float64" in message
    assert "convert them explicitly" in message and "p.to(torch.float64)" in message


def test_populations_on_other_devices_or_not_tensors_are_named() -> None:
    with pytest.raises(ValueError, match=r"differ in their devices \(population\(s\) \[0\]: cpu; "
                                         r"population\(s\) \[1\]: meta\); move them to one device"):
        pad_populations([torch.randn(3, 2), torch.randn(2, 2, device="meta")])
    with pytest.raises(TypeError, match="population 1 must be a torch.Tensor of shape \\[N, D\\], got list"):
        pad_populations([torch.randn(3, 2), [[1.0, 2.0]]])


def test_populations_that_agree_still_pad() -> None:
    for dtype in DTYPES:
        pops = [torch.randn(3, 2).to(dtype), torch.randn(1, 2).to(dtype)]
        x, mask = pad_populations(pops, value=-1.0)
        assert x.dtype == dtype and x.shape == (2, 3, 2)
        assert mask.tolist() == [[True, True, True], [True, False, False]]
        assert torch.equal(x[1, 1:], torch.full((2, 2), -1.0, dtype=dtype)) and torch.equal(x[0], pops[0])


# -- 6. the meta device and torch.jit.script -----------------------------------------------------

def test_a_model_on_the_meta_device_is_refused_in_one_line() -> None:
    for device in (None, "cpu"):
        with pytest.raises(ValueError, match="DeepSet has tensors on the meta device.*no data to train on"):
            fit(model().to("meta"), sampler(), MSE, 3, progress=False, device=device)
        with pytest.raises(ValueError, match="DeepSet has tensors on the meta device.*no data to train on"):
            fit_ensemble([model(0).to("meta"), model(1).to("meta")], [sampler(0), sampler(1)], MSE, 3,
                         progress=False, device=device)
    with pytest.raises(ValueError, match="got 'meta' .*no data to train on"):
        fit(model(), sampler(), MSE, 3, progress=False, device="meta")


@pytest.mark.parametrize("spec", MODEL_SPECS)
def test_torch_jit_script_is_answered_in_one_line(spec: str) -> None:
    m = sf.DeepSet(2, 3, spec, hidden=4, equivariant_layers=1)
    for target in (m, nn.Sequential(m, nn.Tanh())):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # torch 2.13 deprecates TorchScript
            with pytest.raises(TypeError, match="torch.jit.script cannot compile DeepSet.*torch.compile"):
                torch.jit.script(target)


@every_aggregation
def test_torch_jit_script_of_an_aggregation_or_its_layer_is_answered_in_one_line(case: AggregationCase) -> None:
    """Every aggregation, alone and inside an equivariant layer: the package's one TypeError, not a failure
    deep inside TorchScript's compiler."""
    aggregation = case.build(3)
    for target in (aggregation, sf.Equivariant(3, 3, aggregation)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(TypeError, match=f"torch.jit.script cannot compile {type(aggregation).__name__} .*torch.compile"):
                torch.jit.script(target)


def test_the_model_still_copies_and_runs() -> None:
    m = model()
    x = torch.randn(3, 4, 2)
    assert torch.equal(copy.deepcopy(m)(x), m(x))


# -- 7. GPUs that are not here ------------------------------------------------------------------

def test_a_cuda_index_names_the_device_count_here() -> None:
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    for device in (f"cuda:{count}", f"cuda:{count + 3}", torch.device("cuda", count)):
        with pytest.raises(ValueError, match=rf"device '{torch.device(device)}': .*"
                                             rf"torch.cuda.device_count\(\) = {count}"):
            resolve_device(device)
        with pytest.raises(ValueError, match=rf"torch.cuda.device_count\(\) = {count}"):
            fit(model(), sampler(), MSE, 2, progress=False, device=device)


def test_a_cuda_index_past_the_count_is_refused_where_gpus_are(monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_device("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(ValueError, match=r"device 'cuda:2': this machine has 2 CUDA GPUs .*cuda:0 to cuda:1"):
        resolve_device("cuda:2")
