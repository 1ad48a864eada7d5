"""A model stream's request and its reads: the one place every wire format's POST goes out.

Chat completions and FIM (:class:`.openai.OpenAICompatibleBackend`) and the Responses and
Messages APIs (:class:`.streams.ApiBackend`) all open their stream with :func:`open_stream`, over
the server's one ``httpx.AsyncClient`` (:mod:`.network`), so the transport (connections,
proxies, TLS) is chosen in one place, and read it with :class:`PacedReads` (the consumer's pace,
the end of the answer seen as it arrives). A kept-alive connection reset as the request arrived
is sent again here, once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from .base import END_WATCH, EndWatch, StreamInfo

#: After the answer's end the body's end (the last chunk marker) is read, so that the connection
#: goes back to the pool instead of being closed (a new TCP and TLS handshake for every job) —
#: within these bounds: a server that sends more, or lingers, gets its connection closed.
DRAIN_BYTES = 64 * 1024
DRAIN_SECONDS = 0.5


async def drain(chunks: AsyncIterator[bytes], seconds: float = DRAIN_SECONDS) -> None:
    """Read the body's rest (bounded), so its connection is kept for the next call."""

    async def read() -> None:
        size = 0
        async for chunk in chunks:
            size += len(chunk)
            if size > DRAIN_BYTES:
                return

    # Failing here loses only the connection's reuse: the answer is complete. (A timeout scope,
    # not ``wait_for``: on Python 3.11 that wraps the read in a task of its own, a loop turn.)
    with contextlib.suppress(TimeoutError, httpx.HTTPError):
        async with asyncio.timeout(seconds):
            await read()


def closed_by_cancel() -> bool:
    """Whether the task closing a stream is being cancelled (a job cancel, a superseded
    completion): then the connection is closed at once, whatever it costs to open another."""
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


class _Trace:
    """httpcore's ``trace`` extension for one request: says when the request is written (the
    consumer's ``sent``), whether it went on a new connection, and whether an answer began.

    ``sent`` is called on the event loop's turn after the transport tells that it hands the
    body over: aiohttp tells it just before its writer writes the body, in the same step, so the
    consumer (the job's status to the editor) comes after the request's bytes, not before them
    (the editor's process, woken by the status first, held the model's request back).
    """

    __slots__ = ("answered", "fresh", "sent", "telling", "written")

    def __init__(self, sent: Callable[[], None] | None) -> None:
        self.sent = sent
        #: A connection was opened for this request (it did not wait in the pool).
        self.fresh = False
        #: The request's writing began on a connection (the transport traced it).
        self.written = False
        self.answered = False
        #: ``sent`` is due on the loop's next turn.
        self.telling = False

    @property
    def reused_unanswered(self) -> bool:
        """Whether the request went on a kept-alive connection and nothing was answered: the
        server may have closed (or reset) it as the request arrived."""
        return self.written and not self.fresh and not self.answered

    def answer(self) -> None:
        """The answer's head arrived, so the request went out (a transport without traces)."""
        self.answered = True
        self._tell()

    def withdraw(self) -> Callable[[], None] | None:
        """The consumer's ``sent``, not called by this trace any more (the request failed)."""
        sent, self.sent = self.sent, None
        return sent

    def _tell(self) -> None:
        if (sent := self.withdraw()) is not None:
            sent()

    async def __call__(self, name: str, info: dict[str, Any]) -> None:
        if name.endswith(".send_request_body.complete"):
            if self.sent is not None and not self.telling:
                self.telling = True
                asyncio.get_running_loop().call_soon(self._tell)
        elif name.endswith(".send_request_headers.started"):
            self.written = True
        elif name.endswith("receive_response_headers.complete"):
            self.answered = True
        elif name.startswith("connection.connect_"):
            self.fresh = True


@contextlib.asynccontextmanager
async def open_stream(
    client: httpx.AsyncClient,
    url: str,
    content: bytes,
    *,
    headers: dict[str, str],
    timeout_s: float,
    info: StreamInfo,
) -> AsyncIterator[httpx.Response]:
    """``async with open_stream(...) as response``: POST ``content`` (JSON) to ``url`` and
    stream the answer.

    The read timeout is the longest silence between two reads (what a stalled model is), the
    connect timeout at most 5 s; ``info.sent`` is called once the request is written (a request
    sent again does not call it again). A kept-alive connection the server closed or reset (RST)
    as the request arrived, nothing answered, gets the request once more on a new one. Raises
    httpx's errors (the caller says them as a :class:`~.base.BackendError`).
    """
    headers = {**headers, "Accept-Encoding": "identity"}
    # httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0)).as_dict(), as the request's
    # extension (build_request then makes no Timeout of its own).
    timeout = {
        "connect": min(timeout_s, 5.0),
        "read": timeout_s,
        "write": timeout_s,
        "pool": timeout_s,
    }
    sent, info.sent = info.sent, None
    resent = False
    while True:
        trace = _Trace(sent)
        opened = client.stream(
            "POST",
            url,
            content=content,
            headers=headers,
            extensions={"timeout": timeout, "trace": trace},
        )
        try:
            response = await opened.__aenter__()
        except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError):
            pending = trace.withdraw()
            if resent or not trace.reused_unanswered:
                raise
            resent, sent = True, pending
            continue
        except BaseException:
            trace.withdraw()
            raise
        break
    try:
        trace.answer()
        yield response
    except BaseException as exc:
        if not await opened.__aexit__(type(exc), exc, exc.__traceback__):
            raise
    else:
        await opened.__aexit__(None, None, None)


class PacedReads:
    """A response body read at the consumer's pace (``StreamInfo.pace``), once text has arrived.

    Every read after the first text is paced: a read takes all that has arrived (aiohttp's
    parser holds what each socket read brought), so the next one would wait for the network, and
    the pace lets what arrives meanwhile gather for one read. The pace is given the transport's
    :data:`~.base.EndWatch` (:data:`~.base.END_WATCH`; ``httpx.MockTransport`` has none), so a
    consumer that waits is woken when the answer's end arrives: the last text is read as it
    arrives, not at the next paced read.
    """

    __slots__ = ("_info", "_watch", "chunks")

    def __init__(self, response: httpx.Response, info: StreamInfo) -> None:
        self.chunks = response.aiter_bytes()
        self._info = info
        watch = response.extensions.get(END_WATCH)
        self._watch: EndWatch | None = watch if callable(watch) else None

    async def read(self) -> bytes | None:
        """The next bytes, None at the body's end."""
        info = self._info
        if info.pace is not None and info.deltas:
            await info.pace(self._watch)
        return await anext(self.chunks, None)
