"""Prompt-lookup completion: the offline engine's "complete the rest".

Pure: no pygls, no httpx, no I/O; callers pass the text in.

The text just before the cursor is looked up in text the user already has: the current document
before the current line, the document after the cursor, then the other documents the caller passes
(open documents first, then workspace files). The longest tail of the prefix that occurs there is
the match; what followed its occurrences is the proposal, cut at a block boundary:

- a cursor after text on its line (mid-line) gets the rest of the line;
- a cursor at a line start (only indentation before it on an otherwise empty line), or at the end of
  a line ending in a block opener (``:``, ``(``, ``[``, ``{``) whose earlier match also ended its
  line, gets the following block: the lines indented deeper than the matched line, stopping at a
  blank line or a dedent (a closing bracket at the matched line's indentation is kept and ends it).

A short match is weak evidence, so it needs agreement: at least :data:`MIN_AGREEMENT` occurrences
must propose the same text and be the clear majority (blocks that differ further down still
agree on their first lines, which are proposed). A long match (:data:`LONG_MATCH` characters
or more) may stand alone but still needs a majority. A match that covers the whole line before
the cursor may also be confirmed by every earlier line that began the same way. Measured on the
standard library (``tests/unit/test_lookup_corpus.py``, rest-of-line cuts): proposing what
followed the nearest longest match is right 30% of the time (at 89% coverage); with these
rules, 70% (at 22%).

Cost: a binary search over the match length (about eight substring scans, done by ``str``'s C
search) over at most :data:`MAX_SCAN_CHARS` characters, then at most :data:`MAX_OCCURRENCES`
occurrences are read. A 5,000-line document answers in a few milliseconds, without an index to
keep up to date.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MAX_KEY = 256
"""The longest tail of the prefix that is looked up."""
MIN_MATCH = 4
"""A match shorter than this (or only whitespace) is no evidence at all."""
LONG_MATCH = 32
"""A match at least this long may propose on its own; a shorter one needs agreement."""
MID_MATCH = 16
"""A match inside the current line needs this length as well as agreement."""
MIN_AGREEMENT = 2
"""How many occurrences must propose the same text (always a majority of them too)."""
MAX_OCCURRENCES = 64
"""At most this many occurrences are read, nearest to the cursor first."""
MAX_SCAN_CHARS = 4_000_000
"""At most this much text is searched: the nearest of the prefix, then the suffix, then others."""

_OPENERS = (":", "(", "[", "{")
_CLOSERS = (")", "]", "}")
# Separates the texts searched: never in a key, so no match spans two texts; ends a line too.
_SEP = "\x00"
_EOL = re.compile(r"[\r\n\x00]")


@dataclass(frozen=True)
class _Query:
    """What is known about the cursor."""

    key_source: str  # the prefix's tail that may be looked up
    block_at_line_start: bool  # only indentation before the cursor, nothing after it on its line
    block_after_opener: bool  # the line ends in an opener right before the cursor
    newline: str  # the document's line ending, for proposals made of several lines
    max_chars: int


def complete(
    prefix: str, suffix: str, others: Sequence[str] = (), *, max_chars: int = 400
) -> str | None:
    """Text to insert at the cursor, from what followed earlier matches of the text before it.

    ``prefix`` is the document before the cursor, ``suffix`` after it, ``others`` the text of
    other documents (most relevant first). None when nothing matches well enough, when the
    proposal would only repeat the suffix, or when it is longer than ``max_chars``.
    """
    if max_chars <= 0 or not prefix.strip():
        return None
    line_start = _line_start(prefix, len(prefix))
    before = prefix[line_start:]
    after = suffix[: _eol(suffix, 0)]
    rest_blank = not after.strip()
    query = _Query(
        key_source=prefix[-MAX_KEY:].replace(_SEP, ""),
        block_at_line_start=rest_blank and not before.strip(),
        block_after_opener=rest_blank and before.rstrip().endswith(_OPENERS),
        newline=_newline(prefix, suffix),
        max_chars=max_chars,
    )
    # Without its last line break, so that no earlier match can end where the cursor's line starts.
    hay, earlier_end = _haystack(prefix[: max(line_start - 1, 0)], suffix, others)
    length = _longest_match(query.key_source, hay)
    key = query.key_source[len(query.key_source) - length :]
    if length < MIN_MATCH or not key.strip():
        return None
    near = _occurrence_ends(hay, key, earlier_end)
    proposals = [p for p in (_proposal(hay, end, query) for end in near) if p is not None]
    agreed = _agreement(proposals)
    if agreed is None:
        return None
    chosen, votes = agreed
    whole_line = length > len(before)  # the match reaches back over the line break
    if length >= LONG_MATCH or (votes >= MIN_AGREEMENT and (whole_line or length >= MID_MATCH)):
        return _without_suffix_repeat(chosen, suffix)
    if whole_line and key != "\n" + before:
        # Every earlier line that began like this one votes, not only the longest matches.
        line_ends = _occurrence_ends(hay, "\n" + before, earlier_end)
        line_proposals = [p for p in (_proposal(hay, e, query) for e in line_ends) if p is not None]
        line_agreed = _agreement(line_proposals)
        if line_agreed is not None and line_agreed[0] == chosen and line_agreed[1] >= MIN_AGREEMENT:
            return _without_suffix_repeat(chosen, suffix)
    return None


def _line_start(text: str, end: int) -> int:
    """Where the line containing position ``end`` starts."""
    return max(text.rfind("\n", 0, end), text.rfind("\r", 0, end), text.rfind(_SEP, 0, end)) + 1


def _eol(text: str, start: int) -> int:
    match = _EOL.search(text, start)
    return match.start() if match else len(text)


def _newline(prefix: str, suffix: str) -> str:
    for text, last in ((prefix, True), (suffix, False)):
        index = text.rfind("\n") if last else text.find("\n")
        if index != -1:
            return "\r\n" if index > 0 and text[index - 1] == "\r" else "\n"
    return "\n"


def _haystack(earlier: str, suffix: str, others: Sequence[str]) -> tuple[str, int]:
    """The texts searched, joined, within the scan budget; and where ``earlier`` ends in it."""
    budget = MAX_SCAN_CHARS
    parts = [earlier[-budget:]]
    budget -= len(parts[0])
    for text in (suffix, *others):
        if budget <= 0:
            break
        parts.append(text[:budget])
        budget -= len(parts[-1])
    return _SEP.join(parts), len(parts[0])


def _longest_match(key_source: str, hay: str) -> int:
    """Length of the longest tail of ``key_source`` found in ``hay`` (existence is monotone)."""
    low, high = 0, len(key_source)
    while low < high:
        mid = (low + high + 1) // 2
        if key_source[len(key_source) - mid :] in hay:
            low = mid
        else:
            high = mid - 1
    return low


def _occurrence_ends(hay: str, key: str, earlier_end: int) -> list[int]:
    """End positions of ``key`` in ``hay``: in the earlier text nearest first, then in order."""
    ends: list[int] = []
    pos = hay.rfind(key, 0, earlier_end)
    while pos != -1 and len(ends) < MAX_OCCURRENCES:
        ends.append(pos + len(key))
        pos = hay.rfind(key, 0, pos + len(key) - 1) if pos else -1
    pos = hay.find(key, earlier_end)
    while pos != -1 and len(ends) < MAX_OCCURRENCES:
        ends.append(pos + len(key))
        pos = hay.find(key, pos + 1)
    return ends


def _proposal(hay: str, end: int, query: _Query) -> str | None:
    """What followed one occurrence, cut at the block boundary."""
    eol = _eol(hay, end)
    first = hay[end:eol]
    line_start = _line_start(hay, end)
    if query.block_at_line_start:
        if not first.strip():
            return None
    elif first.strip():
        return first.rstrip() if len(first.rstrip()) <= query.max_chars else None
    elif not query.block_after_opener:
        return None
    base = _indent(hay[line_start:eol])
    lines = [first.rstrip()]
    size = len(lines[0])
    pos = eol
    while pos < len(hay) and hay[pos] != _SEP:
        pos += 2 if hay.startswith("\r\n", pos) else 1
        next_eol = _eol(hay, pos)
        line = hay[pos:next_eol].rstrip()
        indent = _indent(line)
        closing = indent == base and line[indent : indent + 1] in _CLOSERS
        if not line or (indent <= base and not closing):
            break
        size += len(query.newline) + len(line)
        if size > query.max_chars:
            break
        lines.append(line)
        if closing:
            break
        pos = next_eol
    text = query.newline.join(lines)
    return text if text.strip() and len(text) <= query.max_chars else None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _agreement(proposals: list[str]) -> tuple[str, int] | None:
    """What more than half of the occurrences propose, and how many do.

    Blocks that differ further down still agree on their first lines: those are proposed.
    """
    counts: dict[str, int] = {}
    for p in proposals:
        counts[p] = counts.get(p, 0) + 1
    for p, votes in counts.items():
        if votes * 2 > len(proposals):
            return p, votes
    group = [p.split("\n") for p in proposals]
    agreed: list[str] = []
    while True:
        depth = len(agreed)
        lines: dict[str, int] = {}
        for p_lines in group:
            if len(p_lines) > depth:
                lines[p_lines[depth]] = lines.get(p_lines[depth], 0) + 1
        best = max(lines, key=lambda line: lines[line], default=None)
        if best is None or lines[best] * 2 <= len(proposals):
            break
        agreed.append(best)
        group = [p_lines for p_lines in group if len(p_lines) > depth and p_lines[depth] == best]
    text = "\n".join(agreed).rstrip("\r")
    return (text, len(group)) if text.strip() else None


def _without_suffix_repeat(text: str, suffix: str) -> str | None:
    """Drop a tail that the suffix already starts with; None if nothing new remains."""
    stripped = text.strip()
    if suffix.lstrip().startswith(stripped):
        return None
    for index in range(len(text)):
        if suffix.startswith(text[index:]):
            text = text[:index]
            break
    return text if text.strip() else None
