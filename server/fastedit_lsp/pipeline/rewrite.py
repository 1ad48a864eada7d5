"""The rewrite session: a model's rewrite of a region streamed as its minimal diff.

No pygls here. The pacing, coalescing and sequential sending are the edit session's
(:class:`~fastedit_lsp.pipeline.edits.EditSession`); each coalesced piece of the rewrite is
fed to the region's :class:`~fastedit_lsp.core.rewrite_tracking.RewriteTracker`, whose diff
says which original lines are kept (no edit), which new text goes in (an insertion at the
boundary, sent as soon as a line is known to differ) and which original lines go (deleted
when the rewrite has passed them). The region ends equal to the rewrite; every edit deletes
only the region's original text; typing between hunks survives.

A line of the rewrite reaches the diff whole (with its line break), the last one at the stream's
end: a partial replacement inserted before the old line it replaces would show glued to it
(``def add(adef mul(a: int…``) until the diff decided that line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ..core.diff import Delete, Op
from ..core.rewrite_tracking import RewriteTracker
from ..core.tracking import RegionTracker
from .edits import ConflictError, EditSession

#: How long a deleting edit waits for the editor to report the job's earlier edits (eglot
#: reports after 0.5 s idle); after that it is sent anyway and an editor holding unseen
#: changes refuses it.
REPORT_WAIT = 2.0


class RewriteSession(EditSession):
    """Stream a rewrite into a :class:`RewriteTracker`'s region, touching only what changed."""

    tracker: RewriteTracker

    def __init__(
        self,
        *args: Any,
        wait_reported: Callable[[RegionTracker, float], Awaitable[bool]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._wait_reported = wait_reported

    #: The whole rewrite received so far (what the region holds once the stream ends).
    rewrite = ""
    #: How much of :attr:`rewrite` the diff was fed: up to its last complete line.
    _fed = 0
    #: Whether the diff was told the rewrite ended (the original lines left out are deleted).
    _finished = False

    async def run(self, source: AsyncIterator[str]) -> None:
        """Consume the rewrite; then delete the original lines it left out."""
        self.tracker.attach(self.document)
        await super().run(source)
        if not self._finished:
            await self._send_ops(self._feed(end=True))
        self.tracker.finish()
        # What verifiers check: the region's new text, not the edits that made it.
        self.sent_text = self.rewrite

    async def _send(self, text: str, *, last: bool = False) -> None:
        self.rewrite += text
        if ops := self._feed(end=last):
            await self._send_ops(ops)

    def _feed(self, *, end: bool) -> list[Op]:
        """The diff's ops for what of the rewrite it was not fed: its whole lines; at the end
        (``end``: the stream ended well, nothing follows) all of it, and the original lines it
        left out, so they go in the same edit as the last text (one round trip after the
        model's last byte, not two)."""
        upto = len(self.rewrite) if end else self.rewrite.rfind("\n") + 1
        ops: list[Op] = []
        if upto > self._fed:
            ops, self._fed = self.tracker.diff.feed(self.rewrite[self._fed : upto]), upto
        if end and not self._finished:
            self._finished = True
            ops += self.tracker.diff.finish()
        return ops

    async def _send_ops(self, ops: list[Op]) -> None:
        if reason := self.tracker.verify(self.document):
            raise ConflictError(reason)
        try:
            for run in self.tracker.plan(ops):
                if any(isinstance(op, Delete) for op in run) and self.tracker.pending:
                    # A deleting edit carries the document version the server knows, so that
                    # an editor holding typing the server has not seen refuses it instead of
                    # deleting the wrong text: it goes once the job's own edits are reported.
                    await self._wait_reported(self.tracker, REPORT_WAIT)
                await self._deliver(self.tracker.take(run))
        except ValueError as exc:
            if self.tracker.conflict is None:
                self.tracker.conflict = str(exc)
            raise ConflictError(str(exc)) from None
