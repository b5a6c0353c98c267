"""What a sitting writes: the kept contents of the results file, its own :class:`Sitting` record and
the runs it adds (:class:`Ledger`)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Sequence

from ..resultsfile import SweepFile
from ..schema import finished_keys, is_finished
from ..tasks import Task

__all__ = ["now", "Sitting", "COMPUTED_KEYS", "kept_contents", "Ledger"]


def now() -> str:
    """The UTC time now, ISO 8601 to the second."""
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
COMPUTED_KEYS = ("identity", "configurations", "seeds", "runs_per_configuration", "sittings", "started", "finished",
             "wall_seconds", "complete", "runs")


def kept_contents(header: dict, identity: dict, previous: dict | None, tasks: Sequence[Task]) -> dict:
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
    kept_header = {**header, **{k: v for k, v in old.items() if k not in COMPUTED_KEYS}}
    return {**kept_header, "identity": identity, "configurations": configurations, "seeds": seeds,
            "runs_per_configuration": len(seeds), "sittings": sittings,
            "started": old.get("started"), "finished": None, "wall_seconds": None,
            "complete": False, "runs": runs}


@dataclass
class Ledger:
    """What this sitting writes to ``file``: the kept contents (:func:`kept_contents`), this sitting's
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
        self.sitting.finished = now()
        self.sitting.ended = ended
        self._tick()
        self.write()

    def _tick(self) -> None:
        self.sitting.wall_seconds = time.perf_counter() - self.clock
