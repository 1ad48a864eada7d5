"""The mutation worker's time limit (``tests/tools/mutation_worker.py``, run in a subprocess by
``test_test_stubs_mutation``): a test's failure takes the worker's own time to report, and the
alarm must not fire there and end the worker (every figure of the corpus was lost with it)."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import pytest

from tests.tools import mutation_worker as worker


@pytest.fixture
def alarm() -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, worker._alarm)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _SlowToShowError(Exception):
    """A failure whose message takes longer to build than the test's time limit."""

    def __str__(self) -> str:
        until = time.monotonic() + 0.5
        while time.monotonic() < until:
            pass
        return "shown"


def _fails_slowly() -> None:
    raise _SlowToShowError


def test_a_failure_reported_after_the_time_limit_is_a_failure(alarm: None) -> None:
    assert worker.run_test(_fails_slowly, 0.05) == ("fail", "_SlowToShowError: shown")


def test_a_test_over_the_time_limit_fails_with_a_timeout(alarm: None) -> None:
    def spins() -> None:
        while True:
            pass

    assert worker.run_test(spins, 0.05) == ("fail", "timeout")
