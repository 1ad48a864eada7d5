"""Every backend failure ends the job clearly, tells the user, and leaves the server serving.

The real server talks to the loopback stub model, scripted to fail the way providers do: HTTP
errors, a closed port, a stalled or dropped stream, malformed events, a wrong content type. Each
test checks the job record (``failed`` with an error naming the problem), the
``window/showMessage`` the user sees, and that a following job on the same editor succeeds.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer, split_tokens
from tests.support.errors import (
    CURSOR,
    GOOD,
    TEXT,
    URI,
    assert_still_serving,
    chat_requests,
    closed_port,
    complete,
    everything_said,
    wait_shown,
)
from tests.support.harness import Editor

from .conftest import MakeEditor

SECRET = "sk-test-SECRET-1234567890"
ERROR = types.MessageType.Error


@pytest.fixture
def make_editor(make_editor: MakeEditor) -> MakeEditor:
    """Editors without failover: these tests pin what one profile's failure looks like
    (failover has tests of its own, in test_failover.py)."""

    async def make(**kw: Any) -> Editor:
        init = dict(kw.pop("init_options", None) or {})
        init.setdefault("failover", [])
        return await make_editor(init_options=init, **kw)

    return make


@pytest.fixture
async def editor(make_editor: MakeEditor) -> Editor:
    return await make_editor()


async def failed_job(editor: Editor) -> dict[str, Any]:
    """Run completeRest on the open sample; check it failed and the user was told."""
    record = await complete(editor)
    assert record["state"] == "failed", record
    assert record["error"], record
    await wait_shown(editor, record["error"], kind=ERROR)
    return record


# -- authentication: the message points at the key variable, never at the key --------------------


async def test_auth_failures_name_the_key_variable_never_the_key(
    make_editor: MakeEditor, stub: StubModelServer, capfd: pytest.CaptureFixture[str]
) -> None:
    editor = await make_editor(env={"FASTEDIT_FAST_API_KEY": SECRET})
    editor.open(URI, TEXT)
    records: list[dict[str, Any]] = []
    for status in (401, 403):
        # Providers echo (part of) a bad key back in their message: it must be scrubbed.
        stub.script(Answer(status=status, error_message=f"Incorrect API key provided: {SECRET}."))
        record = await failed_job(editor)
        assert f"HTTP {status}" in record["error"], record
        assert "API key" in record["error"], record
        assert "FASTEDIT_FAST_API_KEY" in record["error"], record
        assert editor.text(URI) == TEXT
        # The key went to the configured host.
        assert chat_requests(stub)[-1].headers["authorization"] == f"Bearer {SECRET}"
        records.append(record)
    assert len(chat_requests(stub)) == 2  # an auth failure is not retried

    await assert_still_serving(editor, stub)
    status_reply = await editor.command("fastedit.status")
    # The server's own log (stderr, forwarded by pytest-lsp) is a log too.
    said = everything_said(editor, records, status_reply) + capfd.readouterr().err
    assert SECRET not in said
    assert SECRET[8:] not in said  # not even a tail of it


# -- the model or the plan -----------------------------------------------------------------------


async def test_unknown_model_404_says_the_model_is_unknown(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, TEXT)
    stub.script(Answer(status=404))
    record = await failed_job(editor)
    assert "HTTP 404" in record["error"]
    assert "stub-fast" in record["error"]
    assert "model" in record["error"]
    assert len(chat_requests(stub)) == 1
    assert editor.text(URI) == TEXT
    await assert_still_serving(editor, stub)


async def test_rate_limit_blocks_that_model_only_without_sending(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, TEXT)
    stub.script(Answer(status=429, headers={"retry-after": "30"}))
    record = await failed_job(editor)
    assert "HTTP 429" in record["error"]
    assert "rate-limit" in record["error"]
    assert "30 s" in record["error"]
    assert len(chat_requests(stub)) == 1

    # Right after: refused by the server itself, nothing reaches the model.
    again = await failed_job(editor)
    assert "429" in again["error"] and "paused" in again["error"], again
    assert len(chat_requests(stub)) == 1
    assert editor.text(URI) == TEXT

    # The standard profile is another model on the same host: not blocked.
    assert await editor.command("fastedit.setMode", {"mode": "standard"}) == {"mode": "standard"}
    await assert_still_serving(editor, stub, model="stub-strong")
    assert chat_requests(stub)[-1].body["model"] == "stub-strong"


async def test_quota_429_is_reported_as_quota_and_does_not_block(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, TEXT)
    stub.script(
        Answer(status=429, error_code="insufficient_quota", error_type="insufficient_quota")
    )
    record = await failed_job(editor)
    assert "HTTP 429" in record["error"]
    assert "quota" in record["error"]
    assert "rate-limited" not in record["error"]
    assert len(chat_requests(stub)) == 1
    # Not a rate-limit window: the same model is asked again at once.
    await assert_still_serving(editor, stub)
    assert len(chat_requests(stub)) == 2


# -- server errors: bounded retries ----------------------------------------------------------------


async def test_server_errors_are_retried_a_bounded_number_of_times(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, TEXT)
    good = stub.default
    # Every attempt fails, with each 5xx in turn, then 503 for as long as the server keeps asking.
    stub.script(Answer(status=500), Answer(status=502))
    stub.default = Answer(status=503)
    record = await failed_job(editor)
    statuses = [r.status for r in chat_requests(stub)]
    assert statuses[:2] == [500, 502], "a 500 and a 502 are retried"
    assert len(statuses) <= 3, f"{len(statuses)} requests for one job"
    assert f"HTTP {statuses[-1]}" in record["error"], record
    assert "server error" in record["error"], record
    assert f"after {len(statuses)} attempts" in record["error"], record
    assert editor.text(URI) == TEXT
    stub.default = good
    await assert_still_serving(editor, stub)
    editor.delete(URI, CURSOR, CURSOR + len(GOOD))

    # A 503 followed by a good answer: the retry succeeds, the user sees no error.
    messages = len(editor.client.messages)
    before = len(chat_requests(stub))
    stub.script(Answer(status=503), Answer(text=GOOD))
    record = await complete(editor)
    assert record["state"] == "done", record
    assert editor.text(URI) == TEXT[:CURSOR] + GOOD + TEXT[CURSOR:]
    assert [r.status for r in chat_requests(stub)[before:]] == [503, 200]
    assert len(editor.client.messages) == messages


# -- transport failures ------------------------------------------------------------------------


async def test_connection_refused_names_the_url(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    editor = await make_editor(
        model=False,
        env={
            "FASTEDIT_FAST_BASE_URL": url,
            "FASTEDIT_FAST_MODEL": "stub-fast",
            "FASTEDIT_STANDARD_BASE_URL": stub.base_url,
            "FASTEDIT_STANDARD_MODEL": "stub-strong",
        },
    )
    editor.open(URI, TEXT)
    record = await failed_job(editor)
    assert "connect" in record["error"].lower()
    assert url in record["error"]
    assert editor.text(URI) == TEXT
    assert chat_requests(stub) == []
    # The standard profile still points at the stub.
    await editor.command("fastedit.setMode", {"mode": "standard"})
    await assert_still_serving(editor, stub, model="stub-strong")


async def test_stalled_stream_times_out_after_timeout_ms(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    # The silence allowed is what the first two tokens must come within too: at 0.5 s a loaded
    # soak (load 5.3, the stub in the test's own process) once timed out before the first one.
    editor = await make_editor(init_options={"profiles": {"fast": {"timeoutMs": 2000}}})
    editor.open(URI, TEXT)
    tokens = split_tokens(GOOD)
    stub.script(Answer(text=GOOD, stall_after=2))
    record = await failed_job(editor)
    assert "timeoutMs" in record["error"]
    assert "2 s" in record["error"]
    (request,) = chat_requests(stub)
    await stub.wait_closed(request)
    assert request.client_closed  # the server hung up the stalled stream
    # What arrived before the stall stays, exactly.
    assert editor.text(URI) == TEXT[:CURSOR] + "".join(tokens[:2]) + TEXT[CURSOR:]
    await assert_still_serving(editor, stub)


async def test_dropped_stream_keeps_exactly_what_arrived(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, TEXT)
    tokens = split_tokens(GOOD)
    stub.script(Answer(text=GOOD, drop_after=2))
    record = await failed_job(editor)
    (request,) = chat_requests(stub)
    assert request.tokens_sent == 2
    arrived = "".join(tokens[:2])
    assert editor.text(URI) == TEXT[:CURSOR] + arrived + TEXT[CURSOR:]
    assert "dropped" in record["error"]
    assert "incomplete" in record["error"]
    assert record["metrics"]["edits"] >= 1
    # The partial answer is the job's: one revert takes it out again.
    assert await editor.command("fastedit.revert", {"jobId": record["jobId"]}) == {"reverted": True}
    assert editor.text(URI) == TEXT
    await assert_still_serving(editor, stub)


# -- malformed answers -------------------------------------------------------------------------


async def test_malformed_answers_fail_the_job(editor: Editor, stub: StubModelServer) -> None:
    editor.open(URI, TEXT)
    first = split_tokens(GOOD)[0]
    cases: list[tuple[Answer, str, str]] = [
        # (answer, what the error says, what the buffer gets)
        (Answer(text=GOOD, malformed="bad_json", malformed_after=1), "malformed stream", first),
        (
            Answer(
                text=GOOD,
                malformed="error_event",
                malformed_after=1,
                error_message="the model crashed",
            ),
            "reported an error mid-stream: the model crashed",
            first,
        ),
        (Answer(text=GOOD, content_type="application/json"), "application/json instead", ""),
        (Answer(text=GOOD, content_type="text/html; charset=utf-8"), "text/html", ""),
    ]
    for answer, says, kept in cases:
        stub.script(answer)
        record = await failed_job(editor)
        assert says in record["error"], record
        if answer.content_type:
            assert "event stream" in record["error"], record
        # Only the text before the bad event reached the buffer.
        assert editor.text(URI) == TEXT[:CURSOR] + kept + TEXT[CURSOR:], record
        await assert_still_serving(editor, stub)
        editor.delete(URI, CURSOR, CURSOR + len(kept) + len(GOOD))


# -- what the user sees, and only that ----------------------------------------------------------


async def test_a_job_ending_before_progress_is_created_shows_only_its_own_error(
    editor: Editor, stub: StubModelServer
) -> None:
    # An editor slow to answer window/workDoneProgress/create (any editor, for a job that fails
    # at once: a rate-limited model, a refused connection, an instant 4xx).
    features: dict[str, Any] = editor.client.protocol.fm.features
    answer = features[types.WINDOW_WORK_DONE_PROGRESS_CREATE]
    release = asyncio.Event()

    async def slow_create(params: types.WorkDoneProgressCreateParams) -> None:
        await release.wait()
        answer(params)

    features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = slow_create
    editor.open(URI, TEXT)
    stub.script(Answer(status=404))
    record = await failed_job(editor)  # finished while progress creation is pending
    release.set()
    # The second request leaves after the first reply, so the create reply is ahead of it.
    await editor.command("fastedit.status")
    await editor.command("fastedit.status")
    errors = [m.message for m in editor.client.messages if m.type == ERROR]
    assert errors == [f"fastedit: {record['error']}"]
    await assert_still_serving(editor, stub)


async def test_a_redirect_to_another_host_is_not_followed_and_the_key_stays_home(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    async with await StubModelServer.start() as elsewhere:
        editor = await make_editor(env={"FASTEDIT_FAST_API_KEY": SECRET})
        editor.open(URI, TEXT)
        stub.script(
            Answer(status=307, headers={"location": f"{elsewhere.base_url}/chat/completions"})
        )
        record = await complete(editor)
        assert record["state"] == "failed"
        assert elsewhere.requests == []
        assert len(chat_requests(stub)) == 1
