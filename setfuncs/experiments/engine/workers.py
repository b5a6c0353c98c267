"""What every worker of a sweep runs: its environment (CPU kernels, allocator, signals), and the
wrappers that train a task's runs with one torch thread and record where they ran."""

from __future__ import annotations

import os
import platform
import signal
import socket
import threading
from typing import Callable

import torch

from ..concurrent import Group, run_concurrently
from ..provenance import git_commit

__all__ = ["prepare_local_worker", "CPU_CAPABILITY", "X86_CAPABILITIES", "worker_environment", "WORKER_MALLOC",
           "worker_allocator", "worker_description", "run_task", "run_group", "run_concurrent"]


def prepare_local_worker() -> None:
    """Local workers leave Ctrl-C and SIGTERM (a terminal and a batch system send them to every
    process of the job) to the client, which stops them through their nannies (no worker dies
    midway with its connections open, no tracebacks from each worker): they are born with both
    blocked (:func:`~setfuncs.experiments.engine.signals.signals_blocked`) and ignore them from here on (where ``pthread_sigmask`` is
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


def worker_description() -> dict:
    """Where a run trained: host, process, code, and the CPU kernels torch dispatched to
    (``cpu_capability``: e.g. ``AVX2`` or ``AVX512``; the same run rounds differently under each, so
    a run reproduces bit for bit only under the same one)."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "git_commit": git_commit(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability()}


def run_task(run_one: Callable[..., dict], args: tuple) -> list[dict]:
    """What a worker runs: one task with one torch thread, and where it ran."""
    torch.set_num_threads(1)
    return [{**run_one(*args), "worker": worker_description()}]


def run_group(run_many: Callable[[list[tuple]], list[dict]], args: list[tuple]) -> list[dict]:
    """What a worker runs for an ensemble: several seeds of one configuration, and where they ran."""
    torch.set_num_threads(1)
    worker = worker_description()
    return [{**record, "worker": worker} for record in run_many(args)]


def run_concurrent(run_many: Callable[[list[tuple]], list[dict]], work: tuple[str, list[Group]]) -> list[dict]:
    """What a worker runs for several configurations at once (``work``: the device and one group of
    seeds per configuration, :func:`~setfuncs.experiments.concurrent.run_concurrently`), and where they ran."""
    torch.set_num_threads(1)
    device, groups = work
    worker = worker_description()
    return [{**record, "worker": worker} for record in run_concurrently(run_many, groups, device)]
