"""The scale of the circle experiment's targets, on 20,000 populations of 20 particles (seed 0):
the radius (mean and standard deviation), the variance of the centres per coordinate, and the
squared centre distance of predicting the sample mean as the centre."""

from __future__ import annotations

import torch
from _header import print_header

from setfuncs.experiments.circle import circle_batch


def main() -> None:
    print_header()
    x, y, _ = circle_batch(20_000, 20, torch.Generator().manual_seed(0))
    x, y = x.double(), y.double()
    radius, centre = y[:, 2], y[:, :2]
    mean_as_centre = ((x.mean(dim=1) - centre) ** 2).sum(dim=1).mean()
    print(f"radius: mean {radius.mean():.2f}, standard deviation {radius.std():.2f}")
    print(f"centre: variance per coordinate {centre.var(dim=0).mean():.2f}")
    print(f"sample mean as the centre: mean squared centre distance {mean_as_centre:.2f}")


if __name__ == "__main__":
    main()
