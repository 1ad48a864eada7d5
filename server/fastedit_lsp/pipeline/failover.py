"""Route and failover: the job's route (routing's choice, or the one a retry or a user action
forces), the chain of routes it may fall back along, and the loop that tries them in order
until one answers, then escalates or asks again in auto mode.

Pure asyncio: the world is reached through the :class:`~fastedit_lsp.pipeline.ports.JobHost`.
"""

from __future__ import annotations

from ..backends.base import BackendError
from ..core.document import Document, Point
from ..core.jobs import Attempt, InstructionInputs, Job, RunInputs
from ..prompting.context import CHARS_PER_TOKEN
from ..settings import ResolvedProfile
from . import escalate
from .attempt import attempt
from .edits import EditSession
from .job_run import JobRun
from .route_stats import RouteStats
from .routing import Decision, Signals, choose, count_definitions

#: Failures after which a job moves on along ``failover`` (when nothing was edited yet).
FAILOVER_KINDS = frozenset({"rate_limit", "blocked", "connect", "timeout", "server"})


def failover_chain(first: str, failover: tuple[str, ...]) -> list[str]:
    """The routes a job tries: its own, then those after it in ``failover`` (fast → standard →
    local by default)."""
    chain = [first]
    rest = failover[failover.index(first) + 1 :] if first in failover else failover
    chain.extend(route for route in rest if route not in chain)
    return chain


def decide(run: JobRun, document: Document, stats: RouteStats) -> Decision:
    """The job's route: the one its inputs force, else routing's choice."""
    job, host = run.job, run.host
    forced = job.inputs.profile
    if forced is not None:
        inputs = job.inputs
        why = (
            f"action {inputs.action}: route {forced}"
            if isinstance(inputs, RunInputs)
            else f"retry with {forced}"
        )
        return Decision(forced, why)
    return choose(
        host.mode,
        signals(run, document, host.settings.context.budget_tokens),
        routing=host.settings.routing,
        failure_rates=stats.failure_rates(),
    )


def signals(run: JobRun, document: Document, budget_tokens: int) -> Signals:
    """What auto routing may look at, without a model call."""
    job = run.job
    tracker = job.tracker
    # Whole lines, so that indentation tells nested definitions from top-level ones.
    lines = document.get_text(
        Point(tracker.start.line, 0),
        Point(tracker.end.line, len(document.line(tracker.end.line))),
    )
    selection = len(document.get_text(tracker.start, tracker.end))
    around = min(document.offset_of(document.end), budget_tokens * CHARS_PER_TOKEN)
    inputs = job.inputs
    return Signals(
        kind=job.kind,
        label=run.spec.label,
        lines=tracker.end.line - tracker.start.line + 1,
        prompt_tokens=(selection + around) // CHARS_PER_TOKEN,
        definitions=count_definitions(lines) if tracker.start != tracker.end else 0,
        diagnostics=inputs.diagnostics,
        instruction=inputs.instruction if isinstance(inputs, InstructionInputs) else "",
    )


def after_failure(mode: str, exc: BackendError, routes: list[str], index: int) -> int | None:
    """Which route to try after ``routes[index]`` failed with ``exc``, if any.

    A model that is down or rate-limited hands over to the next route. One whose answers
    all failed verification escalates to standard in auto mode only; otherwise (and after
    standard) the offline engine answers, when it is in the chain.
    """
    later = range(index + 1, len(routes))
    if exc.kind in FAILOVER_KINDS:
        return index + 1 if index + 1 < len(routes) else None
    if exc.kind != "rejected":
        return None
    if mode == "auto" and routes[index] == "fast":
        return next((i for i in later if routes[i] == "standard"), None) or next(
            (i for i in later if routes[i] == "local"), None
        )
    return next((i for i in later if routes[i] == "local"), None)


def failover_step(job: Job, exc: BackendError, route: str, following: str, to_local: bool) -> str:
    """What the reason says of moving from ``route`` to ``following`` (``to_local``: its
    profile is the offline engine)."""
    if exc.kind == "rejected":
        to_standard = following == "standard" and not to_local
        job.escalated = job.escalated or to_standard
        then = "escalated to standard" if to_standard else "offline engine"
        return f"{route} answers failed verification → {then}"
    target = "offline engine" if to_local else following
    return f"{route} {exc.kind.replace('_', ' ')} → failover to {target}"


async def run_chain(
    run: JobRun,
    document: Document,
    routes: list[str],
    profiles: list[ResolvedProfile],
    session: EditSession,
    stats: RouteStats,
) -> None:
    """Try the routes in order until one answers; then verify, escalate or ask again."""
    job, index = run.job, 0
    while index < len(routes):
        profile = profiles[index]
        if profile.is_local and index == 0:
            job.amend(f" → offline engine ({profile.fallback_reason or 'local profile'})")
        try:
            await attempt(run, document, profile, session)
        except BackendError as exc:
            if exc.kind != "rejected":
                job.attempts.append(Attempt(routes[index], job.model, None, error=str(exc)))
            following = after_failure(run.host.mode, exc, routes, index)
            if session.edits or following is None:
                raise
            to_local = profiles[following].is_local
            job.step(failover_step(job, exc, routes[index], routes[following], to_local))
            index = following
            run.told()
            continue
        await _answered(run, document, profile, stats)
        return


async def _answered(
    run: JobRun, document: Document, profile: ResolvedProfile, stats: RouteStats
) -> None:
    """A route answered: its figures, then auto mode's second chance or escalation."""
    stats.record_verification(run.job)
    if escalate.should_ask_again(run, profile):
        await escalate.ask_again(run, document, profile)
    if escalate.should_escalate(run):
        await escalate.escalate(run, document)
    stats.record_speed(run.job)
