"""Parsers for the little formats configuration files are full of."""

from __future__ import annotations

import re

_DURATION = re.compile(r"(\d+)([hms])")
_UNIT_SECONDS = {"h": 3600, "m": 60, "s": 1}
TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off"}


class ParseError(ValueError):
    """The text is not in the expected format."""


def parse_duration(text: str) -> int:
    """Seconds in a duration like ``1h30m`` or ``45s``.

    >>> parse_duration("1h30m")
    5400
    >>> parse_duration("45s")
    45
    >>> parse_duration("2h 5s")
    7205
    >>> parse_duration("soon")
    Traceback (most recent call last):
        ...
    parsers.ParseError: not a duration: 'soon'
    """
    text = text.strip()
    if not text:
        raise ParseError("empty duration")
    total = 0
    matched = ""
    for amount, unit in _DURATION.findall(text):
        total += int(amount) * _UNIT_SECONDS[unit]
        matched += amount + unit
    if matched != text.replace(" ", ""):
        raise ParseError(f"not a duration: {text!r}")
    return total


def parse_bool(text: str) -> bool:
    """A boolean from the words people put in config files.

    >>> parse_bool("Yes")
    True
    >>> parse_bool(" off ")
    False
    """
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ParseError(f"not a boolean: {text!r}")


def parse_kv(text: str, sep: str = ";") -> dict[str, str]:
    """``key=value`` pairs separated by ``sep``.

    >>> parse_kv("host=localhost;port=8080")
    {'host': 'localhost', 'port': '8080'}
    >>> parse_kv("a=1, b=2", sep=",")
    {'a': '1', 'b': '2'}
    >>> parse_kv("")
    {}
    """
    result: dict[str, str] = {}
    for item in text.split(sep):
        if not item.strip():
            continue
        key, eq, value = item.partition("=")
        if not eq:
            raise ParseError(f"missing '=' in {item!r}")
        if not key.strip():
            raise ParseError("empty key")
        result[key.strip()] = value.strip()
    return result


def parse_version(text: str) -> tuple[int, int, int]:
    """A ``major.minor.patch`` version as a tuple of ints.

    >>> parse_version("1.2.3")
    (1, 2, 3)
    >>> parse_version("v10.0.1")
    (10, 0, 1)
    >>> parse_version("1.2")
    Traceback (most recent call last):
        ...
    parsers.ParseError: expected major.minor.patch, got '1.2'
    """
    parts = text.removeprefix("v").split(".")
    if len(parts) != 3:
        raise ParseError(f"expected major.minor.patch, got {text!r}")
    try:
        major, minor, patch = (int(p) for p in parts)
    except ValueError:
        raise ParseError(f"not a number in {text!r}") from None
    return major, minor, patch


def parse_int_list(text: str) -> list[int]:
    """Comma separated integers; ranges like ``3-5`` are expanded.

    >>> parse_int_list("1,3-5,9")
    [1, 3, 4, 5, 9]
    >>> parse_int_list("7")
    [7]
    """
    numbers: list[int] = []
    for chunk in text.split(","):
        chunk = chunk.strip()
        if "-" in chunk:
            low, high = chunk.split("-", 1)
            start, stop = int(low), int(high)
            if start > stop:
                raise ParseError(f"empty range {chunk!r}")
            numbers.extend(range(start, stop + 1))
        else:
            numbers.append(int(chunk))
    return numbers
