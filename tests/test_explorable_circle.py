"""Chapter 8's explorable (:mod:`setfuncs.explorables.circle`): its own algorithms, in node and in the page.

* ``js/welzl.js`` against ``miniball`` (an independent solver) on random populations, awkward ones
  included (co-circular, collinear, duplicated, far from the origin, one or two particles): every
  particle inside the circle, centre and radius within 1e-9 of miniball's, the support on the circle;
* ``js/circle_data.js``'s populations against Python's :func:`~setfuncs.explorables.circle.population`
  (the same mulberry32 draws) and against the experiment's mixture in distribution;
* the models: the browser's forward pass of the page's weights (``js/deepset.js``) gives torch's
  outputs of :func:`~setfuncs.explorables.weights.load_model` of them;
* in chromium, a population the reader edits (arrow keys, Delete, the add button, a click): the
  page's read-outs are Python's for the particles it draws.

The browser test of every explorable (``tests/test_explorables.py``) compares the page's read-outs
with :meth:`EnclosingCircle.readouts` at the probes.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess

import numpy as np
import pytest
import torch

from setfuncs.experiments.circle import min_enclosing_circle, sample_populations
from setfuncs.explorables.circle import EnclosingCircle, mixture, population, view
from explorable_harness import book_page
from setfuncs.explorables.esm import module_source

RUNNER = """
import {{ welzlCircle }} from "data:text/javascript;base64,{welzl}";
import {{ circlePopulation, circleView }} from "data:text/javascript;base64,{data}";
import {{ forward }} from "data:text/javascript;base64,{deepset}";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const task = JSON.parse(input);
process.stdout.write(JSON.stringify({{
  welzl: task.welzl.map((points) => welzlCircle(points)),
  populations: task.populations.map(([seed, size]) => circlePopulation(seed, size, task.mixture)),
  forward: task.forward.map(({{ model, x }}) => forward(model, x).output),
  views: task.views.map(([center, radius]) => circleView(center, radius, 2.5)),
}}));
"""


def _module(name: str) -> str:
    return base64.b64encode(module_source(name).encode()).decode("ascii")


def run_node(task: dict, tmp_path) -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the book's explorables are tested in node (Node 20)")
    script = tmp_path / "runner.mjs"
    script.write_text(RUNNER.format(welzl=_module("welzl"), data=_module("circle_data"), deepset=_module("deepset")),
                      encoding="utf-8")
    run = subprocess.run([node, str(script)], input=json.dumps(task, allow_nan=False), capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def awkward_populations() -> list[np.ndarray]:
    """Random populations of the task and of other shapes, with the cases that trip circle solvers."""
    rng = np.random.default_rng(8)
    cases = [p for p in sample_populations(40, 20, torch.Generator().manual_seed(3)).double().numpy()]
    cases += [rng.normal(size=(n, 2)) * rng.uniform(0.1, 5) for n in (1, 2, 3, 4, 5, 7, 50, 100)]
    cases += [rng.uniform(-3, 3, size=(30, 2)) for _ in range(10)]
    angles = rng.uniform(0, 2 * np.pi, 12)
    cases.append(np.c_[2 + 3 * np.cos(angles), -1 + 3 * np.sin(angles)])                 # co-circular
    cases.append(np.c_[np.linspace(-2, 5, 9), 0.5 * np.linspace(-2, 5, 9) + 1])            # collinear
    square = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    cases.append(np.r_[square, square, [[0.5, 0.5]]])                                      # duplicates
    cases.append(rng.normal(size=(25, 2)) + [1e3, -2e3])                                   # far away
    cases.append(np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]))                           # one point thrice
    return cases


@pytest.fixture(scope="module")
def node_results(tmp_path_factory) -> tuple[dict, dict]:
    example = EnclosingCircle.example()
    xs = [population(seed, n) for seed, n in ((4, 20), (58, 6), (731, 37), (5, 1))]
    task = {"welzl": [p.tolist() for p in awkward_populations()],
            "populations": [[seed, n] for seed in (0, 1, 4, 58, 731, 999) for n in (1, 20, 37, 100)],
            "mixture": mixture(),
            "forward": [{"model": m["weights"], "x": x} for m in example.state["models"] for x in xs],
            "views": [[[0.3, -1.26], 2.0], [[-0.75, 0.25], 0.4], [[1.2, 3.9], 6.1]]}
    return task, run_node(task, tmp_path_factory.mktemp("circle"))


def test_welzl_in_the_browser_matches_miniball(node_results) -> None:
    import miniball

    task, out = node_results
    for points, circle in zip(task["welzl"], out["welzl"]):
        points = np.asarray(points)
        center, radius = np.asarray(circle["center"]), circle["radius"]
        distances = np.hypot(*(points - center).T)
        assert (distances <= radius * (1 + 1e-9) + 1e-12).all(), "a particle lies outside the circle"
        c, r2 = miniball.get_bounding_ball(points, rng=np.random.default_rng(0))
        scale = max(1.0, np.abs(points).max())
        assert abs(radius - np.sqrt(r2)) <= 1e-9 * scale and np.abs(center - c).max() <= 1e-9 * scale, (
            points.shape, circle, c, np.sqrt(r2))
        ours, our_radius = min_enclosing_circle(points)
        assert abs(radius - our_radius) <= 1e-9 * scale and np.abs(center - ours).max() <= 1e-9 * scale
        # the support: one to three particles on the circle, and the circle is theirs
        support = points[circle["support"]]
        assert 1 <= len(support) <= 3 and np.allclose(np.hypot(*(support - center).T), radius, rtol=1e-9, atol=1e-12)
        c_support, r2_support = miniball.get_bounding_ball(support, rng=np.random.default_rng(0))
        assert abs(np.sqrt(r2_support) - radius) <= 1e-9 * scale


def test_welzl_in_the_browser_can_fail() -> None:
    """The checks above would catch a wrong circle: a circle through two particles that are not the
    farthest apart leaves one outside."""
    points = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    center, radius = np.array([0.5, 0.0]), 0.5
    assert not (np.hypot(*(points - center).T) <= radius * (1 + 1e-9)).all()


def test_the_browser_draws_the_populations_python_draws(node_results) -> None:
    task, out = node_results
    for (seed, n), drawn in zip(task["populations"], out["populations"]):
        expected = population(seed, n)
        assert len(drawn) == n and np.allclose(drawn, expected, rtol=1e-13, atol=1e-13), (seed, n)
    # a larger population of the same seed extends the smaller one
    assert population(58, 37)[:20] == population(58, 20)


def test_the_populations_follow_the_experiments_mixture() -> None:
    """Radii and spreads of mulberry32's populations against ``sample_populations``'s (torch's
    generator): the same mixture, so the same distribution of circles, within sampling error."""
    ours = np.array([min_enclosing_circle(np.array(population(seed, 20)))[1] for seed in range(1500)])
    theirs = np.array([min_enclosing_circle(p)[1] for p in
                       sample_populations(1500, 20, torch.Generator().manual_seed(0)).double().numpy()])
    spread = np.sqrt(ours.var() / len(ours) + theirs.var() / len(theirs))
    assert abs(ours.mean() - theirs.mean()) < 4 * spread, (ours.mean(), theirs.mean())
    assert np.quantile(ours, 0.9) == pytest.approx(np.quantile(theirs, 0.9), rel=0.1)
    # and a different mixture would be told apart: twice the component spread moves the mean radius
    wider = {**mixture(), "mean_std": 3.0}
    radii = np.array([min_enclosing_circle(np.array(population(seed, 20, wider)))[1] for seed in range(500)])
    assert radii.mean() > theirs.mean() + 10 * spread


def test_the_browsers_forward_pass_is_torchs(node_results) -> None:
    from setfuncs.explorables.weights import load_model

    task, out = node_results
    for case, output in zip(task["forward"], out["forward"]):
        model = load_model(case["model"])
        with torch.no_grad():
            expected = model(torch.tensor([case["x"]], dtype=torch.float32))[0].double().numpy()
        assert np.allclose(output, expected, rtol=1e-5, atol=1e-5), (output, expected)


def test_the_view_is_the_same_square_in_the_browser(node_results) -> None:
    task, out = node_results
    for (center, radius), shown in zip(task["views"], out["views"]):
        assert [shown["x"], shown["y"]] == [list(v) for v in view(center, radius)]


def test_readouts_follow_an_edited_population() -> None:
    example = EnclosingCircle.example()
    state = {**example.state, "population": [[0.0, 0.0], [4.0, 0.0], [2.0, 1.0]]}
    shown = EnclosingCircle.readouts(state)
    assert (shown["cx"], shown["cy"], shown["r"]) == pytest.approx((2.0, 0.0, 2.0))
    drawn = EnclosingCircle.readouts(example.state)
    assert drawn["r"] != shown["r"] and drawn["plain_cx"] != shown["plain_cx"]
    for key in ("plain", "recurrent"):
        assert shown[f"{key}_error"] == pytest.approx((shown[f"{key}_cx"] - 2) ** 2 + shown[f"{key}_cy"] ** 2
                                                      + (shown[f"{key}_r"] - 2) ** 2)


def test_the_lesson_shows_the_live_runs_in_their_colours() -> None:
    from setfuncs.experiments.circle import lesson

    example = EnclosingCircle.example()
    models = {m["key"]: m for m in example.state["models"]}
    runs = [lesson.LiveRun(setting, "max/max", 0, None, load_model_of(models[key]), (), 0.0)
            for setting, key in (("plain/plain", "plain"), ("recurrent/recurrent", "recurrent"))]
    shown = lesson.explore_circles(runs)
    assert [(m["key"], m["label"], m["colour"]) for m in shown.state["models"]] == [
        ("plain_plain", "plain/plain (max/max)", "#ff7f0e"), ("recurrent_recurrent", "recurrent/recurrent (max/max)", "#2ca02c")]
    assert shown.state["size"] == 20 and "plain_plain_error" in EnclosingCircle.readouts(shown.state)


def load_model_of(entry: dict):
    from setfuncs.explorables.weights import load_model

    return load_model(entry["weights"])


def test_the_page_computes_its_edited_population(tmp_path) -> None:
    """In chromium: move a particle with the arrow keys, delete one, add one with the button and one by
    clicking; the read-outs are Python's for the particles the page then draws (read back from the
    SVG), and the moved particle moved by the arrow keys' steps."""
    example = EnclosingCircle.example()
    start = population(example.state["seed"], example.state["size"])
    xs, ys = view(*min_enclosing_circle(np.array(start)))
    with book_page(tmp_path, example.static_html(example.still_png()), {"width": 1200, "height": 900}) as page:
        handles = page.locator("figure circle.xp-handle")
        handles.nth(0).focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowUp")
        handles.nth(2).focus()
        page.keyboard.press("Delete")
        page.get_by_role("button", name="add a particle").click()
        page.locator("figure rect.xp-circle-background").click(position={"x": 100, "y": 120})
        drawn = page.evaluate("""() => [...document.querySelectorAll("figure circle.xp-handle")]
            .map((n) => [Number(n.getAttribute("cx")), Number(n.getAttribute("cy"))])""")
        shown = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll("figure [data-readout]")]
            .map((n) => [n.dataset.readout, Number(n.dataset.value)]))""")
        size = float(page.locator('[data-control="size"]').input_value())
    inner, left, top = 370, 58, 10     # circle.js's plot: CIRCLE_INNER and CIRCLE_MARGIN
    particles = [[xs[0] + (cx - left) / inner * (xs[1] - xs[0]), ys[1] - (cy - top) / inner * (ys[1] - ys[0])]
                 for cx, cy in drawn]
    assert len(particles) == len(start) - 1 + 2 == size
    step = 0.05 * (xs[1] - xs[0])
    assert particles[0] == pytest.approx([start[0][0] + step, start[0][1] + step], abs=1e-9)
    assert np.allclose(particles[1:19], start[1:2] + start[3:], rtol=0, atol=1e-9)
    expected = EnclosingCircle.readouts({**example.state, "population": particles})
    for key, value in expected.items():
        assert shown[key] == pytest.approx(value, rel=1e-4, abs=1e-4), key
