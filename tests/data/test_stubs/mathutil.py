"""Numeric helpers."""

from __future__ import annotations

import math
from collections.abc import Sequence


def clamp(value: float, low: float, high: float) -> float:
    """``value`` limited to the interval [low, high].

    >>> clamp(5, 0, 10)
    5
    >>> clamp(-3, 0, 10)
    0
    >>> clamp(42.5, 0, 10)
    10
    """
    if low > high:
        raise ValueError("low must not exceed high")
    return max(low, min(value, high))


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean.

    >>> mean([1, 2, 3, 4])
    2.5
    >>> mean([])
    Traceback (most recent call last):
        ...
    ValueError: mean of an empty sequence
    """
    if not values:
        raise ValueError("mean of an empty sequence")
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    """The middle value (the mean of the two middle ones for an even count).

    >>> median([3, 1, 2])
    2
    >>> median([4, 1, 3, 2])
    2.5
    """
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def fibonacci(n: int) -> int:
    """The n-th Fibonacci number (``fibonacci(0) == 0``).

    >>> fibonacci(10)
    55
    >>> [fibonacci(i) for i in range(7)]
    [0, 1, 1, 2, 3, 5, 8]
    """
    if n < 0:
        raise ValueError("n must be non-negative")
    if n > 10_000:
        raise OverflowError("n is too large")
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def percent(part: float, whole: float, digits: int = 1) -> float:
    """``part`` as a percentage of ``whole``, rounded.

    >>> percent(1, 3)
    33.3
    >>> percent(1, 8, digits=2)
    12.5
    """
    if whole == 0:
        raise ZeroDivisionError("whole is zero")
    return round(100 * part / whole, digits)


def distance(p: tuple[float, float], q: tuple[float, float]) -> float:
    """Euclidean distance between two points.

    >>> distance((0, 0), (3, 4))
    5.0
    """
    return math.hypot(q[0] - p[0], q[1] - p[1])


def primes_up_to(limit: int) -> list[int]:
    """The primes up to and including ``limit``.

    >>> primes_up_to(20)
    [2, 3, 5, 7, 11, 13, 17, 19]
    >>> primes_up_to(1)
    []
    """
    if limit > 1_000_000:
        raise ValueError("limit too large")
    sieve = [True] * (limit + 1)
    found = []
    for n in range(2, limit + 1):
        if sieve[n]:
            found.append(n)
            for multiple in range(n * n, limit + 1, n):
                sieve[multiple] = False
    return found
