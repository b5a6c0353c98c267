"""Forward+backward time of every aggregation against plain torch and PyTorch Geometric, in one run.

    make bench            # installs the optional PyG baseline, then runs this script: x = [16, 1000, 64]
    python benchmarks/aggregations.py --batch 64 --particles 1000 --features 256 --repeat 7   # 16x the work
    python benchmarks/aggregations.py --batch 64 --particles 1000 --features 256 --mask holes --only plain \
        --aggregations sum mean      # issue 28's measurement: 10 % of the particles padded at random

Each line times what a training step pays for the aggregation, ``agg(x, mask).sum().backward()``
on ``x: [B, N, D]`` (the fastest of ``--repeat`` rounds after a warm-up), and prints the ratio of
setfuncs to the faster baseline and, for masked input, to the *dense* torch reduction of the same
``x`` without a mask, timed in the same rounds (the floor a mask is measured against: a masked
reduction reads at least what the dense one reads). The candidates of a line are interleaved, in
an order that rotates from round to round, so that machine load and the memory left behind by the
step before fall on all of them alike; every step allocates its gradient ``[B, N, D]`` afresh, as
a training step does (at ``[64, 1000, 256]`` that allocation, 65 MB of fresh pages, costs about as
much as the reduction itself, for setfuncs and baselines alike).

The backward pass starts from a scalar loss, whose gradient reaches the aggregation's output as a
broadcast (stride-0) tensor, as ``loss = y.sum()`` or ``y.mean()`` hands it on. Until issue 28 this
script seeded it with a contiguous ``torch.ones_like(y)`` instead, which hid the masked sum's
backward product falling back to one thread on such a gradient (``setfuncs.plain._WeightedSum``).
Such a gradient also slows torch's ``x.mean(1)`` (its backward divides a stride-0 tensor) and not
``x.sum(1)``, so the masked mean's ratio to its dense reduction reads lower than the masked sum's
for the same time. On a loaded machine time one thread (``--threads 1``): a two-thread step waits
for a busy second core.
Baselines:

* torch: the idiomatic dense reduction (``x.sum(1)``; masked: ``(x * mask).sum(1)``,
  ``masked_fill(-inf).amax(1)``, ``nanmedian`` ...);
  the softmax-weighted sum divides by its temperature (1.0) as setfuncs and PyG do;
* PyG: ``torch_geometric.nn.aggr`` on the flat tensor of real particles with a batch index, the
  layout PyG uses (built outside the timed region);
* recurrent aggregation with T = 3 against PyG's ``Set2Set`` (read-process-write).

The masked runs use ragged populations with between N/2 and N real particles (``--mask ragged``) or
pad 10 % of the particles at random positions (``--mask holes``).
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from typing import Callable

import torch

import setfuncs as sf

try:  # optional baseline: `pip install -r benchmarks/requirements.txt`
    import torch_geometric
    from torch_geometric.nn import Set2Set
    from torch_geometric.nn import aggr as pyg
except ImportError:  # the script still compares against plain torch
    torch_geometric = None

Step = Callable[[], None]


def timed(steps: list[Step], repeat: int) -> list[float]:
    """The fastest of ``repeat`` wall times of each step in milliseconds, after a warm-up, run round-robin.

    Interleaving the candidates exposes them to the same machine load, so their ratio is fair
    even when the absolute times drift; the order rotates by one each round, so that no candidate
    always runs first, or always right after the same other one. The fastest round is the one the
    rest of the machine disturbed least (a step of a few milliseconds that loses its core once
    doubles), which makes the ratios stable on a shared machine where medians are not.
    """
    for step in steps:
        step()
    times: list[list[float]] = [[] for _ in steps]
    for round_ in range(repeat):
        for k in range(len(steps)):
            i = (round_ + k) % len(steps)
            start = time.perf_counter()
            steps[i]()
            times[i].append(time.perf_counter() - start)
    return [1e3 * min(record) for record in times]


def dense_step(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> Step:
    """Forward and backward from a scalar loss, ``fn(x).sum().backward()``, with a fresh gradient."""
    def step() -> None:
        x.grad = None
        fn(x).sum().backward()
    return step


def torch_baselines(mask: torch.Tensor | None) -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    """The reductions a PyTorch user writes by hand, with the mask when there is one."""
    if mask is None:
        return {
            "sum": lambda x: x.sum(1), "mean": lambda x: x.mean(1), "max": lambda x: x.amax(1),
            "min": lambda x: x.amin(1), "lse": lambda x: torch.logsumexp(x, 1),
            "median": lambda x: torch.quantile(x, 0.5, dim=1),
            "quantile": lambda x: torch.quantile(x, 0.9, dim=1),
            "pmean": lambda x: x.pow(2).mean(1).sqrt(),
            "softmax": lambda x: ((x / 1.0).softmax(1) * x).sum(1),
        }
    m = mask.unsqueeze(-1)
    n = mask.sum(1, keepdim=True)
    return {
        "sum": lambda x: (x * m).sum(1), "mean": lambda x: (x * m).sum(1) / n,
        "max": lambda x: x.masked_fill(~m, -math.inf).amax(1),
        "min": lambda x: x.masked_fill(~m, math.inf).amin(1),
        "lse": lambda x: torch.logsumexp(x.masked_fill(~m, -math.inf), 1),
        "median": lambda x: torch.nanquantile(x.masked_fill(~m, math.nan), 0.5, dim=1),
        "quantile": lambda x: torch.nanquantile(x.masked_fill(~m, math.nan), 0.9, dim=1),
        "pmean": lambda x: ((x * m).pow(2).sum(1) / n).sqrt(),
        "softmax": lambda x: ((x / 1.0).masked_fill(~m, -math.inf).softmax(1) * x.masked_fill(~m, 0)).sum(1),
    }


def ours() -> dict[str, sf.Aggregation]:
    return {
        "sum": sf.Sum(), "mean": sf.Mean(), "max": sf.Max(), "min": sf.Min(), "lse": sf.LogSumExp(),
        "median": sf.Median(), "quantile": sf.Quantile(0.9), "pmean": sf.PowerMean(2.0),
        "softmax": sf.SoftmaxWeightedSum(1.0),
    }


def pyg_modules() -> dict[str, torch.nn.Module]:
    if torch_geometric is None:
        return {}
    return {
        "sum": pyg.SumAggregation(), "mean": pyg.MeanAggregation(), "max": pyg.MaxAggregation(),
        "min": pyg.MinAggregation(), "median": pyg.MedianAggregation(),
        "quantile": pyg.QuantileAggregation(0.9), "pmean": pyg.PowerMeanAggregation(2.0),
        "softmax": pyg.SoftmaxAggregation(1.0),
    }


def flat_layout(x: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """PyG's layout: the real particles stacked ``[sum N_b, D]`` and their population index."""
    b, n, _ = x.shape
    mask = torch.ones(b, n, dtype=torch.bool) if mask is None else mask
    flat = x.detach()[mask].clone().requires_grad_(True)
    index = torch.arange(b).unsqueeze(1).expand(b, n)[mask].contiguous()
    return flat, index


def print_padding_floor(x: torch.Tensor, mask: torch.Tensor, mask_name: str, repeat: int) -> None:
    """The floor that padding imposes, measured: padded particles may hold anything (inf, NaN), so a
    reduction that cannot weight them by zero in a matrix product (max, min, logsumexp, quantiles)
    must overwrite them first, which costs one extra read and write of ``x`` forward and of its
    gradient backward. The ratio of torch's own reduction on the filled tensor to the same reduction
    on the dense tensor, timed in one round, is the best a masked version of it can do."""
    keep = mask.unsqueeze(-1)
    print("\npadding floor: torch's reduction after one masked fill ÷ the same reduction without a mask")
    for name, reduce, fill in (("max", lambda t: t.amax(1), -math.inf),
                               ("lse", lambda t: torch.logsumexp(t, 1), -math.inf)):
        dense, filled = timed([dense_step(reduce, x), dense_step(lambda t: reduce(t.masked_fill(~keep, fill)), x)],
                              repeat)
        print(f"{name:<10} {mask_name:<7} {filled:9.1f} {dense:9.1f}  floor {filled / dense:5.2f}x dense")
    print("sum and mean need no fill: a matrix product with the mask (0 * a finite value is 0) reads x once, and "
          "only a non-finite result is recomputed with the fill; pmean fills the padding with 1 before x^p")


def padding_mask(kind: str, b: int, n: int) -> torch.Tensor:
    """``ragged``: populations of between N/2 and N real particles, padded at the end; ``holes``:
    10 % of the particles padded at random positions (every population keeps a real one)."""
    if kind == "ragged":
        lengths = torch.randint(n // 2, n + 1, (b,))
        return torch.arange(n)[None, :] < lengths[:, None]
    mask = torch.rand(b, n) >= 0.1
    mask[:, 0] = True
    return mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--particles", type=int, default=1000)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=25)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--mask", choices=["ragged", "holes"], default="ragged", help="how the masked runs pad")
    parser.add_argument("--aggregations", nargs="+", choices=list(ours()), default=list(ours()),
                        help="the plain aggregations to time (default: all)")
    parser.add_argument("--only", choices=["plain", "recurrent"], help="run one of the two parts")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    b, n, d = args.batch, args.particles, args.features
    x = torch.randn(b, n, d, requires_grad=True)
    positive = (x.detach().abs() + 0.1).requires_grad_(True)  # the power mean's domain
    padded = padding_mask(args.mask, b, n)
    print(f"setfuncs {sf.__version__}, torch {torch.__version__}, "
          f"PyG {getattr(torch_geometric, '__version__', 'not installed')}, {platform.processor() or platform.machine()}, "
          f"{args.threads} threads; x = [{b}, {n}, {d}], forward + backward of .sum(), fastest of {args.repeat} (ms)")
    print(f"{'aggregation':<10} {'mask':<7} {'setfuncs':>9} {'torch':>9} {'PyG':>9}  ratio to faster baseline"
          f"   (masked: ratio to the dense unmasked torch reduction)")
    for mask_name, mask in (("none", None), (args.mask, padded)) if args.only != "recurrent" else ():
        for name, agg in ((name, agg) for name, agg in ours().items() if name in args.aggregations):
            inp = positive if name == "pmean" else x
            flat, index = flat_layout(inp, mask)
            steps = [dense_step(lambda t: agg(t, mask), inp), dense_step(torch_baselines(mask)[name], inp),
                     dense_step(torch_baselines(None)[name], inp)]
            module = pyg_modules().get(name)
            if module is not None:
                steps.append(dense_step(lambda t: module(t, index, dim_size=b), flat))
            mine, base, dense, *geo = timed(steps, args.repeat)
            best = min([base, *geo])
            geo = geo[0] if geo else math.nan
            floor = f"   {mine / dense:5.2f}x dense" if mask is not None else ""
            print(f"{name:<10} {mask_name:<7} {mine:9.1f} {base:9.1f} {geo:9.1f}  {mine / best:5.2f}x{floor}")
    if args.only != "recurrent":
        print_padding_floor(x, padded, args.mask, args.repeat)
    if args.only == "plain":
        return
    print("\nrecurrent aggregation, T = 3, against PyG Set2Set(processing_steps=3)")
    for mask_name, mask in (("none", None), (args.mask, padded)):
        flat, index = flat_layout(x, mask)
        for spec in ("r-sum", "r-lse", "rpw"):
            agg = sf.aggregation(spec, features=d, steps=3)
            if torch_geometric is None:
                mine, = timed([dense_step(lambda t: agg(t, mask), x)], args.repeat)
                print(f"{spec:<10} {mask_name:<7} {mine:9.1f}   (install torch-geometric for Set2Set)")
                continue
            s2s = Set2Set(d, processing_steps=3)
            mine, geo = timed([dense_step(lambda t: agg(t, mask), x),
                               dense_step(lambda t: s2s(t, index, dim_size=b), flat)], args.repeat)
            print(f"{spec:<10} {mask_name:<7} {mine:9.1f} {'':>9} {geo:9.1f}  {mine / geo:5.2f}x of Set2Set")


if __name__ == "__main__":
    main()
