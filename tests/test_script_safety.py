"""The scripts in ``scripts/`` lose nothing: what they write over, and what they are given.

``scripts/chapter_times.py`` adds each chapter's time to the existing times file as soon as it is
measured, so that a killed or interrupted run keeps every other chapter's time and the interrupted
chapter's earlier one; it records the budget as the chapters read it and refuses a folder as
``--out``. ``scripts/copy_paper_results.py`` copies only the paper's transcription and never
overwrites another copy without ``--replace``. (``scripts/student_edition.py`` and
``scripts/install_cell.py`` are tested in ``tests/test_student_edition.py`` and
``tests/test_launch.py``.) The book's chapters are never run here: a stand-in times made-up ones,
stand-ins for nbclient fail as Ctrl-C and SIGTERM make it fail, and one test runs two tiny chapters
in real kernels and presses Ctrl-C during the second.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbclient
import nbformat
import pytest
from nbclient.exceptions import CellExecutionError
from script_modules import load_script

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ("01_one", "02_two", "03_three")


chapter_times = load_script("chapter_times")
copy_paper_results = load_script("copy_paper_results")


# --- chapter_times.py ---------------------------------------------------------------------------

def _book(folder: Path) -> Path:
    """A book of three empty chapters (a stand-in for :func:`run_chapter` times them)."""
    folder.mkdir()
    for name in CHAPTERS:
        nbformat.write(nbformat.v4.new_notebook(), folder / f"{name}.ipynb")
    return folder


def _provenance(budget: str = "quick") -> dict:
    """A stand-in for :func:`chapter_times.provenance` (the real one imports torch and asks git)."""
    return {"command": ["python", "scripts/chapter_times.py"], "git_commit": "f" * 40, "versions": {},
            "hardware": {"cpu_model": "Test CPU", "cpu_count": 2}, "budget": budget,
            "threads": dict(chapter_times.THREADS), "date": "2026-01-01T00:00:00+00:00"}


def _entry(seconds: float, status: str = "ok") -> dict:
    return {"seconds": seconds, "load_before": 0.5, "load_after": 0.5, "date": "2025-12-31T00:00:00+00:00",
            "status": status}


def _times(path: Path, budget: str = "quick") -> dict:
    """A valid times file at ``path`` with a good time for every chapter."""
    data = {"provenance": _provenance(budget), "chapters": {name: _entry(100.0 + i) for i, name in enumerate(CHAPTERS)}}
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    assert chapter_times.check_times(data) == []
    return data


@pytest.fixture
def timed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The chapters the stand-in times: each takes 1 s, except where a test makes it do otherwise."""
    ran: list[str] = []

    def run_chapter(path: Path, timeout: int) -> dict:
        ran.append(path.stem)
        return _entry(1.0)
    monkeypatch.setattr(chapter_times, "run_chapter", run_chapter)
    monkeypatch.setattr(chapter_times, "provenance", _provenance)
    monkeypatch.setenv("SETFUNCS_BUDGET", "quick")
    return ran


@pytest.mark.parametrize("only", [None, ["01_one", "02_two"]], ids=["every chapter", "--chapters"])
def test_an_interrupted_chapter_keeps_its_time_and_the_others_keep_theirs(tmp_path: Path, only: list[str] | None,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture) -> None:
    """Ctrl-C during the second chapter: the first has its new time, the second and third their old ones."""
    book, out = _book(tmp_path / "book"), tmp_path / "times.json"
    held = _times(out)
    on_disk: list[dict] = []

    def run_chapter(path: Path, timeout: int) -> dict:
        if path.stem == "02_two":
            on_disk.append(json.loads(out.read_text(encoding="utf-8")))    # what a kill here would leave
            raise KeyboardInterrupt
        return _entry(1.0)
    monkeypatch.setattr(chapter_times, "run_chapter", run_chapter)
    monkeypatch.setattr(chapter_times, "provenance", _provenance)
    monkeypatch.setenv("SETFUNCS_BUDGET", "quick")

    try:
        status = chapter_times.main(["--book", str(book), "--out", str(out), *(["--chapters", *only] if only else [])])
    except KeyboardInterrupt:
        pytest.fail("the interruption escaped main(): it should exit 130 and say what it kept")

    error = capsys.readouterr().err.strip()
    assert status == 130 and "02_two" in error and "kept" in error and len(error.splitlines()) == 1
    for data in (on_disk[0], json.loads(out.read_text(encoding="utf-8"))):
        assert list(data["chapters"]) == list(CHAPTERS), "a chapter's time was lost"
        assert data["chapters"]["01_one"]["seconds"] == 1.0
        assert data["chapters"]["02_two"] == held["chapters"]["02_two"]
        assert data["chapters"]["03_three"] == held["chapters"]["03_three"]
        assert chapter_times.check_times(data) == []
    assert not list(tmp_path.glob("*.partial"))


def test_a_finished_run_replaces_only_the_chapters_it_timed(tmp_path: Path, timed: list[str]) -> None:
    book, out = _book(tmp_path / "book"), tmp_path / "times.json"
    held = _times(out)
    assert chapter_times.main(["--book", str(book), "--out", str(out), "--chapters", "02_two"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert timed == ["02_two"] and data["chapters"]["02_two"]["seconds"] == 1.0
    assert data["chapters"]["02_two"]["git_commit"] == "f" * 40
    assert {name: data["chapters"][name] for name in ("01_one", "03_three")} == {
        name: held["chapters"][name] for name in ("01_one", "03_three")}


class _KernelStoppedByCtrlC:
    """A stand-in for nbclient's ``NotebookClient`` whose kernel Ctrl-C stops."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def execute(self) -> None:
        raise CellExecutionError("Traceback ...", "KeyboardInterrupt", "")


class _ClientStoppedBySignal(_KernelStoppedByCtrlC):
    """A stand-in for nbclient 0.11 on SIGINT or SIGTERM: its own handler starts the kernel's cleanup
    (``_async_cleanup_kernel_future``) and the waiting cell fails with an empty AssertionError, or its
    tasks are cancelled."""

    error: BaseException = AssertionError()

    def execute(self) -> None:
        self._async_cleanup_kernel_future = object()
        raise self.error


class _ClientCancelledBySignal(_ClientStoppedBySignal):
    error = asyncio.CancelledError()


@pytest.mark.parametrize("client", [_KernelStoppedByCtrlC, _ClientStoppedBySignal, _ClientCancelledBySignal])
def test_an_interrupted_kernel_is_an_interruption_not_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                client: type) -> None:
    """Ctrl-C reaches the kernel too, and nbclient handles the signals itself: neither is a "failed" time."""
    monkeypatch.setattr(nbclient, "NotebookClient", client)
    chapter = _book(tmp_path / "book") / "01_one.ipynb"
    with pytest.raises(KeyboardInterrupt):
        chapter_times.run_chapter(chapter, timeout=10)


def test_ctrl_c_during_a_real_chapter_exits_130_and_keeps_its_time(tmp_path: Path) -> None:
    """The issue's case, with real kernels: Ctrl-C (SIGINT to the whole process group, the kernel
    included) while the second chapter runs. About 10 s: two kernels start."""
    book, out = tmp_path / "book", tmp_path / "times.json"
    book.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")]), book / "01_one.ipynb")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\ntime.sleep(300)")]),
                   book / "02_two.ipynb")
    held = {"provenance": _provenance(), "chapters": {"01_one": _entry(100.0), "02_two": _entry(200.0)}}
    out.write_text(json.dumps(held), encoding="utf-8")
    run = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "chapter_times.py"), "--book", str(book),
                            "--out", str(out), "--timeout", "600"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True, env={**os.environ, "SETFUNCS_BUDGET": "quick"})
    try:
        first = run.stdout.readline()
        assert first.startswith("01_one: ok"), first + run.stderr.read()
        time.sleep(1.0)                                      # the second chapter's kernel is starting or running
        os.killpg(run.pid, signal.SIGINT)
        _, error = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    last = error.strip().splitlines()[-1]
    assert run.returncode == 130 and "interrupted while timing 02_two" in last, error[-2000:]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["chapters"]["02_two"] == held["chapters"]["02_two"], "Ctrl-C replaced a good time"
    assert data["chapters"]["01_one"]["status"] == "ok" and data["chapters"]["01_one"]["seconds"] < 100


def test_sigterm_during_a_chapter_exits_130_and_keeps_its_time(tmp_path: Path) -> None:
    """A SIGTERM (``kill``, a job scheduler) stops the run as Ctrl-C does, in a process of its own."""
    book, out = _book(tmp_path / "book"), tmp_path / "times.json"
    held = _times(out)
    driver = textwrap.dedent(f"""
        import importlib.util, os, signal, sys, time
        spec = importlib.util.spec_from_file_location("chapter_times", {str(ROOT / "scripts" / "chapter_times.py")!r})
        chapter_times = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(chapter_times)
        entry = {_entry(1.0)!r}
        def run_chapter(path, timeout):
            if path.stem == "02_two":
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(30)
            return dict(entry)
        chapter_times.run_chapter = run_chapter
        chapter_times.provenance = lambda: {_provenance()!r}
        sys.exit(chapter_times.main(["--book", {str(book)!r}, "--out", {str(out)!r}]))
    """)
    done = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SETFUNCS_BUDGET": "quick"})
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "02_two" in done.stderr and "kept" in done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["chapters"]["01_one"]["seconds"] == 1.0
    assert data["chapters"]["02_two"] == held["chapters"]["02_two"]
    assert data["chapters"]["03_three"] == held["chapters"]["03_three"]


@pytest.mark.parametrize("value", ["FULL", " Full ", "full"])
def test_the_budget_is_recorded_as_the_chapters_read_it(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SETFUNCS_BUDGET", value)
    assert chapter_times.provenance()["budget"] == "full"


def test_an_unknown_budget_is_refused_before_anything_runs(tmp_path: Path, timed: list[str],
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("SETFUNCS_BUDGET", "fast")
    book, out = _book(tmp_path / "book"), tmp_path / "times.json"
    with pytest.raises(SystemExit) as stopped:
        chapter_times.main(["--book", str(book), "--out", str(out)])
    assert stopped.value.code == 2 and "SETFUNCS_BUDGET" in capsys.readouterr().err.strip().splitlines()[-1]
    assert timed == [] and not out.exists()


def test_times_at_another_budget_are_not_mixed_with_kept_ones(tmp_path: Path, timed: list[str],
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture) -> None:
    """A full-budget run of one chapter into a file of quick-budget times would make every kept time's
    line say the wrong budget; the file's "FULL" (before budgets were normalised) is "full"."""
    book, out = _book(tmp_path / "book"), tmp_path / "times.json"
    _times(out, budget="quick")
    before = out.read_text(encoding="utf-8")
    monkeypatch.setenv("SETFUNCS_BUDGET", "full")
    monkeypatch.setattr(chapter_times, "provenance", lambda: _provenance("full"))
    with pytest.raises(SystemExit) as stopped:
        chapter_times.main(["--book", str(book), "--out", str(out), "--chapters", "01_one"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and f"--out {out} " in error and "quick" in error and "another --out" in error
    assert timed == [] and out.read_text(encoding="utf-8") == before
    _times(out, budget="FULL")
    assert chapter_times.main(["--book", str(book), "--out", str(out), "--chapters", "01_one"]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["provenance"]["budget"] == "full"


def test_a_folder_as_out_is_refused_in_one_line(tmp_path: Path, timed: list[str],
                                                capsys: pytest.CaptureFixture) -> None:
    book = _book(tmp_path / "book")
    with pytest.raises(SystemExit) as stopped:
        chapter_times.main(["--book", str(book), "--out", str(tmp_path)])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and f"--out {tmp_path} is a folder" in error and "chapter-times.json" in error
    assert timed == []


# --- copy_paper_results.py ----------------------------------------------------------------------

def _paper() -> dict:
    """The paper's transcription, as the committed copy holds it."""
    return json.loads((ROOT / "results" / "paper-results.json").read_text(encoding="utf-8"))["paper"]


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path


def test_the_committed_transcription_is_the_papers() -> None:
    assert copy_paper_results.check_paper(_paper()) == []


def _broken(change) -> dict:
    paper = _paper()
    change(paper)
    return paper


@pytest.mark.parametrize("source", [
    lambda tmp: ROOT / "results" / "paper-results.json",                        # the copy, not its source
    lambda tmp: ROOT / "results" / "benchmarks" / "chapter-times.json",
    lambda tmp: _write(tmp / "list.json", [1, 2]),
    lambda tmp: _write(tmp / "short-row.json", _broken(lambda p: p["modelnet40"]["rows"]["100"].pop())),
    lambda tmp: _write(tmp / "text-row.json", _broken(
        lambda p: p["minimal_enclosing_circle"]["rows"].__setitem__("plain equivariant / plain aggregation",
                                                                    ["a", "b", "c", "d"]))),
    lambda tmp: _write(tmp / "no-findings.json", _broken(lambda p: p["spatial_attention"].pop("findings"))),
    lambda tmp: _write(tmp / "no-row.json", _broken(lambda p: p["modelnet40"]["rows"].pop("50"))),
    lambda tmp: (tmp / "not.json").write_text("{", encoding="utf-8") and tmp / "not.json",
], ids=["the copy", "chapter times", "a list", "a short row", "a row of words", "no findings", "no row", "not JSON"])
def test_anything_but_the_papers_transcription_is_refused_in_one_line(tmp_path: Path, source,
                                                                      capsys: pytest.CaptureFixture) -> None:
    path, out = source(tmp_path), tmp_path / "out" / "paper-results.json"
    with pytest.raises(SystemExit) as stopped:
        copy_paper_results.main([str(path), "--out", str(out)])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and f"error: {path} " in error and "../shared/paper/results.json" in error
    assert not out.exists()


def test_the_copy_is_written_once_and_never_overwritten_by_other_numbers(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    source, out = _write(tmp_path / "results.json", _paper()), tmp_path / "paper-results.json"
    assert copy_paper_results.main([str(source), "--out", str(out)]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["paper"] == _paper() and set(record) == {"provenance", "paper"}
    written = out.read_text(encoding="utf-8")

    assert copy_paper_results.main([str(source), "--out", str(out)]) == 0      # the same numbers: left alone
    assert out.read_text(encoding="utf-8") == written and "left as it is" in capsys.readouterr().out

    other = _write(tmp_path / "other.json", _broken(lambda p: p["modelnet40"]["rows"]["100"].__setitem__(0, 1.0)))
    with pytest.raises(SystemExit) as stopped:
        copy_paper_results.main([str(other), "--out", str(out)])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and f"error: {out} holds other numbers" in error and "--replace" in error
    assert out.read_text(encoding="utf-8") == written

    assert copy_paper_results.main([str(other), "--out", str(out), "--replace"]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["paper"]["modelnet40"]["rows"]["100"][0] == 1.0


def test_an_output_that_is_no_copy_is_not_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source, out = _write(tmp_path / "results.json", _paper()), tmp_path / "notes.json"
    out.write_text("my notes", encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        copy_paper_results.main([str(source), "--out", str(out)])
    assert stopped.value.code == 2 and "--replace" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "my notes"
