"""fastedit/debugStats: what the server holds right now, to find leaks from the outside.

A custom request (not part of the editor contract): tasks, file descriptors, HTTP connections,
progress tokens, pending requests and jobs. With ``{"settle": true}`` the server first lets its
background work finish (pending outline and parse refreshes run at once, background tasks are
awaited, at most ``timeoutMs``), so that a test compares counts at rest, never racing a
finishing job.
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pygls.lsp.server import LanguageServer

from ...core.jobs import JobRegistry
from ..client import ClientChannel
from ..documents import DocumentStore
from ..protocol import pending_requests
from ..warmup import ImportGate

if TYPE_CHECKING:
    from ...backends.factory import Backends
    from ..parse_trees import ParseRefresher

DEBUG_STATS = "fastedit/debugStats"


@dataclass(frozen=True)
class Holdings:
    """The owners whose holdings the request counts (handed in by the composition root)."""

    documents: DocumentStore
    jobs: JobRegistry
    client: ClientChannel
    #: Background imports; settling hurries the warm-up's wait for a quiet moment.
    imports: ImportGate
    #: The server's background tasks.
    tasks: set[asyncio.Task[Any]]
    #: Running requests ``$/cancelRequest`` can stop (``ProtocolHooks.cancellable``).
    cancellable: dict[Any, asyncio.Task[Any]]
    #: Made on first use, as the server's own.
    backends: Callable[[], Backends]
    parse_refresher: Callable[[], ParseRefresher | None]


def register(server: LanguageServer, *, held: Holdings) -> None:
    @server.feature(DEBUG_STATS)
    async def debug_stats(ls: LanguageServer, params: Any) -> dict[str, Any]:
        """fastedit/debugStats {settle?, timeoutMs?, uri?}: counts of what the server holds (and
        its copy of ``uri``'s text)."""
        settle = bool(_param(params, "settle", False))
        timeout_ms = _param(params, "timeoutMs", 5000)
        if not isinstance(timeout_ms, int | float) or isinstance(timeout_ms, bool):
            timeout_ms = 5000
        settled = None
        if settle:
            with held.imports.waiting():
                settled = await _settle(held, max(0.0, min(float(timeout_ms), 60_000.0)) / 1000)
        out = stats(ls, held) | ({"settled": settled} if settled is not None else {})
        uri = _param(params, "uri", None)
        if isinstance(uri, str):
            document = held.documents.get(uri)
            out["text"] = document.text if document is not None else None
        return out


def _param(params: Any, name: str, default: Any) -> Any:
    if isinstance(params, dict):
        return params.get(name, default)
    return getattr(params, name, default)


async def _settle(held: Holdings, seconds: float) -> bool:
    """Run pending outline and parse refreshes now and wait for jobs and background tasks to end."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    held.documents.refresh_outlines_now()
    if (refresher := held.parse_refresher()) is not None:
        refresher.now()
    held.imports.hurry()  # the warm-up's last step waits for a quiet moment
    while True:
        busy = [t for t in held.tasks if not t.done()]
        busy += [j.task for j in held.jobs.running() if j.task is not None and not j.task.done()]
        left = deadline - loop.time()
        if not busy:
            gc.collect()  # so that memory is compared at rest too
            return True
        if left <= 0:
            return False
        await asyncio.wait(busy, timeout=left)


def stats(ls: LanguageServer, held: Holdings) -> dict[str, Any]:
    """The counts, as plain JSON (``ls``: pygls' own tables, its progress tokens and requests)."""
    return {
        "tasks": len(asyncio.all_tasks()),
        "backgroundTasks": sum(1 for t in held.tasks if not t.done()),
        "fds": _open_fds(),
        "rssKb": _rss_kb(),
        "http": held.backends().connections(),
        "progressTokens": len(ls.work_done_progress.tokens),
        "progressJobs": len(held.client.progress_jobs),
        # Requests in both directions still waiting for an answer (this one included).
        "pendingRequests": pending_requests(ls),
        "cancellable": len(held.cancellable),
        "runningJobs": len(held.jobs.running()),
        "jobs": sum(1 for _ in held.jobs),
        "documents": len(held.documents),
        "outlineTimers": held.documents.outline_timers,
        "parseTrees": refresher.stats() if (refresher := held.parse_refresher()) else None,
        # What a full collection of the cyclic GC walks (frozen objects are skipped).
        "gcTracked": len(gc.get_objects()),
    }


def _rss_kb() -> int:
    """Resident memory (VmRSS), in KiB; -1 where /proc is missing."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # not Linux: count what we can
        return -1
