"""A job's start, told to the editor: its status (route and model) and its progress once it has
edited, or after :data:`ANNOUNCE_AFTER_SECONDS`; the offline engine's status at once.

Pure asyncio: the editor is reached through the :class:`~fastedit_lsp.pipeline.ports.JobHost`.
"""

from __future__ import annotations

import asyncio

from ..core.jobs import Job
from .ports import JobHost

#: At the latest this long after it started, a job's progress (and status) reach the editor.
ANNOUNCE_AFTER_SECONDS = 0.005


class Announcer:
    """A job's start told to the editor: its status and its progress once it has edited (or
    after ``ANNOUNCE_AFTER_SECONDS``).

    Told at once, a status at the start, another with the route and model, and the progress
    request were built and written before the model request (about 0.5 ms, more when the
    editor's process woke up to read them on a 2-core machine). Told as the request was
    written, the status still came before the answer of a model that answers at once (a
    loopback or local one): its write and the editor's read of it held the first edit back
    (``fastedit-lsp bench``). Now the status with the route and model and the progress follow
    the first edit, or go out while the model is still silent after
    ``ANNOUNCE_AFTER_SECONDS`` (a hosted model's first token takes 50 ms or more; a request
    that never went out, the status with it). The offline engine's status goes out at once.
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
