"""The offline engine's entry point: answers with no key and no network.

Pure. It streams through the same edit session as a model does. Until the offline engine's
actions land, "complete the rest" answers "no suggestion" with a reason and "edit selection"
says it needs a model and how to configure one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from .base import BackendError, ChatRequest, StreamInfo

NEEDS_MODEL = (
    "Edit selection needs a model: set FASTEDIT_FAST_BASE_URL and FASTEDIT_FAST_MODEL (or "
    "profiles.fast.provider, e.g. cerebras with CEREBRAS_API_KEY) and restart the server"
)


class NoModelError(BackendError):
    """The offline engine cannot do this action."""


class LocalBackend:
    """The offline engine."""

    provider = "local"
    model = "offline"

    def __init__(self, kind: str) -> None:
        self._kind = kind

    async def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncIterator[str]:
        info.model = self.model
        if self._kind == "editSelection":
            raise NoModelError("bad_request", NEEDS_MODEL)
        return
        yield  # pragma: no cover - makes this an async generator
