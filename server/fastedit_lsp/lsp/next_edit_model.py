"""Next edits from the fast model (``nextEdit.useModel``): when to ask, what to send, and what
comes back.

Optional work, so it yields to everything else: nothing is sent while a job streams into the
document, for an excluded document, while the provider's breaker is open or its 429 window
runs, or when its rate-limit headroom is under :data:`MIN_HEADROOM`; a failure never counts
against the breaker (a suggestion is not worth tripping it for the user's jobs). The request
waits ``nextEdit.debounceMs`` of quiet first; the caller keeps one request in flight and
cancels it for a newer one, which closes its model stream. Answers are cached per document
version and cursor line; after an accepted suggestion the next one is prefetched.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from contextlib import aclosing
from typing import TYPE_CHECKING

from pygls.uris import to_fs_path

from ..core.document import Document, Point
from ..core.jobs import JobRegistry
from ..engines.next_edit.lines import Prediction
from ..engines.next_edit.model import edit_from_rewrite, updated_block, window
from ..engines.next_edit.predict import verified

if TYPE_CHECKING:
    from ..backends.factory import Backends
    from ..engines.next_edit.model import Window
    from ..prompting.reconcile import Target
    from ..settings import ResolvedProfile, Settings
    from .documents import DocumentStore

#: Below this fraction of its rate limits left, the provider gets no next-edit requests.
MIN_HEADROOM = 0.5
#: Output cap per suggestion (the window is ~25 lines).
MAX_TOKENS = 768
#: History blocks sent with the prompt.
PROMPT_EDITS = 6


class NextEditModel:
    """Ask the fast model for the next edit of a document version."""

    def __init__(
        self,
        documents: DocumentStore,
        jobs: JobRegistry,
        backends: Callable[[], Backends],
        profile: Callable[[], ResolvedProfile],
        settings: Callable[[], Settings],
    ) -> None:
        self._documents = documents
        self._jobs = jobs
        self._backends = backends
        self._profile = profile
        self._settings = settings
        #: (uri) -> (version, cursor line, prediction or None): answers for a version.
        self._cache: dict[str, tuple[int, int, Prediction | None]] = {}
        #: Model requests sent, and why the last one was not.
        self.requests = 0
        self.skipped: str | None = None
        #: The server's own time per model suggestion (ms): the request's time minus the time
        #: spent waiting for the model's answer (``fastedit-lsp bench --next-edit``).
        self.timings: deque[float] = deque(maxlen=2000)

    def forget(self, uri: str) -> None:
        self._cache.pop(uri, None)

    def why_not(self, uri: str) -> str | None:
        """Why no model request may go out for ``uri`` now (None: it may)."""
        settings = self._settings()
        if not settings.next_edit.use_model:
            return "nextEdit.useModel is off"
        profile = self._profile()
        if profile.is_local or profile.base_url is None:
            return "the fast profile has no model"
        if self._jobs.running(uri):
            return "a job is streaming into the document"
        if self._documents.excluded(uri) is not None:
            return "the document is excluded from prompts"
        backends = self._backends()
        model = backends.model_of(profile) or ""
        key = (profile.base_url.rstrip("/"), model)
        now = time.monotonic()
        if model and backends.breakers.state(key, now) != "closed":
            return "the provider's breaker is open"
        if model and backends.rate_limits.blocked_for(key, now) > 0:
            return "the provider asked to wait (HTTP 429)"
        headroom = backends.rate_limits.headroom(key) if model else None
        if headroom is not None and headroom < MIN_HEADROOM:
            return f"the provider's rate-limit headroom is {headroom:.0%}"
        return None

    async def suggest(self, uri: str, cursor: Point, *, debounce: bool = True) -> Prediction | None:
        """The model's next edit for the document's current version (cancellable: cancelling
        closes the model stream)."""
        document = self._documents.get(uri)
        if document is None:
            return None
        cached = self._cache.get(uri)
        if cached is not None and cached[:2] == (document.version, cursor.line):
            return self._still_good(document, cached[2])
        if (reason := self.why_not(uri)) is not None:
            self.skipped = reason
            return None
        version = document.version
        if debounce and (delay := self._settings().next_edit.debounce_ms):
            await asyncio.sleep(delay / 1000)
            document = self._documents.get(uri)
            if document is None or document.version != version:
                return None  # the user kept typing: a newer request will come
            if (reason := self.why_not(uri)) is not None:
                self.skipped = reason
                return None
        started = time.perf_counter()
        snapshot = document.copy()
        prediction, waited = await self._ask(snapshot, cursor)
        current = self._documents.get(uri)
        if current is None or current.version != version:
            return None  # an answer for a stale version is dropped
        self._cache[uri] = (version, cursor.line, prediction)
        good = self._still_good(current, prediction)
        self.timings.append((time.perf_counter() - started - waited) * 1000)
        return good

    def _still_good(self, document: Document, prediction: Prediction | None) -> Prediction | None:
        if prediction is None or verified(document, prediction, document.language_id):
            return None
        return prediction

    async def _ask(self, document: Document, cursor: Point) -> tuple[Prediction | None, float]:
        """The model's edit, and the seconds spent waiting for the model."""
        from ..backends.base import BackendError, ChatRequest, StreamInfo
        from ..prompting.next_edit import next_edit_messages
        from ..prompting.reconcile import reconcile_text, without_reasoning

        history = self._documents.history(document.uri)
        records = list(history.records)[-PROMPT_EDITS:] if history is not None else []
        edits = [("\n".join(r.before), "\n".join(r.after)) for r in records]
        win = window(document, cursor)
        path = to_fs_path(document.uri) or document.uri
        profile = self._profile()
        request = ChatRequest(
            messages=next_edit_messages(path, edits, win.marked(), win.start),
            max_tokens=min(MAX_TOKENS, profile.settings.max_tokens),
            temperature=0.0,
        )
        self.requests += 1
        parts: list[str] = []
        sent = time.perf_counter()
        try:
            backend = await self._backends().backend(profile)
            async with aclosing(backend.stream(request, StreamInfo())) as deltas:
                async for delta in deltas:
                    parts.append(delta)
        except BackendError as error:
            self.skipped = f"the model failed: {error}"
            # Never counted against the breaker: this request was optional.
            return None, time.perf_counter() - sent
        waited = time.perf_counter() - sent
        updated = updated_block(without_reasoning("".join(parts)))
        if updated is not None:
            # The block as the window's rewrite: fences, indentation, CRLF (docs/answers.md).
            updated = reconcile_text(_window_target(document, win), updated)
        return (None if updated is None else edit_from_rewrite(win, updated)), waited


def _window_target(document: Document, win: Window) -> Target:
    """The window a next-edit answer rewrites, as the reconciler's target."""
    from ..prompting.reconcile import Target

    before = "".join(line + "\n" for line in (document.line(i) for i in range(win.start)))
    after = "".join("\n" + document.line(i) for i in range(win.end, document.line_count))
    return Target(before, after, selection=win.text, replace=True)
