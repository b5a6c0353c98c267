"""Commit 15ac30f's setfuncs/plain.py, isomorphic.py and population.py, unchanged (``git show``), for
``tests/test_float32_outputs_unchanged.py``."""
