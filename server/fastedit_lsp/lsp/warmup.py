"""The warm-up: what the first job and the first completion of a session would import or make,
done in the background once the client has its ``initialize`` reply and ``initialized`` was
handled.

Start-up imports only what the ``initialize`` reply needs (cold start); without this the first
job paid the rest (the pipeline, the action, httpx and aiohttp, the TLS context): its
first edit came 200–400 ms after the command instead of a few milliseconds (bench: "first job of
a session"). Imports run in a worker thread, one module at a time and only while the server is
idle (:class:`ImportGate`), so the event loop keeps answering meanwhile (a message that arrives
during an import waits for that one module); the HTTP client made there is handed to the
backends on the loop. While a job or a request is under way the warm-up steps aside (it imports
what it needs itself).
Heavy engines that only some actions need (grex, the test-stub engine) are not loaded: they
would cost memory in every session.

In order: the job's modules up to its first edit, the HTTP client (with the trusted
certificates when a model server speaks TLS) and a connection to each profile's model server
(opened, nothing sent: the first request skips the TCP handshake), the converter's code for a
job's messages (:mod:`.warm_messages`), the modules of a draft's checks; then the grammars of
the documents opened meanwhile (:func:`grammar`), the exclude patterns and the completion
modules. Once no message has come
for a second (what is left would delay a job that came meanwhile): the converter's code for
typing's messages and for what a job sends later, the names check's builtins of other Python
versions, then start-up's garbage is freed (:func:`_collect_start_up_garbage`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import importlib
import logging
import threading
import time
from collections.abc import Callable, Collection, Container, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from pygls.protocol import LanguageServerProtocol

    from ..backends.factory import Backends
    from ..core.jobs import Job
    from ..core.timings import Timings
    from ..settings import ResolvedProfile
    from .config import Config
    from .warm_messages import Message

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How often the warm-up looks again whether the job it stepped aside for is over (seconds).
YIELD_SECONDS = 0.01
#: Start-up's garbage is freed once no message has arrived for this long (seconds).
QUIET_SECONDS = 1.0
#: The converter's code for messages is made in slices this long (a message arriving waits
#: for one slice).
SLICE_SECONDS = 0.002

#: What a model job imports on first use up to its first edit, loaded first (the structural
#: guard checks that the first job imports nothing once the warm-up is done), then httpx and
#: the HTTP client, then :data:`CHECK_MODULES`.
JOB_MODULES = (
    "fastedit_lsp.lsp.features.command_args",
    "fastedit_lsp.lsp.host",
    "fastedit_lsp.pipeline.runner",
    "fastedit_lsp.pipeline.route_stats",
    "fastedit_lsp.project.git",
    "fastedit_lsp.actions.complete_rest",
    "fastedit_lsp.actions.edit_selection",
    "fastedit_lsp.prompting.prompts",
    "fastedit_lsp.prompting.filters",
    "fastedit_lsp.backends.openai",
    "fastedit_lsp.backends.breaker",
    "fastedit_lsp.backends.ratelimit",
)
#: What a job imports once its draft is written: its checks (loaded after the HTTP client, so
#: that a job coming while the warm-up is at work finds its request path ready sooner).
CHECK_MODULES = (
    # The parse check every complete-the-rest and edit-selection draft gets (the grammars
    # themselves load when a document of their language opens: see :func:`grammar`).
    "fastedit_lsp.actions.parse_check",
    "fastedit_lsp.engines.parse",
    # Its names check (Python's rules and the stdlib's stubs) and CPython's verdict.
    "fastedit_lsp.engines.names.python",
    "fastedit_lsp.engines.names.python_stdlib",
    "fastedit_lsp.engines.cpython",
    "tree_sitter",
    # Which of the project's checkers run on the draft (asked by every Python, Go or TypeScript
    # draft's check, whether or not one runs).
    "fastedit_lsp.project.checkers",
    # What keeps the kept parses current after the job's edits come back as didChange.
    "fastedit_lsp.lsp.parse_trees",
)
#: The HTTP client: httpx, aiohttp (its wire) and the client's own modules; the first request
#: imports nothing more.
HTTP_MODULES = (
    "httpx",
    "aiohttp",
    "certifi",
    "fastedit_lsp.backends.aio_transport",
    "fastedit_lsp.backends.model_client",
    "fastedit_lsp.backends.network",
)
#: What the first model completion imports, loaded last.
COMPLETION_MODULES = (
    "fastedit_lsp.completion.source",
    "fastedit_lsp.completion.engine",
    "fastedit_lsp.completion.budget",
    "fastedit_lsp.completion.lexer",
    "fastedit_lsp.completion.cut",
    # Next-edit suggestions: the engine and its model path.
    "fastedit_lsp.engines.next_edit.predict",
    "fastedit_lsp.lsp.next_edit_model",
)


class ImportGate:
    """Imports on one thread at a time: the warm-up's and the grammars' (in worker threads) and
    the event loop's.

    Two threads importing at once can fail one import with ``_DeadlockError`` (CPython's
    per-module locks; a job once failed "deadlock detected by _ModuleLock('httpcore._backends.
    anyio')" while the warm-up imported it). So a background import runs only while the server
    is idle (``busy`` is false: no job, no request waiting for its answer), holding the gate's lock,
    and the event loop handles each message holding it too (:meth:`foreground`) while a
    background import is queued: a message that arrives during one waits for that one module
    (it would have waited for the import anyway), and what it starts keeps the server busy.
    """

    def __init__(self, busy: Callable[[], bool]) -> None:
        self._lock = threading.RLock()
        self._busy = busy
        #: Background imports queued or running (counted on the event loop).
        self._pending = 0
        #: One background import at a time.
        self._turn = asyncio.Lock()
        #: The tasks running background imports, or waiting for them (they do not make the
        #: server busy).
        self.own: set[asyncio.Task[Any]] = set()
        #: When the client's last message arrived (``time.monotonic``; set by the protocol).
        self.last_message = time.monotonic()
        #: Set by :meth:`hurry`: background work waiting for a quiet moment goes on at once.
        self._hurried: asyncio.Event | None = None
        #: Unset while the warm-up loads what a job needs up to its model request and first edit
        #: (:meth:`hold_grammars`): the grammars of opened documents load after it.
        self._request_path: asyncio.Event | None = None

    @property
    def pending(self) -> bool:
        """Whether a background import is queued or running."""
        return self._pending > 0

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Hold the gate around handling a message, while background imports are pending."""
        if not self._pending:
            yield
            return
        with self._lock:
            yield

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Around a request handler that only waits for the background work to end (debugStats'
        settle): it does not make the server busy meanwhile."""
        task = asyncio.current_task()
        if task is None:
            yield
            return
        self.own.add(task)
        try:
            yield
        finally:
            self.own.discard(task)

    def hurry(self) -> None:
        """Background work waiting for a quiet moment (:meth:`quiet_for`) goes on now."""
        self._event().set()

    async def quiet_for(self, seconds: float) -> None:
        """Wait until no message has arrived for ``seconds`` and the server is idle (or until
        :meth:`hurry`), without making the server busy meanwhile."""
        hurried = self._event()
        with self.waiting():
            while not hurried.is_set():
                left = self.last_message + seconds - time.monotonic()
                if left <= 0 and not self._busy():
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(hurried.wait(), max(left, YIELD_SECONDS))

    def hold_grammars(self) -> None:
        """The warm-up is starting: grammars wait for :meth:`release_grammars` (called as
        ``initialized`` spawns the warm-up, before any ``didOpen`` is handled)."""
        self._request_path = asyncio.Event()

    def release_grammars(self) -> None:
        if self._request_path is not None:
            self._request_path.set()

    async def after_request_path(self) -> None:
        """Wait (without making the server busy) until the warm-up has loaded what a job needs
        up to its first edit, or gave up; at once when no warm-up runs."""
        if self._request_path is None or self._request_path.is_set():
            return
        with self.waiting():
            await self._request_path.wait()

    def _event(self) -> asyncio.Event:
        if self._hurried is None:
            self._hurried = asyncio.Event()
        return self._hurried

    async def run(self, load: Callable[[], T]) -> T:
        """Run ``load`` (which imports) in a worker thread, once the server is idle.

        The wait is the event loop's, and one background import at a time takes a thread: the
        default executor's threads also resolve hosts and run git for jobs (waiting imports
        that held them all once stalled every job's connect and git check).
        """
        task = asyncio.current_task()
        if task is not None:
            self.own.add(task)
        self._pending += 1
        try:
            async with self._turn:
                while True:
                    # A job or request under way imports what it needs itself; a thread
                    # importing beside it would also compete for the GIL (on a loaded machine
                    # the first job then waited for the whole warm-up).
                    if not self._busy():
                        ran, value = await asyncio.to_thread(self._if_idle, load)
                        if ran:
                            return cast(T, value)
                    await asyncio.sleep(YIELD_SECONDS)
        finally:
            self._pending -= 1
            if task is not None:
                self.own.discard(task)

    def _if_idle(self, load: Callable[[], T]) -> tuple[bool, T | None]:
        with self._lock:
            if self._busy():  # something started meanwhile: wait again
                return False, None
            return True, load()


@dataclass(frozen=True)
class WarmUpOwners:
    """What the warm-up uses of the server: the import gate, the settings, the handler times,
    the protocol (its converter), the task spawner and the backends (made on first use)."""

    imports: ImportGate
    config: Config
    timings: Timings
    protocol: LanguageServerProtocol
    spawn: Callable[[Any], asyncio.Task[Any]]
    #: The backends, made on first use (``FasteditServer.backends``).
    models: Callable[[], Backends]

    @property
    def backends(self) -> Backends:
        return self.models()


def server_busy(
    jobs: Iterable[Job],
    tasks: Collection[asyncio.Task[Any]],
    requests_pending: Callable[[Container[object]], bool],
    own: Container[object],
) -> bool:
    """Whether a job runs, a request waits for its answer or a task other than the gate's own
    (``own``) runs (read from a worker thread: ``list`` copies at once)."""
    try:
        if any(not job.is_finished for job in list(jobs)):
            return True
        if requests_pending(own):
            return True
        return any(task not in own and not task.done() for task in list(tasks))
    except RuntimeError:  # changed while copied: look again
        return True


async def _load(server: WarmUpOwners, names: tuple[str, ...]) -> None:
    for name in names:
        await server.imports.run(functools.partial(importlib.import_module, name))


def _model_profiles(server: WarmUpOwners) -> list[ResolvedProfile] | None:
    """The fast and standard profiles that call a model (settings are read by now:
    ``initialized`` ran); None when the settings cannot be read yet (the warm-up then makes the
    HTTP client all the same)."""
    try:
        profiles = [server.config.profile(name, announce=False) for name in ("fast", "standard")]
    except Exception:
        return None
    return [profile for profile in profiles if not profile.is_local]


async def warm_up(server: WarmUpOwners) -> None:
    """Import what the first job and completion need and make the HTTP client, off the event
    loop, in the order a session needs them; never fails (``warmUp`` in the debug timings once
    done)."""
    started = time.perf_counter()
    try:
        await _request_path(server)
        await _load(server, CHECK_MODULES)
        server.imports.release_grammars()
        from . import warm_messages

        await server.imports.run(
            functools.partial(warm_messages.exchange_progress, server.protocol)
        )
        await server.imports.run(functools.partial(warm_messages.compile_patterns, server.config))
        await _load(server, COMPLETION_MODULES)
    except Exception as exc:  # a missing optional piece: the first use imports it, as before
        log.warning("warm-up failed: %s", exc)
        return
    finally:
        server.imports.release_grammars()
    await server.imports.run(_freeze_loaded)
    server.timings.record("warmUp", time.perf_counter() - started)
    # What the session will need later, once it is quiet.
    await server.imports.quiet_for(QUIET_SECONDS)
    started = time.perf_counter()
    await _make_code(server, warm_messages.TYPING + warm_messages.LATER)
    await server.imports.run(_read_builtins)
    await server.imports.run(_collect_start_up_garbage)
    server.timings.record("quietWork", time.perf_counter() - started)


async def _request_path(server: WarmUpOwners) -> None:
    """What a job needs up to its model request and its first edit: its modules, the HTTP
    client, the converter's code for its messages. Then the grammars of the documents opened
    meanwhile load (they wait for this: a draft's parse check needs them, the first edit not;
    first, they put 34–47 ms before the job's modules, which the first job of a session then
    paid when it came 300 ms after ``initialized``)."""
    await _load(server, JOB_MODULES)
    models = _model_profiles(server)
    if models is None or models:  # the offline engine alone needs no HTTP
        # What the first request needs (httpx, aiohttp), then the HTTP client (its proxies, and
        # where a model server speaks TLS the trusted certificates, ~21 ms of CPU) made off the
        # event loop: the first job finds both ready.
        await _load(server, HTTP_MODULES)
        urls = [profile.base_url for profile in models or () if profile.base_url]
        await asyncio.to_thread(server.backends.prepare, urls)
        if urls:
            # Opened beside what follows, not awaited (a hosted server's TLS handshake takes
            # 50 ms or more); it does not make the server busy.
            opening = server.spawn(server.backends.preconnect(urls))
            server.imports.own.add(opening)
            opening.add_done_callback(server.imports.own.discard)
    await _load(server, ("fastedit_lsp.lsp.warm_messages",))
    from . import warm_messages

    for message in warm_messages.JOB:
        await server.imports.run(
            functools.partial(warm_messages.exchange, server.protocol, message)
        )


async def _make_code(server: WarmUpOwners, messages: tuple[Message, ...]) -> None:
    """The converter's code for ``messages``, made in slices of ``SLICE_SECONDS``."""
    from .warm_messages import classes, make_code

    pending = await server.imports.run(functools.partial(classes, server.protocol, messages))
    while pending:
        await server.imports.run(
            functools.partial(make_code, server.protocol, pending, SLICE_SECONDS)
        )


def _freeze_loaded() -> None:
    """Collect the warm-up's young garbage and freeze what it loaded (its modules, the HTTP
    client), as start-up's objects were frozen: the cyclic GC's full collections then skip
    them. Unfrozen, every full collection walked them (~11,500 objects after the warm-up, 61
    frozen): 10–30 ms once a minute or so, which held a cancel's reply 29 ms at load 6 (GC
    callbacks in the server during the bench's cancels). The young generations only: a full
    collection here took 10–15 ms in one step, which a job coming then waited for; the quiet
    work collects everything (:func:`_collect_start_up_garbage`)."""
    gc.collect(1)
    gc.freeze()


def _collect_start_up_garbage() -> None:
    """Free start-up's garbage (``serve`` froze its objects uncollected for a faster
    ``initialize`` reply: ~17,000 of them are garbage, the classes attrs replaced), freeze the
    rest again, and give the freed pages back to the system.

    Walking every object takes ~45 ms, so it waits for a quiet moment after the warm-up: done
    in ``initialized``, it pushed the warm-up past the first job of a session (bench: that
    job's first edit 105 → 18 ms once moved, load 1.3)."""
    from . import memory

    gc.unfreeze()
    gc.collect()
    gc.freeze()
    memory.trim()


def _load_grammar(uri: str, language_id: str) -> None:
    from ..engines import parse

    language = parse.language_of(language_id) or parse.language_of(uri)
    if language is not None:
        parse.load(language)


def _read_builtins() -> None:
    """The names check's builtins of other Python versions (typeshed's ``builtins.pyi``: ~45
    ms of CPU in one ``ast.parse``), read when the session is quiet: read right after a Python
    document's grammar, they held the first job of a session that came then (it waited for the
    step), and a draft's check reads them only for a name the running Python does not have."""
    from ..engines.names import python_stdlib

    python_stdlib.builtins()


def grammar(server: WarmUpOwners, uri: str, language_id: str) -> None:
    """On ``didOpen``: load the grammar of the document's language in the background, once the
    warm-up has loaded a job's request path, so the first draft's checks there do not (the
    first grammar cost 10–20 ms to import)."""
    server.spawn(_grammar_later(server, uri, language_id))


async def _grammar_later(server: WarmUpOwners, uri: str, language_id: str) -> None:
    await server.imports.after_request_path()
    await server.imports.run(functools.partial(_load_grammar, uri, language_id))
