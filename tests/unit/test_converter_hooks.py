"""The converter's code for messages: made once per message type, kept, and made ahead by the
warm-up for what a job and typing exchange (``lsp/protocol._keep_hooks``, ``lsp/warm_messages``).

cattrs writes and compiles a function per message type on first use and keeps it only in a cache
it clears whenever it makes a hook for a new list type: without the fix, every type met so far
was compiled again at its next use.
"""

from __future__ import annotations

import linecache
from typing import Any

from lsprotocol import types

from fastedit_lsp.lsp import warm_messages
from fastedit_lsp.lsp.server import FasteditServer, register_all


def _server() -> FasteditServer:
    server = FasteditServer()
    register_all(server)
    server.config.reload()
    return server


def _generated() -> int:
    """How many functions cattrs has generated so far (it files each one's source here)."""
    return sum(1 for name in linecache.cache if "cattrs generated" in name or "<cattrs" in name)


DID_CHANGE = {
    "jsonrpc": "2.0",
    "method": types.TEXT_DOCUMENT_DID_CHANGE,
    "params": {
        "textDocument": {"uri": "file:///a.py", "version": 2},
        "contentChanges": [
            {
                "range": {
                    "start": {"line": 0, "character": 0},
                    "end": {"line": 0, "character": 0},
                },
                "text": "x",
            }
        ],
    },
}


def test_a_message_types_code_survives_cattrs_clearing_its_cache() -> None:
    server = _server()
    converter: Any = server.protocol._converter
    start = types.Position(line=0, character=0)
    edit = types.TextEdit(range=types.Range(start=start, end=start), new_text="x")
    request = types.ApplyWorkspaceEditRequest(
        id="1",
        params=types.ApplyWorkspaceEditParams(edit=types.WorkspaceEdit(changes={"u": [edit]})),
    )
    converter.unstructure(request)
    hook = converter.get_unstructure_hook(types.ApplyWorkspaceEditRequest)
    made = _generated()
    # Writing a sequence type for the first time makes cattrs register a hook for it, which
    # clears its cache of every other type's hook.
    converter.unstructure((start,), tuple[types.Position, ...])
    converter.unstructure(request)
    assert converter.get_unstructure_hook(types.ApplyWorkspaceEditRequest) is hook
    assert _generated() == made  # nothing compiled again


def test_after_the_warm_up_a_jobs_and_typings_messages_make_no_code() -> None:
    server = _server()
    for message in warm_messages.JOB:
        warm_messages.exchange(server.protocol, message)
    warm_messages.exchange_progress(server.protocol)
    later = warm_messages.TYPING + warm_messages.LATER
    pending = warm_messages.classes(server.protocol, later)
    assert types.CompletionItem in pending
    # Held classes come before the classes that hold them.
    assert pending.index(types.TextEdit) < pending.index(types.WorkspaceEdit)
    slices = 0
    while pending:
        warm_messages.make_code(server.protocol, pending, 0.002)
        slices += 1
    assert slices > 1  # made in slices, not all at once
    messages = warm_messages.JOB + later
    protocol = server.protocol
    converter: Any = protocol._converter
    made = _generated()
    for method, params, result in messages:
        sample: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        answer = protocol.get_result_type(method)
        if answer is not None:
            sample["id"] = "1"
        message = protocol.structure_message(sample)
        converter.unstructure(message)
        if answer is not None:
            reply = converter.structure({"jsonrpc": "2.0", "id": "1", "result": result}, answer)
            converter.unstructure(reply)
    for value in warm_messages.PROGRESS:
        converter.unstructure(types.ProgressParams(token="t", value=value))
    assert _generated() == made
