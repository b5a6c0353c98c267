"""Nothing the user made is emptied, renamed or replaced by a sweep, and a results file keeps its history:
the lock file is the sweep's own, ``--out`` is a regular file of one name, a resumed file keeps
its first sitting's header, a sitting with nothing to run writes nothing, a signal ends a stalled sweep,
a first run always starts, and the command line's unclear cases answer in one line with the documented
exit status."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

import setfuncs.experiments.engine.sweep as sweep_module
from setfuncs.experiments.circle.__main__ import main as circle_main
from setfuncs.experiments.cli import run_sweep_command
from setfuncs.experiments.engine import ClusterError, DeviceError, Engine, run_sweep
from setfuncs.experiments.results import RESULTS_DIR, provenance_rows
from setfuncs.experiments.resultsfile import LOCK_MARK, SweepFile, SweepFileError

sys.path.insert(0, str(Path(__file__).parent))
import sweep_tasks  # noqa: E402
from sweep_tasks import IDENTITY, header, tasks  # noqa: E402
from test_command_line_arguments import usage_error  # noqa: E402


@pytest.fixture
def here(in_process_scheduler: str) -> Engine:
    return Engine(scheduler=in_process_scheduler)


def probe(out: Path, specs: list[str], runs: int, engine: Engine, **options) -> dict:
    return run_sweep(sweep_tasks.record, tasks(specs, runs), out, header(specs, runs), IDENTITY, engine,
                     progress=False, **options)


def circle_sweep(out: Path, *extra: str) -> list[str]:
    return ["sweep", "--budget", "quick", "--runs", "1", "--jobs", "1", "--no-progress", "--out", str(out), *extra]


# --- the lock file is the sweep's own --------------------------------------------------------------------

def test_an_existing_lock_named_file_that_is_not_a_sweeps_is_left_as_it_is(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``--out d/Pipfile`` beside a 2,000-line ``d/Pipfile.lock``: refused in one line, exit 2, and the
    Pipfile.lock keeps every byte (it was emptied)."""
    pipfile, lock = tmp_path / "Pipfile", tmp_path / "Pipfile.lock"
    pipfile.write_text("[packages]\n")
    lock.write_text("".join(f'"package-{i}": {{"version": "==1.{i}"}},\n' for i in range(2000)))
    before = lock.read_bytes()
    with pytest.raises(SystemExit) as stopped:
        circle_main(circle_sweep(pipfile, "--configurations", "max/max"))
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"{lock}, the lock file of --out {pipfile}, exists and is not a sweep's lock" in line and "left as it is" in line
    assert lock.read_bytes() == before and pipfile.read_text() == "[packages]\n"


def test_the_lock_file_is_created_marked_and_an_earlier_versions_empty_one_is_taken(tmp_path: Path, here: Engine) -> None:
    out = tmp_path / "p.json"
    probe(out, ["a"], 1, here)
    lock = tmp_path / "p.json.lock"
    assert lock.read_text().startswith(LOCK_MARK) and lock.read_text().endswith(": free\n")
    lock.write_text("")                               # what earlier versions left on release
    probe(out, ["a", "b"], 1, here)
    assert lock.read_text().startswith(LOCK_MARK)
    lone = tmp_path / "q.json.lock"                   # empty, with no results file beside it: not taken
    lone.write_text("")
    with pytest.raises(SweepFileError, match="empty, with no results file beside it"):
        probe(tmp_path / "q.json", ["a"], 1, here)


def test_a_symbolic_link_as_the_lock_is_refused_and_not_followed(tmp_path: Path, here: Engine) -> None:
    victim = tmp_path / "notes.txt"
    victim.write_text("mine\n")
    (tmp_path / "p.json.lock").symlink_to(victim)
    with pytest.raises(SweepFileError, match="is a symbolic link, and a lock is never followed"):
        probe(tmp_path / "p.json", ["a"], 1, here)
    assert victim.read_text() == "mine\n"


# --- --out is a regular file of one name ---------------------------------------------------------------

@pytest.mark.parametrize("restart", [False, True], ids=["resume", "restart"])
def test_a_fifo_as_out_is_refused_at_once_and_never_moved(tmp_path: Path, restart: bool) -> None:
    """Reading a FIFO hung the sweep; ``--restart`` renamed it and wrote a regular file in its place."""
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    with pytest.raises(SweepFileError, match="is a FIFO, not a regular file; it was left as it is"):
        SweepFile(fifo, IDENTITY, restart=restart)
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]


def test_a_socket_as_out_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        with pytest.raises(SweepFileError, match="is a socket, not a regular file"):
            SweepFile(path, IDENTITY, restart=True)
    finally:
        server.close()
    assert path.is_socket()


def test_a_hard_linked_out_is_refused_so_one_lock_guards_one_file(tmp_path: Path, here: Engine) -> None:
    """Two names of one file had two locks: two sweeps wrote them and the names parted."""
    out = tmp_path / "p.json"
    probe(out, ["a"], 1, here)
    os.link(out, tmp_path / "q.json")
    before = out.read_bytes()
    for name in ("p.json", "q.json"):
        with pytest.raises(SweepFileError, match="has 2 hard links"):
            probe(tmp_path / name, ["a", "b"], 1, here)
    assert out.read_bytes() == before == (tmp_path / "q.json").read_bytes()


# --- a results file keeps its history ------------------------------------------------------------------

def test_a_resumed_file_keeps_its_first_sittings_header_and_each_sitting_its_own(tmp_path: Path, here: Engine) -> None:
    out = tmp_path / "p.json"
    first = {**header(["a"], 1), "cwd": "/first", "git_commit": "1111111", "versions": {"torch": "1.0"},
             "hardware": {"cpu_model": "first"}}
    run_sweep(sweep_tasks.record, tasks(["a"], 1), out, first, IDENTITY, here, progress=False)
    written = json.loads(out.read_text())
    written["note"] = "a key this code does not know"
    out.write_text(json.dumps(written))
    second = {**header(["a", "b"], 1), "cwd": "/second", "git_commit": "2222222", "versions": {"torch": "2.0"},
              "hardware": {"cpu_model": "second"}}
    results = run_sweep(sweep_tasks.record, tasks(["a", "b"], 1), out, second, IDENTITY, here, progress=False)
    assert (results["cwd"], results["git_commit"], results["versions"], results["hardware"]) == (
        "/first", "1111111", {"torch": "1.0"}, {"cpu_model": "first"})
    assert results["note"] == "a key this code does not know" and results["configurations"] == ["a", "b"]
    one, two = results["sittings"]
    assert (one["git_commit"], two["git_commit"]) == ("1111111", "2222222")
    assert (two["cwd"], two["versions"], two["hardware"]) == ("/second", {"torch": "2.0"}, {"cpu_model": "second"})
    assert json.loads(out.read_text()) == results


def test_the_readmes_command_on_a_complete_file_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On a copy of the committed circle file, the README's command (nothing left to run) changed its
    header's git_commit to the commit of the day: the commit chapters 8 and 9 print as the sweep's."""
    out = tmp_path / "circle-medium.json"
    shutil.copyfile(RESULTS_DIR / "circle-medium.json", out)
    before = out.read_bytes()
    circle_main(["sweep", "--budget", "medium", "--runs", "10", "--jobs", "2", "--no-progress", "--out", str(out)])
    assert "nothing to run" in capsys.readouterr().out
    assert out.read_bytes() == before


def test_a_sitting_left_running_by_a_killed_process_is_marked_unclosed(tmp_path: Path, here: Engine) -> None:
    out = tmp_path / "p.json"
    probe(out, ["a"], 1, here)
    written = json.loads(out.read_text())
    written["sittings"][0]["ended"] = "running"           # as a kill -9 leaves it
    out.write_text(json.dumps(written))
    results = probe(out, ["a", "b"], 1, here)
    assert [s["ended"] for s in results["sittings"]] == ["unclosed", "complete"]


# --- a cluster that cannot start, a stalled sweep, a first run -----------------------------------------

def test_a_cluster_that_cannot_start_closes_the_sitting_and_answers_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    @contextmanager
    def unreachable(engine: Engine, signals: object):
        raise OSError("Timed out trying to connect to tcp://10.0.0.5:8786 after 20 s")
        yield

    monkeypatch.setattr(sweep_module, "open_cluster", unreachable)
    out = tmp_path / "p.json"
    with pytest.raises(SystemExit) as stopped:
        run_sweep_command(lambda: probe(out, ["a"], 1, Engine(scheduler="tcp://10.0.0.5:8786")), out)
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: could not start or reach the Dask scheduler at tcp://10.0.0.5:8786: OSError")
    (sitting,) = json.loads(out.read_text())["sittings"]
    assert sitting["ended"] == "no cluster" and sitting["finished"] is not None
    with pytest.raises(ClusterError):
        probe(tmp_path / "q.json", ["a"], 1, Engine(scheduler="tcp://10.0.0.5:8786"))


def test_sigterm_ends_a_sweep_stalled_on_a_scheduler_that_never_answers(tmp_path: Path) -> None:
    """A TCP port that accepts and never speaks: the client waits for the scheduler's handshake. SIGTERM
    was only counted (the sweep went on waiting); now it ends the sweep within seconds, exit 130."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    port = listener.getsockname()[1]
    out = tmp_path / "p.json"
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import sweep_tasks; "
            "from pathlib import Path; from setfuncs.experiments.cli import run_sweep_command; "
            "from setfuncs.experiments.engine import Engine, run_sweep; "
            f"run_sweep_command(lambda: run_sweep(sweep_tasks.record, sweep_tasks.tasks(['a'], 1), {str(out)!r}, "
            f"sweep_tasks.header(['a'], 1), sweep_tasks.IDENTITY, Engine(scheduler='tcp://127.0.0.1:{port}'), "
            f"progress=False), Path({str(out)!r}))")
    sweep = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (accepted and out.exists()):
            assert sweep.poll() is None and time.monotonic() < deadline, sweep.communicate()
            time.sleep(0.05)
        time.sleep(0.5)
        sent = time.monotonic()
        sweep.send_signal(signal.SIGTERM)
        _, stderr = sweep.communicate(timeout=15)
    finally:
        sweep.kill()
        listener.close()
    assert sweep.returncode == 130 and time.monotonic() - sent < 10, stderr
    assert "interrupted: kept 0 of 1 runs" in stderr
    (sitting,) = json.loads(out.read_text())["sittings"]
    assert sitting["ended"] == "interrupted"


def test_a_time_limit_the_start_up_used_up_still_starts_the_first_runs(tmp_path: Path, here: Engine,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, a limit shorter than the cluster's start-up started no run, sitting after sitting (exit 75
    forever)."""
    real = sweep_module.open_cluster

    def slow_start(engine: Engine, signals: object):
        time.sleep(0.3)
        return real(engine, signals)

    monkeypatch.setattr(sweep_module, "open_cluster", slow_start)
    limited = Engine(scheduler=here.scheduler, time_limit=0.1)
    results = probe(tmp_path / "p.json", ["a", "b", "c"], 2, limited)
    (sitting,) = results["sittings"]
    assert sitting["runs_added"] >= 1 and sitting["ended"] == "time limit"
    assert sitting["runs_added"] + sitting["held_runs"] == 6


# --- the command line's unclear cases -----------------------------------------------------------------

@pytest.mark.parametrize("argv, says", [
    (["--time-limit", "9" * 400 + "s"], "is more than a year; leave --time-limit out"),
    (["--configurations", "max/max", "max/max"], "--configurations names max/max more than once"),
    (["--runs", "200000000"], "200,000,000 seeds per configuration is more than a sweep plans"),
    (["--scheduler", "not an address"], "expected a Dask scheduler's address such as tcp://10.0.0.5:8786"),
    (["--dashboard"], "--dashboard needs bokeh, which is not installed"),
], ids=["400-digit time limit", "a configuration twice", "runs 200000000", "malformed scheduler",
        "dashboard without bokeh"])
def test_unclear_arguments_are_usage_errors(argv: list[str], says: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    base = ["sweep", "--budget", "quick", "--runs", "1", "--out", str(tmp_path / "r.json")]
    if "--runs" in argv:
        base = base[:3] + base[5:]
    if "--scheduler" not in argv and "--dashboard" not in argv:
        base.append("--no-progress")
    line = usage_error(circle_main, base + argv, capsys)
    assert says in line, line
    assert not (tmp_path / "r.json").exists()


def test_a_cuda_index_beyond_the_devices_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    Engine(device="cuda:0")
    with pytest.raises(DeviceError, match=r"'cuda:1': this machine has 1 CUDA GPU \(cuda:0 to cuda:0\)"):
        Engine(device="cuda:1")


def test_the_provenance_names_the_commits_and_machines_of_the_sittings_that_trained_runs(tmp_path: Path,
                                                                                          here: Engine) -> None:
    out = tmp_path / "p.json"
    machine = {"cpu_model": "first", "cpu_count": 2, "torch_threads_per_run": 1}
    first = {**header(["a"], 1), "git_commit": "1111111", "versions": {"torch": "1.0"}, "hardware": machine}
    run_sweep(sweep_tasks.record, tasks(["a"], 1), out, first, IDENTITY, here, progress=False)
    second = {**header(["a", "b"], 1), "git_commit": "2222222", "versions": {"torch": "2.0"},
              "hardware": {**machine, "cpu_model": "second"}}
    results = run_sweep(sweep_tasks.record, tasks(["a", "b"], 1), out, second, IDENTITY, here, progress=False)
    results["sittings"].append({**results["sittings"][1], "git_commit": "3333333", "runs_added": 0,
                                "ended": "interrupted", "hardware": {**machine, "cpu_model": "third"}})
    rows = dict(provenance_rows(results, "probe"))
    assert rows["git commits of the code"] == "1111111, 2222222"
    assert rows["hardware"] == "first, 2 cores, 1 torch thread per run; second, 2 cores, 1 torch thread per run"
