"""Where completion text comes from: the fast model (FIM or chat), or the offline lookup engine.

Pure asyncio: no pygls, no httpx. The language server's completion feature turns a request into
a :class:`CompletionRequest`; :meth:`CompletionSources.suggest` answers it through the latency
rules of :class:`~fastedit_lsp.completion.engine.CompletionEngine` (cancel-previous, debounce,
cache, typed-ahead reuse, deadline), opening a model stream or the offline engine as the profile
says. A document that ``context.exclude`` matches never reaches a model; a model that fails
before saying anything hands over to the offline engine. State kept across requests: the engine,
the other documents indexed as context (once per version), failures already logged, and what
each completion cost the server.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..backends.base import BackendError, ChatRequest, StreamInfo
from ..core.document import Document, Point
from ..core.timings import percentile
from ..core.uris import to_fs_path

if TYPE_CHECKING:
    from ..backends.fim import FimKind, FimRequest
    from ..settings import ResolvedProfile, Settings
    from . import budget
    from .engine import CompletionEngine, CompletionQuery, Opener, Suggestion
    from .snippets import OpenDocument

#: What the cache and typed-ahead reuse compare, and the post-processing looks at (characters).
QUERY_PREFIX_CHARS = 4096
QUERY_SUFFIX_CHARS = 2048
#: The offline engine proposes at most this much.
OFFLINE_MAX_CHARS = 400
#: Recent completions' server times kept per source.
TIMES_KEPT = 1000


#: Seconds a completion's model stream may finish after its line is complete (``linger``).
COMPLETION_LINGER = 0.05


class CompletionBackend(Protocol):
    """A model backend as completions use it: chat and fill-in-the-middle streams."""

    def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncGenerator[str, None]: ...

    def fim_stream(
        self, request: FimRequest, kind: FimKind, info: StreamInfo
    ) -> AsyncGenerator[str, None]: ...


class CompletionModels(Protocol):
    """The backend factory as completions see it."""

    async def backend(self, profile: ResolvedProfile) -> CompletionBackend: ...

    def model_of(self, profile: ResolvedProfile) -> str | None: ...


@dataclass(frozen=True)
class CompletionRequest:
    """A completion request resolved against the server's copy of the document."""

    uri: str
    document: Document
    cursor: Point
    automatic: bool


class CompletionSources:
    """Answers completion requests; keeps what outlives one request."""

    def __init__(
        self,
        *,
        documents: Callable[[], Iterable[tuple[str, Document]]],
        excluded: Callable[[str], str | None],
        excluded_checked: Callable[[str], Awaitable[str | None]],
        models: CompletionModels,
        log: Callable[[str], None],
    ) -> None:
        self._documents = documents
        self._excluded = excluded
        self._excluded_checked = excluded_checked
        self._models = models
        self._log = log
        self._engine: CompletionEngine | None = None
        #: Other open documents as completion context, per URI: (version, indexed document).
        self._context_documents: dict[str, tuple[int, OpenDocument]] = {}
        #: Completion failures already logged (completions fire on every keystroke).
        self._errors: set[str] = set()
        #: Recent completions' server time (ms, the model's and the debounce's excluded).
        self._times: dict[str, deque[float]] = {}
        #: The server time of the session's first completion (it loads modules), in ms.
        self._first_ms: float | None = None
        #: Requests arrived per document: a request that waited before reaching the engine
        #: knows whether a newer one overtook it (see :meth:`arrive`).
        self._arrivals: dict[str, int] = {}

    @property
    def engine(self) -> CompletionEngine:
        """The latency rules' state (created at the first request)."""
        if self._engine is None:
            from .engine import CompletionEngine

            self._engine = CompletionEngine(finish=_finish, has_enough=_ends)
        return self._engine

    def arrive(self, uri: str) -> int:
        """A request for ``uri`` arrived: its ticket, for :meth:`overtaken`.

        The engine supersedes by arrival order, so a request must not wait before it reaches
        the engine. One that has to (ghost text waits for git's answer before it may offer a
        next edit) takes a ticket on arrival and, once done waiting, asks whether a newer
        request came in meanwhile: that one is the typing's answer, and may already be past
        the engine, where the older request would otherwise supersede it.
        """
        ticket = self._arrivals[uri] = self._arrivals.get(uri, 0) + 1
        return ticket

    def overtaken(self, uri: str, ticket: int) -> bool:
        """Whether a request for ``uri`` arrived after the one holding ``ticket``."""
        return self._arrivals.get(uri, 0) != ticket

    async def suggest(
        self,
        request: CompletionRequest,
        profile: ResolvedProfile,
        settings: Settings,
        *,
        wait_ms: int | None = None,
    ) -> Suggestion | None:
        """The suggestion at the request's cursor; answered after ``wait_ms`` at most, if given."""
        from .engine import CompletionQuery

        deadline_ms = settings.completion_deadline_ms
        if wait_ms is not None:
            deadline_ms = min(deadline_ms, wait_ms)
        document, cursor = request.document, request.cursor
        query = CompletionQuery(
            request.uri,
            _text_before(document, cursor, QUERY_PREFIX_CHARS),
            _text_after(document, cursor, QUERY_SUFFIX_CHARS),
            document.language_id,
            request.automatic,
        )
        snapshot = document.copy()
        # No await before the engine sees the request: requests must reach it in arrival order
        # (cancel-previous supersedes by arrival). Whether git ignores the file is awaited, if
        # it is still pending, by the model stream itself.
        if profile.is_local:
            opener = self._offline_opener(snapshot, cursor)
        else:
            opener = self._model_opener(profile, settings, snapshot, cursor)
        suggestion = await self.engine.complete(
            query,
            opener,
            debounce=settings.completion_debounce_ms / 1000,
            deadline=deadline_ms / 1000,
        )
        if suggestion is not None and suggestion.error is not None:
            self._report_once(suggestion.error)
        return suggestion

    def forget(self, uri: str) -> None:
        """A document closed: drop what is kept for it."""
        if self._engine is not None:
            self._engine.forget(uri)
        self._context_documents.pop(uri, None)
        self._arrivals.pop(uri, None)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()

    # -- what a completion costs the server --------------------------------------------------------

    def record_time(self, suggestion: Suggestion, seconds: float) -> None:
        """Keep what a completion cost the server itself, for ``fastedit.status``."""
        spent = max(0.0, seconds - suggestion.waited) * 1000
        if self._first_ms is None:
            # The session's first completion loads the completion and HTTP modules: kept apart
            # so that the percentiles describe every later keystroke.
            self._first_ms = spent
            return
        times = self._times.setdefault(suggestion.source, deque(maxlen=TIMES_KEPT))
        times.append(spent)

    def report(self) -> dict[str, Any]:
        """Counters and server-time percentiles of completions (``fastedit.status``)."""
        added = {}
        for source, samples in self._times.items():
            ordered = sorted(samples)
            added[source] = {
                "count": len(ordered),
                "p50": percentile(ordered, 50, digits=3),
                "p99": percentile(ordered, 99, digits=3),
            }
        first = None if self._first_ms is None else round(self._first_ms, 3)
        return {**self.engine.stats.as_dict(), "serverMs": added, "firstServerMs": first}

    # -- the offline engine ----------------------------------------------------------------------

    def _offline_opener(self, document: Document, cursor: Point) -> Opener:
        def open_stream(query: CompletionQuery) -> AsyncIterator[str]:
            return _once(self._lookup(document, cursor))

        return open_stream

    def _lookup(self, document: Document, cursor: Point) -> str | None:
        from ..engines import lookup

        prefix = document.get_text(Point(0, 0), cursor)
        suffix = document.get_text(cursor, document.end)
        others = [
            d.text
            for uri, d in self._documents()
            if uri != document.uri and d.language_id == document.language_id
        ]
        proposal = lookup.complete(prefix, suffix, others, max_chars=OFFLINE_MAX_CHARS)
        if proposal is None:
            return None
        from ..engines.languages import language_of
        from ..engines.names import draft_resolves

        # Not offered when a name it reads resolves nowhere here (a line from another document
        # using a variable this one does not declare).
        if not draft_resolves(language_of(document.language_id), prefix, proposal, suffix):
            return None
        return proposal

    # -- the model ---------------------------------------------------------------------------------

    def _model_opener(
        self, profile: ResolvedProfile, settings: Settings, document: Document, cursor: Point
    ) -> Opener:
        def open_stream(query: CompletionQuery) -> AsyncIterator[str]:
            from . import budget

            others = [
                self._context_document(uri, d)
                for uri, d in self._documents()
                if uri != document.uri and self._excluded(uri) is None
            ]
            context = budget.build(
                document,
                cursor,
                path=to_fs_path(document.uri) or document.uri,
                others=others,
                budget_tokens=settings.completion_budget_tokens,
                exclude=settings.context.exclude,
                model=self._models.model_of(profile),
            )
            return self._model_stream(profile, settings, document, cursor, context, query)

        return open_stream

    async def _model_stream(
        self,
        profile: ResolvedProfile,
        settings: Settings,
        document: Document,
        cursor: Point,
        context: budget.CompletionContext,
        query: CompletionQuery,
    ) -> AsyncIterator[str]:
        if await self._excluded_checked(document.uri) is not None:
            # An excluded document never goes to a model; the offline engine reads it locally.
            if text := self._lookup(document, cursor):
                yield text
            return
        yielded = False
        try:
            backend = await self._models.backend(profile)
            async with aclosing(_model_text(backend, profile, settings, context, query)) as deltas:
                async for delta in deltas:
                    yielded = True
                    yield delta
        except BackendError as error:
            if yielded:
                raise
            # The model failed before saying anything: the offline engine may still know.
            self._report_once(error)
            if text := self._lookup(document, cursor):
                yield text

    def _context_document(self, uri: str, document: Document) -> OpenDocument:
        """One ``OpenDocument`` per document version: it indexes itself once, on first use."""
        from .snippets import OpenDocument

        cached = self._context_documents.get(uri)
        if cached is not None and cached[0] == document.version:
            return cached[1]
        fresh = OpenDocument(to_fs_path(uri) or uri, document.text, document.language_id)
        self._context_documents[uri] = (document.version, fresh)
        return fresh

    def _report_once(self, error: BaseException) -> None:
        """Log a completion failure once per distinct message (completions fire per keystroke)."""
        message = str(error)
        if message in self._errors:
            return
        self._errors.add(message)
        self._log(f"completion: {message}")


async def _model_text(
    backend: CompletionBackend,
    profile: ResolvedProfile,
    settings: Settings,
    context: budget.CompletionContext,
    query: CompletionQuery,
) -> AsyncGenerator[str, None]:
    from ..backends.fim import FimRequest
    from ..prompting.prompts import fim_chat_messages
    from ..prompting.reconcile import Reconciler, Target
    from . import cut as completion_text

    own = profile.settings
    # Cerebras reserves max_tokens against the rate limit up front: keep it tight.
    max_tokens = min(settings.completion_max_tokens, own.max_tokens)
    scope = completion_text.completion_scope(query.prefix, query.suffix, query.language_id)
    # Closed early once the line is complete (after the answer went out): let an answer that is
    # about done finish, to keep the connection for the next keystroke's completion.
    info = StreamInfo(linger=COMPLETION_LINGER)
    snippets = tuple((s.path, s.text) for s in context.snippets)
    # The answer reconciled with the text around the cursor (docs/answers.md): a chat model's
    # wrappers, and any model's repeats of the text before or after the cursor, never shown.
    target = Target(query.prefix, query.suffix, language_id=query.language_id)
    dialect = profile.fim  # the profile's fim, else its provider's dialect
    if dialect == "chat":
        # No stop sequence: a chat model may open with a fence line, which the filter drops;
        # the engine closes the stream at the cut point instead.
        messages = fim_chat_messages(
            context.prefix,
            context.suffix,
            path=context.path,
            language_id=context.language_id,
            snippets=snippets,
        )
        request = ChatRequest(messages, max_tokens=max_tokens, temperature=own.temperature)
        chat_answer = Reconciler(target)
        async with aclosing(backend.stream(request, info)) as chat:
            async for delta in chat:
                if text := chat_answer.feed(delta):
                    yield text
        if tail := chat_answer.finish():
            yield tail
        return
    fim = FimRequest(
        prefix=context.prefix,
        suffix=context.suffix,
        max_tokens=max_tokens,
        temperature=own.temperature,
        stop=completion_text.stop_sequences(scope),
        snippets=snippets,
        path=context.path,
        language_id=context.language_id,
    )
    fim_answer = Reconciler(target, unwrap=False)  # a FIM model answers bare code
    async with aclosing(backend.fim_stream(fim, dialect, info)) as deltas:
        async for delta in deltas:
            if text := fim_answer.feed(delta):
                yield text
    if tail := fim_answer.finish():
        yield tail


async def _once(text: str | None) -> AsyncIterator[str]:
    if text:
        yield text


def _finish(text: str, query: CompletionQuery) -> str:
    from . import cut as completion_text

    return completion_text.finish(text, query.prefix, query.suffix, query.language_id)


def _ends(text: str, query: CompletionQuery) -> bool:
    from . import cut as completion_text

    return completion_text.has_enough(text, query.prefix, query.suffix, query.language_id)


def _text_before(document: Document, cursor: Point, limit: int) -> str:
    parts = [document.line(cursor.line)[: cursor.col]]
    size = len(parts[0])
    line = cursor.line - 1
    while line >= 0 and size < limit:
        text = document.get_text(Point(line, 0), Point(line + 1, 0))
        parts.append(text)
        size += len(text)
        line -= 1
    return "".join(reversed(parts))[-limit:]


def _text_after(document: Document, cursor: Point, limit: int) -> str:
    end = document.end
    parts = [document.get_text(cursor, min(end, Point(cursor.line + 1, 0)))]
    size = len(parts[0])
    line = cursor.line + 1
    while line <= end.line and size < limit:
        text = document.get_text(Point(line, 0), min(end, Point(line + 1, 0)))
        parts.append(text)
        size += len(text)
        line += 1
    return "".join(parts)[:limit]
