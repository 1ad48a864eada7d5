"""Rate-limit memory per (baseUrl, model): after a 429, don't call that model again too early.

Pure: no httpx, no pygls, no clock of its own. Callers pass ``now`` (monotonic seconds) and, for
HTTP-date ``retry-after`` values, ``wall_now`` (epoch seconds), so tests never sleep.

State is keyed by (base URL, model) because providers limit per model: a 429 on the fast model
must not block the standard one on the same host.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime

from .base import BackendError

RateKey = tuple[str, str]
"""(base URL without a trailing slash, model id)."""

#: Longest block we honour: a provider asking for more (a daily quota) still gets re-tried daily.
MAX_BLOCK_S = 24 * 3600.0

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_RESET_PREFIX = "x-ratelimit-reset-"
_REMAINING_PREFIX = "x-ratelimit-remaining-"
_LIMIT_PREFIX = "x-ratelimit-limit-"


def rate_key(base_url: str, model: str) -> RateKey:
    """The key for one model behind one endpoint."""
    return (base_url.rstrip("/"), model)


def parse_duration(value: str) -> float | None:
    """Seconds from ``"1.5"`` (plain seconds) or Go-style ``"12ms"``, ``"1s"``, ``"6m0s"``."""
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pos, seconds = 0, 0.0
        for match in _DURATION_PART.finditer(text):
            if match.start() != pos:
                return None
            seconds += float(match.group(1)) * _UNIT_S[match.group(2)]
            pos = match.end()
        if pos != len(text):
            return None
    return _clamp(seconds)


def parse_retry_after(value: str, *, wall_now: float) -> float | None:
    """Seconds from a ``retry-after`` value: delay seconds or an HTTP-date."""
    text = value.strip()
    try:
        return _clamp(float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" parses naive; HTTP dates are always UTC
        when = when.replace(tzinfo=UTC)
    return _clamp(when.timestamp() - wall_now)


def reset_after(headers: Mapping[str, str], *, wall_now: float) -> float | None:
    """Seconds until a 429'd model may be called again, from whatever headers the provider sent.

    ``retry-after-ms`` / ``retry-after`` win. Otherwise the provider reset headers are used:
    ``x-ratelimit-reset-{requests,tokens}`` (OpenAI, Groq: ``"12ms"``, ``"6m0s"``) and Cerebras'
    windowed ``x-ratelimit-reset-{requests-day,tokens-minute}`` (float seconds). When a matching
    ``x-ratelimit-remaining-*`` says a limit is exhausted, wait for the slowest exhausted one;
    otherwise (the request was just too big for what is left) the soonest reset is the best guess.
    """
    lower = {name.lower(): value for name, value in headers.items()}
    if "retry-after-ms" in lower and (ms := parse_duration(lower["retry-after-ms"])) is not None:
        return _clamp(ms / 1000)
    if "retry-after" in lower:
        seconds = parse_retry_after(lower["retry-after"], wall_now=wall_now)
        if seconds is not None:
            return seconds
    resets: dict[str, float] = {}
    for name, value in lower.items():
        if name.startswith(_RESET_PREFIX):
            seconds = parse_duration(value)
            if seconds is not None:
                resets[name.removeprefix(_RESET_PREFIX)] = seconds
    if not resets:
        return None
    exhausted = [s for limit, s in resets.items() if _is_exhausted(lower, limit)]
    return max(exhausted) if exhausted else min(resets.values())


def format_seconds(seconds: float) -> str:
    """A short human duration: ``"0.4 s"``, ``"12 s"``, ``"6 min"``, ``"2 h 5 min"``."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{math.ceil(seconds / 60)} min"
    hours, rest = divmod(math.ceil(seconds / 60), 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


@dataclass
class _Block:
    until: float
    #: Consecutive 429s, for the doubling default backoff; reset by a success.
    strikes: int = 0


class RateLimits:
    """When each (baseUrl, model) may be called again; one per server, shared by its backends."""

    def __init__(self, *, default_backoff_s: float = 1.0, max_backoff_s: float = 30.0) -> None:
        self._default_backoff_s = default_backoff_s
        self._max_backoff_s = max_backoff_s
        self._blocks: dict[RateKey, _Block] = {}
        #: The smallest remaining/limit fraction the provider reported last, per key.
        self._headroom: dict[RateKey, float] = {}

    def check(self, key: RateKey, now: float) -> None:
        """Raise ``BackendError(kind="blocked")`` while ``key`` is still inside its 429 window."""
        remaining = self.blocked_for(key, now)
        if remaining > 0:
            base_url, model = key
            raise BackendError(
                "blocked",
                f"Not sent: '{model}' at {base_url} is paused for {format_seconds(remaining)} "
                "more after the provider's rate limit (HTTP 429). Wait, or switch profile.",
                retry_after=remaining,
            )

    def blocked_for(self, key: RateKey, now: float) -> float:
        """Seconds until ``key`` may be called again (0 when it may be called now)."""
        block = self._blocks.get(key)
        return max(0.0, block.until - now) if block else 0.0

    def record_429(self, key: RateKey, now: float, reset_s: float | None) -> float:
        """Remember a 429 and return how long ``key`` is now blocked for.

        ``reset_s`` is what the provider said (:func:`reset_after`); without it the block is a
        default backoff that doubles with each consecutive 429, up to ``max_backoff_s``.
        """
        block = self._blocks.setdefault(key, _Block(until=now))
        block.strikes += 1
        if reset_s is None:
            doubling = self._default_backoff_s * 2 ** min(block.strikes - 1, 30)
            reset_s = min(doubling, self._max_backoff_s)
        block.until = max(block.until, now + reset_s)
        return block.until - now

    def record_headroom(self, key: RateKey, headers: Mapping[str, str]) -> None:
        """Remember how much of its rate limits a response says is left."""
        fraction = headroom_of(headers)
        if fraction is not None:
            self._headroom[key] = fraction

    def headroom(self, key: RateKey) -> float | None:
        """The fraction of its rate limits ``key`` had left at its last response (None: never
        reported); optional requests (next-edit suggestions) skip a provider running low."""
        return self._headroom.get(key)

    def record_success(self, key: RateKey, now: float) -> None:
        """The provider accepted a request: forget the 429 streak for ``key``.

        A window still running stays: the success may come from a request sent before the 429.
        """
        block = self._blocks.get(key)
        if block is None:
            return
        if block.until <= now:
            del self._blocks[key]
        else:
            block.strikes = 0


def headroom_of(headers: Mapping[str, str]) -> float | None:
    """The smallest ``x-ratelimit-remaining-X / x-ratelimit-limit-X`` among the limits a
    response reports (None when it reports none)."""
    fractions = []
    for name, value in headers.items():
        name = name.lower()
        if not name.startswith(_REMAINING_PREFIX):
            continue
        limit = headers.get(_LIMIT_PREFIX + name[len(_REMAINING_PREFIX) :])
        try:
            total, left = float(limit or ""), float(value)
        except ValueError:
            continue
        if total > 0 and not math.isnan(left):
            fractions.append(max(0.0, min(1.0, left / total)))
    return min(fractions) if fractions else None


def _is_exhausted(headers: Mapping[str, str], limit: str) -> bool:
    remaining = headers.get(_REMAINING_PREFIX + limit)
    if remaining is None:
        return False
    try:
        return float(remaining) <= 0
    except ValueError:
        return False


def _clamp(seconds: float) -> float | None:
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), MAX_BLOCK_S)
