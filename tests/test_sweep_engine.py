"""The sweep engine (Dask): end to end, resumable, locked, atomic, fault-tolerant, headless.

Probe runs (``tests/sweep_tasks.py``) exercise :func:`~setfuncs.experiments.engine.sweep.run_sweep` with
runs that succeed, raise, or kill their worker; the circle experiment's command line is driven in
a subprocess for what a user does: a quick sweep stopped midway by a signal, then the same command
again; a second sweep on a locked file (or on a link to it), a file of another budget; a probe
sweep whose cluster's phases are observable (``sweep_tasks.observed_sweep``) takes Ctrl-C and
SIGTERM while its cluster starts, midway and while it closes. What a local cluster's worker processes do
(start, take signals, die, share out the runs) runs on real ones; what the results file holds
(resumed, restarted, refused, failed runs) is proven on the module's in-process scheduler
(``in_process_scheduler`` in ``tests/conftest.py``), which starts no worker process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

import psutil
import pytest
import torch

import sweep_tasks
from setfuncs.experiments import circle
from setfuncs.experiments.engine import submit as submit_module
from setfuncs.experiments.engine import sweep as sweep_module
from setfuncs.experiments.engine import workers as workers_module
from setfuncs.experiments.engine import DeviceError, Engine, SweepInterrupted, run_sweep
from setfuncs.experiments.resultsfile import SweepFile, SweepFileError, SweepLocked, SweepWriteError, backup_path
from setfuncs.experiments.strictjson import differences
from setfuncs.experiments.tasks import Task
from sweep_tasks import IDENTITY, header, tasks


def probe_sweep(run_one, out: Path, specs: list[str], runs: int, *extra: object, engine: Engine, **options) -> dict:
    return run_sweep(run_one, tasks(specs, runs, *extra), out, header(specs, runs), IDENTITY, engine,
                     progress=False, **options)


@pytest.fixture
def here(in_process_scheduler: str) -> Engine:
    """An engine whose runs go to a worker thread of this process (no worker process starts)."""
    return Engine(scheduler=in_process_scheduler)


def live_children() -> list[psutil.Process]:
    """This process's descendants that still run (not zombies; not multiprocessing's resource tracker)."""
    alive = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(child.cmdline()):
                alive.append(child)
        except psutil.NoSuchProcess:
            continue
    return alive


@pytest.fixture(autouse=True)
def no_orphans():
    """Every test leaves no worker process behind."""
    yield
    deadline = time.monotonic() + 10
    while live_children() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert live_children() == []


def circle_arguments(out: Path, *extra: str) -> list[str]:
    """The arguments of a quick 4-run circle sweep into ``out`` on a two-worker local cluster."""
    return ["sweep", "--budget", "quick", "--runs", "2", "--configurations", "max/max", "lse/lse",
            "--jobs", "2", "--no-progress", "--out", str(out), *extra]


def circle_command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "setfuncs.experiments.circle", *circle_arguments(out, *extra)]


def in_a_terminal(command: list[str]) -> list[str]:
    """``command`` (``python -m MODULE ARGS``) run as a terminal's foreground job runs it: with Ctrl-C at
    its default. A process inherits an ignored SIGINT, and a test runner started in the background
    (``make test &``, ``nohup``) ignores it, so without this the sweep would rightly ignore the test's
    Ctrl-C and run to completion."""
    python, dash_m, module, *args = command
    assert dash_m == "-m", command
    start = ("import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
             f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    return [python, "-c", start, *args]


def runs_in(path: Path) -> list[dict]:
    return json.loads(path.read_text())["runs"] if path.exists() else []


# --- end to end -----------------------------------------------------------------------------------

def test_runs_start_seed_by_seed(tmp_path: Path, here: Engine) -> None:
    specs = ["a", "b", "c"]
    results = probe_sweep(sweep_tasks.record, tmp_path / "p.json", specs, 3, engine=here)
    assert [(r["spec"], r["seed"]) for r in results["runs"]] == [t.key for t in tasks(specs, 3)]


def test_every_run_records_where_it_trained_and_the_cpu_kernels_it_used(tmp_path: Path, here: Engine) -> None:
    """The same run rounds differently under torch's AVX2 and AVX-512 kernels (a recurrent mixture run's
    metric moved in its second digit), so each run names the kernel set it trained with."""
    results = probe_sweep(sweep_tasks.record, tmp_path / "p.json", ["a", "b"], 1, engine=here)
    for run in results["runs"]:
        assert set(run["worker"]) == {"host", "pid", "git_commit", "cpu_capability"}
        assert run["worker"]["cpu_capability"] == torch.backends.cpu.get_cpu_capability()


def _has_avx2() -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    return cpuinfo.exists() and " avx2" in cpuinfo.read_text()


def test_workers_get_the_avx2_kernels_on_x86_unless_the_environment_names_others(monkeypatch) -> None:
    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    monkeypatch.setattr(workers_module.platform, "machine", lambda: "x86_64")
    assert workers_module.worker_environment() == {"ATEN_CPU_CAPABILITY": "avx2"}
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx512")                  # the user's choice wins
    assert workers_module.worker_environment() == {"ATEN_CPU_CAPABILITY": "avx512"}
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "AVX2")          # as runs record it: torch reads lower case only
    assert workers_module.worker_environment() == {"ATEN_CPU_CAPABILITY": "avx2"}
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx3")
    with pytest.raises(ValueError, match="ATEN_CPU_CAPABILITY='avx3' is not a torch CPU kernel set.*default, avx2, avx512"):
        workers_module.worker_environment()
    monkeypatch.delenv("ATEN_CPU_CAPABILITY")
    monkeypatch.setattr(workers_module.platform, "machine", lambda: "aarch64")   # an x86 variable
    assert workers_module.worker_environment() == {}


@pytest.mark.skipif(not _has_avx2(), reason="needs an x86-64 CPU with AVX2: the kernels the engine asks for")
def test_a_local_clusters_workers_train_with_the_avx2_kernels(tmp_path: Path, monkeypatch) -> None:
    """A local cluster started where ATEN_CPU_CAPABILITY is unset (this suite sets it, so it is removed
    here) gives its worker the AVX2 kernels: the engine asks for them, not the environment."""
    monkeypatch.delenv("ATEN_CPU_CAPABILITY")
    results = probe_sweep(sweep_tasks.record, tmp_path / "p.json", ["a"], 1, engine=Engine(jobs=1))
    assert results["runs"][0]["worker"]["cpu_capability"] == "AVX2"


def test_workers_keep_glibcs_heap_unless_the_environment_sets_its_variables(monkeypatch) -> None:
    for name in workers_module.WORKER_MALLOC:
        monkeypatch.delenv(name, raising=False)
    assert workers_module.worker_allocator() == workers_module.WORKER_MALLOC
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")                # the user's choice wins
    assert workers_module.worker_allocator()["MALLOC_TRIM_THRESHOLD_"] == "65536"
    assert workers_module.worker_allocator()["MALLOC_MMAP_THRESHOLD_"] == str(32 * 2**20)


def test_a_local_clusters_workers_reuse_their_memory_between_steps(tmp_path: Path, monkeypatch) -> None:
    """Dask's nanny would start the worker with MALLOC_TRIM_THRESHOLD_=65536, under which every 8 MB
    activation is mapped anew and touched page by page (about 2,000 faults of 4 KiB); the engine's
    workers get WORKER_MALLOC instead and reuse the heap (about none per tensor)."""
    for name in workers_module.WORKER_MALLOC:
        monkeypatch.delenv(name, raising=False)
    results = probe_sweep(sweep_tasks.allocator, tmp_path / "p.json", ["a"], 1, engine=Engine(jobs=1))
    run = results["runs"][0]
    assert run["malloc"] == workers_module.WORKER_MALLOC
    assert run["faults_per_tensor"] < 100, run["faults_per_tensor"]


def test_a_run_trains_bit_for_bit_in_a_local_clusters_worker_as_in_this_process(tmp_path: Path) -> None:
    """The worker's allocator (WORKER_MALLOC) and this process's (glibc's defaults) place tensors
    differently, which must not change a number: twelve point-cloud steps give the same losses."""
    results = probe_sweep(sweep_tasks.pointcloud_losses, tmp_path / "p.json", ["max/r-lse"], 1, engine=Engine(jobs=1))
    assert results["runs"][0]["losses"] == sweep_tasks.pointcloud_losses("max/r-lse", 0)["losses"]


def test_this_suite_runs_the_kernels_the_engines_workers_use() -> None:
    if not _has_avx2():
        pytest.skip("needs an x86-64 CPU with AVX2: the kernels the suite and the engine ask for")
    assert torch.backends.cpu.get_cpu_capability() == workers_module.CPU_CAPABILITY.upper()


def test_runs_start_seed_by_seed_when_one_configuration_is_slow(tmp_path: Path) -> None:
    """A slow configuration does not let the fast ones of later seeds run ahead on two workers (here
    threads of this process, scheduled as worker processes are): the k-th run to finish is among the
    first k + window tasks. (Submitted whole, Dask gave every slow run to one worker and the other
    ran all fast runs of all seeds first: displacement 18 of 36 here.)"""
    from distributed import LocalCluster

    specs, runs = ["slow", "a", "b", "c", "d", "e"], 6
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as cluster:
        results = probe_sweep(sweep_tasks.slow_for, tmp_path / "p.json", specs, runs, "slow", 0.3,
                              engine=Engine(scheduler=cluster.scheduler_address))
    order = [t.key for t in tasks(specs, runs)]
    positions = [order.index((r["spec"], r["seed"])) for r in results["runs"]]
    window = submit_module.IN_FLIGHT_PER_THREAD * 2
    assert sorted(positions) == list(range(len(order)))
    assert max(position - k for k, position in enumerate(positions)) < window, positions


def test_a_running_scheduler_can_take_the_runs(tmp_path: Path, in_process_scheduler: str) -> None:
    engine = Engine(scheduler=in_process_scheduler)
    results = run_sweep(sweep_tasks.record, tasks(["a", "b"], 2), tmp_path / "p.json", header(["a", "b"], 2),
                        IDENTITY, engine, progress=False)
    assert results["complete"] and len(results["runs"]) == 4
    assert results["sittings"][0]["engine"].endswith(f"scheduler {in_process_scheduler}")


# --- resumable, never destructive --------------------------------------------------------------------

def interrupt_midway(out: Path, signum: int) -> tuple[list[dict], str]:
    """Start a 4-run circle sweep into ``out``, send ``signum`` to its whole process group once 2 runs
    (the first of each worker) are in the file, check that it stops within seconds, says what it
    kept and leaves no worker behind; return the runs it kept and its stderr."""
    sweep = subprocess.Popen(in_a_terminal(circle_command(out)), cwd=out.parent, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 240
    while len(runs_in(out)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert 2 <= len(runs_in(out)) < 4, "the sweep should be interrupted midway"
    pressed = time.monotonic()
    os.killpg(sweep.pid, signum)
    _, stderr = sweep.communicate(timeout=60)
    assert time.monotonic() - pressed < 15 and sweep.returncode == 130, stderr
    before = runs_in(out)
    assert f"kept {len(before)} of 4 runs in {out}; run the same command to resume" in stderr
    assert "Traceback" not in stderr and "leaked" not in stderr, stderr      # no semaphore left by a worker
    assert all("failure" not in run for run in before), "a run stopped by the signal is not a failed run"
    assert_no_process_left(sweep.pid)
    return before, stderr


def assert_no_process_left(group: int) -> None:
    """No process of the process group ``group`` (a sweep's, its workers') outlives it."""
    found = [p for p in psutil.process_iter(["status"]) if _in_group(p, group)]
    _, alive = psutil.wait_procs(found, timeout=10)          # a worker may still be on its way out
    assert [p for p in alive if _in_group(p, group)] == [], "no worker outlives an interrupted sweep"


def test_a_quick_sweep_stopped_by_sigterm_resumes_with_its_runs_unchanged(tmp_path: Path) -> None:
    """A quick circle sweep on a two-worker local cluster, stopped midway by SIGTERM (what a batch
    system at its time limit sends to every process of the job, workers included; a terminal's
    Ctrl-C reaches the whole group too and stops a sweep the same way: the observed probe sweeps
    below take Ctrl-C at start-up, midway and while closing, SIGTERM at start-up and while
    closing), then run again by the same command: the stop keeps every finished run and records
    none lost to the signal as failed; the second sitting keeps them byte for byte and completes
    the file, every run trained on a worker of the cluster with the numbers it gets in this
    process."""
    out = tmp_path / "circle.json"
    before, _ = interrupt_midway(out, signal.SIGTERM)
    stopped = json.loads(out.read_text())
    assert stopped["sittings"][0]["ended"] == "interrupted" and stopped["complete"] is False
    assert stopped["sittings"][0]["failed_runs"] == 0 and stopped["runs"] == before

    done = subprocess.run(circle_command(out), capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "4 runs in" in done.stdout
    assert f"this sitting: {4 - len(before)} new, {len(before)} kept, 0 failed" in done.stdout
    results = json.loads(out.read_text())
    assert results["complete"] is True and results["identity"]["experiment"] == "minimal_enclosing_circle"
    assert {(r["spec"], r["seed"]) for r in results["runs"]} == {
        (spec, seed) for spec in ("max/max", "lse/lse") for seed in (0, 1)}
    assert [json.dumps(r, indent=1) for r in results["runs"][:len(before)]] == [json.dumps(r, indent=1)
                                                                                for r in before]
    first, second = results["sittings"]
    assert first["ended"] == "interrupted" and second["ended"] == "complete"
    assert second["kept_runs"] == len(before) and second["runs_added"] == 4 - len(before)
    assert results["wall_seconds"] == pytest.approx(first["wall_seconds"] + second["wall_seconds"])
    for sitting in (first, second):
        assert sitting["engine"].startswith("dask ") and sitting["engine"].endswith("LocalCluster(2)")
        assert sitting["device"] == "cpu"
    assert all(r["provenance"]["engine"] == second["engine"] and r["worker"]["pid"] != os.getpid()
               for r in results["runs"])
    assert all(r["error"] is None and r["mse"] > 0 for r in results["runs"])
    run = next(r for r in results["runs"] if (r["spec"], r["seed"]) == ("max/max", 0))
    alone = circle.run_one("plain/plain", "max", "max", 0, circle.QUICK)
    assert (run["mse"], run["final_train_loss"]) == (alone["mse"], alone["final_train_loss"])


def _in_group(process: psutil.Process, group: int) -> bool:
    try:
        return os.getpgid(process.pid) == group and process.status() != psutil.STATUS_ZOMBIE
    except (ProcessLookupError, psutil.NoSuchProcess):
        return False


def test_a_resumed_sweep_adds_seeds_and_keeps_what_it_has(tmp_path: Path, here: Engine) -> None:
    out = tmp_path / "p.json"
    first = probe_sweep(sweep_tasks.record, out, ["a", "b"], 1, engine=here)
    second = probe_sweep(sweep_tasks.record, out, ["a", "b", "c"], 2, engine=here)
    assert second["runs"][:2] == first["runs"] and len(second["runs"]) == 6
    assert second["configurations"] == ["a", "b", "c"] and second["seeds"] == [0, 1]
    assert second["sittings"][1]["kept_runs"] == 2 and second["sittings"][1]["runs_added"] == 4
    before = out.read_bytes()
    third = probe_sweep(sweep_tasks.record, out, ["a"], 1, engine=here)    # nothing to run: nothing written
    assert third.sitting is None and out.read_bytes() == before
    assert third["runs"] == second["runs"] and third["sittings"] == second["sittings"] and third["complete"] is True


def test_a_file_of_another_experiment_or_budget_is_refused_naming_it(tmp_path: Path, here: Engine) -> None:
    out = tmp_path / "p.json"
    probe_sweep(sweep_tasks.record, out, ["a"], 1, engine=here)
    written = out.read_bytes()
    other_budget = {**IDENTITY, "budget_parameters": {"steps": 2}}
    with pytest.raises(SweepFileError) as refused:
        run_sweep(sweep_tasks.record, tasks(["a"], 1), out, header(["a"], 1), other_budget, Engine(jobs=1),
                  progress=False)
    message = str(refused.value)
    assert str(out) in message and "budget_parameters.steps: 1 in the file, 2 in this sweep" in message
    assert "--restart" in message and out.read_bytes() == written
    with pytest.raises(SweepFileError, match="experiment: 'probe' in the file, 'other' in this sweep"):
        run_sweep(sweep_tasks.record, tasks(["a"], 1), out, header(["a"], 1), {**IDENTITY, "experiment": "other"},
                  Engine(jobs=1), progress=False)
    for text in ('{"runs": [', "\xff\xfe", '{"experiment": "probe", "runs": []}', "[1, 2]"):
        broken = tmp_path / "broken.json"
        broken.write_bytes(text.encode("latin-1"))
        with pytest.raises(SweepFileError, match=f"{broken}.*left as it is.*--restart"):
            probe_sweep(sweep_tasks.record, broken, ["a"], 1, engine=here)
        assert broken.read_bytes() == text.encode("latin-1")


def test_the_command_line_refuses_a_file_of_another_budget(tmp_path: Path, here: Engine, capsys) -> None:
    from setfuncs.experiments.circle.__main__ import main

    out = tmp_path / "circle.json"
    probe_sweep(sweep_tasks.record, out, ["a"], 1, engine=here)
    with pytest.raises(SystemExit) as refused:
        main(circle_arguments(out))
    stderr = capsys.readouterr().err
    assert refused.value.code == 2 and f"error: {out} holds runs of another sweep" in stderr
    assert "experiment: 'probe' in the file, 'minimal_enclosing_circle' in this sweep" in stderr


def test_restart_moves_the_old_file_aside_and_never_deletes_it(tmp_path: Path, here: Engine) -> None:
    out = tmp_path / "p.json"
    probe_sweep(sweep_tasks.record, out, ["a"], 1, engine=here)
    old = out.read_bytes()
    results = probe_sweep(sweep_tasks.record, out, ["b"], 1, engine=here, restart=True)
    (backup,) = tmp_path.glob("p.json.*.bak")
    assert backup.read_bytes() == old and results["sittings"][0]["restarted_from"] == str(backup)
    assert [r["spec"] for r in results["runs"]] == ["b"] and len(results["sittings"]) == 1
    assert backup_path(out) != backup                           # a second restart in the same second
    assert backup_path(out).name.startswith("p.json.")


# --- one writer, atomic, locked ------------------------------------------------------------------------

def test_a_second_sweep_on_a_locked_file_is_refused_with_the_writers_pid(tmp_path: Path) -> None:
    out = tmp_path / "circle.json"
    with SweepFile(out, IDENTITY):
        done = subprocess.run(circle_command(out), capture_output=True, text=True, cwd=tmp_path, timeout=120)
        with pytest.raises(SweepLocked, match=f"pid {os.getpid()} on "):
            with SweepFile(out, IDENTITY):
                pass
    assert done.returncode == 2
    assert f"{out} is being written by another sweep (pid {os.getpid()} on " in done.stderr
    assert not out.exists()
    with SweepFile(out, IDENTITY) as file:                    # released: the next sweep may write
        assert file.previous is None


def test_a_link_is_the_file_it_points_to(tmp_path: Path) -> None:
    """``--out b.json``, a symbolic link to the ``a.json`` a sweep is writing, is refused naming that
    sweep (the lock is the resolved file's); a sweep through the link resumes and replaces the
    target, and restarts it, and the link stays a link."""
    real, link = tmp_path / "a.json", tmp_path / "b.json"
    link.symlink_to(real.name)
    target = Path(os.path.realpath(real))
    first, second, third = (sweep_tasks.record(spec, seed) for spec, seed in (("a", 0), ("a", 1), ("b", 0)))
    with SweepFile(real, IDENTITY) as file:
        file.write({"identity": IDENTITY, "runs": [first]})
        with pytest.raises(SweepLocked, match=re.escape(f"{link} (a link to {target}) is being written by another "
                                                        f"sweep (pid {os.getpid()} on ")):
            with SweepFile(link, IDENTITY):
                pass
        done = subprocess.run(circle_command(link), capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2 and f"error: {link} (a link to {target}) is being written by another sweep (pid " \
        f"{os.getpid()} on " in done.stderr, done.stderr
    with SweepFile(link, IDENTITY) as file:
        assert file.previous["runs"] == [first]
        file.write({"identity": IDENTITY, "runs": [first, second]})
        with pytest.raises(SweepLocked, match=f"{real} is being written by another sweep"):
            with SweepFile(real, IDENTITY):
                pass
    assert link.is_symlink() and os.readlink(link) == "a.json"
    assert json.loads(real.read_text())["runs"] == [first, second]
    with SweepFile(link, IDENTITY, restart=True) as file:           # the target is moved aside, not the link
        assert file.previous is None and file.backup.name.startswith("a.json.")
        file.write({"identity": IDENTITY, "runs": [third]})
    assert link.is_symlink() and json.loads(real.read_text())["runs"] == [third]
    assert json.loads(file.backup.read_text())["runs"] == [first, second]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a.json", "a.json.lock", file.backup.name, "b.json"])


def test_a_killed_writers_temporary_files_are_removed_and_nothing_else(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A write killed midway leaves ``.<file>.XXXXXXXX.tmp``; the next writer of the file removes it once it
    holds the lock, and nothing else: not another file's, not another name, not a folder or a link, not
    while another writer holds the lock."""
    out = tmp_path / "p.json"
    stale = [Path(tempfile.mkstemp(dir=tmp_path, prefix=".p.json.", suffix=".tmp")[1]) for _ in range(2)]
    other = tmp_path / "other"
    other.mkdir()
    kept = [tmp_path / name for name in (".p.json.abc.tmp", "p.json.abcdefgh.tmp", ".q.json.abcdefgh.tmp",
                                          ".p.json.abcdefgh.tmp.bak", ".p.json.ABCDEFGH.tmp", ".xp.json.abcdefgh.tmp")]
    for path in kept:
        path.write_text("not a sweep's temporary file")
    (tmp_path / ".p.json.folder00.tmp").mkdir()
    (tmp_path / ".p.json.linklink.tmp").symlink_to(other)
    kept += [tmp_path / ".p.json.folder00.tmp", tmp_path / ".p.json.linklink.tmp", other]
    with SweepFile(out, IDENTITY) as file:
        assert not any(path.exists() for path in stale) and all(path.exists() for path in kept)
        live = Path(tempfile.mkstemp(dir=tmp_path, prefix=".p.json.", suffix=".tmp")[1])
        with pytest.raises(SweepLocked):
            with SweepFile(out, IDENTITY):                            # refused: the writer's files are its own
                pass
        assert live.exists()
        replaced = []
        real_replace = os.replace
        monkeypatch.setattr(os, "replace", lambda source, target: (replaced.append(Path(source).name),
                                                                   real_replace(source, target)))
        file.write({"identity": IDENTITY, "runs": []})
        assert file.temporary_name().fullmatch(replaced[0]), replaced      # the pattern is the one write uses
    live.unlink()
    if os.geteuid() == 0:                                              # another user's file of that name is kept
        foreign = Path(tempfile.mkstemp(dir=tmp_path, prefix=".p.json.", suffix=".tmp")[1])
        os.chown(foreign, 12345, 12345)
        with SweepFile(out, IDENTITY):
            assert foreign.exists()


def test_a_write_is_atomic_and_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "p.json"
    with SweepFile(out, IDENTITY) as file:
        file.write({"identity": IDENTITY, "runs": [1]})
        out.chmod(0o640)
        file.write({"identity": IDENTITY, "runs": [1, 2]})
        assert oct(out.stat().st_mode & 0o777) == "0o640"
        monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device")))
        with pytest.raises(SweepWriteError, match=f"cannot write {out}: No space left on device"):
            file.write({"identity": IDENTITY, "runs": [1, 2, 3]})
    assert json.loads(out.read_text())["runs"] == [1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json", "p.json.lock"]


def test_an_unwritable_out_fails_before_any_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_cluster(engine, signals):
        raise AssertionError("no run may start when the results file cannot be written")

    monkeypatch.setattr(sweep_module, "open_cluster", no_cluster)
    with pytest.raises(SweepWriteError, match="proc"):
        probe_sweep(sweep_tasks.record, Path("/proc/setfuncs-sweep/p.json"), ["a"], 1, engine=Engine(jobs=2))
    full = tmp_path / "full.json"
    monkeypatch.setattr(SweepFile, "write", _failing_write(after=0))
    with pytest.raises(SweepWriteError, match="No space left"):
        probe_sweep(sweep_tasks.record, full, ["a"], 1, engine=Engine(jobs=2))


def _failing_write(after: int):
    """A SweepFile.write that works ``after`` times, then fails as a full disk does."""
    calls = {"n": 0}
    real = SweepFile.write

    def write(self, results: dict) -> None:
        calls["n"] += 1
        if calls["n"] > after:
            raise SweepWriteError(28, f"cannot write {self.path}: No space left on device")
        real(self, results)

    return write


def test_a_disk_that_fills_mid_sweep_keeps_every_run_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              here: Engine) -> None:
    out = tmp_path / "p.json"
    monkeypatch.setattr(SweepFile, "write", _failing_write(after=4))     # the header twice, then two runs
    with pytest.raises(SweepWriteError, match="No space left"):
        probe_sweep(sweep_tasks.slow, out, ["a", "b", "c"], 2, 0.3, engine=here)
    assert len(runs_in(out)) == 2


# --- signals at any moment ----------------------------------------------------------------------------

def observed_sweep_command(out: Path, phases: Path, start_delay: float) -> list[str]:
    """``sweep_tasks.observed_sweep`` as a terminal's foreground job runs it (Ctrl-C at its default,
    see :func:`in_a_terminal`)."""
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            f"sys.path.insert(0, {str(Path(__file__).parent)!r}); import sweep_tasks; "
            f"sweep_tasks.observed_sweep({str(out)!r}, {str(phases)!r}, {start_delay!r})")
    return [sys.executable, "-c", code]


def wait_for_phase(phases: Path, phase: str, sweep: subprocess.Popen) -> None:
    """Wait until the observed sweep's cluster is in ``phase`` (``starting``, ``closing``)."""
    deadline = time.monotonic() + 240
    while not phases.exists() or phases.read_text() != phase:
        assert sweep.poll() is None, f"the sweep ended before its cluster was {phase}: {sweep.communicate()}"
        assert time.monotonic() < deadline, f"the sweep's cluster was never {phase}"
        time.sleep(0.02)


@pytest.mark.parametrize("signum, first, second", [
    (signal.SIGINT, "starting", "1 s later"), (signal.SIGTERM, "starting", "closing"),
    (signal.SIGINT, "running", "closing")], ids=["ctrl-c twice at start-up", "sigterm at start-up, again at closing",
                                                "ctrl-c midway, again at closing"])
def test_a_signal_at_start_up_or_a_second_one_stops_the_sweep_cleanly(signum: int, first: str, second: str,
                                                                       tmp_path: Path) -> None:
    """Ctrl-C or SIGTERM to the whole process group while the cluster starts (workers half started)
    stops the sweep as one midway does: the "kept" line and nothing else (no traceback from the
    client or a worker), exit 130, the sitting closed as interrupted with its wall time, no process
    left. A second signal, 1 s after one at start-up (the workers starting) or while the cluster
    closes after one at start-up or midway, changes nothing, and the stop it lands in ends within
    seconds (it was a traceback from ``cluster.close``)."""
    out, phases = tmp_path / "p.json", tmp_path / "phases"
    sweep = subprocess.Popen(observed_sweep_command(out, phases, 0.2), cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for_phase(phases, "starting", sweep)
    if first == "running":
        while len(runs_in(out)) < 2:
            assert sweep.poll() is None, sweep.communicate()
            time.sleep(0.05)
    os.killpg(sweep.pid, signum)
    if second == "1 s later":
        time.sleep(1.0)
    else:
        wait_for_phase(phases, "closing", sweep)
    again = time.monotonic()
    os.killpg(sweep.pid, signum)
    _, stderr = sweep.communicate(timeout=180)
    stopped = time.monotonic() - again
    assert sweep.returncode == 130, stderr
    results = json.loads(out.read_text())
    kept = len(results["runs"])
    assert stderr.strip() == f"interrupted: kept {kept} of 6 runs in {out}; run the same command to resume", stderr
    assert (kept == 0) == (first == "starting") and kept < 6
    (sitting,) = results["sittings"]
    assert sitting["ended"] == "interrupted" and sitting["finished"] is not None and sitting["wall_seconds"] > 0
    assert results["wall_seconds"] == sitting["wall_seconds"] and sitting["runs_added"] == kept
    if second == "closing":
        assert stopped < 15, f"the stop took {stopped:.1f} s after the second signal"
    assert_no_process_left(sweep.pid)


# --- faults ---------------------------------------------------------------------------------------------

def test_a_run_that_raises_is_recorded_and_the_others_complete(tmp_path: Path, here: Engine) -> None:
    out = tmp_path / "p.json"
    results = probe_sweep(sweep_tasks.raises_for, out, ["a", "b", "c"], 2, "b", engine=here)
    failed = [r for r in results["runs"] if "failure" in r]
    assert sorted((r["spec"], r["seed"]) for r in failed) == [("b", 0), ("b", 1)]
    assert all(r["error"] == "RuntimeError: a run of b broke on purpose" and r["failure"]["kind"] == "raised"
               and "raises_for" in r["failure"]["traceback"] for r in failed)
    assert sum("failure" not in r for r in results["runs"]) == 4
    assert results["complete"] is False and results["sittings"][0]["ended"] == "runs failed"
    retried = probe_sweep(sweep_tasks.record, out, ["a", "b", "c"], 2, engine=here)   # the next sitting retries
    assert retried["complete"] is True and not any("failure" in r for r in retried["runs"])
    assert retried["sittings"][1]["runs_added"] == 2


def test_the_command_line_exits_non_zero_when_a_run_failed(tmp_path: Path, capsys, here: Engine) -> None:
    from setfuncs.experiments.cli import run_sweep_command

    out = tmp_path / "p.json"
    with pytest.raises(SystemExit) as stopped:
        run_sweep_command(lambda: probe_sweep(sweep_tasks.raises_for, out, ["a", "b"], 1, "b", engine=here), out)
    assert stopped.value.code == 1
    assert f"1 run failed; the errors and tracebacks are in {out}. Run the same command to retry it." in capsys.readouterr().err


def test_a_killed_worker_is_replaced_and_its_run_retried(tmp_path: Path) -> None:
    marker = tmp_path / "killed"
    results = probe_sweep(sweep_tasks.dies_once, tmp_path / "p.json", ["a", "die", "b"], 1, str(marker),
                          engine=Engine(jobs=1))
    assert results["complete"] is True and not any("failure" in r for r in results["runs"])
    run = next(r for r in results["runs"] if r["spec"] == "die")
    assert marker.exists() and run["worker"]["pid"] != int(marker.read_text())


def test_a_run_whose_workers_keep_dying_is_recorded_after_two_retries(tmp_path: Path) -> None:
    results = probe_sweep(sweep_tasks.always_dies, tmp_path / "p.json", ["a", "die"], 1, engine=Engine(jobs=2))
    (failed,) = [r for r in results["runs"] if "failure" in r]
    assert failed["spec"] == "die" and failed["failure"]["kind"] == "worker died"
    assert "KilledWorker" in failed["error"] and "3 different workers" in failed["error"]
    assert results["complete"] is False


def test_a_result_lost_with_its_worker_is_waited_for_not_recorded_as_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job that finished on a worker killed before its result was fetched (another run's worker
    death took it): Dask computes it again and the future's status is no longer ``finished``. The
    submitter waits for the result and records the run, not a failure with no error (which a sweep
    whose other run kept killing workers once recorded)."""
    import distributed

    class Lost:
        status = "lost"

        def result(self) -> list[dict]:
            return [sweep_tasks.record("a", 0)]

    class Client:
        def nthreads(self) -> dict[str, int]:
            return {"worker": 1}

        def submit(self, wrapper, function, args, pure: bool, key: str) -> Lost:
            return Lost()

    class Completed(list):
        def add(self, future: Lost) -> None:
            self.append(future)

    monkeypatch.setattr(distributed, "as_completed", Completed)
    job = submit_module.Job(workers_module.run_task, sweep_tasks.record, ("a", 0), "a0",
                            [Task("a", 0, ("a", 0))])
    assert list(submit_module.Submitter(Client(), deque([job]))) == [[sweep_tasks.record("a", 0)]]


def test_ctrl_c_in_process_raises_sweep_interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    here: Engine) -> None:
    out = tmp_path / "p.json"
    real = SweepFile.write
    calls = {"n": 0}

    def write_then_interrupt(self, results: dict) -> None:
        real(self, results)
        calls["n"] += 1
        if calls["n"] == 3:                                  # after the first run is written
            raise KeyboardInterrupt

    monkeypatch.setattr(SweepFile, "write", write_then_interrupt)
    with pytest.raises(SweepInterrupted) as stop:
        probe_sweep(sweep_tasks.slow, out, ["a", "b", "c"], 2, 0.5, engine=here)
    assert (stop.value.kept, stop.value.total) == (1, 6)
    assert str(stop.value) == f"kept 1 of 6 runs in {out}; run the same command to resume"
    assert json.loads(out.read_text())["sittings"][0]["ended"] == "interrupted"


# --- options -----------------------------------------------------------------------------------------------

def test_the_device_option_is_checked_and_recorded(tmp_path: Path, in_process_scheduler: str) -> None:
    for bad in ("gpu", "cuda:x", "CPU"):
        with pytest.raises(DeviceError, match="cpu, cuda, cuda:N or auto"):
            Engine(device=bad)
    if not torch.cuda.is_available():
        for gpu in ("cuda", "cuda:1"):
            with pytest.raises(DeviceError, match="sees no CUDA GPU"):
                Engine(device=gpu)
        assert Engine(device="cuda", scheduler="tcp://gpu-node:8786").trains_on == "cuda"  # the workers have one
    results = run_sweep(sweep_tasks.record, tasks(["a"], 1), tmp_path / "p.json", header(["a"], 1), IDENTITY,
                        Engine(scheduler=in_process_scheduler, device="auto"), progress=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert results["sittings"][0]["device_requested"] == "auto"
    assert results["runs"][0]["provenance"]["device"] == expected
    with pytest.raises(ValueError, match="jobs"):
        Engine(jobs=0)


def test_the_command_line_options(tmp_path: Path, capsys) -> None:
    from setfuncs.experiments.circle.__main__ import main

    for argv, message in ((["--jobs", "2", "--scheduler", "tcp://x:1"], "not allowed with argument"),
                          (["--device", "gpu"], "--device: device must be cpu, cuda, cuda:N or auto")):
        with pytest.raises(SystemExit) as refused:
            main(["sweep", "--budget", "quick", "--runs", "1", "--out", str(tmp_path / "x.json"), *argv])
        assert refused.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_differences_name_every_field_that_differs() -> None:
    assert differences({"a": 1, "b": {"c": 2}}, {"a": 1, "b": {"c": 3}, "d": 4}) == [
        "b.c: 3 in the file, 2 in this sweep", "d: 4 in the file, missing in this sweep"]
    assert differences({"a": [1]}, {"a": [1]}) == []


# --- headless -------------------------------------------------------------------------------------------

def test_a_circle_sweeps_workers_import_no_scipy() -> None:
    """A worker of a circle sweep imports the experiment and never tests: scipy (about a second of
    every worker's start) is imported where a test first needs it (``experiments.paired``)."""
    code = "import sys, setfuncs.experiments.circle\nprint(sorted({m.split('.')[0] for m in sys.modules} & {'scipy'}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[]", (done.stdout, done.stderr)


def test_setfuncs_and_every_sweep_path_import_without_the_notebook_stack(tmp_path: Path) -> None:
    code = """
import sys
sys.modules["ipywidgets"] = None          # makes `import ipywidgets` fail, as on a node without it
sys.modules["matplotlib"] = None
import setfuncs
import setfuncs.experiments.engine, setfuncs.experiments.cli
from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.circle import Budget, run_one
tiny = Budget("tiny", steps=3, batch=4, lr=1e-2, clip=1.0, hidden=4, equivariant_layers=1, recurrent_steps=1,
              test_size=8, test_population_sizes=(20,))
assert run_one("plain/plain", "max", "max", 0, tiny)["error"] is None
print("headless ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and "headless ok" in done.stdout, done.stderr
    blocked = subprocess.run([sys.executable, "-c", 'import sys; sys.modules["matplotlib"] = None\n'
                              "import setfuncs as sf\nsf.explorables"], capture_output=True, text=True, timeout=120)
    assert blocked.returncode != 0 and "matplotlib" in blocked.stderr       # imported where it is used
