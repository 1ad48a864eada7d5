"""The answer reconciler: a model's raw answer in, the text to insert at the target out.

Pure and streaming: no pygls, no httpx, no I/O. It sits between the model's stream and the edit
session (and the completion engine), one per answer, and implements the filter protocol of
:mod:`fastedit_lsp.prompting.filters` (``feed`` a delta, get what may go into the buffer now;
``finish`` gives what was held when the stream ended).

Two stages, each holding back at most the current line:

1. :class:`~.wrappers.Unwrap`: reasoning (``<think>…</think>``), code fences, prose around the code.
2. :class:`~.place.Place`: overlap with the text before the target (the target line repeated,
   lines above repeated, the enclosing function re-sent), indentation (re-based on the target's,
   tabs or spaces as the file uses), overlap with the text after the target (lines that already
   follow, closers already there), line breaks as the document's.

When unsure it inserts less: it only ever drops text that repeats the document, never adds any.
What it does is described for users in ``docs/answers.md``.
"""

from __future__ import annotations

from ...core.document import Document, Point
from .place import Place
from .target import PREFIX_LINES, SUFFIX_LINES, Target
from .wrappers import Unwrap, is_prose, without_reasoning

__all__ = [
    "Reconciler",
    "Target",
    "Unwrap",
    "is_prose",
    "reconcile_text",
    "reconciler",
    "target_at",
    "unwrapped",
    "without_reasoning",
]


class Reconciler:
    """Turns a model's streamed answer into the text to insert at a :class:`Target`."""

    def __init__(self, target: Target, *, unwrap: bool = True) -> None:
        mid_line = not target.head_blank and not target.replace
        self._unwrap = Unwrap(in_comment=target.in_comment, mid_line=mid_line) if unwrap else None
        self._place = Place(target)
        self._cr = False  # a "\r" ended the last delta: its "\n" may come next

    def feed(self, text: str) -> str:
        if self._cr:
            text = "\r" + text
            self._cr = False
        if text.endswith("\r"):
            text = text[:-1]
            self._cr = True
        text = text.replace("\r\n", "\n")
        if self._unwrap is not None:
            text = self._unwrap.feed(text)
        return self._place.feed(text) if text else ""

    def finish(self) -> str:
        text = "\r" if self._cr else ""
        self._cr = False
        if self._unwrap is not None:
            text = self._unwrap.feed(text) + self._unwrap.finish()
        out = self._place.feed(text) if text else ""
        return out + self._place.finish()

    @property
    def holding(self) -> str:
        """The answer's code held back now (never more than one line)."""
        return self._place.holding


def target_at(
    document: Document, start: Point, end: Point, *, replace: bool, language_id: str = ""
) -> Target:
    """The target between ``start`` and ``end`` of a document, with windows of the text around."""
    first = Point(max(0, start.line - PREFIX_LINES), 0)
    last_line = min(document.line_count - 1, end.line + SUFFIX_LINES)
    last = Point(last_line, len(document.line(last_line)))
    return Target(
        before=document.get_text(first, start),
        after=document.get_text(end, max(last, end)),
        selection=document.get_text(start, end) if replace else "",
        replace=replace,
        language_id=language_id or document.language_id,
    )


def reconciler(
    document: Document, start: Point, end: Point, *, replace: bool, language_id: str = ""
) -> Reconciler:
    """A reconciler for an answer that goes between ``start`` and ``end``."""
    return Reconciler(target_at(document, start, end, replace=replace, language_id=language_id))


def reconcile_text(target: Target, answer: str) -> str:
    """A whole answer at once (the same result as streamed)."""
    rec = Reconciler(target)
    return rec.feed(answer) + rec.finish()


def unwrapped(answer: str) -> str:
    """The code in a whole answer: reasoning, fences and prose around it dropped, nothing placed."""
    unwrap = Unwrap()
    return unwrap.feed(answer) + unwrap.finish()
