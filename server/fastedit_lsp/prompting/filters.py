"""Stream filters between the model and the edit session.

Pure: no pygls, no httpx. Each filter takes text deltas as they arrive (``feed``) and returns the
text that may go into the buffer now; ``finish`` returns what it still held when the stream ended.

- :class:`FenceFilter` drops Markdown code fences and the chatter lines models put around code
  ("Here is the code:", "Let me know if..."), holding back at most the current line.
- :class:`SuffixDedup` drops text that only repeats what already follows the cursor: a model asked
  to complete ``foo(|)`` often answers ``a, b)``, and the ``)`` is already there.
- :class:`Pipeline` chains them.
"""

from __future__ import annotations

import re
from typing import Protocol

_FENCE = re.compile(r"^\s*(```|~~~)")
_FENCE_MARKS = ("```", "~~~")
# How prose that introduces or closes code begins; never how code in a language we edit begins.
_CHATTER_OPENERS = (
    "here's",
    "here is",
    "here are",
    "sure",
    "certainly",
    "of course",
    "okay",
    "ok,",
    "ok.",
    "ok!",
    "below is",
    "the following",
    "the updated",
    "the corrected",
    "the completed",
    "the rewritten",
    "the fixed",
    "i've",
    "i have",
    "this code",
    "this function",
    "this change",
    "this version",
    "let me know",
    "note:",
    "explanation:",
    "hope this",
)
_CHATTER = re.compile(
    r"^\s*("
    + "|".join(re.escape(o) + (r"\b" if o[-1].isalpha() else "") for o in _CHATTER_OPENERS)
    + ")",
    re.IGNORECASE,
)


class Filter(Protocol):
    def feed(self, text: str) -> str: ...

    def finish(self) -> str: ...


class FenceFilter:
    """Strip code fences and chatter around the code, holding back at most the current line.

    Decisions are made at line starts only: once part of a line went out, the rest of it is code.
    Before the first line of code, blank lines are held too (they go out with that line, or are
    dropped with the fence or chatter that follows them).
    """

    def __init__(self) -> None:
        self._blank = ""  # blank lines before the first code line, held
        self._line = ""  # the current line while it could still be a fence or chatter
        self._open = False  # part of the current line went out: the rest is code
        self._seen_code = False
        self._chatter = False  # an introduction was dropped: blank lines after it go too
        self._done = False  # after a closing fence: only commentary follows

    def feed(self, text: str) -> str:
        out: list[str] = []
        for piece in re.split(r"(?<=\n)", text):
            if not piece or self._done:
                continue
            if self._open:
                out.append(piece)
                self._open = not piece.endswith("\n")
                continue
            self._line += piece
            if self._line.endswith("\n"):
                line, self._line = self._line, ""
                out.append(self._complete(line))
            elif not self._could_be_special(self._line):
                out.append(self._code(self._line))
                self._line = ""
                self._open = True
        return "".join(out)

    def finish(self) -> str:
        line, self._line = self._line, ""
        if self._done or _FENCE.match(line):
            return ""
        if not self._seen_code and _CHATTER.match(line):
            return ""
        held, self._blank = self._blank, ""
        return held + line

    def _could_be_special(self, partial: str) -> bool:
        """Whether an incomplete line might still turn out to be a fence or chatter."""
        stripped = partial.lstrip()
        if not stripped:
            return True
        head = stripped[:3]
        if any(mark.startswith(head) for mark in _FENCE_MARKS):
            return True
        if self._seen_code:
            return False
        lowered = stripped.lower()
        return bool(_CHATTER.match(stripped)) or any(
            o.startswith(lowered) for o in _CHATTER_OPENERS
        )

    def _code(self, text: str) -> str:
        held, self._blank = self._blank, ""
        self._seen_code = True
        return held + text

    def _complete(self, line: str) -> str:
        if _FENCE.match(line):
            # An opening fence before any code; otherwise a closing one, after which the model
            # only comments.
            self._done = self._seen_code
            self._blank = ""
            return ""
        if not self._seen_code:
            if _CHATTER.match(line):
                self._blank = ""
                self._chatter = True
                return ""
            if not line.strip():
                if not self._chatter:
                    self._blank += line
                return ""
        return self._code(line)


class SuffixDedup:
    """Drop a tail of the output that only repeats the document's text after the cursor.

    Text that could be the start of such a repeat is held while it keeps matching and released as
    soon as it diverges; when the stream ends while it still matches, it is dropped.
    """

    def __init__(self, suffix: str, *, window: int = 4000) -> None:
        self._suffix = suffix[:window]
        self._key = self._suffix.lstrip()
        self._held = ""
        self._emitted_tail = ""  # last emitted character, to know whether we are at a line start

    def feed(self, text: str) -> str:
        if not self._suffix:
            return text
        pending = self._held + text
        cut = self._match_start(pending)
        emit, self._held = pending[:cut], pending[cut:]
        if emit:
            self._emitted_tail = emit[-1]
        return emit

    def finish(self) -> str:
        held, self._held = self._held, ""
        if held and self._repeats(held):
            return ""
        return held

    def _match_start(self, text: str) -> int:
        """Index of the earliest tail of ``text`` that could still be a repeat of the suffix."""
        for index in range(len(text)):
            if self._could_repeat(text, index):
                return index
        return len(text)

    def _could_repeat(self, text: str, index: int) -> bool:
        tail = text[index:]
        if self._suffix.startswith(tail):
            return True
        at_line_start = (text[index - 1] if index else self._emitted_tail) in ("", "\n")
        if not at_line_start:
            return False
        stripped = tail.lstrip()
        if not stripped:
            return True  # blank lines and indentation are undecided
        return bool(self._key) and self._key.startswith(stripped)

    def _repeats(self, held: str) -> bool:
        if not held.strip():
            return self._suffix.startswith(held)
        return self._suffix.startswith(held) or self._key.startswith(held.lstrip())


class Pipeline:
    """Filters applied in order."""

    def __init__(self, *filters: Filter) -> None:
        self._filters = filters

    def feed(self, text: str) -> str:
        for f in self._filters:
            text = f.feed(text)
        return text

    def finish(self) -> str:
        text = ""
        for f in self._filters:
            text = f.feed(text) + f.finish()
        return text
