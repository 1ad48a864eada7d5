"""Waiting on state held by another process (an editor, code-server): poll it until it is true.

The editors run in their own processes and offer nothing to await, so the tests poll a predicate
at a short interval with a generous timeout, never sleeping a fixed time in place of a wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def poll(
    predicate: Callable[[], T | None],
    what: str,
    timeout: float,
    *,
    interval: float = 0.02,
    each: Callable[[], None] | None = None,
) -> T:
    """``predicate``'s first true value; ``each`` runs before every look (e.g. a prompt check)."""
    deadline = time.monotonic() + timeout
    while True:
        if each is not None:
            each()
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)
