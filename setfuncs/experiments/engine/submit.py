"""Which Dask tasks a sitting submits, and when: its jobs in order, a window at a time, within a time limit."""

from __future__ import annotations

import time
import traceback
from collections import deque
from typing import Any, Callable, Iterator, NamedTuple, Sequence

from ..concurrent import failure_record
from ..tasks import Task
from .config import Engine
from .workers import run_concurrent, run_group, run_task

__all__ = ["IN_FLIGHT_PER_THREAD", "window", "failure_of", "Job", "plan_jobs", "Submitter"]

#: Tasks in flight per worker thread (:func:`window`): one running and one waiting, so a worker
#: never idles between runs and the runs start in the tasks' order.
IN_FLIGHT_PER_THREAD = 2


def window(client: Any, timed: bool = False) -> int:
    """How many tasks are submitted at a time: :data:`IN_FLIGHT_PER_THREAD` per worker thread the
    cluster has now (at least one), or one per thread when ``timed`` (a time limit: a task is then
    submitted when a thread is free, so it starts when it is submitted and its expected end is
    known). The next task is submitted as one finishes, so runs start in the order of the tasks:
    Dask assigns submitted tasks to workers at once and an idle worker steals the cheap ones, so a
    sweep submitted whole ran the fast configurations of every seed before the slow ones of the first."""
    return max(1, (1 if timed else IN_FLIGHT_PER_THREAD) * sum(client.nthreads().values()))


def failure_of(task: Task, future: Any) -> dict:
    """The record of a run that raised, or whose workers kept dying."""
    from distributed import KilledWorker

    error = future.exception()
    trace = "".join(traceback.format_tb(future.traceback())) if future.traceback() is not None else ""
    return failure_record(task.spec, task.seed, error, trace,
                          "worker died" if isinstance(error, KilledWorker) else "raised")


class Job(NamedTuple):
    """One Dask task: ``wrapper(function, args)`` (:func:`~setfuncs.experiments.engine.workers.run_task` or :func:`~setfuncs.experiments.engine.workers.run_group`), named
    ``name`` on the dashboard, for the runs of ``tasks``."""

    wrapper: Callable[[Callable, Any], list[dict]]
    function: Callable
    args: Any
    name: str
    tasks: list[Task]


def plan_jobs(todo: Sequence[Task], engine: Engine, run_one: Callable[..., dict],
          run_many: Callable[[list[tuple]], list[dict]] | None, concurrent: int = 1) -> deque[Job]:
    """The Dask tasks of ``todo``, in order: one per run, or on a GPU with ``run_many`` one ensemble per
    configuration, configuration after configuration, ``concurrent`` configurations per task when
    that is more than 1 (:func:`~setfuncs.experiments.engine.workers.run_concurrent`)."""
    if run_many is None or not engine.ensembles:
        return deque(Job(run_task, run_one, task.args, f"run {task.spec} seed {task.seed}", [task])
                     for task in todo)
    groups: dict[str, list[Task]] = {}
    for task in todo:
        groups.setdefault(task.spec, []).append(task)
    if concurrent == 1:
        return deque(Job(run_group, run_many, [task.args for task in group], f"ensemble {spec}", group)
                     for spec, group in groups.items())
    ordered = list(groups.values())
    batches = [ordered[i:i + concurrent] for i in range(0, len(ordered), concurrent)]
    return deque(Job(run_concurrent, run_many,
                      (engine.trains_on, [([task.key for task in group], [task.args for task in group]) for group in batch]),
                      "ensembles " + " ".join(group[0].spec for group in batch), [task for group in batch for task in group])
                 for batch in batches)


class Submitter:
    """Submits jobs in their order, :func:`window` at a time (the next as one completes); iterating
    gives each completed job's records: its runs', or a failure (:func:`failure_of`) for each of its tasks.

    With a ``deadline`` (a :func:`time.perf_counter` value) a job is submitted only if it is
    expected to end by then (:meth:`expected`); one that is not is set aside (``held``) and the
    next is tried, so a cheaper configuration may still fit. Jobs already running always finish.
    """

    def __init__(self, client: Any, jobs: deque[Job], deadline: float | None = None) -> None:
        from distributed import as_completed

        self.client, self.jobs, self.deadline = client, jobs, deadline
        self.running: dict[Any, tuple[Job, float]] = {}
        self.took: dict[str, float] = {}
        self.held: list[Job] = []
        self.completed = as_completed()

    def __iter__(self) -> Iterator[list[dict]]:
        self.top_up()
        for future in self.completed:
            job, submitted = self.running.pop(future)
            try:
                # a result lost with its worker (killed after the job finished, before the result was
                # fetched) is computed again: result() waits for it, where the future's status no longer
                # says "finished" and the job would have been recorded as failed with no error
                records = future.result()
            except Exception:                        # the job raised, or its workers kept dying
                records = [failure_of(task, future) for task in job.tasks]
            else:
                for spec in {task.spec for task in job.tasks}:
                    self.took[spec] = max(self.took.get(spec, 0.0), time.perf_counter() - submitted)
            self.top_up()
            yield records

    def expected(self, job: Job) -> float:
        """Seconds ``job`` is expected to take: the longest a completed job of this sitting with one
        of its configurations took, else the longest any completed job took, else 0 (nothing known)."""
        own = [self.took[task.spec] for task in job.tasks if task.spec in self.took]
        return max(own) if own else max(self.took.values(), default=0.0)

    def cancel(self) -> None:
        """Cancel the jobs submitted and not completed."""
        self.client.cancel(list(self.running))

    def top_up(self) -> None:
        """Submit the next jobs until the window is full (workers may have joined); with a deadline,
        set aside each job that would end after it, once a job of this sitting has completed (before,
        nothing is known, and the first jobs start whatever the deadline)."""
        size = window(self.client, timed=self.deadline is not None)
        while self.jobs and len(self.running) < size:
            job = self.jobs.popleft()
            if (self.deadline is not None and self.took
                    and time.perf_counter() + self.expected(job) > self.deadline):
                self.held.append(job)
                continue
            future = self.client.submit(job.wrapper, job.function, job.args, pure=False,
                                        key=f"{job.name} {time.time_ns()}")
            self.running[future] = (job, time.perf_counter())
            self.completed.add(future)
