"""A sweep's results file: one writer at a time, atomic rewrites, and the runs of earlier sittings.

:class:`SweepFile` is used as a context manager by the one process that writes the file (the sweep's
client, never a worker):

- **Locked.** It holds an exclusive lock (:class:`filelock.FileLock` on ``<file>.lock``) from entry
  to exit, and writes its PID, host and command into the lock file, so a second sweep on the same
  file is refused at once with a :class:`SweepLocked` that names the other writer. The file is the
  one a path *resolves* to (:func:`os.path.realpath`): a symbolic link and its target are one
  file, locked as one, and a write replaces the target, never the link. The lock file is the
  sweep's own: created exclusively, every line it holds begins with :data:`LOCK_MARK`, and an
  existing ``<file>.lock`` that is not such a file (a ``Pipfile.lock`` beside ``--out Pipfile``, a
  link, a folder) is refused and left as it is (an empty one is a lock an earlier version of this
  package released, when the results file is there too).
- **Only regular files.** ``--out`` must be a regular file or absent: a FIFO, a device
  (``/dev/null``), a socket, or a file with a second hard link (a write replaces the file, which
  would part the two names, each with its own lock) is refused before anything is opened or moved.
- **Resumable, never destructive.** On entry it reads the file an earlier sitting wrote
  (``SweepFile.previous``) when its ``identity`` (experiment, budget and its parameters, data)
  equals this sweep's and its runs keep the results schema
  (:func:`~setfuncs.experiments.schema.check_results`: one record per configuration and seed,
  seeds non-negative ints, the header's lists); any other file, or one that is not a sweep's, is
  refused with a :class:`SweepFileError` that names the file (and the run and field), what is
  wrong, and the fix. With ``restart=True`` the old file is moved aside to
  ``<file>.<UTC time>.bak`` first; nothing is ever deleted.
- **Atomic.** :meth:`SweepFile.write` writes a uniquely named temporary file in the same folder
  (``.<file>.<8 random characters>.tmp``), flushes it to disk and renames it over the file
  (:func:`os.replace`), so a reader sees the old file or the new one, never half of one; a failed
  write (a full disk, a read-only folder) raises a :class:`SweepWriteError` that says whether the
  last complete file is in place or no file was written. A temporary file that a killed writer
  left is removed by the next writer of the file, once it holds the lock (only the names that
  pattern makes for this file, and only regular files of this user).
- **Strict JSON** (:mod:`~setfuncs.experiments.strictjson`): NaN and infinities are written as ``null``
  with a map of what stood there, and put back when the file is read.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import sys
import tempfile
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Iterator

import filelock

from .schema import RunSchema, SchemaError, check_results
from .strictjson import NON_FINITE, differences, replace_non_finite, restore_record, restore_runs

__all__ = ["SweepFile", "SweepFileError", "SweepLocked", "SweepWriteError", "backup_path", "LOCK_MARK"]

_FIX = "pass --restart to move it aside to a timestamped backup and start afresh, or choose another --out"
#: What a failed write asks of the user, and how the sweep then goes on.
_ROOM = "free disk space (or make the folder writable), then run the same command"


#: How every line of a sweep's lock file begins, so that no other file is ever taken for one.
LOCK_MARK = "setfuncs sweep lock"
#: The most bytes of an existing ``<file>.lock`` read to tell whether it is a sweep's.
_LOCK_READ = 4096

class SweepFileError(ValueError):
    """The file at ``--out`` cannot be resumed by this sweep (another experiment or budget, not JSON, ...)."""


class SweepLocked(RuntimeError):
    """Another process is writing the same results file."""


class SweepWriteError(OSError):
    """The results file could not be written (disk full, read-only, ...); the last complete file, if
    there was one, is kept (the message says which)."""


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
        path: the JSON file (its folder is created if missing); a symbolic link stands for its target.
        identity: what an earlier sitting's file must hold under ``"identity"`` to be resumed.
        restart: move an existing file aside (:func:`backup_path`) instead of resuming it.
        schema: what the earlier sitting's runs must keep (:func:`~setfuncs.experiments.schema.check_results`;
            the experiment's ``RUN_SCHEMA``).

    Attributes:
        target: the file ``path`` resolves to (:func:`os.path.realpath`; a link's target): the file
            that is locked, read and replaced.

    Attributes (inside the ``with`` block):
        previous: the earlier sitting's results (a dict with ``"runs"``), or None.
        backup: where an existing file was moved by ``restart`` (None if nothing was moved).
    """

    def __init__(self, path: str | os.PathLike, identity: dict, restart: bool = False,
                 schema: RunSchema = RunSchema()) -> None:
        self.path = Path(path)
        self.target = Path(os.path.realpath(self.path))
        if self.target.is_dir():
            raise SweepFileError(f"--out {self.path} is a folder; pass the path of a JSON file in it")
        self._check_regular()
        self.identity = identity
        self.restart = restart
        self.schema = schema
        self.lock_path = self.target.with_name(self.target.name + ".lock")
        self.previous: dict | None = None
        self.backup: Path | None = None
        self._lock: filelock.BaseFileLock | None = None

    def __enter__(self) -> "SweepFile":
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise SweepWriteError(err.errno, f"cannot create the folder of {self._name()}: {err.strerror}; "
                                             f"choose an --out in a writable folder") from None
        self._acquire()
        try:
            self._remove_stale_temporaries()
            if self.target.exists() and self.restart:
                self.backup = backup_path(self.target)
                self._move_aside()
            self.previous = self._read_previous()
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._release()

    def _name(self) -> str:
        """The file as the user named it, and for a symbolic link the file it resolves to."""
        return f"{self.path} (a link to {self.target})" if self.path.is_symlink() else str(self.path)

    def _check_regular(self) -> None:
        """Refuse a target that exists and is not a regular file of one name (module docstring)."""
        try:
            found = os.stat(self.target)
        except FileNotFoundError:
            return
        except OSError as err:
            raise SweepFileError(f"--out {self._name()} cannot be examined ({err.strerror}); choose another --out") from None
        if not stat.S_ISREG(found.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(found.st_mode) else "a device" if stat.S_ISCHR(found.st_mode)
                    or stat.S_ISBLK(found.st_mode) else "a socket" if stat.S_ISSOCK(found.st_mode) else "not a file")
            raise SweepFileError(f"--out {self._name()} is {kind}, not a regular file; it was left as it is: pass the "
                                 f"path of a JSON file (new, or written by a sweep)")
        if found.st_nlink > 1:
            raise SweepFileError(f"--out {self._name()} has {found.st_nlink} hard links (other names for the same file); "
                                 f"a sweep replaces its file at every write, which would part them, each name with its "
                                 f"own lock. It was left as it is: pass a copy (cp) of it instead")

    def _lock_line(self, what: str) -> str:
        return f"{LOCK_MARK} of {self.target.name}: {what}\n"

    def _claim_lock_file(self) -> None:
        """Make sure ``<file>.lock`` is this package's before the lock touches it: create it exclusively
        (never following a link) when it is missing; else it must be a regular file whose text begins with
        :data:`LOCK_MARK`, or empty beside an existing results file (a lock an earlier version released).
        Anything else is refused with a :class:`SweepFileError` and left as it is."""
        try:
            descriptor = os.open(self.lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                                 0o644)
        except FileExistsError:
            pass
        except OSError as err:
            raise SweepWriteError(err.errno, f"cannot create the lock file {self.lock_path}: {err.strerror}; "
                                             f"choose an --out in a writable folder") from None
        else:
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(self._lock_line("free"))
            return
        refused = f"{self.lock_path}, the lock file of --out {self.path}, exists and is not a sweep's lock"
        fix = (f"it was left as it is: choose another --out (the lock is its name with .lock), or move "
               f"{self.lock_path} away if it is yours")
        try:
            found = os.lstat(self.lock_path)
        except FileNotFoundError:                  # removed meanwhile: claim it afresh
            return self._claim_lock_file()
        if stat.S_ISLNK(found.st_mode):
            raise SweepFileError(f"{refused} (it is a symbolic link, and a lock is never followed); {fix}")
        if not stat.S_ISREG(found.st_mode):
            raise SweepFileError(f"{refused} (it is not a regular file); {fix}")
        try:
            with open(self.lock_path, "rb") as lock_file:
                head = lock_file.read(_LOCK_READ)
        except OSError as err:
            raise SweepFileError(f"{refused} (it cannot be read: {err.strerror}); {fix}") from None
        if head.startswith(LOCK_MARK.encode()) or (not head and self.target.exists()):
            return
        raise SweepFileError(f"{refused} ({'empty, with no results file beside it' if not head else 'it holds other text'}); "
                             f"{fix}")

    def _acquire(self) -> None:
        self._claim_lock_file()
        lock = filelock.FileLock(self.lock_path, is_singleton=False)
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            holder = self._holder()
            raise SweepLocked(f"{self._name()} is being written by another sweep ({holder}); wait for it to "
                              f"finish, stop it, or choose another --out") from None
        except OSError as err:
            raise SweepWriteError(err.errno, f"cannot open the lock file {self.lock_path}: "
                                             f"{err.strerror}; choose an --out in a folder you can write") from None
        self._lock = lock
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        try:
            self.lock_path.write_text(self._lock_line(f"pid {os.getpid()} on {socket.gethostname()} since {started}: "
                                                      f"{' '.join(sys.argv)}"))
        except OSError as err:
            self._release()
            raise SweepWriteError(err.errno, f"cannot write the lock file {self.lock_path}: {err.strerror}; "
                                             f"{self._name()} was left as it is: {_ROOM} again") from None

    def _holder(self) -> str:
        try:
            text = self.lock_path.read_text().strip()
        except OSError:
            text = ""
        text = text.removeprefix(f"{LOCK_MARK} of {self.target.name}: ")
        return text if text and text != "free" else "its PID is not recorded"

    def _release(self) -> None:
        if self._lock is None:
            return
        try:
            self.lock_path.write_text(self._lock_line("free"))
        finally:
            self._lock.release()
            self._lock = None

    def temporary_name(self) -> re.Pattern[str]:
        """The names :meth:`write`'s temporary files of this file have (:func:`tempfile.mkstemp`'s
        eight random characters between its prefix and suffix)."""
        return re.compile(rf"\.{re.escape(self.target.name)}\.[a-z0-9_]{{8}}\.tmp")

    def _remove_stale_temporaries(self) -> None:
        """Remove the temporary files of this file that a writer killed midway left (called with the
        lock held, so no writer of this file is alive): regular files of this user, named as
        :meth:`write` names them, in the file's folder; nothing else. A folder that cannot be listed
        keeps them (they take space, nothing else)."""
        pattern = self.temporary_name()
        try:
            names = list(self.target.parent.iterdir())
        except OSError:
            return
        for path in names:
            if not pattern.fullmatch(path.name):
                continue
            try:
                found = path.lstat()
            except FileNotFoundError:
                continue
            if stat.S_ISREG(found.st_mode) and (not hasattr(os, "getuid") or found.st_uid == os.getuid()):
                path.unlink(missing_ok=True)

    def _move_aside(self) -> None:
        """Move the file to :attr:`backup` (``restart``); a :class:`SweepWriteError` if it cannot."""
        try:
            os.replace(self.target, self.backup)
        except OSError as err:
            raise SweepWriteError(err.errno, f"cannot move {self._name()} aside to {self.backup}: {err.strerror}; "
                                             f"the file was left as it is: {_ROOM} again") from None

    def _read_previous(self) -> dict | None:
        """The earlier sitting's results, non-finite floats restored; None if there is no file. Its
        identity is compared first (with the top level's floats restored: an identity may hold an
        infinity), then its runs are checked in the writer's form (a ``null`` with its ``non_finite``
        entry is a number) and restored."""
        if not self.target.exists():
            return None
        try:
            results = json.loads(self.target.read_bytes().decode("utf-8"))
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
        with self._broken_map():
            restore_record(results, "the top level")
        found = differences(self.identity, results["identity"])
        if found:
            raise SweepFileError(f"{self.path} holds runs of another sweep, so this one cannot add to it: "
                                 f"{'; '.join(found)}. It was left as it is: {_FIX}")
        try:
            check_results(results, self.path, self.schema, f"it was left as it is: {_FIX}")
        except SchemaError as err:
            raise SweepFileError(str(err)) from None
        with self._broken_map():
            restore_runs(results)
        return results

    @contextmanager
    def _broken_map(self) -> Iterator[None]:
        """Inside the block a ValueError of :func:`~setfuncs.experiments.strictjson.restore_record` (a broken ``non_finite`` map) is a
        :class:`SweepFileError` that names the file."""
        try:
            yield
        except ValueError as err:
            raise SweepFileError(f"{self.path} has a broken '{NON_FINITE}' record ({err}); it was left as it "
                                 f"is: {_FIX}") from None

    def write(self, results: dict) -> None:
        """Replace the file (the link's target, for a link) by ``results`` atomically, in strict JSON
        (non-finite floats as ``null``, named in ``non_finite``: :func:`~setfuncs.experiments.strictjson.replace_non_finite`); a
        :class:`SweepWriteError` if it cannot, which says what the file still holds."""
        text = json.dumps(replace_non_finite(results), indent=1, allow_nan=False)
        mode = stat.S_IMODE(self.target.stat().st_mode) if self.target.exists() else 0o644
        try:
            descriptor, temporary = tempfile.mkstemp(dir=self.target.parent, prefix=f".{self.target.name}.",
                                                     suffix=".tmp")
        except OSError as err:
            raise self._write_error(err) from None
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, mode)
            os.replace(temporary, self.target)
        except OSError as err:
            raise self._write_error(err) from None
        finally:                                     # gone once replaced; else removed, whatever stopped the write
            Path(temporary).unlink(missing_ok=True)

    def _write_error(self, err: OSError) -> SweepWriteError:
        """The :class:`SweepWriteError` of a failed :meth:`write`: what failed, what the file holds
        (its last complete write, or nothing: no file was written), and the fix."""
        if self.target.exists():
            holds = f"the file keeps every run written before: {_ROOM} to resume"
        else:
            moved = f" (the earlier file is at {self.backup})" if self.backup is not None else ""
            holds = f"no file was written{moved}: {_ROOM} again"
        return SweepWriteError(err.errno, f"cannot write {self._name()}: {err.strerror}; {holds}")
