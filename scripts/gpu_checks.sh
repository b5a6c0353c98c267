#!/usr/bin/env bash
# The GPU checks of issue 14 in one run, on a machine with a CUDA GPU (never in CI):
#   1. tests/test_cuda.py (graphed = eager, ensembles = seeds one by one, fallbacks, the sweep on a GPU,
#      every rerun's ensemble replaying one graph: mixture, attention, point clouds),
#      with the CPU suites of the same code, in 4 pytest workers;
#   2. benchmarks/training.py (eager, graphed, ensemble of 20: model-steps per second), then the
#      circle specs graphed with and without torch.compile (compiled.txt: issue 30's candidate);
#   3. the circle sweep command at the FULL budget for two configurations x 20 seeds (max/max, the
#      fastest, and r-lse/r-lse, the slowest), timed end to end, into $OUT/circle-full-gpu.json.
# Usage: OUT=folder bash scripts/gpu_checks.sh   (every log lands in $OUT)
set -u
OUT=${OUT:-gpu-checks}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
$PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')" | tee "$OUT/device.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 | tee -a "$OUT/device.txt"
start=$(date +%s)
$PY -m pytest -q -n 4 -p no:cacheprovider tests/test_cuda.py tests/test_ensemble.py tests/test_devices.py 2>&1 | tee "$OUT/pytest.txt"
echo "tests: $(( $(date +%s) - start )) s" | tee -a "$OUT/pytest.txt"
start=$(date +%s)
$PY benchmarks/training.py --steps "${BENCH_STEPS:-100}" 2>&1 | tee "$OUT/benchmark.txt"
echo "benchmark: $(( $(date +%s) - start )) s" | tee -a "$OUT/benchmark.txt"
start=$(date +%s)
timeout "${COMPILE_SECONDS:-300}" $PY benchmarks/training.py --only circle --modes eager graphed compiled \
    --steps "${BENCH_STEPS:-100}" 2>&1 | tee "$OUT/compiled.txt"
echo "compiled benchmark: exit ${PIPESTATUS[0]}, $(( $(date +%s) - start )) s" | tee -a "$OUT/compiled.txt"
start=$(date +%s)
timeout "${SWEEP_SECONDS:-360}" $PY -m setfuncs.experiments.circle sweep --budget full --runs 20 \
    --configurations max/max r-lse/r-lse --device cuda --jobs 1 --out "$OUT/circle-full-gpu.json" --no-progress \
    2>&1 | tee "$OUT/sweep.txt"
echo "sweep command: exit ${PIPESTATUS[0]}, $(( $(date +%s) - start )) s wall" | tee -a "$OUT/sweep.txt"
