"""Several configurations of a sweep trained at once in one process, each on its own CUDA stream.

The ensemble of one configuration (:func:`~setfuncs.ensemble.fit_ensemble`, all its seeds in one
CUDA graph) still leaves most of a GPU idle when the model is small: its step is a chain of small
kernels, each waiting for the one before. Worker processes on one GPU take turns rather than
overlap (measured: 1 to 16 processes gave the same aggregate rate), but kernels that one process
queues on different CUDA streams can run side by side. :func:`run_concurrently` trains ``K``
configurations at once: configuration ``k`` in its own thread, on its own stream, with its own
graph (the thread's current stream is its own: PyTorch keeps the current stream per thread).
While one thread's graph runs on the device its thread waits outside Python, so the threads'
host work (a few copies and a replay per step) interleaves.

What stays exactly as one configuration after another:

- **the models**: each is built after ``torch.manual_seed(seed)`` while holding
  :data:`~setfuncs.experiments.protocol.RANDOM_STATE`, which every seeding and every checkpoint's
  evaluation takes, so no thread reseeds torch's global generator inside another's build;
- **the data**: every stream comes from its own ``torch.Generator``; the shared streams and test
  sets are made once, by the first thread that asks
  (:func:`~setfuncs.experiments.caching.shared_cache`);
- **the graphs**: one capture at a time (:data:`~setfuncs.steps.CAPTURE`), each on its loop's own
  stream, in thread-local capture mode, so that the other threads go on training meanwhile.

This holds only for experiments whose training step draws no random numbers from torch's global
generators (the circle and the mixture: no dropout, no sampled latents): a dropout mask or a
latent drawn inside a step would come from a generator that the threads share, in an order set
by the threads' timing. The sweep engine therefore trains configurations at once only for an
experiment that declares its ``run_many`` safe (``concurrent_safe`` of
:func:`~setfuncs.experiments.engine.sweep.run_sweep`), and one after another otherwise.
``tests/test_concurrent.py`` checks on a CPU that the records of configurations trained at once
equal those trained one after another; ``tests/test_cuda.py`` checks it on a GPU, with every step
after the warm-up replayed from a graph.
"""

from __future__ import annotations

import traceback
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Callable, Sequence

import torch

__all__ = ["Group", "failure_record", "on_own_stream", "in_threads", "at_once", "run_concurrently"]

#: One configuration's share of a concurrent task, the ``(spec, seed)`` of each of its runs and
#: ``run_many``'s argument tuples for them.
Group = tuple[Sequence[tuple[str, int]], list[tuple]]


def failure_record(spec: str, seed: int, error: BaseException, trace: str, kind: str = "raised") -> dict:
    """The record of a run that did not finish: ``error`` (``"Type: message"``) and ``failure``
    (``kind``: ``"raised"`` or ``"worker died"``, and the traceback), as a results file keeps it."""
    message = f"{type(error).__name__}: {error}"
    return {"spec": spec, "seed": seed, "error": message, "failure": {"kind": kind, "traceback": trace + message}}


def on_own_stream(function: Callable[[], Any], device: torch.device) -> Any:
    """``function()`` with a new CUDA stream as this thread's current stream, waiting for the stream's
    work before returning (on a CPU ``device``: ``function()``)."""
    if device.type != "cuda":
        return function()
    stream = torch.cuda.Stream(device)
    with torch.cuda.stream(stream):
        result = function()
    stream.synchronize()
    return result


def in_threads(functions: Sequence[Callable[[], Any]]) -> list[Any]:
    """The results of ``functions``, each called in a thread of its own (a single one in this thread),
    in their order; an exception one of them raises is raised here."""
    if len(functions) == 1:
        return [functions[0]()]
    with ThreadPoolExecutor(max_workers=len(functions), thread_name_prefix="configuration") as pool:
        futures = [pool.submit(function) for function in functions]
        return [future.result() for future in futures]


def at_once(functions: Sequence[Callable[[], Any]], device: str | torch.device) -> list[Any]:
    """The results of ``functions``, each called in a thread of its own and, on a CUDA ``device``, on a
    CUDA stream of its own (:func:`in_threads`, :func:`on_own_stream`), in their order."""
    target = torch.device(device)
    return in_threads([partial(on_own_stream, function, target) for function in functions])


def _recorded(run_many: Callable[[list[tuple]], list[dict]], group: Group, device: torch.device) -> list[dict]:
    """``run_many`` of one group on a stream of its own (:func:`on_own_stream`), or the failure record
    of each of its runs if it raises (the stream's work included)."""
    keys, args = group
    try:
        return on_own_stream(partial(run_many, args), device)
    except Exception as error:  # noqa: BLE001 -- recorded per run, as the engine records a task that raised
        trace = "".join(traceback.format_tb(error.__traceback__))
        return [failure_record(spec, seed, error, trace) for spec, seed in keys]


def run_concurrently(run_many: Callable[[list[tuple]], list[dict]], groups: Sequence[Group],
                     device: str | torch.device) -> list[dict]:
    """The records of every group, each group's ``run_many(args)`` (one configuration's seeds, as
    one ensemble) trained in a thread of its own and, on a CUDA ``device``, on a CUDA stream of its
    own; in the order of ``groups``. A group that raises gives a failure record
    (:func:`failure_record`) for each of its runs; the other groups' records are kept.
    ``run_many`` must be safe to run at once with itself (see the module)."""
    if not groups:
        raise ValueError("run_concurrently needs at least one group")
    target = torch.device(device)
    done = in_threads([partial(_recorded, run_many, group, target) for group in groups])
    return [record for records in done for record in records]
