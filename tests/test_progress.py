"""``setfuncs.experiments.progress``: which planned runs a results file holds, and the time the missing
ones take at the medians of the file's own runs; what it prints, and what it refuses, naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from setfuncs.experiments.progress import WRITERS, format_progress, main, sweep_progress
from setfuncs.experiments.results import RESULTS_DIR, results_file


def run(spec: str, seed: int, train: float, evaluate: float | None = 0.0, **extra: object) -> dict:
    return {"spec": spec, "seed": seed, "train_seconds": train, "eval_seconds": evaluate, "error": None, **extra}


def results(configurations: list[str], runs: int, records: list[dict], sittings: list[dict] = ()) -> dict:
    return {"experiment": "gmm_mixture_weights", "budget": "medium", "configurations": configurations,
            "runs_per_configuration": runs, "seeds": list(range(runs)), "runs": records, "sittings": list(sittings)}


FAILED = {"spec": "b", "seed": 1, "error": "worker died", "failure": {"kind": "worker"}}


def test_missing_runs_cost_the_median_of_their_configuration() -> None:
    records = [run("a", 0, 10.0, 2.0), run("a", 1, 20.0, None), run("b", 0, 30.0, 5.0), FAILED,
               run("a", 5, 14.0)]                         # outside the plan: counts for the rate only
    found = sweep_progress(results(["a", "b", "c"], 3, records))
    assert found.planned == 9 and found.finished == 3 and found.failed == 1
    # seed-major, as a sweep submits them; the failed run is missing (a resumed sweep runs it again)
    assert found.missing == (("c", 0), ("b", 1), ("c", 1), ("a", 2), ("b", 2), ("c", 2))
    assert found.seconds_per_run == {"a": 14.0, "b": 35.0, "c": 17.0}   # c: the median of all, (14 + 20) / 2
    assert found.seconds_left == 17 + 35 + 17 + 14 + 35 + 17
    assert found.seconds_whole == 3 * (14 + 35 + 17)
    assert found.hours_left(2) == pytest.approx(found.seconds_left / 7200)


def test_the_seeds_every_configuration_finished_are_the_ones_the_paired_findings_can_use() -> None:
    """Seed 0 finished by all three, seed 1 by two (b's run failed), seed 2 by none; the command
    prints the complete seeds and how far the partial ones are."""
    records = [run(spec, 0, 10.0) for spec in "abc"] + [run("a", 1, 10.0), run("c", 1, 10.0), FAILED]
    found = sweep_progress(results(["a", "b", "c"], 3, records))
    assert found.seeds(3) == ([0], {1: 2})
    printed = format_progress("f.json", results(["a", "b", "c"], 3, records), found, 2).splitlines()
    assert printed[2] == "seeds finished by every configuration: 1 of 3 (0); seed 1: 2 of 3"
    none = sweep_progress(results(["a", "b"], 2, [run("a", 1, 10.0)]))
    assert none.seeds(2) == ([], {1: 1})


def test_more_seeds_add_their_runs_at_the_same_rates() -> None:
    records = [run(spec, seed, 60.0) for spec in ("a", "b") for seed in range(2)]
    complete = sweep_progress(results(["a", "b"], 2, records))
    assert complete.missing == () and complete.seconds_left == 0 and complete.finished == 4
    more = sweep_progress(results(["a", "b"], 2, records), runs=5)
    assert more.planned == 10 and len(more.missing) == 6 and more.seconds_left == 6 * 60
    assert more.hours_whole(1) == pytest.approx(10 * 60 / 3600)


def test_sittings_give_their_workers_and_rates() -> None:
    sittings = [{"engine": "dask 2026.8.0, LocalCluster(2)", "wall_seconds": 1800.0, "runs_added": 15},
                {"engine": "dask 2026.8.0, tcp://10.0.0.1:8786", "wall_seconds": 3600.0, "runs_added": 4}]
    found = sweep_progress(results(["a"], 1, [run("a", 0, 1.0)], sittings))
    assert [(s.workers, s.runs_per_hour) for s in found.sittings] == [(2, 30.0), (None, 4.0)]


def test_since_measures_the_rates_on_the_runs_of_later_sittings_and_counts_every_run() -> None:
    """Sitting 0 ran slowly (before a speed-up); from sitting 1 on the rates are today's."""
    def at(sitting: int) -> dict:
        return {"provenance": {"sitting": sitting}}

    records = [run("a", 0, 100.0, **at(0)), run("b", 0, 200.0, **at(0)), run("a", 1, 50.0, **at(1)),
               run("a", 2, 40.0, **at(2))]
    file = results(["a", "b", "c"], 3, records, [{"wall_seconds": 1.0, "runs_added": 2}] * 3)
    every, later = sweep_progress(file), sweep_progress(file, since=1)
    assert every.seconds_per_run == {"a": 50.0, "b": 200.0, "c": 75.0}
    assert later.seconds_per_run == {"a": 45.0, "b": 45.0, "c": 45.0}   # b and c: the median of the later runs
    assert later.finished == every.finished == 4 and later.missing == every.missing
    assert later.seconds_left == 5 * 45.0 and (later.since, later.measured_runs) == (1, 2)
    with pytest.raises(ValueError, match="no finished run in sitting 2 or later records train_seconds"):
        sweep_progress(results(["a"], 2, records[:3], [{}] * 3), since=2)


@pytest.mark.parametrize("since", [-1, 3, True, 1.0])
def test_since_must_name_a_sitting_of_the_file(since: object) -> None:
    with pytest.raises(ValueError, match="since must name one of the file's sittings, 0 to 2"):
        sweep_progress(results(["a"], 1, [run("a", 0, 1.0)], [{}] * 3), since=since)


@pytest.mark.parametrize("runs", [0, -1, True, 2.5])
def test_a_plan_of_no_seeds_is_refused(runs: object) -> None:
    with pytest.raises(ValueError, match="runs must be a positive int"):
        sweep_progress(results(["a"], 1, [run("a", 0, 1.0)]), runs=runs)


def test_a_file_without_measured_runs_has_no_rate() -> None:
    with pytest.raises(ValueError, match="no finished run records train_seconds"):
        sweep_progress(results(["a"], 2, [FAILED | {"spec": "a", "seed": 0}]))


def test_a_file_of_no_configurations_has_no_plan() -> None:
    with pytest.raises(ValueError, match="names no configurations"):
        sweep_progress(results([], 2, [run("a", 0, 1.0)]))


def test_every_experiments_writer_is_named() -> None:
    assert sorted(WRITERS.values()) == sorted(f"setfuncs.experiments.{name}"
                                              for name in ("circle", "mixture", "pointcloud", "attention"))


def test_the_command_on_a_committed_file(capsys: pytest.CaptureFixture) -> None:
    path = results_file("attention-medium.json")
    committed = json.loads(path.read_text())
    seeds = committed["runs_per_configuration"]
    assert main([str(path)]) == 0
    printed = capsys.readouterr().out
    total = len(committed["configurations"]) * seeds
    assert f"finished: {total} of {total} runs" in printed and "left: none; the sweep is complete" in printed
    assert main([str(path), "--runs", str(seeds + 1), "--jobs", "1"]) == 0
    more = capsys.readouterr().out
    assert f"left: {len(committed['configurations'])} runs" in more and "with 1 worker" in more


def test_the_command_measures_since_a_sitting_and_refuses_one_the_file_lacks(capsys: pytest.CaptureFixture) -> None:
    path = results_file("attention-medium.json")
    committed = json.loads(path.read_text())
    last = len(committed["sittings"]) - 1
    later = sum("failure" not in r and r["provenance"]["sitting"] >= last for r in committed["runs"])
    assert main([str(path), "--since-sitting", str(last)]) == 0
    assert f"over the {later} runs of sitting {last})" in capsys.readouterr().out
    assert main([str(path), "--since-sitting", str(last - 1)]) == 0
    earlier = sum("failure" not in r and r["provenance"]["sitting"] >= last - 1 for r in committed["runs"])
    assert f"over the {earlier} runs of sittings {last - 1} to {last})" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        main([str(path), "--since-sitting", str(last + 1)])
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and f"since must name one of the file's sittings, 0 to {last}" in error


#: Every sweep file the repository holds: the complete ones the chapters read, and the reruns in pending/.
SWEEP_FILES = sorted([*RESULTS_DIR.glob("*-medium.json"), *(RESULTS_DIR / "pending").glob("*-medium.json")])


@pytest.mark.parametrize("path", SWEEP_FILES, ids=[str(p.relative_to(RESULTS_DIR)) for p in SWEEP_FILES])
def test_the_command_counts_the_runs_of_every_sweep_file(path: Path, capsys: pytest.CaptureFixture) -> None:
    data = json.loads(path.read_text())
    finished = sum("failure" not in r for r in data["runs"])
    planned = len(data["configurations"]) * data["runs_per_configuration"]
    assert main([str(path)]) == 0
    assert f"finished: {finished} of {planned} runs" in capsys.readouterr().out


def test_the_repository_holds_every_experiments_sweep() -> None:
    assert {p.name for p in SWEEP_FILES} >= {f"{name}-medium.json" for name in ("circle", "mixture", "pointcloud",
                                                                                 "attention")}


@pytest.mark.parametrize("content, says", [
    ("{not json", "is not JSON"),
    (json.dumps({"experiment": "paper", "runs": []}), "is not a results file of"),
    (json.dumps([1, 2]), "is not a results file of"),
    (json.dumps({"experiment": "gmm_mixture_weights", "runs": []}), "lacks"),
])
def test_what_is_not_a_sweeps_file_is_refused_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                        content: str, says: str) -> None:
    path = tmp_path / "file.json"
    path.write_text(content)
    with pytest.raises(SystemExit) as stopped:
        main([str(path)])
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and str(path) in error and says in error


def test_a_missing_file_is_refused_by_argparse(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([str(tmp_path / "nowhere.json")])
    assert stopped.value.code == 2 and "no such file" in capsys.readouterr().err
