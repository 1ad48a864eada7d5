"""The warm-up's messages: the converter code for what a job and typing exchange, made ahead.

lsprotocol's converter (cattrs) writes and compiles a function for each message type the first
time one is read or sent: 0.2–3 ms each (``ApplyWorkspaceEditParams`` 2.8 ms, a ``didChange``
2.5 ms; 62 ms for all below). The first job of a session paid them on its way to its first edit
(the command, the progress, the edit, the editor's reply), and the first keystrokes theirs. The
warm-up reads and writes a sample of each message a job exchanges before its first edit, one
message per step of its worker thread (a request arriving meanwhile waits for one step), right
after the modules a job needs, and compiles the ``context.exclude`` patterns (the first job's
check compiled 27). Once the session is quiet, it makes the code for every class typing's
messages and a job's later ones could hold, in 2 ms slices.
"""

from __future__ import annotations

import time
import typing
from typing import TYPE_CHECKING, Any

import attrs
from lsprotocol import types

if TYPE_CHECKING:
    from cattrs import Converter
    from pygls.protocol import LanguageServerProtocol

    from .config import Config


def _converter(protocol: LanguageServerProtocol) -> Converter:
    """pygls' converter, as the pygls fixes expose it (``FasteditProtocol.converter``)."""
    converter: Converter = getattr(protocol, "converter")  # noqa: B009 (no import cycle)
    return converter


_URI = "file:///fastedit-warm-up.py"
_RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
_EDIT = {"range": _RANGE, "newText": "x"}
_POSITION = {"textDocument": {"uri": _URI}, "position": {"line": 0, "character": 0}}

#: One message: its method, its params and, for a request, the answer.
Message = tuple[str, Any, Any]

#: What a job exchanges with the editor on its way to its first edit.
JOB: tuple[Message, ...] = (
    (
        types.WORKSPACE_EXECUTE_COMMAND,
        {"command": "fastedit.completeRest", "arguments": [{"uri": _URI}]},
        {"jobId": "1"},
    ),
    (
        types.TEXT_DOCUMENT_DID_OPEN,
        {"textDocument": {"uri": _URI, "languageId": "python", "version": 1, "text": "x"}},
        None,
    ),
    (types.WINDOW_WORK_DONE_PROGRESS_CREATE, {"token": "w"}, None),
    (types.PROGRESS, {"token": "w", "value": {"kind": "begin", "title": "x"}}, None),
    (types.WORKSPACE_APPLY_EDIT, {"edit": {"changes": {_URI: [_EDIT]}}}, {"applied": True}),
)

#: What typing exchanges: the document's changes and the requests each keystroke makes.
TYPING: tuple[Message, ...] = (
    (
        types.TEXT_DOCUMENT_DID_CHANGE,
        {
            "textDocument": {"uri": _URI, "version": 2},
            "contentChanges": [{"range": _RANGE, "text": "x"}, {"text": "x"}],
        },
        None,
    ),
    (types.TEXT_DOCUMENT_DID_SAVE, {"textDocument": {"uri": _URI}}, None),
    (types.TEXT_DOCUMENT_DID_CLOSE, {"textDocument": {"uri": _URI}}, None),
    (
        types.TEXT_DOCUMENT_INLINE_COMPLETION,
        {**_POSITION, "context": {"triggerKind": 2}},
        {"items": [{"insertText": "x", "range": _RANGE}]},
    ),
    (
        types.TEXT_DOCUMENT_COMPLETION,
        {**_POSITION, "context": {"triggerKind": 1}},
        {"isIncomplete": True, "items": [{"label": "x", "textEdit": _EDIT}]},
    ),
    (
        types.TEXT_DOCUMENT_CODE_ACTION,
        {
            "textDocument": {"uri": _URI},
            "range": _RANGE,
            "context": {"diagnostics": [], "triggerKind": 2},
        },
        [{"title": "x", "command": {"title": "x", "command": "fastedit.completeRest"}}],
    ),
)

#: What a job sends later (a deleting edit, diagnostics, messages to the user).
LATER: tuple[Message, ...] = (
    (
        types.WORKSPACE_APPLY_EDIT,
        {
            "edit": {
                "documentChanges": [{"textDocument": {"uri": _URI, "version": 1}, "edits": [_EDIT]}]
            }
        },
        {"applied": True},
    ),
    (
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        {"uri": _URI, "diagnostics": [{"range": _RANGE, "message": "x", "severity": 2}]},
        None,
    ),
    (types.WINDOW_LOG_MESSAGE, {"type": 4, "message": "x"}, None),
    (types.WINDOW_SHOW_MESSAGE, {"type": 3, "message": "x"}, None),
)

#: ``$/progress`` values: sent as objects, the converter picks their code by their class.
PROGRESS = (
    types.WorkDoneProgressBegin(title="x", cancellable=True, message="x", percentage=0),
    types.WorkDoneProgressReport(message="x", percentage=1),
    types.WorkDoneProgressEnd(message="x"),
)


def exchange(protocol: LanguageServerProtocol, message: Message) -> None:
    """Read and write a sample of ``message`` and of its answer: the code for exactly the
    classes they hold (the job's messages, before its first edit: 17 ms for all, against
    39 ms for every class they could hold)."""
    method, params, result = message
    converter = _converter(protocol)
    answer = protocol.get_result_type(method)
    sample: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if answer is not None:
        sample["id"] = "warm-up"
    converter.unstructure(protocol.structure_message(sample))
    if answer is not None:
        reply = {"jsonrpc": "2.0", "id": "warm-up", "result": result}
        converter.unstructure(converter.structure(reply, answer))


def exchange_progress(protocol: LanguageServerProtocol) -> None:
    """Write each kind of ``$/progress`` value."""
    converter = _converter(protocol)
    for value in PROGRESS:
        converter.unstructure(types.ProgressParams(token="w", value=value))


def classes(protocol: LanguageServerProtocol, messages: tuple[Message, ...]) -> list[type]:
    """The message classes of ``messages`` and their answers, and every class they hold, each
    after the classes it holds (so that making its code finds theirs made)."""
    found: list[type] = []
    seen: set[type] = set()

    def visit(kind: Any) -> None:
        for arg in typing.get_args(kind):
            visit(arg)
        if isinstance(kind, type) and attrs.has(kind) and kind not in seen:
            seen.add(kind)
            attrs.resolve_types(kind)
            for field in attrs.fields(kind):
                visit(field.type)
            found.append(kind)

    for method, _, _ in messages:
        visit(protocol.get_message_type(method))
        visit(protocol.get_result_type(method))
    for value in PROGRESS:
        visit(type(value))
    return found


def make_code(protocol: LanguageServerProtocol, pending: list[type], seconds: float) -> None:
    """Make the converter's code for the classes ``pending`` lists, first to last, removing
    each, until ``seconds`` have passed (for the warm-up's thread: one slice at a time, so that
    a message arriving waits for one slice). Every class a message could hold: for the
    messages of a session's later use."""
    converter = _converter(protocol)
    ends = time.perf_counter() + seconds
    while pending and time.perf_counter() < ends:
        kind = pending.pop(0)
        converter.get_structure_hook(kind)
        converter.get_unstructure_hook(kind)


def compile_patterns(config: Config) -> None:
    """Compile the ``context.exclude`` patterns (``fnmatch`` keeps them)."""
    from ..prompting.context import is_excluded
    from ..settings import GIT_IGNORED

    patterns = config.resolved.settings.context.exclude
    is_excluded("fastedit-warm-up", [p for p in patterns if p != GIT_IGNORED])
