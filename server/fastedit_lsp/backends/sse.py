"""Server-sent events and OpenAI chat-completion chunks, parsed incrementally from raw bytes.

Pure: no httpx, no pygls. :class:`SSEParser` turns socket reads into events however the reads
split the stream (mid-line, mid-CRLF, mid-UTF-8 character); :func:`parse_chat_chunk` turns one
event's ``data`` into the text delta and bookkeeping the job needs, and
:func:`parse_infill_chunk` does the same for llama.cpp's native ``/infill`` events.

The parser follows the WHATWG event-stream rules (LF, CRLF or CR line ends, ``:`` comments, the
``data``/``event``/``id``/``retry`` fields, one optional space after the colon, multi-line
``data``) with two deliberate departures:

* Bytes that are not UTF-8 raise a protocol :class:`BackendError` instead of being replaced by
  U+FFFD: a model stream that arrives corrupted is untrustworthy, and silently inserting
  replacement characters into the user's buffer is worse than stopping.
* At end of stream (:meth:`SSEParser.finish`) a final line without its newline and an event
  without its blank line are still delivered, because some servers close right after
  ``data: [DONE]``. A truncated JSON payload then fails :func:`parse_chat_chunk` loudly.

Any bad event is fatal (the caller stops the stream): skipping it would drop or reorder text
inside an edit the user is about to keep.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..core import json_codec
from .base import BackendError

#: A line longer than this without a line end is not an event stream (or is a runaway server);
#: the cap keeps a misbehaving endpoint from growing the buffer without bound.
MAX_LINE_BYTES = 1 << 20

_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


# Values, never changed once made; not frozen because a frozen dataclass' ``__init__`` costs
# 2-3 times as much, and one of each is made per token (20,000 a second from a fast model).
@dataclass(slots=True)
class SSEEvent:
    """One dispatched event; ``data`` has its lines joined by ``\\n``."""

    data: str
    event: str = "message"
    #: The last event id seen in the stream so far (it persists across events, per the spec).
    id: str | None = None


class SSEParser:
    """Incremental event-stream parser: ``feed`` each read, then ``finish`` once at the end."""

    def __init__(self) -> None:
        self._partial = bytearray()
        #: The previous read ended in CR, so an LF starting the next read belongs to it.
        self._skip_lf = False
        self._first_line = True
        self._line_no = 0
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._pending: BackendError | None = None
        #: The reconnection time the server asked for, in ms (unused by us: we never reconnect).
        self.retry_ms: int | None = None

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Consume one read and return the events it completed, in order.

        Raises a protocol :class:`BackendError` on bytes that are not an event stream. Events
        completed earlier in the same read are returned first and the error is raised by the next
        ``feed`` or ``finish``, so what is delivered does not depend on how reads were cut.
        """
        self._raise_pending()
        events: list[SSEEvent] = []
        try:
            self._feed(data, events)
        except BackendError as error:
            if not events:
                raise
            self._pending = error
        return events

    def finish(self) -> list[SSEEvent]:
        """End of stream: deliver a last unterminated line and event (see the module docstring)."""
        self._raise_pending()
        events: list[SSEEvent] = []
        if self._partial:
            line = bytes(self._partial)
            self._partial.clear()
            self._line(line, events)
        self._dispatch(events)
        self._skip_lf = False
        return events

    def _feed(self, data: bytes, events: list[SSEEvent]) -> None:
        start = 0
        if self._partial or self._data or self._event or self._skip_lf or self._first_line:
            # The event under way (or the stream's first), line by line to its end: the whole
            # events after it may then take the one-pass path.
            if self._data and not self._partial and data[:1] == b"\n":
                end = 1  # the blank line that ends it (the read before ended at a line end)
            else:
                end = data.find(b"\n\n") + 2
            if end < 1 or b"\r" in data[:end]:
                self._lines(data, 0, events)
                return
            self._lines(data[:end], 0, events)
            start = end
        start += self._feed_whole_events(data[start:] if start else data, events)
        if start < len(data):
            self._lines(data, start, events)

    def _lines(self, data: bytes, start: int, events: list[SSEEvent]) -> None:
        """Read ``data`` from ``start`` line by line (any line end), keeping an unfinished line."""
        if start == 0 and data and self._skip_lf:
            self._skip_lf = False
            if data[0] == 0x0A:
                start = 1
        # Line ends are ASCII and never occur inside a UTF-8 sequence, so splitting bytes before
        # decoding keeps multi-byte characters whole however the reads were cut.
        for match in _EOL.finditer(data, start):
            line = data[start : match.start()]
            if self._partial:
                line = bytes(self._partial) + line
                self._partial.clear()
            self._line(line, events)
            start = match.end()
            if start == len(data) and match.group() == b"\r":
                self._skip_lf = True
        self._partial += data[start:]
        if len(self._partial) > MAX_LINE_BYTES:
            raise BackendError(
                "protocol", f"a line in the event stream exceeds {MAX_LINE_BYTES} bytes"
            )

    def _feed_whole_events(self, data: bytes, events: list[SSEEvent]) -> int:
        """The common read's whole events, parsed in one pass: one-line ``data:`` events, LF
        line ends, nothing pending before them (a provider flushes each event whole; a read that
        gathers several often ends inside the next one, and the next read then begins with its
        rest: those are read line by line). Returns how many bytes it read: 0, having changed
        nothing, for anything else (the line-by-line path then reads it, with its errors and
        line numbers)."""
        if self._partial or self._data or self._event or self._skip_lf or self._first_line:
            return 0
        end = data.rfind(b"\n\n") + 2
        if end < 2:
            return 0
        whole = data[: end - 2]
        if b"\r" in whole:
            return 0
        blocks = whole.split(b"\n\n")
        texts: list[str] = []
        for block in blocks:
            if not block.startswith(b"data:") or b"\n" in block or len(block) > MAX_LINE_BYTES:
                return 0
            try:
                text = block[5:].decode("utf-8")
            except UnicodeDecodeError:
                return 0
            texts.append(text[1:] if text.startswith(" ") else text)
        self._line_no += 2 * len(blocks)
        last_id = self._last_id
        events.extend(SSEEvent(text, "message", last_id) for text in texts)
        return end

    def _raise_pending(self) -> None:
        if self._pending is not None:
            raise self._pending

    def _line(self, raw: bytes, events: list[SSEEvent]) -> None:
        self._line_no += 1
        if self._first_line:
            self._first_line = False
            raw = raw.removeprefix(_BOM)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BackendError(
                "protocol",
                f"the event stream has bytes that are not UTF-8 text (line {self._line_no})",
            ) from None
        if not line:
            self._dispatch(events)
        elif not line.startswith(":"):  # a leading colon marks a comment (keep-alive pings)
            name, _, value = line.partition(":")
            self._field(name, value.removeprefix(" "))

    def _field(self, name: str, value: str) -> None:
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        # Unknown fields are ignored, as the spec requires.

    def _dispatch(self, events: list[SSEEvent]) -> None:
        # An event without any data line is not dispatched (the spec's rule); its type is reset.
        if self._data:
            events.append(SSEEvent("\n".join(self._data), self._event or "message", self._last_id))
        self._data = []
        self._event = ""


@dataclass(slots=True)
class ChatChunk:
    """What one chat-completion chunk carries for us."""

    #: The content delta (``choices[0].delta.content``, or ``choices[0].text``); ``""`` if none.
    text: str = ""
    finish_reason: str | None = None
    #: ``usage.completion_tokens`` from the usage chunk (``choices: []``), when sent.
    completion_tokens: int | None = None
    model: str | None = None
    #: ``usage.completion_tokens_details``' (accepted, rejected) prediction tokens, when sent.
    prediction_tokens: tuple[int, int] | None = None
    #: The provider's error message when it sent an ``{"error": ...}`` object in a 200 stream.
    error: str | None = None
    #: The ``[DONE]`` sentinel.
    done: bool = False
    #: The tier that served the request (``service_tier``, read from the usage chunk).
    service_tier: str | None = None


class SurrogateJoiner:
    """Joins a UTF-16 surrogate pair split over two deltas (``"\\ud83c"`` then ``"\\udf89"``,
    as some servers stream an emoji): a delta ending in a high surrogate keeps it back until the
    next delta, so that the edit session never receives half a character."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held = ""

    def join(self, text: str) -> str:
        """``text`` with the held half before it and a trailing high surrogate held back."""
        if self.held:
            text, self.held = self.held + text, ""
            if text[1:2] and "\udc00" <= text[1] <= "\udfff":
                pair = text[:2].encode("utf-16-le", "surrogatepass").decode("utf-16-le")
                text = pair + text[2:]
            else:  # the low half never came: the high one alone cannot be written
                text = "\ufffd" + text[1:]
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self.held = text[:-1], text[-1]
        return text

    def flush(self) -> str:
        """At the stream's end: a high surrogate still held, as U+FFFD (its pair never came)."""
        held, self.held = self.held, ""
        return "\ufffd" if held else ""


def parse_chat_chunk(data: str) -> ChatChunk:
    """Parse one event's data; raise a protocol :class:`BackendError` when it is not a chunk."""
    if data.strip() == "[DONE]":
        return ChatChunk(done=True)
    obj = _json_object(data)
    model = obj.get("model")
    if not isinstance(model, str):
        model = None
    if obj.get("error") is not None:
        return ChatChunk(model=model, error=error_text(obj["error"]))
    text, finish_reason = _choice(obj.get("choices"), data)
    if obj.get("usage") is None and "x_groq" not in obj:  # every chunk but the last
        return ChatChunk(text, finish_reason, None, model)
    tier = obj.get("service_tier")
    return ChatChunk(
        text,
        finish_reason,
        _completion_tokens(obj),
        model,
        prediction_tokens=_predicted(obj),
        service_tier=tier if isinstance(tier, str) and tier else None,
    )


#: llama.cpp's ``stop_type`` (why generation stopped) as an OpenAI ``finish_reason``.
_STOP_TYPES = {"eos": "stop", "word": "stop", "limit": "length"}


def parse_infill_chunk(data: str) -> ChatChunk:
    """Parse one llama.cpp ``/infill`` event: ``{"content": ..., "stop": false}`` per token.

    The last event has ``"stop": true`` (with ``tokens_predicted`` and ``stop_type``) and is the
    end of the answer: llama.cpp's native endpoints send no ``[DONE]``, so it yields
    ``done=True`` together with whatever it carries.
    """
    if data.strip() == "[DONE]":  # not sent by llama.cpp, but harmless behind a proxy that adds it
        return ChatChunk(done=True)
    obj = _json_object(data)
    model = obj.get("model") if isinstance(obj.get("model"), str) and obj["model"] else None
    if obj.get("error") is not None:
        return ChatChunk(model=model, error=error_text(obj["error"]))
    if "content" not in obj and "stop" not in obj:
        # Most likely an OpenAI-shaped chunk: baseUrl points at something that is not llama.cpp.
        raise BackendError(
            "protocol", f"an event is not a llama.cpp infill chunk: {_snippet(data)}"
        )
    content = obj.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise BackendError("protocol", f"the content is not a string in {_snippet(data)}")
    if obj.get("stop") is not True:
        return ChatChunk(content, model=model)
    stop_type = obj.get("stop_type")
    if isinstance(stop_type, str) and stop_type in _STOP_TYPES:
        finish_reason = _STOP_TYPES[stop_type]
    else:
        # Builds before ``stop_type`` said it with booleans; anything else ended normally.
        finish_reason = "length" if obj.get("stopped_limit") is True else "stop"
    tokens = obj.get("tokens_predicted")
    completion_tokens = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None
    return ChatChunk(content, finish_reason, completion_tokens, model, done=True)


def _json_object(data: str) -> dict[str, Any]:
    try:
        obj = json_codec.loads(data)
    except ValueError:
        raise BackendError("protocol", f"an event is not JSON: {_snippet(data)}") from None
    if not isinstance(obj, dict):
        raise BackendError("protocol", f"an event is not a JSON object: {_snippet(data)}")
    return obj


def error_text(error: Any) -> str:
    """A one-line message from an OpenAI-style ``error`` value (object, string or other)."""
    if isinstance(error, dict):
        message = error.get("message")
        text = message if isinstance(message, str) and message else json.dumps(error)
        # One label is enough to search for; the code is more specific than the type.
        label = next((str(error[k]) for k in ("code", "type") if error.get(k)), "")
        return _one_line(f"{text} ({label})" if label and label not in text else text)
    if isinstance(error, str):
        return _one_line(error)
    return _one_line(json.dumps(error))


def _choice(choices: Any, data: str) -> tuple[str, str | None]:
    # Usage-only chunks carry ``choices: []`` (and some servers omit the key): no text then.
    if choices is None or choices == []:
        return "", None
    if not isinstance(choices, list):
        raise BackendError("protocol", f"'choices' is not a list in {_snippet(data)}")
    if len(choices) == 1:  # what every provider sends: n is 1
        choice = choices[0]
    else:
        choice = next(
            (c for c in choices if isinstance(c, dict) and c.get("index") == 0), choices[0]
        )
    if not isinstance(choice, dict):
        raise BackendError("protocol", f"a choice is not an object in {_snippet(data)}")
    delta = choice.get("delta")
    # Chat chunks put text in ``delta.content``; completions-style chunks in ``text``.
    content = delta.get("content") if isinstance(delta, dict) else choice.get("text")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise BackendError("protocol", f"the delta content is not a string in {_snippet(data)}")
    finish_reason = choice.get("finish_reason")
    return content, finish_reason if isinstance(finish_reason, str) else None


def _completion_tokens(obj: dict[str, Any]) -> int | None:
    usage = obj.get("usage")
    if not isinstance(usage, dict):
        # Groq has sent usage under ``x_groq`` instead of the top-level field.
        extra = obj.get("x_groq")
        usage = extra.get("usage") if isinstance(extra, dict) else None
    if not isinstance(usage, dict):
        return None
    tokens = usage.get("completion_tokens")
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None


def _predicted(obj: dict[str, Any]) -> tuple[int, int] | None:
    usage = obj.get("usage")
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    if not isinstance(details, dict):
        return None
    counts = [details.get("accepted_prediction_tokens"), details.get("rejected_prediction_tokens")]
    if not any(isinstance(n, int) and not isinstance(n, bool) for n in counts):
        return None
    accepted, rejected = (
        n if isinstance(n, int) and not isinstance(n, bool) else 0 for n in counts
    )
    return accepted, rejected


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _snippet(data: str, limit: int = 80) -> str:
    return repr(data if len(data) <= limit else data[:limit] + "…")
