"""One job, start to finish: context, route, backend stream, filters, edit session, record.

Runs as a background task once ``executeCommand`` has answered with the job id. Every outcome
ends in a finished job record, a ``fastedit/status`` notification and the end of its progress.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from . import context
from .actions import complete_rest, edit_selection
from .backends.base import Backend, BackendError, ChatRequest, StreamInfo
from .backends.local import LocalBackend
from .edits import ConflictError, EditRejectedError, EditSession
from .jobs import Attempt, Job
from .postprocess import Pipeline
from .routing import choose
from .settings import GIT_IGNORED, ResolvedProfile

if TYPE_CHECKING:
    from .document import Document
    from .server import FasteditServer

log = logging.getLogger(__name__)

TITLES = {
    "completeRest": "Completing",
    "editSelection": "Editing selection",
    "generateRegex": "Generating regex",
    "generateTests": "Writing tests",
    "fixSyntax": "Fixing syntax",
}


class JobFailedError(Exception):
    """A job that cannot run, with the reason shown to the user."""


async def run(ls: FasteditServer, job: Job, document: Document) -> None:
    """Run ``job`` on ``document`` and record how it ended."""
    progress = ls.spawn(_begin_progress(ls, job))
    ls.send_status(job)
    state, error = "done", None
    try:
        await _execute(ls, job, document)
    except asyncio.CancelledError:
        state = "cancelled"
        error = f"Stopped: {job.stop_reason}" if job.stop_reason else None
    except ConflictError as exc:
        state, error = "cancelled", f"Stopped: {exc}"
    except (BackendError, JobFailedError, EditRejectedError) as exc:
        state, error = "failed", str(exc)
    except TimeoutError:
        state = "failed"
        error = "the editor did not answer workspace/applyEdit; the job stopped sending edits"
    except Exception as exc:  # a bug: never let it take the server down
        log.exception("job %s crashed", job.id)
        state, error = "failed", f"internal error: {type(exc).__name__}: {exc}"
    job.finish(state, error)  # type: ignore[arg-type]
    if state == "failed" and error:
        ls.show_message(f"fastedit: {error}", types.MessageType.Error)
    if not progress.done():
        progress.cancel()
    await asyncio.gather(progress, return_exceptions=True)
    _end_progress(ls, job)
    ls.send_status(job)


async def _execute(ls: FasteditServer, job: Job, document: Document) -> None:
    settings = ls.resolved.settings
    path = to_fs_path(job.uri) or job.uri
    instruction = str(job.inputs.get("instruction", ""))
    lines = job.tracker.end.line - job.tracker.start.line + 1
    decision = choose(
        ls.mode, job.kind, lines=lines, instruction=instruction, routing=settings.routing
    )
    profile = ls.profile(decision.profile)
    job.reason = decision.reason
    if profile.is_local:
        job.reason += f" → offline engine ({profile.fallback_reason or 'local profile'})"
    else:
        pattern = await excluded_by(path, settings.context.exclude)
        if pattern:
            raise JobFailedError(
                f"{os.path.basename(path)} matches context.exclude ({pattern}): it is never "
                "sent to a model"
            )
    backend = await _backend(ls, profile, job)
    job.route = "local" if profile.is_local else profile.name
    job.model = backend.model
    ctx = context.around(
        document,
        job.tracker.start,
        job.tracker.end,
        budget_tokens=settings.context.budget_tokens,
        path=path,
    )
    limits = profile.settings
    request: ChatRequest
    pipeline: Pipeline
    if job.kind == "editSelection":
        request = edit_selection.request(
            ctx, instruction, max_tokens=limits.max_tokens, temperature=limits.temperature
        )
        pipeline = edit_selection.filters(ctx)
    else:
        request = complete_rest.request(
            ctx, max_tokens=limits.max_tokens, temperature=limits.temperature
        )
        pipeline = complete_rest.filters(ctx)
    ls.send_status(job)
    info = StreamInfo()
    session = EditSession(
        document,
        job.tracker,
        lambda edit: ls.apply_edit(job.uri, edit, document=document),
        max_edits_per_second=settings.max_edits_per_second,
        streaming=settings.streaming,
        on_edit=lambda n: _on_edit(ls, job, n),
    )
    try:
        await session.run(_filtered(backend.stream(request, info), pipeline, job, info))
    finally:
        job.metrics.edits = session.edits
        job.metrics.tokens = info.completion_tokens or info.deltas
        if job.metrics.first_token_at is not None:
            job.metrics.stream_seconds = time.monotonic() - job.metrics.first_token_at
        job.attempts.append(Attempt(job.route, job.model, dict(job.verification)))
    if session.edits == 0:
        job.reason += "; no suggestion"


async def _filtered(
    stream: AsyncIterator[str], pipeline: Pipeline, job: Job, info: StreamInfo
) -> AsyncIterator[str]:
    """The backend's deltas through the action's filters, counting tokens as they arrive."""
    try:
        async for delta in stream:
            if job.metrics.first_token_at is None:
                job.metrics.first_token_at = info.first_delta_at or time.monotonic()
            job.metrics.tokens = info.completion_tokens or info.deltas
            if text := pipeline.feed(delta):
                yield text
        if tail := pipeline.finish():
            yield tail
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


async def _backend(ls: FasteditServer, profile: ResolvedProfile, job: Job) -> Backend:
    if profile.is_local or profile.base_url is None:
        return LocalBackend(job.kind)
    from .backends.openai import OpenAICompatibleBackend, list_models

    model = profile.model or ls.discovered_models.get(f"{profile.name}:{profile.base_url}")
    if model is None:
        models = await list_models(
            ls.http,
            profile.base_url,
            profile.api_key,
            provider=profile.provider,
            key_hint=profile.key_hint,
        )
        if not models:
            raise JobFailedError(
                f"profiles.{profile.name}: {profile.base_url}/models lists no model; set "
                f"profiles.{profile.name}.model"
            )
        model = models[0]
        ls.discovered_models[f"{profile.name}:{profile.base_url}"] = model
        ls.discovered_models[profile.name] = model
        ls.log_message(f"profiles.{profile.name}: using model {model} (first listed)")
    return OpenAICompatibleBackend(
        ls.http,
        provider=profile.provider,
        base_url=profile.base_url,
        model=model,
        api_key=profile.api_key,
        timeout_ms=profile.settings.timeout_ms,
        rate_limits=ls.rate_limits,
        reasoning_effort=profile.settings.reasoning_effort,
        key_hint=profile.key_hint,
    )


async def excluded_by(path: str, patterns: tuple[str, ...]) -> str | None:
    """The ``context.exclude`` pattern a file matches (asking git for ``<git-ignored>``)."""
    if pattern := context.is_excluded(path, [p for p in patterns if p != GIT_IGNORED]):
        return pattern
    if GIT_IGNORED in patterns and await _git_ignored(path):
        return GIT_IGNORED
    return None


async def _git_ignored(path: str) -> bool:
    directory = os.path.dirname(path)
    if not await asyncio.to_thread(os.path.isdir, directory):
        return False
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            "check-ignore",
            "-q",
            "--",
            path,
            cwd=directory,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return False  # no git: nothing is git-ignored
    try:
        return await asyncio.wait_for(proc.wait(), 5) == 0
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return False


def _on_edit(ls: FasteditServer, job: Job, edits: int) -> None:
    job.metrics.edits = edits
    if job.metrics.first_token_at is not None:
        job.metrics.stream_seconds = time.monotonic() - job.metrics.first_token_at
    if ls.send_status(job, streaming=True) and job.progress_token is not None:
        metrics = job.metrics.record()
        speed = f", {metrics['tokensPerSecond']} tok/s" if metrics["tokensPerSecond"] else ""
        ls.work_done_progress.report(
            job.progress_token,
            types.WorkDoneProgressReport(message=f"{job.model}: {metrics['tokens']} tokens{speed}"),
        )


async def _begin_progress(ls: FasteditServer, job: Job) -> None:
    """Show cancellable work-done progress, when the client supports it (off the stream's path)."""
    if not ls.client_supports("window.work_done_progress"):
        return
    token = f"fastedit-{job.id}"
    try:
        # Shielded: cancelling the wait must not cancel pygls' pending request, or the client's
        # late reply makes pygls report an error to the user.
        await asyncio.wait_for(asyncio.shield(ls.work_done_progress.create_async(token)), 10)
    except Exception:  # the client refused or never answered: no progress, the job goes on
        log.info("work-done progress refused for %s", job.id)
        return
    if job.is_finished:
        ls.work_done_progress.tokens.pop(token, None)
        return
    ls.progress_jobs[token] = job
    job.progress_token = token
    ls.work_done_progress.begin(
        token,
        types.WorkDoneProgressBegin(
            title=f"fastedit: {TITLES.get(job.kind, job.kind)}",
            cancellable=True,
            message=f"{job.route or 'routing'} {job.model}".strip(),
        ),
    )


def _end_progress(ls: FasteditServer, job: Job) -> None:
    token = job.progress_token
    if token is None:
        return
    message = {"done": "done", "cancelled": "cancelled", "failed": "failed"}.get(
        job.state, job.state
    )
    if job.error:
        message += f": {job.error}"
    ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
    # pygls never forgets tokens (notes/toolchain.md, defect 6).
    ls.work_done_progress.tokens.pop(token, None)
    ls.progress_jobs.pop(token, None)
