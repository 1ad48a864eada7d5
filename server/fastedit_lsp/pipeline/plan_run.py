"""Plan and apply, run: the standard model's plan, the apply model's merge streamed into the
selection as its minimal diff, the merge checked.

The ``plan_apply`` strategy (edit selection). Pure asyncio, through the
:class:`~fastedit_lsp.pipeline.ports.JobHost`. Each stage is one ``attempts[]`` entry (``stage:
plan|apply``, its model, time and why). Any failure before the merge passes (no model, a failed
request, a kept marker, a dropped line, a parse error) is recorded and hands the job back to the
runner, which rewrites the selection directly: the failed merge, if some of it landed, is then
replaced as an escalation replaces a draft.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

from ..actions import plan_apply
from ..actions.base import Draft, Verification
from ..backends.base import Backend, BackendError, ChatRequest, NoModelError, StreamInfo
from ..core.document import Document
from ..core.jobs import Attempt, InstructionInputs, Job
from ..core.rewrite_tracking import RewriteTracker
from ..prompting import context
from ..prompting.filters import Pipeline
from ..prompting.reconcile import Unwrap, reconciler
from ..settings import ResolvedProfile
from . import models
from .drafts import path_of
from .edits import ConflictError, EditSession
from .job_run import JobRun
from .models import Key
from .stream import filtered
from .verify import SETTLE_SECONDS


class MergeRejectedError(Exception):
    """The merge streamed a marker line: stopped before the line reached the buffer."""


def choice(job: Job, mode: str, min_lines: int, setting: str) -> plan_apply.Choice:
    """Whether ``job`` (an edit selection) plans, from its inputs and the settings."""
    inputs = job.inputs
    argument = inputs.plan if isinstance(inputs, InstructionInputs) else None
    text = job.tracker.expected
    return plan_apply.decide(
        setting=setting,
        argument=argument,
        mode=inputs.profile or mode,
        lines=len(text.splitlines()),
        min_lines=min_lines,
    )


def _ms(since: float) -> float:
    return round((time.monotonic() - since) * 1000, 1)


async def _guarded(source: AsyncIterator[str], original: str) -> AsyncIterator[str]:
    """The merge, a whole line at a time, stopped at a marker the original did not have."""
    had = plan_apply.line_set(original)
    held = ""
    try:
        async for text in source:
            held += text
            cut = held.rfind("\n") + 1
            if not cut:
                continue
            complete, held = held[:cut], held[cut:]
            for line in complete.splitlines():
                if plan_apply.kept_marker(line, had):
                    raise MergeRejectedError(f"the merge kept a marker ({line.strip()!r})")
            yield complete
        if held:
            if plan_apply.kept_marker(held, had):
                raise MergeRejectedError(f"the merge kept a marker ({held.strip()!r})")
            yield held
    finally:
        # Stopped at a marker (or cancelled): close the model's stream now, not at collection.
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()


async def planned(run: JobRun, document: Document) -> bool:
    """Plan and apply an edit selection when ``editSelection.plan`` says so; True: the merge
    landed and passed, False: rewrite directly (after a failed merge too)."""
    options = run.host.settings.edit_selection
    decided = choice(run.job, run.host.mode, options.plan_min_lines, options.plan)
    if not decided.plan:
        return False
    return await PlanRun(run, document, decided.why).run(run.session(document))


class PlanRun:
    """One job's plan and apply (:meth:`run`: True when the merge landed and passed)."""

    def __init__(self, run: JobRun, document: Document, why: str) -> None:
        self.job_run = run
        self.host = run.host
        self.job = run.job
        self.document = document
        self.why = why

    async def _backend(self, profile: ResolvedProfile) -> tuple[Backend, Key] | str:
        """The profile's backend and breaker key, or why it cannot be asked."""
        try:
            return await models.open_model(self.host, profile)
        except (BackendError, NoModelError) as exc:
            return str(exc)

    def _fall_back(self, stage: str, why: str) -> bool:
        self.job.step(f"{stage} failed ({why}) → direct rewrite")
        self.host.status(self.job)
        return False

    async def run(self, session: EditSession) -> bool:
        job, host = self.job, self.host
        tracker = job.tracker
        assert isinstance(tracker, RewriteTracker)
        standard = host.profile("standard", announce=False)
        applier = host.profile("apply", announce=False)
        local = [p for p in (standard, applier) if p.is_local]
        if local:
            job.step(f"no plan ({local[0].fallback_reason or 'no model'})")
            return False
        if await host.excluded(job.uri):
            return False  # the direct rewrite says why nothing is sent
        path = path_of(job)
        job.step(f"plan and apply ({self.why})")
        plan = await self._plan(standard, path)
        if plan is None:
            return False
        # The region now (typing during the plan is the user's): what the merge starts from.
        return await self._apply(applier, session, tracker.expected, plan, path)

    def _instruction(self) -> str:
        inputs = self.job.inputs
        return inputs.instruction if isinstance(inputs, InstructionInputs) else ""

    def _plan_request(self, profile: ResolvedProfile, path: str) -> ChatRequest:
        """The request for the standard model's update of the selection."""
        tracker = self.job.tracker
        budget = self.host.settings.context.budget_tokens
        ctx = context.around(
            self.document, tracker.start, tracker.end, budget_tokens=budget, path=path
        )
        return plan_apply.plan_request(
            ctx,
            self._instruction(),
            max_tokens=profile.settings.max_tokens,
            temperature=profile.settings.temperature,
        )

    async def _plan(self, profile: ResolvedProfile, path: str) -> str | None:
        """The standard model's update of the selection (None: it could not write one)."""
        job, host = self.job, self.host
        started = time.monotonic()
        got = await self._backend(profile)
        if isinstance(got, str):
            job.attempts.append(
                Attempt("standard", "", None, error=got, stage="plan", why=self.why)
            )
            self._fall_back("plan", got)
            return None
        backend, key = got
        request = self._plan_request(profile, path)
        draft = Draft(request=request, pipeline=Pipeline(Unwrap(sentences=False)))
        job.route, job.model = "standard", backend.model
        host.status(job)
        info = StreamInfo()
        try:
            plan = "".join(
                [t async for t in filtered(backend.stream(request, info), draft, job, info)]
            )
        except BackendError as exc:
            models.failed(host, key, exc)
            job.attempts.append(
                _stage("standard", backend.model, "plan", started, self.why, error=str(exc))
            )
            self._fall_back("plan", exc.kind.replace("_", " "))
            return None
        host.models.success(key)
        why = f"{self.why}: an update of {len(plan.splitlines())} lines"
        job.attempts.append(_stage("standard", backend.model, "plan", started, why))
        if not plan.strip():
            self._fall_back("plan", "the standard model wrote nothing")
            return None
        return plan

    async def _apply(
        self,
        profile: ResolvedProfile,
        session: EditSession,
        original: str,
        plan: str,
        path: str,
    ) -> bool:
        """Stream the merge into the selection, then check it (False: fall back)."""
        job, host = self.job, self.host
        tracker = job.tracker
        started = time.monotonic()
        why = (
            "the fast profile merges (profiles.apply unset)"
            if profile.name == "fast"
            else "the apply profile merges"
        )
        got = await self._backend(profile)
        if isinstance(got, str):
            job.attempts.append(Attempt(profile.name, "", None, error=got, stage="apply", why=why))
            return self._fall_back("apply", got)
        backend, key = got
        request = plan_apply.apply_request(
            original,
            plan,
            self._instruction(),
            apply_format=profile.apply_format,
            max_tokens=profile.settings.max_tokens,
            temperature=profile.settings.temperature,
        )
        # The edit selection's own check (the parse check) also judges the merge.
        check = self.job_run.drafts.prepare(job, self.document, profile).verify
        job.route, job.model = profile.name, backend.model
        host.status(job)
        failed = await self._merge(session, backend, key, request, original)
        # Not ``verify.settle``: after a failed merge the job goes on streaming (the direct
        # rewrite), so typing now is still typing into a stream.
        await host.wait_reported(tracker, SETTLE_SECONDS)
        if tracker.conflict is not None:
            raise ConflictError(tracker.conflict)
        result = failed or _judged(original, plan, session.sent_text, check)
        job.attempts.append(
            _stage(profile.name, backend.model, "apply", started, why, verification=result)
        )
        if result.get("ok") is True:
            job.verification = dict(result)
            return True
        if tracker.pending:
            raise ConflictError("the editor did not report the failed merge's edits in time")
        tracker.restart()
        return self._fall_back("merge", str(result.get("details")))

    async def _merge(
        self,
        session: EditSession,
        backend: Backend,
        key: Key,
        request: ChatRequest,
        original: str,
    ) -> Verification | None:
        """Stream the apply model's merge into the selection; None: it streamed whole, else
        why it failed (a kept marker, a failed request)."""
        job, host = self.job, self.host
        merge = reconciler(self.document, job.tracker.start, job.tracker.end, replace=True)
        draft = Draft(request=request, pipeline=Pipeline(merge))
        info = session.stream_info()
        result: Verification | None = None
        try:
            await session.run(
                _guarded(filtered(backend.stream(request, info), draft, job, info), original)
            )
        except MergeRejectedError as exc:
            result = {"ok": False, "details": str(exc)}
        except BackendError as exc:
            models.failed(host, key, exc)
            result = {"ok": False, "details": f"{exc.kind.replace('_', ' ')}: {exc}"}
        finally:
            job.metrics.edits = session.edits
            job.metrics.tokens = info.completion_tokens or info.deltas or job.metrics.tokens
        if result is None:
            host.models.success(key)
        return result


def _judged(
    original: str, plan: str, merged: str, check: Callable[[str], Verification] | None
) -> Verification:
    """A merge that streamed whole, checked against the plan and by the action's own check."""
    result = plan_apply.check_merge(original, plan, merged)
    if result.get("ok") is True and check is not None:
        parsed = check(merged)
        if parsed.get("ok") is False:
            return parsed
        if parsed.get("ok") is True:
            return {"ok": True, "details": f"{result['details']}; {parsed['details']}"}
    return result


def _stage(
    route: str,
    model: str,
    stage: str,
    started: float,
    why: str,
    *,
    verification: Verification | None = None,
    error: str | None = None,
) -> Attempt:
    """One plan-and-apply stage's ``attempts[]`` entry, with its time."""
    verification = dict(verification) if verification is not None else None
    return Attempt(
        route, model, verification, error=error, stage=stage, elapsed_ms=_ms(started), why=why
    )
