"""Hostile and broken LSP input: the server never crashes, answers every request, logs one line.

Raw bytes go to the real server's stdin (``wire.py``): bodies that are not JSON, messages that
are not JSON-RPC, unknown methods, params of the wrong type, then a hypothesis fuzz over
JSON-RPC messages. Editor-level cases (an editor that never answers ``workspace/applyEdit``,
one that answers ``applied: false``, one that disconnects mid-stream, a 5 MB line, NUL bytes and
lone surrogates) run through the scripted editor against the stub model.
test_bad_input.py pins the -32602 messages of malformed command arguments.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.errors import GOOD, OTHER_URI, TEXT, URI, chat_requests, complete
from tests.support.harness import Editor, hermetic_env
from tests.support.leaks import assert_no_leaks, at_rest
from tests.support.reliability import RECORDER, Recorder
from tests.support.wire import Wire

from .conftest import MakeEditor

DOC = "file:///tmp/fastedit-hostile/a.py"
INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32600, -32601, -32602
ORIGIN = {"line": 0, "character": 0}


@pytest.fixture
async def wire(tmp_path: Path) -> Any:
    server = await Wire.start(hermetic_env(), tmp_path / "server.log", "--log-level", "DEBUG")
    await server.initialize()
    server.open(DOC, TEXT)
    yield server
    assert await server.stop() == 0


def _tracebacks(log: str) -> list[str]:
    return [line for line in log.splitlines() if "Traceback" in line]


async def _status_answers(wire: Wire) -> None:
    reply = await wire.command("fastedit.status")
    assert "result" in reply and reply["result"]["mode"], reply


# (case, what is sent: bytes for a raw body or a message, the error code of the answer or None)
GARBAGE: list[tuple[str, bytes | dict[str, Any], int | None]] = [
    ("a body that is not JSON", b"{this is not json", None),
    ("a body that is not UTF-8", b'{"jsonrpc": "2.0", "method": "\xff\xfe"}', None),
    (
        "a JSON-RPC batch (an array) holding a request for an unknown method",
        b'[{"jsonrpc": "2.0", "id": 900, "method": "x"}]',
        METHOD_NOT_FOUND,
    ),
    ("an empty JSON array body", b"[]", None),
    ("a JSON number body", b"42", None),
    ("a JSON null body", b"null", None),
    (
        "a request without `jsonrpc`",
        {"id": 901, "method": "workspace/executeCommand", "params": {"command": "x"}},
        INVALID_REQUEST,
    ),
    ("a request for an unknown method", {"id": 902, "method": "no/such"}, METHOD_NOT_FOUND),
    ("a notification for an unknown method", {"method": "no/such", "params": [1]}, None),
    (
        "a request whose params have the wrong type",
        {"id": 903, "method": "textDocument/codeAction", "params": "everything"},
        INVALID_PARAMS,
    ),
    (
        "a notification whose params have the wrong type",
        {"method": "textDocument/didOpen", "params": {"textDocument": 5}},
        None,
    ),
    (
        "didChange for a document that was never opened",
        {
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": "file:///nowhere.py", "version": 2},
                "contentChanges": [{"text": "x"}],
            },
        },
        None,
    ),
    (
        "didChange with an old version, a negative position and a range past the end",
        {
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": DOC, "version": -5},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": 99, "character": 99},
                            "end": {"line": 0, "character": 0},
                        },
                        "text": "# appended\n",
                    }
                ],
            },
        },
        None,
    ),
    (
        "codeAction with negative positions and start after end",
        {
            "id": 904,
            "method": "textDocument/codeAction",
            "params": {
                "textDocument": {"uri": DOC},
                "range": {
                    "start": {"line": 3, "character": 2},
                    "end": {"line": -1, "character": -7},
                },
                "context": {"diagnostics": []},
            },
        },
        INVALID_PARAMS,
    ),
    (
        "codeAction with positions past the end of the document",
        {
            "id": 905,
            "method": "textDocument/codeAction",
            "params": {
                "textDocument": {"uri": DOC},
                "range": {
                    "start": {"line": 400, "character": 7},
                    "end": {"line": 9000, "character": 2**31 - 1},
                },
                "context": {"diagnostics": []},
            },
        },
        0,  # a result
    ),
    (
        "codeAction for a URI that is not open and not file:",
        {
            "id": 906,
            "method": "textDocument/codeAction",
            "params": {
                "textDocument": {"uri": "untitled:Untitled-1"},
                "range": {
                    "start": {"line": 0, "character": 0},
                    "end": {"line": 0, "character": 0},
                },
                "context": {"diagnostics": []},
            },
        },
        0,
    ),
    (
        "a string request id",
        {
            "jsonrpc": "2.0",
            "id": "abc",
            "method": "workspace/executeCommand",
            "params": {"command": "fastedit.status"},
        },
        0,
    ),
    (
        "a request id beyond 64 bits (answered with the same id)",
        {
            "id": 123456789012345678901234567890,
            "method": "workspace/executeCommand",
            "params": {"command": "fastedit.status"},
        },
        0,
    ),
    (
        "$/cancelRequest for an id never sent",
        {"method": "$/cancelRequest", "params": {"id": 7}},
        None,
    ),
]


async def test_garbage_on_the_wire_gets_one_log_line_and_the_server_goes_on(
    wire: Wire, reliability: Recorder
) -> None:
    for case, message, code in GARBAGE:
        lines_before = len(wire.log_text().splitlines())
        if isinstance(message, bytes):
            wire.send_raw(message)
        else:
            wire.send({"jsonrpc": "2.0", **message} if "jsonrpc" not in str(case) else message)
        msg_id = message.get("id") if isinstance(message, dict) else (900 if code else None)
        if msg_id is not None:
            reply = await wire.response(msg_id)
            if code:
                assert reply.get("error", {}).get("code") == code, (case, reply)
                outcome = f"answered with error {code}"
            else:
                assert "result" in reply, (case, reply)
                outcome = "answered with a result"
        else:
            outcome = "no reply (none is due)"
        await _status_answers(wire)
        log = wire.log_text()
        assert _tracebacks(log) == [], (case, log)
        new = [
            line
            for line in log.splitlines()[lines_before:]
            if " WARNING " in line or " ERROR " in line
        ]
        assert len(new) <= 1, (case, new)
        if new:
            outcome += "; one log line"
        reliability("lsp", case, f"{outcome}; the next request is answered")
    shown = wire.notifications("window/showMessage")
    assert not [m for m in shown if "Error in server" in m["message"]], shown


# -- the fuzz ---------------------------------------------------------------------------------

URIS = st.sampled_from([DOC, "file:///tmp/fastedit-hostile/never.py", "untitled:x", "", "%"])
NUMBER = st.one_of(st.integers(-3, 5), st.integers(-(2**40), 2**40), st.floats(allow_nan=False))
LEAF = st.one_of(st.none(), st.booleans(), NUMBER, st.text(max_size=12), URIS)
JSON = st.recursive(
    LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
POSITION = st.fixed_dictionaries({"line": NUMBER, "character": NUMBER})
RANGE = st.fixed_dictionaries({"start": POSITION, "end": POSITION})
ARGUMENT = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"uri": URIS},
        optional={
            "position": POSITION | JSON,
            "range": RANGE | JSON,
            "instruction": st.text(max_size=10),
            "jobId": st.sampled_from(["job-1", "job-2", "nope"]) | JSON,
            "mode": st.sampled_from(["fast", "standard", "auto", "turbo"]),
            "timeoutMs": st.integers(-5, 300),
        },
    ),
)
COMMANDS = st.sampled_from(
    [
        "fastedit.completeRest",
        "fastedit.generateRegex",
        "fastedit.generateTests",
        "fastedit.fixSyntax",
        "fastedit.editSelection",
        "fastedit.retry",
        "fastedit.toggleFastMode",
        "fastedit.setMode",
        "fastedit.cancel",
        "fastedit.revert",
        "fastedit.wait",
        "fastedit.status",
        "fastedit.nope",
    ]
)
PARAMS = {
    "workspace/executeCommand": st.one_of(
        JSON,
        st.fixed_dictionaries({"command": COMMANDS, "arguments": st.lists(ARGUMENT, max_size=2)}),
    ),
    "textDocument/codeAction": st.one_of(
        JSON,
        st.fixed_dictionaries(
            {
                "textDocument": st.fixed_dictionaries({"uri": URIS}),
                "range": RANGE,
                "context": st.fixed_dictionaries({"diagnostics": st.just([])}),
            }
        ),
    ),
    "textDocument/completion": st.one_of(
        JSON,
        st.fixed_dictionaries(
            {"textDocument": st.fixed_dictionaries({"uri": URIS}), "position": POSITION}
        ),
    ),
    "textDocument/didChange": st.one_of(
        JSON,
        st.fixed_dictionaries(
            {
                "textDocument": st.fixed_dictionaries({"uri": URIS, "version": NUMBER}),
                "contentChanges": st.lists(
                    st.fixed_dictionaries({"text": st.text(max_size=6)}, optional={"range": RANGE}),
                    max_size=2,
                ),
            }
        ),
    ),
    "textDocument/didOpen": st.one_of(
        JSON,
        st.fixed_dictionaries(
            {
                "textDocument": st.fixed_dictionaries(
                    {
                        "uri": URIS,
                        "languageId": st.sampled_from(["python", "rust", ""]),
                        "version": NUMBER,
                        "text": st.text(max_size=40),
                    }
                )
            }
        ),
    ),
}
METHODS = st.sampled_from(
    [
        *PARAMS,
        "textDocument/didClose",
        "workspace/didChangeConfiguration",
        "window/workDoneProgress/cancel",
        "$/cancelRequest",
        "$/setTrace",
        "textDocument/hover",
        "textDocument/inlineCompletion",
        "fastedit/debugStats",
        "initialized",
        "no/such/method",
        "",
    ]
)


@st.composite
def messages(draw: st.DrawFn) -> tuple[str, Any, bool]:
    method = draw(METHODS)
    params = draw(PARAMS.get(method, JSON))
    return method, params, draw(st.booleans())


ids = itertools.count(10_000)
FUZZ_EXAMPLES = 200


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    batch=st.lists(
        st.one_of(messages(), st.binary(max_size=40).map(lambda b: ("raw", b, False))),
        min_size=1,
        max_size=6,
    )
)
async def test_fuzzed_json_rpc_never_crashes_the_server_and_every_request_is_answered(
    wire: Wire, batch: list[tuple[str, Any, bool]]
) -> None:
    asked: list[int | str] = []
    for method, params, is_request in batch:
        if method == "raw":
            wire.send_raw(params)
            continue
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if is_request:
            msg_id: int | str = next(ids)
            message["id"] = msg_id if msg_id % 2 else f"s{msg_id}"
            asked.append(message["id"])
        wire.send(message)
    await _status_answers(wire)
    for msg_id in asked:
        reply = await wire.response(msg_id)
        assert "result" in reply or "error" in reply, reply
    assert wire.proc.returncode is None
    assert _tracebacks(wire.log_text()) == []
    RECORDER(
        "lsp",
        f"hypothesis fuzz: {FUZZ_EXAMPLES} batches of up to 6 JSON-RPC messages (known and "
        "unknown methods, params of any shape, raw bytes, int and string ids)",
        "never crashed; every request answered (result or error); no traceback logged",
    )


# -- editors that misbehave -----------------------------------------------------------------

#: Slow enough that a job is still streaming while the test acts on it.
SLOW = Answer(text="a + b  # the sum of a and b, added up one token at a time", tps=20)


async def test_an_editor_that_never_answers_apply_edit_fails_the_job_which_stops_sending(
    make_editor: MakeEditor, stub: StubModelServer, reliability: Recorder
) -> None:
    editor = await make_editor(env={"FASTEDIT_APPLY_TIMEOUT_MS": "300"})
    editor.open(URI, TEXT)
    editor.open(OTHER_URI, TEXT)
    stub.script(Answer(text=GOOD))
    assert (await complete(editor, OTHER_URI))["state"] == "done"
    before = await at_rest(editor)

    features: dict[str, Any] = editor.client.protocol.fm.features
    answer = features[types.WORKSPACE_APPLY_EDIT]
    release = asyncio.Event()
    asked: list[types.ApplyWorkspaceEditParams] = []

    async def never(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        asked.append(params)
        await release.wait()
        return types.ApplyWorkspaceEditResult(applied=False)

    features[types.WORKSPACE_APPLY_EDIT] = never
    stub.script(SLOW)
    record = await complete(editor)
    assert record["state"] == "failed", record
    assert "did not answer" in record["error"], record
    assert "workspace/applyEdit within 0.3 s" in record["error"], record
    assert "stopped sending" in record["error"], record
    assert record["metrics"]["edits"] == 0
    (request,) = chat_requests(stub)[1:]
    await stub.wait_closed(request)
    assert request.client_closed  # the model stream was hung up
    assert len(asked) == 1  # nothing more was sent after the unanswered edit
    assert editor.text(URI) == TEXT

    # The editor wakes up: its late answer is only logged; a job on a working editor is served.
    release.set()
    features[types.WORKSPACE_APPLY_EDIT] = answer
    stub.script(Answer(text="  # ok"))
    end = TEXT.index("2))") + 3
    assert (await complete(editor, URI, end))["state"] == "done"
    assert len(asked) == 1
    await assert_no_leaks(editor, before)
    reliability(
        "lsp",
        "an editor that never answers workspace/applyEdit (timeout 0.3 s)",
        f"{record['state']}: {record['error']} — one edit sent, model stream closed, nothing "
        "leaked; the next job is served",
    )


#: A function whose every line a rewrite changes: one edit per line, so the rewrite is still
#: streaming when the editor stops answering.
STALL_URI = "file:///tmp/fastedit-e2e/stall.py"
STALL_TEXT = (
    "def compute(n, fast=False):\n    return n\n\n\ndef table():\n"
    + "".join(f"    value_{i} = compute({i})\n" for i in range(12))
    + "    return locals()\n"
)


async def test_an_editor_that_stops_answering_mid_rewrite_gets_the_job_stopped_and_revert_restores(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    # Emacs 28's jsonrpc left messages unparsed until more output came (issue 30): the edits
    # after the first ones went unanswered, then landed late. The job stops and says so; the
    # late edit lands in the editor; one revert restores what was there before the job.
    editor = await make_editor(env={"FASTEDIT_APPLY_TIMEOUT_MS": "300"})
    editor.open(STALL_URI, STALL_TEXT)
    start = STALL_TEXT.index("    value_0")
    end = STALL_TEXT.index("    return locals()")
    body = STALL_TEXT[start:end]
    rewrite = body.replace(")\n", ", fast=True)\n")
    features: dict[str, Any] = editor.client.protocol.fm.features
    answer = features[types.WORKSPACE_APPLY_EDIT]
    release = asyncio.Event()
    held: list[types.ApplyWorkspaceEditParams] = []
    answered = 0

    async def stalls(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        nonlocal answered
        if answered >= 2:
            held.append(params)
            await release.wait()
        answered += 1
        result: types.ApplyWorkspaceEditResult = answer(params)
        return result

    features[types.WORKSPACE_APPLY_EDIT] = stalls
    stub.script(Answer(text=rewrite, tps=200))
    record = await editor.run(
        "fastedit.editSelection",
        {
            "uri": STALL_URI,
            "range": {"start": editor.pos(STALL_URI, start), "end": editor.pos(STALL_URI, end)},
            "instruction": "pass fast=True",
        },
    )
    assert record["state"] == "failed", record
    assert "did not answer" in record["error"] and "stopped sending" in record["error"], record
    assert len(held) == 1  # nothing more was sent after the unanswered edit
    half = editor.text(STALL_URI)
    assert half != STALL_TEXT  # the first edits landed: half a rewrite is on screen

    # The editor wakes up: the held edit lands late, then the user reverts the job.
    landed = len(editor.applied)
    release.set()
    await editor.wait_applied(landed + 1)
    features[types.WORKSPACE_APPLY_EDIT] = answer
    result = await editor.command("fastedit.revert", {"jobId": record["jobId"]})
    assert result == {"reverted": True}, (result, editor.text(STALL_URI))
    assert editor.text(STALL_URI) == STALL_TEXT


async def test_an_editor_answering_applied_false_fails_the_job_and_nothing_leaks(
    editor: Editor, stub: StubModelServer, reliability: Recorder
) -> None:
    editor.open(URI, TEXT)
    editor.open(OTHER_URI, TEXT)
    stub.script(Answer(text=GOOD))
    assert (await complete(editor, OTHER_URI))["state"] == "done"
    before = await at_rest(editor)
    applied = len(editor.applied)
    editor.refuse_edits = True
    stub.script(SLOW)
    record = await complete(editor)
    assert record["state"] == "failed", record
    assert "applied: false" in record["error"], record
    assert editor.text(URI) == TEXT and len(editor.applied) == applied
    editor.refuse_edits = False
    await assert_no_leaks(editor, before)
    reliability(
        "lsp",
        "an editor that answers applied: false",
        f"{record['state']}: {record['error']} — buffer unchanged, nothing leaked",
    )


async def test_an_editor_disconnecting_mid_stream_lets_the_server_exit_cleanly(
    stub: StubModelServer, tmp_path: Path, reliability: Recorder
) -> None:
    env = hermetic_env(FASTEDIT_FAST_BASE_URL=stub.base_url, FASTEDIT_FAST_MODEL="stub-fast")
    server = await Wire.start(env, tmp_path / "server.log")
    await server.initialize({"mode": "fast"})
    server.open(DOC, TEXT)
    stub.script(SLOW)
    started = await server.command(
        "fastedit.completeRest", {"uri": DOC, "position": {"line": 1, "character": 11}}
    )
    assert "jobId" in started["result"], started
    await server.wait_for(lambda m: m.get("method") == "workspace/applyEdit")
    server.close_stdin()  # the editor is gone: EOF, no shutdown, no exit
    code = await asyncio.wait_for(server.proc.wait(), 15)
    (request,) = chat_requests(stub)
    await stub.wait_closed(request)
    assert request.client_closed, request  # the model stream was hung up, not read to its end
    log = server.log_text()
    assert code == 0, log
    assert _tracebacks(log) == [], log
    await server.stop()
    reliability(
        "lsp",
        "the editor disconnects (EOF on stdin) while a job streams",
        f"the server exits with code {code}, closes the model stream, logs no traceback",
    )


async def test_a_request_after_shutdown_is_answered_with_an_error_not_left_waiting(
    tmp_path: Path, reliability: Recorder
) -> None:
    # Emacs asks for the next edit from a timer: through rass, one that fires after fastedit
    # answered shutdown (rass still waiting for the other server) sends a request after it.
    # pygls dropped it with a log line: eglot's shutdown waited for jsonrpc's 10 s request
    # timeout, then killed every server. The spec: InvalidRequest.
    server = await Wire.start(hermetic_env(), tmp_path / "server.log")
    await server.initialize()
    server.open(DOC, TEXT)
    next_edit = {"command": "fastedit.nextEdit", "arguments": [{"uri": DOC, "position": ORIGIN}]}
    shutdown = server.request("shutdown")
    during = server.request("workspace/executeCommand", next_edit)  # while it closes
    assert (await server.response(shutdown)).get("result", ...) is None
    after = server.request("workspace/executeCommand", next_edit)
    server.notify("textDocument/didClose", {"textDocument": {"uri": DOC}})  # ignored, no reply
    replies = [await server.response(during), await server.response(after)]
    assert [r["error"]["code"] for r in replies] == [INVALID_REQUEST, INVALID_REQUEST], replies
    assert "shutting down" in replies[1]["error"]["message"], replies
    server.notify("exit")
    code = await asyncio.wait_for(server.proc.wait(), 15)
    log = server.log_text()
    assert code == 0, log
    assert _tracebacks(log) == [], log
    await server.stop()
    reliability(
        "lsp",
        "a request after shutdown (an editor's timer firing while it shuts the server down)",
        f"answered at once with InvalidRequest ({replies[1]['error']['message']}); exit code "
        f"{code}",
    )


async def test_a_client_reply_that_does_not_fit_its_request_fails_only_that_request(
    tmp_path: Path, reliability: Recorder
) -> None:
    server = await Wire.start(hermetic_env(), tmp_path / "server.log")
    # workspace/configuration must answer a list: this client answers a number.
    server.handlers["workspace/configuration"] = lambda params: 5
    await server.initialize()
    await server.wait_for(lambda m: m.get("method") == "workspace/configuration")
    await _status_answers(server)
    assert await server.stop() == 0
    log = server.log_text()
    assert _tracebacks(log) == [], log
    assert "reply to request" in log and "could not be read" in log
    reliability(
        "lsp",
        "a client reply that does not fit its request (workspace/configuration answered with "
        "a number)",
        "that request fails (one log line); the server answers the next request and shuts "
        "down cleanly",
    )


BIG = 5 * 1024 * 1024


async def test_a_5_mb_single_line_document_is_served(
    editor: Editor, stub: StubModelServer, reliability: Recorder
) -> None:
    line = "data = [" + "1, " * ((BIG - 10) // 3) + "]"
    editor.open(URI, line)
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=types.Range(
                start=types.Position(line=0, character=len(line)),
                end=types.Position(line=0, character=len(line)),
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert actions, actions
    stub.script(Answer(text="  # end"))
    record = await complete(editor, URI, len(line))
    assert record["state"] == "done", (record.get("error"), record.get("reason"), record["metrics"])
    assert editor.text(URI) == line + "  # end"
    # Not parse-checked: tree-sitter would hold the server for seconds on 5 MB.
    assert record["verification"]["ok"] is None, record
    (request,) = chat_requests(stub)
    prompt = json.dumps(request.body)
    assert len(prompt) < 200_000  # the context budget holds whatever the line's length
    reliability(
        "lsp",
        "a 5 MB single-line document: code actions at its end, then complete the rest",
        f"code actions answered; job {record['state']}; the prompt stays within the context budget",
    )


async def test_nul_bytes_and_lone_surrogates_in_text_do_not_break_a_job(
    editor: Editor, stub: StubModelServer, reliability: Recorder
) -> None:
    text = "s = 'a\x00b'\nt = '\ud800'\ndef add(a, b):\n    return \n"
    cursor = text.index("return ") + len("return ")
    editor.open(URI, text)
    stub.script(Answer(text=GOOD))
    record = await complete(editor, URI, cursor)
    assert record["state"] == "done", record
    assert editor.text(URI) == text[:cursor] + GOOD + text[cursor:]
    (request,) = chat_requests(stub)
    assert "\x00" in json.dumps(request.body["messages"]) or "\\u0000" in json.dumps(
        request.body["messages"]
    )
    reliability(
        "lsp",
        "NUL bytes and a lone surrogate in the document's text",
        f"job {record['state']}: the prompt carries the NUL, the lone surrogate is sent as "
        "U+FFFD; the buffer gets exactly the answer",
    )
