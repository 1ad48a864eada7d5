"""The stub model server, driven over loopback by httpx as a model client would drive a provider."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fastedit_lsp.tools.stub as stub_module
from fastedit_lsp.tools.stub import Answer, StubModelServer, split_tokens

# The directory holding fastedit_lsp, so the CLI subprocess imports this same copy.
PACKAGE_ROOT = str(Path(stub_module.__file__).resolve().parents[1])
CHAT_BODY: dict[str, Any] = {
    "model": "stub-fast",
    "messages": [{"role": "user", "content": "Complete the function."}],
    "stream": True,
}


@pytest.fixture
async def stub() -> AsyncIterator[StubModelServer]:
    async with await StubModelServer.start() as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0, connect=2.0)) as http_client:
        yield http_client


def sse_data(raw: bytes) -> list[str]:
    """The ``data:`` payloads of a well-formed SSE body, in order."""
    *events, rest = raw.decode().split("\n\n")
    assert rest == ""
    assert all(event.startswith("data: ") for event in events), events
    return [event.removeprefix("data: ") for event in events]


def chunks(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(data) for data in sse_data(raw) if data != "[DONE]"]


def contents(raw: bytes) -> list[str]:
    """The content deltas, without the role chunk."""
    out = []
    for chunk in chunks(raw):
        for choice in chunk["choices"]:
            delta = choice["delta"]
            if "content" in delta and "role" not in delta:
                out.append(delta["content"])
    return out


def finish_reasons(raw: bytes) -> list[str]:
    return [
        choice["finish_reason"]
        for chunk in chunks(raw)
        for choice in chunk["choices"]
        if choice["finish_reason"] is not None
    ]


async def stream_raw(
    client: httpx.AsyncClient, stub: StubModelServer, **body: Any
) -> tuple[httpx.Response, bytes]:
    async with client.stream(
        "POST", f"{stub.base_url}/chat/completions", json={**CHAT_BODY, **body}
    ) as response:
        return response, await response.aread()


async def test_streamed_text_round_trips_to_scripted_text(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    text = "def f():\r\n    return 'é👩‍💻🇫🇷'\n"
    stub.script(Answer(text=text, tps=1000))

    response, raw = await stream_raw(client, stub, model="stub-strong")

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["transfer-encoding"] == "chunked"
    assert "".join(contents(raw)) == text
    assert finish_reasons(raw) == ["stop"]
    assert sse_data(raw)[-1] == "[DONE]"
    assert {chunk["model"] for chunk in chunks(raw)} == {"stub-strong"}
    assert {chunk["object"] for chunk in chunks(raw)} == {"chat.completion.chunk"}
    (record,) = stub.requests
    assert record.completed
    assert not record.client_closed
    assert record.tokens_sent == len(split_tokens(text))
    assert record.body["model"] == "stub-strong"


async def test_each_token_is_its_own_event_after_a_role_chunk(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["a", "bc", "\r", "\nd"]))

    _, raw = await stream_raw(client, stub)

    first = chunks(raw)[0]["choices"][0]
    assert first["delta"] == {"role": "assistant", "content": ""}
    assert contents(raw) == ["a", "bc", "\r", "\nd"]


def test_split_tokens_cuts_every_crlf_in_two() -> None:
    tokens = split_tokens("ab\r\ncd\r\n\r\nx", size=3)

    assert "".join(tokens) == "ab\r\ncd\r\n\r\nx"
    assert tokens == ["ab\r", "\ncd", "\r", "\n\r", "\nx"]


def test_split_tokens_cuts_inside_grapheme_clusters() -> None:
    combining = "abe\u0301"  # e + COMBINING ACUTE ACCENT
    zwj = "x\U0001f469\u200d\U0001f4bb"  # WOMAN ZWJ LAPTOP
    flag = "ab\U0001f1eb\U0001f1f7"  # regional indicators F, R

    assert split_tokens(combining) == ["abe", "\u0301"]
    assert split_tokens(zwj) == ["x\U0001f469\u200d", "\U0001f4bb"]
    assert split_tokens(flag) == ["ab\U0001f1eb", "\U0001f1f7"]
    assert split_tokens("e\u0301\u0301", size=1) == ["e", "\u0301", "\u0301"]
    assert Answer(text="e\u0301x", token_size=1).token_list() == ["e", "\u0301", "x"]


@given(st.text(alphabet=st.sampled_from("ab\r\n\u0301\u200d👩")), st.integers(1, 5))
def test_split_tokens_joins_back_and_never_keeps_a_crlf_together(text: str, size: int) -> None:
    tokens = split_tokens(text, size)

    assert "".join(tokens) == text
    assert all(0 < len(token) <= size for token in tokens)
    assert not any("\r\n" in token for token in tokens)
    assert split_tokens(text, size, split_crlf=False) == [
        text[i : i + size] for i in range(0, len(text), size)
    ]


async def test_usage_only_chunk_has_empty_choices_when_requested(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["x", "y", "z"]), Answer(tokens=["x"]))

    _, with_usage = await stream_raw(client, stub, stream_options={"include_usage": True})
    _, without_usage = await stream_raw(client, stub)

    *content_chunks, usage_chunk = chunks(with_usage)
    assert usage_chunk["choices"] == []
    usage = usage_chunk["usage"]
    assert usage["completion_tokens"] == 3
    assert usage["total_tokens"] == usage["prompt_tokens"] + 3
    assert all(chunk["usage"] is None for chunk in content_chunks)
    assert all(chunk["choices"] and "usage" not in chunk for chunk in chunks(without_usage))


@pytest.mark.parametrize("limit_field", ["max_tokens", "max_completion_tokens"])
async def test_token_limit_truncates_with_finish_reason_length(
    stub: StubModelServer, client: httpx.AsyncClient, limit_field: str
) -> None:
    stub.script(Answer(tokens=["a", "b", "c", "d"]), Answer(tokens=["a", "b"]))

    _, truncated = await stream_raw(client, stub, **{limit_field: 2})
    _, exact = await stream_raw(client, stub, **{limit_field: 2})

    assert contents(truncated) == ["a", "b"]
    assert finish_reasons(truncated) == ["length"]
    assert finish_reasons(exact) == ["stop"]
    assert stub.requests[0].finish_reason == "length"


async def test_non_streaming_request_gets_one_chat_completion(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(text="return 1\n"))

    response = await client.post(
        f"{stub.base_url}/chat/completions", json={**CHAT_BODY, "stream": False}
    )

    assert response.headers["content-type"] == "application/json"
    completion = response.json()
    assert completion["object"] == "chat.completion"
    assert completion["choices"][0]["message"] == {"role": "assistant", "content": "return 1\n"}
    assert completion["choices"][0]["finish_reason"] == "stop"
    assert completion["usage"]["completion_tokens"] == len(split_tokens("return 1\n"))


async def test_rate_limit_answer_has_retry_after_and_openai_error_body(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(
        Answer(status=429, headers={"retry-after": "2"}),
        Answer(status=429, error_type="insufficient_quota", error_code="insufficient_quota"),
        Answer(status=500, error_body={"detail": "boom"}),
    )

    rate_limited, _ = await stream_raw(client, stub)
    quota, _ = await stream_raw(client, stub)
    custom, _ = await stream_raw(client, stub)

    assert rate_limited.status_code == 429
    assert rate_limited.headers["retry-after"] == "2"
    assert rate_limited.headers["content-type"] == "application/json"
    error = rate_limited.json()["error"]
    assert error["code"] == "rate_limit_exceeded"
    assert isinstance(error["message"], str)
    assert "type" in error
    assert quota.json()["error"]["code"] == "insufficient_quota"
    assert quota.json()["error"]["type"] == "insufficient_quota"
    assert custom.status_code == 500
    assert custom.json() == {"detail": "boom"}


async def test_drop_after_closes_the_socket_mid_stream(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["a", "b", "c", "d"], drop_after=2))
    received: list[str] = []

    with pytest.raises(httpx.RemoteProtocolError):
        async with client.stream(
            "POST", f"{stub.base_url}/chat/completions", json=CHAT_BODY
        ) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    received.append(line)

    assert len(received) == 3  # the role chunk and two tokens
    (record,) = await stub.wait_for_requests(1)
    await stub.wait_closed(record)
    assert record.tokens_sent == 2
    assert not record.completed
    assert not record.client_closed


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("bad_json", b'data: {"object":"chat.completion.chunk","choices":[{"index":0,'),
        ("no_data_prefix", b'\n\n{"id":"chatcmpl-stub'),
        ("binary", b"\n\ndata: \xff\xfe"),
        ("error_event", b'\n\ndata: {"error":{"message":'),
    ],
)
async def test_malformed_kinds_appear_on_the_wire(
    stub: StubModelServer, client: httpx.AsyncClient, kind: str, expected: bytes
) -> None:
    stub.script(
        Answer(tokens=["a", "b", "c"], malformed=kind, malformed_after=1),  # type: ignore[arg-type]
        Answer(tokens=["a", "b", "c"], malformed=kind, malformed_continue=True),  # type: ignore[arg-type]
    )

    response, ended = await stream_raw(client, stub)
    _, continued = await stream_raw(client, stub)

    assert response.status_code == 200
    assert expected in ended
    assert b"[DONE]" not in ended
    assert b'"content":"a"' in ended
    assert b'"content":"b"' not in ended
    assert expected.strip(b"\n") in continued
    assert continued.endswith(b"data: [DONE]\n\n")
    assert stub.requests[0].completed


async def test_split_bytes_sends_one_byte_per_chunk_and_parses_to_the_same_text(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    text = "é\r\n👩‍💻 ok"
    stub.script(Answer(text=text, split_bytes=True))

    async with client.stream(
        "POST", f"{stub.base_url}/chat/completions", json=CHAT_BODY
    ) as response:
        pieces = [piece async for piece in response.aiter_raw()]

    assert {len(piece) for piece in pieces} == {1}
    assert "".join(contents(b"".join(pieces))) == text


async def test_client_closing_mid_stream_is_recorded(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["a", "b", "c", "d"], stall_after=2))
    received: list[str] = []

    async with client.stream(
        "POST", f"{stub.base_url}/chat/completions", json=CHAT_BODY
    ) as response:
        async for line in response.aiter_lines():
            received.append(line)
            if '"content":"b"' in line:
                break

    (record,) = await stub.wait_for_requests(1)
    await stub.wait_closed(record)
    assert record.client_closed
    assert not record.completed
    assert record.tokens_sent == 2
    assert record.closed_at is not None
    assert record.ended_at is not None
    assert record.done.is_set()


async def test_a_held_stream_sends_nothing_more_until_released(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["a", "b", "c"], hold_after=1, role_chunk=False))
    received: list[str] = []
    async with client.stream(
        "POST", f"{stub.base_url}/chat/completions", json=CHAT_BODY
    ) as response:
        lines = response.aiter_lines()
        async for line in lines:
            received.append(line)
            if '"content":"a"' in line:
                break
        (record,) = await stub.wait_for_requests(1)
        assert record.tokens_sent == 1 and not record.done.is_set()
        record.release.set()
        received += [line async for line in lines]
    contents = [line for line in received if '"content"' in line]
    assert [c.split('"content":"')[1][0] for c in contents] == ["a", "b", "c"]
    await stub.wait_closed(record)
    assert record.completed and record.tokens_sent == 3


async def test_a_stream_held_twice_goes_on_at_each_release(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["a", "b", "c", "d"], hold_after=[1, 3], role_chunk=False))
    seen: list[str] = []
    async with client.stream(
        "POST", f"{stub.base_url}/chat/completions", json=CHAT_BODY
    ) as response:
        lines = response.aiter_lines()
        (record,) = await stub.wait_for_requests(1)
        for wanted, sent in (("a", 1), ("c", 3)):
            async for line in lines:
                if '"content"' in line:
                    seen.append(line.split('"content":"')[1][0])
                if f'"content":"{wanted}"' in line:
                    break
            assert record.tokens_sent == sent and not record.done.is_set()
            stub.release()  # as a test in another thread calls it
        seen += [line.split('"content":"')[1][0] async for line in lines if '"content"' in line]
    assert seen == ["a", "b", "c", "d"]
    await stub.wait_closed(record)
    assert record.completed


async def test_client_leaving_a_paced_stream_is_seen_before_the_stream_ends(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    # 100 tokens at 20 tok/s would take 5 s; the client leaves after the first one.
    stub.script(Answer(text="x" * 300, tps=20))

    async with client.stream(
        "POST", f"{stub.base_url}/chat/completions", json=CHAT_BODY
    ) as response:
        async for line in response.aiter_lines():
            if '"content":"xxx"' in line:
                break

    (record,) = await stub.wait_for_requests(1)
    await stub.wait_closed(record)
    assert record.client_closed
    assert 1 <= record.tokens_sent < 100


async def test_client_leaving_before_the_first_token_is_seen_without_waiting_out_ttft(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(ttft=600))

    async with client.stream(
        "POST", f"{stub.base_url}/chat/completions", json=CHAT_BODY
    ) as response:
        assert response.status_code == 200  # the headers came at once

    (record,) = await stub.wait_for_requests(1)
    await stub.wait_closed(record)
    assert record.client_closed
    assert record.tokens_sent == 0


async def test_cancelling_a_client_waiting_for_slow_headers_closes_the_connection(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(header_delay=600))
    task = asyncio.create_task(client.post(f"{stub.base_url}/chat/completions", json=CHAT_BODY))

    (record,) = await stub.wait_for_requests(1)
    task.cancel()
    await stub.wait_closed(record)

    assert record.client_closed
    assert record.status is None
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_close_ends_open_streams_and_the_client_sees_it(
    client: httpx.AsyncClient,
) -> None:
    server = await StubModelServer.start()
    server.script(Answer(tokens=["a", "b"], stall_after=1))

    with pytest.raises(httpx.RemoteProtocolError):
        async with client.stream(
            "POST", f"{server.base_url}/chat/completions", json=CHAT_BODY
        ) as response:
            async for line in response.aiter_lines():
                if '"content":"a"' in line:
                    await server.close()

    (record,) = server.requests
    assert record.done.is_set()
    assert not record.completed
    assert not record.client_closed


async def test_models_lists_the_configured_ids(client: httpx.AsyncClient) -> None:
    async with await StubModelServer.start(models=("fast-1", "strong-2")) as server:
        response = await client.get(f"{server.base_url}/models")

    assert response.status_code == 200
    listing = response.json()
    assert listing["object"] == "list"
    assert [model["id"] for model in listing["data"]] == ["fast-1", "strong-2"]
    assert {model["object"] for model in listing["data"]} == {"model"}


async def test_scripted_answers_are_served_in_order_then_the_default(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.default = Answer(text="default")
    stub.script(Answer(text="one"), Answer(text="two"))

    texts = ["".join(contents((await stream_raw(client, stub))[1])) for _ in range(4)]

    assert texts == ["one", "two", "default", "default"]
    assert len({record.connection for record in stub.requests}) == 1  # keep-alive


async def test_control_endpoints_script_record_and_reset(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    control = stub.base_url.removesuffix("/v1") + "/_stub"

    queued = await client.post(
        f"{control}/script",
        json=[{"tokens": ["he", "llo"]}, {"status": 429, "headers": {"retry-after": "1"}}],
    )
    _, first = await stream_raw(client, stub)
    second, _ = await stream_raw(client, stub)
    recorded = (await client.get(f"{control}/requests")).json()
    rejected = await client.post(f"{control}/script", json=[{"txt": "typo"}])
    invalid = await client.post(f"{control}/script", json=[{"malformed": "nope"}])
    default = await client.post(f"{control}/default", json={"text": "from default"})
    reset = await client.post(f"{control}/reset")
    _, third = await stream_raw(client, stub)

    assert queued.json() == {"queued": 2}
    assert contents(first) == ["he", "llo"]
    assert second.status_code == 429
    assert [r["status"] for r in recorded] == [200, 429]
    assert recorded[0]["body"]["messages"] == CHAT_BODY["messages"]
    assert recorded[0]["completed"] is True
    assert recorded[0]["tokens_sent"] == 2
    assert rejected.status_code == 400
    assert "txt" in rejected.json()["error"]["message"]
    assert invalid.status_code == 400
    assert default.status_code == 200
    assert reset.json() == {"ok": True}
    assert "".join(contents(third)) == "from default"
    assert [r.path for r in stub.requests] == ["/v1/chat/completions"]


async def test_unknown_route_and_bad_body_get_openai_errors(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    missing = await client.get(f"{stub.base_url}/nothing")
    bad_body = await client.post(f"{stub.base_url}/chat/completions", content=b"not json")

    assert missing.status_code == 404
    assert "message" in missing.json()["error"]
    assert bad_body.status_code == 400
    assert bad_body.json()["error"]["type"] == "invalid_request_error"


def test_answer_rejects_bad_knobs() -> None:
    with pytest.raises(ValueError, match="malformed"):
        Answer(malformed="nope")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tps"):
        Answer(tps=-1)
    with pytest.raises(ValueError, match="unknown answer fields: colour"):
        Answer.from_json({"colour": "red"})


def test_start_in_thread_serves_synchronous_callers() -> None:
    server, stop = StubModelServer.start_in_thread(default=Answer(text="threaded"))
    try:
        with httpx.Client(timeout=10.0) as sync_client:
            models = sync_client.get(f"{server.base_url}/models")
            completion = sync_client.post(
                f"{server.base_url}/chat/completions", json={**CHAT_BODY, "stream": False}
            )
    finally:
        stop()
    stop()  # idempotent

    assert models.status_code == 200
    assert completion.json()["choices"][0]["message"]["content"] == "threaded"
    assert [record.path for record in server.requests] == ["/v1/models", "/v1/chat/completions"]


async def test_cli_prints_its_base_url_and_serves_the_given_text(
    client: httpx.AsyncClient,
) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")]),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "fastedit_lsp.tools.stub",
        "--port",
        "0",
        "--text",
        "from the cli",
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), timeout=30)).decode()
        assert line.startswith("listening on http://127.0.0.1:")
        base_url = line.split()[-1]
        async with client.stream(
            "POST", f"{base_url}/chat/completions", json=CHAT_BODY
        ) as response:
            raw = await response.aread()
    finally:
        process.terminate()
        await process.wait()

    assert base_url.endswith("/v1")
    assert "".join(contents(raw)) == "from the cli"
