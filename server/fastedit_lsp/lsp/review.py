"""Per-hunk review of a rewrite: "Revert this change" per hunk, per-hunk revert, keep all, and
(setting ``review: hunks``) hint diagnostics on the changed hunks (commands in
``features.review``).

A rewrite job's record lists its ``hunks`` with fixed indices; a hunk can be reverted alone,
in any order, as long as its own text is unchanged. Under review, the hunks stay highlighted
(severity hint, source ``fastedit``) until "Keep all" or "Revert all".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lsprotocol import types

from ..core.jobs import Job
from ..core.rewrite_tracking import RewriteTracker
from .client import ClientChannel
from .diagnostics import DiagnosticSets
from .documents import DocumentStore

#: The diagnostics owner of the review (see ``lsp.diagnostics``).
OWNER = "review"
#: How long a per-hunk revert waits for the editor to report the job's last edits.
ECHO_WAIT = 2.0


def _rewrite(job: Job) -> RewriteTracker | None:
    tracker = job.tracker
    return tracker if isinstance(tracker, RewriteTracker) and tracker.hunks else None


def _action(title: str, command: str, job: Job, hunk: int | None = None) -> types.CodeAction:
    argument: dict[str, Any] = {"jobId": job.id}
    if hunk is not None:
        argument["hunk"] = hunk
    return types.CodeAction(
        title=f"{title} (fastedit)",
        kind=types.CodeActionKind.RefactorRewrite,
        command=types.Command(title=title, command=command, arguments=[argument]),
    )


class Review:
    """The per-hunk review: its diagnostics, its code actions and the revert of one hunk.

    It reads the jobs, the documents and the ``review`` setting, publishes through the shared
    diagnostics and sends edits through the client channel; what the editor sees of a job's
    end (status, flags) is the job reporter's (:mod:`.reporter`), which calls it.
    """

    def __init__(
        self,
        *,
        jobs: Iterable[Job],
        documents: DocumentStore,
        diagnostics: DiagnosticSets,
        client: ClientChannel,
        setting: Callable[[], str],
    ) -> None:
        self._jobs = jobs
        self._documents = documents
        self._diagnostics = diagnostics
        self._client = client
        #: The ``review`` setting, read when a job ends.
        self._setting = setting

    def job_finished(self, job: Job) -> None:
        """Start the review of a rewrite that landed, when the setting asks for it."""
        if job.state == "done" and _rewrite(job) is not None and self._setting() == "hunks":
            job.review = True
            self.publish(job.uri)

    def end_review(self, job: Job) -> None:
        """Stop highlighting a job's hunks (kept, or reverted)."""
        if job.review:
            job.review = False
            self.publish(job.uri)

    def publish(self, uri: str) -> None:
        """The review's diagnostics on ``uri``: one hint per applied hunk of each job in review."""
        diagnostics: list[types.Diagnostic] = []
        for job in self._jobs:
            tracker = _rewrite(job)
            if job.uri != uri or not job.review or tracker is None or job.state != "done":
                continue
            for index, hunk in enumerate(tracker.hunk_records()):
                if hunk["state"] != "applied":
                    continue
                was = hunk["original"].strip().splitlines()
                message = f"fastedit {job.id} change {index}" + (
                    f" (was: {was[0][:60]}{' …' if len(was) > 1 else ''})" if was else " (added)"
                )
                rng = hunk["range"]
                diagnostics.append(
                    types.Diagnostic(
                        range=types.Range(
                            start=types.Position(**rng["start"]), end=types.Position(**rng["end"])
                        ),
                        message=message,
                        severity=types.DiagnosticSeverity.Hint,
                        source="fastedit",
                        data={"jobId": job.id, "hunk": index},
                    )
                )
        self._diagnostics.set(uri, OWNER, diagnostics)

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """ "Revert this change" for each applied hunk at the range; "Keep all" and "Revert all"
        for a job in review."""
        uri = params.text_document.uri
        document = self._documents.get(uri)
        if document is None:
            return []
        start = document.to_point(params.range.start.line, params.range.start.character)
        end = document.to_point(params.range.end.line, params.range.end.character)
        actions: list[types.CodeAction] = []
        for job in reversed(list(self._jobs)):
            tracker = _rewrite(job)
            if job.uri != uri or tracker is None or job.state != "done" or tracker.pending:
                continue
            if tracker.verify(document) is not None:
                continue
            for index in tracker.hunk_at(start, end):
                actions.append(_action("Revert this change", "fastedit.revertHunk", job, index))
            if job.review and start <= tracker.end and end >= tracker.start:
                actions.append(_action("Keep all changes", "fastedit.keepAll", job))
                actions.append(_action("Revert all changes", "fastedit.revert", job))
        return actions

    async def revert_hunk(self, job: Job, index: int) -> dict[str, Any]:
        """Restore one hunk's original text (its own text must be unchanged); the editor's
        status and the review's marks follow through the reporter
        (``JobReporter.hunk_reverted``)."""
        tracker = _rewrite(job)
        if tracker is None:
            return {"reverted": False, "reason": f"{job.id} has no hunks (not a rewrite)"}
        if not job.is_finished:
            return {"reverted": False, "reason": f"{job.id} is still running: cancel it first"}
        if job.state == "reverted":
            return {"reverted": False, "reason": f"{job.id} was reverted"}
        document = self._documents.get(job.uri)
        if document is None:
            return {"reverted": False, "reason": "the document is not open"}
        await self._documents.wait_reported(tracker, ECHO_WAIT)
        edit = tracker.revert_hunk_edit(index)
        if isinstance(edit, str):
            return {"reverted": False, "reason": edit}
        tracker.sent(edit)
        try:
            applied = await self._client.apply_edit(job.uri, edit, document=document)
        except Exception as exc:  # the editor errored or did not answer
            tracker.rejected(edit)
            return {"reverted": False, "reason": f"the editor did not apply the edit: {exc}"}
        if not applied:
            tracker.rejected(edit)
            return {"reverted": False, "reason": "the editor refused the edit"}
        return {"reverted": True}
