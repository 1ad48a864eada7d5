"""The server's own copy of each open document, in the negotiated position encoding.

Pure: no pygls. pygls' ``TextDocument`` re-splits the whole text on every access and mishandles
positions at the end of a document (pygls 2.1.1's offset-to-position helper), and the edit session
needs positions it can trust, so documents are kept here as a list of lines.

Internally a position is a :class:`Point`: a line index and a column in code points. The client's
``character`` offsets (UTF-16 code units by default, or UTF-8 bytes / UTF-32 code points when
negotiated) are converted at the edge, one line at a time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

Encoding = Literal["utf-8", "utf-16", "utf-32"]

# LSP line terminators are exactly these three (str.splitlines knows many more).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Point(NamedTuple):
    """A position inside a document: line index and column in code points."""

    line: int
    col: int


class PositionError(ValueError):
    """A client position that does not exist in the document."""


def split_lines(text: str) -> list[str]:
    """Split into lines that keep their terminators; the last element has none (maybe empty)."""
    lines: list[str] = []
    start = 0
    for match in _LINE_BREAK.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    lines.append(text[start:])
    return lines


def content_of(line: str) -> str:
    """A line without its terminator."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


def advance(start: Point, text: str) -> Point:
    """The point just after ``text`` inserted at ``start``."""
    breaks = list(_LINE_BREAK.finditer(text))
    if not breaks:
        return Point(start.line, start.col + len(text))
    return Point(start.line + len(breaks), len(text) - breaks[-1].end())


def units(text: str, encoding: Encoding) -> int:
    """Length of ``text`` in the client's code units."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-16":
        return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
    return len(text.encode("utf-8", "surrogatepass"))


def col_from_units(content: str, count: int, encoding: Encoding) -> int:
    """Code-point column of a client ``character`` offset on a line (clamped to the line)."""
    if encoding == "utf-32" or content.isascii():
        return min(count, len(content))
    seen = 0
    for index, ch in enumerate(content):
        if seen >= count:
            return index
        if encoding == "utf-16":
            seen += 2 if ord(ch) > 0xFFFF else 1
        else:
            seen += len(ch.encode("utf-8", "surrogatepass"))
        if seen > count:
            # Inside a surrogate pair or a multi-byte sequence: stay before the character.
            return index
    return len(content)


@dataclass(frozen=True)
class Change:
    """One applied content change, in points of the document *before* it."""

    start: Point
    end: Point
    text: str


class Document:
    """An open text document as the client reported it."""

    def __init__(
        self,
        uri: str,
        text: str,
        *,
        version: int = 0,
        language_id: str = "",
        encoding: Encoding = "utf-16",
    ) -> None:
        self.uri = uri
        self.version = version
        self.language_id = language_id
        self.encoding: Encoding = encoding
        self._lines = split_lines(text)

    def copy(self) -> Document:
        """A snapshot that later changes to this document do not affect (O(lines) pointers)."""
        clone = Document.__new__(Document)
        clone.uri, clone.version, clone.language_id = self.uri, self.version, self.language_id
        clone.encoding = self.encoding
        clone._lines = list(self._lines)
        return clone

    # -- reading ---------------------------------------------------------------------------

    @property
    def text(self) -> str:
        return "".join(self._lines)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def line(self, index: int) -> str:
        """Content of line ``index`` without its terminator."""
        return content_of(self._lines[index])

    def raw_lines(self, start: int, stop: int) -> list[str]:
        """Lines ``start..stop`` as stored, with their terminators: a slice (the next-edit
        engine scans hundreds of lines per suggestion, and only some need their content)."""
        return self._lines[start:stop]

    @property
    def end(self) -> Point:
        return Point(len(self._lines) - 1, len(content_of(self._lines[-1])))

    def get_text(self, start: Point, end: Point) -> str:
        """Text between two points (``start <= end``)."""
        if start.line == end.line:
            return self._lines[start.line][start.col : end.col]
        parts = [self._lines[start.line][start.col :]]
        parts.extend(self._lines[start.line + 1 : end.line])
        parts.append(self._lines[end.line][: end.col])
        return "".join(parts)

    def offset_of(self, point: Point) -> int:
        """Code-point offset of a point from the start of the document (O(lines))."""
        return sum(map(len, self._lines[: point.line])) + point.col

    # -- client positions --------------------------------------------------------------------

    def to_point(self, line: int, character: int, *, strict: bool = False) -> Point:
        """Convert a client position; clamp it (LSP's rule), or raise when ``strict``."""
        if strict:
            if line < 0 or character < 0:
                raise PositionError(f"negative position {line}:{character}")
            if line >= len(self._lines):
                raise PositionError(
                    f"line {line} is past the end of the document ({len(self._lines)} lines)"
                )
            content = content_of(self._lines[line])
            if character > units(content, self.encoding):
                raise PositionError(
                    f"character {character} is past the end of line {line} "
                    f"({units(content, self.encoding)} {self.encoding} units)"
                )
            return Point(line, col_from_units(content, character, self.encoding))
        if line < 0:
            return Point(0, 0)
        if line >= len(self._lines):
            return self.end
        content = content_of(self._lines[line])
        return Point(line, col_from_units(content, max(character, 0), self.encoding))

    def to_client(self, point: Point) -> tuple[int, int]:
        """A point as a client ``(line, character)``."""
        return point.line, units(self._lines[point.line][: point.col], self.encoding)

    # -- writing -----------------------------------------------------------------------------

    def replace(self, start: Point, end: Point, text: str) -> Change:
        """Replace the text between two points; return the change as applied."""
        if end < start:
            start, end = end, start
        head = self._lines[start.line][: start.col]
        tail = self._lines[end.line][end.col :]
        first = start.line
        segment = head + text + tail
        # A "\r" ending the previous line and a "\n" starting the segment are one terminator.
        if first > 0 and segment.startswith("\n") and self._lines[first - 1].endswith("\r"):
            first -= 1
            segment = self._lines[first] + segment
        new_lines = split_lines(segment)
        if end.line + 1 < len(self._lines):
            # The segment ended with a terminator, so split_lines left an empty last element.
            new_lines.pop()
        self._lines[first : end.line + 1] = new_lines
        return Change(start, end, text)

    def set_text(self, text: str) -> Change:
        """Replace the whole document (full sync)."""
        return self.replace(Point(0, 0), self.end, text)
