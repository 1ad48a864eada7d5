"""Plan and apply, run: the standard model's plan, the apply model's merge streamed into the
selection as its minimal diff, the merge checked.

Pure asyncio, through the runner's :class:`~fastedit_lsp.pipeline.ports.JobHost`. Each stage is
one ``attempts[]`` entry (``stage: plan|apply``, its model, time and why). Any failure before the
merge passes (no model, a failed request, a kept marker, a dropped line, a parse error) is
recorded and hands the job back to the runner, which rewrites the selection directly: the
failed merge, if some of it landed, is then replaced as an escalation replaces a draft.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from ..actions import plan_apply
from ..actions.base import Draft, Verification
from ..backends.base import Backend, BackendError, NoModelError, StreamInfo
from ..core.document import Document
from ..core.jobs import Attempt, InstructionInputs, Job
from ..core.rewrite_tracking import RewriteTracker
from ..core.uris import to_fs_path
from ..prompting import context
from ..prompting.filters import Pipeline
from ..prompting.reconcile import Unwrap, reconciler
from ..settings import ResolvedProfile
from .edits import ConflictError, EditSession
from .stream import ask, filtered

if TYPE_CHECKING:
    from .runner import JobRunner

#: Failures that count against a (baseUrl, model)'s circuit breaker (as the runner's).
BREAKER_KINDS = frozenset({"connect", "timeout", "server", "dropped"})
#: How long the merge waits for the editor to report its edits before it is checked.
SETTLE_SECONDS = 1.0


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


class PlanRun:
    """One job's plan and apply (:meth:`run`: True when the merge landed and passed)."""

    def __init__(self, runner: JobRunner, job: Job, document: Document, why: str) -> None:
        self.runner = runner
        self.host = runner.host
        self.job = job
        self.document = document
        self.why = why

    async def _backend(self, profile: ResolvedProfile) -> tuple[Backend, tuple[str, str]] | str:
        """The profile's backend and breaker key, or why it cannot be asked."""
        try:
            backend = await self.host.models.backend(profile)
        except (BackendError, NoModelError) as exc:
            return str(exc)
        key = (profile.base_url or "", backend.model)
        if (wait := self.host.models.allow(key, time.monotonic())) is not None:
            return f"{backend.model} failed repeatedly: not called for another {wait:.0f} s"
        return backend, key

    def _failed(self, key: tuple[str, str] | None, exc: BackendError) -> None:
        if key is not None and exc.kind in BREAKER_KINDS:
            self.host.models.failure(key, time.monotonic())

    def _fall_back(self, stage: str, why: str) -> bool:
        self.job.reason += f"; {stage} failed ({why}) → direct rewrite"
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
            job.reason += f"; no plan ({local[0].fallback_reason or 'no model'})"
            return False
        if await host.excluded(job.uri):
            return False  # the direct rewrite says why nothing is sent
        path = to_fs_path(job.uri) or job.uri
        job.reason += f"; plan and apply ({self.why})"
        plan = await self._plan(standard, path)
        if plan is None:
            return False
        # The region now (typing during the plan is the user's): what the merge starts from.
        return await self._apply(applier, session, tracker.expected, plan, path)

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
        tracker = job.tracker
        ctx = context.around(
            self.document,
            tracker.start,
            tracker.end,
            budget_tokens=host.settings.context.budget_tokens,
            path=path,
        )
        inputs = job.inputs
        instruction = inputs.instruction if isinstance(inputs, InstructionInputs) else ""
        request = plan_apply.plan_request(
            ctx,
            instruction,
            max_tokens=profile.settings.max_tokens,
            temperature=profile.settings.temperature,
        )
        draft = Draft(request=request, pipeline=Pipeline(Unwrap(sentences=False)))
        job.route, job.model = "standard", backend.model
        host.status(job)
        info = StreamInfo()
        try:
            plan = "".join(
                [t async for t in filtered(ask(backend, request, info), draft, job, info)]
            )
        except BackendError as exc:
            self._failed(key, exc)
            job.attempts.append(
                Attempt(
                    "standard",
                    backend.model,
                    None,
                    error=str(exc),
                    stage="plan",
                    elapsed_ms=_ms(started),
                    why=self.why,
                )
            )
            self._fall_back("plan", exc.kind.replace("_", " "))
            return None
        host.models.success(key)
        lines = len(plan.splitlines())
        job.attempts.append(
            Attempt(
                "standard",
                backend.model,
                None,
                stage="plan",
                elapsed_ms=_ms(started),
                why=f"{self.why}: an update of {lines} lines",
            )
        )
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
        inputs = job.inputs
        instruction = inputs.instruction if isinstance(inputs, InstructionInputs) else ""
        request = plan_apply.apply_request(
            original,
            plan,
            instruction,
            apply_format=profile.apply_format,
            max_tokens=profile.settings.max_tokens,
            temperature=profile.settings.temperature,
        )
        # The edit selection's own check (the parse check) also judges the merge.
        check = self.runner._prepare(job, self.document, path, profile).verify
        merge = reconciler(self.document, tracker.start, tracker.end, replace=True)
        draft = Draft(request=request, pipeline=Pipeline(merge))
        job.route, job.model = profile.name, backend.model
        host.status(job)
        info = StreamInfo(pace=session.pace)
        result: Verification | None = None
        try:
            await session.run(
                _guarded(filtered(ask(backend, request, info), draft, job, info), original)
            )
        except MergeRejectedError as exc:
            result = {"ok": False, "details": str(exc)}
        except BackendError as exc:
            self._failed(key, exc)
            result = {"ok": False, "details": f"{exc.kind.replace('_', ' ')}: {exc}"}
        finally:
            job.metrics.edits = session.edits
            job.metrics.tokens = info.completion_tokens or info.deltas or job.metrics.tokens
        if result is None:
            host.models.success(key)
        await host.wait_reported(tracker, SETTLE_SECONDS)
        if tracker.conflict is not None:
            raise ConflictError(tracker.conflict)
        merged = session.sent_text if result is None else ""
        if result is None:
            result = plan_apply.check_merge(original, plan, merged)
        if result.get("ok") is True and check is not None:
            parsed = check(merged)
            if parsed.get("ok") is False:
                result = parsed
            elif parsed.get("ok") is True:
                result = {"ok": True, "details": f"{result['details']}; {parsed['details']}"}
        job.attempts.append(
            Attempt(
                profile.name,
                backend.model,
                dict(result),
                stage="apply",
                elapsed_ms=_ms(started),
                why=why,
            )
        )
        if result.get("ok") is True:
            job.verification = dict(result)
            return True
        if tracker.pending:
            raise ConflictError("the editor did not report the failed merge's edits in time")
        tracker.restart()
        return self._fall_back("merge", str(result.get("details")))
