"""Streaming into the buffer: partial edits, exact bytes in every encoding, cancel and revert."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, RecordedRequest, StubModelServer, split_tokens
from tests.support import shared_server
from tests.support.harness import HANG_GUARD, Editor
from tests.support.shared_server import MakeEditor

# One server and stub for the module, reset between tests (tests/support/shared_server.py);
# ``make_editor`` still starts a fresh server (other encodings, settings, a batched editor).
pytestmark = pytest.mark.asyncio(loop_scope="module")
module_stub, module_editor = shared_server.module_stub, shared_server.module_editor
stub, editor, make_editor = shared_server.stub, shared_server.editor, shared_server.make_editor

URI = "file:///tmp/fastedit-e2e/stream.py"

# Non-ASCII before the anchor and in the answer: é (2 UTF-8 bytes), 😀 (2 UTF-16 units, 4 bytes),
# CJK (3 bytes), a combining accent, a ZWJ family and a flag, whose clusters the stub splits.
BEFORE = "# é 😀 中文\ns = '😀é'  # 字\nvalue = "
AFTER = "\nprint(value)\n"
ANSWER = 'f"é{s}😀中文 e\u0301 👨\u200d👩\u200d👧 🇫🇷"\r\nother = 1'
# The answer's line break (CRLF, split by the stub) lands as the document's (docs/answers.md).
LANDED = ANSWER.replace("\r\n", "\n")


async def _start(editor: Editor, text: str, offset: int) -> str:
    started = await editor.command(
        "fastedit.completeRest", {"uri": URI, "position": editor.pos(URI, offset)}
    )
    job_id: str = started["jobId"]
    return job_id


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
async def test_streamed_text_lands_byte_for_byte_in_each_position_encoding(
    make_editor: MakeEditor, stub: StubModelServer, encoding: str
) -> None:
    editor = await make_editor(encoding=encoding)
    editor.open(URI, BEFORE + AFTER)
    # Two code points per token: boundaries fall inside clusters and between \r and \n.
    stub.script(Answer(tokens=split_tokens(ANSWER, 2), tps=400))
    record = await editor.wait_job(await _start(editor, BEFORE + AFTER, len(BEFORE)))
    assert record["state"] == "done", record
    assert editor.text(URI) == BEFORE + LANDED + AFTER
    assert record["metrics"]["edits"] >= 2
    assert len(editor.applied) == record["metrics"]["edits"]


async def test_streaming_final_sends_one_edit_at_the_end(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options={"streaming": "final"})
    editor.open(URI, BEFORE + AFTER)
    stub.script(Answer(text=ANSWER, tps=2000))
    record = await editor.wait_job(await _start(editor, BEFORE + AFTER, len(BEFORE)))
    assert record["state"] == "done", record
    assert editor.text(URI) == BEFORE + LANDED + AFTER
    assert record["metrics"]["edits"] == 1


async def test_edit_selection_touches_only_its_range_and_reverts_in_one_edit(
    editor: Editor, stub: StubModelServer
) -> None:
    head, selection, tail = "import os\n\n", "def f(x):\n    return x\n", "\n\nprint(f(2))\n"
    editor.open(URI, head + selection + tail)
    rewrite = "def f(x: int) -> int:\n    return x * 2\n"
    stub.script(Answer(text=f"```python\n{rewrite}```\nThis doubles x.", tps=300))
    start, end = len(head), len(head) + len(selection)
    record = await editor.run(
        "fastedit.editSelection",
        {
            "uri": URI,
            "range": {"start": editor.pos(URI, start), "end": editor.pos(URI, end)},
            "instruction": "double it and add types",
        },
    )
    assert record["state"] == "done", record
    # The fences and the chatter are gone; outside the range nothing moved.
    assert editor.text(URI) == head + rewrite + tail
    assert record["metrics"]["edits"] >= 2
    # The model saw the instruction and the selection.
    prompt = stub.requests[-1].body["messages"][-1]["content"]
    assert "double it and add types" in prompt and selection in prompt
    edits_before = len(editor.applied)
    result = await editor.command("fastedit.revert", {"jobId": record["jobId"]})
    assert result == {"reverted": True}
    assert editor.text(URI) == head + selection + tail
    assert len(editor.applied) == edits_before + 1
    status = await editor.command("fastedit.status")
    assert [j["state"] for j in status["jobs"] if j["jobId"] == record["jobId"]] == ["reverted"]


@pytest.mark.parametrize("how", ["fastedit.cancel", "workDoneProgress/cancel", "both at once"])
async def test_cancel_mid_stream_stops_closes_the_http_stream_and_keeps_what_was_acknowledged(
    editor: Editor, stub: StubModelServer, how: str
) -> None:
    text = "def slow():\n    return \n"
    editor.open(URI, text)
    cursor = text.index("return ") + len("return ")
    # 8 s of stream: the cancel lands mid-stream even on a loaded machine (at 4 s the stream
    # once ended before a workDoneProgress/cancel was handled).
    stub.script(Answer(text="x" * 400, tps=50))
    job_id = await _start(editor, text, cursor)
    await editor.wait_applied(2)
    if how != "fastedit.cancel":
        # The progress' cancel button; "both at once" also sends fastedit.cancel right after (a
        # second cancel once interrupted the close of the HTTP stream: the model went on).
        token = f"fastedit-{job_id}"
        assert token in editor.client.progress_reports
        editor.client.window_work_done_progress_cancel(
            types.WorkDoneProgressCancelParams(token=token)
        )
    if how != "workDoneProgress/cancel":
        cancelled = await editor.command("fastedit.cancel", {"jobId": job_id})
        assert cancelled["cancelled"] in ([job_id], [])
    record = await editor.wait_job(job_id)
    assert record["state"] == "cancelled"
    assert "error" not in record
    request = (await stub.wait_for_requests(1))[0]
    await stub.wait_closed(request)
    assert request.client_closed and not request.completed
    # The buffer is exactly the original plus the acknowledged edits, and nothing followed.
    inserted = "".join(t for _, _, _, t in editor.applied)
    assert 0 < len(inserted) < 400
    assert editor.text(URI) == text[:cursor] + inserted + text[cursor:]
    applied = len(editor.applied)
    await editor.command("fastedit.status")
    assert len(editor.applied) == applied
    assert await editor.command("fastedit.revert", {"uri": URI}) == {"reverted": True}
    assert editor.text(URI) == text


async def test_execute_command_answers_with_a_job_id_before_the_first_token(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, "x = \n")
    stub.script(Answer(text="1", ttft=2.0))
    job_id = await _start(editor, "x = \n", 4)
    record = await editor.command("fastedit.wait", {"jobId": job_id, "timeoutMs": 0})
    assert record["state"] == "running"
    assert record["metrics"]["edits"] == 0 and editor.applied == []
    await editor.command("fastedit.cancel", {"jobId": job_id})


@pytest.mark.parametrize("how", ["fastedit.cancel", "workDoneProgress/cancel"])
async def test_cancel_before_the_first_token_closes_the_http_stream_and_changes_nothing(
    editor: Editor, stub: StubModelServer, how: str
) -> None:
    # The job waits for the answer's first piece in its own task (pipeline/edits.py): a cancel
    # then reaches the HTTP stream there, not through a reader task.
    text = "x = \n"
    editor.open(URI, text)
    stub.script(Answer(text="1", ttft=30.0))
    job_id = await _start(editor, text, 4)
    request = (await stub.wait_for_requests(1))[0]
    if how == "fastedit.cancel":
        assert (await editor.command("fastedit.cancel", {"jobId": job_id}))["cancelled"] == [job_id]
    else:
        # The progress' cancel button shows once its progress began (the client files the
        # token when asked to create it, before the server begins it).
        token = f"fastedit-{job_id}"

        async def progress_began() -> None:
            # Look, then listen, in one step of one task: asyncio.wait_for runs a coroutine in a
            # task of its own, which began listening a loop turn later, so a $/progress read in
            # between was missed and the cancel went out only with the job's end, 15 s on.
            while not editor.client.progress_reports.get(token):
                await editor.client.wait_for_notification("$/progress")

        await asyncio.wait_for(progress_began(), HANG_GUARD)
        editor.client.window_work_done_progress_cancel(
            types.WorkDoneProgressCancelParams(token=token)
        )
    record = await editor.wait_job(job_id)
    assert record["state"] == "cancelled", json.dumps(record)
    await stub.wait_closed(request)
    assert request.client_closed and not request.completed
    assert editor.applied == []
    assert editor.text(URI) == text


async def test_cancel_request_on_a_pending_wait_answers_it_and_the_server_stays_healthy(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, "x = \n")
    stub.script(Answer(text="1", ttft=3.0))
    job_id = await _start(editor, "x = \n", 4)
    params = types.ExecuteCommandParams(
        command="fastedit.wait", arguments=[{"jobId": job_id, "timeoutMs": 60000}]
    )
    pending = asyncio.ensure_future(
        editor.client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND, params, msg_id="wait-1"
        )
    )
    # The request is on its way once the client's loop ran; status answers after it.
    await editor.command("fastedit.status")
    editor.client.cancel_request(types.CancelParams(id="wait-1"))
    with pytest.raises(Exception) as caught:
        await asyncio.wait_for(pending, HANG_GUARD)
    assert "-32800" in repr(caught.value) or "cancel" in str(caught.value).lower()
    status = await editor.command("fastedit.status")
    assert [j["state"] for j in status["jobs"] if j["jobId"] == job_id] == ["running"]
    await editor.command("fastedit.cancel", {"jobId": job_id})


async def _held_job(
    editor: Editor, stub: StubModelServer, text: str, cursor: int
) -> tuple[str, RecordedRequest]:
    """A job whose stream of 200 ``Q`` stops after 20 tokens until the test releases it.

    Typing "during the stream" then happens during the stream however slow the machine is: the
    test types, makes sure the server has read the change (a request answered after it), and only
    then lets the model go on.
    """
    stub.script(Answer(text="Q" * 200, token_size=1, tps=1000, hold_after=20))
    job_id = await _start(editor, text, cursor)
    (request,) = await stub.wait_for_requests(1)
    while sum(t.count("Q") for _, _, _, t in editor.applied) < 20:
        await editor.next_edit()
    return job_id, request


async def _typed_then_released(editor: Editor, request: RecordedRequest) -> None:
    """Let the held stream go on once the server has read every change typed so far."""
    editor.flush()
    await editor.command("fastedit.status")  # answered after the didChange before it
    request.release.set()


async def test_typing_before_the_anchor_survives_and_the_stream_continues_after_it(
    editor: Editor, stub: StubModelServer
) -> None:
    text = "from fixtures import *\nfirst = 1\nsecond = \nthird = 3\n"  # QQQ… may exist
    editor.open(URI, text)
    cursor = text.index("second = ") + len("second = ")
    job_id, request = await _held_job(editor, stub, text, cursor)
    editor.type(URI, 0, "# typed\n")
    await _typed_then_released(editor, request)
    record = await editor.wait_job(job_id)
    assert record["state"] == "done", record
    assert editor.text(URI) == "# typed\n" + text[:cursor] + "Q" * 200 + text[cursor:]


@pytest.mark.parametrize(
    ("where", "typed"),
    [
        pytest.param("inside", "ZZ", id="inside-the-streamed-text"),
        pytest.param("at-end", "ZZ", id="where-text-is-generated"),
    ],
)
async def test_typing_into_the_stream_stops_it_with_a_reason_and_keeps_the_typing(
    editor: Editor, stub: StubModelServer, where: str, typed: str
) -> None:
    text = "value = \nnext_line = 2\n"
    editor.open(URI, text)
    cursor = len("value = ")
    job_id, request = await _held_job(editor, stub, text, cursor)
    inserted = "".join(t for _, _, _, t in editor.applied)
    offset = cursor + 1 if where == "inside" else cursor + len(inserted)
    editor.type(URI, offset, typed)
    await _typed_then_released(editor, request)
    record = await editor.wait_job(job_id)
    assert record["state"] == "cancelled"
    assert record["error"].startswith("Stopped:")
    final = editor.text(URI)
    # The typing is intact; the job's text is all that was added; the stream stopped early.
    assert final.replace("Q", "") == text[:cursor] + typed + text[cursor:]
    assert 0 < final.count("Q") == len("".join(t for _, _, _, t in editor.applied)) < 200
    result = await editor.command("fastedit.revert", {"jobId": job_id})
    assert result["reverted"] is False and "changed" in result["reason"]


@pytest.mark.parametrize(
    ("typed_at", "typed", "outcome"),
    [
        # On an earlier line, no new line: the anchor's position does not move, so edits sent
        # before the server heard of it still land right.
        pytest.param("end-of-first-line", "  # note", "done", id="rebased"),
        # A new line above the anchor, reported 0.2 s late while edits keep coming: the edits
        # sent meanwhile land a line too high. The server sees it and stops; nothing is deleted.
        pytest.param("start", "# a new first line\n", "cancelled", id="stopped"),
    ],
)
async def test_a_late_batched_editor_never_loses_typing(
    make_editor: MakeEditor, stub: StubModelServer, typed_at: str, typed: str, outcome: str
) -> None:
    """eglot-like: changes reach the server late and batched while edits keep streaming."""
    editor = await make_editor(sync="batched")
    editor.batch_delay = 0.2
    text = "from fixtures import *\nheader = 0\nvalue = \ntail = 1\n"  # QQQ… may exist
    editor.open(URI, text)
    editor.flush()
    cursor = text.index("value = ") + len("value = ")
    stub.script(Answer(text="Q" * 200, tps=150))
    job_id = await _start(editor, text, cursor)
    await editor.wait_applied(2)
    offset = 0 if typed_at == "start" else text.index("\n")
    editor.type(URI, offset, typed)
    record = await editor.wait_job(job_id)
    editor.flush()
    await editor.command("fastedit.status")
    final = editor.text(URI)
    inserted = "".join(t for _, _, _, t in editor.applied)
    # Every character typed survives; the job's text is all there is besides.
    assert final.replace("Q", "") == text[:offset] + typed + text[offset:]
    assert final.count("Q") == len(inserted)
    assert record["state"] == outcome, record
    if outcome == "done":
        assert final == text[:offset] + typed + text[offset:cursor] + "Q" * 200 + text[cursor:]
    else:
        assert record["error"].startswith("Stopped:")
