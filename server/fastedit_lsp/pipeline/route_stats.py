"""Route health: recent verification outcomes (auto routing reads them) and speeds (status).

Pure: no pygls, no httpx, no clock. Owned by the pipeline: each finished job's outcome is kept
per route; ``fastedit.status`` reports the rolling speed percentiles.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..core.jobs import LOCAL, Job
from ..core.timings import percentile

#: How many recent verified jobs per route the failure rate covers, and how many it needs.
VERIFY_WINDOW = 20
VERIFY_MIN_JOBS = 5
#: How many recent jobs per route the speed percentiles cover.
SPEED_WINDOW = 100


class RouteStats:
    """Per route: recent verification outcomes and (time to first token, tokens per second)."""

    def __init__(self) -> None:
        #: Recent verification outcomes per route (True: passed).
        self.verifications: dict[str, deque[bool]] = {}
        #: Recent finished jobs' (ttftMs, tokensPerSecond) per route.
        self.speeds: dict[str, deque[tuple[float, float]]] = {}

    def record_verification(self, job: Job) -> None:
        """Keep whether a job's draft passed verification (when there was something to check)."""
        ok = job.verification.get("ok")
        if job.route and ok is not None:
            self.verifications.setdefault(job.route, deque(maxlen=VERIFY_WINDOW)).append(bool(ok))

    def failure_rates(self) -> dict[str, float]:
        """Each route's recent verification failure rate, once enough jobs were checked."""
        return {
            route: outcomes.count(False) / len(outcomes)
            for route, outcomes in self.verifications.items()
            if len(outcomes) >= VERIFY_MIN_JOBS
        }

    def record_speed(self, job: Job) -> None:
        """Keep a finished job's speed (a model's: time to first token, decode speed) for the
        route's rolling percentiles; the offline engine has none."""
        metrics = job.metrics.record(offline=job.route == LOCAL)
        if job.route and metrics["ttftMs"] is not None and metrics["tokensPerSecond"]:
            speeds = self.speeds.setdefault(job.route, deque(maxlen=SPEED_WINDOW))
            speeds.append((metrics["ttftMs"], metrics["tokensPerSecond"]))

    def speed(self) -> dict[str, Any]:
        """Rolling p50/p90 of time to first token and tokens per second, per route."""
        out: dict[str, Any] = {}
        for route, samples in self.speeds.items():
            ttfts = sorted(t for t, _ in samples)
            rates = sorted(r for _, r in samples)
            out[route] = {
                "jobs": len(samples),
                "ttftMs": {"p50": percentile(ttfts, 50), "p90": percentile(ttfts, 90)},
                "tokensPerSecond": {"p50": percentile(rates, 50), "p90": percentile(rates, 90)},
            }
        return out
