"""Point-cloud classification (Soelch et al. 2019, Section 4.3): train Deep Sets' ModelNet40 classifier
with the ten aggregation pairs of Table 2 (and the two LSE columns with log-mean-exp), test it at 1000, 100
and 50 particles (and a curve of sizes), then print Table 2.

    python -m setfuncs.experiments.pointcloud sweep --budget quick --runs 2 --jobs 2 --data shapes \
        --out results/pointcloud-quick.json
    python -m setfuncs.experiments.pointcloud sweep --budget full --runs 1 --data modelnet40 \
        --root ModelNet40 --out results/pointcloud-full.json
    python -m setfuncs.experiments.pointcloud table results/pointcloud-quick.json \
        [--paper results/paper-results.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli import CommandLine, SweepCommand, TableCommand, print_findings
from .budget import BUDGETS
from .experiment import EXPERIMENT
from .modelnet import LAYOUT, MODELNET_URL
from .sweep import DATA_SETS, Data, load_data
from .table import accuracy_curves, data_label, format_table, mean_note, pointcloud_table


def data_arguments(run: argparse.ArgumentParser) -> None:
    """``--data``, and ``--root`` and ``--cache`` for ModelNet40."""
    run.add_argument("--data", choices=DATA_SETS, default="shapes",
                     help="shapes: the package's offline 3-D shapes (default); modelnet40: read --root")
    run.add_argument("--root", type=Path,
                     help=f"the ModelNet40 folder ({LAYOUT}); download ModelNet40.zip from {MODELNET_URL}")
    run.add_argument("--cache", type=Path,
                     help="where ModelNet40's sampled clouds are cached (default: --root)")


def data(args: argparse.Namespace, command: argparse.ArgumentParser) -> Data:
    """The data of ``sweep``'s arguments; a usage error for a missing or misplaced --root, a
    ModelNet40 tree the loader refuses (its one-line reason), or clouds that do not fill one batch of
    the budget (:func:`~setfuncs.experiments.pointcloud.sweep.load_data`), before any run starts."""
    if args.data == "modelnet40":
        if args.root is None:
            command.error(f"--data modelnet40 needs --root, the ModelNet40 folder ({LAYOUT}); download "
                          f"ModelNet40.zip from the Princeton ModelNet page, {MODELNET_URL}")
        if not args.root.is_dir():
            command.error(f"--root {args.root} is not a folder; expected {LAYOUT}")
        data = Data("modelnet40", str(args.root), None if args.cache is None else str(args.cache))
        try:                 # read (and cache) the clouds now: a broken tree is a usage error, not a traceback
            load_data(data, BUDGETS[args.budget])
        except (ValueError, OSError) as err:
            command.error(f"--root {args.root}: {err}")
        return data
    if args.root is not None or args.cache is not None:
        command.error("--root and --cache are for --data modelnet40; the offline shapes are generated")
    try:                     # made once per process (cached): the sweep's provenance reads these
        load_data(Data("shapes"), BUDGETS[args.budget])
    except ValueError as err:
        command.error(f"--data shapes: {err}")
    return Data("shapes")


def show(results: dict, args: argparse.Namespace) -> None:
    """Print Table 2 from a results file: per column the mean and best test accuracy over seeds at 1000,
    100 and 50 particles (beside the paper's), the findings, and the mean accuracy at every size."""
    print(f"ours: test accuracy on {data_label(results)}")
    if args.paper is not None:
        print("paper: test accuracy on ModelNet40 (Table 2)")
    print(format_table(pointcloud_table(results, args.paper)))
    print_findings(lambda: EXPERIMENT.findings(results, args.paper))
    print("\nmean accuracy by population size n")
    for curve in accuracy_curves(results):
        values = "  ".join(f"{n}: {a:.1%}" for n, a in zip(curve["sizes"], curve["mean"]))
        note = mean_note(curve)
        print(f"{curve['spec']:<13} {values}" + (f"  ({note})" if note else ""))


COMMAND_LINE = CommandLine(EXPERIMENT, __doc__,
                           SweepCommand("test each at 1000, 100 and 50 particles and on a curve of sizes",
                                        "runs (seeds) per column", data_arguments, data),
                           TableCommand(show))
main = COMMAND_LINE.main


if __name__ == "__main__":
    main()
