"""The results readers refuse a bad file by name, and the writer writes strict JSON.

Every experiment's ``load_results`` (what the chapters call) and its ``table`` command read a sweep's
results file through :func:`~setfuncs.experiments.results.load_sweep`: an empty, truncated or binary
file, another experiment's file, a file without a header key or a run's key, and a file without runs
are each a ValueError that names the file, which the ``table`` command prints as one ``error:`` line
before it exits with status 2 (as it does for a ``--paper`` that is not the paper's numbers).
:func:`~setfuncs.experiments.results.results_file` says what is wrong with the name it is given.
:meth:`~setfuncs.experiments.resultsfile.SweepFile.write` writes NaN and infinities as ``null`` named
in ``non_finite``, and the readers turn them back.
"""

from __future__ import annotations

import io
import json
import math
import re
from contextlib import redirect_stderr
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.attention.__main__ import main as attention_main
from setfuncs.experiments.circle.__main__ import main as circle_main
from setfuncs.experiments.mixture.__main__ import main as mixture_main
from setfuncs.experiments.pointcloud.__main__ import main as pointcloud_main
from setfuncs import repository
from setfuncs.experiments import results as results_module
from setfuncs.experiments.results import HEADER_KEYS, PAPER_RESULTS, load_paper, results_file
from setfuncs.experiments.resultsfile import SweepFile
from setfuncs.experiments.strictjson import NON_FINITE, replace_non_finite, restore_non_finite


def _header(experiment: str, spec: str, **extra: object) -> dict:
    return {"experiment": experiment, "budget": "tiny", "budget_parameters": {"steps": 1}, "configurations": [spec],
            "seeds": [0], "runs_per_configuration": 1, "complete": True, **extra}


#: A valid results file of every experiment: its header and one finished run.
VALID = {
    "circle": (_header("minimal_enclosing_circle", "max/max"),
               {"spec": "max/max", "setting": "plain/plain", "equivariant": "max", "final": "max", "seed": 0,
                "error": None, "collapsed": False, "mse": 1.0, "radius_mse": 0.25, "center_mse": 0.75,
                "mse_by_population_size": {"20": 1.0}}),
    "mixture": (_header("gmm_mixture_weights", "max/max"),
                {"spec": "max/max", "setting": "plain/plain", "equivariant": "max", "final": "max", "seed": 0,
                 "error": None, "collapsed": False, "metric": -1.0, "metric_by_population_size": {"100": -1.0}}),
    "pointcloud": (_header("point_cloud_classification", "max/max", data={"name": "shapes"}),
                   {"spec": "max/max", "equivariant": "max", "final": "max", "seed": 0, "error": None,
                    "collapsed": False, "accuracy": 0.5,
                    "accuracy_by_population_size": {"50": 0.4, "100": 0.45, "1000": 0.5}}),
    "attention": (_header("spatial_attention", "mean", budget_parameters={"particles": 20, "eval_sizes": [5, 20]},
                          data={"source": "sklearn"}),
                  {"spec": "mean", "localiser": "set", "seed": 0, "error": None, "failed": False, "localiser_parameters": 10,
                   "elbo": 1.0, "count_accuracy": 0.5, "box_iou": 0.5,
                   "evaluation": {str(n): {"elbo": 1.0, "count_accuracy": 0.5, "box_iou": 0.5} for n in (5, 20)}}),
}
LOADERS: dict[str, Callable[[Path], dict]] = {"circle": circle.load_results, "mixture": mixture.load_results,
                                              "pointcloud": pointcloud.load_results,
                                              "attention": attention.load_results}
MAINS: dict[str, Callable[[list[str]], None]] = {"circle": circle_main, "mixture": mixture_main,
                                                 "pointcloud": pointcloud_main, "attention": attention_main}
RUN_KEYS = {"circle": circle.RUN_SCHEMA.keys, "mixture": mixture.RUN_SCHEMA.keys,
            "pointcloud": pointcloud.RUN_SCHEMA.keys, "attention": attention.RUN_SCHEMA.keys}
EXPERIMENTS = list(VALID)


def _valid(name: str) -> dict:
    header, run = VALID[name]
    return json.loads(json.dumps({**header, "runs": [run]}))


def _table_error(name: str, *argv: str) -> str:
    """The one line ``python -m setfuncs.experiments.<name> table ARGV`` prints on stderr, an
    ``error:`` line, before it exits with status 2 (no traceback)."""
    stderr = io.StringIO()
    with redirect_stderr(stderr), pytest.raises(SystemExit) as stopped:
        MAINS[name](["table", *argv])
    assert stopped.value.code == 2, stderr.getvalue()
    (line,) = stderr.getvalue().splitlines()
    assert line.startswith("error: "), line
    return line


def _refused(name: str, path: Path, match: str) -> None:
    """Both readers of ``name`` refuse ``path`` naming it: ``load_results`` with a ValueError that
    matches ``match``, the ``table`` command with one ``error:`` line that does."""
    with pytest.raises(ValueError, match=match) as refused:
        LOADERS[name](path)
    assert str(path) in str(refused.value)
    line = _table_error(name, str(path))
    assert re.search(match, line) and str(path) in line, line


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_a_valid_file_is_read_and_tabled(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(_valid(name)))
    assert LOADERS[name](path)["runs"] == _valid(name)["runs"]
    MAINS[name](["table", str(path)])
    assert VALID[name][1]["spec"] in capsys.readouterr().out


@pytest.mark.parametrize("name", EXPERIMENTS)
@pytest.mark.parametrize("content, reason", [
    (b"", "the file is empty"), (b"  \n", "the file is empty"),
    (b'{"experiment": "x", "runs": [{"spec": ', "invalid or truncated JSON: Expecting value: line 1"),
    (b"\x89PNG\r\n\x1a\n\x00\xff", "not UTF-8 text"),
], ids=["empty", "blank", "truncated", "binary"])
def test_a_file_that_is_not_json_is_refused_by_name(name: str, content: bytes, reason: str, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(content)
    _refused(name, path, f"is not a JSON results file \\({reason}.*\\); pass a file written by "
                         f"`python -m setfuncs.experiments.{name} sweep`")
    with pytest.raises(ValueError, match="not a JSON results file") as refused:
        LOADERS[name](path)
    assert isinstance(refused.value.__cause__, (json.JSONDecodeError, UnicodeDecodeError))


@pytest.mark.parametrize("name", [n for n in EXPERIMENTS if n != "mixture"])
def test_a_mixture_file_is_refused_by_every_other_experiment(name: str, tmp_path: Path) -> None:
    path = tmp_path / "mixture.json"
    path.write_text(json.dumps(_valid("mixture")))
    assert mixture.load_results(path)["experiment"] == "gmm_mixture_weights"
    _refused(name, path, f"holds results of the 'gmm_mixture_weights' experiment, not '.*'; pass a file written by "
                         f"`python -m setfuncs.experiments.{name} sweep`")


@pytest.mark.parametrize("name", EXPERIMENTS)
@pytest.mark.parametrize("key", HEADER_KEYS)
def test_a_file_without_a_header_key_is_refused_by_name(name: str, key: str, tmp_path: Path) -> None:
    results = _valid(name)
    del results[key]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    _refused(name, path, "no list of 'runs'" if key == "runs" else f"lacks {key} of a results file")


def test_the_attention_reader_checks_the_header_keys_its_command_prints(tmp_path: Path) -> None:
    for key in ("particles", "eval_sizes"):
        results = _valid("attention")
        del results["budget_parameters"][key]
        path = tmp_path / f"{key}.json"
        path.write_text(json.dumps(results))
        _refused("attention", path, f"lacks budget_parameters.{key} of a results file of the 'spatial_attention'")
    results = _valid("attention")
    results["data"] = "sklearn"
    path = tmp_path / "data.json"
    path.write_text(json.dumps(results))
    _refused("attention", path, "lacks data.source")


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_a_run_without_a_key_its_table_reads_is_refused_by_name(name: str, tmp_path: Path) -> None:
    spec = _valid(name)["runs"][0]["spec"]
    expected = {**{key: f"run 1 ({spec} seed 1) lacks {key}, which the tables read" for key in RUN_KEYS[name]},
                "spec": "spec is None, not a model spec", "seed": "seed is None, not a non-negative int"}
    for key, message in expected.items():
        results = _valid(name)
        results["runs"].append({**results["runs"][0], "seed": 1})
        del results["runs"][1][key]
        path = tmp_path / f"{key}.json"
        path.write_text(json.dumps(results))
        _refused(name, path, re.escape(message))


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_a_run_that_raised_needs_no_metrics_but_its_name(name: str, tmp_path: Path) -> None:
    results = _valid(name)
    spec = results["runs"][0]["spec"]
    failure = {"spec": spec, "seed": 1, "error": "RuntimeError: broke", "failure": {"kind": "raised", "traceback": ""}}
    results["runs"].append(failure)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    assert LOADERS[name](path)["runs"][1] == failure
    del results["runs"][1]["seed"]
    path.write_text(json.dumps(results))
    _refused(name, path, "run 1 .* seed is None, not a non-negative int")


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_a_file_without_runs_is_refused_not_tabled(name: str, tmp_path: Path) -> None:
    results = {**_valid(name), "runs": [], "complete": False}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    _refused(name, path, f"has no runs; run the sweep command first: `python -m setfuncs.experiments.{name} sweep`")


def test_the_papers_numbers_are_read_by_name_too(tmp_path: Path) -> None:
    path = tmp_path / "paper.json"
    path.write_text('{"provenance": {}, "paper": {')
    with pytest.raises(ValueError, match=f"{path} is not a JSON results file .*copy_paper_results"):
        load_paper(path)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_the_table_command_refuses_a_paper_file_that_is_not_the_papers(name: str, tmp_path: Path) -> None:
    """``--paper`` given a sweep's results file (any experiment's), a truncated file or an empty one:
    one ``error:`` line naming it, exit status 2, before any table is printed."""
    results = tmp_path / "results.json"
    results.write_text(json.dumps(_valid(name)))
    sweep = tmp_path / "mixture.json"
    sweep.write_text(json.dumps(_valid("mixture")))
    truncated, empty = tmp_path / "truncated.json", tmp_path / "empty.json"
    truncated.write_text('{"provenance": {}, "paper": {')
    empty.write_text("")
    for paper, says in ((sweep, "is a sweep's results file (experiment 'gmm_mixture_weights'), not the copy of the "
                                "paper's numbers"),
                        (truncated, "is not a JSON results file (invalid or truncated JSON"),
                        (empty, "is not a JSON results file (the file is empty)")):
        line = _table_error(name, str(results), "--paper", str(paper))
        assert line.startswith(f"error: {paper} {says}") and f"pass results/{PAPER_RESULTS}" in line, line


def test_results_file_names_what_is_wrong_with_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``results_file("")`` says the name is empty (it is not that ``results/`` is missing), a folder
    is named as one, and a missing file as missing."""
    monkeypatch.setattr(repository, "RESULTS_DIR", tmp_path)
    (tmp_path / "probes").mkdir()
    (tmp_path / "circle.json").write_text("{}")
    with pytest.raises(ValueError, match=re.escape("results_file(name): name is empty; pass the name of a file in")):
        results_file("")
    folder = re.escape(f"results_file(name): 'probes' names the folder {tmp_path / 'probes'}")
    with pytest.raises(ValueError, match=folder):
        results_file("probes")
    with pytest.raises(FileNotFoundError, match=re.escape(f"{tmp_path / 'nothing.json'} does not exist")):
        results_file("nothing.json")
    assert results_file("circle.json") == tmp_path / "circle.json"


# --- strict JSON ----------------------------------------------------------------------------------------

def _strict(text: str) -> dict:
    """``text`` read by a strict JSON reader: NaN, Infinity and -Infinity are errors."""
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def _circle_with_non_finite_numbers() -> dict:
    header, run = VALID["circle"]
    diverged = {**run, "seed": 1, "mse": math.nan, "radius_mse": math.inf, "center_mse": -math.inf,
                "mse_by_population_size": {"20": math.nan, "5/10": math.inf}, "losses": [1.0, math.nan]}
    return {**header, "budget_parameters": {"steps": 1, "clip": math.inf}, "runs": [run, diverged]}


def test_non_finite_numbers_are_written_as_null_and_named(tmp_path: Path) -> None:
    out = tmp_path / "circle.json"
    results = _circle_with_non_finite_numbers()
    with SweepFile(out, {"experiment": "minimal_enclosing_circle"}) as file:
        file.write(results)
    written = _strict(out.read_text())
    finite, diverged = written["runs"]
    assert NON_FINITE not in finite and finite == VALID["circle"][1]
    assert (diverged["mse"], diverged["radius_mse"], diverged["center_mse"]) == (None, None, None)
    assert diverged["mse_by_population_size"] == {"20": None, "5/10": None} and diverged["losses"] == [1.0, None]
    assert diverged[NON_FINITE] == {"/mse": "nan", "/radius_mse": "inf", "/center_mse": "-inf",
                                    "/mse_by_population_size/20": "nan", "/mse_by_population_size/5~110": "inf",
                                    "/losses/1": "nan"}
    assert written["budget_parameters"]["clip"] is None and written[NON_FINITE] == {"/budget_parameters/clip": "inf"}
    assert math.isnan(results["runs"][1]["mse"]) and NON_FINITE not in results      # the caller's dict is kept

    loaded = circle.load_results(out)
    run = loaded["runs"][1]
    assert math.isnan(run["mse"]) and run["radius_mse"] == math.inf and run["center_mse"] == -math.inf
    assert math.isnan(run["mse_by_population_size"]["20"]) and run["mse_by_population_size"]["5/10"] == math.inf
    assert run["losses"][0] == 1.0 and math.isnan(run["losses"][1])
    assert loaded["budget_parameters"]["clip"] == math.inf and NON_FINITE not in loaded and NON_FINITE not in run


def test_a_resumed_sweep_keeps_its_non_finite_numbers_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "circle.json"
    identity = {"experiment": "minimal_enclosing_circle", "budget_parameters": {"clip": math.inf}}
    with SweepFile(out, identity) as file:
        file.write({**_circle_with_non_finite_numbers(), "identity": identity})
    first = out.read_bytes()
    with SweepFile(out, identity) as file:                    # the identity with its inf matches the file's
        assert math.isnan(file.previous["runs"][1]["mse"]) and NON_FINITE not in file.previous["runs"][1]
        file.write(file.previous)
    assert out.read_bytes() == first


def test_tables_see_the_nan_they_would_have_seen(tmp_path: Path) -> None:
    """A run whose metric is NaN (not a diverged training: ``error`` None) is NaN again after the
    round trip, as before it, and the tables see what they would have seen: the run counted, its
    NaN never ranked among the peaks."""
    header, run = VALID["mixture"]
    nan_metric = {**run, "seed": 1, "metric": math.nan, "metric_by_population_size": {"100": math.nan}}
    results = {**header, "runs": [run, nan_metric]}
    out = tmp_path / "mixture.json"
    with SweepFile(out, {}) as file:
        file.write(results)
    loaded = mixture.load_results(out)
    ours, theirs = (mixture.peak_performance(r, "final", bootstraps=20) for r in (loaded, results))
    assert len(ours) == len(theirs) == 1
    np.testing.assert_array_equal(ours[0]["metrics"], theirs[0]["metrics"])
    assert ours[0]["runs"] == 2 and ours[0]["metrics"].tolist() == [run["metric"]]
    assert math.isnan(loaded["runs"][1]["metric"])


def test_replace_and_restore_are_inverse_and_refuse_a_broken_map() -> None:
    results = _circle_with_non_finite_numbers()
    strict = replace_non_finite(results)
    assert json.dumps(strict, allow_nan=False)
    again = restore_non_finite(json.loads(json.dumps(strict)))
    np.testing.assert_equal(again, results)
    for marks, message in [({"/mse": "NaN"}, "expected 'nan', 'inf' or '-inf'"), ({"/nope": "nan"}, "does not hold"),
                           ({"/seed": "nan"}, "holds 0, not null"), ({"mse": "nan"}, "not a JSON Pointer"),
                           ("nan", "must map JSON Pointers")]:
        with pytest.raises(ValueError, match=message):
            restore_non_finite({"runs": [{"spec": "max/max", "seed": 0, "mse": None, NON_FINITE: marks}]})


def test_a_broken_non_finite_map_is_refused_by_name(tmp_path: Path) -> None:
    results = _valid("circle")
    results["runs"][0][NON_FINITE] = {"/mse": "nan"}                     # mse holds 1.0, not null
    path = tmp_path / "circle.json"
    path.write_text(json.dumps(results))
    _refused("circle", path, r"run 0 \(max/max seed 0\): non_finite names /mse, which holds 1.0, not null")


def test_the_provenance_counts_each_sittings_runs_in_words() -> None:
    """A sitting that added one run reads "(1 run)", not "(1 runs)" (the mixture rerun has one)."""
    results = json.loads(json.dumps(circle.load_results(results_file("circle-medium.json"))))
    first = results["sittings"][0]
    results["sittings"] = [{**first, "wall_seconds": 600.0, "runs_added": n} for n in (1, 2, 0)]
    rows = dict(results_module.provenance_rows(results, "setfuncs.experiments.circle"))
    times = next(value for key, value in rows.items() if "(1 run)" in value)
    assert times.count("10 min on") == 3 and "(2 runs)" in times and "(0 runs)" in times and "(1 runs)" not in times
    assert "git commit of the code" in rows                          # one commit here; several read "git commits"
    results["sittings"][1]["git_commit"] = "another"
    assert "git commits of the code" in dict(results_module.provenance_rows(results, "setfuncs.experiments.circle"))


def test_the_provenance_counts_each_kernel_set_where_runs_record_it() -> None:
    """A file whose runs name their torch CPU kernels gets a row counting them (runs written before that
    counted as not recorded); a file none of whose runs names them gets no such row."""
    committed = circle.load_results(results_file("circle-medium.json"))
    rows = dict(results_module.provenance_rows(committed, "setfuncs.experiments.circle"))
    assert "CPU kernels (runs)" not in rows
    mixed = json.loads(json.dumps(committed))
    for run in mixed["runs"][:3]:
        run["worker"]["cpu_capability"] = "AVX2"
    mixed["runs"][3]["worker"]["cpu_capability"] = "AVX512"
    rows = dict(results_module.provenance_rows(mixed, "setfuncs.experiments.circle"))
    assert rows["CPU kernels (runs)"] == f"AVX2: 3; AVX512: 1; not recorded: {len(mixed['runs']) - 4}"
