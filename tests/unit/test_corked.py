"""The HTTP client's connections hold a request's writes until the answer is read: one write."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpcore
import httpx
import pytest

from fastedit_lsp.backends import corked
from fastedit_lsp.backends.corked import CorkedStream
from fastedit_lsp.backends.factory import new_http_client


class Recorded(httpcore.AsyncNetworkStream):
    """A connection that records what is written to it and answers reads from a script."""

    def __init__(self, answers: list[bytes] | None = None) -> None:
        self.writes: list[tuple[bytes, float | None]] = []
        self.answers = answers or []
        self.closed = False
        self.tls: Recorded | None = None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        self.writes.append((buffer, timeout))

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        return self.answers.pop(0) if self.answers else b""

    async def aclose(self) -> None:
        self.closed = True

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> httpcore.AsyncNetworkStream:
        self.tls = Recorded()
        return self.tls

    def get_extra_info(self, info: str) -> Any:
        return f"info:{info}"


async def test_a_requests_headers_and_body_leave_in_one_write_when_the_answer_is_read() -> None:
    inner = Recorded([b"HTTP/1.1 200 OK\r\n"])
    stream = CorkedStream(inner)
    await stream.write(b"POST / HTTP/1.1\r\n\r\n", timeout=5.0)
    await stream.write(b"", timeout=5.0)
    await stream.write(b'{"model": "m"}', timeout=5.0)
    assert inner.writes == []
    assert await stream.read(100, timeout=5.0) == b"HTTP/1.1 200 OK\r\n"
    assert inner.writes == [(b'POST / HTTP/1.1\r\n\r\n{"model": "m"}', 5.0)]
    await stream.read(100)  # nothing more held: nothing more written
    assert len(inner.writes) == 1
    assert stream.get_extra_info("is_readable") == "info:is_readable"


async def test_a_large_body_is_written_once_the_limit_is_reached_and_closing_drops_the_rest() -> (
    None
):
    inner = Recorded()
    stream = CorkedStream(inner)
    body = b"x" * corked.HOLD_LIMIT
    await stream.write(b"head", timeout=1.0)
    await stream.write(body, timeout=1.0)
    assert inner.writes == [(b"head" + body, 1.0)]
    await stream.write(b"never sent")
    await stream.aclose()
    assert inner.closed and len(inner.writes) == 1


async def test_tls_starts_after_what_was_held_and_its_stream_holds_writes_too() -> None:
    inner = Recorded()
    stream = CorkedStream(inner)
    await stream.write(b"CONNECT example.test:443 HTTP/1.1\r\n\r\n")
    tls = await stream.start_tls(ssl.create_default_context(), "example.test")
    assert [w for w, _ in inner.writes] == [b"CONNECT example.test:443 HTTP/1.1\r\n\r\n"]
    assert isinstance(tls, CorkedStream) and inner.tls is not None
    await tls.write(b"GET / HTTP/1.1\r\n\r\n")
    assert inner.tls.writes == []
    await tls.read(10)
    assert [w for w, _ in inner.tls.writes] == [b"GET / HTTP/1.1\r\n\r\n"]


async def test_the_servers_http_client_connects_through_corked_streams() -> None:
    client = new_http_client()
    try:
        transport = client._transport  # what the server's requests go through
        assert isinstance(transport, httpx.AsyncHTTPTransport)
        pool = transport._pool
        assert isinstance(pool._network_backend, corked.CorkedBackend)
        assert pool._max_connections == 20 and pool._max_keepalive_connections == 10
    finally:
        await client.aclose()


class Server:
    """A local HTTP/1.1 server that counts its connections and answers each request."""

    def __init__(self) -> None:
        self.connections = 0
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> Server:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        for writer in self.writers:
            writer.close()
        self.server.close()
        await self.server.wait_closed()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        with contextlib.suppress(Exception):
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                await writer.drain()


@pytest.fixture(autouse=True)
async def _no_opened_ahead_left() -> AsyncIterator[None]:
    yield
    await corked.discard_opened_ahead()


async def until(condition: Any) -> None:
    async def poll() -> None:
        while not condition():  # noqa: ASYNC110 - a server's count, no event for it
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), 5)


async def fetch(url: str) -> str:
    """GET ``url`` with a new client of the server's kind; the answer's text."""
    client = new_http_client()
    try:
        return (await client.get(url)).text
    finally:
        await client.aclose()


async def test_the_first_request_takes_the_connection_opened_ahead() -> None:
    async with Server() as server:
        assert await corked.open_ahead(server.url)
        await until(lambda: server.connections == 1)
        client = new_http_client()
        try:
            first = await client.get(server.url + "/a")
            again = await client.get(server.url + "/b")
        finally:
            await client.aclose()
        assert first.text == again.text == "ok"
        assert server.connections == 1  # no new connection: the one opened ahead, kept alive


async def test_a_connection_the_server_closed_meanwhile_is_replaced() -> None:
    async with Server() as server:
        assert await corked.open_ahead(server.url)
        await until(lambda: len(server.writers) == 1)
        server.writers[0].close()  # e.g. the server's idle timeout
        [(_, prepared)] = corked._opened_ahead.values()
        await until(lambda: prepared.get_extra_info("is_readable"))  # its FIN arrived
        assert await fetch(server.url + "/a") == "ok"
        assert server.connections == 2


async def test_a_connection_opened_long_ago_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    async with Server() as server:
        assert await corked.open_ahead(server.url)
        monkeypatch.setattr(corked, "AHEAD_SECONDS", 0.0)
        assert await fetch(server.url + "/a") == "ok"
        assert server.connections == 2


async def test_nothing_is_opened_ahead_for_a_server_that_refuses_or_a_strange_url() -> None:
    async with Server() as server:
        url = server.url
    assert not await corked.open_ahead(url)  # closed: connection refused
    assert not await corked.open_ahead("ftp://127.0.0.1:21")
    assert not await corked.open_ahead("not a url at all ::")
    assert corked._opened_ahead == {}
