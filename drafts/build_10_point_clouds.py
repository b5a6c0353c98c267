import nbformat as nbf
cells = []
def md(s): cells.append(nbf.v4.new_markdown_cell(s.strip("\n")))
def code(s): cells.append(nbf.v4.new_code_cell(s.strip("\n")))

md(r'''
# Experiment 3: point-cloud classification

**What you will learn.** The third experiment of {cite:t}`soelch_deep_2019` (Section 4.3,
Table 2) leaves the controlled tasks of the first two and takes a real benchmark: classify
objects of ModelNet40 {cite:p}`zhirong_wu_3d_2015` from 1,000 points sampled on their surfaces.
It takes the Deep Sets classifier {cite:p}`zaheer_deep_2017` with all its hyper-parameters, swaps
only the aggregations, and then does what the Deep Sets paper did not: it tests the trained models
on clouds of 100 and 50 points. You will

* see how clouds are sampled from meshes, how to load ModelNet40 if you have it, and the twelve
  classes of procedurally deformed shapes that stand in for it in this book, since ModelNet40
  cannot be downloaded where the book is built;
* use a slider to see how little of a shape 50 or 10 points still show;
* meet the preprocessing and the model, with the parameter counts of all ten columns of Table 2;
* train two columns live, `max/max` (the original model) and `max/r-lse`, and test them at
  population sizes from 10 upwards;
* read our Table 2 from a sweep of all ten columns, next to the paper's numbers, and check the
  paper's findings one by one.

```{admonition} Compute budget
:class: note
The live section trains at the `quick` budget (a few seconds per model on one core, on clouds of
100 points). `SETFUNCS_BUDGET=full` trains it at the `medium` budget instead (minutes per model):
the package's `full` budget is the reference scale, which takes days per model on a CPU. Table 2
and the accuracy curves are read from the committed file `results/pointcloud-medium.json`,
written by

    python -m setfuncs.experiments.pointcloud sweep --budget medium --runs K --jobs 2 --data shapes --out results/pointcloud-medium.json

Our accuracies come from the offline procedural shapes, the paper's from ModelNet40, and every
table and figure says which is which.
```
''')

code(r'''
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, display
from scipy.stats import spearmanr

import setfuncs as sf
from setfuncs.budget import pick
from setfuncs.experiments import pointcloud as pc
from setfuncs.experiments.pointcloud.preprocess import ROTATION_RANGE, SCALE_RANGE
from setfuncs.experiments.pointcloud.shapes import PROPORTION_RANGE, SIZE_RANGE
from setfuncs.experiments.pointcloud.table import data_label
from setfuncs.experiments.sweeps import TEST_SEED
from setfuncs.experiments.results import results_file
from setfuncs.model import parameter_count
from setfuncs.tables import html_table
from setfuncs.widgets import slider_figure

torch.set_num_threads(1)
SHAPES = "offline shapes"      # how every figure names our data
''')

md(r'''
## The data

### ModelNet40

ModelNet40 holds 12,311 CAD models of 40 object classes (airplanes, chairs, guitars, ...),
9,843 for training and 2,468 for testing. Each model is a triangle mesh, and a *point cloud* is a
set of particles sampled from its surface. The paper samples "uniformly from the surface": a face
is picked with probability proportional to its area, then a point uniformly inside it, so every
patch of surface receives points in proportion to its area however finely it is triangulated
(`pc.sample_surface`).

If you have the archive `ModelNet40.zip` from the [Princeton ModelNet
page](https://modelnet.cs.princeton.edu/), unzip it and pass the folder that holds the 40 class
folders (`<root>/<class>/{train,test}/*.off`):

```python
from setfuncs.experiments.pointcloud import load_modelnet40

# clouds [9843, 1000, 3] float32, labels [9843] int64, the 40 class names
clouds, labels, class_names = load_modelnet40("ModelNet40", split="train", points=1000, seed=0)
```

The first call parses all meshes (a few minutes) and caches the clouds in one `.npz` file per
split, size and seed; later calls read the cache. The loader also repairs a known quirk of the
archive, files whose first line reads `OFF490 518 0` instead of `OFF` followed by the counts. The
sweep below runs on ModelNet40 with `--data modelnet40 --root ModelNet40`.

### The offline shapes

Without ModelNet40, the package makes a data set of the same form: twelve classes of watertight
meshes, and every cloud sampled from its own random deformation of its class's mesh,

$$
v' = c\, R_z(\theta)\, \operatorname{diag}(s_x, s_y, s_z)\, v, \qquad
s_k \sim \mathcal U[\tfrac34, \tfrac43],\quad c \sim \mathcal U[\tfrac12, 2],\quad
\theta \sim \mathcal U[0, 2\pi):
$$

random proportions, a random heading about the up axis $z$ and a random size. The points are drawn
from the deformed mesh with the same sampler as ModelNet40's. Twelve classes of simple solids are
an easier task than forty classes of real objects, so our accuracies are not comparable with the
paper's, only their pattern across columns and population sizes is. Below is one training cloud of
each class.
''')

code(r'''
examples, example_labels, class_names = pc.synthetic_shapes(1, "train", points=1000, seed=0)


def scatter3d(ax, cloud: np.ndarray, size: float = 1.0, color: str = "tab:blue") -> None:
    """A cloud as a 3-D scatter with true proportions and no ticks."""
    ax.scatter(*cloud.T, s=size, color=color, depthshade=False, linewidths=0)
    ax.set_box_aspect(np.ptp(cloud, axis=0) + 1e-3)
    ax.set(xticks=[], yticks=[], zticks=[])
    ax.view_init(elev=25, azim=-60)


fig = plt.figure(figsize=(10, 7.2), layout="constrained")
for k, (cloud, label) in enumerate(zip(examples, example_labels)):
    ax = fig.add_subplot(3, 4, k + 1, projection="3d")
    scatter3d(ax, cloud)
    ax.set_title(class_names[label], fontsize=10)
fig.suptitle(f"{SHAPES} (not ModelNet40): one training cloud of 1,000 points per class")
plt.show()

for budget in pc.BUDGETS.values():
    print(f"{budget.name:7s} budget, {SHAPES}: {budget.train_per_class} training clouds per class of "
          f"{budget.points:,} points, {budget.test_size} test clouds per class of "
          f"{pc.points_per_test_cloud(budget):,} points")
''')

md(r'''
### What 50 points show

The models are trained on 1,000 points and then tested on fewer, subsets drawn uniformly without
replacement from each test cloud (`pc.subsample`). A subset of a uniform sample is again a uniform
sample of the surface, just a sparser one. Move the slider to see one star-shaped prism, in 3-D
and from above, as the population shrinks.
''')

code(r'''
star = examples[class_names.index("star")][None]
SIZES_SHOWN = [10, 20, 50, 100, 1000]
subsets = {n: pc.subsample(star, n, np.random.default_rng(n))[0] for n in SIZES_SHOWN}
lim = np.abs(star[0]).max(axis=0) * 1.05


def draw_subset(n: int) -> plt.Figure:
    cloud = subsets[n]
    fig = plt.figure(figsize=(7.2, 3.4), layout="constrained")
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    ax.scatter(*cloud.T, s=4 if n > 100 else 12, depthshade=False, linewidths=0)
    ax.set(xlim=(-lim[0], lim[0]), ylim=(-lim[1], lim[1]), zlim=(-lim[2], lim[2]),
           xticks=[], yticks=[], zticks=[])
    ax.set_box_aspect(2 * lim)
    ax.view_init(elev=25, azim=-60)
    top = fig.add_subplot(1, 2, 2)
    top.scatter(*star[0, :, :2].T, s=1, color="0.85")
    top.scatter(*cloud[:, :2].T, s=4 if n > 100 else 12)
    top.set(aspect="equal", xlim=(-lim[0], lim[0]), ylim=(-lim[1], lim[1]), xticks=[], yticks=[],
            )
    top.set_title("from above (grey: all 1,000 points)", fontsize=9)
    fig.suptitle(f"{SHAPES}: a 'star' cloud subsampled to {n:,} of its 1,000 points", fontsize=10)
    return fig


slider_figure(draw_subset, SIZES_SHOWN, label="points")
''')

md(r'''
## Preprocessing

Deep Sets' reference code, which the paper keeps unchanged, prepares every cloud in two steps
(`setfuncs.experiments.pointcloud.preprocess`):

* **standardise** each cloud over all its $3N$ coordinates, $(X - \bar X) / \operatorname{std}(X)$,
  one mean and one standard deviation per cloud (not per axis), so clouds of every size and
  position arrive at the same scale; this is done to training and test clouds, after subsampling;
* **augment** each training cloud at each step: rotate it about $z$ by
  $\theta \sim \mathcal U[-0.1\pi, 0.1\pi]$, then scale each axis by $s_k \sim \mathcal U[0.8, 1.25)$.

The figure shows one cloud from above ($x$–$y$) and from the side ($x$–$z$): as sampled,
standardised, and three augmentations of the standardised cloud.
''')

code(r'''
raw = examples[class_names.index("L")][None]
standardized = pc.standardize(raw)
augmented = [pc.augment(standardized, np.random.default_rng(k))[0] for k in range(3)]
stages = [("as sampled", [raw[0]]), ("standardised", [standardized[0]]),
          ("standardised and augmented (3 draws)", augmented)]
fig, axes = plt.subplots(2, 3, figsize=(9.5, 5.6), layout="constrained", sharex="col", sharey="col")
for column, (title, clouds) in enumerate(stages):
    for row, (i, j, view) in enumerate(((0, 1, "x–y (from above)"), (0, 2, "x–z (from the side)"))):
        ax = axes[row, column]
        for k, cloud in enumerate(clouds):
            ax.scatter(cloud[:, i], cloud[:, j], s=1.5, color=f"C{k}", alpha=0.7)
        ax.set(aspect="equal", title=f"{title}\n{view}" if row == 0 else view)
        ax.tick_params(labelsize=7)
fig.suptitle(f"{SHAPES}: preprocessing of one 'L' cloud (rotation ±{ROTATION_RANGE / np.pi:.1f}π, "
             f"scales in [{SCALE_RANGE[0]}, {SCALE_RANGE[1]}))", fontsize=10)
plt.show()
print(f"standardised cloud: mean {standardized.mean():+.1e}, std {standardized.std():.3f} over all coordinates")
''')

md(r'''
The offline shapes already come in every heading (their $\theta$ is uniform on a full turn), so
the small rotations of the augmentation matter less here than on ModelNet40, whose models are
upright and aligned.

## The model

The reference classifier (Deep Sets' `PointClouds/run.py`) has three equivariant layers of width
256 on the raw coordinates, an aggregation over the points, and a two-layer classifier with
dropout. Each equivariant layer is eq. (1) of the paper, with the aggregation $\alpha_e$
subtracted from every particle:

$$
H^{(0)} = X \in \mathbb R^{N \times 3}, \qquad
H^{(l)} = \tanh\!\big((H^{(l-1)} - \mathbf 1\,\alpha_e(H^{(l-1)}))\,\Gamma_l + \mathbf 1 b_l^\top\big),
\quad l = 1, 2, 3,
$$

$$
y = W_2\,\operatorname{drop}_{0.5}\!\big(\tanh(W_1\,\operatorname{drop}_{0.5}(\alpha_f(H^{(3)})) + c_1)\big) + c_2 .
$$

The paper exchanges only $\alpha_e$ and the final aggregation $\alpha_f$; a column of Table 2 is
named `<equivariant>/<final>`. The original model is `max/max`; `r-` marks a recurrent aggregation
and `q-` a query aggregation (chapter {doc}`06_learnable_aggregations`). Training follows the
reference: cross-entropy, Adam with learning rate $10^{-3}$, weight decay $10^{-7}$, the learning
rate divided by 10 after 40 % and 80 % of the steps, gradient norm clipped at 5, batches of 64.
The reference trains 1,000 epochs of ModelNet40, 153,000 steps, which takes three to nine days per
model on one CPU core, so our sweep uses the smaller `medium` budget:
''')

code(r'''
display(HTML(html_table([{**vars(b), "decay_at": ", ".join(f"{f:.0%}" for f in b.decay_at),
                          "test_points": pc.points_per_test_cloud(b)} for b in pc.BUDGETS.values()], [
    ("name", "budget", "{}"), ("steps", "Adam steps", "{:,}"), ("batch", "batch", "{}"),
    ("lr", "learning rate", "{:g}"), ("eps", "Adam ε", "{:g}"), ("decay_at", "lr ÷ 10 after", "{}"),
    ("hidden", "width", "{}"), ("equivariant_layers", "equivariant layers", "{}"),
    ("recurrent_steps", "reads T", "{}"), ("points", "training points", "{:,}"),
    ("train_per_class", "training clouds per class (shapes)", "{}"),
    ("test_points", "points per test cloud", "{:,}")],
    caption="The three budgets (full: the reference; medium: the sweep below; quick: the live section)")))

count_rows = []
for spec in sf.TABLE2_SPECS:
    equivariant, final = sf.parse_spec(spec)
    count_rows.append({"spec": spec, "learnable_final": "yes" if final != "max" else "no",
                       "medium": parameter_count(pc.make_model(spec, 12, pc.MEDIUM)),
                       "full": parameter_count(pc.make_model(spec, 40, pc.FULL))})
display(HTML(html_table(count_rows, [
    ("spec", "column (equivariant / final)", "{}"), ("learnable_final", "learnable final aggregation", "{}"),
    ("medium", "parameters, medium (width 64, 12 classes)", "{:,}"),
    ("full", "parameters, full (width 256, 40 classes)", "{:,}")],
    caption="The ten columns of Table 2")))
''')

md(r'''
The learnable aggregations are not free. A recurrent aggregation carries a recurrent cell over the
$D$ features, which multiplies the parameters of the whole model about six times (`max/r-lse`
against `max/max`), and a model with recurrent *equivariant* layers has one in each of its three layers;
query aggregations add only a few parameters. The `medium` budget differs from the reference in
width (64), batch (32), steps (1,500, about 40 epochs of our 1,200 training clouds) and Adam's
$\epsilon$: the reference's $10^{-3}$ kept the columns with a learnable final aggregation at the
constant predictor for most of a `medium` run, so `medium` uses the default $10^{-8}$.

## Live: the original model and a learnable one

The next cell trains two columns here with seed 0, with the sweep's own code (`pc.train_model`):
`max/max` and `max/r-lse`, the pair the paper singles out. At the `quick` budget the models are
trained on clouds of 100 points (not 1,000), so the population sizes below are relative to 100.
''')

code(r'''
live_budget = pick(pc.QUICK, pc.MEDIUM)
clouds = pc.load_data(pc.Data("shapes"), live_budget)
live_sizes = pc.evaluation_sizes(live_budget)
chance = 1 / len(clouds.class_names)
live = {}
start_all = time.perf_counter()
for spec in ("max/max", "max/r-lse"):
    start = time.perf_counter()
    model, losses = pc.train_model(spec, seed=0, budget=live_budget, clouds=clouds, progress=False)
    seconds = time.perf_counter() - start
    live[spec] = {"model": model, "losses": losses, "seconds": seconds,
                  "accuracy": pc.accuracy_by_population_size(model, clouds.test_x, clouds.test_y, live_sizes)}
live_seconds = time.perf_counter() - start_all

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.4), layout="constrained")
for spec, run in live.items():
    left.plot(np.convolve(run["losses"], np.ones(20) / 20, mode="valid"),
              label=f"{spec} ({run['seconds']:.1f} s)")
    right.plot(live_sizes, [run["accuracy"][str(n)] for n in live_sizes], "o-", label=spec)
left.axhline(np.log(len(clouds.class_names)), color="gray", ls=":", label="constant predictor (ln 12)")
left.set(xlabel="Adam step", ylabel="cross-entropy (moving average of 20)", title="training")
right.axhline(chance, color="gray", ls=":", label="chance (1/12)")
right.axvline(live_budget.points, color="gray", ls="--", lw=1, label=f"training size {live_budget.points}")
right.set(xscale="log", xticks=live_sizes, xticklabels=[str(n) for n in live_sizes], ylim=(0, 1),
          xlabel="test population size n", ylabel="test accuracy", title="accuracy against population size")
right.minorticks_off()
for ax in (left, right):
    ax.legend(fontsize=8)
fig.suptitle(f"{SHAPES}: live training at the {live_budget.name} budget, seed 0 "
             f"({len(clouds.test_x)} test clouds)", fontsize=10)
plt.show()

display(HTML(html_table([{"spec": s, "seconds": r["seconds"], "loss": float(np.mean(r["losses"][-50:])),
                          **{str(n): r["accuracy"][str(n)] for n in live_sizes}} for s, r in live.items()],
    [("spec", "column", "{}"), ("seconds", "training (s)", "{:.1f}"), ("loss", "final loss", "{:.2f}")] +
    [(str(n), f"n = {n}", "{:.0%}") for n in live_sizes],
    caption=f"Live models on the {SHAPES} ({live_budget.name} budget); chance is {chance:.0%}")))
print(f"both models trained and tested in {live_seconds:.1f} s")
''')

md(r'''
At the `quick` budget the two columns part already in training. `max/max` leaves the constant
predictor early on, while `max/r-lse` may still sit at or near the constant predictor's loss of
$\ln 12 \approx 2.48$, and at chance, after its 200 steps: it needs more steps to leave that
plateau than the `quick` budget gives. So the live section shows mainly how the original model
behaves off its training size; the comparison of the two needs longer training, which the sweep
below provides.

## The sweep

We trained every column of Table 2 with several seeds at the `medium` budget on the offline
shapes, 1,000 training points per cloud as in the paper, and tested each model on subsets of
10 to 2,000 points of the test clouds. The results file records how it was made:
''')

code(r'''
results = pc.load_results(results_file("pointcloud-medium.json"))
finished = [r for r in results["runs"] if r["error"] is None]
parameters = results["budget_parameters"]
provenance = [
    ("data", data_label(results)),
    ("command", "python -m setfuncs.experiments.pointcloud " + " ".join(results["command"][1:])),
    ("git commit of the code", results["git_commit"]),
    ("budget", f"{results['budget']}: {parameters['steps']:,} steps of {parameters['batch']} clouds of "
               f"{parameters['points']:,} points, width {parameters['hidden']}"),
    ("runs per column (seeds)", f"{results['runs_per_configuration']} "
                                f"(seeds {results['seeds'][0]}..{results['seeds'][-1]})"),
    ("runs finished / diverged", f"{len(finished)} / {len(results['runs']) - len(finished)}"),
    ("complete", str(results["complete"])),
    ("test population sizes", ", ".join(map(str, results["evaluation"]["sizes"]))),
    ("wall time", f"{results['wall_seconds'] / 60:.0f} min on {results['jobs']} worker processes"),
    ("hardware", f"{results['hardware']['cpu_model']}, {results['hardware']['cpu_count']} cores"),
    ("versions", ", ".join(f"{k} {v}" for k, v in results["versions"].items())),
    ("started / finished (UTC)", f"{results['started']} / {results['finished']}"),
]
display(HTML(html_table([{"what": k, "value": v} for k, v in provenance],
                        [("what", "", "{}"), ("value", "", "{}")])))
''')

md(r'''
## Table 2

For each column and each population size of the paper's rows, the table gives the mean test
accuracy over seeds and the best seed's accuracy (the largest at each size separately), and the
paper's number. The paper reports one number per cell and does not say how many runs it
summarises. Its accuracies are on ModelNet40 (40 classes, chance 2.5 %), ours on the offline shapes
(12 classes, chance 8.3 %), so only the *pattern* compares: which columns lead, and how much each
loses away from the training size.
''')

code(r'''
paper_path = results_file("paper-results.json")
table = pc.pointcloud_table(results, paper=paper_path)
sizes = pc.TABLE_SIZES
columns = [("spec", "column", "{}"), ("runs", "runs", "{}")]
columns += [(f"mean_{n}", f"ours, mean, n = {n}", "{:.1%}") for n in sizes]
columns += [(f"best_{n}", f"ours, best, n = {n}", "{:.1%}") for n in sizes]
columns += [(f"paper_{n}", f"paper (ModelNet40), n = {n}", "{:.1%}") for n in sizes]
display(HTML(html_table(table, columns, caption=(
    f"Test accuracy. Ours: {data_label(results)}. Paper: Table 2, ModelNet40 (1 number per cell)"))))

ours = {row["spec"]: {n: row[f"mean_{n}"] for n in sizes} for row in table}
paper = pc.paper_rows(paper_path)
common = [s for s in sf.TABLE2_SPECS if s in ours and all(ours[s][n] is not None for n in sizes)]
for n in sizes:
    rho = spearmanr([ours[s][n] for s in common], [paper[s][n] for s in common]).statistic
    order_ours = sorted(common, key=lambda s: -ours[s][n])
    print(f"n = {n:4d}: rank correlation of the columns, ours (mean) vs paper: {rho:+.2f}; "
          f"our top 3: {', '.join(order_ours[:3])}")
''')

md(r'''
The paper reports three sizes. Our runs were tested at more, from 10 to 2,000 points, twice the
training size. The left panel shows the mean over seeds for every column on the offline shapes;
the right panel the paper's three rows on ModelNet40, on the same axes. Columns with plain $\max$
equivariant layers are drawn solid, the others dashed.
''')

code(r'''
curves = pc.accuracy_curves(results)
train_points = parameters["points"]
classes = results["data"]["classes"]
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained", sharey=True)
for k, spec in enumerate(sf.TABLE2_SPECS):
    style = dict(color=f"C{k}", ls="-" if spec.startswith("max/") else "--", marker="o", ms=3.5)
    curve = next((c for c in curves if c["spec"] == spec), None)
    if curve is not None:
        left.plot(curve["sizes"], curve["mean"], label=spec, **style)
    right.plot(sizes, [paper[spec][n] for n in sizes], label=spec, **style)
seeds = results["runs_per_configuration"]
panels = ((left, 1 / classes, train_points,
           f"ours: {SHAPES} ({results['budget']} budget, mean of {seeds} seed{'s' if seeds > 1 else ''})"),
          (right, 1 / 40, 1000, "paper: ModelNet40 (Table 2)"))
for ax, chance_level, trained, title in panels:
    ax.axhline(chance_level, color="gray", ls=":", lw=1)
    ax.axvline(trained, color="gray", ls="--", lw=1)
    ax.set(xscale="log", xlim=(8, 2500), ylim=(0, 1), xlabel="test population size n")
    ax.set_xticks(results["evaluation"]["sizes"], [str(n) for n in results["evaluation"]["sizes"]])
    ax.minorticks_off()
    ax.set_title(title, fontsize=10)
left.set_ylabel("test accuracy")
right.legend(fontsize=8, ncols=2, loc="lower right", title="grey dotted: chance; grey dashed: training size",
             title_fontsize=7)
plt.show()
''')

md(r'''
## The paper's findings, one by one

Section 4.3 of the paper draws four conclusions from Table 2. The next cell turns each into a
test on a table of accuracies, applies it to the paper's own numbers first (each test must pass
there, or it does not express the finding), and then to our mean accuracies over seeds.

1. *"The original model (max/max column) performs best in the training scenario"*, 1,000 points.
2. At 100 and 50 points *"learnable final aggregations outperform all non-learnable
   aggregations"*; since `max/max` is the only column with a plain final aggregation, the test is
   that the best column at 100 and at 50 points has a learnable one and that `max/r-lse` beats
   `max/max` there.
3. *"The top-performing model overfits to the training population size"*: *"both drops for the
   original model are comparable to the total drop for the learnable model"*. Accuracy levels
   differ between data sets, so the test compares the share of the accuracy above chance that a
   column keeps from 1,000 to 50 points: `max/max` must keep less than `max/r-lse` and less than
   the median column with a learnable final aggregation (of those that learnt anything, more than
   twice chance at 1,000 points).
4. *"max-type aggregations in equivariant layers seem crucial for good final performance"*: at
   1,000 points, each of the four columns without plain $\max$ equivariant layers is less accurate
   than the median of the six with them.
''')

code(r'''
LEARNABLE_FINAL = [s for s in sf.TABLE2_SPECS if sf.parse_spec(s)[1] != "max"]
MAX_EQUIVARIANT = [s for s in sf.TABLE2_SPECS if sf.parse_spec(s)[0] == "max"]


def percent(value: float) -> str:
    return f"{100 * value:.1f}"


def best_at_training_size(acc: dict, chance: float) -> tuple[bool, str]:
    ranked = sorted(acc, key=lambda s: -acc[s][1000])
    return ranked[0] == "max/max", (f"n = 1000: max/max {percent(acc['max/max'][1000])} is rank "
                                    f"{ranked.index('max/max') + 1}; best {ranked[0]} {percent(acc[ranked[0]][1000])}")


def learnable_final_wins_small(acc: dict, chance: float) -> tuple[bool, str]:
    ok, evidence = True, []
    for n in (100, 50):
        best = max(acc, key=lambda s: acc[s][n])
        ok &= best in LEARNABLE_FINAL and acc["max/r-lse"][n] > acc["max/max"][n]
        evidence.append(f"n = {n}: best {best} {percent(acc[best][n])}, max/r-lse {percent(acc['max/r-lse'][n])}, "
                        f"max/max {percent(acc['max/max'][n])}")
    return ok, "; ".join(evidence)


def kept_above_chance(acc: dict, spec: str, chance: float) -> float:
    return (acc[spec][50] - chance) / (acc[spec][1000] - chance)


def original_overfits(acc: dict, chance: float) -> tuple[bool, str]:
    learnt = [s for s in LEARNABLE_FINAL if s in acc and acc[s][1000] > 2 * chance]
    if "max/r-lse" not in learnt or not learnt:
        return False, f"max/r-lse did not learn (n = 1000: {percent(acc['max/r-lse'][1000])})"
    kept = {s: kept_above_chance(acc, s, chance) for s in ["max/max"] + learnt}
    median = float(np.median([kept[s] for s in learnt]))
    drops = [acc["max/max"][1000] - acc["max/max"][100], acc["max/max"][100] - acc["max/max"][50],
             acc["max/r-lse"][1000] - acc["max/r-lse"][50]]
    ok = kept["max/max"] < kept["max/r-lse"] and kept["max/max"] < median
    return ok, (f"share above chance kept from 1000 to 50: max/max {kept['max/max']:.0%}, max/r-lse "
                f"{kept['max/r-lse']:.0%}, median of {len(learnt)} learnable-final columns {median:.0%}; drops "
                f"(points): max/max {percent(drops[0])} and {percent(drops[1])}, max/r-lse {percent(drops[2])} in all")


def max_equivariant_crucial(acc: dict, chance: float) -> tuple[bool, str]:
    with_max = [acc[s][1000] for s in MAX_EQUIVARIANT if s in acc]
    others = {s: acc[s][1000] for s in sf.TABLE2_SPECS if s in acc and s not in MAX_EQUIVARIANT}
    median = float(np.median(with_max))
    below = [s for s, a in others.items() if a < median]
    return len(below) == len(others), (f"n = 1000: median of max-equivariant columns {percent(median)}; "
                                       f"{len(below)} of {len(others)} others below it ("
                                       + ", ".join(f"{s} {percent(a)}" for s, a in others.items()) + ")")


FINDINGS = [
    ("max/max is best at the training size (1000 points)", best_at_training_size),
    ("learnable final aggregations lead at 100 and 50 points", learnable_final_wins_small),
    ("max/max overfits to the training size: it loses more than the learnable columns", original_overfits),
    ("max-type equivariant layers are crucial", max_equivariant_crucial),
]
ours_complete = {s: ours[s] for s in common}
if train_points != 1000:
    print(f"note: this results file trained on {train_points} points, not the paper's 1,000")
checks = []
for claim, test in FINDINGS:
    paper_ok, paper_evidence = test(paper, 1 / 40)
    try:
        ours_ok, ours_evidence = test(ours_complete, 1 / classes)
    except KeyError as missing:
        ours_ok, ours_evidence = False, f"column {missing} has no finished run in this file"
    checks.append({"claim": claim, "paper_ok": "passes" if paper_ok else "FAILS",
                   "ours": "reproduced" if ours_ok else "not reproduced",
                   "evidence": ours_evidence, "paper_evidence": paper_evidence})
display(HTML(html_table(checks, [
    ("claim", "the paper's finding", "{}"), ("paper_ok", "test on the paper's numbers (ModelNet40)", "{}"),
    ("ours", f"our sweep ({SHAPES})", "{}"), ("evidence", "evidence, ours (accuracy in %)", "{}"),
    ("paper_evidence", "the same on the paper's numbers", "{}")])))
''')

md(r'''
DISCUSSION_PLACEHOLDER
''')

md(r'''
## Beyond the paper

### Larger than the training size, and the price of each column

The paper tests only downwards from the training size. Our runs were also tested at 2,000 points,
twice the training size, and at 10. The table gives, per column, the mean accuracy there relative
to the training size, the spread over seeds at the training size, and what each column cost to
train: training throughput and wall time per run, measured on one CPU core with the other core
busy.
''')

code(r'''
cost_rows = []
for spec in sf.TABLE2_SPECS:
    runs = [r for r in finished if r["spec"] == spec]
    if not runs:
        continue
    at = lambda n: [r["accuracy_by_population_size"][str(n)] for r in runs]
    top = max(results["evaluation"]["sizes"])
    cost_rows.append({"spec": spec, "runs": len(runs), "parameters": runs[0]["parameters"],
                      "acc_train": float(np.mean(at(train_points))),
                      "spread": float(np.ptp(at(train_points))) if len(runs) > 1 else None,
                      "gain_top": float(np.mean(at(top)) - np.mean(at(train_points))),
                      "acc_10": float(np.mean(at(10))),
                      "throughput": float(np.mean([r["clouds_per_second"] for r in runs])),
                      "seconds": float(np.mean([r["train_seconds"] for r in runs]))})
display(HTML(html_table(cost_rows, [
    ("spec", "column", "{}"), ("runs", "runs", "{}"), ("parameters", "parameters", "{:,}"),
    ("acc_train", f"mean accuracy, n = {train_points}", "{:.1%}"),
    ("spread", "best − worst seed", "{:.1%}"),
    ("gain_top", f"n = {max(results['evaluation']['sizes'])} minus n = {train_points}", "{:+.1%}"),
    ("acc_10", "mean accuracy, n = 10", "{:.1%}"),
    ("throughput", "training clouds / s", "{:,.0f}"), ("seconds", "training s / run", "{:,.0f}")],
    caption=f"Beyond Table 2, {data_label(results)}")))
fastest = max(cost_rows, key=lambda r: r["throughput"])
slowest = min(cost_rows, key=lambda r: r["throughput"])
print(f"fastest column {fastest['spec']} ({fastest['throughput']:,.0f} clouds/s) is "
      f"{fastest['throughput'] / slowest['throughput']:.1f}x the slowest, {slowest['spec']}")
''')

md(r'''
### Which shapes a small cloud confuses

What is lost when a cloud shrinks? The confusion matrices of the live `max/max` model at its
training size and at 10 points show which classes its mistakes go to. (They come from the live
model, so at the `quick` budget they show a weak model; `SETFUNCS_BUDGET=full` gives a stronger
one.)
''')

code(r'''
@torch.no_grad()
def confusion(model: torch.nn.Module, n: int) -> np.ndarray:
    """Rows: true class, columns: predicted class, as fractions of each true class."""
    x = pc.standardize(pc.subsample(clouds.test_x, n, np.random.default_rng([TEST_SEED, n])))
    model.eval()
    predicted = model(torch.from_numpy(x)).argmax(1).numpy()
    k = len(clouds.class_names)
    matrix = np.zeros((k, k))
    np.add.at(matrix, (clouds.test_y, predicted), 1)
    return matrix / matrix.sum(1, keepdims=True)


fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
for ax, n in zip(axes, (live_budget.points, 10)):
    matrix = confusion(live["max/max"]["model"], n)
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="Blues")
    ax.set(xticks=range(len(class_names)), yticks=range(len(class_names)), xlabel="predicted",
           ylabel="true class", title=f"n = {n}: accuracy {np.mean(np.diag(matrix)):.0%}")
    ax.set_xticklabels(class_names, rotation=90, fontsize=8)
    ax.set_yticklabels(class_names, fontsize=8)
fig.colorbar(image, ax=axes, shrink=0.8, label="fraction of the true class")
fig.suptitle(f"{SHAPES}: confusion of the live max/max model ({live_budget.name} budget)", fontsize=10)
plt.show()
small = confusion(live["max/max"]["model"], 10)
np.fill_diagonal(small, 0)
pairs = sorted(((small[i, j], class_names[i], class_names[j]) for i in range(len(small))
                for j in range(len(small))), reverse=True)[:4]
print("most frequent confusions at n = 10: " +
      "; ".join(f"{true} taken for {guess} ({share:.0%})" for share, true, guess in pairs))
''')

md(r'''
## Reproduce it

```bash
# the sweep behind Table 2 here, on the offline shapes
python -m setfuncs.experiments.pointcloud sweep --budget medium --runs 3 --jobs 2 --data shapes \
    --out results/pointcloud-medium.json
# the same on ModelNet40 (download ModelNet40.zip from https://modelnet.cs.princeton.edu/ and unzip it)
python -m setfuncs.experiments.pointcloud sweep --budget medium --runs 3 --jobs 2 --data modelnet40 \
    --root ModelNet40 --out results/pointcloud-modelnet40-medium.json
# the paper's scale (153,000 steps at width 256; meant for a GPU)
python -m setfuncs.experiments.pointcloud sweep --budget full --runs 1 --data modelnet40 \
    --root ModelNet40 --out results/pointcloud-full.json
# Table 2 as text, with the paper's numbers
python -m setfuncs.experiments.pointcloud table results/pointcloud-medium.json --paper results/paper-results.json
```

The results file is rewritten after every finished run (`"complete": false` until the end), and
runs are submitted seed by seed, so an interrupted sweep holds about equally many runs of every
column. Use `--configurations max/max max/r-lse` to run only some columns.

## Exercises

```{exercise}
:label: pc-ex-parameters

Count the parameters of the reference model, `max/max` at width 256 on ModelNet40's 40 classes,
by hand from the equations of the model section, and check your count with
`pc.make_model("max/max", 40, pc.FULL)`. Which part holds most of them?
```

```{solution} pc-ex-parameters
:class: dropdown

Each equivariant layer of eq. (1) has one weight matrix $\Gamma_l$ and one bias $b_l$ (a plain
$\max$ has no parameters): $3 \cdot 256 + 256 = 1{,}024$ for the first layer and
$256 \cdot 256 + 256 = 65{,}792$ for each of the other two. The classifier has
$256 \cdot 256 + 256 = 65{,}792$ and $256 \cdot 40 + 40 = 10{,}280$. In all
$1{,}024 + 2 \cdot 65{,}792 + 65{,}792 + 10{,}280 = 208{,}680$. The three $256 \times 256$
layers hold about 95 % of them.

    model = pc.make_model("max/max", 40, pc.FULL)
    print(sum(p.numel() for p in model.parameters()))   # 208680
```

```{exercise}
:label: pc-ex-rotation

Standardisation makes the classifier blind to where a cloud is and how large it is. Is it also
blind to the cloud's heading about $z$? Rotate the test clouds about $z$ by angles from 0 to $\pi$
(`pc.rotate_z`) and measure the live `max/max` model's accuracy at its training size. What do you
expect on the offline shapes, and what would you expect on ModelNet40?
```

```{solution} pc-ex-rotation
:class: dropdown

Nothing in the model is invariant to rotations: the first layer multiplies the raw coordinates by
$\Gamma_1$. The offline shapes, however, are generated in every heading (their $\theta$ is uniform
on a full turn), so the training data teach the model to ignore the heading, and the accuracy
should stay within the test set's noise at every angle:

    n = live_budget.points
    model = live["max/max"]["model"]
    for angle in np.linspace(0, np.pi, 5):
        rotated = pc.rotate_z(clouds.test_x, np.full(len(clouds.test_x), angle))
        print(f"{angle:.2f} rad: {pc.accuracy(model, rotated, clouds.test_y, n):.1%}")

ModelNet40's models are aligned (upright and facing the same way), and the augmentation rotates
them by at most $\pm 0.1\pi$, so a model trained on them has never seen other headings, and its
accuracy should fall as the angle grows.
```
''')

nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}, "language_info": {"name": "python"}})
nbf.write(nb, "book/10_point_clouds.ipynb")
