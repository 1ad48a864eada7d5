"""The warm-up: what the first job and the first completion of a session would import, loaded in
the background once the client has its ``initialize`` reply and ``initialized`` was handled.

Start-up imports only what the ``initialize`` reply needs (cold start); without this the first
job paid the rest (the pipeline, the action, httpx, httpcore and anyio, the TLS context): its
first edit came 200–400 ms after the command instead of a few milliseconds (bench: "first job of
a session"). Imports run in a worker thread, so the event loop keeps answering meanwhile (a
request that needs a module still being imported waits for it, as it would have imported it);
the HTTP client made there is handed to the backends on the loop. While a job runs the warm-up
steps aside (the job imports what it needs; two threads importing only compete for the GIL).
Heavy engines that only some actions need (grex, the test-stub engine) are not loaded: they
would cost memory in every session.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import FasteditServer

log = logging.getLogger(__name__)

#: How often the warm-up looks again whether the job it stepped aside for is over (seconds).
YIELD_SECONDS = 0.01

#: What a model job imports on first use, loaded first (the structural guard checks that the
#: first job imports nothing once the warm-up is done), then httpx and the HTTP client.
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
    # The parse check every complete-the-rest and edit-selection draft gets (the grammars
    # themselves load when a document of their language opens: see :func:`grammar`).
    "fastedit_lsp.actions.parse_check",
    "fastedit_lsp.engines.parse",
    "tree_sitter",
)
#: What the first model completion imports, loaded last.
COMPLETION_MODULES = (
    "fastedit_lsp.completion.source",
    "fastedit_lsp.completion.engine",
    "fastedit_lsp.completion.context",
    "fastedit_lsp.completion.text",
    # Next-edit suggestions: the engine and its model path.
    "fastedit_lsp.engines.next_edit.predict",
    "fastedit_lsp.lsp.next_edit_model",
)


def _load(names: tuple[str, ...], busy: Callable[[], bool]) -> None:
    for name in names:
        _wait_while(busy)
        importlib.import_module(name)


def _http_client(busy: Callable[[], bool]) -> Any:
    from ..backends.factory import warm_up_http

    _wait_while(busy)
    return warm_up_http()


def _wait_while(busy: Callable[[], bool]) -> None:
    # A job that starts before the warm-up is over imports what it needs itself: a thread
    # importing beside it would only compete for the GIL (on a loaded machine the first job
    # then waited for the whole warm-up). The rest waits until no job runs.
    while busy():
        time.sleep(YIELD_SECONDS)


def _job_running(server: FasteditServer) -> bool:
    """Whether a job runs (read from the warm-up's thread: ``list`` copies the jobs at once)."""
    try:
        return any(not job.is_finished for job in list(server.jobs))
    except RuntimeError:
        return True


def _uses_models(server: FasteditServer) -> bool:
    """Whether a profile calls a model (settings are read by now: ``initialized`` ran)."""
    try:
        return any(
            not server.config.profile(name, announce=False).is_local
            for name in ("fast", "standard")
        )
    except Exception:  # settings that cannot be read yet: warm up as for a model
        return True


async def warm_up(server: FasteditServer) -> None:
    """Import what the first job and completion need and make the HTTP client, off the event
    loop, in the order a session needs them; never fails (``warmUp`` in the debug timings once
    done)."""
    started = time.perf_counter()
    try:
        busy = functools.partial(_job_running, server)
        await asyncio.to_thread(_load, JOB_MODULES, busy)
        if _uses_models(server):  # the offline engine alone needs no HTTP
            server.backends.adopt(await asyncio.to_thread(_http_client, busy))
        await asyncio.to_thread(_load, COMPLETION_MODULES, busy)
    except Exception as exc:  # a missing optional piece: the first use imports it, as before
        log.warning("warm-up failed: %s", exc)
        return
    server.timings.record("warmUp", time.perf_counter() - started)


def _load_grammar(uri: str, language_id: str) -> None:
    from ..engines import parse

    language = parse.language_of(language_id) or parse.language_of(uri)
    if language is not None:
        parse.load(language)


def grammar(server: FasteditServer, uri: str, language_id: str) -> None:
    """On ``didOpen``: load the grammar of the document's language in the background, so the
    first draft's parse check there does not (the first grammar cost 10–20 ms to import)."""
    server.spawn(asyncio.to_thread(_load_grammar, uri, language_id))
