"""The batched EM baseline against scikit-learn's ``GaussianMixture``, run from the same start.

scikit-learn (a chapter dependency, imported on use) fits one population at a time. Started at the
package's :func:`~setfuncs.experiments.mixture.initial_parameters` and with the same tolerance,
regularisation and iteration limit (``tol = 1e-3``, ``reg_covar = 1e-6``, ``max_iter = 100``),
it should find the same smaller weight to rounding error, which checks
:func:`~setfuncs.experiments.mixture.fit_gmm`.
"""

from __future__ import annotations

import time

import numpy as np
from torch import Tensor

from .em import MAX_ITER, REG_COVAR, TOL, EMResult, fit_gmm, initial_parameters

__all__ = ["compare_with_sklearn"]


def compare_with_sklearn(x: Tensor) -> tuple[EMResult, np.ndarray, dict[str, float]]:
    """Fit a two-component mixture to every population of ``x`` ``[B, N, 2]`` (float64) with
    :func:`~setfuncs.experiments.mixture.fit_gmm` and with scikit-learn, timing both.

    Returns ``(ours, smaller_weights, seconds)``: our fits, scikit-learn's smaller fitted weight
    of every population ``[B]``, and the wall time of each (keys ``batched``, ``sklearn``).
    """
    from sklearn.mixture import GaussianMixture

    start = time.perf_counter()
    ours = fit_gmm(x)
    seconds = {"batched": time.perf_counter() - start}
    weights0, means0, covariances0 = initial_parameters(x)
    start = time.perf_counter()
    reference = []
    for i in range(len(x)):
        gm = GaussianMixture(2, covariance_type="full", reg_covar=REG_COVAR, tol=TOL, max_iter=MAX_ITER,
                             weights_init=weights0[i].numpy(), means_init=means0[i].numpy(),
                             precisions_init=np.linalg.inv(covariances0[i].numpy()))
        reference.append(gm.fit(x[i].numpy()).weights_.min())
    seconds["sklearn"] = time.perf_counter() - start
    return ours, np.array(reference), seconds
