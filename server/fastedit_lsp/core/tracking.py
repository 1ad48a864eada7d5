"""Where a job's text is in the document, rebased through every change the client reports.

Pure: no pygls, no I/O. The edit session asks a :class:`RegionTracker` where to send the next
edit and tells it what it sent; the document store shows it every content change *before*
applying it. Edits are unversioned (Neovim drops stale versioned edits, eglot rejects them) and
editors report changes late and batched, so the tracker cannot prevent a conflict, only see it:
"detect, stop, never delete" (the README's "Your typing is never deleted").

The rules, with the region being the job's text already reported back by the client:
- A change that is exactly the echo of the oldest edit in flight (same resulting text, however the
  editor described it) extends the region.
- A change entirely before the region shifts it; one after it leaves it alone.
- Anything else (inside or overlapping the region, typing at the point where text is being
  generated, or a change that moves the insertion point while edits are still in flight and so
  will land where the server no longer expects them) is a conflict: the stream must stop, and the
  region is no longer trusted while the job runs.

Once the job has ended (no edit in flight, no conflict while it ran), revert is decided by the
region's text, not by the history of edits: the tracker keeps a *settled span* that grows over
every change touching it (an undo, a redo, typing inside), and revert goes ahead only while the
span holds exactly the job's text again. Undo then redo of the job's text leaves it revertible;
any other text there refuses it, saying on which line. Revert never deletes text that is not the
job's own (DESIGN invariants 1-3).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .document import Change, Document, Point, advance


def rebase(point: Point, change: Change) -> Point:
    """Move a point that lies at or after the end of ``change`` through it."""
    start, end, text = change.start, change.end, change.text
    after = advance(start, text)
    if point.line == end.line:
        return Point(after.line, after.col + point.col - end.col)
    return Point(point.line + after.line - end.line, point.col)


@dataclass(frozen=True)
class SentEdit:
    """An edit on the wire or applied by the client but not yet reported back."""

    start: Point
    end: Point
    text: str


class RegionTracker:
    """Track one job's target region through the document's history."""

    def __init__(self, start: Point, end: Point, original: str) -> None:
        #: Start of the region; the region is ``[start, end)`` in the reported document.
        self.start = start
        self.end = end
        #: The original text of the target range (restored by revert).
        self.original = original
        #: The job's text that the client has reported back (the region's content once replaced).
        self.text = ""
        #: Whether the original range has been replaced by the job's first edit yet.
        self.replaced = start == end
        #: What the region holds until the job's first edit replaces it (the original, or after
        #: a restart the previous attempt's text).
        self.before = original
        self.pending: deque[SentEdit] = deque()
        #: Why the region can no longer be trusted (a conflict), or None.
        self.conflict: str | None = None
        #: After the job: where its text was, grown over every change touching it, and the text
        #: it held then (None until the first change after the job, or while edits are in flight).
        self.settled: tuple[Point, Point, str] | None = None

    def retarget(self, start: Point, end: Point, original: str) -> None:
        """Move the target region before anything was sent (an action that decides it late)."""
        if self.pending or (self.replaced and self.text):
            raise RuntimeError("cannot retarget a region that already received edits")
        self.start, self.end, self.original = start, end, original
        self.before = original
        self.replaced = start == end

    def restart(self) -> None:
        """Let a new attempt replace this job's own text (escalation, retry).

        The next edit replaces the region, which holds only text the job inserted; ``original``
        is kept, so revert still restores what the user had.
        """
        if self.pending or self.conflict is not None:
            raise RuntimeError("cannot restart a region with edits in flight or a conflict")
        self.before = self.text
        self.text = ""
        self.replaced = self.start == self.end

    # -- sending -----------------------------------------------------------------------------

    @property
    def expected(self) -> str:
        """What the region holds in the reported document."""
        return self.text if self.replaced else self.before

    def next_edit(self, text: str) -> SentEdit:
        """The edit that appends ``text`` to the job's output in the client's document."""
        if not self.pending and not self.replaced:
            return SentEdit(self.start, self.end, text)
        at = self._predicted_end()
        return SentEdit(at, at, text)

    def sent(self, edit: SentEdit) -> None:
        """Record an edit the client accepted (or that is on the wire)."""
        self.pending.append(edit)

    def unreported_before(self, edit: SentEdit) -> list[SentEdit]:
        """The edits sent before ``edit`` that the client has not reported back yet."""
        pending = list(self.pending)
        return pending[:-1] if pending and pending[-1] is edit else pending

    def rejected(self, edit: SentEdit) -> None:
        """Forget an edit the client refused to apply."""
        if self.pending and self.pending[-1] == edit:
            self.pending.pop()

    def _predicted_end(self) -> Point:
        point = self.end
        for edit in self.pending:
            point = advance(edit.start, edit.text)
        return point

    def verify(self, document: Document) -> str | None:
        """Check the region still holds what the tracker believes; return a reason if not."""
        if self.conflict is not None:
            return self.conflict
        if self.end > document.end:
            return self._fail("the document is shorter than the generated text")
        if document.get_text(self.start, self.end) != self.expected:
            return self._fail("the text in the target range changed")
        return None

    # -- observing the client ------------------------------------------------------------------

    def is_echo(self, document: Document, change: Change) -> bool:
        """Whether ``change`` is the client's report of this job's oldest edit in flight."""
        if not self.pending or self.conflict is not None:
            return False
        edit = self.pending[0]
        if advance(change.start, change.text).line - change.end.line != (
            advance(edit.start, edit.text).line - edit.end.line
        ):
            return False
        lo = min(change.start, edit.start)
        hi = max(change.end, edit.end)
        if hi > document.end:
            return False
        seen = document.get_text(lo, change.start) + change.text + document.get_text(change.end, hi)
        want = document.get_text(lo, edit.start) + edit.text + document.get_text(edit.end, hi)
        return seen == want

    def echo(self) -> None:
        """Consume the oldest edit in flight, which the client just reported."""
        edit = self.pending.popleft()
        if not self.replaced:
            self.replaced = True
            self.text = ""
            self.start = edit.start
        self.text += edit.text
        self.end = advance(edit.start, edit.text)

    def foreign(self, change: Change, *, live: bool) -> None:
        """Rebase through a change that is not this job's (the user's, or another job's).

        The change is in the coordinates of the reported document: the client applied it before
        any edit still in flight, which it will apply at the positions the server sent.
        """
        if self.conflict is not None:
            return
        if change.end <= self.start:
            moved = rebase(self.end, change)
            if self.pending and moved != self.end:
                self._fail(
                    "an edit before the generated text was reported after more text had been "
                    "sent, so that text may have landed off target"
                )
                return
            self.start = rebase(self.start, change)
            self.end = moved
            return
        if change.start >= self.end:
            generating = bool(self.pending) or (self.replaced and bool(self.text))
            if live and generating and change.start == change.end == self.end:
                self._fail("you typed where the text is being generated")
            return
        self._fail(
            "the text being generated was edited"
            if self.replaced
            else "the target range was edited before the first token"
        )

    def revert_blocker(self) -> str | None:
        """Why a whole revert would lose the user's typing (None: it would not)."""
        return None

    def settle(self, change: Change, *, live: bool) -> None:
        """Grow the settled span over a change that is not the job's own (before ``foreign``).

        Only after the job: while it runs, or with edits in flight, the span is dropped (the
        region's own rules apply); it starts from the region as the job left it, if that region
        is trusted (no conflict, no typing inside a rewrite).
        """
        if live or self.pending:
            self.settled = None
            return
        if self.settled is None:
            if self.conflict is not None or self.revert_blocker() is not None:
                return
            self.settled = (self.start, self.end, self.text if self.replaced else self.before)
        start, end, text = self.settled
        if change.end <= start and not (change.end == start == end):
            self.settled = (rebase(start, change), rebase(end, change), text)
        elif change.start >= end and not (change.start == end == start):
            return
        else:
            # Touching or inside: the span is the union of itself and the change's result.
            new_end = (
                rebase(end, change) if end >= change.end else advance(change.start, change.text)
            )
            self.settled = (min(start, change.start), new_end, text)

    def revert_range(self, document: Document) -> tuple[Point, Point] | str:
        """Where a whole revert replaces the job's text with the original, or why it cannot.

        After the job, decided by the region's current text: it must be exactly the job's.
        """
        if self.settled is None:
            if reason := self.verify(document) or self.revert_blocker():
                return reason
            return self.start, self.end
        start, end, text = self.settled
        if end <= document.end and document.get_text(start, end) == text:
            return start, end
        if (whole := _whole_at_an_edge(document, start, end, text)) is not None:
            return whole
        why = self.revert_blocker() or (
            "revert restores the original only where the text is exactly what the job left"
        )
        return f"line {start.line + 1} no longer holds the job's text: {why}"

    def _fail(self, reason: str) -> str:
        self.conflict = reason
        return reason


def _whole_at_an_edge(
    document: Document, start: Point, end: Point, text: str
) -> tuple[Point, Point] | None:
    """Where the job's text is whole, beginning at the settled span's start or ending at its end.

    Text deleted from the job's text and put back by an undo at the span's edge is taken for the
    user's typing beside it (the span does not grow over an insertion at its edge, so that typing
    right after the job's text keeps revert possible); the text is then whole again just beside
    the span.
    """
    after = advance(start, text)
    if after <= document.end and document.get_text(start, after) == text:
        return start, after
    stop = document.offset_of(min(end, document.end))
    begin = stop - len(text)
    if begin >= 0 and document.text[begin:stop] == text:
        return advance(Point(0, 0), document.text[:begin]), min(end, document.end)
    return None


def apply_change(
    document: Document, trackers: list[tuple[RegionTracker, bool]], change: Change
) -> bool:
    """Apply one reported content change to ``document``, moving every ``(tracker, live)``.

    Whether the change was a job's own edit echoed back (not the user's).
    """
    owner = next((t for t, _ in trackers if t.is_echo(document, change)), None)
    for tracker, live in trackers:
        if tracker is owner:
            tracker.settled = None
            tracker.echo()
        else:
            tracker.settle(change, live=live)
            tracker.foreign(change, live=live)
    document.replace(change.start, change.end, change.text)
    return owner is not None
