"""Sample module for `fastedit-lsp demo`: tests written from the code alone."""

import math


def circle_area(radius: float) -> float:
    """Area of a circle.

    >>> circle_area(1)
    3.141592653589793
    >>> circle_area(0)
    0.0
    """
    if radius < 0:
        raise ValueError("radius must not be negative")
    return math.pi * radius**2


def clamp(value: int, low: int, high: int) -> int:
    """Clamp value into [low, high].

    >>> clamp(5, 0, 3)
    3
    >>> clamp(-1, 0, 3)
    0
    >>> clamp(2, 0, 3)
    2
    """
    if low > high:
        raise ValueError("low must not exceed high")
    return max(low, min(value, high))
