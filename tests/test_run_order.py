"""The order of the runs in a results file is the order they finished in, which no two sittings share:
no table, finding or printed number may depend on it. Every committed results file, its
runs shuffled, gives exactly what it gives in its own order: read from a file (``load_results``), and
handed to the readers as it is (a results dict in memory, as a sweep returns it or a test builds it)."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from setfuncs.experiments import attention as at
from setfuncs.experiments import circle, mixture
from setfuncs.experiments import pointcloud as pc
from setfuncs.experiments.attention.by_size import metrics_by_size
from setfuncs.experiments.attention.describe import sweep_provenance
from setfuncs.experiments.convergence import checkpoint_curves, late_change, loss_curves
from setfuncs.experiments.attention.__main__ import main as attention_main
from setfuncs.experiments.circle.__main__ import main as circle_main
from setfuncs.experiments.circle.medians import lowest_counts, median_grids
from setfuncs.experiments.mixture.__main__ import main as mixture_main
from setfuncs.experiments.mixture.accuracy import accuracy_against_metric
from setfuncs.experiments.mixture.metric import metric_by_run
from setfuncs.experiments.mixture.sensitivity import RESULTS_NAME, load_sensitivity, sensitivity_table
from setfuncs.experiments.mixture.violins import violin_groups, violin_table
from setfuncs.experiments.pointcloud.__main__ import main as pointcloud_main
from setfuncs.experiments.pointcloud.costs import cost_table, throughput_spread
from setfuncs.experiments.pointcloud.metric import accuracy_by_run
from setfuncs.experiments.results import results_file, sorted_runs

PAPER = results_file("paper-results.json")
#: The permutations of "runs" each test tries (seeds of ``random.Random``).
SHUFFLES = (1, 2, 3)


def snapshot(value: Any) -> str:
    """``value`` (rows, findings, arrays) as text that holds every float to the last bit and every order."""
    def plain(v: Any) -> Any:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return plain(dataclasses.asdict(v))
        if isinstance(v, dict):
            return [(repr(k), plain(x)) for k, x in v.items()]
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, np.ndarray):
            return [float(x).hex() for x in v.ravel()] + [str(v.shape)]
        if isinstance(v, (float, np.floating)):
            return float(v).hex()
        return repr(v)

    return json.dumps(plain(value))


def shuffled(results: dict, seed: int) -> dict:
    """``results`` with its runs in another order (the same records)."""
    runs = list(results["runs"])
    random.Random(seed).shuffle(runs)
    assert runs != results["runs"]
    return {**results, "runs": runs}


def shuffled_file(name: str, seed: int, tmp_path: Path) -> Path:
    """A copy of ``results/<name>`` whose runs are in another order."""
    record = json.loads(results_file(name).read_text())
    copy = shuffled(record, seed)
    path = tmp_path / f"shuffled-{seed}-{Path(name).name}"
    path.write_text(json.dumps(copy))
    return path


def circle_outputs(results: dict) -> str:
    mse_of = circle.mse_by_spec(results)
    return snapshot([
        [circle.circle_table(results, 20, 1000, 0, paper=PAPER, variant=v) for v in ("paper", "lme")],
        [circle.by_population_size(results, v) for v in ("paper", "lme")],
        mse_of, lowest_counts(median_grids(mse_of)), circle.circle_findings(results, PAPER),
        circle.lme_against_lse(results)])


def mixture_outputs(results: dict) -> str:
    return snapshot([
        violin_table(results, 5, 1000, 0), [violin_groups(results, by, 5, 1000, 0) for by in ("equivariant", "final")],
        [mixture.mixture_findings(results, PAPER, summary=s) for s in ("median", "mean")],
        accuracy_against_metric(results, 0.05), [mixture.by_population_size(results, v) for v in ("paper", "lme")],
        [metric_by_run(results, s) for s in ("median", "mean")]])


def pointcloud_outputs(results: dict) -> str:
    return snapshot([pc.pointcloud_table(results, PAPER), pc.accuracy_curves(results), pc.pointcloud_findings(results, PAPER),
                     pc.lme_against_lse(results), cost_table(results), throughput_spread(results),
                     [accuracy_by_run(results, n, c) for n in pc.TABLE_SIZES for c in (True, False)]])


def attention_outputs(results: dict) -> str:
    return snapshot([at.attention_table(results), metrics_by_size(results), at.never_count_two(results),
                     at.attention_findings(results, PAPER), sweep_provenance(results)])


def convergence_outputs(results: dict, group: str, higher_is_better: bool) -> str:
    """What chapters 8-11 draw and print of a file's learning curves and checkpoints, in their order."""
    return snapshot([list(checkpoint_curves(results, group).items()), list(loss_curves(results, group).items()),
                     late_change(results, group, higher_is_better)])


EXPERIMENTS: dict[str, tuple[str, Callable[[Path], dict], Callable[[dict], str]]] = {
    "circle": ("circle-medium.json", circle.load_results, circle_outputs),
    "mixture": ("mixture-medium.json", mixture.load_results, mixture_outputs),
    "pointcloud": ("pointcloud-medium.json", pc.load_results, pointcloud_outputs),
    "attention": ("attention-medium.json", at.load_results, attention_outputs),
    "mixture convergence": ("mixture-medium.json", mixture.load_results,
                            lambda r: convergence_outputs(r, "setting", False)),
    "pointcloud convergence": ("pointcloud-medium.json", pc.load_results,
                               lambda r: convergence_outputs(r, "spec", True)),
    "attention convergence": ("attention-medium.json", at.load_results,
                              lambda r: convergence_outputs(r, "spec", True)),
}


@pytest.mark.parametrize("experiment", list(EXPERIMENTS))
def test_the_readers_do_not_depend_on_the_order_of_the_runs(experiment: str) -> None:
    """Tables, findings and the per-run maps from the committed file's runs in three other orders,
    handed over in memory: to the last bit what the file's order gives."""
    name, load, outputs = EXPERIMENTS[experiment]
    results = load(results_file(name))
    expected = outputs(results)
    for seed in SHUFFLES:
        assert outputs(shuffled(results, seed)) == expected, f"{experiment}, runs shuffled with seed {seed}"


@pytest.mark.parametrize("experiment", list(EXPERIMENTS))
def test_a_shuffled_file_reads_as_the_committed_one(experiment: str, tmp_path: Path) -> None:
    """``load_results`` of a copy whose runs are in another order (the file's order is kept: the
    readers order the runs): the same tables."""
    name, load, outputs = EXPERIMENTS[experiment]
    results = load(results_file(name))
    again = load(shuffled_file(name, SHUFFLES[0], tmp_path))
    assert again["runs"] != results["runs"] and sorted_runs(again) == sorted_runs(results)
    assert outputs(again) == outputs(results)


MAINS = {"circle": ("circle-medium.json", circle_main), "mixture": ("mixture-medium.json", mixture_main),
         "pointcloud": ("pointcloud-medium.json", pointcloud_main), "attention": ("attention-medium.json", attention_main)}


@pytest.mark.parametrize("experiment", list(MAINS))
def test_the_table_command_prints_the_same_numbers_for_a_shuffled_file(experiment: str, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m ... table FILE --paper ...``: the committed file and a copy with its runs shuffled
    print the same text (Table 1's median best ratios and the violins' shares of peaks moved before)."""
    name, main = MAINS[experiment]
    main(["table", str(results_file(name)), "--paper", str(PAPER)])
    expected = capsys.readouterr().out
    assert "findings" in expected
    main(["table", str(shuffled_file(name, SHUFFLES[1], tmp_path)), "--paper", str(PAPER)])
    assert capsys.readouterr().out == expected


def test_the_sensitivity_probe_does_not_depend_on_the_order_of_its_runs(tmp_path: Path) -> None:
    path = results_file(RESULTS_NAME)
    expected = snapshot(sensitivity_table(load_sensitivity(path)))
    record = json.loads(path.read_text())
    copy = shuffled(record, SHUFFLES[0])
    (tmp_path / "probe.json").write_text(json.dumps(copy))
    assert snapshot(sensitivity_table(load_sensitivity(tmp_path / "probe.json"))) == expected
    assert snapshot(sensitivity_table(shuffled(load_sensitivity(path), SHUFFLES[1]))) == expected


def test_sorted_runs_orders_by_configuration_then_seed() -> None:
    runs = [{"spec": "b", "seed": 0}, {"spec": "a", "seed": 10}, {"spec": "a", "seed": 2}, {"spec": "b", "seed": 1}]
    assert [(r["spec"], r["seed"]) for r in sorted_runs(runs)] == [("a", 2), ("a", 10), ("b", 0), ("b", 1)]  # 10 > 2
    assert sorted_runs({"runs": runs}) == sorted_runs(runs) and runs[0] == {"spec": "b", "seed": 0}   # not in place
    probe = [{"sigma": 0.7, "spec": "a", "seed": 0}, {"sigma": 0.5, "spec": "b", "seed": 1}]
    assert [r["sigma"] for r in sorted_runs(probe, ("sigma", "spec", "seed"))] == [0.5, 0.7]
