"""A model's answer on its way to the buffer: asked for, capped, filtered, counted.

Pure asyncio: no pygls, no httpx (the backend is a :class:`~fastedit_lsp.backends.base.Backend`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from ..actions.base import Draft
from ..backends.base import BackendError, StreamInfo
from ..core.jobs import Job

#: Yielded after a delta whose line break the filters hold, until a break goes out: a line of
#: the answer ended (see :func:`filtered`). Consumers that join the text are unaffected.
LINE_ENDED = ""

#: A model that ignores ``max_tokens`` is cut off: at most this many text deltas beyond it, and
#: this many characters per requested token (generous: a token is a few characters, rarely 20).
OUTPUT_SLACK_DELTAS = 16
OUTPUT_CHARS_PER_TOKEN = 64


def _over_cap(
    job: Job, info: StreamInfo, max_tokens: int, received: int, piece: int
) -> tuple[BackendError, int] | None:
    """None within the answer's caps (see :func:`filtered`); past them, the error (which cap
    was crossed, not how far: a piece may hold a whole read's deltas) and how many characters
    of the last piece (``piece`` long) still land: those within the character cap."""
    if info.deltas > max_tokens + OUTPUT_SLACK_DELTAS:
        crossed, fits = f"{max_tokens + OUTPUT_SLACK_DELTAS} deltas", 0
    elif received > (max_chars := max_tokens * OUTPUT_CHARS_PER_TOKEN):
        crossed, fits = f"{max_chars:,} characters", max(0, max_chars - received + piece)
    else:
        return None
    error = BackendError(
        "protocol",
        f"{job.model} sent more than its maxTokens ({max_tokens}) allows (over {crossed}): the "
        "answer was cut off there. Check the profile's model and maxTokens.",
    )
    return error, fits


async def filtered(
    stream: AsyncIterator[str], draft: Draft, job: Job, info: StreamInfo
) -> AsyncIterator[str]:
    """The backend's deltas through the action's filters, counting tokens as they arrive.

    The answer is capped (tokens and characters) whatever the model does with ``max_tokens``.

    Until a line break has gone out, a delta whose line break the filters hold (the reconciler
    owes the break of a line that went out to what follows it, where the answer's last break is
    dropped) is followed by :data:`LINE_ENDED`: the line is whole in the buffer once what went
    out of it lands (the text after the target starts with a line break, or there is none), so
    the edit session sends it at once instead of at the next break two tokens later.
    """
    pipeline = draft.pipeline
    whole: list[str] = []
    max_tokens = draft.request.max_tokens if draft.request is not None else 1024
    received = 0
    # Until a line break goes out, a delta's break that the filters hold is said (LINE_ENDED).
    held_breaks = True
    try:
        async for delta in stream:
            first = received == 0
            received += len(delta)
            over = _over_cap(job, info, max_tokens, received, len(delta))
            if over is not None:
                delta = delta[: over[1]]  # what fits of the piece lands, then the error
                if not delta:
                    raise over[0]
            now = time.monotonic()
            if job.metrics.first_token_at is None:
                job.metrics.first_token_at = info.first_delta_at or now
            # The decode speed is this stream's (an escalation's answer replaces a draft's).
            if first:
                job.metrics.decode_from = info.first_delta_at or now
            job.metrics.decode_to = info.last_delta_at or now
            job.metrics.tokens = info.completion_tokens or info.deltas
            if text := pipeline.feed(delta):
                if draft.transform is None:
                    yield text
                else:
                    whole.append(text)
            if held_breaks and "\n" in delta:
                if "\n" in text:
                    held_breaks = False
                elif draft.transform is None:
                    yield LINE_ENDED
            if over is not None:
                raise over[0]
        tail = pipeline.finish()
        if draft.transform is not None:
            yield draft.transform("".join(whole) + tail)
        elif tail:
            yield tail
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
