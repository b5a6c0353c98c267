"""benchmarks/training.py in CI-sized form, on the CPU: it times the loss path (the mixture's masked
batches) and the objective path (attention's negative ELBO), eagerly and as an ensemble, and projects
each rerun's training time from the ensemble rates it measured. (Its GPU numbers come from a lent
GPU: results/benchmarks/.)"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def benchmark_module():
    spec = importlib.util.spec_from_file_location("training_benchmark", ROOT / "benchmarks" / "training.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("only, spec, title, configurations",
                         [("mixture", "max/max", "mixture MEDIUM", 56), ("attention", "mean", "attention MEDIUM", 10)])
def test_the_benchmark_times_both_modes_and_projects_the_rerun(monkeypatch, capsys, only: str, spec: str, title: str,
                                                               configurations: int) -> None:
    monkeypatch.setattr(sys, "argv", ["training.py", "--device", "cpu", "--only", only, "--specs", spec,
                                      "--steps", "6", "--seeds", "2", "--modes", "eager", "ensemble"])
    benchmark_module().main()
    out = capsys.readouterr().out
    row = re.search(rf"^\s+{re.escape(spec)}\s+eager\s+([\d.]+)/s .*\| ensemble\s+([\d.]+)/s \(.*\) x\s*([\d.]+)$",
                    out, re.M)
    assert row, out
    eager, ensemble, ratio = map(float, row.groups())
    # the rates are printed to 0.1 and the ratio to 0.01: the ratio of the true rates lies within
    # what the printed rates allow (at a few steps per second, 6.05 and 7.74 print as 6.1 and 7.7,
    # and their ratio, 0.78, as such)
    half = 0.05
    assert eager > half and ensemble > half
    assert (ensemble - half) / (eager + half) - 0.005 <= ratio <= (ensemble + half) / (eager - half) + 0.005
    projection = re.search(rf"the {title} rerun's {configurations} configurations x 10 seeds x (\d+) steps .*: "
                           r"([\d.]+) min to ([\d.]+) min", out)
    assert projection, out
    steps = int(projection.group(1))
    minutes = configurations * 10 * steps / 60
    low, high = minutes / (ensemble + half), minutes / (ensemble - half)
    assert low - 0.05 <= float(projection.group(2)) <= high + 0.05     # minutes printed to 0.1


def test_the_compiled_mode_times_a_compiled_objective_and_counts_graph_breaks(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", ["training.py", "--device", "cpu", "--only", "circle", "--specs", "max/max",
                                      "--steps", "6", "--seeds", "1", "--modes", "eager", "compiled",
                                      "--compile-backend", "aot_eager"])   # Inductor's numbers: test_compiled.py
    benchmark_module().main()
    out = capsys.readouterr().out
    row = re.search(r"^\s+max/max\s+eager\s+([\d.]+)/s .*\| compiled\s+([\d.]+)/s \(.*\) x\s*([\d.]+) "
                    r"\[(\d+) graph breaks\]$", out, re.M)
    assert row, out
    assert float(row.group(2)) > 0
    assert int(row.group(4)) == 0, "a plain Deep Set compiles whole: no graph break"


def test_specs_without_an_experiment_are_refused(monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", ["training.py", "--device", "cpu", "--specs", "max/max"])
    with pytest.raises(SystemExit) as stopped:
        benchmark_module().main()
    assert stopped.value.code == 2


def test_the_benchmark_times_ensembles_at_once_and_projects_the_circle_sweep_with_them(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", ["training.py", "--device", "cpu", "--only", "circle", "--specs", "max/max",
                                      "mean/mean", "--steps", "4", "--seeds", "2", "--modes", "ensemble", "concurrent"])
    benchmark_module().main()
    out = capsys.readouterr().out
    row = re.search(r"concurrent: the 2 ensembles of 2 above at once\s+([\d.]+)/s, one after another\s+([\d.]+)/s: "
                    r"x\s*([\d.]+)$", out, re.M)
    assert row, out
    together, apart, ratio = map(float, row.groups())
    assert together > 0 and apart > 0 and ratio == pytest.approx(together / apart, rel=0.01, abs=0.01)
    projection = re.search(r"as slow as the slowest; 2 at once \(x\s*([\d.]+)\): ([\d.]+) h to ([\d.]+) h", out)
    assert projection, out
    assert float(projection.group(1)) == pytest.approx(ratio, abs=0.01)
