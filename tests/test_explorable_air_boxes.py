r"""Chapter 11's boxes explorable (``setfuncs.explorables.air_boxes``): the browser's AIR inference
(``js/air.js`` on :func:`~setfuncs.explorables.air_weights.export_air`) is the torch model's.

One node run compares, for a ``mean`` and an ``r-lse`` (two reads, backward readout) set localiser with
weights drawn wide (so that the boxes reach the canvas's edges, where the glimpse reads zeros, and the
glimpse-frame coordinates hit their clip at :math:`\pm 3`), on a random canvas and a digit canvas and
populations of 1, 7 and 60 particles, every step's presence logit, :math:`z^\text{where}`,
:math:`z^\text{what}`, pixel box and :math:`q(N = k)`:

* against torch in **float32** with the model's own weights (what the book trains and runs), within
  :data:`ATOL`, boxes in units of half the canvas side (the normalised frame). Measured: at most
  :math:`3 \cdot 10^{-6}` on :math:`z^\text{where}`, :math:`2.5 \cdot 10^{-5}` pixels on the boxes of a
  16-pixel canvas, :math:`2 \cdot 10^{-6}` on the logits and :math:`10^{-7}` on :math:`q(N = k)`;
* against torch in **float64** on the weights the export holds, within :data:`EXACT` (the same
  arithmetic; measured: at most :math:`4 \cdot 10^{-14}`), float16 exports included;
* a float16 export against the float32 model within :data:`HALF` (the rounding of the weights;
  measured: at most 0.034 pixels on the boxes, :math:`4 \cdot 10^{-3}` on :math:`z^\text{where}`,
  :math:`4 \cdot 10^{-4}` on :math:`q(N = k)`).

And: ``AIR.infer(noise=False)`` runs the means, its default still samples; the export refuses what the
browser does not compute; the chapter's call starts on a two-digit canvas with a light state; in
chromium, the page's solid boxes are the ones it counts.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from explorable_harness import harness_page, in_node
from setfuncs.experiments.attention.air import AIR
from setfuncs.experiments.attention.canvas import SURROGATE, make_canvases
from setfuncs.experiments.attention.transformer import where_to_boxes
from setfuncs.explorables.air_boxes import AirBoxes, infer_boxes
from setfuncs.explorables.air_weights import export_air, load_air

#: Tolerance of the page's float64 against torch's float32 (z, logits, probabilities, boxes in half sides).
ATOL = 1e-4
#: Tolerance against torch in float64 on the exported weights.
EXACT = 1e-9
#: A float16 export against the float32 model: boxes in pixels, probabilities.
HALF = {"boxes": 0.1, "q": 0.01}
#: Population sizes of the comparison.
SIZES = (1, 7, 60)
SIDE = 16


def wide_model(spec: str, seed: int) -> AIR:
    """A small AIR with ``spec``'s set localiser, its localiser's and encoder's weights drawn from N(0, 0.5^2)."""
    torch.manual_seed(seed)
    model = AIR(spec, canvas_size=SIDE, glimpse_size=5, what_features=3, hidden=12, set_hidden=8, steps=2,
                readout="backward").eval()
    with torch.no_grad():
        for weight in [*model.localiser.parameters(), *model.encoder.parameters()]:
            weight.normal_(0, 0.5)
    return model


def scenes() -> list[tuple[np.ndarray, np.ndarray]]:
    """Canvases ``[H, H]`` (random; a digit canvas) and populations ``[n, 2]`` of every size in :data:`SIZES`."""
    rng = np.random.default_rng(0)
    digits = make_canvases(4, seed=3, canvas_size=SIDE, digit_sizes=(6, 8)).images
    canvases = [rng.random((SIDE, SIDE)), digits[int(np.argmax(digits.sum(axis=(1, 2))))].astype(np.float64)]
    return [(canvas, rng.uniform(-1, 1, (n, 2))) for canvas in canvases for n in SIZES]


def torch_inference(model: AIR, canvas: np.ndarray, particles: np.ndarray, dtype: torch.dtype) -> dict[str, np.ndarray]:
    """The means' inference of ``model`` in ``dtype``, as the page returns it."""
    model = model.to(dtype)
    with torch.no_grad():
        inference = model.infer(torch.as_tensor(canvas, dtype=dtype)[None], torch.as_tensor(particles, dtype=dtype)[None],
                                noise=False)
        q = model.count_log_probs(inference.presence_logits).exp()
    return {"logits": inference.presence_logits[0].double().numpy(), "where": inference.where[0].double().numpy(),
            "boxes": where_to_boxes(inference.where, model.canvas_size)[0].double().numpy(),
            "q": q[0].double().numpy()}


@pytest.fixture(scope="module")
def node_runs() -> dict[str, list[dict]]:
    """The page's inference for every model and scene, from one node run: name -> one result per scene."""
    models = {"mean": wide_model("mean", 1), "r-lse": wide_model("r-lse", 2)}
    exports = {name: export_air(model) for name, model in models.items()}
    exports |= {f"{name} float16": export_air(model, "float16") for name, model in models.items()}
    cases = [{"name": name, "model": exported, "canvas": canvas.ravel().tolist(), "particles": particles.tolist()}
             for name, exported in exports.items() for canvas, particles in scenes()]
    results = in_node("air", "(m, c) => m.airInfer(c.model, c.canvas, c.particles)", cases)
    runs: dict[str, list[dict]] = {}
    for case, result in zip(cases, results):
        runs.setdefault(case["name"], []).append(result)
    return {"models": models, "exports": exports, "runs": runs}


def compare(page: dict, truth: dict[str, np.ndarray], atol: float) -> dict[str, float]:
    """The largest difference of each quantity, boxes in half canvas sides (failing beyond ``atol``)."""
    unit = {"boxes": SIDE / 2}
    found = {key: float(np.abs(np.asarray(page[key]) - truth[key]).max()) / unit.get(key, 1) for key in truth}
    assert all(v <= atol for v in found.values()), found
    return found


@pytest.mark.parametrize("name", ["mean", "r-lse"])
def test_the_page_infers_what_torch_infers_in_float32(node_runs: dict, name: str) -> None:
    model = node_runs["models"][name]
    for (canvas, particles), page in zip(scenes(), node_runs["runs"][name]):
        compare(page, torch_inference(model, canvas, particles, torch.float32), ATOL)
        assert page["count"] == int(np.argmax(page["q"])) and len(page["what"]) == model.max_steps


@pytest.mark.parametrize("name", ["mean", "r-lse", "mean float16", "r-lse float16"])
def test_the_page_computes_the_exported_model_exactly(node_runs: dict, name: str) -> None:
    model = load_air(node_runs["exports"][name])
    for (canvas, particles), page in zip(scenes(), node_runs["runs"][name]):
        compare(page, torch_inference(model, canvas, particles, torch.float64), EXACT)


def test_the_scenes_reach_the_canvas_edges_and_the_clip(node_runs: dict) -> None:
    outside = clipped = False
    for name in ("mean", "r-lse"):
        for (_, particles), page in zip(scenes(), node_runs["runs"][name]):
            where = np.asarray(page["where"])
            outside |= bool((np.abs(where[:, 1:]) + where[:, :1] > 1).any())
            relative = (particles[:, None, :] - where[None, :-1, 1:]) / where[None, :-1, :1]
            clipped |= bool((np.abs(relative) > 3).any())
    assert outside, "some glimpse reads outside the canvas"
    assert clipped, "some particle lies beyond the clip of an earlier glimpse's frame"


@pytest.mark.parametrize("name", ["mean", "r-lse"])
def test_a_float16_export_moves_boxes_and_probabilities_little(node_runs: dict, name: str) -> None:
    model = node_runs["models"][name]
    for (canvas, particles), page in zip(scenes(), node_runs["runs"][f"{name} float16"]):
        truth = torch_inference(model, canvas, particles, torch.float32)
        assert np.abs(np.asarray(page["boxes"]) - truth["boxes"]).max() <= HALF["boxes"]
        assert np.abs(np.asarray(page["q"]) - truth["q"]).max() <= HALF["q"]


def test_infer_without_noise_runs_the_means_and_by_default_samples() -> None:
    model = wide_model("mean", 3)
    canvas, particles = torch.rand(2, SIDE, SIDE), torch.rand(2, 9, 2) * 2 - 1
    with torch.no_grad():
        means = model.infer(canvas, particles, noise=False)
        again = model.infer(canvas, particles, noise=False)
        torch.manual_seed(5)
        sampled = model.infer(canvas, particles)
        torch.manual_seed(5)
        resampled = model.infer(canvas, particles, noise=True)
    assert torch.equal(means.where, means.where_mean) and torch.equal(means.where, again.where)
    assert torch.equal(sampled.where, resampled.where) and not torch.equal(sampled.where, sampled.where_mean)


def test_the_export_refuses_what_the_page_does_not_compute() -> None:
    with pytest.raises(ValueError, match="set localiser"):
        export_air(AIR("image", canvas_size=SIDE, hidden=8))
    with pytest.raises(ValueError, match="precision"):
        export_air(wide_model("mean", 0), "bfloat16")
    exported = export_air(wide_model("mean", 0))
    with pytest.raises(ValueError, match="format"):
        load_air({**exported, "format": 0})
    with pytest.raises(ValueError, match="AIR\\(\\*\\*arguments\\)"):
        load_air({**exported, "min_scale": 0.1})


def test_readouts_are_the_models_inference() -> None:
    widget = AirBoxes.example()
    state = dict(widget.state)
    values = AirBoxes.readouts({**state, "canvas": 4, "n": 50})
    canvas = state["canvases"][4]
    image = np.asarray(canvas["levels"], dtype=np.float64).reshape(state["size"], state["size"]) / state["levels"]
    from setfuncs.explorables.digit_particles import sample_population

    found = infer_boxes(load_air(state["model"]), image, sample_population(canvas["levels"], state["size"], 50, state["seed"]))
    assert values["count"] == np.argmax(found["q"]) and sum(values[f"q{k}"] for k in range(4)) == pytest.approx(1)
    assert values["box2_x"] == pytest.approx(found["where"][1, 1]) and values["present3"] == pytest.approx(found["present"][2])
    with pytest.raises(ValueError, match="images: the model reads 32 x 32"):
        AirBoxes(np.zeros((2, 8, 8)), [0, 0], np.zeros((2, 2, 4)), load_air(state["model"]))


def test_the_chapter_call_starts_on_a_two_digit_canvas_with_a_light_state() -> None:
    from setfuncs.experiments.attention.budget import QUICK
    from setfuncs.experiments.attention.canvas import MULTI_MNIST
    from setfuncs.experiments.attention.lesson import LiveRun, boxes_explorable
    from setfuncs.experiments.attention.train import make_air

    torch.manual_seed(0)
    run = LiveRun("mean", 0, QUICK, make_air("mean", QUICK, SURROGATE).eval(), (1.0,), 1, 0.0, SURROGATE)
    test = make_canvases(30, seed=4)
    state = boxes_explorable(run, test).state
    assert [c["count"] for c in state["canvases"]] == [0, 1, 2, 0, 1, 2] and state["canvas"] == 2
    assert state["n"] == state["trained"] == QUICK.particles and state["model"]["precision"] == "float16"
    assert len(json.dumps(state, separators=(",", ":"))) < 150_000
    with pytest.raises(ValueError, match="test: the live model was trained on"):
        boxes_explorable(run, make_canvases(6, seed=4, geometry=MULTI_MNIST))


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory):
    yield from harness_page(tmp_path_factory, "air_boxes", AirBoxes.example().state)


def test_the_page_draws_the_counted_boxes_solid_and_a_new_draw_follows_python(page) -> None:
    page.locator('[data-control="n"]').fill("2.478")  # log10 of n, on the slider's steps
    page.get_by_role("button", name="draw a new population (next seed)").click()
    state = page.evaluate("() => window.__state")
    assert state["seed"] == 2 and state["n"] == round(10 ** 2.478) == 301
    shown = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll("[data-readout]")]
        .map((node) => [node.dataset.readout, Number(node.dataset.value)]))""")
    for key, value in AirBoxes.readouts(state).items():
        assert shown[key] == pytest.approx(value, abs=AirBoxes.tolerance), key
    solid = page.locator("svg rect:not([stroke-dasharray])[stroke-opacity='1']").count()
    assert solid == shown["count"]
