"""Values as data: what a recorded call returned, tagged so that it crosses the worker's JSON
answer and comes back equal (``["int", "3"]``, ``["list", [...]]``), and the check a generated
assertion makes of it.

Part of the recorder's worker (``record_worker.py``, which imports it beside itself): standard
library only.
"""

from __future__ import annotations

import math
from typing import Any

_MAX_DEPTH = 12
_MAX_ITEMS = 200
#: A text longer than this is no test's expected value (and would swell the answer).
_MAX_CHARS = 2000


def encode(value: object, depth: int = 0) -> list[Any] | None:
    """The tagged form of a value built of literals (subclasses as their base), or None."""
    if depth > _MAX_DEPTH:
        return None
    if value is None:
        return ["none"]
    if isinstance(value, bool):
        return ["bool", bool(value)]
    if isinstance(value, int):
        # Python writes no int of more than 4,300 digits (and no test should).
        return ["int", str(int(value))] if value.bit_length() <= 4 * _MAX_CHARS else None
    if isinstance(value, float):
        return ["float", repr(float(value))]
    if isinstance(value, complex):
        return ["complex", repr(value.real), repr(value.imag)]
    if isinstance(value, str):
        return ["str", str(value)] if len(value) <= _MAX_CHARS else None
    if isinstance(value, bytes):
        return ["bytes", bytes(value).hex()] if len(value) <= _MAX_CHARS else None
    tag = next(
        (
            t
            for t, k in (("list", list), ("tuple", tuple), ("set", set), ("frozenset", frozenset))
            if isinstance(value, k)
        ),
        None,
    )
    if tag is not None:
        items = list(value)  # type: ignore[call-overload]
        if len(items) > _MAX_ITEMS:
            return None
        parts = [encode(v, depth + 1) for v in items]
        return None if any(p is None for p in parts) else [tag, parts]
    if isinstance(value, dict):
        if len(value) > _MAX_ITEMS:
            return None
        pairs = [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]
        return None if any(k is None or v is None for k, v in pairs) else ["dict", pairs]
    return None


def decode(tagged: list[Any]) -> object:
    tag, *rest = tagged
    arg: Any = rest[0] if rest else None
    if tag == "none":
        return None
    if tag == "bool":
        return bool(arg)
    if tag in ("int", "float", "str"):
        return {"int": int, "float": float, "str": str}[tag](arg)
    if tag == "bytes":
        return bytes.fromhex(arg)
    if tag == "complex":
        return complex(float(rest[0]), float(rest[1]))
    if tag == "list":
        return [decode(v) for v in arg]
    if tag == "tuple":
        return tuple(decode(v) for v in arg)
    if tag == "set":
        return {decode(v) for v in arg}
    if tag == "frozenset":
        return frozenset(decode(v) for v in arg)
    return {decode(k): decode(v) for k, v in arg}


def has_nan(value: object) -> bool:
    """Whether a NaN is in the value (it equals nothing, itself included)."""
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, list | tuple | set | frozenset):
        return any(has_nan(v) for v in value)
    if isinstance(value, dict):
        return any(has_nan(k) or has_nan(v) for k, v in value.items())
    return False


def matches(got: object, expected: object) -> bool:
    """Whether the generated assertion passes: ``is`` for None and booleans, else ``==``."""
    if expected is None or isinstance(expected, bool):
        return got is expected
    try:
        return bool(got == expected)
    except Exception:
        return False
