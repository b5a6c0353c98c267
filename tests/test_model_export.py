r"""The browser's forward pass (``setfuncs/explorables/js/deepset.js``) of a model exported by
:func:`setfuncs.explorables.weights.export_model` is the model's: for every kind of embed, combine,
aggregate and process the export supports, node's outputs :math:`r` and attention weights
:math:`w_{t,i}` (of a learnable final aggregation) match torch's.

Two comparisons per model and population, from one node run for the whole module:

* against torch in **float32** with the model's own weights, the way the book trains and runs it:
  within :data:`ATOL` + :data:`RTOL` :math:`|r|`. The export holds the float32 weights exactly, and
  float32 rounds every operation (about 6e-8); through the few layers of width 8-16 here that moves
  the outputs by a few 1e-6 at most, so 1e-4 leaves a factor of ten and more while catching any wrong
  formula (which moves outputs by 1e-2 and more);
* against torch in **float64** on the weights the export holds: the same function in the same
  arithmetic, so within :data:`EXACT` (summation order is all that differs); for float16 exports too,
  against the model with its weights cast to float16.

:func:`~setfuncs.explorables.weights.load_model` rebuilds the model from the export alone (what the
explorables' Python read-outs use): its outputs are the model's, bit for bit, and an export it
cannot rebuild is refused.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import torch
from torch import nn

import setfuncs as sf
from setfuncs.explorables.weights import FORMAT, decode, export_model, load_model

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "tests" / "deepset_runner.mjs"
SCRIPT = ROOT / "setfuncs" / "explorables" / "js" / "deepset.js"
#: Tolerance against torch in float32 (the module's docstring says why).
ATOL = RTOL = 1e-4
#: Tolerance against torch in float64 with the exported weights.
EXACT = 1e-9
#: Particle counts of the populations every model reads.
SIZES = (1, 2, 5, 33)


def _gelu_tanh(model: sf.DeepSet) -> None:
    model.process[1] = nn.GELU(approximate="tanh")


def _bare_power_mean(model: sf.DeepSet) -> None:
    model.aggregate = sf.PowerMean(1.5, features=2)


def _learnable_temperature(model: sf.DeepSet) -> None:
    model.aggregate = sf.SoftmaxWeightedSum(0.7, learnable=True, features=8)


#: Name -> DeepSet arguments (in 2, out 3, hidden 8 unless given), an optional change of the built
#: model, and whether its particles must be positive.
CASES: dict[str, tuple[dict, Callable[[sf.DeepSet], None] | None, bool]] = {
    "max/max": ({}, None, False),
    "sum/mean": ({"spec": "sum/mean"}, None, False),
    "lse/lme": ({"spec": "lse/lme"}, None, False),
    "pmean(2)/pmean(-1)": ({"spec": "pmean(2)/pmean(-1)"}, None, False),
    "pmean(0)/pmean(0.005)": ({"spec": "pmean(0)/pmean(0.005)"}, None, False),
    "median/quantile(0.3)": ({"spec": "median/quantile(0.3)"}, None, False),
    "quantile(0)/quantile(1)": ({"spec": "quantile(0)/quantile(1)"}, None, False),
    "softmax/softmax(0.5)": ({"spec": "softmax/softmax(0.5)"}, None, False),
    "r-max/r-lse": ({"spec": "r-max/r-lse"}, None, False),
    "max/r-sum": ({"spec": "max/r-sum"}, None, False),
    "max/rpw": ({"spec": "max/rpw"}, None, False),
    "rpw/rpw": ({"spec": "rpw/rpw"}, None, False),
    "max/q-sum": ({"spec": "max/q-sum"}, None, False),
    "q-max/q-min": ({"spec": "q-max/q-min"}, None, False),
    "q-lme/q-median": ({"spec": "q-lme/q-median"}, None, False),
    "r-sum/r-mean": ({"spec": "r-sum/r-mean"}, None, False),
    "r-min/r-median": ({"spec": "r-min/r-median"}, None, False),
    "r-lme/r-max": ({"spec": "r-lme/r-max"}, None, False),
    "r-lse/r-lme log": ({"spec": "r-lse/r-lme", "learnable_options": {"weighting": "log"}}, None, False),
    "q-max/r-max log sigmoid": ({"spec": "q-max/r-max", "learnable_options": {"weighting": "log",
                                                                             "normalize": "sigmoid"}}, None, False),
    "r-lse/q-lse log softmax": ({"spec": "r-lse/q-lse", "learnable_options": {"weighting": "log",
                                                                             "normalize": "softmax"}}, None, False),
    "r-sum/q-mean sigmoid": ({"spec": "r-sum/q-mean", "learnable_options": {"normalize": "sigmoid"}}, None, False),
    "r-max/q-lse identity": ({"spec": "r-max/q-lse", "learnable_options": {"normalize": "identity"}}, None, False),
    "r-sum/r-sum softmax-n": ({"spec": "r-sum/r-sum", "learnable_options": {"normalize": "softmax-n"}}, None, False),
    "r-mean/r-lse readout last": ({"spec": "r-mean/r-lse", "learnable_options": {"readout": "last"}}, None, False),
    "max/r-lse steps 1": ({"spec": "max/r-lse", "steps": 1}, None, False),
    "max/r-lse steps 5": ({"spec": "max/r-lse", "steps": 5}, None, False),
    "equivariant 0, max/sum": ({"spec": "max/sum", "equivariant_layers": 0}, None, False),
    "equivariant 0, max/r-lse": ({"spec": "max/r-lse", "equivariant_layers": 0}, None, False),
    "equivariant 1, lse/max": ({"spec": "lse/max", "equivariant_layers": 1}, None, False),
    "equivariant 3, r-lse/q-sum": ({"spec": "r-lse/q-sum", "equivariant_layers": 3}, None, False),
    "deepsets max/max": ({"layer": "deepsets"}, None, False),
    "deepsets r-lse/pmean(2)": ({"spec": "r-lse/pmean(2)", "layer": "deepsets"}, None, False),
    "embed 0": ({"embed_layers": 0}, None, False),
    "embed 0, deepsets rpw/r-sum": ({"spec": "rpw/r-sum", "embed_layers": 0, "layer": "deepsets"}, None, False),
    "embed 0, equivariant 0": ({"spec": "max/mean", "embed_layers": 0, "equivariant_layers": 0}, None, False),
    "embed 2": ({"spec": "mean/r-lse", "embed_layers": 2}, None, False),
    "relu": ({"spec": "max/q-sum", "activation": "relu"}, None, False),
    "elu": ({"spec": "lse/r-max", "activation": "elu"}, None, False),
    "gelu": ({"spec": "r-sum/max", "activation": "gelu"}, None, False),
    "gelu tanh": ({}, _gelu_tanh, False),
    "identity": ({"spec": "sum/lse", "activation": "identity"}, None, False),
    "process 1": ({"process_layers": 1}, None, False),
    "process 3, dropout": ({"spec": "max/rpw", "process_layers": 3, "dropout": 0.5}, None, False),
    "hidden 16, r-lse/r-lse": ({"spec": "r-lse/r-lse", "hidden": 16}, None, False),
    "bare power mean": ({"spec": "max/pmean(2)", "embed_layers": 0, "equivariant_layers": 0}, _bare_power_mean, True),
    "learnable temperature": ({"spec": "max/softmax"}, _learnable_temperature, False),
}


def _build(index: int, arguments: dict, change: Callable[[sf.DeepSet], None] | None) -> sf.DeepSet:
    """A seeded model, its weights moved off the initialisation (so attention is not uniform), in eval mode."""
    torch.manual_seed(index)
    model = sf.DeepSet(2, 3, **{"hidden": 8, **arguments})
    if change is not None:
        change(model)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.3 * torch.randn_like(parameter))
    return model.eval()


def _populations(index: int, positive: bool) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(1000 + index)
    found = [2.0 * torch.randn(n, 2, generator=generator) for n in SIZES]
    return [x.abs() + 0.1 for x in found] if positive else found


def _exported_float64(model: sf.DeepSet, precision: str = "float32") -> sf.DeepSet:
    """A float64 copy of ``model`` whose weights are the export's (cast to ``precision`` and back)."""
    copied = copy.deepcopy(model)
    with torch.no_grad():
        for tensor in [*copied.parameters(), *copied.buffers()]:
            if tensor.is_floating_point():
                tensor.copy_(tensor.to(getattr(torch, precision)).float())
    return copied.double()


def _torch(model: sf.DeepSet, x: torch.Tensor) -> tuple[np.ndarray, np.ndarray | None]:
    """The output ``[out]`` and, for a learnable final aggregation, its weights ``[T, N]``."""
    with torch.no_grad():
        output = model(x[None])[0].numpy()
        reads = None
        if isinstance(model.aggregate, (sf.QueryAggregation, sf.RecurrentAggregation)):
            reads = model.aggregate.attend(model.memory(x[None]))[1][0].numpy()
    return output, reads


def _node(cases: list[dict]) -> list[list[dict]]:
    """``deepset_runner.mjs``'s results for ``[{model, populations}, ...]``, in one node process."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the book's browser forward pass (js/explorables/deepset.js) is tested "
                    "in node, a build requirement of the book (Node 20; `make setup` expects it)")
    run = subprocess.run([node, str(RUNNER)], input=json.dumps(cases, allow_nan=False), capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, f"node {RUNNER.name} failed:\n{run.stderr}"
    return json.loads(run.stdout)


BAD_INPUTS = {
    "three features": [[0.0, 1.0, 2.0]],
    "no particle": [],
    "a string": [[0.0, "1"]],
}


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[sf.DeepSet, list[torch.Tensor], list[dict]]]:
    """Every case of :data:`CASES`, exported and run by node: ``{name: (model, populations, results)}``;
    the key ``"bad input"`` holds the results of :data:`BAD_INPUTS` and of a wrong format."""
    built = {}
    for index, (name, (arguments, change, positive)) in enumerate(CASES.items()):
        built[name] = (_build(index, arguments, change), _populations(index, positive))
    payload = [{"model": export_model(model), "populations": [x.tolist() for x in xs]} for model, xs in built.values()]
    payload += [{"model": export_model(model, "float16"), "populations": [x.tolist() for x in xs]}
                for model, xs in built.values()]
    model = export_model(built["max/max"][0])
    payload += [{"model": model, "populations": list(BAD_INPUTS.values())},
                {"model": {**model, "format": FORMAT + 1}, "populations": [[[0.0, 1.0]]]}]
    results = _node(payload)
    runs = {name: (*built[name], result) for name, result in zip(built, results)}
    runs.update({f"{name} float16": (*built[name], result) for name, result in zip(built, results[len(built):])})
    runs["bad input"] = (None, [], results[-2] + results[-1])
    return runs


def _close(js: list, expected: np.ndarray, atol: float, rtol: float) -> None:
    found = np.asarray(js, dtype=np.float64)
    assert found.shape == expected.shape
    np.testing.assert_allclose(found, expected, atol=atol, rtol=rtol)


@pytest.mark.parametrize("name", CASES)
def test_the_browser_computes_the_models_float32_outputs_and_reads(runs: dict, name: str) -> None:
    model, populations, results = runs[name]
    for x, result in zip(populations, results):
        assert "error" not in result, result
        output, reads = _torch(model, x)
        _close(result["output"], output, ATOL, RTOL)
        if reads is None:
            assert result["reads"] is None
        else:
            _close(result["reads"], reads, ATOL, RTOL)


@pytest.mark.parametrize("name", CASES)
def test_the_browser_computes_the_exported_function_in_float64(runs: dict, name: str) -> None:
    model, populations, results = runs[name]
    exact = _exported_float64(model)
    for x, result in zip(populations, results):
        output, reads = _torch(exact, x.double())
        _close(result["output"], output, EXACT, EXACT)
        if reads is not None:
            _close(result["reads"], reads, EXACT, EXACT)


def test_the_browser_refuses_bad_input_with_a_message(runs: dict) -> None:
    three, empty, string, wrong_format = [result["error"] for result in runs["bad input"][2]]
    assert "particle 0 must be an array of 2 finite numbers" in three
    assert "at least one particle" in empty
    assert "particle 0 must be an array of 2 finite numbers" in string
    assert f"format-{FORMAT}" in wrong_format


@pytest.mark.parametrize("name", CASES)
def test_a_float16_export_computes_its_own_weights(runs: dict, name: str) -> None:
    model, populations, results = runs[f"{name} float16"]
    half = _exported_float64(model, "float16")
    for x, result in zip(populations, results):
        output, reads = _torch(half, x.double())
        _close(result["output"], output, EXACT, EXACT)
        if reads is not None:
            _close(result["reads"], reads, EXACT, EXACT)


def test_the_export_is_json_and_light() -> None:
    model = _build(0, {"hidden": 64}, None)
    exported = export_model(model)
    text = json.dumps(exported, allow_nan=False)
    assert json.loads(text) == exported
    parameters = sum(p.numel() for p in model.parameters())
    assert len(text) < 6 * parameters + 20_000, "about 5.3 characters a float32 weight"
    assert len(json.dumps(export_model(model, "float16"))) < 3 * parameters + 20_000
    assert {"spec", "in_features", "out_features"} <= exported.keys()
    assert (exported["spec"], exported["in_features"], exported["out_features"]) == ("max/max", 2, 3)


def test_weights_are_exported_in_the_precision_asked() -> None:
    model = _build(0, {}, None)
    weight = model.process[0].weight.detach()
    assert np.array_equal(decode(export_model(model)["process"][0]["weight"]), weight.double().numpy())
    halved = weight.half().double().numpy()
    assert np.array_equal(decode(export_model(model, "float16")["process"][0]["weight"]), halved)
    assert not np.array_equal(halved, weight.double().numpy())


@pytest.mark.parametrize("name", [name for name, (_, change, _) in CASES.items() if change is None])
def test_load_model_rebuilds_the_model_from_its_export(runs: dict, name: str) -> None:
    model, populations, _ = runs[name]
    loaded = load_model(json.loads(json.dumps(export_model(model))))
    for x in populations:
        with torch.no_grad():
            assert torch.equal(loaded(x[None]), model.eval()(x[None]))


def test_load_model_refuses_an_export_of_another_architecture() -> None:
    changed = sf.DeepSet(2, 3, hidden=8)
    changed.process[1] = nn.ReLU()  # the constructor's arguments say tanh
    with pytest.raises(ValueError, match="not what DeepSet"):
        load_model(export_model(changed))


class _Doubled(sf.Sum):
    def reduce(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        return 2 * super().reduce(x, mask)


class _OwnForward(sf.DeepSet):
    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return 2 * super().forward(x, mask)


def _set(path: str, value: object) -> Callable[[sf.DeepSet], sf.DeepSet]:
    """A change to a fresh model: put ``value`` at the dotted attribute ``path`` (numbers index)."""
    def change(model: sf.DeepSet) -> sf.DeepSet:
        *parents, last = path.split(".")
        owner = model
        for part in parents:
            owner = owner[int(part)] if part.isdigit() else getattr(owner, part)
        if last.isdigit():
            owner[int(last)] = value
        else:
            setattr(owner, last, value)
        return model
    return change


def _nan_weight(model: sf.DeepSet) -> sf.DeepSet:
    with torch.no_grad():
        model.process[0].weight[0, 0] = float("nan")
    return model


UNSUPPORTED = {
    "a subclass of an aggregation": ({}, _set("aggregate", _Doubled()),
                                     r"aggregate is _Doubled.*supports the aggregations"),
    "an activation": ({}, _set("process.1", nn.Sigmoid()), r"process\[1\] is Sigmoid.*supports the activations"),
    "a layer in embed": ({}, _set("embed.1", nn.LayerNorm(8)), r"embed\[1\] is LayerNorm.*supports the activations"),
    "an equivariant layer": ({}, _set("combine.0", nn.Linear(8, 8)),
                             r"combine\[0\] is Linear.*Equivariant and DeepSetsEquivariant"),
    "an aggregation in a layer": ({}, _set("combine.1.aggregate", _Doubled()), r"combine\[1\]\.aggregate is _Doubled"),
    "a module in place of one": ({}, _set("aggregate", nn.Identity()), r"Identity \(not an Aggregation\).*supports"),
    "a swapped reduce": ({"spec": "max/r-lse"}, _set("aggregate.reducer", sf.Max()), r"reducer is Max for reduce='lse'"),
    "a two-layer readout": ({"spec": "max/r-lse"},
                            _set("aggregate.backward_rnn", nn.LSTM(8, 8, num_layers=2, batch_first=True)),
                            r"backward_rnn is LSTM.*one layer"),
    "a non-finite weight": ({}, _nan_weight, r"process\[0\]\.weight holds non-finite weights"),
}


@pytest.mark.parametrize("name", UNSUPPORTED)
def test_what_the_browser_does_not_compute_is_refused(name: str) -> None:
    arguments, change, message = UNSUPPORTED[name]
    model = change(sf.DeepSet(2, 3, **{"hidden": 8, **arguments}))
    with pytest.raises(ValueError, match=message):
        export_model(model)


def test_other_models_and_precisions_are_refused() -> None:
    with pytest.raises(ValueError, match="overrides DeepSet.forward"):
        export_model(_OwnForward(2, 3, hidden=8))
    with pytest.raises(ValueError, match="exports a setfuncs.DeepSet, got Linear"):
        export_model(nn.Linear(2, 3))
    with pytest.raises(ValueError, match="precision must be one of"):
        export_model(sf.DeepSet(2, 3, hidden=8), "float8")


def test_the_script_can_be_inlined_with_others() -> None:
    """No import, no default export, and every top-level name not exported starts with ``ds``."""
    source = SCRIPT.read_text(encoding="utf-8")
    assert not re.search(r"^\s*import\b", source, re.MULTILINE)
    assert "export default" not in source and not re.search(r"^export\s*\{", source, re.MULTILINE)
    declared = re.findall(r"^(export\s+)?(?:function|const|let|var|class)\s+([A-Za-z_$][\w$]*)", source, re.MULTILINE)
    assert sorted(name for exported, name in declared if exported) == ["DEEPSET_FORMAT", "decodeTensors", "forward", "layers",
                                                                       "linear", "logSigmoid", "lstmCell", "sigmoid"]
    assert [name for exported, name in declared if not exported and not name.startswith("ds")] == []
