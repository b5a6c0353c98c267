"""How far a run moves when only the CPU kernels change: the mixture rerun's sitting that trained with
torch's AVX-512 kernels, run by run against the same configuration and seed trained with the AVX2
ones.

On 28 November 2026 the mixture rerun was resumed on an AVX-512 machine before the engine pinned
the kernels (``engine.worker_environment``): that sitting's runs were set aside, kept in
``results/probes/mixture-avx512-sitting.json`` (the rerun file as that sitting left it, with only
its own runs), and trained again with the AVX2 kernels of every other sitting. This script pairs the
two by configuration and seed (:func:`~setfuncs.experiments.reruns.rerun_agreement`) on the metric
and the test NLL.

    python scripts/probes/kernel_sitting.py
"""

from __future__ import annotations

import json

import numpy as np
from _header import print_header

from setfuncs.experiments.reruns import rerun_agreement
from setfuncs.experiments.results import RESULTS_DIR, results_file

ROOT = RESULTS_DIR.parent

SITTING = RESULTS_DIR / "probes" / "mixture-avx512-sitting.json"


def main() -> None:
    print_header()
    path = results_file("mixture-medium.json")
    avx512 = json.loads(SITTING.read_text())
    rerun = json.loads(path.read_text())
    sitting = avx512["sittings"][-1]
    print(f"AVX-512 runs: {SITTING.relative_to(ROOT)}, {len(avx512['runs'])} runs of sitting "
          f"{len(avx512['sittings']) - 1} (commit {sitting['git_commit'][:7]}, {sitting['started']})")
    avx2 = {**rerun, "runs": [r for r in rerun["runs"] if (r.get("worker") or {}).get("cpu_capability") == "AVX2"]}
    print(f"AVX2 runs: {path.relative_to(ROOT)}, the {len(avx2['runs'])} runs that record AVX2 kernels")
    for metric in ("metric", "test_nll"):
        rows = rerun_agreement(avx512, avx2, metric)
        seeds = sum(r["seeds"] for r in rows.values())
        identical = sum(r["identical"] for r in rows.values())
        print(f"\n{metric}: {seeds} runs paired over {len(rows)} configurations, {identical} bit for bit")
        for spec, row in sorted(rows.items(), key=lambda item: -item[1]["largest_relative_difference"]):
            print(f"  {spec:14s} {row['identical']} of {row['seeds']} identical; largest relative difference "
                  f"{row['largest_relative_difference']:.2g}; AVX2 {row['median_committed']:+.4f}, "
                  f"AVX-512 {row['median_rerun']:+.4f}")
        differences = [r["largest_relative_difference"] for r in rows.values() if r["identical"] < r["seeds"]]
        if differences:
            print(f"  among the configurations that differ: median largest relative difference "
                  f"{np.median(differences):.2g}; above 1 %: {sum(d > 0.01 for d in differences)}")


if __name__ == "__main__":
    main()
