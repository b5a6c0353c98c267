# The two commands of the README:  `make book`  and  `make test`.
# Both set everything up first (a virtual environment in .venv from requirements.txt).
SHELL := /bin/bash
PY := .venv/bin/python
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: setup test book bench clean

setup: .venv/.stamp

.venv/.stamp: requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

test: setup
	$(PY) -m pytest -n 2 tests

book: setup
	.venv/bin/jupyter-book build . -W -n --keep-going

bench: setup
	$(PY) -m pip install --quiet --disable-pip-version-check -r benchmarks/requirements.txt
	OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 $(PY) benchmarks/aggregations.py

clean:
	rm -rf _build .venv
