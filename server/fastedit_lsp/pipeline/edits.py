"""The edit session: a job's filtered text stream becomes partial edits in the client's buffer.

No pygls here: the session sends through an ``apply`` callable (the server wraps
``workspace/applyEdit``), so it tests without a client. What it guarantees:

- the first text goes out at once, and so does the end of the answer's first line (the piece
  that brings its line break, or what came before a :data:`~.stream.LINE_ENDED` when the
  reconciler holds that break): the first line is what the user waits for; other edits are
  coalesced to ``max_edits_per_second``, and spaced by the editor's own acknowledgement time
  when that is longer (adaptive coalescing: :func:`coalescing_gap`). The rest of the first line
  is coalesced too, so that no edit is on the wire when its end arrives;
- the last text goes out as soon as the stream ends, not at the next edit's time (the backend
  cuts its paced wait short when the answer's end arrives: ``StreamInfo.pace``);
- edits are sequential: the next waits for the client's reply to the previous one, so a slow
  editor simply gets fewer, bigger edits;
- before every edit the region is checked against the document and the tracker (a conflict stops
  the stream: :class:`ConflictError`); nothing but the target range's original text is deleted;
- when the job is cancelled, the edit already on the wire is awaited before unwinding, so the job
  knows exactly what the client acknowledged.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Literal

from ..backends.base import EndWatch, StreamInfo
from ..core.document import Document
from ..core.tracking import RegionTracker, SentEdit
from .stream import LINE_ENDED

ApplyEdit = Callable[[SentEdit], Awaitable[bool]]

#: A paced read happens this long before the edit it feeds is due (seconds).
PACE_LEAD = 0.001
#: Reads are paced only while fewer pieces than this arrive per edit interval: a faster stream
#: already fills each read, and holding it back would only leave a backlog at its end.
PACE_BELOW = 128


#: Weight of the latest acknowledgement time in its running average (adaptive coalescing).
ACK_WEIGHT = 0.3


def coalescing_gap(interval: float, ack: float) -> float:
    """The pause after an acknowledged edit before the next one may go out (adaptive coalescing).

    At least the rate limit's ``interval`` (``maxEditsPerSecond``), and at least as long as the
    editor takes to acknowledge an edit (``ack``, a running average): the editor then spends at
    most half its time applying one job's edits, and a slow editor gets fewer, larger edits.
    """
    return max(interval, ack)


class ConflictError(Exception):
    """The stream stopped because the document changed in a way the server cannot rebase."""


class EditRejectedError(Exception):
    """The client answered ``applied: false`` (or did not answer)."""


def _safe_split(text: str) -> int:
    """How much of ``text`` can be sent now without splitting a CRLF pair or a surrogate pair.

    A "\\r" sent alone and a "\\n" sent next are one line break in the client but two in the
    server's arithmetic; a lone high surrogate (from a model's JSON escapes) changes length when
    its partner arrives. Both are held until the next piece.
    """
    if text and (text[-1] == "\r" or "\ud800" <= text[-1] <= "\udbff"):
        return len(text) - 1
    return len(text)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _ended_well(producer: asyncio.Task[None]) -> bool:
    """Whether the stream's producer ended without an error (its text is all there)."""
    return producer.done() and not producer.cancelled() and producer.exception() is None


class EditSession:
    """Stream text into one job's region of one document."""

    #: Edits the job made before this session (an earlier attempt's), for its ``metrics.edits``.
    edits_before = 0

    def __init__(
        self,
        document: Document,
        tracker: RegionTracker,
        apply: ApplyEdit,
        *,
        max_edits_per_second: int = 60,
        streaming: Literal["live", "final"] = "live",
        on_edit: Callable[[int], None] | None = None,
    ) -> None:
        self.document = document
        self.tracker = tracker
        self._apply = apply
        self._interval = 1.0 / max(1, max_edits_per_second)
        self._streaming = streaming
        self._on_edit = on_edit
        #: Number of edits the client acknowledged.
        self.edits = 0
        #: Text the client acknowledged, in order.
        self.sent_text = ""
        self._in_flight: asyncio.Future[bool] | None = None
        self._last_sent = 0.0
        self._pieces = 0
        self._first_piece_at = 0.0
        self._producer: asyncio.Task[None] | None = None
        #: The stream this session's reads are paced for (:meth:`stream_info`).
        self._info: StreamInfo | None = None
        #: Whether a line break has gone out: until then reads are not paced, and a line break
        #: arriving ends the coalescing wait (:attr:`_line_break`).
        self._first_line_out = False
        self._line_break: asyncio.Future[None] | None = None
        #: A line of the answer ended upstream, its break held (:data:`~.stream.LINE_ENDED`)
        #: while no line break went out: what arrived before goes out at once.
        self._line_ended = False
        #: Running average of the editor's acknowledgement time (seconds).
        self.ack_seconds = 0.0

    async def pace(self, ended: EndWatch | None = None) -> None:
        """Wait until the next edit may go out: the source's reads are paced by this (see
        ``StreamInfo.pace``), so text is read just before it can be sent, not token by token.

        Until the answer's first line is whole in the buffer, reads are not paced (each piece
        goes out at once). The backend cuts this wait short when the end of the stream arrives
        meanwhile. A stream fast enough to fill every read (:data:`PACE_BELOW`) is not paced.
        """
        if (
            self._streaming == "final"
            or not self._first_line_out
            or self._arrival_rate() * self._interval >= PACE_BELOW
        ):
            return
        while self._in_flight is not None and not self._in_flight.done():
            await asyncio.wait([self._in_flight])
        # A long interval (a low maxEditsPerSecond) still reads 60 times a second, so the end
        # of the stream is never seen more than a frame late.
        delay = min(self._last_sent + self._gap() - PACE_LEAD - time.monotonic(), 1 / 60)
        if delay <= 0:
            return
        if ended is None:
            await asyncio.sleep(delay)
            return
        # Cut short by the backend when the answer's end arrives meanwhile.
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        timer = loop.call_later(delay, _wake, woken)
        stop = ended(lambda: _wake(woken))
        try:
            await woken
        finally:
            timer.cancel()
            stop()

    def _gap(self) -> float:
        return coalescing_gap(self._interval, self.ack_seconds)

    def stream_info(self) -> StreamInfo:
        """A model stream's info, its reads paced by this session (:meth:`pace`), which counts
        the model's text deltas for the arrival rate (a backend may hand over the deltas of one
        read as one piece)."""
        self._info = StreamInfo(pace=self.pace)
        return self._info

    def _arrival_rate(self) -> float:
        """The model's text deltas (or, for a source without a stream info, pieces of text)
        received per second so far."""
        elapsed = time.monotonic() - self._first_piece_at
        count = self._info.deltas if self._info is not None else self._pieces
        return count / elapsed if count > 1 and elapsed > 0 else 0.0

    async def run(self, source: AsyncIterator[str]) -> None:
        """Consume ``source`` to its end, sending its text as coalesced edits."""
        if self._streaming == "final":
            parts = [text async for text in source]
            if text := "".join(parts):
                await self._send(text, last=True)
            return
        buffer: list[str] = []
        arrived = asyncio.Event()

        def take(text: str) -> None:
            if not self._pieces:
                self._first_piece_at = time.monotonic()
            self._pieces += 1
            buffer.append(text)
            if self._line_break is not None and "\n" in text:
                _wake(self._line_break)
            arrived.set()

        # The first piece is awaited in this task: the model's request goes out in this step
        # of the job, not in a producer task's first step a turn of the loop later, after the
        # command's reply and whatever else was ready (~0.06 ms of a job's first edit).
        ended = True
        async for text in source:
            if text:
                take(text)
                ended = False
                break

        def line_ended() -> None:
            if not self._first_line_out:
                self._line_ended = True
                if self._line_break is not None:
                    _wake(self._line_break)
                arrived.set()

        async def produce() -> None:
            try:
                if not ended:
                    async for text in source:
                        if text:
                            take(text)
                        elif text == LINE_ENDED:
                            line_ended()
            finally:
                arrived.set()

        producer = self._producer = asyncio.create_task(produce())
        try:
            await self._drain(producer, buffer, arrived)
        finally:
            # Once: a second cancel would interrupt httpcore's close of the stream (shielded only
            # from anyio's cancel scopes), leaving the model generating on an open connection.
            if not producer.done() and not producer.cancelling():
                producer.cancel()
            await asyncio.gather(producer, return_exceptions=True)
        producer.result()  # re-raise a backend error

    async def _drain(
        self, producer: asyncio.Task[None], buffer: list[str], arrived: asyncio.Event
    ) -> None:
        """Send what ``producer`` puts in ``buffer`` as coalesced edits, until it is done."""
        while True:
            await arrived.wait()
            arrived.clear()
            if not self.edits and not producer.done() and not self._first_line_ends(buffer):
                # The first text goes with what of the first line came in the same read (the
                # source's next pieces that need no waiting): one turn of the loop.
                await asyncio.sleep(0)
            elif self.edits and not producer.done() and not self._first_line_ends(buffer):
                delay = self._last_sent + self._gap() - time.monotonic()
                if delay > 0:
                    # Coalesce; wake early if the stream ends (or the first line) meanwhile.
                    waits: list[asyncio.Future[None]] = [producer]
                    if not self._first_line_out:
                        self._line_break = asyncio.get_running_loop().create_future()
                        waits.append(self._line_break)
                    try:
                        await asyncio.wait(
                            waits, timeout=delay, return_when=asyncio.FIRST_COMPLETED
                        )
                    finally:
                        self._line_break = None
            text = "".join(buffer)
            buffer.clear()
            cut = len(text) if producer.done() else _safe_split(text)
            if cut < len(text):
                buffer.append(text[cut:])
                text = text[:cut]
            self._line_ended = False
            if text:
                self._first_line_out = self._first_line_out or "\n" in text
                await self._send(text, last=not buffer and _ended_well(producer))
                self._last_sent = time.monotonic()
            if producer.done() and not buffer:
                return
            if buffer and text:
                # Look again at what came in during the send. A held half-pair with nothing
                # sent waits for the next piece: looping at once never yields (Event.wait
                # returns at once when set), which starved the stream for good.
                arrived.set()

    def _first_line_ends(self, buffer: list[str]) -> bool:
        """Whether ``buffer`` brings the end of the answer's first line (it goes out at once)."""
        return not self._first_line_out and (
            self._line_ended or any("\n" in text for text in buffer)
        )

    async def _send(self, text: str, *, last: bool = False) -> None:
        """Send ``text``; ``last``: the stream ended well and nothing follows it."""
        if reason := self.tracker.verify(self.document):
            raise ConflictError(reason)
        await self._deliver(self.tracker.next_edit(text))

    async def _deliver(self, edit: SentEdit) -> None:
        """Send one edit and account for the client's answer (also when cancelled meanwhile)."""
        # Registered before sending: some editors report the change before they reply.
        self.tracker.sent(edit)
        pending = self._in_flight = asyncio.ensure_future(self._apply(edit))
        sent_at = time.monotonic()
        try:
            applied = await asyncio.shield(pending)
        except asyncio.CancelledError:
            # Close the model's stream first (a cancel's figure is when it stops), then learn
            # the outcome of the edit on the wire, so the job knows what the buffer holds.
            if self._producer is not None:
                self._producer.cancel()
            try:
                applied = await pending
            except Exception:
                applied = False
            self._account(edit, applied)
            raise
        except TimeoutError as exc:
            # Not answered is not refused: an editor that stalled (Emacs 28's jsonrpc) applies
            # the edit late. It stays in flight, so its late report is recognised as the job's
            # own and a revert restores the original.
            raise EditRejectedError(
                f"the editor did not answer ({exc}); the job stopped sending edits"
            ) from exc
        except Exception as exc:
            self.tracker.rejected(edit)
            raise EditRejectedError(f"the editor did not apply the edit: {exc}") from exc
        ack = time.monotonic() - sent_at
        self.ack_seconds = (
            ack if not self.edits else (1 - ACK_WEIGHT) * self.ack_seconds + (ACK_WEIGHT * ack)
        )
        self._account(edit, applied)
        if not applied:
            raise EditRejectedError("the editor refused the edit (applied: false)")

    def _account(self, edit: SentEdit, applied: bool) -> None:
        if not applied:
            self.tracker.rejected(edit)
            return
        self.edits += 1
        self.sent_text += edit.text
        if self._on_edit is not None:
            self._on_edit(self.edits)
