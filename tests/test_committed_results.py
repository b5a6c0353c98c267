"""The committed results files the experiment chapters read: complete, with provenance, honest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import setfuncs as sf
from setfuncs.experiments import attention, circle, mixture, pointcloud
from setfuncs.experiments.sweeps import all_configurations, spec_of
from setfuncs.experiments.circle.table import paper_rows
from setfuncs.experiments.results import PAPER_RESULTS, RESULTS_DIR, load_paper, results_file

CIRCLE_AND_MIXTURE = {spec_of(*c) for c in all_configurations()}          # the paper's 36 and 20 with lme
#: (file, loader, the budget it must have used, the per-run metric, the configurations it must hold, the seeds
#: each configuration needs at least: issue 13's "enough runs to decide")
SWEEPS = [("circle-medium.json", circle.load_results, circle.MEDIUM, "mse", CIRCLE_AND_MIXTURE, 10),
          ("mixture-medium.json", mixture.load_results, mixture.MEDIUM, "metric", CIRCLE_AND_MIXTURE, 5),
          ("pointcloud-medium.json", pointcloud.load_results, pointcloud.MEDIUM, "accuracy", set(pointcloud.COLUMNS), 3),
          ("attention-medium.json", attention.load_results, attention.MEDIUM, "elbo", set(attention.SPECS), 5)]


@pytest.mark.parametrize("name, load, budget, metric, configurations, seeds", SWEEPS, ids=[s[0] for s in SWEEPS])
def test_committed_sweep_is_complete_and_has_provenance(name, load, budget, metric, configurations, seeds) -> None:
    """Every configuration with every seed, finite metrics, collapse recorded, and how the file was made."""
    results = load(results_file(name))
    assert results["complete"] is True and results["budget"] == budget.name
    assert results["budget_parameters"] == json.loads(json.dumps(vars(budget)))
    assert results["identity"]["budget_parameters"] == results["budget_parameters"]
    assert set(results["configurations"]) == configurations and results["runs_per_configuration"] >= seeds
    runs = results["runs"]
    assert not any("failure" in r for r in runs)                       # no engine failure is left in the file
    assert len(runs) == len(configurations) * results["runs_per_configuration"]
    assert {(r["spec"], r["seed"]) for r in runs} == {
        (spec, seed) for spec in results["configurations"] for seed in results["seeds"]}
    assert all(np.isfinite(r[metric]) for r in runs if r["error"] is None)
    assert all(isinstance(r["collapsed"], bool) for r in runs if r["error"] is None)
    assert sum(r["error"] is None for r in runs) >= 0.9 * len(runs)   # diverged runs are rare
    assert results["git_commit"] and results["wall_seconds"] > 0
    assert "sweep" in results["command"] and "--budget" in results["command"]
    assert set(results["versions"]) >= {"setfuncs", "torch", "numpy", "python", "dask"}
    for sitting in results["sittings"]:
        assert sitting["engine"].startswith("dask ") and sitting["git_commit"] and not sitting["git_commit"].endswith("-dirty")
    assert results["sittings"][-1]["ended"] in ("complete", "nothing to run")
    assert all(r["provenance"]["engine"] == results["sittings"][r["provenance"]["sitting"]]["engine"] for r in runs)


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
