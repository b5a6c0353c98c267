"""Configurations trained at once give the records they give one after another.

On a GPU each configuration's ensemble trains in a thread of its own, on its own CUDA stream
(:mod:`setfuncs.experiments.concurrent`). The properties that make this exact hold on a CPU as
well, where the threads share the cores: the models are seeded and built one thread at a time,
the shared streams and test sets are made once, a configuration that fails takes no other down,
and the engine puts ``concurrent`` configurations into one task only for experiments that declare
it safe. ``tests/test_cuda.py`` checks the same on a GPU, with graphs.
"""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from pathlib import Path

import pytest
from torch import nn

from setfuncs.experiments import circle, mixture
from setfuncs.experiments.caching import shared_cache
from setfuncs.experiments.concurrent import failure_record, run_concurrently
from setfuncs.experiments.engine import Engine, run_sweep
from setfuncs.experiments.engine.submit import plan_jobs
from setfuncs.experiments.engine.workers import run_concurrent, run_group
from setfuncs.experiments.protocol import RANDOM_STATE, seeded_models
from setfuncs.experiments.sweeps import spec_of
from setfuncs.experiments.tasks import Task

import sweep_tasks  # tests/sweep_tasks.py

ROOT = Path(__file__).resolve().parents[1]

CIRCLE = circle.Budget("tiny", steps=8, batch=4, lr=1e-3, clip=1.0, hidden=4, equivariant_layers=1,
                       recurrent_steps=2, test_size=16, test_population_sizes=(5, 20))
MIXTURE = mixture.Budget("tiny", steps=12, batch=6, lr=1e-2, clip=1.0, hidden=8, equivariant_layers=1,
                         recurrent_steps=2, test_size=4, test_population_sizes=(10, 100), bootstraps=20)
CONFIGURATIONS = [("plain/plain", "max", "max"), ("recurrent/recurrent", "lse", "max"), ("plain/recurrent", "lme", "mean")]
SEEDS = (0, 1)


def groups(budget) -> list:
    """One group per configuration: its runs' keys and ``run_ensemble``'s argument tuples."""
    return [([(spec_of(*c), s) for s in SEEDS], [(*c, s, budget, False, "cpu") for s in SEEDS]) for c in CONFIGURATIONS]


def without_times(record: dict) -> dict:
    """A record without what depends on the clock or the process."""
    kept = {k: v for k, v in record.items() if k not in ("train_seconds", "eval_seconds", "worker", "provenance")}
    if "ensemble" in kept:
        kept["ensemble"] = {k: v for k, v in kept["ensemble"].items() if k != "train_seconds"}
    return kept


@pytest.mark.parametrize("experiment, budget", [(circle, CIRCLE), (mixture, MIXTURE)], ids=["circle", "mixture"])
def test_configurations_at_once_give_the_records_of_one_after_another(experiment, budget) -> None:
    at_once = run_concurrently(experiment.run_ensemble, groups(budget), "cpu")
    one_by_one = [record for _, args in groups(budget) for record in experiment.run_ensemble(args)]
    assert [(r["spec"], r["seed"]) for r in at_once] == [key for keys, _ in groups(budget) for key in keys]
    assert all(r["error"] is None and r["learning_curve"]["test"]["values"] for r in at_once)
    assert [without_times(r) for r in at_once] == [without_times(r) for r in one_by_one]


def broken_run_many(args: list[tuple]) -> list[dict]:
    """``run_many`` of the probe sweep that raises for the spec ``"bad"``."""
    if args[0][0] == "bad":
        raise RuntimeError("out of memory in configuration bad")
    return [sweep_tasks.record(spec, seed) for spec, seed in args]


def test_a_configuration_that_raises_fails_alone() -> None:
    work = [([("a", 0), ("a", 1)], [("a", 0), ("a", 1)]), ([("bad", 0), ("bad", 1)], [("bad", 0), ("bad", 1)]),
            ([("c", 0)], [("c", 0)])]
    records = run_concurrently(broken_run_many, work, "cpu")
    assert [(r["spec"], r["seed"]) for r in records] == [("a", 0), ("a", 1), ("bad", 0), ("bad", 1), ("c", 0)]
    assert [r["error"] is None for r in records] == [True, True, False, False, True]
    for failed in records[2:4]:
        assert failed["error"] == "RuntimeError: out of memory in configuration bad"
        assert failed["failure"]["kind"] == "raised"
        assert "broken_run_many" in failed["failure"]["traceback"]
    with pytest.raises(ValueError, match="at least one group"):
        run_concurrently(broken_run_many, [], "cpu")


def test_a_failure_record_names_the_error_and_its_kind() -> None:
    record = failure_record("max/max", 3, MemoryError("no room"), "  File x\n", kind="worker died")
    assert record == {"spec": "max/max", "seed": 3, "error": "MemoryError: no room",
                      "failure": {"kind": "worker died", "traceback": "  File x\nMemoryError: no room"}}


def test_seeding_waits_for_the_thread_that_holds_the_random_state() -> None:
    built = threading.Event()

    def build() -> None:
        seeded_models([0, 1], lambda: nn.Linear(2, 2))
        built.set()

    with RANDOM_STATE:
        thread = threading.Thread(target=build)
        thread.start()
        assert not built.wait(0.3)       # it waits while another thread seeds or draws
    assert built.wait(10)
    thread.join()


def test_a_shared_cache_computes_a_value_once_for_threads_that_ask_at_once() -> None:
    calls = []

    @shared_cache(maxsize=2)
    def slow_square(x: int) -> list[int]:
        calls.append(x)
        time.sleep(0.2)
        return [x * x]

    results: list = [None] * 4
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, slow_square(3))) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [3] and results[0] == [9] and all(r is results[0] for r in results)
    assert slow_square.cache_info().hits == 3
    slow_square.cache_clear()
    assert slow_square(3) == [9] and calls == [3, 3]


@pytest.fixture
def gpu_like(monkeypatch) -> None:
    """An engine that trains ensembles, as on a GPU, here on the CPU."""
    monkeypatch.setattr(Engine, "ensembles", property(lambda self: True))


def test_the_engine_puts_concurrent_configurations_into_one_task(gpu_like) -> None:
    specs = [f"s{i}" for i in range(7)]
    todo = [Task(spec, seed, (spec, seed)) for seed in range(2) for spec in specs]
    jobs = list(plan_jobs(todo, Engine(concurrent=3), sweep_tasks.record, broken_run_many, 3))
    assert [job.wrapper for job in jobs] == [run_concurrent] * 3
    assert [[t.spec for t in job.tasks] for job in jobs] == [
        ["s0", "s0", "s1", "s1", "s2", "s2"], ["s3", "s3", "s4", "s4", "s5", "s5"], ["s6", "s6"]]
    device, work = jobs[0].args
    assert device == "cpu" and work[1] == ([("s1", 0), ("s1", 1)], [("s1", 0), ("s1", 1)])
    alone = list(plan_jobs(todo, Engine(concurrent=3), sweep_tasks.record, broken_run_many, 1))
    assert [job.wrapper for job in alone] == [run_group] * 7


def test_concurrent_must_be_a_positive_int() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="concurrent must be a positive int"):
            Engine(concurrent=bad)


def test_a_sweep_with_configurations_at_once_writes_the_same_runs(tmp_path: Path, gpu_like,
                                                                   in_process_scheduler: str) -> None:
    specs = ["max/max", "r-lse/r-max", "lme/r-mean"]
    files = {}
    for concurrent in (1, 2):
        out = tmp_path / f"c{concurrent}.json"
        circle.sweep(2, CIRCLE, out, specs, engine=Engine(scheduler=in_process_scheduler, concurrent=concurrent),
                     progress=False)
        files[concurrent] = json.loads(out.read_text())
    assert [s["concurrent"] for s in files[2]["sittings"]] == [2] and files[1]["sittings"][0]["concurrent"] == 1
    runs = {c: sorted((without_times(r) for r in f["runs"]), key=lambda r: (r["spec"], r["seed"])) for c, f in files.items()}
    assert files[2]["complete"] and len(runs[2]) == 6 and runs[1] == runs[2]


def test_an_experiment_not_declared_safe_trains_one_configuration_at_a_time(tmp_path: Path, gpu_like,
                                                                            in_process_scheduler: str) -> None:
    out = tmp_path / "p.json"
    results = run_sweep(sweep_tasks.record, sweep_tasks.tasks(["a", "b", "c"], 2), out, sweep_tasks.header(["a", "b", "c"], 2),
                        sweep_tasks.IDENTITY, Engine(scheduler=in_process_scheduler, concurrent=3), progress=False,
                        run_many=sweep_tasks.record_many)
    assert results["complete"] and results["sittings"][0]["concurrent"] == 1


def test_the_command_line_refuses_concurrent_configurations_on_a_cpu(tmp_path: Path, capsys) -> None:
    from setfuncs.experiments.circle.__main__ import main

    with pytest.raises(SystemExit) as refused:
        main(["sweep", "--budget", "quick", "--runs", "1", "--out", str(tmp_path / "c.json"), "--concurrent", "2"])
    assert refused.value.code == 2
    assert "--concurrent 2 trains configurations at once on CUDA streams: pass --device cuda" in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()


def concurrent_check():
    spec = importlib.util.spec_from_file_location("concurrent_check", ROOT / "scripts" / "concurrent_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_check_before_a_window_passes_where_configurations_at_once_agree(capsys) -> None:
    assert concurrent_check().main(["--device", "cpu", "--configurations", "2", "--seeds", "2", "--steps", "6"]) == 0
    out = capsys.readouterr().out
    assert "2 circle configurations x 2 seeds x 6 steps at width 128 on cpu: one after another" in out
    assert out.splitlines()[-1] == "concurrent check: passed"


def test_the_check_names_every_difference() -> None:
    run = {"spec": "max/max", "seed": 0, "error": None, "mse": 0.5, "final_train_loss": 0.25,
           "training": {"graphed_steps": 17, "graph_fallback": None}}
    differences = concurrent_check().differences
    assert differences([run], [dict(run)], 1e-4, 17) == []
    found = differences([{**run, "mse": 0.5001, "training": {"graphed_steps": 0, "graph_fallback": "capture failed"}}],
                        [run], 1e-4, 17)
    assert found == ["max/max seed 0: mse 0.5001 at once, 0.5 one after another",
                     "max/max seed 0: 0 graphed steps at once, expected 17 (capture failed)"]
    assert differences([{**run, "error": "FloatingPointError: nan"}], [run], 1e-4, None) == [
        "max/max seed 0: error at once 'FloatingPointError: nan', one after another None"]
