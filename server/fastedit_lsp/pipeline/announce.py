"""A job's start, told to the editor: its status once its route is chosen, its progress once it
has edited (or after :data:`ANNOUNCE_AFTER_SECONDS`).

Pure asyncio: the editor is reached through the :class:`~fastedit_lsp.pipeline.ports.JobHost`.
"""

from __future__ import annotations

import asyncio

from ..core.jobs import Job
from .ports import JobHost

#: At the latest this long after it started, a job's progress (and status) reach the editor.
ANNOUNCE_AFTER_SECONDS = 0.005


class Announcer:
    """A job's start told to the editor: one status once its route is chosen, its progress
    once it has edited (or after ``ANNOUNCE_AFTER_SECONDS``).

    Told at once, a status at the start, another with the route and model, and the progress
    request were built and written before the model request (about 0.5 ms, more when the
    editor's process woke up to read them on a 2-core machine). Now the status with the route
    goes out as soon as the request is written (``StreamInfo.sent``: editors learn the job's
    model from it, and it is written while the model works), before any edit. Before, always:
    an editor that ran the job's command through its own code-action menu learns from it that
    the job's edits are fastedit's (``fastedit.el`` applies them without eglot's confirmation;
    a status sent after the first edit, tried in 7c0030d, left that edit to eglot's prompt under
    load). The progress,
    which the editor only shows, follows the first edit, or goes out while the model is still
    silent after ``ANNOUNCE_AFTER_SECONDS`` (a hosted model's first token takes 50 ms or more;
    a request that never went out, the status with it).
    """

    def __init__(self, host: JobHost, job: Job) -> None:
        self._host = host
        self._job = job
        self._status_sent = False
        self.progress: asyncio.Future[None] | None = None
        loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = loop.call_later(
            ANNOUNCE_AFTER_SECONDS, self.flush
        )

    def status(self) -> None:
        """Send the job's status (its route is chosen)."""
        self._status_sent = True
        self._host.status(self._job)

    def sent(self) -> None:
        """The model request is written: the status, unless the timer sent it already."""
        if not self._status_sent:
            self.status()

    def flush(self) -> None:
        """Announce the job now, if not yet: its status unless sent, its progress."""
        if self._timer is None:
            return
        self._timer.cancel()
        self._timer = None
        if not self._status_sent:
            self.status()
        self.progress = asyncio.ensure_future(self._host.begin(self._job))

    async def close(self) -> None:
        """The job ended: its progress request is done with (cancelled if still pending)."""
        self.flush()
        progress = self.progress
        assert progress is not None
        if not progress.done():
            progress.cancel()
        await asyncio.gather(progress, return_exceptions=True)
