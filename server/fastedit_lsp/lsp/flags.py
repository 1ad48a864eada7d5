"""textDocument/publishDiagnostics for drafts that landed unverified ("flagged").

A job that ends ``done`` with ``verification.ok: false`` (its draft failed the parse check, was
not fixed by a second answer or escalation, and stayed) marks its region with a warning
diagnostic, source ``fastedit``, carrying the parser's message. The mark lasts until the user
edits inside the region or reverts the job: both are read from the job itself (its tracker's
conflict, its state), so the marks are derived, never stored twice. They share the
server's one publication per document with the per-hunk review (``diagnostics.DiagnosticSets``),
beside whatever the user's language server publishes.
"""

from __future__ import annotations

from collections.abc import Iterable

from lsprotocol import types

from ..core.document import Document
from ..core.jobs import Job
from .diagnostics import DiagnosticSets

#: The diagnostics' ``source``.
SOURCE = "fastedit"
#: Their owner among fastedit's diagnostics (:class:`~fastedit_lsp.lsp.diagnostics.DiagnosticSets`).
OWNER = "flags"


def is_flagged(job: Job) -> bool:
    """Whether ``job`` landed a draft that failed verification and still stands untouched."""
    return (
        job.state == "done"
        and job.verification.get("ok") is False
        and job.metrics.edits > 0
        and job.tracker.replaced
        and job.tracker.conflict is None
        and not job.tracker.pending
    )


def diagnostic(job: Job, document: Document) -> types.Diagnostic:
    """The warning on a flagged job's region (in client coordinates)."""
    tracker = job.tracker
    (sl, sc), (el, ec) = document.to_client(tracker.start), document.to_client(tracker.end)
    details = job.verification.get("details") or "verification failed"
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)
        ),
        message=f"unverified {job.route} draft ({job.id}): {details}",
        severity=types.DiagnosticSeverity.Warning,
        source=SOURCE,
        code="unverified",
    )


class Flags:
    """The flagged regions the server has published, per document."""

    def __init__(self, diagnostics: DiagnosticSets) -> None:
        #: Shared with the per-hunk review: each publish carries both owners' diagnostics.
        self._diagnostics = diagnostics

    def refresh(self, uri: str, document: Document | None, jobs: Iterable[Job]) -> None:
        """Publish the flagged regions of ``uri`` (an empty list clears them), when they may
        have changed: after a job ended, a change to the document, a revert."""
        flagged = [j for j in jobs if j.uri == uri and is_flagged(j)]
        diagnostics = [diagnostic(job, document) for job in flagged] if document is not None else []
        self._diagnostics.set(uri, OWNER, diagnostics)

    def on_change(self, uri: str, document: Document | None, jobs: Iterable[Job]) -> None:
        """After a reported change: move the marks, or drop those whose region was edited (or
        show one whose last edits the editor reported only now)."""
        jobs = list(jobs)
        if self._diagnostics.get(uri, OWNER) or any(j.uri == uri and is_flagged(j) for j in jobs):
            self.refresh(uri, document, jobs)
