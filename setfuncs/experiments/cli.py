"""The command line every experiment shares: ``python -m setfuncs.experiments.<name> sweep|table``.

An experiment's ``__main__`` describes its own parts as a :class:`CommandLine` (its texts, its
``sweep`` function and budgets, its data arguments, its table printer) and calls
:meth:`CommandLine.main`; the ``sweep`` subcommand's arguments (:func:`add_sweep_command`), how a
sweep ends (:func:`run_sweep_command`: exit status and summary) and the ``table`` subcommand's
results file and ``--paper`` are here, once.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .engine import ClusterError, DeviceError, Engine, SweepInterrupted
from .experiment import Experiment
from .findings import VARIANT_TITLES, Finding, format_findings
from .results import load_paper
from .resultsfile import SweepFileError, SweepLocked, SweepWriteError
from .tasks import MAX_RUNS

__all__ = ["PAPER_HELP", "TIME_LIMIT_STATUS", "budget_help", "first_paragraph", "MAX_TIME_LIMIT", "SCHEDULER", "parse_positive_int", "parse_runs",
           "parse_scheduler", "parse_duration", "existing_file", "results_path",
           "add_sweep_command", "add_bootstrap_arguments", "engine_of", "run_sweep_command", "load_checked", "print_findings",
           "SweepCommand", "TableCommand", "CommandLine"]



def parse_positive_int(text: str) -> int:
    """An argparse type: a positive integer, or a message saying what was given."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def parse_runs(text: str) -> int:
    """An argparse type for ``--runs``: a positive integer up to :data:`~setfuncs.experiments.tasks.MAX_RUNS`."""
    value = parse_positive_int(text)
    if value > MAX_RUNS:
        raise argparse.ArgumentTypeError(f"{value:,} seeds per configuration is more than a sweep plans "
                                         f"(at most {MAX_RUNS:,}); the findings need about ten")
    return value


#: What ``--scheduler`` accepts, a Dask address ``[PROTOCOL://]HOST:PORT``.
SCHEDULER = re.compile(r"(?:(?:tcp|tls|ucx|ws|wss)://)?(?:[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:]+\]):\d{1,5}")


def parse_scheduler(text: str) -> str:
    """An argparse type for ``--scheduler``: a Dask scheduler's address, e.g. ``tcp://10.0.0.5:8786``."""
    if not SCHEDULER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a Dask scheduler's address such as tcp://10.0.0.5:8786 (the one "
                                         f"`dask scheduler` prints), got {text!r}")
    return text


def existing_file(text: str) -> Path:
    """An argparse type: the path of a file that exists (not empty, not a folder)."""
    path = Path(text)
    if not text:
        raise argparse.ArgumentTypeError("the name is empty; pass the path of a JSON file")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; pass the path of a JSON file")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return path


#: The exit status of a sweep whose time limit left runs for the next sitting (sysexits' EX_TEMPFAIL:
#: try again later).
TIME_LIMIT_STATUS = 75

#: ``--time-limit``'s units.
_UNITS = {"s": 1, "m": 60, "h": 3600}
#: The longest ``--time-limit`` in seconds, a year (beyond it, leave the limit out).
MAX_TIME_LIMIT = 366 * 24 * 3600


def parse_duration(text: str) -> float:
    """An argparse type for ``--time-limit``: a positive duration in seconds, written as numbers with
    units ``h``, ``m``, ``s`` in that order, each at most once (e.g. ``90m``, ``2.5h``, ``600s``,
    ``2h30m``, ``1h 5m 30s``), so that ``d = 3600 h + 60 m + s``; a message naming the form otherwise."""
    number = r"(\d+(?:\.\d*)?|\.\d+)"
    match = re.fullmatch(rf"\s*(?:{number}\s*h)?\s*(?:{number}\s*m)?\s*(?:{number}\s*s)?\s*", text)
    parts = [] if match is None else [(float(value), unit) for value, unit in zip(match.groups(), "hms")
                                      if value is not None]
    seconds = sum(value * _UNITS[unit] for value, unit in parts)
    if not parts or seconds == 0:
        raise argparse.ArgumentTypeError(f"expected a positive duration with a unit, e.g. 90m, 2.5h, 600s or "
                                         f"2h30m; got {text!r}")
    if not seconds <= MAX_TIME_LIMIT:                # also inf, from a number of hundreds of digits
        raise argparse.ArgumentTypeError(f"{text[:40]!r}{'...' if len(text) > 40 else ''} is more than a year; leave "
                                         f"--time-limit out for no limit")
    return seconds


def results_path(text: str) -> Path:
    """An argparse type for ``--out``: the path of a JSON file to write (it and its folder may not
    exist yet); an empty or blank name and a folder (one that exists, or a name ending in ``/``) are
    refused, naming the fix."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the name is empty; pass the path of a JSON file, e.g. results/sweep.json")
    path = Path(text)
    if path.is_dir() or text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"{text} is a folder; pass the path of a JSON file in it, e.g. "
                                         f"{path / 'sweep.json'}")
    return path


def add_sweep_command(commands: argparse._SubParsersAction, what: str, budgets: list[str],
                      budget_help: str, runs_help: str, specs: Sequence[str]
                      ) -> argparse.ArgumentParser:
    """Add the ``sweep`` subcommand: ``--budget --runs --out --configurations``, where the runs train
    (``--jobs --scheduler --device --concurrent --dashboard``), ``--restart`` and ``--no-progress``.

    ``what`` says what a run does besides training (e.g. "score each against EM"), inserted into
    the description; ``specs`` are the model specs ``--configurations`` accepts (the experiment's
    configurations: the 56 of the circle and mixture grids, Table 2's columns, the localisers).
    """
    run = commands.add_parser(
        "sweep", help="train every configuration RUNS times and write one JSON results file",
        description=f"Train RUNS seeds (0..RUNS-1) of every configuration on a Dask cluster, {what}, and "
                    f"write one JSON file with provenance (command, git commit, budget, seeds, versions, "
                    f"hardware, timings) after every finished run. Running the same command again "
                    f"resumes the sweep: the runs in --out are kept and only the missing ones train.",
        epilog="Ctrl-C (or SIGTERM) stops the sweep and keeps the finished runs: within seconds, or once the "
               "cluster has started if it comes during the start-up; pressing it again changes nothing. A sweep "
               "with nothing left to run leaves --out as it is. Exit "
               "status: 0 when every run finished, 75 when --time-limit left runs for the next sitting, 1 when a "
               "run failed (its error and traceback are in the file; the same command retries it) or the file "
               "could not be written, 2 for a bad argument (a --scheduler that cannot be reached among them), a "
               "file that cannot be resumed or one another sweep is writing, 130 when interrupted.")
    run.add_argument("--budget", choices=budgets, required=True, help=budget_help)
    run.add_argument("--runs", type=parse_runs, required=True, help=runs_help)
    run.add_argument("--out", type=results_path, required=True,
                     help="the JSON results file; resumed when it holds runs of the same experiment and budget")
    run.add_argument("--configurations", nargs="+", choices=list(specs), metavar="SPEC",
                     help=f"only these model specs, e.g. max/max r-lse/r-lse (default: all {len(specs)})")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=parse_positive_int,
                       help="worker processes of the local Dask cluster, one torch thread each (default: 2)")
    where.add_argument("--scheduler", metavar="ADDRESS", type=parse_scheduler,
                       help="use the running Dask cluster at ADDRESS (e.g. tcp://10.0.0.5:8786) instead of a "
                            "local one; start it with `dask scheduler` and `dask worker ADDRESS --nthreads 1`")
    run.add_argument("--device", default="cpu", metavar="{cpu,cuda,cuda:N,auto}",
                     help="where the runs train, recorded with every run (default: cpu; auto: the GPU when "
                          "there is one, else the CPU)")
    run.add_argument("--concurrent", type=parse_positive_int, default=1, metavar="K",
                     help="on a GPU, train K configurations at once, each as an ensemble on its own CUDA stream "
                          "(the circle and mixture sweeps; the others train one configuration at a time; "
                          "default: 1)")
    run.add_argument("--time-limit", type=parse_duration, metavar="DURATION",
                     help="start no run expected to end more than DURATION (e.g. 90m, 2.5h, 2h30m) after the "
                          "sweep started, expected from the longest run of its configuration so far; runs that "
                          "have started always finish, and the same command resumes the rest (default: no limit)")
    run.add_argument("--dashboard", action="store_true",
                     help="serve the local cluster's dashboard on http://localhost:8787 (needs bokeh)")
    run.add_argument("--restart", action="store_true",
                     help="move an existing --out aside to <out>.<UTC time>.bak and start afresh "
                          "(nothing is deleted)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    return run


def add_bootstrap_arguments(show: argparse.ArgumentParser, batch_size: int, statistic: str) -> None:
    """Add ``--batch-size`` (default ``batch_size``, the runs per bootstrap batch for ``statistic``,
    e.g. "the peak performance") and ``--bootstraps`` to a ``table`` subcommand."""
    show.add_argument("--batch-size", type=parse_positive_int, default=batch_size,
                      help=f"runs per bootstrap batch for {statistic} (default: {batch_size})")
    show.add_argument("--bootstraps", type=parse_positive_int, default=1000,
                      help="bootstrap batches (default: 1000)")


def engine_of(args: argparse.Namespace, command: argparse.ArgumentParser) -> Engine:
    """The :class:`~setfuncs.experiments.engine.config.Engine` of ``sweep``'s arguments (a usage error for
    a ``--device`` it refuses; ``--jobs`` is checked by its type)."""
    if args.concurrent > 1 and args.device == "cpu":
        command.error(f"--concurrent {args.concurrent} trains configurations at once on CUDA streams: pass --device "
                      f"cuda (or auto); on a CPU, --jobs sets how many runs train at once")
    if args.dashboard and importlib.util.find_spec("bokeh") is None:
        command.error("--dashboard needs bokeh, which is not installed: pip install 'bokeh>=3.1', or leave "
                      "--dashboard out")
    if args.configurations is not None and len(set(args.configurations)) != len(args.configurations):
        twice = sorted({c for c in args.configurations if args.configurations.count(c) > 1})
        command.error(f"--configurations names {', '.join(twice)} more than once; name each configuration once")
    try:
        return Engine(jobs=2 if args.jobs is None else args.jobs, scheduler=args.scheduler, device=args.device,
                      dashboard=args.dashboard, concurrent=args.concurrent, time_limit=args.time_limit)
    except DeviceError as err:
        command.error(f"--device: {err}")


def run_sweep_command(run: Callable[[], dict], out: Path) -> None:
    """Run a sweep and report how it ended; exit 1 if a run failed or the file could not be written,
    2 if the file cannot be resumed or is locked, :data:`TIME_LIMIT_STATUS` if its time limit left
    runs for the next sitting, 130 on Ctrl-C or SIGTERM.

    Prints ``144 runs in 3298 s -> results/x.json`` (the file's runs and its summed wall time).
    """
    try:
        results = run()
    except SweepInterrupted as stop:
        for signum in (signal.SIGINT, signal.SIGTERM):     # a second Ctrl-C changes nothing, here either
            signal.signal(signum, signal.SIG_IGN)
        print(f"\ninterrupted: {stop}", file=sys.stderr)
        sys.exit(130)
    except (SweepFileError, SweepLocked, ClusterError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except SweepWriteError as err:
        print(f"error: {err.strerror}", file=sys.stderr)          # it says what the file still holds
        sys.exit(1)
    sitting = results.sitting
    if sitting is None:
        print(f"nothing to run: every run of this sweep is in {out} ({len(results['runs'])} runs); it was left as it is")
        return
    print(f"{len(results['runs'])} runs in {results['wall_seconds']:.0f} s -> {out} "
          f"(this sitting: {sitting['runs_added']} new, {sitting['kept_runs']} kept, {sitting['failed_runs']} failed)")
    if sitting["failed_runs"]:
        failed = sitting["failed_runs"]
        print(f"error: {failed} run{'s' if failed > 1 else ''} failed; the errors and tracebacks are in {out}. "
              f"Run the same command to retry {'them' if failed > 1 else 'it'}.", file=sys.stderr)
        sys.exit(1)
    if sitting["ended"] == "time limit":
        held = sitting["held_runs"]
        print(f"time limit: {held} run{'s' if held != 1 else ''} not started, as none was expected to end within "
              f"the limit; run the same command to resume", file=sys.stderr)
        sys.exit(TIME_LIMIT_STATUS)


def load_checked(load: Callable[[Path], dict], path: Path) -> dict:
    """``load(path)``, with a note on stderr when the sweep that wrote it did not finish."""
    results = load(path)
    if not results.get("complete"):
        print(f"note: {path} is an incomplete sweep", file=sys.stderr)
    return results


def print_findings(compute: Callable[[], list[Finding]]) -> None:
    """Print the paper's findings table (both variants, one correction: ``compute()``) with the
    tests and verdicts; a file whose runs cannot test them (a configuration without usable runs, as in
    a partial sweep) is named with the reason. Variants: ``paper`` is
    :data:`~setfuncs.experiments.findings.claims.VARIANT_TITLES`' first, ``lme`` its second, ``both`` a claim
    the two share."""
    print(f"\nfindings ([paper]: {VARIANT_TITLES['paper']}; [lme]: {VARIANT_TITLES['lme']}):")
    try:
        print(format_findings(compute()))
    except ValueError as err:
        print(f"not computed: {err}")


def _no_arguments(command: argparse.ArgumentParser) -> None:
    """A subcommand with no arguments of the experiment's own."""


def _no_data(args: argparse.Namespace, command: argparse.ArgumentParser) -> None:
    """A sweep that reads no data set."""
    return None


#: ``--paper``'s help, the same for every experiment.
PAPER_HELP = "results/paper-results.json (the paper's numbers), to test its findings and print its rows beside ours"


def budget_help(budgets: Mapping[str, Any]) -> str:
    """``--budget``'s help, from the budgets themselves: each one's steps, batch and width."""
    return "; ".join(f"{name}: {b.steps:,} steps of {b.batch} at width {b.hidden}"
                     + (" (the committed sweeps)" if name == "medium" else "") for name, b in budgets.items())


def first_paragraph(text: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    return " ".join((text or "").strip().split("\n\n")[0].split())


@dataclass(frozen=True)
class SweepCommand:
    """What an experiment's ``sweep`` subcommand adds to the shared one (its budgets, configurations and
    help on ``--budget``, :func:`budget_help`, are the experiment's).

    Attributes:
        what: what a run does besides training, for :func:`add_sweep_command`'s description.
        runs_help: ``--runs``'s help.
        arguments: adds the experiment's own arguments (e.g. ``--data``) after the shared ones.
        data: the data set of the parsed arguments (None: the experiment's default, or none); a usage
            error through the parser if they do not fit.
    """

    what: str
    runs_help: str = "runs (seeds) per configuration"
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    data: Callable[[argparse.Namespace, argparse.ArgumentParser], Any] = _no_data


@dataclass(frozen=True)
class TableCommand:
    """An experiment's ``table`` subcommand: ``table RESULTS [--paper PAPER]`` and its own arguments.

    Attributes:
        show: prints the tables of the loaded results (the experiment's ``load_results``), given the
            parsed arguments; its docstring's first paragraph is the subcommand's description, and its
            first sentence its help.
        paper_help: ``--paper``'s help.
        aliases: its other names (e.g. ``("summary",)``).
        arguments: adds the experiment's own arguments after ``--paper``.
    """

    show: Callable[[dict, argparse.Namespace], None]
    paper_help: str = PAPER_HELP
    aliases: Sequence[str] = ("summary",)
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments


@dataclass(frozen=True)
class CommandLine:
    """The command line of one experiment, ``python -m PACKAGE {sweep,table}``.

    Attributes:
        experiment: the experiment (:class:`~setfuncs.experiments.experiment.Experiment`): its package,
            budgets, configurations, sweep and results file.
        description: what the program does (its ``__main__``'s docstring: the first paragraph is used).
        sweep, table: its two subcommands.
    """

    experiment: Experiment
    description: str
    sweep: SweepCommand
    table: TableCommand

    def parser(self) -> argparse.ArgumentParser:
        """The ``sweep`` and ``table`` subcommands (with the table's aliases)."""
        experiment = self.experiment
        main = argparse.ArgumentParser(prog=f"python -m {experiment.package}",
                                       description=first_paragraph(self.description))
        names = ",".join(["sweep", "table", *self.table.aliases])
        commands = main.add_subparsers(dest="command", required=True, metavar=f"{{{names}}}")
        sweep = self.sweep
        run = add_sweep_command(commands, sweep.what, sorted(experiment.budgets),
                                budget_help=budget_help(experiment.budgets), runs_help=sweep.runs_help,
                                specs=experiment.configurations)
        sweep.arguments(run)
        table = self.table
        described = first_paragraph(table.show.__doc__)
        show = commands.add_parser("table", aliases=list(table.aliases), description=described,
                                   help=described.split(":")[0].split(". ")[0].rstrip("."),
                                   epilog="Exit status: 0, or 2 for a bad argument or a RESULTS or --paper file "
                                          "that cannot be read (one line says which and why).")
        show.add_argument("results", type=existing_file, help="a JSON file written by `sweep`")
        show.add_argument("--paper", type=existing_file, help=table.paper_help)
        table.arguments(show)
        return main

    def main(self, argv: list[str] | None = None) -> None:
        """Parse ``argv`` (default: ``sys.argv[1:]``) and run the sweep (:func:`run_sweep_command`)
        or print the tables of a results file (:meth:`show_table`)."""
        main_parser = self.parser()
        args = main_parser.parse_args(argv)
        if args.command == "sweep":
            data, engine = self.sweep.data(args, main_parser), engine_of(args, main_parser)
            experiment = self.experiment
            run_sweep_command(lambda: experiment.sweep(args.runs, experiment.budgets[args.budget], args.out,
                                                       args.configurations, data, engine=engine,
                                                       restart=args.restart, progress=not args.no_progress),
                              args.out)
            return
        self.show_table(args)

    def show_table(self, args: argparse.Namespace) -> None:
        """Check ``--paper`` (:func:`~setfuncs.experiments.results.load_paper`) and read the results
        file (:func:`load_checked`), then print its tables (``table.show``); a file that cannot be
        read or is not the one expected (empty, truncated, another experiment's, a sweep's file given
        as ``--paper``) ends the command with one ``error:`` line and exit status 2."""
        try:
            if args.paper is not None:
                load_paper(args.paper)
            results = load_checked(self.experiment.load_results, args.results)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(2)
        except OSError as err:
            print(f"error: cannot read {err.filename}: {err.strerror}", file=sys.stderr)
            sys.exit(2)
        self.table.show(results, args)
