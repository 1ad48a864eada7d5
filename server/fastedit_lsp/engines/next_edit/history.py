"""The user's own recent edits to one document, as line-level before/after records.

Pure. The document store shows every change the *user* made (never a job's echoed edits, never an
excluded file's) to :meth:`EditHistory.record`; keystrokes on one line coalesce into one record, so
typing ``total`` over ``count`` is one record ``count -> total``. Older records move with the lines
a later change inserts or removes, so each still says where it happened. Bounded: the last
:data:`LIMIT` records.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ...core.document import Change, advance

#: Records kept per document.
LIMIT = 16


@dataclass
class EditRecord:
    """Lines ``line .. line+len(after)`` read ``after`` now, and read ``before`` before the edit."""

    line: int
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def single_line(self) -> tuple[str, str] | None:
        """The one changed line as ``(before, after)``, when the edit changed exactly one."""
        if len(self.before) != len(self.after):
            return None
        changed = [(b, a) for b, a in zip(self.before, self.after, strict=True) if b != a]
        return changed[0] if len(changed) == 1 else None

    @property
    def changed_line(self) -> int:
        """The document line of :attr:`single_line` (or the first line)."""
        for index, (b, a) in enumerate(zip(self.before, self.after, strict=False)):
            if b != a:
                return self.line + index
        return self.line


class EditHistory:
    """The last edits the user made to one document."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.records: deque[EditRecord] = deque(maxlen=limit)

    def record(
        self, change: Change, before: tuple[str, ...], after: tuple[str, ...], *, own: bool
    ) -> None:
        """A change was applied: ``before``/``after`` are the whole lines it touched.

        ``own`` changes (a job's edits echoed back) are not the user's: they only move the
        records below them.
        """
        start, end = change.start.line, change.end.line
        delta = advance(change.start, change.text).line - end
        last = self.records[-1] if self.records else None
        merge = not own and last is not None and last.line == start and last.after == before
        for rec in self.records:
            if rec.line > end:
                rec.line += delta
            elif rec.line + len(rec.after) - 1 >= start and not (merge and rec is last):
                rec.after = ()  # edited over: it no longer says what is there
        if merge and last is not None:
            last.after = after
            if last.before == last.after:
                self.records.pop()
            return
        if any(not r.after for r in self.records):
            kept = [r for r in self.records if r.after]
            self.records.clear()
            self.records.extend(kept)
        if not own and before != after:
            self.records.append(EditRecord(start, before, after))

    def clear(self) -> None:
        self.records.clear()
