"""textDocument/inlineCompletion and textDocument/completion: AI suggestions at the cursor.

Both come from the fast profile, or from the offline prompt-lookup engine when the fast profile has
no model (or when the document is excluded from prompts, or the model fails). A client that
declares inline completion support (VS Code, Neovim 0.12) gets ghost text and no AI completion
items, so it never shows the same suggestion twice; other clients (Neovim 0.11, Emacs) get one
completion item marked as an AI suggestion, with the full text as its documentation and
``isIncomplete`` set so that typing asks again (answered from the typed-ahead stream or cache).

The latency rules (cancel-previous, debounce, cache, typed-ahead reuse, deadline) live in
``completions.py``; this module turns requests into queries and opens the model stream.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from ...core.document import Document, Point

# Imported at run time: pygls reads the handlers' annotations.
from ..server import FasteditServer

if TYPE_CHECKING:
    # The completion modules load at the first completion, not at start-up.
    from ...backends.openai import OpenAICompatibleBackend
    from ...completion import context as completion_context
    from ...completion.engine import CompletionQuery, Opener, Suggestion
    from ...settings import ResolvedProfile

log = logging.getLogger(__name__)

#: What the cache and typed-ahead reuse compare, and the post-processing looks at (characters).
QUERY_PREFIX_CHARS = 4096
QUERY_SUFFIX_CHARS = 2048
#: The offline engine proposes at most this much.
OFFLINE_MAX_CHARS = 400
#: A completion item's label shows at most this much of the suggestion's first line.
LABEL_CHARS = 60
_WORD = re.compile(r"[\w$]*$")


@dataclass(frozen=True)
class _Request:
    """A completion request resolved against the server's copy of the document."""

    uri: str
    document: Document
    cursor: Point
    automatic: bool


def register(server: FasteditServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: FasteditServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        """textDocument/inlineCompletion: ghost text at the cursor."""
        started = time.perf_counter()
        automatic = params.context.trigger_kind == types.InlineCompletionTriggerKind.Automatic
        request = _resolve(ls, params.text_document.uri, params.position, automatic)
        if request is None:
            return None
        suggestion = await _suggest(ls, request)
        if suggestion is None or not suggestion.text:
            return types.InlineCompletionList(items=[])
        here = params.position
        answer = types.InlineCompletionList(
            items=[
                types.InlineCompletionItem(
                    insert_text=suggestion.text, range=types.Range(start=here, end=here)
                )
            ]
        )
        ls.record_completion_time(suggestion, time.perf_counter() - started)
        return answer

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(resolve_provider=False))
    async def completion(
        ls: FasteditServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        """textDocument/completion: one AI suggestion item, for clients without ghost text."""
        started = time.perf_counter()
        if ls.client_supports("text_document.inline_completion"):
            return None  # the same suggestion arrives as ghost text
        kind = params.context.trigger_kind if params.context else None
        automatic = kind != types.CompletionTriggerKind.Invoked
        request = _resolve(ls, params.text_document.uri, params.position, automatic)
        if request is None:
            return None
        # Never hold the other servers' items long (rassumfrassum waits for every server), and
        # offer only whole suggestions: the stream goes on, and the next keystroke asks again.
        wait_ms = ls.resolved.settings.completion_items_wait_ms
        suggestion = await _suggest(ls, request, wait_ms=wait_ms)
        if suggestion is None or not suggestion.text or suggestion.partial:
            return types.CompletionList(is_incomplete=True, items=[])
        answer = types.CompletionList(
            is_incomplete=True, items=[_item(ls, request, suggestion, params.position)]
        )
        ls.record_completion_time(suggestion, time.perf_counter() - started)
        return answer


def _resolve(
    ls: FasteditServer, uri: str, position: types.Position, automatic: bool
) -> _Request | None:
    if not ls.resolved.settings.completion_enabled:
        return None
    document = ls.documents.get(uri)
    if document is None:
        return None
    if automatic and ls.jobs.running(uri):
        # A job is streaming into this document: its own edits are not the user's typing.
        return None
    cursor = document.to_point(position.line, position.character)
    return _Request(uri, document, cursor, automatic)


async def _suggest(
    ls: FasteditServer, request: _Request, *, wait_ms: int | None = None
) -> Suggestion | None:
    """The suggestion at the request's cursor; answered after ``wait_ms`` at most, if given."""
    from ...completion.engine import CompletionQuery

    settings = ls.resolved.settings
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
    profile = ls.profile("fast", announce=False)
    snapshot = document.copy()
    # No await before the engine sees the request: requests must reach it in arrival order
    # (cancel-previous supersedes by arrival). Whether git ignores the file is awaited, if it
    # is still pending, by the model stream itself.
    if profile.is_local:
        opener = _offline_opener(ls, snapshot, cursor)
    else:
        opener = _model_opener(ls, profile, snapshot, cursor)
    suggestion = await ls.completions.complete(
        query,
        opener,
        debounce=settings.completion_debounce_ms / 1000,
        deadline=deadline_ms / 1000,
    )
    if suggestion is not None and suggestion.error is not None:
        _report_once(ls, suggestion.error)
    return suggestion


def _offline_opener(ls: FasteditServer, document: Document, cursor: Point) -> Opener:
    def open_stream(query: CompletionQuery) -> AsyncIterator[str]:
        return _once(_lookup(ls, document, cursor))

    return open_stream


async def _once(text: str | None) -> AsyncIterator[str]:
    if text:
        yield text


def _lookup(ls: FasteditServer, document: Document, cursor: Point) -> str | None:
    from ...engines import lookup

    prefix = document.get_text(Point(0, 0), cursor)
    suffix = document.get_text(cursor, document.end)
    others = [
        d.text
        for uri, d in ls.documents.items()
        if uri != document.uri and d.language_id == document.language_id
    ]
    return lookup.complete(prefix, suffix, others, max_chars=OFFLINE_MAX_CHARS)


def _model_opener(
    ls: FasteditServer, profile: ResolvedProfile, document: Document, cursor: Point
) -> Opener:
    def open_stream(query: CompletionQuery) -> AsyncIterator[str]:
        from ...completion import context as completion_context

        settings = ls.resolved.settings
        others = [
            _context_document(ls, uri, d)
            for uri, d in ls.documents.items()
            if uri != document.uri and ls.excluded(uri) is None
        ]
        context = completion_context.build(
            document,
            cursor,
            path=to_fs_path(document.uri) or document.uri,
            others=others,
            budget_tokens=settings.completion_budget_tokens,
            exclude=settings.context.exclude,
            model=profile.model or ls.discovered_models.get(profile.name),
        )
        return _model_stream(ls, profile, document, cursor, context, query)

    return open_stream


async def _model_stream(
    ls: FasteditServer,
    profile: ResolvedProfile,
    document: Document,
    cursor: Point,
    context: completion_context.CompletionContext,
    query: CompletionQuery,
) -> AsyncIterator[str]:
    from ...backends.base import BackendError
    from ...pipeline.runner import model_backend

    if await ls.excluded_checked(document.uri) is not None:
        # An excluded document never goes to a model; the offline engine reads it locally.
        if text := _lookup(ls, document, cursor):
            yield text
        return
    yielded = False
    try:
        backend = await model_backend(ls, profile)
        async with aclosing(_model_text(ls, backend, profile, context, query)) as deltas:
            async for delta in deltas:
                yielded = True
                yield delta
    except BackendError as error:
        if yielded:
            raise
        # The model failed before saying anything: the offline engine may still know.
        _report_once(ls, error)
        if text := _lookup(ls, document, cursor):
            yield text


async def _model_text(
    ls: FasteditServer,
    backend: OpenAICompatibleBackend,
    profile: ResolvedProfile,
    context: completion_context.CompletionContext,
    query: CompletionQuery,
) -> AsyncGenerator[str, None]:
    from ...backends.base import ChatRequest, StreamInfo
    from ...backends.fim import FimRequest
    from ...completion import text as completion_text
    from ...prompting.filters import FenceFilter
    from ...prompting.prompts import fim_chat_messages

    settings = profile.settings
    scope = completion_text.completion_scope(query.prefix, query.suffix, query.language_id)
    info = StreamInfo()
    snippets = tuple((s.path, s.text) for s in context.snippets)
    if settings.fim == "chat":
        # No stop sequence: a chat model may open with a fence line, which the filter drops;
        # the engine closes the stream at the cut point instead.
        messages = fim_chat_messages(
            context.prefix,
            context.suffix,
            path=context.path,
            language_id=context.language_id,
            snippets=snippets,
        )
        request = ChatRequest(
            messages, max_tokens=_max_tokens(ls, profile), temperature=settings.temperature
        )
        fences = FenceFilter()
        async with aclosing(backend.stream(request, info)) as chat:
            async for delta in chat:
                if text := fences.feed(delta):
                    yield text
        if tail := fences.finish():
            yield tail
        return
    fim = FimRequest(
        prefix=context.prefix,
        suffix=context.suffix,
        max_tokens=_max_tokens(ls, profile),
        temperature=settings.temperature,
        stop=completion_text.stop_sequences(scope),
        snippets=snippets,
        path=context.path,
        language_id=context.language_id,
    )
    async with aclosing(backend.fim_stream(fim, settings.fim, info)) as deltas:
        async for delta in deltas:
            yield delta


def _context_document(
    ls: FasteditServer, uri: str, document: Document
) -> completion_context.OpenDocument:
    """One ``OpenDocument`` per document version: it indexes itself once, on first use."""
    from ...completion import context as completion_context

    cached = ls.context_documents.get(uri)
    if cached is not None and cached[0] == document.version:
        return cached[1]
    fresh = completion_context.OpenDocument(
        to_fs_path(uri) or uri, document.text, document.language_id
    )
    ls.context_documents[uri] = (document.version, fresh)
    return fresh


def _max_tokens(ls: FasteditServer, profile: ResolvedProfile) -> int:
    # Cerebras reserves max_tokens against the rate limit up front: keep it tight.
    return min(ls.resolved.settings.completion_max_tokens, profile.settings.max_tokens)


def _report_once(ls: FasteditServer, error: BaseException) -> None:
    """Log a completion failure once per distinct message (completions fire per keystroke)."""
    message = str(error)
    if message in ls.completion_errors:
        return
    ls.completion_errors.add(message)
    ls.log_message(f"completion: {message}", types.MessageType.Warning)


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


def _item(
    ls: FasteditServer, request: _Request, suggestion: Suggestion, position: types.Position
) -> types.CompletionItem:
    document, cursor = request.document, request.cursor
    word = _WORD.search(document.line(cursor.line)[: cursor.col])
    typed = word.group() if word else ""
    start_line, start_char = document.to_client(Point(cursor.line, cursor.col - len(typed)))
    first = suggestion.text.split("\n", 1)[0].rstrip("\r")
    label = typed + first if first.strip() else typed + suggestion.text.strip().split("\n")[0]
    if len(label) > LABEL_CHARS:
        label = label[: LABEL_CHARS - 1] + "…"
    model = _model_name(ls)
    fence = "`" * max(3, _longest_backtick_run(suggestion.text) + 1)
    new_text = typed + suggestion.text
    text_format = types.InsertTextFormat.PlainText
    if ls.client_supports("text_document.completion.completion_item.snippet_support"):
        # Neovim inserts only the first word of a plain-text item's edit (and nothing more on
        # accepting it); a snippet item is inserted whole. The text is escaped: no placeholders.
        new_text = _snippet_escape(new_text)
        text_format = types.InsertTextFormat.Snippet
    return types.CompletionItem(
        label=label,
        label_details=types.CompletionItemLabelDetails(description=f"AI · {model}"),
        kind=types.CompletionItemKind.Text,
        detail=f"fastedit AI suggestion ({model})",
        documentation=types.MarkupContent(
            kind=types.MarkupKind.Markdown,
            value=f"{fence}{document.language_id}\n{typed}{suggestion.text}\n{fence}",
        ),
        filter_text=typed + first,
        # After the server's ordinary items: an AI guess should not push them down.
        sort_text="~fastedit",
        insert_text_format=text_format,
        text_edit=types.TextEdit(
            range=types.Range(
                start=types.Position(line=start_line, character=start_char), end=position
            ),
            new_text=new_text,
        ),
    )


def _snippet_escape(text: str) -> str:
    """Plain text as an LSP snippet that expands to exactly that text."""
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


def _model_name(ls: FasteditServer) -> str:
    profile = ls.profile("fast", announce=False)
    if profile.is_local:
        return "offline"
    return profile.model or ls.discovered_models.get("fast") or profile.provider


def _longest_backtick_run(text: str) -> int:
    runs = re.findall(r"`+", text)
    return max((len(r) for r in runs), default=0)
