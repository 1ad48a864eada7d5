"""The model streams' HTTP/1.1 client: each request written as prepared bytes, each answer read
straight from the socket.

Every job and every ghost-text completion is one streamed POST to a model server, and the first
edit is a figure of a millisecond or two. Through httpx that POST went through the client (its
URL and header merging, cookie jar, auth and redirect loops), httpcore's pool and h11's events,
with anyio cancel scopes around every read and write: ~0.7 ms of CPU more than the same bytes
written by hand, to the first chunk of a loopback server's answer (httpx 1.03 ms, httpcore alone
0.77, a raw socket 0.36). This module is that whole path: asyncio's own transports and protocol
callbacks, one ``write`` per request, the response head parsed here, a chunked body decoded a
whole read at a time (:mod:`.chunked`).

What it does, as httpx did for these requests: HTTP/1.1 over TCP or TLS (the server's trust,
:mod:`.trust`, verifying as strictly; ALPN ``http/1.1``); connections kept per origin and reused
while idle for at most :data:`KEEPALIVE_SECONDS` and untouched (one the server closed or wrote to
while idle is closed instead); the connect timeout and the read timeout (the longest silence);
bodies framed by chunks, by length or by the connection's end, gzip and deflate decoded (none is
asked for: providers send plain bodies). A reused connection that ends before any byte of an
answer is the server's keep-alive race: the request is sent once more on a new connection.

What it leaves out, as before: proxies (the server's client ignored the environment's),
redirects (never followed), HTTP/2, cookies. Its failures are httpx's exception classes with
httpx's words (``ConnectError``, ``ConnectTimeout``, ``ReadTimeout``, ``ReadError``,
``RemoteProtocolError``, ``DecodingError``, ``LocalProtocolError``), so that the backend words
them for the user exactly as it did (:func:`.openai.transport_error`). httpx stays the client
of everything else (``GET /models``).
"""

# Timeouts here are the connection's silences, passed down as httpcore's were: ASYNC109 does not
# apply.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import ssl
import time
import zlib
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol
from urllib.parse import quote, urlsplit

import httpx

from .chunked import ChunkedDecoder, ChunkedError

#: An idle connection older than this is closed rather than reused (httpx's default expiry).
KEEPALIVE_SECONDS = 5.0
#: Idle connections kept per origin.
MAX_IDLE_PER_ORIGIN = 10
#: A connection opened ahead (:meth:`Wire.open_ahead`) serves the first request to its origin
#: within this many seconds; later it is closed and a new one opened.
AHEAD_SECONDS = 30.0
#: A response head longer than this is not HTTP: a runaway or hostile server.
MAX_HEAD_BYTES = 64 * 1024
#: Reading from the socket pauses while this much is received and not yet read.
PAUSE_BYTES = 256 * 1024
USER_AGENT = "fastedit-lsp"

log = logging.getLogger(__name__)

_STATUS_LINE = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: ([^\r\n]*))?")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_TOKEN_BYTES = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


@dataclass(frozen=True)
class Origin:
    """Where a connection goes: scheme, host (IDNA-encoded), port."""

    scheme: str
    host: str
    port: int

    @property
    def tls(self) -> bool:
        return self.scheme == "https"

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        return host if self.port == default else f"{host}:{self.port}"


@dataclass(frozen=True)
class Target:
    """A request URL, split once: its origin and the request line's target."""

    origin: Origin
    path: str


def parse_url(url: str) -> Target:
    """The origin and request target of an ``http(s)`` URL; raises ``httpx.UnsupportedProtocol``
    or ``httpx.InvalidURL``."""
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname or ""
    except ValueError as exc:
        raise httpx.InvalidURL(f"Invalid URL {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise httpx.UnsupportedProtocol(
            f"Request URL has an unsupported protocol '{scheme}://'."
            if scheme
            else "Request URL is missing an 'http://' or 'https://' protocol."
        )
    if not host:
        raise httpx.InvalidURL(f"Invalid URL {url!r}: no host")
    try:
        host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        raise httpx.InvalidURL(f"Invalid URL {url!r}: the host cannot be encoded") from None
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    if parts.query:
        path += "?" + quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
    return Target(Origin(scheme, host, port or (443 if scheme == "https" else 80)), path)


def request_bytes(
    method: str, target: Target, headers: Sequence[tuple[str, str]], body: bytes
) -> bytes:
    """The request's bytes, head and body; raises ``httpx.LocalProtocolError`` for a header that
    cannot be sent (a name that is not a token, a value with a line break or control byte)."""
    lines = [f"{method} {target.path} HTTP/1.1", f"Host: {target.origin.host_header}"]
    for name, value in headers:
        if _TOKEN.fullmatch(name) is None or _BAD_VALUE.search(value) is not None:
            raise httpx.LocalProtocolError(f"Illegal header {name!r}")
        lines.append(f"{name}: {value}")
    lines.append(f"Content-Length: {len(body)}\r\n\r\n")
    try:
        return "\r\n".join(lines).encode("ascii") + body
    except UnicodeEncodeError:
        raise httpx.LocalProtocolError("A header has characters that cannot be sent") from None


class Headers(Mapping[str, str]):
    """A response's header fields, case-insensitive; repeated fields joined by ``", "`` (as
    httpx's ``Headers`` reads them)."""

    def __init__(self, fields: Sequence[tuple[str, str]]) -> None:
        merged: dict[str, str] = {}
        for name, value in fields:
            key = name.lower()
            merged[key] = f"{merged[key]}, {value}" if key in merged else value
        self._fields = merged

    def __getitem__(self, name: str) -> str:
        return self._fields[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def tokens(self, name: str) -> list[str]:
        """A list-valued field's items, lower-case (``Connection: keep-alive, Upgrade``)."""
        return [t.strip().lower() for t in self._fields.get(name, "").split(",") if t.strip()]


@dataclass(frozen=True)
class Head:
    """A response's status line and header fields."""

    version: str
    status: int
    reason: str
    headers: Headers


def parse_head(data: bytes) -> Head:
    """The status line and fields of a response head (up to, without, its blank line); raises
    ``httpx.RemoteProtocolError``."""
    lines = data.split(b"\n")
    match = _STATUS_LINE.fullmatch(lines[0].rstrip(b"\r"))
    if match is None:
        shown = lines[0][:60].decode("ascii", "replace")
        raise httpx.RemoteProtocolError(f"illegal status line: {shown!r}")
    fields: list[tuple[str, str]] = []
    for raw in lines[1:]:
        line = raw.rstrip(b"\r")
        if line[:1] in (b" ", b"\t") and fields:  # obsolete line folding: one value
            last_name, last_value = fields[-1]
            fields[-1] = (last_name, f"{last_value} {line.strip().decode('latin-1')}")
            continue
        name, colon, value = line.partition(b":")
        if not colon or _TOKEN_BYTES.fullmatch(name) is None:
            raise httpx.RemoteProtocolError(f"illegal header line: {line[:60]!r}")
        fields.append((name.decode("ascii"), value.strip(b" \t").decode("latin-1")))
    version = f"HTTP/1.{match.group(1).decode()}"
    reason = (match.group(3) or b"").decode("latin-1")
    return Head(version, int(match.group(2)), reason, Headers(fields))


class _Socket(asyncio.Protocol):
    """A connection's received bytes, for one reader at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._chunks: list[bytes] = []
        self._size = 0
        self._eof = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        #: While a paced consumer waits (:meth:`watch_end`): what ends the body, and whom to wake.
        self._until: bytes | None = None
        self._on_end: Callable[[], None] | None = None
        self._tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        if self._size > PAUSE_BYTES:
            self._pause()
        if self._on_end is not None and self._until is not None:
            self._tail = (self._tail + data[-len(self._until) :])[-len(self._until) :]
            if self._tail == self._until:
                self._ended()
        self._wake()

    def eof_received(self) -> bool | None:
        self._eof = True
        self._ended()
        self._wake()
        return None  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._error = exc
        self._ended()
        self._wake()

    def watch_end(self, until: bytes | None, wake: Callable[[], None]) -> None:
        """Watch the socket, and call ``wake`` once when the received bytes end with ``until``
        (a chunked body's last chunk) or the connection ends, at once if they already did;
        until :meth:`unwatch_end`. Meanwhile each chunk the server flushes is appended, and
        wakes no reader."""
        self._until, self._on_end = until, wake
        self._tail = b""
        if until is not None:
            for chunk in reversed(self._chunks):
                self._tail = chunk[-len(until) :] + self._tail
                if len(self._tail) >= len(until):
                    break
            self._tail = self._tail[-len(until) :]
        if self._eof or (until is not None and self._tail == until):
            self._ended()
            return
        self._resume()

    def unwatch_end(self) -> None:
        """Stop :meth:`watch_end`: what arrives next waits in the kernel's buffer again."""
        self._until = self._on_end = None
        self._pause()

    def _ended(self) -> None:
        wake, self._on_end = self._on_end, None
        if wake is not None:
            wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    @property
    def touched(self) -> bool:
        """Whether anything arrived (bytes, the end, an error) that nobody read."""
        return bool(self._chunks) or self._eof

    def unread(self, data: bytes) -> None:
        """Put bytes back in front (what came after a response head)."""
        if data:
            self._chunks.insert(0, data)
            self._size += len(data)

    async def read(self, timeout: float | None, *, pause: bool = False) -> bytes:
        """The bytes received so far, waiting up to ``timeout`` seconds of silence for some;
        ``b""`` at the end; raises ``httpx.ReadTimeout``, ``httpx.ReadError``.

        With ``pause``, the socket is watched only while a read waits: a consumer that reads
        at its own pace (a model stream paced to the editor's edits, 60 reads a second) then
        wakes the event loop once per read, not once per chunk the server flushes (1,000 a
        second at 1,000 tok/s); what arrives meanwhile waits in the kernel's buffer.
        """
        if not self._chunks and not self._eof:
            self._resume()
            loop = asyncio.get_running_loop()
            self._waiter = waiter = loop.create_future()
            timer = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
            if pause:
                self._pause()
            if not self._chunks and not self._eof:
                raise httpx.ReadTimeout("timed out")
        if self._chunks:
            chunks = self._chunks
            data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            chunks.clear()
            self._size = 0
            if not pause:
                self._resume()
            return data
        if self._error is not None:
            raise httpx.ReadError(str(self._error) or type(self._error).__name__)
        return b""

    def watch(self) -> None:
        """Watch the socket again (a connection back in the pool: its closing is then seen)."""
        self._resume()

    def _pause(self) -> None:
        if not self._paused and self.transport is not None and not self.transport.is_closing():
            self._paused = True
            self.transport.pause_reading()

    def _resume(self) -> None:
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Connection:
    """One kept-alive connection: its transport, its received bytes, when it went idle."""

    def __init__(self, origin: Origin, transport: asyncio.Transport, socket: _Socket) -> None:
        self.origin = origin
        self.transport = transport
        self.socket = socket
        self.idle_since = time.monotonic()
        #: Whether it was opened for the request it serves (not kept, nor opened ahead): a
        #: connection that waited can have been closed by the server as the request went out,
        #: and that request is then sent once more on a new one.
        self.fresh = True

    def usable(self, now: float, max_idle: float) -> bool:
        return (
            not self.transport.is_closing()
            and not self.socket.touched
            and now - self.idle_since < max_idle
        )

    def close(self) -> None:
        """Close at once (nothing more is read or written on it)."""
        self.transport.abort()


#: Opens a new connection: given the origin, the TLS context (None for plain TCP) and the
#: connect timeout. :func:`open_connection`, or in tests one that reaches a loopback server.
Opener = Callable[[Origin, ssl.SSLContext | None, float | None], Awaitable[Connection]]


async def open_connection(
    origin: Origin,
    context: ssl.SSLContext | None,
    timeout: float | None,
    *,
    address: tuple[str, int] | None = None,
) -> Connection:
    """A new connection to ``origin`` (TLS when ``context`` is given), or to ``address`` for it
    (tests: a loopback server standing in for any origin)."""
    loop = asyncio.get_running_loop()
    host, port = address or (origin.host, origin.port)
    try:
        async with asyncio.timeout(timeout):
            transport, socket = await loop.create_connection(
                _Socket,
                host,
                port,
                ssl=context,
                server_hostname=origin.host if context is not None else None,
                ssl_handshake_timeout=timeout if context is not None else None,
            )
    except TimeoutError:
        raise httpx.ConnectTimeout("timed out") from None
    except OSError as exc:  # refused, unreachable, no such host, a certificate refused
        raise httpx.ConnectError(_reason(exc)) from None
    assert isinstance(transport, asyncio.Transport)
    return Connection(origin, transport, socket)


def _reason(exc: OSError) -> str:
    """An error's words, as the system says them (asyncio's own add the address: "Connect call
    failed ('127.0.0.1', 8080)", which the user's baseUrl already says)."""
    if isinstance(exc, socket.gaierror | ssl.SSLError) or exc.errno is None:
        text = str(exc)
        if text.startswith("Multiple exceptions"):  # every address of the host failed
            return "All connection attempts failed"
        return text or type(exc).__name__
    return f"[Errno {exc.errno}] {os.strerror(exc.errno)}"


async def _start_tls(
    connection: Connection, context: ssl.SSLContext, timeout: float | None
) -> Connection:
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(timeout):
            transport = await loop.start_tls(
                connection.transport,
                connection.socket,
                context,
                server_hostname=connection.origin.host,
                ssl_handshake_timeout=timeout,
            )
    except TimeoutError:
        connection.close()
        raise httpx.ConnectTimeout("timed out") from None
    except OSError as exc:
        connection.close()
        raise httpx.ConnectError(_reason(exc)) from None
    if transport is None:
        connection.close()
        raise httpx.ConnectError("the TLS handshake did not complete")
    connection.transport = transport
    connection.socket.transport = transport
    return connection


class Wire:
    """The model streams' connections, per origin, and the requests made on them."""

    def __init__(
        self,
        context: Callable[[], ssl.SSLContext] | None = None,
        *,
        opener: Opener = open_connection,
        max_idle: float = KEEPALIVE_SECONDS,
    ) -> None:
        self._context_of = context
        self._context: ssl.SSLContext | None = None
        self._opener = opener
        self._max_idle = max_idle
        self._idle: dict[Origin, list[Connection]] = {}
        self._active: set[Connection] = set()
        self._ahead: dict[Origin, tuple[float, Connection]] = {}
        self._targets: dict[str, Target] = {}

    def stream(
        self,
        method: str,
        url: str,
        *,
        headers: Sequence[tuple[str, str]],
        body: bytes,
        connect_timeout: float | None,
        read_timeout: float | None,
        sent: Callable[[], None] | None = None,
    ) -> Exchange:
        """``async with wire.stream(...) as response``: the request sent and the answer's head
        read on entering; leaving closes the connection unless the body was read to its end.
        ``sent`` is called once the request is written, before its answer is awaited."""
        target = self._targets.get(url)
        if target is None:
            target = parse_url(url)
            if len(self._targets) < 256:
                self._targets[url] = target
        all_headers = [("User-Agent", USER_AGENT), ("Accept-Encoding", "identity"), *headers]
        data = request_bytes(method, target, all_headers, body)
        exchange = Exchange(self, target.origin, data, connect_timeout, read_timeout, sent)
        if log.isEnabledFor(logging.DEBUG):
            exchange.shown = f"{method} {url}"
        return exchange

    async def open_ahead(self, url: str, timeout: float = 2.0) -> bool:
        """Open a TCP connection to ``url``'s origin ahead of its first request (the warm-up
        does, for the profiles' model servers): that request then skips the TCP handshake, a
        round trip to a hosted provider. No byte is sent; an https request still makes its TLS
        handshake on it. Whether a connection is ready."""
        try:
            origin = parse_url(url).origin
        except (httpx.InvalidURL, httpx.UnsupportedProtocol):
            return False
        if origin in self._ahead:
            return True
        try:
            connection = await self._opener(Origin("http", origin.host, origin.port), None, timeout)
        except (httpx.ConnectError, httpx.ConnectTimeout):
            return False  # the first request connects (and reports) as it always did
        self._ahead[origin] = (time.monotonic(), connection)
        return True

    def connections(self) -> dict[str, int]:
        """Open connections, and of those, idle ones (kept for the next request)."""
        idle = sum(1 for kept in self._idle.values() for c in kept if not c.transport.is_closing())
        return {"open": idle + len(self._active), "idle": idle}

    async def aclose(self) -> None:
        """Close every connection (a stream still running fails with a read error)."""
        connections = [c for kept in self._idle.values() for c in kept]
        connections += [c for _, c in self._ahead.values()] + list(self._active)
        self._idle.clear()
        self._ahead.clear()
        self._active.clear()
        for connection in connections:
            connection.close()

    # -- connections -------------------------------------------------------------------------------

    async def _acquire(self, origin: Origin, timeout: float | None) -> Connection:
        now = time.monotonic()
        kept = self._idle.get(origin)
        while kept:
            connection = kept.pop()
            if connection.usable(now, self._max_idle):
                connection.fresh = False
                return self._activate(connection)
            connection.close()
        ahead = self._ahead.pop(origin, None)
        if ahead is not None:
            opened, connection = ahead
            if connection.usable(now, AHEAD_SECONDS) and now - opened < AHEAD_SECONDS:
                connection.origin = origin  # opened as plain TCP: kept, then, as ``origin``'s
                connection.fresh = False
                self._activate(connection)
                if origin.tls:
                    try:
                        connection = await _start_tls(connection, self._tls(), timeout)
                    except BaseException:  # a cancel included: the connection is not kept
                        self._release(connection, reusable=False)
                        raise
                return connection
            connection.close()
        return await self._fresh(origin, timeout)

    async def _fresh(self, origin: Origin, timeout: float | None) -> Connection:
        return self._activate(
            await self._opener(origin, self._tls() if origin.tls else None, timeout)
        )

    def _activate(self, connection: Connection) -> Connection:
        self._active.add(connection)
        return connection

    def _tls(self) -> ssl.SSLContext:
        if self._context is None:
            if self._context_of is not None:
                context = self._context_of()
            else:
                from .trust import shared

                context = shared()
            context.set_alpn_protocols(["http/1.1"])
            self._context = context
        return self._context

    def _release(self, connection: Connection, reusable: bool) -> None:
        self._active.discard(connection)
        if not reusable or connection.transport.is_closing():
            connection.close()
            return
        connection.idle_since = time.monotonic()
        connection.socket.watch()
        kept = self._idle.setdefault(connection.origin, [])
        kept.append(connection)
        if len(kept) > MAX_IDLE_PER_ORIGIN:
            kept.pop(0).close()


class Exchange:
    """One request and its answer (:meth:`Wire.stream`)."""

    def __init__(
        self,
        wire: Wire,
        origin: Origin,
        request: bytes,
        connect_timeout: float | None,
        read_timeout: float | None,
        sent: Callable[[], None] | None = None,
    ) -> None:
        self._wire = wire
        self._sent = sent
        self._origin = origin
        self._request = request
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._connection: Connection | None = None
        self._response: Response | None = None
        #: The request as the debug log shows it (set only when the log is that verbose).
        self.shown: str | None = None

    async def __aenter__(self) -> Response:
        wire = self._wire
        connection = await wire._acquire(self._origin, self._connect_timeout)
        try:
            head, rest = await self._send(connection)
            if head is None and not connection.fresh:
                # The server closed the kept-alive connection as the request went out.
                wire._release(connection, reusable=False)
                connection = await wire._fresh(self._origin, self._connect_timeout)
                head, rest = await self._send(connection)
            if head is None:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            self._response = Response(head, connection.socket, rest, self._read_timeout)
        except BaseException:
            wire._release(connection, reusable=False)
            raise
        self._connection = connection
        if self.shown is not None:  # as httpx logs it (no header: the key stays out)
            log.debug('HTTP Request: %s "HTTP/1.1 %s %s"', self.shown, head.status, head.reason)
        return self._response

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._connection is not None and self._response is not None:
            self._wire._release(self._connection, self._response.reusable)
            self._connection = None

    async def _send(self, connection: Connection) -> tuple[Head | None, bytes]:
        """Write the request, read the answer's head (skipping 1xx); (None, b"") when the
        connection ended before any byte."""
        connection.transport.write(self._request)
        if self._sent is not None:
            sent, self._sent = self._sent, None
            sent()
        socket, timeout = connection.socket, self._read_timeout
        buffer = b""
        while True:
            end = buffer.find(b"\r\n\r\n")
            size = 4
            if end < 0:
                end, size = buffer.find(b"\n\n"), 2
            if end >= 0:
                head = parse_head(buffer[:end])
                buffer = buffer[end + size :]
                if 100 <= head.status < 200 and head.status != 101:
                    continue  # an informational answer (103 Early Hints): the real one follows
                return head, buffer
            if len(buffer) > MAX_HEAD_BYTES:
                raise httpx.RemoteProtocolError("The response head is too long.")
            data = await socket.read(timeout)
            if not data:
                if not buffer:
                    return None, b""
                raise httpx.RemoteProtocolError("Server disconnected while sending the head.")
            buffer += data


class Response:
    """An answer's status, headers and body (read once, with :meth:`aiter_bytes`)."""

    http_version = "HTTP/1.1"

    def __init__(self, head: Head, socket: _Socket, rest: bytes, read_timeout: float | None):
        self.status_code = head.status
        self.reason_phrase = head.reason
        self.headers = head.headers
        self._body = _Body(head, socket, rest, read_timeout)

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def reusable(self) -> bool:
        """Whether its connection can serve another request (the body was read to its end)."""
        return self._body.reusable

    def aiter_bytes(self) -> _Body:
        """The body's bytes as they arrive (decoded: framing, gzip or deflate)."""
        return self._body


_CHUNKED, _LENGTH, _TO_CLOSE, _NONE = range(4)
#: How a chunked body ends (no trailers: what model servers send).
_LAST_CHUNK = b"0\r\n\r\n"


class _Body:
    """An answer's body, an async iterator of its decoded bytes."""

    def __init__(self, head: Head, socket: _Socket, rest: bytes, read_timeout: float | None):
        self._socket = socket
        self._timeout = read_timeout
        headers = head.headers
        codings = headers.tokens("transfer-encoding")
        length = headers.get("content-length")
        keep_alive = head.version == "HTTP/1.1" and "close" not in headers.tokens("connection")
        self._left = 0
        self._chunks: ChunkedDecoder | None = None
        if head.status in (204, 304) or head.status == 101:
            self._framing = _NONE
        elif codings:
            chunked = codings[-1] == "chunked"
            self._framing = _CHUNKED if chunked else _TO_CLOSE
            self._chunks = ChunkedDecoder() if chunked else None
            keep_alive = keep_alive and chunked and length is None
        elif length is not None:
            self._framing, self._left = _LENGTH, _content_length(length)
        else:
            self._framing = _TO_CLOSE
        self._keep_alive = keep_alive
        self._decoder = _content_decoder(headers.get("content-encoding", ""))
        self._pending = rest
        self.done = self._framing == _NONE or (self._framing == _LENGTH and not self._left)
        #: Bytes after the body's end: the connection is then not reused.
        self._extra = b""
        if self.done and rest:
            self._extra = rest

    @property
    def reusable(self) -> bool:
        return self.done and self._keep_alive and not self._extra and self._framing != _TO_CLOSE

    def __aiter__(self) -> _Body:
        return self

    async def __anext__(self) -> bytes:
        while not self.done:
            data, self._pending = self._pending, b""
            if not data:
                data = await self._socket.read(self._timeout, pause=True)
            if not data:
                return self._ended()
            payload = self._frame(data)
            if self._decoder is not None:
                payload = self._decode(payload)
            if payload:
                return payload
        if self._decoder is not None:
            tail, self._decoder = self._decode_end(), None
            if tail:
                return tail
        raise StopAsyncIteration

    def watch_end(self, wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake`` once when the body's end arrives (a chunked body's last chunk, or the
        connection's end), at once if it already has; returns the function that stops watching.

        For a consumer that paces its reads (:meth:`_Socket.read`'s ``pause``) while it waits:
        the end of the answer is then read as it arrives, not at the next paced read. While
        watched, each chunk the server flushes wakes the event loop (and is only appended).
        """
        if self.done or self._pending:
            wake()
        else:
            self._socket.watch_end(_LAST_CHUNK if self._framing == _CHUNKED else None, wake)
        return self._socket.unwatch_end

    def _ended(self) -> bytes:
        if self._framing != _TO_CLOSE:
            why = "incomplete chunked read" if self._framing == _CHUNKED else "received fewer "
            if self._framing == _LENGTH:
                why += f"bytes than announced ({self._left} missing)"
            raise httpx.RemoteProtocolError(
                f"peer closed connection without sending complete message body ({why})"
            )
        self.done = True
        tail, self._decoder = (self._decode_end() if self._decoder else b""), None
        if tail:
            return tail
        raise StopAsyncIteration

    def _frame(self, data: bytes) -> bytes:
        if self._framing == _CHUNKED:
            decoder = self._chunks
            assert decoder is not None
            try:
                payload = decoder.feed(data)
            except ChunkedError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from None
            if decoder.done:
                self.done, self._extra = True, decoder.extra
            return payload
        if self._framing == _LENGTH:
            payload, self._extra = data[: self._left], data[self._left :]
            self._left -= len(payload)
            self.done = not self._left
            return payload
        return data

    def _decode(self, data: bytes) -> bytes:
        assert self._decoder is not None
        try:
            return self._decoder.decompress(data)
        except zlib.error as exc:
            raise httpx.DecodingError(str(exc)) from None

    def _decode_end(self) -> bytes:
        assert self._decoder is not None
        try:
            return self._decoder.flush()
        except zlib.error as exc:
            raise httpx.DecodingError(str(exc)) from None


def _content_length(value: str) -> int:
    # Repeated identical values ("12, 12") are one length, as RFC 9110 allows.
    values = {v.strip() for v in value.split(",")}
    if len(values) != 1 or not (only := values.pop()).isdigit() or len(only) > 18:
        raise httpx.RemoteProtocolError(f"illegal Content-Length {value!r}")
    return int(only)


def _content_decoder(value: str) -> _Decompressor | None:
    coding = value.strip().lower()
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return _Deflate()
    raise httpx.DecodingError(f"the body is {coding}-encoded, which is not supported")


class _Decompressor(Protocol):
    def decompress(self, data: bytes, /) -> bytes: ...

    def flush(self) -> bytes: ...


class _Deflate:
    """``deflate`` is zlib-wrapped by the RFC, raw in some servers: whichever the first bytes
    say."""

    def __init__(self) -> None:
        self._inner: _Decompressor | None = None

    def decompress(self, data: bytes) -> bytes:
        if self._inner is None:
            wrapped = (
                len(data) >= 2 and (data[0] & 0x0F) == 8 and (data[0] << 8 | data[1]) % 31 == 0
            )
            self._inner = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return self._inner.decompress(data)

    def flush(self) -> bytes:
        return self._inner.flush() if self._inner is not None else b""
