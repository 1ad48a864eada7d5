"""Circuit breakers and the failover chain, with time passed in."""

from __future__ import annotations

import pytest

from fastedit_lsp.backends.breaker import CircuitBreakers
from fastedit_lsp.pipeline.failover import failover_chain

KEY = ("http://127.0.0.1:1/v1", "m")


def test_a_breaker_opens_after_repeated_failures_and_lets_one_probe_through_later() -> None:
    breakers = CircuitBreakers(threshold=3, backoff=10, max_backoff=40)
    for t in (0.0, 1.0):
        breakers.failure(KEY, t)
        assert breakers.allow(KEY, t) is None  # not yet
    breakers.failure(KEY, 2.0)
    assert breakers.state(KEY, 2.0) == "open"
    assert breakers.allow(KEY, 5.0) == pytest.approx(7.0)
    # After the back-off: one probe goes, the next waits for its outcome.
    assert breakers.state(KEY, 12.0) == "half-open"
    assert breakers.allow(KEY, 12.0) is None
    assert breakers.allow(KEY, 12.1) is not None
    # A failed probe reopens for twice as long.
    breakers.failure(KEY, 12.5)
    assert breakers.state(KEY, 20.0) == "open"
    assert breakers.state(KEY, 32.6) == "half-open"
    assert breakers.allow(KEY, 32.6) is None
    breakers.success(KEY)
    assert breakers.state(KEY, 32.7) == "closed" and breakers.snapshot(32.7) == []


def test_a_success_resets_the_count_and_keys_are_independent() -> None:
    breakers = CircuitBreakers(threshold=2)
    breakers.failure(KEY, 0)
    breakers.success(KEY)
    breakers.failure(KEY, 1)
    assert breakers.state(KEY, 1) == "closed"
    other = (KEY[0], "other-model")
    breakers.failure(other, 1)
    breakers.failure(other, 2)
    assert breakers.state(other, 2) == "open" and breakers.state(KEY, 2) == "closed"
    (entry,) = breakers.snapshot(2)
    assert entry["model"] == "other-model" and entry["state"] == "open"


@pytest.mark.parametrize(
    ("first", "failover", "chain"),
    [
        pytest.param(
            "fast", ("fast", "standard", "local"), ["fast", "standard", "local"], id="fast"
        ),
        pytest.param(
            "standard", ("fast", "standard", "local"), ["standard", "local"], id="standard"
        ),
        pytest.param("fast", (), ["fast"], id="no-failover"),
        pytest.param("standard", ("local",), ["standard", "local"], id="not-in-chain"),
        pytest.param("fast", ("standard", "fast", "local"), ["fast", "local"], id="custom-order"),
    ],
)
def test_the_failover_chain_starts_at_the_chosen_route(
    first: str, failover: tuple[str, ...], chain: list[str]
) -> None:
    assert failover_chain(first, failover) == chain
