"""One sweep's sitting from start to end: :func:`run_sweep` locks the file, runs what is missing and
closes the sitting however it ends."""

from __future__ import annotations

import os
import time
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Sequence

from ..resultsfile import SweepFile, SweepWriteError
from ..schema import RunSchema
from ..tasks import Task
from .cluster import ClusterError, open_cluster
from .config import Engine
from .ledger import Ledger, Sitting, kept_contents, now
from .signals import Signals
from .submit import Submitter, plan_jobs

__all__ = ["SweepInterrupted", "SweepResults", "run_sweep", "train_sitting", "enter_cluster", "run_sitting"]


class SweepInterrupted(KeyboardInterrupt):
    """The sweep was stopped (Ctrl-C, SIGTERM); the finished runs are in the file. ``kept`` is None
    when it stopped before its sitting began (the file was left as it was)."""

    def __init__(self, path: Path, kept: int | None, total: int) -> None:
        super().__init__(f"kept {kept} of {total} runs in {path}; run the same command to resume" if kept is not None
                         else f"stopped before any run started; {path} was left as it is")
        self.path, self.kept, self.total = path, kept, total


class SweepResults(dict):
    """A sweep's results file as :func:`run_sweep` left it, and ``sitting``: the record of the sitting this
    call ran, or None when it found nothing to run (and wrote nothing)."""

    def __init__(self, results: dict, sitting: dict | None) -> None:
        super().__init__(results)
        self.sitting = sitting


def train_sitting(ledger: Ledger, tasks: Sequence[Task], todo: list[Task], engine: Engine, run_one: Callable[..., dict],
           run_many: Callable[[list[tuple]], list[dict]] | None, signals: Signals, progress: bool,
           desc: str) -> None:
    """Run ``todo`` (of the sweep's ``tasks``) on the engine's cluster, each completed job's records
    added to the ledger as it completes; on Ctrl-C or SIGTERM (``signals``) cancel the rest, close the
    sitting and raise :class:`SweepInterrupted`; on a failed write cancel the rest and raise; a cluster
    that cannot start closes the sitting and raises :class:`~setfuncs.experiments.engine.cluster.ClusterError`."""
    from ...bars import bar as progress_bar

    with ExitStack() as stack:
        client, description = enter_cluster(stack, engine, signals, ledger)
        ledger.sitting.engine = description
        deadline = None if engine.time_limit is None else ledger.clock + engine.time_limit
        submitter = Submitter(client, plan_jobs(todo, engine, run_one, run_many, ledger.sitting.concurrent), deadline)
        bar = progress_bar(total=len(tasks), initial=len(tasks) - len(todo), desc=desc, unit="run", enabled=progress)
        try:
            ledger.write()
            for records in submitter:
                ledger.add(records)
                bar.update(len(records))
        except KeyboardInterrupt:
            submitter.cancel()
            bar.close()
            ledger.close("interrupted")
            raise SweepInterrupted(ledger.file.path, ledger.finished_of(tasks), len(tasks)) from None
        except SweepWriteError:
            submitter.cancel()
            raise
        bar.close()
        ledger.sitting.held_runs = sum(len(job.tasks) for job in submitter.held)


def enter_cluster(stack: ExitStack, engine: Engine, signals: Signals, ledger: Ledger) -> tuple[Any, str]:
    """Enter the engine's cluster (:func:`~setfuncs.experiments.engine.cluster.open_cluster`) on ``stack``; one that cannot be started or reached
    closes the sitting as ``no cluster`` and raises :class:`~setfuncs.experiments.engine.cluster.ClusterError` naming the scheduler (or the
    local cluster) and the error."""
    try:
        return stack.enter_context(open_cluster(engine, signals))
    except (OSError, ValueError, TimeoutError, RuntimeError) as err:
        ledger.close("no cluster")
        where = f"the Dask scheduler at {engine.scheduler}" if engine.scheduler else "a local Dask cluster"
        fix = ("check the address (tcp://HOST:PORT) and that `dask scheduler` runs there" if engine.scheduler
               else "check that this machine can start --jobs worker processes (memory, open files)")
        raise ClusterError(f"could not start or reach {where}: {type(err).__name__}: {err}; {fix}") from None


def run_sweep(run_one: Callable[..., dict], tasks: Sequence[Task], out_path: str | os.PathLike, header: dict,
              identity: dict, engine: Engine = Engine(), restart: bool = False, progress: bool = True,
              desc: str = "sweep", run_many: Callable[[list[tuple]], list[dict]] | None = None, *,
              schema: RunSchema = RunSchema(), concurrent_safe: bool = False) -> SweepResults:
    """Run every task not finished in ``out_path`` yet and write its record there as it completes.

    Args:
        run_one: a module-level function ``run_one(*task.args) -> dict`` (a JSON-friendly record
            with ``spec`` and ``seed``).
        tasks: the runs, in the order they should start (seed by seed).
        out_path: the JSON results file; resumed if it holds runs with the same ``identity``.
        header: the provenance of this sitting (:func:`~setfuncs.experiments.provenance.sweep_provenance`
            and the experiment's own fields).
        identity: what makes two sittings one sweep (:func:`~setfuncs.experiments.provenance.sweep_identity`).
        engine: where the runs train (:class:`~setfuncs.experiments.engine.config.Engine`).
        restart: move an existing ``out_path`` aside to a timestamped backup and start afresh.
        progress: a tqdm bar over runs, labelled ``desc``.
        run_many: a module-level function ``run_many([args, ...]) -> [record, ...]`` that trains
            several seeds of one configuration as one ensemble; used when ``engine.ensembles`` (a
            GPU): the missing seeds of each configuration become one task, configuration after
            configuration, and a failure is recorded for each of its seeds.
        concurrent_safe: ``run_many`` may train several configurations at once in threads (its
            training draws no random numbers from torch's global generators:
            :mod:`~setfuncs.experiments.concurrent`); then a GPU engine's ``concurrent``
            configurations share a task. Otherwise they train one after another.
        schema: what the runs of an earlier sitting's file must hold (the experiment's ``RUN_SCHEMA``);
            a file that breaks it is refused before any run.

    Returns the written results (a :class:`SweepResults`, whose ``sitting`` is this sitting's record, or
    None when every task had a finished run already: then nothing is written and the file's contents
    are returned as they are): the first sitting's header with the union of every sitting's configurations and
    seeds, ``identity``, ``sittings`` (each a :class:`~setfuncs.experiments.engine.ledger.Sitting`: started, finished, wall_seconds,
    command, git commit, engine, device, runs added, failures, runs the time limit held back, how it ended), ``started`` (the first
    sitting's), ``finished``, ``wall_seconds`` (summed over sittings), ``complete`` (every
    configuration with every seed has a finished run) and ``runs``: the kept runs, then this
    sitting's in order of completion, each with ``provenance`` (sitting, engine, device) and
    ``worker`` (host, pid, git commit). A failed run's record has ``error`` and ``failure`` (kind,
    traceback) instead of metrics.

    Raises:
        ValueError: two tasks of the same (configuration, seed).
        SweepInterrupted: Ctrl-C or SIGTERM; the finished runs are in the file.
        ClusterError: the cluster could not be started or reached (the sitting is closed as ``no cluster``).
        SweepLocked, SweepFileError, SweepWriteError: from
            :class:`~setfuncs.experiments.resultsfile.SweepFile`, before any run trains (or, for a
            write error, once the workers are stopped); a file that breaks ``schema`` is a
            :class:`~setfuncs.experiments.resultsfile.SweepFileError` naming the run and the field.
    """
    keys = [task.key for task in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError("every task must be a different (configuration, seed) pair")
    clock, started = time.perf_counter(), now()
    with Signals.listening() as signals:
        try:
            return run_sitting(run_one, tasks, out_path, header, identity, engine, restart, progress, desc, run_many,
                            schema, concurrent_safe, signals, clock, started)
        except SweepInterrupted:
            raise
        except KeyboardInterrupt:                    # before the sitting began: nothing was written
            raise SweepInterrupted(Path(out_path), None, len(tasks)) from None


def run_sitting(run_one: Callable[..., dict], tasks: Sequence[Task], out_path: str | os.PathLike, header: dict,
             identity: dict, engine: Engine, restart: bool, progress: bool, desc: str,
             run_many: Callable[[list[tuple]], list[dict]] | None, schema: RunSchema, concurrent_safe: bool,
             signals: Signals, clock: float, started: str) -> SweepResults:
    """One sitting of :func:`run_sweep` (its arguments), the file locked."""
    with SweepFile(out_path, identity, restart, schema) as file:
        kept = kept_contents(header, identity, file.previous, tasks)
        sitting = Sitting(started=started, command=header.get("command"), cwd=header.get("cwd"),
                          git_commit=header.get("git_commit"), versions=header.get("versions"),
                          hardware=header.get("hardware"), device=engine.trains_on, device_requested=engine.device,
                          concurrent=engine.concurrent if concurrent_safe and engine.ensembles and run_many is not None else 1,
                          kept_runs=len(kept["runs"]),
                          restarted_from=None if file.backup is None else str(file.backup))
        ledger = Ledger(file, kept, sitting, clock)
        todo = ledger.todo(tasks)
        if not todo and file.previous is not None:
            return SweepResults(file.previous, None)          # nothing to run: the file stays as it is
        try:
            ledger.write()                           # a read-only folder or a full disk fails here
            if todo:
                train_sitting(ledger, tasks, todo, engine, run_one, run_many, signals, progress, desc)
        except SweepInterrupted:
            raise
        except KeyboardInterrupt:                    # between the first write and the training's own handling
            ledger.close("interrupted")
            raise SweepInterrupted(ledger.file.path, ledger.finished_of(tasks), len(tasks)) from None
        ledger.close("runs failed" if sitting.failed_runs else "time limit" if sitting.held_runs else "complete")
    return SweepResults(ledger.results(), asdict(sitting))
