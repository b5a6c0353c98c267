"""Command line of the spatial-attention experiment (Section 4.4, Figure 4 of the paper).

    python -m setfuncs.experiments.attention sweep --budget medium --runs 2 --jobs 2 \
        --out results/attention-medium.json
    python -m setfuncs.experiments.attention sweep --budget quick --runs 1 --data mnist \
        --mnist train-images-idx3-ubyte.gz --out results/attention-mnist.json
    python -m setfuncs.experiments.attention table results/attention-medium.json \
        [--paper results/paper-results.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli import add_sweep_command, engine_of, existing_file, load_checked, print_findings, run_sweep_command
from .budget import BUDGETS
from .canvas import MNIST_URL
from .sweep import DATA_SETS, SPECS, Data, sweep
from .findings import attention_findings
from .table import attention_table, format_table, load_results


def parser() -> argparse.ArgumentParser:
    """The ``sweep`` and ``table`` (alias ``summary``) subcommands."""
    main = argparse.ArgumentParser(
        prog="python -m setfuncs.experiments.attention",
        description="Spatial attention (Soelch et al. 2019, Section 4.4): Attend-Infer-Repeat with the "
                    "original image localiser or a set-based localiser reading particles sampled from "
                    "the canvas, with plain and learnable aggregations; test ELBO at 5, 20, 200 and "
                    "1000 particles.")
    commands = main.add_subparsers(dest="command", required=True, metavar="{sweep,table,summary}")
    run = add_sweep_command(
        commands, "test each at 5, 20, 200 and 1000 particles (ELBO, count accuracy, box IoU)", sorted(BUDGETS),
        budget_help="quick: about a minute per run (tests, the live section); medium: the committed "
                    "sweep (the README gives its wall time); full: a paper-like scale, hours per run on "
                    "a CPU core",
        runs_help="runs (seeds) per configuration", specs=SPECS)
    run.add_argument("--data", choices=DATA_SETS, default="digits",
                     help="digits: scikit-learn's handwritten digits, offline (default); mnist: read --mnist")
    run.add_argument("--mnist", type=Path, help=f"MNIST's IDX image file, from {MNIST_URL}")
    show = commands.add_parser("table", aliases=["summary"], help="print Figure 4's numbers from a results file",
                               description="Print, per localiser, the mean test ELBO over seeds at every "
                                           "population size, count accuracy, box IoU and weights, then "
                                           "the paper's findings next to ours.")
    show.add_argument("results", type=existing_file, help="a JSON file written by `sweep`")
    show.add_argument("--paper", type=existing_file,
                      help="results/paper-results.json (the paper's numbers), for its findings")
    return main


def _data(args: argparse.Namespace, command: argparse.ArgumentParser) -> Data:
    if args.data == "mnist":
        if args.mnist is None:
            command.error(f"--data mnist needs --mnist, MNIST's IDX image file; download it from {MNIST_URL}")
        if not args.mnist.is_file():
            command.error(f"--mnist {args.mnist} is not a file; download MNIST's images from {MNIST_URL}")
        return Data("mnist", str(args.mnist))
    if args.mnist is not None:
        command.error("--mnist is for --data mnist; scikit-learn's digits ship with scikit-learn")
    return Data("digits")


def main(argv: list[str] | None = None) -> None:
    main_parser = parser()
    args = main_parser.parse_args(argv)
    if args.command == "sweep":
        data, engine = _data(args, main_parser), engine_of(args, main_parser)
        run_sweep_command(lambda: sweep(args.runs, BUDGETS[args.budget], args.out, args.configurations, data,
                                        engine, args.restart, progress=not args.no_progress), args.out)
        return
    results = load_checked(load_results, args.results)
    params = results["budget_parameters"]
    print(f"ours: {results['data']['source']} canvases, budget {results['budget']}, trained at "
          f"{params['particles']} particles, {results['runs_per_configuration']} seed(s) per localiser; "
          f"test ELBO in nats per canvas (higher is better)")
    print(format_table(attention_table(results), params["eval_sizes"]))
    print()
    print_findings(lambda variant: attention_findings(results, args.paper, variant))


if __name__ == "__main__":
    main()
