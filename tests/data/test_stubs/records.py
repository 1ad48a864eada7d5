"""Records parsed from text, and the ways they are shown."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    """A point in the plane."""

    x: float
    y: float

    def scaled(self, factor: float) -> Point:
        """The point with both coordinates multiplied by ``factor``.

        >>> Point(1, 2).scaled(3)
        Point(x=3, y=6)
        """
        return Point(self.x * factor, self.y * factor)


def parse_point(text: str) -> Point:
    """A point from ``"x, y"``.

    >>> parse_point("1.5, -2")
    Point(x=1.5, y=-2.0)
    >>> parse_point("1;2")
    Traceback (most recent call last):
        ...
    ValueError: expected 'x, y', got '1;2'
    """
    parts = text.split(",")
    if len(parts) != 2:
        raise ValueError(f"expected 'x, y', got {text!r}")
    return Point(float(parts[0]), float(parts[1]))


def histogram(words: list[str]) -> None:
    """Print a bar per word, most frequent first.

    >>> histogram(["a", "b", "a", "c", "a", "b"])
    a ###
    b ##
    c #
    """
    for word, n in Counter(words).most_common():
        print(word, "#" * n)  # noqa: T201


def chunks(items: list[int], size: int) -> Iterator[list[int]]:
    """Consecutive slices of at most ``size`` items.

    >>> list(chunks([1, 2, 3, 4, 5], 2))
    [[1, 2], [3, 4], [5]]
    >>> next(chunks([], 3))
    Traceback (most recent call last):
        ...
    StopIteration
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    for start in range(0, len(items), size):
        yield items[start : start + size]


def to_json(record: dict[str, object], indent: int | None = None) -> str:
    """The record as JSON with sorted keys.

    >>> print(to_json({"b": 1, "a": [1, 2]}, indent=2))
    {
      "a": [
        1,
        2
      ],
      "b": 1
    }
    >>> to_json({"k": None})
    '{"k": null}'
    """
    return json.dumps(record, indent=indent, sort_keys=True)


def unique_words(text: str) -> set[str]:
    """The distinct whitespace-separated words.

    >>> sorted(unique_words("the cat saw the dog"))
    ['cat', 'dog', 'saw', 'the']
    >>> unique_words("")
    set()
    """
    return set(text.split())


def describe(values: list[float]) -> dict[str, float]:
    """Minimum, maximum and mean.

    >>> describe([1, 2, 3, 4])  # doctest: +NORMALIZE_WHITESPACE
    {'min': 1, 'max': 4,
     'mean': 2.5}
    >>> describe([0.1, 0.2])['mean']  # doctest: +ELLIPSIS
    0.15...
    >>> describe([])
    Traceback (most recent call last):
        ...
    ValueError: no values
    """
    if not values:
        raise ValueError("no values")
    return {"min": min(values), "max": max(values), "mean": sum(values) / len(values)}


async def gather_lengths(words: list[str]) -> list[int]:
    """The lengths of the words, computed concurrently.

    >>> asyncio.run(gather_lengths(["a", "bcd"]))
    [1, 3]
    """

    async def length(word: str) -> int:
        await asyncio.sleep(0)
        return len(word)

    return list(await asyncio.gather(*(length(w) for w in words)))
