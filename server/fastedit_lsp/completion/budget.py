"""What an inline completion sends a model: prefix, suffix and snippets, within a token budget.

Pure: no pygls, no httpx, no I/O. It runs on every keystroke, so its work is bounded by the budget
and by caps, never by the size of a document: the current document is read only near the cursor
(the lines the budget takes, the lines whose identifiers rank the snippets, its first lines for
its imports), the cursor line only up to :data:`MAX_HEAD_CHARS` / :data:`MAX_TAIL_CHARS`
characters either side; the other documents are :mod:`.snippets`'.

The budget is in estimated tokens (:func:`~.tokens.estimate_tokens`). The prefix gets 60% of it,
the suffix 20% and the snippets the rest; a share a part cannot use (a short document, no other
documents) goes to the others. The prefix and suffix are whole lines, nearest the cursor first,
plus the cursor line's head and tail; their line endings are normalised to ``\\n``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..core.document import Document, Point
from ..prompting.context import is_excluded
from .snippets import (
    OpenDocument,
    Snippet,
    imported_modules,
    near_identifiers,
    rank,
    snippet_cost,
)
from .tokens import MILLI, RUN_MILLI, milli_cost, milli_per_char, whole_tokens

#: Shares of the budget; the snippets get the rest.
PREFIX_SHARE = 0.6
SUFFIX_SHARE = 0.2
#: The cursor line's head and tail are always kept, but a minified or generated line can be
#: megabytes long: only this many characters nearest the cursor are.
MAX_HEAD_CHARS = 2_000
MAX_TAIL_CHARS = 1_000
#: A longer whole line ends the prefix or the suffix (it is data, not context worth its cost).
MAX_CONTEXT_LINE_CHARS = 4_000


@dataclass(frozen=True)
class CompletionContext:
    """The text around a cursor that goes into an inline-completion prompt."""

    #: Text before the cursor: whole lines, then the cursor line's head.
    prefix: str
    #: Text after the cursor: the cursor line's tail, then whole lines.
    suffix: str
    #: Most relevant first.
    snippets: tuple[Snippet, ...]
    #: Whether the prefix or the suffix was cut by the budget or a cap.
    truncated: bool
    language_id: str
    path: str
    #: prefix + suffix + each snippet with its label (snippet_tokens); never above the budget.
    estimated_tokens: int
    #: The exclude pattern the current document matches: then nothing of it is in the context.
    excluded_by: str | None = None


# -- building ----------------------------------------------------------------------------------


def build(
    document: Document,
    cursor: Point,
    *,
    path: str,
    others: Sequence[OpenDocument],
    budget_tokens: int,
    exclude: Sequence[str],
    model: str | None = None,
) -> CompletionContext:
    """The context of an inline completion at ``cursor``, within ``budget_tokens``.

    ``others`` are the other open documents, git-ignored ones already removed by the caller;
    ``exclude`` the ``context.exclude`` globs. A current document that ``exclude`` matches yields an
    empty context (``excluded_by`` says why): nothing of it may reach a model.
    """
    patterns = tuple(exclude)
    per_char = milli_per_char(model)
    budget = max(budget_tokens, 0)
    if (excluded_by := is_excluded(path, patterns)) is not None:
        has_text = document.end != Point(0, 0)
        return CompletionContext("", "", (), has_text, document.language_id, path, 0, excluded_by)
    # Clamped as LSP clamps positions: before the start is the start, past the end the end.
    if cursor.line < 0:
        cursor = Point(0, 0)
    elif cursor.line >= document.line_count:
        cursor = document.end
    line_index = cursor.line
    line = document.line(line_index)
    col = min(max(cursor.col, 0), len(line))
    head = line[max(0, col - MAX_HEAD_CHARS) : col]
    tail = line[col : col + MAX_TAIL_CHARS]
    prefix = _Side(
        head,
        capped=col > MAX_HEAD_CHARS,
        before=True,
        lines=(document.line(i) + "\n" for i in range(line_index - 1, -1, -1)),
        per_char=per_char,
    )
    suffix = _Side(
        tail,
        capped=len(line) - col > MAX_TAIL_CHARS,
        before=False,
        lines=("\n" + document.line(i) for i in range(line_index + 1, document.line_count)),
        per_char=per_char,
    )
    prefix_share = math.floor(budget * PREFIX_SHARE)
    suffix_share = math.floor(budget * SUFFIX_SHARE)
    prefix.grow(prefix_share)
    suffix.grow(suffix_share)
    # A side that has taken all it can (a short document) leaves its share to the snippets.
    allowance = budget - prefix_share - suffix_share
    if prefix.settled:
        allowance += prefix_share - prefix.tokens
    if suffix.settled:
        allowance += suffix_share - suffix.tokens
    snippets: list[Snippet] = []
    if allowance > 0 and others:
        query = near_identifiers(document, line_index, head, tail)
        snippets = rank(
            others,
            path=path,
            language_id=document.language_id,
            query=query,
            modules=imported_modules(document, line_index) if query else set(),
            patterns=patterns,
            allowance=allowance,
            per_char=per_char,
        )
    spent = sum(snippet_cost(snippet, per_char) for snippet in snippets)
    # What the snippets left goes back to the prefix and the suffix, three to one as their shares.
    spare = budget - prefix.tokens - suffix.tokens - spent
    prefix.grow(prefix.tokens + spare * 3 // 4)
    suffix.grow(budget - prefix.tokens - spent)
    prefix.grow(budget - suffix.tokens - spent)
    return CompletionContext(
        prefix=prefix.text,
        suffix=suffix.text,
        snippets=tuple(snippets),
        truncated=not (prefix.complete and suffix.complete),
        language_id=document.language_id,
        path=path,
        estimated_tokens=prefix.tokens + suffix.tokens + spent,
    )


# -- prefix and suffix -------------------------------------------------------------------------


class _Side:
    """The prefix or the suffix, grown outward from the cursor up to a token limit.

    First the cursor line's part (``partial``: the head, cut from its start, or the tail, cut from
    its end), then whole lines, nearest first. Growing again with a larger limit continues where
    the last call stopped; a cut partial takes no lines, so the side stays contiguous.
    """

    def __init__(
        self, partial: str, *, capped: bool, before: bool, lines: Iterator[str], per_char: int
    ) -> None:
        self._partial = partial
        self._capped = capped
        self._before = before
        self._lines = lines
        self._per_char = per_char
        self._pending: str | None = None
        self._stopped = False
        self.kept = ""
        self.pieces: list[str] = []
        self.milli = 0
        self.partial_done = False
        self.exhausted = False

    @property
    def tokens(self) -> int:
        return whole_tokens(self.milli)

    @property
    def complete(self) -> bool:
        """Whether everything up to the document's edge is in."""
        return self.partial_done and self.exhausted

    @property
    def settled(self) -> bool:
        """Whether no larger limit would add anything."""
        whole_partial = len(self.kept) == len(self._partial)
        return whole_partial and (self._capped or self.exhausted or self._stopped)

    @property
    def text(self) -> str:
        if self._before:
            return "".join(reversed(self.pieces)) + self.kept
        return self.kept + "".join(self.pieces)

    def grow(self, limit_tokens: int) -> None:
        limit = limit_tokens * MILLI
        if not self.partial_done and not self._grow_partial(limit):
            return
        while not self._stopped:
            piece = self._pending if self._pending is not None else next(self._lines, None)
            if piece is None:
                self.exhausted = True
                return
            self._pending = piece
            if len(piece) > MAX_CONTEXT_LINE_CHARS + 1:
                self._stopped = True
                return
            # Every character costs at least RUN_MILLI: a line that cannot fit is not measured.
            if len(piece) * RUN_MILLI > limit - self.milli:
                return
            cost = milli_cost(piece, self._per_char)
            if self.milli + cost > limit:
                return
            self.pieces.append(piece)
            self.milli += cost
            self._pending = None

    def _grow_partial(self, limit: int) -> bool:
        """Keep as much of the cursor line's part as fits; whether all of it is in."""
        full = self._partial
        # Cost only falls as characters far from the cursor are dropped: binary search the most
        # that fits.
        low, high = len(self.kept), len(full)
        while low < high:
            middle = (low + high + 1) // 2
            if milli_cost(self._take(middle), self._per_char) <= limit:
                low = middle
            else:
                high = middle - 1
        self.kept = self._take(low)
        self.milli = milli_cost(self.kept, self._per_char)
        self.partial_done = low == len(full) and not self._capped
        return self.partial_done

    def _take(self, count: int) -> str:
        if self._before:
            return self._partial[len(self._partial) - count :]
        return self._partial[:count]
