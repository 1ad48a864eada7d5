"""Bad input gets a clear refusal (-32602 naming the field) or a failed job with a reason.

Never a crash, never a hang: after every bad request the real server still answers
``fastedit.status``. Also the job-level refusals: a document closed mid-stream, an editor that
refuses edits, a job overlapping a running one, and the shape of ``fastedit.status``.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

import fastedit_lsp
from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.errors import (
    CURSOR,
    GOOD,
    OTHER_URI,
    TEXT,
    URI,
    assert_still_serving,
    chat_requests,
    complete,
    start_completion,
    wait_shown,
)
from tests.support.harness import Editor

INVALID_PARAMS = -32602
REQUEST_FAILED = -32803
NOT_OPEN = "file:///tmp/fastedit-e2e/never-opened.py"
#: Slow enough that a job is still streaming while the test acts on it.
SLOW = Answer(text="a + b  # the sum of a and b, added up one token at a time", tps=10)

POS = {"line": 1, "character": 11}  # after "return " on line 1 of TEXT
RANGE = {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 11}}

# (command, arguments, words the -32602 message must contain)
BAD_ARGUMENTS: list[tuple[str, list[Any], tuple[str, ...]]] = [
    # Documents and positions.
    ("fastedit.completeRest", [{"uri": NOT_OPEN, "position": POS}], ("uri", "not open")),
    (
        "fastedit.completeRest",
        [{"uri": URI, "position": {"line": 1, "character": 99}}],
        ("position", "past the end of line"),
    ),
    (
        "fastedit.completeRest",
        [{"uri": URI, "position": {"line": 40, "character": 0}}],
        ("position", "past the end of the document"),
    ),
    (
        "fastedit.completeRest",
        [{"uri": URI, "position": {"line": -1, "character": 0}}],
        ("position.line",),
    ),
    (
        "fastedit.completeRest",
        [{"uri": URI, "position": {"line": 1, "character": -3}}],
        ("position.character",),
    ),
    (
        "fastedit.editSelection",
        [
            {
                "uri": URI,
                "range": {"start": RANGE["end"], "end": RANGE["start"]},
                "instruction": "shorter",
            }
        ],
        ("range", "start is after end"),
    ),
    (
        "fastedit.editSelection",
        [
            {
                "uri": URI,
                "range": {"start": RANGE["start"], "end": {"line": 9, "character": 0}},
                "instruction": "shorter",
            }
        ],
        ("range.end",),
    ),
    # Missing fields.
    ("fastedit.completeRest", [{}], ("uri",)),
    ("fastedit.completeRest", [], ("uri",)),
    ("fastedit.completeRest", [{"uri": URI}], ("position",)),
    ("fastedit.completeRest", [{"uri": URI, "position": {"line": 1}}], ("position.character",)),
    ("fastedit.editSelection", [{"uri": URI, "range": RANGE}], ("instruction",)),
    ("fastedit.editSelection", [{"uri": URI, "range": RANGE, "instruction": ""}], ("instruction",)),
    ("fastedit.setMode", [{}], ("mode",)),
    ("fastedit.wait", [{}], ("jobId",)),
    # Wrong types.
    ("fastedit.completeRest", [{"uri": URI, "position": "1:11"}], ("position",)),
    ("fastedit.completeRest", [{"uri": 42, "position": POS}], ("uri",)),
    (
        "fastedit.completeRest",
        [{"uri": URI, "position": {"line": 1.5, "character": 0}}],
        ("position.line",),
    ),
    ("fastedit.editSelection", [{"uri": URI, "range": [1, 2], "instruction": "x"}], ("range",)),
    ("fastedit.wait", [{"jobId": "job-1", "timeoutMs": "soon"}], ("timeoutMs",)),
    ("fastedit.wait", [{"jobId": "job-1", "timeoutMs": -1}], ("timeoutMs",)),
    ("fastedit.revert", [{"jobId": 7}], ("jobId",)),
    ("fastedit.cancel", [{"uri": 5}], ("uri",)),
    # Not one object.
    (
        "fastedit.completeRest",
        [{"uri": URI, "position": POS}, {"uri": URI, "position": POS}],
        ("one object argument", "2"),
    ),
    ("fastedit.completeRest", [URI], ("argument", "object")),
    ("fastedit.setMode", ["fast"], ("argument", "object")),
    ("fastedit.status", [[]], ("argument", "object")),
    # Unknown names and values.
    ("fastedit.frobnicate", [], ("fastedit.frobnicate",)),
    ("fastedit.setMode", [{"mode": "turbo"}], ("mode",)),
    ("fastedit.wait", [{"jobId": "job-999"}], ("jobId", "job-999")),
    ("fastedit.cancel", [{"jobId": "job-999"}], ("jobId", "job-999")),
    ("fastedit.revert", [{"jobId": "job-999"}], ("jobId", "job-999")),
]


async def refused(editor: Editor, command: str, arguments: list[Any] | None) -> JsonRpcException:
    """Send a command that must be refused; return the error the client got."""
    try:
        result = await editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=arguments)
        )
    except JsonRpcException as exc:
        return exc
    raise AssertionError(f"{command} {arguments!r} was accepted: {result!r}")


async def assert_status_answers(editor: Editor) -> dict[str, Any]:
    status: dict[str, Any] = await editor.command("fastedit.status")
    assert status["version"] == fastedit_lsp.__version__
    return status


async def test_malformed_arguments_get_invalid_params_naming_the_field(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, TEXT)
    problems: list[str] = []
    for command, arguments, words in BAD_ARGUMENTS:
        error = await refused(editor, command, arguments)
        if error.code != INVALID_PARAMS:
            problems.append(f"{command} {arguments!r}: code {error.code}: {error.message}")
        missing = [w for w in words if w not in error.message]
        if missing:
            problems.append(f"{command} {arguments!r}: {missing} not in {error.message!r}")
        await assert_status_answers(editor)
    # No arguments at all (``arguments`` omitted) is "none" too.
    error = await refused(editor, "fastedit.completeRest", None)
    if error.code != INVALID_PARAMS or "uri" not in error.message:
        problems.append(f"completeRest without arguments: {error.code}: {error.message}")
    assert problems == [], "\n".join(problems)

    # Nothing was started, nothing reached the model, the buffer is untouched.
    status = await assert_status_answers(editor)
    assert status["jobs"] == []
    assert chat_requests(stub) == []
    assert editor.text(URI) == TEXT
    assert editor.applied == []
    # "None" is [] or [{}]; the server answers both, and still runs jobs.
    assert (await editor.command("fastedit.status", {}))["jobs"] == []
    assert await editor.command("fastedit.setMode", {"mode": "fast"}) == {"mode": "fast"}
    await assert_still_serving(editor, stub)


async def test_closing_the_document_stops_its_streaming_job(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, TEXT)
    stub.script(SLOW)
    job_id = await start_completion(editor)
    await editor.wait_applied(1)
    editor.close(URI)  # the harness flags any edit that targets it from now on
    record = await editor.wait_job(job_id, timeout_ms=5000)
    assert record["state"] in ("cancelled", "failed"), record
    assert "closed" in record["error"], record
    edits = len(editor.applied)
    assert record["metrics"]["edits"] == edits
    (request,) = chat_requests(stub)
    await stub.wait_closed(request)
    assert request.client_closed  # the model stream was hung up, not read to its end
    assert request.tokens_sent < len(SLOW.token_list())

    # The document is gone for new jobs, the server keeps serving.
    error = await refused(
        editor, "fastedit.completeRest", [{"uri": URI, "position": {"line": 0, "character": 0}}]
    )
    assert error.code == INVALID_PARAMS and "not open" in error.message
    editor.open(OTHER_URI, TEXT)
    await assert_still_serving(editor, stub, OTHER_URI)
    assert all(uri == OTHER_URI for uri, *_ in editor.applied[edits:])
    await assert_status_answers(editor)


async def test_an_editor_refusing_edits_fails_the_job_and_gets_nothing_more(
    editor: Editor, stub: StubModelServer
) -> None:
    requests: list[str] = []
    on_apply_edit = editor.on_apply_edit

    def counting(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        changes = params.edit.changes or {}
        requests.extend(changes)
        requests.extend(
            c.text_document.uri
            for c in params.edit.document_changes or []
            if isinstance(c, types.TextDocumentEdit)
        )
        return on_apply_edit(params)

    editor.on_apply_edit = counting  # type: ignore[method-assign]
    editor.refuse_edits = True
    editor.open(URI, TEXT)
    stub.script(SLOW)
    record = await complete(editor)
    assert record["state"] == "failed", record
    assert "applied: false" in record["error"] or "refused" in record["error"], record
    await wait_shown(editor, record["error"], kind=types.MessageType.Error)
    assert requests == [URI]  # one refused edit, then the job stopped sending
    assert editor.applied == []
    assert editor.text(URI) == TEXT
    assert record["metrics"]["edits"] == 0
    (request,) = chat_requests(stub)
    await stub.wait_closed(request)
    assert request.client_closed  # the stream was not read on for nothing

    # An editor that applies edits again gets a working server, and no stray edit for URI.
    editor.refuse_edits = False
    editor.open(OTHER_URI, TEXT)
    await assert_still_serving(editor, stub, OTHER_URI)
    assert requests.count(URI) == 1
    assert editor.text(URI) == TEXT


async def test_a_job_overlapping_a_running_one_is_refused(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, TEXT)
    elsewhere = "  # printed"
    stub.script(SLOW, Answer(text=elsewhere))
    first = await start_completion(editor)
    await editor.wait_applied(1)  # streaming now

    same_place = {"uri": URI, "position": editor.pos(URI, CURSOR)}
    error = await refused(editor, "fastedit.completeRest", [same_place])
    assert error.code == REQUEST_FAILED, error
    assert first in error.message and "cancel" in error.message, error.message
    covering = {
        "uri": URI,
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
        "instruction": "rewrite",
    }
    error = await refused(editor, "fastedit.editSelection", [covering])
    assert error.code == REQUEST_FAILED, error
    assert len(chat_requests(stub)) == 1  # refused before any model call

    # Elsewhere in the same document: accepted, and it runs beside the first job.
    end_of_print = editor.text(URI).index("print(add(1, 2))") + len("print(add(1, 2))")
    second = await start_completion(editor, URI, end_of_print)
    record = await editor.wait_job(second, timeout_ms=5000)
    assert record["state"] == "done", record

    assert await editor.command("fastedit.cancel", {"jobId": first}) == {"cancelled": [first]}
    cancelled = await editor.wait_job(first)
    assert cancelled["state"] == "cancelled", cancelled
    text = editor.text(URI)
    inserted = text[CURSOR : text.index("\n", CURSOR)]
    assert inserted and SLOW.text.startswith(inserted), inserted
    assert text == (
        TEXT[:CURSOR] + inserted + TEXT[CURSOR:].replace("2))\n", "2))" + elsewhere + "\n")
    )
    await assert_status_answers(editor)


JOB_FIELDS = {
    "jobId",
    "kind",
    "state",
    "uri",
    "range",
    "route",
    "model",
    "reason",
    "escalated",
    "attempts",
    "verification",
    "metrics",
}
METRICS = {"ttftMs", "tokens", "tokensPerSecond", "edits", "elapsedMs", "landedMs"}


def assert_job_record(record: dict[str, Any]) -> None:
    assert record.keys() >= JOB_FIELDS, JOB_FIELDS - record.keys()
    assert record["kind"] == "completeRest"
    assert record["state"] in ("running", "done", "cancelled", "failed", "reverted")
    assert record["uri"] == URI
    assert set(record["range"]) == {"start", "end"}
    assert set(record["range"]["start"]) == {"line", "character"}
    assert record["route"] in ("fast", "standard", "local")
    assert isinstance(record["model"], str) and record["model"]
    assert isinstance(record["reason"], str) and record["reason"]
    assert isinstance(record["escalated"], bool)
    assert record["attempts"], record
    for attempt in record["attempts"]:
        assert {"route", "model", "verification"} <= attempt.keys(), attempt
    assert {"ok", "details"} <= record["verification"].keys()
    assert record["verification"]["ok"] in (True, False, None)
    assert record["metrics"].keys() >= METRICS, METRICS - record["metrics"].keys()
    assert ("error" in record) == (record["state"] == "failed"), record


async def test_status_reports_mode_profiles_jobs_and_version(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, TEXT)
    stub.script(Answer(text=GOOD), Answer(status=404))
    done = await complete(editor)
    failed = await complete(editor, URI, CURSOR + len(GOOD))
    assert (done["state"], failed["state"]) == ("done", "failed")

    status = await assert_status_answers(editor)
    assert set(status) >= {"mode", "profiles", "jobs", "version"}
    assert status["mode"] == "auto"  # the default
    assert {"fast", "standard"} <= status["profiles"].keys()
    assert status["profiles"]["fast"]["model"] == "stub-fast"
    assert status["profiles"]["standard"]["model"] == "stub-strong"
    assert [j["jobId"] for j in status["jobs"]] == [done["jobId"], failed["jobId"]]
    for record in (done, failed, *status["jobs"]):
        assert_job_record(record)
    assert done["range"] == {"start": POS, "end": POS}
    assert done["metrics"]["edits"] >= 1 and done["metrics"]["tokens"] >= 1
    assert failed["metrics"]["edits"] == 0
