"""scripts/gpu_sweeps.sh, the one command a lent GPU runs, here on the CPU at the QUICK
budget: it runs the sweeps it is asked for into their files, copies each file and a summary into
$OUT, records the commit that was sent, starts nothing once its deadline has passed, and refuses a
sweep it does not know. (Its GPU speed is measured only where a GPU is lent: the README's GPU
section.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from setfuncs.experiments import mixture, provenance

ROOT = Path(__file__).resolve().parents[1]
SENT = "0123abc"


def run_script(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    variables = {**os.environ, "OUT": str(tmp_path / "out"), "RESULTS": str(tmp_path / "results"), "DEVICE": "cpu",
                 "BUDGET": "quick", "CIRCLE_BUDGET": "quick", "RUNS": "1", "CIRCLE_RUNS": "1",
                 "PYTHON": sys.executable, "SETFUNCS_GIT_COMMIT": SENT, **env}
    return subprocess.run(["bash", str(ROOT / "scripts" / "gpu_sweeps.sh")], env=variables, capture_output=True,
                          text=True, timeout=600)


def test_the_script_runs_each_sweep_into_its_file_and_copies_it_back(tmp_path: Path) -> None:
    """One sweep, the cheapest (the circle at QUICK, one configuration and seed): the others take the
    same path through the script with another module and file."""
    done = run_script(tmp_path, ONLY="circle", CONFIGURATIONS="max/max", SECONDS_TOTAL="500", START_SECONDS="20")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    summary = (out / "summary.txt").read_text().splitlines()
    assert len(summary) == 2 and summary[1].startswith("circle: exit 0"), summary
    assert summary[0] == "concurrent: 1 (configurations at once need a GPU; DEVICE is cpu)"
    copied = json.loads((out / "circle-full.json").read_text())
    assert copied == json.loads((tmp_path / "results" / "circle-full.json").read_text())
    assert copied["complete"] and [r["spec"] for r in copied["runs"]] == ["max/max"]
    assert copied["git_commit"] == SENT and copied["runs"][0]["worker"]["git_commit"] == SENT
    command = copied["sittings"][0]["command"]     # its limit: the deadline (500 s) less the start-up (20 s)
    limit = command[command.index("--time-limit") + 1]
    assert limit.endswith("s") and 400 <= int(limit[:-1]) <= 480, limit
    assert "torch" in (out / "device.txt").read_text()


def test_no_sweep_starts_after_the_deadline(tmp_path: Path) -> None:
    done = run_script(tmp_path, ONLY="mixture pointcloud", SECONDS_TOTAL="0")
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "out" / "summary.txt").read_text().splitlines()[1:]   # the first: concurrent 1 on a CPU
    assert [line.split(":")[0] for line in lines] == ["mixture", "pointcloud"]
    assert all("not started" in line for line in lines)
    assert not list((tmp_path / "results").rglob("*.json"))


def test_the_attention_rerun_is_not_run_until_its_protocol_counts(tmp_path: Path) -> None:
    """The MNIST rerun of the attention sweep failed in every run of its first sitting: a window spends nothing on it."""
    done = run_script(tmp_path, ONLY="attention", SECONDS_TOTAL="500")
    assert done.returncode == 0, done.stderr
    (line,) = (tmp_path / "out" / "summary.txt").read_text().splitlines()[1:]
    assert line.startswith("attention: not run: the MNIST rerun waits for a protocol that counts")
    assert not list((tmp_path / "results").rglob("*.json"))


def write_sweep(path: Path, budget: dict, runs_per_configuration: int, complete: bool = True) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"complete": complete, "budget_parameters": budget,
                                "runs_per_configuration": runs_per_configuration, "runs": []}))
    return path.read_text()


def test_a_rerun_that_has_landed_is_not_run_again(tmp_path: Path) -> None:
    """The mixture rerun complete in results/ at today's budget and seeds: not run (it would begin a new
    file in results/pending/), its file untouched. Fewer seeds, another budget, an incomplete file or a
    pending file to resume: run (here the deadline has passed, so each says 'not started')."""
    landed = tmp_path / "results" / "mixture-medium.json"
    today = json.loads(json.dumps(vars(mixture.QUICK)))
    before = write_sweep(landed, today, 2)
    done = run_script(tmp_path, ONLY="mixture", RUNS="2")
    assert done.returncode == 0, done.stderr
    line = (tmp_path / "out" / "summary.txt").read_text().splitlines()[-1]
    assert line.startswith("mixture: landed in") and line.endswith("not run"), line
    assert landed.read_text() == before and not list((tmp_path / "results" / "pending").glob("*.json"))
    for budget, seeds, complete, pending in [(today, 1, True, False), ({**today, "steps": 1}, 2, True, False),
                                             (today, 2, False, False), (today, 2, True, True)]:
        write_sweep(landed, budget, seeds, complete)
        if pending:
            write_sweep(tmp_path / "results" / "pending" / "mixture-medium.json", today, 2, complete=False)
        (tmp_path / "out" / "summary.txt").unlink()
        done = run_script(tmp_path, ONLY="mixture", RUNS="2", SECONDS_TOTAL="0")
        assert done.returncode == 0, done.stderr
        line = (tmp_path / "out" / "summary.txt").read_text().splitlines()[-1]
        assert line.startswith("mixture: not started"), (budget, seeds, complete, pending, line)


def test_an_unknown_sweep_is_refused_by_name_before_any_sweep_runs(tmp_path: Path) -> None:
    done = run_script(tmp_path, ONLY="circle circles")
    assert done.returncode == 2 and "unknown sweep 'circles'" in done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize("value, expected", [("0123abc", "0123abc"), ("0123abc-dirty", "0123abc-dirty"), ("HEAD", None),
                                             ("0123", None)])
def test_the_commit_that_was_sent_replaces_the_copys_git_metadata(monkeypatch, value: str, expected: str | None
                                                                   ) -> None:
    monkeypatch.setenv(provenance.COMMIT_VARIABLE, value)
    provenance.git_commit.cache_clear()
    try:
        if expected is None:
            with pytest.raises(ValueError, match=provenance.COMMIT_VARIABLE):
                provenance.git_commit()
        else:
            assert provenance.git_commit() == expected
    finally:
        provenance.git_commit.cache_clear()
