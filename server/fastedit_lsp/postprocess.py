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
# Prose that introduces or closes code, never code itself in any language we edit.
_CHATTER = re.compile(
    r"^\s*(here('s| is| are)\b|sure\b|certainly\b|of course\b|okay\b|ok[,.!]|below is\b|"
    r"the (following|updated|corrected|completed|rewritten|fixed)\b|i('ve| have)\b|"
    r"this (code|function|change|version)\b|let me know\b|note:|explanation:|hope this)",
    re.IGNORECASE,
)


class Filter(Protocol):
    def feed(self, text: str) -> str: ...

    def finish(self) -> str: ...


class FenceFilter:
    """Strip code fences and chatter around the code, holding back at most one line."""

    def __init__(self) -> None:
        self._line = ""  # the current, incomplete line (held only while it could be a fence)
        self._state = "start"  # start -> chatter? -> (fenced | code) -> done
        self._seen_code = False

    def feed(self, text: str) -> str:
        out: list[str] = []
        for piece in re.split(r"(?<=\n)", text):
            if not piece:
                continue
            self._line += piece
            if self._line.endswith("\n"):
                out.append(self._complete(self._line))
                self._line = ""
            elif not self._could_be_special(self._line):
                out.append(self._partial(self._line))
                self._line = ""
        return "".join(out)

    def finish(self) -> str:
        line, self._line = self._line, ""
        if not line:
            return ""
        if self._state == "done" or _FENCE.match(line):
            return ""
        if not self._seen_code and _CHATTER.match(line):
            return ""
        return line

    def _could_be_special(self, partial: str) -> bool:
        """Whether an incomplete line might still turn out to be a fence or chatter."""
        if self._state == "done":
            return True
        stripped = partial.lstrip()
        if not stripped:
            return True
        if "```".startswith(stripped[:3]) or "~~~".startswith(stripped[:3]):
            return True
        # Chatter only opens an answer (before any code) or follows the closing fence.
        return not self._seen_code and _could_be_chatter(stripped)

    def _partial(self, text: str) -> str:
        """Emit part of a line that is known to be code."""
        if self._state == "done":
            return ""
        if self._state in ("start", "chatter"):
            self._state = "code"
        self._seen_code = True
        return text

    def _complete(self, line: str) -> str:
        if self._state == "done":
            return ""
        if _FENCE.match(line):
            # An opening fence before any code; otherwise a closing one, after which the model
            # only comments.
            self._state = "fenced" if self._state in ("start", "chatter") else "done"
            return ""
        if not self._seen_code:
            if _CHATTER.match(line):
                self._state = "chatter"
                return ""
            if self._state == "chatter" and not line.strip():
                return ""
        return self._partial(line)


def _could_be_chatter(stripped: str) -> bool:
    if _CHATTER.match(stripped):
        return True
    # A prefix of a chatter word ("Her", "Sur") is undecided until more arrives.
    word = stripped.split(" ", 1)[0].lower()
    return len(stripped) < 12 and any(
        w.startswith(word)
        for w in ("here", "sure", "certainly", "of", "okay", "ok", "below", "the", "i", "this")
    )


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
        if not self._key:
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
        if self._suffix.startswith(tail) or tail.startswith(self._suffix):
            return True
        at_line_start = (text[index - 1] if index else self._emitted_tail) in ("", "\n")
        if not at_line_start:
            return False
        stripped = tail.lstrip()
        if not stripped:
            return True  # blank lines and indentation are undecided
        return self._key.startswith(stripped)

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
