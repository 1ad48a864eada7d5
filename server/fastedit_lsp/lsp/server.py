"""The language server: the object that owns all state, and the protocol fixes it needs.

Features live in ``features/`` and register themselves on a :class:`FasteditServer`; the job
pipeline lives in ``runner``. This module keeps documents in sync, sends edits, progress and status,
and resolves settings and backends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

import attrs
from lsprotocol import types
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

from .. import __version__
from ..core.document import Change, Document, Encoding, Point
from ..core.jobs import Job, JobRegistry
from ..core.outline import Outline, outline
from ..core.timings import Timings
from ..core.tracking import RegionTracker, SentEdit, apply_change
from ..prompting.context import is_excluded

# Start-up imports only what answering ``initialize`` needs: settings (pydantic), httpx, the
# job runner and the actions are imported on first use, after the reply (bench: cold start).
if TYPE_CHECKING:
    import httpx

    from ..backends.breaker import CircuitBreakers
    from ..backends.ratelimit import RateLimits
    from ..completion.context import OpenDocument
    from ..completion.engine import CompletionEngine, CompletionQuery, Suggestion
    from ..settings import Mode, ProfileName, Resolved, ResolvedProfile

log = logging.getLogger(__name__)
#: pygls' own logger for its message loop, as in its ``_start_io_async`` (same records, filters).
_PYGLS_LOG = logging.getLogger("pygls.server")

#: The custom notification carrying ``{mode, job?}``.
STATUS = "fastedit/status"
#: While a job streams, status goes out at most this often (seconds).
STATUS_INTERVAL = 0.25
#: Quiet time after a change before a Python document is re-parsed for code actions.
OUTLINE_DELAY = 0.3
#: How many recent verified jobs per route the failure rate covers, and how many it needs.
VERIFY_WINDOW = 20
VERIFY_MIN_JOBS = 5
#: How many recent jobs per route the speed percentiles cover.
SPEED_WINDOW = 100
#: How long a completion waits for git to say whether its document is git-ignored.
GIT_CHECK_TIMEOUT = 5.0
#: How long an edit may wait for the client's reply before the job gives up on the client
#: (seconds; ``FASTEDIT_APPLY_TIMEOUT_MS`` in the environment overrides it).
APPLY_TIMEOUT = 30.0
#: A request the server marks as already answered (or not worth answering): pygls ignores it.
_HANDLED = "handled"


class FasteditProtocol(LanguageServerProtocol):
    """pygls' protocol with the document sync and request cancellation fastedit needs."""

    _server: FasteditServer

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # pygls 2.1.1 cancels only the outer future of an executeCommand, so the command's own
        # coroutine keeps running (notes/toolchain.md, defect 1): cancel it too.
        task = self._server.cancellable.pop(msg_id, None)
        super()._handle_cancel_notification(msg_id)
        if task is not None:
            task.cancel()

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        # pygls files every async handler's future under its id and forgets only those it answers:
        # each executeCommand's inner step and each async notification stayed forever (a future
        # holding its result, e.g. a job record). Forget every one once it is done.
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        futures = self._request_futures
        future = futures.get(msg_id)
        if future is not None:
            future.add_done_callback(
                lambda done: futures.pop(msg_id, None) if futures.get(msg_id) is done else None
            )

    def structure_message(self, data: Any) -> Any:
        """pygls drops a request whose params do not fit its type, leaving the client waiting
        forever: answer it with -32602 instead. A malformed notification is logged in one line
        (pygls logs a traceback and shows the user an error for it)."""
        if not (isinstance(data, dict) and "jsonrpc" in data):
            return super().structure_message(data)
        if "method" not in data:
            return self._structure_response(data)
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
        type fails the request (pygls logged a traceback and left it pending forever)."""
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
        runs callbacks that change the dict: "dictionary changed size during iteration")."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True

    def handle_message(self, message: Any) -> None:
        """Dispatch a message; refuse what is not a JSON-RPC 2.0 message, in one log line."""
        version = getattr(message, "jsonrpc", None)
        if version == _HANDLED:
            return
        if isinstance(message, list) and message:
            # A JSON-RPC batch (LSP has none): each message is handled, each answer sent alone.
            for item in message:
                self.handle_message(item)
            return
        if version != JsonRPCProtocol.VERSION:
            log.warning("ignored a message that is not JSON-RPC 2.0: %.200r", message)
            msg_id = message.get("id") if isinstance(message, dict) else None
            if isinstance(msg_id, int | str) and not isinstance(msg_id, bool):
                error = JsonRpcInvalidRequest("not a JSON-RPC 2.0 message")
                self._send_response(msg_id, error=error.to_response_error())
            return
        super().handle_message(message)

    # The server keeps its own documents (document.py); pygls' workspace copy is not kept, which
    # also saves re-splitting every document on every keystroke.

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._server.open_document(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        started = time.perf_counter()
        self._server.change_document(params)
        self._server.timings.record("didChange", time.perf_counter() - started)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._server.close_document(params)


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


class FasteditServer(LanguageServer):
    """fastedit-lsp's server state."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        super().__init__(
            "fastedit-lsp",
            __version__,
            protocol_cls=FasteditProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        #: The process environment, read once (keys, FASTEDIT_* variables).
        self.environ: dict[str, str] = dict(os.environ if environ is None else environ)
        #: Open documents by URI, as the client reported them.
        self.documents: dict[str, Document] = {}
        self.jobs = JobRegistry()
        #: initializationOptions' ``fastedit`` section (or the whole object), kept for re-merges.
        self.init_options: Any = None
        #: The last section pulled or pushed through workspace/configuration.
        self.client_settings: Any = None
        self._resolved: Resolved | None = None
        self._mode: Mode | None = None
        self._last_non_fast: Mode | None = None
        #: Running requests that ``$/cancelRequest`` must be able to stop (pygls defect 1).
        self.cancellable: dict[Any, asyncio.Task[Any]] = {}
        #: Progress token -> job, for window/workDoneProgress/cancel.
        self.progress_jobs: dict[str, Job] = {}
        #: Background tasks kept referenced until they finish.
        self.tasks: set[asyncio.Task[Any]] = set()
        #: Profiles whose fallback to the offline engine was already announced.
        self.announced: set[str] = set()
        #: Model ids discovered from /v1/models, per (baseUrl, profile).
        self.discovered_models: dict[str, str] = {}
        self._http: httpx.AsyncClient | None = None
        self._rate_limits: RateLimits | None = None
        self._breakers: CircuitBreakers | None = None
        self._status_sent_at: dict[str, float] = {}
        self._change_waiters: list[asyncio.Future[None]] = []
        self._open_waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._outlines: dict[str, Outline] = {}
        self._outline_timers: dict[str, asyncio.TimerHandle] = {}
        #: Recent finished jobs' (ttftMs, tokensPerSecond) per route, for rolling percentiles.
        self.speeds: dict[str, deque[tuple[float, float]]] = {}
        #: Recent verification outcomes per route (True: passed), for auto routing.
        self.verifications: dict[str, deque[bool]] = {}
        #: Completion requests' cache, streams and counters (completions.py).
        self._completions: CompletionEngine | None = None
        #: Open documents' paths known to be git-ignored (True) or not (False); a path still
        #: being checked is absent, and counts as excluded until git answers.
        self.git_ignored: dict[str, bool] = {}
        self._git_checks: dict[str, asyncio.Task[bool]] = {}
        #: Other open documents as completion context, per URI: (version, indexed document).
        self.context_documents: dict[str, tuple[int, OpenDocument]] = {}
        #: Recent completions' server time (ms, the model's and the debounce's excluded) by source.
        self.completion_times: dict[str, deque[float]] = {}
        #: The server time of the session's first completion (it loads modules), in ms.
        self.completion_first_ms: float | None = None
        #: Completion failures already logged (completions fire on every keystroke).
        self.completion_errors: set[str] = set()
        #: Seconds an edit waits for the client's reply (see :data:`APPLY_TIMEOUT`).
        self.apply_timeout = _seconds(self.environ.get("FASTEDIT_APPLY_TIMEOUT_MS"), APPLY_TIMEOUT)
        pygls_log = logging.getLogger("pygls.server")
        if not any(isinstance(f, _OneLine) for f in pygls_log.filters):
            pygls_log.addFilter(_OneLine())
        #: Handler times measured inside the server (``fastedit/debugTimings``, the bench).
        self.timings = Timings()

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
        from pygls.io_ import StdinAsyncReader, run_async

        from .stdio import pipe_reader

        reader = await pipe_reader(stdin) or StdinAsyncReader(stdin, self.thread_pool)
        await run_async(
            stop_event=stop,
            reader=reader,
            protocol=self.protocol,
            logger=_PYGLS_LOG,
            error_handler=self.report_server_error,
        )

    # -- settings ----------------------------------------------------------------------------

    @property
    def resolved(self) -> Resolved:
        """The merged settings, validated on first use (``initialized`` does it and reports
        problems: validation imports pydantic, which has no place before the initialize reply)."""
        if self._resolved is None:
            from ..settings import load

            self._resolved = load(self.environ, self.init_options, self.client_settings)
        return self._resolved

    @property
    def mode(self) -> Mode:
        """The current mode (the ``mode`` setting starts it; the toggle and setMode change it)."""
        if self._mode is None:
            self._mode = self.resolved.settings.mode
        return self._mode

    @property
    def last_non_fast(self) -> Mode:
        """The mode the fast-mode toggle returns to."""
        if self._last_non_fast is None:
            self._last_non_fast = "standard" if self.mode == "fast" else self.mode
        return self._last_non_fast

    def reload_settings(self, *, notify: bool = True) -> None:
        """Merge every settings source again; report problems; keep a toggled mode."""
        from ..settings import load

        old = self._resolved.settings if self._resolved is not None else None
        resolved = self._resolved = load(self.environ, self.init_options, self.client_settings)
        for problem in resolved.problems:
            log.warning("settings: %s", problem)
            self.show_message(f"fastedit: {problem}", types.MessageType.Warning)
        for warning in resolved.warnings:
            log.warning("settings: %s", warning)
            self.log_message(warning, types.MessageType.Warning)
        if old is not None and resolved.settings.mode != old.mode:
            self.set_mode(resolved.settings.mode, notify=notify)

    def set_mode(self, mode: Mode, *, notify: bool = True) -> None:
        previous = self.mode
        self._last_non_fast = mode if mode != "fast" else self.last_non_fast
        if mode != previous:
            self._mode = mode
            if notify:
                self.send_status(None)

    def profile(self, name: str, *, announce: bool = True) -> ResolvedProfile:
        """A profile resolved against the current settings and the environment."""
        from ..settings import resolve_profile

        resolved = resolve_profile(
            "fast" if name == "fast" else "standard", self.resolved.settings, self.environ
        )
        if announce and resolved.fallback_reason and name not in self.announced:
            self.announced.add(name)
            self.show_message(
                f"fastedit: {resolved.fallback_reason}; using the offline engine.",
                types.MessageType.Info,
            )
        return resolved

    @property
    def http(self) -> httpx.AsyncClient:
        """The one HTTP client of the server (httpx is imported on first use: it costs ~90 ms)."""
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(30.0, connect=5.0),
                limits=httpx.Limits(max_connections=20, max_keepalive_connections=10),
                trust_env=False,
            )
        return self._http

    @property
    def breakers(self) -> CircuitBreakers:
        if self._breakers is None:
            from ..backends.breaker import CircuitBreakers

            self._breakers = CircuitBreakers()
        return self._breakers

    @property
    def rate_limits(self) -> RateLimits:
        if self._rate_limits is None:
            from ..backends.ratelimit import RateLimits

            self._rate_limits = RateLimits()
        return self._rate_limits

    async def close(self) -> None:
        """Stop every job and completion stream, and close the HTTP client."""
        if self._completions is not None:
            self._completions.close()
        for timer in self._outline_timers.values():
            timer.cancel()
        self._outline_timers.clear()
        for job in self.jobs.running():
            if job.task is not None:
                job.task.cancel()
        pending = [j.task for j in self.jobs.running() if j.task is not None]
        if pending:
            await asyncio.wait(pending, timeout=2)
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    @property
    def completions(self) -> CompletionEngine:
        """Completion requests' cache, streams and counters (created at the first request)."""
        if self._completions is None:
            from ..completion.engine import CompletionEngine

            self._completions = CompletionEngine(
                finish=_finish_completion, has_enough=_completion_ends
            )
        return self._completions

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # -- documents ---------------------------------------------------------------------------

    @property
    def encoding(self) -> Encoding:
        try:
            kind = str(self.workspace.position_encoding)
        except RuntimeError:
            return "utf-16"
        return kind if kind in ("utf-8", "utf-32") else "utf-16"  # type: ignore[return-value]

    def open_document(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        self.documents[item.uri] = Document(
            item.uri,
            item.text,
            version=item.version,
            language_id=item.language_id,
            encoding=self.encoding,
        )
        for waiter in self._open_waiters.pop(item.uri, []):
            if not waiter.done():
                waiter.set_result(None)
        self._outlines.pop(item.uri, None)
        self.refresh_outline_later(item.uri)
        self._check_git_ignored(item.uri)

    def _check_git_ignored(self, uri: str) -> asyncio.Task[bool] | None:
        """Ask git once, off the request path, whether an opened file is git-ignored."""
        from pygls.uris import to_fs_path

        from ..pipeline.runner import git_ignored

        path = to_fs_path(uri)
        if path is None or path in self.git_ignored:
            return None  # untitled: and other schemes have no file for git to ignore
        if (pending := self._git_checks.get(path)) is not None:
            return pending

        async def check() -> bool:
            try:
                ignored = self.git_ignored[path] = await git_ignored(path)
            finally:
                self._git_checks.pop(path, None)
            return ignored

        task = self._git_checks[path] = self.spawn(check())
        return task

    def excluded(self, uri: str) -> str | None:
        """The ``context.exclude`` pattern an open document matches, without waiting for git.

        A file git has not answered for yet counts as git-ignored.
        """
        from pygls.uris import to_fs_path

        path = to_fs_path(uri) or uri
        from ..settings import GIT_IGNORED

        patterns = self.resolved.settings.context.exclude
        if pattern := is_excluded(path, [p for p in patterns if p != GIT_IGNORED]):
            return pattern
        is_file = to_fs_path(uri) is not None
        if GIT_IGNORED in patterns and is_file and self.git_ignored.get(path, True):
            return GIT_IGNORED
        return None

    async def excluded_checked(self, uri: str) -> str | None:
        """:meth:`excluded`, waiting (at most a few seconds) for git's answer if it is pending."""
        pending = self._check_git_ignored(uri)
        if pending is not None:
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(pending), GIT_CHECK_TIMEOUT)
        return self.excluded(uri)

    def refresh_outline_later(self, uri: str) -> None:
        """Re-parse a Python document shortly after the user stops typing, off the request path."""
        document = self.documents.get(uri)
        if document is None or (document.language_id or "python") != "python":
            return
        if (timer := self._outline_timers.pop(uri, None)) is not None:
            timer.cancel()

        def start() -> None:
            self._outline_timers.pop(uri, None)
            self.spawn(self._refresh_outline(uri))

        self._outline_timers[uri] = asyncio.get_running_loop().call_later(OUTLINE_DELAY, start)

    async def _refresh_outline(self, uri: str) -> None:
        document = self.documents.get(uri)
        if document is None:
            return
        version, text = document.version, document.text
        fresh = await asyncio.to_thread(outline, text, version)
        if uri in self.documents and self.documents[uri].version == version:
            self._outlines[uri] = fresh

    def outline(self, uri: str) -> Outline:
        """The document's outline: parsed once per version, off the request path.

        While the user types, the last outline answers (a refresh is scheduled on every
        change); only a document never parsed yet is parsed here.
        """
        cached = self._outlines.get(uri)
        if cached is None:
            document = self.documents[uri]
            cached = outline(document.text, document.version)
            self._outlines[uri] = cached
        return cached

    def next_open(self, uri: str) -> asyncio.Future[None]:
        """A future resolved when the client opens ``uri``."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._open_waiters.setdefault(uri, []).append(waiter)
        return waiter

    def workspace_root_for(self, path: str) -> str | None:
        """The workspace folder holding ``path`` (the innermost), else the root path."""
        from pygls.uris import to_fs_path

        try:
            folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
            root: str | None = self.workspace.root_path
        except RuntimeError:
            return None
        candidates: list[str] = [f for f in folders if f and path.startswith(f.rstrip("/") + "/")]
        if candidates:
            return max(candidates, key=len)
        if root and path.startswith(root.rstrip("/") + "/"):
            return root
        return None

    def close_document(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self.documents.pop(uri, None)
        self._outlines.pop(uri, None)
        if self._completions is not None:
            self._completions.forget(uri)
        self.context_documents.pop(uri, None)
        if (timer := self._outline_timers.pop(uri, None)) is not None:
            timer.cancel()
        for job in self.jobs.running(uri):
            self.stop_job(job, "the document was closed")

    def change_document(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        document = self.documents.get(uri)
        if document is None:
            log.warning("didChange for a document that is not open: %s", uri)
            return
        jobs = [j for j in self.jobs if j.uri == uri and j.state != "reverted"]
        trackers = [(j.tracker, not j.is_finished and not j.settling) for j in jobs]
        for content in params.content_changes:
            if isinstance(content, types.TextDocumentContentChangePartial):
                start = document.to_point(content.range.start.line, content.range.start.character)
                end = document.to_point(content.range.end.line, content.range.end.character)
                if end < start:
                    start, end = end, start
            else:
                start, end = Point(0, 0), document.end
            apply_change(document, trackers, Change(start, end, content.text))
        document.version = params.text_document.version
        self.refresh_outline_later(uri)
        waiters, self._change_waiters = self._change_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        for job in jobs:
            if not job.is_finished and job.tracker.conflict is not None:
                self.stop_job(job, job.tracker.conflict)

    def next_change(self) -> asyncio.Future[None]:
        """A future resolved by the client's next ``didChange``."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._change_waiters.append(waiter)
        return waiter

    async def wait_reported(self, tracker: RegionTracker, seconds: float) -> bool:
        """Wait until the editor has reported a job's edits (or a conflict shows), at most
        ``seconds``: editors report late (eglot after 0.5 s idle). Whether all were reported."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while tracker.pending and tracker.conflict is None and loop.time() < deadline:
            await asyncio.wait([self.next_change()], timeout=max(0.0, deadline - loop.time()))
        return not tracker.pending

    def stop_job(self, job: Job, reason: str | None) -> None:
        """Stop a running job's stream; the runner records ``reason`` (None: the user's cancel)."""
        if job.stop_reason is None:
            job.stop_reason = reason
        if job.task is not None and not job.task.done():
            job.task.cancel()

    # -- talking to the client -----------------------------------------------------------------

    async def apply_edit(
        self,
        uri: str,
        edit: SentEdit,
        *,
        document: Document,
        unreported: Sequence[SentEdit] = (),
        also: Sequence[SentEdit] = (),
    ) -> bool:
        """Send one edit (never a resource operation) and wait for the client's reply.

        ``also``: more edits of the same document in the same ``workspace/applyEdit`` (positions
        in the same text, not overlapping ``edit``): one edit for the editor, one undo step.

        Insertions are unversioned: editors report changes late, so the version the server knows
        is stale while a stream runs (Neovim then drops versioned edits, eglot rejects them). An
        edit that deletes text (replacing the target range, revert) carries the version the
        server knows when the client supports it, so that a client holding changes the server
        has not seen refuses it instead of deleting the wrong text.
        """
        if unreported:
            # ``edit`` is placed in the client's text, which already holds the edits the client
            # has not reported yet (Neovim reports 150 ms late): convert on a copy that has them,
            # or a position past the end of a stale line is clamped to it.
            document = document.copy()
            for sent in unreported:
                document.replace(sent.start, sent.end, sent.text)
        text_edits = [_text_edit(document, e) for e in (edit, *also)]
        deletes = any(e.start != e.end for e in (edit, *also))
        if deletes and self.client_supports("workspace.workspace_edit.document_changes"):
            workspace_edit = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(
                            uri=uri, version=document.version
                        ),
                        edits=list(text_edits),
                    )
                ]
            )
        else:
            workspace_edit = types.WorkspaceEdit(changes={uri: text_edits})
        params = types.ApplyWorkspaceEditParams(edit=workspace_edit)
        result = await self.request(types.WORKSPACE_APPLY_EDIT, params, self.apply_timeout)
        return bool(result.applied)

    async def request(self, method: str, params: Any, seconds: float) -> Any:
        """Send a request to the client and wait at most ``seconds`` for the reply.

        At the timeout the request is forgotten (a late reply is only logged) and TimeoutError
        says which request went unanswered. Cancelling the wait does not cancel the request:
        its reply still arrives, and the caller may still want it (an edit on the wire).
        """
        msg_id = str(uuid.uuid4())
        future = self.protocol.send_request(method, params, msg_id=msg_id)
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), seconds)
        except TimeoutError:
            self.protocol._request_futures.pop(msg_id, None)
            self.protocol._result_types.pop(msg_id, None)
            raise TimeoutError(f"no answer to {method} within {seconds:g} s") from None

    def client_supports(self, path: str) -> bool:
        node: Any = self.client_capabilities
        for part in path.split("."):
            node = getattr(node, part, None)
            if node is None:
                return False
        return bool(node)

    def show_message(self, message: str, kind: types.MessageType) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log_message(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def send_status(self, job: Job | None, *, streaming: bool = False) -> bool:
        """Send ``fastedit/status``; while streaming, at most every :data:`STATUS_INTERVAL`.

        Returns whether it was sent.
        """
        now = time.monotonic()
        if (
            streaming
            and job is not None
            and now - self._status_sent_at.get(job.id, 0.0) < STATUS_INTERVAL
        ):
            return False
        payload: dict[str, Any] = {"mode": self.mode}
        if job is not None:
            if job.is_finished:
                self._status_sent_at.pop(job.id, None)
            else:
                self._status_sent_at[job.id] = now
            payload["job"] = job.record()
        self.protocol.notify(STATUS, payload)
        return True

    def record_verification(self, job: Job) -> None:
        """Keep whether a job's draft passed verification (when there was something to check)."""
        ok = job.verification.get("ok")
        if job.route and ok is not None:
            self.verifications.setdefault(job.route, deque(maxlen=VERIFY_WINDOW)).append(bool(ok))

    def failure_rates(self) -> dict[str, float]:
        """Each route's recent verification failure rate, once enough jobs were checked."""
        return {
            route: outcomes.count(False) / len(outcomes)
            for route, outcomes in self.verifications.items()
            if len(outcomes) >= VERIFY_MIN_JOBS
        }

    def record_speed(self, job: Job) -> None:
        """Keep a finished job's speed for the route's rolling percentiles."""
        metrics = job.metrics.record()
        if job.route and metrics["ttftMs"] is not None and metrics["tokensPerSecond"]:
            speeds = self.speeds.setdefault(job.route, deque(maxlen=SPEED_WINDOW))
            speeds.append((metrics["ttftMs"], metrics["tokensPerSecond"]))

    def speed(self) -> dict[str, Any]:
        """Rolling p50/p90 of time to first token and tokens per second, per route."""
        out: dict[str, Any] = {}
        for route, samples in self.speeds.items():
            ttfts = sorted(t for t, _ in samples)
            rates = sorted(r for _, r in samples)
            out[route] = {
                "jobs": len(samples),
                "ttftMs": {"p50": _percentile(ttfts, 50), "p90": _percentile(ttfts, 90)},
                "tokensPerSecond": {"p50": _percentile(rates, 50), "p90": _percentile(rates, 90)},
            }
        return out

    def record_completion_time(self, suggestion: Suggestion, seconds: float) -> None:
        """Keep what a completion cost the server itself, for ``fastedit.status``."""
        spent = max(0.0, seconds - suggestion.waited) * 1000
        if self.completion_first_ms is None:
            # The session's first completion loads the completion and HTTP modules: kept apart
            # so that the percentiles describe every later keystroke.
            self.completion_first_ms = spent
            return
        times = self.completion_times.setdefault(suggestion.source, deque(maxlen=SPEED_WINDOW * 10))
        times.append(spent)

    def completion_report(self) -> dict[str, Any]:
        """Counters and server-time percentiles of completions (``fastedit.status``)."""
        added = {}
        for source, samples in self.completion_times.items():
            ordered = sorted(samples)
            added[source] = {
                "count": len(ordered),
                "p50": _percentile(ordered, 50, digits=3),
                "p99": _percentile(ordered, 99, digits=3),
            }
        first = None if self.completion_first_ms is None else round(self.completion_first_ms, 3)
        return {**self.completions.stats.as_dict(), "serverMs": added, "firstServerMs": first}

    def status(self) -> dict[str, Any]:
        """The reply of ``fastedit.status``."""
        from ..settings import resolve_profile

        profiles = {}
        names: tuple[ProfileName, ...] = ("fast", "standard")
        for name in names:
            p = resolve_profile(name, self.resolved.settings, self.environ)
            profiles[name] = {
                "provider": p.provider,
                "model": p.model
                or self.discovered_models.get(name)
                or ("offline" if p.is_local else None),
                "baseUrl": p.base_url,
                "note": p.fallback_reason,
            }
        now = time.monotonic()
        return {
            "mode": self.mode,
            "profiles": profiles,
            "jobs": self.jobs.records(),
            "version": __version__,
            "breakers": self._breakers.snapshot(now) if self._breakers else [],
            "speed": self.speed(),
            "completions": self.completion_report(),
        }


def _seconds(milliseconds: str | None, default: float) -> float:
    try:
        return max(0.001, int(milliseconds or "") / 1000)
    except ValueError:
        return default


def _text_edit(document: Document, edit: SentEdit) -> types.TextEdit:
    (sl, sc), (el, ec) = document.to_client(edit.start), document.to_client(edit.end)
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=sl, character=sc),
            end=types.Position(line=el, character=ec),
        ),
        new_text=edit.text,
    )


def _finish_completion(text: str, query: CompletionQuery) -> str:
    from ..completion import text as completion_text

    return completion_text.finish(text, query.prefix, query.suffix, query.language_id)


def _completion_ends(text: str, query: CompletionQuery) -> bool:
    from ..completion import text as completion_text

    return completion_text.has_enough(text, query.prefix, query.suffix, query.language_id)


def _percentile(values: list[float], pct: int, *, digits: int = 1) -> float:
    """Nearest-rank percentile of sorted values."""
    rank = max(1, -(-pct * len(values) // 100))
    return round(values[rank - 1], digits)
