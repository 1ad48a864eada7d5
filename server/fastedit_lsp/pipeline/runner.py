"""One job, start to finish: route → failover → attempt → verify/refine → escalate → record.

Pure asyncio: the world (the editor, the models, the file system) is reached only through the
:class:`~fastedit_lsp.pipeline.ports.JobHost` port. Runs as a background task once
``executeCommand`` has answered with the job id. Every outcome ends in a finished job record, a
``fastedit/status`` notification and the end of its progress.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..actions.base import ActionError, ActionInput, Draft, Verification
from ..actions.parse_check import ParseTrees
from ..actions.registry import Registry
from ..backends.base import Backend, BackendError, ChatRequest, NoModelError, StreamInfo
from ..core.document import Document, Point
from ..core.jobs import (
    NOTHING_TO_VERIFY,
    Attempt,
    InstructionInputs,
    Job,
    RunInputs,
    TestModule,
)
from ..core.rewrite_tracking import RewriteTracker
from ..core.tracking import RegionTracker, SentEdit
from ..core.uris import to_fs_path
from ..prompting import context
from ..prompting.context import CHARS_PER_TOKEN
from ..settings import ResolvedProfile
from . import plan_run, prediction
from .edits import ConflictError, EditRejectedError, EditSession
from .offline import MODEL, NEEDS_MODEL, PIECE, pieces
from .passing_tests import keep_passing, passing_only
from .ports import JobHost
from .rewrite import RewriteSession
from .route_stats import RouteStats
from .routing import Decision, Signals, choose, count_definitions
from .stream import ask, filtered

if TYPE_CHECKING:
    from ..engines.test_stubs import Recording, RecordPlan

log = logging.getLogger(__name__)

#: Failures after which a job moves on along ``failover`` (when nothing was edited yet).
FAILOVER_KINDS = frozenset({"rate_limit", "blocked", "connect", "timeout", "server"})
#: Failures that count against a (baseUrl, model)'s circuit breaker.
BREAKER_KINDS = frozenset({"connect", "timeout", "server", "dropped"})
#: How long a job waits at its end for the editor to report its last edits.
SETTLE_SECONDS = 1.0
#: How long the insertion outside the region waits for the region's edits to be reported.
EXTRA_WAIT_SECONDS = 2.0
#: At the latest this long after it started, a job's progress (and status) reach the editor.
ANNOUNCE_AFTER_SECONDS = 0.005


class _Announcer:
    """A job's start told to the editor: one status once its route is chosen, its progress
    once it has edited (or after ``ANNOUNCE_AFTER_SECONDS``).

    Told at once, a status at the start, another with the route and model, and the progress
    request were built and written before the model request (about 0.5 ms, more when the
    editor's process woke up to read them on a 2-core machine). Now the status with the route
    goes out as soon as the request is written (``StreamInfo.sent``: editors learn the job's
    model from it, and it is written while the model works), before any edit; the progress,
    which the editor only shows, follows the first edit, or goes out while the model is still
    silent after ``ANNOUNCE_AFTER_SECONDS`` (a hosted model's first token takes 50 ms or more;
    a request that never went out, the status with it).
    """

    def __init__(self, host: JobHost, job: Job) -> None:
        self._host = host
        self._job = job
        self._status_sent = False
        self.progress: asyncio.Future[None] | None = None
        loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = loop.call_later(
            ANNOUNCE_AFTER_SECONDS, self.flush
        )

    def status(self) -> None:
        """Send the job's status (its route is chosen)."""
        self._status_sent = True
        self._host.status(self._job)

    def sent(self) -> None:
        """The model request is written: the status, unless the timer sent it already."""
        if not self._status_sent:
            self.status()

    def flush(self) -> None:
        """Announce the job now, if not yet: its status unless sent, its progress."""
        if self._timer is None:
            return
        self._timer.cancel()
        self._timer = None
        if not self._status_sent:
            self.status()
        self.progress = asyncio.ensure_future(self._host.begin(self._job))


class JobFailedError(Exception):
    """A job that cannot run, with the reason shown to the user."""


def failover_chain(first: str, failover: tuple[str, ...]) -> list[str]:
    """The routes a job tries: its own, then those after it in ``failover`` (fast → standard →
    local by default)."""
    chain = [first]
    rest = failover[failover.index(first) + 1 :] if first in failover else failover
    chain.extend(route for route in rest if route not in chain)
    return chain


class JobRunner:
    """Runs jobs against one host; keeps each route's health."""

    def __init__(self, host: JobHost, actions: Registry, stats: RouteStats) -> None:
        self.host = host
        self.actions = actions
        self.stats = stats
        #: (baseUrl, model)s that answered 400 to ``prediction``: never sent it again.
        self.no_prediction: set[tuple[str, str]] = set()
        #: Each document's last parse: the next job's check reparses only what changed.
        self.trees = ParseTrees()
        #: Running jobs' announcers, by job id.
        self._announcers: dict[str, _Announcer] = {}

    async def run(self, job: Job, document: Document) -> None:
        """Run ``job`` on ``document`` and record how it ended."""
        host = self.host
        announcer = self._announcers[job.id] = _Announcer(host, job)
        state, error = "done", None
        try:
            await self._execute(job, document)
        except asyncio.CancelledError:
            state = "cancelled"
            error = f"Stopped: {job.stop_reason}" if job.stop_reason else None
        except ConflictError as exc:
            state, error = "cancelled", f"Stopped: {exc}"
        except (BackendError, JobFailedError, EditRejectedError, NoModelError) as exc:
            state, error = "failed", str(exc)
        except TimeoutError:
            state = "failed"
            error = "the editor did not answer workspace/applyEdit; the job stopped sending edits"
        except Exception as exc:  # a bug: never let it take the server down
            log.exception("job %s crashed", job.id)
            state, error = "failed", f"internal error: {type(exc).__name__}: {exc}"
        announcer.flush()
        del self._announcers[job.id]
        job.finish(state, error)  # type: ignore[arg-type]
        progress = announcer.progress
        assert progress is not None
        if not progress.done():
            progress.cancel()
        await asyncio.gather(progress, return_exceptions=True)
        host.end(job)
        host.status(job)

    # -- route and failover ------------------------------------------------------------------

    async def _execute(self, job: Job, document: Document) -> None:
        host = self.host
        settings = host.settings
        kind = self.actions.get(job.kind)
        if kind is not None and kind.rewrite and not isinstance(job.tracker, RewriteTracker):
            job.tracker = RewriteTracker.from_region(job.tracker)
        forced = job.inputs.profile
        if forced is not None:
            inputs = job.inputs
            decision = Decision(
                forced,
                f"action {inputs.action}: route {forced}"
                if isinstance(inputs, RunInputs)
                else f"retry with {forced}",
            )
        else:
            decision = choose(
                host.mode,
                self._signals(job, document, settings.context.budget_tokens),
                routing=settings.routing,
                failure_rates=self.stats.failure_rates(),
            )
        job.reason = decision.reason
        routes = failover_chain(decision.profile, settings.failover)
        # Only the chosen profile announces falling back to the offline engine; the others are
        # resolved quietly (their messages would only repeat it).
        profiles = [self._profile(route, announce=i == 0) for i, route in enumerate(routes)]
        spec = self.actions.get(job.kind)
        if spec is not None and spec.writes == "test_module" and job.destination is None:
            destination, opened = await host.test_module(job, document)
            job.destination = destination
            if opened is None:
                await self._write_tests_on_disk(job, destination, profiles[-1])
                return
            document = self._move_to(job, destination, opened)
            # A status may have named the job's first document already: editors that group a
            # job's edits by the documents its status names (Neovim's one undo step) learn
            # where they land before the first one does.
            self.host.status(job)
        session = self._session(job, document)
        if kind is not None and kind.kind == "editSelection" and await self._planned(job, document):
            return
        if job.metrics.edits:  # a failed plan-and-apply merge: the direct rewrite replaces it
            session = self._session(job, document, edits_before=job.metrics.edits)
        skip: set[int] = set()  # routes passed over (a rejected fast answer in fast mode)
        for index, profile in enumerate(profiles):
            if index in skip:
                continue
            if profile.is_local and index == 0:
                job.reason += f" → offline engine ({profile.fallback_reason or 'local profile'})"
            try:
                await self._attempt(job, document, profile, session)
            except BackendError as exc:
                if exc.kind != "rejected":
                    job.attempts.append(Attempt(routes[index], job.model, None, error=str(exc)))
                following = self._after_failure(exc, routes, index)
                if session.edits or following is None:
                    raise
                if exc.kind == "rejected":
                    to_standard = (
                        routes[following] == "standard" and not profiles[following].is_local
                    )
                    job.escalated = job.escalated or to_standard
                    then = "escalated to standard" if to_standard else "offline engine"
                    job.reason += f"; {routes[index]} answers failed verification → {then}"
                else:
                    job.reason += (
                        f"; {routes[index]} {exc.kind.replace('_', ' ')} → failover to "
                        f"{'offline engine' if profiles[following].is_local else routes[following]}"
                    )
                skip.update(range(index + 1, following))
                self._announce(job)
                host.status(job)
                continue
            self.stats.record_verification(job)
            if self._should_escalate(job):
                await self._escalate(job, document)
            self.stats.record_speed(job)
            return

    async def _planned(self, job: Job, document: Document) -> bool:
        """Plan and apply an edit selection when ``editSelection.plan`` says so; True: the
        merge landed and passed, False: rewrite directly (after a failed merge too)."""
        options = self.host.settings.edit_selection
        choice = plan_run.choice(job, self.host.mode, options.plan_min_lines, options.plan)
        if not choice.plan:
            return False
        planner = plan_run.PlanRun(self, job, document, choice.why)
        return await planner.run(self._session(job, document))

    def _signals(self, job: Job, document: Document, budget_tokens: int) -> Signals:
        """What auto routing may look at, without a model call."""
        tracker = job.tracker
        # Whole lines, so that indentation tells nested definitions from top-level ones.
        lines = document.get_text(
            Point(tracker.start.line, 0),
            Point(tracker.end.line, len(document.line(tracker.end.line))),
        )
        selection = len(document.get_text(tracker.start, tracker.end))
        around = min(document.offset_of(document.end), budget_tokens * CHARS_PER_TOKEN)
        inputs = job.inputs
        spec = self.actions.get(job.kind)
        return Signals(
            kind=job.kind,
            label=spec.label if spec is not None else job.kind,
            lines=tracker.end.line - tracker.start.line + 1,
            prompt_tokens=(selection + around) // CHARS_PER_TOKEN,
            definitions=count_definitions(lines) if tracker.start != tracker.end else 0,
            diagnostics=inputs.diagnostics,
            instruction=inputs.instruction if isinstance(inputs, InstructionInputs) else "",
        )

    def _after_failure(self, exc: BackendError, routes: list[str], index: int) -> int | None:
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
        if self.host.mode == "auto" and routes[index] == "fast":
            return next((i for i in later if routes[i] == "standard"), None) or next(
                (i for i in later if routes[i] == "local"), None
            )
        return next((i for i in later if routes[i] == "local"), None)

    def _profile(self, route: str, *, announce: bool) -> ResolvedProfile:
        if route == "local":
            settings = self.host.settings.profiles.fast
            return ResolvedProfile("fast", "local", None, None, None, None, settings, "failover")
        return self.host.profile(route, announce=announce)

    # -- escalation ------------------------------------------------------------------------------

    def _should_escalate(self, job: Job) -> bool:
        """Auto mode re-runs a fast draft that failed verification on the standard profile."""
        return (
            self.host.mode == "auto"
            and job.route == "fast"
            and job.verification.get("ok") is False
            and not job.escalated
            and not job.tracker.pending
            and job.tracker.conflict is None
            and not self.host.profile("standard", announce=False).is_local
        )

    async def _escalate(self, job: Job, document: Document) -> None:
        """Replace the fast draft (the job's own text) with the standard profile's answer."""
        details = job.verification.get("details", "")
        job.escalated = True
        job.reason += f"; fast draft failed verification ({details}) → escalated to standard"
        fast = self.host.profile("fast", announce=False).settings
        standard_profile = self.host.profile("standard", announce=False)
        if fast.speed_tier and standard_profile.model == job.model:
            # "The same model, fast tier": the escalation is the same model at its own tier.
            tier = standard_profile.settings.speed_tier or "standard"
            job.reason += f": {job.model} asked again at the {tier} tier"
        first_edits = job.metrics.edits
        job.tracker.restart()
        job.verification = dict(NOTHING_TO_VERIFY)
        session = self._session(job, document, edits_before=first_edits)
        try:
            standard = self.host.profile("standard", announce=False)
            await self._attempt(job, document, standard, session)
        finally:
            job.metrics.edits = first_edits + session.edits

    # -- one attempt -----------------------------------------------------------------------------

    def _session(self, job: Job, document: Document, *, edits_before: int = 0) -> EditSession:
        """An edit session streaming into the job's region of ``document``."""
        settings = self.host.settings
        host = self.host

        def apply(edit: SentEdit) -> Awaitable[bool]:
            unreported = job.tracker.unreported_before(edit)
            return host.apply_edit(job.uri, edit, document=document, unreported=unreported)

        options: dict[str, Any] = {
            "max_edits_per_second": settings.max_edits_per_second,
            "streaming": settings.streaming,
            "on_edit": lambda n: self._on_edit(job, edits_before + n),
        }
        session: EditSession
        if isinstance(job.tracker, RewriteTracker):
            session = RewriteSession(
                document, job.tracker, apply, wait_reported=host.wait_reported, **options
            )
        else:
            session = EditSession(document, job.tracker, apply, **options)
        session.edits_before = edits_before
        return session

    def _on_edit(self, job: Job, edits: int) -> None:
        job.metrics.edits = edits
        self._announce(job)
        self.host.status(job, streaming=True)

    def _announce(self, job: Job) -> None:
        """Tell the editor the job started, if not yet (:class:`_Announcer`)."""
        if (announcer := self._announcers.get(job.id)) is not None:
            announcer.flush()

    async def _attempt(
        self, job: Job, document: Document, profile: ResolvedProfile, session: EditSession
    ) -> None:
        """One try at the job with one profile: model or offline engine, stream, verify."""
        host = self.host
        path = to_fs_path(job.uri) or job.uri
        if not profile.is_local:
            # What the model would see: this document, and for tests the module under test.
            # Git's answer was asked for when the document was opened (a ``git check-ignore``
            # per job cost milliseconds before the first edit).
            source_uri = job.destination.source_uri if job.destination is not None else ""
            for seen in filter(None, [job.uri, source_uri]):
                pattern = await host.excluded(seen)
                if pattern:
                    name = os.path.basename(to_fs_path(seen) or seen)
                    raise JobFailedError(
                        f"{name} matches context.exclude ({pattern}): it is never sent to a model"
                    )
        draft = self._prepare(job, document, path, profile)
        if draft.region is not None:
            _retarget(job, document, *draft.region)
        info = StreamInfo(pace=session.pace)
        source: AsyncIterator[str] | None
        backend: Backend | None = None
        key: tuple[str, str] | None = None
        if profile.is_local or draft.request is None:
            # No model configured, or nothing to ask one (the file parses...): the offline answer.
            job.route, job.model = "local", MODEL
            source = await self._offline(job, document, draft)
        else:
            backend = await host.models.backend(profile)
            job.route, job.model = profile.name, backend.model
            key = (profile.base_url or "", backend.model)
            if (wait := host.models.allow(key, time.monotonic())) is not None:
                raise BackendError(
                    "blocked",
                    f"{backend.model} at {profile.base_url} failed repeatedly: not called for "
                    f"another {wait:.0f} s (circuit open)",
                )
            if (
                isinstance(job.tracker, RewriteTracker)
                and key not in self.no_prediction
                and prediction.wanted(profile.settings.prediction, profile.provider, backend.model)
            ):
                draft.request = dataclasses.replace(draft.request, prediction=job.tracker.base)
            source = self._model_source(backend, draft, job, info)
        announcer = self._announcers.get(job.id)
        if announcer is not None and backend is not None:
            # The route and model, once the request is written: while the model works.
            info.sent = announcer.sent
        elif announcer is not None:
            announcer.status()
        else:
            host.status(job)
        ran: Verification = {}  # tests.run: what pytest said of the generated tests
        notes: list[str] = []  # and what the recorder's tests added to a model's say
        if source is not None and job.destination is not None and host.settings.tests.run:
            supplement = draft.supplement if backend is not None else None
            source = passing_only(host, job.destination, source, ran, supplement, notes)
        try:
            if source is not None:
                try:
                    await session.run(source)
                except BackendError as exc:
                    request = draft.request
                    if (
                        key is None
                        or backend is None
                        or request is None
                        or request.prediction is None
                        or session.edits
                        or not prediction.refused(exc)
                    ):
                        raise
                    # Refused by name: once more without it, and never again for this model.
                    self.no_prediction.add(key)
                    job.reason += "; the provider refused prediction: sent without it"
                    draft.request = dataclasses.replace(request, prediction=None)
                    await session.run(self._model_source(backend, draft, job, info))
        except BackendError as exc:
            if key is not None and exc.kind in BREAKER_KINDS:
                host.models.failure(key, time.monotonic())
            raise
        finally:
            job.metrics.edits = session.edits_before + session.edits
            job.metrics.tokens = info.completion_tokens or info.deltas or job.metrics.tokens
            if info.accepted_prediction_tokens is not None:
                job.metrics.accepted_prediction_tokens = info.accepted_prediction_tokens
                job.metrics.rejected_prediction_tokens = info.rejected_prediction_tokens
            if backend is not None:  # the tier of the answer that landed (an escalation's)
                asked = info.tier_asked
                job.speed_tier = (
                    None if asked is None else {"asked": asked, "served": info.tier_served}
                )
            for note in info.notes:  # a refused speed tier, a switch of API
                job.reason += f"; {note}"
        if key is not None:
            host.models.success(key)
        for note in notes:
            job.reason += f"; {note}"
        await self._settle(job)
        if session.edits == 0:
            job.reason += f"; {ran['details']}" if ran else f"; {draft.no_suggestion}"
            # A verified answer that put nothing in the buffer verified nothing in it.
            job.verification = dict(NOTHING_TO_VERIFY)
        elif draft.verify is not None:
            job.verification = draft.verify(session.sent_text)
        if draft.refine is None or key is None:  # verified answers were recorded as they came
            job.attempts.append(Attempt(job.route, job.model, dict(job.verification)))
        if backend is not None and session.edits and job.verification.get("ok") is False:
            await self._correct(job, document, draft, backend, session, profile, path)
        if draft.extra is not None and session.edits and job.verification.get("ok") is not False:
            await self._extra_insertion(job, document, *draft.extra)
        tests = host.settings.tests
        if ran and session.edits and job.verification.get("ok") is True:
            job.verification = {
                "ok": ran["ok"],
                "details": f"{job.verification.get('details')}; {ran['details']}",
            }
        elif (
            job.destination is not None
            and session.edits
            and job.verification.get("ok") is True
            and (tests.verify_collect or tests.run)
        ):
            # Opt-in only: collecting imports the user's code (and their conftest.py).
            module_text = job.destination.existing + session.sent_text
            ok, details = await host.check_tests(job.destination, module_text, run=tests.run)
            job.verification = {
                "ok": ok,
                "details": f"{job.verification.get('details')}; {details}",
            }

    @staticmethod
    def _model_source(
        backend: Backend, draft: Draft, job: Job, info: StreamInfo
    ) -> AsyncIterator[str]:
        assert draft.request is not None
        if draft.refine is not None:
            return _verified(backend, draft, job, info)
        return filtered(ask(backend, draft.request, info), draft, job, info)

    async def _correct(
        self,
        job: Job,
        document: Document,
        draft: Draft,
        backend: Backend,
        first: EditSession,
        profile: ResolvedProfile,
        path: str,
    ) -> None:
        """Ask the model once more, with what failed, for a streamed draft that failed its
        check (the parse check); the answer replaces the job's own text and is checked again.

        A model that fails to answer (or answers nothing) leaves the first draft in place, as
        it was checked.
        """
        if draft.correct is None or draft.verify is None or draft.refine is not None:
            return
        tracker = job.tracker
        request = draft.correct(first.sent_text, job.verification)
        if request is None or tracker.pending or tracker.conflict is not None:
            return
        details = job.verification.get("details", "")
        job.reason += f"; {job.route} draft failed verification ({details}) → asked again"
        edits_before = job.metrics.edits
        # A fresh draft: its filters keep state from the stream they filtered.
        draft = self._prepare(job, document, path, profile)
        tracker.restart()
        session = self._session(job, document, edits_before=edits_before)
        info = StreamInfo(pace=session.pace)
        try:
            await session.run(filtered(ask(backend, request, info), draft, job, info))
        except BackendError as exc:
            if session.edits:
                raise
            job.reason += f" ({exc.kind.replace('_', ' ')}: the first draft stays)"
            return
        finally:
            job.metrics.edits = edits_before + session.edits
        await self._settle(job)
        if session.edits and draft.verify is not None:
            job.verification = draft.verify(session.sent_text)
        job.attempts.append(Attempt(job.route, job.model, dict(job.verification)))

    def _prepare(
        self,
        job: Job,
        document: Document,
        path: str,
        profile: ResolvedProfile,
        *,
        region: tuple[Point, Point] | None = None,
    ) -> Draft:
        """The action's draft for this job, on its region or ``region`` (JobFailedError: it
        cannot run here)."""
        settings = self.host.settings
        start, end = region or (job.tracker.start, job.tracker.end)
        spec = self.actions.get(job.kind)
        if spec is None:
            raise JobFailedError(f"{job.kind} is not available")
        host = self.host
        data = ActionInput(
            document=document,
            start=start,
            end=end,
            ctx=context.around(
                document,
                start,
                end,
                budget_tokens=settings.context.budget_tokens,
                path=path,
            ),
            path=path,
            inputs=job.inputs,
            max_tokens=profile.settings.max_tokens,
            temperature=profile.settings.temperature,
            # Joined only if the offline engine needs them (complete the rest).
            others=lambda: host.other_texts(job.uri),
            destination=job.destination,
            # The region may hold the job's own text (escalation, retry): the check compares
            # with what the user had.
            original=job.tracker.original if region is None else None,
            trees=self.trees,
            record=self._recorder(job),
        )
        try:
            return spec.load().prepare(data)
        except ActionError as exc:
            raise JobFailedError(str(exc)) from None

    def _recorder(self, job: Job) -> Callable[[RecordPlan], Awaitable[Recording]] | None:
        """With ``tests.run`` on, how a test-writing job runs its function (the host's
        recorder); None otherwise: nothing of the user's code runs."""
        destination = job.destination
        if destination is None or not self.host.settings.tests.run:
            return None
        host = self.host

        async def record(plan: RecordPlan) -> Recording:
            # Up to the recorder's limit per function (seconds): the progress says so.
            name = plan.qualname
            total = len(plan.variants)

            def progress(done: int) -> None:
                job.activity = f"recording {name} ({done}/{total})"
                host.report(job)

            job.activity = f"recording {name}"
            host.report(job)
            try:
                return await host.record(destination, plan, progress)
            finally:
                job.activity = ""

        return record

    async def _offline(
        self, job: Job, document: Document, draft: Draft
    ) -> AsyncIterator[str] | None:
        """The offline engine's answer as a stream, after moving the region if it chose one."""
        if draft.offline is None:
            raise JobFailedError(f"{self.actions.title(job.kind)} {NEEDS_MODEL}")
        job.metrics.first_token_at = None
        answer = await draft.offline()
        if answer is not None and answer.note:
            job.reason += f"; {answer.note}"
        if answer is None or not answer.text:
            return None
        if answer.start is not None and answer.end is not None:
            _retarget(job, document, answer.start, answer.end)
        job.metrics.first_token_at = time.monotonic()
        job.metrics.tokens = -(-len(answer.text) // PIECE)
        return pieces(answer.text)

    async def _settle(self, job: Job) -> None:
        """Wait (briefly) until the editor has reported the job's edits, to know where they
        landed.

        An editor that reports late (eglot: after 0.5 s idle) may reveal a change the user made
        before the job's last edits arrived, which then landed off target: the job must say so
        instead of claiming success. An editor that stays silent longer is not waited for.
        """
        job.settling = True  # typing after the text is no longer typing into a stream
        await self.host.wait_reported(job.tracker, SETTLE_SECONDS)
        if job.tracker.conflict is not None:
            raise ConflictError(job.tracker.conflict)

    async def _extra_insertion(self, job: Job, document: Document, line: int, text: str) -> None:
        """Insert one line outside the region (``import re``) once the region's edits are in.

        Sent last, so that it cannot move the region under edits still in flight; skipped (and
        said) when the editor has not reported them in time.
        """
        reported = await self.host.wait_reported(job.tracker, EXTRA_WAIT_SECONDS)
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
        if await self.host.apply_edit(job.uri, SentEdit(at, at, text), document=document):
            job.metrics.edits += 1
            job.added_line = stripped

    # -- a job that writes a test module ---------------------------------------------------------

    @staticmethod
    def _move_to(job: Job, destination: TestModule, document: Document) -> Document:
        """Move the job to the end of the test module (it appends there)."""
        end = document.end
        job.uri = destination.uri
        job.tracker = RegionTracker(end, end, "")
        job.range = (document.to_client(end), document.to_client(end))
        return document

    async def _write_tests_on_disk(
        self, job: Job, destination: TestModule, profile: ResolvedProfile
    ) -> None:
        """For an editor that cannot open documents: the offline engine's tests written to the
        file on disk (a new module in one exclusive create; an existing one appended to)."""
        path = destination.path
        if not profile.is_local:
            raise JobFailedError(
                f"this editor cannot open {os.path.basename(path)} (it does not support "
                "window/showDocument), so a model's tests cannot stream into it; nothing was "
                "written. Open the file and run again, or use the offline engine."
            )
        document = Document(destination.uri, destination.existing, language_id="python")
        end = document.end
        draft = self._prepare(job, document, path, profile, region=(end, end))
        if draft.offline is None:
            raise JobFailedError(NEEDS_MODEL)
        answer = await draft.offline()
        if answer is not None and answer.note:
            job.reason += f"; {answer.note}"
        if answer is None or not answer.text:
            job.reason += f"; {draft.no_suggestion}"
            return
        job.route, job.model = "local", MODEL
        text = answer.text
        if draft.region is not None:
            # Placed for an editor's buffer (before the module's last line break): on disk the
            # module grows at its end by the same text.
            document.replace(*draft.region, text)
            grown = document.text
            existing = destination.existing
            text = grown[len(existing) :] if grown.startswith(existing) else grown
        ran: Verification = {}
        if self.host.settings.tests.run:
            text, ran = await keep_passing(self.host, destination, text)
            if not text:
                job.reason += f"; {ran['details']}"
                return
        await self.host.write_tests(destination, text)
        job.metrics.edits = 1
        if draft.verify is not None:
            job.verification = draft.verify(answer.text)
        if ran and job.verification.get("ok") is True:
            job.verification["details"] += f"; {ran['details']}"
        job.reason += f"; written to {path}"
        job.attempts.append(Attempt(job.route, job.model, dict(job.verification)))


def _retarget(job: Job, document: Document, start: Point, end: Point) -> None:
    job.tracker.retarget(start, end, document.get_text(start, end))
    job.range = (document.to_client(start), document.to_client(end))


async def _verified(
    backend: Backend, draft: Draft, job: Job, info: StreamInfo
) -> AsyncIterator[str]:
    """A model's answers, verified before they touch the buffer; asked again with what failed.

    Every answer is recorded in ``attempts``; only a passing one is yielded. When all fail,
    nothing was inserted and the job moves on (or fails, listing what failed).
    """
    assert draft.request is not None and draft.verify is not None and draft.refine is not None
    request: ChatRequest | None = draft.request
    result: Verification = {"ok": None, "details": "no answer"}
    for _ in range(draft.rounds):
        if request is None:
            break
        parts = [text async for text in filtered(ask(backend, request, info), draft, job, info)]
        text = "".join(parts)
        result = draft.verify(text)
        job.attempts.append(Attempt(job.route, job.model, dict(result)))
        if result.get("ok") is not False:
            job.verification = result
            yield text
            return
        request = draft.refine(text, result)
    raise BackendError(
        "rejected", f"{job.model}'s answers failed verification: {result.get('details')}"
    )
