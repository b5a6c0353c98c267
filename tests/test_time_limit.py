"""A sweep's time limit (``--time-limit``, ``Engine.time_limit``): no run starts that is expected to
end after it, no started run is cut, and the same command resumes the rest.

The decision rule is proven on the engine's submitter with a clock and a client the test controls
(exact, no timing); a probe sweep on the in-process scheduler (``tests/conftest.py``) and the
command line's ending show what a user sees: a file that stops early, says why, and resumes.
"""

from __future__ import annotations

import importlib
import json
import types
from collections import deque
from pathlib import Path

import pytest

import sweep_tasks
from setfuncs.experiments.engine import submit as submit_module
from setfuncs.experiments.cli import TIME_LIMIT_STATUS, engine_of, parse_duration, run_sweep_command
from setfuncs.experiments.engine import Engine, run_sweep
from setfuncs.experiments.engine.submit import Job, Submitter
from setfuncs.experiments.engine.workers import run_task
from setfuncs.experiments.tasks import Task
from sweep_tasks import IDENTITY, header, tasks


class _Clock:
    """``time`` for the engine module, with a ``perf_counter`` the test sets."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def time_ns(self) -> int:
        return int(self.now * 1e9)


class _Client:
    """The part of a Dask client the submitter uses: ``threads`` worker threads, and a list of the
    job names submitted."""

    def __init__(self, threads: int) -> None:
        self.threads, self.submitted = threads, []

    def nthreads(self) -> dict[str, int]:
        return {"worker": self.threads}

    def submit(self, wrapper, function, args, pure: bool, key: str) -> str:
        self.submitted.append(key.rsplit(" ", 1)[0])
        return key


def job(spec: str, seed: int) -> Job:
    return Job(run_task, sweep_tasks.record, (spec, seed), f"{spec}{seed}", [Task(spec, seed, (spec, seed))])


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    """The engine's clock, set by the test; the submitter's ``as_completed`` takes the fake client's
    futures (their keys) and drops them."""
    import distributed

    clock = _Clock()
    monkeypatch.setattr(submit_module, "time", clock)
    monkeypatch.setattr(distributed, "as_completed", lambda: types.SimpleNamespace(add=lambda future: None))
    return clock


def submitter(client: _Client, names: list[str], deadline: float | None) -> Submitter:
    """A submitter of the jobs ``names`` (e.g. ``"a0"``: spec ``a``, seed 0) that records what it submits."""
    return Submitter(client, deque(job(name[0], int(name[1:])) for name in names), deadline)


def complete(made: Submitter, took: dict[str, float]) -> None:
    """Every running job completes now; ``took`` is what the submitter has learnt of each spec."""
    made.running.clear()
    made.took.update(took)


# --- the rule --------------------------------------------------------------------------------------

def test_a_run_starts_only_while_it_is_expected_to_end_by_the_deadline(clock: _Clock) -> None:
    client = _Client(threads=1)
    made = submitter(client, ["a0", "b0", "a1", "b1", "a2"], deadline=100.0)
    made.top_up()                                   # nothing known yet: the first run starts
    assert client.submitted == ["a0"]
    clock.now = 30.0
    complete(made, {"a": 30.0})
    made.top_up()                                   # b0 has no run of its own yet: a's 30 s, ends at 60
    assert client.submitted == ["a0", "b0"]
    clock.now = 90.0
    complete(made, {"b": 60.0})
    made.top_up()                                   # a1 would end at 120, b1 at 150, a2 at 120: none starts
    assert client.submitted == ["a0", "b0"] and [j.name for j in made.held] == ["a1", "b1", "a2"]
    assert not made.jobs and not made.running


def test_a_run_that_does_not_fit_is_set_aside_and_a_cheaper_one_starts(clock: _Clock) -> None:
    client = _Client(threads=1)
    made = submitter(client, ["b1", "a1"], deadline=100.0)
    made.took.update({"a": 30.0, "b": 60.0})
    clock.now = 50.0
    made.top_up()                                   # b1 would end at 110; a1 at 80
    assert client.submitted == ["a1"] and [j.name for j in made.held] == ["b1"]


def test_a_time_limit_submits_one_run_per_thread_and_none_waits(clock: _Clock) -> None:
    limited, unlimited = _Client(threads=2), _Client(threads=2)
    submitter(limited, ["a0", "b0", "a1", "b1", "a2"], deadline=1e9).top_up()
    submitter(unlimited, ["a0", "b0", "a1", "b1", "a2"], deadline=None).top_up()
    assert limited.submitted == ["a0", "b0"]         # a waiting run would start later than submitted
    assert unlimited.submitted == ["a0", "b0", "a1", "b1"]


def test_the_expected_time_is_the_longest_of_the_configuration_else_of_any(clock: _Clock) -> None:
    made = submitter(_Client(threads=1), [], deadline=10.0)
    assert made.expected(job("a", 0)) == 0.0
    made.took.update({"a": 3.0, "b": 7.0})
    assert made.expected(job("a", 1)) == 3.0 and made.expected(job("c", 0)) == 7.0


# --- a sweep ---------------------------------------------------------------------------------------

def test_a_sweep_stops_at_its_time_limit_and_the_same_command_resumes(tmp_path: Path,
                                                                      in_process_scheduler: str) -> None:
    out, specs, runs, seconds, limit = tmp_path / "probe.json", ["a", "b"], 3, 0.4, 1.5

    def sweep(engine: Engine) -> dict:
        return run_sweep(sweep_tasks.slow, tasks(specs, runs, seconds), out, header(specs, runs), IDENTITY,
                         engine, progress=False)

    first = sweep(Engine(scheduler=in_process_scheduler, time_limit=limit))
    sitting = first["sittings"][0]
    assert sitting["ended"] == "time limit" and first["complete"] is False
    assert 1 <= sitting["runs_added"] <= 3 and sitting["runs_added"] + sitting["held_runs"] == 6
    # the last run started when it was expected to end by the limit: a run's time after the first
    assert sitting["wall_seconds"] < limit + 2 * seconds + 1.0
    second = sweep(Engine(scheduler=in_process_scheduler))
    assert second["complete"] is True and second["sittings"][1]["ended"] == "complete"
    assert second["runs"][:len(first["runs"])] == first["runs"]
    assert second["sittings"][1]["kept_runs"] == sitting["runs_added"]


def test_on_a_gpu_a_whole_ensemble_is_held_back_or_trained(tmp_path: Path, in_process_scheduler: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """An ensemble (every missing seed of a configuration, one task) is the unit the limit decides on:
    the first trains with nothing known and takes 1 s; the second, expected to take as long, would end
    past the 0.5 s limit and is held with all its seeds."""
    monkeypatch.setattr(Engine, "ensembles", property(lambda self: True))
    out, specs, runs = tmp_path / "probe.json", ["a", "b"], 3
    results = run_sweep(sweep_tasks.slow, tasks(specs, runs, 1.0), out, header(specs, runs), IDENTITY,
                        Engine(scheduler=in_process_scheduler, time_limit=0.5), progress=False,
                        run_many=sweep_tasks.slow_many)
    sitting = results["sittings"][0]
    assert (sitting["ended"], sitting["runs_added"], sitting["held_runs"]) == ("time limit", 3, 3)
    assert sorted((r["spec"], r["seed"]) for r in results["runs"]) == [("a", 0), ("a", 1), ("a", 2)]


def test_the_command_line_says_what_the_limit_left_and_exits_75(tmp_path: Path, in_process_scheduler: str,
                                                               capsys) -> None:
    out, specs, runs = tmp_path / "probe.json", ["a", "b"], 2
    engine = Engine(scheduler=in_process_scheduler, time_limit=0.5)
    with pytest.raises(SystemExit) as stop:
        run_sweep_command(lambda: run_sweep(sweep_tasks.slow, tasks(specs, runs, 1.0), out, header(specs, runs),
                                            IDENTITY, engine, progress=False), out)
    assert stop.value.code == TIME_LIMIT_STATUS == 75
    held = json.loads(out.read_text())["sittings"][0]["held_runs"]
    assert held == 3                                 # the first run knew nothing and overran the limit
    assert f"time limit: {held} runs not started" in capsys.readouterr().err


@pytest.mark.parametrize("experiment", ["circle", "mixture", "pointcloud", "attention"])
def test_every_sweep_command_gives_its_engine_the_time_limit(experiment: str, tmp_path: Path, capsys) -> None:
    command_line = importlib.import_module(f"setfuncs.experiments.{experiment}.__main__").COMMAND_LINE
    parser = command_line.parser()
    argv = ["sweep", "--budget", "quick", "--runs", "1", "--out", str(tmp_path / "x.json")]
    assert engine_of(parser.parse_args([*argv, "--time-limit", "1.5h"]), parser).time_limit == 5400.0
    assert engine_of(parser.parse_args(argv), parser).time_limit is None
    with pytest.raises(SystemExit) as refused:
        parser.parse_args([*argv, "--time-limit", "90"])
    assert refused.value.code == 2 and "--time-limit: expected a positive duration with a unit" in capsys.readouterr().err


# --- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, seconds", [("90m", 5400.0), ("2.5h", 9000.0), ("600s", 600.0), (" 1.5 m ", 90.0),
                                           (".5h", 1800.0), ("2h30m", 9000.0), ("1h 5m 30s", 3930.0),
                                           ("1m30s", 90.0), ("0h10m", 600.0)])
def test_a_duration_has_a_unit(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["90", "0m", "-5m", "1e3s", "abc", "", "5 minutes", "nanm",
                                  "30m2h", "1h1h", "0h0m", "2h30", "h", "1d"])
def test_a_duration_without_a_unit_or_not_positive_is_refused_naming_the_form(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="e.g. 90m, 2.5h, 600s or 2h30m"):
        parse_duration(text)


@pytest.mark.parametrize("limit", [0, -1.0, float("nan"), float("inf"), True, "90m"])
def test_an_engine_refuses_a_time_limit_that_is_not_a_positive_number(limit: object) -> None:
    with pytest.raises(ValueError, match="time_limit must be a positive number of seconds"):
        Engine(time_limit=limit)
