"""HTTP/1.1 for the stub model server: reading requests, writing responses, seeing the client go.

A connection keeps its own read buffer, so that the EOF watch can read ahead while a response is
written or waited on; request heads are parsed with ``Content-Length`` bodies only; a response goes
out with ``Content-Length`` or ``Transfer-Encoding: chunked`` (one chunk per body byte with
``split_bytes``), and :class:`_ClientGoneError` is raised once the client closed the connection.
Part of :mod:`fastedit_lsp.tools.stub`. Stdlib asyncio only.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NoReturn

_MAX_HEAD: Final = 64 * 1024
_MAX_BODY: Final = 64 * 1024 * 1024
_READ_SIZE: Final = 64 * 1024


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _json_bytes(obj: object) -> bytes:
    # Raw UTF-8 (not \\u escapes), like the providers: split_bytes then splits inside sequences.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


class _BadRequestError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _IncompleteRequestError(Exception):
    """The client closed the connection in the middle of a request."""


class _ClientGoneError(Exception):
    """The client closed the connection (EOF or reset) while a response was under way."""


@dataclass(frozen=True)
class _Head:
    method: str
    path: str
    headers: dict[str, str]
    content_length: int
    keep_alive: bool


def _parse_head(head: bytes) -> _Head:
    request_line, *header_lines = head.decode("latin-1").lstrip("\r\n").split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequestError(400, "malformed request line")
    method, target, version = parts
    headers: dict[str, str] = {}
    for line in header_lines:
        name, colon, value = line.partition(":")
        key = name.strip().lower()
        if not colon or not key:
            raise _BadRequestError(400, f"malformed header line {line!r}")
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _BadRequestError(501, "chunked request bodies are not supported")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _BadRequestError(400, "bad content-length") from None
    if not 0 <= length <= _MAX_BODY:
        raise _BadRequestError(413, "bad content-length")
    tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
    keep_alive = "close" not in tokens if version == "HTTP/1.1" else "keep-alive" in tokens
    return _Head(method, target.split("?", 1)[0], headers, length, keep_alive)


def _parse_json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


class _Connection:
    """A client connection with our own read buffer, so the EOF watch can read ahead."""

    def __init__(
        self, serial: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.serial = serial
        self.reader = reader
        self.writer = writer
        self.buffer = bytearray()
        self.eof_at: float | None = None
        # Every drain() then waits until the kernel took all bytes: writes are flushes.
        writer.transport.set_write_buffer_limits(high=0)

    async def _fill(self) -> bool:
        try:
            data = await self.reader.read(_READ_SIZE)
        except ConnectionError:
            data = b""
        if not data:
            if self.eof_at is None:
                self.eof_at = time.monotonic()
            return False
        self.buffer += data
        return True

    async def read_head(self) -> bytes | None:
        """The next request head without its blank line; None on a clean EOF between requests."""
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end >= 0:
                head = bytes(self.buffer[:end])
                del self.buffer[: end + 4]
                return head
            if len(self.buffer) > _MAX_HEAD:
                raise _BadRequestError(431, "request head too large")
            if not await self._fill():
                if self.buffer.strip():
                    raise _IncompleteRequestError
                return None

    async def read_body(self, size: int) -> bytes:
        while len(self.buffer) < size:
            if not await self._fill():
                raise _IncompleteRequestError
        body = bytes(self.buffer[:size])
        del self.buffer[:size]
        return body

    async def watch_eof(self) -> None:
        """Return when the client closes; bytes it sends meanwhile are kept for the next read."""
        while await self._fill():
            pass

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


class _Exchange:
    """One response on a connection; raises :class:`_ClientGoneError` once the client leaves."""

    def __init__(self, conn: _Connection, *, keep_alive: bool) -> None:
        self.conn = conn
        self.keep_alive = keep_alive
        self.split_bytes = False
        self.status: int | None = None
        #: ``time.monotonic()`` after the first and the latest write.
        self.first_write_at: float | None = None
        self.last_write_at: float | None = None
        self._chunked = False
        self._watch: asyncio.Task[None] = asyncio.create_task(conn.watch_eof())

    async def _write(self, data: bytes) -> None:
        if self._watch.done():
            raise _ClientGoneError
        try:
            self.conn.writer.write(data)
            await self.conn.writer.drain()
        except ConnectionError as exc:
            raise _ClientGoneError from exc
        self.last_write_at = time.monotonic()
        if self.first_write_at is None:
            self.first_write_at = self.last_write_at

    async def send_head(
        self,
        status: int,
        content_type: str,
        *,
        content_length: int | None,
        headers: Mapping[str, str],
    ) -> None:
        """Write the status line and headers; ``content_length=None`` means chunked."""
        lines = [f"HTTP/1.1 {status} {_phrase(status)}", f"content-type: {content_type}"]
        if content_length is None:
            lines.append("transfer-encoding: chunked")
            self._chunked = True
        else:
            lines.append(f"content-length: {content_length}")
        if not self.keep_alive:
            lines.append("connection: close")
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        self.status = status
        await self._write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    async def send_body(self, data: bytes, *, last: bool = False) -> None:
        """Write body bytes (framed as chunks if chunked); ``last`` ends a chunked body."""
        if self.split_bytes:
            for i in range(len(data)):
                byte = data[i : i + 1]
                await self._write(b"1\r\n" + byte + b"\r\n" if self._chunked else byte)
            if last and self._chunked:
                await self._write(b"0\r\n\r\n")
            return
        framed = data
        if self._chunked:
            # An empty chunk would end the body: frame only non-empty data.
            framed = f"{len(data):x}\r\n".encode() + data + b"\r\n" if data else b""
            if last:
                framed += b"0\r\n\r\n"
        if framed:
            await self._write(framed)

    async def send_events(self, events: list[bytes], *, last: bool = False) -> None:
        """Write events each in its own chunk (one write), as providers flush every event."""
        if not self._chunked or self.split_bytes:
            await self.send_body(b"".join(events), last=last)
            return
        framed = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events if e)
        if last:
            framed += b"0\r\n\r\n"
        if framed:
            await self._write(framed)

    async def send_json(
        self,
        status: int,
        obj: object,
        *,
        headers: Mapping[str, str] | None = None,
        content_type: str | None = None,
    ) -> bool:
        payload = _json_bytes(obj)
        await self.send_head(
            status,
            content_type or "application/json",
            content_length=len(payload),
            headers=headers or {},
        )
        await self.send_body(payload)
        return True

    async def pause(self, delay: float) -> None:
        """Wait ``delay`` seconds, cut short by the client closing."""
        if delay > 0:
            await asyncio.wait({self._watch}, timeout=delay)
        else:
            await asyncio.sleep(0)
        if self._watch.done():
            raise _ClientGoneError

    async def wait_event(self, event: asyncio.Event) -> None:
        """Wait until ``event`` is set, cut short by the client closing."""
        waiter = asyncio.ensure_future(event.wait())
        try:
            await asyncio.wait({self._watch, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if not event.is_set():
            raise _ClientGoneError

    async def wait_client_close(self) -> NoReturn:
        await asyncio.wait({self._watch})
        raise _ClientGoneError

    def abort(self) -> None:
        self.conn.writer.transport.abort()

    async def finish(self) -> None:
        if not self._watch.done():
            self._watch.cancel()
            await asyncio.wait({self._watch})
