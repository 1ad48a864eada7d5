"""Escalate: auto mode replaces a fast draft that failed verification with the standard
profile's answer, and asks a cut-off answer once more with the profile's whole ``maxTokens``
first. Either way only the job's own text is replaced (invariant 2).

Pure asyncio: the world is reached through the :class:`~fastedit_lsp.pipeline.ports.JobHost`.
"""

from __future__ import annotations

from ..core.document import Document
from ..core.jobs import NOTHING_TO_VERIFY
from ..settings import ResolvedProfile
from .attempt import attempt
from .job_run import JobRun

#: Stops that a larger budget may cure (a filter or a refusal it does not).
CUT_FOR_LENGTH = frozenset({"length", "max_tokens"})


def should_escalate(run: JobRun) -> bool:
    """Auto mode re-runs a fast draft that failed verification on the standard profile."""
    job = run.job
    return (
        run.host.mode == "auto"
        and job.route == "fast"
        and job.verification.get("ok") is False
        and not job.escalated
        and not job.tracker.pending
        and job.tracker.conflict is None
        and not run.host.profile("standard", announce=False).is_local
    )


def should_ask_again(run: JobRun, profile: ResolvedProfile) -> bool:
    """Auto mode asks a model whose answer was cut for length once more, when its request
    allowed less than the profile's ``maxTokens``."""
    job = run.job
    return (
        run.host.mode == "auto"
        and job.truncated in CUT_FOR_LENGTH
        and not run.raised
        and run.asked is not None
        and run.asked < profile.settings.max_tokens
        and not job.tracker.pending
        and job.tracker.conflict is None
    )


async def ask_again(run: JobRun, document: Document, profile: ResolvedProfile) -> None:
    """Replace the cut-off answer (the job's own text) with the same model's answer to the
    same request, allowed the profile's whole ``maxTokens``."""
    job = run.job
    run.raised = True
    job.step(
        f"{job.route} answer cut off after {job.metrics.tokens} tokens → asked again with "
        f"maxTokens {profile.settings.max_tokens}"
    )
    await _replace(run, document, profile)


async def escalate(run: JobRun, document: Document) -> None:
    """Replace the fast draft (the job's own text) with the standard profile's answer."""
    job = run.job
    details = job.verification.get("details", "")
    job.escalated = True
    job.step(f"fast draft failed verification ({details}) → escalated to standard")
    standard = run.host.profile("standard", announce=False)
    fast = run.host.profile("fast", announce=False).settings
    if fast.speed_tier and standard.model == job.model:
        # "The same model, fast tier": the escalation is the same model at its own tier.
        tier = standard.settings.speed_tier or "standard"
        job.amend(f": {job.model} asked again at the {tier} tier")
    await _replace(run, document, standard)


async def _replace(run: JobRun, document: Document, profile: ResolvedProfile) -> None:
    """One more attempt whose text replaces the job's own (its first edit deletes it)."""
    job = run.job
    first_edits = job.metrics.edits
    job.tracker.restart()
    job.verification = dict(NOTHING_TO_VERIFY)
    job.truncated = None
    session = run.session(document, edits_before=first_edits)
    try:
        await attempt(run, document, profile, session)
    finally:
        job.metrics.edits = first_edits + session.edits
