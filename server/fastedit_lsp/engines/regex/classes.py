"""Regex synthesis: character classes.

A class is named ranges plus single characters, or everything but some (:class:`_Class`), rendered
as readers write them (``\\d``, ``\\w``, ``[A-Za-z0-9_.-]``); the ladder of classes a field can be
written with, most general first; the class for free text and the one hex class for sibling
fields. Part of :mod:`fastedit_lsp.engines.regex.synth`. Pure: stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass

_DIGITS = frozenset("0123456789")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_HEX_LOWER = frozenset("abcdef")
_HEX_UPPER = frozenset("ABCDEF")
_ALNUM = _DIGITS | _LOWER | _UPPER
# Ranges in the order they are written inside brackets.
_RANGES: dict[str, frozenset[str]] = {
    "A-Z": _UPPER,
    "a-z": _LOWER,
    "0-9": _DIGITS,
    "a-f": _HEX_LOWER,
    "A-F": _HEX_UPPER,
}
_HEX_ORDER = ("0-9", "a-f", "A-F")
_PLAIN_ORDER = ("A-Z", "a-z", "0-9")
_PRINTABLE = 95  # ASCII printable characters, space included


@dataclass(frozen=True)
class _Class:
    """A character class: named ranges plus single characters, or everything but some."""

    ranges: frozenset[str] = frozenset()
    chars: frozenset[str] = frozenset()
    negated: bool = False
    space: bool = False  # negated classes: whether whitespace is allowed

    @property
    def size(self) -> int:
        if self.negated:
            return max(1, _PRINTABLE - len(self.chars) - (0 if self.space else 1))
        return sum(len(_RANGES[r]) for r in self.ranges) + len(self.chars)

    def contains(self, char: str) -> bool:
        if self.negated:
            return char not in self.chars and (self.space or not char.isspace())
        return char in self.chars or any(char in _RANGES[r] for r in self.ranges)

    def render(self) -> str:
        if self.negated:
            if not self.chars:
                return "." if self.space else r"\S"
            inner = "".join(_escape_in_class(c) for c in sorted(self.chars))
            return f"[^{inner}]" if self.space else f"[^{inner}\\s]"
        if not self.ranges and len(self.chars) == 1:
            return _escape(next(iter(self.chars)))
        if self.ranges == {"0-9"} and not self.chars:
            return r"\d"
        if self.ranges == {"A-Z", "a-z", "0-9"} and self.chars == {"_"}:
            return r"\w"
        order = _HEX_ORDER if self.ranges & {"a-f", "A-F"} else _PLAIN_ORDER
        inner = "".join(r for r in order if r in self.ranges)
        inner += "".join(_escape_in_class(c) for c in sorted(self.chars, key=_char_order))
        return f"[{inner}]"


_DIGIT_CLASS = _Class(frozenset({"0-9"}))


def _char_order(char: str) -> tuple[int, str]:
    # Word-ish punctuation first, whitespace last: [A-Za-z0-9_.-] reads better than [ -.0-9_].
    return (2 if char.isspace() else 1 if char != "_" else 0, char)


def _escape(char: str) -> str:
    if char == "\t":
        return r"\t"
    if char in ".^$*+?{}[]\\|()":
        return "\\" + char
    return char


def _escape_in_class(char: str) -> str:
    if char == "\t":
        return r"\t"
    if char in "\\]^-[":
        return "\\" + char
    return char


def _escape_text(text: str) -> str:
    return "".join(_escape(c) for c in text)


def _natural(chars: set[str] | frozenset[str]) -> _Class:
    """The narrowest readable class covering ``chars``."""
    digits = bool(chars & _DIGITS)
    lower = chars & _LOWER
    upper = chars & _UPPER
    ranges: set[str] = set()
    if digits:
        ranges.add("0-9")
    hexlike = digits and lower <= _HEX_LOWER and upper <= _HEX_UPPER
    if lower:
        ranges.add("a-f" if hexlike else "a-z")
    if upper:
        ranges.add("A-F" if hexlike else "A-Z")
    others = {c for c in chars if c not in _ALNUM}
    if any(c.isspace() and c != " " for c in others):
        others = {c for c in others if not c.isspace()} | {"\t", " "}
    return _Class(frozenset(ranges), frozenset(others))


def _ladder(chars: set[str], natural: _Class, context: frozenset[str]) -> list[_Class]:
    """Classes covering ``chars``, most general first: the word class (without the separators
    around the field, which never reach it), then without ``_``, without digits, and last the
    letter case seen. Digits stay ``\\d``; hex stays hex, in both cases first."""
    letters = chars & (_LOWER | _UPPER)
    if natural.ranges & {"a-f", "A-F"}:
        both = _Class(natural.ranges | {"a-f", "A-F"}, natural.chars)
        return _unique_classes([both, natural])
    if not letters or natural.negated:
        return [natural]
    extra = natural.chars - {"_"}
    digits = frozenset({"0-9"})
    steps = [
        _Class(frozenset({"A-Z", "a-z"}) | digits, extra | ({"_"} - context)),
        _Class(frozenset({"A-Z", "a-z"}) | digits, extra | (natural.chars & {"_"})),
    ]
    if not chars & _DIGITS:
        steps.append(_Class(frozenset({"A-Z", "a-z"}), natural.chars))
    steps.append(natural)
    return _unique_classes(steps)


def _unique_classes(classes: list[_Class]) -> list[_Class]:
    return list(dict.fromkeys(classes))


def _is_punct(char: str) -> bool:
    return char not in _ALNUM and not char.isspace()


def _rich(chars: set[str], context: frozenset[str]) -> _Class | None:
    """``[^<separators>\\s]`` for a field holding two or more kinds of punctuation (not as
    separators between words): free text, where listing the punctuation seen would over-fit."""
    punct = {c for c in chars if _is_punct(c) and c != "_"}
    if len(punct) < 2:
        return None
    has_space = any(c.isspace() for c in chars)
    return _Class(
        chars=frozenset(c for c in context if c not in chars), negated=True, space=has_space
    )


def _hex_union(classes: list[_Class]) -> _Class | None:
    """One hex class for sibling fields that are all digits or hex (MAC addresses, UUIDs)."""
    ranges: set[str] = set()
    for cls in classes:
        if cls.negated or cls.chars or not cls.ranges <= {"0-9", "a-f", "A-F"}:
            return None
        ranges |= cls.ranges
    if not ranges & {"a-f", "A-F"}:
        return None
    return _Class(frozenset(ranges | {"0-9"}))
