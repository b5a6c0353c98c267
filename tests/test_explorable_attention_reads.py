"""Chapter 6's explorable (:mod:`setfuncs.explorables.attention_reads`) draws the chapter's toy task
and reads the weights the model's own ``attend`` gives.

* its populations follow the chapter's ``two_clusters``: 20 particles, a small cluster of 2 to 6
  (uniform, a chi-square test), round clusters of standard deviation 0.3 (the pooled within-cluster
  variance over 2,000 draws within 3 % of 0.09);
* the page's draw (``arTwoClusters`` in node) is Python's, particle for particle;
* the read-outs are torch's: the prediction is ``model(x)``, the weight on the small cluster the sum
  of ``attend``'s weights of read t over the small cluster, each read's softmax weights sum to one,
  and the read-outs do not change when the particles are listed in another order.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
import torch
from scipy import stats

from setfuncs.explorables.attention_reads import N_PARTICLES, SPREAD, AttentionReads, population, two_clusters
from setfuncs.explorables.esm import module_source
from setfuncs.explorables.weights import load_model

SEEDS = range(2000)


def test_draws_follow_the_chapters_distribution() -> None:
    draws = [two_clusters(seed) for seed in SEEDS]
    assert all(len(small) + len(large) == N_PARTICLES for small, large in draws)
    sizes = np.array([len(small) for small, _ in draws])
    counts = np.bincount(sizes, minlength=7)[2:]
    assert sizes.min() == 2 and sizes.max() == 6
    assert stats.chisquare(counts).pvalue > 1e-3, counts
    squares, degrees = 0.0, 0
    for small, large in draws:
        for cluster in (np.array(small), np.array(large)):
            squares += ((cluster - cluster.mean(axis=0)) ** 2).sum()
            degrees += 2 * (len(cluster) - 1)
    assert squares / degrees == pytest.approx(SPREAD**2, rel=0.03)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is missing")
def test_the_page_draws_the_same_populations(tmp_path) -> None:
    seeds = [0, 1, 7, 17, 999, 123456]
    script = tmp_path / "draw.mjs"
    script.write_text(module_source("attention_reads")
                      + f"\nconsole.log(JSON.stringify({json.dumps(seeds)}.map((s) => arTwoClusters(s))));\n")
    drawn = json.loads(subprocess.run(["node", str(script)], check=True, capture_output=True, text=True).stdout)
    for seed, page in zip(seeds, drawn):
        small, large = two_clusters(seed)
        assert len(page["small"]) == len(small)
        np.testing.assert_allclose(page["small"] + page["large"], small + large, rtol=0, atol=1e-12)


def test_readouts_are_torchs_weights_and_prediction() -> None:
    widget = AttentionReads.example()
    for spec in widget.state["models"]:
        for t in (1, 2, 4):
            state = {**widget.state, "model": spec, "t": t}
            model = load_model(state["models"][spec])
            small, large = population(state)
            x = torch.tensor([small + large])
            with torch.no_grad():
                w = model.aggregate.attend(model.memory(x))[1][0]
                prediction = model(x)[0]
            read = min(t, w.shape[0])
            torch.testing.assert_close(w.sum(dim=1), torch.ones(w.shape[0]))
            values = AttentionReads.readouts(state)
            assert values["weight_small"] == pytest.approx(w[read - 1, :len(small)].sum().item(), abs=1e-6)
            assert [values["prediction_x"], values["prediction_y"]] == pytest.approx(prediction.tolist(), abs=1e-6)
            assert [values["target_x"], values["target_y"]] == pytest.approx(np.mean(small, axis=0).tolist())
            shuffled = {**state, "population": {"small": small[::-1], "large": large[::-1]},
                        "population_seed": state["seed"]}
            again = AttentionReads.readouts(shuffled)
            assert again == pytest.approx(values, abs=1e-5)


def test_an_edited_population_is_kept_until_the_seed_changes() -> None:
    widget = AttentionReads.example()
    small, large = population(widget.state)
    edited = {**widget.state, "population": {"small": small[:1], "large": large}}
    assert AttentionReads.readouts(edited)["target_x"] == pytest.approx(small[0][0])
    other = {**edited, "seed": edited["seed"] + 1}
    assert population(other) == two_clusters(edited["seed"] + 1)
