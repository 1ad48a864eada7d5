"""The warm-up: what the first job and the first completion of a session would import, loaded in
the background once the client has its ``initialize`` reply and ``initialized`` was handled.

Start-up imports only what the ``initialize`` reply needs (cold start); without this the first
job paid the rest (the pipeline, the action, httpx, httpcore and anyio, the TLS context): its
first edit came 200–400 ms after the command instead of a few milliseconds (bench: "first job of
a session"). Imports run in a worker thread, so the event loop keeps answering meanwhile (a
request that needs a module still being imported waits for it, as it would have imported it);
the HTTP client made there is handed to the backends on the loop. Heavy engines that only some
actions need (grex, the test-stub engine) are not loaded: they would cost memory in every session.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import FasteditServer

log = logging.getLogger(__name__)

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
)
#: What the first model completion imports, loaded last.
COMPLETION_MODULES = (
    "fastedit_lsp.completion.source",
    "fastedit_lsp.completion.engine",
    "fastedit_lsp.completion.context",
    "fastedit_lsp.completion.text",
)


def _load(names: tuple[str, ...]) -> None:
    for name in names:
        importlib.import_module(name)


def _http_client() -> Any:
    from ..backends.factory import warm_up_http

    return warm_up_http()


async def warm_up(server: FasteditServer) -> None:
    """Import what the first job and completion need and make the HTTP client, off the event
    loop, in the order a session needs them; never fails (``warmUp`` in the debug timings once
    done)."""
    started = time.perf_counter()
    try:
        await asyncio.to_thread(_load, JOB_MODULES)
        server.backends.adopt(await asyncio.to_thread(_http_client))
        await asyncio.to_thread(_load, COMPLETION_MODULES)
    except Exception as exc:  # a missing optional piece: the first use imports it, as before
        log.warning("warm-up failed: %s", exc)
        return
    server.timings.record("warmUp", time.perf_counter() - started)
