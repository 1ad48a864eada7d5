"""A real HTTP/1.1 server on 127.0.0.1 that answers each request with a handler's
``httpx.Response``, as ``httpx.MockTransport`` does, but over a socket: the backend's own client
(``backends/wire.py``) writes the request and reads the answer as it would from a provider.

The wire reaches it for any origin (``https://api.example.test`` included, without TLS) through
:meth:`LoopbackHTTP.opener`. A body given as bytes goes out with its length; a body given as an
async iterator goes out chunked, one HTTP chunk per item, each written before the next is asked
for. What a handler raises stands for what a server does:

- ``httpx.ReadTimeout`` (raised by the handler, or by its body's iterator): the server goes
  silent, until the client closes the connection;
- any other exception: the server closes the connection there and then (before the answer, or
  in the middle of its body).

:attr:`LoopbackHTTP.hung_up` counts the connections the client closed while the server was still
sending a body or silent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, Callable
from typing import Any

import httpx

from fastedit_lsp.backends import wire

Handler = Callable[[httpx.Request], httpx.Response]


class LoopbackHTTP:
    """``async with LoopbackHTTP(handler) as server``: serving until the block ends."""

    def __init__(self, handler: Handler, scheme: str = "https") -> None:
        self.handler = handler
        self.scheme = scheme
        #: Connections the client closed while a body was being sent or the server was silent.
        self.hung_up = 0
        self._hang_up = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    async def __aenter__(self) -> LoopbackHTTP:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):  # each connection's task then ends on its own
            writer.transport.abort()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def opener(
        self,
        origin: wire.Origin,
        context: object,
        timeout: float | None,  # noqa: ASYNC109 - the wire's opener's signature
    ) -> wire.Connection:
        """The wire's opener: every origin reaches this server, over plain TCP."""
        self.scheme = origin.scheme  # the requests' URLs then read as the client wrote them
        return await wire.open_connection(origin, None, timeout, address=("127.0.0.1", self.port))

    async def wait_hung_up(self, count: int = 1, seconds: float = 5.0) -> None:
        """Until the client closed ``count`` connections mid-answer (fails after ``seconds``)."""
        async with asyncio.timeout(seconds):
            while self.hung_up < count:
                self._hang_up.clear()
                await self._hang_up.wait()

    # -- serving -----------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    return
                try:
                    response = self.handler(request)
                except httpx.ReadTimeout:
                    await self._silent(reader)
                    return
                except Exception:
                    writer.transport.abort()
                    return
                if not await self._send(response, reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.transport.abort()

    async def _read_request(self, reader: asyncio.StreamReader) -> httpx.Request | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None  # the client closed its idle connection
        line, *fields = head[:-4].decode("latin-1").split("\r\n")
        method, target, _ = line.split(" ")
        headers = [tuple(f.split(":", 1)) for f in fields]
        pairs = [(name.strip(), value.strip()) for name, value in headers]
        length = int(dict((n.lower(), v) for n, v in pairs).get("content-length", "0"))
        body = await reader.readexactly(length)
        host = dict((n.lower(), v) for n, v in pairs)["host"]
        return httpx.Request(method, f"{self.scheme}://{host}{target}", headers=pairs, content=body)

    async def _send(
        self, response: httpx.Response, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Send ``response``; whether the connection can serve another request."""
        reason = response.reason_phrase or httpx.codes.get_reason_phrase(response.status_code)
        lines = [f"HTTP/1.1 {response.status_code} {reason}"]
        skip = ("content-length", "transfer-encoding")
        lines += [f"{k}: {v}" for k, v in response.headers.multi_items() if k.lower() not in skip]
        try:
            content = response.content
        except httpx.ResponseNotRead:
            content = None
        if content is not None:
            lines.append(f"content-length: {len(content)}")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + content)
            await writer.drain()
            return True
        lines.append("transfer-encoding: chunked")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        stream = response.stream
        assert isinstance(stream, AsyncIterable)
        producing = asyncio.ensure_future(_write_chunks(stream, writer))
        closed = asyncio.ensure_future(reader.read(1))  # the client sends nothing mid-answer
        try:
            await asyncio.wait((producing, closed), return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not producing.done():
                producing.cancel()
                with contextlib.suppress(BaseException):
                    await producing
        if closed.done() or not producing.done():
            self._hung_up()
            return False
        error = producing.exception()
        if isinstance(error, httpx.ReadTimeout):
            await closed  # silent until the client closes
            self._hung_up()
            return False
        closed.cancel()
        if error is not None:
            writer.transport.abort()
            return False
        return True

    async def _silent(self, reader: asyncio.StreamReader) -> None:
        await reader.read(1)  # until the client closes
        self._hung_up()

    def _hung_up(self) -> None:
        self.hung_up += 1
        self._hang_up.set()


async def _write_chunks(stream: AsyncIterable[bytes], writer: asyncio.StreamWriter) -> None:
    async for part in stream:
        if part:
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
            await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()
