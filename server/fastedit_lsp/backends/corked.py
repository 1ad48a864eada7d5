"""A request's bytes in one write: httpcore's connections, with writes held until the next read.

httpcore writes an HTTP/1.1 request as h11 hands it over: the headers, then the body, two
``send`` calls. Each one wakes the model's server (on loopback, a process on the same two cores,
which then runs before the rest of the request is written) and each read there finds half a
request. Held until the connection is read from (the answer is awaited) or closed, the
request leaves in one write. HTTP/1.1 alternates: whatever is written is followed by a read of the
answer, so nothing held is ever left waiting.

A write's failure surfaces from that read instead (httpx raises ``WriteError`` all the same).
TLS connections are held the same way above the TLS layer (``start_tls`` writes what was held
first). The pool is httpcore's own, given this network backend (``network_backend``, its public
parameter); httpx's transport is built as always and its pool replaced (``_pool``: httpx and
httpcore are version-bounded in pyproject.toml).
"""

# httpcore's interface takes timeouts as parameters: ASYNC109 does not apply.
# ruff: noqa: ASYNC109

from __future__ import annotations

import contextlib
import ssl
import time
import typing

import httpcore
import httpx

#: What a :class:`CorkedStream` holds at most before it writes anyway.
HOLD_LIMIT = 256 * 1024


class CorkedStream(httpcore.AsyncNetworkStream):
    """A network stream whose writes wait for the next read (module docstring)."""

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self._stream = stream
        self._held: list[bytes] = []
        self._size = 0
        self._timeout: float | None = None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._held.append(buffer)
        self._size += len(buffer)
        self._timeout = timeout
        if self._size >= HOLD_LIMIT:
            await self.flush()

    async def flush(self) -> None:
        """Write what is held, in one write."""
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            self._size = 0
            await self._stream.write(data, self._timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self.flush()
        return await self._stream.read(max_bytes, timeout)

    async def aclose(self) -> None:
        self._held.clear()
        self._size = 0
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        await self.flush()
        tls = await self._stream.start_tls(ssl_context, server_hostname, timeout)
        return CorkedStream(tls)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._stream.get_extra_info(info)


#: A connection opened ahead (:func:`open_ahead`) serves the first request to its host within
#: this many seconds; later it is closed and a new one opened.
AHEAD_SECONDS = 30.0
#: Connections opened ahead, per (host, port): when, and the stream.
_opened_ahead: dict[tuple[str, int], tuple[float, httpcore.AsyncNetworkStream]] = {}


async def open_ahead(url: str, timeout: float = 2.0) -> bool:
    """Open a TCP connection to ``url``'s host ahead of the first request there (the warm-up
    does, for the profiles' model servers): that request then skips the TCP handshake, a round
    trip to a hosted provider. No byte is sent; an https request still makes its TLS handshake
    on it. Whether a connection is ready."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return False
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return False
    key = (parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80))
    if key in _opened_ahead:
        return True
    try:
        stream = await httpcore.AnyIOBackend().connect_tcp(*key, timeout=timeout)
    except (httpcore.ConnectError, httpcore.ConnectTimeout, OSError):
        return False  # the first request connects (and reports) as it always did
    _opened_ahead[key] = (time.monotonic(), stream)
    return True


async def discard_opened_ahead() -> None:
    """Close the connections opened ahead that no request took (the client closes)."""
    kept = list(_opened_ahead.values())
    _opened_ahead.clear()
    for _, stream in kept:
        with contextlib.suppress(Exception):
            await stream.aclose()


class CorkedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's default network backend, its streams wrapped in :class:`CorkedStream`; the
    first connection to a host takes the one :func:`open_ahead` opened, if it is still fresh and
    open (not readable: the server has neither closed it nor sent anything, the test httpcore
    makes before reusing a pooled connection)."""

    def __init__(self) -> None:
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        kept = _opened_ahead.pop((host, port), None)
        if kept is not None:
            opened, stream = kept
            fresh = time.monotonic() - opened < AHEAD_SECONDS
            plain = local_address is None and not socket_options
            if fresh and plain and not stream.get_extra_info("is_readable"):
                return CorkedStream(stream)
            with contextlib.suppress(Exception):
                await stream.aclose()
        stream = await self._backend.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return CorkedStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._backend.connect_unix_socket(
            path, timeout=timeout, socket_options=socket_options
        )
        return CorkedStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def transport(limits: httpx.Limits) -> httpx.AsyncHTTPTransport:
    """httpx's transport (no proxies from the environment), its pool on :class:`CorkedBackend`."""
    from .trust import shared

    built = httpx.AsyncHTTPTransport(limits=limits, trust_env=False, verify=shared())
    pool = getattr(built, "_pool", None)
    if type(pool) is httpcore.AsyncConnectionPool:  # not a proxy's, nor another httpx's
        built._pool = httpcore.AsyncConnectionPool(
            ssl_context=pool._ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=CorkedBackend(),
        )
    return built
