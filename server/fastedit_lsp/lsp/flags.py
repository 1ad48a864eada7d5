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

from ..core.document import Document, Point
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
    start, end = tracker.start, tracker.end
    at = _name_at(job)
    if at is not None:
        # The names check's first finding (relative to the region's start): the mark on the name.
        line = start.line + at[0]
        column = (start.col if at[0] == 0 else 0) + at[1]
        if line < document.line_count and column + at[2] <= len(document.line(line)):
            start, end = Point(line, column), Point(line, column + at[2])
    (sl, sc), (el, ec) = document.to_client(start), document.to_client(end)
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


def _name_at(job: Job) -> tuple[int, int, int] | None:
    """(line, character, length) of the name a failed names check found, from the region's
    start; None when no names check failed."""
    for check in job.verification.get("checks") or ():
        at = check.get("at") if check.get("ok") is False else None
        if isinstance(at, dict):
            return int(at["line"]), int(at["character"]), int(at["end"]) - int(at["character"])
    return None


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
