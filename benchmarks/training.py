"""Model-steps per second of the training step: eager, CUDA-graphed, and a graphed ensemble of seeds.

    python benchmarks/training.py                       # the GPU when there is one, else the CPU
    OMP_NUM_THREADS=1 python benchmarks/training.py --device cpu --steps 3 --seeds 4

Times the committed training loop itself (:func:`setfuncs.train.fit`,
:func:`setfuncs.ensemble.fit_ensemble`) at the FULL budgets' shapes: the circle experiment (width
128, batch 64, populations of 20, two equivariant layers, three reads) for max/max, r-max/r-max and
r-lse/r-lse, the point-cloud classifier (width 256, 1,000 particles, batch 64, three
equivariant layers) for max/max and r-lse/r-lse, and the mixture experiment at its MEDIUM budget
(the reruns': width 48, batch 32) for max/max and r-lse/r-lse, where eager training draws a new
population size every step (as the sweep's one-by-one runs do) and the graphed and ensemble modes
train on batches padded to the largest size with a mask (as its GPU ensembles do), and the two
other reruns of ``scripts/gpu_sweeps.sh`` at their MEDIUM shapes: the point-cloud classifier (width
64, batch 32, 1,000 particles; ``--only pointcloud-medium``) and AIR with a set localiser (``mean``
and ``r-lse``, batch 32, 200 particles, trained on its negative ELBO as an objective; ``--only
attention``). The data is made once on the device, as the sweeps' shared streams are, so the
numbers are the step's own.

A step's time is the *marginal* one: ``fit`` is run for ``w`` and for ``w + steps`` steps, each
timed three times and the fastest kept, and the difference divided by ``steps``, which leaves out
the warm-up, the capture and the compilation of the first steps. On a GPU: eager, graphed and an ensemble of ``--seeds`` models in one graph; on a
CPU: eager and the ensemble. For models with a recurrent aggregation, one more mode (``products``:
graphed on a GPU, eager on a CPU) steps the LSTM cells of one model as an ensemble does, by
:func:`setfuncs.learnable.lstm_cell_from_products`, instead of PyTorch's ``torch.lstm_cell`` (fused
kernels on CUDA): what the fused cell gains a single run. Ratios are against eager training of one model, in this run, on this
device; a model-step is one gradient step of one model (an ensemble step of ``S`` models is ``S``
model-steps). The last lines project the circle FULL sweep (36 configurations x 20 seeds x 20,000
steps) from the measured ensemble rates, training only (no data, no evaluation): a projection,
not a measurement (the sweep command's own wall time is in its results file). With
``--circle-specs paper --modes ensemble`` every one of the 36 configurations is measured, and the
projection is their sum. For each MEDIUM rerun (the mixture, point clouds, attention: configurations
x 10 seeds x steps) the same projection in minutes, from the slowest and fastest spec timed.
``--specs`` (with ``--only``) times other specs of one experiment; ``tests/test_benchmark_training.py``
runs the benchmark in CI-sized form.

``compiled``: one model whose objective (its forward pass and loss) ``torch.compile`` compiles
with Inductor at fixed shapes, trained by ``fit`` (graphed on a GPU, so against ``graphed`` it is
what compiling adds under the graph), with Dynamo's graph breaks counted beside it; only when named
(``--modes eager graphed compiled``: ``scripts/gpu_checks.sh`` times the circle specs so), since every
spec is compiled first (on this CPU a QUICK circle model took 8 s in the plain setting, 51 s in the
recurrent one). A graph break is code Dynamo could not trace, run by Python in between (e.g.
``nn.LSTM``, which the recurrent settings' process step uses): the count says how much of the step
stayed uncompiled.

``concurrent`` (a mode of its own, once per experiment): the ensembles of every spec timed, trained
at once, each in a thread and (on a GPU) on a CUDA stream of its own, as ``--concurrent K`` of a
sweep trains its configurations (:mod:`setfuncs.experiments.concurrent`), against the same
ensembles one after another, in model-steps per second of all of them together; the circle
projection is then also given at that ratio.
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time
from contextlib import contextmanager
from functools import partial
from typing import Callable, Iterator

import torch
from torch import nn

import setfuncs as sf
import setfuncs.learnable
from setfuncs.ensemble import fit_ensemble
from setfuncs.experiments.circle import FULL as CIRCLE_FULL
from setfuncs.experiments.mixture import MEDIUM as MIXTURE_MEDIUM
from setfuncs.experiments.mixture import make_model as mixture_deep_set
from setfuncs.experiments.mixture.data import padded_training_sampler, training_sampler
from setfuncs.experiments.mixture.loss import beta_nll
from setfuncs.experiments.concurrent import at_once, on_own_stream
from setfuncs.experiments.protocol import RANDOM_STATE
from setfuncs.experiments.sweeps import RERUN_SEEDS, all_configurations, paper_configurations, spec_of
from setfuncs.experiments.attention import MULTI_MNIST
from setfuncs.experiments.attention.budget import MEDIUM as ATTENTION_MEDIUM
from setfuncs.experiments.attention.sweep import SPECS as ATTENTION_SPECS
from setfuncs.experiments.attention.train import make_air, negative_elbo_per_pixel
from setfuncs.experiments.pointcloud.budget import FULL as CLOUD_FULL
from setfuncs.experiments.pointcloud.budget import MEDIUM as CLOUD_MEDIUM
from setfuncs.experiments.pointcloud.shapes import SHAPE_NAMES
from setfuncs.experiments.pointcloud.sweep import COLUMNS as CLOUD_COLUMNS
from setfuncs.experiments.pointcloud.model import PointCloudClassifier
from setfuncs.steps import resolve_device
from setfuncs.train import fit

CIRCLE_SPECS = ["max/max", "r-max/r-max", "r-lse/r-lse"]
PAPER_CIRCLE_SPECS = [spec_of(*configuration) for configuration in paper_configurations()]
CLOUD_SPECS = ["max/max", "r-lse/r-lse"]
MIXTURE_SPECS = ["max/max", "r-lse/r-lse"]
ATTENTION_BENCH_SPECS = ["mean", "r-lse"]
MIXTURE_CONFIGURATIONS = {spec_of(*c): c for c in all_configurations()}
CLASSES = 40


def circle_model(spec: str) -> nn.Module:
    b = CIRCLE_FULL
    return sf.DeepSet(2, 3, spec, hidden=b.hidden, equivariant_layers=b.equivariant_layers, steps=b.recurrent_steps)


def cloud_model(spec: str) -> nn.Module:
    b = CLOUD_FULL
    return PointCloudClassifier(CLASSES, spec, hidden=b.hidden, equivariant_layers=b.equivariant_layers,
                                dropout=b.dropout, steps=b.recurrent_steps)


def cloud_medium_model(spec: str) -> nn.Module:
    b = CLOUD_MEDIUM
    return PointCloudClassifier(len(SHAPE_NAMES), spec, hidden=b.hidden, equivariant_layers=b.equivariant_layers,
                                dropout=b.dropout, steps=b.recurrent_steps)


def attention_model(spec: str) -> nn.Module:
    return make_air(spec, ATTENTION_MEDIUM, MULTI_MNIST)


def mixture_model(spec: str) -> nn.Module:
    return mixture_deep_set(*MIXTURE_CONFIGURATIONS[spec], MIXTURE_MEDIUM)


def mixture_batch(device: torch.device, g: torch.Generator, mode: str) -> tuple:
    """A batch of the MEDIUM budget: a drawn size for ``eager``, padded to the largest with a mask otherwise."""
    sample = (training_sampler if mode == "eager" else padded_training_sampler)(MIXTURE_MEDIUM.batch, g)
    return tuple(None if t is None else t.to(device) for t in sample())


def circle_batch(device: torch.device, g: torch.Generator, mode: str) -> tuple:
    return (torch.randn(CIRCLE_FULL.batch, 20, 2, generator=g).to(device),
            torch.randn(CIRCLE_FULL.batch, 3, generator=g).to(device), None)


def cloud_batch(device: torch.device, g: torch.Generator, mode: str) -> tuple:
    return (torch.randn(CLOUD_FULL.batch, CLOUD_FULL.points, 3, generator=g).to(device),
            torch.randint(CLASSES, (CLOUD_FULL.batch,), generator=g).to(device), None)


def cloud_medium_batch(device: torch.device, g: torch.Generator, mode: str) -> tuple:
    return (torch.randn(CLOUD_MEDIUM.batch, CLOUD_MEDIUM.points, 3, generator=g).to(device),
            torch.randint(len(SHAPE_NAMES), (CLOUD_MEDIUM.batch,), generator=g).to(device), None)


def attention_batch(device: torch.device, g: torch.Generator, mode: str) -> tuple:
    """Canvases ``[B, 50, 50]`` (AIR's multi-MNIST side, the rerun's) in [0, 1] and ``particles`` in the normalised frame, as ``(x, y, None)``
    the way the attention objective reads them (``y``: the particles)."""
    b = ATTENTION_MEDIUM
    side = MULTI_MNIST.canvas_size
    return (torch.rand(b.batch, side, side, generator=g).to(device),
            (2 * torch.rand(b.batch, b.particles, 2, generator=g) - 1).to(device), None)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


#: Timings of each call of :func:`marginal_seconds`, of which the fastest counts.
REPEATS = 3


def marginal_seconds(train: Callable[[int], object], warm: int, steps: int, device: torch.device) -> float:
    """Seconds per step: ``(T(warm + steps) - T(warm)) / steps`` of the training call ``train(n)``,
    after one untimed call (imports, allocator, kernel caches), where ``T(n)`` is the fastest of
    :data:`REPEATS` timings of ``train(n)``: another process that takes the core for a moment
    lengthens one timing, not the fastest (on a machine running a sweep, a single timing of 2 steps
    once took longer than one of 8)."""
    train(warm)
    times = []
    for n in (warm, warm + steps):
        timings = []
        for _ in range(REPEATS):
            synchronize(device)
            start = time.perf_counter()
            train(n)
            synchronize(device)
            timings.append(time.perf_counter() - start)
        times.append(min(timings))
    if times[1] <= times[0]:
        raise RuntimeError(f"{steps} more steps took no longer than {warm} ({times}); pass a larger --steps")
    return (times[1] - times[0]) / steps


@contextmanager
def cells_from_products() -> Iterator[None]:
    """Inside the block the recurrent aggregations step their LSTM cells by
    :func:`setfuncs.learnable.lstm_cell_from_products`, as they do under ``torch.vmap``."""
    automatic = setfuncs.learnable.lstm_cell
    setfuncs.learnable.lstm_cell = setfuncs.learnable.lstm_cell_from_products
    try:
        yield
    finally:
        setfuncs.learnable.lstm_cell = automatic


def measure(make: Callable[[str], nn.Module], batch: Callable, loss: Callable, spec: str, mode: str,
            device: torch.device, warm: int, steps: int, seeds: int, objective: bool = False,
            backend: str = "inductor") -> float:
    """Model-steps per second of one spec in one mode (``eager``, ``graphed``, ``ensemble``, or
    ``products``: graphed on a GPU, eager on a CPU, with :func:`cells_from_products`). With
    ``objective``, ``loss`` is the objective of the model and the batch (``fit(objective=...)``)."""
    if mode == "products":
        with cells_from_products():
            return measure(make, batch, loss, spec, "graphed" if device.type == "cuda" else "eager", device, warm,
                           steps, seeds, objective)
    how = {"loss": None, "objective": loss} if objective else {"loss": loss}
    g = torch.Generator().manual_seed(0)
    data = [batch(device, g, mode) for _ in range(4)]
    if mode == "compiled":
        return compiled_rate(make(spec), data, loss, objective, device, warm, steps, backend)

    if mode == "ensemble":
        x, y, mask = data[0]                  # every model on the same batch: the step's cost, not the data's
        stacked = (torch.stack([x] * seeds), torch.stack([y] * seeds), None if mask is None else torch.stack([mask] * seeds))

        def train(n: int) -> None:
            torch.manual_seed(0)
            models = [make(spec) for _ in range(seeds)]
            fit_ensemble(models, lambda: stacked, steps=n, clip=1.0, progress=False, device=device, **how)
        return seeds / marginal_seconds(train, warm, steps, device)

    def train(n: int) -> None:
        torch.manual_seed(0)
        fit(make(spec), cycling(data), steps=n, clip=1.0, progress=False, device=device,
            graph=(mode == "graphed"), **how)
    return 1.0 / marginal_seconds(train, warm, steps, device)


def cycling(data: list[tuple]) -> Callable[[], tuple]:
    """A sampler that returns the batches of ``data`` in turn, endlessly."""
    batches = itertools.cycle(data)
    return lambda: next(batches)


def compiled_rate(model: nn.Module, data: list[tuple], loss: Callable, objective: bool, device: torch.device,
                  warm: int, steps: int, backend: str = "inductor") -> float:
    """Model-steps per second of one model whose objective (``loss(model(x, mask), y)``, or the
    objective itself) is compiled by ``torch.compile`` (``backend``, fixed shapes), trained by ``fit``
    (graphed on a GPU). One model and one compiled function serve every timed call, so that only
    the first call compiles; Dynamo's graph breaks are counted by :func:`graph_breaks`."""
    scored = loss if objective else (lambda m, x, y, mask: loss(m(x, mask), y))
    compiled = torch.compile(scored, backend=backend, dynamic=False)
    draw = cycling(data)

    def train(n: int) -> None:
        fit(model, draw, loss=None, objective=compiled, steps=n, clip=1.0,
            progress=False, device=device, graph=device.type == "cuda")
    return 1.0 / marginal_seconds(train, warm, steps, device)


def graph_breaks() -> int:
    """Dynamo's graph breaks so far in this process (each falls back to Python for the code it
    could not trace: e.g. ``nn.LSTM``, which Dynamo does not trace)."""
    from torch._dynamo.utils import counters
    return sum(counters["graph_break"].values())


def concurrent_rates(make: Callable[[str], nn.Module], batch: Callable, loss: Callable, specs: list[str],
                     device: torch.device, warm: int, steps: int, seeds: int, objective: bool = False
                     ) -> tuple[float, float]:
    """Model-steps per second of the ensembles of ``specs`` (``seeds`` models each, every model on
    one batch as in :func:`measure`) trained at once, each in a thread and on a CUDA stream of its
    own, and the same ensembles trained one after another."""
    how = {"loss": None, "objective": loss} if objective else {"loss": loss}
    g = torch.Generator().manual_seed(0)
    stacked = {}
    for spec in specs:
        x, y, mask = batch(device, g, "ensemble")
        stacked[spec] = (torch.stack([x] * seeds), torch.stack([y] * seeds),
                         None if mask is None else torch.stack([mask] * seeds))

    def one(spec: str, n: int) -> None:
        with RANDOM_STATE:
            torch.manual_seed(0)
            models = [make(spec) for _ in range(seeds)]
        fit_ensemble(models, lambda: stacked[spec], steps=n, clip=1.0, progress=False, device=device, **how)

    def together(n: int) -> None:
        at_once([partial(one, spec, n) for spec in specs], device)

    def one_after_another(n: int) -> None:
        for spec in specs:
            on_own_stream(partial(one, spec, n), device)

    models = len(specs) * seeds
    return (models / marginal_seconds(together, warm, steps, device),
            models / marginal_seconds(one_after_another, warm, steps, device))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default)")
    parser.add_argument("--steps", type=int, default=None,
                        help="timed steps (default: 200 on a GPU, 20 on a CPU; a fifth of it for point clouds on a CPU)")
    parser.add_argument("--seeds", type=int, default=20, help="models in the ensemble (default: 20)")
    parser.add_argument("--compile-backend", default="inductor",
                        help="torch.compile's backend for --modes compiled (default: inductor; the test uses "
                             "aot_eager, which traces as Inductor does but compiles nothing)")
    parser.add_argument("--only", choices=["circle", "pointcloud", "mixture", "pointcloud-medium", "attention"],
                        default=None)
    parser.add_argument("--circle-specs", nargs="+", default=CIRCLE_SPECS, metavar="SPEC",
                        help=f"circle specs to time (default: {' '.join(CIRCLE_SPECS)}); 'paper': the paper's 36")
    parser.add_argument("--specs", nargs="+", default=None, metavar="SPEC",
                        help="with --only: time these specs of that experiment instead of its default ones")
    parser.add_argument("--modes", nargs="+",
                        choices=["eager", "graphed", "ensemble", "products", "concurrent", "compiled"], default=None,
                        help="modes to time (default: all the device has but compiled, which compiles every spec "
                             "first; eager is the ratios' baseline)")
    args = parser.parse_args()
    if args.specs is not None and args.only is None:
        parser.error("--specs needs --only (the experiment whose specs they are)")
    circle_specs = PAPER_CIRCLE_SPECS if args.circle_specs == ["paper"] else args.circle_specs
    device = resolve_device(args.device)
    gpu = device.type == "cuda"
    steps = args.steps or (200 if gpu else 20)
    warm = 10 if gpu else 2
    modes = ["eager", "graphed", "ensemble"] if gpu else ["eager", "ensemble"]
    if args.modes is not None:
        if "graphed" in args.modes and not gpu:
            parser.error("--modes graphed needs a CUDA device (--device cuda)")
        modes = [m for m in args.modes if m not in ("products", "concurrent")]
    products = args.modes is None or "products" in args.modes
    concurrent = args.modes is None or "concurrent" in args.modes
    name = torch.cuda.get_device_name(device) if gpu else f"{platform.processor() or 'CPU'}, {torch.get_num_threads()} thread(s)"
    print(f"device: {name}; torch {torch.__version__}; {steps} timed steps after {warm}; ensemble of {args.seeds}")
    # (name for --only, title, model, batch, loss or objective, specs, fraction of --steps timed on a CPU)
    experiments = [("circle", "circle FULL", circle_model, circle_batch, nn.functional.mse_loss, circle_specs, 1),
                   ("pointcloud", "point clouds FULL", cloud_model, cloud_batch, nn.functional.cross_entropy,
                    CLOUD_SPECS, 5),
                   ("mixture", "mixture MEDIUM", mixture_model, mixture_batch, beta_nll, MIXTURE_SPECS, 1),
                   ("pointcloud-medium", "point clouds MEDIUM", cloud_medium_model, cloud_medium_batch,
                    nn.functional.cross_entropy, CLOUD_SPECS, 1),
                   ("attention", "attention MEDIUM", attention_model, attention_batch, negative_elbo_per_pixel,
                    ATTENTION_BENCH_SPECS, 1)]
    rates: dict[tuple[str, str, str], float] = {}
    for key, title, make, batch, loss, specs, cpu_divisor in experiments:
        if args.only not in (None, key):
            continue
        specs = args.specs or specs
        n = steps if gpu else max(1, steps // cpu_divisor)
        print(f"\n{title}: model-steps per second (ms per step of one model), ratio to eager")
        for spec in specs:
            cells = []
            for mode in modes + (["products"] if products and "r-" in spec else []):
                breaks = graph_breaks()
                rate = measure(make, batch, loss, spec, mode, device, warm, n, args.seeds, key == "attention",
                               args.compile_backend)
                rates[(title, spec, mode)] = rate
                base = rates.get((title, spec, "eager"))
                ratio = f" x{rate / base:5.2f}" if base else ""
                broken = f" [{graph_breaks() - breaks} graph breaks]" if mode == "compiled" else ""
                cells.append(f"{mode} {rate:9.1f}/s ({1e3 / rate:7.3f} ms){ratio}{broken}")
            print(f"  {spec:<12} " + " | ".join(cells), flush=True)
        if concurrent and len(specs) > 1:
            together, apart = concurrent_rates(make, batch, loss, specs, device, warm, n, args.seeds, key == "attention")
            rates[(title, "concurrent", "ratio")] = together / apart
            print(f"  concurrent: the {len(specs)} ensembles of {args.seeds} above at once {together:9.1f}/s, one after "
                  f"another {apart:9.1f}/s: x{together / apart:5.2f}", flush=True)
    # (title, the rerun's configurations, seeds, steps): scripts/gpu_sweeps.sh's MEDIUM sweeps
    reruns = [("mixture MEDIUM", len(all_configurations()), RERUN_SEEDS, MIXTURE_MEDIUM.steps),
              ("point clouds MEDIUM", len(CLOUD_COLUMNS), RERUN_SEEDS, CLOUD_MEDIUM.steps),
              ("attention MEDIUM", len(ATTENTION_SPECS), RERUN_SEEDS, ATTENTION_MEDIUM.steps)]
    for title, configurations, seeds, sweep_steps in reruns:
        measured = [rate for (name, _, mode), rate in rates.items() if name == title and mode == "ensemble"]
        if measured:
            runs = configurations * seeds * sweep_steps
            print(f"\nprojection, training only: the {title} rerun's {configurations} configurations x {seeds} seeds "
                  f"x {sweep_steps} steps at the measured ensemble rates: {runs / max(measured) / 60:.1f} min to "
                  f"{runs / min(measured) / 60:.1f} min (fastest to slowest spec above)")
    circle = {spec: rate for (name, spec, mode), rate in rates.items() if name == "circle FULL" and mode == "ensemble"}
    if not circle:
        return
    runs = 20 * CIRCLE_FULL.steps
    speedup = rates.get(("circle FULL", "concurrent", "ratio"))
    at_ratio = "" if speedup is None else f"; {len(circle)} at once (x{speedup:.2f}):"
    if set(PAPER_CIRCLE_SPECS) <= circle.keys():
        hours = sum(runs / circle[spec] for spec in PAPER_CIRCLE_SPECS) / 3600
        print(f"\nprojection, training only: the paper's 36 configurations x 20 seeds x {CIRCLE_FULL.steps} steps, "
              f"each at its measured ensemble rate: {hours:.2f} h"
              + ("" if speedup is None else f"{at_ratio} {hours / speedup:.2f} h"))
    else:
        low, high = min(circle.values()), max(circle.values())
        print(f"\nprojection, training only: 36 configurations x 20 seeds x {CIRCLE_FULL.steps} steps at the "
              f"measured ensemble rates: {36 * runs / high / 3600:.2f} h if every configuration ran as fast "
              f"as the fastest spec above, {36 * runs / low / 3600:.2f} h as slow as the slowest"
              + ("" if speedup is None else f"{at_ratio} {36 * runs / high / 3600 / speedup:.2f} h to "
                                            f"{36 * runs / low / 3600 / speedup:.2f} h"))


if __name__ == "__main__":
    main()
