"""What the recorder's calls run in: no standard input, and for the check a shifted clock.

Part of the recorder's worker (``record_worker.py``, which imports it beside itself): standard
library only, never imported by the server.
"""

from __future__ import annotations

import importlib
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
