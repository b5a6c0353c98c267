"""The sweep engine: every run of a sweep is a task on a Dask cluster; one client writes the results.

An experiment supplies ``run_one(*args) -> dict`` (a module-level function, so Dask workers import
it rather than unpickle its code) and its tasks, each a :class:`~setfuncs.experiments.sweeps.Task`
``(spec, seed, args)`` in the order they should run (seed by seed); :func:`run_sweep` does the rest:

- **Where runs train** (:class:`Engine`): a :class:`distributed.LocalCluster` of ``jobs``
  single-threaded worker processes (the default), or the workers of a running Dask scheduler at
  ``scheduler`` (``dask scheduler`` on one machine, ``dask worker ADDRESS --nthreads 1`` on each
  machine that has ``setfuncs`` installed).
- **Resumable** (:class:`~setfuncs.experiments.resultsfile.SweepFile`): the (configuration, seed)
  pairs an earlier sitting finished (:func:`~setfuncs.experiments.schema.finished_keys`) are kept
  byte for byte and skipped; only the missing ones run. The earlier file is checked against the
  results schema first (``schema``: :func:`~setfuncs.experiments.schema.check_results`), so a file
  with a duplicated run, a seed such as ``"0"`` or a broken header is refused by name, never
  counted twice or trained again.
- **One record per sitting** (:class:`Sitting`), in the file's ``sittings``; each run records where
  it trained, the torch CPU kernels included (``worker.cpu_capability``).
- **The same kernels on every x86-64 machine** (:func:`worker_environment`): a local cluster's
  workers train with torch's AVX2 kernels, which every x86-64 CPU of the last decade has; a CPU
  with AVX-512 would otherwise pick kernels that round differently, and a training run amplifies
  the difference (a recurrent mixture run's metric moved in its second digit). So a run reproduces
  bit for bit on any such machine. ``ATEN_CPU_CAPABILITY`` set in the environment wins (e.g.
  ``avx512``, the native kernels of such a CPU).
- **Workers reuse their memory** (:func:`worker_allocator`): Dask's nanny starts workers with
  ``MALLOC_TRIM_THRESHOLD_=65536``, which also turns off glibc's adaptive mmap threshold, so every
  tensor above 128 KiB is mapped from the kernel at allocation and returned at free, and each
  training step page-faults its activations anew: half of a worker's time went to the kernel, and
  a MEDIUM point-cloud step took 2.2 times as long (``benchmarks/worker_malloc.py``). A local
  cluster's workers start with glibc told to keep tensors up to 32 MiB on its heap and freed
  memory in the process instead; the arithmetic is the same, so runs are unchanged bit for bit.
  Workers of a running scheduler keep the settings they were started with (the README says how
  to give them these).
- **Ensembles, and configurations at once, on a GPU.** With ``run_many``, a GPU engine trains the
  missing seeds of a configuration as one ensemble (one task); with ``concurrent = K`` and an
  experiment whose ``run_many`` is safe to run in threads (``concurrent_safe``), a task holds ``K``
  configurations that train at once, each on its own CUDA stream
  (:func:`~setfuncs.experiments.concurrent.run_concurrently`).
- **Faults.** A run that raises is recorded with its error and traceback (``"failure"``) and the
  sweep goes on; it is run again by the next sitting. A worker that dies (killed, out of memory) is
  replaced by its nanny and its run retried, twice at most on a local cluster
  (``distributed.scheduler.allowed-failures``), then recorded as a failure. A failed write raises
  :class:`~setfuncs.experiments.resultsfile.SweepWriteError` after stopping the workers; the file
  keeps what its last complete write held (the error says so, or that nothing was written).
- **A time limit** (``Engine.time_limit``, ``--time-limit``): for a sitting that must end by a
  given time (a lent GPU's window, a batch job's slot, the end of a working day), no run starts
  that is expected to end after the limit: expected, from the longest run of its configuration in
  this sitting (of any configuration before one of its own has finished). A run that has started
  is never cut, so no training is thrown away, and the sitting closes as ``time limit``; the same
  command resumes the rest. The first runs start with nothing known, whatever the limit (even one
  the cluster's start-up has used up), so every sitting makes progress and a limit shorter than one
  run is overrun by that run.
- **Signals** (``_Signals``). Ctrl-C (SIGINT), or SIGTERM as a batch system sends at its time
  limit, at any moment of the sitting ends it: the queued runs are cancelled, the workers stopped,
  the sitting closed as ``interrupted`` and :class:`SweepInterrupted` raised, also when the sweep
  is stalled (waiting for a cluster, a scheduler, a worker). A local cluster's start-up and close
  are never cut midway (a half-started worker died with a traceback): a signal there takes effect
  the moment they end. A write cut by it leaves the file as its last complete write (writes are
  atomic), and the sitting's close writes it again. The first signal is acted on; any later one,
  while the sweep stops, changes nothing (the command line then ignores both until it exits).
  Local workers never see either signal (the client stops them through their nannies). A sweep
  started in the background inherits an ignored SIGINT and keeps ignoring it, as background jobs
  should: send it SIGTERM.
- **A file keeps its history.** A sitting that resumes a file keeps its header as the first
  sitting wrote it (command, working directory, commit, versions, hardware, and any key this code
  does not know), and records its own command, working directory, commit, versions and hardware
  in its own entry of ``sittings``; a sitting that finds nothing to run writes nothing. A sitting
  that an earlier process left ``running`` (killed before it could close) is marked ``unclosed``.
"""

from __future__ import annotations

import logging
import math
import os
import platform
import re
import signal
import socket
import threading
import time
import traceback
from collections import deque
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import torch

from .concurrent import Group, failure_record, run_concurrently
from .provenance import git_commit
from .resultsfile import SweepFile, SweepWriteError
from .schema import RunSchema, finished_keys, is_finished
from .sweeps import Task, positive_int

__all__ = ["Engine", "DeviceError", "ClusterError", "Sitting", "SweepInterrupted", "SweepResults", "run_sweep",
           "ALLOWED_WORKER_DEATHS", "DEVICES", "CPU_CAPABILITY", "X86_CAPABILITIES", "worker_environment",
           "WORKER_MALLOC", "worker_allocator"]

#: How often a local cluster reruns a run whose worker died before recording it as failed.
ALLOWED_WORKER_DEATHS = 2
#: Tasks in flight per worker thread (:func:`_window`): one running and one waiting, so a worker
#: never idles between runs and the runs start in the tasks' order.
IN_FLIGHT_PER_THREAD = 2

#: What ``--device`` accepts.
DEVICES = re.compile(r"cpu|auto|cuda(:\d+)?")


class DeviceError(ValueError):
    """An :class:`Engine`'s ``device`` is not one it accepts, or names a GPU this machine lacks."""


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
        concurrent: on a GPU, configurations a worker trains at once, each ensemble on its own CUDA
            stream (:mod:`~setfuncs.experiments.concurrent`), for experiments whose ``run_many`` is
            safe to run so; 1: one after another. Without a GPU runs train one by one and this is
            not used (``jobs`` sets how many train at once).
        time_limit: seconds from the sitting's start by which every task is expected to end: a
            task starts only if the longest task of this sitting so far (of its own configuration,
            once one has completed) would end before the limit; tasks that have started always
            finish. None: no limit.
    """

    jobs: int = 2
    scheduler: str | None = None
    device: str = "cpu"
    dashboard: bool = False
    concurrent: int = 1
    time_limit: float | None = None

    def __post_init__(self) -> None:
        positive_int("jobs", self.jobs)
        positive_int("concurrent", self.concurrent)
        if self.time_limit is not None and not (isinstance(self.time_limit, (int, float))
                                                and not isinstance(self.time_limit, bool)
                                                and math.isfinite(self.time_limit) and self.time_limit > 0):
            raise ValueError(f"time_limit must be a positive number of seconds or None, got {self.time_limit!r}")
        if not DEVICES.fullmatch(self.device):
            raise DeviceError(f"device must be cpu, cuda, cuda:N or auto, got {self.device!r}")
        if self.device.startswith("cuda") and self.scheduler is None and not torch.cuda.is_available():
            raise DeviceError(f"device {self.device!r}: this PyTorch sees no CUDA GPU; pass --device cpu "
                              f"(or auto), or --scheduler with workers that have a GPU")
        if self.device.startswith("cuda:") and self.scheduler is None:
            count = torch.cuda.device_count()
            if int(self.device.split(":")[1]) >= count:
                raise DeviceError(f"device {self.device!r}: this machine has {count} CUDA GPU{'s' * (count != 1)} "
                                  f"(cuda:0 to cuda:{count - 1}); pass one of them, or cuda")

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
    """The sweep was stopped (Ctrl-C, SIGTERM); the finished runs are in the file. ``kept`` is None
    when it stopped before its sitting began (the file was left as it was)."""

    def __init__(self, path: Path, kept: int | None, total: int) -> None:
        super().__init__(f"kept {kept} of {total} runs in {path}; run the same command to resume" if kept is not None
                         else f"stopped before any run started; {path} was left as it is")
        self.path, self.kept, self.total = path, kept, total


class ClusterError(RuntimeError):
    """The sweep's Dask cluster could not be started or reached (the sitting is closed as ``no cluster``)."""


class SweepResults(dict):
    """A sweep's results file as :func:`run_sweep` left it, and ``sitting``: the record of the sitting this
    call ran, or None when it found nothing to run (and wrote nothing)."""

    def __init__(self, results: dict, sitting: dict | None) -> None:
        super().__init__(results)
        self.sitting = sitting


def _prepare_local_worker() -> None:
    """Local workers leave Ctrl-C and SIGTERM (a terminal and a batch system send them to every
    process of the job) to the client, which stops them through their nannies (no worker dies
    midway with its connections open, no tracebacks from each worker): they are born with both
    blocked (:func:`_signals_blocked`) and ignore them from here on (where ``pthread_sigmask`` is
    missing, from here on only). Workers also get a tqdm thread lock:
    its default, a multiprocessing lock made by the first bar (even a disabled one), is a named
    semaphore that a worker stopped midway would leave to the resource tracker, which then warns of
    a leak when the sweep exits."""
    from tqdm import tqdm

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    tqdm.set_lock(threading.RLock())


#: The torch CPU kernels a local cluster's workers train with on an x86-64 CPU (``ATEN_CPU_CAPABILITY``).
CPU_CAPABILITY = "avx2"
#: The values of ``ATEN_CPU_CAPABILITY`` torch reads on an x86-64 CPU, in lower case only (any other
#: spelling silently gives the CPU's best kernels).
X86_CAPABILITIES = ("default", "avx2", "avx512")


def worker_environment() -> dict[str, str]:
    """What a local cluster's worker processes add to their environment on an x86-64 machine:
    ``ATEN_CPU_CAPABILITY`` = :data:`CPU_CAPABILITY`, or the environment's own value in the lower case
    torch reads (``AVX2``, as runs record it, is ``avx2``); nothing elsewhere (the variable names x86
    kernel sets). A value torch does not know is a ValueError naming it and the choices."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return {}
    given = os.environ.get("ATEN_CPU_CAPABILITY")
    if given is None:
        return {"ATEN_CPU_CAPABILITY": CPU_CAPABILITY}
    if given.strip().lower() not in X86_CAPABILITIES:
        raise ValueError(f"ATEN_CPU_CAPABILITY={given!r} is not a torch CPU kernel set; set it to one of "
                         f"{', '.join(X86_CAPABILITIES)} or unset it (the sweeps use {CPU_CAPABILITY})")
    return {"ATEN_CPU_CAPABILITY": given.strip().lower()}


#: glibc's allocator settings for a local cluster's workers, set before each starts (Dask's
#: ``distributed.nanny.pre-spawn-environ``): tensors up to 32 MiB (the largest mmap threshold glibc
#: accepts on 64-bit Linux) come from the heap, and up to 1 GiB of freed memory stays in the process
#: rather than going back to the kernel, so a worker's memory stays near its peak between steps.
WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(2**30)}


def worker_allocator() -> dict[str, str]:
    """The allocator variables a local cluster's workers start with: :data:`WORKER_MALLOC`, where
    the environment does not set them (a value set there wins, as Dask's own default does not)."""
    return {name: os.environ.get(name, value) for name, value in WORKER_MALLOC.items()}


def _worker_description() -> dict:
    """Where a run trained: host, process, code, and the CPU kernels torch dispatched to
    (``cpu_capability``: e.g. ``AVX2`` or ``AVX512``; the same run rounds differently under each, so
    a run reproduces bit for bit only under the same one)."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "git_commit": git_commit(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability()}


def _run_task(run_one: Callable[..., dict], args: tuple) -> list[dict]:
    """What a worker runs: one task with one torch thread, and where it ran."""
    torch.set_num_threads(1)
    return [{**run_one(*args), "worker": _worker_description()}]


def _run_group(run_many: Callable[[list[tuple]], list[dict]], args: list[tuple]) -> list[dict]:
    """What a worker runs for an ensemble: several seeds of one configuration, and where they ran."""
    torch.set_num_threads(1)
    worker = _worker_description()
    return [{**record, "worker": worker} for record in run_many(args)]


def _run_concurrent(run_many: Callable[[list[tuple]], list[dict]], work: tuple[str, list[Group]]) -> list[dict]:
    """What a worker runs for several configurations at once (``work``: the device and one group of
    seeds per configuration, :func:`~setfuncs.experiments.concurrent.run_concurrently`), and where they ran."""
    torch.set_num_threads(1)
    device, groups = work
    worker = _worker_description()
    return [{**record, "worker": worker} for record in run_concurrently(run_many, groups, device)]


@contextmanager
def _cluster(engine: Engine, signals: "_Signals") -> Iterator[tuple[Any, str]]:
    """A Dask client on the engine's cluster and its description, e.g. ``"dask 2026.8.0, LocalCluster(2)"``;
    a local cluster's start-up and close are ``signals``' protected sections (never cut midway)."""
    import dask
    from distributed import Client, LocalCluster

    name = f"dask {version('distributed')}"
    if engine.scheduler is not None:
        with Client(engine.scheduler, timeout="20s") as client:
            yield client, f"{name}, scheduler {engine.scheduler}"
        return
    pre_spawn = {**dask.config.get("distributed.nanny.pre-spawn-environ", {}), **worker_allocator()}
    environment = worker_environment()
    cluster = None
    try:
        with signals.protected(), dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_WORKER_DEATHS,
                                                   "distributed.nanny.pre-spawn-environ": pre_spawn}), \
                _signals_blocked():
            # Without --dashboard, the scheduler's plain HTTP routes (health, metrics) take a free port on
            # the loopback interface instead of 8787, so sweeps side by side do not contend for it.
            cluster = LocalCluster(n_workers=engine.jobs, threads_per_worker=1, processes=True, env=environment,
                                   dashboard_address=":8787" if engine.dashboard else None,
                                   scheduler_kwargs={} if engine.dashboard else {"dashboard_address": "127.0.0.1:0"},
                                   silence_logs=logging.CRITICAL)
        with Client(cluster) as client:        # a signal held during the start-up lands here or later
            client.register_worker_callbacks(_prepare_local_worker)
            yield client, f"{name}, LocalCluster({engine.jobs})"
    finally:
        if cluster is not None:
            with signals.protected():
                cluster.close()


#: The signals that stop a sweep: Ctrl-C, and what a batch system sends at its time limit.
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_blocked() -> Iterator[None]:
    """Inside the block SIGINT and SIGTERM wait (blocked) in this thread, and every thread and
    process started inside it is born with them blocked: the local cluster's event loop and, from
    its threads, every worker process, before it has imported anything. A Ctrl-C that a terminal
    sends to the whole process group while the workers start then reaches the client alone (once
    the block ends), never a half-started worker (which died with a traceback). Python's
    multiprocessing resource tracker unblocks both signals in the thread that starts it, so it is
    started here first."""
    if not hasattr(signal, "pthread_sigmask"):           # Windows: neither signal reaches a group
        yield
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _Signals:
    """Ctrl-C (SIGINT) and SIGTERM during a sitting, counted in ``received``: the first raises
    KeyboardInterrupt where the sweep is, except inside :meth:`protected` (a local cluster's start-up
    or close), where it is held until the section ends; later ones, while the sweep stops, are only
    counted. :meth:`listening` installs the handler."""

    def __init__(self) -> None:
        self.received = 0
        self._protected = 0
        self._held = False

    def _handle(self, signum: int, frame: object) -> None:
        self.received += 1
        if self.received == 1:
            if self._protected:
                self._held = True
            else:
                raise KeyboardInterrupt

    @contextmanager
    def protected(self) -> Iterator[None]:
        """Inside the block a first signal waits; it raises KeyboardInterrupt as the block ends."""
        self._protected += 1
        try:
            yield
        finally:
            self._protected -= 1
        if self._held and not self._protected:
            self._held = False
            raise KeyboardInterrupt

    @classmethod
    @contextmanager
    def listening(cls) -> Iterator["_Signals"]:
        """A ``_Signals`` that hears SIGINT and SIGTERM inside the block (in the main thread; in
        another, where Python cannot handle signals, it hears none). An ignored signal stays ignored."""
        signals = cls()
        previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for signum in _STOP_SIGNALS:
                if signal.getsignal(signum) != signal.SIG_IGN:
                    previous[signum] = signal.signal(signum, signals._handle)
        try:
            yield signals
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _window(client: Any, timed: bool = False) -> int:
    """How many tasks are submitted at a time: :data:`IN_FLIGHT_PER_THREAD` per worker thread the
    cluster has now (at least one), or one per thread when ``timed`` (a time limit: a task is then
    submitted when a thread is free, so it starts when it is submitted and its expected end is
    known). The next task is submitted as one finishes, so runs start in the order of the tasks:
    Dask assigns submitted tasks to workers at once and an idle worker steals the cheap ones, so a
    sweep submitted whole ran the fast configurations of every seed before the slow ones of the first."""
    return max(1, (1 if timed else IN_FLIGHT_PER_THREAD) * sum(client.nthreads().values()))


def _failure(task: Task, future: Any) -> dict:
    """The record of a run that raised, or whose workers kept dying."""
    from distributed import KilledWorker

    error = future.exception()
    trace = "".join(traceback.format_tb(future.traceback())) if future.traceback() is not None else ""
    return failure_record(task.spec, task.seed, error, trace,
                          "worker died" if isinstance(error, KilledWorker) else "raised")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(kw_only=True)
class Sitting:
    """One sitting of a sweep (one run of its command), as the file's ``sittings`` records it.

    Attributes:
        started, finished: UTC times (ISO 8601); ``finished`` is None while the sitting runs.
        wall_seconds: seconds since it started, updated as runs complete (None before the first).
        command, cwd, git_commit, versions, hardware: the sitting's command line, working directory,
            code, package versions and machine (from this sitting's header; the file's top level keeps
            the first sitting's).
        engine: the Dask cluster, e.g. ``"dask 2026.8.0, LocalCluster(2)"`` (None before it starts).
        device, device_requested: where the runs train (``auto`` resolved) and what was asked for.
        concurrent: configurations trained at once per worker (1 unless a GPU engine's
            ``concurrent`` applies to this experiment).
        kept_runs: runs of earlier sittings kept in the file.
        runs_added, failed_runs: this sitting's finished and failed runs.
        held_runs: runs the engine's time limit left for the next sitting (none started).
        restarted_from: where ``restart`` moved the old file (None if nothing was moved).
        ended: ``running``, then ``complete``, ``runs failed``, ``time limit`` (the engine's time
            limit left runs for the next sitting), ``interrupted`` or ``no cluster`` (it could not start
            or reach one); ``unclosed`` where a later sitting found it ``running`` (its process was killed).
    """

    started: str
    finished: str | None = None
    wall_seconds: float | None = None
    command: list[str] | None
    cwd: str | None = None
    git_commit: str | None
    versions: dict | None = None
    hardware: dict | None = None
    engine: str | None = None
    device: str
    device_requested: str
    concurrent: int = 1
    kept_runs: int
    runs_added: int = 0
    failed_runs: int = 0
    held_runs: int = 0
    restarted_from: str | None
    ended: str = "running"


#: The top-level keys the engine computes for every sitting; every other key of a resumed file is its
#: first sitting's, kept as it is.
_COMPUTED = ("identity", "configurations", "seeds", "runs_per_configuration", "sittings", "started", "finished",
             "wall_seconds", "complete", "runs")


def _merge(header: dict, identity: dict, previous: dict | None, tasks: Sequence[Task]) -> dict:
    """The file's contents before this sitting: the header (the earlier file's, every key it holds
    kept, else this sweep's), the union of the configurations and seeds of every sitting, the
    earlier sittings (one left ``running`` marked ``unclosed``: the lock says its process is gone),
    and the runs to keep (every finished run, and the failures of runs this sitting does not retry).
    ``previous`` keeps the results schema
    (:class:`~setfuncs.experiments.resultsfile.SweepFile` checked it)."""
    requested = {task.key for task in tasks}
    old = previous or {}
    runs = [r for r in old.get("runs", []) if is_finished(r) or (r["spec"], r["seed"]) not in requested]
    configurations = list(dict.fromkeys([*old.get("configurations", []), *header["configurations"]]))
    seeds = sorted({*old.get("seeds", []), *header["seeds"]})
    sittings = [{**s, "ended": "unclosed"} if isinstance(s, dict) and s.get("ended") == "running" else s
                for s in old.get("sittings", [])]
    kept_header = {**header, **{k: v for k, v in old.items() if k not in _COMPUTED}}
    return {**kept_header, "identity": identity, "configurations": configurations, "seeds": seeds,
            "runs_per_configuration": len(seeds), "sittings": sittings,
            "started": old.get("started"), "finished": None, "wall_seconds": None,
            "complete": False, "runs": runs}


@dataclass
class _Ledger:
    """What this sitting writes to ``file``: the kept contents (:func:`_merge`), this sitting's
    record and the runs it adds. :meth:`results` is the file's JSON; every change is written.

    Attributes:
        clock: :func:`time.perf_counter` when the sitting started.
    """

    file: SweepFile
    kept: dict
    sitting: Sitting
    clock: float
    runs: list[dict] = field(default_factory=list)

    def results(self) -> dict:
        """The file's contents now: ``wall_seconds`` sums every sitting's (None before this sitting's
        first run), ``finished`` and ``complete`` are set once the sitting is closed."""
        sittings = [*self.kept["sittings"], asdict(self.sitting)]
        runs = [*self.kept["runs"], *self.runs]
        wall = None if self.sitting.wall_seconds is None else sum(s["wall_seconds"] or 0.0 for s in sittings)
        return {**self.kept, "sittings": sittings, "started": self.kept["started"] or self.sitting.started,
                "finished": self.sitting.finished, "wall_seconds": wall,
                "complete": self.sitting.finished is not None and self._complete(runs), "runs": runs}

    def _complete(self, runs: list[dict]) -> bool:
        """Whether every configuration of the file has a finished run with every seed of the file."""
        return finished_keys(runs) >= {(spec, seed) for spec in self.kept["configurations"]
                                       for seed in self.kept["seeds"]}

    def todo(self, tasks: Sequence[Task]) -> list[Task]:
        """The tasks without a finished run in the file, in their order."""
        done = finished_keys(self.kept["runs"])
        return [task for task in tasks if task.key not in done]

    def finished_of(self, tasks: Sequence[Task]) -> int:
        """How many of ``tasks`` have a finished run in the file."""
        return len(finished_keys([*self.kept["runs"], *self.runs]) & {task.key for task in tasks})

    def write(self) -> None:
        """Write :meth:`results` to the file; a
        :class:`~setfuncs.experiments.resultsfile.SweepWriteError` if it cannot."""
        self.file.write(self.results())

    def add(self, records: list[dict]) -> None:
        """Add the records of a completed task (with where they trained) and write the file."""
        provenance = {"sitting": len(self.kept["sittings"]), "engine": self.sitting.engine,
                      "device": self.sitting.device}
        for record in records:
            self.runs.append({**record, "provenance": dict(provenance)})
            if is_finished(record):
                self.sitting.runs_added += 1
            else:
                self.sitting.failed_runs += 1
        self._tick()
        self.write()

    def close(self, ended: str) -> None:
        """End the sitting (how, e.g. ``"complete"``) and write the file."""
        self.sitting.finished = _now()
        self.sitting.ended = ended
        self._tick()
        self.write()

    def _tick(self) -> None:
        self.sitting.wall_seconds = time.perf_counter() - self.clock


class _Job(NamedTuple):
    """One Dask task: ``wrapper(function, args)`` (:func:`_run_task` or :func:`_run_group`), named
    ``name`` on the dashboard, for the runs of ``tasks``."""

    wrapper: Callable[[Callable, Any], list[dict]]
    function: Callable
    args: Any
    name: str
    tasks: list[Task]


def _jobs(todo: Sequence[Task], engine: Engine, run_one: Callable[..., dict],
          run_many: Callable[[list[tuple]], list[dict]] | None, concurrent: int = 1) -> deque[_Job]:
    """The Dask tasks of ``todo``, in order: one per run, or on a GPU with ``run_many`` one ensemble per
    configuration, configuration after configuration, ``concurrent`` configurations per task when
    that is more than 1 (:func:`_run_concurrent`)."""
    if run_many is None or not engine.ensembles:
        return deque(_Job(_run_task, run_one, task.args, f"run {task.spec} seed {task.seed}", [task])
                     for task in todo)
    groups: dict[str, list[Task]] = {}
    for task in todo:
        groups.setdefault(task.spec, []).append(task)
    if concurrent == 1:
        return deque(_Job(_run_group, run_many, [task.args for task in group], f"ensemble {spec}", group)
                     for spec, group in groups.items())
    ordered = list(groups.values())
    batches = [ordered[i:i + concurrent] for i in range(0, len(ordered), concurrent)]
    return deque(_Job(_run_concurrent, run_many,
                      (engine.trains_on, [([task.key for task in group], [task.args for task in group]) for group in batch]),
                      "ensembles " + " ".join(group[0].spec for group in batch), [task for group in batch for task in group])
                 for batch in batches)


class _Submitter:
    """Submits jobs in their order, :func:`_window` at a time (the next as one completes); iterating
    gives each completed job's records: its runs', or a failure (:func:`_failure`) for each of its tasks.

    With a ``deadline`` (a :func:`time.perf_counter` value) a job is submitted only if it is
    expected to end by then (:meth:`expected`); one that is not is set aside (``held``) and the
    next is tried, so a cheaper configuration may still fit. Jobs already running always finish.
    """

    def __init__(self, client: Any, jobs: deque[_Job], deadline: float | None = None) -> None:
        from distributed import as_completed

        self.client, self.jobs, self.deadline = client, jobs, deadline
        self.running: dict[Any, tuple[_Job, float]] = {}
        self.took: dict[str, float] = {}
        self.held: list[_Job] = []
        self.completed = as_completed()

    def __iter__(self) -> Iterator[list[dict]]:
        self._top_up()
        for future in self.completed:
            job, submitted = self.running.pop(future)
            if future.status == "finished":
                for spec in {task.spec for task in job.tasks}:
                    self.took[spec] = max(self.took.get(spec, 0.0), time.perf_counter() - submitted)
            self._top_up()
            yield future.result() if future.status == "finished" else [_failure(task, future) for task in job.tasks]

    def expected(self, job: _Job) -> float:
        """Seconds ``job`` is expected to take: the longest a completed job of this sitting with one
        of its configurations took, else the longest any completed job took, else 0 (nothing known)."""
        own = [self.took[task.spec] for task in job.tasks if task.spec in self.took]
        return max(own) if own else max(self.took.values(), default=0.0)

    def cancel(self) -> None:
        """Cancel the jobs submitted and not completed."""
        self.client.cancel(list(self.running))

    def _top_up(self) -> None:
        """Submit the next jobs until the window is full (workers may have joined); with a deadline,
        set aside each job that would end after it, once a job of this sitting has completed (before,
        nothing is known, and the first jobs start whatever the deadline)."""
        window = _window(self.client, timed=self.deadline is not None)
        while self.jobs and len(self.running) < window:
            job = self.jobs.popleft()
            if (self.deadline is not None and self.took
                    and time.perf_counter() + self.expected(job) > self.deadline):
                self.held.append(job)
                continue
            future = self.client.submit(job.wrapper, job.function, job.args, pure=False,
                                        key=f"{job.name} {time.time_ns()}")
            self.running[future] = (job, time.perf_counter())
            self.completed.add(future)


def _train(ledger: _Ledger, tasks: Sequence[Task], todo: list[Task], engine: Engine, run_one: Callable[..., dict],
           run_many: Callable[[list[tuple]], list[dict]] | None, signals: _Signals, progress: bool,
           desc: str) -> None:
    """Run ``todo`` (of the sweep's ``tasks``) on the engine's cluster, each completed job's records
    added to the ledger as it completes; on Ctrl-C or SIGTERM (``signals``) cancel the rest, close the
    sitting and raise :class:`SweepInterrupted`; on a failed write cancel the rest and raise; a cluster
    that cannot start closes the sitting and raises :class:`ClusterError`."""
    from tqdm.auto import tqdm

    with ExitStack() as stack:
        client, description = _started(stack, engine, signals, ledger)
        ledger.sitting.engine = description
        deadline = None if engine.time_limit is None else ledger.clock + engine.time_limit
        submitter = _Submitter(client, _jobs(todo, engine, run_one, run_many, ledger.sitting.concurrent), deadline)
        bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc=desc, unit="run", disable=not progress)
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


def _started(stack: ExitStack, engine: Engine, signals: _Signals, ledger: _Ledger) -> tuple[Any, str]:
    """Enter the engine's cluster (:func:`_cluster`) on ``stack``; one that cannot be started or reached
    closes the sitting as ``no cluster`` and raises :class:`ClusterError` naming the scheduler (or the
    local cluster) and the error."""
    try:
        return stack.enter_context(_cluster(engine, signals))
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
        engine: where the runs train (:class:`Engine`).
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
    seeds, ``identity``, ``sittings`` (each a :class:`Sitting`: started, finished, wall_seconds,
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
    clock, started = time.perf_counter(), _now()
    with _Signals.listening() as signals:
        try:
            return _sitting(run_one, tasks, out_path, header, identity, engine, restart, progress, desc, run_many,
                            schema, concurrent_safe, signals, clock, started)
        except SweepInterrupted:
            raise
        except KeyboardInterrupt:                    # before the sitting began: nothing was written
            raise SweepInterrupted(Path(out_path), None, len(tasks)) from None


def _sitting(run_one: Callable[..., dict], tasks: Sequence[Task], out_path: str | os.PathLike, header: dict,
             identity: dict, engine: Engine, restart: bool, progress: bool, desc: str,
             run_many: Callable[[list[tuple]], list[dict]] | None, schema: RunSchema, concurrent_safe: bool,
             signals: _Signals, clock: float, started: str) -> SweepResults:
    """One sitting of :func:`run_sweep` (its arguments), the file locked."""
    with SweepFile(out_path, identity, restart, schema) as file:
        kept = _merge(header, identity, file.previous, tasks)
        sitting = Sitting(started=started, command=header.get("command"), cwd=header.get("cwd"),
                          git_commit=header.get("git_commit"), versions=header.get("versions"),
                          hardware=header.get("hardware"), device=engine.trains_on, device_requested=engine.device,
                          concurrent=engine.concurrent if concurrent_safe and engine.ensembles and run_many is not None else 1,
                          kept_runs=len(kept["runs"]),
                          restarted_from=None if file.backup is None else str(file.backup))
        ledger = _Ledger(file, kept, sitting, clock)
        todo = ledger.todo(tasks)
        if not todo and file.previous is not None:
            return SweepResults(file.previous, None)          # nothing to run: the file stays as it is
        try:
            ledger.write()                           # a read-only folder or a full disk fails here
            if todo:
                _train(ledger, tasks, todo, engine, run_one, run_many, signals, progress, desc)
        except SweepInterrupted:
            raise
        except KeyboardInterrupt:                    # between the first write and the training's own handling
            ledger.close("interrupted")
            raise SweepInterrupted(ledger.file.path, ledger.finished_of(tasks), len(tasks)) from None
        ledger.close("runs failed" if sitting.failed_runs else "time limit" if sitting.held_runs else "complete")
    return SweepResults(ledger.results(), asdict(sitting))
