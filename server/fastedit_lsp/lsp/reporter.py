"""What the editor sees of a job: its status, its progress, its end, its flags and its review.

One owner for it all (:class:`JobReporter`): the job pipeline's port (``host``) reports a job's
start, edits and end here, and so do the revert commands and the progress' cancel button, so
that a job's ``fastedit/status``, its work-done progress, the message of a failure, the
unverified-draft flags (:mod:`.flags`) and the per-hunk review (:mod:`.review`) are decided in
one place. A job's flags are updated from this module only (the layer test checks it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from lsprotocol import types

from ..core.jobs import Job
from .client import ClientChannel
from .diagnostics import DiagnosticSets
from .documents import DocumentStore
from .flags import Flags
from .review import Review


class JobReporter:
    """The editor's view of every job: status, progress, end message, flags, review."""

    def __init__(
        self,
        *,
        client: ClientChannel,
        documents: DocumentStore,
        jobs: Iterable[Job],
        diagnostics: DiagnosticSets,
        review_setting: Callable[[], str],
        spawn: Callable[[Any], asyncio.Task[Any]],
    ) -> None:
        self._client = client
        self._documents = documents
        self._jobs = jobs
        self._spawn = spawn
        #: The diagnostics on drafts that landed unverified.
        self._flags = Flags(diagnostics)
        #: The per-hunk review of rewrites (its code actions and per-hunk revert too).
        self.review = Review(
            jobs=jobs,
            documents=documents,
            diagnostics=diagnostics,
            client=client,
            setting=review_setting,
        )

    # -- while a job runs ------------------------------------------------------------------------

    def status(self, job: Job, *, streaming: bool = False) -> None:
        """The job's ``fastedit/status`` (throttled while it streams) and, with it, its
        progress report."""
        client = self._client
        if client.send_status(job, streaming=streaming) and streaming:
            client.report_progress(job)

    async def begin(self, job: Job) -> None:
        """The job's cancellable work-done progress, when the client supports it."""
        await self._client.begin_progress(job, self._spawn)

    def report(self, job: Job) -> None:
        self._client.report_progress(job)

    def cancel_progress(self, token: str) -> None:
        """The progress' cancel button: its job stops (a token of no job is ignored)."""
        job = self._client.progress_jobs.get(token)
        if job is not None:
            job.stop(None)

    # -- a job's end and afterwards --------------------------------------------------------------

    def end(self, job: Job) -> None:
        """A job ended: a failure's message, the progress' end, the review of a rewrite that
        landed, and the flags of a draft that landed unverified (the status follows from the
        pipeline's record, :meth:`status`)."""
        client = self._client
        if job.state == "failed" and job.error:
            client.show_message(f"fastedit: {job.error}", types.MessageType.Error)
        client.end_progress(job)
        self.review.job_finished(job)
        self._refresh_flags(job.uri)

    def verified_late(self, job: Job) -> None:
        """A checker's result came after the job ended: the flags follow it, then the status
        (after them: a client that sees the status has the flags)."""
        self._refresh_flags(job.uri)
        self._client.send_status(job)

    def reverted(self, job: Job) -> None:
        """The job's edits were undone (``fastedit.revert``): its review and flags go."""
        self.review.end_review(job)
        self._client.send_status(job)
        self._refresh_flags(job.uri)

    def hunk_reverted(self, job: Job) -> None:
        """One hunk of a rewrite was undone: the status, and the review's marks move."""
        self._client.send_status(job)
        if job.review:
            self.review.publish(job.uri)

    def kept(self, job: Job) -> bool:
        """The user kept a rewrite's changes: its review ends. Whether it was under review."""
        reviewed = job.review
        self.review.end_review(job)
        return reviewed

    def changed(self, uri: str) -> None:
        """The editor reported a change of ``uri``: flags move, or go where their region was
        edited."""
        self._flags.on_change(uri, self._documents.get(uri), self._jobs)

    def _refresh_flags(self, uri: str) -> None:
        self._flags.refresh(uri, self._documents.get(uri), self._jobs)
