"""The job's region, decided here and nowhere else: a rewrite's tracker (the minimal diff
against the region's text), the region an action or the offline engine chose instead of the
command's, and the end of the test module a test-writing job moves to.

Pure: the region is a :class:`~fastedit_lsp.core.tracking.RegionTracker` on the job.
"""

from __future__ import annotations

from ..core.document import Document, Point
from ..core.jobs import Job, TestModule
from ..core.rewrite_tracking import RewriteTracker
from ..core.tracking import RegionTracker


def for_action(job: Job, *, rewrite: bool) -> None:
    """A rewriting action's region streams as the minimal diff against its text."""
    if rewrite and not isinstance(job.tracker, RewriteTracker):
        job.tracker = RewriteTracker.from_region(job.tracker)


def retarget(job: Job, document: Document, start: Point, end: Point) -> None:
    """Move the job's region to ``start``–``end`` (decided before any edit)."""
    job.tracker.retarget(start, end, document.get_text(start, end))
    job.range = (document.to_client(start), document.to_client(end))


def move_to_module(job: Job, destination: TestModule, document: Document) -> None:
    """Move the job to the end of the test module (it appends there)."""
    end = document.end
    job.uri = destination.uri
    job.tracker = RegionTracker(end, end, "")
    job.range = (document.to_client(end), document.to_client(end))
