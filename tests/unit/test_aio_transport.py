"""The end of a model's answer seen as it arrives, on the server's client (aiohttp's wire under
httpx, :mod:`fastedit_lsp.backends.aio_transport`): a reader that waits at its own pace is woken
by the body's end (its :data:`~fastedit_lsp.backends.base.EndWatch`), not at its next read.

Real loopback sockets; the server holds the answer's rest until the test lets it go, so nothing
here depends on timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import httpx

from fastedit_lsp.backends.base import END_WATCH, EndWatch, StreamInfo
from fastedit_lsp.backends.network import new_client
from fastedit_lsp.backends.post import PacedReads, open_stream
from tests.support.harness import HANG_GUARD
from tests.support.network_servers import SSE_ANSWER, read_request, sse_response

#: The answer's first event, then (once let go) the rest and the end of the chunked body.
FIRST = b'data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}\n\n'
REST = (
    b'data: {"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@contextlib.asynccontextmanager
async def _held_response(go: asyncio.Event) -> AsyncIterator[httpx.Response]:
    """The server's client's response from a model server that sends the first event, waits
    for ``go``, then the rest and the body's last chunk, on a kept-alive connection."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while await read_request(reader) is not None:
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n" + _chunk(FIRST)
                )
                await writer.drain()
                await go.wait()
                writer.write(_chunk(REST) + b"0\r\n\r\n")
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with (
            new_client() as client,
            client.stream("POST", f"http://127.0.0.1:{port}/v1/chat/completions") as response,
        ):
            yield response
    finally:
        server.close()


async def test_a_waiting_reader_is_woken_by_the_bodys_end_and_at_once_after_it() -> None:
    go = asyncio.Event()
    async with _held_response(go) as response:
        body = response.aiter_bytes()
        assert await anext(body) == FIRST
        watch: EndWatch = response.extensions[END_WATCH]
        ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        stop = watch(lambda: ended.set_result(None))
        go.set()
        await asyncio.wait_for(ended, HANG_GUARD)  # woken by the end, no read pending
        stop()
        assert b"".join([part async for part in body]) == REST
        woken: list[bool] = []
        watch(lambda: woken.append(True))()  # the body has ended: woken at once
        assert woken == [True]


async def test_a_watch_stopped_before_the_end_wakes_nobody() -> None:
    go = asyncio.Event()
    async with _held_response(go) as response:
        body = response.aiter_bytes()
        await anext(body)
        woken: list[bool] = []
        response.extensions[END_WATCH](lambda: woken.append(True))()
        go.set()
        assert b"".join([part async for part in body]) == REST
        assert woken == []


async def test_paced_reads_hand_the_pace_the_end_watch_so_the_end_wakes_a_waiting_reader() -> None:
    """The consumer's pace waits for the end watch alone (no timer): the body is read whole only
    because :class:`PacedReads` handed the pace the transport's end watch and the end woke it."""
    go = asyncio.Event()
    woken_by_end: list[bool] = []

    async def pace(watch: EndWatch | None) -> None:
        assert watch is not None
        woke: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        stop = watch(lambda: _settle(woke))
        go.set()  # the rest is sent only while the consumer waits
        try:
            await asyncio.wait_for(woke, HANG_GUARD)
            woken_by_end.append(True)
        finally:
            stop()

    async with _held_response(go) as response:
        info = StreamInfo(pace=pace)
        info.deltas = 1  # text has arrived: reads are paced
        reads = PacedReads(response, info)
        received = b""
        while (raw := await reads.read()) is not None:
            received += raw
    assert received == FIRST + REST
    assert woken_by_end  # the first paced wait ended by the end watch (no timer in it)


async def test_the_consumer_hears_that_the_request_went_out_once_it_is_on_the_socket() -> None:
    """``StreamInfo.sent`` (the job's status goes to the editor then) comes after the request's
    bytes were written, not before them: aiohttp tells that the headers are sent when it buffers
    them, before it writes anything, and the editor's process, woken by the status first, held
    the model's request back. The server reads the request inside the callback, from a blocking
    socket the event loop does not serve: only bytes already written can be read there."""
    body = b'{"model":"m","stream":true}'
    heard: list[bytes] = []
    accepted: list[socket.socket] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def sent() -> None:
            conn, _ = listener.accept()  # connected already: the backlog holds it
            accepted.append(conn)
            conn.settimeout(HANG_GUARD)
            received = b""
            while not received.endswith(body) and (part := conn.recv(65536)):
                received += part
            heard.append(received)
            conn.sendall(sse_response())

        try:
            async with (
                new_client() as client,
                open_stream(
                    client,
                    f"http://127.0.0.1:{port}/v1/chat/completions",
                    body,
                    headers={"Content-Type": "application/json"},
                    timeout_s=30,
                    info=StreamInfo(sent=sent),
                ) as response,
            ):
                answer = b"".join([part async for part in response.aiter_bytes()])
        finally:
            for conn in accepted:
                conn.close()
    assert answer == SSE_ANSWER
    assert len(heard) == 1
    assert heard[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert heard[0].endswith(b"\r\n\r\n" + body)
