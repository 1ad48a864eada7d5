"""Every pygls 2.1.1 workaround, in one place: upgrading pygls means reading this module.

- ``$/cancelRequest`` cancels only the outer future of an ``executeCommand``: the command's own
  coroutine is cancelled too (:attr:`ProtocolHooks.cancellable`).
- Every async handler's future stayed in ``_request_futures`` forever: forgotten once done.
- A request whose params do not fit its type was dropped (the client waited forever): -32602; a
  notification's method sent as a request: -32600; a malformed notification: one log line.
- A reply that does not fit the request's result type left the request pending: it fails it.
- ``shutdown`` iterated over the pending requests while cancelling them changed the dict.
- A request after ``shutdown`` was dropped with a log line (the client waited for its answer):
  InvalidRequest, as the spec says.
- A message that is not JSON-RPC 2.0 (or a batch) is refused in one line instead of a traceback.
- The stdin reader hopped through threads three times per message: stdin is read on the loop.
- A request that timed out (:func:`forget_request`) and a finished progress token
  (:func:`forget_progress`) stayed in pygls' tables.
- Per message, pygls told requests from notifications with ``isinstance`` against
  runtime-checkable Protocols (~70 µs per message); per ``executeCommand`` it resolved the
  handler's type hints and signature again (~240 µs): both are done once here (bench: first
  edit, cancel).
- The converter (cattrs 26) compiles a function per message type on first use (0.2–3 ms), keeps
  it only in an ``lru_cache``, and clears that cache whenever it makes a hook for a new list
  type: every type met so far was compiled again on its next use (a session's first messages
  paid it over and over). The hooks are kept here across those clears (:func:`_keep_hooks`).

The server keeps its own documents (:mod:`.documents`): pygls' workspace copy is not kept.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import itertools
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Container, Generator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

import attrs
from lsprotocol import types
from pygls.constants import PARAM_LS
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

from ..core import json_codec
from .pygls_internals import PATCHES, Internals, check

if TYPE_CHECKING:
    from cattrs import Converter

log = logging.getLogger(__name__)
#: pygls' own logger for its message loop, as in its ``_start_io_async`` (same records, filters).
_PYGLS_LOG = logging.getLogger("pygls.server")
#: pygls' logger for what its protocol sends (``_send_data``).
_PYGLS_PROTOCOL_LOG = logging.getLogger("pygls.protocol.json_rpc")
#: A request the server marks as already answered (or not worth answering): pygls ignores it.
_HANDLED = "handled"


def _keep_hooks(converter: Any) -> None:
    """Keep every hook the converter finds, whatever clears its cache afterwards.

    cattrs clears its dispatch cache each time it registers a hook, and it registers one lazily
    the first time it writes a new list type: the hooks it had compiled for other types (by
    factory, kept nowhere else) were dropped and compiled again at their next use. Every hook
    here is registered when the converter is made, so a type's hook never changes afterwards
    and keeping it is safe. The cache's own ``cache_clear`` still clears the inner cache.
    """
    for dispatcher in (converter._structure_func, converter._unstructure_func):
        found: dict[Any, Any] = {}
        cached = dispatcher.dispatch

        def dispatch(typ: Any, found: dict[Any, Any] = found, cached: Any = cached) -> Any:
            try:
                return found[typ]
            except KeyError:
                hook = found[typ] = cached(typ)
                return hook
            except TypeError:  # an unhashable annotation: cattrs' own path
                return cached(typ)

        dispatch.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        dispatch.cache_info = cached.cache_info  # type: ignore[attr-defined]
        dispatcher.dispatch = dispatch


class DocumentEvents(Protocol):
    """Where the document notifications go (``features.sync`` fans them out to their owners)."""

    def opened(self, params: types.DidOpenTextDocumentParams) -> None: ...

    def changed(self, params: types.DidChangeTextDocumentParams) -> None: ...

    def closed(self, params: types.DidCloseTextDocumentParams) -> None: ...


class MessageClock(Protocol):
    """When the client's last message came, and the gate a message is handled under while
    background imports are pending (``warmup.ImportGate``)."""

    last_message: float

    @property
    def pending(self) -> bool: ...

    def foreground(self) -> AbstractContextManager[None]: ...


class _NoDocuments:
    def opened(self, params: types.DidOpenTextDocumentParams) -> None:
        pass

    def changed(self, params: types.DidChangeTextDocumentParams) -> None:
        pass

    def closed(self, params: types.DidCloseTextDocumentParams) -> None:
        pass


class _Clock:
    def __init__(self) -> None:
        self.last_message = time.monotonic()

    @property
    def pending(self) -> bool:
        return False

    def foreground(self) -> AbstractContextManager[None]:
        return nullcontext()


@dataclass
class ProtocolHooks:
    """All the protocol reaches of the server: the document events, the clock of the last
    message, and the running requests ``$/cancelRequest`` must be able to stop."""

    documents: DocumentEvents = field(default_factory=_NoDocuments)
    clock: MessageClock = field(default_factory=_Clock)
    #: Request id -> the task running its handler (a command registers itself while it runs).
    cancellable: dict[Any, asyncio.Task[Any]] = field(default_factory=dict)


class FasteditProtocol(LanguageServerProtocol):
    """pygls' protocol with the document sync and request cancellation fastedit needs.

    Each patch runs only when the start-up self-check found the pygls internals it needs
    (:meth:`adopt`, :mod:`.pygls_internals`); otherwise pygls' own path runs.
    """

    def __init__(self, server: PatchedLanguageServer, *args: Any, **kwargs: Any) -> None:
        super().__init__(server, *args, **kwargs)
        #: The server, for its hooks (pygls keeps it too, under a private name).
        self._owner = server
        #: The patches in use (:meth:`adopt`); none until the self-check ran.
        self._uses: Internals = Internals({p.key: ["not checked yet"] for p in PATCHES})
        #: Per command handler: whether it takes ``(ls, *args)`` (arguments pass as they are).
        self._plain_commands: dict[Callable[..., Any], bool] = {}
        #: ``shutdown`` arrived (its handler may still be closing jobs): requests are refused.
        self._shutting_down = False
        #: Writes still draining (the TCP transport's; stdio writes at once).
        self._writes: set[asyncio.Future[Any]] = set()
        #: ``shutdown`` was handled: pygls' own ``_shutdown``, kept here too (read per message).
        self._shut_down = False
        self._fast_dispatch = self._plain = self._framing = False
        self._mend_params = self._mend_replies = self._mend_shutdown = False
        self._forget_futures = False

    def adopt(self, internals: Internals) -> None:
        """Use the patches whose internals the self-check found (each read once here)."""
        self._uses = internals
        self._fast_dispatch = internals.uses("dispatch")
        self._plain = internals.uses("plain_commands")
        self._framing = internals.uses("framing")
        self._mend_params = internals.uses("invalid_params")
        self._mend_replies = internals.uses("bad_reply")
        self._mend_shutdown = internals.uses("after_shutdown")
        self._forget_futures = internals.uses("forget_futures")

    @property
    def converter(self) -> Converter:
        """pygls' converter (private in pygls), for the warm-up of the messages' code."""
        return self._converter

    def requests_pending(self, ignore: Container[object] = ()) -> bool:
        """Whether a request, the client's or the server's, waits for its answer (a request
        whose handler's task is in ``ignore`` does not count)."""
        futures = getattr(self, "_request_futures", {})
        return any(future not in ignore for future in list(futures.values()))

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # Mends pygls 2.1.1: $/cancelRequest cancels only the outer future of an
        # executeCommand (JsonRPCProtocol._handle_cancel_notification), so the command's own
        # coroutine keeps running: cancel it too.
        task = self._owner.hooks.cancellable.pop(msg_id, None)
        super()._handle_cancel_notification(msg_id)
        if task is not None and not task.cancelling():  # once (see Job.stop)
            task.cancel()

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        # Mends pygls 2.1.1: _execute_handler files every async handler's future under its id
        # and forgets only those it answers: each executeCommand's inner step and each async
        # notification stayed forever (a future holding its result, e.g. a job record). Forget
        # every one once it is done.
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if not self._forget_futures:
            return
        futures = self._request_futures
        future = futures.get(msg_id)
        if future is not None:
            future.add_done_callback(
                lambda done: futures.pop(msg_id, None) if futures.get(msg_id) is done else None
            )

    def structure_parsed(self, data: Any) -> Any:
        """A parsed body as messages: a JSON object is structured as a message, each object of
        a batch too; anything else is handed on as it is (:meth:`handle_message` refuses it)."""
        if isinstance(data, dict):
            return self.structure_message(data)
        if isinstance(data, list):
            return [
                self.structure_message(item) if isinstance(item, dict) else item for item in data
            ]
        return data

    def _send_data(self, data: Any) -> None:
        """pygls' ``_send_data``, the body written by :mod:`~fastedit_lsp.core.json_codec`
        (compact ASCII; pygls wrote it with spaces), its length counted in bytes."""
        if not self._framing:
            super()._send_data(data)
            return
        if not data:
            return
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        try:
            body = json_codec.dumps(data, self._serialize_message)
            if _PYGLS_PROTOCOL_LOG.isEnabledFor(logging.INFO):
                _PYGLS_PROTOCOL_LOG.info("Sending data: %s", body.decode())
            if self._include_headers:
                head = (
                    f"Content-Length: {len(body)}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
                )
                body = head.encode() + body
            written = self.writer.write(body)
            if inspect.isawaitable(written):  # the TCP transport's writer drains
                task = asyncio.ensure_future(written)
                self._writes.add(task)
                task.add_done_callback(self._writes.discard)
        except BrokenPipeError:
            _PYGLS_PROTOCOL_LOG.exception("Error sending data. BrokenPipeError", exc_info=True)
            raise
        except Exception as error:
            _PYGLS_PROTOCOL_LOG.exception("Error sending data", exc_info=True)
            self._owner._report_server_error(error, JsonRpcInternalError)

    def structure_message(self, data: Any) -> Any:
        """Mends pygls 2.1.1: ``structure_message`` drops a request whose params do not fit its
        type, leaving the client waiting forever: answer it with -32602 instead. A malformed
        notification is logged in one line (pygls logs a traceback and shows the user an error
        for it)."""
        if not (isinstance(data, dict) and "jsonrpc" in data):
            return super().structure_message(data)
        if "method" not in data:
            if not self._mend_replies:
                return super().structure_message(data)
            return self._structure_response(data)
        if not self._mend_params:
            return super().structure_message(data)
        method = str(data.get("method"))
        try:
            specific = self.get_message_type(method)
            if "id" in data and specific is not None and "id" not in attrs.fields_dict(specific):
                # A notification's method sent as a request: pygls would handle it as the
                # notification and never answer.
                error = JsonRpcInvalidRequest(f"{method} is a notification, not a request")
                self._send_response(data["id"], error=error.to_response_error())
                return JsonRPCNotification(method=method, jsonrpc=_HANDLED, params=None)
            if specific is None:  # an unknown method: params are optional in JSON-RPC
                return self._converter.structure({"params": None, **data}, _generic_type(data))
            return self._converter.structure(data, specific)
        except Exception as exc:
            reason = _one_line(exc)
            if "id" not in data:
                log.warning("ignored a malformed %s notification: %s", method, reason)
            else:
                log.warning("refused a malformed %s request: %s", method, reason)
                invalid = JsonRpcInvalidParams(f"{method}: the params do not match the LSP type")
                self._send_response(data["id"], error=invalid.to_response_error())
            return JsonRPCNotification(method=method, jsonrpc=_HANDLED, params=None)

    def _structure_response(self, data: dict[str, Any]) -> Any:
        """A reply to one of the server's requests; one that does not fit the request's result
        type fails the request (mends pygls 2.1.1, which logged a traceback and left it pending
        forever)."""
        msg_id: Any = data.get("id")
        known = _hashable(msg_id)
        result_type = self._result_types.pop(msg_id, None) if known else None
        try:
            if "error" in data:
                return self._converter.structure(data, types.ResponseErrorMessage)
            return self._converter.structure(data, result_type or JsonRPCResponseMessage)
        except Exception as exc:
            reason = _one_line(exc)
            log.warning("the client's reply to request %s could not be read: %s", msg_id, reason)
            future = self._request_futures.pop(msg_id, None) if known else None
            if future is not None and not future.done():
                future.set_exception(
                    JsonRpcInternalError(f"the client's reply could not be read: {reason}")
                )
            return JsonRPCNotification(method="", jsonrpc=_HANDLED, params=None)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """shutdown: pygls' own, iterating over a copy of the pending requests (cancelling one
        runs callbacks that change the dict: "dictionary changed size during iteration"). From
        its arrival on, requests are refused (:meth:`handle_message`). Mends pygls 2.1.1's
        ``lsp_shutdown``, which iterates over the dict its cancellations change."""
        self._shutting_down = True
        if not self._mend_shutdown:
            return (yield from super().lsp_shutdown(*args))
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = self._shut_down = True
        return None

    def handle_message(self, message: Any) -> None:
        """Dispatch a message; refuse what is not a JSON-RPC 2.0 message, in one log line."""
        version = getattr(message, "jsonrpc", None)
        if version == _HANDLED:
            return
        hooks = self._owner.hooks
        hooks.clock.last_message = time.monotonic()
        if isinstance(message, list) and message:
            # A JSON-RPC batch (LSP has none): each message is handled, each answer sent alone.
            for item in message:
                self.handle_message(item)
            return
        if version != JsonRPCProtocol.VERSION:
            log.warning("ignored a message that is not JSON-RPC 2.0: %.200r", message)
            msg_id = message.get("id") if isinstance(message, dict) else None
            if self._mend_params and isinstance(msg_id, int | str) and not isinstance(msg_id, bool):
                error = JsonRpcInvalidRequest("not a JSON-RPC 2.0 message")
                self._send_response(msg_id, error=error.to_response_error())
            return
        method = getattr(message, "method", None)
        if self._shutting_down and self._mend_shutdown and method != types.EXIT:
            # Mends pygls 2.1.1 (JsonRPCProtocol.handle_message): a request after shutdown errors
            # with InvalidRequest (the spec). pygls dropped it with a log line, so the client
            # waited for an answer (eglot's shutdown waited its 10 s request timeout when a
            # timer of fastedit.el asked for a next edit meanwhile). Replies still go through:
            # closing jobs may wait for the editor's answer to an edit.
            msg_id = getattr(message, "id", None)
            if method is None:
                if not self._shut_down:
                    self._dispatch(contextvars.copy_context(), message)
                return
            if isinstance(msg_id, int | str) and not isinstance(msg_id, bool):
                error = JsonRpcInvalidRequest(f"the server is shutting down: {method} refused")
                self._send_response(msg_id, error=error.to_response_error())
            else:
                log.info("after shutdown, ignored %s", method)
            return
        # pygls' dispatch, with its Protocol isinstance checks spelled as the attribute tests
        # they are (RPCRequest: id, method, params; RPCNotification: method, params;
        # RPCResponse: id, result; else an error response).
        ctx = contextvars.copy_context()
        clock = hooks.clock
        if not clock.pending:  # the usual case: no context manager on every keystroke
            self._dispatch(ctx, message)
            return
        with clock.foreground():
            self._dispatch(ctx, message)

    def _dispatch(self, ctx: contextvars.Context, message: Any) -> None:
        if not self._fast_dispatch:
            super().handle_message(message)
            return
        if hasattr(message, "method") and hasattr(message, "params"):
            if hasattr(message, "id"):
                ctx.run(self._handle_request, message.id, message.method, message.params)
            else:
                ctx.run(self._handle_notification, message.method, message.params)
        elif hasattr(message, "id") and hasattr(message, "result"):
            ctx.run(self._handle_response, message.id, message.result)
        else:
            ctx.run(self._handle_response, message.id, None, message.error)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        """workspace/executeCommand: pygls' own, without re-reading the handler's signature and
        type hints on every call for handlers taking ``(ls, *args)`` (all of fastedit's)."""
        handler = self.fm.commands.get(params.command, None) if self._plain else None
        if handler is None or not self._takes_plain_arguments(handler):
            return (yield from super().lsp_workspace__execute_command(params))
        return (yield handler, tuple(params.arguments or ()), {})

    def _takes_plain_arguments(self, handler: Callable[..., Any]) -> bool:
        plain = self._plain_commands.get(handler)
        if plain is None:
            function = getattr(handler, "func", handler)
            parameters = list(inspect.signature(function).parameters.values())
            plain = self._plain_commands[handler] = (
                len(parameters) == 2
                and parameters[0].name == PARAM_LS
                and parameters[1].kind == inspect.Parameter.VAR_POSITIONAL
            )
        return plain

    # The server keeps its own documents (lsp.documents); pygls' workspace copy is not kept,
    # which also saves re-splitting every document on every keystroke.

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._owner.hooks.documents.opened(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._owner.hooks.documents.changed(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._owner.hooks.documents.closed(params)


def _generic_type(data: dict[str, Any]) -> type[Any]:
    return JsonRPCRequestMessage if "id" in data else JsonRPCNotification


def _hashable(value: Any) -> bool:
    return isinstance(value, int | str | float | bool) or value is None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


class _OneLine(logging.Filter):
    """pygls logs a full traceback for a message body that is not JSON: one line is enough."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.getMessage() == "Unable to handle message":
            reason = _one_line(record.exc_info[1] or Exception())
            record.msg = f"ignored a message that could not be read: {reason}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


class PatchedLanguageServer(LanguageServer):
    """pygls' server with the message-loop fixes (the state lives in the subclass)."""

    def __init__(self, name: str, version: str) -> None:
        super().__init__(
            name,
            version,
            protocol_cls=FasteditProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        protocol = self.protocol
        assert isinstance(protocol, FasteditProtocol)
        #: Which of the protocol's patches found the pygls/cattrs internals they need.
        self.internals = check(protocol, self)
        protocol.adopt(self.internals)
        if self.internals.uses("keep_hooks"):
            _keep_hooks(protocol._converter)
        #: What the protocol reaches of the server (the subclass hands in its owners).
        self.hooks = ProtocolHooks()
        pygls_log = logging.getLogger("pygls.server")
        if not any(isinstance(f, _OneLine) for f in pygls_log.filters):
            pygls_log.addFilter(_OneLine())

    def requests_pending(self, ignore: Container[object] = ()) -> bool:
        """Whether a request, the client's or the server's, waits for its answer (a request
        whose handler's task is in ``ignore`` does not count)."""
        protocol = self.protocol
        return isinstance(protocol, FasteditProtocol) and protocol.requests_pending(ignore)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """An error outside any request (a message that could not be read): log it in one line.

        pygls would show the user "Error in server" for what is the editor's (or a script's)
        malformed message.
        """
        if source is JsonRpcException or source is FeatureRequestError:
            # A message that could not be read (pygls logged it: one line, see _OneLine), or a
            # request that already got its error as the answer.
            return
        log.warning("%s: %s", getattr(source, "__name__", source), _one_line(error))

    def _start_io_async(
        self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
    ) -> None:
        """pygls' stdio loop, reading stdin on the event loop instead of through threads."""
        if not self.internals.uses("stdin_on_loop"):
            super()._start_io_async(stdin, stdout)
            return
        stop = self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self._serve_stdio(stdin or sys.stdin.buffer, stop))
        except BrokenPipeError:
            _PYGLS_LOG.error("Connection to the client is lost! Shutting down the server.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    async def _serve_stdio(self, stdin: BinaryIO, stop: threading.Event) -> None:
        from pygls.io_ import StdinAsyncReader

        from .stdio import pipe_reader

        reader = await pipe_reader(stdin) or StdinAsyncReader(stdin, self.thread_pool)
        protocol = self.protocol
        assert isinstance(protocol, FasteditProtocol)
        await read_messages(reader, protocol, stop, self.report_server_error)


#: A header line that gives the body's length (pygls' pattern: anything else is skipped).
_CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")


async def read_messages(
    reader: Any,
    protocol: FasteditProtocol,
    stop: threading.Event,
    report: Callable[[Exception, type[JsonRpcException]], Any],
) -> None:
    """pygls' message loop (``pygls.io_.run_async``: the same headers, the same errors), each
    body parsed by :mod:`~fastedit_lsp.core.json_codec` and structured once as a whole message.

    pygls parsed with ``json.loads(body, object_hook=structure_message)``: a Python call for
    every object in the message (a ``didChange`` has eight), each only to find that it was not
    a message. Here the message itself is structured, and each message of a batch.
    """
    length = 0
    while not stop.is_set():
        header = await reader.readline()
        if not header:
            break
        if not length:
            match = _CONTENT_LENGTH.fullmatch(header)
            if match:
                length = int(match.group(1))
        if length and not header.strip():
            body = await reader.readexactly(length)
            if not body:
                break
            try:
                protocol.handle_message(protocol.structure_parsed(json_codec.loads(body)))
            except Exception as exc:
                _PYGLS_LOG.exception("Unable to handle message")
                report(exc, JsonRpcException)
            finally:
                length = 0


_request_ids = itertools.count(1)


def send_request(
    server: LanguageServer, method: str, params: Any
) -> tuple[str, asyncio.Future[Any]]:
    """Send a request to the client: its id and the future of its reply.

    Ids count up (pygls makes a ``uuid4`` for each, a read of the system's random source);
    the prefix keeps them apart from the client's own request ids, filed in the same table.
    """
    msg_id = f"fastedit-{next(_request_ids)}"
    future = server.protocol.send_request(method, params, msg_id=msg_id)
    return msg_id, asyncio.wrap_future(future)


def forget_request(server: LanguageServer, msg_id: str) -> None:
    """Forget a request the server stopped waiting for (a late reply is then only logged).
    Mends pygls 2.1.1, whose tables keep a request that never got its reply."""
    for table in ("_request_futures", "_result_types"):
        getattr(server.protocol, table, {}).pop(msg_id, None)


def pending_requests(server: LanguageServer) -> int:
    """Requests in both directions still waiting for an answer."""
    return len(getattr(server.protocol, "_request_futures", {}))


def forget_progress(server: LanguageServer, token: str) -> None:
    """pygls 2.1.1 never forgets a progress token: forget one whose progress ended."""
    getattr(server.work_done_progress, "tokens", {}).pop(token, None)
