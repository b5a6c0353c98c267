"""The sweep engine: every run of a sweep is a task on a Dask cluster; one client writes the results.

Its parts, one module each: :mod:`~setfuncs.experiments.engine.config` (the :class:`~setfuncs.experiments.engine.config.Engine`: where runs
train), :mod:`~setfuncs.experiments.engine.workers` (a worker's environment and the wrappers it
runs), :mod:`~setfuncs.experiments.engine.signals` (Ctrl-C and SIGTERM),
:mod:`~setfuncs.experiments.engine.cluster` (the Dask cluster), :mod:`~setfuncs.experiments.engine.ledger`
(what a sitting writes), :mod:`~setfuncs.experiments.engine.submit` (which tasks start, and when) and
:mod:`~setfuncs.experiments.engine.sweep` (:func:`~setfuncs.experiments.engine.sweep.run_sweep`, one sitting from start to end). This
package names their public objects; what follows is what they do together.

An experiment supplies ``run_one(*args) -> dict`` (a module-level function, so Dask workers import
it rather than unpickle its code) and its tasks, each a :class:`~setfuncs.experiments.tasks.Task`
``(spec, seed, args)`` in the order they should run (seed by seed); :func:`~setfuncs.experiments.engine.sweep.run_sweep` does the rest:

- **Where runs train** (:class:`~setfuncs.experiments.engine.config.Engine`): a :class:`distributed.LocalCluster` of ``jobs``
  single-threaded worker processes (the default), or the workers of a running Dask scheduler at
  ``scheduler`` (``dask scheduler`` on one machine, ``dask worker ADDRESS --nthreads 1`` on each
  machine that has ``setfuncs`` installed).
- **Resumable** (:class:`~setfuncs.experiments.resultsfile.SweepFile`): the (configuration, seed)
  pairs an earlier sitting finished (:func:`~setfuncs.experiments.schema.finished_keys`) are kept
  byte for byte and skipped; only the missing ones run. The earlier file is checked against the
  results schema first (``schema``: :func:`~setfuncs.experiments.schema.check_results`), so a file
  with a duplicated run, a seed such as ``"0"`` or a broken header is refused by name, never
  counted twice or trained again.
- **One record per sitting** (:class:`~setfuncs.experiments.engine.ledger.Sitting`), in the file's ``sittings``; each run records where
  it trained, the torch CPU kernels included (``worker.cpu_capability``).
- **The same kernels on every x86-64 machine** (:func:`~setfuncs.experiments.engine.workers.worker_environment`): a local cluster's
  workers train with torch's AVX2 kernels, which every x86-64 CPU of the last decade has; a CPU
  with AVX-512 would otherwise pick kernels that round differently, and a training run amplifies
  the difference (a recurrent mixture run's metric moved in its second digit). So a run reproduces
  bit for bit on any such machine. ``ATEN_CPU_CAPABILITY`` set in the environment wins (e.g.
  ``avx512``, the native kernels of such a CPU).
- **Workers reuse their memory** (:func:`~setfuncs.experiments.engine.workers.worker_allocator`): Dask's nanny starts workers with
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
- **Signals** (:class:`~setfuncs.experiments.engine.signals.Signals`). Ctrl-C (SIGINT), or SIGTERM as a batch system sends at its time
  limit, at any moment of the sitting ends it: the queued runs are cancelled, the workers stopped,
  the sitting closed as ``interrupted`` and :class:`~setfuncs.experiments.engine.sweep.SweepInterrupted` raised, also when the sweep
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

from .cluster import ClusterError
from .config import ALLOWED_WORKER_DEATHS, DEVICES, DeviceError, Engine
from .ledger import Sitting
from .sweep import SweepInterrupted, SweepResults, run_sweep
from .workers import CPU_CAPABILITY, WORKER_MALLOC, X86_CAPABILITIES, worker_allocator, worker_environment

__all__ = ["Engine", "DeviceError", "ClusterError", "Sitting", "SweepInterrupted", "SweepResults", "run_sweep",
           "ALLOWED_WORKER_DEATHS", "DEVICES", "CPU_CAPABILITY", "X86_CAPABILITIES", "worker_environment",
           "WORKER_MALLOC", "worker_allocator"]
