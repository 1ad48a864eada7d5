"""The HTTP client's connections hold a request's writes until the answer is read: one write."""

from __future__ import annotations

import ssl
from typing import Any

import httpcore
import httpx

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
