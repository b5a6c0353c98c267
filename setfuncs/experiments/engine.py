"""The sweep engine: every run of a sweep is a task on a Dask cluster; one client writes the results.

An experiment supplies ``run_one(*args) -> dict`` (a module-level function, so Dask workers import
it rather than unpickle its code) and its tasks, each a :class:`~setfuncs.experiments.sweeps.Task`
``(spec, seed, args)`` in the order they should run (seed by seed); :func:`run_sweep` does the rest:

- **Where runs train** (:class:`Engine`): a :class:`distributed.LocalCluster` of ``jobs``
  single-threaded worker processes (the default), or the workers of a running Dask scheduler at
  ``scheduler`` (``dask scheduler`` on one machine, ``dask worker ADDRESS --nthreads 1`` on each
  machine that has ``setfuncs`` installed).
- **Resumable** (:class:`~setfuncs.experiments.resultsfile.SweepFile`): the (configuration, seed)
  pairs an earlier sitting finished are kept byte for byte and skipped; only the missing ones run.
- **Faults.** A run that raises is recorded with its error and traceback (``"failure"``) and the
  sweep goes on; it is run again by the next sitting. A worker that dies (killed, out of memory) is
  replaced by its nanny and its run retried, twice at most on a local cluster
  (``distributed.scheduler.allowed-failures``), then recorded as a failure. Ctrl-C (or SIGTERM, as
  a batch system sends at its time limit) cancels the queued runs, stops the workers, keeps the
  finished runs and raises :class:`SweepInterrupted` (a sweep started in the background inherits
  an ignored SIGINT and keeps ignoring it, as background jobs should: send it SIGTERM). A failed write raises
  :class:`~setfuncs.experiments.resultsfile.SweepWriteError` after stopping the workers; the file
  keeps every run written before.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import threading
import time
import traceback
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import torch

from .provenance import git_commit
from .resultsfile import SweepFile, SweepWriteError
from .sweeps import Task, positive_int

__all__ = ["Engine", "SweepInterrupted", "run_sweep", "ALLOWED_WORKER_DEATHS", "DEVICES"]

#: How often a local cluster reruns a run whose worker died before recording it as failed.
ALLOWED_WORKER_DEATHS = 2
#: Tasks in flight per worker thread (:func:`_window`): one running and one waiting, so a worker
#: never idles between runs and the runs start in the tasks' order.
IN_FLIGHT_PER_THREAD = 2

#: What ``--device`` accepts.
DEVICES = re.compile(r"cpu|auto|cuda(:\d+)?")


@dataclass(frozen=True)
class Engine:
    """Where a sweep's runs train.

    Attributes:
        jobs: worker processes of the local cluster, one torch thread each (ignored with ``scheduler``).
        scheduler: the address of a running Dask scheduler (e.g. ``tcp://10.0.0.5:8786``); None:
            start a :class:`distributed.LocalCluster` of ``jobs`` workers for this sweep.
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (a GPU when the client sees one), where
            every run trains; recorded with every run. On a GPU, experiments that can train the
            seeds of one configuration as one ensemble do (``run_many`` of :func:`run_sweep`).
        dashboard: serve the local cluster's dashboard on port 8787 (needs ``bokeh``).
    """

    jobs: int = 2
    scheduler: str | None = None
    device: str = "cpu"
    dashboard: bool = False

    def __post_init__(self) -> None:
        positive_int("jobs", self.jobs)
        if not DEVICES.fullmatch(self.device):
            raise ValueError(f"device must be cpu, cuda, cuda:N or auto, got {self.device!r}")
        if self.device.startswith("cuda") and self.scheduler is None and not torch.cuda.is_available():
            raise ValueError(f"device {self.device!r}: this PyTorch sees no CUDA GPU; pass --device cpu "
                             f"(or auto), or --scheduler with workers that have a GPU")

    @property
    def trains_on(self) -> str:
        """The device every run trains on (``auto`` resolved here: ``cuda`` when there is a GPU)."""
        if self.device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        return self.device

    @property
    def ensembles(self) -> bool:
        """Whether the seeds of a configuration train as one ensemble (on a GPU)."""
        return self.trains_on.startswith("cuda")


class SweepInterrupted(KeyboardInterrupt):
    """The sweep was stopped (Ctrl-C, SIGTERM); the finished runs are in the file."""

    def __init__(self, path: Path, kept: int, total: int) -> None:
        super().__init__(f"kept {kept} of {total} runs in {path}; run the same command to resume")
        self.path, self.kept, self.total = path, kept, total


def _prepare_local_worker() -> None:
    """Local workers leave Ctrl-C and SIGTERM (a terminal and a batch system send them to every
    process of the job) to the client, which stops them through their nannies (no worker dies
    midway with its connections open, no tracebacks from each worker), and give tqdm a thread lock:
    its default, a multiprocessing lock made by the first bar (even a disabled one), is a named
    semaphore that a worker stopped midway would leave to the resource tracker, which then warns of
    a leak when the sweep exits."""
    from tqdm import tqdm

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    tqdm.set_lock(threading.RLock())


def _worker_description() -> dict:
    return {"host": socket.gethostname(), "pid": os.getpid(), "git_commit": git_commit()}


def _run_task(run_one: Callable[..., dict], args: tuple) -> list[dict]:
    """What a worker runs: one task with one torch thread, and where it ran."""
    torch.set_num_threads(1)
    return [{**run_one(*args), "worker": _worker_description()}]


def _run_group(run_many: Callable[[list[tuple]], list[dict]], args: list[tuple]) -> list[dict]:
    """What a worker runs for an ensemble: several seeds of one configuration, and where they ran."""
    torch.set_num_threads(1)
    worker = _worker_description()
    return [{**record, "worker": worker} for record in run_many(args)]


@contextmanager
def _cluster(engine: Engine) -> Iterator[tuple[Any, str]]:
    """A Dask client on the engine's cluster and its description, e.g. ``"dask 2026.8.0, LocalCluster(2)"``."""
    import dask
    from distributed import Client, LocalCluster

    name = f"dask {version('distributed')}"
    if engine.scheduler is not None:
        with Client(engine.scheduler, timeout="20s") as client:
            yield client, f"{name}, scheduler {engine.scheduler}"
        return
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_WORKER_DEATHS}):
        # Without --dashboard, the scheduler's plain HTTP routes (health, metrics) take a free port on
        # the loopback interface instead of 8787, so sweeps side by side do not contend for it.
        cluster = LocalCluster(n_workers=engine.jobs, threads_per_worker=1, processes=True,
                               dashboard_address=":8787" if engine.dashboard else None,
                               scheduler_kwargs={} if engine.dashboard else {"dashboard_address": "127.0.0.1:0"},
                               silence_logs=logging.CRITICAL)
    try:
        with Client(cluster) as client:
            client.register_worker_callbacks(_prepare_local_worker)
            yield client, f"{name}, LocalCluster({engine.jobs})"
    finally:
        cluster.close()


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Inside the block SIGTERM raises KeyboardInterrupt, as Ctrl-C does (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _window(client: Any) -> int:
    """How many tasks are submitted at a time: :data:`IN_FLIGHT_PER_THREAD` per worker thread the
    cluster has now (at least one). The next task is submitted as one finishes, so runs start in the
    order of the tasks: Dask assigns submitted tasks to workers at once and an idle worker steals
    the cheap ones, so a sweep submitted whole ran the fast configurations of every seed before the
    slow ones of the first."""
    return max(1, IN_FLIGHT_PER_THREAD * sum(client.nthreads().values()))


def _failure(task: Task, future: Any) -> dict:
    """The record of a run that raised, or whose workers kept dying."""
    from distributed import KilledWorker

    error = future.exception()
    killed = isinstance(error, KilledWorker)
    trace = "".join(traceback.format_tb(future.traceback())) if future.traceback() is not None else ""
    return {"spec": task.spec, "seed": task.seed, "error": f"{type(error).__name__}: {error}",
            "failure": {"kind": "worker died" if killed else "raised",
                        "traceback": trace + f"{type(error).__name__}: {error}"}}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _merge(header: dict, identity: dict, previous: dict | None, tasks: Sequence[Task]) -> dict:
    """The file's new contents before any run: this sweep's header, the union of the configurations
    and seeds of every sitting, the earlier sittings, and the runs to keep (every finished run, and
    the failures of runs this sitting does not retry)."""
    requested = {task.key for task in tasks}
    old = previous or {}
    runs = [r for r in old.get("runs", [])
            if "failure" not in r or (r["spec"], r["seed"]) not in requested]
    configurations = list(dict.fromkeys([*old.get("configurations", []), *header["configurations"]]))
    seeds = sorted({*old.get("seeds", []), *header["seeds"]})
    return {**header, "identity": identity, "configurations": configurations, "seeds": seeds,
            "runs_per_configuration": len(seeds), "sittings": list(old.get("sittings", [])),
            "started": old.get("started"), "finished": None, "wall_seconds": None,
            "complete": False, "runs": runs}


def _finished_keys(runs: list[dict]) -> set[tuple[str, int]]:
    return {(r["spec"], r["seed"]) for r in runs if "failure" not in r}


def run_sweep(run_one: Callable[..., dict], tasks: Sequence[Task], out_path: str | os.PathLike, header: dict,
              identity: dict, engine: Engine = Engine(), restart: bool = False, progress: bool = True,
              desc: str = "sweep", run_many: Callable[[list[tuple]], list[dict]] | None = None) -> dict:
    """Run every task not finished in ``out_path`` yet and write its record there as it completes.

    Args:
        run_one: a module-level function ``run_one(*task.args) -> dict`` (a JSON-friendly record
            with ``spec`` and ``seed``).
        tasks: the runs, in the order they should start (seed by seed).
        out_path: the JSON results file; resumed if it holds runs with the same ``identity``.
        header: the provenance of this sitting (:func:`~setfuncs.experiments.provenance.sweep_provenance`
            and the experiment's own fields).
        identity: what makes two sittings one sweep (:func:`~setfuncs.experiments.provenance.sweep_identity`).
        engine: where the runs train (:class:`Engine`).
        restart: move an existing ``out_path`` aside to a timestamped backup and start afresh.
        progress: a tqdm bar over runs, labelled ``desc``.
        run_many: a module-level function ``run_many([args, ...]) -> [record, ...]`` that trains
            several seeds of one configuration as one ensemble; used when ``engine.ensembles`` (a
            GPU): the missing seeds of each configuration become one task, configuration after
            configuration, and a failure is recorded for each of its seeds.

    Returns the written results: ``header`` with the union of every sitting's configurations and
    seeds, ``identity``, ``sittings`` (each: started, finished, wall_seconds, command, git commit,
    engine, device, runs added, failures, how it ended), ``started`` (the first sitting's),
    ``finished``, ``wall_seconds`` (summed over sittings), ``complete`` (every configuration with
    every seed has a finished run) and ``runs``: the kept runs, then this sitting's in order of
    completion, each with ``provenance`` (sitting, engine, device) and ``worker`` (host, pid, git
    commit). A failed run's record has ``error`` and ``failure`` (kind, traceback) instead of metrics.

    Raises:
        SweepInterrupted: Ctrl-C or SIGTERM; the finished runs are in the file.
        SweepLocked, SweepFileError, SweepWriteError: from
            :class:`~setfuncs.experiments.resultsfile.SweepFile`, before any run trains (or, for a
            write error, once the workers are stopped).
    """
    from tqdm.auto import tqdm

    keys = [task.key for task in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError("every task must be a different (configuration, seed) pair")
    start, started = time.perf_counter(), _now()
    with SweepFile(out_path, identity, restart) as file:
        results = _merge(header, identity, file.previous, tasks)
        done = _finished_keys(results["runs"])
        todo = [task for task in tasks if task.key not in done]
        sitting: dict = {"started": started, "finished": None, "wall_seconds": None,
                         "command": header.get("command"), "git_commit": header.get("git_commit"),
                         "engine": None, "device": engine.trains_on, "device_requested": engine.device,
                         "kept_runs": len(results["runs"]), "runs_added": 0, "failed_runs": 0,
                         "restarted_from": None if file.backup is None else str(file.backup),
                         "ended": "running"}
        results["sittings"].append(sitting)
        index = len(results["sittings"]) - 1
        results["started"] = results["started"] or started

        def close(ended: str) -> None:
            sitting.update(finished=_now(), wall_seconds=time.perf_counter() - start, ended=ended)
            results.update(finished=sitting["finished"],
                           wall_seconds=sum(s["wall_seconds"] or 0.0 for s in results["sittings"]),
                           complete=_finished_keys(results["runs"]) >= {
                               (spec, seed) for spec in results["configurations"] for seed in results["seeds"]})
            file.write(results)

        file.write(results)                          # a read-only folder or a full disk fails here
        if not todo:
            close("nothing to run")
            return results
        with _sigterm_as_interrupt(), _cluster(engine) as (client, description):
            from distributed import as_completed

            sitting["engine"] = description
            file.write(results)
            if run_many is not None and engine.ensembles:
                groups: dict[str, list[Task]] = {}
                for task in todo:
                    groups.setdefault(task.spec, []).append(task)
                queue = deque((_run_group, run_many, [t.args for t in group], f"ensemble {spec}", group)
                              for spec, group in groups.items())
            else:
                queue = deque((_run_task, run_one, task.args, f"run {task.spec} seed {task.seed}", [task])
                              for task in todo)
            futures: dict[Any, list[Task]] = {}
            pending = as_completed()

            def top_up() -> None:
                """Submit the next tasks in order until the window is full (workers may have joined)."""
                window = _window(client)
                while queue and len(futures) < window:
                    wrapper, function, args, name, group = queue.popleft()
                    future = client.submit(wrapper, function, args, pure=False, key=f"{name} {time.time_ns()}")
                    futures[future] = group
                    pending.add(future)

            top_up()
            bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc=desc, unit="run",
                       disable=not progress)
            try:
                for future in pending:
                    group = futures.pop(future)
                    top_up()
                    records = (future.result() if future.status == "finished"
                               else [_failure(task, future) for task in group])
                    for record in records:
                        record["provenance"] = {"sitting": index, "engine": description, "device": engine.trains_on}
                        results["runs"].append(record)
                        sitting["runs_added"] += "failure" not in record
                        sitting["failed_runs"] += "failure" in record
                    sitting["wall_seconds"] = time.perf_counter() - start
                    results["wall_seconds"] = sum(s["wall_seconds"] or 0.0 for s in results["sittings"])
                    file.write(results)
                    bar.update(len(records))
            except KeyboardInterrupt:
                client.cancel(list(futures))
                bar.close()
                close("interrupted")
                kept = len(_finished_keys(results["runs"]) & set(keys))
                raise SweepInterrupted(file.path, kept, len(tasks)) from None
            except SweepWriteError:
                client.cancel(list(futures))
                raise
            bar.close()
        close("complete" if sitting["failed_runs"] == 0 else "runs failed")
    return results
