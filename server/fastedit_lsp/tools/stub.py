"""A loopback OpenAI-compatible stub *model* server for end-to-end tests and ``fastedit-lsp bench``.

Stdlib asyncio only. It stands in for the model and nothing else: HTTP/1.1 with keep-alive,
``Content-Length`` request bodies, JSON responses with ``Content-Length`` and SSE streams with
``Transfer-Encoding: chunked``.

Endpoints:

- ``POST /v1/chat/completions``: ``stream: true`` gives ``text/event-stream`` (one
  ``chat.completion.chunk`` event per token, then a chunk carrying ``finish_reason``, then a
  usage-only chunk with ``"choices": []`` when ``stream_options.include_usage`` is set, then
  ``data: [DONE]``); ``stream: false`` gives one ``chat.completion`` JSON object. The requested
  ``model`` is echoed back whatever it is (script ``Answer(status=404)`` to test a wrong model).
  ``max_completion_tokens`` (else ``max_tokens``) truncates the scripted tokens and turns
  ``finish_reason`` into ``"length"``.
- ``POST /v1/completions`` (legacy completions, the ``fim: completions`` wire): the same, framed
  as ``text_completion`` objects with the text in ``choices[0].text`` and no role chunk: one
  event per token, a finish chunk, the usage-only chunk when asked for, ``data: [DONE]``;
  ``stream: false`` gives one ``text_completion`` object. ``max_tokens`` truncates.
- ``POST /infill`` (llama.cpp's native FIM, at the root, not under ``/v1``): one
  ``{"content": token, "stop": false}`` event per token, then ``{"content": "", "stop": true,
  "tokens_predicted": N, "stop_type": ...}`` (``eos``, or ``limit`` for a ``length`` finish)
  and no ``[DONE]``; ``stream: false`` gives that last object with the whole text as content.
  ``n_predict`` truncates (negative: no limit).
- ``POST /v1/fim/completions`` (Mistral's Codestral FIM): chat-shaped chunks, as for
  ``/v1/chat/completions``, with the usage in the finish chunk as Mistral sends it (no
  ``stream_options`` needed); ``stream: false`` gives a ``chat.completion`` object.
  ``max_tokens`` truncates.
- ``GET /v1/models``: the configured model ids, in OpenAI's list format.
- Control, for out-of-process use (never recorded): ``POST /_stub/script`` (a JSON list of
  answer objects with :class:`Answer`'s field names), ``POST /_stub/default`` (one answer
  object), ``GET /_stub/requests`` (the recorded requests), ``POST /_stub/reset``.

Every model request (the four ``POST`` endpoints above, :data:`MODEL_PATHS`) pops the next
scripted :class:`Answer` from one shared queue (:meth:`StubModelServer.script`) or, when the
script is empty, uses :attr:`StubModelServer.default`; each endpoint frames it in its own
dialect, and every knob below works the same on all of them. The knobs of an answer:

- ``text`` / ``tokens``: what is said. ``tokens`` gives the exact token boundaries (``text`` is
  then ignored); without it ``text`` is cut by :func:`split_tokens` every ``token_size`` code
  points (default 3, cutting through grapheme clusters) with every CRLF split in two.
- ``tps``: tokens per second, 0 for flat out. Pacing follows a schedule, not sleep accuracy:
  ``due = int((now - t0) * tps) + 1`` events are due at ``now``; all due events go out in one
  write, then the stub sleeps until the next one is due. Flat out writes the whole stream at once.
- ``header_delay``: seconds before the response headers (slow headers). ``ttft``: seconds between
  the headers, which go out at once, and the first event (the role chunk and first token).
- ``status``, ``error_type``, ``error_code``, ``error_message``, ``error_body``: a non-200 status
  answers ``{"error": {"message", "type", "param", "code"}}`` (OpenAI's shape, defaults chosen by
  status; ``error_body`` replaces the whole object), e.g. ``Answer(status=429,
  error_code="insufficient_quota", error_type="insufficient_quota")``.
- ``headers``: extra response headers (``{"retry-after": "2"}``); ``content_type`` overrides the
  content type (a JSON content type on a stream, say).
- ``drop_after``: after that many tokens, abort the socket mid-stream (no terminating chunk).
- ``stall_after``: after that many tokens, send nothing more but keep the connection open until
  the client closes it.
- ``malformed`` (``"bad_json"``, ``"no_data_prefix"``, ``"binary"``, ``"error_event"``) injected
  after ``malformed_after`` tokens; the stream then ends cleanly at the HTTP level without a
  finish chunk or ``[DONE]``, unless ``malformed_continue``. ``"error_event"`` is OpenAI's
  mid-stream failure: ``data: {"error": {...}}`` inside a 200 stream.
- ``split_bytes``: every body byte is its own HTTP chunk (and its own write), so a client's SSE
  parser sees events split at every byte position, UTF-8 sequences included.
- ``finish_reason`` (default ``"stop"``) and ``role_chunk`` (send the first
  ``{"role": "assistant", "content": ""}`` delta of the chat-shaped streams, default on).

A token-counted position N (``drop_after``, ``stall_after``, ``malformed_after``) acts after the
Nth token and before whatever follows it, so N equal to the token count acts before the finish
chunk; N greater than the count never acts. For ``stream: false`` the whole generation time
(``ttft`` + tokens / ``tps``) passes before the headers; ``drop_after`` sends the headers and half
the body, ``stall_after`` the headers only, ``malformed`` spoils the JSON body.

Every non-control request is recorded (:class:`RecordedRequest`): path, headers, parsed body,
tokens sent, whether the response completed or the client closed the connection, with an
:class:`asyncio.Event` set when its handling ends (wait for them with
:meth:`StubModelServer.wait_for_requests`, per path). The stub watches each connection for EOF
while it writes or waits, so a client closing mid-stream is seen within one event-loop tick.

Run it in the caller's loop (``async with await StubModelServer.start() as stub``), in a daemon
thread (:meth:`StubModelServer.start_in_thread`), or as a process::

    python -m fastedit_lsp.tools.stub [--host 127.0.0.1] [--port 0] [--tps N] [--ttft S] [--text T]

which writes one line ``listening on <base_url>`` to stdout and serves until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http
import itertools
import json
import logging
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Final, Literal, NoReturn, Self, TypeGuard, get_args

_log = logging.getLogger(__name__)

DEFAULT_TEXT: Final = "def add(a: int, b: int) -> int:\n    return a + b\n"
DEFAULT_MODELS: Final = ("stub-fast", "stub-strong")
CHAT_PATH: Final = "/v1/chat/completions"
COMPLETIONS_PATH: Final = "/v1/completions"
#: llama.cpp serves its native endpoints at the root, beside /v1.
INFILL_PATH: Final = "/infill"
FIM_PATH: Final = "/v1/fim/completions"
MODELS_PATH: Final = "/v1/models"
#: The endpoints that answer from the script, each in its own dialect.
MODEL_PATHS: Final = (CHAT_PATH, COMPLETIONS_PATH, INFILL_PATH, FIM_PATH)

#: How an endpoint frames an answer: OpenAI chat, legacy completions, llama.cpp, Mistral FIM.
Dialect = Literal["chat", "completions", "infill", "fim"]
_DIALECTS: Final[dict[str, Dialect]] = {
    CHAT_PATH: "chat",
    COMPLETIONS_PATH: "completions",
    INFILL_PATH: "infill",
    FIM_PATH: "fim",
}
#: llama.cpp's ``stop_type`` for an OpenAI ``finish_reason``.
_STOP_TYPES: Final = {"stop": "eos", "length": "limit"}

MalformedKind = Literal["bad_json", "no_data_prefix", "binary", "error_event"]
MALFORMED_KINDS: Final[tuple[str, ...]] = get_args(MalformedKind)

_MAX_HEAD: Final = 64 * 1024
_MAX_BODY: Final = 64 * 1024 * 1024
_READ_SIZE: Final = 64 * 1024
# Not valid UTF-8 (lone continuation bytes, an overlong lead, NUL): breaks any text decoder.
_BINARY_EVENT: Final = b"data: \xff\xfe\x00\x80\xc3\x28\n\n"


def split_tokens(text: str, size: int = 3, *, split_crlf: bool = True) -> list[str]:
    """Cut ``text`` into tokens of at most ``size`` code points; ``"".join`` gives ``text`` back.

    The cuts fall every ``size`` code points with no regard for grapheme clusters, so a base
    letter and its combining mark, an emoji ZWJ sequence or a flag's two regional indicators are
    cut whenever they straddle a multiple of ``size`` (``size=1`` cuts every cluster), which is
    what a streaming client must survive. With ``split_crlf`` every ``"\\r\\n"`` is also cut in
    two: one token ends with ``"\\r"`` and the next starts with ``"\\n"``. No token is empty.
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    cuts = set(range(size, len(text), size))
    if split_crlf:
        cuts.update(i + 1 for i in range(len(text) - 1) if text[i] == "\r" and text[i + 1] == "\n")
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if a < b]


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _default_error(status: int) -> tuple[str, str | None, str]:
    """OpenAI's error ``type``, ``code`` and a message for a status."""
    if status == 401:
        return "invalid_request_error", "invalid_api_key", "Incorrect API key provided."
    if status == 403:
        return "permission_error", None, "You are not allowed to use this model."
    if status == 404:
        return "invalid_request_error", "model_not_found", "The model does not exist."
    if status == 429:
        return "requests", "rate_limit_exceeded", "Rate limit reached for requests."
    if status >= 500:
        return "server_error", None, "The server had an error while processing your request."
    return "invalid_request_error", None, _phrase(status)


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _error_json(error_type: str, code: str | None, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def _json_bytes(obj: object) -> bytes:
    # Raw UTF-8 (not \\u escapes), like the providers: split_bytes then splits inside sequences.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def _sse(obj: object) -> bytes:
    return b"data: " + _json_bytes(obj) + b"\n\n"


@dataclass
class Answer:
    """One scripted model answer; the defaults give a plain, flat-out, well-formed answer.

    The knobs are described in the module docstring. Invalid values raise :class:`ValueError`.
    """

    text: str = DEFAULT_TEXT
    tokens: list[str] | None = None
    token_size: int = 3
    tps: float = 0.0
    ttft: float = 0.0
    header_delay: float = 0.0
    finish_reason: str = "stop"
    role_chunk: bool = True
    status: int = 200
    error_type: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    error_body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None
    drop_after: int | None = None
    stall_after: int | None = None
    malformed: MalformedKind | None = None
    malformed_after: int = 0
    malformed_continue: bool = False
    split_bytes: bool = False

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not isinstance(self.text, str):
            problems.append("text must be a string")
        if self.tokens is not None and not (
            isinstance(self.tokens, list) and all(isinstance(t, str) for t in self.tokens)
        ):
            problems.append("tokens must be a list of strings")
        if not (_is_int(self.token_size) and self.token_size >= 1):
            problems.append("token_size must be an integer >= 1")
        for name in ("tps", "ttft", "header_delay"):
            value = getattr(self, name)
            if not (_is_number(value) and value >= 0):
                problems.append(f"{name} must be a number >= 0")
        if not (_is_int(self.status) and 200 <= self.status <= 599):
            problems.append("status must be an integer from 200 to 599")
        for name in ("drop_after", "stall_after"):
            value = getattr(self, name)
            if value is not None and not (_is_int(value) and value >= 0):
                problems.append(f"{name} must be null or an integer >= 0")
        if not (_is_int(self.malformed_after) and self.malformed_after >= 0):
            problems.append("malformed_after must be an integer >= 0")
        if self.malformed is not None and self.malformed not in MALFORMED_KINDS:
            problems.append(f"malformed must be null or one of {', '.join(MALFORMED_KINDS)}")
        for name in ("error_type", "error_code", "error_message", "content_type"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                problems.append(f"{name} must be null or a string")
        if not isinstance(self.finish_reason, str):
            problems.append("finish_reason must be a string")
        for name in ("role_chunk", "malformed_continue", "split_bytes"):
            if not isinstance(getattr(self, name), bool):
                problems.append(f"{name} must be a boolean")
        if self.error_body is not None and not isinstance(self.error_body, dict):
            problems.append("error_body must be null or an object")
        if not (
            isinstance(self.headers, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in self.headers.items())
        ):
            problems.append("headers must map strings to strings")
        if problems:
            raise ValueError("; ".join(problems))

    @classmethod
    def from_json(cls, data: object) -> Answer:
        """Build an answer from a JSON object with this class's field names."""
        if not isinstance(data, dict):
            raise ValueError("an answer must be a JSON object")
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"unknown answer fields: {', '.join(map(str, unknown))}")
        return cls(**data)

    def token_list(self) -> list[str]:
        """The tokens to send: ``tokens`` if given, else ``text`` cut by :func:`split_tokens`."""
        if self.tokens is not None:
            return list(self.tokens)
        return split_tokens(self.text, self.token_size)

    def error_json(self) -> dict[str, Any]:
        """The error object for a non-200 answer or an ``error_event``."""
        if self.error_body is not None:
            return self.error_body
        error_type, code, message = _default_error(self.status if self.status != 200 else 500)
        return _error_json(
            self.error_type or error_type,
            self.error_code if self.error_code is not None else code,
            self.error_message or message,
        )


@dataclass(eq=False)
class RecordedRequest:
    """One request the stub received (control requests excepted), updated while it is served."""

    method: str
    path: str
    #: Header names lowercased; repeated headers joined with ", ".
    headers: dict[str, str]
    #: The parsed JSON body, or None when there was none or it was not JSON.
    body: Any
    #: ``time.monotonic()`` when the request was read.
    started_at: float
    #: Serial number of the TCP connection, to check keep-alive.
    connection: int
    raw_body: bytes = field(default=b"", repr=False)
    #: The answer it was served with (model requests only).
    answer: Answer | None = None
    #: The response status, once the headers went out.
    status: int | None = None
    finish_reason: str | None = None
    #: Content tokens written to the socket.
    tokens_sent: int = 0
    #: ``time.monotonic()`` when the first and the last content token were written (streams).
    first_token_at: float | None = None
    last_token_at: float | None = None
    #: The whole response was written as scripted, ending well-formed at the HTTP level.
    completed: bool = False
    #: The client closed the connection before the response was complete.
    client_closed: bool = False
    #: ``time.monotonic()`` when the client's close was seen.
    closed_at: float | None = None
    #: ``time.monotonic()`` when handling ended, for any reason.
    ended_at: float | None = None
    #: Set when handling ends, for any reason (bound to the stub's event loop).
    done: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def to_json(self) -> dict[str, Any]:
        """This record as JSON, as served by ``GET /_stub/requests``."""
        out = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("raw_body", "done", "answer")
        }
        out["answer"] = asdict(self.answer) if self.answer is not None else None
        return out


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


@dataclass(frozen=True)
class _Params:
    """What a model request asks for, read the way its dialect names it."""

    model: str
    stream: bool
    include_usage: bool
    max_tokens: int | None
    prompt_tokens: int

    @classmethod
    def parse(cls, dialect: Dialect, body: dict[str, Any], default_model: str) -> _Params:
        model = body.get("model")
        options = body.get("stream_options")
        if dialect == "infill":
            limit = body.get("n_predict")  # -1, llama.cpp's default, means no limit
        else:
            limit = body.get("max_completion_tokens") if dialect == "chat" else None
            if limit is None:
                limit = body.get("max_tokens")
        return cls(
            model=model if isinstance(model, str) and model else default_model,
            stream=body.get("stream") is True,
            include_usage=isinstance(options, dict) and options.get("include_usage") is True,
            max_tokens=limit if _is_int(limit) and limit >= 0 else None,
            prompt_tokens=(_prompt_chars(dialect, body) + 3) // 4,
        )


def _prompt_chars(dialect: Dialect, body: dict[str, Any]) -> int:
    """Characters of prompt text (/ 4 gives a stand-in for the provider's token count)."""
    texts: list[object]
    if dialect == "chat":
        texts = []
        for message in _list(body.get("messages")):
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
                texts.extend(part.get("text") for part in content if isinstance(part, dict))
            else:
                texts.append(content)
    elif dialect == "infill":
        texts = [body.get("input_prefix"), body.get("input_suffix"), body.get("prompt")]
        texts.extend(e.get("text") for e in _list(body.get("input_extra")) if isinstance(e, dict))
    else:
        texts = [body.get("prompt"), body.get("suffix")]
    return sum(len(text) for text in texts if isinstance(text, str))


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


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

    async def wait_client_close(self) -> NoReturn:
        await asyncio.wait({self._watch})
        raise _ClientGoneError

    def abort(self) -> None:
        self.conn.writer.transport.abort()

    async def finish(self) -> None:
        if not self._watch.done():
            self._watch.cancel()
            await asyncio.wait({self._watch})


class StubModelServer:
    """The stub model server: script answers, point a client at :attr:`base_url`, read requests.

    Everything but :meth:`script`, :meth:`reset` and reading :attr:`requests` must run in the
    stub's event loop; from another thread use those or the ``/_stub/`` endpoints.
    """

    def __init__(
        self, *, models: Sequence[str] = DEFAULT_MODELS, default: Answer | None = None
    ) -> None:
        #: Model ids listed by ``GET /v1/models``; the first is used when a request names none.
        self.models: tuple[str, ...] = tuple(models) or DEFAULT_MODELS
        #: The answer for model requests once the script is empty.
        self.default: Answer = default if default is not None else Answer()
        #: Every request except control ones, in arrival order.
        self.requests: list[RecordedRequest] = []
        self.host = ""
        self.port = 0
        self._script: deque[Answer] = deque()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self._arrivals = asyncio.Condition()
        self._connection_serials = itertools.count(1)
        self._response_serials = itertools.count(1)
        self._closing = False

    @classmethod
    async def start(
        cls,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Sequence[str] = DEFAULT_MODELS,
        *,
        default: Answer | None = None,
    ) -> Self:
        """Listen on ``host:port`` (0: a free port) in the running event loop."""
        stub = cls(models=models, default=default)
        stub._server = await asyncio.start_server(stub._on_connection, host, port)
        stub.host = host
        stub.port = int(stub._server.sockets[0].getsockname()[1])
        return stub

    @classmethod
    def start_in_thread(
        cls,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Sequence[str] = DEFAULT_MODELS,
        *,
        default: Answer | None = None,
        timeout: float = 10.0,
    ) -> tuple[Self, Callable[[], None]]:
        """Start a stub in a daemon thread with its own loop; returns it and an idempotent stop."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="fastedit-stub-model", daemon=True)
        thread.start()

        def stop_loop() -> None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            if not thread.is_alive():
                loop.close()

        try:
            started = asyncio.run_coroutine_threadsafe(
                cls.start(host, port, models, default=default), loop
            )
            stub = started.result(timeout)
        except BaseException:
            stop_loop()
            raise
        lock = threading.Lock()

        def stop() -> None:
            with lock:
                if loop.is_closed() or not thread.is_alive():
                    return
                asyncio.run_coroutine_threadsafe(stub.close(), loop).result(timeout)
                stop_loop()

        return stub, stop

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``, what a client's ``baseUrl`` setting takes."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop listening and close every open client connection, mid-stream or idle."""
        self._closing = True
        if self._server is not None:
            self._server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        if self._server is not None:
            await self._server.wait_closed()

    def script(self, *answers: Answer) -> None:
        """Queue answers; each model request takes the next, then :attr:`default` when empty."""
        self._script.extend(answers)

    def reset(self) -> None:
        """Forget the script and the recorded requests (keeps :attr:`default`)."""
        self._script.clear()
        self.requests.clear()

    def _next_answer(self) -> Answer:
        try:
            return self._script.popleft()
        except IndexError:
            return self.default

    async def wait_for_requests(
        self,
        n: int,
        *,
        # A default deadline keeps a broken test from hanging, hence a timeout parameter.
        timeout: float = 10.0,  # noqa: ASYNC109
        path: str | tuple[str, ...] | None = CHAT_PATH,
    ) -> list[RecordedRequest]:
        """Wait until ``n`` requests to ``path`` arrived; returns all of them.

        ``path`` is one of the ``*_PATH`` constants, a tuple of them (:data:`MODEL_PATHS`: any
        model request), or None for any path at all.
        """
        paths = (path,) if isinstance(path, str) else path

        def matching() -> list[RecordedRequest]:
            return [r for r in self.requests if paths is None or r.path in paths]

        async with asyncio.timeout(timeout), self._arrivals:
            await self._arrivals.wait_for(lambda: len(matching()) >= n)
        return matching()

    async def wait_closed(
        self,
        request: RecordedRequest,
        *,
        timeout: float = 10.0,  # noqa: ASYNC109
    ) -> RecordedRequest:
        """Wait until ``request`` is no longer being served (completed, dropped or client gone)."""
        async with asyncio.timeout(timeout):
            await request.done.wait()
        return request

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if self._closing or task is None:
            writer.transport.abort()
            return
        self._connections.add(task)
        conn = _Connection(next(self._connection_serials), reader, writer)
        try:
            while await self._serve_one(conn):
                pass
        except asyncio.CancelledError:
            # close() cancels us. Python 3.11's start_server calls task.exception() on the
            # finished task, which raises for a cancelled one: end the task normally instead.
            pass
        except Exception:
            _log.exception("stub model server: connection %d failed", conn.serial)
        finally:
            self._connections.discard(task)
            await conn.close()

    async def _serve_one(self, conn: _Connection) -> bool:
        """Serve one request; True if the connection may carry another."""
        try:
            head_bytes = await conn.read_head()
            if head_bytes is None:
                return False
            head = _parse_head(head_bytes)
            raw = await conn.read_body(head.content_length)
        except _IncompleteRequestError:
            return False
        except _BadRequestError as exc:
            ex = _Exchange(conn, keep_alive=False)
            try:
                await ex.send_json(exc.status, _error_json("invalid_request_error", None, str(exc)))
            except _ClientGoneError:
                pass
            finally:
                await ex.finish()
            return False
        ex = _Exchange(conn, keep_alive=head.keep_alive)
        try:
            completed = await self._route(ex, head, raw)
        finally:
            await ex.finish()
        return completed and head.keep_alive

    async def _route(self, ex: _Exchange, head: _Head, raw: bytes) -> bool:
        if head.path.startswith("/_stub/"):
            try:
                return await self._control(ex, head, raw)
            except _ClientGoneError:
                return False
        record = RecordedRequest(
            method=head.method,
            path=head.path,
            headers=head.headers,
            body=_parse_json(raw),
            started_at=time.monotonic(),
            connection=ex.conn.serial,
            raw_body=raw,
        )
        async with self._arrivals:
            self.requests.append(record)
            self._arrivals.notify_all()
        completed = False
        try:
            completed = await self._respond(ex, record)
        except _ClientGoneError:
            record.client_closed = True
            eof_at = ex.conn.eof_at
            record.closed_at = eof_at if eof_at is not None else time.monotonic()
        finally:
            record.completed = completed
            record.status = ex.status
            record.ended_at = time.monotonic()
            record.done.set()
        return completed

    async def _respond(self, ex: _Exchange, record: RecordedRequest) -> bool:
        dialect = _DIALECTS.get(record.path)
        if dialect is not None:
            if record.method != "POST":
                return await _send_error(ex, 405, "use POST")
            return await self._generate(ex, record, dialect)
        if record.path == MODELS_PATH:
            if record.method != "GET":
                return await _send_error(ex, 405, "use GET")
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fastedit-stub"}
                for m in self.models
            ]
            return await ex.send_json(200, {"object": "list", "data": data})
        return await _send_error(ex, 404, f"no route for {record.method} {record.path}")

    async def _control(self, ex: _Exchange, head: _Head, raw: bytes) -> bool:
        route = (head.method, head.path)
        if route == ("GET", "/_stub/requests"):
            return await ex.send_json(200, [r.to_json() for r in self.requests])
        if route == ("POST", "/_stub/reset"):
            self.reset()
            return await ex.send_json(200, {"ok": True})
        if route in {("POST", "/_stub/script"), ("POST", "/_stub/default")}:
            data = _parse_json(raw)
            try:
                if head.path == "/_stub/default":
                    self.default = Answer.from_json(data)
                    return await ex.send_json(200, {"ok": True})
                items = data if isinstance(data, list) else [data]
                answers = [Answer.from_json(item) for item in items]
            except (TypeError, ValueError) as exc:
                return await _send_error(ex, 400, str(exc))
            self.script(*answers)
            return await ex.send_json(200, {"queued": len(self._script)})
        return await _send_error(ex, 404, f"no control route {head.method} {head.path}")

    async def _generate(self, ex: _Exchange, record: RecordedRequest, dialect: Dialect) -> bool:
        """Answer a model request with the next scripted answer, in the endpoint's dialect."""
        body = record.body
        if not isinstance(body, dict):
            return await _send_error(ex, 400, "the request body must be a JSON object")
        answer = self._next_answer()
        record.answer = answer
        ex.split_bytes = answer.split_bytes
        await ex.pause(answer.header_delay)
        if answer.status != 200:
            return await ex.send_json(
                answer.status,
                answer.error_json(),
                headers=answer.headers,
                content_type=answer.content_type,
            )
        params = _Params.parse(dialect, body, self.models[0])
        tokens = answer.token_list()
        finish = answer.finish_reason
        if params.max_tokens is not None and len(tokens) > params.max_tokens:
            tokens = tokens[: params.max_tokens]
            finish = "length"
        serial = next(self._response_serials)
        prefix = "cmpl" if dialect == "completions" else "chatcmpl"
        wire = _Wire(dialect, params, f"{prefix}-stub{serial}", int(time.time()))
        if params.stream:
            return await _stream(ex, record, answer, wire, tokens, finish)
        return await _complete(ex, record, answer, wire, tokens, finish)


async def _send_error(ex: _Exchange, status: int, message: str) -> bool:
    error_type, code, _ = _default_error(status)
    return await ex.send_json(status, _error_json(error_type, code, message))


def _usage(params: _Params, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": params.prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": params.prompt_tokens + completion_tokens,
    }


@dataclass(frozen=True)
class _Wire:
    """How one dialect frames an answer: its events and its ``stream: false`` object."""

    dialect: Dialect
    params: _Params
    response_id: str
    created: int

    def opening(self) -> bytes:
        """The role chunk that chat-shaped streams start with; nothing for the others."""
        if self.dialect in ("chat", "fim"):
            return self._chat_chunk({"role": "assistant", "content": ""}, None)
        return b""

    def token(self, text: str) -> bytes:
        """One token's event."""
        if self.dialect == "infill":
            return _sse({"content": text, "stop": False})
        if self.dialect == "completions":
            return self._text_chunk(text, None)
        return self._chat_chunk({"content": text}, None)

    def ending(self, finish: str, n_tokens: int) -> bytes:
        """Everything after the last token of a complete stream."""
        if self.dialect == "infill":
            # llama.cpp's last event says it all, and no [DONE] follows.
            return _sse(self._infill_final("", finish, n_tokens))
        if self.dialect == "fim":
            # Mistral puts the usage in the finish chunk, unasked.
            out = self._chat_chunk({}, finish, usage=_usage(self.params, n_tokens))
        elif self.dialect == "completions":
            out = self._text_chunk("", finish)
        else:
            out = self._chat_chunk({}, finish)
        if self.params.include_usage and self.dialect != "fim":
            out += _sse(self._envelope([], usage=_usage(self.params, n_tokens)))
        return out + b"data: [DONE]\n\n"

    def bad_json(self) -> bytes:
        """An event whose JSON breaks off in the middle."""
        if self.dialect == "infill":
            return b'data: {"content":"?","sto\n\n'
        if self.dialect == "completions":
            return b'data: {"object":"text_completion","choices":[{"index":0,"te\n\n'
        return b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"con\n\n'

    def completion(self, text: str, finish: str, n_tokens: int) -> dict[str, Any]:
        """The ``stream: false`` answer."""
        if self.dialect == "infill":
            return self._infill_final(text, finish, n_tokens)
        usage = _usage(self.params, n_tokens)
        if self.dialect == "completions":
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
            return self._envelope([choice], usage=usage)
        # Mistral's FIM answers with a chat completion too.
        message = {"role": "assistant", "content": text}
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return {**self._envelope([choice], usage=usage), "object": "chat.completion"}

    def _infill_final(self, text: str, finish: str, n_tokens: int) -> dict[str, Any]:
        return {
            "content": text,
            "stop": True,
            "model": self.params.model,
            "tokens_predicted": n_tokens,
            "tokens_evaluated": self.params.prompt_tokens,
            "stop_type": _STOP_TYPES.get(finish, finish),
        }

    def _envelope(self, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        kind = "text_completion" if self.dialect == "completions" else "chat.completion.chunk"
        return {
            "id": self.response_id,
            "object": kind,
            "created": self.created,
            "model": self.params.model,
            "choices": choices,
            **extra,
        }

    def _with_usage_slot(self, event: dict[str, Any]) -> dict[str, Any]:
        # OpenAI sends "usage": null on every chunk but the usage-only one.
        return {**event, "usage": None} if self.params.include_usage else event

    def _chat_chunk(self, delta: dict[str, str], finish_reason: str | None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        event = self._envelope([choice])
        return _sse({**self._with_usage_slot(event), **extra})

    def _text_chunk(self, text: str, finish_reason: str | None) -> bytes:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}
        return _sse(self._with_usage_slot(self._envelope([choice])))


async def _complete(
    ex: _Exchange,
    record: RecordedRequest,
    answer: Answer,
    wire: _Wire,
    tokens: list[str],
    finish: str,
) -> bool:
    """A ``stream: false`` answer: one JSON object after the generation time."""
    await ex.pause(answer.ttft + (len(tokens) / answer.tps if answer.tps > 0 else 0.0))
    payload = _json_bytes(wire.completion("".join(tokens), finish, len(tokens)))
    if answer.malformed == "bad_json":
        payload = payload[: len(payload) // 2]
    elif answer.malformed == "binary":
        payload = _BINARY_EVENT
    elif answer.malformed == "error_event":
        payload = _json_bytes(answer.error_json())
    content_type = answer.content_type or "application/json"
    await ex.send_head(200, content_type, content_length=len(payload), headers=answer.headers)
    if answer.drop_after is not None:
        await ex.send_body(payload[: len(payload) // 2])
        ex.abort()
        return False
    if answer.stall_after is not None:
        await ex.wait_client_close()
    await ex.send_body(payload)
    record.tokens_sent = len(tokens)
    record.finish_reason = finish
    return True


def _stream_actions(answer: Answer, n_tokens: int) -> dict[int, list[str]]:
    """Interruptions keyed by the token count after which they happen, in order."""
    actions: dict[int, list[str]] = {}
    points = (
        ("malformed", answer.malformed_after if answer.malformed is not None else None),
        ("drop", answer.drop_after),
        ("stall", answer.stall_after),
    )
    for action, after in points:
        if after is not None and after <= n_tokens:
            actions.setdefault(after, []).append(action)
    return actions


def _malformed_event(answer: Answer, wire: _Wire) -> bytes:
    if answer.malformed == "bad_json":
        return wire.bad_json()
    if answer.malformed == "no_data_prefix":
        return wire.token("?").removeprefix(b"data: ")
    if answer.malformed == "binary":
        return _BINARY_EVENT
    return _sse(answer.error_json())


async def _stream(
    ex: _Exchange,
    record: RecordedRequest,
    answer: Answer,
    wire: _Wire,
    tokens: list[str],
    finish: str,
) -> bool:
    """A ``stream: true`` answer: paced SSE events, with the scripted interruptions."""
    out = bytearray()
    sent = 0

    async def flush(*, last: bool = False) -> None:
        await ex.send_body(bytes(out), last=last)
        out.clear()
        if sent > record.tokens_sent:
            # The stub's own send time, the bench's yardstick for the server's stream overhead.
            record.last_token_at = time.monotonic()
            if record.first_token_at is None:
                record.first_token_at = record.last_token_at
        record.tokens_sent = sent

    # Encoded before the first byte goes out, so that a fast paced stream costs the stub (which
    # shares the machine with the client it measures) only its writes.
    events = [wire.token(token) for token in tokens]
    headers = {"cache-control": "no-cache", **answer.headers}
    content_type = answer.content_type or "text/event-stream"
    await ex.send_head(200, content_type, content_length=None, headers=headers)
    await ex.pause(answer.ttft)
    if answer.role_chunk:
        out += wire.opening()
    actions = _stream_actions(answer, len(tokens))
    t0 = time.monotonic()
    while True:
        for action in actions.pop(sent, ()):
            if action == "malformed":
                out += _malformed_event(answer, wire)
                if not answer.malformed_continue:
                    await flush(last=True)
                    return True
            elif action == "drop":
                await flush()
                ex.abort()
                return False
            else:
                await flush()
                await ex.wait_client_close()
        if sent == len(tokens):
            break
        stop = min([p for p in actions if p > sent] + [len(tokens)])
        due = stop
        if answer.tps > 0:
            due = max(sent, min(stop, int((time.monotonic() - t0) * answer.tps) + 1))
        for event in events[sent:due]:
            out += event
        sent = due
        if sent < stop:
            await flush()
            await ex.pause(t0 + sent / answer.tps - time.monotonic())
    out += wire.ending(finish, len(tokens))
    await flush(last=True)
    record.finish_reason = finish
    return True


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m fastedit_lsp.tools.stub",
        description="Loopback OpenAI-compatible stub model server (for tests and benchmarks).",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--tps", type=float, default=0.0, help="tokens per second, 0 = flat out")
    parser.add_argument("--ttft", type=float, default=0.0, help="seconds before the first token")
    parser.add_argument("--text", default=DEFAULT_TEXT, help="the default answer's text")
    parser.add_argument(
        "--model", action="append", default=[], help="a model id to list (repeatable)"
    )
    return parser.parse_args(argv)


async def _serve(host: str, port: int, models: Sequence[str], default: Answer) -> None:
    async with await StubModelServer.start(host, port, models, default=default) as stub:
        # stdout carries exactly this line: callers parse it for the port.
        sys.stdout.write(f"listening on {stub.base_url}\n")
        sys.stdout.flush()
        stop = asyncio.Event()
        # SIGTERM (a harness's terminate()) closes connections and exits 0, like Ctrl-C.
        with contextlib.suppress(NotImplementedError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the stub until interrupted."""
    args = _parse_args(argv)
    default = Answer(text=args.text, tps=args.tps, ttft=args.ttft)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.host, args.port, args.model or DEFAULT_MODELS, default))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
