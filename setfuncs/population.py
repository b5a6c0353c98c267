"""Populations as tensors, and the checks every set function runs on its input.

A batch of populations is a dense tensor ``x`` of shape ``[B, N, D]``: ``B`` populations of ``N``
particles with ``D`` features each. Populations of different sizes are padded to a common ``N``
and described by a boolean ``mask`` of shape ``[B, N]`` (``True`` = a real particle). ``mask=None``
means every particle is real, the fast path.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

import torch
from torch import Tensor

__all__ = ["check_population", "check_parameters", "check_sizes", "pad_populations", "particle_counts",
           "sync_free", "syncs_allowed", "SyncRequired"]

_SYNC_FREE: ContextVar[bool] = ContextVar("setfuncs_sync_free", default=False)


@contextmanager
def sync_free() -> Iterator[None]:
    """Inside the block no set function reads a tensor's values to decide what to do next.

    Reading a value (``bool(t)``, ``t.item()``) makes the host wait for a GPU, breaks a CUDA-graph
    capture and is not allowed under ``torch.vmap``. Inside the block:

    - :func:`check_population` checks shapes, dtypes and devices only; whoever enters the block
      checks the batch's values once before (:func:`setfuncs.train.fit` does, once per batch);
    - reductions take their always-safe path (padding overwritten before it meets a product)
      instead of testing whether the fast one was safe;
    - a reduction that cannot be computed without looking (the power mean's positivity) raises
      :class:`SyncRequired`, which makes a graph capture or an ensemble fall back.
    """
    token = _SYNC_FREE.set(True)
    try:
        yield
    finally:
        _SYNC_FREE.reset(token)


def syncs_allowed() -> bool:
    """False inside :func:`sync_free`."""
    return not _SYNC_FREE.get()


class SyncRequired(RuntimeError):
    """A set function had to read a tensor's values inside :func:`sync_free`."""


def check_population(x: Tensor, mask: Tensor | None, features: int | None = None) -> None:
    """Raise a ``ValueError`` that says what to fix unless ``(x, mask)`` is a valid population batch.

    Checks: ``x`` is a floating tensor of shape ``[B, N, D]`` (with ``D == features`` when given);
    ``mask`` is ``None`` or a boolean ``[B, N]`` tensor; every population has at least one particle
    (this last check reads the mask's values and is left out inside :func:`sync_free`).
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor of shape [B, N, D], got {type(x).__name__}; "
                        "convert with torch.as_tensor(x, dtype=torch.float32)")
    if x.dim() != 3:
        hint = (" (one population? add a batch axis with x.unsqueeze(0); scalar particles? add a "
                "feature axis with x.unsqueeze(-1))" if x.dim() == 2 else "")
        raise ValueError(f"x must have shape [B, N, D] = [populations, particles, features], got "
                         f"shape {tuple(x.shape)} with {x.dim()} dimensions{hint}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got dtype {x.dtype}; convert with x.float()")
    if features is not None and x.shape[-1] != features:
        raise ValueError(f"x has {x.shape[-1]} features per particle but this module was built for "
                         f"{features}; build it with features={x.shape[-1]} or project x first")
    if mask is None:
        if x.shape[1] == 0:
            raise ValueError("x holds populations with no particle (N = 0); every population needs at "
                             "least one particle")
        return
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a bool torch.Tensor of shape [B, N] or None, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise ValueError(f"mask must have dtype torch.bool (True = real particle), got {mask.dtype}; "
                         "convert with mask.bool() or build it with a comparison such as counts[:, None] > arange(N)")
    if mask.shape != x.shape[:2]:
        raise ValueError(f"mask must have shape [B, N] = {tuple(x.shape[:2])} to match x of shape "
                         f"{tuple(x.shape)}, got {tuple(mask.shape)}")
    if mask.device != x.device:
        raise ValueError(f"mask is on {mask.device} but x is on {x.device}; move it with mask.to(x.device)")
    if not syncs_allowed():
        return
    empty = ~mask.any(dim=1)
    if bool(empty.any()):
        rows = empty.nonzero().flatten().tolist()
        shown = rows[:10]
        more = f" and {len(rows) - 10} more" if len(rows) > 10 else ""
        raise ValueError(f"population(s) at batch index {shown}{more} have no real particle (mask is all "
                         "False): an aggregation of an empty population is undefined; drop empty "
                         "populations before calling the set function")


def check_parameters(module: torch.nn.Module, x: Tensor) -> None:
    """Raise a ``ValueError`` that says how to fix it unless ``module``'s parameters have ``x``'s dtype
    and device.

    The package's rule: a module *without* parameters (a plain aggregation) computes in its input's
    dtype and on its input's device; a module *with* parameters (a learnable aggregation, an
    equivariant layer, a model) must be converted to the input's dtype and device first
    (``module.to(x.dtype)``, ``module.to(x.device)``). It is never converted silently: a float64
    model fed float32 data is as likely a mistake as a wish.
    """
    parameter = next(module.parameters(), None)
    if parameter is None:
        return
    if parameter.dtype != x.dtype:
        raise ValueError(f"{type(module).__name__} has {parameter.dtype} parameters but the input is {x.dtype}; "
                         f"convert the module with module.to({x.dtype}) or the input with x.to({parameter.dtype})")
    if parameter.device != x.device:
        raise ValueError(f"{type(module).__name__} is on {parameter.device} but the input is on {x.device}; move "
                         f"the module with module.to(x.device) or the input with x.to('{parameter.device}')")


def check_sizes(**sizes: int) -> None:
    """Raise a ``ValueError`` naming the argument unless every one of ``sizes`` (name: value, e.g. a
    layer's ``out_features``) is a positive int: a layer that reads or writes no feature is a mistake,
    and a negative or fractional size would otherwise fail inside torch without the argument's name."""
    for name, size in sizes.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"{name} must be a positive int, got {size!r}")


def particle_counts(x: Tensor, mask: Tensor | None) -> Tensor:
    """Number of real particles per population, shape ``[B, 1]`` in ``x``'s dtype."""
    if mask is None:
        return x.new_full((x.shape[0], 1), float(x.shape[1]))
    return mask.sum(dim=1, keepdim=True).to(x.dtype)


def pad_populations(populations: list[Tensor], value: float = 0.0) -> tuple[Tensor, Tensor]:
    r"""Stack ragged populations ``[N_b, D]`` into ``x: [B, max N_b, D]`` and ``mask: [B, max N_b]``.

    :math:`x_{b,i} = p_{b,i}` for :math:`i < N_b` and ``value`` beyond (padding, which set functions
    ignore through the mask), :math:`\text{mask}_{b,i} = (i < N_b)`. Every population must have the
    same features ``D``, dtype and device: a ValueError names the populations that differ and how to
    make them agree (a float64 population beside float32 ones is never rounded silently).
    """
    if not populations:
        raise ValueError("pad_populations needs at least one population")
    for i, p in enumerate(populations):
        if not isinstance(p, Tensor):
            raise TypeError(f"population {i} must be a torch.Tensor of shape [N, D], got {type(p).__name__}; "
                            "convert it with torch.as_tensor(p, dtype=torch.float32)")
        if p.dim() != 2:
            raise ValueError(f"population {i} must have shape [N, D], got {tuple(p.shape)}")
        if p.shape[0] == 0:
            raise ValueError(f"population {i} has no particle; every population needs at least one")
    _check_agree(populations, "features", lambda p: f"{p.shape[1]} features",
                 "every population needs the same D: select or project the features so that they agree")
    widest = functools.reduce(torch.promote_types, (p.dtype for p in populations))
    _check_agree(populations, "dtypes", lambda p: p.dtype,
                 f"pad_populations does not round or convert silently: convert them explicitly, e.g. "
                 f"[p.to({widest}) for p in populations]")
    _check_agree(populations, "devices", lambda p: p.device,
                 f"move them to one device, e.g. [p.to('{populations[0].device}') for p in populations]")
    x = torch.nn.utils.rnn.pad_sequence(populations, batch_first=True, padding_value=value)
    lengths = torch.tensor([p.shape[0] for p in populations], device=x.device)
    mask = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
    return x, mask


def _check_agree(populations: list[Tensor], what: str, of: Callable[[Tensor], object], fix: str) -> None:
    """A ValueError naming the populations by index, grouped by ``of(p)`` (their features, dtype or
    device: ``what``), unless every population has the same, ending with ``fix``."""
    groups: dict[object, list[int]] = {}
    for i, p in enumerate(populations):
        groups.setdefault(of(p), []).append(i)
    if len(groups) > 1:
        shown = "; ".join(f"population(s) {_indices(rows)}: {key}" for key, rows in groups.items())
        raise ValueError(f"pad_populations: the populations differ in their {what} ({shown}); {fix}")


def _indices(rows: list[int]) -> str:
    """``rows`` as ``[0, 2, 5]``, the first ten and a count of the others."""
    more = f" and {len(rows) - 10} more" if len(rows) > 10 else ""
    return f"{rows[:10]}{more}"
