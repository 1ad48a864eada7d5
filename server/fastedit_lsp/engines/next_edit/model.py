"""The model's side of next edits, without the model: the window it rewrites, and its answer
turned into the one minimal edit to suggest.

Pure. The model gets a window of lines around the cursor and rewrites it (an "original/updated"
block: Sweep found that format beats unified diffs for next-edit models); the answer is diffed
against the window (``core.diff``), and the changed span nearest after the cursor becomes the
suggestion, in the document's coordinates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.diff import char_edits
from ...core.document import Point
from .lines import Lines, Prediction

#: Lines above and below the cursor the model sees and may rewrite.
WINDOW_ABOVE = 12
WINDOW_BELOW = 12
CURSOR = "<|cursor|>"
_UPDATED = re.compile(r"<updated>\n?(.*?)(?:\n?</updated>|\Z)", re.S)


@dataclass(frozen=True)
class Window:
    """Lines ``start .. end`` (exclusive) of the document, joined with ``"\\n"``."""

    start: int
    end: int
    text: str
    cursor: Point

    def marked(self) -> str:
        """The window with the cursor marked, as the prompt shows it."""
        lines = self.text.split("\n")
        row = self.cursor.line - self.start
        line = lines[row]
        lines[row] = line[: self.cursor.col] + CURSOR + line[self.cursor.col :]
        return "\n".join(lines)


def window(lines: Lines, cursor: Point) -> Window:
    start = max(0, cursor.line - WINDOW_ABOVE)
    end = min(lines.line_count, cursor.line + WINDOW_BELOW + 1)
    text = "\n".join(lines.line(i) for i in range(start, end))
    return Window(start, end, text, cursor)


def updated_block(answer: str) -> str | None:
    """The rewritten window in the model's answer (the ``<updated>`` block), if any."""
    match = _UPDATED.search(answer)
    if match is None:
        return None
    return match.group(1).replace(CURSOR, "")


def edit_from_rewrite(win: Window, updated: str) -> Prediction | None:
    """The model's rewrite as one minimal edit: the changed span at or after the cursor, else
    the last one before it."""
    edits = char_edits(win.text + "\n", updated.rstrip("\n") + "\n")
    if not edits:
        return None
    starts = [0]
    for line in win.text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)

    def point(offset: int) -> Point:
        row = max(i for i, s in enumerate(starts) if s <= offset)
        row = min(row, win.end - win.start - 1)
        return Point(win.start + row, offset - starts[row])

    cursor_offset = starts[win.cursor.line - win.start] + win.cursor.col
    after = [e for e in edits if e.end >= cursor_offset]
    chosen = after[0] if after else edits[-1]
    start, end, text = chosen.start, chosen.end, chosen.text
    size = len(win.text)
    if start > size:  # new lines after the window's last line
        start = end = size
        text = "\n" + text.removesuffix("\n")
    elif end > size:  # the newline closing the window is not the document's
        end = size
        text = text.removesuffix("\n")
    return Prediction(point(start), point(end), text, "model")
