"""Ctrl-C and SIGTERM during a sitting: held where a local cluster starts or closes, acted on once."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["STOP_SIGNALS", "signals_blocked", "Signals"]

#: Ctrl-C (SIGINT) and SIGTERM (what a batch system sends at its time limit), which stop a sweep.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def signals_blocked() -> Iterator[None]:
    """Inside the block SIGINT and SIGTERM wait (blocked) in this thread, and every thread and
    process started inside it is born with them blocked: the local cluster's event loop and, from
    its threads, every worker process, before it has imported anything. A Ctrl-C that a terminal
    sends to the whole process group while the workers start then reaches the client alone (once
    the block ends), never a half-started worker (which died with a traceback). Python's
    multiprocessing resource tracker unblocks both signals in the thread that starts it, so it is
    started here first."""
    if not hasattr(signal, "pthread_sigmask"):           # Windows: neither signal reaches a group
        yield
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class Signals:
    """Ctrl-C (SIGINT) and SIGTERM during a sitting, counted in ``received``: the first raises
    KeyboardInterrupt where the sweep is, except inside :meth:`protected` (a local cluster's start-up
    or close), where it is held until the section ends; later ones, while the sweep stops, are only
    counted. :meth:`listening` installs the handler."""

    def __init__(self) -> None:
        self.received = 0
        self._protected = 0
        self._held = False

    def _handle(self, signum: int, frame: object) -> None:
        self.received += 1
        if self.received == 1:
            if self._protected:
                self._held = True
            else:
                raise KeyboardInterrupt

    @contextmanager
    def protected(self) -> Iterator[None]:
        """Inside the block a first signal waits; it raises KeyboardInterrupt as the block ends."""
        self._protected += 1
        try:
            yield
        finally:
            self._protected -= 1
        if self._held and not self._protected:
            self._held = False
            raise KeyboardInterrupt

    @classmethod
    @contextmanager
    def listening(cls) -> Iterator["Signals"]:
        """A ``Signals`` that hears SIGINT and SIGTERM inside the block (in the main thread; in
        another, where Python cannot handle signals, it hears none). An ignored signal stays ignored."""
        signals = cls()
        previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                if signal.getsignal(signum) != signal.SIG_IGN:
                    previous[signum] = signal.signal(signum, signals._handle)
        try:
            yield signals
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, signal.SIG_DFL if handler is None else handler)
