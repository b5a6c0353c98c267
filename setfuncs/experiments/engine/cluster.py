"""The Dask cluster a sitting runs on: a local cluster of single-threaded workers, or a running scheduler."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from importlib.metadata import version
from typing import Any, Iterator

from .config import ALLOWED_WORKER_DEATHS, Engine
from .signals import Signals, signals_blocked
from .workers import prepare_local_worker, worker_allocator, worker_environment

__all__ = ["ClusterError", "open_cluster"]


class ClusterError(RuntimeError):
    """The sweep's Dask cluster could not be started or reached (the sitting is closed as ``no cluster``)."""


@contextmanager
def open_cluster(engine: Engine, signals: "Signals") -> Iterator[tuple[Any, str]]:
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
                signals_blocked():
            # Without --dashboard, the scheduler's plain HTTP routes (health, metrics) take a free port on
            # the loopback interface instead of 8787, so sweeps side by side do not contend for it.
            cluster = LocalCluster(n_workers=engine.jobs, threads_per_worker=1, processes=True, env=environment,
                                   dashboard_address=":8787" if engine.dashboard else None,
                                   scheduler_kwargs={} if engine.dashboard else {"dashboard_address": "127.0.0.1:0"},
                                   silence_logs=logging.CRITICAL)
        with Client(cluster) as client:        # a signal held during the start-up lands here or later
            client.register_worker_callbacks(prepare_local_worker)
            yield client, f"{name}, LocalCluster({engine.jobs})"
    finally:
        if cluster is not None:
            with signals.protected():
                cluster.close()
