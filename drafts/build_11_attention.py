import nbformat as nbf
cells = []
def md(s): cells.append(nbf.v4.new_markdown_cell(s.strip("\n")))
def code(s): cells.append(nbf.v4.new_code_cell(s.strip("\n")))

md(r'''
# Experiment 4: spatial attention

**What you will learn.** The last experiment of {cite:t}`soelch_deep_2019` (Section 4.4,
Figure 4) no longer trains a set function on its own. It puts one inside a larger model,
Attend-Infer-Repeat (AIR) {cite:p}`eslami_attend_2016-1`, which explains a canvas of handwritten
digits as a few objects, each with a box (*where*) and an appearance (*what*), and is trained
end-to-end and unsupervised, on the likelihood of the canvas alone. The part of AIR that decides
where to look next, the *localiser*, normally reads the whole image at every step. The paper
replaces it by a Deep Set that reads a *population* of particles sampled from the image. You will

* see the canvases of digits that stand in for the paper's multi-MNIST in this book, and how to
  build them from MNIST if you have it;
* turn a canvas into a population, by reading its grey values as a density, and see with a
  slider what 5 or 1,000 particles show of it;
* meet the spatial transformer that reads a glimpse at a box and writes it back, and AIR's
  evidence lower bound (ELBO), in which this book sums the discrete presence variables out exactly;
* compare the original image localiser with the set-based one, equation by equation and weight
  by weight, and read why the package's set localiser departs from the paper in three places;
* train a set-based AIR live and look at its boxes at several population sizes;
* read Figure 4 from a sweep of the image localiser and seven aggregations, and check the
  paper's three findings against it.

```{admonition} Compute budget
:class: note
The live section trains one set-based model at the `quick` budget (1,500 Adam steps, under a
minute on one core). `SETFUNCS_BUDGET=full` trains it at the `medium` budget instead (several
minutes): the package's `full` budget is a paper-like scale, days per model on a CPU. The table,
Figure 4b and the findings are read from the committed file `results/attention-medium.json`,
written by

    python -m setfuncs.experiments.attention sweep --budget medium --runs 2 --jobs 2 --out results/attention-medium.json

All our canvases are made from scikit-learn's small digits, upscaled, not from MNIST, and every
table and figure says so.
```
''')

code(r'''
import math
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, display
from matplotlib.patches import Rectangle

from setfuncs.budget import pick
from setfuncs.experiments import attention as at
from setfuncs.experiments.attention.localisers import FOURIER_FEATURES, FOURIER_SCALE, SCALE_RANGE
from setfuncs.experiments.attention.table import LEARNABLE
from setfuncs.experiments.results import results_file
from setfuncs.experiments.sweeps import TEST_SEED
from setfuncs.model import parameter_count
from setfuncs.tables import html_table
from setfuncs.widgets import slider_figure

torch.set_num_threads(1)
DIGITS = f"scikit-learn digits on {at.CANVAS_SIZE}×{at.CANVAS_SIZE} canvases (not MNIST)"   # how every figure names our data
''')

md(r'''
## The data

### Multi-MNIST

AIR was introduced on *multi-MNIST*: canvases with zero, one or two MNIST digits at random
places, and the paper's canvases "contain multiple MNIST digits" too. The task is to find the digits without ever
being told where they are or how many there are.

MNIST cannot be downloaded where this book is built, so the package makes canvases of the same
form from the 1,797 handwritten digits that ship with scikit-learn
(`at.sklearn_digits`, 8 × 8 pixels with 17 grey levels), upscaled with bilinear interpolation
to the size of each digit (`at.make_canvases`):

* every canvas is a square image with intensities in $[0, 1]$ and holds zero, one or two digits,
  each count equally likely;
* every digit is a square whose side is drawn uniformly from a small range of pixels, placed
  uniformly at random where it fits entirely on the canvas; overlapping digits are combined by the
  pixel-wise maximum;
* the digits are split into a training pool and a test pool (`at.digit_pools`, the last quarter
  of the digits), so the test canvases show digits the model has never seen.

The true box of a digit is its square. The model never sees it: the boxes serve only to measure,
after training, whether the boxes AIR infers sit on the digits.

If you have MNIST's image file (`train-images-idx3-ubyte.gz` from Yann LeCun's MNIST page), the
package reads it and shrinks its 28 × 28 digits to the same sizes instead:

```python
from setfuncs.experiments import attention as at

digits = at.load_mnist_idx("train-images-idx3-ubyte.gz")      # [60000, 28, 28] float32 in [0, 1]
train_digits, test_digits = at.digit_pools(digits)
canvases = at.make_canvases(10_000, seed=0, digits=train_digits)  # images, boxes, counts
```

To run the sweep of this chapter on MNIST, pass it `--data mnist --mnist train-images-idx3-ubyte.gz`
(see "Reproduce it" below). The next cell prints the sizes and draws test canvases with their
true boxes.
''')

code(r'''
digits = at.sklearn_digits()
train_digits, test_digits = at.digit_pools()
print(f"digits: {len(digits):,} scikit-learn images of {digits.shape[1]}×{digits.shape[2]} pixels, "
      f"{len(train_digits):,} in the training pool and {len(test_digits):,} in the test pool")
print(f"canvases: {at.CANVAS_SIZE}×{at.CANVAS_SIZE} pixels, 0 to {at.MAX_DIGITS} digits each, "
      f"digit sides {at.DIGIT_SIZES[0]} to {at.DIGIT_SIZES[1]} pixels")

examples = at.make_canvases(12, seed=2, digits=test_digits)


def show_canvas(ax, image: np.ndarray, boxes: np.ndarray | None = None, color: str = "tab:green") -> None:
    """A canvas in pixel coordinates, with boxes (x0, y0, x1, y1) drawn over it."""
    h = image.shape[-1]
    ax.imshow(image, cmap="gray", vmin=0, vmax=1, extent=(0, h, h, 0))
    for x0, y0, x1, y1 in ([] if boxes is None else boxes):
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=1.2, color=color))
    ax.set(xlim=(0, h), ylim=(h, 0), xticks=[], yticks=[])


fig, axes = plt.subplots(2, 6, figsize=(10, 3.8), layout="constrained")
for ax, image, boxes, count in zip(axes.flat, *examples):
    show_canvas(ax, image, boxes[:count])
    ax.set_title(f"{count} digit{'s' if count != 1 else ''}", fontsize=9)
fig.suptitle(f"Test canvases: {DIGITS}, true boxes in green", fontsize=10)
plt.show()
''')

md(r'''
## From a canvas to a population

A Deep Set reads a set, not an image. The paper turns a canvas into one by reading its grey
values as a two-dimensional density and sampling particles from it. With the canvas in the
normalised frame $[-1, 1]^2$, where pixel $(j, k)$ (row $j$, column $k$) covers a square of side
$2/W$, the density is constant on every pixel and proportional to its intensity $I_{jk}$:

$$
p(u) = \frac{I_{jk}}{\sum_{j'k'} I_{j'k'}} \cdot \frac{HW}{4}
\qquad \text{for } u \text{ in pixel } (j, k).
$$

A population of $n$ particles $u_1, \dots, u_n$ is drawn i.i.d. from $p$: a pixel with probability
proportional to its intensity, then a point uniformly inside it (`at.sample_particles`). Every
particle is just a position $(x, y)$; the intensities have become the *density* of particles.

A canvas without digits has no density. It is part of the data, so the package gives it uniform
particles over the whole canvas: a population spread evenly everywhere is how a localiser can
tell an empty canvas from one with digits.

The paper trains with 200 particles per canvas and tests with 5, 20, 200 and 1,000. Move the
slider to see what each size shows of three test canvases; the bottom row is all the set
localiser gets to see.
''')

code(r'''
shown = [int(np.flatnonzero(examples.counts == k)[0]) for k in range(at.MAX_DIGITS + 1)]
shown_images = examples.images[shown]
populations = {n: at.sample_particles(torch.as_tensor(shown_images), n, torch.Generator().manual_seed(n)).numpy()
               for n in at.POPULATION_SIZES}


def draw_population(n: int) -> plt.Figure:
    fig, axes = plt.subplots(2, len(shown), figsize=(7.2, 4.9), layout="constrained")
    h = at.CANVAS_SIZE
    for column, (image, particles) in enumerate(zip(shown_images, populations[n])):
        pixels = (particles + 1) * h / 2
        top, bottom = axes[0, column], axes[1, column]
        show_canvas(top, image)
        top.scatter(*pixels.T, s=4 if n > 200 else 10, color="tab:orange", linewidths=0)
        count = examples.counts[shown[column]]
        top.set_title(f"{count} digit{'' if count == 1 else 's'}", fontsize=9)
        bottom.scatter(*particles.T, s=4 if n > 200 else 10, color="tab:orange", linewidths=0)
        bottom.set(xlim=(-1, 1), ylim=(1, -1), aspect="equal", xticks=[-1, 0, 1], yticks=[-1, 0, 1])
        bottom.tick_params(labelsize=7)
    axes[1, 0].set_ylabel("the population alone\n(normalised frame)", fontsize=8)
    fig.suptitle(f"{DIGITS}\npopulations of n = {n:,} particles, sampled in proportion to intensity",
                 fontsize=10)
    return fig


slider_figure(draw_population, list(at.POPULATION_SIZES), label="particles n")
''')

md(r'''
Five particles say roughly where the ink is and little more; at 200 the digits' outlines appear; at
1,000 the population is almost a picture. Training at 200 and testing at other sizes asks whether
the localiser has learnt something about the density rather than about populations of one size.

## The spatial transformer: glimpses in and out

AIR handles one object at a time through a *spatial transformer*
{cite:p}`jaderberg_spatial_2015`. A box is described by three numbers
$z^\text{where} = (s, t_x, t_y)$ in the normalised frame: its centre $(t_x, t_y)$ and its scale
$s$, the fraction of the canvas's side that it covers. *Reading* a $g \times g$ glimpse samples the
canvas with bilinear interpolation at

$$
u = s\,v + t, \qquad v \in [-1, 1]^2 \text{ on the glimpse's pixel grid},
$$

and *writing* a glimpse back uses the inverse map $v = (u - t)/s$ for every canvas pixel $u$,
with zeros outside the box (`at.glimpse`, `at.place`). Both are differentiable in
$z^\text{where}$, which is what lets AIR learn where to look from the reconstruction error alone.
Below, one digit is read with the box of its true square and with a box that is too large and
misplaced, and each glimpse is written back onto an empty canvas.
''')

code(r'''
budget = at.QUICK
one = int(np.flatnonzero(examples.counts == 1)[0])
canvas = torch.as_tensor(examples.images[one:one + 1])
true_where = torch.as_tensor(at.boxes_to_where(examples.boxes[one, :1]))
wrong_where = torch.tensor([[0.7, true_where[0, 1] + 0.25, true_where[0, 2] - 0.2]])
fig, axes = plt.subplots(2, 3, figsize=(7.2, 5.0), layout="constrained")
for row, (name, where) in enumerate((("true box", true_where), ("too large, misplaced", wrong_where))):
    look = at.glimpse(canvas, where, budget.glimpse_size)
    back = at.place(look, where, at.CANVAS_SIZE)
    box = at.where_to_boxes(where, at.CANVAS_SIZE).numpy()
    show_canvas(axes[row, 0], canvas[0].numpy(), box, color="tab:red")
    axes[row, 1].imshow(look[0], cmap="gray", vmin=0, vmax=1)
    axes[row, 1].set(xticks=[], yticks=[])
    show_canvas(axes[row, 2], back[0].numpy(), box, color="tab:red")
    s, tx, ty = where[0].tolist()
    axes[row, 0].set_title(f"{name}: s = {s:.2f}, t = ({tx:+.2f}, {ty:+.2f})", fontsize=8)
    axes[row, 1].set_title(f"glimpse, {budget.glimpse_size}×{budget.glimpse_size} pixels", fontsize=8)
    axes[row, 2].set_title("glimpse written back (place)", fontsize=8)
fig.suptitle(f"{DIGITS}: reading and writing a glimpse", fontsize=10)
plt.show()
''')

md(r'''
The true box reads a glimpse that fills its frame with the digit, and writing it back reproduces
the digit in place, slightly blurred by two bilinear resamplings. The large box reads a small,
cut-off digit, and what is written back covers only part of it. In AIR the glimpse is not written
back as it was read: it is encoded into a few numbers $z^\text{what}$ and *decoded*, so what the
model can reconstruct depends on how well its boxes frame the digits.

## Attend-Infer-Repeat and its ELBO

**The generative model.** A canvas $x$ shows $N \le K$ objects, with $K = 3$ steps for zero to
two digits and one to spare. Every object $i$ has a box $z^\text{where}_i$ and an appearance
$z^\text{what}_i$; a decoder (an MLP) turns $z^\text{what}_i$ into a $g \times g$ glimpse, the
spatial transformer places it at $z^\text{where}_i$, and the canvas's mean $\bar x$ is the sum of
the placed glimpses. The priors and the likelihood (`setfuncs.experiments.attention.air`) are

$$
p(N = k) = \rho^k (1 - \rho) \ (k < K), \quad p(N = K) = \rho^K, \qquad
z^\text{what}_i \sim \mathcal N(0, I), \qquad
z^\text{where}_i \sim \mathcal N\big((s_0, 0, 0), \operatorname{diag}(\sigma_s^2, 1, 1)\big),
$$

$$
x_{jk} \mid z_{1:N} \sim \mathcal N(\bar x_{jk}, \sigma_x^2) \quad \text{independently for every pixel}.
$$

A small $\rho$ makes every object cost $\ln(1/\rho)$ nats, so the model only posits an object
that pays for itself in reconstruction. The prior on the scale is centred on the digits' size, so a
glimpse much larger than a digit also costs nats. The likelihood is Gaussian, not the Bernoulli
of many AIR implementations: our canvases have continuous grey values, for which a Bernoulli
"likelihood" is not a normalised density (its ELBO would bound nothing), and the sum of
overlapping glimpses may exceed 1, which a Gaussian mean allows.

**The inference network.** Step $i$ asks the localiser for the probability
$\sigma(\ell_i)$ that object $i$ is present and for a Gaussian $q(z^\text{where}_i)$, reads the
glimpse at a sample of $z^\text{where}_i$, and encodes it into a Gaussian $q(z^\text{what}_i)$ (an
MLP). The presences form a chain that stops at the first absent object.

**The ELBO, with the presences summed out.** The original AIR samples the discrete presences and
trains the localiser's presence output with a score-function estimator (REINFORCE with a learned
baseline), whose variance is one reason AIR is "notoriously hard to train", as the paper puts it
{cite:p}`kosiorek_sequential_2018`. A Concrete relaxation would lower the variance, but it trains
a relaxed model with a biased gradient, not the ELBO. Here the count $N$ has only $K + 1 = 4$
values, and the steps after the first absent object do not matter, so the package **sums the
presence variable out exactly**. It runs all $K$ steps as if every earlier object were present,
the only history under which step $i$ matters, and computes

$$
q(N = k) = \prod_{i \le k} \sigma(\ell_i) \cdot \big(1 - \sigma(\ell_{k+1})\big)^{[k < K]},
$$

$$
\mathcal L(x) = \sum_{k=0}^{K} q(N = k) \Big[ \log p\big(x \mid z_{1:k}\big) + \log p(N = k) - \log q(N = k)
- \sum_{i \le k} \big( \mathrm{KL}(q(z^\text{where}_i) \,\|\, p) + \mathrm{KL}(q(z^\text{what}_i) \,\|\, p) \big) \Big],
$$

with one reparameterised sample of every $z^\text{where}_i, z^\text{what}_i$ and analytic Gaussian
KL divergences. $\mathcal L$ is exactly the expectation of the usual single-sample ELBO over the
presences, so it is still a lower bound on $\log p(x)$, with no variance from the discrete part;
the price is $K + 1$ likelihood evaluations instead of one. Training maximises $\mathcal L$ by
the reparameterisation gradient alone. The model's count is the most probable one,
$\arg\max_k q(N = k)$, and pictures of boxes draw $N$ from $q$ (`AIR.sample`).

The next cell prints the constants and two reference points for ELBO values: what the count prior
charges, and the ELBO's ceiling, the log-likelihood of an all-black canvas explained perfectly by
no objects.
''')

code(r'''
(s0, _, _), (sigma_s, _, _) = at.WHERE_PRIOR
prior = at.make_air("mean", budget, at.CANVAS_SIZE).prior_count_log_probs(torch.zeros(1))
pixels = at.CANVAS_SIZE ** 2
ceiling = pixels * (-math.log(at.LIKELIHOOD_STD) - 0.5 * math.log(2 * math.pi))
print(f"presence prior rho = {at.PRESENCE_PRIOR}: each object costs ln(1/rho) = {-math.log(at.PRESENCE_PRIOR):.2f} nats")
print("-log p(N = k) for k = 0..3: " + ", ".join(f"{-v:.2f}" for v in prior.tolist()) + " nats")
print(f"where prior: scale {s0} ± {sigma_s} (digits cover {at.DIGIT_SIZES[0] / at.CANVAS_SIZE:.2f} to "
      f"{at.DIGIT_SIZES[1] / at.CANVAS_SIZE:.2f} of the side), centre N(0, 1) per axis")
print(f"likelihood std sigma_x = {at.LIKELIHOOD_STD}: the ELBO of a {at.CANVAS_SIZE}×{at.CANVAS_SIZE} canvas "
      f"is at most {ceiling:.1f} nats (a black canvas, reconstructed exactly)")
''')

md(r'''
## Two localisers

Both localisers keep an LSTM state $h_i$ across the $K$ steps, take the previous step's latents
$z_{i-1} = (z^\text{where}_{i-1}, z^\text{what}_{i-1}, z^\text{pres}_{i-1})$ (zeros at the first
step), and share the same linear heads on $h_i$: the presence logit $\ell_i$, and the mean and
standard deviation of $q(z^\text{where}_i)$, with the mean scale squashed into a fixed range
(`SCALE_RANGE`) and the mean centre into $[-1, 1]$. They differ only in what the LSTM reads.

**The image localiser**, the original {cite:p}`eslami_attend_2016-1`, reads the whole flattened
canvas at every step:

$$
h_i = \operatorname{LSTM}\big([\operatorname{vec}(x),\ z_{i-1}],\ h_{i-1}\big).
$$

**The set localiser** reads the population $U = \{u_1, \dots, u_n\}$ with a Deep Set. Every
particle $j$ first gets its features $x_j$, then the Deep Set does what it always does:

$$
x_j = \big[u_j,\ \sin(2\pi B^\top u_j),\ \cos(2\pi B^\top u_j),\ h_{i-1},\
\operatorname{clip}_{\pm 3}\big((u_j - t_k)/s_k\big), 1\ \text{for the earlier steps } k < i\big],
$$

$$
m_j = \operatorname{embed}(x_j), \quad C = \operatorname{combine}(M), \quad a = \operatorname{aggregate}(C), \quad
r = \operatorname{process}(a), \qquad h_i = \operatorname{LSTM}\big([r,\ z_{i-1}],\ h_{i-1}\big),
$$

with $B \in \mathbb R^{2 \times F}$ a fixed random matrix, drawn once and never trained. Every
feature is computed per particle, so the localiser is invariant to the order of the particles.
$\operatorname{embed}$ and $\operatorname{process}$ are two-layer ReLU MLPs, and
$\operatorname{aggregate}$ is the aggregation under study: the plain mean, $\max$, sum and
$\operatorname{L\Sigma E}$, or the learnable `q-sum` (a query aggregation), `r-sum` and `r-lse`
(recurrent aggregations, chapter {doc}`06_learnable_aggregations`).

The LSTM of the image localiser has one weight per pixel and gate, which the set localiser
replaces by a few dozen numbers $r$. The next cell counts the weights of every localiser and of
the whole AIR model that holds it, at the sizes of the sweep and at the `full` budget.
''')

code(r'''
def kind(spec: str) -> str:
    return "image (original)" if spec == at.IMAGE else ("set, learnable" if spec in LEARNABLE else "set, plain")


count_rows = []
for spec in at.SPECS:
    medium, full = at.make_air(spec, at.MEDIUM, at.CANVAS_SIZE), at.make_air(spec, at.FULL, at.CANVAS_SIZE)
    count_rows.append({"spec": spec, "kind": kind(spec), "localiser": parameter_count(medium.localiser),
                       "model": parameter_count(medium), "localiser_full": parameter_count(full.localiser)})
image_weights, image_full = count_rows[0]["localiser"], count_rows[0]["localiser_full"]
for row in count_rows:
    row["ratio"] = image_weights / row["localiser"]
display(HTML(html_table(count_rows, [
    ("spec", "localiser", "{}"), ("kind", "kind", "{}"),
    ("localiser", "localiser weights (quick, medium)", "{:,}"), ("ratio", "image ÷ this", "{:.1f}×"),
    ("model", "whole AIR model (quick, medium)", "{:,}"), ("localiser_full", "localiser weights (full)", "{:,}")],
    caption=f"Trainable weights for {at.CANVAS_SIZE}×{at.CANVAS_SIZE} canvases ({DIGITS})")))
full_ratios = [image_full / row["localiser_full"] for row in count_rows[1:]]
set_ratios = [row["ratio"] for row in count_rows[1:]]
print(f"the set localisers have {min(set_ratios):.1f}× to {max(set_ratios):.1f}× fewer weights than the image "
      f"localiser at the quick and medium budgets, {min(full_ratios):.1f}× to {max(full_ratios):.1f}× at the full budget")
print(f"mean glimpse scale squashed into {SCALE_RANGE}; set features per particle: 2 coordinates + "
      f"{2 * FOURIER_FEATURES} Fourier features (frequency scale {FOURIER_SCALE}) + the LSTM state "
      f"({at.MEDIUM.hidden}) + 3 per earlier glimpse; Deep Set width {at.MEDIUM.set_hidden}, LSTM width "
      f"{at.MEDIUM.hidden}, glimpse {at.MEDIUM.glimpse_size}×{at.MEDIUM.glimpse_size}, z_what of {at.MEDIUM.what_features} dimensions")
''')

md(r'''
At the sizes of our sweep, the set localisers have several times fewer weights than the image
localiser (the column "image ÷ this", and the first line printed above), the saving the paper
points out with "an order of magnitude fewer weights". The
saving grows with the canvas, since the image localiser's LSTM grows with the number of pixels
and the set localiser's does not. At the `full` budget the gap is narrower: its LSTM is much
wider, and the LSTM's recurrent weights, which both localisers have, then make up most of the set
localiser's count. The learnable aggregations add few weights: a query, or a small recurrent cell over the Deep Set's width.

### Where the package departs from the paper

The paper says only that it "plugs an invariant model as the localization module". Building it, the
package's authors tried the obvious design first and changed three things, each for a reason they
measured in short development runs (the docstrings of `setfuncs.experiments.attention.localisers`
give the numbers):

* **No equivariant layers** in $\operatorname{combine}$. An equivariant layer of eq. (1)
  subtracts the aggregate from every particle, $\sigma(X - \mathbf 1 \alpha(X))$. On embeddings
  that are still nearly linear in the coordinates, this removes the population's common
  translation, exactly the information a localiser needs. With a $\max$ equivariant layer the
  first box stayed at about the same place on every canvas; without it, it moved onto the digits.
* **Richer particle features**: fixed random Fourier features of the coordinates, and the
  particle's coordinates in the frame of every earlier glimpse. With only $[u_j, h_{i-1}]$ the set
  localiser found one box per canvas, whatever the count, because its second step never found the
  second digit: nothing in a sum of embeddings of raw coordinates said which particles the first
  box had already explained. The glimpse-frame coordinates say it directly, and the Fourier
  features give an aggregated embedding the resolution of a histogram of the particles, which is
  what the image localiser reads from the pixels.
* **Readout `"last"`** for the recurrent aggregations: the aggregate is the recurrent state after
  the last read, $a_T$, not the paper's backward LSTM over $a_T, \dots, a_1$
  (chapter {doc}`06_learnable_aggregations`). With the backward readout, `r-lse` had not learnt to
  localise even after more than twice the `quick` budget's steps; the extra recurrent layer squeezes the
  positions the localiser needs through one more bottleneck.

The rest follows the paper: particles sampled in proportion to intensity, 200 of them in
training, tests at 5, 20, 200 and 1,000.

## Live: a set-based AIR

The next cell trains AIR with the `mean` set localiser here, with seed 0 and the sweep's own
code (`at.train_model`): every Adam step draws a batch of training canvases and a fresh
population of 200 particles per canvas, and minimises the negative ELBO per pixel. It then
evaluates the model on the test canvases at every population size (`at.evaluate_model`), and the
same, untrained model for comparison.
''')

code(r'''
live_budget = pick(at.QUICK, at.MEDIUM)
train, test = at.load_data(at.Data(), live_budget)
LIVE = "mean"
torch.manual_seed(0)
untrained = at.evaluate_model(at.make_air(LIVE, live_budget, at.CANVAS_SIZE), test, live_budget.eval_sizes,
                              TEST_SEED, live_budget.eval_batch)
start = time.perf_counter()
model, losses = at.train_model(LIVE, seed=0, budget=live_budget, canvases=train)
train_seconds = time.perf_counter() - start
live = at.evaluate_model(model, test, live_budget.eval_sizes, TEST_SEED, live_budget.eval_batch)
print(f"trained AIR with the {LIVE!r} localiser for {live_budget.steps:,} steps ({live_budget.name} budget, "
      f"{len(train.images):,} training canvases, {live_budget.particles} particles) in {train_seconds:.1f} s")

elbo_per_canvas = -np.asarray(losses) * at.CANVAS_SIZE ** 2
fig, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
ax.plot(np.convolve(elbo_per_canvas, np.ones(50) / 50, mode="valid"))
ax.axhline(ceiling, color="gray", ls=":", label=f"ceiling {ceiling:.0f} nats (black canvas)")
ax.set(xlabel="Adam step", ylabel="training ELBO (nats per canvas)\nmoving average of 50",
       title=f"{DIGITS}: training the {LIVE!r} set localiser, seed 0")
ax.title.set_fontsize(9)
ax.legend(fontsize=8)
plt.show()

live_rows = [{"model": f"{LIVE}, trained", "n": int(n), **m} for n, m in live.items()]
live_rows += [{"model": f"{LIVE}, untrained", "n": int(n), **m} for n, m in untrained.items()]
display(HTML(html_table(live_rows, [
    ("model", "model", "{}"), ("n", "population size n", "{:,}"), ("elbo", "test ELBO (nats per canvas)", "{:.1f}"),
    ("count_accuracy", "count accuracy", "{:.0%}"), ("box_iou", "box IoU (right counts)", "{:.2f}")],
    caption=f"The live model on {len(test.images)} test canvases ({DIGITS}); trained at n = "
            f"{live_budget.particles}")))
''')

md(r'''
The count accuracy is the fraction of test canvases whose most probable count is the true one;
the box IoU is, over the canvases counted right, the mean intersection over union of every true
box with the best of the inferred boxes (the means of $q(z^\text{where})$). The table says how far
the model got at this budget, and how its ELBO and counts change away from the training size.

Figure 4a of the paper shows bounding-box samples on test canvases at the four population sizes.
The next cell draws the same for the live model (`at.plot_boxes`) on four test canvases, one
empty, one with a digit and two with two. Every column uses populations of its size, and every
sample a fresh population and a fresh draw of the count and the boxes; the first step's boxes are
red, the second's cyan, and one of the populations is shown in orange.
''')

code(r'''
rows = [int(np.flatnonzero(test.counts == k)[j]) for k, j in ((0, 0), (1, 0), (2, 0), (2, 1))]
fig = at.plot_boxes(model, test.images[rows], list(live_budget.eval_sizes), samples=8, seed=1)
fig.suptitle(f"Figure 4a, live '{LIVE}' model ({live_budget.name} budget): 8 box samples per canvas\n"
             f"{DIGITS}, test digits", fontsize=9)
fig.tight_layout()
plt.show()
''')

md(r'''
Few particles give a localiser little to go on: look at how much the sampled boxes scatter, and
how often a digit is missed or counted twice, in the columns with 5 and 20 particles, against those
with 200 and 1,000. The sweep measures the same on many more canvases and seeds.

## The sweep

We trained AIR with the image localiser and with each of the seven set localisers, with two
seeds each, at the `medium` budget on the scikit-learn digit canvases, with 200 training
particles, and tested every set localiser at 5, 20, 200 and 1,000 particles. The results file
records how it was made:
''')

code(r'''
results = at.load_results(results_file("attention-medium.json"))
finished = [r for r in results["runs"] if r["error"] is None]
parameters = results["budget_parameters"]
data = results["data"]
data_label = (f"{'scikit-learn digits' if data['source'] == 'sklearn' else 'MNIST digits'} on "
              f"{data['canvas_size']}×{data['canvas_size']} canvases" + (" (not MNIST)" if data["source"] == "sklearn" else ""))
wall = results["wall_seconds"]
provenance = [
    ("data", f"{data_label}: {data['digits']}; {data['train_canvases']:,} training and {data['test_canvases']:,} test canvases "
             f"with 0/1/2 digits: {'/'.join(map(str, data['test_counts']))}"),
    ("command", "python -m setfuncs.experiments.attention " + " ".join(results["command"][1:])),
    ("git commit of the code", results["git_commit"]),
    ("budget", f"{results['budget']}: {parameters['steps']:,} steps of {parameters['batch']} canvases, "
               f"{parameters['particles']} training particles, LSTM width {parameters['hidden']}, "
               f"Deep Set width {parameters['set_hidden']}"),
    ("runs per localiser (seeds)", f"{results['runs_per_configuration']} (seeds "
                                   f"{', '.join(map(str, results['seeds']))})"),
    ("runs finished / diverged", f"{len(finished)} / {len(results['runs']) - len(finished)} of "
                                 f"{results['runs_per_configuration'] * len(results['configurations'])}"),
    ("complete", str(results["complete"])),
    ("test population sizes", ", ".join(map(str, results["evaluation"]["sizes"]))),
    ("wall time", "–" if wall is None else f"{wall / 60:.0f} min{'' if results['complete'] else ' so far'} "
                                           f"on {results['jobs']} worker process{'es' if results['jobs'] > 1 else ''}"),
    ("hardware", f"{results['hardware']['cpu_model']}, {results['hardware']['cpu_count']} cores, "
                 f"{results['hardware']['torch_threads_per_run']} torch thread per run"),
    ("versions", ", ".join(f"{k} {v}" for k, v in results["versions"].items())),
    ("started / finished (UTC)", f"{results['started']} / {results['finished']}"),
]
display(HTML(html_table([{"what": k, "value": v} for k, v in provenance],
                        [("what", "", "{}"), ("value", "", "{}")])))
''')

md(r'''
## Figure 4 in numbers

The table gives, per localiser, the mean over seeds of the test ELBO at every population size
(the image localiser reads the canvas, so it has one value), of the count accuracy and the box IoU
at the training size, the localiser's weights, and whether the mean ELBO grows strictly with the
population size (`at.attention_table`). The paper gives Figure 4b as a plot and no numbers, so
there are no paper columns to set beside ours.
''')

code(r'''
table = at.attention_table(results)
sizes = sorted(int(n) for n in results["evaluation"]["sizes"])
train_size = parameters["particles"]
for row in table:
    row["kind"] = kind(row["spec"])
columns = [("spec", "localiser", "{}"), ("kind", "kind", "{}"), ("runs", "runs", "{}"),
           ("localiser_parameters", "weights", "{:,}"), ("elbo_image", "ELBO, image", "{:.1f}")]
columns += [(f"elbo_{n}", f"ELBO, n = {n:,}", "{:.1f}") for n in sizes]
columns += [("count_accuracy", f"count accuracy (n = {train_size} / image)", "{:.0%}"),
            ("box_iou", f"box IoU (n = {train_size} / image)", "{:.2f}"),
            ("monotonic", "ELBO rises strictly with n", "{}")]
display(HTML(html_table(table, columns, caption=(
    f"Test ELBO (nats per canvas, higher is better), mean over seeds; {data_label}; {results['budget']} "
    f"budget, trained at n = {train_size}"))))


def mean_at(spec: str, key: str, size: str) -> float | None:
    """Mean over the finished runs of one localiser of a test metric at one size ("image" for the image localiser)."""
    values = [r["evaluation"][size][key] for r in finished
              if r["spec"] == spec and size in r["evaluation"] and r["evaluation"][size][key] is not None]
    return float(np.mean(values)) if values else None


by_size = [{"spec": row["spec"], **{f"{key}_{n}": mean_at(row["spec"], key, str(n)) for n in sizes
                                     for key in ("count_accuracy", "box_iou")}}
           for row in table if row["spec"] != at.IMAGE]
display(HTML(html_table(by_size, [("spec", "localiser", "{}")]
                        + [(f"count_accuracy_{n}", f"count accuracy, n = {n:,}", "{:.0%}") for n in sizes]
                        + [(f"box_iou_{n}", f"box IoU, n = {n:,}", "{:.2f}") for n in sizes],
                        caption=f"Count accuracy and box IoU by population size, mean over seeds ({data_label})")))
''')

md(r'''
Figure 4b of the paper plots the test ELBO against the population size, with the training size as
a dashed vertical line and the best baseline model, the image localiser, as a dashed horizontal
line. The left panel is ours (`at.plot_elbo_curves`: learnable aggregations solid, plain ones
dashed, the horizontal line the image localiser's mean over seeds); the right panel
shows the box IoU, the measure behind the paper's remark that boxes tighten as the population
grows.
''')

code(r'''
curves = at.elbo_curves(results)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
at.plot_elbo_curves(curves, ax=left)
left.set_xticks(sizes, [f"{n:,}" for n in sizes])
left.minorticks_off()
left.set_title(f"Figure 4b (ours): test ELBO, mean of up to {results['runs_per_configuration']} seeds", fontsize=9)
for k, row in enumerate(by_size):
    points = [(n, row[f"box_iou_{n}"]) for n in sizes if row[f"box_iou_{n}"] is not None]
    if points:
        right.plot(*zip(*points), marker="o", ms=3, color=f"C{k % 10}",
                   ls="-" if row["spec"] in LEARNABLE else "--", label=row["spec"])
image_iou = mean_at(at.IMAGE, "box_iou", "image")
if image_iou is not None:
    right.axhline(image_iou, color="black", ls="--", lw=1, label="image localiser")
right.axvline(train_size, color="gray", ls="--", lw=1, label="training size")
right.set(xscale="log", xlabel="population size n (particles)", ylabel="box IoU (canvases counted right)")
right.set_xticks(sizes, [f"{n:,}" for n in sizes])
right.minorticks_off()
right.legend(fontsize=7, ncol=2)
right.set_title("box IoU against population size", fontsize=9)
fig.suptitle(f"{data_label}; {results['budget']} budget" + ("" if results["complete"] else " (sweep incomplete)"),
             fontsize=9)
fig.tight_layout()
plt.show()
''')

md(r'''
## The paper's findings, one by one

The paper draws three conclusions from Figure 4, quoted below from `results/paper-results.json`.
The package's `at.findings` reads the evidence for each from our results file. The next cell
adds a verdict, with a test stated in advance for each:

1. *On par at the training size*: the best set localiser's mean ELBO at 200 particles is at least
   the image localiser's, less the larger spread between seeds (best minus worst) of the two. The
   weight ratio is reported beside it.
2. *Learnable aggregations improve strictly monotonically with the population size, plain ones do
   not reliably*: every learnable localiser's mean ELBO rises strictly from 5 to 20 to 200 to 1,000
   particles, and at least one plain localiser's does not.
3. *Boxes tighten as the population grows*: the paper observes this for the learnable aggregations,
   so the test is that every learnable localiser's mean box IoU is higher at 1,000 particles than
   at 5.

The paper's findings come from MNIST canvases and its own training, whose length it does not
give; ours from the `medium` budget on scikit-learn's digits, with two seeds per localiser.
''')

code(r'''
def seed_range(spec: str, size: str) -> float:
    values = [r["evaluation"][size]["elbo"] for r in finished if r["spec"] == spec and size in r["evaluation"]]
    return float(np.ptp(values)) if len(values) > 1 else 0.0


def on_par() -> tuple[str, str]:
    sets = [r for r in table if r["spec"] != at.IMAGE and r[f"elbo_{train_size}"] is not None]
    image = next((r for r in table if r["spec"] == at.IMAGE and r["elbo_image"] is not None), None)
    if not sets or image is None:
        return "not testable yet", "needs finished runs of the image localiser and of a set localiser"
    best = max(sets, key=lambda r: r[f"elbo_{train_size}"])
    slack = max(seed_range(at.IMAGE, "image"), seed_range(best["spec"], str(train_size)))
    ok = best[f"elbo_{train_size}"] >= image["elbo_image"] - slack
    return ("reproduced" if ok else "not reproduced"), f"seed spread allowed: {slack:.1f} nats"


def monotonic_learnable() -> tuple[str, str]:
    known = {r["spec"]: r["monotonic"] for r in table if r["spec"] != at.IMAGE and r["monotonic"] is not None}
    learnable = [s for s in LEARNABLE if s in known]
    plain = [s for s in known if s not in LEARNABLE]
    if not learnable or not plain:
        return "not testable yet", "needs finished runs of learnable and of plain localisers"
    ok = all(known[s] for s in learnable) and not all(known[s] for s in plain)
    missing = [s for s in at.SET_SPECS if s not in known]
    return ("reproduced" if ok else "not reproduced"), (f"missing: {', '.join(missing)}" if missing else "")


def boxes_tighten() -> tuple[str, str]:
    pairs = {s: (mean_at(s, "box_iou", str(sizes[0])), mean_at(s, "box_iou", str(sizes[-1]))) for s in LEARNABLE}
    known = {s: p for s, p in pairs.items() if None not in p}
    if not known:
        return "not testable yet", "needs box IoUs of learnable localisers at the smallest and largest size"
    ok = all(high > low for low, high in known.values())
    return ("reproduced" if ok else "not reproduced"), f"learnable localisers with IoUs: {', '.join(known)}"


checks = []
for item, (verdict, note) in zip(at.findings(results, paper=results_file("paper-results.json")),
                                 (on_par(), monotonic_learnable(), boxes_tighten())):
    checks.append({"paper": item["paper"], "verdict": verdict, "ours": item["ours"] + (f"; {note}" if note and verdict != "not testable yet" else "")})
display(HTML(html_table(checks, [
    ("paper", "the paper's finding (quoted)", "{}"), ("verdict", f"our sweep ({data_label})", "{}"),
    ("ours", "evidence from our results file", "{}")])))
''')

md(r'''
DISCUSSION_PLACEHOLDER
''')

md(r'''
## Reproduce it

```bash
# the sweep behind this chapter: 2 seeds of the image localiser and 7 set localisers on
# scikit-learn's digits, about 35 minutes on two cores
python -m setfuncs.experiments.attention sweep --budget medium --runs 2 --jobs 2 \
    --out results/attention-medium.json
# a quick check of the whole pipeline (under a minute per run)
python -m setfuncs.experiments.attention sweep --budget quick --runs 1 --jobs 2 \
    --out attention-quick.json
# on MNIST (download train-images-idx3-ubyte.gz from http://yann.lecun.com/exdb/mnist/)
python -m setfuncs.experiments.attention sweep --budget medium --runs 2 --jobs 2 --data mnist \
    --mnist train-images-idx3-ubyte.gz --out results/attention-mnist-medium.json
# a paper-like scale (200,000 steps at width 256; days per run on a CPU, meant for a GPU)
python -m setfuncs.experiments.attention sweep --budget full --runs 1 --data mnist \
    --mnist train-images-idx3-ubyte.gz --out results/attention-full.json
# the table and the paper's findings as text
python -m setfuncs.experiments.attention table results/attention-medium.json --paper results/paper-results.json
```

The results file is rewritten after every finished run (`"complete": false` until the end), and
runs are submitted seed by seed, so an interrupted sweep holds about equally many runs of every
localiser. Use `--configurations image mean r-lse` to run only some localisers.

## Exercises

```{exercise}
:label: attention-ex-weights

Count the weights of the image localiser at the `medium` budget by hand: a
`torch.nn.LSTMCell` with input $[\operatorname{vec}(x), z_{i-1}]$ and a state of 64, and a linear
head with seven outputs (presence logit, three means, three standard deviations). $z_{i-1}$ holds
$z^\text{where}$ (3), $z^\text{what}$ (8) and $z^\text{pres}$ (1). Check your count with
`at.make_air("image", at.MEDIUM, 32).localiser`. How does it grow with the side of the canvas, and
how does the set localiser's?
```

```{solution} attention-ex-weights
:class: dropdown

The LSTM's input has $32 \cdot 32 + 3 + 8 + 1 = 1{,}036$ features. An `LSTMCell` has four gates,
each with an input matrix, a recurrent matrix and two bias vectors:
$4 \cdot 64 \cdot (1{,}036 + 64) + 2 \cdot 4 \cdot 64 = 281{,}600 + 512 = 282{,}112$. The head adds
$64 \cdot 7 + 7 = 455$, in all $282{,}567$:

    localiser = at.make_air("image", at.MEDIUM, 32).localiser
    print(parameter_count(localiser))   # 282567

Almost all of it, $4 \cdot 64 \cdot 1{,}024 = 262{,}144$, is the input matrix of the pixels, so the
count grows with the number of pixels, with the square of the canvas's side: a $64 \times 64$
canvas would need about four times as many. The set localiser's weights do not depend on the
canvas at all: a particle has two coordinates on any canvas, and its features (Fourier features,
LSTM state, glimpse-frame coordinates) have fixed sizes.
```

```{exercise}
:label: attention-ex-sum

The `sum` localiser aggregates the embeddings of the particles by their sum. What happens to its
input $r = \operatorname{process}(\sum_j m_j)$ when it is trained at $n = 200$ and tested at
$n = 5$ or $n = 1{,}000$, and how does that differ for the `mean` localiser? Check your answer with
the sweep's numbers, or train both here at the `quick` budget (`at.train_model("sum", 0, at.QUICK,
train)`, then `at.evaluate_model`).
```

```{solution} attention-ex-sum
:class: dropdown

The particles are i.i.d. draws from the canvas's density, so the sum of their embeddings has
expectation $n\,\mathbb E[m(u)]$ and standard deviation proportional to $\sqrt n$. At $n = 5$ the
aggregate is about $5/200 = 1/40$ of what $\operatorname{process}$ saw in training, at $n = 1{,}000$
five times as large: in both cases $\operatorname{process}$ and the LSTM receive inputs from a
range they were never trained on, and nothing in the network can undo the scale, because the
network does not know $n$. The mean has the same expectation $\mathbb E[m(u)]$ at every $n$; only
its noise changes, as $1/\sqrt n$. So the `mean` localiser at $n = 5$ sees a noisy version of a
familiar input, and at $n = 1{,}000$ a cleaner one, while the `sum` localiser at $n = 5$ sees
something close to zero, as if the canvas were almost empty. Expect the `sum` localiser's ELBO and
count accuracy to fall much more at $n = 5$ than the `mean` localiser's; compare the rows `sum` and
`mean` of the table above:

    for spec in ("sum", "mean"):
        model, _ = at.train_model(spec, 0, at.QUICK, train)
        metrics = at.evaluate_model(model, test, at.QUICK.eval_sizes, TEST_SEED)
        print(spec, {n: round(m["elbo"], 1) for n, m in metrics.items()})

$\max$ and $\operatorname{L\Sigma E}$ sit in between: the maximum of more draws grows slowly with
$n$, and $\operatorname{L\Sigma E}$ adds about $\ln n$ to it (chapter {doc}`04_logsumexp`).
''')

nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}, "language_info": {"name": "python"}})
nbf.write(nb, "book/11_attention.ipynb")
