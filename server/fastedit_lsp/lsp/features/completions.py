"""textDocument/inlineCompletion and textDocument/completion: AI suggestions at the cursor.

Both come from the fast profile, or from the offline prompt-lookup engine when the fast profile has
no model (or when the document is excluded from prompts, or the model fails). A client that
declares inline completion support (VS Code, Neovim 0.12) gets ghost text and no AI completion
items, so it never shows the same suggestion twice; other clients (Neovim 0.11, Emacs) get one
completion item marked as an AI suggestion, with the full text as its documentation and
``isIncomplete`` set so that typing asks again (answered from the typed-ahead stream or cache).

Where the text comes from and the latency rules (cancel-previous, debounce, cache, typed-ahead
reuse, deadline) live in ``completion/``; this module turns requests into completion requests
and answers into LSP items.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ...core.document import Point
from ...core.jobs import JobRegistry
from ..client import ClientChannel
from ..config import Config
from ..documents import DocumentStore

if TYPE_CHECKING:
    # The completion modules (and the backends) load at the first completion, not at start-up.
    from ...backends.factory import Backends
    from ...completion.engine import Suggestion
    from ...completion.source import CompletionRequest, CompletionSources
    from ...settings import ResolvedProfile
    from ..next_edits import NextEdits

#: A completion item's label shows at most this much of the suggestion's first line.
LABEL_CHARS = 60
_WORD = re.compile(r"[\w$]*$")


def register(
    server: LanguageServer,
    *,
    completions: Callable[[], CompletionSources],
    next_edits: Callable[[], NextEdits],
    documents: DocumentStore,
    jobs: JobRegistry,
    config: Config,
    client: ClientChannel,
    backends: Callable[[], Backends],
) -> None:
    """``completions``, ``next_edits`` and ``backends`` are made on first use (their modules
    load after the initialize reply)."""

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: LanguageServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        """textDocument/inlineCompletion: ghost text at the cursor."""
        started = time.perf_counter()
        uri = params.text_document.uri
        ticket = completions().arrive(uri)
        if (item := await _next_edit_item(documents, next_edits, params)) is not None:
            return types.InlineCompletionList(items=[item])
        if completions().overtaken(uri, ticket):
            # Typing went on while this request waited for git: the newer request answers.
            return types.InlineCompletionList(items=[])
        automatic = params.context.trigger_kind == types.InlineCompletionTriggerKind.Automatic
        request = _resolve(config, documents, jobs, uri, params.position, automatic)
        if request is None:
            return None
        profile = config.profile("fast", announce=False)
        suggestion = await completions().suggest(request, profile, config.resolved.settings)
        if suggestion is None or not suggestion.text:
            _nothing_offline(config, profile)
            return types.InlineCompletionList(items=[])
        here = params.position
        answer = types.InlineCompletionList(
            items=[
                types.InlineCompletionItem(
                    insert_text=suggestion.text, range=types.Range(start=here, end=here)
                )
            ]
        )
        completions().record_time(suggestion, time.perf_counter() - started)
        return answer

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(resolve_provider=False))
    async def completion(
        ls: LanguageServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        """textDocument/completion: one AI suggestion item, for clients without ghost text."""
        started = time.perf_counter()
        if client.supports("text_document.inline_completion"):
            return None  # the same suggestion arrives as ghost text
        kind = params.context.trigger_kind if params.context else None
        automatic = kind != types.CompletionTriggerKind.Invoked
        request = _resolve(
            config, documents, jobs, params.text_document.uri, params.position, automatic
        )
        if request is None:
            return None
        # Never hold the other servers' items long (rassumfrassum waits for every server), and
        # offer only whole suggestions: the stream goes on, and the next keystroke asks again.
        settings = config.resolved.settings
        profile = config.profile("fast", announce=False)
        suggestion = await completions().suggest(
            request, profile, settings, wait_ms=settings.completion_items_wait_ms
        )
        if suggestion is None or not suggestion.text:
            _nothing_offline(config, profile)
        if suggestion is None or not suggestion.text or suggestion.partial:
            return types.CompletionList(is_incomplete=True, items=[])
        item = _item(
            request,
            suggestion,
            params.position,
            model=_model_name(config, backends),
            snippets=client.supports("text_document.completion.completion_item.snippet_support"),
        )
        answer = types.CompletionList(is_incomplete=True, items=[item])
        completions().record_time(suggestion, time.perf_counter() - started)
        return answer


#: Said once, the first time the offline engine has no completion.
OFFLINE_ONLY_CONTINUES = (
    "fastedit: no model configured: offline, completions only continue code already in your open "
    "files (configure a model for more: fastedit-lsp doctor)"
)


def _nothing_offline(config: Config, profile: ResolvedProfile) -> None:
    """The offline engine had nothing: say once what it can do (it only repeats what followed
    the same text earlier in the open documents)."""
    if profile.is_local:
        config.tell_once("offline completion", OFFLINE_ONLY_CONTINUES)


async def _next_edit_item(
    documents: DocumentStore,
    next_edits: Callable[[], NextEdits],
    params: types.InlineCompletionParams,
) -> types.InlineCompletionItem | None:
    """A next-edit suggestion that VS Code's stable API can show as ghost text (on the cursor's
    line, its range holding the cursor, the replaced text a prefix of the new)."""
    here, uri = params.position, params.text_document.uri
    if documents.git_pending(uri):
        await documents.excluded_checked(uri)
    found = next_edits().inline_item(params.text_document.uri, here.line, here.character)
    if found is None:
        return None
    offer, text, start = found
    document = documents.get(offer.uri)
    assert document is not None
    line, character = document.to_client(start)
    begin = types.Position(line=line, character=character)
    end_line, end_char = document.to_client(offer.prediction.end)
    return types.InlineCompletionItem(
        insert_text=text,
        range=types.Range(start=begin, end=types.Position(line=end_line, character=end_char)),
        command=types.Command(
            title="Accept next edit", command="fastedit.acceptNextEdit", arguments=[offer.id]
        ),
    )


def _resolve(
    config: Config,
    documents: DocumentStore,
    jobs: JobRegistry,
    uri: str,
    position: types.Position,
    automatic: bool,
) -> CompletionRequest | None:
    if not config.resolved.settings.completion_enabled:
        return None
    document = documents.get(uri)
    if document is None:
        return None
    if automatic and jobs.running(uri):
        # A job is streaming into this document: its own edits are not the user's typing.
        return None
    cursor = document.to_point(position.line, position.character)
    from ...completion.source import CompletionRequest

    return CompletionRequest(uri, document, cursor, automatic)


def _item(
    request: CompletionRequest,
    suggestion: Suggestion,
    position: types.Position,
    *,
    model: str,
    snippets: bool,
) -> types.CompletionItem:
    """``model``: the name the item shows; ``snippets``: the client takes snippet items."""
    document, cursor = request.document, request.cursor
    word = _WORD.search(document.line(cursor.line)[: cursor.col])
    typed = word.group() if word else ""
    start_line, start_char = document.to_client(Point(cursor.line, cursor.col - len(typed)))
    first = suggestion.text.split("\n", 1)[0].rstrip("\r")
    label = typed + first if first.strip() else typed + suggestion.text.strip().split("\n")[0]
    if len(label) > LABEL_CHARS:
        label = label[: LABEL_CHARS - 1] + "…"
    fence = "`" * max(3, _longest_backtick_run(suggestion.text) + 1)
    new_text = typed + suggestion.text
    text_format = types.InsertTextFormat.PlainText
    if snippets:
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


def _model_name(config: Config, backends: Callable[[], Backends]) -> str:
    profile = config.profile("fast", announce=False)
    if profile.is_local:
        return "offline"
    return backends().model_of(profile) or profile.provider


def _longest_backtick_run(text: str) -> int:
    runs = re.findall(r"`+", text)
    return max((len(r) for r in runs), default=0)
