"""A per-process cache that threads share: each value is made once, even when threads ask for it at once.

``functools.lru_cache`` is safe to call from several threads, but it does not wait: threads
that miss the same key at the same time each compute the value. When configurations train at once
in threads (:mod:`~setfuncs.experiments.concurrent`), they all ask for the same seeds' training
stream and test sets first; :func:`shared_cache` makes the first caller compute them while the
others wait for its result, so a stream that takes seconds of the GIL is drawn once, not once per
thread.
"""

from __future__ import annotations

import threading
from functools import lru_cache, wraps
from typing import Any, Callable

__all__ = ["shared_cache"]


def shared_cache(maxsize: int | None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``functools.lru_cache(maxsize)`` with one lock per function held during each call: a value
    is computed by one thread while the others asking for it wait, then read from the cache.
    The wrapper keeps ``cache_info`` and ``cache_clear``."""
    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        cached = lru_cache(maxsize=maxsize)(function)
        lock = threading.Lock()

        @wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return cached(*args, **kwargs)

        call.cache_info = cached.cache_info      # type: ignore[attr-defined]
        call.cache_clear = cached.cache_clear    # type: ignore[attr-defined]
        return call

    return decorate
