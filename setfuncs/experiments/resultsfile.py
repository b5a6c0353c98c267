"""A sweep's results file: one writer at a time, atomic rewrites, and the runs of earlier sittings.

:class:`SweepFile` is used as a context manager by the one process that writes the file (the sweep's
client, never a worker):

- **Locked.** It holds an exclusive lock (:class:`filelock.FileLock` on ``<file>.lock``) from entry
  to exit, and writes its PID, host and command into the lock file, so a second sweep on the same
  file is refused at once with a :class:`SweepLocked` that names the other writer.
- **Resumable, never destructive.** On entry it reads the file an earlier sitting wrote
  (``SweepFile.previous``) when its ``identity`` (experiment, budget and its parameters, data)
  equals this sweep's; any other file, or one that is not a sweep's, is refused with a
  :class:`SweepFileError` that names the file, what differs, and the fix. With ``restart=True`` the
  old file is moved aside to ``<file>.<UTC time>.bak`` first; nothing is ever deleted.
- **Atomic.** :meth:`SweepFile.write` writes a uniquely named temporary file in the same folder,
  flushes it to disk and renames it over the file (:func:`os.replace`), so a reader sees the old
  file or the new one, never half of one; a failed write (a full disk, a read-only folder) raises
  a :class:`SweepWriteError` and leaves the last complete file in place.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any

import filelock

__all__ = ["SweepFile", "SweepFileError", "SweepLocked", "SweepWriteError", "differences", "backup_path"]

_FIX = "pass --restart to move it aside to a timestamped backup and start afresh, or choose another --out"


class SweepFileError(ValueError):
    """The file at ``--out`` cannot be resumed by this sweep (another experiment or budget, not JSON, ...)."""


class SweepLocked(RuntimeError):
    """Another process is writing the same results file."""


class SweepWriteError(OSError):
    """The results file could not be written (disk full, read-only, ...); the last complete file is kept."""


def differences(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """The places where two JSON values differ, e.g. ``["budget_parameters.steps: 2000 in the file,
    5000 in this sweep"]`` (``theirs`` is the file's value, ``ours`` this sweep's)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        found: list[str] = []
        for key in sorted(set(ours) | set(theirs), key=str):
            here = f"{where}.{key}" if where else str(key)
            if key not in theirs:
                found.append(f"{here}: missing in the file, {ours[key]!r} in this sweep")
            elif key not in ours:
                found.append(f"{here}: {theirs[key]!r} in the file, missing in this sweep")
            else:
                found += differences(ours[key], theirs[key], here)
        return found
    return [] if ours == theirs else [f"{where or 'value'}: {theirs!r} in the file, {ours!r} in this sweep"]


def backup_path(path: Path, now: datetime | None = None) -> Path:
    """A name for moving ``path`` aside that no file has yet: ``<name>.<UTC time>.bak`` (``-1``, ``-2``
    ... appended when two backups fall in the same second)."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.{stamp}.bak")
    count = 0
    while candidate.exists():
        count += 1
        candidate = path.with_name(f"{path.name}.{stamp}-{count}.bak")
    return candidate


class SweepFile:
    """The results file at ``path``, locked for one sweep (see the module's docstring).

    Args:
        path: the JSON file (its folder is created if missing).
        identity: what an earlier sitting's file must hold under ``"identity"`` to be resumed.
        restart: move an existing file aside (:func:`backup_path`) instead of resuming it.

    Attributes (inside the ``with`` block):
        previous: the earlier sitting's results (a dict with ``"runs"``), or None.
        backup: where an existing file was moved by ``restart`` (None if nothing was moved).
    """

    def __init__(self, path: str | os.PathLike, identity: dict, restart: bool = False) -> None:
        self.path = Path(path)
        self.identity = identity
        self.restart = restart
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.previous: dict | None = None
        self.backup: Path | None = None
        self._lock: filelock.BaseFileLock | None = None

    def __enter__(self) -> "SweepFile":
        if self.path.is_dir():
            raise SweepFileError(f"--out {self.path} is a folder; pass the path of a JSON file in it")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise SweepWriteError(err.errno, f"cannot create the folder of {self.path}: {err.strerror}; "
                                             f"choose an --out in a writable folder") from None
        self._acquire()
        try:
            if self.path.exists() and self.restart:
                self.backup = backup_path(self.path)
                os.replace(self.path, self.backup)
            self.previous = self._read_previous()
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._release()

    def _acquire(self) -> None:
        lock = filelock.FileLock(self.lock_path, is_singleton=False)
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            holder = self._holder()
            raise SweepLocked(f"{self.path} is being written by another sweep ({holder}); wait for it to "
                              f"finish, stop it, or choose another --out") from None
        except OSError as err:
            raise SweepWriteError(err.errno, f"cannot create the lock file {self.lock_path}: "
                                             f"{err.strerror}; choose an --out in a writable folder") from None
        self._lock = lock
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.lock_path.write_text(f"pid {os.getpid()} on {socket.gethostname()} since {started}: "
                                  f"{' '.join(sys.argv)}\n")

    def _holder(self) -> str:
        try:
            text = self.lock_path.read_text().strip()
        except OSError:
            text = ""
        return text or "its PID is not recorded"

    def _release(self) -> None:
        if self._lock is None:
            return
        self.lock_path.write_text("")
        self._lock.release()
        self._lock = None

    def _read_previous(self) -> dict | None:
        if not self.path.exists():
            return None
        try:
            results = json.loads(self.path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise SweepFileError(f"{self.path} exists but is not a JSON results file ({err}); it was left as "
                                 f"it is: {_FIX}") from None
        if not isinstance(results, dict) or not isinstance(results.get("runs"), list):
            raise SweepFileError(f"{self.path} exists but is not a sweep's results file (no list of 'runs'); "
                                 f"it was left as it is: {_FIX}")
        if "identity" not in results:
            raise SweepFileError(f"{self.path} was written by a sweep that could not be resumed (it records no "
                                 f"'identity'), so its runs cannot be checked against this sweep; it was left "
                                 f"as it is: {_FIX}")
        found = differences(self.identity, results["identity"])
        if found:
            raise SweepFileError(f"{self.path} holds runs of another sweep, so this one cannot add to it: "
                                 f"{'; '.join(found)}. It was left as it is: {_FIX}")
        return results

    def write(self, results: dict) -> None:
        """Replace the file by ``results`` (JSON) atomically; a :class:`SweepWriteError` if it cannot."""
        text = json.dumps(results, indent=1)
        mode = stat.S_IMODE(self.path.stat().st_mode) if self.path.exists() else 0o644
        try:
            descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.",
                                                     suffix=".tmp")
        except OSError as err:
            raise SweepWriteError(err.errno, f"cannot write {self.path}: {err.strerror}") from None
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, mode)
            os.replace(temporary, self.path)
        except OSError as err:
            Path(temporary).unlink(missing_ok=True)
            raise SweepWriteError(err.errno, f"cannot write {self.path}: {err.strerror}") from None
