"""One attempt at a job with one profile, as a sequence of small stages: guard (what may be
sent) → draft → source (the model's stream or the offline engine's answer) → stream into the
edit session → settle and verify → correct → extras (``import re``, the tests' check).

Pure asyncio: the world is reached through the ports (:mod:`~fastedit_lsp.pipeline.ports`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass

from ..actions.base import Draft, Verification
from ..backends.base import Backend, BackendError, StreamInfo
from ..core.document import Document
from ..core.jobs import Attempt
from ..core.rewrite_tracking import RewriteTracker
from ..core.uris import to_fs_path
from ..settings import ResolvedProfile
from . import checks, models, prediction, test_module, verify
from .drafts import JobFailedError
from .edits import EditSession
from .job_run import JobRun
from .models import Key
from .offline import MODEL
from .region import retarget
from .sources import model_source, offline_source


@dataclass
class Source:
    """Where the attempt's text comes from: a model (its backend and breaker key) or the
    offline engine (no backend); ``stream`` None: nothing to insert."""

    stream: AsyncIterator[str] | None
    backend: Backend | None = None
    key: Key | None = None


async def attempt(
    run: JobRun, document: Document, profile: ResolvedProfile, session: EditSession
) -> None:
    """One try at the job with one profile: model or offline engine, stream, verify."""
    job = run.job
    if not profile.is_local:
        await guard(run)
    draft = run.drafts.prepare(job, document, profile)
    if draft.region is not None:
        retarget(job, document, *draft.region)
    info = session.stream_info()
    source = await open_source(run, document, profile, draft, info)
    tell_route(run, source, info)
    ran: Verification = {}  # tests.run: what pytest said of the generated tests
    notes: list[str] = []  # and what the recorder's tests added to a model's say
    source.stream = test_module.passing(run, source.stream, draft, source.backend, ran, notes)
    await stream_into(run, session, draft, source, info)
    for note in notes:
        job.step(note)
    await verify.settle(run)
    verify.judge(job, draft, session, info, ran)
    await checks.check(run, draft, session)
    if draft.refine is None or source.key is None:  # verified answers were recorded as they came
        job.attempts.append(Attempt(job.route, job.model, dict(job.verification)))
    await finish_attempt(run, document, profile, draft, source, session, ran)


async def guard(run: JobRun) -> None:
    """JobFailedError when what the model would see (this document, and for tests the module
    under test) matches ``context.exclude``.

    Git's answer was asked for when the document was opened (a ``git check-ignore`` per job
    cost milliseconds before the first edit).
    """
    job = run.job
    source_uri = job.destination.source_uri if job.destination is not None else ""
    for seen in filter(None, [job.uri, source_uri]):
        pattern = await run.host.excluded(seen)
        if pattern:
            name = os.path.basename(to_fs_path(seen) or seen)
            raise JobFailedError(
                f"{name} matches context.exclude ({pattern}): it is never sent to a model"
            )


async def open_source(
    run: JobRun, document: Document, profile: ResolvedProfile, draft: Draft, info: StreamInfo
) -> Source:
    """The model's stream for the draft, or the offline engine's answer when no model is
    configured or there is nothing to ask one (the file parses...)."""
    job = run.job
    if profile.is_local or draft.request is None:
        job.route, job.model = "local", MODEL
        return Source(await offline_source(job, document, draft, run.spec.title))
    backend, key = await models.open_model(run.host, profile)
    job.route, job.model = profile.name, backend.model
    if run.raised and profile.settings.max_tokens > draft.request.max_tokens:
        budget = profile.settings.max_tokens
        draft.request = dataclasses.replace(draft.request, max_tokens=budget)
    if (
        isinstance(job.tracker, RewriteTracker)
        and key not in run.no_prediction
        and prediction.wanted(profile.settings.prediction, profile.provider, backend.model)
    ):
        draft.request = dataclasses.replace(draft.request, prediction=job.tracker.base)
    run.asked = draft.request.max_tokens
    return Source(model_source(backend, draft, job, info), backend, key)


def tell_route(run: JobRun, source: Source, info: StreamInfo) -> None:
    """The job's route and model to the editor: once the model request is written (while the
    model works), or now for the offline engine."""
    if source.backend is not None:
        info.sent = run.announcer.sent
    else:
        run.announcer.status()


async def stream_into(
    run: JobRun, session: EditSession, draft: Draft, source: Source, info: StreamInfo
) -> None:
    """Stream the source into the session; a model's failure counts against its breaker."""
    job = run.job
    try:
        if source.stream is not None:
            await stream_predicted(run, session, draft, source, info)
    except BackendError as exc:
        models.failed(run.host, source.key, exc)
        raise
    finally:
        job.metrics.edits = session.edits_before + session.edits
        job.metrics.tokens = info.completion_tokens or info.deltas or job.metrics.tokens
        if info.accepted_prediction_tokens is not None:
            job.metrics.accepted_prediction_tokens = info.accepted_prediction_tokens
            job.metrics.rejected_prediction_tokens = info.rejected_prediction_tokens
        if source.backend is not None:  # the tier of the answer that landed (an escalation's)
            asked = info.tier_asked
            job.speed_tier = None if asked is None else {"asked": asked, "served": info.tier_served}
        for note in info.notes:  # a refused speed tier, a switch of API
            job.step(note)
    if source.key is not None:
        run.host.models.success(source.key)


async def stream_predicted(
    run: JobRun, session: EditSession, draft: Draft, source: Source, info: StreamInfo
) -> None:
    """Run the session; a provider that refuses ``prediction`` by name is asked once more
    without it, and never sent it again."""
    assert source.stream is not None
    try:
        await session.run(source.stream)
    except BackendError as exc:
        request, backend, key = draft.request, source.backend, source.key
        if (
            key is None
            or backend is None
            or request is None
            or request.prediction is None
            or session.edits
            or not prediction.refused(exc)
        ):
            raise
        run.no_prediction.add(key)
        run.job.step("the provider refused prediction: sent without it")
        draft.request = dataclasses.replace(request, prediction=None)
        await session.run(model_source(backend, draft, run.job, info))


async def finish_attempt(
    run: JobRun,
    document: Document,
    profile: ResolvedProfile,
    draft: Draft,
    source: Source,
    session: EditSession,
    ran: Verification,
) -> None:
    """After the check: ask once more for a failed draft, then the extras of a passing one."""
    job = run.job
    ok = job.verification.get("ok")
    if source.backend is not None and session.edits and ok is False and job.truncated is None:
        await verify.correct(run, document, draft, source.backend, session, profile)
    if draft.extra is not None and session.edits and job.verification.get("ok") is not False:
        await verify.extra_insertion(run, document, *draft.extra)
    await test_module.check(run, session, ran)
