"""The recorder's coverage: which lines of the target function a call runs (:class:`Lines`),
so that its search (``record_worker._search``) goes on first around the calls that reach lines
no call before them did. A variant on a line no call runs is told apart by no call; the
kill-guided search alone, which starts from the calls that told the most variants apart, does
not look for the way there.

Part of the recorder's worker (``record_worker.py``, which imports it beside itself): standard
library only, never imported by the server. Python 3.11 has no ``sys.monitoring``: the lines
come from ``sys.settrace``, whose line events are asked for only in the frames of the target's
own code (the function and the functions, lambdas and comprehensions it defines).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")


def _codes(code: types.CodeType) -> list[types.CodeType]:
    """The code and the code nested in it."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _codes(const)
    return found


class Lines:
    """The lines of ``function``'s code (as it is when made) that :meth:`run` sees run."""

    def __init__(self, function: types.FunctionType) -> None:
        self._codes = _codes(function.__code__)  # kept alive: their ids are what is compared
        self._ids = frozenset(id(c) for c in self._codes)
        self._reached: set[tuple[int, int]] = set()

    def run(
        self, work: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs
    ) -> tuple[_T, frozenset[tuple[int, int]]]:
        """What ``work(*args, **kwargs)`` returns, and the lines of the function it ran:
        (code, line) pairs, the code an index into the function's codes (a lambda shares its
        line with its definition)."""
        self._reached = set()
        before = sys.gettrace()
        sys.settrace(self._call)
        try:
            result = work(*args, **kwargs)
        finally:
            sys.settrace(before)
        return result, frozenset(self._reached)

    def _call(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if id(frame.f_code) not in self._ids:
            return None  # no line events in any other code
        where = next(i for i, c in enumerate(self._codes) if c is frame.f_code)
        reached = self._reached

        def line(frame: types.FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                reached.add((where, frame.f_lineno))
            return line

        return line
