"""Where a rewrite job's text is while it replaces only the lines that change, and its hunks.

Pure: no pygls, no I/O. A rewrite (edit selection, a syntax fix, a user action) is streamed as
the minimal diff of the model's answer against the region's text (:mod:`.diff`): unchanged
lines are never deleted and retyped. The region is then, in order:

- ``out``: what the job produced so far (kept lines, its new text, and anything the user typed
  there: typing between hunks is allowed and rebased);
- the remaining lines of the region's text, not yet kept or deleted, as segments; a segment the
  user edited is *dirty*: keeping it keeps the typing, deleting it is a conflict.

The job's next edit is always at the boundary (the point after ``out``): it inserts there and
deletes only remaining lines, never ``out``, so it deletes only the region's original text.
State is kept as the server expects the document once its edits in flight are applied; a change
the client reports while edits are in flight is harmless only after the region (elsewhere the
edits may have landed off target: a conflict). Closed hunks keep fixed indices and their
region offsets, for per-hunk review and :meth:`RewriteTracker.revert_hunk_edit`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from .diff import Delete, Insert, Keep, Op, StreamingDiff, diff_lines
from .diff import split_lines as diff_lines_of
from .document import Change, Document, Point, advance, split_lines
from .tracking import RegionTracker, SentEdit, rebase


@dataclass
class Segment:
    """Region lines ``[first, last)`` of the rewrite's base text, as the document holds them."""

    first: int
    last: int
    text: str
    dirty: bool = False


@dataclass
class HunkState:
    """One changed hunk: region offsets ``[start, end)`` of its text, and what it replaced."""

    original: str
    start: int
    end: int
    state: Literal["applied", "reverted"] = "applied"
    #: The user edited it since (a per-hunk revert would lose the typing).
    edited: bool = False


def _index(text: str, origin: Point, point: Point) -> int:
    """The offset in ``text`` (which starts at ``origin``) of ``point``."""
    if point.line == origin.line:
        return point.col - origin.col
    lines = split_lines(text)
    k = min(point.line - origin.line, len(lines) - 1)
    return sum(len(line) for line in lines[:k]) + point.col


class RewriteTracker(RegionTracker):
    """Track a rewrite's region, its boundary, the lines still to decide, and its hunks."""

    def __init__(self, start: Point, end: Point, original: str, base: str | None = None) -> None:
        super().__init__(start, end, original)
        self.replaced = True  # the region always holds what ``expected`` says
        self._document: Document | None = None
        self.hunks: list[HunkState] = []
        #: After the job, from its first change on: the region's text and hunks as the job left
        #: them (kept while :attr:`settled` is).
        self._clean: tuple[str, list[HunkState]] | None = None
        #: The user edited the region (a whole revert would lose the typing).
        self.user_edited = False
        self._begin(original if base is None else base)

    @classmethod
    def from_region(cls, tracker: RegionTracker) -> RewriteTracker:
        """A rewrite tracker for a region tracker's region (nothing sent yet)."""
        return cls(tracker.start, tracker.end, tracker.original, base=tracker.expected)

    def attach(self, document: Document) -> None:
        """The document the region is in (for client coordinates in the record)."""
        self._document = document

    def _begin(self, base: str) -> None:
        self.base = base
        self.diff = StreamingDiff(base)
        self.out = ""
        self.remaining = [Segment(i, i + 1, line) for i, line in enumerate(diff_lines_of(base))]
        self._open: tuple[int, str] | None = None  # region offset of an open hunk, its original
        self._sync()
        #: The region's end in the reported document (behind ``end`` while edits are in flight).
        self._reported_end = self.end

    def _sync(self) -> None:
        self.text = self.out + "".join(s.text for s in self.remaining)
        self.end = advance(self.start, self.text)

    @property
    def boundary(self) -> Point:
        """Where the job's next text goes: after what it produced so far."""
        return advance(self.start, self.out)

    @property
    def expected(self) -> str:
        return self.text

    # -- the job's own edits ---------------------------------------------------------------------

    def retarget(self, start: Point, end: Point, original: str) -> None:
        if self.pending or self.out or self.hunks:
            raise RuntimeError("cannot retarget a region that already received edits")
        self.start, self.original = start, original
        self._begin(original)

    def restart(self) -> None:
        """A new attempt rewrites the region's current text (the previous attempt's)."""
        if self.pending or self.conflict is not None:
            raise RuntimeError("cannot restart a region with edits in flight or a conflict")
        self.hunks = []
        self._begin(self.text)

    def next_edit(self, text: str) -> SentEdit:
        raise RuntimeError("a rewrite sends the edits of its diff (RewriteTracker.plan)")

    def plan(self, ops: list[Op]) -> Iterator[list[Insert | Delete]]:
        """The runs of ``ops`` that need an edit, one at a time (kept lines between them move
        the state at once): turn each into its edit with :meth:`take` and send it before
        asking for the next.

        Raises ``ValueError`` (with the reason, also set as the conflict) when an op would
        split lines the user joined.
        """
        run: list[Insert | Delete] = []
        for op in [*ops, None]:
            if isinstance(op, Insert | Delete):
                run.append(op)
                continue
            if run:
                yield run
                run = []
            if isinstance(op, Keep):
                self._keep(op.line)

    def take(self, run: list[Insert | Delete]) -> SentEdit:
        """The edit carrying out ``run``; the state moves as if it were applied.

        Raises ``ValueError`` (the reason, also set as the conflict) when the region no longer
        holds what the tracker expects or the run would delete a line the user edited.
        """
        self._check()
        return self._run(run)

    def _check(self) -> None:
        if self._document is not None and (reason := self.verify(self._document)):
            raise ValueError(reason)

    def verify(self, document: Document) -> str | None:
        # With edits in flight the document is behind the state: foreign() watches instead.
        if self.conflict is None and self.pending:
            return None
        return super().verify(document)

    def finish(self) -> None:
        """The stream ended: close the last hunk; hunks against the original if the base was
        an earlier attempt's text."""
        self._close()
        if self.base != self.original and not self.user_edited:
            self.hunks = []
            starts = [0]
            for line in diff_lines_of(self.text):
                starts.append(starts[-1] + len(line))
            for hunk in diff_lines(self.original, self.text):
                self.hunks.append(
                    HunkState(hunk.original, starts[hunk.new_start], starts[hunk.new_end])
                )

    def _keep(self, line: int) -> None:
        self._close()
        first = self.remaining[0] if self.remaining else None
        if first is None or first.first != line:
            raise RuntimeError(f"keep of line {line} out of order")
        if first.last != line + 1:
            raise ValueError(self._fail("you joined lines that the rewrite is still deciding"))
        self.remaining.pop(0)
        self.out += first.text

    def _run(self, run: list[Insert | Delete]) -> SentEdit:
        at = self.boundary
        inserted = "".join(op.text for op in run if isinstance(op, Insert))
        deleted = ""
        for op in run:
            if isinstance(op, Delete):
                deleted += self._take(op.start, op.end)
        if self._open is None:
            self._open = (len(self.out), "")
        self._open = (self._open[0], self._open[1] + deleted)
        self.out += inserted
        self._sync()
        return SentEdit(at, advance(at, deleted), inserted)

    def _take(self, first: int, last: int) -> str:
        taken = ""
        while self.remaining and self.remaining[0].first < last:
            segment = self.remaining[0]
            if segment.dirty or segment.last > last:
                raise ValueError(self._fail("the rewrite replaces a line you edited"))
            taken += self.remaining.pop(0).text
        return taken

    def _close(self) -> None:
        if self._open is not None:
            start, original = self._open
            self._open = None
            self.hunks.append(HunkState(original, start, len(self.out)))

    def rejected(self, edit: SentEdit) -> None:
        super().rejected(edit)
        self._fail("the editor refused an edit of the rewrite")

    # -- per-hunk revert -------------------------------------------------------------------------

    def revert_hunk_edit(self, index: int) -> SentEdit | str:
        """The edit restoring hunk ``index``'s original text (state moves as if applied), or why
        it cannot be restored."""
        if not 0 <= index < len(self.hunks):
            return f"no hunk {index} (the job has {len(self.hunks)})"
        self._recover()
        hunk = self.hunks[index]
        if hunk.state == "reverted":
            return f"hunk {index} was already reverted"
        if hunk.edited:
            return f"hunk {index} changed since the job"
        if self.conflict is not None:
            return self.conflict
        if self.pending:
            return "the editor has not reported the job's edits yet; try again"
        start = advance(self.start, self.text[: hunk.start])
        end = advance(self.start, self.text[: hunk.end])
        edit = SentEdit(start, end, hunk.original)
        self._region_change(hunk.start, hunk.end, hunk.original, keep=hunk)
        hunk.state = "reverted"
        return edit

    def _recover(self) -> None:
        """After the job: if the region holds exactly the job's text again (an undo, then a redo;
        however the editor described the changes), its hunks are where the job left them."""
        if self._clean is None or self.settled is None or self._document is None:
            return
        if not self.user_edited and not any(hunk.edited for hunk in self.hunks):
            return
        where = self.revert_range(self._document)
        if isinstance(where, str):
            return
        text, hunks = self._clean
        self.start = where[0]
        self.out, self.remaining, self._open = text, [], None
        self._sync()
        self._reported_end = self.end
        self.hunks = [dataclasses.replace(h) for h in hunks]
        self.user_edited = False
        self.settled = None

    # -- observing the client --------------------------------------------------------------------

    def settle(self, change: Change, *, live: bool) -> None:
        fresh = self.settled is None
        super().settle(change, live=live)
        if self.settled is None:
            self._clean = None
        elif fresh:
            # The region as the job (or a hunk's revert) left it: what an undo and a redo restore.
            hunks = [dataclasses.replace(h, edited=False) for h in self.hunks]
            self._clean = (self.text, hunks)

    def echo(self) -> None:
        edit = self.pending.popleft()
        self._reported_end = rebase(self._reported_end, Change(edit.start, edit.end, edit.text))
        if not self.pending:
            self._reported_end = self.end

    def foreign(self, change: Change, *, live: bool) -> None:
        if self.conflict is not None:
            return
        if self.pending:
            end = self._reported_end
            if change.start > end or (change.start == end and (self.remaining or not live)):
                return
            self._fail(
                "the document changed while the rewrite's edits were on their way, so they may "
                "have landed off target"
            )
            return
        if change.end <= self.start and not (change.end == self.start and self.text == ""):
            self.start = rebase(self.start, change)
            self._sync()
            self._reported_end = self.end
            return
        if change.start >= self.end:
            if live and change.start == change.end == self.end == self.boundary:
                self._fail("you typed where the text is being generated")
            return
        if change.start < self.start or change.end > self.end:
            if live:
                self._fail("an edit reached across the edge of the text being rewritten")
                return
            # After the job: the region is no longer the job's alone.
            self.user_edited = True
            for hunk in self.hunks:
                hunk.edited = True
            return
        text = self.text
        x = _index(text, self.start, change.start)
        y = _index(text, self.start, change.end)
        cut = len(self.out)
        if live and (x < cut < y or (x == cut == y)):
            self._fail(
                "you typed where the text is being generated"
                if x == y
                else "an edit reached across the point where the text is being generated"
            )
            return
        self.user_edited = True
        self._region_change(x, y, change.text)
        self._reported_end = self.end

    def _region_change(self, x: int, y: int, text: str, keep: HunkState | None = None) -> None:
        """Region text ``[x, y)`` became ``text``: move the boundary, segments and hunks."""
        delta = len(text) - (y - x)
        for hunk in self.hunks:
            if hunk is keep:
                hunk.end = hunk.start + len(text)
            elif y <= hunk.start:
                hunk.start += delta
                hunk.end += delta
            elif x >= hunk.end:
                continue
            else:
                hunk.edited = True
                hunk.end = max(hunk.start, hunk.end + delta)
        if self._open is not None and y <= self._open[0]:
            self._open = (self._open[0] + delta, self._open[1])
        cut = len(self.out)
        if y <= cut:
            self.out = self.out[:x] + text + self.out[y:]
        else:
            self._segments_change(x - cut, y - cut, text)
        self._sync()

    def _segments_change(self, x: int, y: int, text: str) -> None:
        """Remaining text ``[x, y)`` became ``text`` (user typing in lines still to decide)."""
        at = 0
        touched: list[int] = []
        for i, segment in enumerate(self.remaining):
            lo, hi = at, at + len(segment.text)
            if (x < hi and y > lo) or lo <= x < hi:
                touched.append(i)
            at = hi
        if not touched:  # past the end: belongs to the last segment
            touched = [len(self.remaining) - 1]
        first, last = touched[0], touched[-1]
        lo = sum(len(s.text) for s in self.remaining[:first])
        joined = "".join(s.text for s in self.remaining[first : last + 1])
        merged = Segment(
            self.remaining[first].first,
            self.remaining[last].last,
            joined[: x - lo] + text + joined[y - lo :],
            dirty=True,
        )
        self.remaining[first : last + 1] = [merged]

    # -- the record ------------------------------------------------------------------------------

    def hunk_records(self) -> list[dict[str, Any]]:
        """The record's ``hunks``: original text, current range (client coordinates), state."""
        self._recover()
        records: list[dict[str, Any]] = []
        for hunk in self.hunks:
            start = advance(self.start, self.text[: hunk.start])
            end = advance(self.start, self.text[: hunk.end])
            if self._document is not None:
                (sl, sc), (el, ec) = self._document.to_client(start), self._document.to_client(end)
            else:
                (sl, sc), (el, ec) = start, end
            records.append(
                {
                    "original": hunk.original,
                    "range": {
                        "start": {"line": sl, "character": sc},
                        "end": {"line": el, "character": ec},
                    },
                    "state": hunk.state,
                }
            )
        return records

    def hunk_at(self, start: Point, end: Point) -> list[int]:
        """Indices of applied hunks whose range meets ``[start, end]``."""
        self._recover()
        found = []
        for index, hunk in enumerate(self.hunks):
            a = advance(self.start, self.text[: hunk.start])
            b = advance(self.start, self.text[: hunk.end])
            if hunk.state == "applied" and not (end < a or start > b):
                found.append(index)
        return found

    def revert_blocker(self) -> str | None:
        if self.user_edited:
            return "the region was edited since the job (revert its hunks one by one)"
        return None
