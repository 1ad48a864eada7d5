"""Shared pieces of the failure-path end-to-end tests (backend errors, bad input)."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from lsprotocol import types

from fastedit_lsp.tools.stub import CHAT_PATH, Answer, RecordedRequest, StubModelServer
from tests.support.harness import HANG_GUARD, Editor

URI = "file:///tmp/fastedit-e2e/errors.py"
OTHER_URI = "file:///tmp/fastedit-e2e/other.py"
TEXT = "def add(a, b):\n    return \n\nprint(add(1, 2))\n"
#: The offset right after ``return `` in :data:`TEXT`.
CURSOR = TEXT.index("return ") + len("return ")
#: A completion the pipeline passes through untouched (no fence, no chatter, no suffix repeat).
GOOD = "a + b  # the sum"


def chat_requests(stub: StubModelServer) -> list[RecordedRequest]:
    """The chat-completions requests the stub received (model listings excluded)."""
    return [r for r in stub.requests if r.path == CHAT_PATH]


async def start_completion(editor: Editor, uri: str = URI, offset: int | None = None) -> str:
    """Start ``fastedit.completeRest`` at ``offset`` (default: after ``return ``); its job id."""
    where = CURSOR if offset is None else offset
    started = await editor.command(
        "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, where)}
    )
    job_id: str = started["jobId"]
    return job_id


async def complete(editor: Editor, uri: str = URI, offset: int | None = None) -> dict[str, Any]:
    """Run ``fastedit.completeRest`` to its end and return the job record."""
    return await editor.wait_job(await start_completion(editor, uri, offset), timeout_ms=10000)


async def assert_still_serving(
    editor: Editor, stub: StubModelServer, uri: str = URI, *, model: str = "stub-fast"
) -> None:
    """A following completion on the same editor streams into the buffer and is ``done``."""
    before = editor.text(uri)
    at = before.index("return ") + len("return ")
    stub.script(Answer(text=GOOD))
    requests = len(chat_requests(stub))
    record = await complete(editor, uri, at)
    assert record["state"] == "done", record
    assert record["model"] == model, record
    assert "error" not in record, record
    assert editor.text(uri) == before[:at] + GOOD + before[at:]
    assert len(chat_requests(stub)) == requests + 1


def shown(editor: Editor) -> list[str]:
    """The ``window/showMessage`` texts the server sent so far."""
    return [m.message for m in editor.client.messages]


async def wait_shown(editor: Editor, needle: str, *, kind: types.MessageType) -> str:
    """Wait (bounded) for a ``window/showMessage`` of ``kind`` containing ``needle``."""

    async def arrived() -> str:
        while True:
            for message in editor.client.messages:
                if needle in message.message and message.type == kind:
                    return message.message
            await editor.client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)

    try:
        return await asyncio.wait_for(arrived(), HANG_GUARD)
    except TimeoutError:
        raise AssertionError(
            f"no {kind.name} message containing {needle!r}: {shown(editor)}"
        ) from None


def everything_said(editor: Editor, *extra: Any) -> str:
    """Every text the server showed, logged or reported, plus ``extra`` payloads, as one string."""
    parts = [m.message for m in editor.client.messages]
    parts += [m.message for m in editor.client.log_messages]
    parts += [json.dumps(s, default=str) for s in editor.statuses]
    parts += [json.dumps(x, default=str) for x in extra]
    return "\n".join(parts)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
