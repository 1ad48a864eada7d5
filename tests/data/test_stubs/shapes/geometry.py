"""Areas and perimeters of simple shapes."""

from __future__ import annotations

import math


def rectangle_area(width: float, height: float) -> float:
    """The area of a width × height rectangle.

    >>> rectangle_area(3, 4)
    12
    >>> rectangle_area(2.5, 2)
    5.0
    """
    if width < 0 or height < 0:
        raise ValueError("sides must be non-negative")
    return width * height


def circle_area(radius: float) -> float:
    """The area of a circle, to four decimal places.

    >>> circle_area(1)
    3.1416
    >>> circle_area(0)
    0.0
    """
    if radius < 0:
        raise ValueError("radius must be non-negative")
    return round(math.pi * radius**2, 4)


def triangle_kind(a: float, b: float, c: float) -> str:
    """``equilateral``, ``isosceles`` or ``scalene``.

    >>> triangle_kind(2, 2, 2)
    'equilateral'
    >>> triangle_kind(3, 3, 5)
    'isosceles'
    >>> triangle_kind(3, 4, 5)
    'scalene'
    >>> triangle_kind(1, 2, 10)
    Traceback (most recent call last):
        ...
    ValueError: not a triangle: 1, 2, 10
    """
    if a <= 0 or b <= 0 or c <= 0:
        raise ValueError("sides must be positive")
    x, y, z = sorted((a, b, c))
    if x + y <= z:
        raise ValueError(f"not a triangle: {a}, {b}, {c}")
    if a == b == c:
        return "equilateral"
    if len({a, b, c}) == 2:
        return "isosceles"
    return "scalene"


def bounding_box(points: list[tuple[float, float]]) -> tuple[float, float, float, float]:
    """``(min_x, min_y, max_x, max_y)`` of the points.

    >>> bounding_box([(1, 2), (3, -1), (0, 5)])
    (0, -1, 3, 5)
    >>> bounding_box([])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: no points...
    """
    if not points:
        raise ValueError("no points given")
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    return min(xs), min(ys), max(xs), max(ys)
