"""Small loopback servers for the network tests: a forward proxy, a CONNECT proxy, a model server
that resets a kept-alive connection, and a CA with its certificates made at test time (trustme).

Each is an asyncio server in the test's loop, recording what it saw, so that a test can say
"the request went through the proxy" or "the second request came on a new connection".
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import trustme

#: One short, complete chat-completions answer ("ok"), as a provider streams it.
SSE_ANSWER = (
    b'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)
#: Variables that route requests through a proxy or change the trusted certificates.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
CERT_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")


def without_network_variables(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` without proxy and certificate variables (either case)."""
    drop = {name.lower() for name in (*PROXY_VARIABLES, *CERT_VARIABLES)}
    return {k: v for k, v in environ.items() if k.lower() not in drop}


def sse_response(body: bytes = SSE_ANSWER) -> bytes:
    """A whole HTTP/1.1 answer carrying ``body`` as an event stream, kept alive."""
    head = (
        f"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
    """One request's head and body (by its content-length); None at the connection's end."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    body = await reader.readexactly(length) if length else b""
    return head, body


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP reset (RST: SO_LINGER 0), not a clean close (FIN)."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


@dataclass
class ModelServer:
    """Answers every request with :data:`SSE_ANSWER` on kept-alive connections; the requests
    listed in ``reset_requests`` (1-based, counted over the whole server) are read and then
    answered with a reset instead."""

    reset_requests: set[int] = field(default_factory=set)
    context: ssl.SSLContext | None = None
    #: (connection number, request line) of each request read.
    seen: list[tuple[int, bytes]] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None
    _connections: int = 0

    @property
    def base_url(self) -> str:
        scheme = "https" if self.context is not None else "http"
        host = "localhost" if self.context is not None else "127.0.0.1"
        return f"{scheme}://{host}:{self.port}/v1"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections += 1
        number = self._connections
        try:
            while (request := await read_request(reader)) is not None:
                self.seen.append((number, request[0].split(b"\r\n")[0]))
                if len(self.seen) in self.reset_requests:
                    reset(writer)
                    return
                writer.write(sse_response())
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ModelServer]:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.context)
        self.port = self._server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@dataclass
class Proxy:
    """A forward HTTP proxy (absolute-URI requests) that also tunnels ``CONNECT``; records each
    request line it got. With ``refuse``, it answers 502 instead of reaching the server (a
    company proxy that cannot see this machine's loopback)."""

    refuse: bool = False
    seen: list[bytes] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await read_request(reader)
            if request is None:
                return
            head, body = request
            line = head.split(b"\r\n")[0]
            self.seen.append(line)
            method, target, _ = line.split(b" ", 2)
            if self.refuse:
                page = b"<html><body>502 Bad Gateway</body></html>"
                writer.write(
                    b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\n"
                    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(page), page)
                )
                await writer.drain()
                return
            if method == b"CONNECT":
                host, _, port = target.decode().rpartition(":")
                up_reader, up_writer = await asyncio.open_connection(host, int(port))
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
                await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
                return
            await self._forward(head, body, target, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _forward(
        self, head: bytes, body: bytes, target: bytes, writer: asyncio.StreamWriter
    ) -> None:
        # http://host:port/path -> the origin form, on one connection closed after the answer.
        rest = target.split(b"://", 1)[1]
        authority, _, path = rest.partition(b"/")
        host, _, port = authority.decode().rpartition(":")
        lines = head.split(b"\r\n")
        method = lines[0].split(b" ")[0]
        kept = [ln for ln in lines[1:] if ln and not ln.lower().startswith(b"connection:")]
        out = b"\r\n".join(
            [method + b" /" + path + b" HTTP/1.1", *kept, b"connection: close", b"", b""]
        )
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        up_writer.write(out + body)
        await up_writer.drain()
        await _pipe(up_reader, writer)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Proxy]:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)


@dataclass(frozen=True)
class LocalCA:
    """A CA made at test time, a server context for ``localhost`` and ``127.0.0.1`` signed by
    it, and its certificate written as a PEM file (and in a hashed directory, as
    ``SSL_CERT_DIR`` wants it)."""

    ca: trustme.CA
    pem: Path
    directory: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("localhost", "127.0.0.1").configure_cert(context)
        return context


def make_ca(tmp_path: Path) -> LocalCA:
    """A fresh CA, its PEM file and an ``SSL_CERT_DIR``-style directory (``openssl rehash``'s
    names: the subject hash, ``.0``)."""
    import subprocess

    import trustme

    ca = trustme.CA()
    pem = tmp_path / "test-ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    directory = tmp_path / "certs"
    directory.mkdir()
    hashed = subprocess.run(
        ["openssl", "x509", "-hash", "-noout", "-in", str(pem)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (directory / f"{hashed}.0").write_bytes(pem.read_bytes())
    return LocalCA(ca, pem, directory)
