"""Verify and refine: once a draft's stream ended, wait for the editor to report where it
landed, check it (the action's verifier, a cut-off answer flagged), ask the model once more with
what failed, and make the one insertion outside the region (``import re``).

Pure asyncio: the world is reached through the :class:`~fastedit_lsp.pipeline.ports.JobHost`.
"""

from __future__ import annotations

from ..actions.base import Draft, Verification
from ..backends.base import Backend, BackendError, StreamInfo
from ..core.document import Document, Point
from ..core.jobs import Attempt, Job
from ..core.tracking import SentEdit
from ..settings import ResolvedProfile
from . import checks
from .edits import ConflictError, EditSession
from .job_run import JobRun
from .stream import filtered

#: How long a job waits at its end for the editor to report its last edits.
SETTLE_SECONDS = 1.0
#: How long the insertion outside the region waits for the region's edits to be reported.
EXTRA_WAIT_SECONDS = 2.0
#: Why a model stopped (``StreamInfo.stop_reason``) that leaves its answer cut off.
TRUNCATING = frozenset({"length", "max_tokens", "content_filter", "refusal"})


async def settle(run: JobRun) -> None:
    """Wait (briefly) until the editor has reported the job's edits, to know where they
    landed.

    An editor that reports late (eglot: after 0.5 s idle) may reveal a change the user made
    before the job's last edits arrived, which then landed off target: the job must say so
    instead of claiming success. An editor that stays silent longer is not waited for.
    """
    job = run.job
    job.settling = True  # typing after the text is no longer typing into a stream
    await run.host.wait_reported(job.tracker, SETTLE_SECONDS)
    if job.tracker.conflict is not None:
        raise ConflictError(job.tracker.conflict)


def cut_off(job: Job, stop: str) -> str:
    """What the job says of an answer the model stopped early for ``stop``."""
    if stop == "content_filter":
        return "the answer was cut off: stopped by the provider's filter"
    if stop == "refusal":
        return "the model refused"
    return f"the answer was cut off after {job.metrics.tokens} tokens"


def judge(
    job: Job, draft: Draft, session: EditSession, info: StreamInfo, ran: Verification
) -> None:
    """The attempt's verification, from what landed and why the model stopped."""
    stop = info.stop_reason if info.stop_reason in TRUNCATING else None
    job.truncated = stop
    if session.edits == 0:
        why = cut_off(job, stop) if stop else ran["details"] if ran else draft.no_suggestion
        job.step(why)
        # A verified answer that put nothing in the buffer verified nothing in it: the record
        # says why nothing landed.
        job.verification = {"ok": None, "details": why}
        return
    if draft.verify is not None:
        job.verification = draft.verify(session.sent_text)
    if stop:
        # Invariant 12: a cut-off answer never lands as a plain success.
        checked = job.verification
        why = cut_off(job, stop)
        if checked.get("ok") is False:
            why += f" ({checked.get('details')})"
        job.verification = {"ok": False, "details": why}


async def correct(
    run: JobRun,
    document: Document,
    draft: Draft,
    backend: Backend,
    first: EditSession,
    profile: ResolvedProfile,
) -> None:
    """Ask the model once more, with what failed, for a streamed draft that failed its
    check (the parse check); the answer replaces the job's own text and is checked again.

    A model that fails to answer (or answers nothing) leaves the first draft in place, as
    it was checked.
    """
    job = run.job
    if draft.correct is None or draft.verify is None or draft.refine is not None:
        return
    tracker = job.tracker
    request = draft.correct(first.sent_text, job.verification)
    if request is None or tracker.pending or tracker.conflict is not None:
        return
    details = job.verification.get("details", "")
    job.step(f"{job.route} draft failed verification ({details}) → asked again")
    edits_before = job.metrics.edits
    # A fresh draft: its filters keep state from the stream they filtered.
    draft = run.drafts.prepare(job, document, profile)
    tracker.restart()
    session = run.session(document, edits_before=edits_before)
    info = session.stream_info()
    try:
        await session.run(filtered(backend.stream(request, info), draft, job, info))
    except BackendError as exc:
        if session.edits:
            raise
        job.amend(f" ({exc.kind.replace('_', ' ')}: the first draft stays)")
        return
    finally:
        job.metrics.edits = edits_before + session.edits
    await settle(run)
    if session.edits and draft.verify is not None:
        job.verification = draft.verify(session.sent_text)
        await checks.check(run, draft, session)
    job.attempts.append(Attempt(job.route, job.model, dict(job.verification)))


async def extra_insertion(run: JobRun, document: Document, line: int, text: str) -> None:
    """Insert one line outside the region (``import re``) once the region's edits are in.

    Sent last, so that it cannot move the region under edits still in flight; skipped (and
    said) when the editor has not reported them in time.
    """
    job = run.job
    reported = await run.host.wait_reported(job.tracker, EXTRA_WAIT_SECONDS)
    stripped = text.strip()
    if (
        not reported
        or job.tracker.conflict is not None
        or line > job.tracker.start.line
        or line >= document.line_count
    ):
        job.verification["details"] += f"; add `{stripped}` (not added: the region moved)"
        return
    if any(document.line(i).strip() == stripped for i in range(document.line_count)):
        return
    at = Point(line, 0)
    if await run.host.apply_edit(job.uri, SentEdit(at, at, text), document=document):
        job.metrics.edits += 1
        job.added_line = stripped
