"""What the next-edit engine reads and answers: a document's lines, a predicted edit, a line diff.

Pure. The engine reads a document through :class:`Lines` (``core.document.Document`` is one), one
line at a time, so that it costs the lines it looks at, not the document's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ...core.document import Point
from .tokens import Token, tokens

Kind = Literal["rename", "argument", "rewrite", "model"]
#: How far from the cursor (lines, each way) the engine looks for the next place an edit fits.
WINDOW = 400


class Lines(Protocol):
    """Read access to a document's lines (contents without terminators)."""

    @property
    def line_count(self) -> int: ...

    def line(self, index: int) -> str: ...


def texts(lines: Lines, start: int, stop: int) -> Sequence[str]:
    """Lines ``[start, stop)``, maybe with their terminators (a :class:`Document`'s are a slice
    of its list; another :class:`Lines` is read line by line): for substring tests, and
    :func:`content` for the lines actually tokenized."""
    raw = getattr(lines, "raw_lines", None)
    if raw is not None:
        return raw(start, stop)  # type: ignore[no-any-return]
    return [lines.line(i) for i in range(start, stop)]


def content(text: str) -> str:
    """A line from :func:`texts` without its terminator."""
    return text.rstrip("\r\n")


class ListLines:
    """:class:`Lines` over a list of strings (tests, the corpus, the model's answer)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def line(self, index: int) -> str:
        return self.lines[index]


@dataclass(frozen=True)
class Prediction:
    """Replace ``start..end`` (code points of the current version) with ``text``."""

    start: Point
    end: Point
    text: str
    kind: Kind


@dataclass(frozen=True)
class LineDiff:
    """One changed line, as the tokens before and after and where they differ."""

    line: int
    old: str
    new: str
    old_tokens: list[Token]
    new_tokens: list[Token]
    #: Tokens the two share at the start and at the end.
    prefix: int
    suffix: int

    @property
    def old_mid(self) -> list[Token]:
        return self.old_tokens[self.prefix : len(self.old_tokens) - self.suffix]

    @property
    def new_mid(self) -> list[Token]:
        return self.new_tokens[self.prefix : len(self.new_tokens) - self.suffix]

    @staticmethod
    def of(line: int, old: str, new: str) -> LineDiff:
        a, b = tokens(old), tokens(new)
        prefix = 0
        while prefix < min(len(a), len(b)) and a[prefix].text == b[prefix].text:
            prefix += 1
        suffix = 0
        while (
            suffix < min(len(a), len(b)) - prefix
            and a[len(a) - 1 - suffix].text == b[len(b) - 1 - suffix].text
        ):
            suffix += 1
        return LineDiff(line, old, new, a, b, prefix, suffix)


def char_span(old: str, new: str) -> tuple[int, int, int]:
    """The differing span: ``old[i:j]`` became ``new[i:k]``."""
    i = 0
    limit = min(len(old), len(new))
    while i < limit and old[i] == new[i]:
        i += 1
    j, k = len(old), len(new)
    while j > i and k > i and old[j - 1] == new[k - 1]:
        j -= 1
        k -= 1
    return i, j, k


def line_edit(line: int, old: str, new: str, kind: Kind) -> Prediction | None:
    """The minimal edit turning line ``line`` from ``old`` into ``new``."""
    if old == new:
        return None
    i, j, k = char_span(old, new)
    return Prediction(Point(line, i), Point(line, j), new[i:k], kind)


def window_order(lines: Lines, after: int, cursor: int) -> list[int]:
    """Lines to search for the next place: below ``after`` to the window's end, then from the
    window's start down to ``after``."""
    lo = max(0, cursor - WINDOW)
    hi = min(lines.line_count, cursor + WINDOW + 1)
    after = min(max(after, lo - 1), hi - 1)
    return [*range(after + 1, hi), *range(lo, after + 1)]
