"""The model streams' HTTP/1.1 client (``backends/wire.py``): URLs, request bytes and response
heads (pure), then against real local servers scripted byte for byte: keep-alive and when a
connection is not reused, every body framing, the keep-alive race, the connection opened ahead,
TLS (a certificate refused, one trusted, on a connection opened ahead)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import shutil
import ssl
import subprocess
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from fastedit_lsp.backends import wire
from fastedit_lsp.backends.wire import Headers, Wire, parse_head, parse_url, request_bytes

# --- pure: URLs, request bytes, response heads ----------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host_header", "path", "port"),
    [
        (
            "https://api.cerebras.ai/v1/chat/completions",
            "api.cerebras.ai",
            "/v1/chat/completions",
            443,
        ),
        ("http://localhost:11434/v1/completions", "localhost:11434", "/v1/completions", 11434),
        ("http://127.0.0.1:80", "127.0.0.1", "/", 80),
        ("http://[::1]:8080/v1/x?a=1&b=2", "[::1]:8080", "/v1/x?a=1&b=2", 8080),
        ("https://bücher.example/v1 x", "xn--bcher-kva.example", "/v1%20x", 443),
    ],
)
def test_urls_split_into_origin_and_target(
    url: str, host_header: str, path: str, port: int
) -> None:
    target = parse_url(url)
    assert target.origin.host_header == host_header
    assert target.origin.port == port
    assert target.path == path


@pytest.mark.parametrize(
    "url", ["ftp://host/v1", "api.example.test/v1", "http://:80/v1", "http://h:x/"]
)
def test_unusable_urls_raise_httpx_errors(url: str) -> None:
    with pytest.raises((httpx.UnsupportedProtocol, httpx.InvalidURL)):
        parse_url(url)


def test_a_request_is_one_block_of_bytes_with_its_length() -> None:
    data = request_bytes(
        "POST", parse_url("https://h.test/v1/c"), [("Accept", "text/event-stream")], b'{"a":1}'
    )
    assert data == (
        b"POST /v1/c HTTP/1.1\r\nHost: h.test\r\nAccept: text/event-stream\r\n"
        b'Content-Length: 7\r\n\r\n{"a":1}'
    )


@pytest.mark.parametrize(
    "header",
    [("X-Key", "a\r\nX-Injected: 1"), ("X-Key", "nul\x00"), ("Bad Name", "v"), ("X-Key", "ключ")],
)
def test_headers_that_cannot_be_sent_are_refused(header: tuple[str, str]) -> None:
    with pytest.raises(httpx.LocalProtocolError):
        request_bytes("POST", parse_url("http://h/"), [header], b"")


def test_a_head_is_read_case_insensitively_with_repeats_joined_and_folds_unfolded() -> None:
    head = parse_head(
        b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nX-A: 1\r\nx-a: 2\r\n"
        b"X-Long: first\r\n  second"
    )
    assert (head.version, head.status, head.reason) == ("HTTP/1.1", 429, "Too Many Requests")
    assert head.headers["retry-after"] == head.headers["RETRY-AFTER"] == "2"
    assert head.headers["x-a"] == "1, 2"
    assert head.headers["x-long"] == "first second"
    assert dict(head.headers.items()) == {
        "retry-after": "2",
        "x-a": "1, 2",
        "x-long": "first second",
    }


@pytest.mark.parametrize(
    "data",
    [b"HTTP/2 200 OK", b"SSH-2.0-OpenSSH", b"HTTP/1.1 200 OK\r\nno colon", b"HTTP/1.1 20 OK"],
)
def test_a_head_that_is_not_http_1_raises(data: bytes) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        parse_head(data)


def test_list_valued_fields_read_as_tokens() -> None:
    assert Headers([("Connection", "Keep-Alive, Upgrade")]).tokens("connection") == [
        "keep-alive",
        "upgrade",
    ]


# --- real sockets ---------------------------------------------------------------------------------

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


class RawServer:
    """A local server running ``script(reader, writer, connection_number)`` per connection."""

    def __init__(self, script: Script, ssl_context: ssl.SSLContext | None = None) -> None:
        self.script = script
        self.ssl_context = ssl_context
        self.connections = 0
        self.requests: list[bytes] = []
        self.writers: list[asyncio.StreamWriter] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl_context)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self.writers:
            writer.transport.abort()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        assert self._server is not None
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/v1/x"

    async def request(self, reader: asyncio.StreamReader) -> bytes:
        """Read one request (head and body); b"" when the client closed."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return b""
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        request = head + await reader.readexactly(length)
        self.requests.append(request)
        return request

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            with contextlib.suppress(Exception):
                await self.script(reader, writer, self.connections)
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.transport.abort()


def answering(*responses: bytes) -> Script:
    """Each request on a connection gets the next of ``responses`` (the last one repeats)."""

    async def script(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
    ) -> None:
        server_requests = 0
        while True:
            if not await SERVERS[-1].request(reader):
                return
            writer.write(responses[min(server_requests, len(responses) - 1)])
            server_requests += 1
            await writer.drain()

    return script


async def answer_ok_until_closed(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Answer every further request on the connection with ``CHUNKED_OK``."""
    while await SERVERS[-1].request(reader):
        writer.write(CHUNKED_OK)
        await writer.drain()


def answering_once(response: bytes) -> Script:
    """One request per connection, answered with ``response``; then the server closes it."""

    async def once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await SERVERS[-1].request(reader)
        writer.write(response)
        await writer.drain()
        writer.close()

    return once


SERVERS: list[RawServer] = []


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Awaitable[RawServer]]]:
    opened: list[RawServer] = []

    async def start(script: Script, ssl_context: ssl.SSLContext | None = None) -> RawServer:
        server = await RawServer(script, ssl_context).__aenter__()
        opened.append(server)
        SERVERS.append(server)
        return server

    yield start
    for server in opened:
        await server.__aexit__()
    SERVERS.clear()


@pytest.fixture
async def client() -> AsyncIterator[Wire]:
    w = Wire()
    yield w
    await w.aclose()


async def fetch(w: Wire, url: str, body: bytes = b"{}") -> tuple[int, Headers, bytes, bool]:
    """POST ``body``; the status, headers, whole body and whether the connection was kept."""
    async with w.stream(
        "POST", url, headers=[], body=body, connect_timeout=2, read_timeout=2
    ) as response:
        data = b"".join([part async for part in response.aiter_bytes()])
        return response.status_code, response.headers, data, response.reusable


CHUNKED_OK = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"


async def test_a_kept_alive_connection_serves_the_next_requests(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    server = await serve(answering(CHUNKED_OK))
    for _ in range(3):
        status, headers, body, reusable = await fetch(client, server.url)
        assert (status, dict(headers), body, reusable) == (
            200,
            {"transfer-encoding": "chunked"},
            b"ok",
            True,
        )
    assert server.connections == 1
    assert client.connections() == {"open": 1, "idle": 1}
    first = server.requests[0]
    assert first.startswith(b"POST /v1/x HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"\r\nUser-Agent: fastedit-lsp\r\n" in first
    assert b"\r\nAccept-Encoding: identity\r\n" in first


@pytest.mark.parametrize(
    ("response", "body"),
    [
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", b"ok"),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", b"ok"),
        # No length, not chunked: the body ends with the connection.
        (b"HTTP/1.1 200 OK\r\n\r\nuntil the end", b"until the end"),
        # Bytes after the announced length: the connection's framing cannot be trusted.
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok-extra", b"ok"),
        (CHUNKED_OK.replace(b"0\r\n\r\n", b"0\r\n\r\nHTTP/1.1 200"), b"ok"),
    ],
)
async def test_a_connection_is_not_reused_when_its_answer_says_so_or_is_odd(
    serve: Callable[..., Awaitable[RawServer]], client: Wire, response: bytes, body: bytes
) -> None:
    server = await serve(answering_once(response))
    for _ in range(2):
        status, _, data, reusable = await fetch(client, server.url)
        assert (status, data, reusable) == (200, body, False)
    assert server.connections == 2


@pytest.mark.parametrize(
    ("response", "body"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", b"hello"),
        (b"HTTP/1.1 204 No Content\r\n\r\n", b""),
        (b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" + CHUNKED_OK, b"ok"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
            % (len(gzip.compress(b"zipped")), gzip.compress(b"zipped")),
            b"zipped",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n%s"
            % (len(zlib.compress(b"deflated")), zlib.compress(b"deflated")),
            b"deflated",
        ),
        # Bare LF line ends, as some test servers write them.
        (b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", b"ok"),
    ],
)
async def test_every_framing_reads_the_body_and_keeps_the_connection(
    serve: Callable[..., Awaitable[RawServer]], client: Wire, response: bytes, body: bytes
) -> None:
    server = await serve(answering(response))
    for _ in range(2):
        status, _, data, reusable = await fetch(client, server.url)
        assert (data, reusable) == (body, True)
        assert status in (200, 204)
    assert server.connections == 1


async def test_a_body_larger_than_the_read_pause_arrives_whole(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    big = bytes(range(256)) * (3 * wire.PAUSE_BYTES // 256)
    server = await serve(
        answering(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big) + big)
    )
    async with client.stream(
        "POST", server.url, headers=[], body=b"", connect_timeout=2, read_timeout=2
    ) as response:
        # Reading pauses once the unread bytes pass PAUSE_BYTES, and resumes as they are read.
        await until(lambda: any(c.socket._paused for c in client._active))
        data = b"".join([part async for part in response.aiter_bytes()])
    assert data == big


async def test_a_body_is_watched_only_while_a_read_waits_and_an_idle_connection_always(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    """A paced reader (the stream reads as the editor takes edits) is not woken for every chunk
    the server flushes: between its reads the socket is not watched, and what arrives waits in
    the kernel. Back in the pool the connection is watched again, so that its closing is seen."""
    go = asyncio.Event()

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while await SERVERS[-1].request(reader):
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n")
            await writer.drain()
            await go.wait()
            writer.write(b"1\r\nb\r\n1\r\nc\r\n0\r\n\r\n")
            await writer.drain()

    server = await serve(script)
    async with client.stream(
        "POST", server.url, headers=[], body=b"", connect_timeout=2, read_timeout=2
    ) as response:
        body = response.aiter_bytes()
        assert await anext(body) == b"a"
        (connection,) = client._active
        go.set()
        rest = await anext(body)  # this read waited for the server
        assert not connection.transport.is_reading()  # it has what it waited for: not watched
        rest += b"".join([part async for part in body])
        assert rest == b"bc"
        assert response.reusable
    assert connection.transport.is_reading()  # idle in the pool: watched


@pytest.mark.parametrize(
    ("response", "match"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", "fewer bytes"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "incomplete chunked"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", "illegal Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n", "br-encoded"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\nnot gzip", "header"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: " + b"y" * wire.MAX_HEAD_BYTES, "too long"),
        (b"HTTP/1.1 200 OK\r\nX: partial", "while sending the head"),
    ],
)
async def test_a_broken_answer_raises_httpxs_error(
    serve: Callable[..., Awaitable[RawServer]], client: Wire, response: bytes, match: str
) -> None:
    server = await serve(answering_once(response))
    with pytest.raises((httpx.RemoteProtocolError, httpx.DecodingError), match=match):
        await fetch(client, server.url)
    assert client.connections() == {"open": 0, "idle": 0}


async def test_a_server_that_closes_the_kept_connection_as_the_request_goes_out_is_asked_again(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    """The keep-alive race: the server's idle timeout closed the connection just as the next
    request was written. The request goes once more, on a new connection."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await SERVERS[-1].request(reader)
        writer.write(CHUNKED_OK)
        await writer.drain()
        if n == 1:  # the first connection: read the second request, close without answering
            await SERVERS[-1].request(reader)
            return
        await answer_ok_until_closed(reader, writer)

    server = await serve(script)
    assert (await fetch(client, server.url))[2] == b"ok"
    assert (await fetch(client, server.url))[2] == b"ok"
    assert server.connections == 2
    assert len(server.requests) == 3


async def test_a_connection_opened_ahead_and_closed_as_the_request_goes_out_is_asked_again(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        if n == 1:  # the connection opened ahead: it reads the request and closes
            await SERVERS[-1].request(reader)
            return
        await answer_ok_until_closed(reader, writer)

    server = await serve(script)
    assert await client.open_ahead(server.url)
    assert (await fetch(client, server.url))[2] == b"ok"
    assert (server.connections, len(server.requests)) == (2, 2)


async def test_a_new_connection_closed_without_an_answer_is_not_asked_again(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await SERVERS[-1].request(reader)

    server = await serve(script)
    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        await fetch(client, server.url)
    assert len(server.requests) == 1


async def test_an_idle_connection_the_server_closed_or_that_expired_is_replaced(
    serve: Callable[..., Awaitable[RawServer]],
) -> None:
    server = await serve(answering(CHUNKED_OK))
    w = Wire()
    try:
        await fetch(w, server.url)
        server.writers[0].close()  # the server's idle timeout
        await until(lambda: w.connections()["open"] == 0 or _touched(w))
        await fetch(w, server.url)
        assert server.connections == 2
    finally:
        await w.aclose()
    expiring = Wire(max_idle=0.0)
    try:
        await fetch(expiring, server.url)
        await fetch(expiring, server.url)
        assert server.connections == 4
    finally:
        await expiring.aclose()


def _touched(w: Wire) -> bool:
    return any(c.socket.touched for kept in w._idle.values() for c in kept)


async def test_a_silent_server_is_a_read_timeout_and_a_refused_port_a_connect_error(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await SERVERS[-1].request(reader)
        await reader.read()

    server = await serve(silent)
    with pytest.raises(httpx.ReadTimeout):
        async with client.stream(
            "POST", server.url, headers=[], body=b"", connect_timeout=2, read_timeout=0.2
        ):
            pass
    url = server.url
    await server.__aexit__()
    with pytest.raises(httpx.ConnectError):
        await fetch(client, url)


# --- the connection opened ahead ------------------------------------------------------------------


async def until(condition: Callable[[], bool]) -> None:
    async def poll() -> None:
        while not condition():  # noqa: ASYNC110 - a server's count, no event for it
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), 5)


async def test_the_first_request_takes_the_connection_opened_ahead(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    server = await serve(answering(CHUNKED_OK))
    assert await client.open_ahead(server.url)
    await until(lambda: server.connections == 1)
    assert server.requests == []  # nothing was sent on it
    assert (await fetch(client, server.url))[2] == b"ok"
    assert (await fetch(client, server.url))[2] == b"ok"
    assert server.connections == 1


async def test_a_connection_opened_ahead_that_closed_or_aged_is_replaced(
    serve: Callable[..., Awaitable[RawServer]], client: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = await serve(answering(CHUNKED_OK))
    assert await client.open_ahead(server.url)
    await until(lambda: len(server.writers) == 1)
    server.writers[0].close()
    [(_, ahead)] = client._ahead.values()
    await until(lambda: ahead.socket.touched)  # its FIN arrived
    assert (await fetch(client, server.url))[2] == b"ok"
    assert server.connections == 2
    aged = Wire()
    try:
        assert await aged.open_ahead(server.url)
        monkeypatch.setattr(wire, "AHEAD_SECONDS", 0.0)
        assert (await fetch(aged, server.url))[2] == b"ok"
        assert server.connections == 4
    finally:
        await aged.aclose()


async def test_nothing_is_opened_ahead_for_a_server_that_refuses_or_a_strange_url(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    server = await serve(answering(CHUNKED_OK))
    url = server.url
    await server.__aexit__()
    assert not await client.open_ahead(url)  # closed: connection refused
    assert not await client.open_ahead("ftp://127.0.0.1:21")
    assert not await client.open_ahead("not a url at all ::")
    assert client._ahead == {}


# --- TLS ------------------------------------------------------------------------------------------


@pytest.fixture
def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that no authority signed, and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


def _served(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


async def test_a_certificate_no_authority_signed_is_refused(
    serve: Callable[..., Awaitable[RawServer]], self_signed: tuple[Path, Path], client: Wire
) -> None:
    server = await serve(answering(CHUNKED_OK), _served(*self_signed))
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        await fetch(client, server.url)
    assert server.requests == []


@pytest.mark.parametrize("ahead", [False, True])
async def test_a_trusted_certificate_serves_requests_over_tls(
    serve: Callable[..., Awaitable[RawServer]], self_signed: tuple[Path, Path], ahead: bool
) -> None:
    cert, _ = self_signed
    trusting = ssl.create_default_context(cafile=str(cert))
    server = await serve(answering(CHUNKED_OK), _served(*self_signed))
    w = Wire(lambda: trusting)
    try:
        if ahead:  # plain TCP opened ahead, TLS started on it by the first request
            assert await w.open_ahead(server.url)
        assert (await fetch(w, server.url))[2:] == (b"ok", True)
        assert (await fetch(w, server.url))[2:] == (b"ok", True)
        assert server.connections == 1
        assert server.requests[0].startswith(b"POST /v1/x HTTP/1.1\r\n")
    finally:
        await w.aclose()


async def test_a_paced_reader_waiting_is_woken_by_the_bodys_end_and_stops_watching_after(
    serve: Callable[..., Awaitable[RawServer]], client: Wire
) -> None:
    """While a paced reader waits (``_Body.watch_end``), the socket is watched for the end of
    the body: its last chunk wakes the reader at once instead of at its next paced read, and
    what came with it is read whole; afterwards the socket is not watched between reads."""
    go = asyncio.Event()

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while await SERVERS[-1].request(reader):
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n")
            await writer.drain()
            await go.wait()
            writer.write(b"1\r\nb\r\n1\r\nc\r\n0\r\n\r\n")
            await writer.drain()

    server = await serve(script)
    async with client.stream(
        "POST", server.url, headers=[], body=b"", connect_timeout=2, read_timeout=2
    ) as response:
        body = response.aiter_bytes()
        assert await anext(body) == b"a"
        (connection,) = client._active
        ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        stop = body.watch_end(lambda: ended.set_result(None))
        assert connection.transport.is_reading()  # watched while the reader waits
        go.set()
        await asyncio.wait_for(ended, 5)
        stop()
        assert not connection.transport.is_reading()
        assert b"".join([part async for part in body]) == b"bc"
        assert response.reusable
        woken: list[bool] = []
        body.watch_end(lambda: woken.append(True))()  # the body has ended: woken at once
        assert woken == [True]
