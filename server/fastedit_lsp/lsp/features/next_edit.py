"""Next-edit suggestions over LSP: ``textDocument/copilotInlineEdit`` and
``textDocument/didShowInlineEdit`` in Copilot's wire shape, and the commands ``fastedit.nextEdit``
(what the bundled Neovim and Emacs integrations call: through rassumfrassum only
``executeCommand`` reaches fastedit), ``fastedit.toggleNextEdit``, ``fastedit.acceptNextEdit``
and ``fastedit.dismissNextEdit``.

The reply is ``{edits: [{text, range, textDocument: {uri, version}, command}]}``: alternatives,
not a sequence; ``command`` is what the client runs after applying the edit (Copilot's shape:
``arguments`` is ``[id]``). A newer request for the same document cancels the older one on the
server (pygls 2.1.1 does not stop a command on ``$/cancelRequest``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from ..documents import DocumentStore
from ..next_edits import ACCEPT, DISMISS, NextEdits

COPILOT_INLINE_EDIT = "textDocument/copilotInlineEdit"
#: How long a prefetch waits for the editor to report an accepted edit.
PREFETCH_WAIT = 2.0
DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit"


def _get(params: Any, *path: str) -> Any:
    node = params
    for name in path:
        node = node.get(name) if isinstance(node, dict) else getattr(node, name, None)
        if node is None:
            return None
    return node


def _offer_id(args: tuple[Any, ...], command: str) -> str:
    """The offer id of an accept/dismiss command: ``[id]`` (Copilot's shape) or ``[{id}]``."""
    value = args[0] if args else None
    if isinstance(value, dict):
        value = value.get("id")
    if not isinstance(value, str) or not value:
        raise JsonRpcInvalidParams(f"{command}: expected the suggestion's id")
    return value


async def _suggest(
    documents: DocumentStore,
    next_edits: NextEdits,
    uri: str,
    version: int | None,
    line: int,
    character: int,
) -> dict[str, Any]:
    if documents.get(uri) is not None and documents.git_pending(uri):
        await documents.excluded_checked(uri)  # once per file: git says if it is ignored
    offers = next_edits.offline(uri, version, line, character)
    document = documents.get(uri)
    if not offers and document is not None and version in (None, document.version):
        offers = await next_edits.from_model(uri, line, character)
    return {"edits": [next_edits.wire(o) for o in offers]}


async def _prefetch(documents: DocumentStore, next_edits: NextEdits, offer_id: str) -> None:
    """After an accepted suggestion, ask the model for the next one as soon as the editor
    reports the accepted edit (the answer waits in the cache for that version)."""
    offer = next_edits.offer_of(offer_id)
    if offer is None or next_edits.model is None:
        return
    document = documents.get(offer.uri)
    if document is None:
        return
    if document.version == offer.version:  # the editor has not reported the edit yet
        try:
            await asyncio.wait_for(documents.next_change(), PREFETCH_WAIT)
        except TimeoutError:
            return
    document = documents.get(offer.uri)
    if document is None or next_edits.model.why_not(offer.uri) is not None:
        return
    end = offer.prediction.start
    line, character = document.to_client(end)
    await next_edits.from_model(offer.uri, line, character, prefetch=True)


def register(
    server: LanguageServer,
    *,
    documents: DocumentStore,
    next_edits: Callable[[], NextEdits],
    use_model: Callable[[], bool],
    spawn: Callable[[Any], asyncio.Task[Any]],
) -> None:
    """``next_edits``: the suggestions' owner, made on first use; ``use_model``: the
    ``nextEdit.useModel`` setting."""

    @server.feature(COPILOT_INLINE_EDIT)
    async def copilot_inline_edit(ls: LanguageServer, params: Any) -> dict[str, Any]:
        """textDocument/copilotInlineEdit {textDocument: {uri, version}, position}: the next
        edit, as Copilot's language server answers it."""
        uri = _get(params, "textDocument", "uri")
        line = _get(params, "position", "line")
        character = _get(params, "position", "character")
        if not isinstance(uri, str) or not isinstance(line, int) or not isinstance(character, int):
            raise JsonRpcInvalidParams(f"{COPILOT_INLINE_EDIT}: expected textDocument and position")
        version = _get(params, "textDocument", "version")
        try:
            known = version if isinstance(version, int) else None
            return await _suggest(documents, next_edits(), uri, known, line, character)
        except asyncio.CancelledError:
            return {"edits": []}  # superseded by a newer request for the document

    @server.feature(DID_SHOW_INLINE_EDIT)
    def did_show_inline_edit(ls: LanguageServer, params: Any) -> None:
        """textDocument/didShowInlineEdit {item: {command: {arguments: [id]}}}: shown."""
        arguments = _get(params, "item", "command", "arguments")
        if isinstance(arguments, list) and arguments and isinstance(arguments[0], str):
            next_edits().report(arguments[0], "shown")

    @server.command("fastedit.nextEdit")
    async def next_edit(ls: LanguageServer, *args: Any) -> dict[str, Any]:
        """fastedit.nextEdit {uri, position, version?}: ``{edits}`` as copilotInlineEdit."""
        from .command_args import NextEditArgs, parse

        a = parse("fastedit.nextEdit", NextEditArgs, args)
        if documents.get(a.uri) is None:
            raise JsonRpcInvalidParams(f"fastedit.nextEdit: uri: the document is not open: {a.uri}")
        try:
            position = a.position
            answer = await _suggest(
                documents, next_edits(), a.uri, a.version, position.line, position.character
            )
        except asyncio.CancelledError:
            return {"edits": []}
        for edit in answer["edits"]:
            # The bundled integrations show every edit they get.
            next_edits().report(edit["command"]["arguments"][0], "shown")
        return answer

    @server.command("fastedit.toggleNextEdit")
    async def toggle_next_edit(ls: LanguageServer, *args: Any) -> dict[str, bool]:
        """fastedit.toggleNextEdit: turn next-edit suggestions off or on."""
        from .command_args import Args, parse

        parse("fastedit.toggleNextEdit", Args, args)
        return {"enabled": next_edits().toggle()}

    @server.command(ACCEPT)
    async def accept_next_edit(ls: LanguageServer, *args: Any) -> dict[str, bool]:
        """fastedit.acceptNextEdit [id]: the client applied the suggestion (it counts)."""
        offer_id = _offer_id(args, ACCEPT)
        known = next_edits().report(offer_id, "accepted")
        if known and use_model():
            spawn(_prefetch(documents, next_edits(), offer_id))
        return {"known": known}

    @server.command(DISMISS)
    async def dismiss_next_edit(ls: LanguageServer, *args: Any) -> dict[str, bool]:
        """fastedit.dismissNextEdit [id]: the user dismissed the suggestion (it counts)."""
        return {"known": next_edits().report(_offer_id(args, DISMISS), "dismissed")}
