"""Where a sweep's runs train: the :class:`Engine` (local cluster or scheduler, device, time limit)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch

from ..tasks import positive_int

__all__ = ["ALLOWED_WORKER_DEATHS", "DEVICES", "DeviceError", "Engine"]

#: How often a local cluster reruns a run whose worker died before recording it as failed.
ALLOWED_WORKER_DEATHS = 2

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
            seeds of one configuration as one ensemble do (``run_many`` of :func:`~setfuncs.experiments.engine.sweep.run_sweep`).
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
