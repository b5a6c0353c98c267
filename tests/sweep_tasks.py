"""The probe sweep of the sweep-engine tests: its identity, header and tasks, and module-level
``run_one`` functions (Dask workers import them by name).

Each ``run_one`` takes ``(spec, seed, *extra)`` and returns a record ``{"spec", "seed", "value",
"error"}``, or fails the way its name says.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from setfuncs.experiments.tasks import Task

#: What makes two sittings of the probe sweep one sweep.
IDENTITY = {"experiment": "probe", "budget": "tiny", "budget_parameters": {"steps": 1}}


def header(specs: list[str], runs: int) -> dict:
    """The probe sweep's header: ``runs`` seeds of ``specs``."""
    return {**IDENTITY, "configurations": specs, "seeds": list(range(runs)), "runs_per_configuration": runs,
            "command": ["probe"], "git_commit": None}


def tasks(specs: list[str], runs: int, *extra: object) -> list[Task]:
    """The probe sweep's tasks, seed by seed, each ``run_one(spec, seed, *extra)``."""
    return [Task(spec, seed, (spec, seed, *extra)) for seed in range(runs) for spec in specs]


def record(spec: str, seed: int) -> dict:
    """A run that succeeds at once."""
    return {"spec": spec, "seed": seed, "value": 10 * seed + len(spec), "error": None}


def record_many(args: list[tuple]) -> list[dict]:
    """``run_many`` of the probe sweep: :func:`record` for each ``(spec, seed)``."""
    return [record(spec, seed) for spec, seed in args]


def slow_many(args: list[tuple]) -> list[dict]:
    """``run_many`` of slow probe runs (``(spec, seed, seconds)``): an ensemble takes as long as its slowest seed."""
    time.sleep(max(seconds for _, _, seconds in args))
    return [record(spec, seed) for spec, seed, _ in args]


def slow(spec: str, seed: int, seconds: float) -> dict:
    """A run that takes ``seconds``."""
    time.sleep(seconds)
    return record(spec, seed)


def raises_for(spec: str, seed: int, bad: str) -> dict:
    """A run that raises for the spec ``bad``."""
    if spec == bad:
        raise RuntimeError(f"a run of {spec} broke on purpose")
    return record(spec, seed)


def dies_once(spec: str, seed: int, marker: str) -> dict:
    """The first attempt of spec ``"die"`` kills its own worker (SIGKILL, as the OOM killer does);
    later attempts succeed. ``marker`` is a file that records the first attempt."""
    if spec == "die" and not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return record(spec, seed)


def always_dies(spec: str, seed: int) -> dict:
    """Spec ``"die"`` kills its worker at every attempt."""
    if spec == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    return record(spec, seed)


def slow_for(spec: str, seed: int, slow_spec: str, seconds: float) -> dict:
    """A run that takes ``seconds`` for the spec ``slow_spec`` and a few milliseconds for the others."""
    time.sleep(seconds if spec == slow_spec else 0.01)
    return record(spec, seed)


def observed_sweep(out: str, phases: str, start_delay: float) -> None:
    """Run a probe sweep of 6 runs of 0.5 s into ``out`` through the command line's ending
    (:func:`~setfuncs.experiments.cli.run_sweep_command`: its message and exit status) on a local
    cluster of one worker process whose phases a test can see and time: ``phases`` is a file that
    says ``starting`` when the cluster's start-up begins (which then takes ``start_delay`` seconds
    longer, so that a signal sent on seeing it lands in the start-up) and ``closing`` when the
    cluster starts to close."""
    import distributed

    from setfuncs.experiments.cli import run_sweep_command
    from setfuncs.experiments.engine import Engine, run_sweep

    class ObservedCluster(distributed.LocalCluster):
        def __init__(self, *args, **kwargs) -> None:
            Path(phases).write_text("starting")
            time.sleep(start_delay)
            super().__init__(*args, **kwargs)

        def close(self, *args, **kwargs):
            Path(phases).write_text("closing")
            return super().close(*args, **kwargs)

    distributed.LocalCluster = ObservedCluster
    specs = ["a", "b", "c"]
    run_sweep_command(lambda: run_sweep(slow, tasks(specs, 2, 0.5), out, header(specs, 2), IDENTITY, Engine(jobs=1),
                                        progress=False), Path(out))


def allocator(spec: str, seed: int) -> dict:
    """A run that reports its process's glibc allocator variables and the minor page faults of
    computing (and freeing) the tanh of a MEDIUM point-cloud activation ``[32, 1000, 64]`` (8 MB),
    per time, over 20 times after 30 (while the heap grows to its steady size)."""
    import resource

    import torch

    x = torch.randn(32, 1000, 64)
    for _ in range(30):
        torch.tanh(x)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        torch.tanh(x)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20
    return {**record(spec, seed), "malloc": {name: os.environ.get(name) for name in
                                             ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")},
            "faults_per_tensor": faults}


def pointcloud_losses(spec: str, seed: int) -> dict:
    """A run that trains twelve QUICK steps of the point-cloud column ``spec`` with ``seed`` on three
    tiny clouds per class, one torch thread, and records every step's loss exactly (``float.hex``)."""
    from dataclasses import replace

    import torch

    from setfuncs.experiments.pointcloud import QUICK, PointClouds, synthetic_shapes, train_model

    torch.set_num_threads(1)
    x, y, names = synthetic_shapes(3, "train", 50, 0)
    _, log = train_model(spec, seed, replace(QUICK, steps=12), PointClouds(x, y, x[:12], y[:12], names), progress=False)
    return {**record(spec, seed), "losses": [float(v).hex() for v in log]}
