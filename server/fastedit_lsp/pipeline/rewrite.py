"""The rewrite session: a model's rewrite of a region streamed as its minimal diff.

No pygls here. The pacing, coalescing and sequential sending are the edit session's
(:class:`~fastedit_lsp.pipeline.edits.EditSession`); each coalesced piece of the rewrite is
fed to the region's :class:`~fastedit_lsp.core.rewrite_tracking.RewriteTracker`, whose diff
says which original lines are kept (no edit), which new text goes in (an insertion at the
boundary, sent as soon as a line is known to differ) and which original lines go (deleted
when the rewrite has passed them). The region ends equal to the rewrite; every edit deletes
only the region's original text; typing between hunks survives.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from ..core.diff import Op
from ..core.rewrite_tracking import RewriteTracker
from .edits import ConflictError, EditSession


class RewriteSession(EditSession):
    """Stream a rewrite into a :class:`RewriteTracker`'s region, touching only what changed."""

    tracker: RewriteTracker

    #: The whole rewrite fed so far (what the region holds once the stream ends).
    rewrite = ""

    async def run(self, source: AsyncIterator[str]) -> None:
        """Consume the rewrite; then delete the original lines it left out."""
        self.tracker.attach(self.document)
        await super().run(source)
        await self._send_ops(self.tracker.diff.finish())
        self.tracker.finish()
        # What verifiers check: the region's new text, not the edits that made it.
        self.sent_text = self.rewrite

    async def _send(self, text: str) -> None:
        self.rewrite += text
        await self._send_ops(self.tracker.diff.feed(text))

    async def _send_ops(self, ops: list[Op]) -> None:
        if reason := self.tracker.verify(self.document):
            raise ConflictError(reason)
        try:
            for edit in self.tracker.plan(ops):
                await self._deliver(edit)
        except ValueError as exc:
            if self.tracker.conflict is None:
                self.tracker.conflict = str(exc)
            raise ConflictError(str(exc)) from None
