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
  ``max_tokens`` truncates. With ``Answer.fim_dialect = "inception"`` it is Inception's FIM
  (Mercury Edit, same path and body), framed as ``text_completion`` chunks (``choices[0].text``)
  as Inception's documentation shows, then ``[DONE]``.
- ``POST /v1/responses`` and ``POST /v1/messages``: OpenAI's Responses API and Anthropic's
  Messages API, framed by :mod:`.stub_apis` (its docstring has their events and knobs).
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
- ``shape`` / ``repeat`` / ``language``: the answer as chat models wrap it (``fence``,
  ``fence_no_tag``, ``fence_unterminated``, ``prose``, ``think``, ``think_fence``, ``dedent``,
  ``crlf``; ``plain`` by default), after ``repeat`` (text a model re-sends: the current line,
  the lines above, the function from its first line). See ``stub_answers.shaped``.
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
- ``hold_after``: after that many tokens (or at each count of a list), send nothing more until
  the test calls :meth:`StubModelServer.release` (in process only), then go on at ``tps`` from
  there (streams only).
- ``malformed`` (``"bad_json"``, ``"no_data_prefix"``, ``"binary"``, ``"error_event"``) injected
  after ``malformed_after`` tokens; the stream then ends cleanly at the HTTP level without a
  finish chunk or ``[DONE]``, unless ``malformed_continue``. ``"error_event"`` is OpenAI's
  mid-stream failure: ``data: {"error": {...}}`` inside a 200 stream.
- ``split_bytes``: every body byte is its own HTTP chunk (and its own write), so a client's SSE
  parser sees events split at every byte position, UTF-8 sequences included.
- ``prediction_speedup``: a request with ``prediction: {type: "content", content}`` streams at
  ``tps`` times this (a provider's accepted-prediction speed-up), and its usage reports
  ``completion_tokens_details.accepted_prediction_tokens`` / ``rejected_prediction_tokens``
  (answer tokens found in the prediction are accepted, the prediction's others rejected).
- ``finish_reason`` (default ``"stop"``) and ``role_chunk`` (send the first
  ``{"role": "assistant", "content": ""}`` delta of the chat-shaped streams, default on).

A token-counted position N (``drop_after``, ``stall_after``, ``malformed_after``) acts after the
Nth token and before whatever follows it, so N equal to the token count acts before the finish
chunk; N greater than the count never acts. For ``stream: false`` the whole generation time
(``ttft`` + tokens / ``tps``) passes before the headers; ``drop_after`` sends the headers and half
the body, ``stall_after`` the headers only, ``malformed`` spoils the JSON body.

Every non-control request is recorded (:class:`RecordedRequest`): path, headers, parsed body,
tokens sent (and when each write of tokens went out: ``token_writes``), whether the response
completed or the client closed the connection, with an :class:`asyncio.Event` set when its
handling ends (wait for them with :meth:`StubModelServer.wait_for_requests`, per path). The stub
watches each connection for EOF while it writes or waits, so a client closing mid-stream is seen
within one event-loop tick.

Run it in the caller's loop (``async with await StubModelServer.start() as stub``), in a daemon
thread (:meth:`StubModelServer.start_in_thread`), or as a process::

    python -m fastedit_lsp.tools.stub [--host 127.0.0.1] [--port 0] [--tps N] [--ttft S] [--text T]

which writes one line ``listening on <base_url>`` to stdout and serves until SIGINT or SIGTERM.

This module holds the server (its routes and control endpoints) and the command line, and
re-exports the public names of the modules beside it: :mod:`~fastedit_lsp.tools.stub_answers`
(:class:`Answer`, :class:`RecordedRequest`, :func:`split_tokens`),
:mod:`~fastedit_lsp.tools.stub_http` (HTTP/1.1 on a connection) and
:mod:`~fastedit_lsp.tools.stub_wire` (each dialect's framing, pacing and interruptions).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import logging
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final, Self

from .stub_answers import (
    DEFAULT_TEXT,
    MALFORMED_KINDS,
    Answer,
    MalformedKind,
    RecordedRequest,
    _error_json,
    split_tokens,
)
from .stub_apis import ApiDialect, ApiWire, error_body, prompt_chars, refusal_body, tier_field
from .stub_http import (
    _BadRequestError,
    _ClientGoneError,
    _Connection,
    _Exchange,
    _Head,
    _IncompleteRequestError,
    _parse_head,
    _parse_json,
)
from .stub_wire import (
    Dialect,
    _complete,
    _Params,
    _send_error,
    _stream,
    _Wire,
    prediction_tokens,
)

__all__ = [
    "CHAT_PATH",
    "COMPLETIONS_PATH",
    "DEFAULT_MODELS",
    "DEFAULT_TEXT",
    "FIM_PATH",
    "INFILL_PATH",
    "MALFORMED_KINDS",
    "MESSAGES_PATH",
    "MODELS_PATH",
    "MODEL_PATHS",
    "RESPONSES_PATH",
    "Answer",
    "Dialect",
    "MalformedKind",
    "RecordedRequest",
    "StubModelServer",
    "main",
    "split_tokens",
]

_log = logging.getLogger(__name__)

DEFAULT_MODELS: Final = ("stub-fast", "stub-strong")
#: How long a test's wait on the stub (requests, a stream's end) lasts before it fails: a guard
#: against a hang, generous enough for a machine with both cores busy.
WAIT_GUARD: Final = 120.0
CHAT_PATH: Final = "/v1/chat/completions"
COMPLETIONS_PATH: Final = "/v1/completions"
#: llama.cpp serves its native endpoints at the root, beside /v1.
INFILL_PATH: Final = "/infill"
FIM_PATH: Final = "/v1/fim/completions"
#: OpenAI's Responses API and Anthropic's Messages API (:mod:`.stub_apis`).
RESPONSES_PATH: Final = "/v1/responses"
MESSAGES_PATH: Final = "/v1/messages"
MODELS_PATH: Final = "/v1/models"
#: The endpoints that answer from the script, each in its own dialect.
MODEL_PATHS: Final = (
    CHAT_PATH,
    COMPLETIONS_PATH,
    INFILL_PATH,
    FIM_PATH,
    RESPONSES_PATH,
    MESSAGES_PATH,
)

_DIALECTS: Final[dict[str, Dialect]] = {
    CHAT_PATH: "chat",
    COMPLETIONS_PATH: "completions",
    INFILL_PATH: "infill",
    FIM_PATH: "fim",
}
_API_DIALECTS: Final[dict[str, ApiDialect]] = {
    RESPONSES_PATH: "responses",
    MESSAGES_PATH: "messages",
}


class StubModelServer:
    """The stub model server: script answers, point a client at :attr:`base_url`, read requests.

    Everything but :meth:`script`, :meth:`reset`, :meth:`release` and reading :attr:`requests`
    must run in the stub's event loop; from another thread use those or the ``/_stub/``
    endpoints.
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
        self._accepted = 0
        self._response_serials = itertools.count(1)
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None

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
        stub._loop = asyncio.get_running_loop()
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
    def connections_accepted(self) -> int:
        """How many TCP connections the stub has accepted."""
        return self._accepted

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

    def release(self) -> None:
        """Let the streams held by ``hold_after`` go on to their next hold (from any thread)."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("the stub has not started")
        for record in list(self.requests):
            loop.call_soon_threadsafe(record.release.set)

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
        timeout: float = WAIT_GUARD,  # noqa: ASYNC109
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
        timeout: float = WAIT_GUARD,  # noqa: ASYNC109
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
        self._accepted += 1
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
            record.first_byte_at, record.last_byte_at = ex.first_write_at, ex.last_write_at
            record.ended_at = time.monotonic()
            record.done.set()
        return completed

    async def _respond(self, ex: _Exchange, record: RecordedRequest) -> bool:
        api = _API_DIALECTS.get(record.path)
        if api is not None:
            if record.method != "POST":
                return await _send_error(ex, 405, "use POST")
            return await self._generate_api(ex, record, api)
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
        if dialect == "fim" and answer.fim_dialect == "inception":
            # Inception's FIM (Mercury Edit) shares Mistral's path, with completions' chunks.
            dialect = "completions"
        params = _Params.parse(dialect, body, self.models[0])
        if params.service_tier is not None:
            if answer.refuse_tier:
                return await ex.send_json(
                    400, refusal_body("responses", "service_tier", params.service_tier)
                )
            served = answer.tier_served
            served = "default" if served == "standard" else served
            params = dataclasses.replace(params, tier_served=served)
        tokens = answer.token_list()
        if params.prediction is not None:
            counts = prediction_tokens(params.prediction, tokens, answer.token_size)
            params = dataclasses.replace(params, prediction_tokens=counts)
            if answer.prediction_speedup != 1.0 and answer.tps > 0:
                answer = dataclasses.replace(answer, tps=answer.tps * answer.prediction_speedup)
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

    async def _generate_api(self, ex: _Exchange, record: RecordedRequest, api: ApiDialect) -> bool:
        """Answer a Responses or Messages API request with the next scripted answer."""
        body = record.body
        if not isinstance(body, dict):
            return await _send_error(ex, 400, "the request body must be a JSON object")
        answer = self._next_answer()
        record.answer = answer
        ex.split_bytes = answer.split_bytes
        await ex.pause(answer.header_delay)
        if answer.status != 200:
            error = error_body(api, answer, answer.status)
            return await ex.send_json(
                answer.status, error, headers=answer.headers, content_type=answer.content_type
            )
        asked = tier_field(api, body)
        if answer.refuse_tier and asked is not None:
            return await ex.send_json(400, refusal_body(api, *asked))
        model = body.get("model")
        limit = body.get("max_output_tokens" if api == "responses" else "max_tokens")
        tokens = answer.token_list()
        finish = answer.finish_reason
        if isinstance(limit, int) and 0 <= limit < len(tokens):
            tokens, finish = tokens[:limit], "length"
        wire = ApiWire(
            api,
            model if isinstance(model, str) and model else self.models[0],
            f"stub{next(self._response_serials)}",
            int(time.time()),
            answer,
            (prompt_chars(api, body) + 3) // 4,
            asked[1] if asked is not None else None,
            "".join(tokens),
        )
        if body.get("stream") is True:
            return await _stream(ex, record, answer, wire, tokens, finish)
        return await _complete(ex, record, answer, wire, tokens, finish)


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
