"""What the recorder's calls run in: no standard input, a working directory emptied after each
call, and for the check a shifted clock.

Part of the recorder's worker (``record_worker.py``, which imports it beside itself): standard
library only, never imported by the server.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import sys
import time
from typing import Any


class StdinRead(BaseException):
    """The call read the standard input: what it reads depends on where the test runs
    (pytest's capture refuses it), so the call is left out (``stdin``)."""


class NoStdin:
    """The standard input during a call: reading it stops the call."""

    def read(self, size: int | None = -1) -> str:
        raise StdinRead

    def readline(self, size: int | None = -1) -> str:
        raise StdinRead

    def readlines(self, hint: int | None = -1) -> list[str]:
        raise StdinRead

    def __next__(self) -> str:
        raise StdinRead

    def fileno(self) -> int:
        raise StdinRead


#: The wall clock as the check's calls see it: ahead by a day, an hour, a minute and a
#: second and a half (every field of a timestamp differs), or with ``CLOCK_SHIFT`` in the job.
CLOCK_SHIFT = 90061.5


def shift_clock(seconds: float) -> None:
    """Make the wall clock ``seconds`` later for the rest of the process: the ``time``
    module's clocks and what reads them (``gzip``'s header, ``email.utils``...), and
    ``datetime``'s, which then runs its pure-Python implementation (it reads ``time``; the C
    one reads the system clock). Before the user's modules are imported, so that what they
    take from ``time`` and ``datetime`` is shifted too."""
    sys.modules.pop("datetime", None)
    sys.modules["_datetime"] = None  # type: ignore[assignment]
    real_time, real_ns = time.time, time.time_ns
    real_localtime, real_gmtime, real_ctime = time.localtime, time.gmtime, time.ctime
    real_asctime, real_strftime = time.asctime, time.strftime

    def now() -> float:
        return real_time() + seconds

    def now_ns() -> int:
        return real_ns() + int(seconds * 1e9)

    def localtime(secs: float | None = None) -> time.struct_time:
        return real_localtime(now() if secs is None else secs)

    def gmtime(secs: float | None = None) -> time.struct_time:
        return real_gmtime(now() if secs is None else secs)

    def ctime(secs: float | None = None) -> str:
        return real_ctime(now() if secs is None else secs)

    def asctime(t: Any = None) -> str:
        return real_asctime(localtime() if t is None else t)

    def strftime(format: str, t: Any = None) -> str:
        return real_strftime(format, localtime() if t is None else t)

    for name, function in (
        ("time", now),
        ("time_ns", now_ns),
        ("localtime", localtime),
        ("gmtime", gmtime),
        ("ctime", ctime),
        ("asctime", asctime),
        ("strftime", strftime),
    ):
        setattr(time, name, function)
    importlib.import_module("datetime")


class Workdir:
    """The process' working directory, made empty for it by the recorder: what a call leaves
    there is removed after it. A later call (or a variant's) must not see it: a test written
    from what it saw would fail in another folder (a file a variant created once made
    ``open_if_exists('1', '1.5')`` raise). A call that changed the working directory is moved
    back first. Nothing is removed anywhere else, nor without ``workdir`` in the job."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.held: frozenset[str] = frozenset()
        #: The folder as last seen (device, inode, mtime), and until when a change to it may
        #: not show in its mtime yet.
        self.stamp: tuple[int, int, int] | None = None
        self.unsure_until = 0.0

    def use(self, path: str | None) -> None:
        if path is None or not os.path.isdir(path) or os.listdir(path):
            return  # not the empty folder the recorder made: never tidied
        os.chdir(path)
        self.path = os.getcwd()

    def settle(self) -> None:
        """What is there now (a module that writes files as it is imported) is kept."""
        if self.path is not None:
            self.held = frozenset(os.listdir(self.path))

    def tidy(self) -> bool:
        """Whether the call left something; it is removed."""
        if self.path is None:
            return False
        # Most calls leave nothing, and one ``stat`` of the working directory says so (a
        # tenth of what listing it costs, and calls are made by the hundred thousand): the
        # same folder, its mtime as last seen. The mtime comes from a coarse clock: a change
        # in the same tick as the last leaves it as it was, so for ``SAME_TICK`` seconds after
        # a change the folder is listed.
        if self.stamp is not None and time.monotonic() > self.unsure_until:
            with contextlib.suppress(OSError):
                if _stamp(".") == self.stamp:
                    return False
        left = self._remove(self.path)
        with contextlib.suppress(OSError):
            stamp = _stamp(self.path)
            if stamp != self.stamp:
                self.stamp, self.unsure_until = stamp, time.monotonic() + SAME_TICK
        return left

    def _remove(self, folder: str) -> bool:
        with contextlib.suppress(OSError):
            if os.getcwd() != folder:
                os.chdir(folder)
        try:
            left = set(os.listdir(folder)) - self.held
        except OSError:
            return False
        for name in left:
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
        return bool(left)


#: Longer than a file system's clock tick (a jiffy: 1 to 10 ms).
SAME_TICK = 0.05


def _stamp(path: str) -> tuple[int, int, int]:
    seen = os.stat(path)
    return seen.st_dev, seen.st_ino, seen.st_mtime_ns
