"""Where an attempt's text comes from: the model's stream (asked, filtered, verified before it
lands when the action says so) or the offline engine's answer, cut into pieces.

Pure asyncio: no pygls, no httpx (the backend is a :class:`~fastedit_lsp.backends.base.Backend`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from ..actions.base import Draft, Verification
from ..backends.base import Backend, BackendError, ChatRequest, StreamInfo
from ..core.document import Document
from ..core.jobs import Attempt, Job
from .drafts import JobFailedError
from .offline import PIECE, needs_model, pieces
from .region import retarget
from .stream import filtered


def model_source(backend: Backend, draft: Draft, job: Job, info: StreamInfo) -> AsyncIterator[str]:
    """The model's answer to the draft, through its filters (verified first when it refines)."""
    assert draft.request is not None
    if draft.refine is not None:
        return verified(backend, draft, job, info)
    return filtered(backend.stream(draft.request, info), draft, job, info)


async def verified(
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
        parts = [text async for text in filtered(backend.stream(request, info), draft, job, info)]
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


async def offline_source(
    job: Job, document: Document, draft: Draft, title: str
) -> AsyncIterator[str] | None:
    """The offline engine's answer as a stream, after moving the region if it chose one."""
    if draft.offline is None:
        raise JobFailedError(needs_model(job, title))
    job.metrics.first_token_at = None
    answer = await draft.offline()
    if answer is not None and answer.note:
        job.step(answer.note)
    if answer is None or not answer.text:
        return None
    if answer.start is not None and answer.end is not None:
        retarget(job, document, answer.start, answer.end)
    job.metrics.first_token_at = time.monotonic()
    job.metrics.tokens = -(-len(answer.text) // PIECE)
    return pieces(answer.text)
