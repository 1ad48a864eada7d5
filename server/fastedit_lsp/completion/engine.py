"""When a completion calls the model, and when its answer goes out: the latency machinery.

Pure asyncio: no pygls, no httpx. ``features/completions.py`` turns an LSP request into a
:class:`CompletionQuery` and a function that opens the model's text stream; this module decides
whether that stream is opened at all, shares it between requests, and answers each request:

1. **Cancel-previous.** A newer request for the same document supersedes the pending one, which
   answers ``None`` at once. The superseded request's stream is closed at once, unless the newer
   request adopts it (4).
2. **Cache.** Finished answers are kept in an LRU keyed by hashes of the document, the prefix's
   tail and the suffix's head: a repeated request answers without a model call.
3. **Debounce.** Automatic requests wait ``debounce`` seconds before opening a stream, so a burst
   of keystrokes costs one model call; invoked requests are not debounced.
4. **Typed-ahead reuse.** A live or recent stream whose cursor is behind the new request's by text
   the stream has produced (the user is typing the suggestion) answers the new request with the
   rest, without a new call. While the stream has produced less than was typed but agrees so far,
   the request waits for it.
5. **Deadline.** After ``deadline`` seconds a request answers with whatever has arrived; the stream
   goes on for the next request (reuse) and the cache.
6. **Early close.** Once the text reaches its cut point (``has_enough``) the stream is closed:
   more tokens could not change the answer.
7. **Cancellation.** A request cancelled by the client (``$/cancelRequest``) raises
   ``CancelledError``; its stream is closed after ``grace`` seconds unless a newer request
   adopted it (VS Code cancels the previous request just before sending the next one).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Literal

#: How much of the prefix's tail and the suffix's head identify a cursor position.
PREFIX_KEY = 512
SUFFIX_KEY = 256
#: Typed-ahead reuse looks at most this far back (characters typed since the stream started).
MAX_TYPED = 256
#: Streams remembered per document for typed-ahead reuse (the running one included).
RECENT_STREAMS = 4
#: Finished answers kept in the LRU cache (over all documents).
CACHE_SIZE = 256

Source = Literal["model", "cache", "reuse"]


@dataclass(frozen=True)
class CompletionQuery:
    """What a completion request asks, as far as this module cares."""

    document: str
    #: Text before the cursor (the context's prefix: may start anywhere, ends at the cursor).
    prefix: str
    #: Text after the cursor (starts at the cursor).
    suffix: str
    language_id: str
    #: Triggered by typing (debounced), rather than invoked by the user.
    automatic: bool


@dataclass(frozen=True)
class Suggestion:
    """The answer to one request: ``text`` is what to show ("" when nothing)."""

    text: str
    source: Source
    #: The deadline passed before the answer was complete.
    partial: bool = False
    #: The model stream's error, when it failed (the text is what arrived before).
    error: BaseException | None = None
    #: Seconds spent waiting for the model or the debounce (the rest is the server's own time).
    waited: float = field(default=0.0, compare=False)


#: Opens the model's text stream for a query: called once per stream, in the request's time;
#: its synchronous work (the prompt) counts as the server's, iterating it as the model's.
Opener = Callable[[CompletionQuery], AsyncIterator[str]]
#: (raw text, query) -> the text to show / whether more text could change it.
Finisher = Callable[[str, CompletionQuery], str]
Enough = Callable[[str, CompletionQuery], bool]


@dataclass
class CompletionStats:
    """Counters for ``fastedit.status`` and the benchmark's structural regression guard."""

    requests: int = 0
    model_requests: int = 0
    cache_hits: int = 0
    reuses: int = 0
    superseded: int = 0
    cancelled: int = 0
    early_closes: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "modelRequests": self.model_requests,
            "cacheHits": self.cache_hits,
            "reuses": self.reuses,
            "superseded": self.superseded,
            "cancelled": self.cancelled,
            "earlyCloses": self.early_closes,
        }


@dataclass(eq=False)
class _Stream:
    """One model stream and the text it has produced so far."""

    query: CompletionQuery
    text: str = ""
    #: Ended: done, enough, failed or closed. ``complete``: done or enough (cacheable).
    finished: bool = False
    complete: bool = False
    error: BaseException | None = None
    task: asyncio.Task[None] | None = None
    #: Requests that adopted this stream so far (a cancelled request's grace timer compares it).
    claims: int = 0
    _waiters: list[asyncio.Future[None]] = field(default_factory=list)

    def changed(self) -> asyncio.Future[None]:
        """A future resolved at the next text or at the end."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.finished:
            future.set_result(None)
        else:
            self._waiters.append(future)
        return future

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)

    def close(self) -> None:
        """Stop the stream now (its task's cancellation closes the HTTP stream)."""
        # Once: a second cancel would interrupt the close of the HTTP stream (see Job.stop).
        if self.task is not None and not self.task.done() and not self.task.cancelling():
            self.task.cancel()
        if not self.finished:
            self.finished = True
            self.notify()


@dataclass(eq=False)
class _Request:
    query: CompletionQuery
    superseded: asyncio.Future[None]
    waited: float = 0.0


def _typed_since(stream: _Stream, query: CompletionQuery) -> str | None:
    """The text typed since ``stream``'s query, if ``query`` is the same place plus typing."""
    old = stream.query
    if old.document != query.document or old.language_id != query.language_id:
        return None
    if old.suffix[:SUFFIX_KEY] != query.suffix[:SUFFIX_KEY]:
        return None
    if len(old.prefix) < PREFIX_KEY:
        # A short prefix is the whole text before the cursor: it must match entirely.
        if not query.prefix.startswith(old.prefix):
            return None
        typed = query.prefix[len(old.prefix) :]
    else:
        tail = old.prefix[-PREFIX_KEY:]
        start = max(0, len(query.prefix) - len(tail) - MAX_TYPED)
        found = query.prefix.rfind(tail, start)
        if found < 0:
            return None
        typed = query.prefix[found + len(tail) :]
    return typed if len(typed) <= MAX_TYPED else None


def _agrees(stream: _Stream, typed: str) -> bool:
    """Whether the typed text is (so far) what the stream produced."""
    if stream.text.startswith(typed):
        return True
    return not stream.finished and typed.startswith(stream.text)


class CompletionEngine:
    """Answers completion requests with as few model calls as the rules above allow."""

    def __init__(
        self,
        *,
        finish: Finisher,
        has_enough: Enough,
        grace: float = 0.15,
        cache_size: int = CACHE_SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._finish = finish
        self._has_enough = has_enough
        self._grace = grace
        self._cache_size = cache_size
        self._clock = clock
        self._cache: OrderedDict[tuple[str, int, int], str] = OrderedDict()
        self._pending: dict[str, _Request] = {}
        self._streams: dict[str, list[_Stream]] = {}
        self.stats = CompletionStats()

    # -- public --------------------------------------------------------------------------------

    async def complete(
        self, query: CompletionQuery, open_stream: Opener, *, debounce: float, deadline: float
    ) -> Suggestion | None:
        """Answer ``query``; ``None`` when a newer request for the document superseded it."""
        started = self._clock()
        self.stats.requests += 1
        request = self._supersede(query)
        try:
            answer = await self._answer(request, open_stream, started, debounce, deadline)
            return None if answer is None else replace(answer, waited=request.waited)
        except asyncio.CancelledError:
            self.stats.cancelled += 1
            self._release_later(query)
            raise
        finally:
            if self._pending.get(query.document) is request:
                del self._pending[query.document]

    def cached(self, query: CompletionQuery) -> str | None:
        """The cached raw answer for exactly this query, if any."""
        key = self._key(query)
        text = self._cache.get(key)
        if text is not None:
            self._cache.move_to_end(key)
        return text

    def forget(self, document: str) -> None:
        """The document closed: close its streams and supersede its pending request."""
        pending = self._pending.pop(document, None)
        if pending is not None and not pending.superseded.done():
            pending.superseded.set_result(None)
        for stream in self._streams.pop(document, []):
            stream.close()

    def close(self) -> None:
        """Close every stream (server shutdown)."""
        for document in list(self._streams) + list(self._pending):
            self.forget(document)

    def running_streams(self) -> int:
        return sum(not s.finished for streams in self._streams.values() for s in streams)

    # -- steps -----------------------------------------------------------------------------

    def _supersede(self, query: CompletionQuery) -> _Request:
        previous = self._pending.get(query.document)
        if previous is not None and not previous.superseded.done():
            previous.superseded.set_result(None)
            self.stats.superseded += 1
        request = _Request(query, asyncio.get_running_loop().create_future())
        self._pending[query.document] = request
        return request

    async def _answer(
        self,
        request: _Request,
        open_stream: Opener,
        started: float,
        debounce: float,
        deadline: float,
    ) -> Suggestion | None:
        query = request.query
        if (text := self.cached(query)) is not None:
            self.stats.cache_hits += 1
            self._close_others(query.document, keep=None)
            return Suggestion(self._finish(text, query), "cache")
        while True:
            adopted = self._adopt(query)
            if adopted is not None:
                stream, typed = adopted
                self.stats.reuses += 1
                answer = await self._follow(request, stream, typed, started, deadline, "reuse")
                if answer is not False:
                    return answer
                continue  # the stream disagreed with the typing after all: start afresh
            self._close_others(query.document, keep=None)
            debounced = query.automatic and debounce > 0
            if debounced and await self._superseded_within(request, debounce):
                return None
            stream = self._open(query, open_stream)
            answer = await self._follow(request, stream, "", started, deadline, "model")
            assert answer is not False  # a stream always agrees with no typing
            return answer

    def _adopt(self, query: CompletionQuery) -> tuple[_Stream, str] | None:
        for stream in reversed(self._streams.get(query.document, [])):
            if stream.finished and not stream.complete:
                continue  # closed or failed: its text may be cut anywhere
            typed = _typed_since(stream, query)
            if typed is not None and _agrees(stream, typed):
                stream.claims += 1
                self._close_others(query.document, keep=stream)
                return stream, typed
        return None

    def _close_others(self, document: str, keep: _Stream | None) -> None:
        for stream in self._streams.get(document, []):
            if stream is not keep and not stream.finished:
                stream.close()

    def _open(self, query: CompletionQuery, open_stream: Opener) -> _Stream:
        stream = _Stream(query)
        stream.claims = 1
        streams = self._streams.setdefault(query.document, [])
        streams.append(stream)
        del streams[:-RECENT_STREAMS]
        self.stats.model_requests += 1
        # Called here, in the request's own time: the opener's synchronous work (building the
        # prompt) is the server's, not the model's.
        iterator = open_stream(query)
        stream.task = asyncio.get_running_loop().create_task(self._pump(stream, iterator))
        return stream

    async def _pump(self, stream: _Stream, iterator: AsyncIterator[str]) -> None:
        try:
            async for delta in iterator:
                if stream.finished:
                    break
                stream.text += delta
                if self._has_enough(stream.text, stream.query):
                    stream.complete = True
                    self.stats.early_closes += 1
                    break
                stream.notify()
            else:
                stream.complete = True
        except asyncio.CancelledError:
            pass  # closed: superseded, cancelled or shut down
        except Exception as error:  # reported to every request following it
            stream.error = error
        finally:
            stream.finished = True
            if stream.complete:
                self._store(stream.query, stream.text)
            stream.notify()
            # Closed once the answer is out: a stream that has enough may let the model finish
            # (briefly) to keep its connection; a cancelled one is closed at once.
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await aclose()

    async def _follow(
        self,
        request: _Request,
        stream: _Stream,
        typed: str,
        started: float,
        deadline: float,
        source: Source,
    ) -> Suggestion | Literal[False] | None:
        """Wait on ``stream`` until it has enough for ``request``; False if it disagrees."""
        query = request.query
        while True:
            if request.superseded.done():
                return None
            if not _agrees(stream, typed):
                return False
            rest = stream.text[len(typed) :] if len(stream.text) >= len(typed) else ""
            if stream.finished:
                return Suggestion(self._finish(rest, query), source, error=stream.error)
            if len(stream.text) >= len(typed) and self._has_enough(rest, query):
                return Suggestion(self._finish(rest, query), source)
            left = started + deadline - self._clock()
            if left <= 0:
                return Suggestion(self._finish(rest, query), source, partial=True)
            changed = stream.changed()
            waiting_since = self._clock()
            try:
                await asyncio.wait(
                    (changed, request.superseded),
                    timeout=left,
                    return_when=asyncio.FIRST_COMPLETED,
                )
            finally:
                changed.cancel()
                request.waited += self._clock() - waiting_since

    async def _superseded_within(self, request: _Request, seconds: float) -> bool:
        waiting_since = self._clock()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(request.superseded), seconds)
        request.waited += self._clock() - waiting_since
        return request.superseded.done()

    def _release_later(self, query: CompletionQuery) -> None:
        """A cancelled request's running stream closes after the grace unless adopted."""
        for stream in self._streams.get(query.document, []):
            if stream.finished:
                continue
            claims = stream.claims

            def release(stream: _Stream = stream, claims: int = claims) -> None:
                if stream.claims == claims:
                    stream.close()

            asyncio.get_running_loop().call_later(self._grace, release)

    # -- cache -----------------------------------------------------------------------------

    @staticmethod
    def _key(query: CompletionQuery) -> tuple[str, int, int]:
        return (
            query.document,
            hash(query.prefix[-PREFIX_KEY:]),
            hash(query.suffix[:SUFFIX_KEY]),
        )

    def _store(self, query: CompletionQuery, text: str) -> None:
        key = self._key(query)
        self._cache[key] = text
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
