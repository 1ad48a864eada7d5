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
    max_deltas = max_tokens + OUTPUT_SLACK_DELTAS
    max_chars = max_tokens * OUTPUT_CHARS_PER_TOKEN
    received = 0
    # Until a line break goes out, a delta's break that the filters hold is said (LINE_ENDED).
    held_breaks = True
    try:
        async for delta in stream:
            first = received == 0
            received += len(delta)
            over: BackendError | None = None
            if info.deltas > max_deltas or received > max_chars:
                # What crossed, not how far: a piece may hold a whole read's deltas.
                crossed = (
                    f"{max_deltas} deltas"
                    if info.deltas > max_deltas
                    else f"{max_chars:,} characters"
                )
                over = BackendError(
                    "protocol",
                    f"{job.model} sent more than its maxTokens ({max_tokens}) allows (over "
                    f"{crossed}): the answer was cut off there. Check the profile's model and "
                    "maxTokens.",
                )
                # A piece may hold a whole read's deltas: the characters within the cap land.
                fits = max_chars - (received - len(delta)) if info.deltas <= max_deltas else 0
                delta = delta[: max(0, fits)]
                if not delta:
                    raise over
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
                raise over
        tail = pipeline.finish()
        if draft.transform is not None:
            yield draft.transform("".join(whole) + tail)
        elif tail:
            yield tail
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
