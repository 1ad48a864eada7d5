"""The offline engine's stream: an answer computed locally, streamed in token-sized pieces.

Pure. The offline engine answers in milliseconds; its text still goes through the same edit
session as a model's, a few characters at a time, so every editor behaves the same whichever
engine answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.jobs import Job

MODEL = "offline"
#: About one token of code.
PIECE = 4

NEEDS_MODEL = (
    "needs a model: set FASTEDIT_FAST_BASE_URL and FASTEDIT_FAST_MODEL (or "
    "FASTEDIT_FAST_PROVIDER, e.g. cerebras with CEREBRAS_API_KEY) and restart the server; "
    "`fastedit-lsp doctor` shows what is configured"
)


def needs_model(job: Job, title: str) -> str:
    """Why a job the offline engine cannot do failed: the model's own failure when one was
    asked (a model is configured: "set FASTEDIT_FAST_BASE_URL" would send the user the wrong
    way), else how to configure one."""
    failed = [attempt.error for attempt in job.attempts if attempt.error]
    if failed:
        return f"{title}: {failed[-1]}; the offline engine cannot do it"
    return f"{title} {NEEDS_MODEL}"


async def pieces(text: str, size: int = PIECE) -> AsyncIterator[str]:
    """Yield ``text`` a few characters at a time, letting the edit session run in between."""
    for start in range(0, len(text), size):
        yield text[start : start + size]
        await asyncio.sleep(0)
