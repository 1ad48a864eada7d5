"""httpx's requests carried by aiohttp: the wire under the one client of :mod:`.network`.

httpx stays the client the code talks to (requests, responses, its exceptions, its
``MockTransport`` in the tests, its proxy routing by ``mounts``); aiohttp speaks HTTP/1.1 on the
socket: its C parser reads an event stream in one pass per socket read, where httpx's own
transport (httpcore, h11, anyio) hands over one HTTP chunk per read, through six async
generators. In a same-minute ``fastedit-lsp bench`` that cost httpx 1.35-1.4 x the server CPU
per token at 20,000 tok/s (docs/network.md, "why aiohttp").

This module is glue only: the request and response are aiohttp's, the errors are mapped to
httpx's classes (the cause kept, so the system's and ssl's words stay readable), and httpcore's
``trace`` extension is fed from aiohttp's tracing, so the backend learns when the request was
written and whether it went on a kept-alive connection (a reset one is sent again).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from types import SimpleNamespace
from typing import Any

import aiohttp
import httpx
import yarl

from .base import END_WATCH

#: The request headers aiohttp writes itself from the request (httpx's copies are dropped).
_OWN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})

Trace = Callable[[str, dict[str, Any]], Awaitable[None]]


@contextlib.contextmanager
def _mapped(*, reading: bool) -> Iterator[None]:
    """aiohttp's exceptions as httpx's, the original as the cause. ``reading``: the request is
    out and the answer is being read (a reset then is a read error, not a connect error)."""
    try:
        yield
    except httpx.HTTPError:
        raise
    except aiohttp.ClientHttpProxyError as exc:  # the proxy answered CONNECT with an error
        raise httpx.ProxyError(f"{exc.status}, message={exc.message!r}") from exc
    except aiohttp.ConnectionTimeoutError as exc:
        raise httpx.ConnectTimeout(str(exc) or "connect timed out") from exc
    except aiohttp.ServerTimeoutError as exc:
        raise httpx.ReadTimeout(str(exc) or "read timed out") from exc
    except aiohttp.ClientConnectorCertificateError as exc:  # ssl's own error as the cause
        raise httpx.ConnectError(str(exc)) from exc.certificate_error
    except aiohttp.ClientConnectorError as exc:  # also the proxy's and DNS
        raise httpx.ConnectError(str(exc)) from exc
    except aiohttp.InvalidURL as exc:
        raise httpx.InvalidURL(str(exc)) from exc
    except aiohttp.ClientPayloadError as exc:  # the body's framing broken, or cut short
        raise httpx.RemoteProtocolError(f"the body ended early: {_said(exc.__cause__)}") from exc
    except aiohttp.ServerDisconnectedError as exc:
        # Its message is the response head when the server closed in the middle of it.
        raise httpx.RemoteProtocolError(
            exc.message
            if isinstance(exc.message, str)
            else "the server closed the connection in the middle of the response head"
        ) from exc
    except aiohttp.ClientResponseError as exc:  # an answer that is not HTTP
        raise httpx.RemoteProtocolError(_said(exc)) from exc
    except (aiohttp.ClientError, OSError) as exc:
        text = str(exc) or type(exc).__name__
        raise (httpx.ReadError(text) if reading else httpx.WriteError(text)) from exc
    except TimeoutError as exc:
        raise httpx.ReadTimeout("read timed out") from exc


def _said(exc: BaseException | None) -> str:
    """An aiohttp error's own words, on one line (its parser's messages span several)."""
    message = getattr(exc, "message", None)
    text = message if isinstance(message, str) and message else str(exc or "")
    return " ".join(text.replace(" ^", " ").split()) or type(exc).__name__


class _Body(httpx.AsyncByteStream):
    """An aiohttp response's body: all that has arrived, per read."""

    def __init__(self, response: aiohttp.ClientResponse, read_timeout: float | None) -> None:
        self._response = response
        self._read_timeout = read_timeout
        #: Whom the body's end wakes while a paced reader waits (:meth:`watch_end`).
        self._wake: Callable[[], None] | None = None
        self._watching = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # The read timeout bounds each read's wait for the network (one timer per read), not
        # aiohttp's sock_read: that one is moved at every chunk the socket brings, a timer
        # cancelled and made again per token of a model flushing each event.
        content = self._response.content
        with _mapped(reading=True):
            while True:
                try:
                    async with asyncio.timeout(self._read_timeout):
                        chunk = await content.readany()
                except TimeoutError as exc:  # an OSError too: said here, not as a read error
                    raise httpx.ReadTimeout("read timed out") from exc
                if not chunk:
                    return
                yield chunk

    def watch_end(self, wake: Callable[[], None]) -> Callable[[], None]:
        """An :data:`~.base.EndWatch`: call ``wake`` once when the body's end arrives (its
        last chunk parsed, or the connection's end for a body without a length), at once if it
        already has; returns the function that stops watching. aiohttp parses what arrives as
        it arrives, so a reader waiting at its own pace learns of the end then, not at its next
        read."""
        self._wake = wake
        if not self._watching:
            self._watching = True
            self._response.content.on_eof(self._ended)  # at once if ended
        elif self._response.content.is_eof():
            self._ended()
        return self._unwatch

    def _ended(self) -> None:
        wake, self._wake = self._wake, None
        if wake is not None:
            wake()

    def _unwatch(self) -> None:
        self._wake = None

    async def aclose(self) -> None:
        self._wake = None
        # A body read to its end leaves its connection in the pool; otherwise it is closed.
        if self._response.content.at_eof():
            self._response.release()
        else:
            self._response.close()


def _tracing() -> aiohttp.TraceConfig:
    """aiohttp's tracing, told in httpcore's names to the request's ``trace`` extension."""
    config = aiohttp.TraceConfig()

    def tell(name: str) -> Callable[[Any, SimpleNamespace, Any], Awaitable[None]]:
        async def on(_session: Any, context: SimpleNamespace, _params: Any) -> None:
            trace = context.trace_request_ctx
            if trace is not None:
                await trace(name, {})

        return on

    config.on_connection_create_start.append(tell("connection.connect_tcp.started"))
    # Told as the headers are buffered: nothing is on the socket yet, the writing has begun.
    config.on_request_headers_sent.append(tell("http11.send_request_headers.started"))
    # Told as the body is handed to the writer, which writes it (with the buffered headers, in
    # one write) right after, in the same step: the trace's consumer hears it on the loop's
    # next turn (:class:`.post._Trace`), once the request is on the socket.
    config.on_request_chunk_sent.append(tell("http11.send_request_body.complete"))
    return config


class AiohttpTransport(httpx.AsyncBaseTransport):
    """One connection pool (an aiohttp session), direct or through one proxy.

    ``tls`` makes the TLS context of every connection that speaks TLS (to an ``https`` server,
    or to an ``https://`` proxy), called on the first one: a client of plain-``http`` model
    servers (a local model) never reads the trusted certificates (~21 ms of CPU).
    """

    def __init__(
        self,
        tls: Callable[[], ssl.SSLContext],
        *,
        proxy: str | None = None,
        max_connections: int = 20,
        keepalive_seconds: float = 4.0,
    ) -> None:
        self._tls = tls
        self._proxy = proxy
        self._proxy_tls = proxy is not None and proxy.lower().startswith("https://")
        self._limit = max_connections
        self._keepalive = keepalive_seconds
        #: Made at the first request, on the event loop that sends it.
        self._session: aiohttp.ClientSession | None = None

    def _ssl(self, url: str) -> ssl.SSLContext | bool:
        """The TLS context of a request to ``url``: ours when TLS is spoken on the way (aiohttp
        hands a request's context to its proxy's connection too); otherwise none is needed
        (``True``, aiohttp's default, which no connection then uses)."""
        if self._proxy_tls or url[:6].lower() == "https:":
            return self._tls()
        return True

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                # Each request names its TLS context (:meth:`_ssl`).
                connector=aiohttp.TCPConnector(
                    limit=self._limit, keepalive_timeout=self._keepalive
                ),
                # The proxy is chosen by httpx's mounts, from the environment and the settings
                # (network.py); aiohttp reads no variable of its own.
                trust_env=False,
                # httpx keeps the cookies (its jar sets the request's Cookie header): a jar of
                # aiohttp's own would only be searched again per request.
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,  # httpx decodes, as with its own transport
                trace_configs=[_tracing()],
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding"),
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeout: dict[str, float | None] = request.extensions.get("timeout", {})
        trace: Trace | None = request.extensions.get("trace")
        headers = [
            (name, value)
            for name, value in request.headers.multi_items()
            if name.lower() not in _OWN_HEADERS
        ]
        body = await request.aread()
        read = timeout.get("read")
        url = str(request.url)
        context = self._ssl(url)
        # Until the answer's head, the read timeout is aiohttp's (the silence after the
        # request); the body's reads then time themselves (:class:`_Body`).
        with _mapped(reading=False):
            response = await self._get_session().request(
                request.method,
                url,
                headers=headers,
                ssl=context,
                data=body or None,
                allow_redirects=False,
                proxy=self._proxy,
                timeout=aiohttp.ClientTimeout(
                    total=None,
                    connect=timeout.get("pool"),
                    sock_connect=timeout.get("connect"),
                    sock_read=read,
                ),
                trace_request_ctx=trace,
            )
        _stop_read_timeout(response)
        if trace is not None:
            await trace("http11.receive_response_headers.complete", {})

        stream = _Body(response, read)
        return httpx.Response(
            response.status,
            headers=list(response.raw_headers),
            stream=stream,
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": _reason(response),
                END_WATCH: stream.watch_end,
            },
        )

    def prepare(self, url: str) -> None:
        """Make the TLS context a request to ``url`` needs, if any (blocking)."""
        self._ssl(url)

    async def preconnect(self, url: str, seconds: float) -> None:
        """Open a connection to ``url``'s server (through this transport's proxy, TLS included)
        and leave it in the pool, nothing sent: the next request there, within the pool's
        keep-alive, skips the handshakes. A server that cannot be reached is left to that
        request to report."""
        connector = self._get_session().connector
        assert connector is not None  # the session's own (made above)
        request = aiohttp.ClientRequest(
            "GET",
            yarl.URL(url),
            loop=asyncio.get_running_loop(),
            proxy=yarl.URL(self._proxy) if self._proxy else None,
            ssl=self._ssl(url),  # as the request's, so that it finds this connection
        )
        timeout = aiohttp.ClientTimeout(total=None, connect=seconds, sock_connect=seconds)
        with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError, ValueError):
            connection = await connector.connect(request, [], timeout)
            connection.release()

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    def counts(self) -> tuple[int, int]:
        """Open connections and, of those, idle ones. aiohttp has no public view of its pool:
        this reads the connector's (idle ones by key, acquired ones), and counts nothing if
        their shape ever changes."""
        session = self._session
        if session is None or session.closed:
            return 0, 0
        pooled: Any = getattr(session.connector, "_conns", None)
        acquired: Any = getattr(session.connector, "_acquired", None)
        try:
            idle = sum(len(conns) for conns in pooled.values())
            return idle + len(acquired), idle
        except (AttributeError, TypeError):  # a pool of another shape: counted as nothing
            return 0, 0


def _stop_read_timeout(response: aiohttp.ClientResponse) -> None:
    """Once the head is in, aiohttp's read timeout is not moved at each chunk any more (the
    body's reads time themselves). The timer already set still fires after a silence as long
    (a stall, said as a read timeout either way); the next chunk cancels it."""
    connection = response.connection
    protocol = connection.protocol if connection is not None else None
    if protocol is not None:
        protocol.read_timeout = None


def _reason(response: aiohttp.ClientResponse) -> bytes:
    return (response.reason or "").encode("ascii", "replace")
