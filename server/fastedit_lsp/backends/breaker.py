"""Circuit breakers: stop calling a (baseUrl, model) that keeps failing, probe it after a back-off.

Pure: time is passed in. After :attr:`threshold` consecutive failures (unreachable, timing out,
5xx) a breaker opens: no request goes to that (baseUrl, model) until its back-off has passed; then
one probe is let through (half-open). A success closes it; a failure reopens it with a doubled
back-off, up to :attr:`max_backoff`. Rate limits are not failures here: ``ratelimit`` handles them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .ratelimit import RateKey

State = Literal["closed", "open", "half-open"]


@dataclass
class _Breaker:
    failures: int = 0
    opened_at: float | None = None
    backoff: float = 0.0
    probing: bool = False


class CircuitBreakers:
    """One breaker per (baseUrl, model)."""

    def __init__(
        self, *, threshold: int = 3, backoff: float = 15.0, max_backoff: float = 300.0
    ) -> None:
        self.threshold = threshold
        self.initial_backoff = backoff
        self.max_backoff = max_backoff
        self._breakers: dict[RateKey, _Breaker] = {}

    def state(self, key: RateKey, now: float) -> State:
        breaker = self._breakers.get(key)
        if breaker is None or breaker.opened_at is None:
            return "closed"
        if now - breaker.opened_at >= breaker.backoff:
            return "half-open"
        return "open"

    def allow(self, key: RateKey, now: float) -> float | None:
        """None when a request may go; else the seconds until the breaker lets a probe through.

        In the half-open state exactly one request (the probe) is allowed until it reports.
        """
        breaker = self._breakers.get(key)
        state = self.state(key, now)
        if state == "closed" or breaker is None:
            return None
        assert breaker.opened_at is not None
        if state == "half-open" and not breaker.probing:
            breaker.probing = True
            return None
        return max(0.0, breaker.opened_at + breaker.backoff - now) or breaker.backoff

    def success(self, key: RateKey) -> None:
        self._breakers.pop(key, None)

    def failure(self, key: RateKey, now: float) -> None:
        breaker = self._breakers.setdefault(key, _Breaker())
        breaker.failures += 1
        if breaker.probing or breaker.opened_at is not None:
            # A failed probe: open again, for longer.
            breaker.backoff = min(self.max_backoff, max(breaker.backoff * 2, self.initial_backoff))
            breaker.opened_at = now
            breaker.probing = False
        elif breaker.failures >= self.threshold:
            breaker.backoff = self.initial_backoff
            breaker.opened_at = now

    def snapshot(self, now: float) -> list[dict[str, Any]]:
        """Every breaker that is not plainly closed, for ``fastedit.status``."""
        out = []
        for (base_url, model), breaker in self._breakers.items():
            state = self.state((base_url, model), now)
            if state == "closed":
                continue
            retry = None
            if breaker.opened_at is not None:
                retry = round(max(0.0, breaker.opened_at + breaker.backoff - now), 1)
            out.append(
                {
                    "baseUrl": base_url,
                    "model": model,
                    "state": state,
                    "failures": breaker.failures,
                    "retryInSeconds": retry,
                }
            )
        return out
