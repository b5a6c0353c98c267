"""A sweep resumes only a file that keeps the results schema; any other is refused by name.

The file an earlier sitting wrote is checked (:func:`~setfuncs.experiments.schema.check_results`)
before a run is kept, counted or trained again: a duplicated run, a seed that is not a non-negative
int, a run that is not a record, a spec that is not a string, and a header whose ``seeds``,
``configurations`` or ``sittings`` are not lists are each a
:class:`~setfuncs.experiments.resultsfile.SweepFileError` that names the file, the run and the field
and says the fix (``--restart``), and the command line prints it as one ``error:`` line. A write that
fails (a full disk) says what is true of the file: it keeps every run written before, or, when there
was none, no file was written. No cluster starts for a refused file or a first write that fails, so
these tests run without Dask.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable

import pytest

import sweep_tasks
from setfuncs.experiments.engine import sweep as sweep_module
from setfuncs.experiments.cli import run_sweep_command
from setfuncs.experiments.engine import Engine, run_sweep
from setfuncs.experiments.resultsfile import SweepFileError
from setfuncs.experiments.schema import RunSchema
from sweep_tasks import IDENTITY, header, tasks

SPECS, RUNS = ["a", "b"], 2


def written() -> dict:
    """The file a finished probe sweep of ``SPECS`` x ``RUNS`` seeds leaves, as the engine writes it."""
    sitting = {"started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:00:01+00:00", "wall_seconds": 1.0,
               "command": ["probe"], "git_commit": None, "engine": "dask, LocalCluster(1)", "device": "cpu",
               "device_requested": "cpu", "concurrent": 1, "kept_runs": 0, "runs_added": 4, "failed_runs": 0, "held_runs": 0,
               "restarted_from": None,
               "ended": "complete"}
    provenance = {"sitting": 0, "engine": sitting["engine"], "device": "cpu"}
    runs = [{**sweep_tasks.record(spec, seed), "provenance": provenance} for seed in range(RUNS) for spec in SPECS]
    return {**header(SPECS, RUNS), "identity": IDENTITY, "sittings": [sitting], "started": sitting["started"],
            "finished": sitting["finished"], "wall_seconds": 1.0, "complete": True, "runs": runs}


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """No run trains in these tests: a finished file has nothing to run, a refused one must not."""
    def refuse(engine: Engine, signals: object) -> None:
        raise AssertionError("no run may start: the file has every run, or must be refused")

    monkeypatch.setattr(sweep_module, "open_cluster", refuse)


def resume(out: Path, **options: Any) -> dict:
    """The probe sweep of ``SPECS`` x ``RUNS`` seeds, resuming ``out``."""
    return run_sweep(sweep_tasks.record, tasks(SPECS, RUNS), out, header(SPECS, RUNS), IDENTITY, Engine(jobs=1),
                     progress=False, **options)


def _set(key: str, value: Any) -> Callable[[dict], None]:
    return lambda results: results.__setitem__(key, value)


def _set_in_run(index: int, key: str, value: Any) -> Callable[[dict], None]:
    return lambda results: results["runs"][index].__setitem__(key, value)


def _without_spec(results: dict) -> None:
    del results["runs"][1]["spec"]


def _replace_run(index: int, run: Any) -> Callable[[dict], None]:
    return lambda results: results["runs"].__setitem__(index, run)


def _duplicate_run(results: dict) -> None:
    results["runs"].append(dict(results["runs"][0]))


#: Each defect of the issue: how it is made, and what the refusal says of the run and the field (verbatim).
DEFECTS = {
    "duplicated run": (_duplicate_run, "runs 0 and 4 are both a seed 0"),
    "seed '0'": (_set_in_run(0, "seed", "0"), "run 0 (a seed 0): seed is '0', not a non-negative int"),
    "seed true": (_set_in_run(1, "seed", True), "run 1 (b seed True): seed is True, not a non-negative int"),
    "seed -1": (_set_in_run(2, "seed", -1), "run 2 (a seed -1): seed is -1, not a non-negative int"),
    "run a string": (_replace_run(3, "b/1"), "run 3 is a str, not a run's record"),
    "run without spec": (_without_spec, "run 1 (? seed 0): spec is None"),
    "list spec": (_set_in_run(0, "spec", ["a"]), "run 0 (['a'] seed 0): spec is ['a']"),
    "seeds '01'": (_set("seeds", "01"), "seeds is '01', not a list of non-negative ints"),
    "configurations null": (_set("configurations", None), "configurations is None, not a list of model specs"),
    "sittings null": (_set("sittings", None), "sittings is None, not a list of sitting records"),
}


def test_a_file_that_keeps_the_schema_resumes_with_nothing_to_run(tmp_path: Path) -> None:
    """The file every defect below starts from is resumed: each refusal is the defect's alone. With
    nothing to run, the sitting writes nothing: the file stays byte for byte."""
    out = tmp_path / "p.json"
    out.write_text(json.dumps(written()))
    before = out.read_bytes()
    results = resume(out)
    assert results == written() and results.sitting is None and out.read_bytes() == before


@pytest.mark.parametrize("defect", DEFECTS)
def test_a_file_that_breaks_the_schema_is_refused_by_name(defect: str, tmp_path: Path) -> None:
    make, says = DEFECTS[defect]
    results = written()
    make(results)
    out = tmp_path / "p.json"
    out.write_text(json.dumps(results))
    before = out.read_bytes()
    with pytest.raises(SweepFileError, match=re.escape(says)) as refused:
        resume(out)
    message = str(refused.value)
    assert message.startswith(f"{out}: ") and "left as it is" in message and "--restart" in message
    assert out.read_bytes() == before


def test_the_experiments_schema_is_checked_on_resume(tmp_path: Path) -> None:
    """``schema``: a finished run's metric must be a number (or the writer's null for a NaN)."""
    results = written()
    results["runs"][2]["value"] = "high"
    out = tmp_path / "p.json"
    out.write_text(json.dumps(results))
    assert len(resume(out)["runs"]) == 4                                  # no metrics named: kept
    with pytest.raises(SweepFileError, match=r"run 2 \(a seed 1\): /value is 'high', not a number"):
        resume(out, schema=RunSchema(metrics=("value",)))
    with pytest.raises(SweepFileError, match=r"run 0 \(a seed 0\) lacks loss"):
        resume(out, schema=RunSchema(metrics=("loss",)))


def test_the_command_line_says_why_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = written()
    results["seeds"] = "01"
    out = tmp_path / "p.json"
    out.write_text(json.dumps(results))
    with pytest.raises(SystemExit) as stopped:
        run_sweep_command(lambda: resume(out), out)
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {out}: seeds is '01'") and line.endswith("or choose another --out")


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write from here on fails as on a full disk, when its temporary file is renamed over the
    file (moving a file aside, which takes no space, works)."""
    real = os.replace

    def replace(source: str, target: str) -> None:
        if str(source).endswith(".tmp"):
            raise OSError(28, "No space left on device")
        real(source, target)

    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.parametrize("earlier", [False, True], ids=["no file yet", "a file to resume"])
def test_a_full_disk_says_what_the_file_still_holds(earlier: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The first write fails: with no file before, none was written (it does not keep "every run written
    before"); with one to resume, it keeps its runs, byte for byte. One ``error:`` line, exit 1, and no
    temporary file left."""
    out = tmp_path / "p.json"
    if earlier:
        incomplete = written()
        incomplete["runs"].pop()                   # one run to add, so the sitting writes
        out.write_text(json.dumps(incomplete))
    before = out.read_bytes() if earlier else None
    _full_disk(monkeypatch)
    with pytest.raises(SystemExit) as stopped:
        run_sweep_command(lambda: resume(out), out)
    assert stopped.value.code == 1
    (line,) = capsys.readouterr().err.splitlines()
    holds = ("the file keeps every run written before: free disk space (or make the folder writable), then run "
             "the same command to resume" if earlier else
             "no file was written: free disk space (or make the folder writable), then run the same command again")
    assert line == f"error: cannot write {out}: No space left on device; {holds}"
    assert (out.read_bytes() if out.exists() else None) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == (["p.json", "p.json.lock"] if earlier else ["p.json.lock"])


def test_a_full_disk_after_a_restart_says_where_the_earlier_file_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.json"
    out.write_text(json.dumps(written()))
    _full_disk(monkeypatch)
    with pytest.raises(SystemExit):
        run_sweep_command(lambda: resume(out, restart=True), out)
    (backup,) = tmp_path.glob("p.json.*.bak")
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: cannot write {out}: No space left on device; no file was written (the earlier "
                           f"file is at {backup}): ")
