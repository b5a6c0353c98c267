"""What every experiment's sweep shares: tasks seed by seed, worker processes, a results file that
is rewritten after every run, and the provenance written beside the runs.

An experiment module supplies ``run_one(setting, equivariant, final, seed, budget) -> dict`` (a
module-level function, so spawned workers can import it) and its own provenance fields;
:func:`run_sweep` does the rest. A task is any tuple of ``run_one``'s arguments: the circle and
mixture sweeps pass :func:`configuration_tasks`, the point-cloud sweep ``(spec, seed, budget, data)``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch
from torch import Tensor
from tqdm.auto import tqdm

from setfuncs.model import DeepSet
from setfuncs.train import Batch, fit

__all__ = ["SETTINGS", "AGGREGATIONS", "TRAIN_SEED", "TEST_SEED", "TrainingBudget", "all_configurations", "spec_of",
           "make_deep_set", "train_configuration", "positive_int", "configuration_tasks", "git_commit", "cpu_model",
           "environment", "sweep_provenance", "write_atomically", "run_sweep"]

#: The paper's four settings, "<equivariant>/<final>", each plain or recurrent.
SETTINGS = ("plain/plain", "plain/recurrent", "recurrent/plain", "recurrent/recurrent")
#: The plain aggregations of Section 4 (mean, max, LSE).
AGGREGATIONS = ("mean", "max", "lse")
#: Offset of the training-data seed from the run's seed (model init uses the seed itself).
TRAIN_SEED = 1_000_000
#: Seed of every test set.
TEST_SEED = 2019
#: One run: ``(setting, equivariant, final, seed, budget)``.
Task = tuple[str, str, str, int, Any]


@dataclass(frozen=True)
class TrainingBudget:
    """The sizes every experiment's budget has; each experiment adds its evaluation sizes.

    Attributes:
        name: ``"quick"``, ``"medium"``, ``"full"`` or a custom name (tests).
        steps: Adam steps; batch: populations per step; lr: Adam's learning rate;
        clip: gradient-norm clipping threshold.
        hidden: width of every hidden layer; equivariant_layers: layers in ``combine``;
        recurrent_steps: reads ``T`` of every recurrent aggregation.
        test_size: test populations.
    """

    name: str
    steps: int
    batch: int
    lr: float
    clip: float
    hidden: int
    equivariant_layers: int
    recurrent_steps: int
    test_size: int

    def __post_init__(self) -> None:
        for field in ("steps", "batch", "hidden", "recurrent_steps", "test_size"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Budget.{field} must be a positive int, got {value!r}")
        if self.equivariant_layers < 0:
            raise ValueError(f"Budget.equivariant_layers must be >= 0, got {self.equivariant_layers}")
        if not (self.lr > 0 and self.clip > 0):
            raise ValueError(f"Budget.lr and Budget.clip must be positive, got {self.lr}, {self.clip}")


def all_configurations() -> list[tuple[str, str, str]]:
    """The 36 configurations ``(setting, equivariant, final)``, e.g. ``("recurrent/plain", "lse", "max")``."""
    return [(s, e, f) for s in SETTINGS for e in AGGREGATIONS for f in AGGREGATIONS]


def spec_of(setting: str, equivariant: str, final: str) -> str:
    """The model spec of a configuration: ``spec_of("recurrent/plain", "lse", "max") == "r-lse/max"``."""
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    for name, agg in (("equivariant", equivariant), ("final", final)):
        if agg not in AGGREGATIONS:
            raise ValueError(f"{name} aggregation must be one of {AGGREGATIONS}, got {agg!r}")
    recurrent_e, recurrent_f = (part == "recurrent" for part in setting.split("/"))
    return f"{'r-' if recurrent_e else ''}{equivariant}/{'r-' if recurrent_f else ''}{final}"


def make_deep_set(setting: str, equivariant: str, final: str, budget: TrainingBudget,
                  out_features: int) -> DeepSet:
    """The Deep Set ``2 -> out_features`` of one configuration at ``budget``'s width, depth and reads."""
    return DeepSet(2, out_features, spec_of(setting, equivariant, final), hidden=budget.hidden,
                   equivariant_layers=budget.equivariant_layers, steps=budget.recurrent_steps)


def train_configuration(setting: str, equivariant: str, final: str, seed: int, budget: TrainingBudget,
                        out_features: int, sampler: Callable[[torch.Generator], Callable[[], Batch]],
                        loss: Callable[[Tensor, Tensor], Tensor], progress: bool = True
                        ) -> tuple[DeepSet, list[float]]:
    """Train one configuration with one seed: the model (in eval mode) and its loss at every step.

    The model (:func:`make_deep_set`) is initialised after ``torch.manual_seed(seed)``; the
    training batches come from ``sampler(generator)`` with
    ``generator = torch.Generator().manual_seed(TRAIN_SEED + seed)``, fresh at every Adam step.
    Raises FloatingPointError if the loss diverges.
    """
    torch.manual_seed(seed)
    model = make_deep_set(setting, equivariant, final, budget, out_features)
    generator = torch.Generator().manual_seed(TRAIN_SEED + seed)
    losses = fit(model, sampler(generator), loss, budget.steps, lr=budget.lr, clip=budget.clip,
                 progress=progress, desc=f"{spec_of(setting, equivariant, final)} seed {seed}")
    return model, losses


def positive_int(name: str, value: object) -> int:
    """``value`` if it is a positive int, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def configuration_tasks(runs: int, budget: Any, configurations: Sequence[str] | None = None
                        ) -> tuple[list[str], list[Task]]:
    """The model specs to run and their tasks, seed by seed (all specs with seed 0 first, ...).

    ``configurations``: specs such as ``"r-lse/max"``; None: all 36 of
    :func:`all_configurations`. An interrupted sweep then holds about equally many runs of every
    configuration.
    """
    positive_int("runs", runs)
    known = {spec_of(*c): c for c in all_configurations()}
    specs = list(known) if configurations is None else list(configurations)
    unknown = [s for s in specs if s not in known]
    if unknown or not specs:
        raise ValueError(f"unknown or no configurations {unknown}; choose among {list(known)}")
    return specs, [(*known[s], seed, budget) for seed in range(runs) for s in specs]


def git_commit() -> str | None:
    """The checked-out commit of this package's repository, ``-dirty`` if files were changed (None outside git)."""
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty", "--abbrev=40"],
                              capture_output=True, text=True, check=False)
    except FileNotFoundError:  # git is not installed
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def cpu_model() -> str | None:
    """The CPU's model name from ``/proc/cpuinfo`` (None where there is none)."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return None
    for line in cpuinfo.read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


def environment(**versions: str) -> dict:
    """Command line, working directory, git commit, package versions (plus ``versions``) and hardware."""
    import setfuncs

    return {
        "command": list(sys.argv),
        "cwd": os.getcwd(),
        "git_commit": git_commit(),
        "versions": {"setfuncs": setfuncs.__version__, "torch": torch.__version__,
                     "numpy": np.__version__, **versions, "tqdm": version("tqdm"),
                     "python": platform.python_version()},
        "hardware": {"machine": platform.machine(), "processor": platform.processor(),
                     "cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
                     "platform": platform.platform(), "torch_threads_per_run": 1},
    }



def sweep_provenance(experiment: str, budget: Any, runs: int, specs: Sequence[str], seed_scheme: str,
                     **versions: str) -> dict:
    """What every sweep's file begins with: the ``experiment``, :func:`environment` (with the extra
    ``versions``), the budget's name and fields, the seeds ``0 .. runs-1`` and how they are used,
    and the configurations."""
    return {"experiment": experiment, **environment(**versions), "budget": budget.name,
            "budget_parameters": asdict(budget), "runs_per_configuration": runs, "seeds": list(range(runs)),
            "seed_scheme": seed_scheme, "configurations": list(specs)}

def write_atomically(path: Path, data: dict) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file, so a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def _worker_init() -> None:
    torch.set_num_threads(1)


def _call(run_one: Callable[..., dict], task: Task) -> dict:
    return run_one(*task)


def _results_in_process(run_one: Callable[..., dict], tasks: list[Task]) -> Iterator[dict]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for task in tasks:
            yield run_one(*task)
    finally:
        torch.set_num_threads(threads)


def _results_in_pool(run_one: Callable[..., dict], tasks: list[Task], jobs: int) -> Iterator[dict]:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_worker_init) as pool:
        pending: set[Future] = {pool.submit(partial(_call, run_one), task) for task in tasks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()


def run_sweep(run_one: Callable[..., dict], tasks: Sequence[tuple], jobs: int, out_path: str | os.PathLike,
              header: dict, progress: bool = True, desc: str = "sweep") -> dict:
    """Run every task and write ``header`` plus the runs to one JSON file.

    Args:
        run_one: a module-level function ``run_one(*task) -> dict`` (a JSON-friendly record).
        tasks: the argument tuples of ``run_one``, e.g. from :func:`configuration_tasks` (picklable
            when ``jobs > 1``).
        jobs: worker processes (spawned, one torch thread each); 1 runs in this process.
        out_path: the JSON file; rewritten atomically after every finished run with
            ``"complete": false``, and at the end with ``"complete": true``.
        header: the provenance (e.g. :func:`environment` plus the experiment's own fields).
        progress: a tqdm bar over runs, labelled ``desc``.

    Returns the written results: ``header`` plus ``started, finished, wall_seconds, complete``
    and ``runs`` (in order of completion).
    """
    positive_int("jobs", jobs)
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    results = {**header, "jobs": jobs,
               "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "finished": None, "wall_seconds": None, "complete": False, "runs": []}
    write_atomically(path, results)
    stream = _results_in_process(run_one, tasks) if jobs == 1 else _results_in_pool(run_one, tasks, jobs)
    with tqdm(total=len(tasks), desc=desc, unit="run", disable=not progress) as bar:
        for record in stream:
            results["runs"].append(record)
            results["wall_seconds"] = time.perf_counter() - start
            write_atomically(path, results)
            bar.update()
    results.update(finished=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   wall_seconds=time.perf_counter() - start, complete=True)
    write_atomically(path, results)
    return results
