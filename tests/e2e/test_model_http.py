"""The model streams over the server's HTTP client (httpx, backends/network.py) against the
loopback stub over a real socket: the text exactly however the stub chunks it, the connection
kept for the next answer after the body's end, and every failure worded for the user (closed at
once on cancel, cut short, stalled, badly framed)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from fastedit_lsp.backends.base import BackendError, ChatMessage, ChatRequest, StreamInfo
from fastedit_lsp.backends.network import new_client, pool_counts
from fastedit_lsp.backends.openai import OpenAICompatibleBackend
from fastedit_lsp.backends.ratelimit import RateLimits
from fastedit_lsp.tools.stub import Answer, StubModelServer, split_tokens

TEXT = "def area(r):\n    return 3.14159 * r ** 2  # héllo 漢字 🙂\n"
REQUEST = ChatRequest(messages=(ChatMessage("user", "area"),), max_tokens=4096)


@pytest.fixture
async def client(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[httpx.AsyncClient]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("all_proxy", raising=False)
    async with new_client() as made:
        yield made


def backend(
    client: httpx.AsyncClient, stub: StubModelServer, timeout_ms: int = 10_000
) -> OpenAICompatibleBackend:
    return OpenAICompatibleBackend(
        client,
        provider="openai-compatible",
        base_url=stub.base_url,
        model="stub-fast",
        api_key=None,
        timeout_ms=timeout_ms,
        rate_limits=RateLimits(),
        backoff=lambda attempt: 0.0,
    )


async def answer(
    client: httpx.AsyncClient, stub: StubModelServer, **overrides: object
) -> tuple[str, StreamInfo]:
    info = StreamInfo()
    texts = [text async for text in backend(client, stub, **overrides).stream(REQUEST, info)]  # type: ignore[arg-type]
    return "".join(texts), info


@pytest.mark.parametrize(
    "shape",
    [
        {"chunk_per_event": True},  # one HTTP chunk per event, as providers flush
        {"chunk_per_event": False, "tps": 0},  # the whole answer in one chunk
        {"split_bytes": True},  # every byte its own chunk and write
        {"chunk_per_event": True, "tps": 2_000},  # paced: reads cut anywhere
    ],
)
async def test_the_text_arrives_exactly_and_the_connection_is_reused(
    client: httpx.AsyncClient, stub: StubModelServer, shape: dict[str, object]
) -> None:
    for _ in range(3):
        stub.script(Answer(text=TEXT, token_size=2, **shape))  # type: ignore[arg-type]
        text, info = await answer(client, stub)
        assert text == TEXT
        assert info.deltas == len(split_tokens(TEXT, 2))
        assert info.finish_reason == "stop"
    records = [r for r in stub.requests if r.path.endswith("/chat/completions")]
    assert all(r.completed and not r.client_closed for r in records)
    # Each body was read to its end: one connection for the three answers.
    assert len({r.connection for r in records}) == 1
    assert pool_counts(client) == {"open": 1, "idle": 1}


async def test_closing_the_stream_mid_body_closes_the_connection_at_once(
    client: httpx.AsyncClient, stub: StubModelServer
) -> None:
    stub.script(Answer(text="x" * 4000, token_size=1, tps=500, chunk_per_event=True))
    info = StreamInfo()
    stream = backend(client, stub).stream(REQUEST, info)
    assert await anext(stream) == "x"
    await stream.aclose()
    (record,) = stub.requests
    await asyncio.wait_for(stub.wait_closed(record), 5)
    assert record.client_closed and not record.completed
    # The next answer opens a new connection, and reads well.
    stub.script(Answer(text=TEXT, chunk_per_event=True))
    assert (await answer(client, stub))[0] == TEXT
    assert stub.requests[1].connection != record.connection


async def test_a_body_cut_short_says_the_answer_is_incomplete(
    client: httpx.AsyncClient, stub: StubModelServer
) -> None:
    stub.script(Answer(text=TEXT, drop_after=3, chunk_per_event=True))
    info = StreamInfo()
    texts: list[str] = []
    with pytest.raises(BackendError) as caught:
        async for text in backend(client, stub).stream(REQUEST, info):
            texts.append(text)
    assert caught.value.kind == "dropped"
    assert "incomplete" in caught.value.message
    assert "".join(texts) == "".join(split_tokens(TEXT)[:3])


async def test_a_stalled_body_times_out_after_timeout_ms(
    client: httpx.AsyncClient, stub: StubModelServer
) -> None:
    stub.script(Answer(text=TEXT, stall_after=2, chunk_per_event=True))
    with pytest.raises(BackendError) as caught:
        await answer(client, stub, timeout_ms=300)
    assert caught.value.kind == "timeout"
    assert "sent no data for 0.3 s (timeoutMs)" in caught.value.message
    (record,) = stub.requests
    await asyncio.wait_for(stub.wait_closed(record), 5)
    assert record.client_closed


async def test_bad_chunk_framing_is_a_dropped_connection(
    client: httpx.AsyncClient, stub: StubModelServer
) -> None:
    """A raw server whose chunk sizes are not hex: the answer cannot be trusted."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        await writer.drain()
        writer.write(b"zz\r\ndata: {}\n\n\r\n")
        await writer.drain()
        await reader.read()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        broken = OpenAICompatibleBackend(
            client,
            provider="openai-compatible",
            base_url=f"http://127.0.0.1:{port}/v1",
            model="m",
            api_key=None,
            timeout_ms=5_000,
            rate_limits=RateLimits(),
            backoff=lambda attempt: 0.0,
        )
        with pytest.raises(BackendError) as caught:
            async for _ in broken.stream(REQUEST, StreamInfo()):
                pass
        assert caught.value.kind == "dropped"
        assert "incomplete" in caught.value.message or "before an answer" in caught.value.message
    finally:
        server.close()
        await server.wait_closed()
