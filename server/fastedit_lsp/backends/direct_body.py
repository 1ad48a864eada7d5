"""A streamed response's body, read straight from its connection when that is plain HTTP/1.1.

httpx reads a body through httpcore and h11: each HTTP chunk becomes an h11 event passed up
through five generators, about 10 µs of CPU per chunk, and hosted providers flush one chunk per
token (20,000 a second from a fast model). For a chunked HTTP/1.1 response this module reads the
body from the connection's ``network_stream`` (an httpcore response extension) and decodes it
with :class:`~.chunked.ChunkedDecoder`, a whole read at a time. httpx still does everything
else: the connection (pool, TLS, no proxies), the request, the status and headers, the timeouts
of those, and closing the response (which closes the connection when the body was not read to
its end: a cancel closes it at once, as before).

To give a connection whose body was read here back to the pool, h11 (which holds the bytes
that came with the headers, and its state) is told the body ended: it is fed the bytes that end
a chunked body from where its buffer stops (:meth:`~.chunked.ChunkedDecoder.ending`) and reads
them to ``EndOfMessage``. Anything unexpected there leaves h11 mid-body, and httpcore then
closes the connection instead of reusing it.

Reaching h11's connection needs four private attributes of httpx and httpcore (their versions
are bounded in pyproject.toml); whenever anything differs (HTTP/2, a compressed body, a body
with a length, a transport without a network stream such as the tests' ``MockTransport``,
another httpcore) the body is read with httpx's ``aiter_bytes`` as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import h11
import httpcore
import httpx

from .chunked import ChunkedDecoder, ChunkedError

#: At most this much is read from the socket at a time (httpcore reads as much).
READ_BYTES = 64 * 1024


def body_bytes(response: httpx.Response, read_timeout: float | None) -> AsyncIterator[bytes]:
    """The body of ``response`` (not read yet), read directly when possible (module docstring);
    raises httpx's exceptions either way (``ReadTimeout`` after ``read_timeout`` seconds of
    silence, ``RemoteProtocolError`` for a body cut short or badly framed)."""
    connection = _h11_connection(response)
    if connection is None:
        return response.aiter_bytes()
    return _direct(response.extensions["network_stream"], connection, read_timeout)


def reads_directly(response: httpx.Response) -> bool:
    """Whether :func:`body_bytes` reads ``response``'s body directly."""
    return _h11_connection(response) is not None


def _h11_connection(response: httpx.Response) -> h11.Connection | None:
    """h11's side of the response's connection, when its body can be read directly."""
    if (
        response.http_version != "HTTP/1.1"
        or response.is_stream_consumed
        or response.is_closed
        or response.headers.get("transfer-encoding", "").strip().lower() != "chunked"
        or response.headers.get("content-encoding", "identity").strip().lower() != "identity"
    ):
        return None
    network = response.extensions.get("network_stream")
    # httpx's BoundAsyncStream → its AsyncResponseStream → httpcore's PoolByteStream → its
    # HTTP11ConnectionByteStream → the AsyncHTTP11Connection.
    stream: Any = response.stream
    for name in ("_stream", "_httpcore_stream", "_stream", "_connection"):
        stream = getattr(stream, name, None)
    connection = getattr(stream, "_h11_state", None)
    if (
        network is None
        or getattr(stream, "_network_stream", None) is not network
        or not isinstance(connection, h11.Connection)
        or connection.their_state is not h11.SEND_BODY
    ):
        return None
    return connection


async def _direct(
    network: httpcore.AsyncNetworkStream, connection: h11.Connection, read_timeout: float | None
) -> AsyncIterator[bytes]:
    decoder = ChunkedDecoder()
    # The bytes that came with the headers stay in h11's buffer; the ending is computed from
    # where they stop.
    head, _ = connection.trailing_data
    payload = _decode(decoder, head)
    ending = decoder.ending()
    if payload:
        yield payload
    while not decoder.done:
        try:
            data = await network.read(READ_BYTES, timeout=read_timeout)
        except httpcore.ReadTimeout as exc:
            raise httpx.ReadTimeout(str(exc)) from exc
        except httpcore.ReadError as exc:
            raise httpx.ReadError(str(exc)) from exc
        if not data:
            # h11's words for it, which httpx would have raised.
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body "
                "(incomplete chunked read)"
            )
        if payload := _decode(decoder, data):
            yield payload
    if ending is not None and not decoder.extra:
        _end_body(connection, ending)


def _decode(decoder: ChunkedDecoder, data: bytes) -> bytes:
    try:
        return decoder.feed(data) if data else b""
    except ChunkedError as exc:
        raise httpx.RemoteProtocolError(str(exc)) from None


def _end_body(connection: h11.Connection, ending: bytes) -> None:
    """Let h11 read its buffer and ``ending`` to the body's end (then the connection is reused);
    if it disagrees, it stays mid-body and the connection is closed with the response."""
    try:
        if ending:
            connection.receive_data(ending)
        while isinstance(connection.next_event(), h11.Data):
            pass
    except h11.RemoteProtocolError:
        pass
