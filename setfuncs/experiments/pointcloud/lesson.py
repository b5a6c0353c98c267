r"""Chapter 10's data, model and live training as short calls: the offline shapes, the preprocessing,
the budgets and the parameters of every column, three columns trained live (``max/max``,
``max/r-lse`` and its log-mean-exp twin ``max/r-lme``) with their accuracy against the population
size, one cloud subsampled, turned and classified by the live ``max/max`` in the reader's browser
(an explorable), and the confusions of a small cloud.

matplotlib is imported inside the functions that draw.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

import setfuncs as sf
from setfuncs.budget import pick
from setfuncs.model import parameter_count

from ..views import Lines, Table, table
from .budget import BUDGETS, MEDIUM, FULL, OWN_SCHEDULE_MEDIUM, QUICK, Budget, evaluation_sizes, points_per_test_cloud
from .confusion import confusion_at_size, top_confusions
from .evaluate import accuracy_by_population_size
from .preprocess import ROTATION_RANGE, SCALE_RANGE, augment, standardize
from .shapes import synthetic_shapes
from .sweep import COLUMNS, Data, PointClouds, load_data, make_model, train_model

__all__ = ["SHAPES", "LIVE_SPECS", "Examples", "example_clouds", "plot_examples", "data_table",
           "cloud_explorable", "plot_preprocessing_demo", "standardised_lines", "parameter_table", "budget_tables",
           "live_budget", "live_clouds", "LiveRun", "train_live", "plot_live", "live_table", "Confusions",
           "live_confusions", "plot_live_confusions", "confusion_lines"]

#: How every figure names the data the book's runs use.
SHAPES = "offline shapes"
#: The columns trained live — the original model, the learnable one the paper singles out, its log-mean-exp twin.
LIVE_SPECS = ("max/max", "max/r-lse", "max/r-lme")


class Examples(NamedTuple):
    """One cloud ``[N, 3]`` of each class (``clouds`` ``[C, N, 3]``), its ``labels`` and the ``class_names``."""

    clouds: np.ndarray
    labels: np.ndarray
    class_names: list[str]

    def of(self, name: str) -> np.ndarray:
        """The cloud of class ``name``; a ValueError names the classes for another."""
        if name not in self.class_names:
            raise ValueError(f"no class {name!r}; the classes are {self.class_names}")
        return self.clouds[self.class_names.index(name)]


def example_clouds(points: int = 1000, seed: int = 0) -> Examples:
    """One training cloud of ``points`` points of each class of the offline shapes (:func:`~setfuncs.experiments.pointcloud.shapes.synthetic_shapes`)."""
    return Examples(*synthetic_shapes(1, "train", points=points, seed=seed))


def plot_examples(examples: Examples) -> Any:
    """Every cloud of ``examples`` in 3-D, titled with its class (``figures.plot_clouds``)."""
    from .figures import plot_clouds

    fig = plot_clouds(examples.clouds, examples.labels, examples.class_names)
    fig.suptitle(f"{SHAPES} (not ModelNet40): one training cloud of {examples.clouds.shape[1]:,} points per class")
    return fig


def data_table(budgets: Mapping[str, Budget] = BUDGETS) -> Table:
    """Per budget, the offline shapes' training clouds per class and their points, and the test clouds per
    class and their points (:func:`~setfuncs.experiments.pointcloud.budget.points_per_test_cloud`: every test size is a subset of them)."""
    rows = [{"name": name, "train": b.train_per_class, "points": b.points, "test": b.test_size,
             "test_points": points_per_test_cloud(b)} for name, b in budgets.items()]
    return table(rows, [("name", "budget", "{}"), ("train", "training clouds per class", "{}"),
                        ("points", "points each", "{:,}"), ("test", "test clouds per class", "{}"),
                        ("test_points", "points each", "{:,}")], f"The {SHAPES} at every budget")


#: The most a chapter's explorable state may weigh (bytes of JSON): the page stays within its 1.5 MB
#: gzipped (tests/test_browser.py). Three live models of the `quick` budget fit (232 kB); at `medium`
#: the recurrent models' weights (216 kB each, float16) do not, and only the first model is shown.
STATE_LIMIT = 240_000


def cloud_explorable(examples: Examples, runs: Mapping[str, LiveRun] | LiveRun, name: str = "cylinder",
                     n: int | None = None, limit: int = STATE_LIMIT) -> Any:
    """The clouds of ``examples`` in the reader's hands (``setfuncs.explorables.point_cloud.PointCloud``),
    starting on class ``name`` at ``n`` points (default: the training size of the runs): subsampled to any
    number of points, turned about z and x, and classified in the browser by the live model of each of
    ``runs`` (by spec; one run alone is taken as such) with exactly the preprocessing it saw
    (standardisation after subsampling). Models are added in order while the state stays within
    ``limit`` bytes; the first is always shown, and those left out are named under the figure."""
    import json

    from setfuncs.explorables.point_cloud import PointCloud, cloud_state

    runs = {runs.spec: runs} if isinstance(runs, LiveRun) else dict(runs)
    sizes = {run.budget.points for run in runs.values()}
    if len(sizes) != 1:
        raise ValueError(f"runs: every model must be trained on clouds of one size, got {sorted(sizes)} points")
    trained = sizes.pop()

    def arguments(specs: list[str]) -> dict[str, Any]:
        return {"clouds": examples.clouds, "class_names": examples.class_names,
                "models": {spec: runs[spec].model for spec in specs}, "shape": name,
                "n": trained if n is None else n, "trained_points": trained, "label": SHAPES,
                "precision": {spec: "float32" if parameter_count(runs[spec].model) <= 10_000 else "float16"  # a light page
                              for spec in specs}}

    shown = [next(iter(runs))]
    for spec in list(runs)[1:]:
        if len(json.dumps(cloud_state(**arguments([*shown, spec])), separators=(",", ":"))) <= limit:
            shown.append(spec)
    return PointCloud(**arguments(shown), left_out=[spec for spec in runs if spec not in shown])


def _stages(examples: Examples, name: str) -> list[tuple[str, list[np.ndarray]]]:
    raw = examples.of(name)[None]
    standardised = standardize(raw)
    return [("as sampled", [raw[0]]), ("standardised", [standardised[0]]),
            ("standardised and augmented (3 draws)", [augment(standardised, np.random.default_rng(k))[0]
                                                      for k in range(3)])]


def plot_preprocessing_demo(examples: Examples, name: str = "L") -> Any:
    """The cloud of class ``name`` as sampled, standardised (:func:`~setfuncs.experiments.pointcloud.preprocess.standardize`) and augmented three times
    (:func:`~setfuncs.experiments.pointcloud.preprocess.augment`, seeds 0 to 2), from above and from the side (``figures.plot_preprocessing``)."""
    from .figures import plot_preprocessing

    return plot_preprocessing(_stages(examples, name),
                              f"{SHAPES}: preprocessing of one {name!r} cloud (rotation ±{ROTATION_RANGE / np.pi:.1f}π, "
                              f"scales in [{SCALE_RANGE[0]}, {SCALE_RANGE[1]}))")


def standardised_lines(examples: Examples, name: str = "L") -> Lines:
    r"""The mean and standard deviation over all :math:`3N` coordinates of the standardised cloud of ``name``."""
    cloud = standardize(examples.of(name)[None])
    return Lines((f"standardised {name!r} cloud: mean {cloud.mean():+.1e}, standard deviation {cloud.std():.3f} "
                  f"over all its coordinates",))


def parameter_table(classes: tuple[int, int] = (12, 40)) -> Table:
    """The parameters of every column (:data:`~.sweep.COLUMNS`) at the medium budget on the offline shapes'
    ``classes[0]`` classes and at the full budget on ModelNet40's ``classes[1]``; a note gives the factor
    of ``max/r-lse`` over ``max/max`` at both."""
    rows = [{"spec": spec, "learnable": "yes" if sf.parse_spec(spec)[1] != "max" else "no",
             "medium": parameter_count(make_model(spec, classes[0], MEDIUM)),
             "full": parameter_count(make_model(spec, classes[1], FULL))} for spec in COLUMNS]
    by_spec = {row["spec"]: row for row in rows}
    ratio = {name: by_spec["max/r-lse"][name] / by_spec["max/max"][name] for name in ("medium", "full")}
    return table(rows, [("spec", "column (equivariant / final)", "{}"), ("learnable", "learnable final", "{}"),
                        ("medium", f"medium (width {MEDIUM.hidden}, {classes[0]} classes)", "{:,}"),
                        ("full", f"full (width {FULL.hidden}, {classes[1]} classes)", "{:,}")],
                 "Parameters of the ten columns of Table 2, then the two with log-mean-exp in place of LSE",
                 ["parameters of max/r-lse over max/max: " + ", ".join(f"{k} {v:.1f}×" for k, v in ratio.items())])


def budget_tables() -> tuple[Table, Table]:
    """The budgets (full: the reference; medium: the sweep; earlier medium, :data:`~setfuncs.experiments.pointcloud.budget.OWN_SCHEDULE_MEDIUM`: the
    sweep it replaced; quick: the live section) in two tables: the optimiser and schedule, then the sizes."""
    budgets = {**BUDGETS, "earlier medium": OWN_SCHEDULE_MEDIUM}
    rows = [{**vars(b), "name": name, "decay_at": ", ".join(f"{f:.0%}" for f in b.decay_at),
             "test_points": points_per_test_cloud(b)} for name, b in budgets.items()]
    optimiser = table(rows, [("name", "budget", "{}"), ("steps", "Adam steps", "{:,}"), ("batch", "batch", "{}"),
                             ("lr", "learning rate", "{:g}"), ("eps", "Adam ε", "{:g}"),
                             ("decay_at", "lr ÷ 10 after", "{}")], "The budgets' optimiser and schedule")
    sizes = table(rows, [("name", "budget", "{}"), ("hidden", "width", "{}"), ("equivariant_layers", "equivariant layers", "{}"),
                         ("recurrent_steps", "reads T", "{}"), ("points", "training points", "{:,}"),
                         ("train_per_class", "training clouds per class", "{}"),
                         ("test_points", "points per test cloud", "{:,}")], "The budgets' sizes")
    return optimiser, sizes


def live_budget() -> Budget:
    """The live models' budget: ``quick``, or ``medium`` with ``SETFUNCS_BUDGET=full``."""
    return pick(QUICK, MEDIUM)


def live_clouds(budget: Budget | None = None) -> PointClouds:
    """The offline shapes at ``budget`` (default :func:`live_budget`): :func:`~setfuncs.experiments.pointcloud.sweep.load_data`."""
    return load_data(Data("shapes"), live_budget() if budget is None else budget)


@dataclass(frozen=True)
class LiveRun:
    """One column trained live: its ``spec``, ``seed``, ``budget``, the trained ``model``, its loss (the
    cross-entropy) at every step, the seconds it trained and its test ``accuracy`` by population size."""

    spec: str
    seed: int
    budget: Budget
    model: Any
    losses: tuple[float, ...]
    seconds: float
    accuracy: dict[str, float]

    def __str__(self) -> str:
        return (f"{self.spec}: {self.budget.steps:,} steps ({self.budget.name} budget), seed {self.seed}, "
                f"{self.seconds:.1f} s")

    def _repr_html_(self) -> str:
        return f"<p>{html.escape(str(self))}</p>"


def train_live(clouds: PointClouds, budget: Budget | None = None, specs: Sequence[str] = LIVE_SPECS,
               seed: int = 0) -> dict[str, LiveRun]:
    """Each column of ``specs`` trained on ``clouds`` with the sweep's code (:func:`~setfuncs.experiments.pointcloud.sweep.train_model`),
    timed, and tested at every evaluation size of ``budget`` (default :func:`live_budget`)."""
    budget = live_budget() if budget is None else budget
    runs = {}
    for spec in specs:
        start = time.perf_counter()
        model, losses = train_model(spec, seed=seed, budget=budget, clouds=clouds, progress=False)
        seconds = time.perf_counter() - start
        accuracy = accuracy_by_population_size(model, clouds.test_x, clouds.test_y, evaluation_sizes(budget))
        runs[spec] = LiveRun(spec, seed, budget, model, tuple(float(v) for v in losses), seconds, accuracy)
    return runs


def plot_live(live: Mapping[str, LiveRun], clouds: PointClouds) -> Any:
    """Two panels, one above the other in the book's 7-inch text column. Top: the training cross-entropy of
    every live run against the constant predictor's :math:`\\ln C`; bottom: its test accuracy against
    the population size, chance and the training size marked."""
    import matplotlib.pyplot as plt

    from ..curves import plot_training_curves
    from .figures import draw_accuracy_by_size

    budget, classes = next(iter(live.values())).budget, len(clouds.class_names)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.85, 6.4), layout="constrained")
    plot_training_curves(top, {f"{s} ({r.seconds:.1f} s)": r.losses for s, r in live.items()}, quantity="cross-entropy",
                         baseline=(np.log(classes), f"constant predictor (ln {classes})"), legend_fontsize="medium",
                         title="training")
    draw_accuracy_by_size(bottom, {s: r.accuracy for s, r in live.items()}, list(evaluation_sizes(budget)),
                          classes=classes, training_size=budget.points)
    top.legend(fontsize="medium", loc="upper right", bbox_to_anchor=(1, 0.93))     # under the constant predictor's line
    bottom.legend(fontsize="medium", ncols=3, loc="upper left")                      # above the lines: no accuracy nears 1
    fig.suptitle(f"{SHAPES}: live training at the {budget.name} budget, seed 0 ({len(clouds.test_x)} test clouds)",
                 fontsize="medium")
    return fig


def live_table(live: Mapping[str, LiveRun], clouds: PointClouds, window: int = 50) -> Table:
    """Per live run: the training seconds, the mean loss over the last ``window`` steps and the test
    accuracy at every evaluation size; notes give the total time and chance."""
    budget = next(iter(live.values())).budget
    sizes = evaluation_sizes(budget)
    rows = [{"spec": s, "seconds": r.seconds, "loss": float(np.mean(r.losses[-window:])),
             **{str(n): r.accuracy[str(n)] for n in sizes}} for s, r in live.items()]
    return table(rows, [("spec", "column", "{}"), ("seconds", "training (s)", "{:.1f}"), ("loss", "final loss", "{:.2f}")]
                 + [(str(n), f"n = {n:,}", "{:.0%}") for n in sizes],
                 f"Live models on the {SHAPES} ({budget.name} budget, trained at n = {budget.points:,})",
                 [f"the {len(live)} models trained in {sum(r.seconds for r in live.values()):.1f} s; "
                  f"chance is {1 / len(clouds.class_names):.0%}"])


@dataclass(frozen=True)
class Confusions:
    """The confusion matrices of one live run (``spec``, ``budget``) by population size, as fractions of
    each true class (``confusion.confusion_at_size``), and the class names."""

    spec: str
    budget: Budget
    matrices: dict[int, np.ndarray]
    class_names: list[str]


def live_confusions(run: LiveRun, clouds: PointClouds, small: int = 10) -> Confusions:
    """The confusion matrices of ``run`` on the test clouds at its training size and at ``small`` points."""
    matrices = {n: confusion_at_size(run.model, clouds.test_x, clouds.test_y, n, len(clouds.class_names))
                for n in (run.budget.points, small)}
    return Confusions(run.spec, run.budget, matrices, list(clouds.class_names))


def plot_live_confusions(confusions: Confusions) -> Any:
    """One heat map per population size of ``confusions`` (``figures.plot_confusions``)."""
    from .figures import plot_confusions

    return plot_confusions(confusions.matrices, confusions.class_names,
                           f"{SHAPES}: confusion of the live {confusions.spec} model ({confusions.budget.name} budget)")


def confusion_lines(confusions: Confusions, count: int = 4) -> Lines:
    """The ``count`` most frequent confusions at the smallest size of ``confusions`` (``top_confusions``)."""
    small = min(confusions.matrices)
    pairs = top_confusions(confusions.matrices[small], confusions.class_names, count)
    return Lines((f"most frequent confusions at n = {small}: "
                  + "; ".join(f"{true} taken for {guess} ({share:.0%})" for share, true, guess in pairs),))
