"""What an attention sweep's results file was made from, in words for chapter 11's tables."""

from __future__ import annotations

from ..results import provenance_rows, sorted_runs

__all__ = ["data_label", "sweep_provenance"]


def data_label(results: dict) -> str:
    """The digits and canvases of a results file, e.g. ``"MNIST digits on 50×50 canvases"`` or
    ``"scikit-learn digits on 32×32 canvases (not MNIST)"``."""
    data = results["data"]
    sklearn = data["source"] == "sklearn"
    return (f"{'scikit-learn digits' if sklearn else 'MNIST digits'} on {data['canvas_size']}×{data['canvas_size']} "
            f"canvases" + (" (not MNIST)" if sklearn else ""))


def sweep_provenance(results: dict) -> list[tuple[str, str]]:
    """``(what, value)`` rows: the data (digits, canvases and their digit counts), the budget, the
    failed runs (collapsed, or counting at chance) by spec and seed, the test population sizes, then
    :func:`~setfuncs.experiments.results.provenance_rows` (command, commits, hardware, versions)."""
    data, parameters = results["data"], results["budget_parameters"]
    finished = [r for r in sorted_runs(results) if "failure" not in r and r["error"] is None]
    failed = [r for r in finished if r["failed"]]
    return [
        ("data", f"{data_label(results)}: {data['digits']}; {data['train_canvases']:,} training and "
                 f"{data['test_canvases']:,} test canvases with 0/1/2 digits: "
                 f"{'/'.join(map(str, data['test_counts']))}"),
        ("budget", f"{results['budget']}: {parameters['steps']:,} steps of {parameters['batch']} canvases, "
                   f"{parameters['particles']} training particles, LSTM width {parameters['hidden']}, "
                   f"Deep Set width {parameters['set_hidden']}"),
        ("failed runs", f"{len(failed)} of {len(finished)}: "
                        + (", ".join(f"{r['spec']} seed {r['seed']}" for r in failed) or "none")),
        ("test population sizes", ", ".join(map(str, results["evaluation"]["sizes"]))),
        *provenance_rows(results, "setfuncs.experiments.attention"),
    ]
